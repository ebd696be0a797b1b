#!/usr/bin/env python3
"""Review queue page in a real browser: keypress to the next case, and the first render at scale.
A benchmark, not a timed test: it prints tables and writes JSON, and asserts nothing about speed.

    python bench/review_page.py                      # both measurements (keys, then render)
    python bench/review_page.py --only keys          # keypress to next case on the demo
    python bench/review_page.py --only render        # first render over 36M verdict rows (+ baseline)
    python bench/review_page.py baseline --data D --state S --out F   # the in-process baseline (a child)

* ``keys``: ``streamlit run app.py`` on the bundled SIMULATED demo (data/demo) with a fresh state
  directory, headless Chromium (Playwright, /usr/bin/chromium, 1400x900) on ``/review``: a name,
  Enter, "Build queue", then N presses of 1 (the first choice on the review card,
  pages/_card.py), the first few of them warm-up (not counted). Each press is timed in the page,
  from the keydown event until (a) the card's case changed and the script run is idle (status
  widget not "Running", no stale element left), and (b) the card shows the next case. Four
  reviewers at once: bench/review_pace.py. The Python-side wall time (from
  ``page.keyboard.press`` until Playwright saw (a)) is reported too.
* ``render``: the 1,000,000-item bench world (generation ``bench-g1``, two runs of 18,000,000
  verdict rows, a built queue; made by bench/review_queue.py). The state directory is COPIED to a
  temp directory each time (the original is never opened). A fresh server each run: the first page
  load (goto until "Your name" is visible), then the first render (from the name's Enter until a
  case is shown: the review card shows a case and the run is idle), the server's peak memory (VmRSS
  sampled every 0.2 s during the render, VmHWM after the render and at the end) and CPU time
  (utime+stime), then key presses at that size. ``--runs`` times (default 3).
* ``baseline`` (run with ``render``, a fresh process each run on its own copy of the state): the
  library calls the page makes on its first render, in the page's order, each timed: runs_on for
  every generation, queues, facets, progress, next_case, case_view, leases, disputes.

ALL DATA IS SIMULATED. Results go to ``--out`` (default /tmp/evalcore-bench/review-page/).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import browser_util  # noqa: E402  (the browser tests' app start-up)

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
DEMO = ROOT / "data" / "demo"
SCALE_DATA = Path("/tmp/rq-bench/data-1000000")
SCALE_STATE = Path("/tmp/rq-bench/state-1000000")
SCALE_GEN = "bench-g1"
OUT = Path(os.environ.get("EVALCORE_BENCH_DIR", "/tmp/evalcore-bench")) / "review-page"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 900}
NAME = "bench-reviewer"
CLK = os.sysconf("SC_CLK_TCK")

# the page's state, as JavaScript (the same idle test as tests/browser_util.wait_idle)
JS_IDLE = ("(() => { const s = document.querySelector('[data-testid=\"stStatusWidget\"]');"
           " return (!s || !/Running|Connecting/i.test(s.innerText))"
           " && !document.querySelector('[data-stale=\"true\"]'); })()")
# the review card (pages/_card.py): the case it shows (null while it shows none), and that case's key
JS_CAPTION = ("(() => { const c = document.querySelector('[data-testid=\"evalcore-card\"]');"
              " return c && c.dataset.state === 'case' ? c.dataset.case : null; })()")
JS_CASE = ("(() => { const c = document.querySelector('[data-testid=\"evalcore-card\"]');"
           " return c ? c.dataset.case : ''; })()")
# installed before each press: records (performance.now) the keydown and when each condition first held
JS_ARM = """(old) => {
  const b = window.__bench = {t0: null, caption: null, idle: null};
  const moved = () => CASE !== old;
  document.addEventListener("keydown", () => { if (b.t0 === null) b.t0 = performance.now(); },
                            {capture: true, once: true});
  const check = () => {
    if (b.t0 === null || !moved()) return;
    const now = performance.now();
    if (b.caption === null && CAPTION !== null) b.caption = now;
    if (b.idle === null && IDLE) b.idle = now;
  };
  const obs = new MutationObserver(check);
  obs.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  const tick = () => { check(); if (b.caption === null || b.idle === null) requestAnimationFrame(tick);
                       else obs.disconnect(); };
  requestAnimationFrame(tick);
}""".replace("CASE", JS_CASE).replace("CAPTION", JS_CAPTION).replace("IDLE", JS_IDLE)
JS_ERRORS = ("() => [...document.querySelectorAll('[data-testid=\"stException\"], "
             "[data-testid=\"stAlertContentError\"]')].map(e => e.innerText.slice(0, 300))")


# --------------------------------------------------------------------------- machine and process


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def wait_quiet(max_load: float, max_wait: float) -> dict[str, Any]:
    """Wait (at most ``max_wait`` s) until the 1-minute load average is under ``max_load``."""
    t = time.monotonic()
    seen = load()
    while seen[0] >= max_load and time.monotonic() - t < max_wait:
        time.sleep(5)
        seen = load()
    return {"waited_s": round(time.monotonic() - t, 1), "load": seen, "quiet": seen[0] < max_load}


def machine() -> dict[str, Any]:
    mem = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())

    def version(mod: str) -> str:
        try:
            from importlib.metadata import version as v

            return v(mod)
        except Exception:  # noqa: BLE001
            return "?"

    return {"nproc": os.cpu_count(), "cpu": cpu, "mem_gb": round(int(mem.split()[1]) / 2**20, 1),
            "kernel": platform.release(), "python": platform.python_version(),
            "streamlit": version("streamlit"), "playwright": version("playwright"), "duckdb": version("duckdb"),
            "chromium": subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()}


def status_kb(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime (fields 14 and 15)


class Sampler:
    """VmRSS of ``pid`` every ``every`` s in a thread; ``mark()`` starts a new segment."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        self.pid, self.every, self.samples = pid, every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            kb = status_kb(self.pid, "VmRSS")
            if kb is not None:
                self.samples.append((time.perf_counter(), kb))
            self._stop.wait(self.every)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)

    def peak_mb(self, t0: float, t1: float) -> float | None:
        kbs = [kb for t, kb in self.samples if t0 <= t <= t1]
        return round(max(kbs) / 1024, 1) if kbs else None


