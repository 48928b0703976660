"""The catalog's table, printed from the committed records (README.md quotes it; a test holds
the two equal): per fusion, at its pr point, the hand-written fusion's and Thunder's kernel
time in bf16 (median over the four A/A runs of each run's median) and fp32 (the one fp32
run), Thunder/nvFuser ratios, the hand-written fusion's share of peak bandwidth, and the
between-run noise of the ratio the verdict uses (noise/nvidia-h200.json, as an SD).

    python data/h200-catalog/table.py
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
AA = [  # the A/A runs the catalog's noise model pools (perfbot.toml)
    HERE / "aa" / "nvidia-h200" / "da6533d11f0d74ec787ca5b7b75c10fb80199332.provenance.jsonl",
    HERE / "pair/rep-2/nvidia-h200/6a438ce967f8e234f948f873364a4e17933c7a4c.provenance.jsonl",
    HERE / "aa2" / "nvidia-h200" / "c4af5b47dfb93d205dae097dc4ac4f594b4d2e73.provenance.jsonl",
    HERE / "aa2" / "nvidia-h200" / "baad8fb3616d88ff0e9b7cb11da87c4462860e9b.provenance.jsonl",
]
FP32 = HERE / "fp32" / "nvidia-h200" / "9bdc57b922eb7f2c4d2dd2e7b38976ee056ccb30.provenance.jsonl"
THUNDER = ("thunder-prims", "thunder-func")


def _last(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text().splitlines()[-1])


def _key(fusion: str, dtype: str) -> str:
    shape = "16384x8192" if fusion == "rmsnorm_bwd" else "16384x4096"
    return f"{dtype}/{shape}" if fusion == "rmsnorm_bwd" else f"{fusion}/{dtype}/{shape}"


def _us(records: list[dict], key: str, variant: str) -> float | None:  # type: ignore[type-arg]
    runs = [
        statistics.median(v["kernel_us"])
        for r in records
        if (v := r["points"].get(key, {}).get("variants", {}).get(variant)) and v["status"] == "ok"
    ]
    return statistics.median(runs) if runs else None


def _cell(us: float | None, nv: float | None) -> str:
    if us is None or nv is None:
        return "n/a"
    return f"{us:.1f} ({us / nv:.2f}x)"


def main() -> int:
    aa = [_last(p) for p in AA]
    fp32 = [_last(FP32)]
    model = json.loads((ROOT / "noise" / "nvidia-h200.json").read_text())
    peak = aa[0]["gpu"]["peak_bandwidth_gbps"]
    fusions = aa[0]["fusions"]
    print(
        "| fusion | bf16 nvFuser µs | bf16 thunder-prims | bf16 thunder-func | fp32 nvFuser µs "
        "| fp32 thunder-prims | fp32 thunder-func | nvFuser bf16 % of peak | ratio A/A SD |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for f in fusions:
        row = [f"`{f}`"]
        for dtype, records in (("bfloat16", aa), ("float32", fp32 if f != "rmsnorm_bwd" else aa)):
            key = _key(f, dtype)
            nv = _us(records, key, "nvfuser")
            row.append(f"{nv:.1f}" if nv is not None else "n/a")
            row += [_cell(_us(records, key, t), nv) for t in THUNDER]
            if dtype == "bfloat16":
                moved = aa[0]["points"][key]["bytes_moved"]
                bw = 100 * moved / (nv * 1e-6) / (peak * 1e9) if nv else float("nan")
        row.append(f"{bw:.0f}%")
        series = "thunder-prims" if f == "rmsnorm_bwd" else f"{f}:thunder-prims"
        shape = _key(f, "bfloat16").rsplit("/", 1)[1]
        tau2 = model["series"][f"ratio:{series}/bfloat16/{shape}"]["tau2"]
        row.append(f"{100 * math.sqrt(tau2):.2f}%")
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
