"""The out-of-sample calibration: which runs each model sees, what the changes scale, that it is
repeatable, and the command's edges. Small in-memory runs (seeded numbers, not measurements)
keep it fast; one CLI test reads the synthetic asv tree of tests/data_helpers.py."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from data_helpers import SyntheticResults, state_from_rounds, synthetic
from paths import DATA

from bot.commands import cli
from bot.commands.calibrate import calibrate, report_text, to_json
from bot.config import VerdictSettings
from bot.decide.calibrate import (
    MAX_CHOICES,
    Rate,
    Scenario,
    binomial_upper,
    choices,
    count,
    gating_only,
    resample,
    scale_nvfuser,
    scale_thunder,
    trials,
)
from bot.decide.calibration import FusionSide, provisional
from bot.decide.noise_model import fit
from bot.decide.types import Verdict
from bot.decide.verdict import decide
from bot.exitcodes import ExitCode
from bot.results.locate import load_commit
from bot.results.types import CommitResults, PointKey

__all__ = ["synthetic"]
S = VerdictSettings()
POINTS = (("bfloat16", "2048x8192"), ("float32", "16384x8192"))
US = {"nvfuser": 50.0, "thunder-prims": 52.0, "thunder-func": 51.0, "eager": 120.0}


def _run(n: int, thunder: float = 1.0, rounds: int = 12) -> CommitResults:
    """Run n: a per-run offset (between-run noise) on top of per-round noise, index-aligned."""
    rng = np.random.default_rng(n)
    data = {}
    for dtype, shape in POINTS:
        common = rng.lognormal(0.0, 0.003, rounds)
        data[(dtype, shape)] = {
            v: list(
                us
                * 1e-6
                * (thunder if v.startswith("thunder") else 1.0)
                * rng.lognormal(0.0, 0.004)
                * common
                * rng.lognormal(0.0, 0.005, rounds)
            )
            for v, us in US.items()
        }
    return state_from_rounds(f"{n:02d}", data)


RUNS = [_run(n) for n in range(5)]


def test_every_model_is_fitted_without_the_runs_it_judges() -> None:
    runs = [*RUNS, _run(5)]
    for a_side in (1, 2):
        ts = trials(runs, a_side, 1, S)
        assert len(ts) == 2 * 30
        for t in ts:
            judged = {r.commit for r in (*t.base, *t.head)}
            assert len(judged) == 2 * a_side
            assert judged.isdisjoint(t.model.runs)
            assert len(t.model.runs) == len(runs) - 2 * a_side


def test_an_unseen_outlier_run_is_judged_as_production_would_judge_it() -> None:
    """Head 10% slower on Thunder: out of sample, every pair with it as head is regressed. Had
    its own spread been in the model, that spread would have hidden it."""
    runs = [*RUNS[:4], replace(_run(9, thunder=1.10), commit="9" * 40)]
    ts = [t for t in trials(runs, 1, 0, S) if t.head[0].commit == "9" * 40]
    assert len(ts) == 4
    assert count(ts, Scenario("a/a"), S).hits == 4


def test_choices_one_a_side_are_every_ordered_pair_and_larger_sides_a_seeded_sample() -> None:
    pairs = choices(6, 1, S.seed)
    assert sorted(pairs) == [((b,), (h,)) for b in range(6) for h in range(6) if b != h]
    two = choices(8, 2, S.seed)
    assert len(two) == MAX_CHOICES and two == choices(8, 2, S.seed)
    assert two != choices(8, 2, S.seed + 1)
    assert all(not set(b) & set(h) and 8 - 4 >= 2 for b, h in two)
    assert choices(5, 2, S.seed) == [] and choices(3, 1, S.seed) == []


def test_scale_thunder_scales_the_gating_series_and_nothing_else() -> None:
    run = RUNS[0]
    one = PointKey("thunder-prims", *POINTS[1])
    for only in (None, one):
        out = scale_thunder(run, 1.05, S, only)
        for key, p in out.points.items():
            before = run.points[key]
            f = 1.05 if S.is_gating(key.variant) and only in (None, key) else 1.0
            assert p.kernel_s == pytest.approx([x * f for x in before.kernel_s or ()], rel=1e-12)
            if before.ratio is not None:
                assert p.ratio == pytest.approx([x * f for x in before.ratio], rel=1e-12)
            else:
                assert p.ratio is None
    assert sum(p != run.points[k] for k, p in scale_thunder(run, 1.05, S, one).points.items()) == 1


def test_scale_nvfuser_slows_its_kernel_and_lowers_every_ratio() -> None:
    run = RUNS[0]
    out = scale_nvfuser(run, 1.02)
    for key, p in out.points.items():
        before = run.points[key]
        if key.variant == "nvfuser":
            assert p.kernel_s == pytest.approx([x * 1.02 for x in before.kernel_s or ()])
            assert p.ratio is None
        else:
            assert p.kernel_s == before.kernel_s  # the contender's own time is unchanged
            assert p.ratio == pytest.approx([x / 1.02 for x in before.ratio or ()])


def test_resample_draws_rounds_together_across_the_variants_of_a_point() -> None:
    run = RUNS[0]
    copy = resample(run, np.random.default_rng(0))
    assert copy.points != run.points
    for (dtype, shape), _ in {(k.dtype, k.shape): 0 for k in run.points}.items():
        nv = copy.points[PointKey("nvfuser", dtype, shape)].kernel_s or ()
        for variant in ("thunder-prims", "eager"):
            p = copy.points[PointKey(variant, dtype, shape)]
            assert len(p.kernel_s or ()) == len(nv) == 12
            # ratio x nvFuser's kernel = the contender's kernel, round by round: still paired
            for r, k, n in zip(p.ratio or (), p.kernel_s or (), nv, strict=True):
                assert r * n == pytest.approx(k, rel=1e-12)


def test_gating_only_keeps_nvfuser_and_the_gating_variants() -> None:
    kept = {k.variant for k in gating_only(RUNS[0], S).points}
    assert kept == {"nvfuser", "thunder-prims", "thunder-func"}


def test_dropping_the_context_variants_changes_no_guard_on_real_runs() -> None:
    """The shortcut every trial takes, checked on the recorded H200 runs: stock-3 against two
    other stock runs, a slower Thunder and a slower nvFuser (the model from three more)."""
    h200, states = DATA / "h200" / "results", DATA / "h200-states" / "results"
    base = load_commit(states, "6c840f30")
    model_runs = [load_commit(h200, "06f650c8"), load_commit(states, "022fefdd")]
    model_runs.append(load_commit(states, "324c493b"))
    heads = [load_commit(h200, "da17d548"), load_commit(states, "016e16b1")]
    heads += [load_commit(states, c) for c in ("63e9dde7", "3f0f630d")]
    model = fit(model_runs)
    slim_model = fit([gating_only(r, S) for r in model_runs])
    for head in heads:
        full = decide(base, head, S, model)
        slim = decide(gating_only(base, S), gating_only(head, S), S, slim_model)
        assert (full.overall, _states(full)) == (slim.overall, _states(slim))


def _states(v: Verdict) -> list[tuple[str, str]]:
    return [(g.kind, g.state) for g in v.guards]


def test_count_stops_once_the_rate_is_out_of_reach() -> None:
    ts = trials(RUNS, 1, 0, S)
    full = count(ts, Scenario("a/a"), S)
    assert full.trials == full.planned == 20 and full.hits == 0
    stopped = count(ts, Scenario("a/a"), S, stop_below=0.95)  # no A/A trial is a "hit"
    assert stopped.stopped and stopped.trials == 2 and stopped.hits == 0


def test_same_seed_same_trials_and_any_map_gives_the_same_report() -> None:
    runs = RUNS[:4]
    assert trials(runs, 1, 2, S) == trials(runs, 1, 2, S)
    assert trials(runs, 1, 2, S) != trials(runs, 1, 2, replace(S, seed=S.seed + 1))
    serial = calibrate(runs, S, copies=1)
    with ProcessPoolExecutor(2) as pool:
        assert calibrate(runs, S, copies=1, map_=pool.map) == serial


def test_the_report_covers_the_sizes_the_runs_allow() -> None:
    c = calibrate(RUNS[:4], S, copies=0)
    (side,) = c.sides  # 4 runs: 2 a side would leave none for the model
    assert c.skipped == (2,) and side.a_side == 1 and side.choices == 12
    assert side.model_runs == 2 and side.false_alarm.hits == 0
    assert [k.shape for k, _ in side.lone] == ["16384x8192"] * 2
    assert len(side.searched) == 4  # 2 points x 2 gating variants
    assert all(o.smallest is not None for _, _, o in side.searched)
    assert "Not measured, too few runs: 2 a side needs 6 runs." in report_text(c)
    assert json.loads(json.dumps(to_json(c)))["not_measured_runs_a_side"] == [2]


def test_binomial_upper_bound() -> None:
    assert binomial_upper(0, 300) == pytest.approx(1 - 0.05 ** (1 / 300), rel=1e-6)
    assert binomial_upper(300, 300) == 1.0
    assert 0.05 < binomial_upper(10, 100) < 0.2


def test_too_few_runs_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calibrate", "--results", str(DATA / "h200" / "results"), "--jobs", "1"]
    assert cli.main(argv, env={}) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "step 'calibrate' failed" in err and "at least 4 A/A runs" in err and "got 2" in err


def test_bad_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calibrate", "--results", str(DATA / "h200" / "results"), "--trials", "-1"]
    assert cli.main(argv, env={}) == ExitCode.USAGE
    assert "--trials must be at least 0" in capsys.readouterr().err


def test_the_command_on_asv_files(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The synthetic tree's four "stock" runs (two of them odd, which is fine here)."""
    out = tmp_path / "cal.json"
    argv = ["calibrate", "--results", str(synthetic.results_dir), "--trials", "0", "--jobs", "1"]
    assert cli.main([*argv, "--json", str(out)], env={}) == ExitCode.OK_NO_REGRESSION
    text = capsys.readouterr().out
    assert "over 4 A/A runs" in text and "1 run a side: 12 ordered pairs" in text
    assert "2 a side needs 6 runs" in text
    data = json.loads(out.read_text())
    assert data["schema"] == "perfbot-calibration/2" and len(data["runs"]) == 4
    assert [s["runs_a_side"] for s in data["sides"]] == [1]
    assert data["sides"][0]["a_a"]["false_alarm"]["trials"] == 12


