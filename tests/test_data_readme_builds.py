"""The figures data/README.md quotes for the two nvFuser builds (h200-nvfuser-builds/) and the
refitted shard plan's first two shards (h200-nightly-plan4/): each read back from what the lab
wrote, or printed again by the command the README names.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
from pathlib import Path
from typing import Any

from paths import DATA, run_bot, run_module

DATA_README = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())
BUILDS = DATA / "h200-nvfuser-builds"
PLAN4 = DATA / "h200-nightly-plan4"
PLAN4_KEY = "5f02c0df736753f6d46e44e1945493b21d18e3d8"
NIGHTLY_KEY = "4e57021e32936a96ba33e0293901790ffae9e73d"
SHARDS = "benchmarks.shards"


def test_the_nvfuser_builds_table_is_the_lab_logs() -> None:
    rows = re.findall(
        r"\| `([0-9a-f]{40})` \| nvfuser-([\d.a-z]+) \| ([\d.]+\+git[0-9a-f]+) \| "
        r"([\d.]+) \+ ([\d.]+) s \|",
        DATA_README,
    )
    assert [r[1] for r in rows] == ["0.2.35.dev20260215", "0.2.36.dev20260301"]
    timing = (BUILDS / "logs" / "timing.txt").read_text(encoding="utf-8")
    for sha, version, built, first, second in rows:
        for rep, wall in (("rep1", first), ("rep2", second)):
            assert f"nvfuser-{version}-{rep}\t{sha}\t{wall} s\tstatus 0" in timing
        for rep in ("rep-1", "rep-2"):
            path = BUILDS / "results" / rep / "nvidia-h200" / f"{sha}.provenance.jsonl"
            (line,) = path.read_text(encoding="utf-8").splitlines()
            record = json.loads(line)
            assert record["versions"]["nvfuser"] == built
            assert built.startswith(version.split(".dev")[0] + "+")
            assert record["versions"]["thunder"] == "0.2.6"
            points = record["points"].values()
            statuses = {v["status"] for p in points for v in p["variants"].values()}
            assert statuses == {"ok"}
    total = re.search(r"2 repeats: [\d.]+ s measuring, ([\d.]+) s in all", timing)
    assert total is not None and f"The pair took {total.group(1)} s in all" in DATA_README
    gpu = (BUILDS / "logs" / "gpu.txt").read_text(encoding="utf-8")
    assert "GPU-2107e1ac" in gpu and "GPU-2107e1ac, driver 580.159.04" in DATA_README


def test_what_the_bot_says_of_the_nvfuser_builds() -> None:
    args = ("report", "--results", str(BUILDS / "results"), "--base", "fb46810b")
    args += ("--head", "84faa557")
    done = run_bot(*args)
    assert done.returncode == 0, done.stderr
    text = done.stdout.replace("\\", "")
    assert "### ⚪ RMSNorm backward: No change\n" in text
    assert "🔴" not in text and "🟡" not in text and "🟢" not in text
    # The counts: the verdict's JSON has every point; all gating rows are no change.
    report = json.loads(run_bot(*args, "--json", "-").stdout)
    assert report["overall"] == "no change" and report["exit_code"] == 0
    (verdict,) = [m["verdict"] for m in report["machines"]]
    assert verdict["reason"].endswith("(18 points compared)")
    ratios = [p for p in verdict["points"] if p["gating"]]
    kernels = [k for k in verdict["kernels"] if k["gating"]]
    assert (len(ratios), len(kernels)) == (18, 27)
    assert {p["state"] for p in ratios + kernels} == {"no change"}
    assert "all 18 gating ratio points and 27 kernel rows" in DATA_README
    # The comment's line a guard: nvFuser's mean (one variant), and the ratio's widest mean.
    nvfuser = re.search(
        r"- ⚪ \*\*nvFuser's hand-written fusion\*\*: no change, geometric mean "
        r"(\S+ \[\S+ \S+\])\n",
        text,
    )
    ratio = re.search(
        r"- ⚪ \*\*Thunder against nvFuser \(kernel-time ratio\)\*\*: no change, geometric "
        r"mean (\S+ \[\S+ \S+\])\n",
        text,
    )
    assert nvfuser and ratio
    # Each variant's ratio mean is in the guard's summary (the JSON, the log).
    (summary,) = [g["summary"] for g in verdict["guards"] if g["guard"] == "ratio"]
    prims = re.search(r"thunder-prims geometric mean (\S+ \[\S+ \S+\])", summary)
    func = re.search(r"thunder-func geometric mean (\S+ \[\S+ \S+\])", summary)
    assert prims and func
    assert ratio.group(1) in (prims.group(1), func.group(1))
    assert f"a geometric mean of {nvfuser.group(1)} over the 9 points" in DATA_README
    assert f"the Thunder/nvFuser ratio by {prims.group(1)} (thunder-prims)" in DATA_README
    assert f"and {func.group(1)} (thunder-func)" in DATA_README
    assert "| nvFuser | 0.2.35+git09559b6 | 0.2.36+git7e04d26 |" in text


def test_the_plan4_shard_walls_are_what_status_prints() -> None:
    done = run_module(
        SHARDS,
        "status",
        "--size-set",
        "nightly",
        "--variants",
        "thunder-prims,thunder-func",
        "--results",
        "data/h200-nightly-plan4/results",
        "--commit",
        PLAN4_KEY,
        "--machine",
        "nvidia-h200",
    )
    walls = re.findall(r"shard (\d)/4, (\d+) points, ([\d.]+) s on", done.stdout)
    assert walls == [("1", "45", "316.7"), ("2", "45", "313.9")]
    assert "shard 1/4, 45 points, 316.7 s; shard 2/4, 45 points, 313.9 s" in DATA_README
    assert "shard 3/4: 0/45 measured" in done.stdout and "shard 4/4: 0/45 measured" in done.stdout
    planned = run_module(SHARDS, "plan", "--variants", "thunder-prims,thunder-func", "--json")
    plan = json.loads(planned.stdout)
    assert all(float(w) < min(s["estimate_s"] for s in plan["shards"]) for _, _, w in walls)
    for hygiene in (PLAN4 / "results" / "nvidia-h200").glob("*.shards/hygiene-*.jsonl"):
        for line in hygiene.read_text(encoding="utf-8").splitlines():
            assert json.loads(line)["ok"] is True


def test_merge_refuses_the_half_measured_commit(tmp_path: Path) -> None:
    shutil.copytree(PLAN4 / "results", tmp_path / "results")
    done = run_module(
        SHARDS,
        "merge",
        "--results",
        str(tmp_path / "results"),
        "--commit",
        PLAN4_KEY,
        "--machine",
        "nvidia-h200",
    )
    assert done.returncode == 5, done.stderr
    assert "90 of 180 points missing" in done.stderr
    assert "exit 5, naming the 90 missing points" in DATA_README


def _points(folder: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in folder.glob("*.shards/point-*.json"):
        point = json.loads(path.read_text(encoding="utf-8"))
        out[point["key"]] = point["point"]
    return out


def test_the_plan4_points_against_the_nightly_sweep() -> None:
    again = _points(PLAN4 / "results" / "nvidia-h200")
    first = _points(DATA / "h200-nightly" / "results" / "nvidia-h200")
    assert len(again) == 90 and set(again) <= set(first)

    def moves(field: str, variant: str) -> list[float]:
        return sorted(
            (
                statistics.median(again[k]["variants"][variant][field])
                / statistics.median(first[k]["variants"][variant][field])
                - 1
            )
            * 100
            for k in again
        )

    for field, variant, shown in (
        ("ratio", "thunder-prims", "0.46% for thunder-prims (-2.90% to +1.93%)"),
        ("ratio", "thunder-func", "0.38% for thunder-func (-1.52% to +1.17%)"),
        ("kernel_us", "nvfuser", "by 0.32% (-1.63% to +2.14%)"),
    ):
        m = moves(field, variant)
        typical = statistics.median(abs(x) for x in m)
        assert f"{typical:.2f}% " in shown and f"({m[0]:.2f}% to +{m[-1]:.2f}%)" in shown
        assert shown in DATA_README
    logs = {n: (PLAN4 / "logs" / f"shard{n}of4.log").read_text(encoding="utf-8") for n in (1, 2)}
    for key, shard, prims_us, nvfuser_us in (
        ("float16/16x49152", 2, "21.8", "8.3"),
        ("float32/16x49152", 1, "21.0", "11.6"),
    ):
        assert f"{key} nvfuser {nvfuser_us}us, thunder-prims {prims_us}us" in logs[shard]
        variants = again[key]["variants"]
        assert f"{statistics.median(variants['thunder-prims']['kernel_us']):.1f}" == prims_us
    fp16 = statistics.median(again["float16/16x49152"]["variants"]["thunder-prims"]["ratio"])
    assert (
        f"fp16 thunder-prims 21.8 us against nvFuser 8.3 us (`logs/shard2of4.log`; median ratio "
        f"{fp16:.3f}, 2.689 in the sweep), fp32 21.0 us against 11.6 us" in DATA_README
    )
