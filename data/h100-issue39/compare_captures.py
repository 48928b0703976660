"""The in-process capture (issue 39 part 2) against the capture process of before, one machine.

    python3 data/h100-issue39/compare_captures.py NEW_CAPTURES OLD_CAPTURES

NEW_CAPTURES: a measuring process's ``<commit>.captures`` (call 3: stock-1's repeat 1);
OLD_CAPTURES: ``benchmarks.engine.capture`` of 769b128 run as a process of its own over the same
RMSNorm backward points (call 3: old-capture/stock). For every point and variant both have, each
file: "same" (byte for byte), "differs" (with the first differing line), or "only old"/"only new".
profile.json is compared by the nvFuser kernels each names: the new one comes from the measuring
process's torch.profiler kernel records (its ``kernel_profiles``, or its ``other_kernels`` where
the kernel's demangled name was not recognised, as in call 3's data), the old one from nvFuser's
own profiler; where the new profile holds launch fields, each kernel's grid, block, registers
and shared memory are compared too (nvFuser's profiler gives the shared memory as [dynamic,
static], Kineto as their sum) and counted on the line before the last. A point-variant folder
is any folder holding files: RMSNorm backward's at the top, another fusion's under its name.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

KERNEL = re.compile(r"(?<![A-Za-z0-9_])nvfuser_[a-z_]+?_f\d+_c\d+_r\d+_g\d+\b")


def kernels_of(profile: dict) -> list[str]:
    names = [k["name"] for k in profile.get("kernel_profiles", [])]
    for other in profile.get("other_kernels", []):
        text = other if isinstance(other, str) else other.get("name", "")
        names += KERNEL.findall(text)
    return [KERNEL.search(n)[0] if KERNEL.search(n) else n for n in names]


def launch_of(kernel: dict) -> tuple:
    """Grid, block, registers and the shared memory's bytes in all, either profiler's."""
    shared = json.loads(kernel.get("shared_mem_str") or "[]")
    return (kernel.get("grid_str"), kernel.get("block_str"), kernel.get("registers"), sum(shared))


def compare_launch(new: dict, old: dict, tally: Counter) -> str:
    """ " launch same" or " launch differs: ..." where both profiles hold launch fields; each
    kernel counted in ``tally`` ("same" or "differ")."""
    pairs = list(zip(new.get("kernel_profiles", []), old.get("kernel_profiles", []), strict=False))
    if not pairs or not all("grid_str" in k for pair in pairs for k in pair):
        return ""
    diffs = [(launch_of(a), launch_of(b)) for a, b in pairs if launch_of(a) != launch_of(b)]
    tally["same"] += len(pairs) - len(diffs)
    tally["differ"] += len(diffs)
    return (
        " launch differs: " + "; ".join(f"{a} vs {b}" for a, b in diffs)
        if diffs
        else (" launch same")
    )


def compare_file(name: str, new: Path, old: Path, tally: Counter) -> str:
    if not new.is_file() or not old.is_file():
        return "only old" if old.is_file() else "only new"
    if name == "profile.json":
        a, b = json.loads(new.read_text()), json.loads(old.read_text())
        ka, kb = kernels_of(a), kernels_of(b)
        verdict = "same kernels" if ka == kb else f"kernels differ: {ka} vs {kb}"
        return f"{verdict} {ka}" + (
            compare_launch(a, b, tally)
            if a.get("kernel_profiles")
            else " (no launch fields in the new)"
        )
    if name in ("versions.json", "errors.json"):
        return (
            "same"
            if new.read_text() == old.read_text()
            else f"differs: {new.read_text().strip()[:80]} vs {old.read_text().strip()[:80]}"
        )
    if new.read_bytes() == old.read_bytes():
        return "same"
    for n, (x, y) in enumerate(
        zip(new.read_text().splitlines(), old.read_text().splitlines(), strict=False), 1
    ):
        if x != y:
            return f"differs at line {n}: {x.strip()[:60]!r} vs {y.strip()[:60]!r}"
    return "differs in length"


def main(argv: list[str]) -> int:
    new_root, old_root = Path(argv[0]), Path(argv[1])
    same = total = 0
    tally: Counter = Counter()
    leaves = {p.parent for p in old_root.rglob("*") if p.is_file()}
    for old_dir in sorted(leaves):
        new_dir = new_root / old_dir.relative_to(old_root)
        files = [p for p in old_dir.iterdir() if p.is_file()]
        if new_dir.is_dir():
            files += [p for p in new_dir.iterdir() if p.is_file()]
        names = sorted({p.name for p in files})
        for name in names:
            verdict = compare_file(name, new_dir / name, old_dir / name, tally)
            total += 1
            same += verdict.startswith("same")
            print(f"{old_dir.relative_to(old_root)}/{name}: {verdict}")
    if tally.total():
        print(f"launch fields: {tally['same']} of {tally.total()} kernels the same")
    print(f"{same} of {total} files the same (profile.json: the same kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
