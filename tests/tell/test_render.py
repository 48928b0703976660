"""The comment and issue markdown: content, escaping of untrusted text, size limit, links."""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import unquote

import numpy as np
import pytest
from data_helpers import MACHINE, SyntheticResults, state_from_rounds, synthetic
from hypothesis import given
from hypothesis import strategies as st

from bot.alert.model import Alert, build_alert, pr_key
from bot.config import VerdictSettings
from bot.decide.types import Verdict
from bot.decide.verdict import decide
from bot.github.issue_body import MAX_BODY
from bot.results.locate import load_pair
from bot.results.types import PointKey
from bot.tell.alert_issue import alert_spec
from bot.tell.comment import MARKER, Context, graph_url, render_comment
from bot.tell.machines import MachineReport, render_report
from bot.tell.markdown import MAX_CHARS, escape_md, link
from bot.tell.summary import SUMMARY_CHARS

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


def _verdict(synth: SyntheticResults, head: str) -> tuple[Verdict, str]:
    base, h = load_pair(synth.results_dir, synth.commits["base"], synth.commits[head])
    v = decide(base, h, S)
    return v, render_comment(v, CTX, base.provenance, h.provenance)


def test_comment_layout_for_a_regression(synthetic: SyntheticResults) -> None:
    v, body = _verdict(synthetic, "thunder_slower")
    assert body.startswith(MARKER + "\n")
    assert "**Regressed**" in body
    assert f"base {v.base[:12]} → head {v.head[:12]}" in body
    assert "[CI run](https://github.com/NVIDIA/Fuser/actions/runs/99)" in body
    assert "```mermaid\nxychart-beta" in body
    assert "<details><summary>Provenance</summary>" in body
    assert "synthetic test input \\(no GPU\\)" in body  # labelled, never passed off as a GPU
    rows = [line for line in body.splitlines() if line.startswith("| thunder-")]
    main = rows[: len([p for p in v.points if p.gating])]
    changes = [float(re.search(r"\| ([+-]\d+\.\d)% \[", r).group(1)) for r in main]  # type: ignore[union-attr]
    assert changes == sorted(changes, reverse=True)  # worst first
    assert all("regressed" in r and "| thunder |" in r for r in main)


def test_broken_and_no_data(synthetic: SyntheticResults) -> None:
    _, body = _verdict(synthetic, "failed_point")
    assert "💥 **Broken**: a point that ran at base fails at head" in body
    assert "3 point\\(s\\) with data at base fail at head" in body
    assert "**Points that fail**" in body and "| 💥 broken | failed at head |" in body
    assert "4 point\\(s\\) without data" in body  # eager and torch.compile too, unmarked


def test_context_rows_carry_no_marks_and_every_row_its_threshold(
    synthetic: SyntheticResults,
) -> None:
    _, body = _verdict(synthetic, "nvfuser_faster")
    main_rows = [r for r in body.splitlines() if re.search(r"^\| \S+ \S+ \S+ \| \d\.\d{3} \[", r)]
    context = [r for r in main_rows if r.startswith(("| eager ", "| torch-compile "))]
    assert context and not any(mark in r for r in context for mark in "🔴🟢🟡⚪💥")
    assert all("| 2.0% |" in r for r in context)
    gating = [r for r in main_rows if r.startswith("| thunder-")]
    assert gating and all("| 2.0% | 🔴 regressed" in r for r in gating)


def test_untrusted_text_is_inert(synthetic: SyntheticResults) -> None:
    _, body = _verdict(synthetic, "same")
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


def test_a_large_sweep_is_summarised_under_its_limit() -> None:
    """600 points: counts by variant and dtype and the worst rows, far under GitHub's limit;
    the full tables (report --full) are longer than GitHub would take."""
    v = _many_points(600)
    body = render_comment(v, CTX, None, None)
    assert len(body) <= SUMMARY_CHARS < MAX_CHARS < 65536
    assert body.startswith(MARKER) and "**Regressed**" in body
    assert "| thunder-prims | bfloat16 | 600 | 600 🔴 regressed |" in body
    assert "`fusion-perfbot report --full` prints every row, `--json FILE` writes them" in body
    full = render_report([MachineReport(v.machine, v)], CTX, {}, full=True)
    assert len(full) > 65536 and full.count("| thunder-prims bfloat16 ") == 3 * 600


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
    title = r"RMSNorm backward: Thunder's kernels [0-9.]+% slower \(and 1 more\) in "
    assert re.match(title, spec.title), spec.title
    assert MARKER not in spec.body  # the issue is not the sticky comment
    assert f"### {MACHINE}: Thunder/nvFuser kernel-time ratio (regressed)" in spec.body
    assert f"### {MACHINE}: Thunder's own kernel time (regressed)" in spec.body
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
    assert same.splitlines()[3].startswith("⚪ **No change**: no guard moved by its threshold")
    _, slower = _verdict(synthetic, "thunder_slower")
    assert slower.splitlines()[3] == (
        "🔴 **Regressed**: Thunder's own kernel time; Thunder/nvFuser kernel-time ratio"
    )
    _, broken = _verdict(synthetic, "failed_point")
    assert broken.splitlines()[3].endswith(": 3 point\\(s\\) with data at base fail at head")


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
