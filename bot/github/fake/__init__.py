"""A small stateful fake of the GitHub REST API, served on 127.0.0.1.

No maintained stateful fake exists (octokit fixtures-server, simulacrum and prism keep no
issue/comment state), and the bot's correctness is mostly about state: one sticky comment,
no duplicate issues, links that converge after a failure. So the tests and the offline demo
(`python -m bot demo`) run real PyGithub over real HTTP against this server.

    with start_server() as fake:
        fake.state.add_repo("NVIDIA/Fuser")
        pr = fake.state.add_pull_request("NVIDIA/Fuser", "Faster rmsnorm", author="alice",
                                         head_ref="fast")
        gh = make_github(fake.base_url, BOT_TOKEN)
        fake.inject("POST", r"/issues$", 502)          # the next issue creation fails once
        fake.requests("GET", r"/comments$")           # what the client asked for
"""

from bot.github.fake.faults import Fault
from bot.github.fake.server import (
    API_PREFIX,
    BOT_LOGIN,
    BOT_TOKEN,
    HUMAN_LOGIN,
    HUMAN_TOKEN,
    LocalGitHub,
    start_server,
)
from bot.github.fake.state import State

__all__ = [
    "API_PREFIX",
    "BOT_LOGIN",
    "BOT_TOKEN",
    "HUMAN_LOGIN",
    "HUMAN_TOKEN",
    "Fault",
    "LocalGitHub",
    "State",
    "start_server",
]
