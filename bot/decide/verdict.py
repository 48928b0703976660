"""From base and head results to a verdict (pure).

Base and head are each one or more runs (processes) of one commit; repeats are replicates.
Four guards, each decided on its own and each with its own linked issue:

* **broken**: a point (a gating Thunder variant, or nvFuser's hand-written fusion) with data at
  base that failed at head (compile or executor error, a wrong result, a crash) is broken, the
  worst verdict. Failing at both sides is "still failing" (said, no new issue). A point not
  measured at head by choice (asv's "skipped", or absent) is not broken.
* **ratio**: the thunder/nvFuser kernel-time ratio of each gating point.
* **nvfuser**: the hand-written nvFuser fusion's kernel time, base to head, per point. An
  nvFuser slowdown makes the ratio fall; this guard makes it an nvFuser regression instead.
* **thunder**: each gating Thunder variant's kernel time, base to head.

Every series (bot/decide/stats.py) is compared with the between-run noise of the noise model
(bot/decide/noise_model.py) plus this job's repeats; Holm adjusts the p-values within each
guard's points, and separately within its geometric means. A point regressed when its change
is at least its threshold (``effect`` by default, per point by pattern), its Holm-adjusted
one-sided p is below ``alpha`` and its 95% interval is above 1. A guard regressed when a
regressed point is corroborated (its own interval clears the threshold, or the variant's
other points moved up as a group) or a variant's geometric mean over at least 3 points
passes the same rule at ``effect``. A geometric mean at or past the effect but not
established makes the guard "unsure", with the runs a side that would settle it.
Context variants (not gating) are shown with their threshold and state but decide nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.config import VerdictSettings
from bot.decide.families import Runs, decide_family
from bot.decide.level import ratio_level
from bot.decide.noise_model import NoiseModel
from bot.decide.rules import (
    broken_state,
    corroborate_kernels,
    guard_state,
    overall_state,
    ratio_owner,
    side_moved,
)
from bot.decide.types import Guard, GuardKind, PointVerdict, State, VariantSummary, Verdict
from bot.decide.wording import guard_summary
from bot.results.tiled import tiled_words
from bot.results.types import DEFAULT_FUSION, CommitResults, PointKey

Aggs = tuple[VariantSummary, ...]


def _explain(
    rows: Sequence[PointVerdict], kernels: dict[PointKey, PointVerdict]
) -> list[PointVerdict]:
    out = []
    for p in rows:
        contender = kernels.get(p.key)
        nv = kernels.get(p.key.reference())
        c_cmp = contender.cmp if contender else None
        n_cmp = nv.cmp if nv else None
        moved = side_moved(c_cmp, n_cmp, p.cmp, p.threshold) if p.cmp else "unknown"
        out.append(replace(p, moved=moved, contender_kernel=c_cmp, nvfuser_kernel=n_cmp))
    return out


def _bandwidth(runs: Runs, key: PointKey) -> float | None:
    values = [
        p.bandwidth_pct for r in runs if (p := r.points.get(key)) and p.bandwidth_pct is not None
    ]
    return sum(values) / len(values) if values else None


def model_fits(model: NoiseModel | None, runs: Runs) -> tuple[NoiseModel | None, str]:
    """The model if it was measured on this machine with these samples, and what was used."""
    if model is None:
        return None, "no noise model: intervals see within-run noise and this job's repeats only"
    machine = runs[0].machine
    calls = {r.provenance.text("calls_per_sample") if r.provenance else None for r in runs}
    if model.machine != machine:
        return None, f"the noise model is for machine {model.machine}, not {machine}: not used"
    if calls != {model.calls_per_sample}:
        return None, (
            f"the noise model is for {model.calls_per_sample} call(s) per sample, these runs "
            f"have {', '.join(sorted(map(str, calls)))}: not used"
        )
    fusion = next((k.fusion for r in runs for k in r.points), DEFAULT_FUSION)
    used = len(model.runs_for(fusion))
    return model, f"between-run noise from {used} A/A runs on {model.machine}"


def decide(
    base: Runs | CommitResults,
    head: Runs | CommitResults,
    s: VerdictSettings,
    model: NoiseModel | None = None,
) -> Verdict:
    """The verdict for head against base (each one run or several of one commit)."""
    b_runs = (base,) if isinstance(base, CommitResults) else tuple(base)
    h_runs = (head,) if isinstance(head, CommitResults) else tuple(head)
    used, model_note = model_fits(model, (*b_runs, *h_runs))
    contenders = sorted(
        {k for r in (*b_runs, *h_runs) for k in r.contenders() if _measured(k, (*b_runs, *h_runs))}
    )
    references = sorted({k.reference() for k in contenders})
    gating = [k for k in contenders if s.is_gating(k.variant)]
    context = [k for k in contenders if not s.is_gating(k.variant)]

    def with_bw(rows: Sequence[PointVerdict]) -> list[PointVerdict]:
        return [
            replace(p, bandwidth_pct=(_bandwidth(b_runs, p.key), _bandwidth(h_runs, p.key)))
            for p in rows
        ]

    ratio = decide_family("ratio", gating, b_runs, h_runs, s, used, True)
    ctx = decide_family("ratio", context, b_runs, h_runs, s, used, False)
    nv = decide_family("kernel", references, b_runs, h_runs, s, used, True)
    th = decide_family("kernel", gating, b_runs, h_runs, s, used, True)
    ctx_kernels = decide_family("kernel", context, b_runs, h_runs, s, used, False)
    # The ratio rows name the kernel comparisons of their size (which side moved); only the
    # comparisons are read there, so the kernel rows are corroborated after.
    nv_rows, th_rows, ctx_rows = with_bw(nv.rows), with_bw(th.rows), with_bw(ctx_kernels.rows)
    kernels = {p.key: p for p in (*nv_rows, *th_rows, *ctx_rows)}
    rows = with_bw(_explain([*ratio.rows, *ctx.rows], kernels))
    gating_rows = [p for p in rows if p.gating]
    nv_rows = corroborate_kernels(nv_rows, gating_rows)
    th_rows = corroborate_kernels(th_rows, gating_rows)
    kernel_rows = [*nv_rows, *th_rows, *ctx_rows]
    broken_rows = [p for p in (*gating_rows, *nv_rows) if p.state in ("broken", "still failing")]
    nv_state, th_state = guard_state(nv_rows, nv.aggregates), guard_state(th_rows, th.aggregates)
    ratio_state = ratio_owner(guard_state(gating_rows, ratio.aggregates), nv_state, th_state)
    nv_slower = nv_state in ("regressed", "unsure")

    def guard(kind: GuardKind, state: State, points: Sequence[PointVerdict], aggs: Aggs) -> Guard:
        g = Guard(kind, state, "", tuple(points), aggs)
        return replace(g, summary=guard_summary(g, s, nv_slower))

    broken = Guard(
        "broken", broken_state(broken_rows), _broken_summary(broken_rows), tuple(broken_rows)
    )
    guards = (
        broken,
        guard("nvfuser", nv_state, nv_rows, nv.aggregates),
        guard("thunder", th_state, th_rows, th.aggregates),
        guard("ratio", ratio_state, gating_rows, ratio.aggregates),
    )
    overall = overall_state(guards)
    with_data = [p for p in gating_rows if p.cmp is not None]
    worst = max(with_data, key=lambda p: p.cmp.change.estimate if p.cmp else 0.0, default=None)
    return Verdict(
        overall=overall,
        reason=_reason(overall, guards),
        machine=h_runs[0].machine,
        base=b_runs[0].commit,
        head=h_runs[0].commit,
        points=tuple(rows),
        summaries=ratio.aggregates,
        worst=worst,
        settings=s,
        notes=(
            *_tiled_notes(b_runs, h_runs),
            *_notes(b_runs[0], h_runs[0], rows, model_note, used),
        ),
        guards=guards,
        kernels=tuple(kernel_rows),
        runs=(len(b_runs), len(h_runs)),
        model=model_note,
        levels=ratio_level(gating_rows, ratio.aggregates, s.effect),
    )


def _measured(key: PointKey, runs: Runs) -> bool:
    """Whether any run measured the point or failed at it: a variant that no run measured
    by choice (the context baselines a PR leaves out of the catalog's fusions) is no news."""
    return any(
        (p := r.points.get(key)) is not None and p.no_data not in ("skipped", "missing")
        for r in runs
    )


def _tiled_notes(base: Runs, head: Runs) -> list[str]:
    """First of all: a side made of tiled test input is no measurement (bot/results/tiled.py)."""
    notes = []
    for name, runs in (("base", base), ("head", head)):
        marker = next((r.tiled for r in runs if r.tiled is not None), None)
        if marker is not None:
            notes.append(f"{name} is {tiled_words(marker)}")
    return notes


def _broken_summary(rows: Sequence[PointVerdict]) -> str:
    broken = [p for p in rows if p.state == "broken"]
    still = [p for p in rows if p.state == "still failing"]
    parts = []
    if broken:
        parts.append(f"{len(broken)} point(s) with data at base fail at head")
    if still:
        parts.append(f"{len(still)} point(s) still failing (at base too)")
    return "; ".join(parts) or "every point that ran at base runs at head"


def _reason(overall: str, guards: Sequence[Guard]) -> str:
    order = {"broken": 0, "regressed": 1, "unsure": 2, "improved": 3}
    picked = sorted((g for g in guards if g.state in order), key=lambda g: order[g.state])
    if not picked:
        compared = max((sum(p.cmp is not None for p in g.points) for g in guards), default=0)
        if overall == "inconclusive (no data)":
            return "no gating point has data at both commits"
        return f"no guard moved by its threshold ({compared} points compared)"
    return "; ".join(f"{g.title}: {g.summary}" for g in picked)


def _notes(
    base: CommitResults,
    head: CommitResults,
    points: Sequence[PointVerdict],
    model_note: str,
    used: NoiseModel | None,
) -> tuple[str, ...]:
    notes = []
    missing = [p for p in points if p.cmp is None]
    if missing:
        notes.append(f"{len(missing)} point(s) without data at base or head")
    flaky = [p for p in points if p.cmp is not None and p.error]
    if flaky:
        first = f"{flaky[0].key.label}: {flaky[0].error}"
        notes.append(
            f"{len(flaky)} point(s) failed in some runs and were decided on the runs that "
            f"worked (first: {first})"
        )
    if used is None:
        notes.append(model_note)
    if base.provenance and head.provenance:
        for keys, what in (
            (("gpu", "name"), "GPU"),
            (("gpu", "driver"), "driver"),
            (("gpu", "cuda"), "CUDA"),
            (("size_set",), "size set"),
        ):
            b, h = base.provenance.text(*keys), head.provenance.text(*keys)
            if b != h:
                notes.append(f"base and head differ in {what}: {b} vs {h}")
    return tuple(notes)
