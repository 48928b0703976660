"""The command line for a person at a checkout (issue 23, part 2): ``report`` prints text on a
terminal and markdown to a pipe, commits may be git refs, one commit twice is a usage error,
and a results path one level off says where the results are.

The command line is called in this process (bot.commands.cli.main), as tests/commands/
test_cli.py does; a terminal is the one fake here, :class:`Terminal`.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DATA, REPO_ROOT, working_directory

from bot.commands import cli
from bot.commands.git_refs import resolve_commit
from bot.exitcodes import ExitCode
from bot.tell.plain import markdown_to_text

H200 = DATA / "h200" / "results"
PAIR = ["--results", str(H200), "--base", "06f650c8", "--head", "9dc51696"]


class Terminal(io.StringIO):
    """stdout as a terminal: what a person running the command by hand has."""

    def isatty(self) -> bool:
        return True


def _report(*argv: str, terminal: bool = False) -> tuple[int, str, str]:
    """``report ARGV``: exit code, stdout, stderr, with stdout a terminal or a pipe."""
    out, err = (Terminal() if terminal else io.StringIO()), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = cli.main(["report", *argv], env={})
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def test_a_terminal_gets_text_and_a_pipe_gets_markdown() -> None:
    code, markdown, _ = _report(*PAIR)
    assert code == ExitCode.REGRESSION and markdown.startswith("<!-- fusion-perfbot:")
    code, text, _ = _report(*PAIR, terminal=True)
    assert code == ExitCode.REGRESSION and text == markdown_to_text(markdown) + "\n"
    assert "<!--" not in text and "\\(" not in text and "\\+" not in text
    assert _report(*PAIR, "--format", "markdown", terminal=True)[1] == markdown
    assert _report(*PAIR, "--format", "text")[1] == text


def test_format_json_is_what_json_dash_writes(tmp_path: Path) -> None:
    code, out, _ = _report(*PAIR, "--format", "json")
    assert code == ExitCode.REGRESSION
    assert json.loads(out)["exit_code"] == 1
    assert _report(*PAIR, "--json", "-", terminal=True)[1] == out
    file = tmp_path / "verdict.json"
    code, text, _ = _report(*PAIR, "--json", str(file), terminal=True)
    assert code == ExitCode.REGRESSION and json.loads(file.read_text()) == json.loads(out)
    assert text.startswith("RMSNorm") or "<!--" not in text  # the text beside the file


def test_json_dash_with_another_format_is_a_usage_error() -> None:
    code, out, err = _report(*PAIR, "--json", "-", "--format", "text")
    assert (code, out) == (ExitCode.USAGE, "")
    assert "--json - puts the verdict on stdout, where --format text puts the report" in err


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository of two commits: main, a tag v1 on the first and a branch named ``cafe``
    (a name that looks like a hash)."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for n in (1, 2):
        (repo / "f").write_text(str(n))
        _git(repo, "add", "f")
        _git(repo, "commit", "-q", "-m", f"c{n}")
        if n == 1:
            _git(repo, "tag", "v1")
    _git(repo, "branch", "cafe", "v1")
    return repo


def test_refs_resolve_in_the_current_directory_s_repository(checkout: Path) -> None:
    head, first = _git(checkout, "rev-parse", "HEAD"), _git(checkout, "rev-parse", "v1")
    assert resolve_commit("main", checkout) == head
    assert resolve_commit("HEAD~1", checkout) == resolve_commit("v1", checkout) == first
    assert resolve_commit("cafe", checkout) == first  # a ref, though it looks like a hash
    assert resolve_commit("06F650C8", checkout) == "06f650c8"  # a hash: kept for the results
    with working_directory(checkout):
        code, out, err = _report("--results", str(H200), "--base", "main", "--head", "9dc51696")
    assert (code, out) == (ExitCode.BAD_INPUT, "")  # resolved, and the results lack it
    assert f"--base main is {head}" in err and f"no results for commit {head}" in err


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        (
            "no-such-branch",
            "'no-such-branch' is not a commit hash (4-40 hex digits), and the "
            "git repository at {where} has no commit of that name",
        ),
        ("HEAD~99", "has no commit of that name (git rev-parse --verify HEAD~99^{{commit}})"),
        ("a b", "'a b' is neither a commit hash (4-40 hex digits) nor a git ref"),
    ],
)
def test_an_unknown_ref_is_a_usage_error_naming_it(checkout: Path, ref: str, said: str) -> None:
    with working_directory(checkout):
        code, out, err = _report("--results", str(H200), "--base", ref, "--head", "9dc51696")
    assert (code, out) == (ExitCode.USAGE, "")
    assert "argument --base: " in err and said.format(where=checkout) in err


def test_a_ref_without_a_repository_is_a_usage_error_saying_so(tmp_path: Path) -> None:
    with working_directory(tmp_path):
        code, _, err = _report("--results", str(H200), "--base", "06f650c8", "--head", "main")
        config = str(REPO_ROOT / "perfbot.toml")
        assert _report(*PAIR, "--config", config)[0] == ExitCode.REGRESSION  # hashes need none
    assert code == ExitCode.USAGE
    assert f"'main' is not a commit hash (4-40 hex digits), and {tmp_path} is in no git" in err


@pytest.mark.parametrize(
    ("base", "head", "said"),
    [
        ("06f650c8", "06f650c8", "--base 06f650c8 and --head 06f650c8 are the same commit"),
        ("06f650c8", "06F650C87BCC", "--base 06f650c8 and --head 06f650c87bcc are the same"),
        ("HEAD", "main", "--base HEAD ({head}) and --head main ({head}) are the same commit"),
    ],
)
@pytest.mark.parametrize("command", ["report", "pr"])
def test_one_commit_twice_is_a_usage_error(
    checkout: Path, command: str, base: str, head: str, said: str
) -> None:
    argv = [command, "--results", str(H200), "--base", base, "--head", head]
    if command == "pr":
        argv += ["--repo", "Lightning-AI/lightning-thunder", "--pr", "1", "--dry-run"]
    err = io.StringIO()
    with working_directory(checkout), pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stderr", err)
        mp.setattr(sys, "stdout", io.StringIO())
        assert cli.main(argv, env={}) == ExitCode.USAGE
    sha = _git(checkout, "rev-parse", "HEAD")[:12]
    assert f"step 'check arguments' failed: {said.format(head=sha)}" in err.getvalue()


def test_the_demo_still_runs_one_run_against_itself(capsys: pytest.CaptureFixture[str]) -> None:
    """Its A/A fallback: the smoke data holds one run, which the demo compares with itself."""
    smoke = DATA / "h200-smoke" / "results"
    assert cli.main(["demo", "--results", str(smoke)], env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "base 8b8c004158c5, head 8b8c004158c5" in out
    same = ["demo", "--results", str(smoke), "--base", "8b8c0041", "--head", "8b8c0041"]
    assert cli.main(same, env={}) == ExitCode.OK_NO_REGRESSION


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (DATA / "h200", f"the results are one level down: --results {H200}"),
        (
            H200 / "nvidia-h200",
            f"is one machine's folder (it holds machine.json); pass the "
            f"results directory above it: {H200}",
        ),
    ],
    ids=["one level too high", "one level too deep"],
)
def test_a_results_path_one_level_off_says_where_the_results_are(given: Path, said: str) -> None:
    code, out, err = _report("--results", str(given), "--base", "06f650c8", "--head", "9dc51696")
    assert (code, out) == (ExitCode.BAD_INPUT, "")  # missing results stay exit 3
    assert "step 'read results' failed: " in err and said in err


def test_a_folder_without_results_below_gets_no_hint(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    code, _, err = _report("--results", str(tmp_path), "--base", "06f650c8", "--head", "9dc51696")
    assert code == ExitCode.BAD_INPUT
    assert err.rstrip().endswith("no asv machine directories (no */machine.json)")
