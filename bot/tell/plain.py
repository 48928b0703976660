"""Markdown as plain text for a terminal: what ``report --format text`` prints.

The comment is written for GitHub, which hides what keeps untrusted text inert there
(bot/tell/markdown.py: backslash escapes, entities, zero-width joiners) and what only the bot
reads (HTML comments); printed raw, all of it is noise between a person and the numbers. The
text is made from the rendered markdown rather than rendered a second time, so that it says
exactly what the comment says. The converter knows generic CommonMark and GitHub's tables,
not one layout: headings, fences, tables, quotes, lists and ``<details>`` blocks; escapes, code
spans, entities, tags, links and emphasis inline. Anything else is shown as it is written.
Pure and total: every string gives a string, in time linear in its length.
"""

from __future__ import annotations

import html
import re
import string
import unicodedata
from bisect import bisect_right

__all__ = ["display_width", "markdown_to_text"]

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
_FENCE = re.compile(r"(\s*)(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*)")
_SUMMARY = re.compile(r"<summary(?:\s[^<>]*)?>", re.IGNORECASE)
_SUMMARY_END = re.compile(r"</summary\s*>", re.IGNORECASE)
_DETAILS = re.compile(r"</?details(?:\s[^<>]*)?>", re.IGNORECASE)
_LIST = re.compile(r"(\s*)([-+*]|[0-9]{1,9}[.)])(\s+)(.*)")
_RULE = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})")
_QUOTE = re.compile(r" {0,3}> ?(.*)")
_DELIMITER = re.compile(r":?-+:?")
_RUN = re.compile(r"`+|\*+|_+|~+")
MAX_QUOTE_DEPTH = 8  # deeper quotes are shown as written: bounded recursion on any input


def markdown_to_text(md: str) -> str:
    """`md` as plain text: markup gone, tables as aligned columns, code indented."""
    lines = _clean(md).split("\n")
    return _squeeze(_blocks(_drop_comments(lines), 0))


def display_width(text: str) -> int:
    """Columns `text` takes on a terminal: wide (East Asian, emoji) 2, marks and format 0."""
    width, last = 0, 0
    for ch in text:
        if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            # VS16 asks for the emoji form of the character before it: two columns.
            width, last = (width + 1, 2) if ch == "\ufe0f" and last == 1 else (width, last)
            continue
        last = 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        width += last
    return width


