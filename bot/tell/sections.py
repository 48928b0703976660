"""The comment's folded sections that are not tables of points (pure): the charts by size and
the provenance of both sides (the package under test among it: bot/tell/under_test.py)."""

from __future__ import annotations

import re

from bot.decide.types import Verdict
from bot.results.types import Provenance
from bot.tell.markdown import escape_md
from bot.tell.under_test import under_test_rows


def _shape_order(shape: str) -> tuple[int, int]:
    m, _, n = shape.partition("x")
    return (int(m) * int(n), int(m)) if m.isdigit() and n.isdigit() else (0, 0)


def mermaid_charts(v: Verdict) -> list[str]:
    """One xychart per gating variant and dtype: base as bars, head as a line, by size."""
    charts = []
    groups = sorted({(p.key.variant, p.key.dtype) for p in v.points if p.gating and p.ratio})
    for variant, dtype in groups:
        pts = [p for p in v.points if (p.key.variant, p.key.dtype) == (variant, dtype)]
        pts = sorted((p for p in pts if p.ratio), key=lambda p: _shape_order(p.key.shape))
        base = [p.ratio.base.estimate for p in pts if p.ratio]
        head = [p.ratio.head.estimate for p in pts if p.ratio]
        top = max([*base, *head, 1.0]) * 1.15

        def clean(s: str) -> str:
            return re.sub(r"[^A-Za-z0-9x._-]", "", s)

        xs = ", ".join(f'"{clean(p.key.shape)}"' for p in pts)
        charts.append(
            "```mermaid\nxychart-beta\n"
            f'    title "{clean(variant)} {clean(dtype)}: ratio to nvFuser (bar base, line head)"\n'
            f"    x-axis [{xs}]\n"
            f'    y-axis "kernel-time ratio" 0 --> {top:.2f}\n'
            f"    bar [{', '.join(f'{x:.4f}' for x in base)}]\n"
            f"    line [{', '.join(f'{x:.4f}' for x in head)}]\n```"
        )
    return charts


def provenance_table(base: Provenance | None, head: Provenance | None, v: Verdict) -> str:
    rows = [("commit", v.base[:12], v.head[:12]), ("machine", v.machine, v.machine)]
    fields = [
        ("GPU", ("gpu", "name")),
        ("peak bandwidth GB/s", ("gpu", "peak_bandwidth_gbps")),
        ("driver", ("gpu", "driver")),
        ("CUDA", ("gpu", "cuda")),
        ("torch", ("versions", "torch")),
        ("nvFuser", ("versions", "nvfuser")),
        ("Thunder", ("versions", "thunder")),
        ("Python", ("versions", "python")),
        ("asv", ("versions", "asv")),
        ("Thunder variant", ("thunder_variant",)),
        ("size set", ("size_set",)),
        ("rounds", ("rounds",)),
        ("calls per sample", ("calls_per_sample",)),
        ("started", ("started_at",)),
    ]
    for label, keys in fields:
        b = base.text(*keys) if base else None
        h = head.text(*keys) if head else None
        rows.append((label, b or "n/a", h or "n/a"))
    lines = ["| | base | head |", "|---|---|---|"]
    lines += [f"| {label} | {escape_md(b)} | {escape_md(h)} |" for label, b, h in rows[:2]]
    lines += under_test_rows(base, head)
    lines += [f"| {label} | {escape_md(b)} | {escape_md(h)} |" for label, b, h in rows[2:]]
    if base is None or head is None:
        lines.append("\nNo provenance record for " + ("base" if base is None else "head") + ".")
    return "\n".join(lines)
