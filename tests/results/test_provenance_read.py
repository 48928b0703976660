"""The provenance reader finds and decodes the last record without copying a record of several MB
(bot/results/provenance.py): whatever the file, it says what the plain splitlines reader said,
record, line number and message alike; per_round=False leaves out the per-round lists only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import DATA

from bot.results.provenance import PER_ROUND, PROVENANCE_SCHEMA, load_provenance
from bot.results.strict_json import decode
from bot.results.types import BadInput

COMMIT = "ab" * 20
RECORD = {
    "schema": PROVENANCE_SCHEMA,
    "commit": COMMIT,
    "points": {"bfloat16/8x8": {"variants": {"nvfuser": {"status": "ok", "kernel_us": [1.5]}}}},
}


def _plain(path: Path) -> tuple[int, Any] | str:
    """The reader as it was: every line split off, the last one that is not blank decoded."""
    try:
        text = path.read_bytes().decode("utf-8")
        numbered = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not numbered:
            return f"{path}: empty provenance file"
        number, line = numbered[-1]
        record = decode(path, line, number)
        if not isinstance(record, dict) or record.get("schema") != PROVENANCE_SCHEMA:
            return f"{path} line {number}: not a {PROVENANCE_SCHEMA} record"
        return number, record
    except BadInput as exc:
        return str(exc)


def _read(path: Path) -> tuple[int, Any] | str:
    try:
        prov = load_provenance(path, COMMIT)
    except BadInput as exc:
        return str(exc)
    assert prov is not None
    return prov.line, prov.record


LINES = st.sampled_from(
    [
        json.dumps(RECORD),
        "  " + json.dumps(RECORD) + " \t",
        "",
        "   ",
        "\u00a0" + json.dumps(RECORD),
        json.dumps(RECORD)[:-7],
        json.dumps(RECORD) + " {}",
        "[1, 2]",
        "nope",
        '{"a": [1, 2,',
    ]
)
BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\u2028", "\x0c"])


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(LINES, BREAKS), min_size=1, max_size=5), st.booleans())
def test_the_last_record_as_the_plain_reader_found_it(
    tmp_path: Path, lines: list[tuple[str, str]], trailing: bool
) -> None:
    text = "".join(line + brk for line, brk in lines)
    path = tmp_path / f"{COMMIT}.provenance.jsonl"
    path.write_bytes((text if trailing else text.rstrip("\n")).encode())
    assert _read(path) == _plain(path)


@pytest.mark.parametrize("folder", ["h200", "h200-states", "h200-repeats"])
def test_per_round_false_drops_the_per_round_lists_only(folder: str) -> None:
    for path in sorted((DATA / folder).rglob("*.provenance.jsonl"))[:6]:
        commit = path.name.split(".")[0]
        full, slim = load_provenance(path, commit), load_provenance(path, commit, per_round=False)
        assert full is not None and slim is not None and full.line == slim.line
        want = json.loads(json.dumps(full.record))
        for point in want["points"].values():
            for entry in point["variants"].values():
                for key in PER_ROUND:
                    entry.pop(key, None)
        assert slim.record == want and slim.record != full.record


def test_a_kept_list_stays_and_the_other_per_round_lists_go() -> None:
    """The hints read each record again keeping ``kernel_names`` alone (bot/commands/captures.py).
    """
    path = next((DATA / "h200-catalog" / "pair" / "rep-1").rglob("e0cdef8e*.provenance.jsonl"))
    commit = path.name.split(".")[0]
    full = load_provenance(path, commit)
    kept = load_provenance(path, commit, per_round=False, keep=("kernel_names",))
    assert full is not None and kept is not None
    for key, point in full.record["points"].items():
        for variant, entry in point["variants"].items():
            got = kept.record["points"][key]["variants"][variant]
            assert got.get("kernel_names") == entry.get("kernel_names")
            assert not {"kernel_us", "kernel_us_calls", "host_us", "ratio"} & set(got)
