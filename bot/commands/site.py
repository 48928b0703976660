"""The ``site`` command: build the history website, or build it and serve it (docs/SITE.md).

Only the step and its exit code live here; bot/site does the work, and is imported on first
use like the rest of that package. Bad results exit 3, a bad asv.conf.json or output folder 2;
a failing ``asv publish`` or site audit (SiteBuildError) is also 3, as the results are what it
could not publish.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.commands.steps import step
from bot.exitcodes import ExitCode

if TYPE_CHECKING:
    from bot.site.history import Mode


def run_site_build(
    out: IO[str],
    *,
    results: Sequence[Path],
    site_out: Path,
    asv_conf: Path,
    history: Mode,
    config: Path | None = None,
    history_json: Path | None = None,
) -> int:
    from bot.site import build_site

    with step("site build", ExitCode.BAD_INPUT):
        report = build_site(
            results,
            site_out,
            conf_path=asv_conf,
            history=history,
            config_path=config,
            history_json=history_json,
        )
        out.write("\n".join(report.lines()) + "\n")
    return ExitCode.OK_NO_REGRESSION


def run_site_serve(
    *,
    results: Sequence[Path],
    asv_conf: Path,
    host: str,
    port: int,
    config: Path | None = None,
    history_json: Path | None = None,
) -> int:
    from bot.site import serve_results

    with step("site serve", ExitCode.BAD_INPUT):
        serve_results(
            results,
            conf_path=asv_conf,
            host=host,
            port=port,
            config_path=config,
            history_json=history_json,
        )
    return ExitCode.OK_NO_REGRESSION
