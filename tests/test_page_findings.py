"""Findings of issue 39 on the analysis pages, through AppTest over the bundled demo:

* no HTML entity is shown literally: text made inert by ``pages._text.md_escape`` reads, in the
  browser, as ``html.unescape`` of it once; a label escaped twice would show ``&#44;`` (the
  Failure attribution and Criteria association drill-downs did, through ``_text.labelled_text``);
* the counts a page shows come from one function in evalcore and add up (the review queue's
  cases and their raised / audited parts; the cases where people disagree on Labels and on
  Agreement);
* no figure on screen carries more digits than it can (``2.6666666666666665``).
"""

from __future__ import annotations

import html
import re

import pytest
from browser_util import REPO
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")
DEMO = REPO / "data" / "demo"
ATTR, ASSOC = "pages/2_attribution.py", "pages/3_association.py"


@pytest.fixture
def demo(tmp_path, monkeypatch):
    if not (DEMO / "runs").is_dir():
        pytest.fail(f"the bundled demo is missing: {DEMO} (make demo)")
    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    return AppTest.from_file(APP, default_timeout=90)


def open_page(app: AppTest, page: str, **params: str) -> AppTest:
    app.switch_page(page)
    app.query_params.update(params)
    return app.run()


def select_row(at: AppTest, prefix: str, row: int) -> AppTest:
    key = next(d.key for d in at.dataframe if (d.key or "").startswith(prefix))
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    return at.run()


def shown(at: AppTest) -> list[str]:
    """What a reader sees of every markdown-rendering element and every table: markdown shows a
    numeric character reference as its character, once (``st.code`` is verbatim, so its text is
    the data's own and is left out)."""
    texts = [el.value for kind in ("markdown", "caption", "warning", "info", "error", "subheader", "success")
             for el in getattr(at, kind)]
    texts += [m.label for m in at.metric]
    for t in at.table:
        texts += [str(c) for c in t.value.columns] + [str(v) for v in t.value.to_numpy().ravel()]
    return [html.unescape(t) for t in texts]


def entities(at: AppTest) -> list[str]:
    assert not at.exception, [e.value for e in at.exception]
    return [t for t in shown(at) if re.search(r"&#?\w+;", t)]


def test_attribution_drill_down_shows_no_entity(demo):
    at = open_page(demo, ATTR, run="support-single", criterion="no_fabrication", only="1")
    at = select_row(at, "attr_answers|", 0)
    assert entities(at) == []
    assert any("The judge on this criterion, judge round" in t for t in shown(at))


def test_association_drill_down_shows_no_entity(demo):
    at = open_page(demo, ASSOC, a="cites_source", b="answers_question")
    at = select_row(at, "assoc_answers|", 2)
    assert entities(at) == []
    assert "support-single" in shown(at)  # the caption above each judge's verdicts


def test_harness_drill_down_shows_no_entity(demo):
    """pages/4_harness.py escapes its labels before labelled_text too: escaped once all the same."""
    at = open_page(demo, "pages/4_harness.py", a="support-single", b="support-split-judgeB", criterion="grounded",
                   dir="fail_a_pass_b")
    at = select_row(at, "harness_answers|", 1)
    assert entities(at) == []
    assert any(t.startswith("A (support-single): ") for t in shown(at))


# --------------------------------------------------------------------------- counts that add up


@pytest.fixture(scope="module")
def demo_queue(tmp_path_factory):
    """The demo with a review queue built in a state directory of the test's own."""
    import evalcore
    from evalcore.review.build import build_queue

    store = evalcore.Store(DEMO, tmp_path_factory.mktemp("queue-state"))
    return store, build_queue(store, "support-g1", audit_rate=0.05, seed=0)


