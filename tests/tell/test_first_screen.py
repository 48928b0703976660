"""The answer is on the comment's first screen, measured in a real headless Chromium.

A maintainer opening the PR sees one screen (830 x 1000 px: GitHub's conversation column on a
laptop) before deciding whether to scroll. On it, with every ``<details>`` fold closed as
posted, must be the verdict headline and every guard's line, whole; and the page with its folds
closed stays within about two screens. Each of the four recorded pairs (tests/tell/screens.py
PAIRS: the 11x Thunder regression, no change, nvFuser's own +5%, broken points) is rendered
from the markdown the demo posted, with the renderer screens.py photographs.

The checks are geometry (``getBoundingClientRect`` of the rendered blocks), not wording, so a
rewritten layout passes as long as it puts the answer on top. The headline is found in the
markdown (the first line that opens with an emoji and bold text, else the ``###`` title) and
its text must be inside the first screen. The guards' lines are found by their place, not
their words: the first visible innermost blocks (paragraph, list item, table row, heading,
summary) after the headline that carry a verdict mark (an emoji: 🔴 ⚪ 💥 ...), as many as the
verdict has guards (bot/decide/types.py GuardKind). That holds while the guards' lines are the
first marked lines under the headline, before the changed rows, as in both layouts so far.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from screens import HEIGHT, PAIRS, WIDTH, chromium, missing_browser, open_post, plain, run_demo

from bot.decide.types import GuardKind

#: One line a guard: as many as the verdict has guards.
GUARDS = len(get_args(GuardKind))
#: "At most about two screens": the page with its folds closed, in viewport heights.
MAX_SCREENS = 2.0

MISSING = missing_browser()
if MISSING and os.environ.get("PERFBOT_REQUIRE_BROWSER") == "1":  # CI: a skip would hide it
    pytest.fail(f"PERFBOT_REQUIRE_BROWSER=1 but {MISSING}", pytrace=False)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
]

#: Where each block stands in the page as rendered: no fold opened or closed by the test.
#: A guard's line is one of the first ``guards`` visible innermost blocks after the headline
#: that carry a verdict mark (a character drawn as an emoji by default: 🔴 ⚪ 💥 ...).
MEASURE = """({headline, guards}) => {
  const norm = (s) => s.replace(/\\s+/g, " ").trim();
  const MARK = /\\p{Emoji_Presentation}/u;
  // Inside a closed <details> and not its <summary>: not on any screen.
  const folded = (e) => {
    for (let d = e.closest("details"); d; d = d.parentElement?.closest("details")) {
      const summary = d.querySelector(":scope > summary");
      if (!d.open && !(summary && summary.contains(e))) return true;
    }
    return false;
  };
  const shown = [...document.querySelectorAll("p, li, tr, h1, h2, h3, h4, h5, h6, summary, dt, dd")]
    .filter((e) => e.checkVisibility() && !folded(e));
  const innermost = (hits) => hits.filter((e) => !hits.some((o) => o !== e && e.contains(o)));
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, width: r.width, height: r.height,
            text: norm(e.textContent).slice(0, 100)};
  };
  const head = innermost(shown.filter((e) => norm(e.textContent).includes(headline)))[0];
  const after = (e) => head && !e.contains(head) && !head.contains(e)
    && (head.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
  const marked = innermost(shown.filter((e) => MARK.test(e.textContent))).filter(after);
  return {
    details: document.querySelectorAll("details").length,
    open: document.querySelectorAll("details[open]").length,
    scrollY: window.scrollY,
    pageHeight: document.documentElement.scrollHeight,
    headline: head ? box(head) : null,
    guards: marked.slice(0, guards).map(box),
  };
}"""


def _opens_with_emoji(line: str) -> bool:
    """The line opens with an emoji (a symbol, maybe with its variation selector), then bold."""
    m = re.match(r"(\S)\ufe0f?\s*\*\*\S", line)
    return m is not None and unicodedata.category(m.group(1)) == "So"


def headline(markdown: str) -> str | None:
    """The verdict headline's text as a reader sees it: the first line that opens with an emoji
    and bold text, else the ``###`` title; None when the post has neither."""
    lines = markdown.splitlines()
    line = next((s for s in lines if _opens_with_emoji(s.strip())), None)
    if line is None:
        line = next((s[4:] for s in lines if s.startswith("### ")), None)
    return None if line is None else plain(line.strip())


def _fully_on_screen(box: dict[str, Any] | None) -> bool:
    return (
        box is not None
        and box["height"] > 0
        and box["width"] > 0
        and box["top"] >= 0
        and box["bottom"] <= HEIGHT
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module", params=list(PAIRS))
def measured(
    request: pytest.FixtureRequest, browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any]]:
    """One pair's comment, rendered at 830 x 1000 and measured: (headline text, geometry)."""
    pair = request.param
    posts = run_demo(pair, Path(tmp_path_factory.mktemp(f"demo-{pair}")))
    comment = next(p for p in posts if p.name == "comment")
    title = headline(comment.markdown)
    assert title, f"{pair}: no headline (emoji + bold line, or ### title) in the comment"
    page = open_post(browser, comment.markdown, WIDTH, HEIGHT)
    try:
        geometry = page.evaluate(MEASURE, {"headline": title, "guards": GUARDS})
    finally:
        page.close()
    assert geometry["scrollY"] == 0
    return title, {**geometry, "pair": pair}


def test_every_fold_is_closed_as_posted(measured: tuple[str, dict[str, Any]]) -> None:
    _, g = measured
    assert g["open"] == 0, f"{g['open']} of {g['details']} <details> render open"


def test_the_headline_is_whole_on_the_first_screen(measured: tuple[str, dict[str, Any]]) -> None:
    title, g = measured
    assert g["headline"] is not None, f"headline {title!r} is not in any visible block"
    assert _fully_on_screen(g["headline"]), f"headline {title!r} at {g['headline']}"


def test_every_guard_line_is_whole_on_the_first_screen(
    measured: tuple[str, dict[str, Any]],
) -> None:
    _, g = measured
    lines = g["guards"]
    # A catalog that did not move has one line where a fusion has its four guards.
    want = 1 if g["pair"] == "catalog-nochange" else GUARDS
    assert len(lines) == want, f"{len(lines)} of {want} guard lines after the headline: {lines}"
    off = [box for box in lines if not _fully_on_screen(box)]
    assert off == [], f"guard lines not wholly within the first {HEIGHT} px: {off}"


def test_the_folded_page_is_at_most_two_screens(measured: tuple[str, dict[str, Any]]) -> None:
    _, g = measured
    assert g["pageHeight"] <= MAX_SCREENS * HEIGHT, (
        f"{g['pageHeight']} px tall with its folds closed: "
        f"{g['pageHeight'] / HEIGHT:.1f} screens of {HEIGHT} px, at most {MAX_SCREENS}"
    )
