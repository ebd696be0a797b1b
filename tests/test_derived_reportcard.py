"""The report card's judge figures read from the runs' answers tables (repeat consistency, judge
pairs, observed pass rates of the pass / fail criteria) equal the figures from the verdict rows
(EVALCORE_DERIVED=0): on the demo and on randomised worlds with mixed criterion kinds, several
judge rounds, errored and missing verdicts, shipped labels (gold) and a run without a table."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from derived_util import norm as _norm

from evalcore import contract as S
from evalcore.review import judges as J
from evalcore.review import reportcard as R
from evalcore.storage.store import Store

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


class Spy:
    """Counts the calls of the answers-table paths (so a test knows the derived path ran)."""

    def __init__(self, monkeypatch):
        self.calls = {"repeat": 0, "pairs": 0, "masks": 0}
        for name, key, mod in (
            ("_repeat_masks", "repeat", J),
            ("_pair_masks", "pairs", J),
            ("mask_runs", "masks", R),
        ):
            real = getattr(mod, name)

            def wrap(*a, _real=real, _key=key, **kw):
                out = _real(*a, **kw)
                if _key != "masks" or out:
                    self.calls[_key] += 1
                return out

            monkeypatch.setattr(mod, name, wrap)


def both_cards(monkeypatch, data: Path, tmp: Path, gen_id: str, **kw):
    """The card with the answers tables and without, each on a fresh state directory."""
    out = []
    for flag in ("1", "0"):
        monkeypatch.setenv("EVALCORE_DERIVED", flag)
        state = tmp / f"state-{gen_id}-{flag}"
        shutil.rmtree(state, ignore_errors=True)
        card = R.report_card(Store(data, state), gen_id, n_boot=50, **kw)
        out.append(_norm(json.loads(json.dumps(card.to_dict(), default=str))))
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    return out


def assert_same(monkeypatch, data, tmp, gen_id, **kw):
    spy = Spy(monkeypatch)
    fast, full = both_cards(monkeypatch, data, tmp, gen_id, **kw)
    for k in fast:
        assert fast[k] == full[k], (gen_id, kw, k)
    assert fast == full
    return fast, spy.calls


# --------------------------------------------------------------------------- the demo


@pytest.mark.parametrize(
    "gen_id,kw",
    [("support-g1", {}), ("support-g1", {"classes": ("billing",)}), ("accounts-g1", {}), ("accounts-g2", {})],
)
def test_demo_card_same(monkeypatch, tmp_path, gen_id, kw):
    card, calls = assert_same(monkeypatch, DEMO, tmp_path, gen_id, **kw)
    assert calls["masks"] > 0  # observed pass rates from the masks
    if gen_id == "support-g1":
        assert calls["repeat"] > 0 and calls["pairs"] > 0
        assert any(c["repeat"] for c in card["criteria"])
        assert any(c["judge_pairs"] for c in card["criteria"])


# --------------------------------------------------------------------------- a randomised world


def _criteria() -> list[S.Criterion]:
    return [
        S.Criterion(name="b0", kind="binary"),
        S.Criterion(name="b1", kind="binary", gate=True),
        S.Criterion(name="b2", kind="binary"),
        S.Criterion(name="tern", kind="ternary"),
        S.Criterion(name="ord", kind="ordinal", scale_min=1, scale_max=5, threshold=3),
        S.Criterion(name="cont", kind="continuous", scale_min=0, scale_max=1, threshold=0.5),
    ]


def make_world(data: Path, seed: int) -> dict:
    """A suite with classes, a generation with 1-2 rounds, 3 runs (1-3 judge rounds each, at least
    one with several; binary, ternary, whole-score ordinal and continuous criteria; one run judges
    ``tern`` as pass / fail), errored and missing verdicts, and a shipped label set giving gold."""
    rng = np.random.default_rng(seed)
    data.mkdir(parents=True, exist_ok=True)
    st = Store(data, data.parent / f"unused-state-{seed}")
    n = int(rng.integers(50, 120))
    items = [
        {"item_id": f"it{k:04d}", "input": f"question {k}", "class": ["a", "b", None][int(rng.integers(0, 3))]}
        for k in range(n)
    ]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items), n_items=n)
    st.write_suite(sm, items)
    rounds = int(rng.integers(1, 3))
    outputs = [
        {"item_id": it["item_id"], "round": r, "output": f"answer {it['item_id']} {r}", "tokens_in": 10,
         "tokens_out": 20, "cost_usd": 0.001, "latency_ms": 100.0}
        for it in items for r in range(1, rounds + 1)
    ]  # fmt: skip
    gm = S.GenerationManifest(gen_id="g", suite_id="s", suite_hash=sm.content_hash, created_at="2026-01-01T01:00:00Z",
                              rounds=rounds, source="imported", outputs_hash=S.outputs_hash(outputs))  # fmt: skip
    st.write_generation(gm, outputs)
    crits = _criteria()
    jrs = [int(rng.integers(2, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    for ri, (mode, judge) in enumerate((("single", "judge-a"), ("single", "judge-b"), ("split", "judge-a"))):
        rc = [c for c in crits if not (ri == 2 and c.name == "cont")]
        if ri == 1:  # the same name judged pass / fail by this run
            rc = [S.Criterion(name="tern", kind="binary") if c.name == "tern" else c for c in rc]
        rubric = S.Rubric(criteria=rc)
        names = rubric.names()
        verdicts, calls = [], []
        t0 = datetime(2026, 1, 2, tzinfo=timezone.utc)
        for it in items:
            for g in range(1, rounds + 1):
                latent = rng.random()
                for j in range(1, jrs[ri] + 1):
                    cid = f"r{ri}-{it['item_id']}-{g}-{j}"
                    calls.append({
                        "call_id": cid, "item_id": it["item_id"], "gen_round": g, "judge_round": j,
                        "criteria": names, "tokens_in": 100, "tokens_out": 20, "cost_usd": 0.001,
                        "latency_ms": 300.0, "error": None,
                        "started_at": t0 + timedelta(seconds=float(rng.uniform(0, 3600))), "cache_hit": False,
                    })  # fmt: skip
                    for pos, c in enumerate(rc):
                        if rng.random() < 0.05:  # no verdict row
                            continue
                        errored = rng.random() < 0.05
                        u = 0.6 * latent + 0.4 * rng.random()
                        passed: bool | None = None if errored else bool(u > 0.35)
                        label = score = None
                        if c.kind == "ternary" and not errored:
                            label = "wrong" if u < 0.35 else "partial" if u < 0.6 else "correct"
                        elif c.kind == "ordinal" and not errored:
                            score = None if rng.random() < 0.05 else float(1 + round(4 * u))
                            passed = bool(1 + round(4 * u) >= 3)
                        elif c.kind == "continuous" and not errored:
                            score = float(u)
                            passed = bool(u >= 0.5)
                        verdicts.append({
                            "run_id": f"r{ri}", "item_id": it["item_id"], "gen_round": g, "criterion": c.name,
                            "judge_round": j, "passed": passed, "raw_verdict": None if errored else str(passed),
                            "position": pos, "call_id": cid, "error": "unparseable" if errored else None,
                            "label": label, "score": score,
                        })  # fmt: skip
        rm = S.RunManifest(run_id=f"r{ri}", gen_id="g", created_at=f"2026-01-02T0{ri}:00:00Z", rubric=rubric,
                           rubric_hash=rubric.hash(), mode=mode, field_order=names, judge_model=judge,
                           source="imported", judge_rounds=jrs[ri], status="complete")  # fmt: skip
        st.write_run(rm, verdicts, calls)
    # shipped labels: two annotators on most items (they sometimes disagree: no gold there)
    rows = []
    for it in items:
        if rng.random() < 0.2:
            continue
        for c in crits:
            base = rng.random()
            for ann in ("ann", "bob"):
                u = base if rng.random() < 0.85 else rng.random()
                value: str | None = None
                if c.kind == "ternary":
                    value = "wrong" if u < 0.35 else "partial" if u < 0.6 else "correct"
                elif c.kind == "ordinal":
                    value = str(1 + round(4 * u))
                rows.append({"item_id": it["item_id"], "gen_round": 1, "criterion": c.name, "annotator": ann,
                             "value": value, "passed": bool(u > 0.35)})  # fmt: skip
    st.write_labelset(
        S.LabelSetManifest(labelset_id="people", gen_id="g", created_at="2026-01-03T00:00:00Z",
                           annotators=["ann", "bob"], rubric=S.Rubric(criteria=crits)),
        rows,
    )  # fmt: skip
    return {"jrs": jrs}


@pytest.fixture(scope="module", params=[1, 2, 3])
def world(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"derived-card-{request.param}")
    make_world(root / "data", 7000 + request.param)
    return root / "data"


def test_world_card_same(monkeypatch, tmp_path, world):
    card, calls = assert_same(monkeypatch, world, tmp_path, "g")
    assert calls["masks"] > 0 and calls["repeat"] > 0 and calls["pairs"] > 0
    assert card["gold"]["shipped"] > 0
    crit = {c["criterion"]: c for c in card["criteria"]}
    assert crit["b0"]["repeat"] and crit["b0"]["judge_pairs"]
    assert crit["tern"]["repeat"] and crit["ord"]["repeat"]  # the other kinds, read from the verdicts
    # the slice and another judge round
    assert_same(monkeypatch, world, tmp_path, "g", classes=("a",))
    assert_same(monkeypatch, world, tmp_path, "g", judge_round=2)


def test_world_card_one_run_without_table(monkeypatch, tmp_path, world):
    """One run without an answers table: its figures come from the verdicts, beside the others'."""
    real = J.answers_table
    monkeypatch.setattr(J, "answers_table", lambda store, rid: None if rid == "r1" else real(store, rid))
    card, calls = assert_same(monkeypatch, world, tmp_path, "g")
    assert calls["repeat"] > 0 and calls["pairs"] > 0
    assert any(j["run_id"] == "r1" for c in card["criteria"] for j in c["judges"])


