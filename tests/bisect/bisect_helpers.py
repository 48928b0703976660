"""``python -m bot bisect`` over recorded builds: the timelines the tests walk, and a runner.

Every build's measurement is a real recorded H200 run, copied by the recorded measurer
(bot/bisect/recorded.py) from the folder tests/bisect/recorded/*.json names for it:

* the good builds are six real Thunder nightlies, measured (data/h200-thunder-nightlies:
  0.2.7.dev20251102 ... 0.2.7.dev20260201; they agree within 0.2%);
* ``lightning-thunder==0.2.6+slowthunder5`` is slow-thunder-5 (data/h200-states
  ``8681cae2``: Thunder 0.2.6 with both Thunder variants really 5% slower), standing for the
  first later build that made Thunder slower; ``+slowthunder2`` (``63e9dde7``, +2%) and
  ``+unfusedbackward`` (data/h200 ``9dc51696``, the backward unfused, 17x) stand for builds
  after it that stay slower, so the step is monotone;
* ``lightning-thunder==0.2.5`` is Thunder 0.2.5 itself (data/h200-states ``f888795e``,
  broken-executor: every Thunder point fails);
* the nvFuser builds (recorded/nvfuser.json) are stock-3 (``6c840f30``), slow-nvfuser-2
  (three real runs: ``3f0f630d`` and ``c57e54a6`` in both repeats of h200-repeats call 2) and
  slow-nvfuser-5 (``93486aaf``).

The nightlies ran nvFuser and the two Thunder variants in one lab call, the slower states
all five variants in others: at the smallest points (512x4096) rounds without the context
baselines run 5-7% slower (data/README.md, h200-repeats), so the Thunder timelines bisect at
the six larger points, where every stock run agrees with the nightlies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paths import REPO_ROOT

from bot.commands import cli

RECORDED = Path(__file__).resolve().parent / "recorded"
THUNDER = RECORDED / "thunder.json"
NVFUSER = RECORDED / "nvfuser.json"
NIGHTLIES = [
    f"lightning-thunder==0.2.7.dev{day}"
    for day in ("20251102", "20251123", "20251214", "20260104", "20260118", "20260201")
]
SLOW5 = "lightning-thunder==0.2.6+slowthunder5"
SLOW2 = "lightning-thunder==0.2.6+slowthunder2"
UNFUSED = "lightning-thunder==0.2.6+unfusedbackward"
BROKEN = "lightning-thunder==0.2.5"
LARGE_POINTS = ",".join(
    f"{dtype}/{shape}"
    for dtype in ("bfloat16", "float16", "float32")
    for shape in ("2048x8192", "16384x8192")
)
NV_STOCK = "nvfuser-cu130-torch210==0.2.36+stock"
NV_SLOW2 = "nvfuser-cu130-torch210==0.2.36+slowfusion2"
NV_SLOW5 = "nvfuser-cu130-torch210==0.2.36+slowfusion5"
NV_POINTS = "bfloat16/2048x8192,float16/2048x8192,float32/2048x8192"


def bisect(
    tmp: Path,
    timeline: list[str],
    *extra: str,
    package: str = "thunder",
    recorded: Path = THUNDER,
    points: str = LARGE_POINTS,
    state: str = "state.json",
    env: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Run the command over ``timeline`` (good first, bad last); its exit code and JSON."""
    builds = tmp / f"builds-{len(timeline)}.txt"
    builds.write_text("".join(f"{b}\n" for b in timeline[1:-1]))
    out = tmp / "out.json"
    out.unlink(missing_ok=True)
    argv = [
        "bisect", "--package", package, "--good", timeline[0], "--bad", timeline[-1],
        "--builds", str(builds), *(["--points", points] if points else []),
        "--state", str(tmp / state),
        "--recorded", str(recorded), "--config", str(REPO_ROOT / "perfbot.toml"),
        "--json", str(out), *extra,
    ]  # fmt: skip
    code = cli.main(argv, env=env or {})
    data: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {}
    return code, data


def measured(data: dict[str, Any]) -> list[str]:
    """The builds measured, in the timeline's order."""
    return [row["build"] for row in data["timeline"] if row["runs"]]


def classes(data: dict[str, Any]) -> dict[str, str]:
    return {row["build"]: row["class"] for row in data["timeline"] if row["runs"]}
