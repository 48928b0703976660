"""Where a measuring process's seconds went (benchmarks/engine/phases.py, issue 39 part 4): the
split of committed records, and the table docs/PERFORMANCE.md quotes, printed again."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest
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


def test_a_turns_wait_is_not_counted_as_the_rest() -> None:
    """One of a job's turns: its record starts when it began building, and the seconds it
    waited for its turn are its own phase, not unexplained rest."""
    record = {
        "started_at": "2026-12-04T10:00:00+00:00",
        "finished_at": "2026-12-04T10:00:30+00:00",
        "phases_s": {"startup_s": 12.0, "open_s": 1.0, "wait_turn_s": 19.5},
        "points": {"p": {"phases_s": {"build_and_check_s": 6.0, "rounds_s": 3.0, "host_s": 0.5}}},
    }
    assert abs(phases.split_of(record, "x").rest_s - 0.0) < 1e-9


def test_the_table_performance_md_quotes_is_what_the_records_print() -> None:
    assert len(PAIR) == 4
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert phases.main([str(p) for p in PAIR]) == 0
    table = [line for line in out.getvalue().splitlines() if line.startswith(("rep-", "all "))]
    assert table[-1].startswith("all | 68 | - | 287.0 | - | 208.0 | 45.9 | 83.5 | 61.6 |")
    doc = (REPO_ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    assert all(line in doc for line in table)


def test_a_record_that_says_its_start_up_shows_it_and_a_total_says_only_what_all_said() -> None:
    new = {
        "started_at": "2026-12-07T10:00:00+00:00",
        "finished_at": "2026-12-07T10:00:20+00:00",
        "phases_s": {"startup_s": 9.5, "open_s": 2.0},
        "points": {"p": {"phases_s": {"build_and_check_s": 10.0, "rounds_s": 7.0}}},
    }
    old = {**new, "phases_s": None}
    split = phases.split_of(new, "new")
    assert split.run_cell("startup_s") == "9.5" and split.run_cell("open_s") == "2.0"
    assert abs(split.rest_s - 1.0) < 1e-9  # 20 - 10 - 7 - 2
    lines = phases.render([split, phases.split_of(old, "old")])
    rows = {line.split(" | ")[0]: line.split(" | ") for line in lines if " | " in line}
    assert rows["new"][2] == "9.5" and rows["old"][2] == "-" and rows["all"][2] == "-"
    (alone,) = [line for line in phases.render([split]) if line.startswith("all ")]
    assert alone.split(" | ")[2] == "9.5"


def test_process_start_is_read_from_linux_proc() -> None:
    from benchmarks.engine.provenance import process_started

    # pid (comm with ") " inside) state, then fields 4..: field 22 (starttime) is 1500 ticks.
    fields = ["S", *[str(n) for n in range(4, 22)], "1500", "0"]
    stat = "1234 (python (x) y) " + " ".join(fields)
    assert process_started(stat, "cpu 1 2\nbtime 1700000000\n", 100) == 1700000015.0


def test_a_gpu_record_of_issue_39_holds_its_start_up() -> None:
    """data/h100-records/results/phases.provenance.jsonl, a real run: its README's figures."""
    path = DATA / "h100-records" / "results" / "phases.provenance.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert phases.main([str(path)]) == 0
    (row,) = [line for line in out.getvalue().splitlines() if line.startswith("all ")]
    assert row.split(" | ")[2:6] == ["8.4", "12.0", "0.2", "10.3"]
    assert row in (path.parent / "phases.txt").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(
    ("call", "processes", "steps"),
    [
        ("call3", 4, True),
        ("call5", 4, True),
        ("call6/rmsnorm-before", 4, False),  # 769b128's pipeline: no steps files
        ("call6/rmsnorm-after", 4, True),
        ("call7/catalog-after", 4, True),
        ("call8/catalog-before", 1, False),  # stopped in its first process's capture
        ("call10/rmsnorm-turns", 4, True),
        ("call10/rmsnorm-after", 4, True),
        ("call12/catalog-after", 4, True),
        ("call13/catalog-turns", 4, True),
    ],
)
def test_the_tables_performance_md_quotes_are_what_the_h100_records_print(
    call: str, processes: int, steps: bool
) -> None:
    records = sorted((DATA / "h100-issue39" / call).glob("rep-*/*/*.provenance.jsonl"))
    assert len(records) == processes
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert phases.main([str(p) for p in records]) == 0
    lines = [
        line
        for line in out.getvalue().splitlines()
        if line.startswith(("rep-", "all ", "GPU held", "capture |", "store |"))
    ]
    assert len(lines) == processes + 1 + 3 * steps
    doc = (REPO_ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    assert all(line in doc for line in lines)


def _timing(call: str) -> dict[str, str]:
    """A job's logs/timing.txt (record.sh): each measuring process's wall time by its log's
    name, and the pair's last line."""
    text = (DATA / "h100-issue39" / call / "logs" / "timing.txt").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines()]
    walls = {r[0]: r[2] for r in rows if len(r) > 4 and not r[4].startswith("asv store")}
    return {**walls, "pair": text.splitlines()[-1]}


