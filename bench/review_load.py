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

import sys, time, threading, shutil, json
from pathlib import Path
sys.path.insert(0, "/work/main/tests")
import browser_util
from test_browser_team import wait_case, choices, decide
from playwright.sync_api import sync_playwright
from evalcore import Store, review as R

DUR = float(sys.argv[1]) if len(sys.argv) > 1 else 90
root = Path("/tmp/load/w"); shutil.rmtree(root, ignore_errors=True); root.mkdir(parents=True)
data = root / "data"; shutil.copytree("/work/main/data/demo", data)
state = root / "state"
import os
if os.environ.get("PG") == "1":
    import pg_util
    url, _ = pg_util.new_schema(pg_util.server_url())
    os.environ["EVALCORE_DB"] = url
    print("postgresql", url[:60])
store = Store(data, state)
q = R.build_queue(store, "support-g1", audit_rate=0.3, seed=3, reviewers_required=2)
print("queue", q.get("queue_id"), q.get("cases") or {k: v for k, v in q.items() if isinstance(v, int)})
results = {}
def worker(name, base):
    out = results.setdefault(name, [])
    with sync_playwright() as p:
        b = browser_util.launch(p)
        ctx = b.new_context(viewport={"width": 1400, "height": 900}); page = ctx.new_page()
        page.goto(f"{base}/review?gen=support-g1")
        browser_util.type_name(page, name)
        try:
            cur = wait_case(page)
        except Exception as e:
            out.append(("first-case-failed", str(e)[:200])); return
        t_end = time.monotonic() + DUR
        while time.monotonic() < t_end:
            t0 = time.monotonic()
            try:
                decide(page, choices(page)[0])
                t1 = time.monotonic()
                nxt = wait_case(page, not_this=cur, timeout=120_000)
            except Exception as e:
                out.append(("error", round(time.monotonic() - t0, 2), str(e)[:160])); break
            out.append((cur, round(t1 - t0, 2), round(time.monotonic() - t1, 2)))
            cur = nxt
        b.close()
with browser_util.start_app(data, state) as base:
    ths = [threading.Thread(target=worker, args=(f"rev{k}", base)) for k in range(4)]
    for t in ths: t.start(); time.sleep(1)
    for t in ths: t.join()
for n, rs in results.items():
    waits = [r[2] for r in rs if isinstance(r[2], float)]
    print(n, len(rs), "max next", max(waits) if waits else None, "over 5 s:", [r for r in rs if isinstance(r[2], float) and r[2] > 5], [r for r in rs if r[0] in ("error", "first-case-failed")])
# reviewers per case
from evalcore import LabelStore
st = [e for e in LabelStore(Store(data, state)).standing("support-g1") if e["outcome"] == "decided"]
by = {}
for e in st: by.setdefault((e["item_id"], e["gen_round"], e["criterion"]), set()).add(e["reviewer"])
print("cases decided", len(by), "reviewer counts", {k: sum(len(v) == k for v in by.values()) for k in range(1, 6)})

if os.environ.get("PG") == "1":
    pg_util.stop(os.environ.get(pg_util.ROOT_ENV))
