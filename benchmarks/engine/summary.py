"""The table a person reads after a GPU run: per point, kernel times, ratio and its spread.

Reads the provenance record (the last line of ``<sha>.provenance.jsonl``), which holds every
sample the asv results hold, plus correctness and provenance.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

from .config import BASELINE, CONTENDERS, bandwidth_pct


def _cov_pct(values: list[float]) -> float:
    return (
        100.0 * statistics.stdev(values) / statistics.mean(values)
        if len(values) > 1
        else float("nan")
    )


def _slowdown_line(injected: dict[str, Any] | None) -> str:
    if not injected:
        return "no injected slowdown"
    return (
        f"injected slowdown: {injected.get('fusion', '')}{'/' if injected.get('fusion') else ''}"
        f"{injected['side']} +{100 * injected['fraction']:g}% "
        f"(sleep kernel {injected['sleep_floor_us']:.2f} us + "
        f"{1000 * injected['sleep_us_per_cycle']:.3f} ns/cycle)"
    )


def render(record: dict[str, Any]) -> str:
    if "skip" in record:
        return f"suite skipped: {record['skip']}"
    gpu = record["gpu"]
    peak = gpu["peak_bandwidth_gbps"]
    w = max([22, *(len(k) + 2 for k in record["points"])])
    lines = [
        f"GPU {gpu['name']} | driver {gpu['driver']} | CUDA {gpu['cuda']} | peak {peak:.0f} GB/s "
        f"({gpu['peak_bandwidth_source']}) | copy {gpu['copy_bandwidth_gbps']:.0f} GB/s",
        "versions: " + ", ".join(f"{k} {v}" for k, v in record["versions"].items()),
        f"clocks start {gpu['clocks_start']} end {gpu['clocks_end']}",
        f"size set {record['size_set']}, {record['rounds']} paired rounds "
        f"x {record.get('calls_per_sample', 1)} calls per sample, "
        f"thunder {record['thunder_variant']}",
        _slowdown_line(record.get("slowdown")),
        "",
        f"{'point':<{w}}{'variant':<15}{'kernel us':>10}{'ratio':>8}{'CoV %':>7}{'% peak':>8}"
        f"{'kernels':>8}{'host us':>9}{'compile s':>10}",
    ]
    for key, point in record["points"].items():
        if "error" in point:
            lines.append(f"{key:<{w}}FAILED: {point['error']}")
            continue
        if point.get("phases_s"):
            phases = ", ".join(f"{k} {v:.1f}" for k, v in point["phases_s"].items())
            lines.append(f"{key:<{w}}(seconds: {phases})")
        for name in (BASELINE, *CONTENDERS):
            if name not in point["variants"]:
                continue
            entry = point["variants"][name]
            if entry["status"] != "ok":
                lines.append(f"{key:<{w}}{name:<15}{entry['status'].upper()}: {entry.get('error')}")
                continue
            kernel = statistics.median(entry["kernel_us"])
            pct = bandwidth_pct(point["bytes_moved"], kernel, peak)
            ratio = entry.get("ratio")
            ratio_txt = (
                f"{statistics.median(ratio):8.3f}{_cov_pct(ratio):7.2f}"
                if ratio
                else f"{'':8}{'':7}"
            )
            lines.append(
                f"{key:<{w}}{name:<15}{kernel:10.1f}{ratio_txt}{pct:8.1f}{entry['kernel_count']:8d}"
                f"{statistics.median(entry['host_us']):9.0f}{entry['compile_s']:10.2f}"
            )
            if entry.get("slowdown"):
                s = entry["slowdown"]
                lines.append(
                    f"{'':<{w}}{'':<15}  + sleep kernel {s['sleep_us']:.2f} us = "
                    f"{100 * s['added_fraction']:.1f}% of {s['base_kernel_us']:.1f} us "
                    f"(asked {100 * s['fraction']:g}%, {s['cycles']} cycles)"
                )
    return "\n".join(lines)


USAGE = (
    "usage: python -m benchmarks.engine.summary RESULTS/<machine>/<sha>.provenance.jsonl\n"
    "  prints the record's table: each point's kernel time, ratio, spread, share of peak\n"
    "  bandwidth, kernels, host time and compile time per variant (the last record of the file)"
)


def main(argv: list[str]) -> int:
    if argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            lines = [line for line in fh if line.strip()]
    except OSError as err:
        print(f"{argv[0]}: cannot read the provenance record: {err.strerror}", file=sys.stderr)
        return 3
    if not lines:
        print(f"{argv[0]}: empty provenance record", file=sys.stderr)
        return 3
    try:
        record = json.loads(lines[-1])
    except json.JSONDecodeError as err:
        why = f"{err.msg}, column {err.colno}"
        print(f"{argv[0]}: the last record is not JSON ({why})", file=sys.stderr)
        return 3
    print(render(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
