"""Every figure the docs quote is one a command prints from committed data.

The transcripts in docs/CALIBRATION.md are compared with a fresh run of their command (the
quick `noise` always; the two `calibrate` runs, minutes each, and the other figures whose
command takes a second or more, under `pytest -m docs`, part of `pytest -m slow`, which CI
runs), and the figures docs/BOT.md and data/README.md quote are read back from those transcripts
or recomputed from the results files.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys
from datetime import datetime, timezone
from typing import Any

import pytest
from paths import DATA, REPO_ROOT, module_output, run_bot

from bot.commands.noise_file import read_noise_model
from bot.config import Config, VerdictSettings
from bot.decide.verdict import decide
from bot.results.locate import load_commit

CALIBRATION = (REPO_ROOT / "docs" / "CALIBRATION.md").read_text(encoding="utf-8")
BOT_DOC = " ".join((REPO_ROOT / "docs" / "BOT.md").read_text(encoding="utf-8").split())
DATA_README = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())


def transcripts() -> dict[str, str]:
    """Each `python -m bot ...` command block of CALIBRATION.md -> the output block after it."""
    blocks = re.findall(r"```\n(.*?)```", CALIBRATION, flags=re.DOTALL)
    out = {}
    for command, output in itertools.pairwise(blocks):
        if command.startswith("python -m bot ") and command.count("\n") == 1:
            out[command.strip()] = output
    return out


def bot_args(command: str) -> list[str]:
    """The arguments of a documented `python -m bot ...` command."""
    argv = command.split()
    assert argv[:3] == ["python", "-m", "bot"], command
    return argv[3:]


def run(command: str) -> str:
    """What the documented `python -m bot ...` command prints; it must succeed. The command
    line runs in this process (paths.run_bot: the function `python -m bot` calls, from the
    repository root, in this environment)."""
    done = run_bot(*bot_args(command))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


RESULTS = "--results data/h200/results --results data/h200-states/results " + " ".join(
    f"--results data/h200-repeats/call-{n}/results" for n in (1, 2, 3, 4)
)
NOISE = f"python -m bot noise {RESULTS}"
CAL = f"python -m bot calibrate {RESULTS}"
CAL_DOC = " ".join(CALIBRATION.split())


def test_the_documented_commands_are_the_ones_checked() -> None:
    assert set(transcripts()) == {NOISE, CAL}


def test_the_noise_transcript_is_what_noise_prints() -> None:
    assert run(NOISE) == transcripts()[NOISE]


@pytest.mark.docs
def test_the_calibration_transcript_is_what_calibrate_prints() -> None:
    assert run(CAL) == transcripts()[CAL]


def _noise_rows() -> dict[str, tuple[float, float]]:
    """series -> (spread, raw between-run SD), in percent, from the noise transcript."""
    rows = {}
    for line in transcripts()[NOISE].splitlines():
        cells = line.split()
        if cells and cells[0].startswith(("ratio:", "kernel:")) and cells[-1].isdigit():
            rows[cells[0]] = (float(cells[1].rstrip("%")), float(cells[3].rstrip("%")))
    return rows


def _span(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f}%"


def test_calibration_doc_noise_figures() -> None:
    rows = _noise_rows()
    assert len(rows) == 45  # 18 ratio series, 27 kernel series (nvFuser's 9 included)
    ratio = [v for k, v in rows.items() if k.startswith("ratio:")]
    kernel = [v for k, v in rows.items() if k.startswith("kernel:")]
    spread = f"{_span([a for a, _ in ratio])} for its ratio and {_span([a for a, _ in kernel])}"
    sd = f"{_span([b for _, b in ratio])} and {_span([b for _, b in kernel])}"
    assert f"between two runs is {spread} for its kernel times, as a between-run SD {sd}" in (
        CAL_DOC
    )
    top = max(rows, key=lambda k: rows[k][1])
    assert top.endswith("/512x4096")
    out = transcripts()[NOISE]
    assert out.startswith("Between-run noise over 12 runs of the same code on nvidia-h200")
    assert "Twelve 8-call runs of stock code" in CAL_DOC


def _cal_rows(side: int) -> dict[str, tuple[int, ...]]:
    """label -> (hits, trials, recorded hits, recorded trials) for one runs-a-side block."""
    text = transcripts()[CAL]
    block = text.split(f"\n{side} run")[1].split("\n\n")[0]
    rows = {}
    for line in block.splitlines()[2:]:
        m = re.match(r"\s+(.+?)\s+(\d+)/(\d+)\s.*?\s(\d+)/(\d+)", line)
        if m:
            rows[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
    return rows


def test_calibration_doc_and_bot_doc_figures() -> None:
    one, two = _cal_rows(1), _cal_rows(2)
    alarm, thunder = "A/A: false alarm (regressed or broken)", "+2% Thunder kernels at every point"
    nv, improved = "+2% nvFuser fusion at every point", '... of which read as "improved"'
    assert two[alarm] == (0, 300, 0, 30) and one[alarm][:2] == (0, 300)
    assert "**A/A false alarms at PR level: 0 of 300 trials** (upper bound 1.0%" in CAL_DOC
    assert "0 of 300 A/A trials flagged (95% upper bound 1.0%)" in BOT_DOC
    assert two[thunder][:2] == (300, 300)
    assert "caught 300 of 300, +2% on the hand-written" in BOT_DOC
    assert two[nv][:2] == (300, 300)
    hits, trials = one[nv][:2]
    assert f"at one run a side {hits} of {trials} ({100 * hits / trials:.1f}%)" in CAL_DOC
    assert f"nvFuser regression 300 of 300 ({hits} of {trials} with one run a side" in BOT_DOC
    assert one[improved][:2] == two[improved][:2] == (0, 300)
    lone = [v for k, v in two.items() if k.startswith("lone +5% at ")]
    assert len(lone) == 6 and {v[:2] for v in lone} == {(300, 300)}
    text = transcripts()[CAL]
    smallest = re.findall(r"^\s+(thunder-\S+)\s+2\.0%\s+(\+[\d.]+%)\s", text, flags=re.MULTILINE)
    assert len(smallest) == 18
    at = dict(smallest)
    assert sorted(k for k, v in at.items() if v == "+7.5%") == ["thunder-func/float32/512x4096"]
    assert sorted(k for k, v in at.items() if v == "+3%") == [
        f"{variant}/{dtype}/16384x8192"
        for variant in ("thunder-func", "thunder-prims")
        for dtype in ("bfloat16", "float16")
    ]
    assert sum(v == "+5%" for v in at.values()) == 13
    assert "+3% at the four bf16 and fp16 (16384, 8192) points, +5% at 13 others, +7.5% at" in (
        CAL_DOC
    )
    assert "from +3% (bf16 and fp16 at (16384, 8192)) to +7.5% (thunder-func fp32" in BOT_DOC


STATE_ROWS = re.findall(
    r"^\| `(data/[^`]+)` \| ([0-9a-f]{8}) → ([0-9a-f]{8}) \| [^|]+ \| ([a-z ()]+) \| "
    r"([a-z ]+) / ([a-z ]+) / ([a-z ]+) / ([a-z ]+) \| (\d) \|$",
    CALIBRATION,
    flags=re.MULTILINE,
)


@pytest.mark.docs  # a second or more of real runs: the slow run (CI) holds it
def test_calibration_doc_state_table_is_what_report_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.commands import cli

    assert len(STATE_ROWS) == 13
    for results, base, head, overall, *rest in STATE_ROWS:
        guards, code = rest[:4], rest[4]
        argv = ["report", "--results", str(REPO_ROOT / results), "--base", base, "--head", head]
        got = cli.main([*argv, "--config", str(REPO_ROOT / "perfbot.toml"), "--json", "-"], env={})
        run = json.loads(capsys.readouterr().out)
        (unit,) = run["machines"]  # RMSNorm backward on the H200: its verdict is the run's
        v = unit["verdict"]
        assert (got, v["overall"], run["overall"]) == (int(code), overall, overall), results
        assert [g["state"] for g in v["guards"]] == guards, (results, base, head)


def test_calibration_doc_time_figures() -> None:
    timing = (DATA / "h200-repeats" / "call-4" / "logs" / "timing.txt").read_text()
    total = re.search(r"2 repeats: [\d.]+ s measuring, ([\d.]+) s in all", timing)
    assert total is not None
    assert f"took {float(total.group(1)):.0f} s on a fresh H200" in CAL_DOC
    assert f"took {float(total.group(1)):.0f} s of H200 time" in BOT_DOC
    walls = []
    for n in (1, 2, 3):
        text = (DATA / "h200-repeats" / f"call-{n}" / "logs" / "timing.txt").read_text()
        m = re.search(r"([\d.]+) s in all", text)
        assert m is not None
        walls.append(float(m.group(1)))
    assert f"three pairs before that change took {min(walls):.1f}-{max(walls):.1f} s" in CAL_DOC


def _ratio_medians(sha: str) -> dict[str, float]:
    res = load_commit(DATA / "h200" / "results", sha)
    return {
        f"{k.dtype} {k.shape}": statistics.median(p.ratio)
        for k, p in res.points.items()
        if k.variant == "thunder-prims" and p.ratio
    }


def test_data_readme_ratio_ranges() -> None:
    base, regressed = _ratio_medians("06f650c8"), _ratio_medians("9dc51696")
    quoted = (
        f"thunder-prims/nvFuser ratio {min(base.values()):.3f}-{max(base.values()):.3f} at "
        f"baseline, {min(regressed.values()):.3f}-{max(regressed.values()):.3f} regressed (e.g. "
        f"bf16 2048x8192: {base['bfloat16 2048x8192']:.3f} -> "
        f"{regressed['bfloat16 2048x8192']:.3f})"
    )
    assert quoted in DATA_README


def test_bot_doc_exit_codes_are_the_ones_the_bot_uses() -> None:
    from bot.exitcodes import ExitCode

    table = re.findall(r"\| (\d+) \| ([A-Z_]+) \|", BOT_DOC)
    assert [(int(code), name) for code, name in table] == [(c.value, c.name) for c in ExitCode]


STATES = DATA / "h200-states"
SLOWED = {
    "slow-thunder-2": "63e9dde7",
    "slow-thunder-5": "8681cae2",
    "slow-nvfuser-2": "3f0f630d",
    "slow-nvfuser-5": "93486aaf",
}


def _record(sha: str) -> dict[str, Any]:
    (path,) = (STATES / "results" / "nvidia-h200").glob(f"{sha}*.provenance.jsonl")
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    return record


def test_data_readme_states_table_is_the_lab_logs() -> None:
    rows = re.findall(
        r"\| `([0-9a-f]{40})` \| ([a-z0-9-]+) \| [^|]* \| (\d+) \+ (\d+) s \|", DATA_README
    )
    assert len(rows) == 8  # the ninth, broken-executor, has no asv time in its log
    commits = "".join(
        (STATES / "logs" / f"commits-call{i}.txt").read_text(encoding="utf-8") for i in (1, 2)
    )
    for sha, state, measure, store in rows:
        assert f"{sha} {state}: " in commits
        log = (STATES / "logs" / f"{state}.log").read_text(encoding="utf-8")
        assert f"== measurement took {measure} s" in log
        assert f"== asv stored the results in {store} s" in log


def test_data_readme_slowdown_figures() -> None:
    fits = [_record(sha)["slowdown"] for sha in SLOWED.values()]
    floors = sorted(f["sleep_floor_us"] for f in fits)
    slopes = sorted(1000 * f["sleep_us_per_cycle"] for f in fits)
    assert (
        f"floor {floors[0]:.3f}-{floors[-1]:.3f} us, {slopes[0]:.3f}-{slopes[-1]:.3f} ns a cycle"
    ) in DATA_README
    base = load_commit(STATES / "results", "6c840f30")
    verdicts = {
        name: decide(base, load_commit(STATES / "results", sha), VerdictSettings())
        for name, sha in SLOWED.items()
    }

    def geomean(name: str, variant: str) -> str:
        (s,) = [s for s in verdicts[name].summaries if s.variant == variant]
        return f"{s.geomean.estimate - 1:+.1%}"

    def nvfuser(name: str) -> str:
        moves = [
            p.nvfuser_kernel.change.estimate
            for p in verdicts[name].points
            if p.key.variant == "thunder-prims" and p.nvfuser_kernel
        ]
        return f"{math.exp(sum(map(math.log, moves)) / len(moves)) - 1:+.1%}"

    two, five = "slow-thunder-2", "slow-thunder-5"
    assert (
        f"{geomean(two, 'thunder-prims')} (thunder-prims) / {geomean(two, 'thunder-func')} "
        f"(thunder-func) for {two}, {geomean(five, 'thunder-prims')} / "
        f"{geomean(five, 'thunder-func')} for {five}"
    ) in DATA_README
    assert (
        f"{nvfuser('slow-nvfuser-2')} for slow-nvfuser-2 and {nvfuser('slow-nvfuser-5')} for "
        "slow-nvfuser-5"
    ) in DATA_README
    shipped = Config.from_env({}, REPO_ROOT / "perfbot.toml").verdict
    assert shipped.noise_model is not None
    model = read_noise_model(shipped.noise_model)
    for name, sha in SLOWED.items():
        if "nvfuser" in name:  # now an nvFuser regression, never "improved"
            v = decide(base, load_commit(STATES / "results", sha), shipped, model)
            assert v.overall == "regressed" and v.guard("nvfuser").state == "regressed"  # type: ignore[union-attr]
    assert "its nvFuser guard now calls both an nvFuser regression" in DATA_README


def test_data_readme_stock_spread() -> None:
    out = run("python -m bot noise --results data/h200/results --results data/h200-states/results")
    assert out.startswith("Between-run noise over 6 runs of the same code")
    spreads = {
        cells[0]: float(cells[1].rstrip("%"))
        for line in out.splitlines()
        if (cells := line.split()) and cells[0].startswith("ratio:")
    }
    worst = max(spreads, key=spreads.__getitem__)
    assert worst == "ratio:thunder-func/float32/512x4096"
    assert f"is {spreads[worst]:.1f}% (thunder-func fp32 512x4096)" in DATA_README
    assert "Left out, run on another stack, sampling or set of variants: f888795e" in out


def test_data_readme_repeats_table_is_the_lab_logs() -> None:
    rows = re.findall(
        r"\| (\d) \| stock-\d+ `([0-9a-f]{40})` \| [a-z0-9-]+ `([0-9a-f]{40})` \| ([\d.]+) s \|",
        DATA_README,
    )
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    for call, base, head, wall in rows:
        logs = DATA / "h200-repeats" / f"call-{call}" / "logs"
        timing = (logs / "timing.txt").read_text(encoding="utf-8")
        assert f"{wall} s in all" in timing and base in timing and head in timing
        for rep in ("rep-1", "rep-2"):
            for sha in (base, head):
                folder = DATA / "h200-repeats" / f"call-{call}" / "results" / rep / "nvidia-h200"
                assert (folder / f"{sha}.provenance.jsonl").is_file()


def test_data_readme_repeat_two_runs_small_kernels_slower() -> None:
    from bot.results.locate import list_commits
    from bot.results.types import PointKey

    key = PointKey("nvfuser", "float16", "512x4096")
    medians: dict[str, list[float]] = {"rep-1": [], "rep-2": []}
    for call in (1, 2, 3, 4):
        for rep, found in medians.items():
            folder = DATA / "h200-repeats" / f"call-{call}" / "results" / rep
            for info in list_commits(folder):
                kernel = load_commit(folder, info.commit).points[key].kernel_s or ()
                found.append(1e6 * statistics.median(kernel))
    one, two = medians["rep-1"], medians["rep-2"]
    assert len(one) == len(two) == 8
    quoted = (
        f"{min(one):.2f}-{max(one):.2f} us in the eight repeat-1 processes, "
        f"{min(two):.2f}-{max(two):.2f} us in the eight repeat-2 ones"
    )
    assert quoted in DATA_README and max(one) < min(two)


def test_data_readme_broken_run_and_gpu_test_logs() -> None:
    broken = (STATES / "logs" / "broken-executor.log").read_text(encoding="utf-8")
    assert "== measurement took 69 s" in broken and "| 69 s, then asv (not timed" in DATA_README
    assert "not a valid Executor" in broken and "not a valid Executor" in DATA_README
    first = (STATES / "logs" / "gpu-tests-call1.log").read_text(encoding="utf-8")
    second = (STATES / "logs" / "gpu-tests-call2.log").read_text(encoding="utf-8")
    assert "1 failed, 6 passed" in first and "7 passed" in second
    assert "6 passed and 1 failed in call 1" in DATA_README and "7 passed)" in DATA_README


def test_data_readme_thunder_nightlies_table() -> None:
    nightlies = DATA / "h200-thunder-nightlies"
    rows = re.findall(
        r"\| `([0-9a-f]{40})` \| (0\.2\.7\.dev\d{8}) \| (\d+) \+ (\d+) s \|", DATA_README
    )
    assert [v for _, v, _, _ in rows] == sorted(v for _, v, _, _ in rows)  # date order
    assert len(rows) == 6
    results = nightlies / "results"
    dates = []
    for sha, version, measure, store in rows:
        (path,) = (results / "nvidia-h200").glob(f"{sha}.provenance.jsonl")
        record = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
        assert record["versions"]["thunder"] == version
        for point in record["points"].values():
            for name in ("thunder-prims", "thunder-func"):
                assert point["variants"][name]["status"] == "ok"
        log = (nightlies / "logs" / f"thunder-{version}.log").read_text(encoding="utf-8")
        assert f"== measurement took {measure} s" in log
        assert f"== asv stored the results in {store} s" in log
        dates.append(load_commit(results, sha).date)
    assert dates == sorted(dates)  # the commits' dates follow the nightlies' order


WORKFLOWS_DOC = " ".join((REPO_ROOT / "docs" / "WORKFLOWS.md").read_text(encoding="utf-8").split())


def test_data_readme_under_test_table_is_the_lab_logs() -> None:
    """The package-under-test pairs: wall time from each call's log, keys and versions from its
    manifest and provenance, and what the bot says from `report` on the committed folders."""
    under = DATA / "h200-under-test"
    rows = re.findall(
        r"\| `([a-z0-9-]+)/` \(call (\d)\) \| Thunder ([\d.a-z]+) \| ([\d.a-z]+)[^|]*\| "
        r"`([0-9a-f]{8})` → `([0-9a-f]{8})` \| (\d+) s \| ([^|]+) \|",
        DATA_README,
    )
    assert [r[0] for r in rows] == ["thunder-pair", "thunder-broken-pair", "thunder-pair-call1"]
    for folder, _call, base_v, head_v, base_k, head_k, wall, says in rows:
        results = under / folder / "results"
        log = (results / "logs" / "pair.log").read_text(encoding="utf-8")
        assert f"rc=0 wall={wall} s" in log
        sides = json.loads((results / "under-test.json").read_text(encoding="utf-8"))["sides"]
        assert (sides["base"]["version"], sides["head"]["version"]) == (base_v, head_v)
        assert sides["base"]["key"].startswith(base_k) and sides["head"]["key"].startswith(head_k)
        for rep in ("rep-1", "rep-2"):
            for side in ("base", "head"):
                path = results / rep / "nvidia-h200" / f"{sides[side]['key']}.provenance.jsonl"
                (line,) = path.read_text(encoding="utf-8").splitlines()
                assert json.loads(line)["under_test"]["version"] == sides[side]["version"]
        args = [f"--results={results / rep}" for rep in ("rep-1", "rep-2")]
        done = run_bot("report", *args, "--base", base_k, "--head", head_k)
        headline = done.stdout.splitlines()[1]  # "### <icon> RMSNorm backward: <verdict>"
        expected = {"no change, exit 0": (0, "No change"), "broken, exit 5": (5, "Broken")}
        code, word = expected.get(says.strip(), (0, "No change"))
        if "not gating" in says:  # held by the runner check: never a verdict's headline
            word = "Not judged: a runner check failed on nvidia-h200"
            assert "does not gate" in done.stdout
        assert done.returncode == code and word in headline, done.stderr
        if folder != "thunder-pair-call1":
            assert f"{wall} s" in WORKFLOWS_DOC


def test_the_after_check_utilization_figures() -> None:
    """What nvidia-smi read right after our own measurements: 11-24% in the call whose rule
    judged it (data/README.md), up to 29% over all three pairs, 0% before (WORKFLOWS.md)."""
    under = DATA / "h200-under-test"

    def readings(folder: str, when: str) -> list[float]:
        return [
            json.loads(line)["gpu"]["utilization.gpu"]
            for path in (under / folder / "results").glob("rep-*/nvidia-h200/*.hygiene.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["when"] == when
        ]

    def span(values: list[float]) -> str:
        return f"{min(values):.0f}-{max(values):.0f}%"

    first = readings("thunder-pair-call1", "after")
    assert len(first) == 4 and span(first) in DATA_README
    folders = ["thunder-pair", "thunder-broken-pair", "thunder-pair-call1"]
    after = [u for f in folders for u in readings(f, "after")]
    before = [u for f in folders for u in readings(f, "before")]
    assert f"read up to {max(after):.0f}% in the {len(after)} after-checks" in WORKFLOWS_DOC
    assert set(before) == {0.0} and f"0% in all {len(before)} before-checks" in WORKFLOWS_DOC


def test_data_readme_reproducer_figures() -> None:
    """The reproducers' own output on the H200: fusions in the backward and the median."""
    repro = DATA / "h200-repro"
    for name, fusions in (("thunder_stock", 1), ("thunder_unfused", 0)):
        out = (repro / f"{name}.out").read_text(encoding="utf-8")
        assert f"nvFuser fusions in the backward: {fusions}" in out
        (median,) = re.findall(r"backward: median ([\d.]+) us over 20 calls", out)
        assert f"{'1 nvFuser fusion' if fusions else 'has 0'}" in DATA_README
        assert f"{median} µs" in DATA_README
    assert (repro / "nvfuser_repro.out").read_text(encoding="utf-8") == ""
    # The unfused script is the bot's own reproducer for the regressed demo pair, verbatim.
    from bot.fusion.repro import thunder_script

    script = thunder_script("thunder-prims", "bfloat16", "16384x8192", "unfused-backward")
    assert (repro / "thunder_unfused.py.txt").read_text(encoding="utf-8") == script


