"""Grader fatigue (issue 44, article 001): a sitting cap that suggests a break (the grader can go on)
and each grader's first third against their last third (left share and agreement with the other
people, Fisher's exact test), on the demo's open session and on a session made from a user's own
answer files (`evalcore pairs sitting | drift`, evalcore.pairwise.fatigue)."""

from __future__ import annotations

import csv
import json
import shutil
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from conftest import DEMO
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import proportion_confint

import evalcore.pairwise.grading as G
from evalcore import Store
from evalcore.pairwise.fatigue import drift, sitting

T0 = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


def _pairs(store: Store, session: str) -> list[str]:
    return [r[0] for r in store.sql("SELECT pair_id FROM read_parquet(?) ORDER BY pair_id",
                                    [store.path_of("session", session, "pairs")])]  # fmt: skip


def _grade(store, session, reviewer, pairs, choices):
    for p, c in zip(pairs, choices, strict=True):
        G.record_judgment(store, session, p, reviewer, c)


def _check_third(t: dict, choices: list[str], others: list[str]) -> None:
    """A third's figures against counting by hand, its intervals against statsmodels' Wilson."""
    decided = [c for c in choices if c != "same"]
    k, n = sum(c == "left" for c in decided), len(decided)
    assert (t["left"]["k"], t["left"]["n"]) == (k, n)
    agree = sum(c == o for c, o in zip(choices, others, strict=True))
    assert (t["with_majority"]["k"], t["with_majority"]["n"]) == (agree, len(choices))
    for p in (t["left"], t["with_majority"]):
        if p["n"]:
            lo, hi = proportion_confint(p["k"], p["n"], alpha=0.05, method="wilson")
            assert p["interval"] == pytest.approx([lo, hi], abs=1e-12)


def _fisher(a: dict, b: dict) -> float:
    return fisher_exact([[a["k"], a["n"] - a["k"]], [b["k"], b["n"] - b["k"]]]).pvalue


def test_the_demo_open_session_shows_a_grader_drifting(ev, tmp_path):
    """ann starts with the right answer and agreeing with bob, ends picking left against him."""
    s = tmp_path / "s"
    store = Store(DEMO, s)
    pairs = _pairs(store, "accounts-practice")
    assert len(pairs) == 15
    ann = ["right"] * 5 + ["same"] * 5 + ["left"] * 5
    bob = ["right"] * 5 + ["same"] * 5 + ["right"] * 5
    _grade(store, "accounts-practice", "ann", pairs, ann)
    _grade(store, "accounts-practice", "bob", pairs, bob)
    code, out, err = ev("--data", DEMO, "--state", s, "pairs", "drift", "--session", "accounts-practice", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["ordered"], d["unordered"], d["too_few"]) == (30, 0, [])
    g = {x["reviewer"]: x for x in d["graders"]}["ann"]
    _check_third(g["first"], ann[:5], bob[:5])
    _check_third(g["last"], ann[-5:], bob[-5:])
    assert g["left_p"] == pytest.approx(_fisher(g["first"]["left"], g["last"]["left"]), abs=1e-12)
    assert g["agreement_p"] == pytest.approx(
        _fisher(g["first"]["with_majority"], g["last"]["with_majority"]), abs=1e-12
    )
    assert g["drifts"] and g["caveat"].startswith("ann's choices drift across their judgments: they picked the left")
    assert (
        "agreed with the other people's majority 100% of 5 in their first third, 0% of 5 in their last" in g["caveat"]
    )
    code, out, err = ev("--data", DEMO, "--state", s, "pairs", "drift", "--session", "accounts-practice")
    assert code == 0 and "ann (15): left share 0.0% of 5 -> 100.0% of 5" in out and g["caveat"] in out


