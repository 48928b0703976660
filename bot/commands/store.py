"""``store``: the history store's commands (docs/STORE.md), grammar and steps in one place.

Each action is one or two named steps: a corrupt or partial run is bad input (exit 3), a
different result for a stored commit a conflict (exit 7), a folder that is no store or has
uncommitted changes a usage error (exit 2). A change is one git commit of the store's branch;
an idempotent add commits nothing.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from bot.commands.parser import Handler, _sha
from bot.commands.steps import StepFailed, emit_json, step
from bot.exitcodes import ExitCode
from bot.results.types import BadInput
from bot.store.index import PINS, Conflict, StoreError
from bot.store.policy import MB, Policy


def _full_sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{40}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a full commit hash (40 hex digits)")
    return text.lower()


def _when(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO date") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _count(text: str) -> int:
    if not text.isdigit() or int(text) > 10**6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of days")
    return int(text)


def _megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 10**6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size in MB")
    return value


def add_store_command(
    add: Callable[[str, str, Handler], argparse.ArgumentParser], handlers: Mapping[str, Handler]
) -> None:
    p = add(
        "store",
        "the history store: add, thin, pin, check, list, estimate (docs/STORE.md)",
        handlers["store"],
    )
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, text: str, store: bool = True) -> argparse.ArgumentParser:
        q = sub.add_parser(name, help=text, description=text)
        if store:
            q.add_argument(
                "--store",
                type=Path,
                required=True,
                help="the store's folder (its branch's work tree)",
            )
        return q

    q = action("init", "make an empty store (a git repository on branch perf-results)")
    q.add_argument("--branch", default="perf-results")
    q = action("add", "add one run (validated; the same run twice changes nothing)")
    q.add_argument("--results", type=Path, required=True, help="asv results folder holding it")
    q.add_argument("--commit", type=_sha, required=True)
    q.add_argument("--machine", required=True, help="asv machine name")
    q.add_argument(
        "--replace",
        action="store_true",
        help="replace a different stored (or retired) result of this commit",
    )
    q.add_argument("--min-samples", type=int, default=10, metavar="N")
    q = action("thin", "strip and retire old runs by the policy; pinned commits stay whole")
    q.add_argument(
        "--pins",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help=f"more pinned commits, a line each (the store's own {PINS} always counts)",
    )
    q.add_argument("--pin", type=_full_sha, action="append", default=[], metavar="SHA")
    q.add_argument(
        "--history-json",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="`history --json` output: its change points' and breaks' commits are "
        f"pinned for good (added to {PINS})",
    )
    q.add_argument("--now", type=_when, help="the date ages count from (default: the newest run's)")
    q.add_argument("--full-days", type=_count, default=7)
    q.add_argument("--daily-days", type=_count, default=30)
    q.add_argument("--weekly-days", type=_count, default=365)
    q.add_argument("--cap-mb", type=_megabytes, default=200.0)
    q.add_argument(
        "--keep-history",
        type=int,
        default=30,
        metavar="N",
        help="commits the branch keeps (older ones are squashed away; default 30)",
    )
    q.add_argument("--dry-run", action="store_true", help="say what would happen; change nothing")
    q = action("pin", f"pin a commit (written to the store's {PINS})")
    q.add_argument("--commit", type=_full_sha, required=True)
    q.add_argument("--reason", required=True, help="why (a change point, an issue)")
    action("check", "read every stored run with the bot's readers; the index must match the files")
    q = action("list", "the stored and retired runs")
    q.add_argument("--json", type=Path, metavar="FILE", help="as JSON to FILE; '-': stdout")
    q = action("estimate", "the store's size after a simulated year, from a real run", False)
    q.add_argument("--results", type=Path, required=True)
    q.add_argument("--commit", type=_sha, required=True)
    q.add_argument("--machine")
    q.add_argument("--size-set", default="nightly")
    q.add_argument("--size-sets", type=Path, default=Path("benchmarks/size_sets.toml"))
    q.add_argument("--days", type=_count, default=365)
    for name in ("full-days", "daily-days", "weekly-days", "cap-mb"):
        q.add_argument(
            f"--{name}",
            type=_megabytes if name == "cap-mb" else _count,
            default={"full-days": 7, "daily-days": 30, "weekly-days": 365, "cap-mb": 200.0}[name],
        )


def _policy(args: argparse.Namespace) -> Policy:
    with step("read the policy", ExitCode.USAGE):
        try:
            return Policy(
                args.full_days, args.daily_days, args.weekly_days, round(args.cap_mb * MB)
            )
        except ValueError as exc:
            raise StoreError(str(exc)) from None


@contextmanager
def _step(name: str, default: ExitCode) -> Iterator[None]:
    """A step whose store errors keep their own codes: conflict 7, not a store 2."""
    with step(name, default):
        try:
            yield
        except Conflict as exc:
            raise StepFailed(name, ExitCode.CONFLICT, str(exc)) from exc
        except StoreError as exc:
            raise StepFailed(name, ExitCode.USAGE, str(exc)) from exc


def cmd_store(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.store import add as adding
    from bot.store import git, thin
    from bot.store.create import init_store
    from bot.store.evidence import pins_from_history
    from bot.store.index import pins_text, read_index, read_pins, write_text_atomically

    a = args.action
    if a == "estimate":
        from bot.store.estimate import measure, report, size_set_points

        policy = _policy(args)
        with step("measure the sample run", ExitCode.BAD_INPUT):
            sample = measure(args.results, args.commit, args.machine)
            points = size_set_points(args.size_sets, args.size_set)
            out.write("\n".join(report(sample, args.size_set, points, args.days, policy)) + "\n")
        return ExitCode.OK_NO_REGRESSION
    if a == "init":
        with _step("init the store", ExitCode.USAGE):
            head = init_store(args.store, args.branch)
        out.write(f"store: {args.store}: a new store on branch {args.branch} ({head})\n")
        return ExitCode.OK_NO_REGRESSION
    with _step("open the store", ExitCode.USAGE):
        read_index(args.store)
        if a in ("add", "thin", "pin"):
            git.require_clean(args.store)
    if a == "add":
        with _step("add the run", ExitCode.BAD_INPUT):
            added = adding.add(
                args.store,
                args.results,
                args.commit,
                args.machine,
                replace=args.replace,
                min_samples=args.min_samples,
            )
            out.write(added.line() + "\n")
        with _step("commit", ExitCode.USAGE):
            e = added.entry
            sha = git.commit_all(
                args.store, f"store: {added.outcome.value.split(':')[0]} {e.machine} {e.commit}"
            )
        out.write(f"store: committed {sha}\n" if sha else "store: nothing to commit\n")
        return ExitCode.OK_NO_REGRESSION
    if a == "thin":
        policy = _policy(args)
        with _step("thin the store", ExitCode.BAD_INPUT):
            pins = read_pins(args.store / PINS)
            evidence: dict[str, str] = {}
            for path in args.history_json:
                found = pins_from_history(path)
                evidence.update({c: w for c, w in found.items() if c not in pins})
            if evidence:
                out.write(f"store: pinned {len(evidence)} commit(s) named by the history\n")
                pins.update(evidence)
                if not args.dry_run:
                    write_text_atomically(args.store / PINS, pins_text(pins))
            for path in args.pins:
                if not path.is_file():
                    raise BadInput(f"{path}: pins file not found")
                pins.update(read_pins(path))
            pins.update(dict.fromkeys(args.pin, "--pin"))
            done = thin.thin(args.store, policy, pins, args.now, args.dry_run)
            out.write("\n".join(done.lines(policy)) + "\n")
        if args.dry_run:
            return ExitCode.OK_NO_REGRESSION
        with _step("commit", ExitCode.USAGE):
            sha = git.commit_all(
                args.store,
                f"store: thinned ({len(done.stripped)} stripped, {len(done.retired)} retired)",
            )
            gone = git.squash(args.store, args.keep_history)
        out.write(f"store: committed {sha}\n" if sha else "store: nothing to commit\n")
        if gone:
            out.write(f"store: history squashed: {gone} older commit(s) dropped\n")
        return ExitCode.OK_NO_REGRESSION
    if a == "pin":
        with _step("pin", ExitCode.BAD_INPUT):
            pins = read_pins(args.store / PINS)
            pins[args.commit] = " ".join(args.reason.split())[:200]
            write_text_atomically(args.store / PINS, pins_text(pins))
            sha = git.commit_all(args.store, f"store: pinned {args.commit}")
        out.write(f"store: pinned {args.commit}" + (f" ({sha})\n" if sha else "\n"))
        return ExitCode.OK_NO_REGRESSION
    from bot.store.check import check_store, listing

    if a == "check":
        with _step("check the store", ExitCode.BAD_INPUT):
            out.write("\n".join(check_store(args.store)) + "\n")
        return ExitCode.OK_NO_REGRESSION
    with _step("list the store", ExitCode.BAD_INPUT):
        doc, lines = listing(args.store)
        if args.json is None or not emit_json(args.json, doc, out):
            out.write("\n".join(lines) + "\n")
    return ExitCode.OK_NO_REGRESSION
