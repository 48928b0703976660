"""The decision of one run (pure): every fusion on every machine judged, or why not, decided once.

The comment, the alert's issues, the commit status, `report` and its JSON all render this one
object; none of them decides again, so none can say something another does not. A fusion on a
machine (a unit) is, in this order:

1. **not compared**: one side only;
2. **uncalibrated**: no noise model covers its machine (shown as measured, not judged);
3. **runner check**: a runner check failed on its machine;
4. **drifted** or **unexplained**: its in-run control (bot/alert/control.py) says its figures
   are no evidence. A drift on several fusions of one machine, or on the only fusion it
   measured, is the machine's: every fusion of that machine is not judged, said once. A drift
   on one fusion among several leaves the others judged: the machine did not move for them;
5. **judged**: its verdict counts, gates, and may raise an alert.

What changed is worked out fusion by fusion (bot/alert/builds.py): a change to one fusion says
nothing about another's. The run's state is the worst over every unit (:data:`ORDER`: a drift
is its own state, below a regression or a break that stands elsewhere), its exit code the
worst of the judged units' (5 over 1 over 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bot.alert.builds import Builds, compare_builds
from bot.alert.control import Control, controlled
from bot.alert.measured import Measured
from bot.decide.level import RatioLevel, level_of
from bot.decide.types import Verdict
from bot.decide.unjudged import unjudged
from bot.exitcodes import ExitCode
from bot.fusion.hints import Hints
from bot.fusion.names import unit_named
from bot.results.types import Provenance

Standing = Literal[
    "judged",
    "not compared",
    "uncalibrated",
    "runner check",
    "drifted",
    "unexplained",
    "provisional",
]
#: Every state a unit or a run can be in, worst first.
ORDER = (
    "broken",
    "regressed",
    "drifted",
    "unexplained",
    "unsure",
    "provisional",
    "uncalibrated",
    "runner check failed",
    "inconclusive (no data)",
    "not compared",
    "no change",
    "improved",
)
_ACTION: dict[Standing, str] = {
    "runner check": ": re-run on a fit runner",
    "drifted": "; re-run the benchmark job",
    "unexplained": "; measure it again",
}
_STATE: dict[Standing, str] = {
    "not compared": "not compared",
    "uncalibrated": "uncalibrated",
    "runner check": "runner check failed",
    "drifted": "drifted",
    "unexplained": "unexplained",
    "provisional": "provisional",
}
#: A provisional fusion's states that its thin calibration could explain: shown, not gated on.
#: A break is no noise: it gates whatever the calibration.
_PROVISIONAL_STATES = ("regressed", "unsure", "improved")


@dataclass(frozen=True)
class Unit:
    """The decision about one fusion on one machine. ``verdict`` is as it is shown: the
    measured one when judged, else every state its noise could explain set aside
    (bot/decide/unjudged.py) with ``why_not`` as its reason."""

    measured: Measured
    builds: Builds
    standing: Standing = "judged"
    #: Why it is not judged, in plain words without what to do ("" when judged).
    cause: str = ""
    control: Control | None = None
    verdict: Verdict | None = None
    level: RatioLevel | None = None

    @property
    def machine(self) -> str:
        return self.measured.machine

    @property
    def fusion(self) -> str:
        return self.measured.fusion

    @property
    def unit(self) -> str:
        return self.measured.unit

    @property
    def title(self) -> str:
        return self.measured.title

    @property
    def where(self) -> str:
        return self.measured.where

    @property
    def hints(self) -> Hints | None:
        return self.measured.hints

    @property
    def base(self) -> Provenance | None:
        return self.measured.base

    @property
    def head(self) -> Provenance | None:
        return self.measured.head

    @property
    def gates(self) -> bool:
        return self.standing == "judged"

    @property
    def state(self) -> str:
        if self.standing == "judged":
            assert self.verdict is not None
            return self.verdict.overall
        return _STATE[self.standing]

    @property
    def suite(self) -> str:
        """What of this suite changed for this fusion (its measuring code or settings, its
        hand-written definition), in words: a move it explains is the suite's news."""
        return "; ".join(w for p in ("suite", "definition") if (w := self.builds.words(p)))

    @property
    def exit_code(self) -> ExitCode:
        if not self.gates or self.verdict is None:
            return ExitCode.OK_NO_REGRESSION
        if self.verdict.broken:
            return ExitCode.BROKEN
        return ExitCode.REGRESSION if self.verdict.regressed else ExitCode.OK_NO_REGRESSION

    @property
    def why_not(self) -> str:
        """Why it is not judged and what to do, in plain words ("" when judged)."""
        return f"{self.cause}{_ACTION.get(self.standing, '')}" if self.cause else ""

    @property
    def rerun(self) -> str:
        """Why measuring again is what to do ("" where it is not: judged, or a noise model is
        what is missing)."""
        return self.cause if self.standing in ("drifted", "unexplained", "runner check") else ""


def worst(states: Sequence[str]) -> str:
    return next((s for s in ORDER if s in states), "inconclusive (no data)")


