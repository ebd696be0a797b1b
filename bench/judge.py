"""Benchmark of the judge harness against bare litellm, on a local server with real latency.

    .venv/bin/python bench/judge.py [--items 400] [--latency 0.2] [--concurrency 64] [--repeats 5]
                                    [--conditions quiet,cpu-bound] [--hogs 1] [--before DIR]
                                    [--no-write] [--kinds bare-stub,stub]

A local OpenAI-compatible server (tests/fakellm.py, in its own process) answers every request
after ``--latency`` seconds. A world of ``--items`` answers is judged with the six-criterion rubric
(tests/golden/rubrics/six.toml), so ``--mode split`` makes items x 6 calls (2,400 by default).
Each measurement runs in its own process, after litellm is imported (its ~3-5 s import is not
timed); the measurements are interleaved (their order rotates every repeat) and repeated, and the
harness/bare ratio is taken within each repeat (its median is reported), since the machine may be
shared:

* **bare**: the same 2,400 prompts sent with ``litellm.acompletion`` under ``asyncio.gather`` and an
  ``asyncio.Semaphore(concurrency)``, nothing else;
* **harness split**: ``evalcore.llm.judging.judge`` end to end: planning and rendering every prompt,
  the calls through the same litellm with retries armed, parsing and validating every reply,
  journaling each call with fsync, the progress line, and writing the run (Parquet);
* **harness single**: the same answers in ``--mode single`` (one call per answer);
* **harness split, litellm stubbed** (``stub``): the same ``judge`` with ``litellm.acompletion``
  replaced by a coroutine that sleeps ``--latency`` and returns the fake server's answer to the
  request (the answers are computed before the clock starts, looked up by the prompt's text): no
  HTTP, no litellm, the calls finishing as spread out as against the server; and **bare, stubbed**
  (``bare-stub``), the bare loop over the same stub. The stubbed harness's CPU per call minus the
  stubbed bare loop's is the harness's own CPU, measured without the noise of litellm's ~4-5 ms;
* **harness split before** (only with ``--before DIR``): the harness split measurement with the
  ``evalcore`` package taken from ``DIR/evalcore`` (a copy of an earlier version of the code, put
  first on ``sys.path``), in the same repeats; with it the stub is measured for both versions too.

Client CPU is the measurement process's user + system time (``resource.getrusage``, every thread)
over the timed part; **the harness's own CPU per call** is the harness's client CPU per call minus
bare litellm's, taken within each repeat (median reported).

Two conditions (``--conditions``, both by default):

* **quiet**: nothing pinned; the client has the machine's cores (as the issue's 0.94x);
* **cpu-bound**: the client is short of CPU. The server is pinned to the last core
  (``os.sched_setaffinity``), and each measurement process to core 0, which it shares with
  ``--hogs`` busy-loop processes (``python bench/judge.py --hog 0``, also pinned to core 0, started
  before the measurement process and killed after it). With one hog the client gets about half a
  core, so at 200 ms latency and 64 in flight its CPU, not the latency, sets the pace (bare litellm
  needs ~4-5 ms of client CPU per call: ~110 calls/s on half a core against 320/s the latency
  allows), while the server has a core of its own. This needs at least 2 cores.

It prints a markdown section and, unless ``--no-write``, appends it to docs/BENCHMARKS.md under
the heading "Judge harness" (replacing an earlier "Judge harness" section of this script, and
touching nothing else in the file).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
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
CONDITIONS = ("quiet", "cpu-bound")


def _prepare(data: Path, items: int) -> None:
    from fakellm import make_world
    make_world(data, items)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _stub(litellm, store, plan_kw: dict, latency: float) -> None:
    """Replace litellm.acompletion by the fake server's answers after ``latency`` s (computed now, not timed)."""
    from types import SimpleNamespace

    from fakellm import MODEL_REPORTED, deterministic_answer, prompt_text

    from evalcore.llm.plan import build_judge, make_judge_plan
    plan = make_judge_plan(store, **plan_kw)
    answers = {}
    for n, s in enumerate(build_judge(store, plan).specs):
        body = {"messages": s.messages, "seed": s.params.get("seed")}
        content = json.dumps(deterministic_answer(body), ensure_ascii=False)
        usage = SimpleNamespace(prompt_tokens=len(prompt_text(body)) // 4 + 7, completion_tokens=len(content) // 4 + 1)
        answers[s.messages[-1]["content"]] = SimpleNamespace(
            id=f"chatcmpl-stub-{n}", model=MODEL_REPORTED, usage=usage,
            choices=[SimpleNamespace(message=SimpleNamespace(content=content))])

    import asyncio

    async def acompletion(*, messages, **kw):
        await asyncio.sleep(latency)
        return answers[messages[-1]["content"]]

    litellm.acompletion = acompletion


def measure(kind: str, url: str, data: Path, state: Path, concurrency: int, run_id: str, latency: float) -> dict:
    """One measurement, in this process (the parent starts one process per measurement)."""
    import evalcore
    from evalcore.llm.client import load_litellm
    litellm = load_litellm()  # not timed
    from evalcore.llm.judging import JudgeRequest, judge
    from evalcore.llm.plan import RunOptions, build_judge, make_judge_plan
    from evalcore.storage.store import Store
    store = Store(data, state)
    where = str(Path(evalcore.__file__).resolve().parent.parent)
    if kind in ("bare", "bare-stub"):
        plan = make_judge_plan(store, gen_id="g", rubric_path=str(RUBRIC), mode="split", model=MODEL, run_id=run_id)
        if kind == "bare-stub":
            _stub(litellm, store, {"gen_id": "g", "rubric_path": str(RUBRIC), "mode": "split", "model": MODEL,
                                   "run_id": run_id + "-plan"}, latency)
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

        cpu0 = _cpu()
        wall = asyncio.run(main())
        return {"kind": kind, "calls": len(msgs), "wall_s": wall, "cpu_s": _cpu() - cpu0, "code": where}
    mode = "single" if kind == "single" else "split"
    if kind in ("stub", "stub-before"):
        _stub(litellm, store, {"gen_id": "g", "rubric_path": str(RUBRIC), "mode": mode, "model": MODEL,
                               "run_id": run_id + "-plan"}, latency)
    req = JudgeRequest(gen_id="g", rubric=str(RUBRIC), mode=mode, model=MODEL, rounds=1, run_id=run_id)
    opts = RunOptions(concurrency=concurrency, max_retries=4, timeout=60, backoff=1.0, api_base=url,
                      progress=True, progress_stream=open(os.devnull, "w"))
    cpu0 = _cpu()
    t0 = time.perf_counter()
    r = judge(store, req, opts)
    wall = time.perf_counter() - t0
    cpu = _cpu() - cpu0
    assert r["status"] == "complete" and r["failed_calls"] == 0, r
    from evalcore.storage.store import Store as S2
    v = S2(data, state).sql("SELECT criterion, passed, score, label, raw_verdict, position FROM read_parquet(?) "
                            "ORDER BY item_id, criterion", [str(Path(r["path"]) / "verdicts.parquet")])
    import hashlib
    return {"kind": kind, "calls": r["calls"], "verdicts": r["verdicts"], "wall_s": wall, "cpu_s": cpu,
            "tokens_in": r["tokens_in"], "tokens_out": r["tokens_out"], "code": where,
            "verdicts_hash": hashlib.sha256(repr(v).encode()).hexdigest()[:16]}


def _litellm_version() -> str:
    from importlib.metadata import version
    return version("litellm")


def _med(xs) -> float:
    return statistics.median(list(xs))


def _fmt_runs(v: list[dict]) -> str:
    return ", ".join(f"{x['wall_s']:.1f}" for x in v)


KIND_LABEL = {
    "bare": "bare `litellm.acompletion`, `asyncio.gather` + `Semaphore({c})`",
    "split-before": "`evalcore judge --mode split`, **before** (the code as found)",
    "split": "`evalcore judge --mode split` (plan, render, retries armed, parse, durable journal, progress, write "
             "the run)",
    "single": "`evalcore judge --mode single`",
    "bare-stub": "bare loop, litellm stubbed (sleeps the latency)",
    "stub-before": "harness split, litellm stubbed, **before**",
    "stub": "harness split, litellm stubbed",
}


def _stats(results: dict[str, list[dict]]) -> dict:
    calls = {k: v[0]["calls"] for k, v in results.items()}
    cpu = {k: [x["cpu_s"] / x["calls"] * 1000 for x in v] for k, v in results.items()}
    out: dict = {"calls": calls, "wall": {k: _med(x["wall_s"] for x in v) for k, v in results.items()},
                 "cpu": {k: _med(v) for k, v in cpu.items()}, "ratio": {}, "paired": {}, "own": {}, "own_paired": {}}
    out["tput"] = {k: calls[k] / out["wall"][k] for k in calls}
    for k in results:
        if k in ("bare", "bare-stub", "single"):
            continue
        base = "bare-stub" if k.startswith("stub") else "bare"
        if base not in results:  # a subset (--kinds) without its bare loop
            continue
        if not k.startswith("stub"):
            paired = [b["wall_s"] / s["wall_s"] for b, s in zip(results[base], results[k])]
            out["paired"][k], out["ratio"][k] = paired, _med(paired)
        own = [s - b for b, s in zip(cpu[base], cpu[k])]
        out["own_paired"][k], out["own"][k] = own, _med(own)
    return out


def render(results: dict[str, dict[str, list[dict]]], a: argparse.Namespace, load: tuple[str, str]) -> str:
    st = {c: _stats(r) for c, r in results.items()}
    conds = list(results)
    q = results.get("quiet") or results[conds[0]]
    sq = st.get("quiet") or st[conds[0]]
    before = "split-before" in q
    lines = [
        HEADING,
        "",
        f"`bench/judge.py` ({time.strftime('%Y-%m-%d')}; {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"litellm {_litellm_version()}). A local OpenAI-compatible server (`tests/fakellm.py`, its own process) "
        f"answers every request after {a.latency * 1000:.0f} ms. {a.items} stored answers judged with the "
        f"six-criterion rubric at concurrency {a.concurrency}: `--mode split` is {sq['calls']['split']:,} calls"
        + (f", `--mode single` {sq['calls']['single']:,}" if "single" in sq["calls"] else "")
        + f". Every measurement runs in its own process after "
        f"litellm's import (not timed); {a.repeats} repeats per condition, the measurements interleaved in each "
        f"(their order rotating). Client CPU is the measurement process's user + system time from `getrusage` over "
        f"the timed part; *own CPU* is the harness's client CPU per call minus bare litellm's in the same repeat "
        f"(median). *Stubbed*: `litellm.acompletion` replaced by a coroutine that sleeps {a.latency * 1000:.0f} ms and "
        f"returns the fake server's answer (computed before the clock starts), under the harness and under the bare "
        f"loop; the stubbed harness's CPU per call minus the stubbed bare loop's is the harness's own CPU without "
        f"litellm's noise. Load average before and after: {load[0]} / {load[1]} (the machine is shared, so single "
        f"runs vary; the ratio is taken within each repeat, where bare and harness ran back to back).",
        "",
        "Conditions: **quiet**, nothing pinned; **cpu-bound**, the server pinned to the last core and each "
        f"measurement process pinned to core 0 together with {a.hogs} busy-loop process{'es' if a.hogs > 1 else ''} "
        "(`os.sched_setaffinity`), so the client has about "
        + ("half a core" if a.hogs == 1 else f"1/{a.hogs + 1} of a core")
        + " and its CPU sets the pace."
        + (f" *Before* is the code as found, run from a copy (`--before {a.before}`) in the same repeats."
           if before else ""),
        "",
    ]
    for c in conds:
        r, s = results[c], st[c]
        lines += [
            f"**{c}** (concurrency {a.concurrency}):",
            "",
            "| measurement | calls | wall (s), median | every run (s) | calls/s (median) | client CPU per call "
            "| own CPU per call | throughput vs bare (median of repeats) |",
            "|---|---:|---:|---|---:|---:|---:|---:|",
        ]
        for k in r:
            own = f"{s['own'][k]:.3f} ms" if k in s["own"] else ""
            ratio = f"{s['ratio'][k]:.2f}x" if k in s["ratio"] else ""
            lines.append(
                f"| {KIND_LABEL[k].format(c=a.concurrency)} | {s['calls'][k]:,} | {s['wall'][k]:.2f} | "
                f"{_fmt_runs(r[k])} | {s['tput'][k]:.1f} | {s['cpu'][k]:.3f} ms | {own} | {ratio} |")
        lines.append("")
        for k in ("split-before", "split"):
            if k in s["ratio"]:
                lines.append(
                    f"* {c}, {KIND_LABEL[k].split(' (')[0]}: throughput {s['ratio'][k]:.2f}x bare litellm (per "
                    f"repeat: {', '.join(f'{x:.2f}' for x in s['paired'][k])}); own CPU per call per repeat: "
                    f"{', '.join(f'{x:.2f}' for x in s['own_paired'][k])} ms.")
        for k in ("stub-before", "stub"):
            if k in s["own"]:
                lines.append(
                    f"* {c}, {KIND_LABEL[k]}: own CPU per call (stubbed harness minus stubbed bare loop) per "
                    f"repeat: {', '.join(f'{x:.3f}' for x in s['own_paired'][k])} ms.")
        lines.append("")
    cb = st.get("cpu-bound")
    if cb is not None:
        ok = cb["ratio"]["split"] >= 0.9
        lines.append(
            f"* **CPU-bound client at concurrency {a.concurrency}: harness {cb['ratio']['split']:.2f}x bare litellm** "
            + (f"(before: {cb['ratio']['split-before']:.2f}x). " if "split-before" in cb["ratio"] else ". ")
            + "The bar is 0.9x: " + ("**met**." if ok else "**not met**."))
    if before:
        parts = []
        for c in conds:
            s = st[c]
            parts.append(f"{c} {s['own']['split-before']:.2f} -> {s['own']['split']:.2f} ms")
            if "stub" in s["own"] and "stub-before" in s["own"]:
                parts.append(f"stubbed ({c}) {s['own']['stub-before']:.3f} -> {s['own']['stub']:.3f} ms "
                             f"({s['own']['stub-before'] / s['own']['stub']:.1f}x less)")
        lines.append("* The harness's own CPU per call, before -> after: " + "; ".join(parts) + ". Since this "
                     "change the harness keeps the objects alive when a run starts (litellm's among them) out of the "
                     "garbage collector's full collections while it runs (`gc.freeze`, `evalcore.llm.engine."
                     "frozen_heap`), which spares litellm's own collections too: part of the unstubbed figure is "
                     "litellm's garbage collection, not the harness's; the stubbed figure has no litellm call in it.")
    if "single" in q:
        ideal = {k: sq["calls"][k] / a.concurrency * a.latency for k in ("split", "single")}
        sp, si = q["split"][0], q["single"][0]
        lines += [
            f"* Split against single (quiet): {sq['wall']['split']:.2f} s against {sq['wall']['single']:.2f} s of wall "
            f"time ({sq['wall']['split'] / sq['wall']['single']:.1f}x) for "
            f"{sq['calls']['split'] // sq['calls']['single']}x the calls. At {a.latency * 1000:.0f} ms per call with "
            f"{a.concurrency} in flight the floors are {ideal['split']:.1f} s and {ideal['single']:.1f} s; bare "
            f"litellm alone needs {sq['wall']['bare']:.2f} s for the split calls, with {sq['cpu']['bare']:.1f} ms of "
            f"client CPU per call ({sq['cpu']['bare'] * sq['calls']['bare'] / 1000:.1f} s in all), so on this machine "
            f"the client and the local server, not the latency, set the pace.",
            f"* Tokens: split sent {sp['tokens_in']:,} prompt tokens and received {sp['tokens_out']:,}; single "
            f"{si['tokens_in']:,} and {si['tokens_out']:,} ({sp['tokens_in'] / si['tokens_in']:.1f}x the prompt "
            f"tokens: each split call carries the question, context, reference and answer again; only the criteria "
            f"block differs).",
        ]
    hashes = {x["verdicts_hash"] for r in results.values() for k, v in r.items() if k.startswith(("split", "stub"))
              for x in v}
    lines += [f"* Verdicts: every split run, before and after, stubbed or not, wrote the same verdicts "
              f"({len(hashes)} distinct hash of the verdict table)." if len(hashes) == 1 else
              f"* Verdicts: **the split runs disagree** ({len(hashes)} distinct hashes of the verdict table).", ""]
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


