"""Every page's render in a real browser at scale, cold (a fresh server) and warm: issue 16's bar.

    .venv/bin/python bench/pages.py --data /tmp/rq-bench/data-1000000 [--runs 3] [--only cost,runs]
                                    [--derived 1|0] [--state-from DIR] [--out /tmp/evalcore-bench/pages]
                                    [--max-wait 120]

For each page and each run: a fresh ``streamlit run app.py`` (tests/browser_util.serve, 127.0.0.1,
headless) over ``--data`` with an empty state directory, or with a fresh copy of ``--state-from``
(a state directory as ``evalcore --state DIR index`` or an import leaves it: the review detection
stored, perhaps a review queue built), so nothing is cached in the server; in
headless Chromium (Playwright, 1400x900) the app's shell is loaded first on the light Ledger page
(the server's first script run: Python imports, not counted, as in bench/review_page.py), then:

* **settle**: the server's CPU idle (the seconds it took are ``settle_s``);
* **cold**: ``goto`` the page's URL (in the same browser session) until its main element (a table,
  dataframe or chart) is drawn, nothing is stale and the app's WebSocket has been quiet for 0.5 s;
  the time is from navigation to the last message the server sent by then; *whole run*: the same to
  the last message of the script run, once the server's CPU is idle too (a page computing further
  figures below its main table sends nothing meanwhile, and Streamlit's status widget did not show
  it running: the first version of this script stopped there, so its agreement figure was the
  report card's table, not the page);
* **warm**: the same URL loaded again (a new Streamlit session; the server's caches warm, the
  browser's cache of the app's static files too), timed the same way.

``floor`` is not an evalcore page: a Streamlit app of a title and a three-row table
(``FLOOR_APP``), served and timed the same way, whose figures are what any Streamlit page takes on
this machine.

Memory is the server's: VmHWM (peak resident set) after the warm render, and its CPU (user +
system) during the cold render. ``--derived 0`` runs the server with ``EVALCORE_DERIVED=0`` (every
figure from the full data) for the before/after. The data must be the scaled SIMULATED world of
``evalcore demo --items N`` (runs bench-single, bench-split; generation bench-g1; suite bench).
Before each measurement the script waits (at most ``--max-wait`` s) for the 1-minute load average
to fall under 1.5, and records the load it saw. JSON per run in ``--out``; a markdown table on
stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import browser_util  # noqa: E402
from agreement_page import CHROMIUM, CHROMIUM_ARGS, JS_ERRORS, JS_IDLE, JS_WS_HOOK, cpu_s, load, machine  # noqa: E402

VIEWPORT = {"width": 1400, "height": 900}
SHELL = "/ledger"
PAGES = {  # name -> URL path and query
    "runs": "/",
    "attribution": "/attribution?run=bench-single",
    "association": "/association?runs=bench-single,bench-split",
    "harness": "/harness?a=bench-single&b=bench-split",
    "compare": "/compare?a=bench-single&b=bench-split",
    "cost": "/cost?run=bench-split",
    "agreement": "/agreement?gen=bench-g1",
    "labels": "/labels",
    "suite": "/suites?suite=bench",
    "ledger": "/ledger",
    "pairwise-grading": "/pairwise_grading",
    "pairwise-results": "/pairwise_results",
    "floor": "/",  # not evalcore: FLOOR_APP, Streamlit's own floor on this machine
}
#: a Streamlit app of a title and a three-row table, served and timed exactly as the pages are:
#: the least a page of any Streamlit app takes here (its warm render is mostly the browser's
#: new session: the app shell, the WebSocket, the script run and the first deltas)
FLOOR_APP = """import streamlit as st

