r"""What reaches a log: every line the bot prints, made unable to run a workflow command.

The GitHub Actions runner reads a job's output line by line and acts on two forms (read at the
source, actions/runner ActionCommand.cs): a line whose text, after leading white space, starts
with ``::`` (``::error::``, ``::add-mask::``, ``::stop-commands::``), and the legacy ``##[``
anywhere in a line. Both tests are culture-sensitive string comparisons, which skip
zero-width and other ignorable characters, so ``\u200b::error::`` or ``#\u200b#[`` would still
count. Hence the rule here: a line that would START a command once such characters are
dropped gets a visible backslash in front (``\::error::``); a line that would CONTAIN ``##[``
gets one before each ``[``. Lines end at ``\n``; a carriage return (also a line end to the
runner) and every other control character are shown escaped (``\x0d``), so untrusted text
cannot begin a line of its own.

The bot prints names from results files, error texts and URLs from GitHub's answers: all of it
goes through :class:`LogSafeWriter`, which the command line wraps around stdout and stderr.
"""

from __future__ import annotations

import io
import re
import unicodedata
from typing import TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
#: Unicode categories a culture-sensitive comparison may skip or fold: format characters
#: (zero-width space and joiners, bidi marks, soft hyphen) and combining marks.
IGNORABLE = frozenset({"Cf", "Mn", "Me"})
COMMAND = "::"
LEGACY_COMMAND = "##["


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` without the characters a culture-sensitive comparison may not see."""
    return "".join(c for c in text if c.isascii() or unicodedata.category(c) not in IGNORABLE)


def safe_line(line: str) -> str:
    """One line (without its newline) as text the runner only prints."""
    line = _CONTROL.sub(_shown, line)
    seen = visible(line)
    if LEGACY_COMMAND in seen:
        line = line.replace("[", "\\[")
    if seen.lstrip().startswith(COMMAND):
        line = "\\" + line
    return line


def safe_text(text: str) -> str:
    """Several lines: each made safe, the newlines kept."""
    return "\n".join(safe_line(line) for line in text.split("\n"))


class LogSafeWriter(io.TextIOBase):
    """A text stream that writes whole lines, each through :func:`safe_line`.

    Lines are held until their newline (or a flush) so that a command split over two writes
    (``"::"`` then ``"error::x"``) is still seen whole.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        if lines:
            self._stream.write("".join(safe_line(line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if getattr(self._stream, "closed", False):
            return  # collected after its stream closed (Python 3.13 says so at exit)
        if self._pending:
            self._stream.write(safe_line(self._pending))
            self._pending = ""
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()


def quoted(value: object, limit: int = 200) -> str:
    """An untrusted value for a log line: an ASCII literal (``'...'``, every control and
    non-ASCII character escaped as ``\\x..``/``\\u..``), cut at `limit` characters. It starts
    with a quote, so it cannot begin a workflow command even placed first on a line, and it
    cannot end the line early. For values read from an artifact or an API answer."""
    text = value if isinstance(value, str) else str(value)
    cut = text[:limit]
    shown = ascii(cut).replace(LEGACY_COMMAND, "#\\x23[")  # ##[ is a command anywhere
    return shown + ("..." if len(text) > limit else "")


def log_line(text: str) -> str:
    """One line the bot writes itself, made safe even when printed around the LogSafeWriter
    (the workflow's own steps): no control character, never a workflow command."""
    return safe_line(text.replace("\n", " "))


def one_line(text: str) -> str:
    """A message that must stay one log line (a step's failure): its line breaks written as
    ``\\n`` and ``\\r``, so that a name with a newline in it (a results file's, read from an
    artifact) cannot start a second line that looks like the bot's own."""
    return text.replace("\r", "\\r").replace("\n", "\\n")
