"""People's labels column by column (evalcore.review.raters) give exactly what the per-label Python
they replaced gave (kept here as the reference): on randomised worlds of shipped label sets (fixed
annotators, rater slots, published means, labels that code to no category, one annotator in two
sets) and reviewers' decisions (unanimous, split, adjudicated, pending, a reviewer who shares an
annotator's name), whole and sliced by item class: the same labels in the same order, the same gold
and counts, the same agreement between people on every criterion."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from evalcore import LabelStore, Store
from evalcore import contract as S
from evalcore.review import raters as P
from evalcore.review.judges import scale_of
from evalcore.stats import agreement as A
from evalcore.storage.gold import gold as settle

CRITERIA = [
    S.Criterion(name="ok", kind="binary"),
    S.Criterion(name="corr", kind="ternary"),
    S.Criterion(name="score", kind="ordinal", scale_min=1, scale_max=5, threshold=3),
]
ANNOTATORS = ["ann", "bob", "cy", "slot1", "slot2", "mean"]


# ----------------------------------------------------------------- the reference (the code replaced)

def ref_rows(labels, gen_id, crits, shipped):
    out = []
    for e in labels.standing(gen_id):
        if e["outcome"] != "decided" or e.get("role") == "adjudicator":
            continue
        cat = P.label_category(crits.get(e["criterion"]), e["value"], e["passed"])
        if cat is not None:
            out.append({"rater": e["reviewer"], "source": "state", "item_id": e["item_id"],
                        "gen_round": int(e["gen_round"]), "criterion": e["criterion"], "value": cat})
    for source, path in shipped:  # each set in its file's order
        t = pq.read_table(path, columns=["item_id", "gen_round", "criterion", "annotator", "value", "passed"])
        for item_id, gen_round, criterion, annotator, value, passed in zip(*(t[c].to_pylist() for c in t.column_names)):
            cat = P.label_category(crits.get(criterion), value, passed)
            if cat is not None:
                out.append({"rater": annotator, "source": source, "item_id": item_id, "gen_round": int(gen_round),
                            "criterion": criterion, "value": cat})
    return out


def ref_gold(rows, state, crits):
    gold, counts, decided_here = {}, Counter(), set()
    for g in state:
        key = (g["item_id"], int(g["gen_round"]), g["criterion"])
        decided_here.add(key)
        if g["status"] == "gold":
            cat = P.label_category(crits.get(g["criterion"]), g["value"], g["passed"])
            if cat is not None:
                gold[key] = {"value": cat, "source": "state", "raters": g["decided"], "gold_from": g["gold_from"]}
                counts["state"] += 1
        elif g["status"] == "reviewers_disagree":
            counts["split"] += 1
        elif g["status"] == "pending":
            counts["pending"] += 1
    shipped, means = {}, {}
    for r in rows:
        key = (r["item_id"], r["gen_round"], r["criterion"])
        if r["source"] == "state" or key in decided_here:
            continue
        (means if r["rater"] == P.MEAN else shipped).setdefault(key, []).append(r["value"])
    for key in {**dict.fromkeys(shipped), **dict.fromkeys(means)}:
        vals = means.get(key) or shipped[key]
        top = max(set(vals), key=vals.count)
        if 2 * vals.count(top) > len(vals):
            gold[key] = {"value": top, "source": "shipped", "raters": len(vals), "gold_from": "shipped"}
            counts["shipped"] += 1
        else:
            counts["split"] += 1
    return gold, {k: counts[k] for k in ("state", "shipped", "split", "pending")}


def ref_stats(rows, cats, weights, level):
    code = {c: k for k, c in enumerate(cats)}
    raters = sorted({r["rater"] for r in rows if r["rater"] != P.MEAN})
    units = sorted({(r["item_id"], r["gen_round"]) for r in rows if r["rater"] != P.MEAN})
    out = {"raters": raters, "slots": [r for r in raters if P.is_slot(r)], "cohen": [], "fleiss": None,
           "krippendorff": None}
    if len(raters) < 2:
        out["reason"] = "fewer than two raters"
        return out
    ui, ri = {u: k for k, u in enumerate(units)}, {r: k for k, r in enumerate(raters)}
    mat = np.full((len(raters), len(units)), A.MISSING, dtype=np.int64)
    for r in rows:
        if r["rater"] != P.MEAN:
            mat[ri[r["rater"]], ui[(r["item_id"], r["gen_round"])]] = code[r["value"]]
    fixed = [r for r in raters if not P.is_slot(r)]
    for i, a in enumerate(fixed):
        for b in fixed[i + 1:]:
            x, y = mat[ri[a]], mat[ri[b]]
            both = (x != A.MISSING) & (y != A.MISSING)
            s = A.cohen_kappa(x[both], y[both], len(cats), weights)
            out["cohen"].append({"a": a, "b": b, "n": int(both.sum()), "kappa": s.value, "reason": s.reason,
                                 "agreement": float(np.mean(x[both] == y[both])) if both.any() else None})
    full = np.all(mat != A.MISSING, axis=0)
    table = (np.stack([np.sum(mat[:, full] == k, axis=0) for k in range(len(cats))], axis=1) if full.any()
             else np.zeros((0, len(cats))))
    f = A.fleiss_kappa(table)
    out["fleiss"] = {"n": int(full.sum()), "raters": len(raters), "kappa": f.value, "reason": f.reason}
    al = A.krippendorff_alpha(mat, level, k=len(cats))
    out["krippendorff"] = {"n": int(np.sum(np.sum(mat != A.MISSING, axis=0) >= 2)), "level": level,
                           "alpha": al.value, "reason": al.reason}
    return out


# ----------------------------------------------------------------- the worlds

def _value(rng, crit):
    if rng.random() < 0.05:
        return None, None  # codes to no category
    if crit.kind == "binary":
        p = rng.random() < 0.6
        return ("pass" if p else "fail"), p
    if crit.kind == "ternary":
        v = rng.choice(["correct", "partial", "wrong", "Correct ", "maybe"])
        return v, v.strip().lower() == "correct"
    v = rng.choice(["1", "2", "3", "4", "5", "4.4", "seven"])
    return v, None


def make_world(root: Path, seed: int) -> tuple[Store, dict]:
    from conftest import make_tiny

    rng = random.Random(seed)
    data, state = root / "data", root / "state"
    make_tiny(data)
    st = Store(data, state)
    n_items = rng.randint(4, 30)
    items = [{"item_id": f"q{k:02d}", "input": f"question {k}", "must_have": ["x"], "class": rng.choice("ab"),
              "holdout": False} for k in range(n_items)]
    sm = S.SuiteManifest(suite_id="ps", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items),
                         n_items=n_items)
    st.write_suite(sm, items)
    outputs = [{"item_id": i["item_id"], "round": r, "output": "o", "latency_ms": 1.0} for i in items for r in (1, 2)]
    st.write_generation(S.GenerationManifest(
        gen_id="pg", suite_id="ps", suite_hash=sm.content_hash, created_at="2026-01-01T00:00:00Z",
        source="imported", outputs_hash=S.content_hash(outputs), rounds=2), outputs)
    rubric = S.Rubric(criteria=CRITERIA)
    verdicts, calls = [], []  # a run judges the criteria (what reviewers may decide on)
    for i in items:
        cid = f"c-{i['item_id']}"
        calls.append({"call_id": cid, "item_id": i["item_id"], "gen_round": 1, "judge_round": 1,
                      "criteria": [c.name for c in CRITERIA], "tokens_in": 1, "tokens_out": 1, "cost_usd": 0.0,
                      "latency_ms": 1.0})
        for pos, c in enumerate(CRITERIA):
            verdicts.append({"run_id": "pr", "item_id": i["item_id"], "gen_round": 1, "criterion": c.name,
                             "judge_round": 1, "passed": True, "raw_verdict": "x", "position": pos, "call_id": cid,
                             **({"score": 4.0} if c.kind == "ordinal" else {}),
                             **({"label": "correct"} if c.kind == "ternary" else {})})
    st.write_run(S.RunManifest(run_id="pr", gen_id="pg", created_at="2026-01-01T00:00:00Z", rubric=rubric,
                               rubric_hash=rubric.hash(), mode="single", field_order=[c.name for c in CRITERIA],
                               judge_model="m", source="imported", judge_rounds=1), verdicts, calls)
    for s in range(rng.randint(0, 3)):
        who = rng.sample(ANNOTATORS, rng.randint(1, len(ANNOTATORS)))
        rows = []
        for i in items:
            for r in (1, 2):
                for c in CRITERIA:
                    for a in who:
                        if rng.random() < 0.7:
                            v, p = _value(rng, c)
                            rows.append({"item_id": i["item_id"], "gen_round": r, "criterion": c.name,
                                         "annotator": a, "value": v, "passed": p})
        if rows:
            st.write_labelset(S.LabelSetManifest(labelset_id=f"set{s}", gen_id="pg", created_at="2026-01-01T00:00:00Z",
                                                 annotators=who, rubric=rubric), rows)
    labels = LabelStore(st)
    for _ in range(rng.randint(0, 40)):
        i, c = rng.choice(items), rng.choice(CRITERIA)
        v, _p = _value(rng, c)
        if v is None or v in ("maybe", "seven"):
            continue
        labels.add(gen_id="pg", item_id=i["item_id"], gen_round=rng.choice((1, 2)), criterion=c.name,
                   value=v.strip().lower() if c.kind != "ordinal" else str(int(round(float(v)))),
                   reviewer=rng.choice(["rev1", "rev2", "ann"]),
                   role="adjudicator" if rng.random() < 0.1 else "reviewer")
    return st, {c.name: c for c in CRITERIA}


@pytest.mark.parametrize("seed", range(12))
def test_people_gold_and_agreement_equal_the_per_label_reference(tmp_path, seed):
    st, crits = make_world(tmp_path, seed)
    labels = LabelStore(st)
    shipped = [(f"shipped:{lid}", st.path_of("labelset", lid, "labels")) for lid in st.ids("labelset")]
    for classes in ((), ("a",)):
        keep = {r[0] for r in st.sql("SELECT item_id, class FROM read_parquet(?)", [st.path_of("suite", "ps", "items")])
                if not classes or r[1] in classes}
        cut = ("class IN ('a')", []) if classes else ("", [])
        got = P.people(st, "pg", crits, cut)
        want = [r for r in ref_rows(labels, "pg", crits, shipped) if r["item_id"] in keep]
        assert got.rows() == want, (seed, classes)
        state = [g for g in settle(labels, "pg") if g["item_id"] in keep]
        gold, counts = P.gold_of(got, state, crits)
        assert (gold, counts.to_dict()) == ref_gold(want, state, crits), (seed, classes)
        for name, crit in crits.items():
            cats, weights, level = scale_of(crit)
            mine = P.rater_stats(got.of(name), cats, weights, level).to_dict()
            theirs = ref_stats([r for r in want if r["criterion"] == name], cats, weights, level)
            assert mine == theirs, (seed, classes, name)
            # and the same from dict rows (a pairwise session's path)
            again = P.rater_stats(P.People.from_rows([r for r in want if r["criterion"] == name]), cats, weights, level)
            assert again.to_dict() == theirs, (seed, classes, name)
    assert len(shipped) == 0 or len(got) > 0  # (a world with label sets labels something)