def test_a_target_is_met_by_its_bound_not_its_rate() -> None:
    from bot.decide.calibrate import Rate
    from bot.tell.calibration import _row

    def verdict(r: Rate, goal: float, at_most: bool) -> str:
        return _row("x", r, goal, at_most).split()[-1]

    assert verdict(Rate(0, 300, 0, 30, 300), 0.01, True) == "met"  # bound 0.99%
    assert verdict(Rate(0, 30, 0, 30, 30), 0.01, True) == "MISSED"  # 0 seen, bound 9.5%
    assert verdict(Rate(293, 300, 29, 30, 300), 0.95, False) == "met"  # lower bound 95.7%
    assert verdict(Rate(287, 300, 29, 30, 300), 0.95, False) == "MISSED"  # 95.7% seen, bound 93%
    assert verdict(Rate(0, 300, 0, 30, 300), 0.0, True) == "met"  # "never": the count decides
    assert verdict(Rate(1, 300, 0, 30, 300), 0.0, True) == "MISSED"


def test_what_keeps_a_model_from_being_accepted_is_listed() -> None:
    """`missed` (and the JSON's "missed"): each target whose bound misses, and each number of
    runs a side too few runs left unmeasured; empty only when every target is met at 1 and 2
    runs a side (docs/CALIBRATION.md, "Onboarding a GPU kind")."""
    from bot.decide.calibrate import Rate
    from bot.decide.calibration import missed

    c = calibrate(RUNS[:4], S, copies=0)
    got = missed(c)
    assert got[0] == "2 a side: not measured (too few runs)"
    assert "1 a side: A/A false alarms (0/12)" in got  # none seen, but 12 trials bound 22%
    assert json.loads(json.dumps(to_json(c)))["missed"] == list(got)
    (side,) = c.sides
    perfect = replace(
        side,
        false_alarm=Rate(0, 300, 0, 30, 300),
        thunder=Rate(300, 300, 30, 30, 300),
        nvfuser=Rate(293, 300, 29, 30, 300),
        nvfuser_improved=Rate(0, 300, 0, 30, 300),
        lone=tuple((k, Rate(300, 300, 30, 30, 300)) for k, _ in side.lone),
    )
    both = replace(c, sides=(perfect, replace(perfect, a_side=2)), skipped=())
    assert missed(both) == ()
    worse = replace(perfect, nvfuser_improved=Rate(1, 300, 0, 30, 300))
    only = replace(both, sides=(worse,))
    assert missed(only) == ('1 a side: +2% nvFuser read as "improved" (1/300)',)