# --------------------------------------------------------------------------- a queue's design


def _reference_sizes(store: Store, queue_id: str, run_ids: list[str], judge_round: int, keep=None) -> dict:
    """What each stratum stands for, the way the card counted it before the queue's Parquet copy:
    every queue case as a Python object, and the cases each run judged from its verdict rows."""
    from evalcore.storage.labels import LabelStore

    cases = LabelStore(store).queue_cases(queue_id)
    out: dict = {}
    for rid in run_ids:
        judged = {
            (r[0], int(r[1]), r[2])
            for r in store.sql(
                "SELECT item_id, gen_round, criterion FROM read_parquet(?) WHERE judge_round = ? AND passed IS NOT NULL",
                [store.path_of("run", rid, "verdicts"), judge_round],
            )
        }
        for c in cases:
            k = (c["item_id"], c["gen_round"], c["criterion"])
            if k in judged and (keep is None or keep(c["item_id"])):
                d = out.setdefault(rid, {}).setdefault(c["criterion"], {})
                d[c["stratum"]] = d.get(c["stratum"], 0.0) + 1.0 / c["inclusion_prob"]
    return out


@pytest.mark.parametrize("classes", [(), ("billing",)])
def test_a_queues_design_is_weighed_in_duckdb_as_it_was_in_python(monkeypatch, tmp_path, classes):
    """With a review queue (raised cases and a 20% audit) and decisions on both strata, the card's
    corrected pass rates are the same from the runs' masks, from their verdicts, and after the
    queue's Parquet copy is lost (rebuilt from the label store) or tampered with; each stratum's
    size equals the per-case count in Python."""
    from evalcore.review import build as B
    from evalcore.review import design as D
    from evalcore.review import queue as Q
    from evalcore.storage.labels import LabelStore

    data = tmp_path / "data"
    shutil.copytree(DEMO, data)
    store = Store(data, tmp_path / "state")
    q = B.build_queue(store, "support-g1", audit_rate=0.2, seed=5)
    cases = LabelStore(store).queue_cases(q["queue_id"])
    strata = {c["stratum"] for c in cases}
    assert strata == {"disagreement", "audit"}
    # decide the first 60 cases of each stratum: gold from the queue
    for stratum in sorted(strata):
        for c in [c for c in cases if c["stratum"] == stratum][:60]:
            crit = store.run(c["runs"][0]).manifest.rubric.get(c["criterion"])
            value = Q.decision_values(crit)[0] if crit is not None else "pass"
            Q.decide(store, q["queue_id"], c["item_id"], c["gen_round"], c["criterion"], "rev-a", value=value)
    queue = Q.get_queue(store, q["queue_id"])
    copy = Path(Q.queue_file(store, queue))
    assert copy.is_file() and copy.parent.parent == tmp_path / "state" / "derived" / "queue"
    run_ids = R.runs_on(store, "support-g1")
    ms = {r: store.run(r).manifest for r in run_ids}
    cut = R._slice(store, store.generation("support-g1").manifest.suite_id, classes, ())
    vsql, vparams = R._values_sql(store, run_ids)
    if cut[0]:
        vsql, vparams = f"SELECT * FROM ({vsql}) WHERE {cut[0]}", [*vparams, *cut[1]]
    want = _reference_sizes(store, q["queue_id"], run_ids, 1, cut[2] if classes else None)
    assert want and any("audit" in d for r in want.values() for d in r.values())
    design = {"queue": queue, "path": str(copy)}
    for flag in ("1", "0"):  # from the masks, then from the verdicts
        monkeypatch.setenv("EVALCORE_DERIVED", flag)
        got = D.design_sizes(Store(data, tmp_path / "state"), design, vsql, vparams, run_ids, ms, 1, cut[:2])
        assert _norm(got) == _norm(want), flag
    monkeypatch.setenv("EVALCORE_DERIVED", "1")

    def card():
        c = R.report_card(Store(data, tmp_path / "state"), "support-g1", n_boot=50, classes=classes)
        return _norm(json.loads(json.dumps(c.to_dict(), default=str)))

    first = card()
    assert first["queue"] == q["queue_id"]
    corrected = [j["corrected"] for c in first["criteria"] for j in c["judges"]]
    assert any(x.get("gold") == "queue" for x in corrected)
    monkeypatch.setenv("EVALCORE_DERIVED", "0")
    assert card() == first
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    shutil.rmtree(copy.parent)  # lost: streamed again from the label store
    assert card() == first and copy.is_file()
    meta = copy.parent / "index.json"
    doc = json.loads(meta.read_text())
    meta.write_text(json.dumps({**doc, "params": {"stamp": "sha256:0"}}))  # a copy of another queue: not read
    pq_before = copy.read_bytes()
    copy.write_bytes(b"not parquet")
    assert card() == first and copy.read_bytes() != b"not parquet"
    assert len(copy.read_bytes()) > 0 and pq_before[:4] == b"PAR1"
