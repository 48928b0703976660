"""Read the ``<full-sha>.provenance.jsonl`` sidecar that the suite writes next to asv's file.

asv's results cannot hold what the comment must show (library versions, GPU clocks, why a
point failed), so the suite appends one JSON line per run (docs/DATA.md). The sidecar is
optional, but one that is present and wrong is :class:`BadInput`, not silently ignored: a
comment that shows another commit's environment would mislead.
"""

from __future__ import annotations

from pathlib import Path

from bot.results.limits import MAX_PROVENANCE_BYTES, full_sha, read_capped
from bot.results.strict_json import decode
from bot.results.types import BadInput, Provenance

PROVENANCE_SCHEMA = "rmsnorm-bwd-provenance/1"


def load_provenance(path: Path, commit: str) -> Provenance | None:
    if not path.exists():
        return None
    try:
        text = read_capped(path, MAX_PROVENANCE_BYTES, "provenance record").decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: provenance record is not UTF-8 text") from None
    lines = text.splitlines()
    numbered = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise BadInput(f"{path}: empty provenance file")
    number, line = numbered[-1]
    record = decode(path, line, number)
    if not isinstance(record, dict) or record.get("schema") != PROVENANCE_SCHEMA:
        raise BadInput(f"{path} line {number}: not a {PROVENANCE_SCHEMA} record")
    recorded = record.get("commit")
    if recorded is not None and full_sha(recorded, f"{path} line {number}", "commit") != commit:
        raise BadInput(f"{path} line {number}: record is for commit {recorded}")
    return Provenance(path, number, record)
