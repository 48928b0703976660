"""What the demo posted, written to a folder: one markdown file a post and an index.

Why files: the comment and issue texts are what a maintainer reads, so their lengths and their
first screen are judged on exactly these bytes (tests/tell/test_budgets.py,
tests/tell/screens.py), not on a re-rendering that could drift from what was posted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Posted:
    """One issue as it stands on the (fake) GitHub."""

    repo: str
    number: int
    state: str
    title: str
    body: str

    @property
    def ref(self) -> str:
        return f"{self.repo}#{self.number}"

    @property
    def file_name(self) -> str:
        return "issue-" + re.sub(r"[^A-Za-z0-9_.-]", "-", self.repo) + f"-{self.number}.md"


def save_posts(
    folder: Path, comments: Sequence[str], issues: Sequence[Posted], status: str, code: int
) -> list[Path]:
    """``comment.md`` (the sticky comment; ``comment-2.md``... should there be more),
    ``issue-OWNER-NAME-N.md`` each, and ``posted.json`` naming them with their lengths."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    listed: list[dict[str, object]] = []
    for n, body in enumerate(comments, 1):
        path = folder / ("comment.md" if n == 1 else f"comment-{n}.md")
        path.write_text(body, encoding="utf-8")
        written.append(path)
        listed.append({"file": path.name, "chars": len(body)})
    filed: list[dict[str, object]] = []
    for i in issues:
        path = folder / i.file_name
        path.write_text(i.body, encoding="utf-8")
        written.append(path)
        filed.append(
            {"file": path.name, "ref": i.ref, "state": i.state, "title": i.title,
             "chars": len(i.body)}
        )  # fmt: skip
    index = {"status": status, "exit_code": code, "comments": listed, "issues": filed}
    path = folder / "posted.json"
    path.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return [*written, path]
