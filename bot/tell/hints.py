"""The root-cause hints as a folded markdown section, for the PR comment and the issue body.

Every finding's text went through escape_md (captures come from the machine the PR's code ran
on). The reproducer is code: it goes in a fence longer than any run of backticks inside it, so
a captured script cannot close the fence and become markdown.
"""

from __future__ import annotations

import re

from bot.fusion.hints import Hints
from bot.fusion.types import Finding
from bot.tell.markdown import Section, escape_md

SUMMARY = "What changed inside the fusion"
MAX_FINDINGS = 12
#: A reproducer longer than this is not posted (the real ones are 1-3 KB): an issue body
#: over GitHub's limit would stop every issue from being filed.
MAX_SCRIPT_CHARS = 20_000


def _fence(code: str) -> str:
    # The bot finds its issues and their links section by HTML-comment markers anywhere in the
    # body: a captured script must not carry one (a zero-width space breaks the "<!--").
    code = code.replace("<!--", "<\u200b!--")
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    tick = "`" * max(3, longest + 1)
    return f"{tick}python\n{code.rstrip()}\n{tick}"


def _bullets(findings: tuple[Finding, ...]) -> list[str]:
    """Material findings first; identical texts were grouped over points already (summarise);
    saved-tensor changes, one line a variant with the other sizes counted."""
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
        out.append(f"- {who}{escape_md(first.text, 400)}{more}{mark}")
    if len(groups) > MAX_FINDINGS:
        out.append(f"- and {len(groups) - MAX_FINDINGS} more kind(s) of change")
    return out


def hints_markdown(h: Hints, *, script: bool = True) -> str:
    """``script=False``: the reproducer named, not posted (an issue body that must stay short)."""
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
        if not script:
            lines.append(
                f"_The script ({len(r.script)} characters) is left out to keep this issue short; "
                "`fusion-perfbot report` with both sides' captures prints it._"
            )
        elif len(r.script) > MAX_SCRIPT_CHARS:
            lines.append(f"_The script is too long to post ({len(r.script)} characters)._")
        else:
            lines.append(_fence(r.script))
    elif h.no_reproducer:
        lines += ["", f"No reproducer: {escape_md(h.no_reproducer, 200)}."]
    return "\n".join(lines)


def hints_summary(h: Hints) -> str:
    material = sum(f.material for f in h.changed)
    owner = f"; likely owner {h.attribution.repository}" if h.attribution.repository else ""
    return f"{SUMMARY} ({material} finding(s) at head against base{owner})"


def hints_section(h: Hints, priority: int = 1, *, script: bool = True) -> Section:
    return Section(hints_summary(h), hints_markdown(h, script=script), (), priority)