def _own_session(ev, tmp_path):
    """A session made from two of the user's own answer files (no suite, no generation)."""
    d, s = tmp_path / "d", tmp_path / "s"
    d.mkdir()
    for arm, extra in (("a", "Short."), ("b", "A longer answer with several more words in it.")):
        with (tmp_path / f"{arm}.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["item_id", "output"])
            w.writerows([(f"q{i:02d}", f"Answer {i} from {arm}: {extra}") for i in range(12)])
    code, _, err = ev("--data", d, "--state", s, "pairs", "make", "--session", "mine", "--arm", f"a={tmp_path}/a.csv",
                      "--arm", f"b={tmp_path}/b.csv", "--keys", tmp_path / "k", "--json")  # fmt: skip
    assert code == 0, err
    return Store(d, s)


def test_a_session_of_ones_own_answers_with_a_steady_grader(ev, tmp_path):
    """A grader who does not drift gets no caveat; one with too few judgments is named apart."""
    store = _own_session(ev, tmp_path)
    pairs = _pairs(store, "mine")
    steady = ["left", "right", "right", "left"] * 3
    _grade(store, "mine", "cy", pairs, steady)
    _grade(store, "mine", "dee", pairs, steady)
    _grade(store, "mine", "eve", pairs[:3], steady[:3])
    d = drift(store, "mine")
    assert d.too_few == ["eve"] and d.caveats == []
    cy = next(g for g in d.graders if g.reviewer == "cy")
    assert (cy.first.left.k, cy.first.left.n, cy.last.left.k, cy.last.left.n) == (2, 4, 2, 4)
    assert (cy.first.with_majority.k, cy.first.with_majority.n, cy.last.with_majority.k) == (4, 4, 4)
    assert cy.left_p == pytest.approx(1.0) and not cy.drifts


def test_the_sitting_cap_suggests_a_break_and_a_pause_ends_the_sitting(ev, tmp_path, monkeypatch):
    store = _own_session(ev, tmp_path)
    pairs = _pairs(store, "mine")
    times = iter([T0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=2),  # a first sitting
                  T0 + timedelta(minutes=30), T0 + timedelta(minutes=31), T0 + timedelta(minutes=40)])  # fmt: skip
    monkeypatch.setattr(G, "utcnow", lambda: next(times))
    _grade(store, "mine", "cy", pairs[:6], ["left"] * 6)
    now = (T0 + timedelta(minutes=41)).isoformat()
    s = sitting(store, "mine", "cy", cap_judgments=3, now=now)
    assert (s.judgments, s.minutes, s.suggest_break) == (3, 11.0, True)
    assert s.message.startswith("You have graded 3 pairs over 11 minutes in this sitting. A break is suggested")
    assert not sitting(store, "mine", "cy", cap_judgments=4, now=now).suggest_break
    assert sitting(store, "mine", "cy", cap_judgments=40, cap_minutes=10, now=now).suggest_break
    later = sitting(store, "mine", "cy", cap_judgments=3, now=(T0 + timedelta(minutes=56)).isoformat())
    assert (later.judgments, later.suggest_break, later.message) == (0, False, None)
    code, out, err = ev("--data", store.data, "--state", store.state, "pairs", "sitting", "--session", "mine",
                        "--reviewer", "cy", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["cap_judgments"] == 40, err


def test_randomised_thirds_against_scipy_and_statsmodels(tmp_path):
    """Random choices of two graders on the demo's open session, several seeds: every figure of
    every grader against counting by hand, statsmodels' Wilson interval and scipy's Fisher test."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        state = tmp_path / f"s{seed}"
        shutil.rmtree(state, ignore_errors=True)
        store = Store(DEMO, state)
        pairs = list(rng.permutation(_pairs(store, "accounts-practice")))
        chosen = {r: list(rng.choice(["left", "right", "same"], size=15, p=[0.5, 0.35, 0.15])) for r in ("x", "y", "z")}
        for r, cs in chosen.items():
            _grade(store, "accounts-practice", r, pairs, cs)
        d = drift(store, "accounts-practice").to_dict()
        for g in d["graders"]:
            mine = chosen[g["reviewer"]]
            others = [[chosen[o][i] for o in chosen if o != g["reviewer"]] for i in range(15)]
            maj = [a if a == b else None for a, b in others]  # two others: a majority is both
            for part, idx in (("first", range(5)), ("last", range(10, 15))):
                keep = [i for i in idx if maj[i] is not None]
                t = g[part]
                decided = [mine[i] for i in idx if mine[i] != "same"]
                assert (t["left"]["k"], t["left"]["n"]) == (decided.count("left"), len(decided))
                agree = sum(mine[i] == maj[i] for i in keep)
                assert (t["with_majority"]["k"], t["with_majority"]["n"]) == (agree, len(keep))
                for p in (t["left"], t["with_majority"]):
                    if p["n"]:
                        lo, hi = proportion_confint(p["k"], p["n"], alpha=0.05, method="wilson")
                        assert p["interval"] == pytest.approx([lo, hi], abs=1e-12)
            for key, f in (("left_p", "left"), ("agreement_p", "with_majority")):
                if g["first"][f]["n"] and g["last"][f]["n"]:
                    assert g[key] == pytest.approx(_fisher(g["first"][f], g["last"][f]), abs=1e-12)