# --------------------------------------------------------------------------- the app server and browser


def start_app(data: Path, state: Path, log: Path, timeout: float = 60.0):
    """``streamlit run app.py`` of ROOT on 127.0.0.1 (tests/browser_util.serve); yields (URL, process)."""
    return browser_util.serve(ROOT, data, state, log, timeout=timeout)


@contextmanager
def browser_page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            page.console_errors = []  # type: ignore[attr-defined]
            page.on("console", lambda m: page.console_errors.append(m.text[:300]) if m.type == "error" else None)
            page.on("pageerror", lambda e: page.console_errors.append(str(e)[:300]))
            page.on("response", lambda r: page.console_errors.append(f"HTTP {r.status} {r.url}")
                    if r.status >= 400 else None)
            yield page
        finally:
            browser.close()


def wait_idle(page: Any, timeout: float = 60_000) -> None:
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_function("() => " + JS_IDLE, timeout=timeout)


def wait_case(page: Any, timeout: float) -> None:
    """Until the review card shows a case and the run is idle."""
    page.wait_for_function(f"() => {JS_CAPTION} !== null && {JS_IDLE}", timeout=timeout)


def give_name(page: Any, timeout: float) -> float:
    """Type the name and press Enter; returns perf_counter() at the Enter."""
    box = page.get_by_role("textbox", name="Your name")
    box.click()
    page.keyboard.type(NAME)
    t = time.perf_counter()
    page.keyboard.press("Enter")
    return t


def first_key(caption: str) -> str:
    """The first choice's key on the review card: 1, whatever the criterion's kind."""
    return "1"


