"""Screenshots of the history website for issue 41's note: the landing view (the watch's
changes first) and one fusion's ratio graph along the nightlies, in the headless Chromium the
browser tests drive (tests/browser_helpers.py), served from 127.0.0.1 with no network.

    python3 data/issue41-history/shot.py SITE_DIR MACHINE FUSION DTYPE SHAPE VARIANT OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT, ROOT / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from browser_helpers import ARGS, CHROMIUM  # noqa: E402

from bot.results.types import PointKey  # noqa: E402
from bot.site import start_server  # noqa: E402
from bot.tell.rows import graph_url  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    site, machine, fusion, dtype, shape, variant, out = argv
    from playwright.sync_api import sync_playwright

    Path(out).mkdir(parents=True, exist_ok=True)
    key = PointKey(variant, dtype, shape, fusion)
    with start_server(Path(site)) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        tab = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        tab.goto(server.url + "/")
        tab.wait_for_selector("#perfbot-landing", state="visible")
        tab.wait_for_load_state("networkidle")
        tab.screenshot(path=f"{out}/landing.png", full_page=True)
        tab.goto(graph_url(server.url, key, machine))
        tab.wait_for_function("() => { const p = $('#main-graph').data('plot');"
                              " return p && p.getData().length > 0; }")  # fmt: skip
        tab.wait_for_load_state("networkidle")
        tab.screenshot(path=f"{out}/{fusion}-ratio.png")
        browser.close()
    print(f"{out}/landing.png {out}/{fusion}-ratio.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
