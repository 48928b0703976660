"""The hand-written definition's fingerprints (``definition_sha256``, and its canonical form's
``definition_canonical_sha256``), on the CPU: a stand-in
FusionDefinition whose printed text is fixed, and fake ``torch`` / ``nvfuser_direct`` modules
for the one function that imports them (benchmarks/engine/variants.py)."""

from __future__ import annotations

import hashlib
import sys
import types
from dataclasses import replace
from typing import Any

import pytest

from benchmarks.engine import point, variants
from benchmarks.fusions import catalog
from benchmarks.fusions import rmsnorm as rmsnorm_module

TEXT = "def nvfuser_fusion(fd : FusionDefinition) -> None :\n    tv3 = fd.define_tensor()\n"
SHA = hashlib.sha256(TEXT.encode()).hexdigest()
#: The canonical form renumbers (benchmarks/engine/digest.py): tv3 is the first tensor.
CANONICAL = hashlib.sha256(TEXT.replace("tv3", "tv0").encode()).hexdigest()
PRINTED: list[str] = []  # each repr of a stand-in, in order


class StandIn:
    """A FusionDefinition as far as the suite uses it: a context manager that executes, and
    whose ``repr`` is the definition's Python text (as nvfuser_direct's ``__repr__``)."""

    text = TEXT

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __repr__(self) -> str:
        PRINTED.append("repr")
        return self.text

    def execute(self, args: list[Any]) -> tuple[str, str]:
        return ("grad_input", "grad_weight")


class Unprintable(StandIn):
    def __repr__(self) -> str:
        raise RuntimeError("translate_fusion failed")


class NotText(StandIn):
    def __repr__(self) -> Any:
        return 42


def test_the_fingerprint_is_the_sha256_of_the_printed_definition() -> None:
    got = variants.definition_fingerprint(StandIn())
    assert got == variants.Fingerprint(SHA, CANONICAL) and got.error is None
    assert len(SHA) == 64 and set(SHA) <= set("0123456789abcdef")


@pytest.mark.parametrize(("fd", "why"), [(Unprintable(), "RuntimeError"), (NotText(), "TypeError")])
def test_a_definition_that_cannot_be_printed_gives_none_and_never_raises(
    fd: StandIn, why: str
) -> None:
    got = variants.definition_fingerprint(fd)
    assert got.sha256 is None and got.canonical is None
    assert got.error is not None and got.error.startswith(why)


@pytest.fixture
def fake_stack(monkeypatch: pytest.MonkeyPatch) -> type[StandIn]:
    """``torch`` and ``nvfuser_direct`` as far as ``variants._nvfuser`` imports them."""
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None)  # type: ignore[attr-defined]
    nvfuser_direct = types.ModuleType("nvfuser_direct")
    nvfuser_direct.FusionDefinition = StandIn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "nvfuser_direct", nvfuser_direct)
    monkeypatch.setattr(rmsnorm_module, "saved_rms", lambda x: "rms")
    # The catalog's RMSNorm backward holds its definition since the catalog: replace it there.
    rmsnorm = catalog.FUSIONS[catalog.DEFAULT]
    monkeypatch.setitem(
        catalog.FUSIONS, catalog.DEFAULT, replace(rmsnorm, define=lambda fd, dtype: None)
    )
    PRINTED.clear()
    return StandIn


INPUTS = {"x": "x", "grad": "grad", "weight": "weight"}


def test_the_nvfuser_variant_carries_its_fingerprint(fake_stack: type[StandIn]) -> None:
    built = variants.build("nvfuser", INPUTS, "bfloat16", "stock")
    assert built.fingerprint == variants.Fingerprint(SHA, CANONICAL)
    assert PRINTED == ["repr"]  # printed once, when defined
    assert built.outputs() == ("grad_input", "grad_weight")
    assert point._definition(built, "bfloat16/8x8") == {
        "definition_sha256": SHA,
        "definition_canonical_sha256": CANONICAL,
    }


def test_an_unprintable_definition_still_builds_and_records_null(
    fake_stack: type[StandIn], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nvfuser_direct = sys.modules["nvfuser_direct"]
    monkeypatch.setattr(nvfuser_direct, "FusionDefinition", Unprintable)
    built = variants.build("nvfuser", INPUTS, "float32", "stock")
    assert built.fingerprint is not None and built.fingerprint.sha256 is None
    built.call()
    assert built.outputs() == ("grad_input", "grad_weight")
    assert point._definition(built, "float32/8x8") == {
        "definition_sha256": None,
        "definition_canonical_sha256": None,
    }
    assert (
        "definition not printed: RuntimeError: translate_fusion failed" in capsys.readouterr().err
    )


def test_the_other_variants_have_no_such_field() -> None:
    other = variants.Variant("eager", lambda: None, lambda: None, lambda: ("a", "b"), 0.1)
    assert other.fingerprint is None and point._definition(other, "bfloat16/8x8") == {}
