"""Verdict rules: on real asv files of synthetic scenarios, and as properties of generated data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from data_helpers import Rounds, SyntheticResults, state_from_rounds, synthetic
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import DATA, REPO_ROOT

from bot.config import Threshold, VerdictSettings
from bot.decide.calibrate import Mode, binomial_upper, pseudo_pair
from bot.decide.types import Verdict
from bot.decide.verdict import decide
from bot.decide.verdict_json import to_json
from bot.results.locate import load_pair
from bot.results.types import CommitResults, PointKey

__all__ = ["synthetic"]
S = VerdictSettings()
SHAPES = ("512x4096", "2048x8192", "8192x8192", "16384x8192")
H200 = DATA / "h200" / "results"


def _pair(synth: SyntheticResults, head: str) -> tuple[CommitResults, CommitResults]:
    return load_pair(synth.results_dir, synth.commits["base"], synth.commits[head])


def _gating(v: Verdict) -> list[str]:
    return [p.state for p in v.points if p.gating]


def test_a_a_pair_from_asv_is_no_change(synthetic: SyntheticResults) -> None:
    v = decide(*_pair(synthetic, "same"), S)
    assert v.overall == "no change"
    assert set(_gating(v)) == {"no change"}
    assert {s.variant for s in v.summaries} == {"thunder-prims", "thunder-func"}


def test_thunder_slower_is_a_regression_on_thunders_side(synthetic: SyntheticResults) -> None:
    v = decide(*_pair(synthetic, "thunder_slower"), S)
    assert v.overall == "regressed" and v.regressed
    gating = [p for p in v.points if p.gating]
    assert all(p.state == "regressed" and p.corroborated for p in gating)
    assert {p.moved for p in gating} == {"thunder"}
    assert all(p.state == "no change" for p in v.points if not p.gating)  # eager, torch.compile
    assert v.worst is not None and v.worst.gating


def test_faster_nvfuser_regresses_the_ratio_and_says_so(synthetic: SyntheticResults) -> None:
    v = decide(*_pair(synthetic, "nvfuser_faster"), S)
    assert v.overall == "regressed"
    assert {p.moved for p in v.points if p.ratio is not None} == {"nvfuser"}


def test_failed_point_is_no_data_not_fatal(synthetic: SyntheticResults) -> None:
    v = decide(*_pair(synthetic, "failed_point"), S)
    assert v.overall == "no change"
    missing = [p for p in v.points if p.state == "no data"]
    assert {p.key.shape for p in missing} == {"16384x8192"}
    assert {p.key.dtype for p in missing} == {"float32"}
    assert all(p.no_data == "failed at head" for p in missing)
    assert "4 point(s) without data at base or head" in v.notes


def test_no_gating_data_is_inconclusive(synthetic: SyntheticResults) -> None:
    s = replace(S, gating=("no-such-variant",))
    v = decide(*_pair(synthetic, "thunder_slower"), s)
    assert v.overall == "inconclusive (no data)" and v.worst is None


def test_per_point_threshold_by_pattern(synthetic: SyntheticResults) -> None:
    s = replace(S, thresholds=(Threshold("thunder-prims/*/*", 0.5),))
    v = decide(*_pair(synthetic, "thunder_slower"), s)
    prims = {p.state for p in v.points if p.key.variant == "thunder-prims"}
    func = {p.state for p in v.points if p.key.variant == "thunder-func"}
    assert prims == {"no change"} and func == {"regressed"}
    assert all(p.threshold == 0.5 for p in v.points if p.key.variant == "thunder-prims")


def test_only_gating_variants_decide(synthetic: SyntheticResults) -> None:
    v = decide(*_pair(synthetic, "nvfuser_faster"), replace(S, gating=("eager",)))
    assert v.overall == "regressed"
    assert {p.key.variant for p in v.points if p.gating} == {"eager"}


def test_to_json_is_plain_json(synthetic: SyntheticResults) -> None:
    data = to_json(decide(*_pair(synthetic, "thunder_slower"), S))
    again = json.loads(json.dumps(data))
    assert again["overall"] == "regressed" and again["schema"] == "fusion-perfbot-verdict/1"
    point = again["points"][0]
    assert {"variant", "dtype", "shape", "state", "ratio", "p_up_holm", "moved"} <= set(point)


def _noisy_point_pair(mult: float) -> tuple[CommitResults, CommitResults]:
    """Eight thunder-prims points; only bfloat16/512x4096 (the noisiest: +/-5% uniform, against
    2% elsewhere) moves, by ``mult``. The head is the base's rounds in another order, so seven
    points are exactly unchanged.
    """
    rng = np.random.default_rng(2)
    base: Rounds = {}
    head: Rounds = {}
    for dtype in ("bfloat16", "float32"):
        for shape in SHAPES:
            noisy = (dtype, shape) == ("bfloat16", "512x4096")
            nv = list(rng.lognormal(np.log(50e-6), 0.001, 20))
            noise = rng.uniform(0.95, 1.05, 20) if noisy else rng.lognormal(0, 0.02, 20)
            th = list(np.array(nv) * 0.7 * noise)
            base[(dtype, shape)] = {"nvfuser": nv, "thunder-prims": th}
            perm = rng.permutation(20)
            m = mult if noisy else 1.0
            head[(dtype, shape)] = {
                "nvfuser": [nv[i] for i in perm],
                "thunder-prims": [th[i] * m for i in perm],
            }
    return state_from_rounds("a", base), state_from_rounds("b", head)


def test_one_noisy_point_does_not_decide_alone() -> None:
    v = decide(*_noisy_point_pair(1.04), S)
    (point,) = [p for p in v.points if p.state != "no change"]
    assert point.ratio is not None
    # Preconditions that make this the case under test (fail loudly if the data drifts):
    assert point.state == "regressed" and point.ratio.change.low < 1 + S.effect
    assert v.summaries[0].geomean.low <= 1.0
    assert not point.corroborated
    assert v.overall == "no change"
    assert "1 uncorroborated point(s) set aside as noise" in v.reason


def test_one_clear_point_is_enough() -> None:
    v = decide(*_noisy_point_pair(1.15), S)
    (point,) = [p for p in v.points if p.state != "no change"]
    assert point.ratio is not None and point.ratio.change.low >= 1 + S.effect
    assert point.corroborated and v.overall == "regressed"


def test_improvement_mirrors_regression() -> None:
    v = decide(*_noisy_point_pair(1 / 1.15), S)
    assert v.overall == "improved"
    assert [p.state for p in v.points if p.state != "no change"] == ["improved"]


def _rounds(seed: int, n: int, points: int, scale: float) -> Rounds:
    """Per-round kernel times with bounded multiplicative noise of at most ``scale``."""
    rng = np.random.default_rng(seed)
    out: Rounds = {}
    for i in range(points):
        nv = list(50e-6 * (1 + rng.uniform(-scale, scale, n)))
        th = [t * 0.7 * (1 + e) for t, e in zip(nv, rng.uniform(-scale, scale, n), strict=True)]
        out[("bfloat16", SHAPES[i % 4] if i < 4 else f"{i}x1024")] = {
            "nvfuser": nv,
            "thunder-prims": th,
        }
    return out


def _shifted(rounds: Rounds, mult: float, seed: int) -> Rounds:
    """The same rounds in another order, Thunder's kernel times scaled by ``mult``."""
    rng = np.random.default_rng(seed)
    out: Rounds = {}
    for point, per_variant in rounds.items():
        perm = rng.permutation(len(per_variant["nvfuser"]))
        out[point] = {
            "nvfuser": [per_variant["nvfuser"][i] for i in perm],
            "thunder-prims": [per_variant["thunder-prims"][i] * mult for i in perm],
        }
    return out


