"""The Suites page and the suite marks through AppTest from app.py: the page shows the figures of
`evalcore suite show / check / items --json`; repairing an item through its form writes a new suite
version (in the state directory, never the data) and resolves the flag, after which every page that
shows runs marks those on the old version ("suite v1, superseded by v2"); holdout items are hidden
by default on every page with the "Show holdout items" toggle, and each render with it on logs a
look."""

from __future__ import annotations

import html
import json
import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from browser_util import ITEMS, REPO, RUN_PARTIAL, RUN_POLLUTED, RUN_SINGLE, RUN_SPLIT, make_world
from conftest import EVALCORE, tree_hash
from streamlit.testing.v1 import AppTest

from evalcore import LabelStore, Store
from evalcore.analysis import suites as SU

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")
SUITE = "pages/13_suites.py"
RUNS = [RUN_PARTIAL, RUN_POLLUTED, RUN_SINGLE, RUN_SPLIT]
MARK = "suite v1, superseded by v2"
HOLDOUT = "q6"  # make_world holds out its sixth item


def unescape(text: str) -> str:
    span = re.fullmatch(r"(`+) (.*) \1", text, flags=re.S)
    return span.group(2) if span else html.unescape(text)


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [unescape(e.value) for e in at.error]


def page_text(at: AppTest) -> str:
    """Everything a page shows as text: markdown-rendering elements (unescaped), code blocks,
    tables, metrics, and the options of its pickers as they are displayed."""
    parts = []
    for kind in ("markdown", "caption", "warning", "info", "success", "error", "subheader", "title", "code"):
        parts += [unescape(str(e.value)) for e in at.get(kind)]
    parts += [m.label + " " + str(m.value) for m in at.metric]
    parts += [d.value.to_csv() for d in at.dataframe] + [t.value.to_csv() for t in at.table]
    for kind in ("selectbox", "multiselect", "radio"):
        for w in at.get(kind):
            parts += [str(o) for o in w.options]
    return "\n".join(parts)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_world(tmp_path_factory.mktemp("suiteworld") / "data")


