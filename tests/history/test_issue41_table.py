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
    assert len(lines) == 7  # two repeats a build, then the spread
    assert lines[-1].startswith("largest spread of a level: ")


def test_the_h100_piece_s_largest_spread_is_the_one_data_readme_quotes() -> None:
    folder = DATA / "h100-thunder-history" / "call1" / "group-01"
    done = subprocess.run([sys.executable, str(SCRIPT), str(folder)], capture_output=True,
                          text=True, check=True, cwd="/")  # fmt: skip
    last = done.stdout.splitlines()[-1]
    assert last == "largest spread of a level: 1.69% (gelu_fwd thunder-func, over 3 runs)"
    said = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())
    assert f"prints `{last}`" in said
    size = last.split(": ", 1)[1].split(" ", 1)[0]  # "1.69%"
    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"no fusion's level moving more than {size} across the three that run" in readme
