"""Which nvFuser frontend each Thunder wheel's executor imports, read from the wheel itself
(no install): where a history with nvFuser 0.2.36 (whose wheel ships ``nvfuser_direct`` and no
``nvfuser`` module) can begin.

    python3 data/issue41-history/executor_import.py WHEEL...

Thunder's ``thunder/executors/nvfuserex.py`` finds nvFuser's version with ``import nvfuser``
before 0.2.6.dev20251019 and tries ``import nvfuser_direct`` first from then on; without the
module it imports, the nvFuser executor is None and every Thunder point fails (as 0.2.5 and
0.2.6.dev20250914 did on the H200: data/h200-thunder-nightlies, NOTES §6).
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

from packaging.version import Version

EXECUTOR = "thunder/executors/nvfuserex.py"


def imports_of(wheel: Path) -> list[str]:
    """The nvFuser modules the executor's version check imports, in its order."""
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(EXECUTOR).decode("utf-8")
    return re.findall(r"^\s*import (nvfuser_direct|nvfuser)\b", text, re.MULTILINE)


def version_of(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for wheel in sorted(map(Path, argv), key=lambda w: Version(version_of(w))):
        found = imports_of(wheel)
        usable = "nvfuser_direct" in found
        print(
            f"{version_of(wheel)}\t{' then '.join(found) or 'none'}\t"
            f"{'finds nvFuser 0.2.36' if usable else 'no nvFuser executor on 0.2.36'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
