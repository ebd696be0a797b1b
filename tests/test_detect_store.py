"""The stored detection (issue: the review queue at 18M verdict rows): every case computed in DuckDB
and written once per set of runs into the state directory, reused while the runs are unchanged and
rebuilt when one is added or replaced; the same cases, byte for byte, as the pure-Python
the per-case Python detection (tests/reference.py ``detect``); and ``build_queue`` over it writes exactly the queue the per-case Python path wrote
(same cases, ranks, audit draw and order, same JSON text in the label store)."""

from __future__ import annotations

import importlib
import json
import math
import sqlite3
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest
import reference
from conftest import DEMO
from queue_world import make_queue_world

from evalcore import LabelStore, Store
from evalcore import contract as S
from evalcore.analysis.suites import holdout_ids
from evalcore.review import audit as AU

# the modules (the package's own names `detect` and `build_queue` are the functions)
D = importlib.import_module("evalcore.review.detect")
B = importlib.import_module("evalcore.review.build")

KEY = ("item_id", "gen_round", "criterion")


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("qw") / "data")


def _stored_cases(path: Path) -> list[dict]:
    rel = duckdb.connect().sql(f"SELECT * FROM read_parquet('{path}')")
    cols = [d[0] for d in rel.description]
    return [dict(zip(cols, r)) for r in rel.fetchall()]


def _assert_same_as_detect(store: Store, gen_id: str) -> D.Detection:
    det = D.stored_detection(store, gen_id)
    ref = reference.detect(store, gen_id)
    assert json.dumps(D.detect(store, gen_id)) == json.dumps(ref)  # evalcore's detect(): the stored file read back
    got = _stored_cases(det.path)
    want = sorted(ref["raised"] + ref["agreed"], key=lambda c: tuple(c[k] for k in KEY))
    assert [tuple(c[k] for k in KEY) for c in got] == [tuple(c[k] for k in KEY) for c in want]  # key order
    for g, w in zip(got, want, strict=True):
        for k in ("gen_id", *KEY, "class", "reasons", "runs"):
            assert g[k] == w[k], (k, g, w)
        assert g["raised"] is bool(w["reasons"])
        # the JSON text is what the label store writes for detect()'s values
        assert g["detail"] == json.dumps(w["detail"], sort_keys=True)
        assert g["reasons_json"] == json.dumps(w["reasons"]) and g["runs_json"] == json.dumps(w["runs"])
    assert (det.runs, det.population, det.raised, det.agreed, det.counts) == (
        ref["runs"],
        ref["population"],
        len(ref["raised"]),
        len(ref["agreed"]),
        ref["counts"],
    )
    summary = D.detection_summary(store, gen_id)
    assert summary == {
        "gen_id": gen_id,
        "runs": ref["runs"],
        "population": ref["population"],
        "raised": len(ref["raised"]),
        "agreed": len(ref["agreed"]),
        "counts": ref["counts"],
    }
    return det


def test_stored_detection_matches_detect_on_the_queue_world(qworld, tmp_path):
    det = _assert_same_as_detect(Store(qworld, tmp_path / "state"), "qg")
    assert det.raised == 9 and all(det.counts.values())
    assert det.path == tmp_path / "state" / "derived" / "detect" / "qg" / "cases.parquet"


def test_stored_detection_matches_detect_on_the_demo(tmp_path):
    st = Store(DEMO, tmp_path / "state")
    det = _assert_same_as_detect(st, "support-g1")
    assert det.counts["statement_contradicts"] == 23 and det.counts["postprocess_rewrite"] == 29
    for gen_id in st.ids("generation"):
        if gen_id != "support-g1" and D.runs_on(st, gen_id):
            _assert_same_as_detect(st, gen_id)


