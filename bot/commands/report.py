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

The JSON is the verdict of the first machine compared (schema ``fusion-perfbot-verdict/2``,
bot/decide/verdict_json.py, unchanged for one machine), plus ``exit_code`` (the worst over
the machines) and ``machines``: one entry a machine, with its own verdict, whether it gates,
and its runner checks (docs/DATA.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from bot.commands.inputs import Loaded, machine_code, report_code
from bot.commands.steps import STDOUT, StepFailed, emit_json, step
from bot.decide.verdict_json import to_json
from bot.exitcodes import ExitCode
from bot.tell.comment import Context, render_report
from bot.tell.machines import MachineReport, worst_state
from bot.tell.plain import markdown_to_text


def _checks(m: MachineReport) -> list[dict[str, object]]:
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
        for side, r in m.runs()
    ]


def machine_json(m: MachineReport) -> dict[str, object]:
    return {
        "machine": m.machine,
        "fusion": m.fusion,
        "compared": m.verdict is not None,
        "not_compared": m.missing,
        "overall": m.verdict.overall if m.verdict else "not compared",
        "gates": m.gates,
        "held": m.held,
        "drift": m.drift.text if m.drift else None,
        "not_gating": m.not_gating,
        "changed": {part: list(words) for part, words in m.builds.differs.items() if words}
        if m.builds.known
        else None,
        "exit_code": int(machine_code(m)),
        "runner_checks": _checks(m),
        "verdict": to_json(m.verdict) if m.verdict else None,
    }


def report_json(got: Loaded) -> dict[str, object]:
    reports = got.reports()
    return {
        **to_json(got.verdict),
        "exit_code": int(report_code(got)),
        "overall_over_machines": worst_state(reports),
        "machines": [machine_json(m) for m in reports],
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
        body = render_report(got.reports(), ctx, full=full)
    if fmt == "text":
        with step("render text", ExitCode.BAD_INPUT):
            body = markdown_to_text(body)
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            if emit_json(json_path, report_json(got), out):
                return report_code(got)  # stdout holds the JSON alone
    if fmt == "json":
        emit_json(STDOUT, report_json(got), out)
    else:
        out.write(body + "\n")
    return report_code(got)