def test_data_readme_capture_figures() -> None:
    """ "Seen at a glance" in data/README.md, counted from the committed captures."""
    caps = DATA / "h200-captures"
    point = caps / "stock-0.2.6" / "bfloat16_2048x8192" / "thunder-prims"
    text = (point / "definition.py.txt").read_text(encoding="utf-8")
    tensor_reciprocals = len(re.findall(r"fd\.ops\.reciprocal\(tv\d+\)", text))
    scalar_reciprocals = len(re.findall(r"fd\.ops\.reciprocal\(8192\.00\)", text))
    sqrts, pows = text.count("fd.ops.sqrt("), len(re.findall(r"fd\.ops\.pow\(tv\d+, 1\.0+\)", text))
    assert (tensor_reciprocals, scalar_reciprocals, sqrts, pows) == (4, 1, 2, 1)
    assert f"{sqrts} sqrts, {tensor_reciprocals} reciprocals of tensors" in DATA_README
    saved = json.loads((point / "saved.json").read_text(encoding="utf-8"))
    assert {"name": "t66", "shape": ["2048", "1"], "dtype": "thunder.dtypes.bfloat16"} in saved
    unfused = caps / "unfused-backward-0.2.6" / "bfloat16_2048x8192" / "thunder-prims"
    saved = json.loads((unfused / "saved.json").read_text(encoding="utf-8"))
    big = [s for s in saved if s["shape"] == ["2048", "8192"] and s["dtype"].endswith("float32")]
    assert len(big) == 4 and "saves four fp32 `[2048, 8192]` tensors" in DATA_README
    definition = (unfused / "definition.py.txt").read_text(encoding="utf-8")
    assert definition.strip() == "# no nvFuser fusion in the trace"


