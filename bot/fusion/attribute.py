"""Which repository most likely owns a regression, and why, in words a maintainer can check.

Evidence in the order it is trusted: what differs between base and head in the stack (the
package under test, or the Thunder and nvFuser versions), what changed inside the compiled
program (Thunder decides what it hands nvFuser: the definition, the saved tensors, how many
fusions, and what runs beside them in its call: a kernel outside nvFuser that came or went;
nvFuser decides how it runs them: segments, schedulers, launch parameters, its kernels), and
which kernel times moved. Each rule that fires adds a reason; the owner is the side with the
most reasons, and a tie (or nothing) names no owner rather than guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.fusion.launches import LAUNCHES, NVFUSER_LAUNCHES
from bot.fusion.types import Finding
from bot.results.types import REFERENCE

THUNDER, FUSER = "thunder", "fuser"
#: Findings about what Thunder hands nvFuser (Thunder's side) and how nvFuser runs it (nvFuser's).
PROGRAM_KINDS = frozenset(
    {"casts", "ops", "reductions", "broadcasts", "saved", "extents", "fusions"}
)
SCHEDULE_KINDS = frozenset({"segments", "kernels", "scheduler", "launch", NVFUSER_LAUNCHES})
REPOSITORY_WORD = {THUNDER: "Lightning-AI/lightning-thunder", FUSER: "NVIDIA/Fuser"}


@dataclass(frozen=True)
class Attribution:
    owner: str | None  # THUNDER, FUSER or None
    reasons: tuple[tuple[str, str], ...]  # (side, reason in words)

    @property
    def repository(self) -> str | None:
        return REPOSITORY_WORD.get(self.owner or "")


def _changed(base: Mapping[str, str], head: Mapping[str, str], key: str) -> tuple[str, str] | None:
    b, h = base.get(key), head.get(key)
    return (b, h) if b and h and b != h else None


def _launched(material: Sequence[Finding]) -> list[tuple[str, str]]:
    """A kernel outside nvFuser that came or went in a timed call: in Thunder's, what Thunder
    runs beside the fusion; in the hand-written fusion's, nvFuser's call (the finding above
    names the kernels, so the reason only points at it)."""
    reasons = []
    launched = {f.variant == REFERENCE for f in material if f.kind == LAUNCHES}
    if False in launched:
        reasons.append((THUNDER, "Thunder's timed call launches other kernels at head"))
    if True in launched:
        reasons.append((FUSER, "the hand-written fusion's timed call launches other kernels"))
    return reasons


def attribute(
    moved: Sequence[str],
    base_versions: Mapping[str, str],
    head_versions: Mapping[str, str],
    under_test: str | None,
    findings: Sequence[Finding],
) -> Attribution:
    """``moved``: the alarming guards ("nvfuser", "thunder", "ratio", "broken");
    ``under_test``: the package under test ("thunder" or "nvfuser") when only it differs."""
    reasons: list[tuple[str, str]] = []
    if under_test in ("thunder", "nvfuser"):
        side = THUNDER if under_test == "thunder" else FUSER
        reasons.append(
            (side, f"only {under_test} differs between base and head (package under test)")
        )
    else:
        for key, side in (("thunder", THUNDER), ("nvfuser", FUSER)):
            change = _changed(base_versions, head_versions, key)
            if change:
                reasons.append(
                    (side, f"{key} changed between base and head: {change[0]} -> {change[1]}")
                )
    material = [f for f in findings if f.material]
    reasons += _launched(material)
    program = [f for f in material if f.kind in PROGRAM_KINDS and f.variant != REFERENCE]
    schedule = [
        f
        for f in material
        if f.kind in SCHEDULE_KINDS or (f.variant == REFERENCE and f.kind != LAUNCHES)
    ]
    if program:
        reasons.append((THUNDER, f"Thunder hands nvFuser a different program ({program[0].text})"))
    if schedule and not program:
        reasons.append((FUSER, f"nvFuser runs the same program differently ({schedule[0].text})"))
    if "nvfuser" in moved:
        reasons.append((FUSER, "nvFuser's hand-written fusion is slower on its own"))
    elif "thunder" in moved:
        reasons.append(
            (THUNDER, "Thunder's kernels are slower while the hand-written fusion is not")
        )
    votes = {side: sum(s == side for s, _ in reasons) for side in (THUNDER, FUSER)}
    owner = None
    if votes[THUNDER] != votes[FUSER]:
        owner = THUNDER if votes[THUNDER] > votes[FUSER] else FUSER
    return Attribution(owner, tuple(reasons))
