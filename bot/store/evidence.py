"""The commits a change point or a break rests on, read from ``history --json``, to pin.

The watch (``python -m bot history``) names, for each change it found (pending or confirmed,
with or without an open issue) and each break, the last good and the first bad commit, and
where a later change brought the series back. Thinning must never take those away: the store
pins them for good (written to its pins.txt, so a later change of the detector's mind does
not unpin the evidence of an issue already filed). Read strictly, like every input.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.results.limits import FULL_SHA, MAX_RESULTS_BYTES
from bot.results.strict_json import read_document
from bot.results.types import BadInput

HISTORY_SCHEMA = "perfbot-history/1"


def _commits(where: str, item: Mapping[str, Any], what: str) -> dict[str, str]:
    found = {}
    for field in ("last_good", "first_bad", "back_at"):
        value = item.get(field)
        if value is None and field == "back_at":
            continue
        if not isinstance(value, str) or not FULL_SHA.fullmatch(value):
            raise BadInput(f"{where}: {field} {str(value)[:60]!r} is not a 40-hex commit")
        found[value] = f"{what}: {field.replace('_', ' ')}"
    return found


def pins_from_history(path: Path) -> dict[str, str]:
    """commit -> why, for every change and break of every machine in the history JSON."""
    doc = read_document(path, MAX_RESULTS_BYTES, "history JSON")
    if not isinstance(doc, dict) or doc.get("schema") != HISTORY_SCHEMA:
        raise BadInput(f"{path}: not a {HISTORY_SCHEMA} document (python -m bot history --json)")
    pins: dict[str, str] = {}
    machines = doc.get("machines")
    if not isinstance(machines, list):
        raise BadInput(f"{path}: 'machines' is not a list")
    for m, machine in enumerate(machines):
        if not isinstance(machine, dict):
            raise BadInput(f"{path}: machines[{m}] is not an object")
        name = str(machine.get("machine"))[:100]
        for kind in ("changes", "breaks"):
            items = machine.get(kind, [])
            if not isinstance(items, list):
                raise BadInput(f"{path}: machines[{m}].{kind} is not a list")
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    raise BadInput(f"{path}: machines[{m}].{kind}[{i}] is not an object")
                what = (
                    f"{name} {item.get('guard')} {item.get('direction')} ({item.get('status')})"
                    if kind == "changes"
                    else f"{name} break ({item.get('status')})"
                )
                for commit, why in _commits(
                    f"{path}: machines[{m}].{kind}[{i}]", item, what
                ).items():
                    pins.setdefault(commit, why)
    return pins