@given(
    seed=st.integers(0, 2**16),
    n=st.integers(10, 30),
    points=st.integers(1, 8),
    scale=st.floats(0.0001, 0.2),
    sub=st.floats(-0.99, 0.99),
)
@settings(max_examples=40, deadline=None)
def test_identical_distributions_never_regress(
    seed: int, n: int, points: int, scale: float, sub: float
) -> None:
    """Same rounds (reordered), even shifted by up to half the threshold: never a regression."""
    base = _rounds(seed, n, points, scale)
    mult = 1 + sub * S.effect / 2
    v = decide(state_from_rounds("a", base), state_from_rounds("b", _shifted(base, mult, seed)), S)
    assert v.overall in ("no change", "improved") if mult < 1 else v.overall == "no change"
    assert "regressed" not in [p.state for p in v.points]


@given(
    seed=st.integers(0, 2**16),
    n=st.integers(10, 30),
    points=st.integers(1, 8),
    shift=st.floats(2 * S.effect, 0.5),
    noise=st.floats(0.0, 0.24),
)
@settings(max_examples=40, deadline=None)
def test_a_clear_shift_always_regresses(
    seed: int, n: int, points: int, shift: float, noise: float
) -> None:
    """Thunder slower by at least twice the threshold, beyond the spread of the rounds."""
    scale = noise * shift / 4  # keeps every shifted round above every base round
    base = _rounds(seed, n, points, scale)
    head = _shifted(base, 1 + shift, seed)
    v = decide(state_from_rounds("a", base), state_from_rounds("b", head), S)
    assert v.overall == "regressed"
    assert all(p.state == "regressed" and p.moved == "thunder" for p in v.points if p.gating)


