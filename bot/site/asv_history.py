"""An asv repository plugin for results whose commits this repository does not contain.

``asv publish`` draws a result only if its commit is on a configured branch of ``repo``, and
orders results by the repository's history. The committed H200 results were measured at
throwaway commits of lab copies of this repository (the lab machine gets a copy without
history; see docs/DATA.md), so no clone has those commits and stock ``asv publish`` drops every
one of them.

asv chooses its repository class by the ``dvcs`` key of asv.conf.json among all subclasses of
``asv.repo.Repo`` that are imported, and it imports extra modules named in the ``plugins`` key
(both documented configuration keys). This module is such a plugin: with ``"dvcs":
"perfbot-recorded"`` and ``"repo"`` naming a JSON history file that bot/site/build.py writes,
the history asv sees is the recorded one: every results commit, oldest first, by the commit
date asv itself stored in each results file. No result is rewritten; only the order and branch
membership come from this file instead of git.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asv.repo import NoSuchNameError, Repo

DVCS = "perfbot-recorded"


def write_history(path: Path, branch: str, commits: list[tuple[str, int]]) -> None:
    """The history file: (full hash, commit date in ms) oldest first, all on ``branch``."""
    data = {"branch": branch, "commits": [{"hash": h, "date": d} for h, d in commits]}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


class RecordedHistory(Repo):  # type: ignore[misc]  # asv ships no type information
    """A linear history of the results' own commits, read from a JSON file."""

    dvcs = DVCS

    def __init__(self, url: str, mirror_path: str) -> None:
        data = json.loads(Path(url).read_text(encoding="utf-8"))
        self._default_branch = str(data["branch"])
        self._order = [str(c["hash"]) for c in data["commits"]]
        self._dates = {str(c["hash"]): int(c["date"]) for c in data["commits"]}
        self._index = {h: i for i, h in enumerate(self._order)}

    @classmethod
    def url_match(cls, url: str) -> bool:
        return False  # chosen only by "dvcs", never guessed from a URL

    def pull(self) -> None:
        pass

    def checkout(self, path: str, commit_hash: str) -> None:
        raise NoSuchNameError(f"{commit_hash}: a recorded history has no source to check out")

    def get_tags(self) -> dict[str, str]:
        return {}

    def get_revisions(self, commits: Any) -> dict[str, int]:
        return {h: i for h, i in self._index.items() if h in commits}

    def get_branch_commits(self, branch: str | None) -> list[str]:
        if self.get_branch_name(branch) != self._default_branch:
            return []
        return list(reversed(self._order))  # asv's convention: newest first

    def get_date(self, hash: str) -> int:
        return self._dates[self.get_hash_from_name(hash)]

    def get_date_from_name(self, name: str) -> int:
        return self.get_date(name)

    def get_hash_from_name(self, name: str | None) -> str:
        if name is None or name == self._default_branch:
            return self._order[-1]
        found = [h for h in self._order if h.startswith(name)]
        if len(found) != 1:
            raise NoSuchNameError(name)
        return found[0]

    def get_hash_from_parent(self, name: str) -> str:
        i = self._index[self.get_hash_from_name(name)]
        if i == 0:
            raise NoSuchNameError(f"{name}^")
        return self._order[i - 1]

    def get_name_from_hash(self, commit: str) -> None:
        return None

    def get_range_spec(self, commit_a: str, commit_b: str) -> str:
        return f"{commit_a}..{commit_b}"

    def get_new_range_spec(self, latest_result: str, branch: str | None = None) -> str:
        return f"{latest_result}..{self.get_branch_name(branch)}"

    def get_hashes_from_range(self, range_spec: str) -> list[str]:
        """``A..B``: the commits after A up to B, newest first (git's rev-list order)."""
        start, sep, end = range_spec.partition("..")
        if not sep:
            return list(reversed(self._order[: self._index[self.get_hash_from_name(start)] + 1]))
        lo = self._index[self.get_hash_from_name(start)] + 1 if start else 0
        hi = self._index[self.get_hash_from_name(end or None)]
        return list(reversed(self._order[lo : hi + 1]))
