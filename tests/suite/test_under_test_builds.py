"""``python3 -m benchmarks.under_test.builds``: several builds (a run of nightlies) installed and
keyed by real pip and git, measured as one job's turns by the real launcher, stored one at a
time; a build that fails stops nothing. The wheels are the one-line ``thunder`` of
under_test_inputs.py (TEST INPUTS, not Thunder); no pip call reaches an index."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest
from paths import REPO_ROOT
from under_test_inputs import make_wheel, offline_env

from benchmarks.under_test import builds, install
from benchmarks.under_test.__main__ import Exit
from benchmarks.under_test.pair import Side, keyed_side
from benchmarks.under_test.spec import parse_spec

NIGHTLIES = ("0.2.7.dev20251102", "0.2.7.dev20251109", "0.2.7.dev20251116")

#: run_gpu.sh's stand-in: logs its phase, key and turn; a measurement makes the machine folder,
#: or fails for the key in $FAIL_KEY.
FAKE_RUN_GPU = """\
results="" commit="" phase=all machine=""
while [ $# -gt 0 ]; do
  case "$1" in
    --results) results=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --phase) phase=$2; shift 2 ;;
    --machine) machine=$2; shift 2 ;;
    *) shift ;;
  esac
done
printf '%s %s %s %s\\n' "$phase" "$commit" "${RMSNORM_BENCH_TURN:--}" "${machine:--}" >> "$CALLS"
if [ "$phase" = measure ] && [ "$commit" = "${FAIL_KEY:-}" ]; then exit 7; fi
if [ "$phase" = measure ]; then mkdir -p "$results/nvidia-h200"; fi
"""


@pytest.fixture(autouse=True)
def _offline(tmp_path: Path) -> Iterator[None]:
    with offline_env(tmp_path / "home"):
        yield


@pytest.fixture
def wheels(tmp_path: Path) -> Iterator[list[Path]]:
    yield [make_wheel(tmp_path / "wheels", v) for v in NIGHTLIES]


def _sides(tmp_path: Path, wheels: list[Path]) -> list[Side]:
    keys_repo = tmp_path / "work" / "keys"
    from benchmarks.under_test import keys

    keys.init_keys(keys_repo)
    return [
        keyed_side(
            f"build-{k}",
            install.install(parse_spec(str(w), "thunder"), tmp_path / "work" / f"o{k}", []),
            keys_repo,
        )
        for k, w in enumerate(wheels, start=1)
    ]


@pytest.mark.parametrize("together", [True, False])
def test_each_build_times_in_its_turn_and_one_that_fails_stops_no_store(
    tmp_path: Path, wheels: list[Path], monkeypatch: pytest.MonkeyPatch, together: bool
) -> None:
    """Together: three turns of one job; not (a GPU without room for three): one after the
    other, each a job of one turn."""
    sides = _sides(tmp_path, wheels)
    script = tmp_path / "run_gpu.sh"
    script.write_text(FAKE_RUN_GPU, encoding="utf-8")
    calls = tmp_path / "calls"
    monkeypatch.setenv("CALLS", str(calls))
    monkeypatch.setenv("FAIL_KEY", sides[1].key)
    results = tmp_path / "results"
    results.mkdir()
    told: list[str] = []
    outcomes = builds.measure_in_turns(
        sides,
        results=results,
        size_set="pr",
        keys_repo=tmp_path / "work" / "keys",
        machine=None,
        run_script=script,
        more=["--variants", "nvfuser"],
        env={},
        log=told.append,
        together=together,
    )
    assert outcomes == [(0, 0), (7, None), (0, 0)]
    rows = [line.split() for line in calls.read_text(encoding="utf-8").splitlines()]
    measured = [(turn, key) for phase, key, turn, _ in rows if phase == "measure"]
    if together:
        assert sorted(measured) == [(f"{k}/3", s.key) for k, s in enumerate(sides, start=1)]
    else:
        assert measured == [("1/1", s.key) for s in sides]
    # The stores follow every measurement, one a build that measured, under the machine found.
    stores = rows[3:]
    assert [(p, k, t, m) for p, k, t, m in stores] == [
        ("store", sides[0].key, "-", "nvidia-h200"),
        ("store", sides[2].key, "-", "nvidia-h200"),
    ]
    assert f"== {wheels[1].name}: exit 7" in told


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_without_a_gpu_every_build_is_keyed_by_its_nightly_and_said_unmeasured(
    tmp_path: Path, wheels: list[Path]
) -> None:
    if find_spec("torch") is not None:
        pytest.skip("torch is here: a GPU may be too")
    results = tmp_path / "history" / "call-1"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.under_test.builds", "--package", "thunder",
         "--results", str(results), "--work", str(tmp_path / "work"), "--capture",
         *[a for w in wheels for a in ("--build", str(w))]],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == Exit.NO_GPU, done.stderr
    manifest = json.loads((tmp_path / "history" / "call-1.builds.json").read_text())
    assert manifest["schema"] == builds.SCHEMA and manifest["package"] == "thunder"
    assert [b["version"] for b in manifest["builds"]] == list(NIGHTLIES)
    assert [b["key_date"][:10] for b in manifest["builds"]] == [
        "2025-11-02",
        "2025-11-09",
        "2025-11-16",
    ]
    assert all(b["measure_status"] == 3 and b["store_status"] is None for b in manifest["builds"])
    assert manifest["arguments"] == [
        "--variants",
        "nvfuser,thunder-prims,thunder-func",
        "--capture",
    ]
    assert "run_gpu.sh: no usable GPU here" in done.stderr


def test_the_same_build_twice_or_a_used_folder_is_a_usage_error(
    tmp_path: Path, wheels: list[Path]
) -> None:
    args = ["--package", "thunder", "--work", str(tmp_path / "work")]
    twice = ["--build", str(wheels[0]), "--build", str(wheels[0])]
    assert builds.main([*args, "--results", str(tmp_path / "r"), *twice]) == Exit.USAGE
    used = tmp_path / "used"
    (used / "nvidia-h200").mkdir(parents=True)
    assert builds.main([*args, "--results", str(used), "--build", str(wheels[0])]) == Exit.USAGE
    assert not (tmp_path / "work").exists()  # nothing installed


OK, POINTS_FAILED = (
    {"measure_status": 0, "store_status": 0},
    {"measure_status": 0, "store_status": 2},
)
CRASHED, NO_GPU = (
    {"measure_status": 7, "store_status": None},
    {"measure_status": 3, "store_status": None},
)


@pytest.mark.parametrize(
    ("entries", "code"),
    [
        ([OK, POINTS_FAILED], Exit.OK),
        ([OK, CRASHED], Exit.MEASURE_FAILED),
        ([NO_GPU, NO_GPU], Exit.NO_GPU),
        ([OK, {"spec": "x.whl", "install_error": "no"}], Exit.INSTALL_FAILED),
        ([{"measure_status": 0, "store_status": 1}], Exit.MEASURE_FAILED),
    ],
)
def test_the_exit_is_the_worst_build(entries: list[dict[str, object]], code: int) -> None:
    assert builds.worst_exit(entries) == code


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_one_build_given_twice_under_two_names_is_measured_once(
    tmp_path: Path, wheels: list[Path]
) -> None:
    """Two specs of one build (its wheel, and its version from an index that holds that wheel)
    get one key, and asv keeps one results file a key: the second is said and left out."""
    if find_spec("torch") is not None:
        pytest.skip("torch is here: the first build would be measured")
    results = tmp_path / "history" / "call-1"
    code = builds.main(
        ["--package", "thunder", "--results", str(results), "--work", str(tmp_path / "work"),
         "--build", str(wheels[0]), "--build", f"lightning-thunder=={NIGHTLIES[0]}",
         f"--pip-arg=--find-links={wheels[0].parent}"]
    )  # fmt: skip
    assert code == Exit.INSTALL_FAILED
    manifest = json.loads((tmp_path / "history" / "call-1.builds.json").read_text())
    first, second = manifest["builds"]
    assert "same build as" in second["install_error"] and first["key"] in second["install_error"]
