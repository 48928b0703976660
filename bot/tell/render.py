"""The templates in bot/tell/templates/, rendered (pure): Jinja2 over the views of
bot/tell/view.py and bot/tell/issue_view.py.

Why Jinja2 rather than string assembly or ``string.Template``: the layout needs loops (a line a
guard, a row a point) and conditions (a fold only when there is something in it), and a
maintainer who wants another first screen should edit one template, not the Python that fills
it. Autoescape is off because the output is markdown, not HTML: every outside text is escaped
for markdown in the views (bot/tell/markdown.py escape_md), and the templates are ours, never
built from input. ``StrictUndefined``: a misspelt field is an error, not an empty cell.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"
_FENCE = re.compile(r"^(`{3,})")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # here, not at import: the command line starts without it (bot/commands/cli.py)

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def tidy(markdown: str) -> str:
    """At most one blank line in a row and no trailing blanks, outside code fences: the
    templates may leave runs of them where a part is empty, and a fence's own text (a
    reproducer script) is kept as it is."""
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
            elif not line.strip():
                if out and not out[-1]:
                    continue
                line = ""
        elif line.rstrip() == fence:
            fence = None
        out.append(line)
    return "\n".join(out).strip("\n")


def render(template: str, **values: Any) -> str:
    return tidy(environment().get_template(template).render(**values))
