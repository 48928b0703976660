"""The ``noise`` command: the run-to-run spread of every gating point over recorded runs of the
same code (A/A runs), and the per-point thresholds that absorb it (the arithmetic is
bot/decide/noise.py).

Which runs are "the same code" is read from their provenance records: every run of the given
Thunder variant (default ``stock``) on one machine, across all the results directories given,
and they must agree on the versions of torch, nvFuser and Thunder (otherwise their spread would
mix a real change into the noise).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from bot.commands.steps import emit_json, step
from bot.config import Config
from bot.decide.config_check import check_gating
from bot.decide.noise import DEFAULT_MARGIN, report_text, run_to_run, thresholds_toml, to_json
from bot.exitcodes import ExitCode
from bot.results.locate import list_commits, load_commit
from bot.results.types import BadInput, CommitResults

STACK = ("torch", "nvfuser", "thunder")


def _stack(run: CommitResults) -> tuple[str | None, ...]:
    return tuple(run.provenance.text("versions", p) if run.provenance else None for p in STACK)


def _same_code_runs(
    dirs: Sequence[Path], thunder_variant: str, machine: str | None, min_samples: int
) -> tuple[list[CommitResults], list[CommitResults]]:
    """The runs to pool, and those left out because another stack ran them.

    A version change between runs is a real change, not noise: only runs of one stack are
    pooled. When most runs share a stack, that stack's runs are used and the others named;
    when no stack has a clear majority, nothing is guessed.
    """
    runs, seen = [], set()
    for results in dirs:
        for info in list_commits(results):
            if info.thunder_variant == thunder_variant and machine in (None, info.machine):
                if (info.machine, info.commit) in seen:  # the same run in two folders
                    continue
                seen.add((info.machine, info.commit))
                runs.append(load_commit(results, info.commit, info.machine, min_samples))
    machines = sorted({r.machine for r in runs})
    if len(machines) > 1:
        raise BadInput(
            f"runs on several machines ({', '.join(machines)}): choose one with --machine"
        )
    groups = Counter(_stack(r) for r in runs)
    if len(groups) <= 1:
        return runs, []
    (top, count), (_, runner_up) = groups.most_common(2)
    if count == runner_up or count < 2:
        raise BadInput(f"the runs differ in {'/'.join(STACK)} versions: {sorted(map(str, groups))}")
    return [r for r in runs if _stack(r) == top], [r for r in runs if _stack(r) != top]


def _left_out_text(left_out: Sequence[CommitResults]) -> str:
    parts = [
        f"{r.commit[:8]} ({', '.join(f'{p} {v}' for p, v in zip(STACK, _stack(r), strict=True))})"
        for r in left_out
    ]
    return f"Left out, run on another {'/'.join(STACK)} stack: " + "; ".join(parts)


def run_noise(
    dirs: Sequence[Path],
    env: Mapping[str, str],
    out: IO[str],
    *,
    thunder_variant: str,
    machine: str | None,
    config_path: Path | None,
    margin: float = DEFAULT_MARGIN,
    json_path: Path | None = None,
) -> int:
    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, config_path)
    with step("read results", ExitCode.BAD_INPUT):
        s = config.verdict
        runs, left_out = _same_code_runs(
            dirs, thunder_variant, machine or config.machine, s.min_samples
        )
    with step("check configuration against the results", ExitCode.USAGE):
        check_gating(s, runs)
    with step("measure run-to-run spread", ExitCode.BAD_INPUT):
        spreads = run_to_run(runs, s, margin)
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            data = {**to_json(runs, spreads, margin), "left_out": [r.commit for r in left_out]}
            if emit_json(json_path, data, out):
                return ExitCode.OK_NO_REGRESSION  # stdout holds the JSON alone
    out.write(report_text(runs, spreads) + "\n")
    if left_out:
        out.write("\n" + _left_out_text(left_out) + "\n")
    toml = thresholds_toml(spreads, s.effect)
    out.write(
        f"\nThresholds (margin {margin} x largest A/A change, default {s.effect}), "
        "for perfbot.toml's [verdict] section:\n\n" + (toml or "# none above the default") + "\n"
    )
    return ExitCode.OK_NO_REGRESSION