@pytest.fixture
def env(world, tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    return world, state


def frame(at: AppTest, column: str):
    """The (first) table of the page that has this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def cli_json(data: Path, state: Path, *args: str, rc: int = 0):
    r = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args, "--json"], capture_output=True,
                       text=True)
    assert r.returncode == rc, r.stderr
    return json.loads(r.stdout)


def open_page(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(page)
    at.query_params.update(params)
    return at.run()


def test_the_suite_page_shows_what_the_cli_says(env):
    data, state = env
    at = open_page(SUITE)
    ok(at)
    assert [t.value for t in at.title] == ["Suites"]
    assert not any("Not built yet" in i.value for i in at.info)
    show = cli_json(data, state, "suite", "show", "t-suite")
    metrics = {m.label: m.value for m in at.metric}
    days = (datetime.now(timezone.utc) - datetime(2026, 1, 1, tzinfo=timezone.utc)).days
    assert show["age_days"] == days and show["items"] == 6 and show["holdout_items"] == 1
    assert show["tuning"]["generations"] == 1 and show["tuning"]["runs"] == 4 and show["tuning"]["uses"] == 5
    assert metrics == {"Version": "v1", "Items": "6", "Age": f"{days} days", "Used to tune": "5", "Open flags": "0"}
    # the findings and the items are the CLI's (holdout hidden by default on both)
    check = cli_json(data, state, "suite", "check", "t-suite", rc=1)
    shown = frame(at, "problem")
    assert [tuple(r) for r in shown[["check", "item_id", "problem"]].fillna("-").values] == [
        (f["check"], f["item_id"] or "-", f["problem"]) for f in check["findings"]]
    # make_world's manifest hash is not suite_hash(items), and its templated inputs are near duplicates
    assert check["counts"]["schema"] == 1 and check["counts"]["duplicates"] == 10
    assert check["holdout_findings_hidden"] == 5  # q6 is near every other item
    items = frame(at, "open_flags")
    assert list(items["item_id"]) == ITEMS[:5]
    listed = cli_json(data, state, "suite", "items", "t-suite")
    assert list(items["findings"]) == [r["findings"] for r in listed["rows"]]
    runs = frame(at, "judge model")
    assert sorted(runs["run"]) == RUNS and set(runs["suite version"]) == {"v1"}
    assert SU.looks(Store(data, state), "t-suite") == []  # nothing was looked at


def test_repair_through_the_form_marks_old_runs_on_every_page(env):
    data, state = env
    flag = LabelStore(Store(data, state)).add(item_id="q1", criterion="complete", reviewer="rev", outcome="test_wrong",
                                              gen_id="t-gen", note="the passage does not name the page")["edit_id"]
    data_hash = tree_hash(data)
    at = open_page(SUITE)
    ok(at)
    assert {m.label: m.value for m in at.metric}["Open flags"] == "1"
    assert at.selectbox(key="suite_item").value == "q1"  # the flagged item first
    at.selectbox(key="suite_field").set_value("context").run()
    ok(at)
    assert at.text_area(key="suite_new_value").value == "Passage 1: resets are done in Settings."
    assert at.selectbox(key="suite_flag").value == flag
    at.text_area(key="suite_new_value").input("Passage 1: resets are done in Settings > Security.")
    at.text_input(key="suite_by").input("ana")
    at.text_area(key="suite_why").input("the passage did not say where in Settings")
    at.button(key="suite_repair_submit").click().run()
    ok(at)
    assert any("Created v2 of t-suite" in unescape(s.value) and f"resolving flag {flag}" in unescape(s.value)
               for s in at.success)
    # a new version in the state directory, recording the change; the data is untouched
    assert tree_hash(data) == data_hash
    versions = cli_json(data, state, "suite", "versions", "t-suite")
    assert [(v["version"], v["where"], v["current"]) for v in versions] == [(1, "data", False), (2, "state", True)]
    (change,) = versions[1]["changes"]
    assert {k: change[k] for k in ("item_id", "field", "before", "after", "by", "why", "flag")} == {
        "item_id": "q1", "field": "context", "before": "Passage 1: resets are done in Settings.",
        "after": "Passage 1: resets are done in Settings > Security.", "by": "ana",
        "why": "the passage did not say where in Settings", "flag": flag}
    assert sorted(versions[0]["runs"]) == RUNS and versions[1]["runs"] == []
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Version"] == "v2" and metrics["Open flags"] == "0"
    assert MARK in page_text(at)

    # every page that shows a run marks it as on the old version
    from test_app import PAGES
    showing, unmarked = [], []
    for page, _title, _issue in PAGES:
        at.switch_page(f"pages/{page}").run()
        ok(at)
        name_box = [t for t in at.text_input if (t.key or "").startswith("review_name_")]
        if name_box:  # the review page asks who is reviewing before it shows anything
            name_box[0].input("ana").run()
            ok(at)
        text = page_text(at)
        if any(r in text for r in RUNS):
            showing.append(page)
            if MARK not in text:
                unmarked.append(page)
    assert {"1_runs.py", "2_attribution.py", "3_association.py", "4_harness.py", "5_review.py", "6_agreement.py",
            "9_compare.py", "13_suites.py"} <= set(showing)
    assert unmarked == [], f"these pages show runs but not that they are on {MARK}: {unmarked}"
    # the runs table and the CLI agree
    at.switch_page("pages/1_runs.py").run()
    table = at.dataframe[0].value
    assert set(table["suite version"]) == {MARK}
    assert {r["run_id"]: r["suite_mark"] for r in cli_json(data, state, "runs")} == {r: MARK for r in RUNS}


def test_holdout_hidden_by_default_and_each_look_logged(env):
    data, state = env
    st = Store(data, state)

    def looks() -> list[str]:
        return [x["page"] for x in SU.looks(st, "t-suite")]

    # runs: the item picker and the figures leave q6 out
    at = open_page("pages/1_runs.py", run=RUN_SINGLE)
    ok(at)
    assert HOLDOUT not in at.selectbox(key="answer_item").options
    plain = at.table[0].value.map(unescape)
    hidden = dict(zip(plain["run"], plain["all pass"]))
    cli_runs = {r["run_id"]: r for r in cli_json(data, state, "runs")}
    assert hidden[RUN_SINGLE].startswith(f"{100 * cli_runs[RUN_SINGLE]['all_pass']['rate']:.1f}% [")
    assert cli_runs[RUN_SINGLE]["items"] == 5 and looks() == []
    at.toggle(key="holdout|runs").set_value(True).run()
    ok(at)
    assert HOLDOUT in at.selectbox(key="answer_item").options
    shown = {r["run_id"]: r for r in cli_json(data, state, "runs", "--include-holdout")}
    assert shown[RUN_SINGLE]["items"] == 6
    plain = at.table[0].value.map(unescape)
    with_holdout = dict(zip(plain["run"], plain["all pass"]))[RUN_SINGLE]
    assert with_holdout.startswith(f"{100 * shown[RUN_SINGLE]['all_pass']['rate']:.1f}% [")
    assert shown[RUN_SINGLE]["all_pass"]["of"] != cli_runs[RUN_SINGLE]["all_pass"]["of"]
    assert looks() == ["runs", "cli:runs"]

    # attribution: 5 items x 2 rounds by default, 6 x 2 with the toggle
    at = open_page("pages/2_attribution.py", run=RUN_SINGLE)
    ok(at)
    assert {m.label: m.value for m in at.metric}["Complete answers"] == "10"
    at.toggle(key="holdout|attribution").set_value(True).run()
    ok(at)
    assert {m.label: m.value for m in at.metric}["Complete answers"] == "12"
    at.run()  # each render with the toggle on is a look
    assert looks() == ["runs", "cli:runs", "attribution", "attribution"]

    # the suite page: items and the repair form's picker
    at = open_page(SUITE)
    ok(at)
    assert HOLDOUT not in list(frame(at, "open_flags")["item_id"])
    assert HOLDOUT not in at.selectbox(key="suite_item").options
    at.toggle(key="holdout|suites").set_value(True).run()
    ok(at)
    assert HOLDOUT in list(frame(at, "open_flags")["item_id"])
    assert HOLDOUT in at.selectbox(key="suite_item").options
    assert looks()[-1] == "suites"

    # association, harness and review have the toggle too, off by default
    n = len(looks())
    for page, key in (("pages/3_association.py", "holdout|association"), ("pages/4_harness.py", "holdout|harness"),
                      ("pages/5_review.py", "holdout|review")):
        at = open_page(page)
        ok(at)
        if page == "pages/5_review.py":  # the review page asks who is reviewing first
            at.text_input(key="review_name_0").input("ana").run()
            ok(at)
        assert at.toggle(key=key).value is False and len(looks()) == n
        at.toggle(key=key).set_value(True).run()
        ok(at)
        n += 1
        assert len(looks()) == n and looks()[-1] == key.split("|")[1]
    # the reviewer's name is recorded with the look; without one, the name typed in the sidebar
    assert SU.looks(st, "t-suite")[-1]["who"] == "ana"
    at = open_page("pages/3_association.py")
    at.toggle(key="holdout|association").set_value(True).run()
    at.text_input(key="holdout_who|association").input("bo").run()
    ok(at)
    assert SU.looks(st, "t-suite")[-1]["who"] == "bo"


def test_a_deep_link_to_a_holdout_item_is_refused_until_shown(env):
    data, state = env
    at = open_page("pages/1_runs.py", run=RUN_SINGLE, item=HOLDOUT)
    assert not at.exception
    assert len(at.error) == 1 and "is a holdout item" in unescape(at.error[0].value)
    assert HOLDOUT not in [c.value for c in at.code]
    at.toggle(key="holdout|runs").set_value(True).run()
    ok(at)
    assert any(c.value.startswith("How do I reset the password of account 6?") for c in at.code)


def test_the_items_table_pages_and_filters_as_the_cli_does(env, monkeypatch):
    """The items are shown a page at a time (a suite may hold millions: the page reads one page in
    DuckDB and never offers every item in its picker); each page and the findings-only view list the
    rows `evalcore suite items --offset --limit [--only-findings]` lists."""
    from pages import _ui

    data, state = env
    monkeypatch.setattr(_ui, "TABLE_PAGE", 2)
    at = open_page(SUITE)
    ok(at)
    pager = at.number_input[0]
    assert pager.label == "Page (of 3)"  # 5 items shown (q6 held out), 2 a page
    for page, offset in ((1, 0), (2, 2), (3, 4)):
        if page > 1:
            pager.set_value(page).run()
            ok(at)
            pager = at.number_input[0]
        listed = cli_json(data, state, "suite", "items", "t-suite", "--offset", str(offset), "--limit", "2")
        assert list(frame(at, "open_flags")["item_id"]) == [r["item_id"] for r in listed["rows"]]
        assert f"--offset {offset} --limit 2" in page_text(at)
    # the picker offers the items with findings, then this page's items: not the whole suite
    check = cli_json(data, state, "suite", "check", "t-suite", rc=1)
    want = list(dict.fromkeys([f["item_id"] for f in check["findings"] if f["item_id"]] + [r["item_id"] for r in listed["rows"]]))
    assert at.selectbox(key="suite_item").options == want
    at.toggle(key="suite_only_findings").set_value(True).run()
    ok(at)
    only = cli_json(data, state, "suite", "items", "t-suite", "--only-findings", "--limit", "2")
    assert list(frame(at, "open_flags")["item_id"]) == [r["item_id"] for r in only["rows"]]
    assert all(r["findings"] for r in only["rows"]) and "with findings or open flags" in page_text(at)
