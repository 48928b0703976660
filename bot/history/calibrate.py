"""How often ``history`` is wrong, measured on real runs (pure): false alarms on orderings of
real A/A runs, power on real slower states spliced in from a position on.

No number is made: every history is a sequence of recorded processes; only which runs, and
in which order, is drawn (seeded). The histories:

* **A/A, out of sample**: ``AA_SIZE`` of the stock runs in a random order, the noise model
  fitted on the stock runs NOT in the history, as production meets new commits;
* **A/A, shipped model**: every stock run in a random order (and in the recorded order),
  judged with a model fitted on them all: in sample, what the shipped model sees;
* **real builds that agree**: every ordering of the Thunder nightlies, with the shipped
  model, which has not seen them;
* **a real step**: ``k`` stock runs, then ``min_after`` runs of one really slower state in a
  random order, the model out of sample; found when the expected guard is confirmed
  regressed at that split (last good: the k-th stock commit, first bad: the first slower
  one), and with the first slower commit alone, pending there;
* **a real one-off**: the unfused backward at one commit between stock ones: anything
  confirmed is a false alarm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel
from bot.history.calibrate_trials import (
    aa_in_sample,
    aa_out_of_sample,
    aa_recorded,
    nightly_orders,
    one_off,
    quiet,
    step,
)
from bot.history.calibrate_types import (
    AA_SIZE,
    HISTORIES,
    STEP_AT,
    Calibration,
    Pool,
    Quiet,
    Rate,
    Step,
)
from bot.history.method import Method
from bot.results.types import BadInput

__all__ = ["AA_SIZE", "HISTORIES", "STEP_AT", "Calibration", "Pool", "Quiet", "Rate", "Step"]

#: The guards a slower state should move: Thunder slower moves Thunder's kernels and the
#: ratio; nvFuser's fusion slower is an nvFuser regression (the ratio falls: not a gain).
GUARDS = {"thunder": ("thunder", "ratio"), "nvfuser": ("nvfuser",), "broken": ("broken",)}
Scenario = Literal["a/a out", "a/a recorded", "a/a in", "nightlies", "one-off", "step"]


@dataclass(frozen=True)
class Task:
    """One scenario: a unit of work for a process pool (each draws from its own seed)."""

    scenario: Scenario
    pool: Pool
    s: VerdictSettings
    shipped: NoiseModel
    m: Method
    state: str = ""
    guard: str = ""


def work(t: Task) -> Quiet | Step:
    rest = f"fitted on the {len(t.pool.stock) - AA_SIZE} other runs"
    inside = "fitted on these runs (in sample)"
    if t.scenario == "step":
        return step(t.state, t.guard, t.pool, t.s, t.m)
    if t.scenario == "a/a out":
        return quiet("A/A, random orders", rest, aa_out_of_sample(t.pool, t.s), t.s, t.m)
    if t.scenario == "a/a recorded":
        return quiet("A/A, recorded order", inside, aa_recorded(t.pool, t.s), t.s, t.m)
    if t.scenario == "a/a in":
        return quiet("A/A, random orders", inside, aa_in_sample(t.pool, t.s), t.s, t.m)
    if t.scenario == "nightlies":
        trials = nightly_orders(t.pool, t.shipped)
        return quiet("Thunder nightlies, every order", "the shipped model", trials, t.s, t.m)
    return quiet("one unfused commit amid A/A", rest, one_off(t.pool, t.s, t.m), t.s, t.m)


Mapper = Callable[[Callable[[Task], Quiet | Step], Sequence[Task]], Iterable[Quiet | Step]]


def plan(pool: Pool, s: VerdictSettings, shipped: NoiseModel, m: Method) -> list[Task]:
    """Every scenario the pool allows, the steps first (they take longest)."""
    steps = [
        Task("step", pool, s, shipped, m, name, guard)
        for name, runs in sorted(pool.states.items())
        if len(runs) >= m.min_after
        for guard in GUARDS[name if name == "broken" else name.split("-")[1]]
    ]
    quiet_ones: list[Scenario] = ["a/a out", "a/a recorded", "a/a in"]
    quiet_ones += ["nightlies"] if pool.nightlies else []
    quiet_ones += ["one-off"] if pool.unfused else []
    return [*steps, *(Task(q, pool, s, shipped, m) for q in quiet_ones)]


def calibrate(
    pool: Pool, s: VerdictSettings, shipped: NoiseModel, m: Method, map_: Mapper = map
) -> Calibration:
    """Every scenario of the module docstring over the pool's runs; the same for any map_."""
    if len(pool.stock) < AA_SIZE + 2:
        raise BadInput(
            f"the calibration needs at least {AA_SIZE + 2} A/A runs ({AA_SIZE} a history, 2 "
            f"more for its noise model), got {len(pool.stock)}"
        )
    done = list(map_(work, plan(pool, s, shipped, m)))
    return Calibration(
        pool.stock[0].machine,
        m,
        s.seed,
        tuple(x for x in done if isinstance(x, Quiet)),
        tuple(x for x in done if isinstance(x, Step)),
        tuple(r.commit[:8] for r in pool.stock),
        {k: tuple(r.commit[:8] for r in v) for k, v in sorted(pool.states.items())},
    )
