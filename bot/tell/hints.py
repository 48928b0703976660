"""The root-cause hints in words (pure): findings as bullet texts and the reproducer as a fence,
for the comment and the issue (their templates lay them out, bot/tell/view.py gathers them).

Every finding's text went through escape_md (captures come from the machine the PR's code ran
on). The reproducer is code: it goes in a fence longer than any run of backticks inside it, so
a captured script cannot close the fence and become markdown.
"""

from __future__ import annotations

import re

from bot.decide.level import RatioLevel
from bot.fusion.hints import Hints
from bot.fusion.types import Finding
from bot.tell.markdown import escape_md, no_markers

SUMMARY = "What changed inside the fusion"
MAX_FINDINGS = 12
#: A reproducer longer than this is not posted (the real ones are 1-3 KB): an issue body
#: over GitHub's limit would stop every issue from being filed.
MAX_SCRIPT_CHARS = 20_000


def fence(code: str) -> str:
    """``code`` in a python fence no text inside can close; too long a script is named only."""
    if len(code) > MAX_SCRIPT_CHARS:
        return f"_The script is too long to post ({len(code)} characters)._"
    code = no_markers(code)  # a captured script carries no marker of the bot's
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    tick = "`" * max(3, longest + 1)
    return f"{tick}python\n{code.rstrip()}\n{tick}"


def bullets(findings: tuple[Finding, ...]) -> list[str]:
    """One text a kind of finding, material ones first; saved-tensor changes one a variant,
    the other sizes counted (identical texts were grouped over points already)."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in sorted(findings, key=lambda f: not f.material):
        # Saved tensors differ by shape at every size: one line a variant. Other findings keep
        # their own text (a round trip and an op count are different clues).
        groups.setdefault((f.variant, "saved" if f.kind == "saved" else f.text), []).append(f)
    out = []
    for (variant, _), group in list(groups.items())[:MAX_FINDINGS]:
        first = group[0]
        who = (
            ""
            if first.text.startswith("at ")
            else f"{escape_md(variant, 60)}, {escape_md(first.point, 40)}: "
        )
        more = f" (and {len(group) - 1} more point(s) like it)" if len(group) > 1 else ""
        mark = "" if first.material else " _(context)_"
        out.append(f"{who}{escape_md(first.text, 400)}{more}{mark}")
    if len(groups) > MAX_FINDINGS:
        out.append(f"and {len(groups) - MAX_FINDINGS} more kind(s) of change")
    return out


#: The differences from the hand-written fusion that can tell a standing gap, first first: a
#: program split in several fusions, a mask drawn again, more reductions, more segments, a
#: value narrowed and widened back, other inputs, more kernels. Op and cast counts, extents and
#: registers differ at parity too (tests/fusion/test_catalog_hints.py): they are no clue.
CLUE_ORDER = ("fusions", "random", "reductions", "segments", "round trip", "inputs", "kernels")


def _rank(f: Finding) -> int:
    key = "round trip" if "round trip" in f.text else f.kind
    if key == "kernels" and not f.text.startswith("kernels "):
        return len(CLUE_ORDER)  # a kernel's registers or shared memory: no clue
    return CLUE_ORDER.index(key) if key in CLUE_ORDER else len(CLUE_ORDER)


def gap_clue(hints: Hints | None, level: RatioLevel | None) -> str:
    """For a fusion where Thunder stood clearly slower than the hand-written fusion at base and
    stands so at head (its worst point's 95% interval above ``1 + effect`` at head, that point's
    variant's level above it at base), the one difference inside the fusion, the same at base
    and head, that most likely explains it: a line of the catalog's level fold. A gap this change
    opened is the change's, told by its own hints. "" otherwise (no captures, no standing gap,
    no telling difference)."""
    worst = level.together.worst if level is not None and level.together is not None else None
    if hints is None or level is None or worst is None or worst.head.low < 1 + level.effect:
        return ""
    variant = worst.key.variant
    stood = [x for x in level.variants if x.variant == variant and x.base.low >= 1 + level.effect]
    found = [f for f in hints.standing if f.material and variant in f.variant]
    telling = [f for f in found if _rank(f) < len(CLUE_ORDER)]
    if not stood or not telling:
        return ""
    best = min(telling, key=_rank)  # min keeps the first of equal rank: the comparer's order
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"differs inside ({escape_md(variant, 40)}): {escape_md(best.text, 160)}{more}"
