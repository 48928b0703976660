"""What differs between a machine's base and head for one fusion, side by side (pure), and what
that implies.

A guard's move is news for a side only when that side's build changed: the nvFuser package
(its version, or the wheel's sha256 where a build of it is under test), the Thunder package
(likewise) and what the suite runs of Thunder for this fusion (its Thunder variant, a slowdown
injected into its timed call, the functions Thunder traces: stand-ins for a change of Thunder,
Thunder's news), the suite's own hand-written definition of this fusion (its canonical
fingerprint, a slowdown injected into its timed call: this suite's news, never nvFuser's), the
suite's measuring code (the engine digest: this suite's news), or the stack under both (torch,
CUDA, the driver, the GPU). Everything is compared fusion by fusion: a slowdown scoped to Bias+GELU
backward, or a change of Softmax's definition, says nothing about any other fusion.

Each part is the same, changed, or **unknown**: a record from before a fingerprint carries
none (the suite digest, a fusion's Thunder side), or carries the printed definition's alone,
whose numbering varies between runs of identical code (equal says "the same", different says
nothing). What the records cannot tell is never read as a change (docs/METHOD.md, "The in-run
control"): an unknown part makes no side the owner and no side the cause.

What each guard depends on:

- nvFuser's hand-written fusion: the nvFuser build, the suite's definition of it, the suite's
  measuring code, the stack;
- Thunder's own kernels: the Thunder build, the nvFuser build (nvFuser compiles the fusions
  Thunder hands it), what the suite runs of Thunder, the measuring code, the stack;
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
from bot.results.types import DEFAULT_FUSION, REFERENCE, Provenance

#: Who a guard's move is news for: a package's repository, this suite itself (its own
#: definition or measuring code changed), or the stack under both (neither repository's code).
Party = Literal["fuser", "thunder", "suite", "stack"]
#: The parts of a build that can differ between base and head, and whose news each is.
Part = Literal["nvfuser", "thunder", "definition", "thunder_code", "suite", "stack"]
PARTY_OF: dict[Part, Party] = {
    "nvfuser": "fuser",
    "thunder": "thunder",
    "definition": "suite",
    "thunder_code": "thunder",
    "suite": "suite",
    "stack": "stack",
}
#: What each guard's figures depend on; a break depends on the side whose points fail.
DEPENDS: dict[GuardKind, tuple[Part, ...]] = {
    "nvfuser": ("nvfuser", "definition", "suite", "stack"),
    "thunder": ("thunder", "nvfuser", "thunder_code", "suite", "stack"),
    "ratio": ("thunder", "nvfuser", "definition", "thunder_code", "suite", "stack"),
    "broken": ("thunder", "nvfuser", "definition", "thunder_code", "suite", "stack"),
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
    """What differs between base and head, part by part, in plain words (not yet escaped): an
    empty tuple where the part is the same; ``unknown``, the parts the records cannot tell, with
    why; ``known`` False when either side has no provenance record, and then nothing can be
    told apart."""

    known: bool
    differs: Mapping[Part, tuple[str, ...]]
    versions: Mapping[Part, str] = field(default_factory=dict)  # the head's, where recorded
    unknown: Mapping[Part, str] = field(default_factory=dict)

    def changed(self, part: Part) -> bool:
        return bool(self.differs.get(part))

    def changed_of(self, guard: GuardKind) -> tuple[Part, ...]:
        return tuple(p for p in DEPENDS[guard] if self.changed(p))

    def unknown_of(self, guard: GuardKind) -> tuple[Part, ...]:
        return tuple(p for p in DEPENDS[guard] if p in self.unknown)

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


def _slowdown(record: Mapping[str, Any], side: str, fusion: str) -> str | None:
    """The slowdown the suite's hook injected into this side's timed call of this fusion (a
    slowdown scoped to another fusion is none of this one's)."""
    injected = record.get("slowdown")
    if not isinstance(injected, Mapping) or injected.get("side") != side:
        return None
    scoped = injected.get("fusion")
    if scoped is not None and scoped != fusion:
        return None
    fraction = injected.get("fraction")
    if isinstance(fraction, (int, float)) and not isinstance(fraction, bool):
        return f"+{100 * float(fraction):g}%"
    return "of unknown size"


def _slowdown_diff(
    b: Mapping[str, Any], h: Mapping[str, Any], side: str, fusion: str
) -> list[str]:
    bs, hs = _slowdown(b, side, fusion), _slowdown(h, side, fusion)
    if bs == hs:
        return []
    if hs is not None and bs is None:
        return [f"a {hs} slowdown injected at head by the suite's slowdown hook"]
    if bs is not None and hs is None:
        return [f"a {bs} slowdown injected at base by the suite's slowdown hook"]
    return [f"the injected slowdown {bs} → {hs}"]


PRINTED_ONLY = (
    "the records fingerprint the printed hand-written definition alone, whose numbering "
    "differs between runs of identical code"
)


def _definition_diff(base: Provenance, head: Provenance, fusion: str) -> tuple[list[str], str]:
    """The suite's hand-written fusion: its canonical fingerprints (docs/DATA.md), else its
    printed text's, and its injected slowdown; and why the records cannot tell, or ""."""
    out = _slowdown_diff(base.record, head.record, "nvfuser", fusion)
    bf, hf = definition_fingerprints(base, fusion), definition_fingerprints(head, fusion)
    b_canon, h_canon = (f.canonical if f else None for f in (bf, hf))
    if b_canon and h_canon:
        changed = ["the hand-written definition's math changed"] if b_canon != h_canon else []
        return [*out, *changed], ""
    b_text, h_text = (f.printed if f else None for f in (bf, hf))
    if b_text is None and h_text is None:
        return out, ""  # from before any fingerprint: compared by the slowdown alone
    if not b_text or not h_text:  # at one side only, or its printing failed
        where = "head" if not b_text else "base"
        return out, f"the hand-written definition is fingerprinted at {where} only"
    return out, ("" if b_text == h_text else PRINTED_ONLY)


def _digest(record: Mapping[str, Any], *keys: str) -> str | None:
    value: Any = record
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, str) and value else None


