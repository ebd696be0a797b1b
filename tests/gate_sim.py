"""Simulated identical-versus-identical comparisons for tests/test_gate_noise.py, written straight
into a Store with numpy (no model, no import step): the shape of the issue's simulation.

Per item of 60: 60% stable pass, 20% stable fail, 20% a coin flip each generation round; three
generation rounds; one judge round; one binary criterion ``ok`` (so all_pass equals ok). Both arms
of a comparison draw alike; ``gain_items`` stable-fail items of the candidate pass instead (a real
gain of gain_items / 60).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

N_ITEMS, ROUNDS = 60, 3
KINDS = np.array([0] * 36 + [1] * 12 + [2] * 12)  # 0 stable pass, 1 stable fail, 2 coin flip


def make_world(data: Path, n_pairs: int, seed: int, gain_items: int = 0) -> list[tuple[str, str]]:
    from evalcore import contract as S
    from evalcore.storage.store import Store

    rng = np.random.default_rng(seed)
    data.mkdir(parents=True, exist_ok=True)
    st = Store(data, data.parent / "unused-state")
    items = [{"item_id": f"q{k:02d}", "input": f"question {k}", "class": "c", "holdout": False} for k in range(N_ITEMS)]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items),
                         n_items=N_ITEMS)
    st.write_suite(sm, items)
    rubric = S.Rubric(criteria=[S.Criterion(name="ok", kind="binary")])
    knobs = {"generator_model": "sys-2026-01-01", "temperature": 0.7, "writer_prompt_hash": "sha256:same"}
    pairs = []
    for p in range(n_pairs):
        ids = []
        for arm in ("a", "b"):
            passed = np.where(KINDS[:, None] == 0, True, np.where(KINDS[:, None] == 1, False,
                                                                   rng.random((N_ITEMS, ROUNDS)) < 0.5))
            if arm == "b" and gain_items:
                passed[np.flatnonzero(KINDS == 1)[:gain_items]] = True
            gid, rid = f"g{p}{arm}", f"r{p}{arm}"
            outputs = [{"item_id": f"q{k:02d}", "round": r + 1, "output": "x", "latency_ms": 100.0}
                       for k in range(N_ITEMS) for r in range(ROUNDS)]
            gm = S.GenerationManifest(gen_id=gid, suite_id="s", suite_hash=sm.content_hash,
                                      created_at="2026-01-02T00:00:00Z", knobs=knobs, rounds=ROUNDS,
                                      source="imported", outputs_hash=S.outputs_hash(outputs))
            st.write_generation(gm, outputs)
            verdicts = [{"run_id": rid, "item_id": f"q{k:02d}", "gen_round": r + 1, "criterion": "ok",
                         "judge_round": 1, "passed": bool(passed[k, r]), "position": 0}
                        for k in range(N_ITEMS) for r in range(ROUNDS)]
            rm = S.RunManifest(run_id=rid, gen_id=gid, created_at="2026-01-02T01:00:00Z", rubric=rubric,
                               rubric_hash=rubric.hash(), mode="single", field_order=["ok"],
                               judge_model="judge-2026-01-01", temperature=0.0, prompt_hash="sha256:p",
                               source="imported", judge_rounds=1)
            st.write_run(rm, verdicts, [])
            ids.append(rid)
        pairs.append((ids[0], ids[1]))
    return pairs
