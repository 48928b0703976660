"""The bot on the package-under-test pairs measured on the H200 through benchmarks.under_test
(data/README.md, "h200-under-test/"): Thunder 0.2.6 against a nightly, twice, and against 0.2.5,
whose nvFuser executor does not load. The shipped perfbot.toml is used, as in CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from paths import DATA, REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode

UNDER_TEST = DATA / "h200-under-test"
PAIR = UNDER_TEST / "thunder-pair" / "results"
BROKEN = UNDER_TEST / "thunder-broken-pair" / "results"
CALL1 = UNDER_TEST / "thunder-pair-call1" / "results"
BASE, HEAD, OLDER = "977510d7", "13612769", "0e8c6c35"


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(["report", *argv, "--config", str(REPO_ROOT / "perfbot.toml")], env={})
    return code, capsys.readouterr().out


def _section(text: str, summary: str) -> str:
    """The fold whose summary starts with ``summary``."""
    start = text.index(f"<summary>{summary}")
    return text[start : text.index("</details>", start)]


def _row(section: str, name: str) -> str:
    (line,) = [x for x in section.splitlines() if x.startswith(f"| {name} |")]
    return line


def _manifest(results: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((results / "under-test.json").read_text())
    return data


def test_the_nightly_is_no_change_and_every_side_is_named_by_its_build(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _report(
        capsys, "--results", str(PAIR / "rep-1"), "--results", str(PAIR / "rep-2"),
        "--base", BASE, "--head", HEAD,
    )  # fmt: skip
    assert code == ExitCode.OK_NO_REGRESSION == 0
    assert out.splitlines()[1] == "### ⚪ RMSNorm backward: No change" and "💥" not in out
    assert (
        "\nbase Thunder 0.2.6 (977510d71561) → head Thunder 0.2.7.dev20260201 (1361276927b1)"
        " · 2 run(s) of base, 2 of head · between-run noise from 12 A/A runs on nvidia-h200"
        " · runner checks passed (4 of 4 run(s) checked)\n"
    ) in out
    provenance = _section(out, "Provenance")
    assert _row(provenance, "spec") == (
        "| spec | lightning\\_thunder-0.2.6-py3-none-any.whl \\(wheel\\)"
        " | lightning\\_thunder-0.2.7.dev20260201-py3-none-any.whl \\(wheel\\) |"
    )
    assert (
        _row(provenance, "installed version") == "| installed version | 0.2.6 | 0.2.7.dev20260201 |"
    )
    assert _row(provenance, "package under test") == "| package under test | Thunder | Thunder |"
    sides = _manifest(PAIR)["sides"]
    assert _row(provenance, "sha256") == (
        f"| sha256 | {sides['base']['sha256']} | {sides['head']['sha256']} |"
    )
    assert "/" not in _row(provenance, "spec")  # the wheel by its name, not the lab's path


def test_the_parent_folder_gives_the_same_report(capsys: pytest.CaptureFixture[str]) -> None:
    _, by_repeat = _report(
        capsys, "--results", str(PAIR / "rep-1"), "--results", str(PAIR / "rep-2"),
        "--base", BASE, "--head", HEAD,
    )  # fmt: skip
    code, by_parent = _report(capsys, "--results", str(PAIR), "--base", BASE, "--head", HEAD)
    assert code == 0 and by_parent == by_repeat


def test_an_older_thunder_without_its_nvfuser_executor_is_broken(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _report(capsys, "--results", str(BROKEN), "--base", BASE, "--head", OLDER)
    assert code == ExitCode.BROKEN == 5
    lines = out.splitlines()
    assert lines[1] == "### 💥 RMSNorm backward: Broken: 18 point(s) that ran at base fail at head"
    assert "- 💥 **Every point still runs**: no: 18 point(s) that ran at base fail at head" in lines
    assert "head Thunder 0.2.5 (0e8c6c3576b1)" in out
    # The error once, escaped, with the points it hit.
    start = lines.index("| error at head | points |")
    rows = lines[start + 2 : lines.index("", start)]
    error = (
        "error: ValueError: An object of type &lt;class 'NoneType'&gt; is not a valid "
        "Executor. Executor list: \\[None\\]"
    )
    assert rows == [f"| 💥 {error} | 18: thunder-func, thunder-prims at 9 sizes |"]
    assert out.count(error) == 1 and "<class" not in out
    # Each failing point with its error: the verdict's JSON.
    code, text = _report(
        capsys, "--results", str(BROKEN), "--base", BASE, "--head", OLDER, "--json", "-"
    )
    assert code == ExitCode.BROKEN
    (verdict,) = [m["verdict"] for m in json.loads(text)["machines"]]
    broken = [p for p in verdict["points"] if p["state"] == "broken"]
    assert len(broken) == 18 and {p["variant"] for p in broken} == {"thunder-func", "thunder-prims"}
    raw = "error: ValueError: An object of type <class 'NoneType'> is not a valid Executor."
    assert all(p["error"].startswith(raw) for p in broken)


def test_the_first_call_is_not_gating_its_after_checks_failed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _report(capsys, "--results", str(CALL1), "--base", BASE, "--head", HEAD)
    assert code == ExitCode.OK_NO_REGRESSION
    assert "**A runner check failed: this machine's verdict does not gate**" in out
    assert out.count("after the measurement") == 4
    assert "GPU 24% busy with nothing of ours running" in out
    assert "before the measurement" not in out


def test_json_says_which_build_each_side_is(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _report(
        capsys, "--results", str(PAIR), "--base", BASE, "--head", HEAD, "--json", "-"
    )
    assert code == 0
    verdict = json.loads(out)
    text = json.dumps(verdict)
    assert "1361276927b1c1296a328e8150f633768722cadf" in text
    assert "977510d71561a48ab060ea5a7fbcf9cf017dbd71" in text


@pytest.mark.parametrize("results", [PAIR, BROKEN, CALL1], ids=lambda p: p.parent.name)
def test_each_run_s_record_names_the_build_its_manifest_names(results: Path) -> None:
    """The manifest (under-test.json) and every run's provenance record agree on each side's
    build and key: the committed data are one pair each."""
    sides = _manifest(results)["sides"]
    assert _manifest(results)["repeats"] == 2
    for side, want in sides.items():
        for rep in ("rep-1", "rep-2"):
            path = results / rep / "nvidia-h200" / f"{want['key']}.provenance.jsonl"
            lines = path.read_text().splitlines()
            assert len(lines) == 1, path  # one pair's run alone in each folder
            record = json.loads(lines[0])
            assert record["commit"] == want["key"]
            got = record["under_test"]
            assert got["side"] == side
            keep = {k: v for k, v in want.items() if k not in ("key", "key_date")}
            assert {k: got.get(k) for k in keep} == keep
