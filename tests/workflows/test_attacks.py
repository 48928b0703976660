"""Issue 20's staged attacks, run through the whole poster (attacks.py), hold today's outcome:
what docs/WORKFLOWS.md's table says, and the rules that table is there to show.

Slow: each row runs both jobs of post-results.yml for real, the bot included (about 35 s in all
on two cores). The "before" column of the table is not re-run here: it was printed once by
`python tests/workflows/attacks.py --before 00444de` and stays as the record of that commit.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from attacks import ATTACKS, Attack, attempt, cell
from paths import REPO_ROOT

pytestmark = pytest.mark.slow

DOC = REPO_ROOT / "docs" / "WORKFLOWS.md"
#: Attacks after which the poster may still post: the genuine runs, and those whose harm is
#: elsewhere (a fork's PR gets its comment but files nothing upstream; a forged PR-event run
#: makes the poster post the named PR's own verified results; a lookalike marker is ignored;
#: a captured repro is never shown).
MAY_POST = {
    "genuine-open",
    "genuine-merged",
    "genuine-fork",
    "fork-merged",
    "event-fork",
    "lookalike",
    "evil-repro",
}


def documented() -> dict[str, str]:
    """The table's "now" column, by the attack's words."""
    rows = re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \|$", DOC.read_text(encoding="utf-8"), re.M)
    return {what: now for what, _, now in rows}


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.key for a in ATTACKS])
def test_the_poster_holds_against(attack: Attack, tmp_path: Path) -> None:
    outcome, got = attempt(attack, REPO_ROOT, tmp_path)
    assert not got.evil_upstream, outcome.log
    if attack.key.startswith("genuine"):
        assert outcome.failed is None and got.comments == 1, outcome.log
    if attack.key not in MAY_POST:
        assert got.comments == 0 and sum(got.issues.values()) == 0, outcome.log
        # Refused before the privileged job ran, unless the bot itself refused (its exit 6
        # before any request: the workflow then sets the error status, and only that).
        assert outcome.jobs.get("post") in ("skipped", None) or outcome.failed == "post/bot"
    if attack.key in ("fork-merged", "event-fork"):
        assert sum(got.issues.values()) == 0
    assert documented().get(attack.what) == cell(outcome, got), (
        "docs/WORKFLOWS.md's attack table is not what the poster does now: run "
        "`python tests/workflows/attacks.py --before 00444de` and update it"
    )


def test_every_attack_is_in_the_documented_table() -> None:
    assert {a.what for a in ATTACKS} <= set(documented())