def _clean(text: str) -> str:
    """Line ends as ``\\n``; format characters (zero-width joiners and spaces, bidi controls)
    dropped and other control characters made spaces, before and after decoding."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        " " if cat == "Cc" and c not in "\n\t" else c
        for c in text
        if (cat := unicodedata.category(c)) != "Cf" and not ("\ud800" <= c <= "\udfff")
    )


def _squeeze(lines: list[str]) -> str:
    """Trailing spaces off, one blank line at most between blocks, none around the text."""
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def _fence(line: str) -> tuple[str, str, int] | None:
    """An opening code fence: (its indentation, its character, its length)."""
    m = _FENCE.fullmatch(line)
    if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None
    return m.group(1), m.group(2)[0], len(m.group(2))


def _closes(line: str, char: str, length: int) -> bool:
    stripped = line.strip()
    return len(stripped) >= length and stripped == char * len(stripped)


def _drop_comments(lines: list[str]) -> list[str]:
    """HTML comments removed outside code fences (a line that held only one goes too)."""
    out: list[str] = []
    fence: tuple[str, str, int] | None = None
    inside = False
    for line in lines:
        if fence is not None:
            out.append(line)
            fence = None if _closes(line, fence[1], fence[2]) else fence
            continue
        had = line
        if inside:
            end = line.find("-->")
            if end < 0:
                continue
            line, inside = line[end + 3 :], False
        if had == line and (fence := _fence(line)) is not None:
            out.append(line)
            continue
        while (start := line.find("<!--")) >= 0:
            end = line.find("-->", start + 4)
            if end < 0:
                line, inside = line[:start], True
                break
            line = line[:start] + line[end + 3 :]
        if line.strip() or not had.strip():
            out.append(line)
    return out


def _blocks(lines: list[str], depth: int) -> list[str]:
    """The block structure, line by line: what each kind of block becomes as text."""
    out: list[str] = []
    i, prev, in_list = 0, "blank", False
    while i < len(lines):
        line = lines[i]
        kind = "other"
        if (fence := _fence(line)) is not None:
            out.append("")
            i += 1
            while i < len(lines) and not _closes(lines[i], fence[1], fence[2]):
                code = lines[i]
                code = code[len(fence[0]) :] if code.startswith(fence[0]) else code.lstrip()
                out.append("    " + code.expandtabs(4))
                i += 1
            out.append("")
        elif not line.strip():
            kind = "blank"
            out.append("")
        elif prev in ("blank", "code") and not in_list and line.expandtabs(4)[:4] == "    ":
            out.append(line.expandtabs(4))  # indented code: shown as written
            kind = "code"
        elif (rows := _table_at(lines, i)) is not None:
            out += ["", *_table(lines[i], lines[i + 1], lines[i + 2 : i + rows]), ""]
            i += rows - 1
        elif (m := _HEADING.match(line)) is not None:
            out += ["", _heading_text(m.group(2)), ""]
        elif prev == "para" and (set(line.strip()) == {"="} or set(line.strip()) == {"-"}):
            out.append("")  # a setext heading's underline: the line above is the heading
        elif _RULE.fullmatch(line):
            out += ["", "---", ""]
        elif _QUOTE.match(line) and depth < MAX_QUOTE_DEPTH:
            quoted = []
            while i < len(lines) and (q := _QUOTE.match(lines[i])) is not None:
                quoted.append(q.group(1))
                i += 1
            i -= 1
            inner = _squeeze(_blocks(quoted, depth + 1)).split("\n")
            out += ["", *(f"> {t}".rstrip() for t in inner), ""]
        elif _DETAILS.search(line) or _SUMMARY.search(line):
            out += _details(line)
        elif (m := _LIST.fullmatch(line)) is not None and not _RULE.fullmatch(line):
            out.append(f"{m.group(1)}{m.group(2)} {_inline(m.group(4))}")
            in_list = True
        else:
            kind = "para"
            in_list = in_list and line[:1].isspace()
            out.append(line[: len(line) - len(line.lstrip())] + _inline(line.lstrip()))
        prev = kind
        i += 1
    return out


def _heading_text(text: str) -> str:
    text = text.strip()
    closed = text.rstrip("#")
    if not closed or closed[-1] in " \t":  # a closing sequence of #s
        text = closed.rstrip()
    return _inline(text)


def _details(line: str) -> list[str]:
    """A line with ``<details>`` tags: the tags dropped, each summary a heading line."""
    line = _DETAILS.sub("", line)
    out, at = [], 0
    while (m := _SUMMARY.search(line, at)) and (end := _SUMMARY_END.search(line, m.end())):
        before, summary = line[at : m.start()], line[m.end() : end.start()]
        out += [_inline(before.strip()), "", _inline(summary).strip(), ""]
        at = end.end()
    out.append(_inline(line[at:].strip()))
    return out


def _cells(line: str) -> list[str]:
    """A table row's cells: split at pipes that are not escaped (``\\|`` is a pipe)."""
    s = line.strip()
    s = s[1:] if s.startswith("|") else s
    s = s[:-1] if s.endswith("|") and not s.endswith("\\|") else s
    cells, cur, k = [], [], 0
    while k < len(s):
        if s.startswith("\\|", k):
            cur.append("|")
            k += 2
            continue
        if s[k] == "|":
            cells.append("".join(cur))
            cur = []
        else:
            cur.append(s[k])
        k += 1
    return [*cells, "".join(cur)]


def _table_at(lines: list[str], i: int) -> int | None:
    """The number of lines of the table that starts at line `i` (GitHub's rules), if any."""
    if i + 1 >= len(lines) or "|" not in lines[i] or "|" not in lines[i + 1]:
        return None
    delimiter = [c.strip() for c in _cells(lines[i + 1])]
    if not all(_DELIMITER.fullmatch(c) for c in delimiter):
        return None
    if len(delimiter) != len(_cells(lines[i])):
        return None
    end = i + 2
    while end < len(lines) and lines[end].strip() and "|" in lines[end]:
        if _fence(lines[end]) is not None or _HEADING.match(lines[end]):
            break
        end += 1
    return end - i


def _table(header: str, delimiter: str, rows: list[str]) -> list[str]:
    """Aligned columns, padded by display width, the header over a dashed rule."""
    grid = [[" ".join(_inline(c).split()) for c in _cells(r)] for r in (header, *rows)]
    ncol = max(len(r) for r in grid)
    for r in grid:
        r += [""] * (ncol - len(r))
    widths = [max(1, *(display_width(r[k]) for r in grid)) for k in range(ncol)]
    aligns = [_align(c.strip()) for c in _cells(delimiter)] + ["<"] * ncol

    def row(cells: list[str]) -> str:
        return "  ".join(
            _pad(c, w, a) for c, w, a in zip(cells, widths, aligns, strict=False)
        ).rstrip()

    # The last column is not padded, so its rule need not run as long as its longest cell.
    rules = [*widths[:-1], min(widths[-1], max(display_width(grid[0][-1]), 20))]
    return [row(grid[0]), "  ".join("-" * w for w in rules), *(row(r) for r in grid[1:])]


def _align(delimiter: str) -> str:
    if delimiter.startswith(":") and delimiter.endswith(":") and len(delimiter) > 1:
        return "^"
    return ">" if delimiter.endswith(":") else "<"


def _pad(cell: str, width: int, align: str) -> str:
    room = max(0, width - display_width(cell))
    left = {"<": 0, ">": room, "^": room // 2}[align]
    return " " * left + cell + " " * (room - left)


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


def _inline(src: str) -> str:
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
    return _clean(_render(toks))


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
