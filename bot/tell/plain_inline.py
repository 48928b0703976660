"""Inline markdown as plain text: the line level of bot/tell/plain.py.

One line (or table cell) as the text it shows: escapes, entities, autolinks, tags, code spans,
links and emphasis as CommonMark reads them; anything else is shown as it is written. Kept apart
from the block level so that each is small enough to read whole; the block level imports this
module, never the reverse. Pure and total, in time linear in the length of the line.
"""

from __future__ import annotations

import html
import re
import string
import unicodedata
from bisect import bisect_right

__all__ = ["clean", "inline"]

_PUNCT = frozenset(string.punctuation)  # what a backslash escapes (CommonMark: ASCII only)
_SPECIAL = re.compile(r"[\\`&<*_~!\[\]]")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
_ATTR = r"""\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^'\n]{0,1000}'|"[^"\n]{0,1000}"))?"""
_TAG = re.compile(rf"<(?:[A-Za-z][A-Za-z0-9-]*(?:{_ATTR})*\s*/?|/[A-Za-z][A-Za-z0-9-]*\s*)>")
_DEST = re.compile(
    r"""\(\s*(<[^<>\n]{0,2000}>|[^\s()<>]{0,2000}(?:\([^\s()<>]{0,200}\)[^\s()<>]{0,2000})*)"""
    r"""(?:\s+(?:"[^"\n]{0,500}"|'[^'\n]{0,500}'))?\s*\)"""
)
_RUN = re.compile(r"`+|\*+|_+|~+")


def clean(text: str) -> str:
    """Line ends as ``\\n``; format characters (zero-width joiners and spaces, bidi controls)
    dropped and other control characters made spaces, before and after decoding."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        " " if cat == "Cc" and c not in "\n\t" else c
        for c in text
        if (cat := unicodedata.category(c)) != "Cf" and not ("\ud800" <= c <= "\udfff")
    )


class _Delim:
    """A run of ``*``, ``_`` or ``~``: emphasis markers if it pairs, else its characters."""

    __slots__ = ("can_close", "can_open", "char", "count")

    def __init__(self, src: str, i: int, j: int) -> None:
        self.char, self.count = src[i], j - i
        before, after = src[i - 1 : i] or " ", src[j : j + 1] or " "
        pb, pa = _punct(before), _punct(after)
        left = not after.isspace() and (not pa or before.isspace() or pb)
        right = not before.isspace() and (not pb or after.isspace() or pa)
        if self.char == "_":  # no emphasis inside a word: snake_case stays
            left, right = left and (not right or pb), right and (not left or pa)
        self.can_open, self.can_close = left, right

    def key(self) -> str:
        return self.char if self.char != "~" else f"~{self.count}"

    def __str__(self) -> str:
        return self.char * self.count


class _Open:
    """An unmatched ``[`` or ``![`` so far."""

    __slots__ = ("image",)

    def __init__(self, image: bool) -> None:
        self.image = image

    def __str__(self) -> str:
        return "![" if self.image else "["


_Token = str | _Delim | _Open


def _punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _code_spans(src: str) -> dict[int, tuple[int, int]]:
    """Where each code span starts: (where its closing run starts, the runs' length).

    A run of n backticks is closed by the next run of exactly n; found with one pass and a
    binary search a length, so that a line of many unmatched runs costs no more than its length.
    """
    runs = [(m.start(), m.end() - m.start()) for m in re.finditer("`+", src)]
    by_length: dict[int, list[int]] = {}
    for k, (_, n) in enumerate(runs):
        by_length.setdefault(n, []).append(k)
    spans, k = {}, 0
    while k < len(runs):
        start, n = runs[k]
        same = by_length[n]
        at = bisect_right(same, k)
        if at < len(same):
            spans[start] = (runs[same[at]][0], n)
            k = same[at]
        k += 1
    return spans


def _run_end(src: str, i: int) -> int:
    """Where the run of the character at `i` ends."""
    m = _RUN.match(src, i)
    return i + 1 if m is None else m.end()


def inline(src: str) -> str:
    """One line (or cell) of inline markdown as the text it shows."""
    toks: list[_Token] = []
    opens: list[int] = []  # indices in toks of the brackets that may still start a link
    spans = _code_spans(src)
    i = 0
    while i < len(src):
        m = _SPECIAL.search(src, i)
        j = len(src) if m is None else m.start()
        if j > i:
            toks.append(src[i:j])
        if m is None:
            break
        i, c = j, src[j]
        if c == "\\":
            nxt = src[i + 1 : i + 2]
            toks.append(nxt if nxt in _PUNCT else "" if not nxt else "\\")
            i += 2 if nxt in _PUNCT else 1
        elif c == "`":
            n = _run_end(src, i) - i
            if i in spans:
                close, n = spans[i]
                code = src[i + n : close]
                both = code.startswith(" ") and code.endswith(" ") and code.strip()
                toks.append(code[1:-1] if both else code)
                i = close + n
            else:
                toks.append(src[i : i + n])
                i += n
        elif c in "*_~":
            n = _run_end(src, i) - i
            toks.append(_Delim(src, i, i + n))
            i += n
        elif c == "[" or (c == "!" and src.startswith("[", i + 1)):
            opens.append(len(toks))
            toks.append(_Open(c == "!"))
            i += 2 if c == "!" else 1
        elif c == "]" and opens and (d := _DEST.match(src, i + 1)) is not None:
            k = opens.pop()
            image = isinstance(toks[k], _Open) and toks[k].image  # type: ignore[union-attr]
            label = _render(toks[k + 1 :]).strip()
            url = html.unescape(d.group(1).strip("<>"))
            del toks[k:]
            toks.append(url if not label or label == url else f"{label} ({url})")
            opens = opens if image else []  # no link inside a link
            i = d.end()
        elif c == "&" and (e := _ENTITY.match(src, i)) is not None:
            toks.append(html.unescape(e.group()))
            i = e.end()
        elif c == "<" and (a := _AUTOLINK.match(src, i)) is not None:
            toks.append(a.group(1))
            i = a.end()
        elif c == "<" and (t := _TAG.match(src, i)) is not None:
            toks.append("\n" if t.group()[1:3].lower() == "br" else "")
            i = t.end()
        else:
            toks.append(c)
            i += 1
    return clean(_render(toks))


def _render(toks: list[_Token]) -> str:
    """Pair emphasis markers (CommonMark's delimiter algorithm, without the rule of three)
    and drop the pairs; what does not pair is shown as written."""
    stack: list[_Delim] = []
    bottom: dict[str, int] = {}  # per marker: below this stack depth, no opener can match
    for t in toks:
        if not isinstance(t, _Delim):
            continue
        while t.can_close and t.count:
            k = len(stack) - 1
            while k >= bottom.get(t.key(), 0) and stack[k].key() != t.key():
                k -= 1
            if k < bottom.get(t.key(), 0):
                bottom[t.key()] = len(stack)
                break
            use = t.count if t.char == "~" else min(2, t.count, stack[k].count)
            stack[k].count -= use
            t.count -= use
            del stack[k + (1 if stack[k].count else 0) :]
            bottom = {key: min(at, len(stack)) for key, at in bottom.items()}
        if t.count and t.can_open and (t.char != "~" or t.count <= 2):
            stack.append(t)
    return "".join(str(t) for t in toks)
