"""The tiling tool: nightly-sized results that asv and the bot read as a real run, every point
carrying a recorded point's real samples, and marked as tiled wherever the bot shows a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from asv.results import Results
from paths import DATA, REPO_ROOT

from bot.decide.noise_model import fit
from bot.exitcodes import ExitCode
from bot.results.locate import list_commits, load_commit, load_pair
from bot.results.tiled import TILED_KEY, TILED_LABEL
from bot.results.types import BENCH_KERNEL, BENCH_RATIO, REFERENCE, BadInput, PointKey
from tests.perf.tile import main, tile

SOURCE = DATA / "h200" / "results"
BASE, HEAD = "06f650c8", "9dc51696"
OTHER = "ab" * 20


@pytest.fixture(scope="module")
def tiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiled") / "results"
    for commit in (BASE, HEAD):
        tile(SOURCE, commit, out, size_set="nightly")
    tile(SOURCE, BASE, out, as_commit=OTHER, date="2026-12-24T12:00:00Z")
    return out


def test_every_nightly_point_carries_a_recorded_points_samples(tiled: Path) -> None:
    base = load_commit(tiled, BASE)
    source = load_commit(SOURCE, BASE)
    record = base.provenance.record if base.provenance else {}
    points_from = record[TILED_KEY]["points_from"]
    assert len(points_from) == 180  # 60 shapes x 3 dtypes
    assert len(base.points) == 180 * 5
    used = set()
    for key, point in base.points.items():
        src_name = points_from[f"{key.dtype}/{key.shape}"]
        used.add(src_name)
        src_dtype, src_shape = src_name.split("/")
        src = source.points[PointKey(key.variant, src_dtype, src_shape)]
        assert (point.ratio, point.kernel_s, point.host_s) == (src.ratio, src.kernel_s, src.host_s)
        assert point.kernel_count == src.kernel_count
    assert len(used) == len(source.points) // 5  # every recorded point, in turn
    # in turn: point i of the set takes recorded point i mod 9
    names = list(points_from.values())
    assert names[:9] == names[9:18] and len(set(names[:9])) == 9


def test_asv_reads_it_as_its_own(tiled: Path) -> None:
    path = tiled / "nvidia-h200"
    files = sorted(p for p in path.glob("*.json") if p.name != "machine.json")
    assert len(files) == 3
    r = Results.load(str(files[0]), machine_name="nvidia-h200")
    bench = json.loads((tiled / "benchmarks.json").read_text())[BENCH_RATIO]
    assert len(r.get_result_value(BENCH_RATIO, bench["params"])) == 4 * 180
    assert r.get_result_samples(BENCH_KERNEL, bench["params"]) is not None


def test_as_commit_and_date(tiled: Path) -> None:
    other = load_commit(tiled, OTHER[:8])
    assert other.commit == OTHER and other.date == 1798113600000
    assert other.provenance is not None and other.provenance.text("commit") == OTHER
    assert other.points == load_commit(tiled, BASE).points


def test_the_bot_never_takes_it_for_a_measurement(tiled: Path) -> None:
    from bot.config import VerdictSettings
    from bot.decide.verdict import decide

    base, head = load_pair(tiled, BASE, HEAD)
    assert base.tiled is not None and base.tiled["source"]["commit"].startswith(BASE)
    notes = decide(base, head, VerdictSettings()).notes
    assert notes[0].startswith("base is tiled test input, not measured")
    assert notes[1].startswith("head is tiled test input, not measured")
    assert all(TILED_LABEL in (c.thunder_variant or "") for c in list_commits(tiled))
    with pytest.raises(BadInput, match="tiled test input"):
        fit([base, load_commit(tiled, OTHER[:8])])


def test_no_data_is_tiled() -> None:
    """Nothing under data/ (committed or not) is tiled: data/ holds measurements only."""
    files = [p for p in DATA.rglob("*") if p.suffix in (".json", ".jsonl")]
    tiled = [p for p in files if TILED_KEY in p.read_text(encoding="utf-8", errors="replace")]
    assert len(files) > 100 and tiled == []


def test_variants_and_shapes_beyond_any_size_set(tmp_path: Path) -> None:
    shapes = [f"{m}x{n}" for m in (16, 32) for n in range(1024, 1024 + 64 * 5, 64)]
    done = tile(
        SOURCE,
        HEAD,
        tmp_path / "r",
        shapes=shapes,
        slim_provenance=True,
        variants=(REFERENCE, "thunder-prims"),
        machine="other-gpu",
    )
    assert done.points == 3 * 10 and done.machine == "other-gpu"
    run = load_commit(tmp_path / "r", HEAD)
    assert {k.variant for k in run.points} == {REFERENCE, "thunder-prims"}
    assert run.machine == "other-gpu" and run.provenance is not None
    entry = run.provenance.record["points"]["float32/32x1280"]["variants"]["nvfuser"]
    assert "kernel_us_calls" not in entry and entry["status"] == "ok"


def _cli(*args: str) -> int:
    return main(["--results", str(SOURCE), *args])


def test_bad_input_loses_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert _cli("--commit", BASE, "--out", str(DATA / "tiled")) == ExitCode.USAGE
    assert not (DATA / "tiled").exists()
    assert _cli("--commit", BASE, "--out", str(out), "--as-commit", "06f650c8") == ExitCode.USAGE
    assert _cli("--commit", BASE, "--out", str(out), "--size-set", "huge") == ExitCode.USAGE
    assert _cli("--commit", BASE, "--out", str(out), "--date", "soon") == ExitCode.USAGE
    assert _cli("--commit", "deadbeef", "--out", str(out)) == ExitCode.BAD_INPUT
    assert _cli("--commit", BASE, "--out", str(out), "--variants", "eager") == ExitCode.USAGE
    real = SOURCE / "nvidia-h200" / "06f650c8-existing-py_opt_torch_.venv_bin_python3.json"
    mdir = out / "nvidia-h200"
    mdir.mkdir(parents=True)
    (mdir / real.name).write_bytes(real.read_bytes())  # a real run in the folder
    assert _cli("--commit", BASE, "--out", str(out)) == ExitCode.USAGE
    assert (mdir / real.name).read_bytes() == real.read_bytes()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 7 and all(line.startswith("tile: ") for line in err)
    assert "not tiled: refusing to replace it" in err[-1]


def test_the_command_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.perf.tile",
            "--results",
            str(SOURCE),
            "--commit",
            HEAD,
            "--size-set",
            "nightly",
            "--out",
            str(tmp_path / "r"),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tiled 180 points of nvidia-h200 9dc516960ffd")
