"""Compare, the per-round figures, the trend and the gate read the runs' answers tables
(evalcore.storage.aggregates, through evalcore.analysis.selection.mask_sql) when every run involved
has one, and the verdict rows otherwise: the output is the same either way (EVALCORE_DERIVED=1 vs
0, floats to 12 significant digits), on the demo, on the hand-built compare world (with holdout
items, strong or not) and on randomised worlds of two generations of one suite (several generation
rounds, 1-3 judge rounds, errored and missing verdicts, holdout items, item classes, criteria in
different orders, a partial second generation, a ternary run that must fall back)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest
from compare_world import make_compare_world
from derived_util import norm as _norm

from evalcore import contract as S
from evalcore.analysis import comparecounts as CC
from evalcore.analysis import comparison as C
from evalcore.analysis import gating as G
from evalcore.analysis.cost import answer_latency
from evalcore.analysis.selection import Selection, mask_sql
from evalcore.storage.store import Store

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@pytest.fixture
def spy(monkeypatch):
    """Counts the pivots built from answers tables (the derived path) and from verdict rows."""
    calls = {"masks": 0}
    real = C._mask_figures

    def counted(*a, **kw):
        calls["masks"] += 1
        return real(*a, **kw)

    monkeypatch.setattr(C, "_mask_figures", counted)
    return calls


def same(monkeypatch, spy, fn, *a, derived: bool = True, **kw):
    """fn over the runs' answers (their stored answers tables, EVALCORE_DERIVED=1, and the
    builder's SELECT inlined, EVALCORE_DERIVED=0) and over the verdict rows (the reference: the
    verdict pivot, the path evalcore keeps for the ternary figure, forced for every figure): all
    three equal, and the first really took the masks (or, ``derived=False``, a ternary figure, the
    verdict rows as it must)."""
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    spy["masks"] = 0
    fast = _norm(fn(*a, **kw))
    took = spy["masks"]
    monkeypatch.setenv("EVALCORE_DERIVED", "0")
    inline = _norm(fn(*a, **kw))
    with monkeypatch.context() as m:  # the reference: every pivot from the verdict rows
        for mod in (C, G, CC):
            m.setattr(mod, "_answers", lambda *_a, **_kw: None)
        spy["masks"] = 0
        full = _norm(fn(*a, **kw))
        assert spy["masks"] == 0, "the reference must read the verdict rows"
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    assert (took > 0) == derived, (fn.__name__, a, kw, took)
    assert fast == full, (fn.__name__, a, kw)
    assert inline == full, (fn.__name__, a, kw)
    return fast


def _key(store: Store, a: str, b: str, metrics: list[str], sel: Selection) -> str:
    return C._item_sql(store, a, b, metrics, sel)[2]


# --------------------------------------------------------------------------- a randomised world


def make_world(data: Path, seed: int) -> dict:
    """One suite (classes, holdout items), two generations of it (2-3 generation rounds; the second
    answers only part of the items, so the integer item keys of the two differ), and runs: three on
    the first generation, two on the second (1-3 judge rounds, errored and missing verdicts, the
    criteria in different orders, one run with an extra criterion), and a ternary run."""
    rng = np.random.default_rng(seed)
    data.mkdir(parents=True, exist_ok=True)
    st = Store(data, data.parent / f"unused-state-{seed}")
    n = int(rng.integers(50, 120))
    classes = ["x", "y", None]
    items = [
        {
            "item_id": f"q{int(rng.integers(0, 10**6)):06d}-{k}",
            "input": f"question {k}",
            "class": classes[int(rng.integers(0, 3))],
            "holdout": bool(rng.random() < 0.2),
        }
        for k in range(n)
    ]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items), n_items=n)
    st.write_suite(sm, items)
    names = ["c0", "c1", "c2", "c3"]
    gens = {}
    for gi, gid in enumerate(("g1", "g2")):
        rounds = int(rng.integers(2, 4))
        kept = items if gi == 0 else [it for it in items if rng.random() < 0.8]
        outputs = [
            {"item_id": it["item_id"], "round": r, "output": f"{gid} {it['item_id']} {r}", "tokens_in": 10,
             "tokens_out": 20, "cost_usd": 0.001, "latency_ms": float(rng.gamma(2.0, 100.0))}
            for it in kept for r in range(1, rounds + 1)
        ]
        gm = S.GenerationManifest(gen_id=gid, suite_id="s", suite_hash=sm.content_hash,
                                  created_at=f"2026-01-0{gi + 1}T00:00:00Z", rounds=rounds, source="imported",
                                  knobs={"generator_model": f"sys-{gi}"}, outputs_hash=S.outputs_hash(outputs))
        st.write_generation(gm, outputs)
        gens[gid] = (kept, rounds)
    specs = [  # run id, generation, criteria in rubric order, judge rounds, judge model
        ("a1", "g1", names, int(rng.integers(1, 4)), "judge-1"),
        ("a2", "g1", names[::-1], int(rng.integers(2, 4)), "judge-1"),
        ("a3", "g1", [*names, "extra"], 1, "judge-2"),
        ("b1", "g2", [names[2], names[0], names[3], names[1]], int(rng.integers(1, 4)), "judge-1"),
        ("b2", "g2", names, int(rng.integers(2, 4)), "judge-1"),
    ]
    p_item = {it["item_id"]: rng.uniform(0.1, 0.9) for it in items}
    for ri, (rid, gid, crits, jr, judge) in enumerate(specs):
        kept, rounds = gens[gid]
        rubric = S.Rubric(criteria=[S.Criterion(name=c, kind="binary", gate=c == "c1") for c in crits])
        shift = rng.uniform(-0.15, 0.15)
        verdicts, calls = [], []
        for it in kept:
            if rng.random() < 0.05:  # an item the run never judged
                continue
            for g in range(1, rounds + 1):
                for j in range(1, jr + 1):
                    cid = f"{rid}-{it['item_id']}-{g}-{j}"
                    calls.append({"call_id": cid, "item_id": it["item_id"], "gen_round": g, "judge_round": j,
                                  "criteria": crits, "tokens_in": 100, "tokens_out": 20, "cost_usd": 0.001,
                                  "latency_ms": float(rng.gamma(2.0, 200.0))})
                    for pos, c in enumerate(crits):
                        if rng.random() < 0.05:  # no verdict row at all
                            continue
                        passed = (None if rng.random() < 0.06
                                  else bool(rng.random() < p_item[it["item_id"]] + shift))
                        verdicts.append({"run_id": rid, "item_id": it["item_id"], "gen_round": g, "criterion": c,
                                         "judge_round": j, "passed": passed,
                                         "raw_verdict": None if passed is None else str(passed), "position": pos,
                                         "call_id": cid, "error": "unparseable" if passed is None else None})
        rm = S.RunManifest(run_id=rid, gen_id=gid, created_at=f"2026-01-03T0{ri}:00:00Z", rubric=rubric,
                           rubric_hash=rubric.hash(), mode="single", field_order=crits, judge_model=judge,
                           prompt_hash="sha256:p", source="imported", judge_rounds=jr,
                           status="polluted" if rid == "b2" else "complete")
        st.write_run(rm, verdicts, calls)
    # a ternary run: the ternary headline needs the verdicts' labels, which no answers table holds
    kept, rounds = gens["g1"]
    rubric = S.Rubric(criteria=[S.Criterion(name="c0", kind="binary"), S.Criterion(name="grade", kind="ternary")])
    verdicts = []
    for it in kept:
        for g in range(1, rounds + 1):
            verdicts.append({"run_id": "t1", "item_id": it["item_id"], "gen_round": g, "criterion": "c0",
                             "judge_round": 1, "passed": bool(rng.random() < 0.7), "position": 0})
            label = ["correct", "partial", "wrong", None][int(rng.integers(0, 4))]
            verdicts.append({"run_id": "t1", "item_id": it["item_id"], "gen_round": g, "criterion": "grade",
                             "judge_round": 1, "passed": None if label is None else label == "correct",
                             "label": label, "position": 1})
    rm = S.RunManifest(run_id="t1", gen_id="g1", created_at="2026-01-04T00:00:00Z", rubric=rubric,
                       rubric_hash=rubric.hash(), mode="split", field_order=["c0", "grade"], judge_model="judge-1",
                       prompt_hash="sha256:p", source="imported", judge_rounds=1)
    st.write_run(rm, verdicts, [])
    # a generation of one round that three runs judge: two of them every item (their compare is
    # counted from their pair table), the third all but one
    outputs = [{"item_id": it["item_id"], "round": 1, "output": f"g3 {it['item_id']}", "tokens_in": 10,
                "tokens_out": 20, "cost_usd": 0.001, "latency_ms": float(rng.gamma(2.0, 100.0))} for it in items]
    gm = S.GenerationManifest(gen_id="g3", suite_id="s", suite_hash=sm.content_hash, created_at="2026-01-05T00:00:00Z",
                              rounds=1, source="imported", knobs={"generator_model": "sys-3"},
                              outputs_hash=S.outputs_hash(outputs))
    st.write_generation(gm, outputs)
    for ri, (rid, crits, jr) in enumerate((("c1", names, int(rng.integers(1, 4))),
                                           ("c2", [*names[::-1], "extra"], int(rng.integers(2, 4))),
                                           ("c3", names, 1))):
        rubric = S.Rubric(criteria=[S.Criterion(name=c, kind="binary") for c in crits])
        shift = rng.uniform(-0.2, 0.2)
        verdicts, calls = [], []
        for it in items[1:] if rid == "c3" else items:
            for j in range(1, jr + 1):
                cid = f"{rid}-{it['item_id']}-{j}"
                calls.append({"call_id": cid, "item_id": it["item_id"], "gen_round": 1, "judge_round": j,
                              "criteria": crits, "tokens_in": 100, "tokens_out": 20, "cost_usd": 0.001,
                              "latency_ms": float(rng.gamma(2.0, 200.0))})
                for pos, c in enumerate(crits):
                    if rng.random() < 0.04:
                        continue
                    passed = None if rng.random() < 0.05 else bool(rng.random() < p_item[it["item_id"]] + shift)
                    verdicts.append({"run_id": rid, "item_id": it["item_id"], "gen_round": 1, "criterion": c,
                                     "judge_round": j, "passed": passed, "position": pos, "call_id": cid,
                                     "error": "unparseable" if passed is None else None})
        rm = S.RunManifest(run_id=rid, gen_id="g3", created_at=f"2026-01-06T0{ri}:00:00Z", rubric=rubric,
                           rubric_hash=rubric.hash(), mode="single", field_order=crits, judge_model="judge-1",
                           prompt_hash="sha256:p", source="imported", judge_rounds=jr)
        st.write_run(rm, verdicts, calls)
    return {"rounds": {g: r for g, (_, r) in gens.items()}, "runs": [s[0] for s in specs]}


@pytest.fixture(scope="module", params=[7, 8])
def world(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"derived-compare-{request.param}")
    info = make_world(root / "data", request.param)
    return Store(root / "data", root / "state"), info


def _selections(rounds: int, first_items: tuple[str, ...]) -> list[Selection]:
    return [
        Selection(),
        Selection(include_holdout=True),
        Selection(majority=True),
        Selection(judge_round=2, include_holdout=True),
        Selection(gen_round=rounds),
        Selection(classes=("x", "(none)")),
        Selection(majority=True, classes=("y",), include_holdout=True),
        Selection(items=first_items),
    ]


def test_the_randomised_runs_have_answers_tables(world):
    store, info = world
    for rid in [*info["runs"], "t1"]:
        assert mask_sql(store, rid, Selection()) is not None, rid
    # one generation: joined on the integer item key; two: on the item id
    assert _key(store, "a1", "a2", ["all_pass"], Selection()) == "item"
    assert _key(store, "a1", "b1", ["all_pass"], Selection()) == "item_id"


def test_compare_equals_the_verdict_path_randomised(world, monkeypatch, spy):
    store, info = world
    ids = tuple(sorted(r[0] for r in store.sql("SELECT item_id FROM read_parquet(?) ORDER BY item_id LIMIT 15",
                                               [store.path_of("suite", "s", "items")])))
    pairs = [("a1", "a2"), ("a2", "a1"), ("a1", "a3"), ("a1", "b1"), ("b1", "b2"), ("a2", "b2"), ("a3", "b1")]
    compared, shared = 0, 0
    for a, b in pairs:
        for sel in _selections(min(info["rounds"].values()), ids):
            c = same(monkeypatch, spy, C.compare, store, a, b, sel=sel, n_boot=200)
            compared += 1
            shared += c["coverage"]["shared_items"] > 0
        same(monkeypatch, spy, C.compare, store, a, b, headline="c2", list_limit=3, n_boot=100)
        same(monkeypatch, spy, C.compare, store, a, b, allow=["x"], seed=3, n_boot=100, power_figures=False)
    assert compared == len(pairs) * 8 and shared >= compared - len(pairs)
    # the unpacked aggregates (more generation rounds than the packed counts hold)
    monkeypatch.setattr(C, "PACKED_MAX_ROUNDS", 1)
    for a, b in pairs[:4]:
        same(monkeypatch, spy, C.compare, store, a, b, sel=Selection(include_holdout=True), n_boot=100)
    monkeypatch.setattr(C, "PACKED_MAX_ROUNDS", 255)
    # past the bootstrap limit: the analytic interval from the same sums
    monkeypatch.setattr(C, "BOOTSTRAP_MAX_ITEMS", 5)
    same(monkeypatch, spy, C.compare, store, "a1", "b1", sel=Selection(include_holdout=True))


def test_per_round_trend_and_gate_equal_the_verdict_path_randomised(world, monkeypatch, spy, tmp_path):
    store, info = world
    for rid in info["runs"]:
        for sel in _selections(info["rounds"][store.run(rid).manifest.gen_id], ()):
            same(monkeypatch, spy, C.per_round, store, rid, sel=sel)
        same(monkeypatch, spy, C.per_round, store, rid, metrics=["all_pass", "c3", "extra"])
    for metric in ("all_pass", "c1", "extra"):
        for sel in (Selection(), Selection(majority=True, include_holdout=True), Selection(classes=("x",))):
            t = same(monkeypatch, spy, G.trend, store, suite_id="s", metric=metric, sel=sel)
            assert t["points"]
    some = [r[0] for r in store.sql("SELECT DISTINCT item_id FROM read_parquet(?) ORDER BY 1 LIMIT 6",
                                    [store.path_of("run", "a2", "verdicts")])]
    allow = tmp_path / "allow.txt"
    allow.write_text("".join(f"{i} owner 2999-01-01\n" for i in [*some, "not-an-item"]))
    for a, b in (("a1", "a2"), ("a1", "b1")):
        for sel in (Selection(), Selection(majority=True, include_holdout=True)):
            same(monkeypatch, spy, G.gate, store, a, b, allowlist=allow, sel=sel, n_boot=100,
                 today=date(2026, 6, 1), max_latency_increase="25%")
        misses = same(monkeypatch, spy, G._misses, store, b, "all_pass", Selection(), some)
        assert isinstance(misses, set)


def test_one_round_compare_is_counted_from_the_pair_table_randomised(world, monkeypatch, spy):
    """Two runs judging every item of a one-round generation: compare's figures, counts and id
    lists come from their pair table and equal the verdict path; a selection that drops items
    (holdout, classes), a run that missed an item or a call outside the generation joins the
    answers tables instead, with the same numbers."""
    store, _ = world
    took = []
    real = C._pair_summary
    monkeypatch.setattr(C, "_pair_summary", lambda *a, **kw: took.append(r := real(*a, **kw)) or r)
    every = Selection(include_holdout=True)
    cases = [
        ("c1", "c2", every, {}, True),
        ("c2", "c1", Selection(include_holdout=True, majority=True), {}, True),
        ("c1", "c2", Selection(include_holdout=True, judge_round=1), {"headline": "c2", "list_limit": 2}, True),
        ("c1", "c2", every, {"allow": ["x"], "headline": "c0"}, True),
        ("c1", "c2", Selection(include_holdout=True, gen_round=1), {}, True),
        ("c1", "c2", Selection(), {}, False),
        ("c1", "c2", Selection(include_holdout=True, classes=("x",)), {}, False),
        ("c1", "c3", every, {}, False),
    ]
    for a, b, sel, kw, fast in cases:
        took.clear()
        c = same(monkeypatch, spy, C.compare, store, a, b, sel=sel, n_boot=200, **kw)
        assert (took[0] is not None) == fast, (a, b, sel, kw)
        assert c["coverage"]["shared_items"] > 0
    # the counts and lists are not empty, so the windows were searched
    c = C.compare(store, "c1", "c2", sel=every, list_limit=3, n_boot=50)
    h = c.figures["all_pass"]
    assert h.stable_wins + h.stable_regressions > 0
    assert len(h.stable_win_items) == min(3, h.stable_wins)
    # past the bootstrap limit: the analytic interval from the counted sums
    monkeypatch.setattr(C, "BOOTSTRAP_MAX_ITEMS", 5)
    same(monkeypatch, spy, C.compare, store, "c1", "c2", sel=every)


def test_the_ternary_headline_reads_the_verdicts(world, monkeypatch, spy):
    store, _ = world
    c = same(monkeypatch, spy, C.compare, store, "t1", "t1", headline="ternary", derived=False, n_boot=100)
    assert "ternary" in c["metrics"]
    same(monkeypatch, spy, C.per_round, store, "t1", derived=False)
    same(monkeypatch, spy, G.trend, store, suite_id="s", metric="ternary", derived=False)
    # without the ternary figure the same run reads its answers table
    same(monkeypatch, spy, C.per_round, store, "t1", metrics=["all_pass", "grade"])
    same(monkeypatch, spy, C.compare, store, "a1", "t1", n_boot=100)


# --------------------------------------------------------------------------- the hand-built world


@pytest.mark.parametrize("strong", [False, True])
@pytest.mark.parametrize("holdout", [(), (3, 12, 20)])
@pytest.mark.parametrize("n_cand", [26, 30])
def test_the_compare_world_equals_the_verdict_path(tmp_path, monkeypatch, spy, strong, holdout, n_cand):
    make_compare_world(tmp_path / "data", strong=strong, holdout=holdout, candidate_items=n_cand)
    store = Store(tmp_path / "data", tmp_path / "state")
    assert mask_sql(store, "r-base", Selection()) is not None and mask_sql(store, "r-cand", Selection()) is not None
    for sel in (Selection(), Selection(include_holdout=True), Selection(gen_round=2), Selection(majority=True)):
        c = same(monkeypatch, spy, C.compare, store, "r-base", "r-cand", sel=sel)
        assert c["coverage"]["differs"] == (n_cand < 30)
        # the latency per answer is over the items both answered (no id list handed over when
        # that is every item the latency's tables hold)
        shared = [f"q{k:02d}" for k in range(n_cand) if sel.include_holdout or k not in holdout]
        for side, rid in (("baseline", "r-base"), ("candidate", "r-cand")):
            assert _norm(c["latency"][side]) == _norm(answer_latency(store, rid, shared))
        same(monkeypatch, spy, C.per_round, store, "r-cand", sel=sel)
    same(monkeypatch, spy, G.gate, store, "r-base", "r-cand", today=date(2026, 6, 1))
    same(monkeypatch, spy, G.trend, store, suite_id="s")
    same(monkeypatch, spy, G.trend, store, suite_id="s", metric="ok", include_holdout=True)


# --------------------------------------------------------------------------- the demo


def test_the_demo_equals_the_verdict_path(tmp_path, monkeypatch, spy):
    store = Store(DEMO, tmp_path / "state")
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    for rid in ("accounts-g1-split", "accounts-g2-split", "support-single", "support-split", "support-grouped"):
        assert mask_sql(store, rid, Selection()) is not None, rid
    assert _key(store, "accounts-g1-split", "accounts-g2-split", ["all_pass"], Selection()) == "item_id"
    assert _key(store, "support-single", "support-split", ["all_pass"], Selection()) == "item"
    sels = (Selection(), Selection(include_holdout=True), Selection(gen_round=2), Selection(classes=("billing",)))
    for sel in sels[:3]:
        same(monkeypatch, spy, C.compare, store, "accounts-g1-split", "accounts-g2-split", sel=sel)
        same(monkeypatch, spy, C.per_round, store, "accounts-g2-split", sel=sel)
    same(monkeypatch, spy, C.compare, store, "accounts-g1-split", "accounts-g2-split", headline="accurate")
    support = (Selection(), Selection(majority=True), Selection(judge_round=3, include_holdout=True), sels[3])
    for a, b in (("support-single", "support-split"), ("support-split", "support-grouped"),
                 ("support-partial", "support-polluted"), ("support-single-indep", "support-split-judgeB")):
        for sel in support:
            same(monkeypatch, spy, C.compare, store, a, b, sel=sel)
    same(monkeypatch, spy, G.gate, store, "support-single", "support-split", today=date(2026, 6, 1))
    for suite in ("support", "accounts"):
        for sel in (Selection(), Selection(majority=True, include_holdout=True)):
            same(monkeypatch, spy, G.trend, store, suite_id=suite, sel=sel)
    same(monkeypatch, spy, G.trend, store, suite_id="support", metric="grounded")
    same(monkeypatch, spy, G.trend, store, suite_id="support", metric="ternary", derived=False)
