"""The bisect measured on the H200 (data/h200-bisect/, data/README.md): run again on the
committed folder, where none of its wheels exists, it measures nothing and gives the same
answer, and the figures the data README quotes are the ones it prints.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from paths import DATA, REPO_ROOT

from bot.exitcodes import ExitCode

RECORDED = DATA / "h200-bisect"
GOOD = ".gpu/extra/lightning_thunder-0.2.6-py3-none-any.whl"
BAD = ".gpu/extra/lightning_thunder-0.2.7.dev20260201-py3-none-any.whl"
DATA_README = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())


def _again(
    where: Path, config: Path | None = REPO_ROOT / "perfbot.toml"
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The lab's command again on a copy of the folder; ``config`` None: no configuration (the
    lab ran from the repository root, where ./perfbot.toml names the noise model)."""
    shutil.copytree(RECORDED, where)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "bisect",
            "--package",
            "thunder",
            "--good",
            GOOD,
            "--bad",
            BAD,
            "--builds",
            "builds.txt",
            "--points",
            "bfloat16/16x49152,float16/16x49152",
            "--size-set",
            "nightly",
            "--state",
            "state.json",
            "--machine",
            "nvidia-h200",
            "--budget-s",
            "400",
            "--json",
            "again.json",
            *(["--config", str(config)] if config else []),
        ],
        cwd=where,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
    )
    return done, json.loads((where / "again.json").read_text(encoding="utf-8"))


def _rounded(value: Any) -> Any:
    """Floats to 9 significant digits: numpy builds differ in the last bit of a bootstrap."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_the_h200_bisect_measures_nothing_again_and_says_the_same(tmp_path: Path) -> None:
    done, again = _again(tmp_path / "bisect")
    assert done.returncode == ExitCode.INCONCLUSIVE, done.stderr
    recorded = json.loads((RECORDED / "answer.json").read_text(encoding="utf-8"))
    assert (recorded["measured_now"], again["measured_now"]) == (2, 0)
    recorded.pop("measured_now")
    again.pop("measured_now")
    # What the recorded answer has, unchanged; since issue 21 an answer also says where the
    # measurements stand (a bracket, not a first bad build) and each build's label in words.
    bracket = again.pop("bracket")
    for row in again["timeline"]:
        row.pop("label")
    assert _rounded(again) == _rounded(recorded)
    assert again["status"] == "stuck" and again["first_bad"] is None
    assert bracket == {"last_good": None, "first_bad": None}
    assert again["reason"].startswith("the known-bad build is good against the known-good one")
    assert "there is no step to find" in DATA_README


def test_the_data_readme_figures_are_the_bisects(tmp_path: Path) -> None:
    done, again = _again(tmp_path / "bisect")
    (bad_row,) = [line for line in done.stdout.splitlines() if "0.2.7.dev20260201" in line]
    prims, func = re.search(
        r"ratio: thunder-prims (\S+ \[\S+ \S+\]), thunder-func (\S+ \[\S+ \S+\])", bad_row
    ).groups()  # type: ignore[union-attr]
    nvfuser = re.search(r"nvFuser kernel: nvfuser (\S+ \[\S+ \S+\])", bad_row).group(1)  # type: ignore[union-attr]
    assert f"thunder-prims ratio {prims}, thunder-func {func}" in DATA_README
    assert f"nvFuser's kernel {nvfuser}" in DATA_README
    walls = {row["build"]: row["runs"][0]["wall_s"] for row in again["timeline"] if row["runs"]}
    assert [round(walls[Path(b).name], 1) for b in (GOOD, BAD)] == [108.7, 110.5]
    assert "108.7 s for 0.2.6, 110.5 s for 0.2.7.dev20260201" in DATA_README
    log = subprocess.run(
        ["zcat", str(RECORDED / "logs" / "console.log.gz")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    measured = re.findall(r"== measurement took (\d+) s", log)
    stored = re.findall(r"== asv stored the results in (\d+) s", log)
    assert (measured, stored) == (["23", "20"], ["85", "89"])
    assert "measuring itself was 23 s and 20 s and asv's store 85 s and 89 s" in DATA_README
    skipped = len(re.findall(r"asv: skipped: NotImplementedError", log))
    (suite,) = RECORDED.glob("state.runs/000-*/run-1/benchmarks.json")
    combinations = [
        math.prod(len(p) for p in bench["params"])
        for name, bench in json.loads(suite.read_text(encoding="utf-8")).items()
        if name != "version"
    ]
    # 2 points x 3 variants in the five kernel-side tracks, 2 x 2 in the ratio: measured.
    assert (sum(combinations), skipped) == (5220, 2 * (5220 - (2 * 3 * 5 + 2 * 2)))
    assert "5220 benchmark parameter combinations" in DATA_README
    assert "skips all but the 34 measured" in DATA_README


def test_the_answer_says_which_noise_its_intervals_used(tmp_path: Path) -> None:
    """Without the between-run noise model the same runs get intervals 8x narrower here, so
    the answer names what it used: a reader must see when a build was called bad on
    within-run noise alone."""
    with_model, _ = _again(tmp_path / "with")
    without, _ = _again(tmp_path / "without", config=None)
    assert "\nnoise: between-run noise from 12 A/A runs on nvidia-h200\n" in with_model.stdout
    assert "\nnoise: no noise model: intervals see within-run noise" in without.stdout

    def nvfuser_interval(out: str) -> str:
        found = re.search(r"nvFuser kernel: nvfuser \S+ (\[\S+ \S+\])", out)
        assert found is not None
        return found.group(1)

    assert nvfuser_interval(with_model.stdout) == "[-2.4%, +2.4%]"
    assert nvfuser_interval(without.stdout) == "[-0.3%, +0.3%]"