@given(seed=st.integers(0, 2**16), points=st.integers(1, 6), mult=st.floats(0.7, 1.4))
@settings(max_examples=30, deadline=None)
def test_a_significant_point_never_has_a_ci_containing_one(
    seed: int, points: int, mult: float
) -> None:
    """CI and test agree: a point called regressed/improved has its CI on that side of 1."""
    rng = np.random.default_rng(seed)
    base = _rounds(seed, 15, points, 0.05)
    head = _shifted(base, mult * float(rng.lognormal(0, 0.01)), seed + 1)
    v = decide(state_from_rounds("a", base), state_from_rounds("b", head), S)
    for p in v.points:
        if p.state == "regressed":
            assert p.ratio is not None and p.ratio.change.low > 1 and p.p_up_adj is not None
            assert p.p_up_adj < S.alpha
        if p.state == "improved":
            assert p.ratio is not None and p.ratio.change.high < 1


def test_the_verdict_is_the_same_in_any_process_and_any_point_order() -> None:
    """Seeds come from each point's name (crc32), never from hash() or from the order points
    are met, so a re-run anywhere prints the same figures: here the recorded H200 pair, with
    its points reversed, and in two fresh processes with different hash seeds."""
    base, head = load_pair(H200, "06f650c8", "9dc51696")
    here = json.loads(json.dumps(to_json(decide(base, head, S))))
    flipped = [replace(r, points=dict(reversed(list(r.points.items())))) for r in (base, head)]
    assert json.loads(json.dumps(to_json(decide(*flipped, S)))) == here
    code = (
        "import json, sys\nfrom pathlib import Path\n"
        "from bot.config import VerdictSettings\n"
        "from bot.decide.verdict import decide\n"
        "from bot.decide.verdict_json import to_json\n"
        "from bot.results.locate import load_pair\n"
        "pair = load_pair(Path(sys.argv[1]), '06f650c8', '9dc51696')\n"
        "print(json.dumps(to_json(decide(*pair, VerdictSettings()))))\n"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO_ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code, str(H200)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=REPO_ROOT,
        )
        assert json.loads(done.stdout) == here
    worst = next(
        p
        for p in here["points"]
        if p["variant"] == "thunder-prims"
        and p["dtype"] == "bfloat16"
        and p["shape"] == "16384x8192"
    )
    change = worst["ratio"]["change"]  # the figures the docs and the demo show
    assert f"{change['estimate'] - 1:+.1%}" == "+2400.6%"
    assert f"{change['low'] - 1:+.1%} {change['high'] - 1:+.1%}" == "+2395.7% +2405.7%"


def test_different_gpus_are_noted(synthetic: SyntheticResults) -> None:
    base, head = _pair(synthetic, "same")
    assert head.provenance is not None
    record = {**head.provenance.record, "gpu": {"name": "other", "driver": "n/a", "cuda": "n/a"}}
    head = replace(head, provenance=replace(head.provenance, record=record))
    v = decide(base, head, S)
    assert any("differ in GPU" in n for n in v.notes)


@pytest.mark.parametrize("explain", [True, False])
def test_explain_only_changes_the_side_analysis(synthetic: SyntheticResults, explain: bool) -> None:
    v = decide(*_pair(synthetic, "thunder_slower"), S, explain=explain)
    assert v.overall == "regressed"
    assert ({p.moved for p in v.points if p.ratio} == {"unknown"}) is not explain


def test_calibration_pseudo_pairs_keep_rounds_paired(synthetic: SyntheticResults) -> None:
    base, _ = _pair(synthetic, "same")
    rng = np.random.default_rng(0)
    modes: tuple[Mode, ...] = ("bootstrap", "split")
    for mode in modes:
        a, b = pseudo_pair(base, rng, mode, 0.10, S)
        assert {k.variant for k in a.points} == {"thunder-prims", "thunder-func"}
        for key, pa in a.points.items():
            pb = b.points[key]
            assert pa.ratio and pa.kernel_s and pb.ratio and pb.kernel_s
            n = len(base.points[key].ratio or ())
            assert len(pa.ratio) == (n if mode == "bootstrap" else n // 2)
            # ratio / kernel is nvFuser's kernel time of the same round: the pairing survived
            nv = set(base.points[PointKey("nvfuser", key.dtype, key.shape)].kernel_s or ())
            for r, k in zip(pa.ratio, pa.kernel_s, strict=True):
                assert any(abs(k / r - x) < 1e-15 for x in nv)
            for r, k in zip(pb.ratio, pb.kernel_s, strict=True):  # both scaled by the shift
                assert any(abs(k / r - x) < 1e-15 for x in nv)
            assert set(pb.ratio) <= {x * 1.10 for x in base.points[key].ratio or ()}


def test_binomial_upper_bound() -> None:
    assert binomial_upper(0, 300) == pytest.approx(1 - 0.05 ** (1 / 300), rel=1e-6)
    assert binomial_upper(300, 300) == 1.0
    assert 0.05 < binomial_upper(10, 100) < 0.2
