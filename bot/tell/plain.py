"""Markdown as plain text for a terminal: what ``report --format text`` prints.

The comment is written for GitHub, which hides what keeps untrusted text inert there
(bot/tell/markdown.py: backslash escapes, entities, zero-width joiners) and what only the bot
reads (HTML comments); printed raw, all of it is noise between a person and the numbers. The
text is made from the rendered markdown rather than rendered a second time, so that it says
exactly what the comment says. The converter knows generic CommonMark and GitHub's tables,
not one layout: headings, fences, tables, quotes, lists and ``<details>`` blocks; escapes, code
spans, entities, tags, links and emphasis inline (bot/tell/plain_inline.py).
Anything else is shown as it is written. Pure and total: every string gives a string, in time
linear in its length.
"""

from __future__ import annotations

import re
import unicodedata

from bot.tell.plain_inline import clean, inline

__all__ = ["display_width", "markdown_to_text"]

_FENCE = re.compile(r"(\s*)(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*)")
_SUMMARY = re.compile(r"<summary(?:\s[^<>]*)?>", re.IGNORECASE)
_SUMMARY_END = re.compile(r"</summary\s*>", re.IGNORECASE)
_DETAILS = re.compile(r"</?details(?:\s[^<>]*)?>", re.IGNORECASE)
_LIST = re.compile(r"(\s*)([-+*]|[0-9]{1,9}[.)])(\s+)(.*)")
_RULE = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})")
_QUOTE = re.compile(r" {0,3}> ?(.*)")
_DELIMITER = re.compile(r":?-+:?")
MAX_QUOTE_DEPTH = 8  # deeper quotes are shown as written: bounded recursion on any input


def markdown_to_text(md: str) -> str:
    """`md` as plain text: markup gone, tables as aligned columns, code indented."""
    lines = clean(md).split("\n")
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
            out.append(f"{m.group(1)}{m.group(2)} {inline(m.group(4))}")
            in_list = True
        else:
            kind = "para"
            in_list = in_list and line[:1].isspace()
            out.append(line[: len(line) - len(line.lstrip())] + inline(line.lstrip()))
        prev = kind
        i += 1
    return out


def _heading_text(text: str) -> str:
    text = text.strip()
    closed = text.rstrip("#")
    if not closed or closed[-1] in " \t":  # a closing sequence of #s
        text = closed.rstrip()
    return inline(text)


def _details(line: str) -> list[str]:
    """A line with ``<details>`` tags: the tags dropped, each summary a heading line."""
    line = _DETAILS.sub("", line)
    out, at = [], 0
    while (m := _SUMMARY.search(line, at)) and (end := _SUMMARY_END.search(line, m.end())):
        before, summary = line[at : m.start()], line[m.end() : end.start()]
        out += [inline(before.strip()), "", inline(summary).strip(), ""]
        at = end.end()
    out.append(inline(line[at:].strip()))
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
    grid = [[" ".join(inline(c).split()) for c in _cells(r)] for r in (header, *rows)]
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
