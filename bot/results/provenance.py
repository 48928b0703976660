"""Read the ``<full-sha>.provenance.jsonl`` sidecar that the suite writes next to asv's file.

asv's results cannot hold what the comment must show (library versions, GPU clocks, why a
point failed), so the suite appends one JSON line per run (docs/DATA.md). The sidecar is
optional, but one that is present and wrong is :class:`BadInput`, not silently ignored: a
comment that shows another commit's environment would mislead.
"""

from __future__ import annotations

from pathlib import Path

from bot.results.strict_json import decode
from bot.results.types import BadInput, Provenance

PROVENANCE_SCHEMA = "rmsnorm-bwd-provenance/1"


def load_provenance(path: Path, commit: str) -> Provenance | None:
    if not path.exists():
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read provenance: {exc}") from None
    numbered = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise BadInput(f"{path}: empty provenance file")
    number, line = numbered[-1]
    record = decode(path, line, number)
    if not isinstance(record, dict) or record.get("schema") != PROVENANCE_SCHEMA:
        raise BadInput(f"{path} line {number}: not a {PROVENANCE_SCHEMA} record")
    if isinstance(record.get("commit"), str) and record["commit"] != commit:
        raise BadInput(f"{path} line {number}: record is for commit {record['commit']}")
    return Provenance(path, number, record)
