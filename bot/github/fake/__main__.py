"""Run the fake GitHub by hand: `python -m bot.github.fake [--port N]`, Ctrl-C to stop.

It seeds the two project repositories and the default tokens, prints where the API lives,
and serves until interrupted, so the bot's CLI can be pointed at it from another shell.
"""

from __future__ import annotations

import argparse
import contextlib
import threading

from bot.github.fake import BOT_TOKEN, HUMAN_TOKEN, start_server

REPOS = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.github.fake", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    args = parser.parse_args(argv)
    with start_server(port=args.port) as fake:
        for repo in REPOS:
            fake.state.add_repo(repo)
        print(f"API:   {fake.base_url}  (tokens: {BOT_TOKEN}, {HUMAN_TOKEN})", flush=True)
        print(f"Pages: {fake.web_url}/", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