def _as_fusion(run: CommitResults, fusion: str) -> CommitResults:
    """The run's points under another fusion's name (a second fusion of the catalog)."""
    return replace(run, points={k._replace(fusion=fusion): p for k, p in run.points.items()})


def _two_fusions(other_thunder: list[float]) -> list[CommitResults]:
    """RMSNorm backward's runs 0-3, each with a second fusion whose Thunder is scaled per run."""
    return [
        replace(r, points={**r.points, **_as_fusion(_run(n + 10, f), "softmax_bwd").points})
        for n, (r, f) in enumerate(zip(RUNS[:4], other_thunder, strict=True))
    ]


def test_each_fusion_is_calibrated_on_its_own_points_and_noise() -> None:
    """Issue 39: a fusion whose Thunder moves 4% between runs is provisional (its model, fitted
    on its own runs, knows the noise: no false alarm, and a +2% change is lost in it); RMSNorm
    backward's own rates are the same beside it as beside a quiet one."""
    quiet = calibrate(_two_fusions([1.0, 1.0, 1.0, 1.0]), S, copies=0)
    noisy = calibrate(_two_fusions([1.0, 1.04, 1.0, 1.04]), S, copies=0)
    assert [f.fusion for f in noisy.fusions] == ["rmsnorm_bwd", "softmax_bwd"]
    assert quiet.fusions[0] == noisy.fusions[0]
    rms, soft = noisy.fusions
    assert rms.a_side == 1 and rms.false_alarm.trials == 12 and rms.power_goal == 0.95
    assert soft.power_goal == 0.80 and soft.false_alarm.hits == 0
    assert soft.thunder.hits < quiet.fusions[1].thunder.hits
    assert any(r.startswith("+2% on Thunder caught") for r in provisional(noisy)["softmax_bwd"])
    text = report_text(noisy)
    assert "Each fusion on its own, 1 run a side" in text
    assert text.splitlines()[-3].split()[0] == "softmax_bwd" and "provisional" in text
    as_json = json.loads(json.dumps(to_json(noisy)))
    assert [f["fusion"] for f in as_json["fusions"]] == ["rmsnorm_bwd", "softmax_bwd"]
    assert "softmax_bwd" in as_json["provisional"]


