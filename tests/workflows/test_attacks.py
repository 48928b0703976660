"""Issue 20's and issue 37's staged attacks, run through the whole poster (attacks.py), hold
today's outcome: what docs/WORKFLOWS.md's tables say, and the rules those tables show.

Slow: each row runs both jobs of post-results.yml for real, the bot included (about 35 s in all
on two cores). The "before" columns are not re-run here: they were printed once by
`python tests/workflows/attacks.py --before 00444de` (issue 20's rows) and `--before d02ddf7`
(issue 37's) and stay as the record of those commits.
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
    # Issue 37's staged histories: a genuine run posts before (or after) the attack.
    "pr-claim",
    "key-in-name",
    "key-in-text",
}
#: Issue 37: where each attack must be stopped (the step that refuses it), the run of a
#: history it is, and what must still stand after it.
STOPPED = {
    "name-markup": [("post/bot", 3)],
    "name-path": [("post/bot", 3)],
    "pr-claim": [(None, None), ("check/verify", 6)],
    "key-in-name": [("post/bot", 3), (None, None)],
}


def documented() -> dict[str, str]:
    """The table's "now" column, by the attack's words."""
    rows = re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \|$", DOC.read_text(encoding="utf-8"), re.M)
    return {what: now for what, _, now in rows}


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.key for a in ATTACKS])
def test_the_poster_holds_against(attack: Attack, tmp_path: Path) -> None:
    outcomes, got = attempt(attack, REPO_ROOT, tmp_path)
    outcome = outcomes.last
    assert not got.harms, outcomes.log
    if attack.key.startswith("genuine"):
        assert outcome.failed is None and got.comments == 1, outcome.log
    if attack.key not in MAY_POST:
        assert got.comments == 0 and sum(got.issues.values()) == 0, outcome.log
        # Refused before the privileged job ran, unless the bot itself refused (before any
        # request: the workflow then sets the error status, and only that).
        assert outcome.jobs.get("post") in ("skipped", None) or outcome.failed == "post/bot"
    if attack.key in ("fork-merged", "event-fork"):
        assert sum(got.issues.values()) == 0
    if attack.key in STOPPED:
        assert [(o.failed, o.rc) for o in outcomes.runs] == STOPPED[attack.key], outcomes.log
    if attack.key == "pr-claim":  # the victim's alert stands: open, its status not replaced
        assert (got.closed, got.statuses, sum(got.issues.values())) == (0, 1, 1), outcomes.log
    if attack.key == "key-in-text":  # the old issue is left as it was; the PR files nothing yet
        assert (outcome.failed, got.comments, sum(got.issues.values())) == (None, 1, 1)
    assert documented().get(attack.what) == cell(outcomes, got), (
        "docs/WORKFLOWS.md's attack table is not what the poster does now: run "
        "`python tests/workflows/attacks.py --before 00444de` and update it"
    )


def test_every_attack_is_in_the_documented_table() -> None:
    assert {a.what for a in ATTACKS} <= set(documented())
