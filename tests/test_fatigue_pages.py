"""Grader fatigue and presentation on the pages (issue 44): the grading page suggests a break past
the grader's caps and the grader can go on; the results page shows each grader's drift with its
caveat; both say what normalisation removed, and the results page the structure check per arm."""

from __future__ import annotations

import html

import pytest
from conftest import DEMO
from test_pairs import random_session
from test_pairs_page import _ok, grading, open_app

from evalcore import Store
from evalcore import pairwise as P

pytestmark = pytest.mark.app


def test_the_grading_page_suggests_a_break_on_the_demo(tmp_path, monkeypatch):
    w = {"data": DEMO, "state": tmp_path / "state"}
    store = Store(DEMO, w["state"])
    for pid in [p["pair_id"] for p in P.load_pairs(store, "accounts-practice")][:3]:
        P.record_judgment(store, "accounts-practice", pid, "ann", "left")
    at = open_app(w, monkeypatch, session="accounts-practice", reviewer="ann")
    at.session_state["pw_cap_n"] = 3
    at = grading(at)
    said = [html.unescape(i.value) for i in at.info if "A break is suggested" in html.unescape(i.value)]
    assert len(said) == 1 and said[0].startswith("You have graded 3 pairs")
    assert [b.key for b in at.button if b.key.startswith("pw_judgment")]  # the grader can go on
    # the session info says what normalisation removed (issue 44: presentation measured apart)
    assert [c for c in at.caption if "did not compare, presentation" in html.unescape(c.value)]
    at.button(key="pw_judgment_same").click().run()
    _ok(at)
    assert len(P.JudgmentStore(store).current("accounts-practice", "ann")) == 4
    at.number_input(key="pw_cap_n").set_value(40).run()
    _ok(at)
    assert not [i for i in at.info if "A break is suggested" in html.unescape(i.value)]


def test_the_results_page_shows_a_drifting_grader(tmp_path, monkeypatch):
    w = random_session(tmp_path, 31, n_items=15, mirror=0.0, holdout=0)
    sid, st = w["session"], w["store"]
    pairs = [p["pair_id"] for p in P.load_pairs(st, sid)]
    for reviewer, choices in (("ann", ["right"] * 5 + ["same"] * 5 + ["left"] * 5), ("bob", ["right"] * 15)):
        for pid, c in zip(pairs, choices, strict=True):
            P.record_judgment(st, sid, pid, reviewer, c)
    P.close_session(st, sid, w["keys"], n_perm=9)
    at = open_app(w, monkeypatch, session=sid).run()
    at.switch_page("pages/8_pairwise_results.py").run()
    _ok(at)
    warned = [html.unescape(x.value) for x in at.warning]
    assert [v for v in warned if v.startswith("ann's choices drift across their judgments: they picked the left")]
    frame = next(d.value for d in at.dataframe if "left share, first third" in d.value.columns)
    assert list(frame["reviewer"]) == ["ann", "bob"]
    assert [i for i in at.info if "did not compare, presentation" in html.unescape(i.value)]
    structure = next(d.value for d in at.dataframe if "with headings" in d.value.columns)
    assert sorted(structure["arm"]) == sorted(w["arms"])
