"""Command line: ``fusion-perfbot`` / ``python -m bot``.

Every command is a short list of named steps; any failure leaves as one line naming the step,
with the exit code of its class (bot/exitcodes.py), and nothing half-done behind it: the JSON
file is written whole or not at all, the comment is posted only once everything is rendered.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Literal

from bot.config import Config, ConfigError
from bot.exitcodes import HELP, ExitCode
from bot.issues import IssueSpec, RepoIssueOutcome
from bot.linking import issue_spec
from bot.render import MARKER, Context, render_comment, update_note
from bot.results import BadInput, CommitResults, list_commits, load_pair
from bot.verdict import Verdict, decide, to_json

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The recorded H200 results, newest first: the full demo pair, else the smoke run.
DEMO_RESULTS = (
    REPO_ROOT / "data" / "h200" / "results",
    REPO_ROOT / "data" / "h200-smoke" / "results",
)


class StepFailed(Exception):
    def __init__(self, step: str, code: ExitCode, message: str) -> None:
        super().__init__(f"step '{step}' failed: {message}")
        self.code = code


@contextmanager
def step(name: str, default: ExitCode) -> Iterator[None]:
    """Run one step; known failures keep their class, anything else takes the step's."""
    from bot.github_api import GitHubFailure

    try:
        yield
    except StepFailed:
        raise
    except ConfigError as exc:
        raise StepFailed(name, ExitCode.USAGE, str(exc)) from exc
    except BadInput as exc:
        raise StepFailed(name, ExitCode.BAD_INPUT, str(exc)) from exc
    except GitHubFailure as exc:
        raise StepFailed(name, ExitCode.GITHUB_FAILURE, str(exc)) from exc
    except Exception as exc:
        raise StepFailed(name, default, f"{type(exc).__name__}: {exc}") from exc


def _sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{4,40}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a commit hash (4-40 hex digits)")
    return text.lower()


