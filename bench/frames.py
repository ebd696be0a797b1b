"""Where one page's render goes, frame by frame: a fresh server over ``--data`` (a copy of
``--state-from``), headless Chromium, the app's shell first (as bench/pages.py), then the page cold
and warm (``--warm`` times). For each render: when the WebSocket was made and opened, how many
frames the server sent and when the first and the last came (ms from the navigation), the gaps
between frames over 40 ms (the server computing), and the CPU seconds the server and every
Chromium process used meanwhile (the two share this machine's cores). A diagnostic, not a
benchmark of the bars: it asserts nothing.

    .venv/bin/python bench/frames.py agreement --data /tmp/rq-bench/data-1000000 --state-from S [--warm 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import browser_util  # noqa: E402

import pages as P  # noqa: E402

HOOK = """(() => {
  window.__ws = {any: 0, log: []};
  const Orig = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Orig(...args);
    window.__ws.log.push(['new', performance.now()]);
    ws.addEventListener('open', () => window.__ws.log.push(['open', performance.now()]));
    ws.addEventListener('message', () => {
      window.__ws.any = performance.now();
      window.__ws.log.push(['msg', performance.now()]);
    });
    return ws;
  };
  window.WebSocket.prototype = Orig.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();"""


def chromium_cpu() -> float:
    """User + system CPU seconds of every process named chrom* (Chromium's browser, renderer and
    helpers)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if "chrom" not in Path(f"/proc/{pid}/comm").read_text():
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            continue
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page", choices=sorted(P.PAGES))
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--state-from", type=Path, default=None)
    ap.add_argument("--warm", type=int, default=2)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="evalcore-frames-"))
    state = tmp / "state"
    if a.state_from:
        shutil.copytree(a.state_from, state)
    else:
        state.mkdir()
    root = ROOT
    if a.page == "floor":
        root = tmp / "floor-app"
        root.mkdir()
        (root / "app.py").write_text(P.FLOOR_APP)
    try:
        with browser_util.serve(root, a.data, state, tmp / "streamlit.log", timeout=120) as (base, proc):
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=P.CHROMIUM, args=P.CHROMIUM_ARGS)
                page = browser.new_context(viewport=P.VIEWPORT).new_page()
                page.add_init_script(HOOK)
                page.goto(base + (P.PAGES[a.page] if a.page == "floor" else P.SHELL))
                page.wait_for_function(f"() => document.querySelector('h1') !== null && {P.JS_IDLE}",
                                       timeout=120_000, polling=25)
                P.idle(proc.pid, 120)
                for which in ["cold"] + ["warm"] * a.warm:
                    c0, s0 = chromium_cpu(), P.cpu_s(proc.pid)
                    main_s, done_s = P.render(page, base + P.PAGES[a.page], 120, proc.pid)
                    c1, s1 = chromium_cpu(), P.cpu_s(proc.pid)
                    log = page.evaluate("() => window.__ws.log")
                    msgs = [t for kind, t in log if kind == "msg"]
                    made = next((round(t) for kind, t in log if kind == "new"), None)
                    opened = next((round(t) for kind, t in log if kind == "open"), None)
                    gaps = [(round(msgs[i]), round(msgs[i] - msgs[i - 1])) for i in range(1, len(msgs))
                            if msgs[i] - msgs[i - 1] > 40]
                    print(f"{which}: render {main_s:.3f} s (whole run {done_s:.3f}); socket made {made} ms, open "
                          f"{opened} ms; {len(msgs)} frames, first {round(msgs[0]) if msgs else None} ms, last "
                          f"{round(msgs[-1]) if msgs else None} ms; gaps over 40 ms (ending at ms, length): {gaps}; "
                          f"CPU s meanwhile: server {s1 - s0:.2f}, Chromium {c1 - c0:.2f}")
                browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