def test_the_stored_file_is_reused_not_recomputed(qworld, tmp_path, monkeypatch):
    st = Store(qworld, tmp_path / "state")
    first = D.stored_detection(st, "qg")
    assert not first.reused
    stamp = first.path.stat().st_mtime_ns

    def refuse(*a, **k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(D, "_write_detection", refuse)
    again = D.stored_detection(st, "qg")
    assert again.reused and again.key == first.key and again.path == first.path
    assert again.path.stat().st_mtime_ns == stamp
    B.build_queue(st, "qg", audit_rate=0.5, seed=1)  # the build path reuses it too
    assert D.detection_summary(st, "qg")["raised"] == first.raised
    assert [p.name for p in (tmp_path / "state" / "derived" / "detect").iterdir() if not p.name.startswith(".")] == ["qg"]


def _flip_run(st: Store, src: str, new_id: str, flip: set[str], *, overwrite: bool = False) -> None:
    """Write run ``new_id`` on qg: ``src``'s verdicts with ``passed`` flipped on the items in ``flip``."""
    entry = st.run(src)
    verdicts = pq.read_table(entry.path / "verdicts.parquet").to_pylist()
    calls = pq.read_table(entry.path / "calls.parquet").to_pylist()
    for r in verdicts:
        r["run_id"] = new_id
        if r["item_id"] in flip and r["passed"] is not None:
            r["passed"] = not r["passed"]
            r["raw_verdict"] = "pass" if r["passed"] else "fail"
    m = entry.manifest.model_copy(update={"run_id": new_id, "judge_model": "judge-c"})
    st.write_run(m, verdicts, calls, overwrite=overwrite)


def test_a_new_or_replaced_run_rebuilds_it(tmp_path):
    data = make_queue_world(tmp_path / "data")
    st = Store(data, tmp_path / "state")
    before = D.stored_detection(st, "qg")
    _flip_run(st, "ja-single", "jc-single", {"i11", "i12"})
    after = _assert_same_as_detect(st, "qg")
    assert after.key != before.key and not after.reused
    assert "jc-single" in after.runs and after.raised > before.raised
    # replaced in place (same run id, other verdicts): a new key again
    _flip_run(st, "ja-single", "jc-single", {"i12"}, overwrite=True)
    replaced = _assert_same_as_detect(st, "qg")
    assert replaced.key not in (before.key, after.key) and replaced.raised < after.raised
    # and the first one's key is reused when the set of runs is back to it
    assert D.stored_detection(st, "qg").reused


def test_json_text_of_awkward_values_matches_json_dumps(tmp_path):
    """Labels and raw verdicts are the judge's text: quotes, backslashes, control characters and
    non-ASCII (in and past the basic plane) must come out as ``json.dumps`` writes them."""
    data = make_queue_world(tmp_path / "data")
    st = Store(data, tmp_path / "state")
    corr = S.Criterion(name="corr", kind="ternary", description="Correct?")
    score = S.Criterion(name="score", kind="ordinal", scale_min=0, scale_max=5, threshold=3, description="0-5")
    rubric = S.Rubric(criteria=[corr, score])
    odd = ['wr\u00f6ng "quoted" \\ back', "tab\there\nline\u2028\x7f", "emoji \U0001f600 \x01", ""]
    rows, calls = [], []
    for k, iid in enumerate([f"i{n:02d}" for n in range(1, 13)]):
        cid = f"jd-{iid}"
        calls.append({"call_id": cid, "item_id": iid, "gen_round": 1, "judge_round": 1, "criteria": ["corr", "score"]})
        rows.append(
            {
                "run_id": "jd",
                "item_id": iid,
                "gen_round": 1,
                "position": 0,
                "call_id": cid,
                "judge_round": 1,
                "criterion": "corr",
                "passed": False,
                "label": odd[k % len(odd)],
                "raw_verdict": "  Correct ",
            }
        )
        raw, s = [("4", 2.5e-7), ("1e3", 1e16 + 2), ("4", 3.0), ("0.1", 0.30000000000000004)][k % 4]
        rows.append(
            {
                "run_id": "jd",
                "item_id": iid,
                "gen_round": 1,
                "position": 1,
                "call_id": cid,
                "judge_round": 1,
                "criterion": "score",
                "passed": s >= 3,
                "score": s,
                "raw_verdict": raw,
            }
        )
    m = S.RunManifest(
        run_id="jd",
        gen_id="qg",
        created_at="2026-01-01T00:00:00Z",
        rubric=rubric,
        rubric_hash=rubric.hash(),
        mode="single",
        field_order=rubric.names(),
        judge_model="judge-d",
        source="simulated",
        simulated=True,
    )
    st.write_run(m, rows, calls)
    det = _assert_same_as_detect(st, "qg")
    texts = "".join(c["detail"] for c in _stored_cases(det.path))
    assert "\\u00f6" in texts and "\\ud83d\\ude00" in texts and "\\u2028" in texts and "\\u007f" in texts
    assert det.counts["postprocess_rewrite"] >= 12


# --------------------------------------------------------------------------- build_queue


def _old_queue_rows(store: Store, gen_id: str, rate: float, seed: int, audit: str = "uniform") -> list[tuple]:
    """The queue as a per-case Python path builds it: detect(), the audit drawn over the cases in
    key order (audit.draw, holdout items left out), order_cases, and write_queue's JSON encoding."""
    det = reference.detect(store, gen_id)
    cases = sorted(
        [{**c, "raised": True} for c in det["raised"]] + [{**c, "raised": False} for c in det["agreed"]],
        key=lambda c: (c["item_id"], c["gen_round"], c["criterion"]),
    )
    answers = sorted({(c["item_id"], c["gen_round"]) for c in cases})
    names = sorted({c["criterion"] for c in cases})
    hold = set(holdout_ids(store, store.generation(gen_id).manifest.suite_id))
    a = AU.draw(
        np.array([answers.index((c["item_id"], c["gen_round"])) for c in cases], dtype=np.int64),
        np.array([names.index(c["criterion"]) for c in cases], dtype=np.int64),
        names,
        np.array([c["raised"] for c in cases], dtype=bool),
        rate,
        seed,
        audit,
        eligible=np.array([c["item_id"] not in hold for c in cases], dtype=bool),
    )
    drawn = {int(r): (float(k), float(z), float(p), float(pl)) for r, k, z, p, pl in zip(a.rows, a.key, a.size, a.pi, a.place)}
    raised, audited = [], []
    for i, c in enumerate(cases):
        base = {k: v for k, v in c.items() if k != "raised"}
        key, size, pi, place = drawn.get(i, (None, None, None, None))
        extra = {"audit_key": key, "audit_size": size}
        if c["raised"]:
            raised.append({**base, **extra, "stratum": "disagreement", "inclusion_prob": 1.0,
                           **({"place": place} if place is not None else {})})
        elif i in drawn:
            audited.append({**base, **extra, "stratum": "audit", "inclusion_prob": pi, "place": place})
    audited.sort(key=lambda c: (c["place"], names.index(c["criterion"])))
    out = []
    for k, c in enumerate(B.order_cases(raised, audited, seed)):
        c = {**c, "rank": k + 1}
        out.append(
            tuple(
                json.dumps(c[x], sort_keys=True) if x in ("reasons", "runs", "detail") else c[x]
                for x in LabelStore.CASE_COLUMNS
                if x != "queue_id"
            )
        )
    return out


def _written_rows(store: Store, queue_id: str) -> list[tuple]:
    cols = [c for c in LabelStore.CASE_COLUMNS if c != "queue_id"]
    with sqlite3.connect(LabelStore(store).path) as con:
        return con.execute(
            f"SELECT {', '.join(cols)} FROM queue_cases WHERE queue_id = ? ORDER BY rank", (queue_id,)
        ).fetchall()


@pytest.mark.parametrize(("rate", "seed"), [(0.05, 0), (0.2, 3), (1.0, 11), (0.0, 2)])
def test_build_queue_equals_the_per_case_python_path_on_the_demo(tmp_path, rate, seed):
    st = Store(DEMO, tmp_path / "state")
    q = B.build_queue(st, "support-g1", audit_rate=rate, seed=seed)
    want = _old_queue_rows(st, "support-g1", rate, seed)
    assert _written_rows(st, q["queue_id"]) == want
    ref = reference.detect(st, "support-g1")
    assert (q["flagged"], q["agreed"], q["population"], q["runs"], q["counts"]) == (
        len(ref["raised"]),
        len(ref["agreed"]),
        ref["population"],
        ref["runs"],
        ref["counts"],
    )
    assert q["audit_sampled"] == sum(r[6] == "audit" for r in want)
    design = q["audit_design"]["criteria"]
    assert sum(d["budget"] for d in design.values()) == sum(r[-2] is not None for r in want)
    assert all(d["budget"] == (math.ceil(rate * d["cases"] - 1e-9) if rate else 0) for d in design.values())


@pytest.mark.parametrize(("rate", "seed"), [(0.25, 7), (0.5, 1), (1.0, 0), (0.0, 0)])
def test_build_queue_equals_the_per_case_python_path_on_the_queue_world(qworld, tmp_path, rate, seed):
    st = Store(qworld, tmp_path / "state")
    q = B.build_queue(st, "qg", audit_rate=rate, seed=seed)
    assert _written_rows(st, q["queue_id"]) == _old_queue_rows(st, "qg", rate, seed)
    # a second build (new queue id) writes the same cases again
    q2 = B.build_queue(st, "qg", audit_rate=rate, seed=seed)
    assert q2["queue_id"] != q["queue_id"] and _written_rows(st, q2["queue_id"]) == _written_rows(st, q["queue_id"])


def test_build_queue_never_calls_detect(qworld, tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("detect() on the build path")

    monkeypatch.setattr(D, "detect", refuse)
    monkeypatch.setattr(B, "detect", refuse, raising=False)
    q = B.build_queue(Store(qworld, tmp_path / "state"), "qg", audit_rate=0.5, seed=3)
    assert q["flagged"] == 9


def test_a_generation_without_runs_stores_an_empty_detection(tmp_path):
    data = make_queue_world(tmp_path / "data")
    st = Store(data, tmp_path / "state")
    gm = st.generation("qg").manifest.model_copy(update={"gen_id": "qg2"})
    st.write_generation(gm, pq.read_table(st.path_of("generation", "qg", "outputs")).to_pylist())
    det = D.stored_detection(st, "qg2")
    assert (det.runs, det.population, det.raised) == ([], 0, 0)
    assert pq.read_table(det.path).num_rows == 0
    q = B.build_queue(st, "qg2")
    assert (q["flagged"], q["audit_sampled"]) == (0, 0) and _written_rows(st, q["queue_id"]) == []


@pytest.mark.parametrize(("rate", "seed"), [(0.1, 0), (0.3, 5)])
def test_active_audit_equals_the_per_case_python_path_and_favours_raised_cases(tmp_path, rate, seed):
    st = Store(DEMO, tmp_path / "state")
    q = B.build_queue(st, "support-g1", audit_rate=rate, seed=seed, audit="active")
    rows = _written_rows(st, q["queue_id"])
    assert rows == _old_queue_rows(st, "support-g1", rate, seed, "active")
    assert q["audit_design"]["method"] == "active" and q["audit_design"]["epsilon"] == 0.5
    # sizes 1.0 (raised) against 0.5 (agreed): raised cases are about twice as likely to be audited
    cols = [c for c in LabelStore.CASE_COLUMNS if c != "queue_id"]
    stratum, key = cols.index("stratum"), cols.index("audit_key")
    raised_share = sum(r[stratum] == "disagreement" and r[key] is not None for r in rows) / q["flagged"]
    agreed_share = q["audit_sampled"] / q["agreed"]
    assert 1.5 < raised_share / agreed_share < 2.5, (raised_share, agreed_share)
    uniform = B.build_queue(st, "support-g1", audit_rate=rate, seed=seed)
    assert uniform["audit_sampled"] > q["audit_sampled"]  # the same budget, fewer agreed cases
