"""Configuration checked against the results it is applied to (pure), so that it cannot fail
silently.

Before this, ``gating_variants = ["thundr-*"]`` matched nothing, so no point gated and a real
regression read "Inconclusive (no data)" with exit code 0; a threshold pattern with a typo was
simply never used. The two cases are treated differently, on purpose:

* A gating pattern that matches no variant in the results is a usage error (exit 2): the
  verdict would be empty, which is never what anyone configured.
* A threshold pattern that matches no point is a warning, shown in the comment's notes and on
  stderr: one ``perfbot.toml`` serves several size sets (the shipped thresholds are for the
  H200 ``pr`` points, and a ``smoke`` or ``nightly`` run lacks some of them), so a threshold
  without its point is often legitimate, but it must be visible.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from bot.config import ConfigError, VerdictSettings
from bot.results.types import CommitResults, PointKey


def _keys(results: Iterable[CommitResults]) -> list[PointKey]:
    return sorted({k for r in results for k in r.contenders()})


def check_gating(settings: VerdictSettings, results: Iterable[CommitResults]) -> None:
    """Raise ConfigError for a gating pattern that matches no variant of the results."""
    variants = sorted({k.variant for k in _keys(results)})
    for pattern in settings.gating:
        if not any(fnmatch.fnmatchcase(v, pattern) for v in variants):
            shown = ", ".join(variants) or "none"
            raise ConfigError(
                f"verdict.gating_variants: pattern {pattern!r} matches no variant in these "
                f"results (variants there: {shown}); nothing would decide the verdict"
            )


def unused_thresholds(settings: VerdictSettings, results: Iterable[CommitResults]) -> list[str]:
    """One warning per threshold pattern that sets no point's threshold here: it matches no
    point, or only points that an earlier pattern sets (the first match wins)."""
    labels = [k.label for k in _keys(results)]
    used = set()
    for label in labels:
        first = next(
            (i for i, t in enumerate(settings.thresholds) if fnmatch.fnmatchcase(label, t.pattern)),
            None,
        )
        if first is not None:
            used.add(first)
    warnings = []
    for i, t in enumerate(settings.thresholds):
        if i in used:
            continue
        matched = any(fnmatch.fnmatchcase(label, t.pattern) for label in labels)
        why = "only points an earlier pattern sets" if matched else "no point in these results"
        warnings.append(
            f"threshold pattern {t.pattern!r} (effect {t.effect:.1%}) has no effect: it matches "
            f"{why}"
        )
    return warnings
