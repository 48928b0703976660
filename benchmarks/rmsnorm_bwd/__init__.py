"""RMSNorm backward: hand-written nvFuser fusion against thunder.jit, measured the GPU way.

Nothing here imports torch, nvFuser or Thunder at import time: asv discovers the suite (and CI
runs `asv check`) on machines that have none of them.
"""
