"""Every figure the docs quote is one a command prints from committed data.

The transcripts in docs/CALIBRATION.md are compared with a fresh run of their command (the
quick `noise` always; the two `calibrate` runs, minutes each, under `pytest -m docs`, which CI
runs), and the figures README.md and data/README.md quote are read back from those transcripts
or recomputed from the results files.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
import subprocess
import sys
from typing import Any

import pytest
from paths import DATA, REPO_ROOT

from bot.config import VerdictSettings
from bot.decide.verdict import decide
from bot.results.locate import load_commit

CALIBRATION = (REPO_ROOT / "docs" / "CALIBRATION.md").read_text(encoding="utf-8")
README = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
DATA_README = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())


def transcripts() -> dict[str, str]:
    """Each `python -m bot ...` command block of CALIBRATION.md -> the output block after it."""
    blocks = re.findall(r"```\n(.*?)```", CALIBRATION, flags=re.DOTALL)
    out = {}
    for command, output in itertools.pairwise(blocks):
        if command.startswith("python -m bot ") and command.count("\n") == 1:
            out[command.strip()] = output
    return out


def run(command: str) -> str:
    argv = [sys.executable, *command.split()[1:]]
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return done.stdout


NOISE = "python -m bot noise --results data/h200/results --results data/h200-single-call/results"
CAL_8 = (
    "python -m bot calibrate --results data/h200/results --base 06f650c8 --head da17d548 "
    "--point-trials 40"
)
CAL_1 = (
    "python -m bot calibrate --results data/h200-single-call/results --base 7decf673 "
    "--head 44674d6c"
)


def test_the_documented_commands_are_the_ones_checked() -> None:
    assert set(transcripts()) == {NOISE, CAL_8, CAL_1}


def test_the_noise_transcript_is_what_noise_prints() -> None:
    assert run(NOISE) == transcripts()[NOISE]


@pytest.mark.docs
@pytest.mark.parametrize("command", [CAL_8, CAL_1])
def test_the_calibration_transcripts_are_what_calibrate_prints(command: str) -> None:
    assert run(command) == transcripts()[command]


def _spreads() -> dict[str, tuple[list[float], float]]:
    rows = {}
    for line in transcripts()[NOISE].splitlines():
        cells = line.split()
        if cells and cells[0].startswith("thunder-"):
            rows[cells[0]] = ([float(c) for c in cells[1:5]], float(cells[5].rstrip("%")))
    return rows


def test_readme_noise_figures() -> None:
    spreads = _spreads()
    worst = max(spreads, key=lambda k: spreads[k][1])
    assert worst == "thunder-func/float32/512x4096"
    assert (
        f"up to {spreads[worst][1]}% at the 18-µs fp32 (512, 4096) point (thunder-func;" in README
    )
    prims = spreads["thunder-prims/float32/512x4096"][0]
    assert f"read {min(prims):.3f} and {max(prims):.3f} in two baselines" in README
    large = [s for k, (_, s) in spreads.items() if k.endswith("/16384x8192")]
    assert len(large) == 6 and max(large) < 1.0
    assert "under 1% at every (16384, 8192) point" in README


def test_readme_calibration_figures() -> None:
    text = transcripts()[CAL_8]
    alarms = re.findall(r"from (?:base|head): (\d+)/(\d+) =", text)
    assert alarms == [("0", "300"), ("0", "300")]
    assert "0/300 false alarms from each A/A source state" in README
    power = dict(re.findall(r"shift \+(\d+\.\d)%: (\d+/\d+) =", text))
    hits, trials = power["2.0"].split("/")
    assert f"a +2.0% shift of every point is caught {hits} of {trials} times" in README
    hits, trials = power["2.5"].split("/")
    assert f"({hits} of {trials} from +2.5%)" in README
    per_point = dict(re.findall(r"^\s+(thunder-\S+)\s.*\s(\+\d+%)$", text, flags=re.MULTILINE))
    assert len(per_point) == 18
    three = sorted(k for k, v in per_point.items() if v == "+3%")
    assert three == sorted(
        [
            f"{v}/{d}/16384x8192"
            for v in ("thunder-func", "thunder-prims")
            for d in ("bfloat16", "float16", "float32")
        ]
        + ["thunder-func/bfloat16/2048x8192"]
    )
    assert max(per_point.values(), key=lambda s: int(s[1:-1])) == "+10%"
    assert {k for k, v in per_point.items() if v == "+10%"} == {
        "thunder-func/float32/512x4096",
        "thunder-prims/float32/512x4096",
    }
    assert (
        "from +3% (the 16384x8192 points and thunder-func bf16 2048x8192) to +10% (fp32" in README
    )
    observed = re.findall(r"Observed verdict of the real base/head pair: (.+)", text)
    assert observed == ["no change"] and 'both real A/A pairs read "no change"' in README


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


def test_readme_exit_codes_are_the_ones_the_bot_uses() -> None:
    from bot.exitcodes import ExitCode

    table = re.findall(r"\| (\d+) \| ([A-Z_]+) \|", README)
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
    assert {v.overall for name, v in verdicts.items() if "nvfuser" in name} == {"improved"}


def test_data_readme_stock_spread() -> None:
    out = run("python -m bot noise --results data/h200/results --results data/h200-states/results")
    rows = [line.split() for line in out.splitlines() if line.startswith("thunder-")]
    # point, six runs, spread, threshold now, "->", suggested: six runs were pooled
    assert {len(r[: r.index("->") + 2]) for r in rows} == {1 + 6 + 1 + 1 + 1 + 1}
    worst = rows[0]  # the table is sorted by spread, largest first
    assert worst[0] == "thunder-func/float32/512x4096"
    assert f"is {worst[7]} (thunder-func fp32 512x4096)" in DATA_README
    assert "Left out, run on another torch/nvfuser/thunder stack: f888795e" in out


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
