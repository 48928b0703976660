"""``python -m bot ...``: the same as the ``fusion-perfbot`` command."""

import sys

from bot.commands.cli import main

sys.exit(main())
