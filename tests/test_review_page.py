"""The Review queue page through AppTest: what the review card is handed (the data of the component,
pages/_card.py) — the reviewer's batch in priority order, nothing of the judges before a decision
(blind first), nothing of another reviewer's decision, a deep link's case first — and the page
around it (no queue yet, building one without taking a case, the labels download). The keys
themselves run in the browser: tests/test_browser_card.py; the acts they send:
tests/test_card.py."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

import pytest
from conftest import REPO
from conftest import card_data as card
from queue_world import make_queue_world
from streamlit.testing.v1 import AppTest

from evalcore import LabelStore, Store
from evalcore import review as R

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("qworld") / "data")


def _open(world: Path, state: Path, monkeypatch, **params: str) -> AppTest:
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update(params)
    at.run()
    at.switch_page("pages/5_review.py").run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _name(at: AppTest, reviewer: str) -> AppTest:
    change = [b for b in at.button if b.key == "review_change_name"]
    if change:
        change[0].click().run()
    next(t for t in at.text_input if (t.key or "").startswith("review_name_")).input(reviewer).run()
    return at


def _texts(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.info, *at.success, *at.warning)]
    return html.unescape("\n".join(str(p) for p in parts))


@pytest.fixture
def queue(world, tmp_path) -> str:
    return R.build_queue(Store(world, tmp_path / "state"), "qg", audit_rate=1.0, seed=3, reviewers_required=2)[
        "queue_id"
    ]


def test_the_card_holds_the_batch_in_priority_order_blind(world, tmp_path, monkeypatch, queue):
    at = _name(_open(world, tmp_path / "state", monkeypatch, gen="qg"), "ann")
    _ok(at)
    d = card(at)
    assert (d["queue"], d["reviewer"], d["role"]) == (queue, "ann", "reviewer")
    cases = d["cases"]
    assert len(cases) == R.card.BATCH and [c["rank"] for c in cases] == sorted(c["rank"] for c in cases)
    assert cases[0]["rank"] == 1
    first = R.cases(Store(world, tmp_path / "state"), queue, limit=1)[0]
    assert first["stratum"] == "disagreement" and first["reasons"]  # a raised case comes first
    assert (cases[0]["item"], cases[0]["criterion"]) == (first["item_id"], first["criterion"])
    # blind first: nothing of the judges, of why the case is in the queue, or of anyone's decision
    assert all(c["revealed"] is None for c in cases) and d["blind"] is True
    raw = json.dumps(d)
    assert "statement" not in raw and "judge said" not in raw
    # the batch is leased to ann: the rest of the team is offered other cases
    held = {
        (x["item_id"], x["criterion"])
        for x in R.leases(Store(world, tmp_path / "state"), queue)
        if x["reviewer"] == "ann"
    }
    assert held == {(c["item"], c["criterion"]) for c in cases}
    # with blind first off, the judges come with the cases
    at.toggle(key="review_blind").set_value(False).run()
    _ok(at)
    assert all(c["revealed"] and c["revealed"]["verdicts"] for c in card(at)["cases"])


def test_the_second_reviewer_sees_nothing_of_the_first(world, tmp_path, monkeypatch, queue):
    store = Store(world, tmp_path / "state")
    c = R.next_case(store, queue, "ann")
    key = (c["item_id"], int(c["gen_round"]), c["criterion"])
    value = R.card.one_case(store, queue, key, "ann")["choices"][0]["value"]
    R.decide(store, queue, *key, "ann", value=value, note="ann-private-note")
    at = _name(_open(world, tmp_path / "state", monkeypatch, gen="qg"), "bob")
    d = card(at)
    assert (d["cases"][0]["item"], d["cases"][0]["criterion"]) == (key[0], key[2])  # it still needs a second
    raw = json.dumps(d)
    assert "ann" not in raw and "ann-private-note" not in raw
    R.card.submit(
        store,
        queue,
        "bob",
        [
            {
                "id": "bob-act-0001",
                "kind": "decided",
                "item": key[0],
                "round": key[1],
                "criterion": key[2],
                "value": value,
            }
        ],
    )
    seen = R.card.one_case(store, queue, key, "bob")["revealed"]
    assert any(o.startswith(f"ann: decided {value}") and "ann-private-note" in o for o in seen["others"])


def test_a_deep_link_opens_its_case_first_and_a_wrong_one_is_one_line(world, tmp_path, monkeypatch, queue):
    at = _name(
        _open(world, tmp_path / "state", monkeypatch, gen="qg", queue=queue, item="i04", round="1", criterion="ok"),
        "cy",
    )
    _ok(at)
    d = card(at)
    assert (d["cases"][0]["item"], d["cases"][0]["round"], d["cases"][0]["criterion"]) == ("i04", 1, "ok")
    assert d["link"] == f"?gen=qg&queue={queue}"
    at.query_params["item"] = "nope"
    at.run()
    assert not at.exception and any("is not a case of queue" in html.unescape(e.value) for e in at.error)


def test_no_queue_says_so_and_building_one_takes_no_case(world, tmp_path, monkeypatch):
    at = _name(_open(world, tmp_path / "state", monkeypatch, gen="qg"), "ann")
    said = " ".join(i.value for i in at.info)
    assert "No review queue on qg yet: nothing waits for you here." in html.unescape(said)
    at.button(key="review_build").click().run()
    _ok(at)
    store = Store(world, tmp_path / "state")
    for _ in range(120):  # the build runs in a process of its own: the page's own poll, once a second
        if R.queues(store, "qg"):
            break
        time.sleep(0.5)
    (q,) = R.queues(store, "qg")
    assert R.leases(store, q["queue_id"]) == []  # building is not reviewing: nobody holds a case of it
    assert q["created_by"] == "ann"


def test_the_labels_download_and_the_queue_lives_in_the_state(world, tmp_path, monkeypatch, queue):
    from conftest import tree_hash

    before = tree_hash(world)
    at = _name(_open(world, tmp_path / "state", monkeypatch, gen="qg"), "ann")
    c = card(at)["cases"][0]
    R.card.submit(
        Store(world, tmp_path / "state"),
        queue,
        "ann",
        [
            {
                "id": "ann-act-0001",
                "kind": "decided",
                "item": c["item"],
                "round": c["round"],
                "criterion": c["criterion"],
                "value": c["choices"][0]["value"],
            }
        ],
    )
    (dl,) = [b for b in at.get("download_button")]
    assert "Download labels" in dl.label
    assert tree_hash(world) == before  # the queue and the decision went to the state directory
    assert (tmp_path / "state" / "labels.sqlite").exists()
    assert len(LabelStore(Store(world, tmp_path / "state")).history()) == 1


def test_what_raised_a_case_is_said_in_words(world, tmp_path, monkeypatch, queue):
    at = _name(_open(world, tmp_path / "state", monkeypatch, gen="qg"), "ann")
    at.toggle(key="review_blind").set_value(False).run()
    detail = [line for c in card(at)["cases"] for line in c["revealed"]["detail"]]
    assert detail and all("{'" not in t and "'run':" not in t for t in detail)  # no raw Python dicts


@pytest.mark.parametrize(
    ("code", "what", "words"),
    [
        ("runs_disagree", {"runs": ["r1", "r2"], "verdicts": ["fail", "pass"]}, "r1 says fail, r2 says pass"),
        (
            "harness_disagree",
            {"runs": ["single", "split"], "verdicts": ["pass", "fail"]},
            "single says pass, split says fail",
        ),
        ("rounds_disagree", {"run": "r1", "passes": 1, "rounds": 3}, "r1: 1 of 3 judge rounds pass"),
        (
            "statement_contradicts",
            {"run": "t", "judge_round": 2, "why": "verdict wrong, but every item is covered"},
            "t round 2: verdict wrong, but every item is covered",
        ),
        (
            "postprocess_rewrite",
            {"run": "t", "judge_round": 1, "raw_verdict": "correct", "derived": "wrong"},
            "t round 1: the judge said correct, post-processing made it wrong",
        ),
    ],
)
def test_every_reason_has_words(code, what, words):
    assert R.describe_detail(code, what) == words


def test_the_cards_counts_add_up(world, tmp_path, monkeypatch, queue):
    """The progress line says the queue's cases as their raised and audited parts, which add up (the
    issue saw "1322 raised + 188 audited" beside "0 of 1362": the queue as built beside the scope)."""
    import re

    at = _name(_open(world, tmp_path / "state", monkeypatch, gen="qg"), "ann")
    said = card(at)["progress"]
    m = re.search(r"of (\d+) cases handled \((\d+) raised \+ (\d+) audited", said)
    assert m is not None, said
    cases, raised, audited = map(int, m.groups())
    prog = R.progress(Store(world, tmp_path / "state"), queue, "ann")
    assert (cases, raised, audited) == (prog["cases"], prog["raised"], prog["audited"]) and raised + audited == cases
