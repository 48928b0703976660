"""The GPU-only candidate timer's split of a round's activities into calls (issue 39): by
order alone, each call's activities between its own L2 flush and the next; anything it cannot
be sure of is None (the side-by-side check counts those rounds)."""

from __future__ import annotations

from benchmarks.engine.timing import DeviceEvent, KernelSample, split_at_flushes

FLUSH = ("fill_int8",)


def _events(*names: str) -> list[DeviceEvent]:
    return [DeviceEvent(n, float(i), float(i + 1)) for i, n in enumerate(names)]


def test_each_call_gets_what_follows_its_flush() -> None:
    got = split_at_flushes(
        _events("fill_int8", "k1", "k2", "fill_int8", "k3"), FLUSH, ["nvfuser#0", "thunder#0"]
    )
    assert got == {
        "nvfuser#0": KernelSample(kernel_us=2.0 + 3.0, names=("k1", "k2")),
        "thunder#0": KernelSample(kernel_us=5.0, names=("k3",)),
    }


def test_a_flush_of_several_activities_is_one_delimiter() -> None:
    two = ("memset", "fill_int8")
    got = split_at_flushes(_events("memset", "fill_int8", "k", "memset", "fill_int8", "k"), two,
                           ["a", "b"])  # fmt: skip
    assert got is not None and got["a"].names == got["b"].names == ("k",)


def test_what_it_cannot_be_sure_of_is_none() -> None:
    labels = ["a", "b"]
    # a call that launches the flush's own activity: three delimiters for two calls
    assert (
        split_at_flushes(_events("fill_int8", "fill_int8", "fill_int8", "k"), FLUSH, labels) is None
    )
    # a call that launched nothing
    assert split_at_flushes(_events("fill_int8", "fill_int8", "k"), FLUSH, labels) is None
    # something before the first flush (a clear that launches work)
    assert (
        split_at_flushes(_events("zero", "fill_int8", "k", "fill_int8", "k"), FLUSH, labels) is None
    )
    # no flush pattern at all
    assert split_at_flushes(_events("k", "k"), (), labels) is None


def test_the_side_by_side_call_says_what_its_readme_quotes() -> None:
    """data/h100-timer-check/: table.py over the committed side-by-side results prints the
    lines its README quotes."""
    import subprocess
    import sys

    from paths import DATA

    folder = DATA / "h100-timer-check"
    done = subprocess.run(
        [sys.executable, "table.py", "results/pr-rmsnorm.jsonl", "results/smoke-all.jsonl"],
        cwd=folder, capture_output=True, text=True, check=True,
    )  # fmt: skip
    readme = (folder / "README.md").read_text(encoding="utf-8")
    quoted = readme.split("```\n")[1].splitlines()
    printed = [line.replace("results/", "") for line in done.stdout.splitlines()]
    assert quoted and all(line.replace("results/", "") in printed for line in quoted), quoted


def test_the_catalog_side_by_side_says_what_its_readme_quotes() -> None:
    """data/h100-issue39/call7/timer/: the two timers over the whole catalog's pr set; its
    README (point 7) quotes what table.py prints, and the verdict it draws holds: the same
    kernels everywhere, medians within 0.3%."""
    import subprocess
    import sys

    from paths import DATA, REPO_ROOT

    done = subprocess.run(
        [sys.executable, str(DATA / "h100-timer-check" / "table.py"),
         "data/h100-issue39/call7/timer/pr-all.jsonl"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    readme = (DATA / "h100-issue39" / "README.md").read_text(encoding="utf-8")
    block = readme.split("`python3 data/h100-timer-check/table.py")[1].split("```")[1]
    quoted = [line.strip() for line in block.splitlines() if line.strip()]
    printed = [line.strip() for line in done.stdout.splitlines()]
    assert len(quoted) == 6 and quoted == printed[:6], (quoted, printed)
    assert "kernel names equal: 59/59; counts equal: 59/59; untrusted candidate rounds: 0" in quoted
