"""The comparison table of two bench/compare_models.py results plus what the replies said (docs/JUDGE.md,
"Which model the tests run, and why").

    .venv/bin/python bench/compare_models_table.py OUT-GEMMA OUT-SMOL  (judge-pairs from a second pair of
    outputs: STEPS=pairs bench/compare_models.py ...)
"""

import json
import sys
from collections import Counter
from pathlib import Path

import duckdb


def verdicts(d: Path, run: str) -> str:
    files = sorted((d / "data").glob(f"runs/{run}/**/verdicts*.parquet"))
    if not files:
        return "-"
    rows = duckdb.connect().sql(f"SELECT criterion, raw_verdict FROM read_parquet({[str(f) for f in files]})").fetchall()
    c = Counter((k, v) for k, v in rows)
    return ", ".join(f"{k} pass {c[(k, 'pass')]}/{sum(n for (kk, _), n in c.items() if kk == k)}"
                     for k in sorted({k for k, _ in c}))


def placeholders(d: Path) -> str:
    files = sorted((d / "data").glob("generations/g/**/outputs*.parquet"))
    outs = [r[0] or "" for r in duckdb.connect().sql(f"SELECT output FROM read_parquet({[str(f) for f in files]})").fetchall()]
    return f"{sum('<your' in o or '<context' in o for o in outs)}/{len(outs)} answers copy the prompt's placeholder"


def pairs(d: Path) -> str:
    d = d.with_name("p-" + d.name[2:])  # judge-pairs ran again on its own server (p-*): see bench.py's STEPS
    if not (d / "result.json").exists():
        return "-"
    files = sorted((d / "data").glob("runs/pairs/**/pair_verdicts*.parquet"))
    rows = duckdb.connect().sql(f"SELECT \"order\", choice FROM read_parquet({[str(f) for f in files]})").fetchall()
    return str(dict(Counter(f"{o}:{c}" for o, c in rows)))


for d in map(Path, sys.argv[1:]):
    r = json.loads((d / "result.json").read_text())
    p = d.with_name("p-" + d.name[2:]) / "result.json"
    if p.exists():
        r["steps"]["pairs"] = json.loads(p.read_text())["steps"]["pairs"]
    print(f"## {r['model']}  load {r['load_s']} s, wall {r['wall_total_s']} s, server CPU {r['server_cpu_total_s']} s")
    print("| step | calls parsed | requests (cut at max_tokens) | tokens in / out | wall s | server CPU s | client CPU s |")
    for k, s in r["steps"].items():
        print(f"| {k} | {s['calls'].get('parsed', 0)} of {sum(s['calls'].values())} | {s['requests']} "
              f"({s['finish'].get('length', 0)}) | {s['tokens_in']} / {s['tokens_out']} | {s['wall_s']} | "
              f"{s['server_cpu_s']} | {s['client_cpu_s']} |")
    print("generation:", placeholders(d))
    print("single:", verdicts(d, "single"))
    print("split:", verdicts(d, "split"))
    print("pairs:", pairs(d))
    reqs = [json.loads(x) for x in (d / "llm-requests.jsonl").read_text().splitlines()]
    judged = [r for r in reqs if '"verdict"' in (r.get("content") or "")]
    print(f"judge replies whose reason copies the prompt's '<why>': {sum('<why' in r['content'] for r in judged)}"
          f" of {len(judged)}")
