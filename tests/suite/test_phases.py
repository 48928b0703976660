"""Where a measuring process's seconds went (benchmarks/engine/phases.py, issue 39 part 4): the
split of committed records, and the table docs/PERFORMANCE.md quotes, printed again."""

from __future__ import annotations

import contextlib
import io

from paths import DATA, REPO_ROOT

from benchmarks.engine import phases

PAIR = sorted((DATA / "h200-catalog" / "pair").glob("rep-*/nvidia-h200/*.provenance.jsonl"))


def test_a_record_splits_into_its_phases_and_the_rest() -> None:
    record = {
        "started_at": "2026-12-04T10:00:00+00:00",
        "finished_at": "2026-12-04T10:00:10+00:00",
        "points": {
            "p": {
                "phases_s": {"build_and_check_s": 6.0, "rounds_s": 3.0, "host_s": 0.5},
                "variants": {"nvfuser": {"compile_s": 2.0}, "eager": {"compile_s": None}},
            }
        },
    }
    split = phases.split_of(record, "x")
    assert split.wall_s == 10.0 and split.points == 1
    assert split.compile_s == {"nvfuser": 2.0}
    assert abs(split.rest_s - 0.5) < 1e-9


def test_the_table_performance_md_quotes_is_what_the_records_print() -> None:
    assert len(PAIR) == 4
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert phases.main([str(p) for p in PAIR]) == 0
    table = [line for line in out.getvalue().splitlines() if line.startswith(("rep-", "all "))]
    assert table[-1].startswith("all | 68 | 287.0 | 208.0 | 45.9 | 83.5 | 61.6 |")
    doc = (REPO_ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    assert all(line in doc for line in table)