@dataclass(frozen=True)
class Decision:
    """The run's one decision: its units (RMSNorm backward first, as measured), and the
    machines every fusion of which is not judged because the machine drifted."""

    units: tuple[Unit, ...]
    drifted_machines: Mapping[str, str]

    @property
    def judged(self) -> tuple[Unit, ...]:
        return tuple(u for u in self.units if u.gates)

    @property
    def compared(self) -> tuple[Unit, ...]:
        return tuple(u for u in self.units if u.verdict is not None)

    @property
    def overall(self) -> str:
        return worst([u.state for u in self.units])

    @property
    def exit_code(self) -> ExitCode:
        codes = {u.exit_code for u in self.units}
        order = (ExitCode.BROKEN, ExitCode.REGRESSION, ExitCode.OK_NO_REGRESSION)
        return next(c for c in order if c in codes)

    @property
    def catalog(self) -> bool:
        """More than one fusion: the comment is the catalog's."""
        return len({u.fusion for u in self.units}) > 1

    def _said(self, unit: Unit, why: str) -> str:
        """A reason as the run says it: a fusion's own (its control) names the fusion in a
        catalog; a machine's (no noise model, a failed check, one side only) is said once."""
        own = unit.standing in ("drifted", "unexplained") and self.catalog
        return f"{unit.title}: {why}" if own and why else why

    @property
    def not_judged(self) -> tuple[str, ...]:
        """Why units are not judged, each reason once (a machine's drift once for all its
        fusions), for the first screen and a neutral status."""
        out = [f"{why}{_ACTION['drifted']}" for why in self.drifted_machines.values()]
        for u in self.units:
            if u.standing != "judged" and u.machine not in self.drifted_machines:
                out.append(self._said(u, u.why_not))
        return tuple(dict.fromkeys(w for w in out if w))

    @property
    def unsettled(self) -> tuple[str, ...]:
        """Why the run cannot say "fine", a few words each, each once: the neutral status."""
        said = (_unsettled(u, self.drifted_machines, self.catalog) for u in self.units)
        return tuple(dict.fromkeys(w for w in said if w))

    @property
    def reruns(self) -> tuple[str, ...]:
        """Why measuring again is what to do, each once."""
        said = list(self.drifted_machines.values())
        alone = [u for u in self.units if u.machine not in self.drifted_machines]
        said += [self._said(u, u.rerun) for u in alone]
        return tuple(dict.fromkeys(w for w in said if w))


def _unsettled(u: Unit, drifted: Mapping[str, str], catalog: bool) -> str:
    """Why this unit keeps the run from saying "fine", in a few words (the neutral status);
    in a catalog a fusion's own reason names the fusion (RMSNorm backward's too), so that a
    drift of one fusion never reads as the machine's."""
    if u.machine in drifted:
        return f"the runner drifted on {u.machine}: re-run"
    where = unit_named(u.unit) if catalog else u.where
    said = {
        "not compared": f"{where} not compared",
        "uncalibrated": f"{u.machine} uncalibrated (no noise model)",
        "runner check": f"runner check failed on {u.machine}",
        "drifted": f"the runner drifted on {where}: re-run",
        "provisional": f"{where} provisional (thin calibration)",
    }
    if u.standing in said:
        return said[u.standing]
    if u.standing == "unexplained" and u.control is not None:
        return f"{u.control.moved} on {where} with nothing recorded to explain it: re-run"
    if u.state == "unsure":
        return f"unsure on {where}: more repeats would settle it"
    return f"no data on {where}" if u.state == "inconclusive (no data)" else ""


def _standing(m: Measured, builds: Builds) -> tuple[Standing, str, Control | None]:
    """Steps 1 to 4 of the module docstring for one unit, the machine-wide drift aside: its
    standing, and why (without what to do)."""
    if m.verdict is None:
        return "not compared", m.missing or "one side only", None
    if m.uncalibrated is not None:
        return "uncalibrated", f"no noise model covers {m.machine}", None
    if m.held is not None:
        return "runner check", m.held, None
    control = controlled(m.verdict, builds)
    if control is not None:
        return ("drifted" if control.finding == "drift" else "unexplained"), control.short, control
    if m.provisional and m.verdict.overall in _PROVISIONAL_STATES:
        return "provisional", _provisional_words(m, m.verdict.overall), None
    return "judged", "", None


def _provisional_words(m: Measured, moved: str) -> str:
    """Why a provisional fusion's move is shown and not gated on, with what its calibration
    lacks, short (the first shortfall's count; the noise model holds each with its bound)."""
    lacks = m.provisional[0].split(" (")[0]
    return (
        f"{m.title} on {m.machine} {moved}, but its calibration is provisional ({lacks}): "
        "shown, not gated on"
    )


def _machine_drift(units: Sequence[Unit], machine: str) -> str | None:
    """Why every fusion of ``machine`` is not judged, when its drift is the machine's: on two
    fusions or more, or on the only one it measured with a verdict to trust."""
    mine = [u for u in units if u.machine == machine and u.standing in ("judged", "drifted")]
    drifted = [u for u in mine if u.standing == "drifted"]
    if not drifted or (len(drifted) == 1 and len(mine) > 1):
        return None
    if len(mine) == 1:
        return drifted[0].cause
    names = ", ".join(u.title for u in drifted)
    return (
        f"the runner drifted on {machine}: the controls of {len(drifted)} fusions moved with "
        f"their ratios steady ({names})"
    )


def decide_run(measured: Sequence[Measured]) -> Decision:
    """The one decision of the run's measurements (bot/commands/cli.py ``load`` makes them)."""
    units = []
    for m in measured:
        builds = compare_builds(m.base, m.head, m.fusion)
        standing, why, control = _standing(m, builds)
        units.append(Unit(m, builds, standing, why, control))
    drifted: dict[str, str] = {}
    for machine in dict.fromkeys(u.machine for u in units):
        said = _machine_drift(units, machine)
        if said is not None:
            drifted[machine] = said
    decided = []
    for u in units:
        if u.machine in drifted and u.standing == "judged":
            u = replace(u, standing="drifted", cause=drifted[u.machine])
        shown = u.measured.verdict
        if shown is not None and u.standing != "judged":
            shown = unjudged(shown, u.why_not)
        decided.append(replace(u, verdict=shown, level=level_of(shown) if shown else None))
    return Decision(tuple(decided), drifted)
