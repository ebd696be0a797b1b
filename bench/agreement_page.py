#!/usr/bin/env python3
"""The Agreement page (pages/6_agreement.py) on the bundled demo: first render and warm rerender.
A benchmark, not a timed test: it prints a table and writes JSON, and asserts nothing about speed.

    python bench/agreement_page.py                   # browser and AppTest, 3 runs each
    python bench/agreement_page.py --only browser    # real `streamlit run` + headless Chromium
    python bench/agreement_page.py --only apptest    # streamlit.testing AppTest, in process
    python bench/agreement_page.py --root /tmp/old-checkout --label before   # another checkout's app

* ``browser``: a fresh ``streamlit run app.py`` server on the bundled SIMULATED demo (data/demo)
  with a fresh, empty state directory each run; headless Chromium (Playwright, /usr/bin/chromium,
  1400x900). First the app's home page is loaded (the server's imports and the app shell; timed as
  "shell", not part of the page's figure). Then, timed from ``page.goto`` until the script run is
  idle (status widget not "Running", nothing stale) and the "Scores and reliability" heading is
  drawn:

  - **first render**: ``/agreement?gen=support-g1``, the page's first run on this server (nothing
    cached: the report card, the stored detection of the fresh state directory, correlate and
    reliability are computed);
  - **warm reload**: the same URL again (a new browser session; the server's caches are warm);
  - **warm rerun**: a rerun of the same session (Streamlit's "R" key), as a widget click makes;
    timed in the page from the keydown to the last WebSocket message of that run (a cached rerun
    is too quick for the status widget to show it).

  The server's CPU time (utime + stime) over the first render is reported too.
* ``apptest``: ``AppTest.from_file(app.py)`` on the demo in this process (fresh state directory),
  ``switch_page("pages/6_agreement.py")`` timed (first render), then ``run()`` again (warm rerun).
  No browser: the deltas are built but nothing is drawn.

``--root DIR`` runs the app (and evalcore: the app's directory comes first on ``sys.path``) of
another checkout, e.g. a copy of the code before a change, on this checkout's demo.

ALL DATA IS SIMULATED. Results go to ``--out`` (default /tmp/evalcore-bench/agreement-page/).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import browser_util  # noqa: E402  (the browser tests' app start-up)

ROOT = Path(__file__).resolve().parent.parent  # the app that is measured (--root)
VENV_BIN = Path(sys.executable).parent
DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"
GEN = "support-g1"
OUT = Path(os.environ.get("EVALCORE_BENCH_DIR", "/tmp/evalcore-bench")) / "agreement-page"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 900}
CLK = os.sysconf("SC_CLK_TCK")
DONE = "Scores and reliability"  # the page's last section: drawn when the run got to the end
JS_IDLE = (
    "(() => { const s = document.querySelector('[data-testid=\"stStatusWidget\"]');"
    " return (!s || !/Running|Connecting/i.test(s.innerText))"
    " && !document.querySelector('[data-stale=\"true\"]'); })()"
)
JS_DONE = (
    "(() => [...document.querySelectorAll('h3')].some(h => h.innerText.trim().startsWith(%s)"
    " && !h.closest('[data-stale=\"true\"]')))()" % json.dumps(DONE)
)
JS_ERRORS = (
    '() => [...document.querySelectorAll(\'[data-testid="stException"], '
    '[data-testid="stAlertContentError"]\')].map(e => e.innerText.slice(0, 300))'
)
# when the app's WebSocket last received a message (any), and after window.__ws.t0 is set, how many
# came (n) and when the last one did (last)
JS_WS_HOOK = """(() => {
  window.__ws = {t0: null, n: 0, last: 0, any: 0};
  const Orig = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Orig(...args);
    ws.addEventListener("message", () => {
      window.__ws.any = performance.now();
      if (window.__ws.t0 !== null) { window.__ws.n += 1; window.__ws.last = performance.now(); }
    });
    return ws;
  };
  window.WebSocket.prototype = Orig.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();"""
JS_HEIGHT = "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? document.body.scrollHeight"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    mem = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )

    def version(mod: str) -> str:
        try:
            from importlib.metadata import version as v

            return v(mod)
        except Exception:  # noqa: BLE001
            return "?"

    chromium = "?"
    if Path(CHROMIUM).exists():
        chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "mem_gb": round(int(mem.split()[1]) / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "streamlit": version("streamlit"),
        "playwright": version("playwright"),
        "duckdb": version("duckdb"),
        "chromium": chromium,
    }


def cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK


def start_app(data: Path, state: Path, log: Path, timeout: float = 60.0):
    """``streamlit run app.py`` of ROOT on 127.0.0.1 (tests/browser_util.serve); yields (URL, process)."""
    return browser_util.serve(ROOT, data, state, log, timeout=timeout)


def rerun(page: Any, timeout: float, quiet_ms: float = 1000) -> float:
    """Press Streamlit's "R" (rerun) and time, in the page, from the keydown to the last message
    the server sends for that run (its "script finished"), once the socket has been quiet for
    ``quiet_ms`` and the page is idle with the page's last section drawn. A cached rerun is too
    quick to be seen through the status widget, so the socket's messages are what is timed."""
    page.mouse.click(700, 5)  # the focus on the page, not in a widget
    page.wait_for_function(f"() => performance.now() - window.__ws.any > {quiet_ms}", timeout=timeout, polling=50)
    page.evaluate(
        "() => { window.__ws.t0 = null; window.__ws.n = 0; document.addEventListener('keydown',"
        " () => { if (window.__ws.t0 === null) window.__ws.t0 = performance.now(); },"
        " {capture: true, once: true}); }"
    )
    page.keyboard.press("r")
    page.wait_for_function(
        f"() => window.__ws.t0 !== null && window.__ws.n > 0 && "
        f"performance.now() - window.__ws.last > {quiet_ms} && {JS_DONE} && {JS_IDLE}",
        timeout=timeout,
        polling=50,
    )
    return round(page.evaluate("() => (window.__ws.last - window.__ws.t0) / 1000"), 3)


def wait_done(page: Any, timeout: float) -> None:
    try:
        page.wait_for_function(f"() => {JS_DONE} && {JS_IDLE}", timeout=timeout, polling=20)
    except Exception:
        hs = page.evaluate("() => [...document.querySelectorAll('h1, h3')].map(h => h.innerText)")
        print("not done:", page.url, "idle", page.evaluate(f"() => {JS_IDLE}"), "headings", hs, file=sys.stderr)
        raise


def browser_once(tmp: Path, k: int, timeout: float) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    state = tmp / f"state-{k}"
    state.mkdir()
    out: dict[str, Any] = {"run": k, "load_before": load()}
    with start_app(DEMO, state, tmp / f"streamlit-{k}.log") as (base, proc), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.add_init_script(JS_WS_HOOK)
            t = time.perf_counter()
            page.goto(base + "/")
            page.wait_for_function(
                f"() => document.querySelector('h1') !== null && {JS_IDLE}", timeout=timeout, polling=20
            )
            out["shell_s"] = round(time.perf_counter() - t, 3)
            url = f"{base}/agreement?gen={GEN}"
            c0 = cpu_s(proc.pid)
            t = time.perf_counter()
            page.goto(url)
            wait_done(page, timeout)
            out["first_s"] = round(time.perf_counter() - t, 3)
            c1 = cpu_s(proc.pid)
            out["first_cpu_s"] = round(c1 - c0, 2) if c0 is not None and c1 is not None else None
            out["height_px"] = page.evaluate(JS_HEIGHT)
            t = time.perf_counter()
            page.goto(url)
            wait_done(page, timeout)
            out["reload_s"] = round(time.perf_counter() - t, 3)
            out["rerun_s"] = rerun(page, timeout)
            out["errors"] = page.evaluate(JS_ERRORS)
        finally:
            browser.close()
    out["load_after"] = load()
    return out


def apptest_once(tmp: Path, k: int) -> dict[str, Any]:
    """In a child process (a fresh interpreter: nothing imported, nothing cached)."""
    code = f"""
import json, os, time
os.environ["EVALCORE_DATA"] = {str(DEMO)!r}
os.environ["EVALCORE_STATE"] = {str(tmp / f"apptest-state-{k}")!r}
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=300)
at.query_params["gen"] = {GEN!r}
t = time.perf_counter(); at.run(); shell = time.perf_counter() - t
t = time.perf_counter(); at.switch_page("pages/6_agreement.py").run(); first = time.perf_counter() - t
errors = [str(e.value)[:300] for e in at.exception] + [str(e.value)[:300] for e in at.error]
t = time.perf_counter(); at.run(); warm = time.perf_counter() - t
print(json.dumps({{"shell_s": round(shell, 3), "first_s": round(first, 3), "rerun_s": round(warm, 3),
                  "tables": len(at.table), "dataframes": len(at.dataframe), "expanders": len(at.expander),
                  "errors": errors}}))
"""
    before = load()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return {"run": k, "load_before": before, **json.loads(r.stdout.strip().splitlines()[-1]), "load_after": load()}


def med(rows: list[dict[str, Any]], key: str) -> str:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return f"{statistics.median(vals):.2f}" if vals else "-"


def report(res: dict[str, Any]) -> str:
    lines = []
    if res.get("browser"):
        lines += [
            "| run | shell s | first render s | first render CPU s | warm reload s | warm rerun s | page height px"
            " | load 1-min before / after |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for r in res["browser"]:
            lines.append(
                f"| {r['run']} | {r['shell_s']:.2f} | {r['first_s']:.2f} | {r['first_cpu_s']} | "
                f"{r['reload_s']:.2f} | {r['rerun_s']:.2f} | {r['height_px']} | "
                f"{r['load_before'][0]} / {r['load_after'][0]} |"
            )
        b = res["browser"]
        lines.append(
            f"| median | {med(b, 'shell_s')} | {med(b, 'first_s')} | {med(b, 'first_cpu_s')} | "
            f"{med(b, 'reload_s')} | {med(b, 'rerun_s')} | | |"
        )
        lines.append("")
    if res.get("apptest"):
        lines += [
            "| AppTest run | app shell s | first render s | warm rerun s | tables / dataframes / expanders |",
            "|--:|--:|--:|--:|--:|",
        ]
        for r in res["apptest"]:
            lines.append(
                f"| {r['run']} | {r['shell_s']:.2f} | {r['first_s']:.2f} | {r['rerun_s']:.2f} | "
                f"{r['tables']} / {r['dataframes']} / {r['expanders']} |"
            )
        a = res["apptest"]
        lines.append(f"| median | {med(a, 'shell_s')} | {med(a, 'first_s')} | {med(a, 'rerun_s')} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="browser,apptest", help="browser, apptest or both (the default)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each, a fresh server / process each")
    ap.add_argument("--timeout", type=float, default=120_000, help="ms to wait for a render")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--label", default="", help="a name for this measurement (e.g. before / after)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app.py is run")
    args = ap.parse_args(argv)
    ROOT = args.root.resolve()
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    if not only <= {"browser", "apptest"}:
        ap.error(f"--only: browser and/or apptest, not {args.only}")
    args.out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "label": args.label,
        "root": str(ROOT),
        "date": datetime.now(UTC).isoformat(),
        "machine": machine(),
    }
    print(f"{res['date']}  {res['machine']}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="agreement-page-"))
    try:
        if "browser" in only:
            res["browser"] = [browser_once(tmp, k, args.timeout) for k in range(1, args.runs + 1)]
        if "apptest" in only:
            res["apptest"] = [apptest_once(tmp, k) for k in range(1, args.runs + 1)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    name = f"results-{args.label}.json" if args.label else "results.json"
    (args.out / name).write_text(json.dumps(res, indent=1))
    print(report(res), flush=True)
    errors = [e for part in ("browser", "apptest") for r in res.get(part, []) for e in r.get("errors", [])]
    if errors:
        print("errors on the page:", *errors, sep="\n  ", flush=True)
    print(f"\nresults in {args.out / name}", flush=True)


if __name__ == "__main__":
    main()
