"""What a bisect is given: its timeline (a builds file, or the index's recorded answers), and
its points (a list, or a real `report --json`)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from bisect_helpers import RECORDED
from paths import DATA, REPO_ROOT

from bot.bisect import index
from bot.bisect.points import PointsError, parse_points, parse_variants, points_in_report
from bot.bisect.timeline import TimelineError, make_timeline, read_builds
from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.results.types import BadInput

PIP = (RECORDED / "pip-index-versions-lightning-thunder.txt").read_text()
PYPI = (RECORDED / "pypi-lightning-thunder.json").read_text()


def test_a_builds_file_is_one_spec_a_line_with_comments() -> None:
    text = "# header\n\nlightning-thunder==0.2.6\n  git+https://github.com/a/b@" + "0" * 40
    text += "#subdirectory=python\n"
    assert read_builds(text) == [
        "lightning-thunder==0.2.6",
        "git+https://github.com/a/b@" + "0" * 40 + "#subdirectory=python",
    ]


def test_a_timeline_names_each_build_once_oldest_first() -> None:
    t = make_timeline(
        "thunder",
        "lightning-thunder==0.2.7.dev20251102",
        "lightning-thunder==0.2.7.dev20260201",
        ["lightning-thunder==0.2.7.dev20251102", "lightning-thunder==0.2.7.dev20251123"],
    )
    assert t.names == (
        "lightning-thunder==0.2.7.dev20251102",
        "lightning-thunder==0.2.7.dev20251123",
        "lightning-thunder==0.2.7.dev20260201",
    )  # a list that repeats the good build at its start is taken as meant
    assert (
        t.good.day == date(2025, 11, 2)
        and make_timeline(
            "thunder", "lightning-thunder==0.2.6", "lightning-thunder==0.2.7", []
        ).good.day
        is None
    )


@pytest.mark.parametrize(
    ("good", "between", "bad", "why"),
    [
        ("lightning-thunder==0.2.6", ["lightning-thunder==0.2.6.1"] * 2, "lightning-thunder==1",
         "listed twice"),
        ("lightning-thunder==0.2.7.dev20260201", [], "lightning-thunder==0.2.7.dev20251102",
         "oldest first"),
        ("lightning-thunder>=0.2", [], "lightning-thunder==1", "NAME==VERSION"),
        ("nvfuser-cu130-torch210==0.2.36", [], "lightning-thunder==1", "not a distribution"),
    ],
)  # fmt: skip
def test_a_timeline_that_cannot_be_bisected_is_refused(
    good: str, between: list[str], bad: str, why: str
) -> None:
    with pytest.raises(TimelineError, match=why):
        make_timeline("thunder", good, bad, between)


def test_pip_and_pypi_list_the_same_nightlies_between_two_builds() -> None:
    want = [f"0.2.7.dev{d}" for d in ("20251109", "20251116", "20251123", "20251130",
                                       "20251207", "20251214", "20251221", "20251228",
                                       "20260104", "20260111", "20260118", "20260125")]  # fmt: skip
    for answer in (PIP, PYPI):
        listing = index.read_answer(answer)
        assert index.between(listing, "0.2.7.dev20251102", "0.2.7.dev20260201") == want
        assert index.between(
            listing, "0.2.7.dev20251102", "0.2.7.dev20260201",
            since=date(2025, 12, 1), until=date(2025, 12, 31),
        ) == [f"0.2.7.dev202512{d}" for d in ("07", "14", "21", "28")]  # fmt: skip


def test_a_release_between_nightlies_is_listed_unless_nightlies_only() -> None:
    listing = index.read_answer(PYPI)
    assert index.between(listing, "0.2.6.dev20251019", "0.2.7.dev20251102") == [
        "0.2.6",
        "0.2.7.dev20251026",
    ]
    assert index.between(
        listing, "0.2.6.dev20251019", "0.2.7.dev20251102", nightlies_only=True
    ) == ["0.2.7.dev20251026"]


def test_pypi_orders_by_upload_time_pip_by_version() -> None:
    """0.2.2.dev0 sorts first among the 0.2.2 builds but was uploaded last: a bisect wants
    the order the builds were made in, which only the upload times say."""
    by_upload = [r.version for r in index.read_answer(PYPI)]
    by_version = [r.version for r in index.read_answer(PIP)]
    assert sorted(by_upload) == sorted(by_version) and len(by_upload) == 106
    assert by_version.index("0.2.2.dev0") < by_version.index("0.2.2.dev20250209")
    assert by_upload.index("0.2.2.dev0") > by_upload.index("0.2.2.dev20250316")


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("ERROR: No matching distribution found for x\n", "no 'Available versions:' line"),
        ("Available versions: 1.0, $(rm -rf /)\n", "which is no version"),
        ('{"releases": [1, 2]}', "no 'releases' object"),
        ('{"releases": {"1.0": [{"upload_time_iso_8601": "yesterday"}]}}', "upload time"),
        ('{"releases": {"1.0": ', "PyPI JSON answer"),
    ],
)
def test_an_index_answer_that_is_no_listing_is_bad_input(answer: str, why: str) -> None:
    with pytest.raises(BadInput, match=why):
        index.read_answer(answer)


def test_a_yanked_or_empty_release_is_not_a_candidate() -> None:
    data = json.loads(PYPI)
    data["releases"]["0.2.7.dev20251123"] = [
        {**f, "yanked": True} for f in data["releases"]["0.2.7.dev20251123"]
    ]
    data["releases"]["0.2.7.dev20251130"] = []
    versions = [r.version for r in index.from_pypi_json(data)]
    assert "0.2.7.dev20251123" not in versions and "0.2.7.dev20251130" not in versions
    assert "0.2.7.dev20251116" in versions


def test_list_builds_prints_what_builds_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = tmp_path / "answer.json"
    answer.write_text(PYPI)
    argv = ["bisect", "--package", "thunder", "--good", "lightning-thunder==0.2.7.dev20251102",
            "--bad", "lightning-thunder==0.2.7.dev20251207", "--index-answer", str(answer),
            "--list-builds"]  # fmt: skip
    assert cli.main(argv, env={}) == 0
    listed = capsys.readouterr().out
    assert listed.splitlines() == [
        f"lightning-thunder==0.2.7.dev{d}" for d in ("20251102", "20251109", "20251116",
                                                       "20251123", "20251130", "20251207")
    ]  # fmt: skip
    assert read_builds(listed)[1:-1] == listed.splitlines()[1:-1]
    code = cli.main([*argv[:-3], "--index-answer", str(answer), "--builds", str(answer)], env={})
    assert (
        code == ExitCode.USAGE
        and "--builds, --from-index or --index-answer" in capsys.readouterr().err
    )
    bad = [*argv[:6], "lightning-thunder==9.9", *argv[7:]]
    assert cli.main(bad, env={}) == ExitCode.USAGE
    assert "the bad version 9.9 is not in the index's answer" in capsys.readouterr().err


def test_points_and_variants_are_checked() -> None:
    assert parse_points("float32/2048x8192, bfloat16/512x4096,float32/2048x8192") == (
        "bfloat16/512x4096",
        "float32/2048x8192",
    )
    for bad in ("", "bf16/2048x8192", "float32/2048", "float32/2048x8192/x"):
        with pytest.raises(PointsError):
            parse_points(bad)
    assert parse_variants("thunder-func") == ("nvfuser", "thunder-func")
    with pytest.raises(PointsError):
        parse_variants("thunder func")


def test_the_points_of_a_real_report_are_its_regressed_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verdict.json"

    def report(head: str) -> int:
        results, config = str(DATA / "h200" / "results"), str(REPO_ROOT / "perfbot.toml")
        argv = ["report", "--results", results, "--base", "06f650c8", "--head", head,
                "--config", config, "--json", str(out)]  # fmt: skip
        return cli.main(argv, env={})

    assert report("9dc51696") == ExitCode.REGRESSION  # the unfused backward: every point
    assert points_in_report(json.loads(out.read_text()), "x") == tuple(
        sorted(f"{d}/{s}" for d in ("bfloat16", "float16", "float32")
               for s in ("512x4096", "2048x8192", "16384x8192"))
    )  # fmt: skip
    assert report("da17d548") == 0  # A/A
    with pytest.raises(BadInput, match="no regressed or broken point"):
        points_in_report(json.loads(out.read_text()), "x")
    with pytest.raises(BadInput, match="not the JSON of `report --json`"):
        points_in_report([1], "x")


def test_help_reads_well_and_lists_the_bisect_s_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["bisect", "--help"]) == 0
    text = capsys.readouterr().out
    listed = {code for code in ExitCode if f"{code.value:>3}  {code.name}" in text}
    bisect_s = {ExitCode.UNFINISHED, ExitCode.INCONCLUSIVE, ExitCode.MEASURE_FAILED}
    assert bisect_s < listed and ExitCode.REGRESSION not in listed  # its own; --help has all
    assert "2 + ceil(log2(n - 1)) measurements" in text and "python -m bot bisect" in text
    assert cli.main(["--help"]) == 0 and "bisect" in capsys.readouterr().out


def test_a_history_without_a_break_names_no_points() -> None:
    history = {"schema": "perfbot-history/1", "machines": [{"breaks": [], "changes": [{}]}]}
    with pytest.raises(BadInput, match="give the points with --points"):
        points_in_report(history, "h.json")
    history["machines"][0]["breaks"] = [  # type: ignore[index]
        {"status": "confirmed", "points": [{"point": "thunder-func/float32/512x4096"}]},
        {"status": "pending", "points": [{"point": "thunder-func/float16/512x4096"}]},
    ]
    assert points_in_report(history, "h.json") == ("float32/512x4096",)
