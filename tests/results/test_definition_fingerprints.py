"""The hand-written definition's fingerprints as the bot reads them from a provenance record
(bot/results/provenance.py ``definition_fingerprints``): the printed text's and the canonical
form's apart, one fusion's points at a time; 64 lowercase hex strings only, the rest of an
untrusted record ignored; None where no point has the field (records from before it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from paths import DATA

from bot.results.provenance import (
    PROVENANCE_SCHEMA,
    Fingerprints,
    definition_fingerprints,
    load_provenance,
)
from bot.results.types import Provenance

BF16 = "a" * 64
FP32 = "0123456789abcdef" * 4


def _prov(points: Any) -> Provenance:
    return Provenance(
        Path("x.provenance.jsonl"), 1, {"schema": PROVENANCE_SCHEMA, "points": points}
    )


def _point(nvfuser: Any, **others: Any) -> dict[str, Any]:
    return {"variants": {"nvfuser": nvfuser, **others}}


def test_the_set_of_the_nvfuser_entries_values_over_the_points() -> None:
    prov = _prov(
        {
            "bfloat16/8x8": _point({"status": "ok", "definition_sha256": BF16}),
            "bfloat16/16x8": _point({"status": "ok", "definition_sha256": BF16}),
            "float32/8x8": _point({"status": "ok", "definition_sha256": FP32}),
        }
    )
    assert definition_fingerprints(prov) == Fingerprints(None, frozenset({BF16, FP32}))


def printed(prov: Provenance, fusion: str = "rmsnorm_bwd") -> frozenset[str] | None:
    found = definition_fingerprints(prov, fusion)
    return None if found is None else found.printed


def test_each_fusion_and_each_form_apart() -> None:
    prov = _prov(
        {
            "bfloat16/8x8": _point({"definition_sha256": BF16}),
            "gelu_bwd/bfloat16/8x8": {
                "fusion": "gelu_bwd",
                **_point({"definition_sha256": FP32, "definition_canonical_sha256": BF16}),
            },
        }
    )
    assert definition_fingerprints(prov) == Fingerprints(None, frozenset({BF16}))
    gelu = definition_fingerprints(prov, "gelu_bwd")
    assert gelu == Fingerprints(frozenset({BF16}), frozenset({FP32}))
    assert definition_fingerprints(prov, "softmax_bwd") == Fingerprints(None, None)


def test_none_where_no_point_has_the_field() -> None:
    assert definition_fingerprints(None) is None
    assert printed(_prov({"bfloat16/8x8": _point({"status": "ok"})})) is None
    assert printed(_prov({})) is None
    # Another variant's field is not the hand-written definition's.
    other = _point({"status": "ok"}, **{"thunder-prims": {"definition_sha256": BF16}})
    assert printed(_prov({"bfloat16/8x8": other})) is None


def test_a_null_from_a_failed_print_is_present_but_no_value() -> None:
    prov = _prov({"bfloat16/8x8": _point({"status": "ok", "definition_sha256": None})})
    assert printed(prov) == frozenset()


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "A" * 64,  # upper case
        "a" * 63,
        "a" * 65,
        "a" * 64 + "\n",
        "g" * 64,
        "\uff10" * 64,  # full-width digits
        64,
        ["a" * 64],
        {"sha": "a" * 64},
        True,
    ],
)
def test_anything_but_64_lowercase_hex_is_ignored(bad: Any) -> None:
    prov = _prov(
        {
            "bfloat16/8x8": _point({"definition_sha256": bad}),
            "float32/8x8": _point({"definition_sha256": FP32}),
        }
    )
    assert printed(prov) == frozenset({FP32})


@pytest.mark.parametrize(
    "points",
    [
        None,
        [],
        "points",
        {"bfloat16/8x8": None},
        {"bfloat16/8x8": {"error": "crashed"}},
        {"bfloat16/8x8": {"variants": []}},
        {"bfloat16/8x8": {"variants": {"nvfuser": "ok"}}},
        {"bfloat16/8x8": {"variants": {"nvfuser": ["definition_sha256"]}}},
    ],
)
def test_a_record_of_another_shape_reads_as_without_the_field(points: Any) -> None:
    assert printed(_prov(points)) is None


def test_read_from_a_file_without_the_per_round_lists(tmp_path: Path) -> None:
    commit = "ab" * 20
    record = {
        "schema": PROVENANCE_SCHEMA,
        "commit": commit,
        "points": {
            "bfloat16/8x8": _point({"status": "ok", "kernel_us": [1.0], "definition_sha256": BF16})
        },
    }
    path = tmp_path / f"{commit}.provenance.jsonl"
    path.write_text(json.dumps(record) + "\n")
    for per_round in (True, False):
        prov = load_provenance(path, commit, per_round=per_round)
        assert prov is not None and printed(prov) == frozenset({BF16})


def test_the_recorded_h200_runs_predate_the_field() -> None:
    path = next(iter(sorted((DATA / "h200").rglob("*.provenance.jsonl"))))
    prov = load_provenance(path, path.name.split(".")[0], per_round=False)
    assert prov is not None and definition_fingerprints(prov) == Fingerprints(None, None)