STORE_DOC = (REPO_ROOT / "docs" / "STORE.md").read_text(encoding="utf-8")
STORE_ESTIMATE = (
    "python -m bot store estimate --results data/h200-nightly/results --commit 4e57021e"
)


@pytest.mark.docs  # a second or more of real runs: the slow run (CI) holds it
def test_store_doc_size_figures_are_what_estimate_prints() -> None:
    """docs/STORE.md's transcript of `store estimate` (one year) and its three-year line;
    WORKFLOWS.md's quote of the year's size."""
    blocks = re.findall(r"```\n(.*?)```", STORE_DOC, flags=re.DOTALL)
    at = blocks.index(STORE_ESTIMATE + "\n")
    year = run(STORE_ESTIMATE)
    assert blocks[at + 1] == year
    three = run(STORE_ESTIMATE + " --days 1095").splitlines()[-1]
    assert blocks[at + 2] == three + "\n"
    size = re.search(r"store (\d+\.\d) MB \(peak .*zlib-compressed (\d+\.\d) MB", year)
    assert size is not None
    workflows = " ".join((REPO_ROOT / "docs" / "WORKFLOWS.md").read_text(encoding="utf-8").split())
    assert f"{size[1]} MB after a simulated year" in workflows
    assert f"zlib-compressed {size[2]} MB" in workflows


