"""``python -m bot demo --life``: one PR's life, step by step, on recorded H200 runs against the
local fake GitHub (the same loading and publishing as in CI; only the server differs).

The runs are data/h200-states' (a stock run, Thunder made 2% and 5% slower by a measured
injected kernel: data/README.md); each step is what a push, a re-run, a comment or a merge
makes the poster do, and prints what the bot posted and the status it set. A second PR, with
alerts filed at the first push (``[alerts] open_on = "push"``), gets clearly worse, then is
closed without merging.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from bot.commands.demo import DEMO_REPO, REPO_ROOT
from bot.commands.inputs import Loader, Selection
from bot.commands.pr import publish
from bot.exitcodes import ExitCode
from bot.tell.comment import Context

STATES = REPO_ROOT / "data" / "h200-states" / "results"
STOCK, STOCK_LATER = "6c840f30", "022fefdd"
THUNDER_2, THUNDER_5 = "63e9dde7", "8681cae2"
MAINTAINER = "bob"  # a collaborator of the demo repository (write access)


def run_life(
    env: Mapping[str, str], out: IO[str], load: Loader, *, config_path: Path | None
) -> int:
    from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, start_server

    config = (config_path or REPO_ROOT / "perfbot.toml").resolve()
    with start_server() as fake, tempfile.TemporaryDirectory(prefix="perfbot-life-") as tmp:
        state = fake.state
        for repo in (DEMO_REPO, "NVIDIA/Fuser"):
            state.add_repo(repo)
        for login in (MAINTAINER, HUMAN_LOGIN):  # both collaborators; one is the PR's author
            state.actions.set_role(DEMO_REPO, login, "write")
        local = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}
        local["PERFBOT_COMMENT_LOGIN"] = BOT_LOGIN
        push = Path(tmp) / "push.toml"  # the same file, alerts filed at the first push
        text = config.read_text(encoding="utf-8").replace('open_on = "merge"', 'open_on = "push"')
        push.write_text(text.replace('noise_model = "', f'noise_model = "{config.parent}/'))
        pr = state.add_pull_request(
            DEMO_REPO, "Rework the nvFuser executor", author=HUMAN_LOGIN, head_ref="rework"
        ).number
        step = _stepper(out, load, local, fake.state, pr)
        out.write(f"Local fake GitHub at {fake.web_url}; {DEMO_REPO}#{pr} by @{HUMAN_LOGIN}\n")
        step("1. push: Thunder +2% against stock main", STOCK, THUNDER_2, config)
        step("2. the same run again (a re-run of the job)", STOCK, THUNDER_2, config)
        step("3. rebase onto a newer main", STOCK_LATER, THUNDER_2, config)
        state.add_comment(DEMO_REPO, pr, "/perfbot ack it is my PR", author=HUMAN_LOGIN)
        step("4. the PR's author comments /perfbot ack", STOCK_LATER, THUNDER_2, config)
        state.add_comment(DEMO_REPO, pr, "/perfbot ack the rework is worth 2%", author=MAINTAINER)
        step(
            f"5. @{MAINTAINER} (write access) comments /perfbot ack", STOCK_LATER, THUNDER_2, config
        )
        step("6. push: Thunder +5% (clearly worse)", STOCK_LATER, THUNDER_5, config)
        state.pulls.finish(DEMO_REPO, pr, merged=True, by=MAINTAINER)
        step("7. merged: the alert is filed", STOCK_LATER, THUNDER_5, config)
        primary = next(i for i in state.issues(DEMO_REPO) if i.pull is None)
        primary.state, primary.state_reason = "closed", "completed"
        step(
            f"8. @{MAINTAINER} closes {DEMO_REPO}#{primary.number} as completed; a re-run",
            STOCK_LATER,
            THUNDER_5,
            config,
        )
        other = state.add_pull_request(
            DEMO_REPO, "Try another fusion order", author=HUMAN_LOGIN, head_ref="order"
        ).number
        step = _stepper(out, load, local, fake.state, other)
        step(f"9. {DEMO_REPO}#{other}, open_on = push: Thunder +2%", STOCK, THUNDER_2, push)
        step("10. push: Thunder +5% (clearly worse)", STOCK, THUNDER_5, push)
        state.pulls.finish(DEMO_REPO, other, merged=False, by=HUMAN_LOGIN)
        step(f"11. {DEMO_REPO}#{other} is closed without merging", STOCK, THUNDER_5, push)
        out.write("\n===== every issue the bot filed =====\n")
        for repo in (DEMO_REPO, "NVIDIA/Fuser"):
            for i in state.issues(repo):
                if i.pull is None:
                    said = [c.body.split("\n")[0][:100] for c in state.comments_on(repo, i.number)]
                    reason = f", {i.state_reason}" if i.state_reason else ""
                    out.write(f"{repo}#{i.number} ({i.state}{reason}): {i.title}\n")
                    out.write("".join(f"    comment: {c}\n" for c in said))
    return ExitCode.OK_NO_REGRESSION


def _stepper(
    out: IO[str], load: Loader, env: dict[str, str], state: object, pr: int
) -> Callable[[str, str, str, Path], None]:
    def step(title: str, base: str, head: str, config: Path) -> None:
        got = load(Selection((STATES,), base, head, None, config), env)
        ctx = Context(repo=DEMO_REPO, pr=pr, pr_title="demo", head_ref="demo")
        said = io.StringIO()
        code = publish(got, ctx, said)
        out.write(f"\n{title} (base {base}, head {head}): exit {int(code)}\n")
        out.write("".join(f"    {line}\n" for line in said.getvalue().splitlines()))

    return step
