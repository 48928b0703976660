"""An uncalibrated machine's verdict as it is shown (pure): the numbers as measured, no judgement.

A machine no noise model covers has only its within-run noise and the job's repeats to go on;
its between-run noise is unknown, and the H200 pair relabelled as an A100 read "regressed" on
that alone. So its changes are shown with their intervals, but every state its noise could
explain (regressed, improved, unsure) and every break reads "not judged", the headline
"uncalibrated", and nothing in it is red, gates or files an issue (bot/tell/machines.py).
"""

from __future__ import annotations

from dataclasses import replace

from bot.decide.types import Guard, PointVerdict, State, VariantSummary, Verdict

JUDGED: tuple[State, ...] = ("regressed", "improved", "unsure", "broken", "still failing")


def _state(state: State) -> State:
    return "not judged" if state in JUDGED else state


def _point(p: PointVerdict) -> PointVerdict:
    return replace(p, state=_state(p.state), corroborated=False, settle=None)


def _summary(a: VariantSummary) -> VariantSummary:
    return replace(a, state=_state(a.state))


def _guard(g: Guard) -> Guard:
    return replace(
        g,
        state=_state(g.state),
        points=tuple(_point(p) for p in g.points),
        aggregates=tuple(_summary(a) for a in g.aggregates),
    )


def unjudged(v: Verdict, why: str) -> Verdict:
    """`v` with no state its noise could explain, its reason `why` (in words)."""
    worst = replace(v.worst, state=_state(v.worst.state)) if v.worst else None
    return replace(
        v,
        overall="uncalibrated",
        reason=why,
        points=tuple(_point(p) for p in v.points),
        kernels=tuple(_point(p) for p in v.kernels),
        summaries=tuple(_summary(a) for a in v.summaries),
        guards=tuple(_guard(g) for g in v.guards),
        worst=worst,
    )
