"""What a maintainer sees first: the bot's posts rendered as GitHub shows them, photographed.

The comment's first screen is where the answer has to be (the verdict, one line a guard, what
to do next); whether it is cannot be judged from the markdown alone, since tables wrap, folds
hide and line breaks move with the width. So this runs the demo on the recorded pairs, renders
every post that landed on the fake GitHub (``demo --save``: the posted bytes, not a re-render
of the bot's objects) with a GitHub-like renderer, and photographs the top of each page in
headless Chromium. tests/tell/test_first_screen.py measures the same pages.

    python -m tests.tell.screens --out DIR [--pairs demo,nochange] [--width 830] [--height 1000]

writes DIR/<pair>-comment.png, DIR/<pair>-issue-<n>.png and DIR/lengths.md.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import json
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from tests.browser_helpers import ARGS, CHROMIUM, missing_browser

REPO = Path(__file__).resolve().parents[2]
_DATA = REPO / "data"
#: The recorded pairs whose posts matter, as ``demo`` arguments (none: the default demo pair).
PAIRS: dict[str, tuple[str, ...]] = {
    "demo": (),  # the catalog: every fusion, Bias+GELU backward's Thunder 5% slower
    "rmsnorm": ("--results", str(_DATA / "h200" / "results")),  # RMSNorm bwd, with its hints
    "catalog-nochange": ("--results", str(_DATA / "h200-catalog" / "aa2"),
                         "--base", "c4af5b47", "--head", "baad8fb3"),
    "nochange": ("--results", str(_DATA / "h200-under-test" / "thunder-pair" / "results"),
                 "--base", "977510d7", "--head", "13612769"),
    "nvfuser": ("--results", str(_DATA / "h200-states" / "results"),
                "--base", "6c840f30", "--head", "93486aaf"),
    "broken": ("--results", str(_DATA / "h200-under-test" / "thunder-broken-pair" / "results"),
               "--base", "977510d7", "--head", "0e8c6c35"),
    "drift": ("--results", str(_DATA / "h200-drift" / "results"),
              "--base", "3a66a921", "--head", "64433c4d"),
}  # fmt: skip
#: GitHub's conversation column, about; and one laptop screen below the page's top.
WIDTH, HEIGHT = 830, 1000

# Written for this tool, GitHub-like in what changes a page's height: the font and its line
# height, block margins, table borders and padding, folds. Its own rules, not GitHub's sheet.
CSS = """
html, body { margin: 0; padding: 0; background: #fff; }
article { box-sizing: content-box; width: var(--width); margin: 0; padding: 0; color: #1f2328;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, "Apple Color Emoji",
  "Segoe UI Emoji", "Noto Color Emoji", sans-serif; overflow-wrap: break-word; }
article > :first-child { margin-top: 0; }
p, ul, ol, dl, table, pre, blockquote, details { margin: 0 0 16px; }
h1, h2, h3, h4, h5, h6 { margin: 24px 0 16px; font-weight: 600; line-height: 1.25; }
h1 { font-size: 2em; } h2 { font-size: 1.5em; } h3 { font-size: 1.25em; } h4 { font-size: 1em; }
h1, h2 { padding-bottom: .3em; border-bottom: 1px solid #d8dee4; }
ul, ol { padding-left: 2em; } li + li, li > ul, li > ol { margin-top: .25em; }
li > ul, li > ol { margin-bottom: 0; }
a { color: #0969da; text-decoration: none; }
strong { font-weight: 600; }
code { font: 85% ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
  background: #eff1f3; padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 16px; border-radius: 6px; overflow: auto; line-height: 1.45; }
pre code { background: none; padding: 0; font-size: 85%; }
table { display: block; width: max-content; max-width: 100%; overflow: auto;
  border-collapse: collapse; border-spacing: 0; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; } tr:nth-child(2n) { background: #f6f8fa; }
summary { cursor: pointer; }
details > :last-child { margin-bottom: 0; }
blockquote { margin-left: 0; padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
hr { height: .25em; margin: 24px 0; background: #d1d9e0; border: 0; }
"""


@dataclass(frozen=True)
class Post:
    """One thing the bot posted: the sticky comment or an issue body, as the fake received it."""

    pair: str
    name: str  # "comment", "comment-2", "issue-<number>"
    markdown: str


def _markdown() -> MarkdownIt:
    """GitHub's comment dialect as far as layout goes: CommonMark with tables, HTML blocks
    (``<details>``, comments) passed through, and a newline inside a paragraph shown as a line
    break, which is what GitHub does in comments (not in repository files). No linkify: the
    bot links what it means to link, and GitHub's autolinks do not change the layout."""
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "breaks": True})
    return md.enable(["table", "strikethrough"])


def render(markdown: str) -> str:
    """The markdown's HTML, as GitHub would put it inside the comment box."""
    return _markdown().render(markdown)


def page_html(markdown: str, width: int = WIDTH) -> str:
    """A whole page: the rendered post in a white column exactly ``width`` pixels wide."""
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>post</title>'
        f"<style>:root {{ --width: {width}px; }}{CSS}</style></head>"
        f"<body><article>{render(markdown)}</article></body></html>"
    )


def plain(markdown_line: str) -> str:
    """The text a reader sees for one line of markdown, spaces collapsed as the DOM's are."""
    text = html.unescape(re.sub(r"<[^>]+>", "", _markdown().renderInline(markdown_line)))
    return " ".join(text.split())


def run_demo(pair: str, folder: Path) -> list[Post]:
    """The demo on one recorded pair, in this process, its posts saved into ``folder``.

    An empty environment: the posts must not depend on the caller's (PERFBOT_SITE_URL...).
    """
    from bot.commands.cli import main  # late: importing this module must not load the bot

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["demo", "--save", str(folder), *PAIRS[pair]], env={})
    index = folder / "posted.json"
    if code != 0 or not index.is_file():
        raise RuntimeError(f"demo {pair} exited {code}:\n{out.getvalue()[-3000:]}")
    posted = json.loads(index.read_text(encoding="utf-8"))
    posts = [Post(pair, Path(c["file"]).stem, (folder / c["file"]).read_text(encoding="utf-8"))
             for c in posted["comments"]]  # fmt: skip
    for i in sorted(posted["issues"], key=lambda i: int(i["ref"].rsplit("#", 1)[1])):
        body = (folder / i["file"]).read_text(encoding="utf-8")
        posts.append(Post(pair, "issue-" + i["ref"].rsplit("#", 1)[1], body))
    return posts


def folded_sections(markdown: str) -> int:
    """How many ``<details>`` folds the rendered post has."""
    return len(re.findall(r"<details[\s>]", render(markdown)))


def lengths_table(posts: Sequence[Post]) -> str:
    """The lengths table: characters against GitHub's 65,536 cap, lines, folds."""
    rows = ["| pair | post | characters | lines | folded sections |", "|---|---|---|---|---|"]
    rows += [
        f"| {p.pair} | {p.name} | {len(p.markdown)} | {len(p.markdown.splitlines())} "
        f"| {folded_sections(p.markdown)} |"
        for p in posts
    ]
    return "\n".join(rows) + "\n"


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium through Playwright, closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_post(browser: Any, markdown: str, width: int = WIDTH, height: int = HEIGHT) -> Any:
    """A new page showing the post, scrolled to its top; the caller closes it. Offline:
    the page is set from a string and loads nothing."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_content(page_html(markdown, width), wait_until="load")
    return page


def shoot(browser: Any, post: Post, out: Path, width: int, height: int) -> Path:
    """The first screen of one post as a PNG: the viewport at the page's top, no more."""
    path = out / f"{post.pair}-{post.name}.png"
    page = open_post(browser, post.markdown, width, height)
    try:
        page.screenshot(path=str(path), full_page=False)
    finally:
        page.close()
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.tell.screens", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNGs")
    parser.add_argument("--pairs", default=",".join(PAIRS), help="comma-separated, of: "
                        + ", ".join(PAIRS))  # fmt: skip
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--height", type=int, default=HEIGHT)
    args = parser.parse_args(argv)
    pairs = [p for p in args.pairs.split(",") if p]
    unknown = [p for p in pairs if p not in PAIRS]
    if unknown:
        parser.error(f"unknown pair(s) {', '.join(unknown)}; known: {', '.join(PAIRS)}")
    missing = missing_browser()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    posts: list[Post] = []
    with tempfile.TemporaryDirectory(prefix="perfbot-screens-") as scratch:
        for pair in pairs:
            posts += run_demo(pair, Path(scratch) / pair)
    with chromium() as browser:
        for post in posts:
            print(shoot(browser, post, args.out, args.width, args.height))
    (args.out / "lengths.md").write_text(lengths_table(posts), encoding="utf-8")
    print(args.out / "lengths.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
