"""The comment's line on a run of another stack than its noise model's (issue 40): none on the
committed pairs (every run on the model's stack), and one, in the machine's part, on a run of
another torch. It changes nothing else: not the headline, the verdict or the exit code.

The other environment is a test fixture: a temporary copy of committed results whose
provenance records name another torch ("2.11.0+cu130" made "2.10.0+cu130", nothing else); the
samples stay as measured and nothing under data/ is edited.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from machines_helpers import calibrated_config, copy_machine, write_checks
from paths import DATA, run_bot

H200 = DATA / "h200" / "results"
AA2 = DATA / "h200-catalog" / "aa2"
PAIR = ("--base", "06f650c8", "--head", "da17d548")
CATALOG = ("--base", "c4af5b47", "--head", "baad8fb3")
LINE = (
    "ⓘ The noise model was fitted on torch 2.11, CUDA 13.0, driver 580 (NVIDIA H200); this "
    'run: {run}: its calibration may not transfer (docs/CALIBRATION.md, "The stack")'
)
HEAD_AA2 = "baad8fb3616d88ff0e9b7cb11da87c4462860e9b"
RECORDED, OTHER = '"torch": "2.11.0+cu130"', '"torch": "2.10.0+cu130"'


def _report(
    results: Path, sides: tuple[str, ...], fmt: str = "markdown", *extra: str
) -> tuple[int, str]:
    done = run_bot("report", "--results", str(results), *sides, "--format", fmt, *extra, env={})
    assert done.returncode in (0, 1, 5), done.stderr
    return done.returncode, done.stdout


def _other_torch(src: Path, dest: Path, *commits: str) -> Path:
    """A copy of ``src`` whose records of ``commits`` (every one without) name torch 2.10."""
    shutil.copytree(src, dest)
    for path in sorted(dest.glob("*/*.provenance.jsonl")):
        if commits and not path.name.startswith(commits):
            continue
        text = path.read_text(encoding="utf-8")
        assert text.count(RECORDED) == 1, path
        path.write_text(text.replace(RECORDED, OTHER), encoding="utf-8")
    return dest


@pytest.mark.parametrize(("results", "sides"), [(H200, PAIR), (AA2, CATALOG)])
def test_the_committed_runs_are_on_the_models_stack(results: Path, sides: tuple[str, ...]) -> None:
    assert "ⓘ" not in _report(results, sides)[1]


def test_a_head_on_another_torch_is_told_once_in_its_part(tmp_path: Path) -> None:
    code, before = _report(H200, PAIR)
    other = _other_torch(H200, tmp_path / "results", "da17d548")
    code_other, after = _report(other, PAIR)
    line = LINE.format(run="torch 2.11 at base, 2.10 at head")
    assert after.count("ⓘ") == 1 and f"\n> {line}\n" in after
    assert code_other == code  # not gating
    assert after.splitlines()[:5] == before.splitlines()[:5]  # the headline, the part's header
    judged = [
        [(m["state"], m["judged"], m["exit_code"], m["verdict"]) for m in report["machines"]]
        for report in (json.loads(_report(r, PAIR, "json")[1]) for r in (H200, other))
    ]
    assert judged[0] == judged[1]  # nothing decided differently
    assert "its calibration may not transfer" in _report(other, PAIR, "text")[1]


def test_a_catalog_that_did_not_move_says_it_once_under_its_line(tmp_path: Path) -> None:
    """Fourteen fusions on one machine, none shown on its own: one line, not fourteen."""
    other = _other_torch(AA2, tmp_path / "aa2")
    code, out = _report(other, CATALOG)
    assert code == 0 and out.count("ⓘ") == 1
    quiet, line = out.split("\n\n")[1:3]
    assert quiet.startswith("⚪ 14 fusions: no change")
    assert line == LINE.format(run="torch 2.10")


def test_a_catalog_shown_fusion_by_fusion_says_it_once(tmp_path: Path) -> None:
    """A failed runner check shows every fusion of the machine on its own (none gates): the
    line is in the first one's part alone."""
    other = _other_torch(AA2, tmp_path / "aa2")
    write_checks(other / "nvidia-h200", HEAD_AA2, "GPU clocks held down: HW slowdown")
    code, out = _report(other, CATALOG)
    assert code == 0 and out.count("⚠️ **A runner check failed") == 14
    assert out.count("ⓘ") == 1 and f"\n> {LINE.format(run='torch 2.10')}\n" in out


def test_among_several_machines_the_line_names_its_own(tmp_path: Path) -> None:
    """The catalog on two machines (copies of one recorded folder), one of them on torch 2.10:
    its line once, named; none for the other."""
    results = tmp_path / "results"
    copy_machine(_other_torch(AA2, tmp_path / "other"), results, "gpu-b")
    copy_machine(AA2, results, "nvidia-h200")
    config = calibrated_config(tmp_path / "config", "nvidia-h200", "gpu-b")
    code, out = _report(results, CATALOG, "markdown", "--config", str(config))
    assert code == 0 and out.count("ⓘ") == 1
    assert f"\ngpu-b: {LINE.format(run='torch 2.10')}\n" in out
