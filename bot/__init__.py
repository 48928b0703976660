"""Performance-regression bot: thunder.jit vs hand-written nvFuser on RMSNorm backward."""

__version__ = "0.2.0"
