"""What the comment says of a machine no noise model covers (pure): that it is not judged, why
that matters, and the steps that make it a judge (docs/CALIBRATION.md has the method)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.tell.markdown import escape_md
from bot.tell.view import Fold

if TYPE_CHECKING:
    from bot.alert.decision import Unit


def calibration_steps(machine: str) -> list[str]:
    """The steps that make a noise model for a runner kind (docs/CALIBRATION.md), as markdown
    list lines: how many A/A runs, the commands, where the file goes."""
    name = escape_md(machine, 100)
    return [
        "1. Run the same code 12 times on this runner kind, over at least two days (the "
        "H200's model came from 12 A/A runs in six sessions): dispatch the "
        "**calibrate-runner** workflow (`.github/workflows/calibrate-runner.yml`) with this "
        "runner's label, twice, a day apart (6 runs each).",
        f"2. `python -m bot noise --results DIR [--results DIR ...] --write-model "
        f"noise/{name}.json`, one `--results` a run (the workflow's last job prints the exact "
        f"command and uploads the model).",
        "3. `python -m bot calibrate --results DIR [...]`: its false alarms and power on "
        "those runs, out of sample (docs/CALIBRATION.md says what to look for).",
        f'4. Add `"noise/{name}.json"` to `noise_model` in perfbot.toml\'s `[verdict]` (a '
        "list, one model a machine kind) and commit both.",
    ]


def uncalibrated_warning(u: Unit) -> list[str]:
    """The line under an uncalibrated machine's headline: why it is not judged and what that
    means; the steps that make it a judge are folded (:func:`calibration_fold`)."""
    why = u.measured.uncalibrated
    if why is None:
        return []
    return [
        f"⚪ **Not judged: no noise model covers {escape_md(u.machine, 100)}** "
        f"({escape_md(why, 300)}). Its changes are shown as measured, but without "
        "this machine's run-to-run noise nobody can tell a 2% change from a quiet day, so "
        "nothing here is red, gates, or files an issue, and its status is neutral."
    ]


def calibration_fold(u: Unit) -> Fold | None:
    if u.measured.uncalibrated is None:
        return None
    return Fold("How to make this runner a judge", tuple(calibration_steps(u.machine)))
