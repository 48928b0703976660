"""The ``report`` command: the PR comment on stdout, and optionally the verdict as JSON.

It needs no GitHub at all, so a maintainer can see exactly what the bot would say about any
two recorded commits. The JSON is written before anything is printed: a failed write leaves
stdout empty, so a caller never takes a partial run for a finished one. ``--json -`` puts the
JSON on stdout instead of the comment, so that stdout parses.

The JSON is the verdict of the first machine compared (schema ``fusion-perfbot-verdict/2``,
bot/decide/verdict_json.py, unchanged for one machine), plus ``exit_code`` (the worst over
the machines) and ``machines``: one entry a machine, with its own verdict, whether it gates,
and its runner checks (docs/DATA.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from bot.commands.inputs import Loaded, machine_code, report_code
from bot.commands.steps import emit_json, step
from bot.decide.verdict_json import to_json
from bot.exitcodes import ExitCode
from bot.tell.comment import Context
from bot.tell.machines import MachineReport, render_report, worst_state


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
        "compared": m.verdict is not None,
        "not_compared": m.missing,
        "overall": m.verdict.overall if m.verdict else "not compared",
        "gates": m.gates,
        "held": m.held,
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


def run_report(got: Loaded, out: IO[str], *, json_path: Path | None, full: bool = False) -> int:
    """``full``: every row of every table, however long (a sweep is otherwise summarised)."""
    with step("render comment", ExitCode.BAD_INPUT):
        ctx = Context(run_url=got.config.run_url, site_url=got.config.site_url)
        body = render_report(got.reports(), ctx, {}, full=full)
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            if emit_json(json_path, report_json(got), out):
                return report_code(got)  # stdout holds the JSON alone
    out.write(body + "\n")
    return report_code(got)
