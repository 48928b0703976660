"""The comment and issue markdown: content, escaping of untrusted text, size limit, links.

The layout is bot/tell/templates/; these tests hold what it must say (the verdict first, a line
a guard, the rows worst first, nothing untrusted live), not its exact words."""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import unquote

import numpy as np
import pytest
from data_helpers import MACHINE, SyntheticResults, state_from_rounds, synthetic
from hypothesis import given
from hypothesis import strategies as st

from bot.alert.decision import decide_run
from bot.alert.measured import Measured
from bot.alert.model import Alert, build_alert, pr_key
from bot.config import VerdictSettings
from bot.decide.types import Guard, Verdict
from bot.decide.verdict import decide
from bot.github.issue_body import MAX_BODY
from bot.results.locate import load_pair
from bot.results.types import PointKey
from bot.tell.alert_issue import alert_spec
from bot.tell.comment import MARKER, Context, render_report
from bot.tell.markdown import MAX_CHARS, escape_md, link
from bot.tell.rows import graph_url

__all__ = ["synthetic"]
S = VerdictSettings()
EVIL = "<img src=x onerror=alert(1)> @everyone [x](https://evil.example) `rm` | #1 ![i](y)\n# H"
CTX = Context(
    repo="NVIDIA/Fuser",
    pr=12,
    pr_title=EVIL,
    head_ref="feature/@maintainers|<b>",
    run_url="https://github.com/NVIDIA/Fuser/actions/runs/99",
    site_url="https://nvidia.github.io/fusion-perfbot",
)


def _verdict(synth: SyntheticResults, head: str, *, full: bool = False) -> tuple[Verdict, str]:
    base, h = load_pair(synth.results_dir, synth.commits["base"], synth.commits[head])
    v = decide(base, h, S)
    return v, render_report(decide_run([Measured(v.machine, v, (base,), (h,))]), CTX, full=full)


def _first_screen(body: str) -> str:
    return body.split("<details>")[0]


def test_comment_layout_for_a_regression(synthetic: SyntheticResults) -> None:
    v, body = _verdict(synthetic, "thunder_slower")
    assert body.startswith(MARKER + "\n### 🔴 RMSNorm backward: Regressed: ")
    first = _first_screen(body)
    assert f"base {v.base[:12]} → head {v.head[:12]}" in first
    guards = [line for line in first.splitlines() if re.match(r"- [^\s*]+ \*\*", line)]
    assert len(guards) == len(v.guards) == 4  # a line a guard
    assert "[CI run](https://github.com/NVIDIA/Fuser/actions/runs/99)" in body
    assert "<details><summary>Provenance" in body and "docs/METHOD.md" in body
    assert "synthetic test input \\(no GPU\\)" in body  # labelled, never passed off as a GPU
    rows = [line for line in first.splitlines() if line.startswith("| thunder-")]
    assert 0 < len(rows) <= 5  # a handful on the first screen
    changes = [float(re.search(r"\| ([+-]\d+\.\d)%", r).group(1)) for r in rows]  # type: ignore[union-attr]
    assert changes == sorted(changes, reverse=True)  # worst first


def test_broken_and_no_data(synthetic: SyntheticResults) -> None:
    _, body = _verdict(synthetic, "failed_point")
    assert body.splitlines()[1] == (
        "### 💥 RMSNorm backward: Broken: 3 point(s) that ran at base fail at head"
    )
    first = _first_screen(body)
    assert "| error at head | points |" in first
    assert body.count("failed at head") == 1  # one error text, once, with the points it hit
    (row,) = [r for r in first.splitlines() if "failed at head" in r]
    assert row.startswith("| 💥 failed at head | ") and row.count("float32 16384x8192") == 3


def test_context_rows_carry_no_marks(synthetic: SyntheticResults) -> None:
    """eager and torch.compile are context: left out of the posted comment, listed by
    ``report --full`` in words, never with a verdict's mark."""
    _, body = _verdict(synthetic, "thunder_slower")
    assert "| eager " not in body and "| torch-compile " not in body
    _, full = _verdict(synthetic, "thunder_slower", full=True)
    context = [r for r in full.splitlines() if r.startswith(("| eager ", "| torch-compile "))]
    assert context and not any(mark in r for r in context for mark in "🔴🟢🟡⚪💥")
    gating = [r for r in full.splitlines() if r.startswith("| thunder-") and "[" in r]
    assert gating and not any("🟢" in r for r in gating)
    assert "(kernel-time ratio): regressed</summary>" in full  # its rows, the unchanged too
    # nvFuser faster with nothing recorded as changed, Thunder steady (the ratio moved with
    # it): not drift but a side that moved alone, not judged; nothing is green.
    _, faster = _verdict(synthetic, "nvfuser_faster", full=True)
    assert "🟢" not in faster and "with nothing recorded to explain it" in faster