BISECT_DOC = (REPO_ROOT / "docs" / "BISECT.md").read_text(encoding="utf-8")


def _bisect_transcripts() -> list[tuple[str, str]]:
    """docs/BISECT.md's one-line commands, each with the output block after it."""
    blocks = re.findall(r"```\n(.*?)```", BISECT_DOC, flags=re.DOTALL)
    return [
        (command.strip(), output)
        for command, output in itertools.pairwise(blocks)
        if command.startswith("python -m bot") and command.count("\n") == 1
    ]


def test_bisect_doc_transcripts_are_what_the_commands_print(tmp_path: Any) -> None:
    """The recorded bisect (its state in a fresh folder) and the cost of a build."""
    pairs = _bisect_transcripts()
    assert [c.split()[3] for c, _ in pairs] == ["bisect", "--results"]  # the bisect, the cost
    for command, output in pairs:
        argv = command.split()
        if "--state" in argv:
            argv[argv.index("--state") + 1] = str(tmp_path / "bisect-demo" / "state.json")
        if argv[:3] == ["python", "-m", "bot"]:  # the command line, in this process
            done = run_bot(*argv[3:])
        else:
            done = subprocess.run(
                [sys.executable, *argv[1:]], cwd=REPO_ROOT, capture_output=True, text=True
            )
        assert done.returncode == 0, done.stderr
        assert done.stdout == output


