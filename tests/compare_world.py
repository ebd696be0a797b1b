"""A hand-built world for the compare, gate and ledger tests: one suite of 30 items, a baseline and a
candidate generation with three generation rounds each, and one run over each (one judge round,
two criteria: ``ok`` decides, ``tone`` always passes, so all_pass equals ok).

Pass pattern of ``ok`` per item over rounds r1 r2 r3 (1 = pass):

* q00-q11: baseline 0 0 0, candidate 1 1 0  -> better in two rounds of three: not a stable win
* q12:     baseline 1 1 1, candidate 0 0 0  -> worse in every round: THE stable regression (and a new miss)
* q13-q15: baseline 1 1 0, candidate 1 1 1  -> better in round 3 only
* q16-q29: baseline 1 1 1, candidate 1 1 1  -> equal

Derived by hand (tests assert these):
  per-round all_pass, baseline: r1 18/30, r2 18/30, r3 15/30 -> spread 3/30
  per-round all_pass, candidate: r1 29/30, r2 29/30, r3 17/30 -> spread 12/30 = noise floor 0.4
  per-item deltas: 12 x (+2/3), 1 x (-1), 3 x (+1/3), 14 x 0 -> mean (8 - 1 + 1) / 30 = 8/30
  stable wins 0, stable regressions 1 (q12); new misses: q12 only (q00-q11 pass in some round)
  the gain (+26.7 pts) lies inside the noise floor (40 pts): the gate cannot pass it.

With ``strong=True`` the candidate passes q00-q11 in every round (12 stable wins):
  candidate r1 29/30, r2 29/30, r3 29/30 -> spread 0; noise floor 3/30 (the baseline's)
  per-item deltas: 12 x (+1), 1 x (-1), 3 x (+1/3), 14 x 0 -> mean 12/30 = 0.4, beyond the noise floor
"""

from __future__ import annotations

from pathlib import Path

N = 30
ROUNDS = (1, 2, 3)


def pattern(item: int, strong: bool = False) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    if item < 12:
        return (0, 0, 0), ((1, 1, 1) if strong else (1, 1, 0))
    if item == 12:
        return (1, 1, 1), (0, 0, 0)
    if item < 16:
        return (1, 1, 0), (1, 1, 1)
    return (1, 1, 1), (1, 1, 1)


GEN_KNOBS = {"generator_model": "sys-model-2026-01-01", "temperature": 0.7, "writer_prompt_hash": "sha256:aaaa",
             "revision_budget": 1, "token_budget": 800, "corpus_snapshot": "corpus-2026-01", "retrieval": "bm25 k=4"}


def make_compare_world(data: Path, *, candidate_knobs: dict | None = None, holdout: tuple[int, ...] = (),
                       strong: bool = False, latency_ms: tuple[float, float] = (20.0, 20.0),
                       candidate_items: int = N, status: str = "complete") -> None:
    """``latency_ms``: the system's latency per answer of (baseline, candidate); ``candidate_items``:
    the candidate answers only the first this many items; ``status``: the candidate run's status."""
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data.mkdir(parents=True, exist_ok=True)
    st = Store(data, data.parent / "unused-state")
    items = [{"item_id": f"q{k:02d}", "input": f"question {k}", "class": "c", "holdout": k in holdout}
             for k in range(N)]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items), n_items=N)
    st.write_suite(sm, items)
    rubric = S.Rubric(criteria=[S.Criterion(name="ok", kind="binary"), S.Criterion(name="tone", kind="binary")])
    for arm, idx, knobs, hour in (("base", 0, GEN_KNOBS, 1), ("cand", 1, {**GEN_KNOBS, **(candidate_knobs or
                                                                                          {"writer_prompt_hash": "sha256:bbbb"})}, 2)):
        n_items = N if idx == 0 else candidate_items
        outputs = [{"item_id": f"q{k:02d}", "round": r, "output": f"{arm} answer {k} r{r}", "tokens_in": 100,
                    "tokens_out": 50 + 10 * idx, "cost_usd": 0.001, "latency_ms": latency_ms[idx] * (1 + k % 3)}
                   for k in range(n_items) for r in ROUNDS]
        gm = S.GenerationManifest(gen_id=f"g-{arm}", suite_id="s", suite_hash=sm.content_hash,
                                  created_at=f"2026-01-0{hour}T00:00:00Z", knobs=knobs, rounds=3, source="imported",
                                  outputs_hash=S.outputs_hash(outputs),
                                  totals=S.Totals(calls=N * 3, tokens_in=100 * N * 3, tokens_out=(50 + 10 * idx) * N * 3,
                                                  cost_usd=0.001 * N * 3))
        st.write_generation(gm, outputs)
        verdicts, calls = [], []
        for k in range(n_items):
            pat = pattern(k, strong)[idx]
            for r in ROUNDS:
                cid = f"{arm}-{k}-{r}"
                calls.append({"call_id": cid, "item_id": f"q{k:02d}", "gen_round": r, "judge_round": 1,
                              "criteria": ["ok", "tone"], "tokens_in": 300, "tokens_out": 40, "cost_usd": 0.002,
                              "latency_ms": 30.0})
                for pos, (crit, ok) in enumerate((("ok", bool(pat[r - 1])), ("tone", True))):
                    verdicts.append({"run_id": f"r-{arm}", "item_id": f"q{k:02d}", "gen_round": r, "criterion": crit,
                                     "judge_round": 1, "passed": ok, "raw_verdict": "pass" if ok else "fail",
                                     "position": pos, "call_id": cid})
        rm = S.RunManifest(run_id=f"r-{arm}", gen_id=f"g-{arm}", created_at=f"2026-01-0{hour}T01:00:00Z", rubric=rubric,
                           rubric_hash=rubric.hash(), mode="single", field_order=["ok", "tone"],
                           judge_model="judge-2026-01-01", temperature=0.0, prompt_hash="sha256:judgeprompt",
                           source="imported", judge_rounds=1, status=status if idx == 1 else "complete",
                           totals=S.Totals(calls=N * 3, tokens_in=300 * N * 3, tokens_out=40 * N * 3,
                                           cost_usd=0.002 * N * 3))
        st.write_run(rm, verdicts, calls)


def add_rejudge(data: Path, run_id: str = "r-base-judge2", judge_model: str = "judge-2026-06-01") -> None:
    """A second run over the baseline's answers by another judge model (a measurement change):
    it reads q12 as failing in round 3."""
    from datetime import datetime, timezone

    from evalcore.storage.store import Store

    st = Store(data, data.parent / "unused-state")
    base = st.run("r-base")
    m = base.manifest.model_copy(update={"run_id": run_id, "judge_model": judge_model,
                                         "created_at": datetime(2026, 1, 5, tzinfo=timezone.utc)})
    rows = st.records("SELECT * FROM read_parquet(?)", [st.path_of("run", "r-base", "verdicts")])
    for r in rows:
        r["run_id"] = run_id
        if r["item_id"] == "q12" and r["gen_round"] == 3 and r["criterion"] == "ok":
            r["passed"], r["raw_verdict"] = False, "fail"
    calls = st.records("SELECT * FROM read_parquet(?)", [st.path_of("run", "r-base", "calls")])
    st.write_run(m, rows, calls)