def test_the_before_and_after_figures_performance_md_gives_are_in_the_jobs_logs() -> None:
    """The process walls and the before job's span that PERFORMANCE.md quotes beside the
    tables come from record.sh's own log of each job."""
    before, after = _timing("call6/rmsnorm-before"), _timing("call6/rmsnorm-after")
    assert before["pair"] == "pair stock-1 stock-2, 2 repeats: 254.1 s measuring, 259.1 s in all"
    assert [before["stock-1-rep1"], before["stock-2-rep1"]] == ["98.3 s", "77.7 s"]
    assert [after["stock-1-rep1"], after["stock-2-rep1"]] == ["57.2 s", "34.1 s"]
    catalog_before, catalog_after = _timing("call8/catalog-before"), _timing("call7/catalog-after")
    assert (
        catalog_before["stock-1-rep1"] == "200.0 s" and catalog_after["stock-1-rep1"] == "132.5 s"
    )
    doc = (REPO_ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    assert before["pair"] in doc
    for figure in ("98.3 and 77.7 s before, 57.2 and 34.1 s after", "took 132.5 s in all"):
        assert figure in " ".join(doc.split())


def test_a_jobs_steps_add_up_and_the_gpu_is_held_from_the_first_gpu_step_to_the_last() -> None:
    steps = [
        phases.Step("check_before", 100.0, 101.0, 0),
        phases.Step("measure", 101.0, 150.0, 0),
        phases.Step("capture", 148.0, 149.0, 0),
        phases.Step("check_after", 150.0, 151.0, 0),
        phases.Step("store", 151.0, 160.0, 0),  # beside the next process, or the final one
        phases.Step("measure", 152.0, 180.0, 2),
        phases.Step("store", 180.0, 190.0, 0),
    ]
    lines = phases.job_lines(steps)
    assert "measure | 2 | 77.0" in lines and "store | 2 | 19.0" in lines
    assert lines[-2].startswith("GPU held 80.0 s") and "went on 10.0 s after it" in lines[-2]
    assert "90.0 s in all" in lines[-2]
    assert lines[-1] == "failed steps: measure (exit 2)"
    assert phases.job_lines([])[0].startswith("(no steps file")


def test_a_job_of_turns_overlaps_and_holds_the_gpu_from_first_start_to_last_end() -> None:
    """Two turns: both measure from t=100 (building side by side), the second waits for the
    first; the GPU is held from the first start to the last end, not for the sum."""
    steps = [
        phases.Step("measure", 100.0, 150.0, 0),
        phases.Step("build", 100.5, 140.0, 0),
        phases.Step("wait_turn", 140.0, 141.0, 0),
        phases.Step("measure", 100.0, 160.0, 0),
        phases.Step("build", 100.5, 138.0, 0),
        phases.Step("wait_turn", 138.0, 150.0, 0),
        phases.Step("store", 160.0, 165.0, 0),
        phases.Step("store", 165.0, 170.0, 0),
    ]
    lines = phases.job_lines(steps)
    assert "measure | 2 | 110.0" in lines
    assert "build | 2 | 77.0" in lines and "wait_turn | 2 | 13.0" in lines
    assert lines[-1].startswith("GPU held 60.0 s") and "went on 10.0 s after it" in lines[-1]


def test_the_by_fusion_table_performance_md_quotes_is_what_the_records_print() -> None:
    """`--by-fusion` over call 7's catalog job: every fusion once, the costliest build first,
    the build seconds adding up to the process table's, and the table PERFORMANCE.md quotes."""
    records = sorted(
        (DATA / "h100-issue39" / "call7" / "catalog-after").glob("rep-*/*/*.provenance.jsonl")
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert phases.main(["--by-fusion", *map(str, records)]) == 0
    lines = out.getvalue().splitlines()
    rows = [line.split(" | ") for line in lines[2:]]
    assert len(rows) == 14 and rows[0][0] == "rmsnorm_bwd" and rows[0][1] == "16"
    builds = [float(r[2]) for r in rows]
    assert builds == sorted(builds, reverse=True)
    assert abs(sum(builds) - 245.7) < 0.2  # the process table's build+check, all four processes
    doc = (REPO_ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    assert "\n".join(lines) in doc


@pytest.mark.parametrize(
    ("turns", "one_at_a_time", "printed", "quoted"),
    [
        (  # item 11: RMSNorm backward, one machine
            "call10/rmsnorm-turns",
            "call10/rmsnorm-after",
            "20 point-variants: mean |difference| 0.24%, the largest -1.45% "
            "(thunder-func, float32/2048x8192)",
            ("20 point-variants, mean |difference| 0.24%", "largest -1.45%"),
        ),
        (  # item 15: the whole catalog, machines F and E
            "call13/catalog-turns",
            "call12/catalog-after",
            "59 point-variants: mean |difference| 0.23%, the largest -1.03% "
            "(torch-compile, bfloat16/16384x8192)",
            ("59 point-variants,\n    mean |difference| 0.23%", "the largest -1.03%"),
        ),
    ],
)
def test_the_kernel_times_of_turns_agree_as_the_h100_readme_says(
    turns: str, one_at_a_time: str, printed: str, quoted: tuple[str, str]
) -> None:
    """data/h100-issue39/README.md: what compare_medians.py prints for each job of turns."""
    script = DATA / "h100-issue39" / "compare_medians.py"
    jobs = DATA / "h100-issue39"
    done = subprocess.run(
        [sys.executable, str(script), str(jobs / turns), str(jobs / one_at_a_time)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == printed
    readme = (DATA / "h100-issue39" / "README.md").read_text(encoding="utf-8")
    assert all(q in readme for q in quoted)
