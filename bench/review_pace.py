"""Review at an annotation tool's pace: four reviewers in Chromium at once on one server, working
the review card (pages/_card.py) for DUR seconds, two reviewers per case.

    .venv/bin/python bench/review_pace.py [DUR]                     # the bundled SIMULATED demo, SQLite
    PG=1 .venv/bin/python bench/review_pace.py [DUR]                # the label store on a throwaway PostgreSQL
    DATA=/tmp/rq-bench/data-1000000 STATE=/tmp/rq-bench/state-1000000 GEN=<gen> .venv/bin/python bench/review_pace.py

Each reviewer (a headless Chromium through Playwright, one thread each) types a name, turns the
card on and presses ``1`` (the first choice) on every case, with THINK seconds between (a person
reads; default 0.4 s). Measured in the page itself: from the key's keydown to the next case
drawn (the card's ``data-case`` set to a new case, then one animation frame: it is on screen).
Also: the app server's CPU seconds per decision (from /proc), every acknowledged decision in the
store once, and how many reviewers each decided case got (two are asked). With DATA, the state
directory is copied first and a queue is built there when it has none (its build time is not
part of the figures). A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import browser_util  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from evalcore import LabelStore, Store  # noqa: E402
from evalcore import review as R  # noqa: E402

REVIEWERS = 4
THINK = float(os.environ.get("THINK", "0.4"))
TAG = f"pace{int(time.time()) % 100000}-"  # this run's reviewer names (a reused state holds earlier runs')
CARD = '[data-testid="evalcore-card"]'
# installed before the page's scripts: the key's time is taken before the card's own handler runs
PROBE = (
    """
window.__pace = [];
window.addEventListener('keydown', (e) => {
  const c = document.querySelector('%s');
  if (!c || e.key !== '1') return;
  const from = c.dataset.case, t0 = performance.now();
  const done = () => requestAnimationFrame(() => window.__pace.push(performance.now() - t0));
  if (c.dataset.case && c.dataset.case !== from) return;  // never: the card acts after this listener
  const mo = new MutationObserver(() => {
    if (c.dataset.case && c.dataset.case !== from) { mo.disconnect(); done(); }
  });
  mo.observe(c, {attributes: true, attributeFilter: ['data-case']});
}, true);
"""
    % CARD
)


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children that have ended."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _server_pid(port: str) -> int:
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"streamlit" in c for c in cmd) and port.encode() in b" ".join(cmd):
                return int(p.name)
    raise SystemExit(f"no streamlit server on port {port}")


def worker(name: str, base: str, gen: str, dur: float, out: dict, ready: threading.Barrier) -> None:
    with sync_playwright() as p:
        b = browser_util.launch(p)
        page = b.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.add_init_script(PROBE)
        page.goto(f"{base}/review?gen={gen}&card=1")
        browser_util.type_name(page, name)
        shows = f"() => (document.querySelector('{CARD}') || {{dataset: {{}}}}).dataset.state === 'case'"
        try:
            page.wait_for_function(shows, timeout=600_000)
        except Exception as e:  # reported, not raised: the others go on
            out["error"] = str(e)[:200]
            b.close()
            ready.abort()
            return
        ready.wait()  # every reviewer has a case: the server's CPU from here on is the keys'
        end = time.monotonic() + dur
        presses = 0
        while time.monotonic() < end:
            try:
                page.wait_for_function(shows, timeout=120_000)
            except Exception:
                out["error"] = "no case within 120 s"
                break
            page.keyboard.press("1")
            presses += 1
            time.sleep(THINK)
        page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.pending === '0'", timeout=300_000)
        out["waits"] = page.evaluate("() => window.__pace")
        out["presses"] = presses
        b.close()


FLOOR_PAGE = """<div id=c data-testid=evalcore-card data-case=0><p id=t>case 0</p></div><script>
const c = document.getElementById('c');
window.addEventListener('keydown', (e) => {
  if (e.key !== '1') return;
  const n = Number(c.dataset.case) + 1;
  document.getElementById('t').textContent = 'case ' + n;
  c.dataset.case = String(n);
});
</script>"""


def floor(presses: int = 200) -> list[float]:
    """The floor in the same run: the same Chromium, a bare page whose only work on the key is to
    put the next case's number on screen, measured by the same probe (no server, no Streamlit)."""
    with sync_playwright() as p:
        b = browser_util.launch(p)
        page = b.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.set_content(FLOOR_PAGE)
        page.add_script_tag(content=PROBE)
        for _ in range(presses):
            page.keyboard.press("1")
            time.sleep(THINK / 4)
        waits = page.evaluate("() => window.__pace")
        b.close()
    return waits


