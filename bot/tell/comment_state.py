"""What the bot remembers between runs of one PR, kept in its own sticky comment (pure).

Two things: the sizes of the alert's sections the comment showed (so that an acknowledgement
given after it covers those numbers), and the acknowledgement that decides, with the sizes it
covers. They sit in one hidden marker, percent-encoded JSON, which the bot trusts only in the
comment its own login wrote (bot/github/sticky.py finds it by marker AND login), so no one else
can plant an acknowledgement there.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from bot.alert.ack import AckRecord

STATE_MARKER = "<!-- fusion-perfbot-state: {} -->"
_STATE = re.compile(r"<!-- fusion-perfbot-state: (\S*) -->")
SCHEMA = "perfbot-pr-state/1"
MAX_STATE_CHARS = 8_000


@dataclass(frozen=True)
class CommentState:
    sizes: Mapping[str, float] = field(default_factory=dict)
    ack: AckRecord | None = None


def _sizes(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {
        str(k)[:200]: float(v)
        for k, v in raw.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    }


def state_marker(state: CommentState) -> str:
    data: dict[str, Any] = {"schema": SCHEMA, "sizes": dict(state.sizes)}
    if state.ack is not None:
        a = state.ack
        data["ack"] = {
            "source": a.source,
            "by": a.by,
            "reason": a.reason,
            "sizes": dict(a.sizes),
            "lapsed": a.lapsed,
            "url": a.url,
        }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    # quote() leaves "-" alone: "--" would be a comment's end to an HTML parser.
    return STATE_MARKER.format(quote(text, safe="").replace("--", "-%2D"))


def read_state(body: str) -> CommentState | None:
    """The state in one of the bot's comments, read from its place, the comment's last line
    (a state marker's text anywhere else is not the bot's); None when it has none there or it
    does not parse (an older comment, or one edited by hand: the bot then starts afresh)."""
    last = (body or "").replace("\r\n", "\n").rstrip().rpartition("\n")[2]
    found = _STATE.fullmatch(last)
    if found is None or len(found.group(1)) > MAX_STATE_CHARS:
        return None
    try:
        data = json.loads(unquote(found.group(1)))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return None
    raw = data.get("ack")
    ack = None
    if isinstance(raw, dict) and all(isinstance(raw.get(k), str) for k in ("source", "by")):
        url = raw.get("url")
        ack = AckRecord(
            str(raw["source"])[:100],
            str(raw["by"])[:39],
            str(raw.get("reason") or "")[:300],
            _sizes(raw.get("sizes")),
            bool(raw.get("lapsed")),
            url if isinstance(url, str) else None,
        )
    return CommentState(_sizes(data.get("sizes")), ack)