def press_keys(page: Any, n: int, warmup: int, timeout: float) -> list[dict[str, Any]]:
    """``warmup + n`` decision-key presses, each once the run is idle and the focus is not in a text field."""
    out = []
    for k in range(warmup + n):
        wait_idle(page, timeout)
        page.wait_for_function("() => { const a = document.activeElement;"
                               " return !a || !['INPUT', 'TEXTAREA'].includes(a.tagName); }", timeout=timeout)
        caption = page.evaluate(JS_CAPTION)
        if caption is None:
            raise RuntimeError(f"press {k}: no case on the page (errors: {page.evaluate(JS_ERRORS)})")
        old = page.evaluate(JS_CASE)
        key = first_key(caption)
        page.evaluate(JS_ARM, old)
        t = time.perf_counter()
        page.keyboard.press(key)
        try:
            page.wait_for_function("() => window.__bench.idle !== null && window.__bench.caption !== null",
                                   timeout=timeout, polling=10)
        except Exception as err:  # noqa: BLE001
            raise RuntimeError(f"press {k} ({key!r} on {old}): the next case did not come: {err}") from err
        wall = time.perf_counter() - t
        b = page.evaluate("window.__bench")
        out.append({"press": k, "warmup": k < warmup, "key": key, "case": old, "next": page.evaluate(JS_CASE),
                    "idle_s": round((b["idle"] - b["t0"]) / 1000, 4),
                    "caption_s": round((b["caption"] - b["t0"]) / 1000, 4),
                    "python_wall_s": round(wall, 4)})
    return out


def summarise(presses: list[dict[str, Any]]) -> dict[str, Any]:
    counted = [p for p in presses if not p["warmup"]]

    def stats(field: str) -> dict[str, float]:
        xs = sorted(p[field] for p in counted)
        p90 = statistics.quantiles(xs, n=10, method="inclusive")[-1] if len(xs) > 1 else xs[0]
        return {"median": round(statistics.median(xs), 4), "p90": round(p90, 4), "max": round(xs[-1], 4),
                "min": round(xs[0], 4)}

    return {"n": len(counted), "warmup": len(presses) - len(counted), "idle": stats("idle_s"),
            "caption": stats("caption_s"), "python_wall": stats("python_wall_s"),
            "keys": sorted({p["key"] for p in counted})}


def url_param(url: str, name: str) -> str | None:
    from urllib.parse import parse_qs, urlsplit

    return (parse_qs(urlsplit(url).query).get(name) or [None])[0]


def handled(data: Path, state: Path, queue_id: str | None) -> dict[str, Any]:
    """What the label store holds for the bench reviewer afterwards (every press must be an edit)."""
    from evalcore import LabelStore, Store, review

    store = Store(data, state)
    q = next(x for x in review.queues(store) if queue_id in (None, x["queue_id"]))
    prog = review.progress(store, q["queue_id"], NAME, None)
    edits = LabelStore(store).rows("SELECT COUNT(*) AS n FROM edits WHERE reviewer = ?", (NAME,))[0]["n"]
    return {"queue_id": q["queue_id"], "handled_by_me": prog["handled_by_me"], "cases": prog["cases"],
            "edits_by_me": edits}


# --------------------------------------------------------------------------- keys (the demo)


