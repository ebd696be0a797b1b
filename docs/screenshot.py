"""Take docs/screenshot.png: the Home page over the bundled demo (what evalcore is and what waits,
with a review queue built on support-g1 in the temporary state), 1400 px wide.

    .venv/bin/python docs/screenshot.py [--data data/demo] [--out docs/screenshot.png] [--link "runs?run=..&item=.."]

Starts `streamlit run app.py` on a free 127.0.0.1 port (state in a temporary directory, so the
demo is read in place and nothing is written next to it; the queue is built there with
`evalcore queue build support-g1` first), drives Debian's chromium through
Playwright (never `playwright install`), aborts any request that would leave 127.0.0.1 and
refuses to write the picture if one was attempted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser_util import chromium_path, guard_page, launch, start_app, wait_idle  # noqa: E402

DEFAULT_LINK = "?reviewer=ann"  # Home for a reviewer; "runs?run=support-single&item=sup-0001": Runs with an answer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "data" / "demo"), help="data directory (default: the bundled demo)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"), help="PNG to write")
    ap.add_argument("--width", type=int, default=1400, help="page width in pixels")
    ap.add_argument("--max-height", type=int, default=900,
                    help="crop the picture to this many pixels from the top (0: the whole page)")
    ap.add_argument("--link", default=DEFAULT_LINK, help="page and query string to open (default: Home)")
    args = ap.parse_args(argv)
    if chromium_path() is None:
        print("error: Debian chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="evalcore-shot-") as tmp:
        built = subprocess.run([sys.executable, "-m", "evalcore", "--data", args.data, "--state",
                                str(Path(tmp) / "state"), "queue", "build", "support-g1"], capture_output=True, text=True)
        if built.returncode != 0:
            print(f"error: queue build: {built.stderr.strip()}", file=sys.stderr)
            return 2
        return _shoot(args, Path(tmp))


def _shoot(args: argparse.Namespace, tmp: Path) -> int:
    from playwright.sync_api import sync_playwright

    with start_app(Path(args.data), tmp / "state", extra_args=["--client.toolbarMode", "minimal"]) as base, \
            sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": args.width, "height": 1000})
        outside: list[str] = []
        guard_page(page, outside)
        page.goto(base + "/" + args.link)
        if not args.link or args.link.startswith("?reviewer"):
            page.get_by_text("evalcore checks LLM judges").wait_for(timeout=60_000)
            page.get_by_text("wait for you").first.wait_for(timeout=60_000)
        else:
            page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=60_000)
        if "item=" in args.link:
            page.get_by_text("Verdicts, judge round 1").wait_for(timeout=30_000)
            page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stCode\"]').length >= 4",
                                   timeout=30_000)
        wait_idle(page)
        # Streamlit scrolls inside its own container: grow the window to the content's height.
        height = page.evaluate("""() => Math.max(...[document.documentElement,
            document.querySelector('[data-testid="stAppViewContainer"]'),
            document.querySelector('[data-testid="stMain"]')].filter(Boolean).map(e => e.scrollHeight))""")
        page.set_viewport_size({"width": args.width, "height": int(height) + 40})
        page.wait_for_timeout(800)
        wait_idle(page)
        clip = None
        if args.max_height > 0:
            clip = {"x": 0, "y": 0, "width": args.width, "height": min(int(height) + 40, args.max_height)}
        page.screenshot(path=args.out, full_page=True, clip=clip)
        browser.close()
    if outside:
        Path(args.out).unlink(missing_ok=True)
        print(f"error: the page tried to reach {outside}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
