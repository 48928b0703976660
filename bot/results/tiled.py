"""Tiled results: test and benchmark input that must never pass for a measurement.

tests/perf/tile.py stretches a recorded run over a larger size set (each new point carries the
real samples of a recorded one) to test the bot at the nightly sweep's size and beyond. Such a
file reads exactly like a real run, which is its purpose, so it says what it is in a
``perfbot_tiled`` field of its own, in the asv results file (asv ignores unknown top-level keys)
and in the provenance record. The bot reads the field here and says so wherever the run is
shown: a note in the verdict (hence the comment, the issues and the JSON), the run's label in
listings (hence the history website), and the noise model, which refuses to be fitted on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TILED_KEY = "perfbot_tiled"
TILED_SCHEMA = "perfbot-tiled/1"
#: How the website and the listings label a tiled run's state.
TILED_LABEL = "tiled test input, not measured"


def tiled_marker(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The marker of a tiled asv results file or provenance record, or None for a real one.

    Any value under the key counts, however malformed: a file that claims to be tiled is never
    read as a measurement.
    """
    if TILED_KEY not in data:
        return None
    marker = data[TILED_KEY]
    return marker if isinstance(marker, Mapping) else {"schema": repr(marker)[:80]}


def tiled_words(marker: Mapping[str, Any]) -> str:
    """One line on where the tiled samples came from, for a note."""
    source = marker.get("source")
    commit = source.get("commit") if isinstance(source, Mapping) else None
    size_set = source.get("size_set") if isinstance(source, Mapping) else None
    origin = f" from the recorded {size_set or 'unknown'} run {str(commit or 'unknown')[:12]}"
    return f"{TILED_LABEL}: tiled by tests/perf/tile.py{origin}"
