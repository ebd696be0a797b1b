"""A review team under load, in real browsers: four reviewers deciding at once for DUR seconds.

    .venv/bin/python bench/review_load.py [DUR]          # the label store on SQLite
    PG=1 .venv/bin/python bench/review_load.py [DUR]     # on a throwaway PostgreSQL cluster

A copy of the bundled SIMULATED demo, a queue on support-g1 with two reviewers per case (audit
30%, seed 3), a fresh `streamlit run` server, and four headless Chromium browsers (one Playwright
each, in threads), each typing its reviewer name on the Review page and pressing the first
decision's key on every case it is offered, as tests/test_browser_team.py does. For each
decision: the seconds from the key press to the next case drawn. Prints per reviewer the
decisions, the longest wait, the waits over 5 s and any error; then how many reviewers each
decided case got (two are asked). A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import browser_util  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from test_browser_team import choices, decide, wait_case  # noqa: E402

from evalcore import LabelStore, Store  # noqa: E402
from evalcore import review as R  # noqa: E402

REVIEWERS = 4


def worker(name: str, base: str, dur: float, out: list) -> None:
    with sync_playwright() as p:
        b = browser_util.launch(p)
        page = b.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.goto(f"{base}/review?gen=support-g1")
        browser_util.type_name(page, name)
        try:
            cur = wait_case(page)
        except Exception as e:  # reported, not raised: the other reviewers go on
            out.append(("first case failed", 0.0, str(e)[:200]))
            return
        end = time.monotonic() + dur
        while time.monotonic() < end:
            t0 = time.monotonic()
            try:
                decide(page, choices(page)[0])
                t1 = time.monotonic()
                nxt = wait_case(page, not_this=cur, timeout=120_000)
            except Exception as e:
                out.append(("error", round(time.monotonic() - t0, 2), str(e)[:160]))
                break
            out.append((cur, round(t1 - t0, 2), round(time.monotonic() - t1, 2)))
            cur = nxt
        b.close()


def main() -> None:
    dur = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    root = Path("/tmp/evalcore-bench/review-load")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    data, state = root / "data", root / "state"
    shutil.copytree(ROOT / "data" / "demo", data)
    pg_root = None
    if os.environ.get("PG") == "1":
        import pg_util

        url, _ = pg_util.new_schema(pg_util.server_url())
        os.environ["EVALCORE_DB"] = url
        pg_root = os.environ.get(pg_util.ROOT_ENV)
    store = Store(data, state)
    R.build_queue(store, "support-g1", audit_rate=0.3, seed=3, reviewers_required=2)
    results: dict[str, list] = {}
    with browser_util.start_app(data, state) as base:
        threads = []
        for k in range(REVIEWERS):
            name = f"rev{k}"
            results[name] = []
            threads.append(threading.Thread(target=worker, args=(name, base, dur, results[name])))
        for t in threads:
            t.start()
            time.sleep(1)
        for t in threads:
            t.join()
    print(f"label store: {'PostgreSQL' if pg_root else 'SQLite'}; {REVIEWERS} reviewers for {dur:.0f} s")
    for name, rs in results.items():
        waits = [r[2] for r in rs if isinstance(r[2], float)]
        slow = [r for r in rs if isinstance(r[2], float) and r[2] > 5]
        errors = [r for r in rs if isinstance(r[0], str)]
        print(f"{name}: {len(waits)} decisions, longest wait {max(waits, default=0):.2f} s, over 5 s: {slow}, errors: {errors}")
    by_case: dict[tuple, set] = {}
    for e in LabelStore(Store(data, state)).standing("support-g1"):
        if e["outcome"] == "decided":
            by_case.setdefault((e["item_id"], e["gen_round"], e["criterion"]), set()).add(e["reviewer"])
    counts = {k: sum(len(v) == k for v in by_case.values()) for k in (1, 2)}
    counts["3+"] = sum(len(v) >= 3 for v in by_case.values())
    print(f"cases decided: {len(by_case)}; by 1 / 2 / 3+ reviewers: {counts[1]} / {counts[2]} / {counts['3+']}")
    if pg_root:
        import pg_util

        pg_util.stop(pg_root)


if __name__ == "__main__":
    main()