def test_bisect_doc_builds_a_call_holds() -> None:
    """'Holds 10 such builds at the slowest of these': 540 s over the largest estimate."""
    ((_, cost),) = [(c, o) for c, o in _bisect_transcripts() if "bot.bisect.cost" in c]
    slowest = max(float(line.split()[-1]) for line in cost.splitlines()[1:-1])
    doc = " ".join(BISECT_DOC.split())
    assert f"holds {int(540 // slowest)} such builds at the slowest" in doc


SITE_DOC = (REPO_ROOT / "docs" / "SITE.md").read_text(encoding="utf-8")


@pytest.mark.docs  # a second or more of real runs: the slow run (CI) holds it
def test_site_doc_history_transcript_is_what_the_build_prints(tmp_path: Any) -> None:
    """docs/SITE.md's build of the site's history, and the figures of its landing view."""
    from benchmarks.engine.config import load_size_set
    from bot.site.landing import LISTED, OPEN_ROWS

    blocks = re.findall(r"```\n(.*?)```", SITE_DOC, flags=re.DOTALL)
    at = next(i for i, b in enumerate(blocks) if b.startswith("python -m bot site build"))
    argv = bot_args(blocks[at])
    argv[argv.index("--out") + 1] = str(tmp_path / "site")
    done = run_bot(*argv)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    shown = blocks[at + 1].count("\n")  # the lines after the first, as many as the doc quotes
    assert shown >= 4 and blocks[at + 1] == "\n".join(printed[1 : 1 + shown]) + "\n"
    assert any("hosts described differently" in line for line in printed)
    doc = " ".join(SITE_DOC.split())
    shapes, dtypes = load_size_set("nightly")
    points = len(shapes) * len(dtypes)
    settings = Config.from_env({}, REPO_ROOT / "perfbot.toml").verdict
    nightly = next((DATA / "h200-thunder-nightlies" / "results").glob("*/*.provenance.jsonl"))
    measured = json.loads(nightly.read_text(encoding="utf-8").splitlines()[-1])["variants"]
    thunder = sum(1 for v in measured if settings.is_gating(v))
    keyed = DATA / "h200-under-test" / "thunder-pair" / "results" / "rep-1" / "nvidia-h200"
    for record in keyed.glob("*.provenance.jsonl"):
        version = json.loads(record.read_text(encoding="utf-8").splitlines()[-1])["under_test"]
        (results,) = keyed.glob(f"{record.name[:8]}-*.json")
        ms = json.loads(results.read_text(encoding="utf-8"))["date"]
        day = datetime.fromtimestamp(ms / 1000, timezone.utc).date().isoformat()
        assert re.search(rf"{re.escape(version['version'])}, [^;)]*, on {day}[;)]", doc), day
    assert f"(at most {LISTED}; the tables have the rest)" in doc
    assert f"open up to {OPEN_ROWS} rows a machine" in doc
    assert f"the nightly set's {points} points are {points * thunder} Thunder rows" in doc


