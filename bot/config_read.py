"""Reading perfbot.toml's tables (pure but the file read): typed values that refuse unknown keys,
the patterns every text setting must match, and the token wrapper no log can show.

Kept apart from bot/config.py (what the settings are and their defaults), so that adding a
setting there is a line of it, not a line among the reading machinery.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

REPO_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
# Characters that could end a markdown link destination or start markup are refused outright.
URL_RE = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%/+-]*)?")


class ConfigError(Exception):
    """A bad setting; the message names the key and the source."""


class Secret:
    """A token: never shown by repr/str/format, only by :meth:`reveal`."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"


def read_toml(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        return data
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config {path}: not valid TOML: {exc}") from None


class Table:
    """Typed reads from one TOML table; refuses unknown keys so typos do not pass silently."""

    def __init__(self, data: Any, name: str, source: str, allowed: set[str]) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: [{name}] must be a table")
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) in [{name}]: {', '.join(unknown)}")
        self.data, self.name, self.source = data, name, source

    def _bad(self, key: str, want: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self.name}.{key} must be {want}")

    def number(self, key: str, default: float, lo: float, hi: float) -> float:
        v = self.data.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self._bad(key, "a number")
        if not lo <= v <= hi:
            raise self._bad(key, f"between {lo} and {hi}")
        return float(v)

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        v = self.data.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise self._bad(key, f"an integer between {lo} and {hi}")
        return v

    def flag(self, key: str, default: bool) -> bool:
        v = self.data.get(key, default)
        if not isinstance(v, bool):
            raise self._bad(key, "true or false")
        return v

    def text(self, key: str, default: str | None, pattern: re.Pattern[str]) -> str | None:
        v = self.data.get(key, default)
        if v is None or v == "":
            return None
        if not isinstance(v, str) or not pattern.fullmatch(v):
            raise self._bad(key, f"a string matching {pattern.pattern}")
        return v

    def strings(
        self, key: str, default: tuple[str, ...], pattern: re.Pattern[str]
    ) -> tuple[str, ...]:
        v = self.data.get(key, list(default))
        if not isinstance(v, list) or not all(
            isinstance(s, str) and pattern.fullmatch(s) for s in v
        ):
            raise self._bad(key, f"a list of strings matching {pattern.pattern}")
        return tuple(v)


NAME_RE = re.compile(r"[A-Za-z0-9_.+*?\[\]/:-]{1,100}")
PATH_RE = re.compile(r"[A-Za-z0-9_./-]{1,200}")
LABEL_RE = re.compile(r"[A-Za-z0-9 _.:-]{1,50}")
LOGIN_RE = re.compile(r"[A-Za-z0-9-]{1,39}(?:\[bot\])?")
