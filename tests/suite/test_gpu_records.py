"""Two real records of identical code (data/h100-records/, made on a GPU): the fingerprints the
verdict's in-run control compares agree, and the printed definition hash, which issue 38
replaced by the canonical one, does not always."""

from __future__ import annotations

import subprocess
import sys

from paths import DATA

FOLDER = DATA / "h100-records"


def test_identical_code_gives_identical_canonical_hashes_and_digests_on_the_gpu() -> None:
    done = subprocess.run(
        [sys.executable, str(FOLDER / "check.py"), str(FOLDER / "results")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "canonical and digests all the same" in done.stdout
    assert "printed hashes that differ between the two runs: 3 of 14" in done.stdout
    assert done.stdout.count("DIFFERS") == 0
