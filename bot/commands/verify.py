"""The ``verify-run`` command: may the poster believe this bench run and its artifact?

The privileged poster fires for any completed run *named* bench-pr, so before it posts it asks
GitHub itself (never the event or the artifact) what the run was: its workflow file, its
repository, event, attempt and conclusion, its head (commit, repository and branch) against
the PR the artifact names (a run speaks for its own PR only), and,
for a fork, whether someone with write access approved that exact head commit. Without --pr it
checks the run alone: the poster does that before it downloads anything of the run. The checks
are pure (bot/github/trust.py); the requests are bot/github/trust_api.py. One line per check, each
value from outside shown as an escaped literal. A failed check exits 6 (UNTRUSTED); a GitHub
failure exits 4; a missing token exits 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import IO

import github

from bot.commands.steps import StepFailed, step
from bot.config import Config
from bot.exitcodes import ExitCode
from bot.github.trust import Claim, gate_logins, verify


def connect(
    env: Mapping[str, str], toml_path: Path | None = None
) -> tuple[github.Github, str, Config]:
    """A client on $GITHUB_API_URL with $GITHUB_TOKEN (read access is enough), the token, and
    the configuration (`toml_path`'s, else the defaults)."""
    from bot.github.client import github_for

    with step("load configuration", ExitCode.USAGE):
        cfg = Config.from_env(env, toml_path)
        if cfg.comment_token is None:
            raise ValueError("GITHUB_TOKEN is not set: the checks read GitHub's API")
        token = cfg.comment_token.reveal()
        gh = github_for(cfg, token)
    return gh, token, cfg


def run_verify(env: Mapping[str, str], out: IO[str], claim: Claim) -> int:
    from bot.github.trust_api import (
        MalformedAnswer,
        fetch_pull,
        fetch_reviews,
        fetch_role,
        fetch_run,
    )

    gh, _, _ = connect(env)
    what = "the run" if claim.pr is None else "the run, the PR and its reviews"
    with step(f"read {what}", ExitCode.GITHUB_FAILURE):
        try:
            run = fetch_run(gh, claim.repo, claim.run_id)
            pull = None if claim.pr is None else fetch_pull(gh, claim.repo, claim.pr)
            reviews = [] if claim.pr is None else fetch_reviews(gh, claim.repo, claim.pr)
        except MalformedAnswer as exc:
            raise StepFailed("read GitHub's answers", ExitCode.GITHUB_FAILURE, str(exc)) from exc
    with step("read the permissions of who approved the head", ExitCode.GITHUB_FAILURE):
        roles = {
            login.lower(): fetch_role(gh, claim.repo, login)
            for login in gate_logins(claim, run, reviews)
        }
    checks = verify(claim, run, pull, reviews, roles)
    for check in checks:
        out.write(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.found}\n")
    failed = [c.name for c in checks if not c.ok]
    if failed:
        raise StepFailed(
            "verify the bench run",
            ExitCode.UNTRUSTED,
            f"run {claim.run_id} is not trusted: {', '.join(failed)} failed; nothing may be "
            "read from its artifact",
        )
    if claim.pr is None:
        out.write(f"run {claim.run_id} passed every check of the run itself (its PR is next)\n")
    else:
        out.write(f"run {claim.run_id} of PR #{claim.pr} passed every check\n")
    return ExitCode.OK_NO_REGRESSION
