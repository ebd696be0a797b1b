"""The review queue: each reason code is raised by exactly the cases planted for it (and prose never
raises one), the audit stratum is a seeded sample with its inclusion probabilities, the priority
order, the filters as bound SQL, the queue and decisions in the state directory, N reviewers with no
peeking, and the planted post-processing contradictions of the bundled demo."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import DEMO, EVALCORE, tree_hash
from queue_world import EXPECTED, NEGATIVE, NOTE_PROSE, make_queue_world

from evalcore import InputError, LabelError, LabelStore, Store
from evalcore import review as Q
from evalcore.analysis.suites import holdout_ids
from evalcore.review import audit as AU
from evalcore.review import reportcard as R


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("qw") / "data")


@pytest.fixture
def store(qworld, tmp_path) -> Store:
    return Store(qworld, tmp_path / "state")


def _by_code(cases: list[dict]) -> dict[str, set]:
    out: dict[str, set] = {c: set() for c in Q.PRIORITY}
    for c in cases:
        for r in c["reasons"]:
            out[r].add((c["item_id"], c["criterion"]))
    return out


# --------------------------------------------------------------------------- detection


def test_each_reason_code_raises_exactly_its_planted_cases(store):
    det = Q.detect(store, "qg")
    assert _by_code(det["raised"]) == EXPECTED
    assert {(c["item_id"], c["criterion"]) for c in det["raised"]} == set().union(*EXPECTED.values())
    assert det["population"] == 12 * 3 and len(det["agreed"]) == 36 - len(det["raised"])
    assert det["counts"] == {c: len(v) for c, v in EXPECTED.items()}


def test_prose_never_raises_a_case(store, qworld):
    """The negative case: the judge's reason and the answer say "couldn't find", while the structured
    fields say the answer covers every must-have item: nothing is raised on it."""
    reasons = duckdb.connect().sql(f"SELECT DISTINCT reason FROM '{qworld}/runs/ja-split/verdicts.parquet' "
                         f"WHERE item_id = '{NEGATIVE}' AND criterion = 'corr'").fetchall()
    assert reasons == [(NOTE_PROSE,)] and "couldn't find" in NOTE_PROSE
    det = Q.detect(store, "qg")
    assert NEGATIVE not in {c["item_id"] for c in det["raised"]}
    assert {(c["item_id"], c["criterion"]) for c in det["agreed"] if c["item_id"] == NEGATIVE} == {
        (NEGATIVE, "ok"), (NEGATIVE, "corr"), (NEGATIVE, "score")}


def test_what_raised_a_case_is_recorded(store):
    det = {(c["item_id"], c["criterion"]): c for c in Q.detect(store, "qg")["raised"]}
    assert det[("i07", "corr")]["detail"]["statement_contradicts"][0]["why"].startswith("verdict wrong, but the judge "
                                                                                         "lists every must-have")
    assert det[("i08", "score")]["detail"]["statement_contradicts"][0]["why"] == ("score at or above the threshold, "
                                                                                   "verdict fail")
    assert det[("i05", "corr")]["detail"]["postprocess_rewrite"][0] == {"run": "ja-split", "judge_round": 1,
                                                                         "raw_verdict": "correct", "derived": "wrong"}
    assert det[("i02", "ok")]["detail"]["harness_disagree"] == [{"runs": ["ja-single", "ja-split"],
                                                                 "verdicts": ["fail", "pass"]}]
    assert det[("i04", "ok")]["detail"]["rounds_disagree"] == [{"run": "ja-split", "passes": 2, "rounds": 3}]
    assert det[("i02", "ok")]["runs"] == ["ja-single", "ja-split", "jb-split"]


# --------------------------------------------------------------------------- audit and order


def test_the_audit_is_a_seeded_sample_with_inclusion_probabilities(store):
    q1 = Q.build_queue(store, "qg", audit_rate=0.25, seed=7)
    q2 = Q.build_queue(store, "qg", audit_rate=0.25, seed=7)
    q3 = Q.build_queue(store, "qg", audit_rate=0.25, seed=8)
    labels = LabelStore(store)
    a1, a2, a3 = ([(c["item_id"], c["criterion"], c["audit_key"]) for c in labels.queue_cases(q["queue_id"])
                   if c["audit_key"] is not None] for q in (q1, q2, q3))  # fmt: skip
    n_agreed = 36 - 9  # nine cases are raised
    design = q1["audit_design"]["criteria"]
    # each criterion's cases, raised or agreed, audited ceil(rate * M) at a time
    assert sum(d["cases"] for d in design.values()) == 36
    assert all(d["budget"] == math.ceil(0.25 * d["cases"]) for d in design.values())
    assert len(a1) == sum(d["budget"] for d in design.values())
    assert sorted(a1) == sorted(a2) and sorted(a1) != sorted(a3)  # same seed, same draw
    cases = labels.queue_cases(q1["queue_id"])
    audited = [c for c in cases if c["stratum"] == "audit"]
    assert q1["agreed"] == n_agreed and q1["audit_sampled"] == len(audited) > 0
    # uniform sizes: an audited agreed case's inclusion probability is its criterion's tau (the next
    # key past the audit, a uniform's order statistic), below 1
    assert all(c["inclusion_prob"] == pytest.approx(design[c["criterion"]]["tau"]) for c in audited)
    assert all(c["inclusion_prob"] < 1 for c in audited)
    assert all(c["audit_size"] == 1.0 for c in audited)
    raised = [c for c in cases if c["stratum"] == "disagreement"]
    assert len(raised) == 9 and {c["inclusion_prob"] for c in raised} == {1.0}
    assert not ({(c["item_id"], c["criterion"]) for c in audited} & set().union(*EXPECTED.values()))
    # keys are u / size with the answer's u shared by its criteria: one answer, one u
    u = {}
    for c in cases:
        if c["audit_key"] is not None:
            assert u.setdefault((c["item_id"], c["gen_round"]), c["audit_key"] * c["audit_size"]) == pytest.approx(
                c["audit_key"] * c["audit_size"])
    q0 = Q.build_queue(store, "qg", audit_rate=0.0)
    assert q0["audit_sampled"] == 0 and all(d["budget"] == 0 for d in q0["audit_design"]["criteria"].values())
    full = Q.build_queue(store, "qg", audit_rate=1.0)
    assert full["audit_sampled"] == n_agreed
    assert all(d["tau"] is None for d in full["audit_design"]["criteria"].values())  # everything: pi = 1
    assert {c["inclusion_prob"] for c in labels.queue_cases(full["queue_id"])} == {1.0}
    with pytest.raises(InputError):
        Q.build_queue(store, "qg", audit_rate=1.5)
    with pytest.raises(InputError, match="uniform, active"):
        Q.build_queue(store, "qg", audit="sharp")
    with pytest.raises(InputError, match="epsilon"):
        Q.build_queue(store, "qg", audit="active", audit_epsilon=0)


def test_audit_draw_is_a_pure_seeded_sequential_poisson_sample():
    # 4 answers x 2 criteria; answer 2 is raised on criterion 0; answer 3 is a holdout item
    answer = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    crit = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    raised = np.array([False, False, False, False, True, False, False, False])
    eligible = answer != 3
    u = np.random.default_rng([5, 2]).random(4)
    d = AU.draw(answer, crit, ["a", "b"], raised, 0.5, 5, "active", eligible=eligible)
    # 3 eligible cases per criterion, budget ceil(1.5) = 2; sizes 1.0 raised, 0.5 agreed (epsilon 0.5)
    assert d.design["criteria"] == {
        "a": {"cases": 3, "budget": 2, "tau": pytest.approx(sorted(u[:3] / np.array([0.5, 0.5, 1.0]))[2])},
        "b": {"cases": 3, "budget": 2, "tau": pytest.approx(sorted(u[:3] / 0.5)[2])},
    }
    keys_a = u[:3] / np.array([0.5, 0.5, 1.0])
    first_a = [2 * int(i) for i in np.argsort(keys_a)[:2]]  # rows of criterion a: 0, 2, 4
    assert d.rows[:2].tolist() == first_a and 6 not in d.rows and 7 not in d.rows
    tau_a = d.design["criteria"]["a"]["tau"]
    assert d.pi[:2].tolist() == pytest.approx([min(1.0, (1.0 if r == 4 else 0.5) * tau_a) for r in first_a])
    assert d.place.tolist() == [0.25, 0.75, 0.25, 0.75]
    again = AU.draw(answer, crit, ["a", "b"], raised, 0.5, 5, "active", eligible=eligible)
    assert again.rows.tolist() == d.rows.tolist()
    assert AU.draw(answer, crit, ["a", "b"], raised, 0.0, 5).rows.size == 0


def test_priority_order(store):
    q = Q.build_queue(store, "qg", audit_rate=0.5, seed=1)
    cases = LabelStore(store).queue_cases(q["queue_id"])
    assert [c["rank"] for c in cases] == list(range(1, len(cases) + 1))
    everything = [c for c in cases if c["stratum"] == "disagreement"]
    # raised cases that are not audited keep the priority order; an audited one may come earlier
    raised = [c for c in everything if c["audit_key"] is None]
    tiers = [Q.PRIORITY.index(c["reasons"][0]) for c in raised]
    assert tiers == sorted(tiers)
    for c in everything:
        if c["audit_key"] is not None:
            later = [x for x in raised if x["rank"] < c["rank"]]
            assert all(Q.PRIORITY.index(x["reasons"][0]) <= Q.PRIORITY.index(c["reasons"][0]) for x in later)
    first = [c for c in everything if c["reasons"][0] == "statement_contradicts"]
    assert {(c["item_id"], c["criterion"]) for c in first} == EXPECTED["statement_contradicts"]
    assert max(c["rank"] for c in first) < min(c["rank"] for c in raised if c["reasons"][0] != "statement_contradicts")
    # within runs_disagree, the case with two reason codes comes first
    rd = [c for c in raised if c["reasons"][0] == "runs_disagree"]
    assert [len(c["reasons"]) for c in rd] == sorted((len(c["reasons"]) for c in rd), reverse=True)
    # audited cases are spread through the queue, not left at its end
    ranks = [c["rank"] for c in cases if c["stratum"] == "audit"]
    assert min(ranks) <= len(cases) // 3 and max(ranks) >= 2 * len(cases) // 3


# --------------------------------------------------------------------------- filters


@pytest.mark.parametrize("filters, sql, params", [
    (Q.Filters(), "", []),
    (Q.Filters(criteria=("ok",)), "c.criterion IN (?)", ["ok"]),
    (Q.Filters(reasons=("audit",)), "(c.stratum = 'audit')", []),
    (Q.Filters(reasons=("rounds_disagree", "audit")),
     "(c.stratum = 'audit' OR EXISTS (SELECT 1 FROM json_each(c.reasons) r WHERE r.value IN (?)))",
     ["rounds_disagree"]),
    (Q.Filters(runs=("ja-split", "x'; DROP TABLE edits; --")),
     "EXISTS (SELECT 1 FROM json_each(c.runs) r WHERE r.value IN (?, ?))", ["ja-split", "x'; DROP TABLE edits; --"]),
    (Q.Filters(classes=("account", "(none)"), criteria=("ok", "corr")),
     "c.criterion IN (?, ?) AND (c.class IN (?) OR c.class IS NULL)", ["ok", "corr", "account"]),
])
def test_filters_become_bound_sql(filters, sql, params):
    assert Q.filter_sql(filters) == (sql, params)


def test_filters_select_the_cases(store):
    q = Q.build_queue(store, "qg", audit_rate=1.0, seed=0)
    got = lambda **kw: {(c["item_id"], c["criterion"]) for c in Q.cases(store, q["queue_id"], Q.Filters.of(**kw))}
    assert got(reasons=["harness_disagree"]) == EXPECTED["harness_disagree"]
    assert got(reasons=["statement_contradicts", "postprocess_rewrite"]) == (
        EXPECTED["statement_contradicts"] | EXPECTED["postprocess_rewrite"])
    assert got(runs=["jb-split"]) >= {("i01", "ok"), ("i02", "ok")} and ("i03", "ok") not in got(runs=["jb-split"])
    assert all(c == "score" for _, c in got(criteria=["score"]))
    assert {i for i, _ in got(classes=["security"])} == {"i01", "i03", "i05", "i07", "i09", "i11"}
    assert len(got(reasons=["audit"])) == 27
    with pytest.raises(InputError):
        Q.filter_sql(Q.Filters(reasons=("nonsense",)))


# --------------------------------------------------------------------------- state, reviewers


def test_the_queue_and_decisions_live_in_the_state_directory(store, qworld, tmp_path):
    before = tree_hash(qworld)
    q = Q.build_queue(store, "qg", audit_rate=0.2, seed=0)
    c = Q.next_case(store, q["queue_id"], "ann")
    Q.decide(store, q["queue_id"], c["item_id"], c["gen_round"], c["criterion"], "ann", value=Q.decision_values(
        LabelStore(store).criterion_for("qg", c["criterion"]))[0])
    assert tree_hash(qworld) == before
    con = sqlite3.connect(tmp_path / "state" / "labels.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE queue_cases SET rank = 0")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM queues")
    con.close()


def test_n_reviewers_see_nothing_of_each_other_before_deciding(store):
    q = Q.build_queue(store, "qg", audit_rate=0.0, seed=0, reviewers_required=2)
    c = Q.next_case(store, q["queue_id"], "ann")
    key = (c["item_id"], c["gen_round"], c["criterion"])
    blind = Q.case_view(store, q["queue_id"], *key, "ann")
    assert blind["verdicts"] is None and blind["reasons"] is None and blind["detail"] is None
    assert blind["others"] is None and blind["stratum"] is None
    value = blind["choices"][0]
    Q.decide(store, q["queue_id"], *key, "ann", value=value, note="ann's note")
    seen = Q.case_view(store, q["queue_id"], *key, "ann")
    assert seen["verdicts"] and seen["reasons"] and seen["others"] == []
    # bob is offered the same case (it needs two reviewers) and sees nothing of ann's
    assert Q.next_case(store, q["queue_id"], "bob")["item_id"] == key[0]
    bob = Q.case_view(store, q["queue_id"], *key, "bob", blind=False)
    assert bob["verdicts"] and bob["others"] is None  # even with the verdicts shown, no other reviewer
    assert "ann" not in json.dumps(bob, default=str)
    Q.decide(store, q["queue_id"], *key, "bob", value=value)
    bob = Q.case_view(store, q["queue_id"], *key, "bob")
    assert [(o["reviewer"], o["value"], o["note"]) for o in bob["others"]] == [("ann", value, "ann's note")]
    done = [x for x in Q.cases(store, q["queue_id"]) if (x["item_id"], x["gen_round"], x["criterion"]) == key]
    assert done[0]["reviews"] == 2 and done[0]["complete"]
    assert Q.next_case(store, q["queue_id"], "cy")["item_id"] != key[0] or \
        Q.next_case(store, q["queue_id"], "cy")["criterion"] != key[2]
    # judge identities can stay hidden
    hidden = Q.case_view(store, q["queue_id"], *key, "bob", hide_judges=True)
    assert {v["judge"] for v in hidden["verdicts"]} <= {"judge A", "judge B", "judge C"}
    assert "ja-split" not in json.dumps(hidden, default=str)


def test_decisions_skips_test_wrong_and_undo(store):
    q = Q.build_queue(store, "qg", audit_rate=0.0, seed=0)
    c = Q.next_case(store, q["queue_id"], "ann")
    key = (c["item_id"], c["gen_round"], c["criterion"])
    with pytest.raises(LabelError, match="reviewer"):
        Q.decide(store, q["queue_id"], *key, "  ", value="pass")
    with pytest.raises(LabelError, match="what is wrong"):
        Q.decide(store, q["queue_id"], *key, "ann", outcome="test_wrong")
    v = Q.case_view(store, q["queue_id"], *key, "ann")["choices"]
    e1 = Q.decide(store, q["queue_id"], *key, "ann", value=v[0], tags=["tone"])
    with pytest.raises(LabelError, match="undo"):
        Q.decide(store, q["queue_id"], *key, "ann", outcome="skipped")
    e2 = Q.decide(store, q["queue_id"], *key, "ann", value=v[1])
    assert e2["supersedes"] == e1["edit_id"] and e2["queue"] == q["queue_id"]
    assert e2["reason_code"] == ",".join(c["reasons"])
    w = Q.undo(store, q["queue_id"], "ann")
    assert w["outcome"] == "withdrawn" and w["supersedes"] == e2["edit_id"]
    (now,) = LabelStore(store).standing("qg")
    assert now["edit_id"] == e1["edit_id"] and now["value"] == v[0]
    # the next case, marked test wrong with a note, is listed for repair
    c2 = Q.next_case(store, q["queue_id"], "ann")
    Q.decide(store, q["queue_id"], c2["item_id"], c2["gen_round"], c2["criterion"], "ann", outcome="test_wrong",
             note="the must-have list names the wrong page")
    rep = Q.flagged_for_repair(store, "qg")
    assert [(r["item_id"], r["note"]) for r in rep] == [(c2["item_id"], "the must-have list names the wrong page")]
    assert Q.undo(store, q["queue_id"], "nobody") is None


# --------------------------------------------------------------------------- the demo


@pytest.mark.skipif(not DEMO.exists(), reason="the bundled demo (data/demo) is not generated")
def test_the_demo_queue_holds_the_planted_post_processing_contradictions(tmp_path):
    st = Store(DEMO, tmp_path / "state")
    vpath = DEMO / "runs" / "support-ternary" / "verdicts.parquet"
    planted = {r[0] for r in duckdb.connect().sql(f"SELECT item_id FROM '{vpath}' WHERE raw_verdict = 'correct' "
                                        "AND label = 'wrong'").fetchall()}
    rewritten = {r[0] for r in duckdb.connect().sql(f"SELECT item_id FROM '{vpath}' WHERE raw_verdict <> label").fetchall()}
    assert len(planted) == 23 and len(rewritten) == 29
    q = Q.build_queue(st, "support-g1", audit_rate=0.05, seed=0)
    cases = Q.cases(st, q["queue_id"], Q.Filters.of(criteria=["correctness"], include_holdout=True))
    by = _by_code([c for c in cases if c["stratum"] == "disagreement"])
    assert {i for i, _ in by["statement_contradicts"]} == planted
    assert {i for i, _ in by["postprocess_rewrite"]} == rewritten
    # the reviewer's view leaves the suite's holdout items out by default: one planted contradiction
    # (and its rewrite) sits on a holdout item
    held = set(holdout_ids(st, "support"))
    assert planted & held == {"sup-0306"} and rewritten & held == {"sup-0306"}
    shown = _by_code([c for c in Q.cases(st, q["queue_id"], Q.Filters.of(criteria=["correctness"]))
                      if c["stratum"] == "disagreement"])
    assert {i for i, _ in shown["statement_contradicts"]} == planted - held
    assert {i for i, _ in shown["postprocess_rewrite"]} == rewritten - held
    # they lead the queue
    first = LabelStore(st).queue_cases(q["queue_id"])[:23]
    assert {c["item_id"] for c in first} <= planted | {c["item_id"] for c in first if c["stratum"] == "audit"}


def test_cli_queue_commands(qworld, tmp_path):
    base = [EVALCORE, "--data", str(qworld), "--state", str(tmp_path / "state")]
    run = lambda *a: subprocess.run(base + list(a), capture_output=True, text=True)  # noqa: E731
    r = run("queue", "detect", "qg", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"] == {c: len(v) for c, v in EXPECTED.items()}
    r = run("queue", "build", "qg", "--audit-rate", "0.5", "--seed", "2", "--reviewers", "2", "--json")
    assert r.returncode == 0, r.stderr
    q = json.loads(r.stdout)
    assert q["reviewers_required"] == 2 and q["audit_sampled"] == 14
    r = run("queue", "show", "qg", "--reason", "rounds_disagree", "--json")
    assert [c["item_id"] for c in json.loads(r.stdout)["cases"]] == ["i04"]
    r = run("queue", "decide", "--queue", q["queue_id"], "--item", "i04", "--criterion", "ok", "--reviewer", "ann",
            "--value", "pass", "--tag", "borderline", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["reason_code"] == "rounds_disagree"
    r = run("queue", "decide", "--queue", q["queue_id"], "--item", "i99", "--criterion", "ok", "--reviewer", "ann",
            "--value", "pass")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a case of queue" in r.stderr
    r = run("queue", "undo", "--queue", q["queue_id"], "--reviewer", "ann")
    assert r.returncode == 0 and "withdraws" in r.stdout
    r = run("queue", "list", "--json")
    assert [x["queue_id"] for x in json.loads(r.stdout)] == [q["queue_id"]]


def test_a_detection_past_its_memory_cap_is_made_once_more_uncapped(tmp_path, monkeypatch):
    """DuckDB cannot always spill the detection's ordered list aggregates (at 10M items x 2 runs
    they ran out at 600MB): past the cap it runs once more with DuckDB's own limit, and the cases
    are the same as under the cap."""
    import importlib

    D = importlib.import_module("evalcore.review.detect")  # (evalcore.review.detect is also a function)
    store = Store(DEMO, tmp_path / "a")
    (tmp_path / "x").mkdir()
    with pytest.raises(duckdb.OutOfMemoryException):  # the cap is really too small
        D._write_detection(store, "support-g1", D.runs_on(store, "support-g1"), tmp_path / "x", "1MB")
    # the last try has DuckDB's own limit, not the Store's cap on its connections (made too small
    # here as well: it was what the last try got before, and it failed at 180M)
    monkeypatch.setenv("EVALCORE_DUCKDB_MEMORY", "1MB")
    monkeypatch.setattr(D, "DETECT_MEMORY_RETRY", "1MB")
    small = D.stored_detection(store, "support-g1", memory_limit="1MB")
    monkeypatch.delenv("EVALCORE_DUCKDB_MEMORY")
    normal = D.stored_detection(Store(DEMO, tmp_path / "b"), "support-g1")
    assert (small.population, small.raised, small.counts) == (normal.population, normal.raised, normal.counts)
    assert small.path.read_bytes() == normal.path.read_bytes()


def test_a_schema_2_label_store_is_upgraded_and_its_old_queues_say_they_have_no_prefix(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    q = Q.build_queue(store, "qg", audit_rate=0.5, seed=1)
    c = Q.cases(store, q["queue_id"], limit=1)[0]
    value = Q.decision_values(LabelStore(store).criterion_for("qg", c["criterion"]))[0]
    Q.decide(store, q["queue_id"], c["item_id"], c["gen_round"], c["criterion"], "ann", value=value)
    path = LabelStore(store).path
    LabelStore(store).close()
    # what a store written before the audit's record looks like: no audit columns, schema_version 2
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE queues DROP COLUMN audit_design")
        con.execute("ALTER TABLE queue_cases DROP COLUMN audit_key")
        con.execute("ALTER TABLE queue_cases DROP COLUMN audit_size")
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    fresh = Store(qworld, tmp_path / "state")
    (old,) = LabelStore(fresh).queues("qg")
    assert old["audit_design"] is None and len(LabelStore(fresh).history()) == 1  # nothing lost
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("3",)
        cols = {r[1] for r in con.execute("PRAGMA table_info(queue_cases)")}
        assert {"audit_key", "audit_size"} <= cols
    card = R.report_card(fresh, "qg", n_boot=20)
    entries = [j.ppi for cr in card.criteria for j in cr.judges]
    assert entries and all(e.value is None or e.sample.startswith("shipped") for e in entries)
    # a new queue records its audit again
    q2 = Q.build_queue(fresh, "qg", audit_rate=0.5, seed=1)
    assert q2["audit_design"]["method"] == "uniform"
    assert any(x["audit_key"] is not None for x in LabelStore(fresh).queue_cases(q2["queue_id"]))
