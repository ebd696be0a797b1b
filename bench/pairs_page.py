"""The Pairwise results page of a SIMULATED 10-arm, 5,000-judgment session, as a fresh server's first
request, with the stored ranking and without it (issue 43: first render <= 1 s).

    nice -n 10 .venv/bin/python bench/pairs_page.py [--runs 3] [--items 500] [--pairs-per-item 10]
                                                    [--reviewers 5] [--out /tmp/evalcore-bench/pairs-page]

The world (SIMULATED): tests/test_pairs.py's ``make_world`` with ten generations over ``--items``
items (answers of different mean lengths per arm), a session made by ``pairs make``'s function
(:func:`evalcore.pairwise.make_session`, 10 arms, ``--pairs-per-item`` pairs per item, no mirrors or
holdouts, the identifiability permutations off: they are the make's cost, not the page's), one
judgment per pair by ``--reviewers`` people in turn, drawn from a seeded Bradley-Terry world with
Davidson ties (strengths evenly from +1 to -1, tie parameter log nu = -1), written through the
judgment store; then ``pairs close``'s function with the keys, and
:func:`evalcore.pairwise.rankstore.refresh` (the close's step that stores the ranking): both timed.

Then, ``--runs`` times each: bench/pages.py's ``measure`` (a fresh ``streamlit run app.py``, headless
Chromium, the page the server's first request, its render to the main table: the time from the
navigation to the last WebSocket message once it is drawn) for

* **stored**: page 8 (``?session=``) over a copy of the state directory with ``report.json``;
* **computed**: the same with ``report.json`` deleted before the server starts (the page computes);
* **floor**: bench/pages.py's ``FLOOR_APP`` (a Streamlit title and a three-row table), same run.

Also ``report()`` in this process with the file and without it (CPU seconds). A markdown table on
stdout; JSON in ``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

SESSION = "sim10"
ARMS = tuple(f"arm-{c}" for c in "abcdefghij")


def _bench_pages() -> Any:
    """bench/pages.py under another name (``pages`` is the app's package)."""
    spec = importlib.util.spec_from_file_location("bench_pages", ROOT / "bench" / "pages.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(root: Path, items: int, per_item: int, reviewers: int, seed: int = 7) -> dict[str, Any]:
    """The SIMULATED world, session and judgments, closed and its ranking stored; the seconds of each step."""
    from test_pairs import make_world

    from evalcore import pairwise as P
    from evalcore.pairwise import rankstore
    from evalcore.pairwise.grading import JudgmentStore

    styles = tuple((60 + 12 * a, 0.3, 0.3) for a in range(len(ARMS)))
    t = time.perf_counter()
    w = make_world(root, ARMS, n_items=items, seed=seed, styles=styles)  # type: ignore[arg-type]
    st = w["store"]
    P.make_session(st, SESSION, [f"{a}={g}" for a, g in zip(ARMS, w["gens"])], keys_dir=w["keys"], seed=seed,
                   key_seed=seed + 1, n_perm=0, pairs_per_item=per_item, simulated=True)  # fmt: skip
    out: dict[str, Any] = {"make_s": round(time.perf_counter() - t, 1)}
    key = {r["pair_id"]: r for r in pq.read_table(w["keys"] / SESSION / "key.parquet").to_pylist()}
    beta = dict(zip(ARMS, np.linspace(1.0, -1.0, len(ARMS))))
    nu = np.exp(-1.0)
    rng = np.random.default_rng(seed)
    js = JudgmentStore(st)
    t = time.perf_counter()
    pairs = P.load_pairs(st, SESSION)
    for n, p in enumerate(pairs):
        k = key[p["pair_id"]]
        a, b = np.exp(beta[k["left_arm"]]), np.exp(beta[k["right_arm"]])
        tie = nu * np.sqrt(a * b)
        u = rng.random() * (a + b + tie)
        choice = "left" if u < a else "right" if u < a + b else "same"
        js.add(SESSION, p["pair_id"], f"reviewer-{n % reviewers}", choice, float(rng.gamma(4.0, 8.0)), via="bench")
    out["judge_s"] = round(time.perf_counter() - t, 1)
    out["pairs"] = len(pairs)
    t0 = time.perf_counter()
    P.close_session(st, SESSION, w["keys"], n_perm=0)
    t1 = time.perf_counter()
    rankstore.refresh(st, SESSION)
    t2 = time.perf_counter()
    out.update(close_s=round(t1 - t0, 2), refresh_s=round(t2 - t1, 2), close_total_s=round(t2 - t0, 2))
    out.update(data=w["data"], state=w["state"], store=st)
    return out


def in_process(st: Any) -> dict[str, float]:
    """report() with the stored file and computed (the file moved away and back): CPU seconds."""
    from evalcore import pairwise as P
    from evalcore.pairwise import rankstore

    path = rankstore.report_path(st, SESSION)
    c = time.process_time()
    P.report(st, SESSION)
    stored = time.process_time() - c
    keep = path.read_bytes()
    path.unlink()
    c = time.process_time()
    P.report(st, SESSION)
    computed = time.process_time() - c
    path.write_bytes(keep)
    return {"report_stored_cpu_s": round(stored, 3), "report_computed_cpu_s": round(computed, 2)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--pairs-per-item", type=int, default=10)
    ap.add_argument("--reviewers", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--max-wait", type=float, default=10, help="at most this long waiting for a quiet machine")
    ap.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench/pairs-page"))
    a = ap.parse_args(argv)
    bp = _bench_pages()
    bp.PAGES["pairwise-results"] = f"/pairwise_results?session={SESSION}"
    bp.MAIN_OF.pop("pairwise-results", None)  # its main element: the ranking's table
    a.out.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="evalcore-pairs-page-") as tmp_:
        tmp = Path(tmp_)
        w = build(tmp / "world", a.items, a.pairs_per_item, a.reviewers)
        info = {k: v for k, v in w.items() if k not in ("data", "state", "store")}
        info.update(in_process(w["store"]))
        print(json.dumps(info), file=sys.stderr)
        stored = tmp / "state-stored"
        shutil.copytree(w["state"], stored)
        bare = tmp / "state-computed"
        shutil.copytree(w["state"], bare)
        (bare / "sessions" / SESSION / "report.json").unlink()
        for k in range(a.runs):
            for variant, name, state in (("floor", "floor", None), ("stored", "pairwise-results", stored),
                                         ("computed", "pairwise-results", bare)):  # fmt: skip
                d = tmp / f"{variant}-{k}"
                d.mkdir()
                load = bp.wait_quiet(a.max_wait)
                r = bp.measure(w["data"], name, k, d, "1", a.timeout, state, first_request=True)
                r.update(variant=variant, load_waited=load)
                print(json.dumps(r), file=sys.stderr)
                rows.append(r)
                (a.out / f"{variant}-{k}.json").write_text(json.dumps(r, indent=1))
    finished = time.strftime("%H:%M", time.gmtime())
    (a.out / "summary.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1, default=str))
    print(table(rows, info, started, finished))


def table(rows: list[dict[str, Any]], info: dict[str, Any], started: str, finished: str) -> str:
    med = {
        v: statistics.median(r["cold_s"] for r in rows if r["variant"] == v) for v in ("floor", "stored", "computed")
    }
    lines = [
        f"SIMULATED: {len(ARMS)} arms, {info['pairs']:,} pairs, {info['pairs']:,} judgments by people; page 8 as a "
        f"fresh server's first request, {len({r['run'] for r in rows})} fresh servers each; {started} - {finished} UTC; "
        f"load (1-min) before each: {' / '.join(str(r['load_before'][0]) for r in rows)}; cores: {os.cpu_count()}.",
        "",
        "| page | first render s (runs) | p50 s | / floor p50 | server CPU in the render s (p50) | errors |",
        "|---|---|--:|--:|--:|---|",
    ]
    for v, label in (("stored", "Pairwise results, stored report"), ("computed", "Pairwise results, computed"),
                     ("floor", "floor (FLOOR_APP)")):  # fmt: skip
        rs = [r for r in rows if r["variant"] == v]
        lines.append(
            f"| {label} | {' / '.join(f'{x:.2f}' for x in (r['cold_s'] for r in rs))} | {med[v]:.2f} | {med[v] / med['floor']:.1f}x | "
            f"{statistics.median(r['cold_cpu_s'] or 0 for r in rs):.2f} | {sum(len(r['errors']) for r in rs)} |"
        )
    lines += [
        "",
        f"Close: `close_session` {info['close_s']:.2f} s + `rankstore.refresh` {info['refresh_s']:.2f} s "
        f"= {info['close_total_s']:.2f} s wall. In process: `report()` {info['report_stored_cpu_s']:.3f} CPU-s "
        f"stored, {info['report_computed_cpu_s']:.2f} CPU-s computed.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
