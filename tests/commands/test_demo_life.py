"""``python -m bot demo --life``: a PR's life on recorded H200 runs against the fake GitHub, each
step a real ``pr`` run. What a maintainer sees at each step, held line by line."""

from __future__ import annotations

import re

from paths import run_bot


def _steps(out: str) -> dict[str, list[str]]:
    """Each step's title (its number) -> what the bot said it did (URLs dropped)."""
    steps: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        found = re.match(r"(\d+)\. .*: exit (\d+)$", line)
        if found:
            current = found.group(1)
            steps[current] = [f"exit {found.group(2)}"]
        elif current and line.startswith("    "):
            steps[current].append(re.sub(r":? http://\S+", "", line.strip()))
        elif not line.strip():
            current = None
    return steps


def test_a_prs_life() -> None:
    done = run_bot("demo", "--life")
    assert done.returncode == 0, done.stderr
    s = _steps(done.stdout)
    assert list(s) == [str(n) for n in range(1, 12)]
    # 1-3: the open PR gets the comment and a failing status; the alert waits for the merge.
    assert s["1"][:2] == ["exit 1", "status: failure: Regressed: RMSNorm backward on "
                          "nvidia-h200: Thunder's kernels 2.9% slower, ratio 1.05x → "
                          "1.07x"]  # fmt: skip
    assert s["2"][2] == "comment unchanged" and s["3"][2] == "comment updated"
    assert not any("alert issue" in line for n in "123456" for line in s[n])
    # 4: the author's own acknowledgement does not count; 5: a collaborator's does.
    assert s["4"][0] == "exit 1"
    assert s["5"][:2] == ["exit 0", 'status: acknowledged: Acknowledged: acknowledged by @bob: '
                          '"the rework is worth 2%"; RMSNorm backward on nvidia-h200: '
                          "Thunder's kernels 2.8% slower, ratio 1.05x →…"]  # fmt: skip
    # 6: clearly worse (+5%): the acknowledgement lapses.
    assert s["6"][:2] == ["exit 1", "status: failure: Regressed: RMSNorm backward on "
                          "nvidia-h200: Thunder 5.1% slower relative to nvFuser, Thunder's "
                          "kernels +5.0%"]  # fmt: skip
    # 7: merged: one alert, its issue in Thunder; nvFuser's build did not change, so Fuser is
    # not told (its tracker gets nothing).
    assert s["7"][3:] == ["alert issue (primary) in Lightning-AI/lightning-thunder: opened"]
    # 8: a maintainer's close stands.
    assert s["8"][3:] == ["alert issue (primary) in Lightning-AI/lightning-thunder: left closed"]
    # 9-11: alerts at the first push; clearly worse is one comment; closed unmerged.
    assert [line.split(": ")[1] for line in s["9"][3:]] == ["opened"]
    assert [line.split(": ")[1] for line in s["10"][3:]] == ["commented"]
    assert [line.split(": ")[1] for line in s["11"][3:]] == ["closed"]
    issues = done.stdout.split("===== every issue the bot filed =====")[1]
    assert "NVIDIA/Fuser#" not in issues
    assert re.findall(r"#\d+ \((\w+), (\w+)\)", issues) == [
        ("closed", "completed"), ("closed", "not_planned"),
    ]  # fmt: skip
    assert issues.count("comment: Clearly worse on Lightning-AI/lightning-thunder#3") == 1
    assert issues.count("was closed without merging: this slowdown never reached main") == 1