def test_untrusted_text_is_inert(synthetic: SyntheticResults) -> None:
    """The PR's title and branch are not repeated on the PR itself; a text from the runner (why
    a machine was not compared) is shown, escaped."""
    base, h = load_pair(synthetic.results_dir, synthetic.commits["base"], synthetic.commits["same"])
    v = decide(base, h, S)
    reports = [Measured(v.machine, v, (base,), (h,)), Measured("x", None, missing=EVIL)]
    body = render_report(decide_run(reports), CTX)
    for bad in ("<img", "@everyone", "@maintainers", "](https://evil", "`rm`", "<b>", "#1 "):
        assert bad not in body
    assert "&lt;img src\\=x onerror\\=alert\\(1\\)&gt;" in body


@given(st.text(max_size=300))
def test_escape_md_property(text: str) -> None:
    out = escape_md(text, limit=400)
    assert "\n" not in out and "\r" not in out
    assert "<" not in out and ">" not in out
    assert not re.search(r"(?<!\\)[|`\[\]()*_]", out)  # every markup character escaped
    assert not re.search(r"@[A-Za-z0-9]", out)  # no mention survives
    assert not re.search(r"#[0-9]", out)  # no issue reference survives
    assert "://" not in out


def test_escape_md_truncates() -> None:
    assert escape_md("a" * 50, limit=10) == "a" * 9 + "…"


def test_graph_url_matches_asv_hash_route() -> None:
    key = PointKey("thunder-prims", "bfloat16", "2048x8192")
    url = graph_url("https://x.github.io/site/", key)
    assert url == (
        "https://x.github.io/site/#bench_rmsnorm_bwd.RatioToNvfuser.track_ratio"
        "?p-variant='thunder-prims'&p-dtype='bfloat16'&p-shape='2048x8192'"
    )
    with_machine = graph_url("https://x.github.io/site", key, "h200 (x)")
    assert with_machine.endswith("&machine=h200%20%28x%29")
    params = dict(p.split("=") for p in with_machine.split("?", 1)[1].split("&"))
    assert unquote(params["machine"]) == "h200 (x)"


def test_link_refuses_unsafe_urls() -> None:
    assert link("x", "https://ok.example/a") == "[x](https://ok.example/a)"
    assert link("x", "javascript:alert(1)") == "x"
    assert link("x", "https://a.example/) [y](https://evil") == "x"
    assert link("x", None) == "x"


def _many_points(n: int) -> Verdict:
    """A large sweep, to exercise the size limit (in-memory rounds, no asv needed)."""
    rng = np.random.default_rng(0)
    base, head = {}, {}
    for i in range(n):
        nv = list(rng.lognormal(np.log(5e-5), 0.01, 12))
        th = [t * 0.7 for t in nv]
        base[("bfloat16", f"{i + 1}x8192")] = {"nvfuser": nv, "thunder-prims": th}
        head[("bfloat16", f"{i + 1}x8192")] = {
            "nvfuser": nv,
            "thunder-prims": [t * 1.1 for t in th],
        }
    return decide(state_from_rounds("a", base), state_from_rounds("b", head), S)


def test_a_large_sweep_stays_short() -> None:
    """600 points: the same handful of rows as 9 points, far under GitHub's limit; the full
    tables (report --full) are longer than GitHub would take."""
    v = _many_points(600)
    body = render_report(decide_run([Measured(v.machine, v)]), CTX)
    assert len(body) <= 8_000 < MAX_CHARS < 65536
    assert body.startswith(MARKER) and "Regressed" in body.splitlines()[1]
    assert "(600 of 600 points regressed)" in body and "_and 595 more_" in body
    full = render_report(decide_run([Measured(v.machine, v)]), CTX, full=True)
    assert len(full) > 65536 and full.count("| thunder-prims bfloat16 ") == 2 * 600 + 5


def test_a_comment_over_the_limit_loses_its_details_first() -> None:
    """What does not fit goes from the end (the stack, the hints, the folds), the verdict and
    the guard lines stay, and the comment says what was cut."""
    v = _many_points(40)
    report = [Measured(v.machine, v)]
    whole = render_report(decide_run(report), CTX)
    cut = render_report(decide_run(report), CTX, limit=len(whole) - 200)
    assert len(cut) <= len(whole) - 200 and "Some details were left out" in cut
    assert _first_screen(cut).split("\n\n")[:3] == _first_screen(whole).split("\n\n")[:3]


