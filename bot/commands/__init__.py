"""Commands: the command line (:mod:`bot.commands.cli`, the composition root), how a step
fails, and one module per command."""
