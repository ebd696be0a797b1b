"""The front end's delivery to fresh browsers: one app server alone, and behind docs/deploy/nginx.conf.

    .venv/bin/python bench/front_end.py [--data data] [--browsers 1,20] [--rounds 3] [--max-wait 120]
                                        [--out /tmp/evalcore-bench/front-end]

A fresh browser's first visit fetches Streamlit's front end: JavaScript, CSS and fonts under
``/static/`` (the Review page's main bundle alone is 480 KB). Streamlit sends these from its event
loop, uncompressed, and team_load.py's twenty users on one server found that loop busy sending
them while reviewers waited for a card (docs/BENCHMARKS.md). The nginx template now keeps one copy
of each file and sends it gzip-compressed (tests/test_deploy_proxy.py pins both).

What a fresh browser fetches is recorded once: headless Chromium opens the team's pages (Review,
Runs, Attribution, Compare, Agreement) on the app server directly, and every ``/static/`` URL it
asked for is kept. Then, for each way in (the app server directly; through nginx with its cache
empty; through nginx with the cache filled by the previous round), N simulated fresh browsers at
once each fetch that list over one keep-alive connection, accepting gzip and br as Chromium does
(Python threads: no Chromium, so the machine's CPU goes to the servers being measured). Recorded:
the wall time until every browser has every file, the app server's CPU seconds (user + system,
from /proc) during it, nginx's (master and workers), and the bytes the browsers received. Median
of ``--rounds``; before each, the 1-minute load average is waited under 1.5 (at most ``--max-wait`` s) and
recorded. A benchmark, not a test: it asserts nothing. A markdown table on stdout, JSON in --out.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import browser_util  # noqa: E402
from agreement_page import cpu_s  # noqa: E402
from test_deploy_proxy import insecure_tls, start_nginx  # noqa: E402

from pages import wait_quiet  # noqa: E402

PAGES = ["/review", "/runs", "/attribution", "/compare", "/agreement"]
ACCEPT = {"Accept-Encoding": "gzip, deflate, br"}


def static_urls(base: str) -> list[str]:
    """The /static/ paths a fresh Chromium fetches opening PAGES on ``base``, in order."""
    from playwright.sync_api import sync_playwright

    seen: list[str] = []
    with sync_playwright() as pw:
        browser = browser_util.launch(pw)
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        page = ctx.new_page()
        page.on("request", lambda r: seen.append(r.url) if "/static/" in r.url else None)
        for path in PAGES:
            page.goto(base + path)
            browser_util.wait_idle(page, timeout=120_000)
        browser.close()
    paths = [u.split("://", 1)[1].split("/", 1)[1] for u in seen]
    return list(dict.fromkeys("/" + p for p in paths))


def one_browser(host: str, port: int, tls: bool, paths: list[str], got: list[int], errors: list[str]) -> None:
    """Fetch every path over one keep-alive connection; the bytes received go to ``got``."""
    if tls:
        con: http.client.HTTPConnection = http.client.HTTPSConnection(host, port, timeout=600, context=insecure_tls())
    else:
        con = http.client.HTTPConnection(host, port, timeout=600)
    total = 0
    try:
        for p in paths:
            con.request("GET", p, headers=ACCEPT)
            r = con.getresponse()
            body = r.read()
            if r.status != 200:
                errors.append(f"{r.status} {p}")
            total += len(body)
    finally:
        con.close()
    got.append(total)


def deliver(url: str, paths: list[str], n: int, groups: list[list[int]]) -> dict[str, Any]:
    """``n`` browsers at once; wall seconds, CPU seconds of each group of processes, bytes per browser."""
    tls = url.startswith("https://")
    host, port = url.split("://", 1)[1].split(":")
    got: list[int] = []
    errors: list[str] = []
    threads = [threading.Thread(target=one_browser, args=(host, int(port), tls, paths, got, errors)) for _ in range(n)]
    cpu = lambda: [sum(cpu_s(p) or 0.0 for p in g) for g in groups]  # noqa: E731
    c0 = cpu()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    c1 = cpu()
    return {"wall_s": round(wall, 3), "cpu_s": [round(b - a, 3) for a, b in zip(c0, c1)],
            "bytes_per_browser": statistics.median(got) if got else 0, "errors": errors[:5]}  # fmt: skip


def nginx_pids(d: Path) -> list[int]:
    master = int((d / "nginx.pid").read_text().strip())
    kids = [int(p) for p in Path(f"/proc/{master}/task/{master}/children").read_text().split()]
    return [master, *kids]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("--browsers", default="1,20")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-wait", type=float, default=120, help="seconds to wait for a quiet machine")
    ap.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench/front-end"))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    state = a.out / "state"
    with browser_util.serve(ROOT, a.data, state, a.out / "streamlit.log", timeout=600) as (base, proc):
        paths = static_urls(base)
        print(f"a fresh browser on {len(PAGES)} pages fetched {len(paths)} files under /static/")
        for n in [int(x) for x in a.browsers.split(",")]:
            for rnd in range(a.rounds):
                load = wait_quiet(a.max_wait)
                rows.append({"way": "app server", "browsers": n, "round": rnd, "load": load,
                             **deliver(base, paths, n, [[proc.pid]])})  # fmt: skip
                port = browser_util.free_port()
                with start_nginx([base.removeprefix("http://")], port) as d:  # a new nginx: its cache empty
                    url = f"https://127.0.0.1:{port}"
                    for way in ("nginx, cache empty", "nginx, cache filled"):
                        load = wait_quiet(a.max_wait)
                        rows.append({"way": way, "browsers": n, "round": rnd, "load": load,
                                     **deliver(url, paths, n, [[proc.pid], nginx_pids(d)])})  # fmt: skip
    (a.out / "front_end.json").write_text(json.dumps({"files": paths, "rows": rows}, indent=1))
    print(report(rows))



def report(rows: list[dict[str, Any]]) -> str:
    lines = ["| browsers at once | way | wall s | app server CPU s | nginx CPU s | bytes a browser | load before |",
             "|---:|---|---:|---:|---:|---:|---|"]  # fmt: skip
    keys = dict.fromkeys((r["browsers"], r["way"]) for r in rows)
    for n, way in keys:
        rs = [r for r in rows if (r["browsers"], r["way"]) == (n, way)]
        med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
        nginx = "" if way == "app server" else f"{med(lambda r: r['cpu_s'][1]):.3f}"
        errs = sum(len(r["errors"]) for r in rs)
        lines.append(f"| {n} | {way}{f' ({errs} errors)' if errs else ''} | {med(lambda r: r['wall_s']):.3f} | "
                     f"{med(lambda r: r['cpu_s'][0]):.3f} | {nginx} | {med(lambda r: r['bytes_per_browser']):,.0f} | "
                     f"{', '.join(str(r['load']) for r in rs)} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    main()
