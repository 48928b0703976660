"""The ``calibrate`` command: read one real base/head pair and report the verdict's A/A false
alarms and power on it (the resampling itself is bot/decide/calibrate.py).

It reads the results itself rather than taking a decided verdict, because it overrides the
bootstrap resamples before any verdict is computed (``--resamples``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO

from bot.commands.inputs import Selection
from bot.commands.steps import emit_json, step
from bot.config import Config
from bot.decide.calibrate import Mode, calibrate, report_text
from bot.decide.calibrate import to_json as calibration_json
from bot.decide.config_check import check_gating
from bot.decide.point_power import PointPower, per_point_power
from bot.decide.point_power import report_text as point_power_text
from bot.decide.point_power import to_json as point_power_json
from bot.exitcodes import ExitCode
from bot.results.locate import load_pair


def run_calibrate(
    sel: Selection,
    env: Mapping[str, str],
    out: IO[str],
    *,
    trials: int,
    power_trials: int,
    mode: Mode,
    resamples: int | None,
    json_path: Path | None,
    point_trials: int = 0,
) -> int:
    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, sel.config)
        s = config.verdict if resamples is None else replace(config.verdict, resamples=resamples)
    with step("read results", ExitCode.BAD_INPUT):
        machine = sel.machine or config.machine
        base, head = load_pair(sel.results, sel.base, sel.head, machine, s.min_samples)
    with step("check configuration against the results", ExitCode.USAGE):
        check_gating(s, (base, head))
    with step("calibrate", ExitCode.BAD_INPUT):
        result = calibrate(base, head, s, trials=trials, power_trials=power_trials, mode=mode)
    points: tuple[PointPower, ...] = ()
    if point_trials > 0:
        with step("per-point power", ExitCode.BAD_INPUT):
            points = per_point_power(base, s, trials=point_trials, mode=mode)
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            data = calibration_json(result)
            if points:
                data["per_point_power"] = point_power_json(points)
            if emit_json(json_path, data, out):
                return ExitCode.OK_NO_REGRESSION  # stdout holds the JSON alone
    out.write(report_text(result) + "\n")
    if points:
        out.write("\n" + point_power_text(points) + "\n")
    return ExitCode.OK_NO_REGRESSION
