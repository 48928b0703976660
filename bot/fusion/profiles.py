"""nvFuser's profiles of two captures compared (pure): segments, kernels, and each kernel's
scheduler, launch and resources (bot/fusion/compare.py gathers these with the definitions')."""

from __future__ import annotations

from typing import Any

#: A kernel's profile fields the findings compare: the finding's kind, and its words.
KERNEL_FIELDS = {
    "scheduler": ("scheduler", "scheduler"),
    "grid_str": ("launch", "launch grid"),
    "block_str": ("launch", "launch block"),
    "cluster_str": ("launch", "launch cluster"),
    "registers": ("kernels", "registers"),
    "shared_mem_str": ("kernels", "shared memory"),
}
#: In the words of every finding that says what could not be compared.
UNCOMPARED = "not compared"


def profile_findings(
    old: dict[str, Any] | None, new: dict[str, Any] | None, old_name: str, new_name: str
) -> list[tuple[str, str, bool]]:
    """(kind, text, material) of two profiles' differences: segments, kernel counts, and each
    kernel's scheduler, launch, registers and shared memory; ``*_name``: who each side is."""
    if old is None or new is None:
        who = " and ".join(w for w, p in ((old_name, old), (new_name, new)) if p is None)
        return [("kernels", f"no nvFuser profile of {who}: kernels {UNCOMPARED}", False)]
    if old.get("source") != new.get("source"):
        # nvFuser's own profiler (captures before issue 39) against the measuring process's
        # kernel records: shared memory is split in one and added up in the other.
        return [("kernels", f"profiles of two sources ({old_name}, {new_name}): kernels "
                 f"{UNCOMPARED}", False)]  # fmt: skip
    arrow = f"({old_name} -> {new_name})"
    found: list[tuple[str, str, bool]] = []
    if old["segments"] != new["segments"]:
        found.append(("segments", f"segments {old['segments']} -> {new['segments']} {arrow}", True))
    kernels_old, kernels_new = old["kernel_profiles"], new["kernel_profiles"]
    if len(kernels_old) != len(kernels_new):
        text = f"kernels {len(kernels_old)} -> {len(kernels_new)} {arrow}"
        found.append(("kernels", text, True))
    one = len(kernels_old) == len(kernels_new) == 1
    for index, (a, b) in enumerate(zip(kernels_old, kernels_new, strict=False)):
        name = "kernel" if one else f"kernel {index}"
        for key, (kind, label) in KERNEL_FIELDS.items():
            if a.get(key) != b.get(key):
                text = f"{name} {label} {a.get(key)} -> {b.get(key)} {arrow}"
                found.append((kind, text, True))
    return found
