"""Read the ``<full-sha>.provenance.jsonl`` sidecar that the suite writes next to asv's file.

asv's results cannot hold what the comment must show (library versions, GPU clocks, why a
point failed), so the suite appends one JSON line per run (docs/DATA.md). The sidecar is
optional, but one that is present and wrong is :class:`BadInput`, not silently ignored: a
comment that shows another commit's environment would mislead.

A record keeps every call's kernel time (``kernel_us_calls``) and every round's lists: 35 kB a
point, 6-9 MB for the nightly sweep, 80% of what a verdict loads. The verdict and the comment
read none of them (the asv file has the samples), so ``per_round=False`` drops them while the
JSON is decoded, never holding them whole; the record is otherwise the same.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.results.limits import MAX_PROVENANCE_BYTES, full_sha, read_capped
from bot.results.strict_json import decode
from bot.results.types import DEFAULT_FUSION, REFERENCE, BadInput, Provenance

PROVENANCE_SCHEMA = "rmsnorm-bwd-provenance/1"
#: A variant entry's per-round (and per-call) lists; a variant entry is the one kind of object
#: in a record with a ``status`` (docs/DATA.md).
PER_ROUND = ("kernel_us", "kernel_us_calls", "ratio", "host_us", "kernel_names")
#: Line breaks other than "\n" that ``str.splitlines`` honours; rare enough to take the slow path.
#: Looked for one by one (`in`: a memchr-like scan, 40x faster than a regex class over a
#: record of several MB).
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
#: The hand-written definition's fingerprints in the ``nvfuser`` variant's entry (docs/DATA.md):
#: of its printed text, and of that text's canonical form.
DEFINITION_FIELD = "definition_sha256"
CANONICAL_FIELD = "definition_canonical_sha256"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def _slim(dropped: frozenset[str], entry: dict[str, Any]) -> dict[str, Any]:
    if "status" not in entry:
        return entry
    return {k: v for k, v in entry.items() if not (k in dropped and isinstance(v, list))}


def _last_line(text: str) -> tuple[int, int, int] | None:
    """(number, start, end) of the last line that is not blank, as ``str.splitlines`` counts,
    found without copying the text (a record is one line of several MB)."""
    end = len(text)
    while end and text[end - 1].isspace():
        end -= 1
    if not end:
        return None
    start = text.rfind("\n", 0, end) + 1
    stop = text.find("\n", end)
    return text.count("\n", 0, start) + 1, start, len(text) if stop < 0 else stop


def _decode_last(path: Path, text: str, dropped: frozenset[str]) -> tuple[int, Any]:
    if any(brk in text for brk in _OTHER_BREAKS):  # the plain way, exactly as splitlines reads it
        numbered = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not numbered:
            raise BadInput(f"{path}: empty provenance file")
        number, line = numbered[-1]
        return number, _parse(path, line, number, dropped)
    found = _last_line(text)
    if found is None:
        raise BadInput(f"{path}: empty provenance file")
    number, start, stop = found
    decoder = json.JSONDecoder(object_hook=functools.partial(_slim, dropped) if dropped else None)
    try:
        space = _JSON_SPACE.match(text, start)
        record, end = decoder.raw_decode(text, space.end() if space else start)
        if end <= stop and not text[end:stop].strip():
            return number, record
    except (json.JSONDecodeError, RecursionError):
        pass
    return number, _parse(path, text[start:stop], number, dropped)  # for decode's message


def _parse(path: Path, line: str, number: int, dropped: frozenset[str]) -> Any:
    record = decode(path, line, number)
    return _slim_tree(record, dropped) if dropped else record


def _slim_tree(value: Any, dropped: frozenset[str]) -> Any:
    """:func:`_slim` on every object, innermost first, as the decoder's hook applies it."""
    if isinstance(value, dict):
        return _slim(dropped, {k: _slim_tree(v, dropped) for k, v in value.items()})
    if isinstance(value, list):
        return [_slim_tree(v, dropped) for v in value]
    return value


def load_provenance(
    path: Path, commit: str, *, per_round: bool = True, keep: Collection[str] = ()
) -> Provenance | None:
    """The last record of the file, or None where there is none; ``per_round=False``: without
    the variant entries' per-round lists (see the module docstring) but those in ``keep``."""
    if not path.exists():
        return None
    raw = read_capped(path, MAX_PROVENANCE_BYTES, "provenance record")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: provenance record is not UTF-8 text") from None
    del raw
    dropped = frozenset() if per_round else frozenset(PER_ROUND) - frozenset(keep)
    number, record = _decode_last(path, text, dropped)
    if not isinstance(record, dict) or record.get("schema") != PROVENANCE_SCHEMA:
        raise BadInput(f"{path} line {number}: not a {PROVENANCE_SCHEMA} record")
    recorded = record.get("commit")
    if recorded is not None and full_sha(recorded, f"{path} line {number}", "commit") != commit:
        raise BadInput(f"{path} line {number}: record is for commit {recorded}")
    return Provenance(path, number, record)


@dataclass(frozen=True)
class Fingerprints:
    """One fusion's hand-written definitions as a record fingerprints them (docs/DATA.md):
    ``canonical``, the canonical form's (the same on identical code), ``printed``, the printed
    text's (its numbering varies between runs of identical code: equal says "the same",
    different says nothing). Each None where no point's entry has the field (a record from
    before it), an empty set where it is there but holds no valid value (printing failed)."""

    canonical: frozenset[str] | None
    printed: frozenset[str] | None


def definition_fingerprints(
    prov: Provenance | None, fusion: str = DEFAULT_FUSION
) -> Fingerprints | None:
    """The fingerprints of the ``nvfuser`` variant over one fusion's points: which hand-written
    definitions this run measured (one per dtype when nothing changed); None without a record.
    Only 64-lowercase-hex strings count; anything else is ignored (the record is untrusted)."""
    points = prov.record.get("points") if prov is not None else None
    if not isinstance(points, Mapping):
        return None
    found: dict[str, set[str] | None] = {CANONICAL_FIELD: None, DEFINITION_FIELD: None}
    for point in points.values():
        if not isinstance(point, Mapping) or point.get("fusion", DEFAULT_FUSION) != fusion:
            continue
        variant_entries = point.get("variants")
        entry = variant_entries.get(REFERENCE) if isinstance(variant_entries, Mapping) else None
        if not isinstance(entry, Mapping):
            continue
        for field_name, held in found.items():
            if field_name not in entry:
                continue
            held = found[field_name] = set() if held is None else held
            value = entry[field_name]
            if isinstance(value, str) and _SHA256_HEX.fullmatch(value):
                held.add(value)
    canonical, printed = found[CANONICAL_FIELD], found[DEFINITION_FIELD]
    return Fingerprints(
        None if canonical is None else frozenset(canonical),
        None if printed is None else frozenset(printed),
    )
