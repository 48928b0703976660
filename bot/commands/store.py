"""``store``: the history store's commands (docs/STORE.md); the grammar is store_parser.py.

Each action is one or two named steps: a corrupt or partial run is bad input (exit 3), a
different result for a stored commit a conflict (exit 7), a folder that is no store or has
uncommitted changes a usage error (exit 2). A change is one git commit of the store's branch;
an idempotent add commits nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import IO

from bot.commands.steps import StepFailed, emit_json, step
from bot.commands.store_parser import add_store_command
from bot.exitcodes import ExitCode
from bot.results.types import BadInput
from bot.store.index import PINS, Conflict, StoreError
from bot.store.policy import MB, Policy

__all__ = ["add_store_command", "cmd_store"]


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
    from bot.commands.steps import write_text_atomically
    from bot.store import add as adding
    from bot.store import git, thin
    from bot.store.create import init_store
    from bot.store.evidence import pins_from_history
    from bot.store.index import pins_text, read_index, read_pins

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
