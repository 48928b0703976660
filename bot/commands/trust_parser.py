"""The grammar of the privileged poster's two commands, verify-run and fetch-artifact.

Beside bot/commands/parser.py (which calls it; the shared pieces are bot/commands/args.py) so
that each file stays readable whole; the values the poster passes here come from the workflow
event and the artifact, so each one is checked for its exact shape before any command runs.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.commands.args import Handler, config_option, pr_number, repo


def _full_sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a full commit hash (40 hex digits)")
    return text


def _count(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 2**63:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _workflow_path(text: str) -> str:
    if not re.fullmatch(r"\.github/workflows/[A-Za-z0-9._-]+\.ya?ml", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not .github/workflows/NAME.yml")
    return text


def _name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a plain name ([A-Za-z0-9._-])")
    return text


def add_trust_commands(
    add: Callable[[str, str, Handler], argparse.ArgumentParser], handlers: Mapping[str, Handler]
) -> None:
    """The privileged poster's two checks (docs/WORKFLOWS.md, the trust boundary)."""
    p = add(
        "verify-run",
        "check with GitHub that a bench run may be trusted before its artifact is used "
        "(exit 6 if not)",
        handlers["verify-run"],
    )
    p.description = (
        "Ask GitHub (GITHUB_TOKEN, GITHUB_API_URL) whether workflow run --run-id is a genuine "
        "bench run at --head-sha: the run's workflow file (its path, not its name), "
        "repository, event (pull_request), --attempt and conclusion (success), and its head. "
        "With --pr also: the run's head commit and head repository equal the PR's head, and, "
        "for a fork head, a user with write, maintain or admin role approved that exact commit "
        "(a review whose commit_id is the head, not dismissed or followed by a request for "
        "changes). Without --pr the run alone is checked: the poster does that before it "
        "downloads the run's artifact. One line per check; values read from GitHub are shown "
        "escaped."
    )
    p.add_argument("--repo", type=repo, required=True, help="OWNER/NAME the poster runs in")
    p.add_argument("--run-id", type=_count, required=True, help="the workflow run's id")
    p.add_argument(
        "--workflow-path",
        type=_workflow_path,
        default=".github/workflows/bench-pr.yml",
        help="the workflow file the run must be of (default: .github/workflows/bench-pr.yml)",
    )
    p.add_argument(
        "--pr",
        type=pr_number,
        default=None,
        help="the PR number the artifact claims (omitted: check the run alone)",
    )
    p.add_argument(
        "--head-sha", type=_full_sha, required=True, help="the head commit the artifact claims"
    )
    p.add_argument(
        "--attempt",
        type=_count,
        default=None,
        help="the run attempt the workflow_run event named (omitted: any)",
    )

    p = add(
        "fetch-artifact",
        "download a run's artifacts and unpack them only if every limit holds (exit 6 if not)",
        handlers["fetch-artifact"],
    )
    p.description = (
        "List the artifacts of --run-id (GITHUB_TOKEN, GITHUB_API_URL); every one whose name "
        "starts with --name-prefix must be PREFIX or PREFIX-NAME ([A-Za-z0-9._-]), unexpired "
        "and at most --max-bytes. Each zip is downloaded (stopping at --max-bytes) and its "
        "entries checked before anything is written: at most --max-files, at most --max-bytes "
        "unpacked, names relative with only [A-Za-z0-9._/-] and no '..', no symbolic links. "
        "Each artifact is unpacked into DEST/<artifact-name>/."
    )
    p.add_argument("--repo", type=repo, required=True, help="OWNER/NAME of the run")
    p.add_argument("--run-id", type=_count, required=True, help="the workflow run's id")
    p.add_argument(
        "--name-prefix", type=_name, default="bench-pr-results", help="artifact name prefix"
    )
    p.add_argument("--dest", type=Path, required=True, help="an empty or new folder")
    p.add_argument(
        "--max-bytes",
        type=_count,
        default=256 * 1024 * 1024,
        help="per artifact: listed size, download and unpacked total (default: 256 MiB)",
    )
    p.add_argument(
        "--max-files", type=_count, default=20_000, help="entries per zip (default: 20000)"
    )
    p.add_argument(
        "--max-artifacts",
        type=_count,
        default=None,
        help="artifacts with the prefix, one per machine (default: perfbot.toml [results] "
        "max_machines, 4 unless set: the bound `pr` holds the machines to)",
    )
    config_option(p)
