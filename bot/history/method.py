"""The change-point method's knobs, apart from the method itself: the command line reads their
defaults at start-up, and must not import the numerical machinery to do so."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    """The knobs, defaults stated in docs/HISTORY.md."""

    window: int = 8  # commits a side, at most
    min_before: int = 2  # commits before a split, at least
    min_after: int = 2  # commits after a split before a change is confirmed
