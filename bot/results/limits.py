"""Bounds on what the bot will read, and the one way it reads a file: checked, then capped.

Results arrive from a GPU runner as an artifact, that is from code the bot does not trust, so
size is an attack and a failure mode at once: a results file padded to 200 MB used to be read
and posted, and 10^6 samples in one point ended in a MemoryError inside the bootstrap (4,000
resamples x 10^6 rounds). Each bound below is far above what a real run writes (measured on
the H200: a `pr` results file is 68 kB with 25 samples a point, its provenance record 316-443
kB; the 180-point `nightly` set is about 20 times that), and crossing one is a
:class:`~bot.results.types.BadInput` that names the file and the limit, raised before the
expensive part starts.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from bot.results.types import BadInput

MIB = 1024 * 1024
#: One asv results file (``<sha8>-<env>.json``).
MAX_RESULTS_BYTES = 32 * MIB
#: One provenance record (``<sha>.provenance.jsonl``; every timed call is kept in it).
MAX_PROVENANCE_BYTES = 64 * MIB
#: One runner-hygiene sidecar (``<sha>.hygiene.jsonl``: two short lines a measurement).
MAX_HYGIENE_BYTES = 1 * MIB
#: Samples (rounds) of one point. The bootstrap holds resamples x rounds indices: 4,000 x
#: 1,000 is 32 MB; a PR verdict uses 25-100.
MAX_SAMPLES = 1_000
#: Parameter combinations (variant x dtype x shape) of one benchmark in one file; the nightly
#: set has 180 dtype x shape points x 5 variants = 900.
MAX_POINTS = 10_000
#: Files in one machine folder that are read to list its commits.
MAX_FILES = 10_000

FULL_SHA = re.compile(r"[0-9a-f]{40}")
#: A GitHub repository, OWNER/NAME, as GitHub allows them: the only form a link is made of.
REPOSITORY = re.compile(r"[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}")


def full_sha(value: object, where: str, field: str = "commit_hash") -> str:
    """A commit hash read from a file, accepted only as 40 lower-case hex digits.

    It becomes part of a path (the provenance file next to the results), of the comment and of
    the issue key; anything else (``9dc51696/../``, ``@nvidia``, ``<img ...>``) is refused here,
    before any of those uses.
    """
    if not isinstance(value, str) or not FULL_SHA.fullmatch(value):
        shown = repr(value)[:60]
        raise BadInput(f"{where}: {field} {shown} is not a full 40-hex commit hash")
    return value


def read_capped(path: Path, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, else BadInput naming both.

    The size is checked before reading (a 200 MB file fails at once), and the read itself is
    capped too, in case the file grows between the check and the read.
    """
    try:
        info = path.stat()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read {what}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BadInput(f"{path}: {what} is not a regular file")
    if info.st_size > limit:
        raise BadInput(
            f"{path}: {what} is {info.st_size / MIB:.1f} MiB, over the limit of "
            f"{limit / MIB:.0f} MiB (bot/results/limits.py)"
        )
    try:
        with path.open("rb") as handle:
            # Asked for limit + 1 bytes at once, Python allocates them all before it reads (a
            # 64 MiB buffer for a 9 MB record): ask for what stat saw, then for the rest only
            # if the file grew meanwhile.
            data = handle.read(info.st_size + 1)
            if len(data) > info.st_size:
                data += handle.read(limit + 1 - len(data))
    except OSError as exc:
        raise BadInput(f"{path}: cannot read {what}: {exc.strerror}") from None
    if len(data) > limit:
        raise BadInput(f"{path}: {what} grew past the limit of {limit / MIB:.0f} MiB while read")
    return data


def listed(folder: Path, pattern: str, what: str) -> list[Path]:
    """The files of `folder` matching `pattern`, sorted, at most :data:`MAX_FILES` of them."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if Path(entry.name).match(pattern):
                found.append(folder / entry.name)
                if len(found) > MAX_FILES:
                    raise BadInput(
                        f"{folder}: more than {MAX_FILES} {what} (bot/results/limits.py); "
                        "split the history or retire old results"
                    )
    return sorted(found)