def _hog(core: int) -> None:
    os.sched_setaffinity(0, {core})
    while True:
        pass


def _start_server(latency: float, port_file: Path, core: int | None) -> tuple[subprocess.Popen, str]:
    srv = subprocess.Popen([sys.executable, str(REPO / "tests" / "fakellm.py"), "--latency", str(latency),
                            "--port-file", str(port_file)], stdout=subprocess.DEVNULL)
    if core is not None:
        os.sched_setaffinity(srv.pid, {core})
    for _ in range(200):
        if port_file.exists() and port_file.read_text():
            break
        time.sleep(0.05)
    return srv, port_file.read_text()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=400)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--conditions", default=",".join(CONDITIONS), help="quiet, cpu-bound or both (comma-separated)")
    p.add_argument("--hogs", type=int, default=1, help="busy-loop processes sharing the client's core (cpu-bound)")
    p.add_argument("--before", default=None, help="a directory holding an earlier evalcore package, measured too")
    p.add_argument("--no-single", action="store_true", help="leave out the --mode single measurement")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--kinds", default="", help="only these measurements (comma-separated, e.g. bare-stub,stub)")
    p.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    p.add_argument("--hog", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--pin", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--code", default=None, help=argparse.SUPPRESS)
    p.add_argument("--url", default=None, help=argparse.SUPPRESS)
    p.add_argument("--data", default=None, help=argparse.SUPPRESS)
    p.add_argument("--state", default=None, help=argparse.SUPPRESS)
    p.add_argument("--run-id", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.hog is not None:
        _hog(a.hog)
        return
    if a.measure:
        if a.pin is not None:
            os.sched_setaffinity(0, {a.pin})
        if a.code:
            sys.path.insert(0, a.code)
        r = measure(a.measure, a.url, Path(a.data), Path(a.state), a.concurrency, a.run_id, a.latency)
        print(json.dumps(r))
        return
    conds = [c.strip() for c in a.conditions.split(",") if c.strip()]
    if any(c not in CONDITIONS for c in conds):
        raise SystemExit(f"--conditions: one or more of {', '.join(CONDITIONS)}")
    if "cpu-bound" in conds and (os.cpu_count() or 1) < 2:
        raise SystemExit("--conditions cpu-bound needs at least 2 cores")
    if a.before and not (Path(a.before) / "evalcore" / "__init__.py").exists():
        raise SystemExit(f"--before {a.before}: no evalcore package in it")
    kinds = ["bare", "split"] + (["split-before"] if a.before else []) + ([] if a.no_single else ["single"])
    kinds += ["bare-stub", "stub"] + (["stub-before"] if a.before else [])
    if a.kinds:
        want = [k.strip() for k in a.kinds.split(",") if k.strip()]
        if any(k not in kinds for k in want):
            raise SystemExit(f"--kinds: one or more of {', '.join(kinds)}")
        kinds = [k for k in kinds if k in want]
    last = (os.cpu_count() or 2) - 1
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    results: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="evalcore-bench-judge-") as tmp:
        t = Path(tmp)
        _prepare(t / "data", a.items)
        for cond in conds:
            bound = cond == "cpu-bound"
            srv, url = _start_server(a.latency, t / f"url-{cond}", last if bound else None)
            try:
                res: dict[str, list[dict]] = {k: [] for k in kinds}
                for rep in range(a.repeats):
                    order = kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]
                    for kind in order:
                        hogs = [subprocess.Popen([sys.executable, __file__, "--hog", "0"])
                                for _ in range(a.hogs if bound else 0)]
                        try:
                            cmd = [sys.executable, __file__, "--measure", kind.removesuffix("-before"), "--url", url,
                                   "--data", str(t / "data"), "--state", str(t / "state"),
                                   "--concurrency", str(a.concurrency), "--latency", str(a.latency),
                                   "--run-id", f"bench-{cond}-{kind}-{rep}"]
                            if bound:
                                cmd += ["--pin", "0"]
                            if kind.endswith("-before"):
                                cmd += ["--code", str(Path(a.before).resolve())]
                            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
                        finally:
                            for h in hogs:
                                h.kill()
                                h.wait()
                        if out.returncode != 0:
                            raise SystemExit(f"measurement {cond} {kind} failed:\n{out.stderr[-3000:]}")
                        r = json.loads(out.stdout.strip().splitlines()[-1])
                        want = str(Path(a.before).resolve()) if kind.endswith("-before") else str(REPO)
                        if r["code"] != want:
                            raise SystemExit(f"measurement {kind} ran the code in {r['code']}, not {want}")
                        res[kind].append(r)
                        print(f"  {cond:9s} {kind:12s} run {rep + 1}: {r['calls']} calls in {r['wall_s']:.2f} s "
                              f"({r['calls'] / r['wall_s']:.1f}/s), {r['cpu_s'] / r['calls'] * 1000:.2f} ms CPU/call",
                              file=sys.stderr, flush=True)
                results[cond] = res
            finally:
                srv.kill()
                srv.wait()
    if a.kinds:  # a subset: its figures only, never written into docs/BENCHMARKS.md
        print(json.dumps({c: {k: v for k, v in _stats(r).items()} for c, r in results.items()}, indent=1))
        for c, r in results.items():
            for k, v in r.items():
                print(f"{c} {k}: calls {v[0]['calls']}, client CPU s per run: "
                      + ", ".join(f"{x['cpu_s']:.3f}" for x in v) + ", wall s: " + ", ".join(f"{x['wall_s']:.2f}" for x in v))
        return
    text = render(results, a, (load_before, " ".join(f"{x:.1f}" for x in os.getloadavg())))
    print(text)
    if not a.no_write:
        write_section(text, REPO / "docs" / "BENCHMARKS.md")
        print("appended to docs/BENCHMARKS.md", file=sys.stderr)


if __name__ == "__main__":
    main()
