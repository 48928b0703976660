"""The ``demo`` command: the real ``pr`` flow on recorded H200 results, posting to the local
GitHub fake (bot/github/fake) instead of GitHub, then printing what landed there.

It exists so that anyone can see the bot's whole output on a fresh clone, without a GPU, a
token or network: same loading, same publishing code as in CI, only the server differs. It
runs the flow twice, as a PR lives: once on the open PR (the comment and the status; the alert
is not filed yet, by the default ``[alerts] open_on = "merge"``), then once more after the PR
is merged (the alert: one issue in the repository that owns it, one linked in the other). Its
own exit code is 0; the code CI would have got is printed instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from bot.commands.demo_save import Posted, save_posts
from bot.commands.inputs import Loader, Selection
from bot.commands.pr import publish
from bot.commands.steps import step
from bot.config import Config, ConfigError
from bot.exitcodes import ExitCode
from bot.results.locate import list_commits
from bot.tell.comment import Context

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The recorded H200 results, newest first: the full demo pair, else the smoke run.
DEMO_RESULTS = (
    REPO_ROOT / "data" / "h200" / "results",
    REPO_ROOT / "data" / "h200-smoke" / "results",
)
#: The default demo: the whole catalog on the H200, 2 repeats a side as a PR runs it, stock
#: against a head whose Thunder Bias+GELU backward is 5% slower (data/h200-catalog/README.md).
DEMO_CATALOG = (
    REPO_ROOT / "data" / "h200-catalog" / "pair" / "rep-1",
    REPO_ROOT / "data" / "h200-catalog" / "pair" / "rep-2",
)
DEMO_CATALOG_PAIR = (
    "6a438ce967f8e234f948f873364a4e17933c7a4c",
    "e0cdef8e0a8c185212180a0ad7ba90188ea6f23a",
)
#: Both sides of the catalog pair's stack (stock), captured twice in later calls on the same
#: H200 and stack (data/h200-catalog/README.md, captures/): the gaps' clues and the hints.
DEMO_CATALOG_CAPTURES: tuple[Path | None, Path | None] = (
    REPO_ROOT / "data" / "h200-catalog" / "captures" / "stock-1",
    REPO_ROOT / "data" / "h200-catalog" / "captures" / "stock-2",
)
DEMO_REPO = "Lightning-AI/lightning-thunder"
#: The demo pair's two states, captured (bot/fusion): stock Thunder 0.2.6 and unfused-backward.
DEMO_CAPTURES: tuple[Path | None, Path | None] = (
    REPO_ROOT / "data" / "h200-captures" / "stock-0.2.6",
    REPO_ROOT / "data" / "h200-captures" / "unfused-backward-0.2.6",
)


def run_demo(
    env: Mapping[str, str],
    out: IO[str],
    load: Loader,
    *,
    results: Sequence[Path] | None,
    base: str | None,
    head: str | None,
    machine: str | None,
    config_path: Path | None,
    captures: tuple[Path | None, Path | None] = (None, None),
    save: Path | None = None,
) -> int:
    """The pr flow on real results, against bot/github/fake instead of GitHub; ``save``: a
    folder that gets what landed there, a file a post (bot/commands/demo_save.py)."""
    from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, start_server

    with step("pick the demo commits", ExitCode.USAGE):
        if (base is None) != (head is None):
            raise ConfigError("give both --base and --head, or neither")
        if not results and base is None and all(d.is_dir() for d in DEMO_CATALOG):
            results, (base, head) = list(DEMO_CATALOG), DEMO_CATALOG_PAIR
            if captures == (None, None):
                captures = DEMO_CATALOG_CAPTURES
        if not results:
            results = [next((d for d in DEMO_RESULTS if d.is_dir()), DEMO_RESULTS[0])]
        if base is None or head is None:
            base, head = demo_pair(results[0])
            plain = [Path(r).resolve() for r in results] == [DEMO_RESULTS[0]]
            if plain and captures == (None, None):
                # The same two states (stock Thunder 0.2.6 and its unfused-backward state), same
                # H200 and stack, captured in a later call: data/README.md, h200-captures/.
                captures = DEMO_CAPTURES
    sel = Selection(tuple(results), base, head, machine, config_path, captures)
    with start_server() as fake:
        with step("seed the local GitHub", ExitCode.GITHUB_FAILURE):
            fake.state.add_repo(DEMO_REPO)
            for repo in Config.from_env({}, config_path).issue_repos:
                fake.state.add_repo(repo)
            pull = fake.state.add_pull_request(
                DEMO_REPO,
                "Demo: the head commit of the demo pair",
                author=HUMAN_LOGIN,
                head_ref="demo/rmsnorm-bwd",
                head_sha=head.ljust(40, "0")[:40],
            )
        local_env = {
            "GITHUB_TOKEN": BOT_TOKEN,
            "GITHUB_API_URL": fake.base_url,
            "PERFBOT_COMMENT_LOGIN": BOT_LOGIN,
        }
        if "PERFBOT_SITE_URL" in env:
            local_env["PERFBOT_SITE_URL"] = env["PERFBOT_SITE_URL"]
        got = load(sel, local_env)
        ctx = Context(
            repo=DEMO_REPO,
            pr=pull.number,
            pr_title=pull.title,
            head_ref="demo/rmsnorm-bwd",
            site_url=got.config.site_url,
            docs_url=got.config.docs_url,
        )
        out.write(f"Results {', '.join(map(str, results))}: base {base[:12]}, head {head[:12]}\n")
        out.write(f"Local fake GitHub at {fake.web_url}; posting as {BOT_LOGIN}\n")
        out.write("\n===== 1. the PR is open: the bot comments and sets its status =====\n")
        code = publish(got, ctx, out)
        fake.state.pulls.finish(DEMO_REPO, pull.number, merged=True, by=HUMAN_LOGIN)
        out.write("\n===== 2. the PR is merged: the alert is filed =====\n")
        code = publish(got, ctx, out)
        comments = [c.body for c in fake.state.comments_on(DEMO_REPO, pull.number)]
        issues = [
            Posted(repo, i.number, i.state, i.title, i.body or "")
            for repo in got.config.issue_repos
            for i in fake.state.issues(repo)
            if i.pull is None
        ]
        out.write("\n===== the comment on " + f"{DEMO_REPO}#{pull.number} =====\n")
        out.writelines(body + "\n" for body in comments)
        for i in issues:
            out.write(f"\n===== issue {i.ref} ({i.state}): {i.title} =====\n{i.body}\n")
        # The full hash the status was set on (``head`` may be abbreviated on the command line).
        statuses = fake.state.pulls.of(DEMO_REPO, got.head)
    final = f"{statuses[0].state}: {statuses[0].description}" if statuses else "none"
    out.write(f"\nDemo finished: status {final} (exit code {code} in CI).\n")
    if save is not None:
        with step(f"save what was posted into {save}", ExitCode.USAGE):
            written = save_posts(save, comments, issues, final, int(code))
        out.write(f"Saved {len(written)} file(s) into {save}\n")
    return ExitCode.OK_NO_REGRESSION


def demo_pair(results: Path) -> tuple[str, str]:
    """The recorded demo pair: the first stock run (the baseline) as base, the deliberately
    slower one as head; with two plain runs, older against newer; with one, that run against
    itself (an A/A demo)."""
    commits = list_commits(results)
    stock = [c for c in commits if c.thunder_variant == "stock"]
    other = [c for c in commits if c.thunder_variant not in (None, "stock")]
    if stock and other:
        return stock[0].commit, other[-1].commit
    if len(commits) == 2:
        return commits[0].commit, commits[1].commit
    if len(commits) == 1:  # only one run recorded: an A/A demo, the commit against itself
        return commits[0].commit, commits[0].commit
    listing = ", ".join(f"{c.commit[:12]} ({c.thunder_variant})" for c in commits) or "none"
    raise ConfigError(
        f"cannot tell the demo pair in {results} (commits: {listing}): pass --base and --head"
    )
