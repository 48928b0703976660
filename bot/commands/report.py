"""The ``report`` command: the PR comment on stdout, and optionally the verdict as JSON.

It needs no GitHub at all, so a maintainer can see exactly what the bot would say about any
two recorded commits. The JSON is written before anything is printed: a failed write leaves
stdout empty, so a caller never takes a partial run for a finished one. ``--json -`` puts the
JSON on stdout instead of the comment, so that stdout parses.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from bot.commands.inputs import Loaded, verdict_code
from bot.commands.steps import emit_json, step
from bot.decide.verdict_json import to_json
from bot.exitcodes import ExitCode
from bot.tell.comment import Context, render_comment


def run_report(got: Loaded, out: IO[str], *, json_path: Path | None) -> int:
    with step("render comment", ExitCode.BAD_INPUT):
        ctx = Context(run_url=got.config.run_url, site_url=got.config.site_url)
        body = render_comment(got.verdict, ctx, got.base.provenance, got.head.provenance)
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            if emit_json(json_path, to_json(got.verdict), out):
                return verdict_code(got.verdict)  # stdout holds the JSON alone
    out.write(body + "\n")
    return verdict_code(got.verdict)
