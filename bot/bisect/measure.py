"""Measuring one build: what a measurer is, and the real one (the GPU, through the suite).

A measurer turns a build into one asv results folder holding one run of it, and says which
commit (key) asv filed it under. The real one installs the build exactly as a PR job does
(``python3 -m benchmarks.under_test.one``: an overlay of its own, a key from the installed
build) and runs benchmarks/run_gpu.sh on the chosen points and variants only, of the one
fusion they are of (``--fusions`` for a fusion of the catalog; RMSNorm backward's command is
the one from before the catalog). The one other measurer is recorded.py, which copies
recorded real runs: the only stand-in for the GPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from benchmarks.under_test.__main__ import Exit
from benchmarks.under_test.one import SCHEMA as ONE_SCHEMA
from bot.bisect.points import one_fusion
from bot.bisect.timeline import Build
from bot.results.limits import full_sha
from bot.results.types import DEFAULT_FUSION


class MeasureError(RuntimeError):
    """A build could not be measured (did not install, no GPU, the suite crashed); nothing
    was recorded for it, so the next call measures it again."""


@dataclass(frozen=True)
class Measured:
    results: Path  # an asv results folder with one run of the build
    commit: str  # the key asv filed it under (40 hex)
    machine: str
    wall_s: float | None
    #: Every other distribution the build's process saw: builds compared must share it.
    stack: Mapping[str, str] | None = None


class Measurer(Protocol):
    def measure(self, build: Build, attempt: int, dest: Path) -> Measured:
        """Measure ``build`` once into the new folder ``dest`` (``attempt`` counts from 1)."""
        ...


@dataclass(frozen=True)
class SuiteMeasurer:
    """The GPU: this repository's suite, one process a build, the build in its own overlay."""

    package: str
    points: Sequence[str]
    variants: Sequence[str]
    work: Path  # overlays and the repository of keys, shared by every build of the bisect
    suite: Path  # this repository's root, where the suite runs
    size_set: str = "pr"
    machine: str | None = None
    pip_args: Sequence[str] = ()

    def command(self, build: Build, dest: Path, manifest: Path) -> list[str]:
        cmd = [sys.executable, "-m", "benchmarks.under_test.one", "--package", self.package]
        cmd += ["--build", build.spec.text, "--results", str(dest), "--work", str(self.work)]
        cmd += ["--size-set", self.size_set, "--manifest", str(manifest)]
        cmd += ["--points", ",".join(self.points), "--variants", ",".join(self.variants)]
        if (fusion := one_fusion(self.points)) != DEFAULT_FUSION:
            cmd += ["--fusions", fusion]
        if self.machine:
            cmd += ["--machine", self.machine]
        return cmd + [f"--pip-arg={a}" for a in self.pip_args]

    def measure(self, build: Build, attempt: int, dest: Path) -> Measured:
        manifest = dest.parent / f"{dest.name}.build.json"
        start = time.monotonic()
        done = subprocess.run(self.command(build, dest, manifest), cwd=self.suite, check=False)
        wall = time.monotonic() - start
        if done.returncode == Exit.NO_GPU:
            raise MeasureError(f"{build.name}: no usable GPU here (the suite's exit 3)")
        if done.returncode != 0:
            raise MeasureError(
                f"{build.name}: benchmarks.under_test.one exited {done.returncode} "
                "(its last lines above say why)"
            )
        return read_manifest(manifest, dest, wall)


def read_manifest(path: Path, dest: Path, wall: float | None) -> Measured:
    """What ``benchmarks.under_test.one`` says it measured: the key and the machine."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MeasureError(f"{path}: the measurement's manifest is unreadable: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != ONE_SCHEMA:
        raise MeasureError(f"{path}: not a manifest of benchmarks.under_test.one")
    machine, stack = data.get("machine"), data.get("stack")
    if not isinstance(machine, str) or not isinstance(stack, dict):
        raise MeasureError(f"{path}: the manifest names no machine or stack")
    return Measured(dest, full_sha(data.get("key"), str(path), "key"), machine, wall, stack)