def test_queue_cases_raised_and_audited_add_up(demo_queue):
    """The review page showed '1322 raised + 188 audited' (the header, holdout items among the
    raised) beside '0 of 1362' (progress, holdout items left out). The queue's counts now come from
    one function, and its parts add up to the cases shown."""
    from evalcore.review.queue import Filters, case_counts, cases, progress

    store, q = demo_queue
    built = q["flagged"] + q["audit_sampled"]
    for f in (None, Filters(include_holdout=True), Filters(criteria=("grounded",)), Filters(reasons=("audit",))):
        c = case_counts(store, q["queue_id"], f)
        prog = progress(store, q["queue_id"], "someone", f)
        assert {k: prog[k] for k in c} == c
        assert c["raised"] + c["audited"] == c["cases"] == prog["waiting_for_me"]
        listed = cases(store, q["queue_id"], f)
        assert c["cases"] == len(listed)
        assert c["raised"] == sum(r["stratum"] == "disagreement" for r in listed)
        assert c["audited"] == sum(r["stratum"] == "audit" for r in listed)
    c = case_counts(store, q["queue_id"])
    assert c["cases"] + c["holdout_hidden"] == built and c["holdout_hidden"] > 0
    assert c["audited"] == q["audit_sampled"] and c["raised"] + c["holdout_hidden"] == q["flagged"]
    assert case_counts(store, q["queue_id"], Filters(include_holdout=True)) == {
        "cases": built, "raised": q["flagged"], "audited": q["audit_sampled"], "holdout_hidden": 0}


def test_queue_list_counts_as_the_review_page_does(demo_queue, ev):
    """`queue list` printed the queue as built (raised 1322, holdout items among them) where the
    Review page counts 1174 raised, holdout left out: it now prints case_counts' parts, holdout
    hidden beside them, and with --include-holdout the queue as built."""
    import json

    from evalcore.review.queue import Filters, case_counts

    store, q = demo_queue
    where = ["--data", store.data, "--state", store.state]
    for extra, f in (([], None), (["--include-holdout"], Filters(include_holdout=True))):
        code, out, err = ev(*where, "queue", "list", "--json", *extra)
        assert code == 0, err
        (row,) = [r for r in json.loads(out) if r["queue_id"] == q["queue_id"]]
        assert {k: row[k] for k in ("cases", "raised", "audited", "holdout_hidden")} == case_counts(
            store, q["queue_id"], f
        )
        assert row["raised"] + row["audited"] == row["cases"]
        assert row["cases"] + row["holdout_hidden"] == q["flagged"] + q["audit_sampled"]
    plain = case_counts(store, q["queue_id"])
    assert plain["holdout_hidden"] > 0 and plain["raised"] < q["flagged"]
    code, out, _ = ev(*where, "queue", "list")
    head, line = out.splitlines()[:2]
    cells = line.split()
    assert "holdout hidden" in head and cells[3:6] == [str(plain[k]) for k in ("raised", "audited", "holdout_hidden")]


def test_labels_and_agreement_count_disagreements_alike(tmp_path, monkeypatch):
    """Labels said 18 reviewers disagree where Agreement said 19 people disagree: Agreement added
    the shipped labels' cases without a majority. Both pages now show evalcore.review.disagreements,
    split by who disagrees, and its sum is the report card's count."""
    import evalcore
    from evalcore.review.agreement import disagreements
    from evalcore.review.build import build_queue
    from evalcore.review.queue import cases, decide
    from evalcore.review.reportcard import report_card

    state = tmp_path / "state"
    store = evalcore.Store(DEMO, state)
    q = build_queue(store, "support-g1", audit_rate=0.05, seed=0)
    binary = [c for c in cases(store, q["queue_id"], limit=40) if c["criterion"] in ("grounded", "cites_source")]
    for k, c in enumerate(binary[:5]):  # ann and bob disagree on three cases, agree on two
        decide(store, q["queue_id"], c["item_id"], c["gen_round"], c["criterion"], "ann", value="pass")
        decide(store, q["queue_id"], c["item_id"], c["gen_round"], c["criterion"], "bob",
               value="fail" if k < 3 else "pass")
    d = disagreements(store, "support-g1")
    assert d.reviewers == 3 and d.annotators >= 1  # the demo ships one case its annotators split on
    assert d.reviewers + d.annotators == report_card(store, "support-g1", n_boot=20).gold.split
    assert disagreements(store) == d  # the demo's labels are all on support-g1

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    at = open_page(AppTest.from_file(APP, default_timeout=180), "pages/12_labels.py")
    assert not at.exception, [e.value for e in at.exception]
    assert next(m.value for m in at.metric if m.label == "Reviewers disagree") == str(d.reviewers)
    assert any(f"On {d.annotators} shipped case(s) the annotators reach no strict majority" in t for t in shown(at))
    at = open_page(at, "pages/6_agreement.py", gen="support-g1")
    assert not at.exception, [e.value for e in at.exception]
    gold = next(t for t in shown(at) if t.startswith("Gold: "))
    assert (f"{d.reviewers} cases where reviewers disagree" in gold
            and f"{d.annotators} shipped case{'' if d.annotators == 1 else 's'} whose annotators reach no majority" in gold), gold


