"""The watch's report over every history (pure): a machine's fusions that did not move in one
line, after its first history in full.

Why: with the catalog a machine has 14 histories (bot/history/series.py), and a night where
nothing moved would print the same commit list 14 times. A history that found nothing (no
change, confirmed or pending, no break) and whose commits are those of the machine's history
printed in full before it says only its name; anything else is printed in full.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.fusion.names import fusion_title
from bot.history.render import report_text
from bot.history.watch import Watch


def _quiet(w: Watch) -> bool:
    return not (w.scan.changes or w.scan.pending or w.breaks)


def _seen(w: Watch) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a folded history must share with the one printed: its commits and its notes."""
    return tuple(c.sha for c in w.history.commits), tuple(w.notes)


def reports_text(watches: Sequence[Watch]) -> str:
    """Every history's report, a machine's quiet fusions folded into one line after its first
    report (RMSNorm backward's, first in each machine's histories)."""
    parts: list[str] = []
    shown: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # machine -> first's
    folded: dict[str, list[str]] = {}
    for w in watches:
        machine = w.history.machine
        if machine in shown and _quiet(w) and _seen(w) == shown[machine]:
            folded.setdefault(machine, []).append(fusion_title(w.history.fusion))
            continue
        shown.setdefault(machine, _seen(w))
        parts.append(report_text(w))
    for machine, names in folded.items():
        parts.append(
            f"Main-branch history of {len(names)} more fusion(s) on {machine}: no change at the "
            f"same {len(shown[machine][0])} commit(s), with the same notes ({', '.join(names)})"
        )
    return "\n\n".join(parts)
