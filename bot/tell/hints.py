"""The root-cause hints as a folded markdown section, for the PR comment and the issue body.

Every finding's text went through escape_md (captures come from the machine the PR's code ran
on). The reproducer is code: it goes in a fence longer than any run of backticks inside it, so
a captured script cannot close the fence and become markdown.
"""

from __future__ import annotations

import re

from bot.fusion.hints import Hints
from bot.tell.markdown import Section, escape_md

SUMMARY = "What changed inside the fusion"
MAX_FINDINGS = 12


def _fence(code: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    tick = "`" * max(3, longest + 1)
    return f"{tick}python\n{code.rstrip()}\n{tick}"


def _bullets(findings: tuple[object, ...]) -> list[str]:
    out = []
    for f in findings[:MAX_FINDINGS]:
        text = getattr(f, "text", "")
        variant = getattr(f, "variant", "")
        mark = "" if getattr(f, "material", True) else " (context)"
        out.append(f"- {escape_md(variant, 40)}: {escape_md(text, 400)}{mark}")
    if len(findings) > MAX_FINDINGS:
        out.append(f"- and {len(findings) - MAX_FINDINGS} more")
    return out


def hints_markdown(h: Hints) -> str:
    lines = [f"**Head against base** ({h.points_compared} point(s) captured at both sides)"]
    lines += _bullets(h.changed) or ["- no capture to compare"]
    lines += ["", "**Thunder against the hand-written fusion, at head**"]
    lines += _bullets(h.against_handwritten) or ["- no difference found"]
    a = h.attribution
    owner = f"**Likely owner: {a.repository}**" if a.repository else "**Likely owner: not clear**"
    lines += ["", owner + (", because:" if a.reasons else ": no evidence either way")]
    lines += [f"- {escape_md(reason, 400)}" for _, reason in a.reasons]
    if h.reproducer is not None:
        r = h.reproducer
        lines += ["", f"**Reproducer** for {escape_md(r.point, 80)}: {escape_md(r.what, 200)}", ""]
        lines.append(_fence(r.script))
    elif h.no_reproducer:
        lines += ["", f"No reproducer: {escape_md(h.no_reproducer, 200)}."]
    return "\n".join(lines)


def hints_summary(h: Hints) -> str:
    material = sum(f.material for f in h.changed)
    owner = f"; likely owner {h.attribution.repository}" if h.attribution.repository else ""
    return f"{SUMMARY} ({material} finding(s) at head against base{owner})"


def hints_section(h: Hints, priority: int = 1) -> Section:
    return Section(hints_summary(h), hints_markdown(h), (), priority)