def _repo(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not OWNER/NAME")
    return text


def _pr(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 10**9:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pull request number")
    return int(text)


@dataclass(frozen=True)
class Loaded:
    config: Config
    base: CommitResults
    head: CommitResults
    verdict: Verdict


def load(args: argparse.Namespace, env: Mapping[str, str]) -> Loaded:
    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, args.config)
    with step("read results", ExitCode.BAD_INPUT):
        machine = args.machine or config.machine
        s = config.verdict
        base, head = load_pair(args.results, args.base, args.head, machine, s.min_samples)
    with step("compute verdict", ExitCode.BAD_INPUT):
        verdict = decide(base, head, config.verdict)
    return Loaded(config, base, head, verdict)


def write_json_atomically(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def verdict_code(v: Verdict) -> ExitCode:
    return ExitCode.REGRESSION if v.regressed else ExitCode.OK_NO_REGRESSION


def cmd_report(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    got = load(args, env)
    with step("render comment", ExitCode.BAD_INPUT):
        ctx = Context(run_url=got.config.run_url, site_url=got.config.site_url)
        body = render_comment(got.verdict, ctx, got.base.provenance, got.head.provenance)
    if args.json is not None:
        with step(f"write {args.json}", ExitCode.USAGE):
            write_json_atomically(args.json, to_json(got.verdict))
    out.write(body + "\n")
    return verdict_code(got.verdict)


def cmd_pr(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    got = load(args, env)
    ctx = Context(
        repo=args.repo,
        pr=args.pr,
        pr_title=args.pr_title,
        head_ref=args.head_ref,
        run_url=got.config.run_url,
        site_url=got.config.site_url,
    )
    return publish(got, ctx, out, dry_run=args.dry_run)


def _dry(got: Loaded, ctx: Context, spec: IssueSpec | None, state: str, note: str, why: str) -> str:
    body = render_comment(got.verdict, ctx, got.base.provenance, got.head.provenance)
    lines = [
        f"DRY RUN ({why}): nothing was posted.",
        f"Would create or update the bot's comment on {ctx.repo}#{ctx.pr}:",
        "----- comment -----",
        body,
        "----- end of comment -----",
    ]
    if spec is None:
        lines.append("Would not touch linked issues (disabled, or no data).")
    elif state == "recovered":
        lines += [
            f"Would close any open linked issue with key {spec.key} in {', '.join(spec.repos)}",
            "after commenting:",
            note,
        ]
    else:
        lines += [
            f"Would open or update linked issues in {', '.join(spec.repos)}",
            f"key: {spec.key}",
            f"label: {spec.label}",
            f"title: {spec.title}",
            "----- issue body -----",
            spec.body,
            "----- note on existing issues -----",
            note,
            "----- end of issues -----",
        ]
    return "\n".join(lines) + "\n"


def _links(outcomes: Sequence[RepoIssueOutcome]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (f"{o.repo}#{o.number}" + (" (closed)" if o.action == "closed" else ""), o.url)
        for o in outcomes
        if o.number is not None and o.url is not None
    )


def publish(got: Loaded, ctx: Context, out: IO[str], *, dry_run: bool = False) -> int:
    """Issues first (so the comment can link them), then the comment; dry without a token."""
    from bot.comment import upsert_sticky_comment
    from bot.github_api import make_github
    from bot.issues import sync_regression_issues

    cfg, v = got.config, got.verdict
    spec: IssueSpec | None = None
    state: Literal["regressed", "recovered"] = "regressed" if v.regressed else "recovered"
    with step("build issue", ExitCode.BAD_INPUT):
        note = update_note(v, ctx)
        if cfg.file_issues and v.overall != "inconclusive (no data)":
            spec = issue_spec(v, ctx, cfg.issue_repos, cfg.issue_label)
    if dry_run or cfg.comment_token is None:
        why = "--dry-run" if dry_run else "no GITHUB_TOKEN"
        out.write(_dry(got, ctx, spec, state, note, why))
        return verdict_code(v)
    outcomes: tuple[RepoIssueOutcome, ...] = ()
    issue_failure: StepFailed | None = None
    if spec is not None and cfg.issues_token is not None:
        token = cfg.issues_token
        try:
            with step("sync linked issues", ExitCode.GITHUB_FAILURE):
                gh_issues = make_github(
                    cfg.api_url,
                    token.reveal(),
                    timeout=cfg.timeout_s,
                    max_retry_wait=cfg.max_retry_wait_s,
                )
                outcomes = sync_regression_issues(
                    lambda _repo: gh_issues, spec, state, note, bot_login=cfg.issues_login
                )
        except StepFailed as failure:  # still post the comment: the verdict is the main news
            issue_failure = failure
    with step("render comment", ExitCode.BAD_INPUT):
        body = render_comment(
            v, replace(ctx, issue_links=_links(outcomes)), got.base.provenance, got.head.provenance
        )
    with step(f"post comment on {ctx.repo}#{ctx.pr}", ExitCode.GITHUB_FAILURE):
        gh = make_github(
            cfg.api_url,
            cfg.comment_token.reveal(),
            timeout=cfg.timeout_s,
            max_retry_wait=cfg.max_retry_wait_s,
        )
        assert ctx.repo is not None and ctx.pr is not None
        posted = upsert_sticky_comment(
            gh, ctx.repo, ctx.pr, body, MARKER, bot_login=cfg.comment_login
        )
    out.write(f"verdict: {v.overall}\ncomment {posted.action}: {posted.url}\n")
    for o in outcomes:
        out.write(f"issue in {o.repo}: {o.action} {o.url or ''}".rstrip() + "\n")
    failed = [o for o in outcomes if o.action == "failed"]
    if issue_failure is not None:
        raise issue_failure
    if failed:
        detail = "; ".join(f"{o.repo}: {o.error}" for o in failed)
        raise StepFailed("sync linked issues", ExitCode.GITHUB_FAILURE, detail)
    return verdict_code(v)


def cmd_calibrate(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.calibrate import calibrate, report_text
    from bot.calibrate import to_json as calibration_json

    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, args.config)
        s = (
            config.verdict
            if args.resamples is None
            else replace(config.verdict, resamples=args.resamples)
        )
    with step("read results", ExitCode.BAD_INPUT):
        machine = args.machine or config.machine
        base, head = load_pair(args.results, args.base, args.head, machine, s.min_samples)
    with step("calibrate", ExitCode.BAD_INPUT):
        result = calibrate(
            base, head, s, trials=args.trials, power_trials=args.power_trials, mode=args.mode
        )
    if args.json is not None:
        with step(f"write {args.json}", ExitCode.USAGE):
            write_json_atomically(args.json, calibration_json(result))
    out.write(report_text(result) + "\n")
    return ExitCode.OK_NO_REGRESSION


DEMO_REPO = "Lightning-AI/lightning-thunder"


def cmd_demo(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    """The pr flow on real results, against bot/localgithub instead of GitHub."""
    from bot.localgithub import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, start_server

    with step("pick the demo commits", ExitCode.USAGE):
        if args.results is None:
            args.results = next((d for d in DEMO_RESULTS if d.is_dir()), DEMO_RESULTS[0])
        if (args.base is None) != (args.head is None):
            raise ConfigError("give both --base and --head, or neither")
        if args.base is None:
            args.base, args.head = demo_pair(args.results)
    with start_server() as fake:
        with step("seed the local GitHub", ExitCode.GITHUB_FAILURE):
            fake.state.add_repo(DEMO_REPO)
            for repo in Config.from_env({}, args.config).issue_repos:
                fake.state.add_repo(repo)
            pull = fake.state.add_pull_request(
                DEMO_REPO,
                "Demo: the head commit of the demo pair",
                author=HUMAN_LOGIN,
                head_ref="demo/rmsnorm-bwd",
                head_sha=args.head.ljust(40, "0")[:40],
            )
        local_env = {
            "GITHUB_TOKEN": BOT_TOKEN,
            "GITHUB_API_URL": fake.base_url,
            "PERFBOT_COMMENT_LOGIN": BOT_LOGIN,
        }
        if "PERFBOT_SITE_URL" in env:
            local_env["PERFBOT_SITE_URL"] = env["PERFBOT_SITE_URL"]
        got = load(args, local_env)
        ctx = Context(
            repo=DEMO_REPO,
            pr=pull.number,
            pr_title=pull.title,
            head_ref="demo/rmsnorm-bwd",
            site_url=got.config.site_url,
        )
        out.write(f"Results {args.results}: base {args.base[:12]}, head {args.head[:12]}\n")
        out.write(f"Local fake GitHub at {fake.web_url}; posting as {BOT_LOGIN}\n")
        code = publish(got, ctx, out)
        out.write("\n===== the comment on " + f"{DEMO_REPO}#{pull.number} =====\n")
        for comment in fake.state.comments_on(DEMO_REPO, pull.number):
            out.write(comment.body + "\n")
        for repo in got.config.issue_repos:
            for issue in fake.state.issues(repo):
                if issue.pull is None:
                    out.write(
                        f"\n===== issue {repo}#{issue.number} ({issue.state}): "
                        f"{issue.title} =====\n{issue.body}\n"
                    )
    out.write(f"\nDemo finished: verdict {got.verdict.overall} (exit code {code} in CI).\n")
    return ExitCode.OK_NO_REGRESSION


def demo_pair(results: Path) -> tuple[str, str]:
    """The recorded demo pair: the stock run as base, the deliberately slower one as head; with
    two plain runs, older against newer; with one, that run against itself (an A/A demo)."""
    commits = list_commits(results)
    stock = [c for c in commits if c.thunder_variant == "stock"]
    other = [c for c in commits if c.thunder_variant not in (None, "stock")]
    if stock and other:
        return stock[-1].commit, other[-1].commit
    if len(commits) == 2:
        return commits[0].commit, commits[1].commit
    if len(commits) == 1:  # only one run recorded: an A/A demo, the commit against itself
        return commits[0].commit, commits[0].commit
    listing = ", ".join(f"{c.commit[:12]} ({c.thunder_variant})" for c in commits) or "none"
    raise ConfigError(
        f"cannot tell the demo pair in {results} (commits: {listing}): pass --base and --head"
    )


def cmd_site(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    """The history website (bot/site, docs/SITE.md): build it, or build and serve it.

    Bad results exit 3, a bad asv.conf.json or output folder 2; a failing ``asv publish`` or
    site audit (SiteBuildError) is also 3, as the results are what it could not publish.
    """
    from bot.site import build_site, serve_results

    with step(f"site {args.action}", ExitCode.BAD_INPUT):
        if args.action == "build":
            report = build_site(
                args.results, args.out, conf_path=args.asv_conf, history=args.history
            )
            out.write("\n".join(report.lines()) + "\n")
        else:
            serve_results(args.results, conf_path=args.asv_conf, host=args.host, port=args.port)
    return ExitCode.OK_NO_REGRESSION


def _common(p: argparse.ArgumentParser, *, shas: bool = True) -> None:
    p.add_argument("--results", type=Path, required=shas, help="asv results directory")
    p.add_argument("--base", type=_sha, required=shas, help="base commit (full or abbreviated)")
    p.add_argument("--head", type=_sha, required=shas, help="head commit (full or abbreviated)")
    p.add_argument("--machine", help="asv machine name, when several have both commits")
    p.add_argument(
        "--config",
        type=Path,
        default=Path("perfbot.toml") if Path("perfbot.toml").is_file() else None,
        help="TOML configuration (default: ./perfbot.toml if present; see its comments)",
    )


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="fusion-perfbot",
        description="Is thunder.jit still as fast as hand-written nvFuser on RMSNorm backward?",
        epilog=HELP,
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    epilog = HELP + "\n\nenvironment: see perfbot.toml (GITHUB_TOKEN, PERFBOT_ISSUES_TOKEN, ...)"

    def add(name: str, help_text: str, func: Callable[..., int]) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name, help=help_text, description=help_text, epilog=epilog, formatter_class=fmt
        )
        p.set_defaults(func=func)
        return p

    p = add(
        "report",
        "print the PR comment for base vs head; optionally the verdict as JSON",
        cmd_report,
    )
    _common(p)
    p.add_argument("--json", type=Path, help="write the full verdict as JSON to this file")

    p = add(
        "pr",
        "post or update the PR comment and sync the linked issues (dry without a token)",
        cmd_pr,
    )
    _common(p)
    p.add_argument("--repo", type=_repo, required=True, help="OWNER/NAME of the pull request")
    p.add_argument("--pr", type=_pr, required=True, help="pull request number")
    p.add_argument("--pr-title", help="PR title to show (untrusted; escaped)")
    p.add_argument("--head-ref", help="PR branch to show (untrusted; escaped)")
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be posted; post nothing"
    )

    p = add(
        "calibrate", "measure A/A false alarms and power by resampling real samples", cmd_calibrate
    )
    _common(p)
    p.add_argument("--trials", type=int, default=300, help="A/A pairs per state (default 300)")
    p.add_argument("--power-trials", type=int, default=100, help="pairs per shift (default 100)")
    p.add_argument("--mode", choices=("bootstrap", "split"), default="bootstrap")
    p.add_argument("--resamples", type=int, help="bootstrap resamples (default: the config's)")
    p.add_argument("--json", type=Path, help="write the calibration as JSON to this file")

    p = add(
        "demo", "the whole flow on the committed H200 data against a local fake GitHub", cmd_demo
    )
    _common(p, shas=False)
    p.set_defaults(results=None, base=None, head=None)
    p.description = (
        "the whole flow on the recorded H200 data against a local fake GitHub. Without "
        "--results: data/h200/results, else data/h200-smoke/results; without --base/--head: the "
        "stock run against the deliberately slower one (or older against newer, or one run "
        "against itself)"
    )
    p = add("site", "build (or build and serve) the history website; see docs/SITE.md", cmd_site)
    site_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = site_sub.add_parser(
        "build", help="build the static site into --out", formatter_class=fmt, epilog=epilog
    )
    build.add_argument("--out", type=Path, required=True, help="output folder (replaced whole)")
    build.add_argument(
        "--history",
        choices=("auto", "git", "recorded"),
        default="auto",
        help="where commit order comes from (default: auto)",
    )
    serve = site_sub.add_parser(
        "serve",
        help="build into a temporary folder and serve it",
        formatter_class=fmt,
        epilog=epilog,
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0: any free port")
    for sp in (build, serve):
        sp.add_argument("--results", type=Path, required=True, help="asv results directory")
        sp.add_argument(
            "--asv-conf",
            type=Path,
            default=Path("asv.conf.json"),
            help="asv configuration (default: ./asv.conf.json)",
        )
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, message already printed)
        return int(exc.code or 0)
    try:
        return int(args.func(args, os.environ if env is None else env, sys.stdout))
    except StepFailed as failure:
        print(f"fusion-perfbot {args.command}: {failure}", file=sys.stderr)
        return int(failure.code)
