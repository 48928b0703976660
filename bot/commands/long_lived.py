"""Keeping CPython's cyclic garbage collector off the runs a command has read.

A nightly history is ~90k points holding ~5M sample floats, built once and then only read
until the command ends. The collector would walk them again at every older-generation
collection the analysis triggers while it allocates: about a third of the watch's time on a
100-commit history (``python3 -m tests.perf.bench_history``, docs/HISTORY.md). So the runs
are built with the collector paused, then frozen (``gc.freeze``: moved where no collection
looks; reference counting still frees them), and on leaving unfrozen and the collector put
back as it was, so an in-process caller (the tests) is left as it found the process.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def long_lived() -> Iterator[Callable[[], None]]:
    """``with long_lived() as keep: data = read(); keep(); use(data)``: the collector is
    paused until ``keep()``, which freezes what exists by then; an exception before ``keep()``
    leaves nothing frozen."""
    enabled = gc.isenabled()
    frozen = False
    gc.disable()

    def keep() -> None:
        nonlocal frozen
        gc.freeze()
        frozen = True
        if enabled:
            gc.enable()

    try:
        yield keep
    finally:
        if frozen:
            gc.unfreeze()
        if enabled:
            gc.enable()
