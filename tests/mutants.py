"""Break the code where a wrong line matters and see which tests notice: the mutation table.

A test suite is trusted only as far as it fails when the code is wrong. Each mutation below is
one small edit of the kind a tired contributor makes (a boundary moved, a check dropped, a
filter widened) in a place the bot's users depend on. The runner copies the repository's
files (what git tracks, plus untracked files it does not ignore) into a temporary folder,
applies one mutation there, runs pytest on that copy and lists the tests that went red. A
mutation that no test catches is a hole: it gets a test.

    python -m tests.mutants                 # every mutation, the whole default run each
    python -m tests.mutants --list          # their names
    python -m tests.mutants --only NAME --tests tests/github   # one, on some tests
    python -m tests.mutants --area --rev df327f1   # each on its own area's tests, at a commit
    python -m tests.mutants --only NAME --tests tests/workflows/test_attacks.py --marker slow

Nothing here runs in the default test run but ``tests/test_mutants.py``, which checks that
every mutation still applies to the code as it is (an edit that no longer matches would
silently test nothing).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    """Replace `old` (which must occur exactly once in `path`) by `new`, and each of `also`'s
    (old, new) pairs in the same file (an edit that needs an import, say)."""

    name: str
    what: str
    path: str
    old: str
    new: str
    area: str = ""  # the tests of the code's own area (default: tests/<package folder>)
    also: tuple[tuple[str, str], ...] = ()

    @property
    def area_tests(self) -> str:
        return self.area or "tests/" + self.path.split("/")[1]

    def apply(self, root: Path) -> None:
        target = root / self.path
        text = target.read_text(encoding="utf-8")
        for old, new in ((self.old, self.new), *self.also):
            count = text.count(old)
            if count != 1:
                raise ValueError(f"{self.name}: {self.path} holds the text {count} times, not once")
            text = text.replace(old, new)
        target.write_text(text, encoding="utf-8")


MUTATIONS = (
    Mutation(
        "threshold-reached-strictly",
        "a regression must exceed its threshold (>) instead of reaching it (>=)",
        "bot/decide/rules.py",
        "if change.estimate >= 1 + threshold and p_up < alpha",
        "if change.estimate > 1 + threshold and p_up < alpha",
    ),
    Mutation(
        "threshold-doubled",
        "the point rule reads 2x the configured threshold",
        "bot/decide/rules.py",
        "if change.estimate >= 1 + threshold and p_up < alpha",
        "if change.estimate >= 1 + 2 * threshold and p_up < alpha",
    ),
    Mutation(
        "holm-dropped-in-verdict",
        "the PR verdict's point p-values are not Holm-adjusted within their guard",
        "bot/decide/families.py",
        "up, down = holm([cmps[k].p_up for k in ordered]), holm([cmps[k].p_down for k in ordered])",
        "up, down = [cmps[k].p_up for k in ordered], [cmps[k].p_down for k in ordered]",
    ),
    Mutation(
        "holm-is-bonferroni",
        "Holm's step-down multiplies every p by m (plain Bonferroni)",
        "bot/decide/stats.py",
        "running = max(running, min(1.0, (m - rank) * pvalues[i]))",
        "running = max(running, min(1.0, m * pvalues[i]))",
    ),
    Mutation(
        "sticky-comment-any-author",
        "the sticky comment is found by its marker alone, whoever wrote it",
        "bot/github/sticky.py",
        "and c.user.login.lower() == login.lower()\n        and (c.body",
        "and (c.body",
    ),
    Mutation(
        "issue-key-ignored",
        "every labelled issue of the bot's login counts as the key's issue",
        "bot/github/issue_find.py",
        "key_of(issue.body) == key\n        and issue.user is not None",
        "issue.user is not None",
    ),
    Mutation(
        "issue-any-author",
        "an issue that quotes the key marker counts whoever opened it",
        "bot/github/issue_find.py",
        "and issue.user.login.lower() == login.lower()\n        and",
        "and",
    ),
    Mutation(
        "samples-unbounded",
        "the samples-per-point bound is 1000 times larger",
        "bot/results/limits.py",
        "MAX_SAMPLES = 1_000\n",
        "MAX_SAMPLES = 1_000_000\n",
    ),
    Mutation(
        "results-size-unchecked-before-read",
        "a results file's size is not checked before it is read",
        "bot/results/limits.py",
        "    if info.st_size > limit:\n        raise",
        "    if False:\n        raise",
    ),
    Mutation(
        "short-sha-accepted",
        "a commit hash of 7 to 40 hex digits passes the full-hash check",
        "bot/results/limits.py",
        'FULL_SHA = re.compile(r"[0-9a-f]{40}")',
        'FULL_SHA = re.compile(r"[0-9a-f]{7,40}")',
    ),
    Mutation(
        "command-after-spaces",
        "a workflow command after leading white space is not escaped",
        "bot/tell/log.py",
        "if seen.lstrip().startswith(COMMAND):",
        "if seen.startswith(COMMAND):",
    ),
    Mutation(
        "ignorable-format-only",
        "combining marks are no longer ignorable to the log escaper",
        "bot/tell/log.py",
        'IGNORABLE = frozenset({"Cf", "Mn", "Me"})',
        'IGNORABLE = frozenset({"Cf"})',
    ),
    Mutation(
        "changepoint-no-bonferroni",
        "the history scan tests every window at the full alpha",
        "bot/history/changepoint.py",
        "alpha = table.settings.alpha / windows",
        "alpha = table.settings.alpha",
    ),
    Mutation(
        "bisect-names-the-next-build",
        "the bisect names the build after the first bad one",
        "bot/bisect/search.py",
        "        return Found(order[lo], order[hi])",
        "        return Found(order[lo], order[min(hi + 1, len(order) - 1)])",
    ),
    Mutation(
        "bisect-linear-scan",
        "the bisect measures the build after the last good one instead of the midpoint",
        "bot/bisect/search.py",
        "mid = (lo + hi) // 2",
        "mid = lo + 1",
    ),
    Mutation(
        "author-acknowledges",
        "the PR's author may acknowledge their own PR's regression",
        "bot/alert/ack.py",
        "if c.by.lower() == pr_author.lower() and not allow_author:",
        "if c.by.lower() == pr_author.lower() and False:",
        area="tests/alert",
    ),
    Mutation(
        "acknowledgement-never-lapses",
        "an acknowledgement holds however much worse the alert gets",
        "bot/alert/ack.py",
        "    if worse:\n",
        "    if False:\n",
        area="tests/alert",
    ),
    Mutation(
        "nvfuser-slowdown-shown-as-gain",
        "a ratio that fell because nvFuser got slower reads as Thunder's gain in the comment",
        "bot/tell/words.py",
        'nvfuser_slower(v):\n        return "no change"',
        "nvfuser_slower(v):\n        return g.state",
        area="tests/commands",
    ),
    Mutation(
        "first-rows-best-first",
        "the first screen lists the points that moved least, not the worst",
        "bot/tell/tables.py",
        "return first, (change if down else -change)",
        "return first, (-change if down else change)",
        area="tests/tell",
    ),
    Mutation(
        "comment-rows-uncapped",
        "every moved point of every guard is posted: the comment is no longer read in seconds",
        "bot/tell/tables.py",
        "COMMENT_ROWS = 6\n",
        "COMMENT_ROWS = 60\n",
        area="tests/tell",
    ),
    Mutation(
        "uncalibrated-machine-gates",
        "a machine no noise model covers gates (red, exit 1, issues)",
        "bot/alert/decision.py",
        'return "uncalibrated", f"no noise model covers {m.machine}", None',
        "pass",
        area="tests/commands",
    ),
    Mutation(
        "closed-issue-treated-as-open",
        "a closed alert issue is told every piece of news, as an open one is",
        "bot/github/issues.py",
        '        closed = issue.state != "open"\n',
        "        closed = False\n",
    ),
    Mutation(
        "pending-breaks-filed",
        "a pending (unconfirmed) break on main files its issue",
        "bot/history/issues.py",
        "for b in w.breaks if b.confirmed]",
        "for b in w.breaks]",
    ),
    Mutation(
        "plain-text-keeps-escapes",
        "report --format text prints the comment's backslash escapes (\\( and \\+0.3%)",
        "bot/tell/plain_inline.py",
        'toks.append(nxt if nxt in _PUNCT else "" if not nxt else "\\\\")',
        'toks.append("\\\\" + nxt if nxt in _PUNCT else "" if not nxt else "\\\\")',
        area="tests/commands",
    ),
    Mutation(
        "same-commit-compared",
        "report compares a commit with itself instead of refusing it (exit 2)",
        "bot/commands/cli.py",
        '    two_commits("report", args.base, args.head)\n',
        "",
    ),
    Mutation(
        "every-code-on-every-help-page",
        "each command's --help lists all twelve exit codes, not its own",
        "bot/commands/usage.py",
        "*code_lines(usage.all_codes(), usage.ok),",
        "*code_lines(tuple(ExitCode), usage.ok),",
    ),
    Mutation(
        "approval-of-any-commit",
        "the fork gate counts a maintainer's approval of an earlier commit (a push after it)",
        "bot/github/trust.py",
        'approvals = [r for r in standing if r.state == "APPROVED" and r.commit_id == run.head_sha'
        "]",
        'approvals = [r for r in standing if r.state == "APPROVED"]',
    ),
    Mutation(
        "artifact-bound-loose",
        "fetch-artifact's bound on artifacts is not the machines bound",
        "bot/commands/fetch_artifact.py",
        "limits = replace(limits, max_artifacts=cfg.max_machines)",
        "limits = replace(limits, max_artifacts=cfg.max_machines * 4)",
        area="tests/github",
    ),
    Mutation(
        "unchanged-side-owns",
        "a section goes to a side whose build did not change (the rule before provenance)",
        "bot/alert/owners.py",
        "    if not builds.known:\n        return legacy",
        "    if True:\n        return legacy",
        area="tests/alert",
    ),
    Mutation(
        "unimplicated-side-told",
        "the linked issue goes to a side no section implicates",
        "bot/alert/owners.py",
        "elif side is not None and side in sides and side != owner:",
        "elif side is not None and side != owner:",
        area="tests/alert",
    ),
    Mutation(
        "drift-ignores-changes",
        "a side whose build changed counts as the control (every real move reads as drift)",
        "bot/alert/control.py",
        "g.state not in MOVED or builds.changed_of(kind)",
        "g.state not in MOVED",
        area="tests/alert",
    ),
    Mutation(
        "drifted-run-gates",
        "a run whose unchanged side moved still gates (red, issues)",
        "bot/alert/decision.py",
        "    if control is not None:\n        return (\"drifted\"",
        "    if False:\n        return (\"drifted\"",
        area="tests/alert",
    ),
    Mutation(
        "uncalibrated-catalog-said-per-fusion",
        "a catalog on a machine no model covers gives every fusion its own part again",
        "bot/tell/comment.py",
        '    if u.standing != "uncalibrated" or u.verdict is None:',
        "    if True:",
        area="tests/commands",
    ),
    Mutation(
        "uncalibrated-list-unordered",
        "the catalog's figures as measured keep the catalog's order, a real +5% buried",
        "bot/tell/comment.py",
        "        listed.sort(key=as_measured_order)",
        "        pass",
        area="tests/commands",
    ),
    Mutation(
        "provisional-gates",
        "a fusion whose own calibration fell short gates on a move (red, issues) anyway",
        "bot/alert/decision.py",
        "    if m.provisional and m.verdict.overall in _PROVISIONAL_STATES:",
        "    if False:",
        area="tests/alert",
    ),
    Mutation(
        "not-judged-headline-red",
        "a machine that does not gate reads as its raw verdict (a red headline)",
        "bot/alert/decision.py",
        '        if shown is not None and u.standing != "judged":',
        "        if False:",
        area="tests/commands",
    ),
    Mutation(
        "alert-link-escaped",
        "the alert issue's PR reference is escaped (a zero-width joiner: not linked)",
        "bot/tell/issue_view.py",
        '        return f"{ctx.repo}#{ctx.pr}"\n',
        "        return escape_md(pr_ref(ctx))\n",
        area="tests/commands",
    ),
    Mutation(
        "broken-head-offered-ack-first",
        "a broken head's first step is the acknowledgement",
        "bot/tell/next_steps.py",
        'steps.insert(0 if "broken" not in states else len(steps), ack)',
        "steps.insert(0, ack)",
        area="tests/commands",
    ),
    Mutation(
        "level-worst-is-the-smallest",
        "the ratio level's worst point is the smallest head ratio, not the largest",
        "bot/decide/level.py",
        "top = max(compared, key=lambda p: p.cmp.head.estimate if p.cmp else 0.0, default=None)",
        "top = min(compared, key=lambda p: p.cmp.head.estimate if p.cmp else 0.0, default=None)",
    ),
    Mutation(
        "level-thunder-faster-unsaid",
        "a ratio level below 1 is printed without saying Thunder is the faster one",
        "bot/tell/level.py",
        "    return float(ratio(level.estimate)[:-1]) < 1 and",
        "    return float(ratio(level.estimate)[:-1]) < 0 and",
    ),
    Mutation(
        "level-faster-at-parity",
        "a 0.99x whose interval reaches 1 is called Thunder faster (issue 38)",
        "bot/tell/level.py",
        "and level.low < level.high < 1",
        "and level.low <= level.high",
    ),
    Mutation(
        "level-dtypes-averaged",
        "the ratio level averages dtypes that differ past the threshold (issue 38)",
        "bot/decide/level.py",
        "dtypes=dtypes if len(dtypes) > 1 and not _alike(dtypes, effect) else (),",
        "dtypes=(),",
    ),
    Mutation(
        "watch-owner-ignores-provenance",
        "the watch's sections are owned by the guard alone, not by what changed in the range",
        "bot/history/alerts.py",
        "    owner = section_owner(part_guard(p), builds, legacy_owner(p))",
        "    owner = legacy_owner(p)",
        area="tests/history",
    ),
    Mutation(
        "remeasure-first-run-confirms",
        "a change far beyond noise is confirmed by its one run, without a re-measurement",
        "bot/history/remeasure.py",
        "    if runs < 2:\n",
        "    if runs < 1:\n",
        area="tests/history",
    ),
    Mutation(
        "remeasure-any-run-agrees",
        "a re-measured change is confirmed though one of its runs alone is not far beyond noise",
        "bot/history/remeasure.py",
        "        if _far_in(v, guard, direction) is None:\n            return False\n",
        "        if _far_in(v, guard, direction) is None:\n            continue\n",
        area="tests/history",
    ),
    Mutation(
        "runner-explain-broken-passes",
        "runner_check --explain lets a broken item (a failing import, a lock folder that is a "
        "link, nvidia-smi that cannot reach the driver) pass instead of exiting 3",
        "benchmarks/doctor.py",
        "if statuses & {Status.MISSING, Status.BROKEN}:",
        "if statuses & {Status.MISSING}:",
        area="tests/suite",
    ),
    Mutation(
        "caller-config-trust-rules-skipped",
        "a caller's perfbot.toml is merged without its refused keys checked ([github] logins, "
        "noise_model, ... pass)",
        "bot/config_caller.py",
        "    _refused(caller, source)\n",
        "    pass  # the trust rules skipped\n",
        area="tests/commands",
    ),
    Mutation(
        "caller-config-max-machines-unbounded",
        "a caller may raise [results] max_machines above the pinned bot's bound",
        "bot/config_caller.py",
        "if config.max_machines > bound.max_machines:",
        "if config.max_machines > 64:",
        area="tests/commands",
    ),
    Mutation(
        "caller-default-repos-taken-as-chosen",
        "a caller whose perfbot.toml names no [issues] repos files in the pinned bot's default "
        "repositories (a fork's trial files upstream)",
        "bot/config_caller.py",
        "chosen = own | {r.lower() for r in (named or ())}",
        "chosen = own | {r.lower() for r in (named or DEFAULT_REPOS)}",
        area="tests/commands",
    ),
    Mutation(
        "caller-self-is-upstream",
        "a caller's \"self\" is read as the package's upstream repository, not the caller's own",
        "bot/config_caller.py",
        "named = [caller_repo if r == SELF else r for r in repos]",
        "named = [DEFAULT_REPOS[1] if r == SELF else r for r in repos]",
        area="tests/commands",
    ),
    Mutation(
        "stack-line-every-part",
        "the 'calibration may not transfer' line is said in every part of a machine, not once",
        "bot/tell/comment.py",
        "stack=opens[u.machine] is u)",
        "stack=True)",
        area="tests/tell",
    ),
    Mutation(
        "gpu-only-split-trusts-a-surplus-flush",
        "the candidate timer splits a round whose flush pattern appears more often than there "
        "are calls (a call that launches the flush's own kernel) instead of giving it up",
        "benchmarks/engine/timing.py",
        "if len(starts) != len(labels) or not starts or starts[0] != 0:",
        "if len(starts) < len(labels) or not starts or starts[0] != 0:",
        area="tests/suite",
    ),
    Mutation(
        "caller-config-from-the-pr-head",
        "the poster reads the caller's perfbot.toml without naming the default branch",
        ".github/workflows/post-results.yml",
        "contents/${CONFIG_PATH}?ref=${DEFAULT_BRANCH}",
        "contents/${CONFIG_PATH}",
        area="tests/workflows",
    ),
    Mutation(
        "catalog-judged-as-one",
        "every fusion's points are judged in one verdict instead of one a fusion",
        "bot/commands/cli.py",
        "base = tuple(r.of_fusion(fusion) for r in m.base_runs)",
        "base = m.base_runs",
        area="tests/commands",
    ),
    Mutation(
        "extend-overwrites-kept-series",
        "noise --extend lets the new fit replace entries already in use",
        "bot/decide/noise_model.py",
        "series={**new.series, **kept.series},",
        "series={**kept.series, **new.series},",
        area="tests/decide",
    ),
    Mutation(
        "catalog-quiet-fusions-shown",
        "the catalog's comment gives every unmoved fusion its own part",
        "bot/tell/comment.py",
        "moved = [u for u in d.units if not _quiet(u) and u not in swept and u not in listed]",
        "moved = list(d.units)",
        area="tests/tell",
    ),
    Mutation(
        "random-ops-not-tensors",
        "a dropout mask drawn in the backward (uniform, no tensor input) reads as scalar math",
        "bot/fusion/definition.py",
        "is_tensor = op in CREATIONS or (op not in SCALAR_OPS and bool(held))",
        "is_tensor = op not in SCALAR_OPS and bool(held)",
        area="tests/fusion",
    ),
    Mutation(
        "fusion-captures-mixed",
        "RMSNorm backward's captures take the other fusions' folders for points",
        "bot/fusion/read.py",
        "if fusion == DEFAULT_FUSION and entry.is_dir() and FUSION_DIR.fullmatch(entry.name):",
        "if False:",
        area="tests/fusion",
    ),
    Mutation(
        "gap-clue-opened-at-head",
        "a gap this change opened gets a standing-gap clue, as if it had stood at base",
        "bot/tell/hints.py",
        "if not stood or not telling:",
        "if not telling:",
        area="tests/fusion",
    ),
    # Issue 38: per-fusion truth (canonical fingerprints, the control per fusion and its drift
    # signature, the total watch, the words, hints about the change). Each is caught by its
    # area's tests (python -m tests.mutants --only NAME, as the closing note of issue 38 lists).
    Mutation(
        "fingerprint-printed-as-canonical",
        "the hand-written definition is compared by its printed text where a canonical one is "
        "recorded (renumbered tensors read as a change of the math)",
        "bot/alert/builds.py",
        "b_canon, h_canon = (f.canonical if f else None",
        "b_canon, h_canon = (f.printed if f else None",
    ),
    Mutation(
        "printed-text-differ-as-change",
        "a printed definition that differs, with no canonical fingerprint, is a change of the "
        "definition rather than what the records cannot tell",
        "bot/alert/builds.py",
        'return out, ("" if b_text == h_text else PRINTED_ONLY)',
        'return ([*out, PRINTED_ONLY] if b_text != h_text else out), ""',
    ),
    Mutation(
        "slowdown-any-fusion",
        "a slowdown the suite injected into one fusion is read as every fusion's",
        "bot/alert/builds.py",
        "    if scoped is not None and scoped != fusion:\n        return None\n",
        "",
    ),
    Mutation(
        "suite-change-unseen",
        "a change of the suite's measuring code or settings is no change of any build",
        "bot/alert/builds.py",
        '"suite": tuple(suite),',
        '"suite": (),',
    ),
    Mutation(
        "drift-despite-ratio-moved",
        "an unchanged side that moved reads as drift although the ratio moved with it",
        "bot/alert/control.py",
        'finding: Finding = "unexplained" if ratio_moved else "drift"',
        'finding: Finding = "drift"',
    ),
    Mutation(
        "one-fusion-drift-sweeps-machine",
        "a drift on one fusion of several makes the whole machine not judged",
        "bot/alert/decision.py",
        "if not drifted or (len(drifted) == 1 and len(mine) > 1):",
        "if not drifted:",
    ),
    Mutation(
        "run-overall-first-fusion",
        "the run's overall state (the JSON's top level) is its first fusion's, not the worst",
        "bot/alert/decision.py",
        "return worst([u.state for u in self.units])",
        "return self.units[0].state",
    ),
    Mutation(
        "watch-commit-comparable-only",
        "the watch links a break's first bad commit only among the comparable commits",
        "bot/history/series.py",
        "(*self.commits, *self.every)",
        "self.commits",
    ),
    Mutation(
        "watch-commit-stops",
        "the watch looks a first bad commit up among the comparable commits and stops when it is "
        "not there (the StopIteration that lost a night's alert)",
        "bot/history/series.py",
        "return next((c for c in (*self.commits, *self.every) if c.sha == sha and c.runs), None)",
        "return next(c for c in self.commits if c.sha == sha)",
    ),
    Mutation(
        "watch-alerts-ordered-by-comparable",
        "the night's alerts are put in order by the comparable commits alone (a KeyError when a "
        "break starts after a commit of other variants)",
        "bot/history/alerts.py",
        "key=lambda kv: w.history.position(kv[0][0])",
        "key=lambda kv: [c.sha for c in w.history.commits].index(kv[0][0])",
    ),
    Mutation(
        "other-fusions-guards-as-own",
        "a title's second guard may be another fusion's, told as the worst fusion's own",
        "bot/alert/model.py",
        "if x.machine == worst.machine and x is not worst]",
        "if x is not worst]",
    ),
    Mutation(
        "launch-lists-unread",
        "the kernels each timed call launched are not compared, head against base",
        "bot/fusion/hints.py",
        "launches = launch_findings(*kernels, explained=explained)",
        "launches: list[Finding] = []",
    ),
    Mutation(
        "standing-said-as-new",
        "every difference from the hand-written fusion at head is told as new, though base had it",
        "bot/fusion/hints.py",
        "new = [f for f in at_head if _same_difference(f) not in at_base]",
        "new = at_head",
    ),
    # Issue 37's defences. The attack rows (tests/workflows/test_attacks.py, slow: run them
    # with --tests tests/workflows/test_attacks.py --marker slow) go red with the first three.
    Mutation(
        "catalog-name-unchecked",
        "a fusion name from the results is taken whatever it is (markup, a command, a path)",
        "bot/results/names.py",
        "if isinstance(name, str) and name in FUSIONS:",
        "if isinstance(name, str):",
        area="tests/results",
    ),
    Mutation(
        "run-pr-from-the-artifact",
        "verify-run takes the artifact's PR although the run is of another PR's branch",
        "bot/github/trust.py",
        "run.head_branch is not None and run.head_branch == pull.head_ref,",
        "True,",
    ),
    Mutation(
        "issue-key-searched",
        "an issue is the key's when its body holds the key marker anywhere (a search, not a match)",
        "bot/github/issue_find.py",
        "key_of(issue.body) == key\n",
        'key_marker(key) in (issue.body or "")\n',
        also=(("import key_of\n", "import key_marker, key_of\n"),),
    ),
    Mutation(
        "marker-left-in-evidence",
        "an issue body's evidence may carry a marker of the bot's (no_markers skipped)",
        "bot/github/issues.py",
        "evidence = no_markers(spec.body_for(repo))",
        "evidence = spec.body_for(repo)",
    ),
    Mutation(
        "command-any-token",
        "a command shown to run is built of any text (the allowlist skipped)",
        "bot/tell/markdown.py",
        "if not COMMAND_TOKEN.fullmatch(token):",
        "if False:",
        area="tests/tell",
    ),
    Mutation(
        "title-name-raw",
        "an alert issue's title takes the fusion's name without the plain-text rule",
        "bot/tell/alert_issue.py",
        "fusion = plain_text(fusion_title(unit_fusion(worst.machine)))\n",
        "fusion = fusion_title(unit_fusion(worst.machine))\n",
        area="tests/tell",
    ),
    Mutation(
        "status-control-characters",
        "the status description keeps a NUL or a control character",
        "bot/alert/status.py",
        'return printable(" ".join(text.split()), MAX_DESCRIPTION)',
        'return " ".join(text.split())[:MAX_DESCRIPTION]',
        area="tests/tell",
    ),
    Mutation(
        "sticky-marker-anywhere",
        "the sticky comment is any of the bot's comments holding the marker's text anywhere",
        "bot/github/sticky.py",
        'and (c.body or "").startswith(marker)',
        'and marker in (c.body or "")',
    ),
    Mutation(
        "comment-state-anywhere",
        "the comment's state is read from a marker anywhere in it, not from its last line",
        "bot/tell/comment_state.py",
        "found = _STATE.fullmatch(last)",
        'found = _STATE.search(body or "")',
        area="tests/alert",
    ),
    Mutation(
        "turn-waits-for-the-previous-only",
        "a job's turn waits for the turn before it only, so a dead process lets the next start "
        "beside a live turn",
        "benchmarks/engine/turns.py",
        'f"over-{k}" for k in range(1, self.index) if',
        'f"over-{k}" for k in range(max(1, self.index - 1), self.index) if',
        area="tests/suite/test_turns.py",
    ),
    Mutation(
        "out-of-memory-not-put-off",
        "a point that ran out of GPU memory while a job's processes built side by side is "
        "recorded as failed instead of built again in the process's turn",
        "benchmarks/engine/measure.py",
        "    oom = point.out_of_memory()\n",
        "    oom = None\n",
        area="tests/suite/test_turn_memory.py",
    ),
    Mutation(
        "turns-without-room",
        "bench-pr takes turns on a GPU whose memory cannot hold every process's built points",
        ".github/workflows/bench-pr.yml",
        ' \\\n            && PYTHONPATH="$turns_py" python3 -m benchmarks.engine.room '
        "$((2 * REPEATS)); then",
        "; then",
        area="tests/workflows/test_gpu_scripts.py",
    ),
    Mutation(
        "history-stops-at-a-failed-build",
        "a history's build that does not measure keeps the later builds from being stored",
        "benchmarks/under_test/builds.py",
        "            outcomes.append((status, None))\n            continue\n",
        "            outcomes.append((status, None))\n            break\n",
        area="tests/suite/test_under_test_builds.py",
    ),
    Mutation(
        "turns-despite-the-opt-out",
        "bench-pr takes turns even where the repository turned them off",
        ".github/workflows/bench-pr.yml",
        'if [[ "${PERFBOT_TURNS:-on}" != off && -f',
        "if [[ -f",
        area="tests/workflows/test_gpu_scripts.py",
    ),
    Mutation(
        "profiles-without-an-id-read-as-stale",
        "Thunder's profiles of nvFuser's direct frontend (no fusion_id) are dropped as copies",
        "bot/fusion/read.py",
        "    if stale_id is None:\n        return variants\n",
        "",
        area="tests/fusion/test_real_captures.py",
    ),
    Mutation(
        "release-dated-2000",
        "a release's key ignores its wheel's build day and sorts before every nightly",
        "benchmarks/under_test/keys.py",
        "nightly_date(version) or (built.date() if built is not None else None)",
        "nightly_date(version)",
        area="tests/suite/test_under_test.py",
    ),
    Mutation(
        "power-splits-before-the-history-opens",
        "--power tries splits whose sides hold fewer commits that ran Thunder than a change needs",
        "bot/history/power.py",
        "if sum(j < i for j in ran) >= m.min_before and sum(j >= i for j in ran) >= m.min_after",
        "if True",
        area="tests/history/test_history_power.py",
    ),
    Mutation(
        "alert-without-what-changed-inside",
        "a main-branch alert leaves out the difference between its two commits' captures",
        "bot/commands/history.py",
        "                inside_from_captures,\n",
        "                None,\n",
        area="tests/history/test_history_inside.py",
    ),
)


def _project_files(root: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def copy_project(dest: Path, root: Path = REPO_ROOT, rev: str | None = None) -> None:
    """The repository's own files (no build output, no caches) under `dest`, as they are or
    as commit `rev` has them, plus pytest's cache of the synthetic asv tree, which is keyed by
    its inputs and saves a rebuild."""
    if rev is not None:
        dest.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "archive", "--format=tar", rev], cwd=root, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        (dest / "tests" / "mutants.py").write_bytes((root / "tests" / "mutants.py").read_bytes())
    for name in [] if rev is not None else _project_files(root):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    cache = root / ".pytest_cache"
    if cache.is_dir():
        shutil.copytree(cache, dest / ".pytest_cache")


def red_tests(report: Path) -> list[str]:
    """The failed or erroring tests of a junit XML report, by node id."""
    red = []
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            module = case.get("classname", "").replace(".", "/")
            red.append(f"{module}.py::{case.get('name')}")
    return sorted(set(red))


def run_one(
    mutation: Mutation,
    tests: Sequence[str],
    workers: str,
    rev: str | None = None,
    marker: str | None = None,
) -> list[str]:
    """The tests that fail with `mutation` applied to a fresh copy of the project."""
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutation.name}-") as tmp:
        root = Path(tmp) / "repo"
        copy_project(root, rev=rev)
        mutation.apply(root)
        report = Path(tmp) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-n", workers, f"--junitxml={report}"]
        command += ["-m", marker] if marker else []
        subprocess.run([*command, *tests], cwd=root, capture_output=True, check=False)
        if not report.is_file():
            raise RuntimeError(f"{mutation.name}: pytest wrote no report")
        return red_tests(report)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutants",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--only", action="append", help="run this mutation (repeatable)")
    parser.add_argument("--tests", action="append", help="test paths (default: tests)")
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers (default auto)")
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    parser.add_argument(
        "--area", action="store_true", help="each mutation on its own area's tests only"
    )
    parser.add_argument("--rev", help="mutate the project as this commit has it (git archive)")
    parser.add_argument("--marker", help="pytest's -m (e.g. slow: the attack table, the docs)")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list or not chosen:
        for m in MUTATIONS:
            print(f"{m.name}: {m.what} ({m.path})")
        return 0 if chosen else 2
    print("| mutation | what breaks | tests red |")
    print("| --- | --- | --- |")
    caught = 0
    for m in chosen:
        tests = [m.area_tests] if args.area else (args.tests or ["tests"])
        red = run_one(m, tests, args.workers, args.rev, args.marker)
        caught += bool(red)
        names = ", ".join(f"`{t}`" for t in red[:6]) + (
            f" and {len(red) - 6} more" if len(red) > 6 else ""
        )
        print(f"| {m.name} | {m.what} | {len(red)}: {names or '**none: a hole**'} |", flush=True)
    print(f"\n{caught} of {len(chosen)} mutations caught")
    return 0 if caught == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
