"""Read the ``<full-sha>.hygiene.jsonl`` sidecar the GPU runner writes beside asv's file.

Before and after each measurement the runner checks the GPU (clocks, throttling, other
processes) and appends one line (docs/DATA.md). A run whose check failed measured a machine in
a state the noise model never saw, so its machine does not gate (bot/tell/machines.py). The
sidecar is optional (old data: "not checked", no verdict changes), but one that is present and
wrong is :class:`BadInput`, as for the provenance record: a check that cannot be read must not
pass for a clean one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.results.limits import MAX_HYGIENE_BYTES, full_sha, read_capped
from bot.results.strict_json import decode
from bot.results.types import BadInput, RunCheck, RunChecks

HYGIENE_SCHEMA = "perfbot-runner-check/1"
WHEN = ("before", "after")
#: Problems kept from one line (the comment shows a few; the rest are counted).
MAX_PROBLEMS = 50


def hygiene_path(results_file: Path, commit: str) -> Path:
    return results_file.parent / f"{commit}.hygiene.jsonl"


def _check(path: Path, number: int, record: Any, commit: str) -> RunCheck:
    where = f"{path} line {number}"
    if not isinstance(record, dict) or record.get("schema") != HYGIENE_SCHEMA:
        raise BadInput(f"{where}: not a {HYGIENE_SCHEMA} record")
    if full_sha(record.get("commit"), where, "commit") != commit:
        raise BadInput(f"{where}: check is for commit {record.get('commit')}, expected {commit}")
    when, at, ok = record.get("when"), record.get("checked_at"), record.get("ok")
    problems, gpu = record.get("problems"), record.get("gpu", {})
    if when not in WHEN:
        raise BadInput(f"{where}: 'when' is {str(when)[:40]!r}, not one of {', '.join(WHEN)}")
    if not isinstance(at, str) or not at:
        raise BadInput(f"{where}: 'checked_at' is not a time")
    if not isinstance(ok, bool):
        raise BadInput(f"{where}: 'ok' is not true or false")
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise BadInput(f"{where}: 'problems' is not a list of texts")
    if not isinstance(gpu, dict):
        raise BadInput(f"{where}: 'gpu' is not an object")
    if not ok and not problems:
        problems = ["check failed (no problem text recorded)"]
    return RunCheck(when, at, ok, tuple(problems[:MAX_PROBLEMS]))


def load_checks(path: Path, commit: str) -> RunChecks | None:
    """The runner's checks of one run, or None when it wrote none (not checked)."""
    if not path.exists():
        return None
    try:
        text = read_capped(path, MAX_HYGIENE_BYTES, "runner check record").decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: runner check record is not UTF-8 text") from None
    numbered = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not numbered:
        raise BadInput(f"{path}: empty runner check record")
    checks = tuple(_check(path, n, decode(path, line, n), commit) for n, line in numbered)
    return RunChecks(path, checks)