NIGHTLY_KEY = "4e57021e32936a96ba33e0293901790ffae9e73d"


def test_data_readme_nightly_shard_figures() -> None:
    """The shard walls and the plan come from `benchmarks.shards status` / `plan`."""
    where = [
        "--results",
        "data/h200-nightly/results",
        "--commit",
        NIGHTLY_KEY,
        "--machine",
        "nvidia-h200",
    ]
    status = module_output(
        "benchmarks.shards", "status", "--variants", "thunder-prims,thunder-func", *where
    )
    walls = re.findall(r"shard (\d)/3, (\d+) points, ([\d.]+) s", status)
    assert walls == [("1", "60", "507.9"), ("2", "60", "465.4"), ("3", "60", "518.6")]
    assert "shard 1/3, 60 points, 507.9 s; shard 2/3, 465.4 s; shard 3/3, 518.6 s" in DATA_README
    plan = json.loads(
        module_output(
            "benchmarks.shards", "plan", "--variants", "thunder-prims,thunder-func", "--json"
        )
    )
    about = round(max(s["estimate_s"] for s in plan["shards"]))
    assert f"plans the set as {plan['count']} shards of about {about} s" in DATA_README


def test_data_readme_nightly_finding() -> None:
    record = DATA / "h200-nightly" / "results" / "nvidia-h200" / f"{NIGHTLY_KEY}.provenance.jsonl"
    summary = module_output("benchmarks.engine.summary", str(record))
    rows = {tuple(line.split()[:2]): line.split() for line in summary.splitlines() if line}
    assert rows[("bfloat16/16x49152", "nvfuser")][2] == "8.3"
    assert rows[("bfloat16/16x49152", "thunder-prims")][2:4] == ["22.0", "2.636"]
    assert rows[("float16/16x49152", "thunder-prims")][3] == "2.689"
    assert rows[("bfloat16/16x49152", "thunder-func")][3] == "0.829"
    assert (
        "bf16 16x49152 nvFuser 8.3 us, thunder-prims 22.0 us, ratio 2.636; fp16 ratio 2.689"
        in DATA_README
    )
    assert "thunder-func (F.rms_norm) is faster there (bf16 ratio 0.829)" in DATA_README


HISTORY_DOC = (REPO_ROOT / "docs" / "HISTORY.md").read_text(encoding="utf-8")
HISTORY_TEXT = " ".join(HISTORY_DOC.split())


def history_transcripts() -> dict[str, str]:
    """Each `python -m bot history...` command block of HISTORY.md -> the output after it."""
    blocks = re.findall(r"```\n(.*?)```", HISTORY_DOC, flags=re.DOTALL)
    return {
        command.strip(): output
        for command, output in itertools.pairwise(blocks)
        if command.startswith("python -m bot history") and command.count("\n") == 1
    }