def _digest_diff(
    b: Provenance, h: Provenance, keys: tuple[str, ...], what: str
) -> tuple[list[str], str]:
    bd, hd = _digest(b.record, *keys), _digest(h.record, *keys)
    if bd is None or hd is None:
        return [], f"the records carry no digest of {what}"
    return ([f"{what} changed (digest {bd[:8]} → {hd[:8]})"] if bd != hd else []), ""


#: How the suite measured, where base and head must agree to be compared like with like.
_SETTINGS = (
    ("rounds", "rounds"),
    ("calls_per_sample", "calls a sample"),
    ("context_calls_per_sample", "context calls a sample"),
)


def _measured_variants(prov: Provenance, fusion: str) -> tuple[str, ...]:
    """The variants the record measured at this fusion's points (a set a run's settings and
    size set chose: the context baselines change what else runs in the rounds)."""
    points = prov.record.get("points")
    found: set[str] = set()
    for point in points.values() if isinstance(points, Mapping) else ():
        if isinstance(point, Mapping) and point.get("fusion", DEFAULT_FUSION) == fusion:
            held = point.get("variants")
            found |= {str(v) for v in held} if isinstance(held, Mapping) else set()
    return tuple(sorted(found))


def _settings_diff(b: Provenance, h: Provenance, fusion: str) -> list[str]:
    """How the two sides were measured, where they differ: a comparison of two settings is
    the suite's, not either package's."""
    out = []
    for key, shown in _SETTINGS:
        bv, hv = b.text(key), h.text(key)
        if bv is not None and hv is not None and bv != hv:
            out.append(f"{shown} {bv} → {hv}")
    bm, hm = _measured_variants(b, fusion), _measured_variants(h, fusion)
    if bm and hm and bm != hm:
        out.append(f"variants measured {', '.join(bm)} → {', '.join(hm)}")
    return out


def _thunder_code_diff(b: Provenance, h: Provenance, fusion: str) -> tuple[list[str], str]:
    out = _slowdown_diff(b.record, h.record, "thunder", fusion)
    bv, hv = b.text("thunder_variant"), h.text("thunder_variant")
    if bv != hv:
        out.append(f"the suite's Thunder variant {bv or 'unknown'} → {hv or 'unknown'}")
    keys = ("fusion_digests", fusion, "thunder")
    traced, why = _digest_diff(b, h, keys, "the functions Thunder traces")
    return [*out, *traced], why


def _stack_diff(b: Provenance, h: Provenance) -> list[str]:
    out = []
    for keys, shown in _STACK:
        bv, hv = b.text(*keys), h.text(*keys)
        if bv != hv:
            out.append(f"{shown} {bv or 'unknown'} → {hv or 'unknown'}")
    return out


def compare_builds(
    base: Provenance | None, head: Provenance | None, fusion: str = DEFAULT_FUSION
) -> Builds:
    """What differs between the two sides' records for one fusion, part by part."""
    if base is None or head is None:
        return UNKNOWN
    definition, definition_why = _definition_diff(base, head, fusion)
    thunder_code, thunder_why = _thunder_code_diff(base, head, fusion)
    suite, suite_why = _digest_diff(base, head, ("engine_digest",), "the suite's measuring code")
    suite = [*suite, *_settings_diff(base, head, fusion)]
    differs: dict[Part, tuple[str, ...]] = {
        "nvfuser": tuple(_package_diff(base, head, "nvfuser", "nvFuser")),
        "thunder": tuple(_package_diff(base, head, "thunder", "Thunder")),
        "definition": tuple(definition),
        "thunder_code": tuple(thunder_code),
        "suite": tuple(suite),
        "stack": tuple(_stack_diff(base, head)),
    }
    told: tuple[tuple[Part, str], ...] = (
        ("definition", definition_why),
        ("thunder_code", thunder_why),
        ("suite", suite_why),
    )
    unknown = {part: why for part, why in told if why and not differs[part]}
    versions: dict[Part, str] = {
        part: v for part in ("nvfuser", "thunder") if (v := head.text("versions", part))
    }
    return Builds(True, differs, versions, unknown)


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