st.title("floor")
st.dataframe({"a": [1, 2, 3], "b": ["x", "y", "z"]})
"""
MAIN = (
    "[data-testid=\"stDataFrame\"], [data-testid=\"stTable\"], [data-testid=\"stVegaLiteChart\"], "
    "[data-testid=\"stArrowVegaLiteChart\"], [data-testid=\"stMarkdownContainer\"] table"
)
#: pages whose main element is not a table or chart on the scaled world: the pairwise pages' notice
#: that the world holds no pairwise session (the scaled demo makes none; they read no verdicts). The
#: Review queue asks a name first: bench/review_page.py times it (keys, first render) on this world.
MAIN_OF = {
    "ledger": MAIN + ', [data-testid="stAlert"]',  # its table, or the notice that nothing is recorded yet
    "pairwise-grading": '[data-testid="stAlert"]',
    "pairwise-results": '[data-testid="stAlert"]',
}


def js_main(selector: str) -> str:
    return f"(() => [...document.querySelectorAll({json.dumps(selector)})].some(e => !e.closest('[data-stale=\"true\"]')))()"


JS_MAIN = js_main(MAIN)
QUIET_MS = 500


def vm_hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def wait_quiet(max_wait: float) -> float:
    t = time.time()
    while os.getloadavg()[0] > 1.5 and time.time() - t < max_wait:
        time.sleep(2)
    return round(os.getloadavg()[0], 2)


def render(page: Any, url: str, timeout: float, pid: int, main: str = JS_MAIN) -> tuple[float, float]:
    """goto ``url``; return (a) the time from the navigation to the last WebSocket message once the
    page's main element is drawn (nothing stale, the socket quiet for QUIET_MS): what the issue
    calls the page's render, to its main table or chart; and (b) the time to the last message of
    the whole script run, once the server is idle too (its CPU time grew by less than 0.05 s over
    0.5 s): a page that goes on computing below its main table is not done until then. The hook's
    ``any`` is the time of the document's last message since its navigation started."""
    page.goto(url)
    page.wait_for_function(
        f"() => window.__ws.any > 0 && performance.now() - window.__ws.any > {QUIET_MS} && {main} && {JS_IDLE}",
        timeout=timeout * 1000,
        polling=25,
    )
    main = round(page.evaluate("() => window.__ws.any") / 1000, 3)
    idle(pid, timeout)
    return main, round(page.evaluate("() => window.__ws.any") / 1000, 3)