def run_dry(command: str) -> str:
    """The command as a maintainer without a token runs it (dry: says what it would file)."""
    tokens = ("GITHUB_TOKEN", "PERFBOT_ISSUES_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in tokens}
    return run_bot(*bot_args(command), env=env).stdout  # in this process, as run() is


HISTORY_CAL = (
    "python -m bot history-calibrate "
    + RESULTS
    + (
        " --states data/h200-under-test/thunder-broken-pair/results"
        " --nightlies data/h200-thunder-nightlies/results"
    )
)


def test_the_history_examples_are_what_history_prints() -> None:
    found = history_transcripts()
    assert HISTORY_CAL in found and len(found) == 4
    for command, output in found.items():
        if command != HISTORY_CAL:
            assert run_dry(command) == output, command


def test_history_doc_alert_counts_are_the_transcript() -> None:
    """The Issues paragraph's count (the Thunder step: one alert, its issues, and what one issue
    per guard and repository made) is what the step's dry run says it would file."""
    step = next(out for command, out in history_transcripts().items() if "thunder-step" in command)
    (key,) = re.findall(r"^  key: (\S+)$", step, flags=re.MULTILINE)  # one alert
    (repos,) = re.findall(r"^\[[^]]+\] Would open or update .* in (.*)$", step, flags=re.MULTILINE)
    (sections,) = re.findall(r"^  sections: (.*)$", step, flags=re.MULTILINE)
    issues, guards = len(repos.split(", ")), len(sections.split("), "))
    # Thunder's change alone (nvFuser's build is the same at both commits): Fuser is not told.
    assert (issues, guards) == (1, 2) and repos.endswith("(primary)")
    assert key == "rmsnorm-bwd|nvidia-h200|016e16b1cc86..63e9dde7503b"  # the range, no guard
    assert "key `rmsnorm-bwd|<machine>|<last good>..<first bad>`" in HISTORY_TEXT
    text = " ".join(HISTORY_TEXT.split())
    assert f"is one alert, {issues} issue (Thunder's" in text
    configured = 2  # NVIDIA/Fuser and Lightning-AI/lightning-thunder
    assert f"one issue per guard and repository made {configured * guards}." in text


@pytest.mark.docs
def test_the_history_calibration_is_what_history_calibrate_prints() -> None:
    assert run(HISTORY_CAL) == history_transcripts()[HISTORY_CAL]


def _history_rows(block: str) -> dict[tuple[str, ...], list[tuple[int, int]]]:
    """(first cells) -> every hits/trials of a row of the calibration transcript."""
    text = history_transcripts()[HISTORY_CAL]
    part = text.split(block, 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in part.splitlines():
        counts = [(int(a), int(b)) for a, b in re.findall(r"(\d+)/(\d+) [<>]=", line)]
        if counts:
            rows[tuple(re.split(r"\s{2,}", line.strip())[:3])] = counts
    return rows


def test_history_doc_figures_are_the_calibrations() -> None:
    quiet = _history_rows("timing guards).")
    steps = _history_rows("confirmed change at another split.")
    assert {c for counts in quiet.values() for c, _ in counts} == {0}  # no false alarm at all
    out_of_sample = quiet["A/A, random orders", "8", "fitted on the 4 other runs"]
    assert out_of_sample == [(0, 200), (0, 200), (0, 10000)]
    assert "0 of 200 histories of 8 of the 12 A/A runs" in HISTORY_TEXT
    assert "fitted on the 4 others (upper bound 1.49%)" in HISTORY_TEXT
    assert "0/200 <= 1.49%" in history_transcripts()[HISTORY_CAL]
    nightly = quiet["Thunder nightlies, every order", "6", "the shipped model"]
    assert nightly[0] == (0, 720) and "0/720 <= 0.415%" in history_transcripts()[HISTORY_CAL]
    assert "0 of the 720 orderings of the six Thunder nightlies" in HISTORY_TEXT
    assert "(upper bound 0.415%)" in HISTORY_TEXT
    assert "Not one of the 10000 (history" in HISTORY_TEXT
    assert quiet["A/A, recorded order", "12", "fitted on these runs (in sample)"][2] == (0, 50)
    assert "not the nightly's 180" in HISTORY_TEXT
    assert "(45 series and 5 geometric means)" in HISTORY_TEXT
    for (state, _, _), counts in steps.items():
        found, _, elsewhere = counts
        assert found == (200, 200) and elsewhere[0] == 0, state
    pendings = [counts[1][0] for counts in steps.values()]
    assert f"in {min(pendings)} to {max(pendings)} of 200 histories" in HISTORY_TEXT
    text = history_transcripts()[HISTORY_CAL]
    lows = re.findall(r"\d+/200 >= ([\d.]+)%", text.split("pending at 1", 1)[1])
    pending_lows = sorted({float(x) for x in lows[1::2]})
    assert f"(lower bounds {pending_lows[0]}% to {pending_lows[-1]}%)" in HISTORY_TEXT
    row = r"^  (slow-thunder-2 .*?(?:time|ratio))\s.*?(\+[\d.]+% to \+[\d.]+%)$"
    sizes = dict(re.findall(row, text, flags=re.MULTILINE))
    assert len(sizes) == 2
    kernel, ratio = (v for k, v in sorted(sizes.items()))
    assert f"at {kernel} and {ratio} (the headline geometric mean)" in HISTORY_TEXT
    assert "(lower bound 98.5%)" in HISTORY_TEXT and "200/200 >= 98.5%" in text
    assert "A/A runs (12)" in text and "there are 12 recorded A/A runs" in HISTORY_TEXT


def test_history_doc_constants_are_the_codes() -> None:
    from benchmarks.engine.config import load_size_set
    from benchmarks.under_test.keys import build_date
    from bot.decide.stats import PRIOR_DF
    from bot.history.method import Method

    m, s = Method(), Config.from_env({}, REPO_ROOT / "perfbot.toml").verdict
    assert (m.window, m.min_before, m.min_after) == (8, 2, 2) and PRIOR_DF == 4
    assert f"(`--window`, {m.window})" in HISTORY_TEXT
    assert "weighing at most 4 runs" in HISTORY_TEXT
    assert f"only the first {m.min_after} after (`--min-after`)" in HISTORY_TEXT
    assert f"{m.min_before} before a split and {m.min_after} after it" in HISTORY_TEXT
    assert (s.effect, s.broad_effect, s.alpha) == (0.02, 0.01, 0.01)
    assert "(2%, `perfbot.toml`)" in HISTORY_TEXT and "from 1% on" in HISTORY_TEXT
    assert "alpha (0.01) over the number of windows tested" in HISTORY_TEXT
    assert build_date("0.2.6").startswith("2000-01-01")
    assert build_date("0.2.6", datetime(2025, 10, 22, 4, 53, 50)).startswith("2025-10-22")
    assert "a release by the day its wheel was built" in HISTORY_TEXT
    assert "undated one: 2000-01-01" in HISTORY_TEXT
    shapes, dtypes = load_size_set("nightly")
    assert len(shapes) * len(dtypes) == 180 and "size set's 180 points" in HISTORY_TEXT


PERF_DOC = (REPO_ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
PERF_TEXT = " ".join(PERF_DOC.split())


@pytest.mark.docs  # a second or more of real runs: the slow run (CI) holds it
def test_performance_doc_comment_sizes_are_what_report_prints(
    tmp_path: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """docs/PERFORMANCE.md's comment sizes: report on the tiled nightly pair (tiled from the
    committed pr runs, once a session: tests/perf/tiled_runs.py) and on the committed nightly
    run, in its text and its bench block."""
    from tests.perf.tiled_runs import SOURCE, tiled_copy

    assert SOURCE == DATA / "h200" / "results"
    for commit in ("06f650c8", "9dc51696", "da17d548"):
        tiled_copy(tmp_path_factory, tmp_path / "results", commit)  # as tile(SOURCE, commit, ..)
    tiled = str(tmp_path / "results")
    regressed, same = (
        len(run_bot("report", "--results", tiled, "--base", "06f650c8", "--head", h).stdout)
        for h in ("9dc51696", "da17d548")
    )
    from tests.perf.bench_report import REAL, twin_copy

    key = NIGHTLY_KEY[:8]
    twin = twin_copy(REAL, NIGHTLY_KEY, tmp_path / "real")
    real = run_bot("report", "--results", str(tmp_path / "real"), "--base", key, "--head", twin)
    assert f"is {regressed:,} characters regressed, {same:,} A/A" in PERF_TEXT
    assert f"the real nightly run against a copy of itself: {len(real.stdout):,}" in PERF_TEXT
    after = PERF_DOC.split("Now (commit", 1)[1].split("```")[1]
    chars = dict(re.findall(r"^(\S.*?)\s+(\d+)\s+\d\s+[\d.]+, ", after, flags=re.MULTILINE))
    assert chars["nightly 180 points, regressed"] == str(regressed)
    assert chars["nightly 180 points, A/A"] == str(same)
    assert chars[f"real nightly {key} (vs a copy)"] == str(len(real.stdout))


def test_performance_doc_constants_are_the_codes() -> None:
    from benchmarks.engine.config import load_size_set
    from bot.tell.alert_issue import MAX_BODY_CHARS
    from bot.tell.comment import COMMENT_CHARS
    from bot.tell.tables import COMMENT_ROWS, FOLD_ROWS, LEAD_ROWS

    assert f"the {LEAD_ROWS} rows that moved most on its first screen (`LEAD_ROWS`" in PERF_TEXT
    assert f"at most {COMMENT_ROWS} rows in each folded guard table" in PERF_TEXT
    assert f"and {FOLD_ROWS} in an issue's (`FOLD_ROWS`)" in PERF_TEXT
    assert COMMENT_CHARS == MAX_BODY_CHARS and f"under {COMMENT_CHARS:,} characters" in PERF_TEXT
    shapes, dtypes = load_size_set("nightly")
    assert f"is {len(shapes) * len(dtypes)} dtype x shape points" in PERF_TEXT


PER_FUSION = (
    "python -m bot calibrate --results data/h100-issue39/call3/rep-2 --results "
    "data/h100-issue39/call1/results/rep-2 --runs-a-side 1 --trials 0"
)


@pytest.mark.docs
def test_the_per_fusion_table_is_what_calibrate_prints() -> None:
    """docs/CALIBRATION.md, "Each fusion on its own": its command, and its table's lines."""
    assert PER_FUSION in " ".join(CALIBRATION.replace("`", " ").split())
    section = CALIBRATION.split("## Each fusion on its own", 1)[1]
    quoted = re.findall(r"```text\n(.*?)```", section, flags=re.DOTALL)[0].splitlines()
    printed = run(PER_FUSION).splitlines()
    assert len(quoted) == 19 and quoted == printed[-len(quoted) :]
