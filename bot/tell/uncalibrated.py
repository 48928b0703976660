"""What the comment says of a machine no noise model covers (pure): that it is not judged, why
that matters, and the path that makes it a judge, the one a calling repository (Thunder, Fuser)
can walk on its own runner: call the reusable calibration workflow, pool its calls, open a PR
here with the model and its evidence (docs/CALIBRATION.md, "Onboarding a GPU kind", says each
step and its check; the comment links it rather than paste it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.tell.context import Context, doc_link
from bot.tell.markdown import escape_md
from bot.tell.view import Fold
from bot.tell.words import factor_ci, widest_mean

if TYPE_CHECKING:
    from bot.alert.decision import Unit
    from bot.decide.types import Guard, GuardKind, Verdict

#: The reusable workflow a caller calls on its runner, the script that pools its calls, and the
#: section of docs/CALIBRATION.md that walks the path (tests/workflows hold them to the files).
WORKFLOW = "calibrate-package.yml"
POOL = ".github/scripts/calibration-evidence.sh"
PATH_PAGE, PATH_SECTION = "CALIBRATION.md", "Onboarding a GPU kind"


def calibration_steps(machine: str, ctx: Context) -> list[str]:
    """The path that makes a noise model for a runner kind and has it accepted, as markdown
    list lines: the calls, the pooling, the PR, and where each step's check is written."""
    name = escape_md(machine, 100)
    return [
        f"1. Call fusion-perfbot's reusable `{WORKFLOW}` with this runner's label twice, a day "
        "apart (6 A/A runs each): each call uploads its runs, a model and its held-out check "
        "as one artifact.",
        f"2. Copy both artifacts' `data/` into a fusion-perfbot clone and pool them: `bash "
        f"{POOL} {name}` writes `noise/{name}.json`, its evidence and the held-out check over "
        "all 12 runs, and exits 0 when every target is met.",
        f'3. Open a PR to fusion-perfbot with those files and `"noise/{name}.json"` added to '
        "`noise_model` in perfbot.toml's `[verdict]`. "
        f"{doc_link('Each step and its check', PATH_PAGE, ctx, PATH_SECTION)}.",
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


def calibration_fold(u: Unit, ctx: Context) -> Fold | None:
    if u.measured.uncalibrated is None:
        return None
    return Fold("How to make this runner a judge", tuple(calibration_steps(u.machine, ctx)))


#: A catalog's fusions on a machine no noise model covers: one line of figures each, said
#: without a verdict (any of them could be the machine's quiet day).
AS_MEASURED = (
    "⚪ {n} fusion{s} not judged. As measured, head against base (geometric mean over the "
    "points, with the interval this job's runs alone give), largest change first:"
)
#: The timing guards a line gives, in its order, and what it calls each.
_FIGURES: tuple[tuple[GuardKind, str], ...] = (
    ("ratio", "Thunder/nvFuser"),
    ("thunder", "Thunder"),
    ("nvfuser", "nvFuser"),
)


def _widest(g: Guard | None) -> float:
    """How far the guard's geometric means stray from no change (0 without one)."""
    mean = widest_mean(g) if g else None
    return abs(mean.estimate - 1) if mean else 0.0


def as_measured_order(u: Unit) -> float:
    """Largest change first: the ratio's or a side's, whichever strays furthest."""
    v = u.verdict
    return -max((_widest(v.guard(kind)) for kind, _ in _FIGURES), default=0.0) if v else 0.0


def as_measured_line(v: Verdict, name: str) -> str:
    """One fusion's figures as measured: each timing guard's widest geometric mean with its
    interval ("Thunder/nvFuser +5.2% [+2.2%, +8.3%]"), no state: nothing here is judged."""
    figures = []
    for kind, label in _FIGURES:
        g = v.guard(kind)
        if g is not None and (mean := widest_mean(g)) is not None:
            figures.append(f"{label} {factor_ci(mean)}")
    return f"- {escape_md(name, 100)}: " + (" · ".join(figures) or "no figures")