# --------------------------------------------------------------------------- the Cost page's charts


def _chart_titles(at: AppTest) -> list[str]:
    import json

    return [str(json.loads(c.proto.spec).get("title")) for c in at.get("vega_lite_chart")]


def test_cost_says_in_words_that_a_single_call_run_shares_its_cost(demo, tmp_path):
    """A single-call run drew six identical bars per criterion; it now says so in words."""
    from evalcore import Store, analysis

    crits = analysis.run_cost(Store(DEMO, tmp_path / "state"), "support-single").per_criterion
    at = open_page(demo, "pages/10_cost.py", run="support-single")
    assert not at.exception, [e.value for e in at.exception]
    assert "Per criterion" not in _chart_titles(at)
    share = crits[0].cost_usd
    assert {c.cost_usd for c in crits} == {share} and len(crits) == 6
    said = [t for t in shown(at) if t.startswith("Every criterion shares the same")]
    assert said == [f"Every criterion shares the same {crits[0].calls:,} calls, so each of the 6 carries an equal "
                    f"share of them: ${share:,.4f}. There is nothing to compare between criteria in this run's cost; "
                    "a split or grouped run (or the projection below) tells them apart."]
    at = open_page(at, "pages/10_cost.py", run="support-split")
    assert "Per criterion" in _chart_titles(at)
    assert not any(t.startswith("Every criterion shares the same") for t in shown(at))


# --------------------------------------------------------------------------- numbers rounded


def test_labels_page_rounds_a_published_mean(tmp_path, monkeypatch):
    """A shipped mean of three 1-5 ratings was shown as 2.6666666666666665; it is 2.67 now
    (pages/_text.number, the one formatter), and whole values and words stay as they are."""
    from browser_util import make_world

    from evalcore import Store
    from evalcore import contract as S
    from pages import _text

    assert [_text.number(v) for v in ("2.6666666666666665", 2.5, "3", "pass", None, 4)] == [
        "2.67", 2.5, "3", "pass", None, 4]
    data = make_world(tmp_path / "data")
    rubric = S.Rubric(criteria=[S.Criterion(name="quality", kind="continuous", scale_min=1, scale_max=5,
                                            threshold=3)])
    Store(data, tmp_path / "unused").write_labelset(
        S.LabelSetManifest(labelset_id="t-mean", gen_id="t-gen", created_at="2026-01-01T00:00:00Z",
                           annotators=["mean"], rubric=rubric),
        [{"item_id": "q1", "gen_round": 1, "criterion": "quality", "annotator": "mean",
          "value": repr(8 / 3), "passed": False}])
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = open_page(AppTest.from_file(APP, default_timeout=90), "pages/12_labels.py")
    assert not at.exception, [e.value for e in at.exception]
    values = next(d.value for d in at.dataframe if "annotator" not in d.value.columns and "value" in d.value.columns)
    assert "2.67" in list(values["value"])
    assert not any(re.search(r"\.\d{3,}", str(v)) for v in values["value"])
