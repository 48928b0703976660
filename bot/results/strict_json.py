"""JSON decoding whose errors say whether a file was cut short or scrambled, and where.

A results file truncated by a killed run and one edited by hand need different fixes (rerun
vs. repair), so the message tells them apart instead of passing on ``json``'s bare error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bot.results.types import BadInput


def decode(path: Path, text: str, line: int | None = None) -> Any:
    where = f"{path}" if line is None else f"{path} line {line}"
    try:
        return json.loads(text)
    except RecursionError:
        raise BadInput(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        # The parser hit the end of the text, or a token the end cut ("Na", "1.2e", "tru"):
        # the file was cut short, not scrambled. Where the cut falls depends on the file, so
        # both count (issue 38: a results file of another length was called corrupt).
        if _cut_short(text, exc):
            raise BadInput(f"{where}: truncated JSON (ends after {len(text)} characters)") from None
        raise BadInput(
            f"{where}: corrupt JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


#: What a cut can leave of a value at the end of a text: a literal's start, a number's start.
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_NUMBER_START = re.compile(r"-?[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?")


def _cut_short(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the parser failed on what a cut leaves: nothing, an unterminated string, or the
    start of a literal or a number at the very end."""
    rest = text[exc.pos :].rstrip()
    if exc.msg.startswith("Unterminated string"):
        return True
    return any(lit.startswith(rest) for lit in _LITERALS) or bool(_NUMBER_START.fullmatch(rest))


def read_document(path: Path, limit: int, what: str) -> Any:
    """A JSON file read under its size cap, strictly UTF-8, decoded with :func:`decode`'s
    messages: what every reader of a bot-written or asv-written JSON file needs first."""
    from bot.results.limits import read_capped

    raw = read_capped(path, limit, what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    return decode(path, text)
