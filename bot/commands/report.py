"""The ``report`` command: what the bot would say about two commits, on stdout, and
optionally the verdict as JSON.

It needs no GitHub at all, so a maintainer can see exactly what the bot would say about any
two recorded commits. ``--format`` chooses what stdout gets: ``markdown``, the PR comment as
posted (what CI and scripts read, and the default when stdout is not a terminal); ``text``, the
same comment made plain for a person at a terminal (bot/tell/plain.py: the escapes, entities
and markers that keep it inert on GitHub are gone, tables are columns), the default on a
terminal; ``json``, the verdict alone, so that stdout parses (as ``--json -``). The JSON file is
written before anything is printed: a failed write leaves stdout empty, so a caller never takes
a partial run for a finished one.

The JSON (schema ``fusion-perfbot-report/1``, docs/DATA.md) says the run as the comment and the
status say it, all three rendered from the one decision (bot/alert/decision.py): ``overall``
and ``exit_code`` are the worst over every fusion and machine (a drift is its own state), with
the headline, the status and ``machines``: one entry a fusion a machine, judged or why not, what
changed, and its own verdict (schema ``fusion-perfbot-verdict/2``).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from bot.alert.ack import NO_ACK
from bot.alert.decision import Unit
from bot.alert.model import alert_of
from bot.alert.status import commit_status
from bot.commands.inputs import Loaded
from bot.commands.steps import STDOUT, StepFailed, emit_json, step
from bot.decide.verdict_json import to_json
from bot.exitcodes import ExitCode
from bot.tell.comment import Context, headline_of, render_report
from bot.tell.plain import markdown_to_text

REPORT_SCHEMA = "fusion-perfbot-report/1"


def _checks(u: Unit) -> list[dict[str, object]]:
    return [
        {
            "side": side,
            "folder": r.folder,
            "checked": r.checks is not None,
            "ok": None if r.checks is None else r.checks.ok,
            "failed": [
                {"when": c.when, "checked_at": c.checked_at, "problems": list(c.problems)}
                for c in (r.checks.failed if r.checks else ())
            ],
        }
        for side, r in u.measured.runs()
    ]


def unit_json(u: Unit) -> dict[str, object]:
    """One fusion on one machine as the decision has it, with its measured verdict."""
    b, c, measured = u.builds, u.control, u.measured.verdict
    return {
        "machine": u.machine,
        "fusion": u.fusion,
        "unit": u.unit,
        "compared": measured is not None,
        "state": u.state,
        "judged": u.gates,
        "why_not": u.why_not or None,
        "held": u.measured.held,
        "control": {"finding": c.finding, "guard": c.guard, "size": c.size, "text": c.text}
        if c
        else None,
        "suite": u.suite or None,
        "changed": {part: list(words) for part, words in b.differs.items() if words}
        if b.known
        else None,
        "unknown": dict(b.unknown) if b.known else None,
        "exit_code": int(u.exit_code),
        "runner_checks": _checks(u),
        "verdict": to_json(measured) if measured else None,
    }


def report_json(got: Loaded) -> dict[str, object]:
    """The run as the comment, the status and the exit code say it, from the one decision:
    the worst state over every fusion and machine (a drift its own state), the headline, the
    status `pr` would set with no acknowledgement, and every unit."""
    d, cfg = got.decision, got.config
    alert = alert_of(d, key="report", configured=cfg.issue_repos, pr_repo="", link=cfg.alerts.link)
    status = commit_status(alert, NO_ACK, d.unsettled)
    return {
        "schema": REPORT_SCHEMA,
        "base": got.verdict.base,
        "head": got.head,
        "overall": d.overall,
        "exit_code": int(d.exit_code),
        "headline": markdown_to_text(headline_of(d)),
        "status": {"kind": status.kind, "state": status.state, "description": status.description},
        "not_judged": list(d.not_judged),
        "machines": [unit_json(u) for u in d.units],
    }


def report_format(fmt: str | None, json_path: Path | None, out: IO[str]) -> tuple[str, Path | None]:
    """What stdout gets, and the JSON file to write, if any: ``--format``, else text for a
    person at a terminal and markdown for a pipe (CI and scripts keep reading the comment);
    ``--json -`` is json on stdout, as it always was, and cannot go with another format."""
    if json_path == STDOUT:
        if fmt not in (None, "json"):
            raise StepFailed(
                "check arguments",
                ExitCode.USAGE,
                f"--json - puts the verdict on stdout, where --format {fmt} puts the report: "
                "give --json FILE, or --format json alone",
            )
        return "json", None
    if fmt is not None:
        return fmt, json_path
    return ("text" if out.isatty() else "markdown"), json_path


def run_report(
    got: Loaded, out: IO[str], *, json_path: Path | None, full: bool = False, fmt: str = "markdown"
) -> int:
    """``full``: every point of every guard, however long (the comment shows a handful);
    ``fmt``: what stdout gets (:func:`report_format`)."""
    with step("render comment", ExitCode.BAD_INPUT):
        cfg = got.config
        ctx = Context(run_url=cfg.run_url, site_url=cfg.site_url, docs_url=cfg.docs_url)
        body = render_report(got.decision, ctx, full=full)
    if fmt == "text":
        with step("render text", ExitCode.BAD_INPUT):
            body = markdown_to_text(body)
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            if emit_json(json_path, report_json(got), out):
                return got.decision.exit_code  # stdout holds the JSON alone
    if fmt == "json":
        emit_json(STDOUT, report_json(got), out)
    else:
        out.write(body + "\n")
    return got.decision.exit_code
