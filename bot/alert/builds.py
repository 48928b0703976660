"""What differs between a machine's base and head, side by side (pure), and what that implies.

A guard's move is news for a side only when that side's build changed: the nvFuser package
(its version, or the wheel's sha256 where a build of it is under test), the Thunder package
(likewise) and what the suite runs of Thunder (its Thunder variant, a slowdown injected after
Thunder's backward: stand-ins for a change of Thunder, Thunder's news), the suite's own
hand-written definition (its fingerprint, a slowdown injected into its timed call: this
suite's news, never nvFuser's), or the stack under both (torch, CUDA, the driver, the GPU).
Everything a side depends on that is the same at base and head makes that side the run's
control: if it moved beyond its threshold anyway, the machine drifted between the two
measurements, and nothing this run says about the other side can be trusted either
(docs/METHOD.md, "The in-run control").

What each guard depends on:

- nvFuser's hand-written fusion: the nvFuser build, the suite's definition of it, the stack;
- Thunder's own kernels: the Thunder build, the nvFuser build (nvFuser compiles the fusions
  Thunder hands it), the suite's Thunder variant, the stack;
- the ratio: all of them; a break: the side whose points fail, as its kernel guard.

The records come from the runner (bot/results/provenance.py): every value is read as text,
compared, and only then put into words by the caller's escaping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.decide.types import Guard, GuardKind
from bot.results.provenance import definition_fingerprints
from bot.results.types import REFERENCE, Provenance

#: Who a guard's move is news for: a package's repository, this suite itself (its own
#: hand-written definition changed), or the stack under both (neither repository's code).
Party = Literal["fuser", "thunder", "suite", "stack"]
#: The parts of a build that can differ between base and head, and whose news each is.
Part = Literal["nvfuser", "thunder", "definition", "thunder_code", "stack"]
PARTY_OF: dict[Part, Party] = {
    "nvfuser": "fuser",
    "thunder": "thunder",
    "definition": "suite",
    "thunder_code": "thunder",
    "stack": "stack",
}
#: What each guard's figures depend on; a break depends on the side whose points fail.
DEPENDS: dict[GuardKind, tuple[Part, ...]] = {
    "nvfuser": ("nvfuser", "definition", "stack"),
    "thunder": ("thunder", "nvfuser", "thunder_code", "stack"),
    "ratio": ("thunder", "nvfuser", "definition", "thunder_code", "stack"),
    "broken": ("thunder", "nvfuser", "definition", "thunder_code", "stack"),
}
_STACK = (
    (("gpu", "name"), "GPU"),
    (("gpu", "driver"), "driver"),
    (("gpu", "cuda"), "CUDA"),
    (("versions", "torch"), "torch"),
    (("versions", "python"), "Python"),
)


@dataclass(frozen=True)
class Builds:
    """What differs between base and head, part by part, in plain words (not yet escaped);
    an empty tuple where the part is the same; ``known`` False when either side has no
    provenance record, and then nothing can be told apart."""

    known: bool
    differs: Mapping[Part, tuple[str, ...]]
    versions: Mapping[Part, str] = field(default_factory=dict)  # the head's, where recorded

    def changed(self, part: Part) -> bool:
        return bool(self.differs.get(part))

    def changed_of(self, guard: GuardKind) -> tuple[Part, ...]:
        return tuple(p for p in DEPENDS[guard] if self.changed(p))

    def words(self, part: Part) -> str:
        return "; ".join(self.differs.get(part, ()))


UNKNOWN = Builds(False, {})


def _package(prov: Provenance, name: str) -> tuple[str | None, str | None]:
    """(version, wheel sha256) of a package: the version the suite imported, and the wheel's
    hash where that package is the one under test (bot/tell/under_test.py)."""
    under = prov.text("under_test", "package") == name
    return prov.text("versions", name), prov.text("under_test", "sha256") if under else None


def _package_diff(b: Provenance, h: Provenance, name: str, shown: str) -> list[str]:
    (bv, bs), (hv, hs) = _package(b, name), _package(h, name)
    out = []
    if bv != hv:
        out.append(f"{shown} {bv or 'unknown'} → {hv or 'unknown'}")
    if bs != hs and bs is not None and hs is not None:
        out.append(f"{shown}'s wheel {bs[:12]} → {hs[:12]} (sha256)")
    return out


def _slowdown(record: Mapping[str, Any], side: str) -> str | None:
    injected = record.get("slowdown")
    if not isinstance(injected, Mapping) or injected.get("side") != side:
        return None
    fraction = injected.get("fraction")
    if isinstance(fraction, (int, float)) and not isinstance(fraction, bool):
        return f"+{100 * float(fraction):g}%"
    return "of unknown size"


def _slowdown_diff(b: Mapping[str, Any], h: Mapping[str, Any], side: str) -> list[str]:
    bs, hs = _slowdown(b, side), _slowdown(h, side)
    if bs == hs:
        return []
    if hs is not None and bs is None:
        return [f"a {hs} slowdown injected at head by the suite's slowdown hook"]
    if bs is not None and hs is None:
        return [f"a {bs} slowdown injected at base by the suite's slowdown hook"]
    return [f"the injected slowdown {bs} → {hs}"]


def _definition_diff(base: Provenance, head: Provenance) -> list[str]:
    """The suite's hand-written fusion: its printed FusionDefinition's fingerprints (docs/DATA.md;
    none recorded at either side: compared by the slowdown alone), its injected slowdown."""
    out = _slowdown_diff(base.record, head.record, "nvfuser")
    bf, hf = definition_fingerprints(base), definition_fingerprints(head)
    if bf is None and hf is None:
        return out
    if not bf or not hf:  # recorded at one side only, or its printing failed
        where = "head" if not bf else "base"
        return [*out, f"the hand-written definition is fingerprinted at {where} only"]
    if bf != hf:
        out.append("the hand-written FusionDefinition's printed text differs")
    return out


def _thunder_code_diff(b: Provenance, h: Provenance) -> list[str]:
    out = _slowdown_diff(b.record, h.record, "thunder")
    bv, hv = b.text("thunder_variant"), h.text("thunder_variant")
    if bv != hv:
        out.append(f"the suite's Thunder variant {bv or 'unknown'} → {hv or 'unknown'}")
    return out


def _stack_diff(b: Provenance, h: Provenance) -> list[str]:
    out = []
    for keys, shown in _STACK:
        bv, hv = b.text(*keys), h.text(*keys)
        if bv != hv:
            out.append(f"{shown} {bv or 'unknown'} → {hv or 'unknown'}")
    return out


def compare_builds(base: Provenance | None, head: Provenance | None) -> Builds:
    """What differs between the two sides' records, part by part."""
    if base is None or head is None:
        return UNKNOWN
    differs: dict[Part, tuple[str, ...]] = {
        "nvfuser": tuple(_package_diff(base, head, "nvfuser", "nvFuser")),
        "thunder": tuple(_package_diff(base, head, "thunder", "Thunder")),
        "definition": tuple(_definition_diff(base, head)),
        "thunder_code": tuple(_thunder_code_diff(base, head)),
        "stack": tuple(_stack_diff(base, head)),
    }
    versions: dict[Part, str] = {
        part: v for part in ("nvfuser", "thunder") if (v := head.text("versions", part))
    }
    return Builds(True, differs, versions)


def depends_of(g: Guard) -> tuple[Part, ...]:
    """What a guard's figures depend on; a break, on the side whose points fail."""
    if g.kind != "broken":
        return DEPENDS[g.kind]
    failing = [p for p in g.points if p.state == "broken"]
    parts: list[Part] = []
    if any(p.key.variant == REFERENCE for p in failing):
        parts += DEPENDS["nvfuser"]
    if any(p.key.variant != REFERENCE for p in failing):
        parts += DEPENDS["thunder"]
    return tuple(dict.fromkeys(parts)) or DEPENDS["broken"]