def _alert_of(v: Verdict, previous: dict[str, float] | None = None) -> Alert:
    repos = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")
    return build_alert(
        {v.machine: v}, {}, [], key=pr_key("NVIDIA/Fuser", 12), configured=repos,
        pr_repo="NVIDIA/Fuser", previous=previous,
    )  # fmt: skip


def test_the_alert_issues_title_body_and_linked_body(synthetic: SyntheticResults) -> None:
    v, _ = _verdict(synthetic, "thunder_slower")
    alert = _alert_of(v)
    spec = alert_spec(alert, {v.machine: v}, CTX, {}, "perf")
    assert "\n" not in spec.title and len(spec.title) <= 256
    title = r"RMSNorm backward: Thunder's kernels [0-9.]+% slower, ratio [0-9.]+x → [0-9.]+x in "
    assert re.match(title, spec.title), spec.title
    assert MARKER not in spec.body  # the issue is not the sticky comment
    assert f"### 🔴 {MACHINE}: Thunder against nvFuser (kernel-time ratio), " in spec.body
    assert f"### 🔴 {MACHINE}: Thunder's own kernels, " in spec.body
    assert "How this is decided" in spec.body and "Per round" not in spec.body  # linked
    assert "History: [thunder-" in spec.body
    assert len(spec.body) < MAX_BODY
    linked = spec.body_for("NVIDIA/Fuser")
    assert linked.startswith("**A performance alert of ") and "###" not in linked
    assert re.search(rf"- {MACHINE}: Thunder [0-9.]+% slower relative to nvFuser\n", linked + "\n")
    assert spec.title_for("NVIDIA/Fuser").endswith("(tracked in Lightning-AI/lightning-thunder)")


def test_one_alert_keyed_by_the_pr_whatever_the_push(synthetic: SyntheticResults) -> None:
    v, _ = _verdict(synthetic, "thunder_slower")
    alert = _alert_of(v)
    assert alert.key == "rmsnorm-bwd|pr|NVIDIA/Fuser#12"
    assert [s.guard for s in alert.sections] == ["thunder", "ratio"]
    rebased = replace(v, base="e" * 40, head="f" * 40)  # a new push, on a new base
    assert _alert_of(rebased).key == alert.key
    # Thunder's kernels moved and nvFuser's did not: the alert is Thunder's.
    assert alert.repos == ("Lightning-AI/lightning-thunder", "NVIDIA/Fuser")
    with pytest.raises(ValueError):
        pr_key("not a repo", 1)
    with pytest.raises(ValueError):
        pr_key("NVIDIA/Fuser", 0)


def test_markdown_tables_keep_their_columns(synthetic: SyntheticResults) -> None:
    """Escaped pipes must not add cells: every row of a table has its header's cell count."""
    _, body = _verdict(synthetic, "failed_point")
    table: list[int] = []
    for line in [*body.splitlines(), ""]:
        if line.startswith("|"):
            table.append(len(re.findall(r"(?<!\\)\|", line)))
        elif table:
            assert len(set(table)) == 1, table
            table = []


def test_the_headline_names_what_moved_and_only_that(synthetic: SyntheticResults) -> None:
    _, same = _verdict(synthetic, "same")
    assert same.splitlines()[1] == "### ⚪ RMSNorm backward: No change"
    _, slower = _verdict(synthetic, "thunder_slower")
    assert re.fullmatch(
        r"### 🔴 RMSNorm backward: Regressed: Thunder's kernels [0-9.]+% slower",
        slower.splitlines()[1],
    )


def test_an_alert_closes_only_when_every_point_it_tracks_was_measured(
    synthetic: SyntheticResults,
) -> None:
    """float32 16384x8192 fails at head: the broken guard is a section; and were the last run's
    ratio the only section, the ratio guard reading "no change" on the points that ran is no
    evidence that what failed recovered: the alert holds, it does not close."""
    v, _ = _verdict(synthetic, "failed_point")
    alert = _alert_of(v)
    assert [s.guard for s in alert.sections] == ["broken"] and alert.state == "regressed"
    held = _alert_of(replace(v, guards=tuple(g for g in v.guards if g.kind != "broken")),
                     previous={f"{MACHINE}/ratio": 1.1})  # fmt: skip
    assert held.state == "hold"
    v, _ = _verdict(synthetic, "same")
    assert _alert_of(v, previous={f"{MACHINE}/ratio": 1.1}).state == "recovered"
    assert _alert_of(v).state == "recovered"


