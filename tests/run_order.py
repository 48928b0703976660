"""The order the test files run in (pure; tests/conftest.py applies it).

pytest-xdist hands whole files to its workers in the order it is given them
(``--dist loadfile --no-loadscope-reorder``), a new file to whichever worker runs dry. A long
file handed out last leaves the other worker idle to the end, so the longest go first: by the
seconds each took in the last run that ran it, and where no run is on record (a fresh clone)
by its number of tests, as xdist's own reordering would. Files with no record in a run that
has some go first of all (a new file may be long). Files whose tests wait for something built
in the background go last, whatever their length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence


def file_order(
    files: Sequence[str], seconds: Mapping[str, float], waits: Callable[[str], bool]
) -> list[str]:
    """``files``: one entry a test, in collection order; the distinct files, in running order."""
    counts = Counter(files)
    first = {file: index for index, file in reversed(list(enumerate(files)))}

    def length(file: str) -> float:
        if not seconds:
            return float(counts[file])
        taken = seconds.get(file)
        return float("inf") if taken is None else taken

    return sorted(first, key=lambda file: (waits(file), -length(file), first[file]))
