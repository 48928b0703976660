"""The regression thresholds asv itself applies to each benchmark of the site (asked of asv's
own code), and where overlapping ``regressions_thresholds`` patterns loosen one (docs/SITE.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def thresholds(
    conf: Mapping[str, Any], benchmarks: Mapping[str, Mapping[str, Any]]
) -> dict[str, float | None]:
    """The threshold asv's own regression filter applies to each benchmark (first branch),
    asked of asv's code with the entry name asv uses (``name(param, ...)@branch``); None
    where ``regressions_first_commits`` maps the benchmark to null (detection off).

    asv takes the largest threshold among all matching patterns, not the first match.
    """
    from asv.config import Config
    from asv.graph import Graph
    from asv.plugins.regressions import _GraphDataFilter

    aconf = Config()
    aconf.regressions_thresholds = dict(conf.get("regressions_thresholds", {}))
    branch = (conf.get("branches") or [None])[0]
    filt = _GraphDataFilter(aconf, None, {})
    off = [p for p, c in dict(conf.get("regressions_first_commits", {})).items() if c is None]
    out: dict[str, float | None] = {}
    for name, bench in sorted(benchmarks.items()):
        graph = Graph(name, {"branch": branch} if branch else {})
        first = [str(values[0]) for values in bench.get("params", []) if values]
        entry = f"{name}({', '.join(first)})" if first else name
        suffix = f"@{branch}" if branch else ""
        if any(re.match(p, entry + suffix) for p in off):  # as asv's _get_start_revision
            out[name] = None
        else:
            out[name] = float(filt._get_threshold(graph, bench, entry))
    return out


def threshold_notes(conf: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """Where several ``regressions_thresholds`` patterns match one benchmark with different
    values: asv applies the largest, which silently loosens a tighter, more specific one."""
    patterns = dict(conf.get("regressions_thresholds", {}))
    notes = []
    for name in names:
        hits = {p: float(v) for p, v in patterns.items() if re.match(p, name + "(")}
        if len(set(hits.values())) > 1:
            listed = ", ".join(f"{p!r}: {v:g}" for p, v in hits.items())
            notes.append(
                f"{name}: several regressions_thresholds match ({listed}); asv applies the "
                f"largest, {max(hits.values()):g}"
            )
    return notes
