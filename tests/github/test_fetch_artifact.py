"""fetch-artifact: a bench run's artifacts are checked before one byte is unpacked.

Through the fake GitHub over real HTTP: the listing, the 302 to the blob (followed without the
token), and real zips built to break one rule each. The messages name the rule and show a
hostile name only escaped, never at the start of a line (where ``::`` is a workflow command).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from zip_helpers import tampered

from bot.commands.cli import main
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_TOKEN, LocalGitHub
from bot.github.fake.actions import WorkflowRun, zip_of
from bot.github.trust_artifact import Entry, Limits, Listed, Violation, check_entries, select

REPO = "NVIDIA/Fuser"
PREFIX = "bench-pr-results"
GOOD = {"bench-meta.json": b"{}", "results/rep-1/h200/x.json": b"{}"}


def fetch(
    fake: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, dest: Path, *extra: str
) -> tuple[int, str]:
    argv = ["fetch-artifact", "--repo", REPO, "--run-id", str(run.id), "--dest", str(dest)]
    rc = main([*argv, *extra], {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url})
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


@pytest.fixture
def run(fake_github: LocalGitHub) -> WorkflowRun:
    return fake_github.state.actions.add_run(REPO, head_sha="b" * 40)


def test_every_machine_artifact_is_unpacked_into_its_own_folder(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    actions = fake_github.state.actions
    for label in ("gpu-h200", "gpu-b200"):
        actions.add_artifact(run, f"{PREFIX}-{label}", zip_of(GOOD))
    actions.add_artifact(run, "coverage", zip_of({"../evil": b"x"}))  # not ours: never fetched
    rc, out = fetch(fake_github, capsys, run, tmp_path / "a")
    assert rc == ExitCode.OK_NO_REGRESSION, out
    for label in ("gpu-h200", "gpu-b200"):
        assert (tmp_path / "a" / f"{PREFIX}-{label}" / "results/rep-1/h200/x.json").is_file()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [
        f"{PREFIX}-gpu-b200",
        f"{PREFIX}-gpu-h200",
    ]
    blobs = fake_github.requests("GET", r"/actions/artifacts/\d+/zip$")
    assert len(blobs) == 2  # the blob itself is fetched from the web root, without the token


def test_the_artifact_bound_is_the_configured_machines_bound(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    """Issue 20's 12-machine artifact: one more than [results] max_machines is refused before
    anything is downloaded, with the bound named; the bound follows perfbot.toml."""
    actions = fake_github.state.actions
    for i in range(5):
        actions.add_artifact(run, f"{PREFIX}-nvidia-h200-x{i:02}", zip_of(GOOD))
    out = _rejects(fake_github, capsys, run, tmp_path / "a", "more than the bound of 4")
    assert "[results] max_machines" in out
    assert not fake_github.requests("GET", r"/zip$")  # not one download
    config = tmp_path / "perfbot.toml"
    config.write_text("[results]\nmax_machines = 5\n", encoding="utf-8")
    rc, out = fetch(fake_github, capsys, run, tmp_path / "b", "--config", str(config))
    assert rc == ExitCode.OK_NO_REGRESSION, out
    assert len(list((tmp_path / "b").iterdir())) == 5


def _rejects(
    fake: LocalGitHub,
    capsys: pytest.CaptureFixture[str],
    run: WorkflowRun,
    dest: Path,
    rule: str,
    *extra: str,
) -> str:
    rc, out = fetch(fake, capsys, run, dest, *extra)
    assert rc == ExitCode.UNTRUSTED, out
    assert rule in out, out
    assert not any(line.lstrip().startswith("::") for line in out.splitlines()), out
    assert not [p for p in dest.rglob("*") if p.is_file()], "nothing may be unpacked"
    return out


def test_an_oversized_artifact_is_refused_by_its_listing(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    fake_github.state.actions.add_artifact(run, PREFIX, zip_of(GOOD), size_in_bytes=10**9)
    _rejects(fake_github, capsys, run, tmp_path / "a", "size rule")
    assert not fake_github.requests("GET", r"/zip$")  # refused before any download


def test_a_download_past_the_limit_is_cut_off_whatever_the_listing_says(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    noise = random.Random(0).randbytes(20_000)  # does not compress: the download is big
    big = zip_of({"results/x.json": noise})
    fake_github.state.actions.add_artifact(run, PREFIX, big, size_in_bytes=100)
    out = _rejects(fake_github, capsys, run, tmp_path / "a", "size rule", "--max-bytes", "1000")
    assert "is over 1000 bytes" in out


def test_a_zip_bomb_is_refused_by_its_unpacked_size(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    fake_github.state.actions.add_artifact(run, PREFIX, zip_of({"results/x.json": b"0" * 10**6}))
    _rejects(fake_github, capsys, run, tmp_path / "a", "unpacked size rule", "--max-bytes", "50000")


def test_too_many_files_are_refused(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    many = {f"results/{i}.json": b"{}" for i in range(30)}
    fake_github.state.actions.add_artifact(run, PREFIX, zip_of(many))
    _rejects(fake_github, capsys, run, tmp_path / "a", "file count rule", "--max-files", "20")


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("../outside.json", "entry name rule"),
        ("results/../../outside.json", "entry name rule"),
        ("/etc/cron.d/x", "entry name rule"),
        ("results\\x.json", "entry name rule"),
        ("::error::pwned", "entry name rule"),
        ("results/x\n::error::pwned", "entry name rule"),
    ],
    ids=["dotdot", "nested dotdot", "absolute", "backslash", "workflow command", "newline"],
)
def test_a_hostile_entry_name_is_refused_and_shown_escaped(
    fake_github: LocalGitHub,
    capsys: pytest.CaptureFixture[str],
    run: WorkflowRun,
    tmp_path: Path,
    name: str,
    rule: str,
) -> None:
    fake_github.state.actions.add_artifact(run, PREFIX, zip_of({**GOOD, name: b"x"}))
    out = _rejects(fake_github, capsys, run, tmp_path / "a", rule)
    assert ascii(name) in out
    assert not (tmp_path / "outside.json").exists()


def test_a_symlink_entry_is_refused(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    payload = zip_of(GOOD, symlinks={"results/link": "/etc/passwd"})
    fake_github.state.actions.add_artifact(run, PREFIX, payload)
    _rejects(fake_github, capsys, run, tmp_path / "a", "entry type rule")


@pytest.mark.parametrize("name", [f"{PREFIX}-::error::x", f"{PREFIX}-a/b", f"{PREFIX}-"])
def test_a_misnamed_artifact_is_refused(
    fake_github: LocalGitHub,
    capsys: pytest.CaptureFixture[str],
    run: WorkflowRun,
    tmp_path: Path,
    name: str,
) -> None:
    fake_github.state.actions.add_artifact(run, f"{PREFIX}-gpu-h200", zip_of(GOOD))
    fake_github.state.actions.add_artifact(run, name, zip_of(GOOD))
    _rejects(fake_github, capsys, run, tmp_path / "a", "artifact name rule")


def test_no_artifact_a_bad_dest_and_an_api_failure_have_their_codes(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, tmp_path: Path
) -> None:
    assert fetch(fake_github, capsys, run, tmp_path / "a")[0] == ExitCode.UNTRUSTED
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert fetch(fake_github, capsys, run, tmp_path / "full")[0] == ExitCode.USAGE
    fake_github.inject("GET", r"/artifacts$", 404, times=None)
    assert fetch(fake_github, capsys, run, tmp_path / "b")[0] == ExitCode.GITHUB_FAILURE


# ----- the pure rules -----

LIMITS = Limits(max_bytes=1000, max_files=10, max_artifacts=2)


def test_select_refuses_mixed_duplicate_expired_and_too_many() -> None:
    def listed(name: str, size: int = 1, expired: bool = False) -> Listed:
        return Listed(1, name, size, expired)

    ok = select([listed(PREFIX + "-b"), listed(PREFIX + "-a"), listed("x")], PREFIX, LIMITS)
    assert [a.name for a in ok] == [PREFIX + "-a", PREFIX + "-b"]
    for bad in (
        [listed(PREFIX), listed(PREFIX + "-a")],
        [listed(PREFIX + "-a"), listed(PREFIX + "-a")],
        [listed(PREFIX, expired=True)],
        [listed(PREFIX + f"-{i}") for i in range(3)],
        [listed(PREFIX + "-.hidden")],
    ):
        with pytest.raises(Violation):
            select(bad, PREFIX, LIMITS)


def test_entries_that_clash_or_are_special_are_refused() -> None:
    def entry(name: str, mode: int = 0o100644) -> Entry:
        return Entry(name, 1, mode << 16, 3)

    check_entries([entry("results/"), entry("results/a.json")], LIMITS)
    for bad in (
        [entry("a"), entry("a/b")],  # a file and a folder of the same name
        [entry("a"), entry("a")],
        [entry("fifo", 0o010644)],
        [entry("./a")],
    ):
        with pytest.raises(Violation):
            check_entries(bad, LIMITS)


@pytest.mark.parametrize("kind", ["encrypted", "corrupt deflate"])
def test_an_entry_that_cannot_be_unpacked_is_exit_6_and_leaves_nothing(
    fake_github: LocalGitHub,
    capsys: pytest.CaptureFixture[str],
    run: WorkflowRun,
    tmp_path: Path,
    kind: str,
) -> None:
    """Issue 20's staged zips: an encrypted flag, or a corrupt deflate stream, after 20 good
    files. Before: exit 1 with a traceback and 19-20 files left behind. Now: "untrusted" (6),
    the rule named, and not one file left in DEST."""
    fake_github.state.actions.add_artifact(run, PREFIX, tampered(kind))
    out = _rejects(fake_github, capsys, run, tmp_path / "a", "zip rule")
    assert "Traceback" not in out


def test_an_encrypted_entry_is_refused_with_the_central_directory() -> None:
    """Refused by the rules on the listing, before anything is unpacked (its flag bit), not
    only when unpacking it fails."""
    limits = Limits(max_bytes=10**6, max_files=10, max_artifacts=1)
    check_entries([Entry("results/x.json", 1, 0o644 << 16, 3)], limits)
    with pytest.raises(Violation, match=r"zip rule: 'results/x\.json' is encrypted"):
        check_entries([Entry("results/x.json", 1, 0o644 << 16, 3, flag_bits=0x1)], limits)