def measure_keys(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    state = tmp / "keys-state"
    state.mkdir()
    quiet = wait_quiet(args.max_load, args.max_wait)
    res: dict[str, Any] = {"measurement": "keys", "data": str(DEMO), "started": datetime.now(UTC).isoformat(),
                           "presses_counted": args.presses, "warmup": args.warmup, "quiet_wait": quiet,
                           "load_before": load()}
    with start_app(DEMO, state, tmp / "keys-streamlit.log") as (base, _proc), browser_page() as page:
        page.goto(base + "/review")
        page.get_by_role("textbox", name="Your name").wait_for(timeout=60_000)
        wait_idle(page)
        give_name(page, 60_000)
        page.get_by_text(f"Reviewing as {NAME}").wait_for(timeout=60_000)
        wait_idle(page)
        build = page.get_by_role("button", name="Build queue")
        if build.count():
            t = time.perf_counter()
            build.click()
            wait_case(page, 120_000)
            res["build_click_to_case_s"] = round(time.perf_counter() - t, 3)
        else:
            wait_case(page, 60_000)
        res["url"] = page.url
        res["presses"] = press_keys(page, args.presses, args.warmup, 60_000)
        res["page_errors"] = page.evaluate(JS_ERRORS)
        res["console_errors"] = page.console_errors
    res["load_after"] = load()
    res["label_store"] = handled(DEMO, state, url_param(res["url"], "queue"))
    res["summary"] = summarise(res["presses"])
    return res


def keys_table(res: dict[str, Any]) -> str:
    s = res["summary"]
    rows = [
        "| from the keydown until | n | median s | p90 s | max s | min s |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for field, what in (("idle", "the URL's case changed and the run is idle"),
                        ("caption", "the URL's case changed and the new run's \"Keys: \" caption is shown"),
                        ("python_wall", "(Python: press() until Playwright saw the idle state)")):
        x = s[field]
        rows.append(f"| {what} | {s['n']} | {x['median']:.3f} | {x['p90']:.3f} | {x['max']:.3f} | {x['min']:.3f} |")
    lines = ["", f"keys: {s['n']} presses counted after {s['warmup']} warm-up presses (keys {', '.join(s['keys'])})"
             f" on {res['url'].split('?', 1)[1]}", f"load average before {res['load_before']}, after"
             f" {res['load_after']}", *rows]
    if "label_store" in res:
        lines.append(f"label store afterwards: {res['label_store']}")
    if "build_click_to_case_s" in res:
        lines.append(f"'Build queue' click to the first case: {res['build_click_to_case_s']:.2f} s")
    lines.append(f"page errors: {res['page_errors'] or 'none'}; console errors: {res['console_errors'] or 'none'}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- render at scale


def copy_state(src: Path, dst: Path) -> float:
    t = time.perf_counter()
    shutil.copytree(src, dst)
    return round(time.perf_counter() - t, 1)


def render_once(args: argparse.Namespace, tmp: Path, k: int) -> dict[str, Any]:
    state = tmp / f"render-state-{k}"
    res: dict[str, Any] = {"run": k, "copy_s": copy_state(args.scale_state, state)}
    res["quiet_wait"] = wait_quiet(args.max_load, args.max_wait)
    res["load_before"] = load()
    with start_app(args.scale_data, state, tmp / f"render-streamlit-{k}.log") as (base, proc), \
            browser_page() as page, Sampler(proc.pid) as sampler:
        pid = proc.pid
        res["server_idle_rss_mb"] = round((status_kb(pid, "VmRSS") or 0) / 1024, 1)
        cpu0 = cpu_s(pid)
        t_goto = time.perf_counter()
        page.goto(base + f"/review?gen={SCALE_GEN}")
        page.get_by_role("textbox", name="Your name").wait_for(timeout=120_000)
        res["first_load_s"] = round(time.perf_counter() - t_goto, 3)
        wait_idle(page, 120_000)
        res["first_load_idle_s"] = round(time.perf_counter() - t_goto, 3)
        cpu1 = cpu_s(pid)
        t0 = give_name(page, 60_000)
        try:
            page.wait_for_function(f"() => {JS_CAPTION} !== null", timeout=args.render_timeout * 1000, polling=20)
            res["render_caption_s"] = round(time.perf_counter() - t0, 3)
            wait_case(page, args.render_timeout * 1000)
            t1 = time.perf_counter()
            res["render_s"] = round(t1 - t0, 3)
        except Exception as err:  # noqa: BLE001
            t1 = time.perf_counter()
            res["render_s"] = None
            res["render_error"] = f"no case after {t1 - t0:.0f} s: {str(err)[:200]}"
        cpu2 = cpu_s(pid)
        res["render_peak_rss_sampled_mb"] = sampler.peak_mb(t0, t1 + 0.01)
        res["vmhwm_after_render_mb"] = round((status_kb(pid, "VmHWM") or 0) / 1024, 1)
        res["cpu_first_load_s"] = round(cpu1 - cpu0, 2) if cpu0 is not None and cpu1 is not None else None
        res["cpu_render_s"] = round(cpu2 - cpu1, 2) if cpu1 is not None and cpu2 is not None else None
        res["url"] = page.url
        res["load_after_render"] = load()
        if res["render_s"] is not None:
            res["presses"] = press_keys(page, args.scale_presses, args.scale_warmup, 120_000)
            res["summary"] = summarise(res["presses"])
        res["page_errors"] = page.evaluate(JS_ERRORS)
        res["console_errors"] = page.console_errors
        res["vmhwm_end_mb"] = round((status_kb(pid, "VmHWM") or 0) / 1024, 1)
        res["cpu_total_s"] = cpu_s(pid)
        res["rss_samples"] = len(sampler.samples)
    res["load_after"] = load()
    res["label_store"] = handled(args.scale_data, state, url_param(res["url"], "queue"))
    shutil.rmtree(state, ignore_errors=True)
    # the baseline: the page's library calls in a fresh process, on a fresh copy
    bstate = tmp / f"baseline-state-{k}"
    copy_state(args.scale_state, bstate)
    bout = tmp / f"baseline-{k}.json"
    t = time.perf_counter()
    subprocess.run([sys.executable, __file__, "baseline", "--data", str(args.scale_data), "--state", str(bstate),
                    "--out", str(bout)], check=True, cwd=ROOT)
    res["baseline"] = json.loads(bout.read_text())
    res["baseline"]["process_s"] = round(time.perf_counter() - t, 2)
    shutil.rmtree(bstate, ignore_errors=True)
    return res


def baseline(data: Path, state: Path, out: Path) -> None:
    """The page's evalcore calls, in its order, each timed (a child process): the app shell's
    ``data_overview`` (first load, before the name), then the render's reads: runs_on for every
    generation, the generation's manifest, queues, facets, ``runs_summary`` (the run picker's labels
    and the suite-version warning, through the app's st.cache_data), progress, next_case,
    case_view, leases, disputes. The five the issue names are summed apart."""
    import resource

    t_imp = time.perf_counter()
    import evalcore
    from evalcore import Store, review

    calls: list[dict[str, Any]] = []
    res: dict[str, Any] = {"import_s": round(time.perf_counter() - t_imp, 3), "calls": calls}

    def timed(name: str, part: str, fn: Any, *a: Any, **kw: Any) -> Any:
        t, c = time.perf_counter(), time.process_time()
        v = fn(*a, **kw)
        calls.append({"call": name, "part": part, "wall_s": round(time.perf_counter() - t, 4),
                      "cpu_s": round(time.process_time() - c, 4),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)})
        return v

    store = Store(data, state)
    timed("data_overview", "first load", evalcore.data_overview, store)
    gens = store.ids("generation")
    judged = {g: len(timed(f"runs_on({g})", "render", review.runs_on, store, g)) for g in gens}
    gen = sorted((g for g, n in judged.items() if n), key=lambda g: (-judged[g], g))[0]
    timed("generation manifest", "render", lambda: store.generation(gen).manifest.suite_id)
    timed("runs_summary", "render", evalcore.runs_summary, store, include_holdout=False)
    qs = timed("queues", "render", review.queues, store, gen)
    q = qs[-1]["queue_id"]
    timed("facets", "render", review.facets, store, q)
    timed("progress", "render", review.progress, store, q, NAME, None)
    nxt = timed("next_case", "render", review.next_case, store, q, NAME, None)
    case = (nxt["item_id"], nxt["gen_round"], nxt["criterion"])
    timed("case_view", "render", review.case_view, store, q, *case, NAME)
    timed("leases", "render", review.leases, store, q)
    timed("disputes", "render", review.disputes, store, q)
    named = ("queues", "facets", "progress", "next_case", "case_view")
    res["named_calls_s"] = round(sum(c["wall_s"] for c in calls if c["call"] in named), 4)
    res["render_calls_s"] = round(sum(c["wall_s"] for c in calls if c["part"] == "render"), 4)
    res["render_calls_cpu_s"] = round(sum(c["cpu_s"] for c in calls if c["part"] == "render"), 4)
    res["first_load_calls_s"] = round(sum(c["wall_s"] for c in calls if c["part"] == "first load"), 4)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    res["case"] = list(case)
    out.write_text(json.dumps(res, indent=1))


def measure_render(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    if not (args.scale_data / "runs").exists() or not (args.scale_state / "labels.sqlite").exists():
        raise SystemExit(f"no bench world at {args.scale_data} / {args.scale_state}: build it with "
                         "bench/review_queue.py --dir /tmp/rq-bench (a few minutes)")
    res: dict[str, Any] = {"measurement": "render", "data": str(args.scale_data), "state": str(args.scale_state),
                           "started": datetime.now(UTC).isoformat(), "runs": []}
    for k in range(1, args.runs + 1):
        r = render_once(args, tmp, k)
        res["runs"].append(r)
        print(render_row(r), flush=True)
    return res


def render_row(r: dict[str, Any]) -> str:
    s = r.get("summary")
    b = r["baseline"]
    render = f"{r['render_s']:.2f}" if r["render_s"] is not None else "none"
    keys = f"{s['idle']['median']:.3f} / {s['idle']['max']:.3f}" if s else "-"
    return (f"| {r['run']} | {r['first_load_s']:.2f} | {render} | {r.get('render_caption_s', '-')} | "
            f"{r['render_peak_rss_sampled_mb']} | {r['vmhwm_after_render_mb']:.0f} | {r['vmhwm_end_mb']:.0f} | "
            f"{r['cpu_render_s']} | {b['named_calls_s']:.2f} | {b['render_calls_s']:.2f} | {keys} | "
            f"{r['load_before'][0]:.2f} / {r['load_after'][0]:.2f} |")


RENDER_HEAD = (
    "| run | first load s | first render s | caption s | render peak RSS MB (0.2 s) | VmHWM after render MB "
    "| VmHWM end MB | render CPU s | baseline: the 5 named calls s | baseline: all the render's calls s "
    "| keys median / max s "
    "| load 1-min before / after |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
)


def render_report(res: dict[str, Any]) -> str:
    lines = ["", "render at scale (generation bench-g1, 2 x 18,000,000 verdict rows):", RENDER_HEAD]
    lines += [render_row(r) for r in res["runs"]]
    for r in res["runs"]:
        b = r["baseline"]
        lines.append(f"run {r['run']} baseline (fresh process, import {b['import_s']:.2f} s, peak RSS "
                     f"{b['peak_rss_mb']:.0f} MB): " + ", ".join(f"{c['call']} {c['wall_s']:.3f}" for c in b["calls"]))
        if r.get("summary"):
            s = r["summary"]
            lines.append(f"run {r['run']} keys: {s['n']} after {s['warmup']} warm-up; idle median "
                         f"{s['idle']['median']:.3f} p90 {s['idle']['p90']:.3f} max {s['idle']['max']:.3f}; caption "
                         f"median {s['caption']['median']:.3f} p90 {s['caption']['p90']:.3f} max "
                         f"{s['caption']['max']:.3f}")
        lines.append(f"run {r['run']}: load {r['load_before']} -> {r['load_after']}; label store "
                     f"{r['label_store']}; page errors {r['page_errors'] or 'none'}; console errors "
                     f"{r['console_errors'] or 'none'}" + (f"; {r['render_error']}" if r.get("render_error") else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", nargs="?", default="measure", choices=("measure", "baseline"))
    ap.add_argument("--only", default="keys,render", help="keys, render or keys,render (the default)")
    ap.add_argument("--presses", type=int, default=40, help="key presses counted on the demo")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up presses before them (not counted)")
    ap.add_argument("--runs", type=int, default=3, help="render runs, a fresh server each")
    ap.add_argument("--scale-presses", type=int, default=10)
    ap.add_argument("--scale-warmup", type=int, default=2)
    ap.add_argument("--scale-data", type=Path, default=SCALE_DATA)
    ap.add_argument("--scale-state", type=Path, default=SCALE_STATE, help="copied, never modified")
    ap.add_argument("--render-timeout", type=float, default=300)
    ap.add_argument("--max-load", type=float, default=1.5, help="wait for the 1-min load to go under this")
    ap.add_argument("--max-wait", type=float, default=180, help="at most this long (s) before each measurement")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--data", type=Path)
    ap.add_argument("--state", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "baseline":
        baseline(args.data, args.state, args.out)
        return
    only = set(re.split(r"[,\s]+", args.only.strip()))
    if not only <= {"keys", "render"}:
        ap.error(f"--only: keys and/or render, not {args.only}")
    args.out.mkdir(parents=True, exist_ok=True)
    info = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "date": datetime.now(UTC).isoformat(),
            "machine": machine()}
    print(f"{info['date']}  {info['machine']}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="review-page-"))
    try:
        if "keys" in only:
            res = {**info, **measure_keys(args, tmp)}
            (args.out / "keys.json").write_text(json.dumps(res, indent=1))
            print(keys_table(res), flush=True)
        if "render" in only:
            print("\n" + RENDER_HEAD, flush=True)
            res = {**info, **measure_render(args, tmp)}
            (args.out / "render.json").write_text(json.dumps(res, indent=1))
            print(render_report(res), flush=True)
        print(f"\nresults in {args.out}/", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
