"""A unit's warnings and notes on the first screen (pure): what its runner checks and its in-run
control say, in words. The decision that a unit is not judged is made once, in
bot/alert/decision.py; these only say it.

A machine whose runner check failed (bot/results/hygiene.py) measured a GPU in a state the
noise model never saw: its part says so first, which side and repeat, with the problems.
"""

from __future__ import annotations

from bot.alert.decision import Unit
from bot.tell.markdown import escape_md

__all__ = ["check_notes", "check_warning", "control_warning"]

#: Failed checks listed in a machine's warning before "and N more".
MAX_LISTED = 10


def check_warning(u: Unit) -> list[str]:
    """The lines under a unit's headline when a runner check failed (quoted by the template):
    that it does not gate, and each failed check."""
    failed = u.measured.failed_checks
    if not failed:
        return []
    lines = [
        "⚠️ **A runner check failed: this machine's verdict does not gate** (no failing exit "
        "code; its alert issues are neither opened nor closed). The GPU was found unfit:"
    ]
    for side, folder, c in failed[:MAX_LISTED]:
        problems = "; ".join(escape_md(p, 200) for p in c.problems[:5])
        more = f" (and {len(c.problems) - 5} more)" if len(c.problems) > 5 else ""
        lines.append(
            f"- **{side}**, {escape_md(folder, 60)}, {escape_md(c.when, 10)} the measurement "
            f"({escape_md(c.checked_at, 40)}): {problems}{more}"
        )
    if len(failed) > MAX_LISTED:
        lines.append(f"- and {len(failed) - MAX_LISTED} more failed check(s)")
    return lines


def control_warning(u: Unit, machine_wide: str | None = None) -> list[str]:
    """The line under a unit's headline when its in-run control says it is no evidence (quoted
    by the template): what moved with nothing changed, what that means, and what to do; for a
    unit its machine's drift took along (``machine_wide``), the machine's words."""
    tail = (
        "Nothing is filed and the status is neutral; re-run the benchmark job (the control is "
        "the side whose build, definition and measuring code are the same at base and head: "
        "docs/METHOD.md)."
    )
    if u.control is None:
        if machine_wide is None:
            return []
        lead = "⚠️ **The in-run control moved: this run is not evidence.**"
        return [f"{lead} {escape_md(machine_wide, 600)}. {tail}"]
    if u.control.finding == "drift":
        lead = "⚠️ **The in-run control moved: this run is not evidence.**"
    else:
        lead = "⚠️ **A side moved with nothing recorded to explain it: not judged.**"
    return [f"{lead} {escape_md(u.control.text, 600)}. {tail}"]


def check_notes(u: Unit) -> list[str]:
    """A note line when the runner checked this unit's runs and every check passed; none for
    results without checks (old data reads as before)."""
    runs = u.measured.runs()
    checked = [r for _, r in runs if r.checks is not None]
    if not checked or u.measured.failed_checks:
        return []
    unchecked = len(runs) - len(checked)
    rest = f"; {unchecked} run(s) not checked" if unchecked else ""
    return [f"runner checks passed ({len(checked)} of {len(runs)} run(s) checked{rest})"]
