"""The ``noise`` command: the between-run noise model fitted on recorded runs of the same code
(A/A runs), printed and optionally written for perfbot.toml (the arithmetic is
bot/decide/noise_model.py).

Which runs are "the same code" is read from their provenance records: every run of the given
Thunder variant (default ``stock``) on one machine, across all the results directories given,
and they must agree on the versions of torch, nvFuser and Thunder (otherwise their spread would
mix a real change into the noise).
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from bot.commands.noise_file import read_noise_model
from bot.commands.steps import emit_json, step, write_json_atomically
from bot.config import Config
from bot.decide.config_check import check_gating
from bot.decide.noise import report_text
from bot.decide.noise_model import extended, fit, to_json
from bot.exitcodes import ExitCode
from bot.results.locate import expand_repeats, list_commits, load_commit
from bot.results.types import REFERENCE, BadInput, CommitResults

STACK = ("torch", "nvfuser", "thunder")
#: What else must agree for runs to be pooled: samples of different lengths have different noise,
#: and the variants a round interleaves change the kernels' times (on the H200 the 15-us kernels
#: ran 5% slower in runs without the context baselines): a run's variants are compared too.
SAMPLING = ("calls_per_sample",)


def _stack(run: CommitResults) -> tuple[str | None, ...]:
    prov = run.provenance
    versions = tuple(prov.text("versions", p) if prov else None for p in STACK)
    measured = prov.record.get("variants") if prov else None
    variants = ",".join(map(str, measured)) if isinstance(measured, list) else None
    return versions + tuple(prov.text(k) if prov else None for k in SAMPLING) + (variants,)


def same_code_runs(
    dirs: Sequence[Path], thunder_variant: str, machine: str | None, min_samples: int
) -> tuple[list[CommitResults], list[CommitResults]]:
    """The runs to pool, and those left out because another stack ran them.

    A version change between runs is a real change, not noise: only runs of one stack are
    pooled. When most runs share a stack, that stack's runs are used and the others named;
    when no stack has a clear majority, nothing is guessed.
    """
    runs, seen = [], set()
    for results in expand_repeats(dirs):
        for info in list_commits(results):
            if info.thunder_variant == thunder_variant and machine in (None, info.machine):
                run = load_commit(results, info.commit, info.machine, min_samples)
                # The same run copied into two folders is one run; two processes of one commit
                # (a job's repeats, each in its own folder) are two.
                identity = (run.machine, run.commit, run.started_at)
                if identity in seen:
                    continue
                seen.add(identity)
                runs.append(run)
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
    names = (*STACK, "calls per sample", "variants")
    parts = [
        f"{r.commit[:8]} ({', '.join(f'{p} {v}' for p, v in zip(names, _stack(r), strict=True))})"
        for r in left_out
    ]
    return "\n".join(
        textwrap.wrap(
            "Left out, run on another stack, sampling or set of variants: " + "; ".join(parts),
            width=100,
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
    )


def run_noise(
    dirs: Sequence[Path],
    env: Mapping[str, str],
    out: IO[str],
    *,
    thunder_variant: str,
    machine: str | None,
    config_path: Path | None,
    json_path: Path | None = None,
    model_path: Path | None = None,
    extend_path: Path | None = None,
) -> int:
    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, config_path)
    with step("read results", ExitCode.BAD_INPUT):
        s = config.verdict
        runs, left_out = same_code_runs(
            dirs, thunder_variant, machine or config.machine, s.min_samples
        )
    with step("check configuration against the results", ExitCode.USAGE):
        check_gating(s, runs)
    with step("fit the between-run noise model", ExitCode.BAD_INPUT):
        model = fit(runs, keep=lambda v: s.is_gating(v) or v == REFERENCE)
    if extend_path is not None:
        with step(f"extend {extend_path}", ExitCode.BAD_INPUT):
            model = extended(read_noise_model(extend_path), model)
    if model_path is not None:
        with step(f"write {model_path}", ExitCode.USAGE):
            write_json_atomically(model_path, to_json(model))
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            data = {**to_json(model), "left_out": [r.commit for r in left_out]}
            if emit_json(json_path, data, out):
                return ExitCode.OK_NO_REGRESSION  # stdout holds the JSON alone
    out.write(report_text(runs, model, s) + "\n")
    if left_out:
        out.write("\n" + _left_out_text(left_out) + "\n")
    if model_path is not None:
        out.write(f"\nWrote the model to {model_path} (perfbot.toml: [verdict] noise_model)\n")
    return ExitCode.OK_NO_REGRESSION
