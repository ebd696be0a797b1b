"""The runs picked on one page are the runs the next page opens on (issue 39: "the run picked on
Runs is forgotten on the next page"), and the link says so.

A browser drops the query parameters when the sidebar switches page (Streamlit clears them on
navigation); AppTest keeps them, so each switch below clears them as the browser would. The test
world's runs sort t-partial, t-polluted, t-single, t-split; every page's own default is another
run than t-split (attribution and cost: the first complete run, t-single), so a page showing
t-split shows the carried pick."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_util import RUN_POLLUTED, RUN_SINGLE, RUN_SPLIT, make_world
from streamlit.testing.v1 import AppTest
from test_app import APP, _ok

pytestmark = pytest.mark.app


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_world(tmp_path_factory.mktemp("carried") / "data")


@pytest.fixture
def app(world, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    return AppTest.from_file(APP, default_timeout=60)


def _go(at: AppTest, page: str) -> AppTest:
    """The sidebar's page switch: the browser's URL loses its query parameters."""
    at.switch_page(f"pages/{page}")
    at.query_params.clear()
    at.run()
    _ok(at)
    return at


def _pick_on_runs(at: AppTest, run_id: str) -> None:
    at.run()
    _go(at, "1_runs.py")
    row = list(at.dataframe[0].value["run"]).index(run_id)
    at.session_state["runs_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    _ok(at)
    assert at.query_params.get("run") == run_id


def test_the_run_picked_on_runs_opens_every_single_run_page(app):
    _pick_on_runs(app, RUN_SPLIT)
    _go(app, "2_attribution.py")
    assert app.selectbox(key="attr_run").value == RUN_SPLIT
    assert app.query_params.get("run") == RUN_SPLIT  # and the link says so
    _go(app, "10_cost.py")
    assert app.selectbox(key="cost_run").value == RUN_SPLIT
    assert app.query_params.get("run") == RUN_SPLIT
    _go(app, "3_association.py")
    assert app.multiselect(key="assoc_runs").value == [RUN_SPLIT]
    assert app.query_params.get("runs") == RUN_SPLIT


def test_the_run_picked_on_runs_is_run_a_of_the_two_run_pages(app):
    _pick_on_runs(app, RUN_SPLIT)
    for page, key_a, key_b in (("4_harness.py", "harness_a", "harness_b"), ("9_compare.py", "cmp_a", "cmp_b")):
        _go(app, page)
        a, b = app.selectbox(key=key_a).value, app.selectbox(key=key_b).value
        assert a == RUN_SPLIT and b != RUN_SPLIT, (page, a, b)
        assert (app.query_params.get("a"), app.query_params.get("b")) == (a, b)


def test_two_runs_picked_on_compare_open_harness_and_association_and_the_first_opens_runs(app):
    app.run()
    _go(app, "9_compare.py")
    app.selectbox(key="cmp_a").set_value(RUN_POLLUTED).run()
    app.selectbox(key="cmp_b").set_value(RUN_SINGLE).run()
    _ok(app)
    _go(app, "4_harness.py")
    assert (app.selectbox(key="harness_a").value, app.selectbox(key="harness_b").value) == (RUN_POLLUTED, RUN_SINGLE)
    _go(app, "3_association.py")
    assert app.multiselect(key="assoc_runs").value == [RUN_POLLUTED, RUN_SINGLE]
    _go(app, "1_runs.py")
    assert app.selectbox(key="answer_run").value == RUN_POLLUTED
    assert app.query_params.get("run") == RUN_POLLUTED


def test_a_run_picked_on_attribution_comes_back_to_runs(app):
    app.run()
    _go(app, "2_attribution.py")
    app.selectbox(key="attr_run").set_value(RUN_POLLUTED).run()
    _ok(app)
    _go(app, "1_runs.py")
    assert app.selectbox(key="answer_run").value == RUN_POLLUTED


def test_a_link_wins_over_the_remembered_run(app):
    _pick_on_runs(app, RUN_SPLIT)
    app.switch_page("pages/2_attribution.py")
    app.query_params.clear()
    app.query_params["run"] = RUN_POLLUTED
    app.run()
    _ok(app)
    assert app.selectbox(key="attr_run").value == RUN_POLLUTED


def test_home_does_not_take_a_remembered_run_for_a_link(app):
    """Home forwards a link naming a run (``/?run=R&item=I``, made when Runs was "/") to Runs; a run
    remembered from another page is no such link."""
    _pick_on_runs(app, RUN_SPLIT)
    _go(app, "0_home.py")
    assert [t.value for t in app.title] == ["evalcore"]
    assert "run" not in app.query_params