def test_an_unsure_verdict_says_how_to_settle_it(synthetic: SyntheticResults) -> None:
    """Unsure: never red, and what would settle it (runs a side, judged together) is on the
    first screen. Made from a real verdict by marking its moved points unsure, each needing 4
    runs a side in all (1 measured: 3 more)."""
    base, h = load_pair(
        synthetic.results_dir, synthetic.commits["base"], synthetic.commits["thunder_slower"]
    )
    v = decide(base, h, S)

    def unsure(g: Guard) -> Guard:
        if g.state != "regressed":
            return g
        points = tuple(
            replace(p, state="unsure", settle=4) if p.state == "regressed" else p for p in g.points
        )
        aggregates = tuple(replace(a, state="no change") for a in g.aggregates)
        return replace(g, state="unsure", points=points, aggregates=aggregates)

    v = replace(v, overall="unsure", guards=tuple(unsure(g) for g in v.guards))
    body = render_report(decide_run([Measured(v.machine, v, (base,), (h,))]), CTX)
    first = _first_screen(body)
    assert body.splitlines()[1] == "### 🟡 RMSNorm backward: Unsure"
    assert "🔴" not in body and "/perfbot ack" not in body  # nothing to acknowledge
    assert "about 3 more run(s) a side would settle it" in first
    assert f"--results RUN1 --results RUN2 --base {v.base[:12]} --head {v.head[:12]}" in first


def test_an_acknowledged_regression_is_not_red_on_the_first_line(
    synthetic: SyntheticResults,
) -> None:
    """A maintainer's acknowledgement changes the headline (never a red one for what they
    accepted) and the first screen says who and why; "Intended?" is not asked again."""
    from bot.alert.ack import AckDecision, AckRecord
    from bot.alert.plan import IssuePlan
    from bot.alert.status import Status
    from bot.tell.next_steps import AlertPart

    base, h = load_pair(
        synthetic.results_dir, synthetic.commits["base"], synthetic.commits["thunder_slower"]
    )
    v = decide(base, h, S)
    words = 'acknowledged by @bob: "worth it"'
    ack = AckDecision(AckRecord("comment 1", "bob", "worth it"), True, words)
    plan = IssuePlan("acknowledge", "", "acknowledged: no alert issue is opened")
    status = Status("acknowledged", "Acknowledged: acknowledged by @bob")
    part = AlertPart(_alert_of(v), ack, plan, status, (), "perfbot-acknowledged", "")
    body = render_report(decide_run([Measured(v.machine, v, (base,), (h,))]), CTX, part)
    assert body.splitlines()[1].startswith("### ☑️ RMSNorm backward: Acknowledged (regressed: ")
    first = _first_screen(body)
    assert '**Acknowledged by @\u200dbob: "worth it".**' in first and "Intended?" not in first


def test_the_method_is_linked_not_pasted(synthetic: SyntheticResults) -> None:
    """With the docs' address (the poster sets PERFBOT_DOCS_URL), the comment links
    docs/METHOD.md and docs/ALERTS.md; without it, it names them."""
    base, h = load_pair(synthetic.results_dir, synthetic.commits["base"], synthetic.commits["same"])
    v = decide(base, h, S)
    report = [Measured(v.machine, v, (base,), (h,))]
    docs = "https://github.com/o/fusion-perfbot/blob/HEAD/docs/"
    linked = render_report(decide_run(report), replace(CTX, docs_url=docs))
    assert f"[How this is decided]({docs}METHOD.md)" in linked
    assert f"]({docs}ALERTS.md)" in linked and "Per round" not in linked
    assert "fusion-perfbot's `docs/METHOD.md`" in render_report(decide_run(report), CTX)


def test_a_ratio_that_fell_where_nvfuser_moved_is_never_a_gain_in_a_table(
    synthetic: SyntheticResults,
) -> None:
    """The comment's and the issues' tables use the one row verdict the watch's tables use: a
    ratio point that improved because nvFuser's own kernel moved there reads "not a gain", even
    when nvFuser's guard as a whole did not move."""
    from bot.tell.tables import guard_table
    from bot.tell.words import point_name

    base, h = load_pair(synthetic.results_dir, synthetic.commits["base"], synthetic.commits["same"])
    v = decide(base, h, S)
    ratio = v.guard("ratio")
    assert ratio is not None and ratio.points
    assert len(ratio.points) >= 2
    nv = replace(ratio.points[0], state="improved", moved="nvfuser", corroborated=True)
    th = replace(ratio.points[1], state="improved", moved="thunder", corroborated=True)
    g = replace(ratio, state="improved", points=(nv, th, *ratio.points[2:]))
    table = guard_table(g, v)
    assert table is not None and "verdict" in table.columns
    verdicts = {r[0]: r[table.columns.index("verdict")] for r in table.rows}
    assert verdicts[point_name(nv.key)].startswith("⚪ lower only because")
    assert verdicts[point_name(th.key)] == "🟢 improved"  # Thunder's own gain is one