def _line(what: str, waits_ms: list[float]) -> str:
    w = sorted(waits_ms)
    p95 = w[min(len(w) - 1, int(0.95 * len(w)))]
    return f"{what}: n {len(w)}, median {statistics.median(w):.1f} ms, p95 {p95:.1f} ms, max {w[-1]:.1f} ms"


def main() -> None:
    dur = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    root = Path("/tmp/evalcore-bench/review-pace")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if os.environ.get("DATA"):
        data, gen = Path(os.environ["DATA"]), os.environ["GEN"]
        state = root / "state"
        if os.environ.get("STATE"):
            shutil.copytree(os.environ["STATE"], state)
    else:
        data, state, gen = root / "data", root / "state", "support-g1"
        shutil.copytree(ROOT / "data" / "demo", data)
    pg_root = None
    if os.environ.get("PG") == "1":
        import pg_util

        url, _ = pg_util.new_schema(pg_util.server_url())
        os.environ["EVALCORE_DB"] = url
        pg_root = os.environ.get(pg_util.ROOT_ENV)
    store = Store(data, state)
    if not R.queues(store, gen):
        t = time.monotonic()
        R.build_queue(store, gen, audit_rate=0.3, seed=3, reviewers_required=2)
        print(f"queue built in {time.monotonic() - t:.1f} s (not part of the figures)")
    results: dict[str, dict] = {}
    with browser_util.start_app(data, state) as base:
        pid = _server_pid(base.rsplit(":", 1)[1])
        ready = threading.Barrier(REVIEWERS + 1)
        threads = []
        for k in range(REVIEWERS):
            results[f"{TAG}{k}"] = {}
            args = (f"{TAG}{k}", base, gen, dur, results[f"{TAG}{k}"], ready)
            threads.append(threading.Thread(target=worker, args=args))
        cpu_start = _cpu(pid)
        for t in threads:
            t.start()
            time.sleep(1)
        ready.wait()
        cpu0 = _cpu(pid)
        for t in threads:
            t.join()
        cpu = _cpu(pid) - cpu0
    waits = [w / 1000 for r in results.values() for w in r.get("waits", [])]
    decided = [e for e in LabelStore(Store(data, state)).history(gen) if e["reviewer"].startswith(TAG) and e["queue"]]
    print(
        f"{'PostgreSQL' if pg_root else 'SQLite'}; data {data}; {REVIEWERS} reviewers for {dur:.0f} s, think {THINK} s"
    )
    for name, r in results.items():
        print(f"{name}: {r.get('presses', 0)} presses, {len(r.get('waits', []))} cases drawn, error: {r.get('error')}")
    if waits:
        print(_line("key press to next case drawn", [w * 1000 for w in waits]))
    print(
        _line("floor, a bare page that only draws the next number on the key (same Chromium, after the run)", floor())
    )
    print(f"server CPU until every reviewer had a first case: {cpu0 - cpu_start:.1f} s")
    print(
        f"server CPU from then on: {cpu:.1f} s for {len(decided)} decisions = {cpu / max(1, len(decided)):.3f} CPU-s each"
    )
    keys = [(e["reviewer"], e["item_id"], e["gen_round"], e["criterion"]) for e in decided if e["outcome"] == "decided"]
    print(f"decisions in the store: {len(keys)}, distinct (reviewer, case): {len(set(keys))}")
    by_case: dict[tuple, set] = {}
    for who, *case in keys:
        by_case.setdefault(tuple(case), set()).add(who)
    counts = [sum(len(v) == k for v in by_case.values()) for k in (1, 2, 3)]
    print(f"cases decided: {len(by_case)}; by 1 / 2 / 3+ reviewers: {counts[0]} / {counts[1]} / {counts[2]}")
    if pg_root:
        import pg_util

        pg_util.stop(pg_root)


if __name__ == "__main__":
    main()
