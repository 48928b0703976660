"""What every shards command shares: the exit codes, the suite's settings from the arguments,
and the digest of the measuring code that shards of one commit must agree on."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from enum import IntEnum
from pathlib import Path

from benchmarks.engine.config import SuiteConfig
from benchmarks.fusions.spec import DEFAULT_FUSION
from benchmarks.shards.plan import Costs, Shard, plan

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BUDGET_S = 480.0


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    NO_GPU = 3
    POINT_FAILED = 4
    INCOMPLETE = 5
    DISAGREE = 6


MEANING = {
    Exit.OK: "done (run: every point of the shard is measured; merge: the record is written)",
    Exit.FAILED: "a step failed (runner check, the measuring process, asv's store)",
    Exit.USAGE: "bad arguments, or a plan or settings that differ from this commit's shards",
    Exit.NO_GPU: "the suite found no usable GPU stack; nothing was measured",
    Exit.POINT_FAILED: "some point raised; it is kept as failed and a re-run measures it again",
    Exit.INCOMPLETE: "merge: points of the set are missing (named); run their shards",
    Exit.DISAGREE: "merge: shards measured differently (GPU kind, versions, settings), or the "
    "commit already has another record",
}


def suite_env(args: argparse.Namespace) -> dict[str, str]:
    env = {"RMSNORM_BENCH_SIZES": args.size_set}
    if getattr(args, "variants", None):
        env["RMSNORM_BENCH_VARIANTS"] = args.variants
    if getattr(args, "rounds", None):
        env["RMSNORM_BENCH_ROUNDS"] = str(args.rounds)
    return env


def suite_config(env: Mapping[str, str]) -> SuiteConfig:
    """The suite's settings as the measuring process will read them (its environment, over
    this one's)."""
    # The nightly's shards measure RMSNorm backward unless RMSNORM_BENCH_FUSIONS says more:
    # the catalog's nightly set is 312 more points (about 40 minutes of H200 time a night).
    return SuiteConfig.from_env({"RMSNORM_BENCH_FUSIONS": DEFAULT_FUSION, **os.environ, **env})


def plan_for(args: argparse.Namespace, cfg: SuiteConfig) -> list[Shard]:
    """The plan every runner computes alike from the same arguments and costs.json."""
    return plan(cfg, Costs.load(Path(args.costs)), args.budget_s)
