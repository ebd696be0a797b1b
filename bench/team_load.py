"""A team at once (issue 42): N reviewers deciding on the review card and M engineers opening pages,
against one app server (or two behind nginx with sticky sessions), on PostgreSQL, for D seconds.

    .venv/bin/python bench/team_load.py --data /tmp/rq-bench/data-1000000 --state /tmp/rp18-state \\
        --gen bench-g1 [--reviewers 15] [--engineers 5] [--duration 300] [--servers 1|2|1,2] [--ramp] \\
        [--pg-url URL] [--out /tmp/evalcore-bench/team-load]

Each user is a headless Chromium (Playwright, one browser process and one thread per user, as
bench/review_pace.py runs its four). A **reviewer** types its own name on the Review page
(``/review?gen=GEN&card=1``) and presses ``1`` on every case, THINK seconds (0.4) after each case is
drawn; its keypress-to-next-case time is taken in the page by review_pace's probe (keydown to the
card's ``data-case`` naming the next case, plus one animation frame). An **engineer** loads Runs,
Attribution, Compare, Agreement and the Team page (the review overview: each reviewer's progress) in
a loop, each a new page load (a new Streamlit session); its render is the time from the navigation
to the last WebSocket message once the page's main table or chart is drawn, nothing is stale and the
socket was quiet for 0.5 s (bench/pages.py's measure, without its wait for an idle server, which a
loaded server never is). The clock of the D seconds starts when every reviewer has a first case
and every engineer has rendered a first page (the servers' first renders are not in the figures).

Recorded per run: decisions made, keypress p50 / p95, page render p50 / p95 (all pages and per
page), failed page loads, each server's peak resident memory (VmHWM from /proc), the machine's load
average before and after; and, read from PostgreSQL after every reviewer's card said nothing was
pending: **lost** (a case whose key the browser pressed, that the card took (it drew another case),
and whose sending the card acknowledged, with no ``decided`` edit of that reviewer in the store; a
press that left the case drawn sent nothing and is counted apart, as ignored), **doubled** (a reviewer's second ``decided`` edit
of one case) and **over-reviewed** (a case of the queue decided by more reviewers than the queue's
``reviewers_required``; earlier runs' reviewers count too, as the queue counts them).

PostgreSQL: ``--pg-url`` (a database to work in: a new schema is made in it), else a throwaway
cluster from Debian's binaries (tests/pg_util.py), stopped at the end. The state directory is copied
first; the queue (two reviewers per case, audit 0.3, seed 3) is built into PostgreSQL once per
invocation (not timed) and every run of the invocation works on it, each run's reviewers under new
names. ``--ramp``: N + M = 4, 8, 12, ... (a quarter engineers) until keypress p95 > 0.5 s or page
p95 > 2 s (or ``--max-users``): the breaking point. A markdown table on stdout, JSON per run in
``--out``. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import browser_util  # noqa: E402
from agreement_page import JS_IDLE, JS_WS_HOOK  # noqa: E402
from review_pace import CARD, PROBE  # noqa: E402

from pages import FLOOR_APP, MAIN, QUIET_MS, js_main, vm_hwm_mb  # noqa: E402

THINK = 0.4
AIM_KEY_P95, AIM_PAGE_P95 = 0.5, 2.0  # the aims, seconds
VIEWPORT = {"width": 1400, "height": 900}
# the case each press of 1 decided: read as the key goes down (before the card draws the next case), and
# filed once the card has handled the key: sent if it took it (another case drawn), else ignored
SENT = """
window.__sent = []; window.__ignored = [];
window.addEventListener('keydown', (e) => {
  const c = document.querySelector('%s');
  if (!(c && e.key === '1' && c.dataset.state === 'case')) return;
  const shown = c.dataset.case;
  // after the card's own handler: the card took the press when it no longer shows that case
  setTimeout(() => {
    const d = document.querySelector('%s');
    (d && d.dataset.state === 'case' && d.dataset.case === shown ? window.__ignored : window.__sent).push(shown);
  }, 0);
}, true);
""" % (CARD, CARD)
SHOWS = f"() => (document.querySelector('{CARD}') || {{dataset: {{}}}}).dataset.state === 'case'"
PENDING_0 = f"() => document.querySelector('{CARD}').dataset.pending === '0'"


def engineer_pages(gen: str, runs: list[str]) -> dict[str, str]:
    a, b = runs[0], runs[-1]
    return {
        "runs": "/runs",
        "attribution": f"/attribution?run={a}",
        "compare": f"/compare?a={a}&b={b}",
        "agreement": f"/agreement?gen={gen}",
        "team": "/team",
    }


def pct(xs: list[float], q: float) -> float | None:
    """The q-th quantile by the nearest rank below (review_pace's p95), None for no values."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


# --------------------------------------------------------------------------- the users


class Run:
    """What the users of one run share: the URL, the clock, and where they put their figures."""

    def __init__(self, base: str, gen: str, pages: dict[str, str], users: int, duration: float, floor: str):
        self.base, self.gen, self.pages, self.duration, self.floor = base, gen, pages, duration, floor
        self.ready = threading.Barrier(users + 1)
        self.end = float("inf")  # set when every user is ready (or one never got going)
        self.out: dict[str, dict[str, Any]] = {}


def _browser_context(p: Any, run: Run) -> tuple[Any, Any]:
    browser = browser_util.launch(p)
    ctx = browser.new_context(viewport=VIEWPORT, ignore_https_errors=True)  # nginx's certificate is self-signed
    return browser, ctx


def start(run: Run) -> None:
    """Wait until every user is ready; a user that never got going (it aborts the barrier, its error
    recorded) does not stop the others."""
    try:
        run.ready.wait()
    except threading.BrokenBarrierError:
        pass


def reviewer(name: str, run: Run) -> None:
    from playwright.sync_api import sync_playwright

    out = run.out.setdefault(name, {"kind": "reviewer", "presses": 0})
    with sync_playwright() as p:
        browser, ctx = _browser_context(p, run)
        try:
            page = ctx.new_page()
            page.add_init_script(PROBE)
            page.add_init_script(SENT)
            page.goto(f"{run.base}/review?gen={run.gen}&card=1", timeout=600_000)
            browser_util.type_name(page, name)
            page.wait_for_function(SHOWS, timeout=600_000)
        except Exception as e:  # reported, not raised: the others go on
            out["error"] = f"no first case: {str(e)[:200]}"
            run.ready.abort()
            browser.close()
            return
        start(run)
        while time.monotonic() < run.end:
            try:
                page.wait_for_function(SHOWS, timeout=120_000)
            except Exception:
                out["error"] = "no case within 120 s"
                break
            page.keyboard.press("1")
            out["presses"] += 1
            time.sleep(THINK)
        try:
            page.wait_for_function(PENDING_0, timeout=300_000)
            out["acknowledged"] = True
        except Exception:
            out["acknowledged"] = False  # its sent cases are then not counted as lost: never acknowledged
        out["waits"] = [w / 1000 for w in page.evaluate("() => window.__pace")]
        out["sent"] = page.evaluate("() => window.__sent")
        out["ignored"] = page.evaluate("() => window.__ignored")  # presses the card did not take
        browser.close()


def render(page: Any, url: str, timeout_s: float = 120.0) -> float:
    """goto ``url``; the seconds from the navigation to the last WebSocket message once the main
    element is drawn, nothing is stale and the socket has been quiet for QUIET_MS."""
    page.goto(url, timeout=timeout_s * 1000)
    page.wait_for_function(
        f"() => window.__ws.any > 0 && performance.now() - window.__ws.any > {QUIET_MS} && {js_main(MAIN)} && {JS_IDLE}",
        timeout=timeout_s * 1000,
        polling=25,
    )
    return round(page.evaluate("() => window.__ws.any") / 1000, 3)


def engineer(name: str, run: Run, pages: dict[str, str] | None = None, kind: str = "engineer") -> None:
    """Load ``pages`` (name -> URL; default the run's engineer pages) in turn, each a new page load,
    timed by :func:`render`, until the clock ends. The floor user is one with the floor's one page
    (``kind`` "floor"): a bare Streamlit page on its own server, timed the same way in the same run,
    what any Streamlit page takes under the run's load."""
    from playwright.sync_api import sync_playwright

    urls = pages or {what: run.base + path for what, path in run.pages.items()}
    out = run.out.setdefault(name, {"kind": kind, "renders": [], "failed": []})
    order = list(urls)
    with sync_playwright() as p:
        browser, ctx = _browser_context(p, run)
        page = ctx.new_page()
        page.add_init_script(JS_WS_HOOK)
        try:
            render(page, urls[order[0]], 600)  # the first render, not counted
        except Exception as e:
            out["error"] = f"no first page: {str(e)[:200]}"
            run.ready.abort()
            browser.close()
            return
        start(run)
        k = int(name.rsplit("-", 1)[1])  # engineers start on different pages
        while time.monotonic() < run.end:
            what = order[k % len(order)]
            k += 1
            try:
                out["renders"].append((what, render(page, urls[what])))
            except Exception as e:
                out["failed"].append((what, str(e)[:200]))
        browser.close()


def drive(run: Run, tag: str, n: int, m: int) -> None:
    """Start the users (a second apart: a person's arrival, and the machine's), wait until every one is
    ready, run the clock, and wait for them all."""
    threads = [threading.Thread(target=reviewer, args=(f"{tag}r-{k}", run)) for k in range(n)]
    threads += [threading.Thread(target=engineer, args=(f"{tag}e-{k}", run)) for k in range(m)]
    threads.append(threading.Thread(target=engineer, args=("floor-0", run, {"floor": run.floor}, "floor")))
    for t in threads:
        t.start()
        time.sleep(1)
    start(run)
    run.end = time.monotonic() + run.duration
    for t in threads:
        t.join()


# --------------------------------------------------------------------------- the checks in PostgreSQL


def store_checks(url: str, tag: str, gen: str, queue: str, sent: dict[str, list[str]]) -> dict[str, Any]:
    """Lost, doubled and over-reviewed, read from PostgreSQL (the ``edits`` and ``queues`` tables)."""
    import psycopg

    with psycopg.connect(url) as con:
        edits = con.execute(
            "SELECT reviewer, item_id, gen_round, criterion FROM edits"
            " WHERE gen_id = %s AND outcome = 'decided' AND queue = %s",
            (gen, queue),
        ).fetchall()
        required = con.execute("SELECT reviewers_required FROM queues WHERE queue_id = %s", (queue,)).fetchone()[0]
    mine = [e for e in edits if e[0].startswith(tag)]
    have = {(e[0], e[1], int(e[2]), e[3]) for e in mine}
    lost = []
    for who, keys in sent.items():
        for key in keys:
            item, rnd, crit = browser_util.card_key(key)
            if (who, item, rnd, crit) not in have:
                lost.append([who, item, rnd, crit])
    by_case: dict[tuple, set[str]] = {}
    for who, *case in edits:
        by_case.setdefault(tuple(case), set()).add(who)
    return {
        "decisions": len(mine),
        "sent_acknowledged": sum(len(v) for v in sent.values()),
        "lost": lost,
        "doubled": len(mine) - len(have),
        "over_reviewed": sum(len(v) > required for v in by_case.values()),
        "reviewers_required": required,
        "cases_decided_in_queue": len(by_case),
    }


# --------------------------------------------------------------------------- servers


@contextlib.contextmanager
def servers(data: Path, state: Path, count: int, logs: Path) -> Iterator[tuple[str, list[int], Path | None]]:
    """``count`` app servers on 127.0.0.1 over one state directory; with more than one, Debian's nginx
    in front (docs/deploy/nginx.conf filled in, TLS, sticky sessions: tests/test_deploy_proxy.py).
    Yields (the URL users open, the servers' pids, nginx's directory or None); stops everything
    afterwards."""
    with contextlib.ExitStack() as stack:
        pids, bases = [], []
        for _ in range(count):
            port = browser_util.free_port()
            base, proc = stack.enter_context(
                browser_util.serve(ROOT, data, state, logs / f"streamlit-{port}.log", port=port, timeout=600)
            )
            pids.append(proc.pid)
            bases.append(base)
        if count == 1:
            yield bases[0], pids, None
            return
        from test_deploy_proxy import start_nginx

        port = browser_util.free_port()
        proxy = stack.enter_context(start_nginx([b.removeprefix("http://") for b in bases], port))
        yield f"https://127.0.0.1:{port}", pids, proxy


@contextlib.contextmanager
def floor_server(out: Path, logs: Path) -> Iterator[str]:
    """The floor's Streamlit process (bench/pages.py's FLOOR_APP); yields its page's URL."""
    root = out / "floor-app"
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(FLOOR_APP)
    with browser_util.serve(root, root, root, logs / "streamlit-floor.log", timeout=600) as (base, _):
        yield base + "/"


def sessions_per_server(proxy: Path | None) -> dict[str, dict[str, int]] | None:
    """For each app server, the WebSocket sessions (``/_stcore/stream``, logged as each closes) nginx
    passed to it and the browsers they came from (distinct routing cookies): how the sticky sessions
    spread the users."""
    if proxy is None:
        return None
    from test_deploy_proxy import access_log

    streams = [r for r in access_log(proxy) if r.uri.startswith("/_stcore/stream")]
    return {
        up: {
            "sessions": sum(r.upstream == up for r in streams),
            "browsers": len({r.cookie for r in streams if r.upstream == up}),
        }
        for up in sorted({r.upstream for r in streams})
    }


# --------------------------------------------------------------------------- one run, the table


def summarise(run: Run, checks: dict[str, Any], pids: list[int], meta: dict[str, Any]) -> dict[str, Any]:
    users = [u for u in run.out.values() if u["kind"] != "floor"]
    floor = run.out.get("floor-0", {})
    floors = [t for _, t in floor.get("renders", [])]
    waits = [w for u in users for w in u.get("waits", [])]
    renders = [r for u in users for r in u.get("renders", [])]
    times = [t for _, t in renders]
    per_page = {
        name: {"n": len(ts), "p50": pct(ts, 0.5), "p95": pct(ts, 0.95)}
        for name in run.pages
        for ts in [[t for what, t in renders if what == name]]
    }
    return {
        **meta,
        "keypresses": len(waits),
        "key_p50_s": pct(waits, 0.5),
        "key_p95_s": pct(waits, 0.95),
        "key_max_s": max(waits, default=None),
        "page_loads": len(times),
        "page_p50_s": pct(times, 0.5),
        "page_p95_s": pct(times, 0.95),
        "pages": per_page,
        "floor_loads": len(floors),
        "floor_p50_s": pct(floors, 0.5),
        "floor_p95_s": pct(floors, 0.95),
        "floor_failures": len(floor.get("failed", [])),
        "page_failures": [f for u in users for f in u.get("failed", [])],
        "errors": {name: u["error"] for name, u in run.out.items() if u.get("error")},
        "unacknowledged_reviewers": [
            n for n, u in run.out.items() if u["kind"] == "reviewer" and not u.get("acknowledged")
        ],
        "server_vm_hwm_mb": [vm_hwm_mb(pid) for pid in pids],
        # presses on a drawn case that left it drawn (nothing sent: not counted as lost), per reviewer
        "ignored_presses": {n: len(u["ignored"]) for n, u in run.out.items() if u.get("ignored")},
        **checks,
        "lost_n": len(checks["lost"]),
    }


def one_run(a: argparse.Namespace, ctx: dict[str, Any], n: int, m: int, count: int, k: int) -> dict[str, Any]:
    tag = f"{ctx['tag']}{k}"
    logs = a.out / f"logs-{tag}"
    meta: dict[str, Any] = {
        "servers": count,
        "reviewers": n,
        "engineers": m,
        "duration_s": a.duration,
        "tag": tag,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    with servers(a.data, ctx["state"], count, logs) as (base, pids, proxy), floor_server(a.out, logs) as floor:
        run = Run(base, a.gen, ctx["pages"], n + m + 1, a.duration, floor)
        drive(run, tag, n, m)
        meta["load_after"] = [round(x, 2) for x in os.getloadavg()]
        meta["sessions_per_server"] = sessions_per_server(proxy)
        sent = {name: u.get("sent", []) for name, u in run.out.items() if u.get("acknowledged")}
        checks = store_checks(ctx["url"], tag, a.gen, ctx["queue"], sent)
        row = summarise(run, checks, pids, meta)
    (a.out / f"{tag}.json").write_text(json.dumps({"row": row, "users": run.out}, indent=1))
    return row


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _ratio(r: dict[str, Any]) -> str:
    page, floor = r["page_p95_s"], r["floor_p95_s"]
    return "-" if page is None or not floor else f"{page / floor:.1f}x"


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| servers | reviewers + engineers | s | decisions | keypress p50 / p95 s | page loads (failed) "
        "| page p50 / p95 s | floor p50 / p95 s (loads) | page p95 / floor p95 | server VmHWM MB "
        "| lost / doubled / over-reviewed | load 1-min before / after |",
        "|--:|--:|--:|--:|---|--:|---|---|--:|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['servers']} | {r['reviewers']} + {r['engineers']} | {r['duration_s']:.0f} | {r['decisions']} "
            f"| {_s(r['key_p50_s'])} / {_s(r['key_p95_s'])} | {r['page_loads']} ({len(r['page_failures'])}) "
            f"| {_s(r['page_p50_s'])} / {_s(r['page_p95_s'])} "
            f"| {_s(r['floor_p50_s'])} / {_s(r['floor_p95_s'])} ({r['floor_loads']}) | {_ratio(r)} "
            f"| {' + '.join(f'{x:.0f}' for x in r['server_vm_hwm_mb'] if x is not None)} "
            f"| {r['lost_n']} / {r['doubled']} / {r['over_reviewed']} "
            f"| {r['load_before'][0]} / {r['load_after'][0]} |"
        )
    per = sorted({p for r in rows for p in r["pages"]})
    lines += [
        "",
        "Page render p50 / p95 s by page (n): "
        + "; ".join(
            f"{r['servers']}x {r['reviewers']}+{r['engineers']} "
            + ", ".join(
                f"{p} {_s(r['pages'][p]['p50'])} / {_s(r['pages'][p]['p95'])} ({r['pages'][p]['n']})" for p in per
            )
            for r in rows
        ),
    ]
    spread = {
        f"{r['servers']}x {r['reviewers']}+{r['engineers']}": r["sessions_per_server"]
        for r in rows
        if r["sessions_per_server"]
    }
    if spread:
        lines.append(f"WebSocket sessions nginx passed to each app server: {spread}.")
    fails = {r["tag"]: r["page_failures"] for r in rows if r["page_failures"]}
    errs = {r["tag"]: r["errors"] for r in rows if r["errors"]}
    lines.append(f"Failed page loads: {fails or 'none'}. Users with an error: {errs or 'none'}.")
    ignored = {r["tag"]: r["ignored_presses"] for r in rows if r.get("ignored_presses")}
    lines.append(f"Presses on a drawn case that the card did not take (nothing sent): {ignored or 'none'}.")
    return "\n".join(lines)


def breaks(row: dict[str, Any]) -> bool:
    """The run misses an aim (keypress p95 > 0.5 s or page p95 > 2 s), or a user never got going."""
    key, page = row["key_p95_s"], row["page_p95_s"]
    return bool(row["errors"]) or key is None or page is None or key > AIM_KEY_P95 or page > AIM_PAGE_P95


# --------------------------------------------------------------------------- setting up


@contextlib.contextmanager
def postgresql(given: str | None) -> Iterator[str]:
    """A new schema in ``given``, or in a throwaway cluster (tests/pg_util.py) stopped afterwards."""
    import pg_util

    if given:
        os.environ["EVALCORE_TEST_PG_URL"] = given
    url, _ = pg_util.new_schema(pg_util.server_url())
    try:
        yield url
    finally:
        if not given:
            pg_util.stop(os.environ.get(pg_util.ROOT_ENV))


def prepare(a: argparse.Namespace, url: str) -> dict[str, Any]:
    """The state copied, the queue built into PostgreSQL (not timed in the figures)."""
    from evalcore import Store
    from evalcore import review as R

    state = a.out / "state"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(a.state, state)
    os.environ["EVALCORE_DB"] = url  # the label store of this process and of the app servers
    store = Store(a.data, state)
    t = time.monotonic()
    queue = R.build_queue(store, a.gen, audit_rate=0.3, seed=3, reviewers_required=2)
    print(f"queue {queue['queue_id']} built into PostgreSQL in {time.monotonic() - t:.1f} s (not in the figures)")
    runs = [r for r in store.ids("run") if store.run(r).manifest.gen_id == a.gen]
    return {
        "state": state,
        "url": url,
        "queue": queue["queue_id"],
        "pages": engineer_pages(a.gen, sorted(runs)),
        "tag": f"team{int(time.time()) % 100000}-",
    }


def plan(a: argparse.Namespace) -> list[tuple[int, int]]:
    if not a.ramp:
        return [(a.reviewers, a.engineers)]
    return [(t - t // 4, t // 4) for t in range(4, a.max_users + 1, 4)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--state", type=Path, required=True, help="a state directory holding the stored detection")
    ap.add_argument("--gen", required=True)
    ap.add_argument("--reviewers", type=int, default=15)
    ap.add_argument("--engineers", type=int, default=5)
    ap.add_argument("--duration", type=float, default=300)
    ap.add_argument("--servers", default="1", help="app servers: 1, 2 (behind nginx), or 1,2 for both in turn")
    ap.add_argument("--ramp", action="store_true")
    ap.add_argument("--max-users", type=int, default=40)
    ap.add_argument("--pg-url", default=None)
    ap.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench/team-load"))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with postgresql(a.pg_url) as url:
        ctx = prepare(a, url)
        k = 0
        for count in [int(x) for x in a.servers.split(",")]:
            for n, m in plan(a):
                row = one_run(a, ctx, n, m, count, k)
                k += 1
                rows.append(row)
                print(table([row]), file=sys.stderr)
                if a.ramp and breaks(row):
                    print(f"{count} server(s): the aims are missed at {n + m} users", file=sys.stderr)
                    break
    (a.out / "summary.json").write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
