"""The team view (evalcore.review.team) and slices given to named reviewers, on SQLite and on
PostgreSQL (conftest's ``backend``).

The fixture: a queue on the queue world's generation ``qg`` needing two reviewers per case
(N = 2); three reviewers and an adjudicator decide at known times (the label store's clock is
set by the test). Every figure is counted by hand below, and the library, ``evalcore queue team
--json`` and the Team page must give those numbers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from queue_world import ITEMS, make_queue_world

from evalcore import LabelError, Store
from evalcore import review as R

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)

# ---- who says what on criterion ok (binary), item by item
ALICE_FAILS = {"i01", "i02", "i03"}
BOB_FAILS = {"i01", "i04"}
DANA_SETTLES = {"i02": "fail", "i03": "pass", "i04": "fail"}  # the three cases alice and bob disagree on

# ---- when (seconds after T0)
ALICE_AT = [0, 30, 60, 90, 120, 150, 3750, 3770, 3790, 3810, 3830, 3850]  # 12 cases; a 3600 s break
BOB_AT = [45 * k for k in range(12)]  # 12 cases, 45 s apart
DANA_AT = [5000, 5090, 5150]

# ---- the hand count
# alice: 10 gaps kept (5 x 30 s, 5 x 20 s), one break (3600 s > 1800 s): median 25 s, 3600 * 10 / 250 = 144 per hour
# bob: 11 gaps of 45 s: median 45 s, 3600 * 11 / 495 = 80 per hour
# carol (see carol_works): events at 0, 60, 120, 180, 300, 400, 460, 2500 (the undo at 200 is no event):
#   gaps 60, 60, 60, 120, 100, 60 kept, 2040 a break: median 60 s, 3600 * 6 / 460 = 46.96 -> 47.0 per hour
# dana: gaps 90, 60: median 75 s, 3600 * 2 / 150 = 48 per hour
#
# gold on ok: i01 and i05-i12 unanimous (fail, pass x 8), i02 fail, i03 pass, i04 fail by dana
# alice against gold (12 cases): fail/fail i01 i02, fail/pass i03, pass/fail i04, pass/pass i05-i12 (8)
#   p_o = 10/12, p_e = (3*3 + 9*9)/144 = 90/144, kappa = (120 - 90)/(144 - 90) = 5/9 = 0.556; equal on 10/12 = 0.833
# bob against gold (12 cases): fail/fail i01 i04, pass/fail i02, pass/pass i03, i05-i12 (9)
#   p_o = 11/12, p_e = (2*3 + 10*9)/144 = 96/144, kappa = (132 - 96)/(144 - 96) = 3/4 = 0.75; equal 11/12 = 0.917
# against the adjudicator: 3 cases each, fewer than MIN_CASES = 10: no kappa. With a minimum of 3:
#   alice: fail/fail i02, fail/pass i03, pass/fail i04: p_o = 1/3, p_e = (2*2 + 1*1)/9, kappa = (3 - 5)/(9 - 5) = -0.5
#   bob: pass/fail i02, pass/pass i03, fail/fail i04: p_o = 2/3, p_e = (1*2 + 2*1)/9, kappa = (6 - 4)/(9 - 4) = 0.4
# carol decided corr on i01-i04 (pending: one reviewer of two), skipped corr on i05, i06, flagged i07: no gold
HAND = {
    ("alice", "reviewer"): dict(decided=12, test_wrong=0, skipped=0, timed=10, breaks=1, median_seconds=25.0,
                                cases_per_hour=144.0, adj=3, adj_kappa=-0.5, gold=12, gold_kappa=0.556, gold_share=0.833),
    ("bob", "reviewer"): dict(decided=12, test_wrong=0, skipped=0, timed=11, breaks=0, median_seconds=45.0,
                              cases_per_hour=80.0, adj=3, adj_kappa=0.4, gold=12, gold_kappa=0.75, gold_share=0.917),
    ("carol", "reviewer"): dict(decided=4, test_wrong=1, skipped=2, timed=6, breaks=1, median_seconds=60.0,
                                cases_per_hour=47.0, adj=0, adj_kappa=None, gold=0, gold_kappa=None, gold_share=None),
    ("dana", "adjudicator"): dict(decided=3, test_wrong=0, skipped=0, timed=2, breaks=0, median_seconds=75.0,
                                  cases_per_hour=48.0, adj=0, adj_kappa=None, gold=0, gold_kappa=None, gold_share=None),
}


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("team") / "data")


@pytest.fixture
def store(qworld, tmp_path, backend) -> Store:
    return Store(qworld, tmp_path / "state")


class Clock:
    def __init__(self):
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now

    def at(self, seconds: float) -> Clock:
        self.now = T0 + dt.timedelta(seconds=seconds)
        return self


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr("evalcore.storage.labels.utcnow", c)
    return c


def _decide(store, qid, clock, t, item, reviewer, criterion="ok", **kw):
    clock.at(t)
    return R.decide(store, qid, item, 1, criterion, reviewer, **kw)


def carol_works(store, qid, clock) -> None:
    for t, item, value in ((0, "i01", "correct"), (60, "i02", "correct"), (120, "i03", "partial"), (180, "i04", "wrong")):
        _decide(store, qid, clock, t, item, "carol", "corr", value=value)
    clock.at(200)
    assert R.undo(store, qid, "carol")["supersedes"] is not None  # takes back i04 "wrong"
    _decide(store, qid, clock, 300, "i04", "carol", "corr", value="partial")
    _decide(store, qid, clock, 400, "i05", "carol", "corr", outcome="skipped")
    _decide(store, qid, clock, 460, "i06", "carol", "corr", outcome="skipped")
    _decide(store, qid, clock, 2500, "i07", "carol", "corr", outcome="test_wrong", note="the reference is out of date")


def team_world(store, clock) -> str:
    q = R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=2)
    qid = q["queue_id"]
    for t, item in zip(ALICE_AT, ITEMS):
        _decide(store, qid, clock, t, item, "alice", value="fail" if item in ALICE_FAILS else "pass")
    for t, item in zip(BOB_AT, ITEMS):
        _decide(store, qid, clock, t, item, "bob", value="fail" if item in BOB_FAILS else "pass")
    carol_works(store, qid, clock)
    for t, (item, value) in zip(DANA_AT, DANA_SETTLES.items()):
        _decide(store, qid, clock, t, item, "dana", value=value, role="adjudicator")
    return qid


def _as_hand(r: dict) -> dict:
    keys = ("decided", "test_wrong", "skipped", "timed", "breaks", "median_seconds", "cases_per_hour")
    return {
        **{k: r[k] for k in keys},
        "adj": r["with_adjudicator"]["cases"],
        "adj_kappa": r["with_adjudicator"]["kappa"],
        "gold": r["with_gold"]["cases"],
        "gold_kappa": r["with_gold"]["kappa"],
        "gold_share": r["with_gold"]["agreement"],
    }


def test_the_team_view_equals_the_hand_count_and_the_cli(store, clock, ev, backend):
    qid = team_world(store, clock)
    report = R.team(store, qid)
    got = report.to_dict()
    assert (got["min_cases"], got["break_seconds"], got["reviewers_required"]) == (10, 1800, 2)
    rows = {(r["reviewer"], r["role"]): r for r in got["reviewers"]}
    assert list(rows) == list(HAND)  # reviewers by name, then the adjudicator
    for who, hand in HAND.items():
        r = rows[who]
        if who[1] == "reviewer" and hand["adj"]:
            assert r["with_adjudicator"]["kappa"] is None  # 3 shared cases < 10
            assert r["with_adjudicator"]["reason"] == "3 shared cases, fewer than the 10 a figure needs"
        want = {**hand, "adj_kappa": None} if hand["adj"] < 10 else hand
        assert _as_hand(r) == want, who
        g = r["with_gold"]
        if g["kappa"] is not None:
            assert g["lo"] <= g["kappa"] <= g["hi"]  # the interval of the stats helper holds the estimate
    # below a minimum of 3 the adjudicator figures appear, and equal the hand count too
    low = {(r.reviewer, r.role): r for r in R.team(store, qid, min_cases=3).reviewers}
    for who, hand in HAND.items():
        assert low[who].with_adjudicator.kappa == hand["adj_kappa"], who
    # the command line prints the same object
    code, out, err = ev("--data", store.data, "--state", store.state, "queue", "team", qid, "--json")
    assert code == 0, err
    assert json.loads(out) == got
    code, out, err = ev("--data", store.data, "--state", store.state, "queue", "team", qid)
    assert code == 0 and "alice" in out and "0.56 [" in out and "- (3 shared)" in out


def test_a_slice_is_handed_only_to_its_assignees(store, backend):
    q = R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=1)
    qid = q["queue_id"]
    a = R.assign(store, qid, ["alice"], classes=["security"], by="dana")
    assert (a.reviewers, a.slice["classes"], a.assigned_by) == (["alice"], ["security"], "dana")
    security = {(c["item_id"], c["criterion"]) for c in R.cases(store, qid) if c["class"] == "security"}
    assert a.cases == len(security) == 18  # 6 security items x 3 criteria
    # bob works the whole queue (each case skipped once offered): he is never handed a security case
    seen_bob = []
    while (c := R.next_case(store, qid, "bob")) is not None:
        seen_bob.append((c["item_id"], c["criterion"]))
        R.decide(store, qid, c["item_id"], 1, c["criterion"], "bob", outcome="skipped")
    assert seen_bob and not set(seen_bob) & security
    assert len(seen_bob) == 36 - 18  # every unassigned case was his to take
    # alice is handed the security cases (and unassigned ones too)
    first = R.next_case(store, qid, "alice")
    assert first is not None
    seen_alice = set()
    c = first
    while c is not None:
        seen_alice.add((c["item_id"], c["criterion"]))
        R.decide(store, qid, c["item_id"], 1, c["criterion"], "alice", outcome="skipped")
        c = R.next_case(store, qid, "alice")
    assert security <= seen_alice
    # taken back: bob may be handed a security case again
    back = R.assign(store, qid, [], classes=["security"], by="dana")
    assert back.reviewers == [] and R.assignments(store, qid) == []
    c = R.next_case(store, qid, "erin")
    assert c is not None


def test_overlapping_slices_hand_a_case_to_the_assignees_of_either(store):
    q = R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=1)
    qid = q["queue_id"]
    R.assign(store, qid, ["alice"], classes=["security"], by="dana")
    R.assign(store, qid, ["bob"], criteria=["ok"], by="dana")
    got = set()
    while (c := R.next_case(store, qid, "bob")) is not None:
        got.add((c["class"], c["criterion"]))
        R.decide(store, qid, c["item_id"], 1, c["criterion"], "bob", outcome="skipped")
    # bob: ok cases of either class (his slice), and the unassigned account cases; no security corr / score
    assert got == {("security", "ok"), ("account", "ok"), ("account", "corr"), ("account", "score")}
    carol = set()
    while (c := R.next_case(store, qid, "carol")) is not None:
        carol.add((c["class"], c["criterion"]))
        R.decide(store, qid, c["item_id"], 1, c["criterion"], "carol", outcome="skipped")
    assert carol == {("account", "corr"), ("account", "score")}


def test_assignment_is_checked(store, ev):
    q = R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=2)
    qid = q["queue_id"]
    with pytest.raises(LabelError) as e:
        R.assign(store, qid, ["alice"], classes=["security"], by="dana")
    assert e.value.field == "reviewer" and "needs 2 reviewers per case" in e.value.message
    with pytest.raises(Exception) as e2:
        R.assign(store, qid, ["alice", "bob"], classes=["nope"], by="dana")
    assert getattr(e2.value, "field", None) == "class"
    with pytest.raises(Exception) as e3:
        R.assign(store, qid, ["alice", "bob"], by="dana")
    assert getattr(e3.value, "field", None) == "slice"
    # the role is checked at the write: a typed name without the adjudicator or admin role is refused
    (store.state / "roles.toml").write_text('require_login = ["adjudicator", "admin"]\n')
    with pytest.raises(LabelError) as e4:
        R.assign(store, qid, ["alice", "bob"], classes=["security"], by="dana")
    assert e4.value.field == "role"
    (store.state / "roles.toml").unlink()
    code, out, err = ev("--data", store.data, "--state", store.state, "queue", "assign", qid, "--reviewer", "alice",
                        "--reviewer", "bob", "--reason", "runs_disagree", "--by", "dana", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["slice"]["reasons"] == ["runs_disagree"] and made["reviewers"] == ["alice", "bob"]
    code, out, err = ev("--data", store.data, "--state", store.state, "queue", "assignments", qid, "--json")
    assert code == 0 and json.loads(out) == [made]
    assert [a.to_dict() for a in R.assignments(store, qid)] == [made]


@pytest.mark.app
def test_the_team_page_shows_the_same_numbers_and_assigns(qworld, tmp_path, clock, monkeypatch, backend):
    """The Team page (AppTest): the table holds the hand count, and its form gives a slice to two
    reviewers, which the library then honours."""
    import html

    from conftest import REPO
    from streamlit.testing.v1 import AppTest

    store = Store(qworld, tmp_path / "state")
    qid = team_world(store, clock)
    monkeypatch.setenv("EVALCORE_DATA", str(qworld))
    monkeypatch.setenv("EVALCORE_STATE", str(store.state))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/14_team.py").run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    frame = at.dataframe[0].value
    rows = {(r["reviewer"], r["role"]): r for r in frame.to_dict("records")}
    assert list(rows) == list(HAND)
    for who, hand in HAND.items():
        r = rows[who]
        assert (r["decided"], r["skipped"], r["test is wrong"]) == (hand["decided"], hand["skipped"], hand["test_wrong"])
        assert (r["median s per case"], r["cases per hour"]) == (hand["median_seconds"], hand["cases_per_hour"])
        assert r["cases shared with vs gold"] == hand["gold"] and r["cases shared with vs adjudicator"] == hand["adj"]
        gold_k = r["κ vs gold"]
        assert (None if gold_k != gold_k else gold_k) == hand["gold_kappa"]  # NaN in the frame where None
    captions = html.unescape(" ".join(c.value for c in at.caption))
    assert "gaps over 30 minutes are breaks" in captions and "at least 10 shared cases" in captions
    assert "No kappa against gold for carol (0 shared with gold)" in captions
    # the assignment form, as an adjudicator named by hand (no login configured)
    next(t for t in at.text_input if (t.key or "").startswith("team_name_")).input("dana").run()
    at.multiselect(key="team_names").set_value(["alice", "bob"])  # a form's widgets are sent with its button
    at.multiselect(key="team_classes").set_value(["security"])
    next(b for b in at.button if b.label == "Assign the slice").click().run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert "18 cases given to alice, bob" in html.unescape(" ".join(s.value for s in at.success))
    made = R.assignments(store, qid)
    assert [(a.reviewers, a.slice["classes"], a.assigned_by) for a in made] == [(["alice", "bob"], ["security"], "dana")]
    c = R.next_case(store, qid, "carol")
    assert c is not None and c["class"] != "security"
