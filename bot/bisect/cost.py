"""What one bisect step costs on the GPU, from recorded runs: ``python -m bot.bisect.cost``.

A bisect measures each build in its own process at a few points; the recorded ``pr`` runs say
what each part of such a process took: each point's ``phases_s`` in its provenance record
(building and checking, with the JIT compiles; the timed rounds; host timing), and, in the
console log run_gpu.sh printed, the whole measurement (interpreter, torch import, runner
checks, the device set-up and every point) and asv's store. One build at chosen points is
then the measurement less the points it skips, plus the store. Installing the build (a
pure-Python Thunder wheel: seconds) is not in these records.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.bisect.points import parse_points
from bot.results.folders import machine_dirs

_COMMIT = re.compile(r"^== RMSNorm backward: .*, commit ([0-9a-f]{40}),", re.MULTILINE)
_MEASURED = re.compile(r"^== measurement took ([0-9]+) s$", re.MULTILINE)
_STORED = re.compile(r"^== asv stored the results in ([0-9]+) s;", re.MULTILINE)
PHASES = ("build_and_check_s", "rounds_s", "host_s")


@dataclass(frozen=True)
class RunCost:
    commit: str
    thunder: str
    variants: int
    points_s: Mapping[str, float]  # each point's phases, summed
    measured_s: float | None  # run_gpu.sh's "measurement took"
    stored_s: float | None  # asv's store

    def estimate(self, points: Sequence[str]) -> float | None:
        """One process measuring only ``points``, stored by asv."""
        if self.measured_s is None or self.stored_s is None:
            return None
        fixed = self.measured_s - sum(self.points_s.values())
        return fixed + sum(self.points_s[p] for p in points) + self.stored_s


def run_cost(record: Mapping[str, Any], logs: Mapping[str, str]) -> RunCost:
    """One provenance record and the console logs, by commit (pure)."""
    commit = str(record["commit"])
    log = logs.get(commit, "")
    measured, stored = _MEASURED.search(log), _STORED.search(log)
    points = {
        key: sum(float(p["phases_s"][k]) for k in PHASES) for key, p in record["points"].items()
    }
    return RunCost(
        commit,
        str(record.get("versions", {}).get("thunder")),
        len(record.get("variants") or ()),
        points,
        float(measured[1]) if measured else None,
        float(stored[1]) if stored else None,
    )


def read_logs(folder: Path) -> dict[str, str]:
    """Each console log in ``folder``, by the commit its first line names."""
    out = {}
    for path in sorted(folder.glob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        found = _COMMIT.search(text)
        if found:
            out[found[1]] = text
    return out


def read_records(results: Path) -> list[dict[str, Any]]:
    records = []
    for mdir in machine_dirs(results):
        for path in sorted(mdir.glob("*.provenance.jsonl")):
            lines = path.read_text(encoding="utf-8").splitlines()
            records.append(json.loads(lines[-1]))
    return records


def report(costs: Sequence[RunCost], points: Sequence[str]) -> str:
    lines = [
        f"{'commit':<8}  {'thunder':<18} variants  points_s  chosen_s  measure_s  store_s  "
        f"estimate_s ({len(points)} points)"
    ]
    estimates = []
    for c in costs:
        est = c.estimate(points)
        if est is not None:
            estimates.append(est)
        lines.append(
            f"{c.commit[:8]}  {c.thunder:<18} {c.variants:>8}  {sum(c.points_s.values()):>8.1f}  "
            f"{sum(c.points_s[p] for p in points):>8.1f}  {_s(c.measured_s):>9}  "
            f"{_s(c.stored_s):>7}  {_s(est):>10}"
        )
    if estimates:
        lines.append(
            f"one build at these {len(points)} points: {min(estimates):.0f}-{max(estimates):.0f} s "
            f"of GPU time ({len(estimates)} recorded runs), the installation aside"
        )
    return "\n".join(lines) + "\n"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bot.bisect.cost", description=__doc__)
    p.add_argument("--results", type=Path, required=True, help="asv results with records")
    p.add_argument("--logs", type=Path, required=True, help="run_gpu.sh's console logs")
    p.add_argument("--points", required=True, help="dtype/MxN keys a bisect measures")
    args = p.parse_args(argv)
    points = parse_points(args.points)
    logs = read_logs(args.logs)
    costs = [run_cost(r, logs) for r in read_records(args.results)]
    costs.sort(key=lambda c: c.thunder)
    sys.stdout.write(report(costs, points))
    return 0


if __name__ == "__main__":
    sys.exit(main())
