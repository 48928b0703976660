"""Plan a bisect of a real pair of Thunder builds where GitHub is out of reach (the lab H200,
this machine): the fake GitHub serves a local clone's real main line, and ``bisect-plan``
lists the commits between the two builds from it exactly as it would from GitHub.

    python tests/bisect/plan_from_clone.py --clone /tmp/thunder.git \\
        --good .gpu/extra/lightning_thunder-0.2.7.dev20251102-py3-none-any.whl \\
        --bad .gpu/extra/lightning_thunder-0.2.7.dev20251123-py3-none-any.whl \\
        --points bfloat16/2048x8192 --git-url file:///tmp/thunder.git --out plan.json
"""

from __future__ import annotations

import argparse
import subprocess
from datetime import datetime
from pathlib import Path

from bot.commands import cli
from bot.github.fake import BOT_TOKEN, start_server
from bot.github.fake.commits import GitCommit

THUNDER = "Lightning-AI/lightning-thunder"


def main_line(clone: Path) -> list[GitCommit]:
    """The clone's main, first parents, oldest first (a shallow clone's oldest is its edge)."""
    log = subprocess.run(
        ["git", "-C", str(clone), "log", "--first-parent", "--reverse", "main",
         "--format=%H%x00%an%x00%aI%x00%B%x01"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    out = []
    for entry in log.split("\x01"):
        if entry.strip():
            sha, name, day, message = entry.strip("\n").split("\x00", 3)
            out.append(GitCommit(sha, message.strip(), name, datetime.fromisoformat(day)))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clone", type=Path, required=True)
    p.add_argument("--good", required=True)
    p.add_argument("--bad", required=True)
    p.add_argument("--points", required=True)
    p.add_argument("--git-url", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--budget-s", default="3000")
    args = p.parse_args()
    with start_server() as fake:
        fake.state.add_repo(THUNDER)
        fake.state.commits.add(THUNDER, main_line(args.clone))
        env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}
        return cli.main(
            ["bisect-plan", "--package", "thunder", "--good", args.good, "--bad", args.bad,
             "--points", args.points, "--git-url", args.git_url, "--out", str(args.out),
             "--budget-s", args.budget_s],
            env=env,
        )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
