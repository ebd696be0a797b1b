"""The Review queue page through AppTest: a decision is recorded with its provenance; with N = 2 the
second reviewer sees nothing of the first's decision before deciding; undo restores the previous
label in the history; blind-first hides the verdicts until a decision is made; every decision,
skip, undo and next has a keyboard shortcut; deep links open a case; the labels download."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import REPO
from queue_world import make_queue_world
from streamlit.testing.v1 import AppTest

from evalcore import LabelStore, Store

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("qworld") / "data")


@pytest.fixture
def app(world, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    at.switch_page("pages/5_review.py").run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _texts(at: AppTest) -> str:
    """Everything the page shows as text (code blocks, markdown, captions, alerts, tables)."""
    parts = [e.value for e in (*at.code, *at.markdown, *at.caption, *at.info, *at.success, *at.warning,
                               *at.subheader)]
    parts += [str(t.value) for t in at.table] + [str(d.value) for d in at.dataframe]
    return html.unescape("\n".join(str(p) for p in parts))


def _labels(world: Path, state: Path) -> LabelStore:
    return LabelStore(Store(world, state))


def _name(at: AppTest, reviewer: str) -> AppTest:
    """Give the page a reviewer's name (the name step of pages/_ui.identity), changing the name
    first when one is set."""
    change = [b for b in at.button if b.key == "review_change_name"]
    if change:
        change[0].click().run()
    box = next(t for t in at.text_input if (t.key or "").startswith("review_name_"))
    box.input(reviewer).run()
    return at


def _reveal_after(at: AppTest) -> AppTest:
    """Stay on a case after deciding it (the option; by default the next case comes at once)."""
    at.toggle(key="review_reveal_after").set_value(True).run()
    return at


def _start(at: AppTest, reviewer: str, *, n: int = 1) -> AppTest:
    _name(at, reviewer)
    if at.number_input(key="review_n") is not None and n != 1:
        at.number_input(key="review_n").set_value(n).run()
    at.button(key="review_build").click().run()
    _ok(at)
    return at


def _case(at: AppTest) -> tuple[str, int, str]:
    return at.query_params["item"], int(at.query_params["round"]), at.query_params["criterion"]


def _decide(at: AppTest, value: str | None = None) -> str:
    keys = [b.key for b in at.button if (b.key or "").startswith("review_decide_")]
    key = f"review_decide_{value}" if value is not None else keys[0]
    at.button(key=key).click().run()
    _ok(at)
    return key.removeprefix("review_decide_")


def test_a_decision_is_recorded_with_its_provenance(app, world, tmp_path):
    at = _start(app, "ann")
    queue_id = at.query_params["queue"]
    item, gen_round, crit = _case(at)
    at.text_area(key="review_note").input("the judge's own lists say it is fine").run()
    at.text_input(key="review_tags").input("post-processing, tone").run()
    value = _decide(at)
    (e,) = _labels(world, tmp_path / "state").history()
    assert (e["item_id"], e["gen_round"], e["criterion"], e["value"], e["outcome"]) == (item, gen_round, crit, value,
                                                                                       "decided")
    assert e["reviewer"] == "ann" and e["queue"] == queue_id and e["created_at"]
    assert e["reason_code"].split(",")[0] == "statement_contradicts"  # the first case in priority order
    assert e["note"] == "the judge's own lists say it is fine" and e["tags"] == ["post-processing", "tone"]
    assert any(s.value.startswith("Recorded edit") for s in at.success)
    # the note and tags boxes are cleared for the next decision, and Next moves on
    assert at.text_area(key="review_note").value == ""
    at.button(key="review_next").click().run()
    _ok(at)
    assert _case(at) != (item, gen_round, crit)


def test_one_key_decides_and_the_next_case_comes_at_once_and_b_goes_back(app, world, tmp_path):
    at = _start(app, "ann")
    first = _case(at)
    _decide(at)
    second = _case(at)
    assert second != first  # no second key: the next case is on screen
    assert [e["item_id"] for e in _labels(world, tmp_path / "state").history()] == [first[0]]
    at.button(key="review_back").click().run()
    _ok(at)
    assert _case(at) == first and any(b.label.startswith("Revise: ") for b in at.button)
    # the next case is the one leased to ann, not a fresh one
    at.button(key="review_next").click().run()
    assert _case(at) == second


def test_blind_first_hides_the_verdicts_until_a_decision(app):
    at = _start(app, "ann")
    before = _texts(at)
    assert "What the judges said" not in before and "reason:" not in before and "judge said" not in before
    assert "statement" not in before  # why the case is in the queue is hidden too
    assert any("Blind first" in i.value for i in at.info)
    _reveal_after(at)
    _decide(at)
    after = _texts(at)
    assert "What the judges said" in after and "reason:" in after and "judge said" in after
    assert "In the queue because" in after
    # with blind-first off, the verdicts show before deciding
    at.button(key="review_next").click().run()
    assert "reason:" not in _texts(at)
    at.toggle(key="review_blind").set_value(False).run()
    _ok(at)
    assert "reason:" in _texts(at)


def test_with_two_reviewers_the_second_sees_nothing_of_the_first(app, world, tmp_path):
    at = _reveal_after(_start(app, "ann", n=2))
    case = _case(at)
    at.text_area(key="review_note").input("ann-private-note").run()
    first = _decide(at)
    assert "Other reviewers" in _texts(at)  # ann sees the (empty) list of others once she decided
    _name(at, "bob")
    _ok(at)
    assert _case(at) == case  # the same case: it still needs a second reviewer
    seen = _texts(at)
    assert "ann" not in seen and "ann-private-note" not in seen and "Other reviewers" not in seen
    assert not any("ann" in (w.value or "") for w in at.text_input)  # only bob's own name
    second = _decide(at)
    seen = _texts(at)
    assert "ann-private-note" in seen and re.search(rf"ann: decided {first}", seen)
    hist = _labels(world, tmp_path / "state").standing("qg")
    assert sorted((e["reviewer"], e["value"]) for e in hist) == sorted([("ann", first), ("bob", second)])
    # the case is now complete: neither is offered it again
    at.button(key="review_next").click().run()
    assert _case(at) != case


def test_undo_restores_the_previous_label_in_the_history(app, world, tmp_path):
    at = _reveal_after(_start(app, "ann"))
    item, gen_round, crit = _case(at)
    keys = [b.key for b in at.button if (b.key or "").startswith("review_decide_")]
    first, second = keys[0].removeprefix("review_decide_"), keys[1].removeprefix("review_decide_")
    _decide(at, first)
    _decide(at, second)  # a revision after seeing the verdicts: a new edit superseding the first
    labels = _labels(world, tmp_path / "state")
    assert [e["value"] for e in labels.standing("qg")] == [second]
    at.button(key="review_undo").click().run()
    _ok(at)
    hist = labels.history()
    assert [h["outcome"] for h in hist] == ["decided", "decided", "withdrawn"]
    assert hist[1]["supersedes"] == hist[0]["edit_id"] and hist[2]["supersedes"] == hist[1]["edit_id"]
    (now,) = labels.standing("qg")
    assert (now["edit_id"], now["value"]) == (hist[0]["edit_id"], first)
    assert _case(at) == (item, gen_round, crit)  # undo goes back to the case
    assert any("withdrawn" in i.value for i in at.info)


def test_skip_and_test_wrong(app, world, tmp_path):
    at = _start(app, "ann")
    skipped = _case(at)
    at.button(key="review_skip").click().run()
    _ok(at)
    assert _case(at) != skipped
    # "the test is wrong" needs a note saying why
    at.button(key="review_test_wrong").click().run()
    assert any("say what is wrong" in e.value for e in at.error)
    at.text_area(key="review_note").input("the reference names the wrong page").run()
    at.button(key="review_test_wrong").click().run()
    outcomes = [h["outcome"] for h in _labels(world, tmp_path / "state").history()]
    assert outcomes == ["skipped", "test_wrong"]


def test_every_decision_skip_undo_and_next_has_a_shortcut(app):
    at = _start(app, "ann")
    shortcuts = {b.key: b.proto.shortcut for b in at.button}
    nav = {k: v for k, v in shortcuts.items() if k in ("review_skip", "review_undo", "review_next", "review_test_wrong")}
    assert nav == {"review_skip": "s", "review_undo": "u", "review_next": "n", "review_test_wrong": "t"}
    assert shortcuts["review_back"] == "b"
    decisions = {k: v for k, v in shortcuts.items() if k.startswith("review_decide_")}
    assert decisions and all(decisions.values())
    assert len(set(shortcuts.values()) - {""}) == len([v for v in shortcuts.values() if v])  # no key used twice


def test_a_deep_link_opens_the_case(world, tmp_path, monkeypatch):
    from evalcore.review.build import build_queue
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    q = build_queue(Store(world, tmp_path / "state"), "qg", audit_rate=0.5, seed=3)
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update(gen="qg", queue=q["queue_id"], item="i04", round="1", criterion="ok")
    at.run()
    at.switch_page("pages/5_review.py").run()
    _name(at, "cy")
    _ok(at)
    assert _case(at) == ("i04", 1, "ok")
    assert "Output (item i04, round 1)" in _texts(at)
    # a link to a case that is not in the queue is one error line
    at.query_params["item"] = "nope"
    at.run()
    assert not at.exception and any("is not a case of queue" in html.unescape(e.value) for e in at.error)


def test_the_labels_download_and_the_queue_lives_in_the_state(app, world, tmp_path):
    from conftest import tree_hash
    before = tree_hash(world)
    at = _start(app, "ann")
    _decide(at)
    (dl,) = [b for b in at.get("download_button")]
    assert "Download labels" in dl.label
    assert tree_hash(world) == before  # the queue and the decision went to the state directory
    assert (tmp_path / "state" / "labels.sqlite").exists()


def test_what_raised_a_case_is_said_in_words_and_a_score_scale_shows_its_range(app):
    at = _reveal_after(_start(app, "ann"))
    _decide(at)
    text = _texts(at)
    assert "What raised it" in text
    assert "{'" not in text and "'run':" not in text  # no raw Python dicts
    assert re.search(r"round \d+: ", text)  # "<run> round 1: <why>"
    # step to an ordinal case (score, 0-5): its keys read as the scale, not "0 0, 1 1"
    for _ in range(40):
        if _case(at)[2] == "score":
            break
        at.button(key="review_next").click().run()
        _ok(at)
    assert _case(at)[2] == "score", "the queue world has ordinal cases among its first 40"
    keys = next(c.value for c in at.caption if c.value.startswith("Keys: "))
    assert keys.startswith("Keys: 0 to 5 (the score)") and "0 0" not in keys


@pytest.mark.parametrize(
    ("code", "what", "words"),
    [
        ("runs_disagree", {"runs": ["r1", "r2"], "verdicts": ["fail", "pass"]}, "r1 says fail, r2 says pass"),
        ("harness_disagree", {"runs": ["single", "split"], "verdicts": ["pass", "fail"]},
         "single says pass, split says fail"),
        ("rounds_disagree", {"run": "r1", "passes": 1, "rounds": 3}, "r1: 1 of 3 judge rounds pass"),
        ("statement_contradicts", {"run": "t", "judge_round": 2, "why": "verdict wrong, but every item is covered"},
         "t round 2: verdict wrong, but every item is covered"),
        ("postprocess_rewrite", {"run": "t", "judge_round": 1, "raw_verdict": "correct", "derived": "wrong"},
         "t round 1: the judge said correct, post-processing made it wrong"),
    ],
)
def test_every_reason_has_words(code, what, words):
    from evalcore import review
    assert review.describe_detail(code, what) == words
