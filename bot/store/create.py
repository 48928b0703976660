"""A new, empty store: its index, its pins file and a README that says what the branch is.

Made by ``store init`` (and by the nightly workflow the first time, when the ``perf-results``
branch does not exist yet); refused where a store or anything else already is, so that an
init never empties a history.
"""

from __future__ import annotations

from pathlib import Path

from bot.store.git import BRANCH, commit_all, init_repo, is_repo
from bot.store.index import PINS, Index, StoreError, pins_text, write_index

README = """# perf-results: the history store of fusion-perfbot

Written by the nightly workflow (`python -m bot store ...`), never by hand: docs/STORE.md on
the default branch says what is here, how it is thinned, and how to pin a commit.

- `results/`: asv results folders, one a machine (`results/<machine>/`): asv's results file,
  the provenance record and the runner checks of each stored run (docs/DATA.md)
- `index.json`: every stored and every retired run, with its fingerprint
- `pins.txt`: commits that are never thinned away (change points, open issues)
"""


def init_store(store: Path, branch: str = BRANCH) -> str | None:
    """Returns the first commit's hash."""
    if store.exists() and (store.is_file() or any(p.name != ".git" for p in store.iterdir())):
        raise StoreError(f"{store}: exists and is not empty: refusing to make a store there")
    store.mkdir(parents=True, exist_ok=True)
    if not is_repo(store):
        init_repo(store, branch)
    write_index(store, Index())
    (store / PINS).write_text(pins_text({}), encoding="utf-8")
    (store / "README.md").write_text(README, encoding="utf-8")
    return commit_all(store, "store: a new, empty history store")
