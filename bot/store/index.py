"""The store's index (``index.json``) and pins (``pins.txt``): what is stored, what was retired.

The files under ``results/`` are asv's and the suite's, unchanged; what they cannot say lives
here: each run's fingerprint as it was added (so adding it again is recognised, and a different
result for the same commit is refused), whether its per-call samples were stripped, and every
run the policy retired (so a retired run is not quietly brought back by a re-run). Read
strictly: a store whose index does not parse is bad input, never an empty store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bot.commands.steps import write_text_atomically
from bot.results import names
from bot.results.limits import FULL_SHA, MAX_RESULTS_BYTES, read_capped
from bot.results.strict_json import read_document
from bot.results.types import BadInput

SCHEMA = "perfbot-store/1"
INDEX = "index.json"
PINS = "pins.txt"
RESULTS = "results"
_FILE = re.compile(r"[A-Za-z0-9_.+-]{1,200}")


class StoreError(Exception):
    """Not a store, or not one this command may change now (a usage error: exit 2)."""


class Conflict(Exception):
    """A different result for a commit the store already has (or retired): exit 7."""


@dataclass(frozen=True)
class Entry:
    machine: str
    commit: str
    date_ms: int  # asv's "date" of the commit, milliseconds since the epoch (UTC)
    results_file: str  # the asv results file's name in results/<machine>/
    fingerprint: str  # bot/store/files.py: the measurement, per-call samples aside
    stripped: bool = False
    retired: str | None = None  # why and when, for an entry of `retired`

    @property
    def key(self) -> tuple[str, str]:
        return (self.machine, self.commit)

    @property
    def date(self) -> datetime:
        return datetime.fromtimestamp(self.date_ms / 1000, tz=timezone.utc)

    def files(self) -> list[str]:
        """Its files under results/<machine>/ (the hygiene sidecar only where present)."""
        c = self.commit
        return [self.results_file, f"{c}.provenance.jsonl", f"{c}.hygiene.jsonl"]


@dataclass(frozen=True)
class Index:
    rows: tuple[Entry, ...] = ()
    retired: tuple[Entry, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def find(self, key: tuple[str, str]) -> Entry | None:
        return next((e for e in self.rows if e.key == key), None)

    def find_retired(self, key: tuple[str, str]) -> Entry | None:
        return next((e for e in self.retired if e.key == key), None)

    def without(self, key: tuple[str, str]) -> Index:
        rows = tuple(e for e in self.rows if e.key != key)
        retired = tuple(e for e in self.retired if e.key != key)
        return replace(self, rows=rows, retired=retired)

    def with_rows(self, rows: Iterable[Entry], retired: Iterable[Entry] = ()) -> Index:
        order = _order
        return replace(
            self,
            rows=tuple(sorted(rows, key=order)),
            retired=tuple(sorted((*self.retired, *retired), key=order)),
        )


def _order(e: Entry) -> tuple[str, int, str]:
    return (e.machine, e.date_ms, e.commit)


def _entry(where: str, raw: Any, retired: bool) -> Entry:
    if not isinstance(raw, dict):
        raise BadInput(f"{where}: not an object")
    try:
        entry = Entry(
            machine=raw["machine"],
            commit=raw["commit"],
            date_ms=raw["date_ms"],
            results_file=raw["results_file"],
            fingerprint=raw["fingerprint"],
            stripped=raw.get("stripped", False),
            retired=raw.get("retired"),
        )
    except KeyError as exc:
        raise BadInput(f"{where}: no {exc.args[0]!r}") from None
    ok = (
        isinstance(entry.machine, str)
        and names.MACHINE.fullmatch(entry.machine)
        and isinstance(entry.commit, str)
        and FULL_SHA.fullmatch(entry.commit)
        and isinstance(entry.date_ms, int)
        and not isinstance(entry.date_ms, bool)
        and isinstance(entry.results_file, str)
        and _FILE.fullmatch(entry.results_file)
        and entry.results_file.endswith(".json")
        and isinstance(entry.fingerprint, str)
        and re.fullmatch(r"[0-9a-f]{64}", entry.fingerprint)
        and isinstance(entry.stripped, bool)
        and (isinstance(entry.retired, str) if retired else entry.retired is None)
    )
    if not ok:
        raise BadInput(f"{where}: malformed entry {json.dumps(raw)[:200]}")
    return entry


def read_index(store: Path) -> Index:
    path = store / INDEX
    if not path.is_file():
        raise StoreError(f"{store}: not a history store (no {INDEX}; make one with `store init`)")
    data = read_document(path, MAX_RESULTS_BYTES, "store index")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise BadInput(f"{path}: not a {SCHEMA} index")
    rows = data.get("rows")
    retired = data.get("retired")
    if not isinstance(rows, list) or not isinstance(retired, list):
        raise BadInput(f"{path}: 'rows' and 'retired' must be lists")
    entries = [_entry(f"{path} rows[{i}]", r, False) for i, r in enumerate(rows)]
    gone = [_entry(f"{path} retired[{i}]", r, True) for i, r in enumerate(retired)]
    keys = [e.key for e in [*entries, *gone]]
    if len(set(keys)) != len(keys):
        raise BadInput(f"{path}: a (machine, commit) is listed twice")
    extra = {k: v for k, v in data.items() if k not in ("schema", "rows", "retired")}
    return Index(tuple(entries), tuple(gone), extra)


def _entry_json(e: Entry) -> dict[str, Any]:
    doc = asdict(e)
    if doc["retired"] is None:
        del doc["retired"]
    return doc


def index_text(index: Index) -> str:
    doc = {
        **index.extra,
        "schema": SCHEMA,
        "rows": [_entry_json(e) for e in sorted(index.rows, key=_order)],
        "retired": [_entry_json(e) for e in sorted(index.retired, key=_order)],
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def write_index(store: Path, index: Index) -> None:
    write_text_atomically(store / INDEX, index_text(index))


def read_pins(path: Path) -> dict[str, str]:
    """``<40-hex commit> [# why]`` a line; blank lines and ``#`` lines are comments."""
    if not path.exists():
        return {}
    raw = read_capped(path, MAX_RESULTS_BYTES, "pins file")
    pins: dict[str, str] = {}
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        commit, _, why = text.partition("#")
        commit = commit.strip().lower()
        if not FULL_SHA.fullmatch(commit):
            raise BadInput(f"{path} line {number}: {commit[:60]!r} is not a 40-hex commit")
        pins[commit] = why.strip()
    return pins


def pins_text(pins: Mapping[str, str]) -> str:
    head = "# Commits the store never thins away (change points, open issues): commit # why\n"
    return head + "".join(f"{c}  # {why}\n" if why else f"{c}\n" for c, why in sorted(pins.items()))
