"""data/issue41-history/table.py, the table of issue 41's note: each build's ratio level per
fusion and its failed points, through the bot's readers, on committed data."""

from __future__ import annotations

import subprocess
import sys

from paths import DATA, REPO_ROOT

SCRIPT = REPO_ROOT / "data" / "issue41-history" / "table.py"


def test_the_table_gives_each_build_s_level_and_failures() -> None:
    folders = [DATA / "h200-under-test" / "thunder-broken-pair" / "results"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--markdown", *map(str, folders)],
        capture_output=True, text=True, check=True, cwd="/",
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0] == "| build | key | date | rmsnorm_bwd prims/func (failed) |"
    # Thunder 0.2.5 has no nvFuser executor on this stack: both variants' 9 points fail.
    assert lines[2] == "| 0.2.5 | 0e8c6c35 | 2000-01-01 | -/- (18) |"
    assert lines[4].startswith("| 0.2.6 | 977510d7 | 2000-01-01 | 1.04") and "(" not in lines[4]
    assert len(lines) == 6  # two repeats a build
