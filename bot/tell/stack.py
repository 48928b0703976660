"""What the comment says of a run on another stack than its noise model's (pure): one line, in
that machine's part, naming what differs (bot/decide/stack.py compares).

Why a line and nothing more: the model's between-run noise was measured on one GPU, driver,
CUDA, torch and timer; on another, points may move more or less from run to run, so the
intervals may be too narrow or too wide. That is worth knowing and nothing to act on in the
PR: it does not gate, it files nothing and it is not the headline (docs/CALIBRATION.md, "The
stack").
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from bot.decide.stack import SHOWN, Difference, differences, environment, stack_of
from bot.tell.markdown import escape_md

if TYPE_CHECKING:
    from bot.alert.decision import Unit

#: The model's environment in the line, in this order; the GPU in brackets after it.
_FITTED = ("torch", "cuda", "driver")


def _values(values: tuple[str, ...]) -> str:
    return escape_md("/".join(values), 120)


def _field(name: str, values: tuple[str, ...]) -> str:
    return f"{SHOWN[name]} {_values(values)}"


def _ran(u: Unit, d: Difference) -> str:
    """What the run had of a field that differs: at each side, where base and head disagree."""
    sides = {
        side: environment(
            stack_of(r.provenance for s, r in u.measured.runs() if s == side), d.field
        )
        for side in ("base", "head")
    }
    if None in sides.values() or sides["base"] == sides["head"]:
        return _field(d.field, d.run)
    return f"{_field(d.field, sides['base'] or ())} at base, {_values(sides['head'] or ())} at head"


def stack_differences(u: Unit) -> tuple[Difference, ...]:
    """Where this unit's runs (base and head) are not on its noise model's stack."""
    model = u.measured.model_stack
    if model is None:
        return ()
    return differences(model, stack_of(r.provenance for _, r in u.measured.runs()))


def stack_warning(u: Unit) -> list[str]:
    """The line, or none where the model's stack is unknown or the run's environment is the
    model's: what the model was fitted on, what this run had instead."""
    differs = stack_differences(u)
    model = u.measured.model_stack
    if not differs or model is None:
        return []
    extra = [d.field for d in differs if d.field not in (*_FITTED, "gpu")]  # the timer
    fitted = ", ".join(
        _field(name, values) for name in (*_FITTED, *extra) if (values := environment(model, name))
    )
    if gpu := environment(model, "gpu"):
        fitted = f"{fitted} ({_values(gpu)})" if fitted else _field("gpu", gpu)
    this = ", ".join(_ran(u, d) for d in differs)  # torch, CUDA, driver, GPU, timer
    return [
        f"ⓘ The noise model was fitted on {fitted}; this run: {this}: its calibration may not "
        'transfer (docs/CALIBRATION.md, "The stack")'
    ]


def unshown_stack_lines(units: Sequence[Unit], shown: Collection[str]) -> list[str]:
    """The line of each machine none of whose parts is shown (a catalog that did not move
    there), for under the catalog's one line: once a machine, naming it among several."""
    first = {u.machine: u for u in reversed(units) if u.machine not in shown}
    several = len({u.machine for u in units}) > 1
    return [
        f"{escape_md(machine, 100)}: {line}" if several else line
        for machine, u in sorted(first.items())
        for line in stack_warning(u)
    ]