def test_one_fusion_has_no_table_of_its_own() -> None:
    c = calibrate(RUNS[:4], S, copies=0)
    assert c.fusions == () and "Each fusion on its own" not in report_text(c)
    assert to_json(c)["fusions"] == [] and to_json(c)["provisional"] == {}


def test_a_fusion_falls_short_by_the_bounds_of_its_rates() -> None:
    def rate(hits: int, trials: int) -> Rate:
        return Rate(hits, trials, hits, trials, trials)

    enough = FusionSide("softmax_bwd", 2, rate(0, 400), rate(400, 400), rate(400, 400))
    assert enough.shortfalls() == ()
    thin = FusionSide("softmax_bwd", 2, rate(0, 100), rate(100, 100), rate(70, 100))
    assert thin.shortfalls() == (
        "A/A false alarms 0/100 (<= 3.0%, needs <= 1%)",
        "+2% on nvFuser caught 70/100 (>= 61.6%, needs >= 80%)",
    )
    # 370 of 400 is enough for another fusion's 80%, not for RMSNorm backward's 95%.
    rms = FusionSide("rmsnorm_bwd", 2, rate(0, 400), rate(370, 400), rate(400, 400))
    (short,) = rms.shortfalls()
    assert short.startswith("+2% on Thunder caught 370/400 (>= 90.") and "needs >= 95%" in short
    assert replace(rms, fusion="softmax_bwd").shortfalls() == ()
