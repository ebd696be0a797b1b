"""Benchmark of the judge harness against bare litellm, on a local server with real latency.

    .venv/bin/python bench/judge.py [--items 400] [--latency 0.2] [--concurrency 64] [--repeats 5]
                                    [--no-write]

A local OpenAI-compatible server (tests/fakellm.py, in its own process) answers every request
after ``--latency`` seconds. A world of ``--items`` answers is judged with the six-criterion rubric
(tests/golden/rubrics/six.toml), so ``--mode split`` makes items x 6 calls (2,400 by default).
Each measurement runs in its own process, after litellm is imported (its ~3-5 s import is not
timed); the measurements are interleaved (bare and harness swap places every repeat) and
repeated, and the harness/bare ratio is taken within each repeat (its median is reported), since
the machine may be shared:

* **bare**: the same 2,400 prompts sent with ``litellm.acompletion`` under ``asyncio.gather`` and an
  ``asyncio.Semaphore(concurrency)``, nothing else;
* **harness split**: ``evalcore.llm.judging.judge`` end to end: planning and rendering every prompt,
  the calls through the same litellm with retries armed, parsing and validating every reply,
  journaling each call with fsync, the progress line, and writing the run (Parquet);
* **harness single**: the same answers in ``--mode single`` (one call per answer).

It prints a markdown section and, unless ``--no-write``, appends it to docs/BENCHMARKS.md under
the heading "Judge harness" (replacing an earlier "Judge harness" section of this script, and
touching nothing else in the file).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
RUBRIC = REPO / "tests" / "golden" / "rubrics" / "six.toml"
MODEL = "openai/fake-judge"
HEADING = "## Judge harness"


def _prepare(data: Path, items: int) -> None:
    from fakellm import make_world
    make_world(data, items)


def measure(kind: str, url: str, data: Path, state: Path, concurrency: int, run_id: str) -> dict:
    """One measurement, in this process (the parent starts one process per measurement)."""
    from evalcore.llm.client import load_litellm
    litellm = load_litellm()  # not timed
    from evalcore.llm.judging import JudgeRequest, judge
    from evalcore.llm.plan import RunOptions, build_judge, make_judge_plan
    from evalcore.storage.store import Store
    store = Store(data, state)
    if kind == "bare":
        plan = make_judge_plan(store, gen_id="g", rubric_path=str(RUBRIC), mode="split", model=MODEL, run_id=run_id)
        msgs = [s.messages for s in build_judge(store, plan).specs]  # the same prompts; not timed
        import asyncio

        async def main() -> float:
            sem = asyncio.Semaphore(concurrency)

            async def one(m):
                async with sem:
                    return await litellm.acompletion(model=MODEL, messages=m, api_base=url, api_key="sk-bench",
                                                     max_retries=0, timeout=60)

            t0 = time.perf_counter()
            res = await asyncio.gather(*(one(m) for m in msgs))
            dt = time.perf_counter() - t0
            assert all(r.choices[0].message.content for r in res)
            return dt

        cpu0 = time.process_time()
        wall = asyncio.run(main())
        return {"kind": kind, "calls": len(msgs), "wall_s": wall, "cpu_s": time.process_time() - cpu0}
    mode = "split" if kind == "split" else "single"
    req = JudgeRequest(gen_id="g", rubric=str(RUBRIC), mode=mode, model=MODEL, rounds=1, run_id=run_id)
    opts = RunOptions(concurrency=concurrency, max_retries=4, timeout=60, backoff=1.0, api_base=url,
                      progress=True, progress_stream=open(os.devnull, "w"))
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    r = judge(store, req, opts)
    wall = time.perf_counter() - t0
    assert r["status"] == "complete" and r["failed_calls"] == 0, r
    return {"kind": kind, "calls": r["calls"], "verdicts": r["verdicts"], "wall_s": wall,
            "cpu_s": time.process_time() - cpu0, "tokens_in": r["tokens_in"], "tokens_out": r["tokens_out"]}


def _litellm_version() -> str:
    from importlib.metadata import version
    return version("litellm")


def render(results: dict[str, list[dict]], a: argparse.Namespace, load: tuple[str, str]) -> str:
    med = {k: statistics.median(x["wall_s"] for x in v) for k, v in results.items()}
    best = {k: min(x["wall_s"] for x in v) for k, v in results.items()}
    calls = {k: v[0]["calls"] for k, v in results.items()}
    tput = {k: calls[k] / med[k] for k in med}
    cpu = {k: statistics.median(x["cpu_s"] for x in v) / calls[k] * 1000 for k, v in results.items()}
    paired = [b["wall_s"] / s["wall_s"] for b, s in zip(results["bare"], results["split"])]
    ratio = statistics.median(paired)
    ratio_best = best["bare"] / best["split"]
    ideal = {k: calls[k] / a.concurrency * a.latency for k in calls}
    walls = {k: ", ".join(f"{x['wall_s']:.1f}" for x in v) for k, v in results.items()}
    sp, si = results["split"][0], results["single"][0]
    lines = [
        HEADING,
        "",
        f"`bench/judge.py` ({time.strftime('%Y-%m-%d')}; {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"litellm {_litellm_version()}). A local OpenAI-compatible server (`tests/fakellm.py`, its own process) "
        f"answers every request after {a.latency * 1000:.0f} ms. {a.items} stored answers judged with the "
        f"six-criterion rubric at concurrency {a.concurrency}: `--mode split` is {calls['split']:,} calls, "
        f"`--mode single` {calls['single']:,}. Every measurement runs in its own process after litellm's import "
        f"(not timed); {a.repeats} repeats, the three measurements interleaved in each. Load average before and "
        f"after: {load[0]} / {load[1]} (the machine is shared, so single runs vary; the ratio is taken within each "
        f"repeat, where bare and harness ran back to back).",
        "",
        "| measurement | calls | wall (s), median | best | every run (s) | calls/s (median) | client CPU per call |",
        "|---|---:|---:|---:|---|---:|---:|",
        f"| bare `litellm.acompletion`, `asyncio.gather` + `Semaphore({a.concurrency})` | {calls['bare']:,} | "
        f"{med['bare']:.2f} | {best['bare']:.2f} | {walls['bare']} | {tput['bare']:.1f} | {cpu['bare']:.1f} ms |",
        f"| `evalcore judge --mode split` (plan, render, retries armed, parse, fsync'd journal, progress, write the "
        f"run) | {calls['split']:,} | {med['split']:.2f} | {best['split']:.2f} | {walls['split']} | "
        f"{tput['split']:.1f} | {cpu['split']:.1f} ms |",
        f"| `evalcore judge --mode single` | {calls['single']:,} | {med['single']:.2f} | {best['single']:.2f} | "
        f"{walls['single']} | {tput['single']:.1f} | {cpu['single']:.1f} ms |",
        "",
        f"* Harness throughput against bare litellm: **{ratio:.2f}x** (median over repeats of bare wall / harness "
        f"wall; per repeat: {', '.join(f'{r:.2f}' for r in paired)}); best against best {ratio_best:.2f}x; client "
        f"CPU per call {cpu['bare'] / cpu['split']:.2f}x. The bar is 0.8x: "
        + ("**met**." if ratio >= 0.8 else "**not met**."),
        f"* Split against single: {med['split']:.2f} s against {med['single']:.2f} s of wall time "
        f"({med['split'] / med['single']:.1f}x) for {calls['split'] // calls['single']}x the calls. At "
        f"{a.latency * 1000:.0f} ms per call with {a.concurrency} in flight the floors are {ideal['split']:.1f} s and "
        f"{ideal['single']:.1f} s; bare litellm alone needs {med['bare']:.2f} s for the split calls, with "
        f"{cpu['bare']:.1f} ms of client CPU per call ({cpu['bare'] * calls['bare'] / 1000:.1f} s in all), so on "
        f"this machine the client and the local server, not the latency, set the pace, and splitting costs wall "
        f"time roughly in proportion to the calls.",
        f"* Tokens: split sent {sp['tokens_in']:,} prompt tokens and received {sp['tokens_out']:,}; single "
        f"{si['tokens_in']:,} and {si['tokens_out']:,} ({sp['tokens_in'] / si['tokens_in']:.1f}x the prompt tokens: "
        f"each split call carries the question, context, reference and answer again; only the criteria block "
        f"differs).",
        "",
    ]
    return "\n".join(lines)


def write_section(text: str, path: Path) -> None:
    """Append (or replace) the "Judge harness" section; leave every other byte of the file alone."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if HEADING in old:
        start = old.index(HEADING)
        rest = old[start + len(HEADING):]
        nxt = rest.find("\n## ")
        tail = rest[nxt + 1:] if nxt >= 0 else ""
        new = old[:start] + text.rstrip("\n") + "\n" + (("\n" + tail) if tail else "")
    else:
        sep = "" if not old else ("\n" if old.endswith("\n") else "\n\n")
        new = old + sep + text
    path.write_text(new, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=400)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    p.add_argument("--url", default=None, help=argparse.SUPPRESS)
    p.add_argument("--data", default=None, help=argparse.SUPPRESS)
    p.add_argument("--state", default=None, help=argparse.SUPPRESS)
    p.add_argument("--run-id", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.measure:
        r = measure(a.measure, a.url, Path(a.data), Path(a.state), a.concurrency, a.run_id)
        print(json.dumps(r))
        return
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="evalcore-bench-judge-") as tmp:
        t = Path(tmp)
        _prepare(t / "data", a.items)
        port_file = t / "url"
        srv = subprocess.Popen([sys.executable, str(REPO / "tests" / "fakellm.py"), "--latency", str(a.latency),
                                "--port-file", str(port_file)], stdout=subprocess.DEVNULL)
        try:
            for _ in range(200):
                if port_file.exists() and port_file.read_text():
                    break
                time.sleep(0.05)
            url = port_file.read_text()
            results: dict[str, list[dict]] = {"bare": [], "split": [], "single": []}
            for rep in range(a.repeats):
                for kind in (("bare", "split", "single") if rep % 2 == 0 else ("split", "bare", "single")):
                    out = subprocess.run(
                        [sys.executable, __file__, "--measure", kind, "--url", url, "--data", str(t / "data"),
                         "--state", str(t / "state"), "--concurrency", str(a.concurrency),
                         "--run-id", f"bench-{kind}-{rep}"], capture_output=True, text=True, check=False)
                    if out.returncode != 0:
                        raise SystemExit(f"measurement {kind} failed:\n{out.stderr[-3000:]}")
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    results[kind].append(r)
                    print(f"  {kind:6s} run {rep + 1}: {r['calls']} calls in {r['wall_s']:.2f} s "
                          f"({r['calls'] / r['wall_s']:.1f}/s)", file=sys.stderr, flush=True)
        finally:
            srv.kill()
            srv.wait()
    text = render(results, a, (load_before, " ".join(f"{x:.1f}" for x in os.getloadavg())))
    print(text)
    if not a.no_write:
        write_section(text, REPO / "docs" / "BENCHMARKS.md")
        print("appended to docs/BENCHMARKS.md", file=sys.stderr)


if __name__ == "__main__":
    main()