def idle(pid: int, timeout: float) -> float:
    """Wait until the server used under 0.05 CPU-s in half a second; the seconds waited."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        c0 = cpu_s(pid)
        time.sleep(0.5)
        c1 = cpu_s(pid)
        if c0 is None or c1 is None or c1 - c0 < 0.05:
            break
    return round(time.time() - t0, 2)


def measure(data: Path, name: str, k: int, tmp: Path, derived: str, timeout: float,
            state_from: Path | None = None, first_request: bool = False) -> dict[str, Any]:
    import shutil

    from playwright.sync_api import sync_playwright

    state = tmp / f"state-{name}-{k}"
    if state_from is not None:
        shutil.copytree(state_from, state)
    else:
        state.mkdir()
    out: dict[str, Any] = {"page": name, "run": k, "derived": derived, "first_request": first_request,
                           "state_from": str(state_from) if state_from else None}
    env_before = os.environ.get("EVALCORE_DERIVED")
    os.environ["EVALCORE_DERIVED"] = derived
    try:
        root = ROOT
        if name == "floor":
            root = tmp / "floor-app"
            root.mkdir(exist_ok=True)
            (root / "app.py").write_text(FLOOR_APP)
        t0 = time.perf_counter()
        with browser_util.serve(root, data, state, tmp / f"streamlit-{name}-{k}.log", timeout=120) as (base, proc):
            # from the command to the server's health check answering: app.py's server imports what
            # the pages need before it answers (pages/_cache.preload), the floor's imports nothing
            out["start_s"] = round(time.perf_counter() - t0, 3)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    ctx = browser.new_context(viewport=VIEWPORT)
                    page = ctx.new_page()
                    page.add_init_script(JS_WS_HOOK)
                    if first_request:  # the page is the fresh server's first request, as a person meets it
                        out["shell_s"] = out["settle_s"] = None
                    else:
                        t = time.perf_counter()
                        page.goto(base + (PAGES[name] if name == "floor" else SHELL))
                        page.wait_for_function(f"() => document.querySelector('h1') !== null && {JS_IDLE}",
                                               timeout=timeout * 1000, polling=25)
                        out["shell_s"] = round(time.perf_counter() - t, 3)
                        # the server has started once its first page is drawn and its CPU is idle
                        out["settle_s"] = idle(proc.pid, timeout)
                    url = base + PAGES[name]
                    out["load_before"] = load()
                    c0 = cpu_s(proc.pid)
                    main = js_main(MAIN_OF[name]) if name in MAIN_OF else JS_MAIN
                    out["cold_s"], out["cold_done_s"] = render(page, url, timeout, proc.pid, main)
                    c1 = cpu_s(proc.pid)
                    out["cold_cpu_s"] = round(c1 - c0, 2) if c0 is not None and c1 is not None else None
                    out["rss_after_cold_mb"] = vm_hwm_mb(proc.pid)
                    out["errors"] = page.evaluate(JS_ERRORS)
                    out["warm_s"], out["warm_done_s"] = render(page, url, timeout, proc.pid, main)  # a new session
                    out["vm_hwm_mb"] = vm_hwm_mb(proc.pid)
                    out["errors"] += page.evaluate(JS_ERRORS)
                finally:
                    browser.close()
    finally:
        if env_before is None:
            os.environ.pop("EVALCORE_DERIVED", None)
        else:
            os.environ["EVALCORE_DERIVED"] = env_before
    out["load_after"] = load()
    return out


def report(rows: list[dict[str, Any]], info: dict[str, Any]) -> str:
    lines = [
        f"Data: {info['data']} ({info['verdict_rows']:,} verdict rows per run); EVALCORE_DERIVED={info['derived']}; "
        f"state: {'a copy of ' + info['state_from'] if info.get('state_from') else 'empty'}; "
        f"{info['runs']} fresh servers per page; {info['started']} - {info['finished']} UTC.",
        "",
        "| page | server start s | cold s (runs) | cold median | cold, whole run s | warm s (runs) | warm median "
        "| warm, whole run s | server CPU in cold render s | server peak RSS MB (VmHWM) | load 1-min before |",
        "|---|--:|---|--:|--:|---|--:|--:|--:|--:|--:|",
    ]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["page"], []).append(r)
    for name, rs in by.items():
        cold = [r["cold_s"] for r in rs]
        warm = [r["warm_s"] for r in rs]
        lines.append(
            f"| {name} | {statistics.median([r['start_s'] for r in rs]):.2f} | {' / '.join(f'{x:.2f}' for x in cold)} | {statistics.median(cold):.2f} | "
            f"{statistics.median([r['cold_done_s'] for r in rs]):.2f} | "
            f"{' / '.join(f'{x:.2f}' for x in warm)} | {statistics.median(warm):.2f} | "
            f"{statistics.median([r['warm_done_s'] for r in rs]):.2f} | "
            f"{statistics.median([r['cold_cpu_s'] or 0 for r in rs]):.2f} | "
            f"{max(r['vm_hwm_mb'] or 0 for r in rs):.0f} | "
            f"{' / '.join(str(r['load_before'][0]) for r in rs)} |"
        )
    errs = [(r["page"], e) for r in rows for e in r["errors"]]
    lines += ["", f"Errors on the pages: {errs if errs else 'none'}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--derived", default="1", choices=["0", "1"])
    ap.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench/pages"))
    ap.add_argument("--max-wait", type=float, default=120)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--state-from", type=Path, default=None)
    ap.add_argument("--first-request", action="store_true",
                    help="no shell page first: each page (and the floor) is its fresh server's first request")
    a = ap.parse_args(argv)
    names = [n for n in PAGES if not a.only or n in a.only.split(",")]
    a.out.mkdir(parents=True, exist_ok=True)
    import duckdb

    rows_per_run = duckdb.connect().sql(
        f"SELECT count(*) FROM read_parquet('{a.data}/runs/bench-single/verdicts.parquet')"
    ).fetchall()[0][0]
    info = {"data": str(a.data), "verdict_rows": rows_per_run, "derived": a.derived, "runs": a.runs,
            "first_request": a.first_request,
            "state_from": str(a.state_from) if a.state_from else None,
            "machine": machine(), "started": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    rows = []
    with tempfile.TemporaryDirectory(prefix="evalcore-pages-") as tmp:
        for k in range(a.runs):
            for name in names:
                wait_quiet(a.max_wait)
                r = measure(a.data, name, k, Path(tmp), a.derived, a.timeout, a.state_from, a.first_request)
                print(json.dumps(r), file=sys.stderr)
                rows.append(r)
                (a.out / f"{name}-{k}-derived{a.derived}.json").write_text(json.dumps(r, indent=1))
    info["finished"] = time.strftime("%H:%M", time.gmtime())
    (a.out / f"summary-derived{a.derived}.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    print(report(rows, info))


if __name__ == "__main__":
    main()
