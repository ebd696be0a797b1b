"""The Streamlit app through AppTest: every page renders from app.py without an exception and with
its real content; deep links open an answer as plain text; bad ids and a missing data directory
are one st.error, never a traceback; and `import evalcore` loads neither streamlit nor litellm."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser_util import CRITERIA, ITEMS, REPO, RUN_PARTIAL, RUN_POLLUTED, RUN_SINGLE, RUN_SPLIT, make_world
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")
DEMO = REPO / "data" / "demo"
HOSTILE = '<img src="http://127.0.0.1:9/img.png"> <script>window.__pwned=1</script> ![x](http://127.0.0.1:9/md.png)'

# (page file, title, issue that builds it or None for a built page)
PAGES = [
    ("0_home.py", "evalcore", None),
    ("1_runs.py", "Runs", None),
    ("2_attribution.py", "Failure attribution", None),
    ("3_association.py", "Criteria association", None),
    ("4_harness.py", "Harness comparison", None),
    ("5_review.py", "Review queue", None),
    ("6_agreement.py", "Agreement and judge report card", None),
    ("7_pairwise_grading.py", "Pairwise grading", None),
    ("8_pairwise_results.py", "Pairwise results", None),
    ("9_compare.py", "Compare configurations", None),
    ("10_cost.py", "Cost", None),
    ("11_ledger.py", "Ledger", None),
    ("12_labels.py", "Labels", None),
    ("13_suites.py", "Suites", None),
    ("14_team.py", "Team", None),
]


def unescape(text: str) -> str:
    """What markdown shows for text made inert by pages._ui.md_escape or pages._ui.code_span."""
    span = re.fullmatch(r"(`+) (.*) \1", text, flags=re.S)
    return span.group(2) if span else html.unescape(text)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_world(tmp_path_factory.mktemp("world") / "data", hostile=HOSTILE, hostile_item="q1")


@pytest.fixture
def app(world, tmp_path, monkeypatch):
    """An AppTest of app.py over the test world, state in a fresh directory."""
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    return AppTest.from_file(APP, default_timeout=30)


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [unescape(e.value) for e in at.error]


def test_pages_on_disk_are_the_pages_tested():
    on_disk = sorted(p.name for p in (REPO / "pages").glob("*.py") if not p.name.startswith("_"))
    assert on_disk == sorted(p for p, _, _ in PAGES)


@pytest.mark.parametrize("page, title, issue", PAGES, ids=[p for p, _, _ in PAGES])
def test_every_page_renders(app, page, title, issue):
    at = app.run()
    _ok(at)
    at.switch_page(f"pages/{page}").run()
    _ok(at)
    assert [t.value for t in at.title] == [title]
    if issue is not None:
        assert len(at.info) == 1 and f"issue {issue}" in at.info[0].value and "Not built yet" in at.info[0].value


@pytest.fixture
def demo_app(tmp_path, monkeypatch):
    """An AppTest of app.py over the bundled SIMULATED demo, read in place."""
    if not (DEMO / "runs").is_dir():
        pytest.fail(f"the bundled demo is missing: {DEMO} (make demo)")
    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    return AppTest.from_file(APP, default_timeout=30)


def test_every_page_renders_on_the_bundled_demo(demo_app):
    at = demo_app.run()
    _ok(at)
    assert [t.value for t in at.title] == ["evalcore"]  # Home is "/" (issue 39)
    assert any("SIMULATED demo data" in m.value for m in at.sidebar.markdown)
    at.switch_page("pages/1_runs.py").run()  # (AppTest keeps no sidebar across a page switch)
    _ok(at)
    runs = at.dataframe[0].value
    status = dict(zip(runs["run"], runs["status"]))
    assert status["support-polluted"] == "⚠ polluted" and status["support-partial"] == "⚠ partial"
    assert status["support-single"] == "complete" and "support-split" in status
    for page, title, _ in PAGES[1:]:
        at.switch_page(f"pages/{page}").run()
        _ok(at)
        assert [t.value for t in at.title] == [title]


def test_runs_page_lists_every_run_with_status_flags(app, world):
    at = app.run()
    _ok(at)
    # sidebar: the data directory and the simulated badge (on Home, "/": AppTest keeps no sidebar
    # across a page switch)
    assert any(t.value == f"data: {world.resolve()}" for t in at.sidebar.text)
    assert any("SIMULATED demo data" in m.value for m in at.sidebar.markdown)
    at.switch_page("pages/1_runs.py").run()
    _ok(at)
    assert [t.value for t in at.title] == ["Runs"]
    # the interactive table and the plain one hold the same runs
    runs = at.dataframe[0].value
    assert list(runs["run"]) == sorted([RUN_PARTIAL, RUN_POLLUTED, RUN_SINGLE, RUN_SPLIT])
    plain = at.table[0].value.map(unescape)
    assert list(plain["run"]) == list(runs["run"])
    status = dict(zip(plain["run"], plain["status"]))
    assert status == {RUN_PARTIAL: "⚠ partial", RUN_POLLUTED: "⚠ polluted", RUN_SINGLE: "complete",
                      RUN_SPLIT: "complete"}
    # the flags are spelled out above the table
    warning = unescape(at.warning[0].value)
    assert f"{RUN_POLLUTED} is polluted" in warning and f"{RUN_PARTIAL} is partial" in warning
    assert RUN_SINGLE not in warning
    # the headline with its interval, then the same rate per judge round, at the CLI's precision
    assert [c for c in plain.columns if c.startswith("all pass")] == ["all pass", "all pass r1", "all pass r2",
                                                                      "all pass r3"]
    assert not [c for c in plain.columns if c.startswith("pass")]  # no pooled verdict rate
    out = subprocess.run([str(Path(sys.executable).with_name("evalcore")), "--data", str(world), "runs", "--json"],
                         capture_output=True, text=True, check=True).stdout
    for r in json.loads(out):
        row = plain[plain["run"] == r["run_id"]].iloc[0]
        ap = r["all_pass"]
        assert row["all pass"] == f"{100 * ap['rate']:.1f}% [{100 * ap['ci95'][0]:.1f}, {100 * ap['ci95'][1]:.1f}]"
        assert row["calls"] == str(r["calls"])
    assert list(runs["unpriced calls"]) == [0, 0, 0, 0]
    # generations and suites are there too
    assert list(at.dataframe[1].value["generation"]) == ["t-gen"]
    assert list(at.dataframe[2].value["suite"]) == ["t-suite"]


def test_no_badge_when_the_data_is_not_simulated(tmp_path, monkeypatch):
    data = make_world(tmp_path / "real", simulated=False)
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(APP, default_timeout=30).run()
    _ok(at)
    assert not any("SIMULATED" in m.value for m in at.sidebar.markdown)


def test_command_line_directories_win_over_the_environment(app, tmp_path, monkeypatch):
    other = make_world(tmp_path / "other", simulated=False)
    monkeypatch.setattr(sys, "argv", ["app.py", "--data", str(other), "--state", str(tmp_path / "st2")])
    at = app.run()
    _ok(at)
    assert any(t.value == f"data: {other.resolve()}" for t in at.sidebar.text)


def test_deep_link_opens_the_answer_as_text(app):
    app.query_params.update(run=RUN_SINGLE, item="q3", round="2")
    at = app.run()
    _ok(at)
    assert at.selectbox(key="answer_run").value == RUN_SINGLE
    assert at.selectbox(key="answer_item").value == "q3"
    assert at.number_input(key="answer_round").value == 2
    code = [c.value for c in at.code]
    assert "Open Settings and reset account 3 (round 2)." in code
    assert "How do I reset the password of account 3?" in code
    assert "- names the Settings page\n- mentions account 3" in code
    verdicts = [c for c in code if c.startswith(CRITERIA[0] + ":") or "reason:" in c]
    assert len(verdicts) == 3  # one block per judge round
    assert all(f"{c}:" in v for v in verdicts for c in CRITERIA)
    assert all("reason: The answer" in v for v in verdicts)


def test_hostile_answer_is_only_ever_plain_text(app):
    app.query_params.update(run=RUN_SINGLE, item="q1")
    at = app.run()
    _ok(at)
    assert HOSTILE in [c.value for c in at.code]  # the output, verbatim
    assert any(HOSTILE in c.value and "reason:" in c.value for c in at.code)  # the reasons
    # nothing that came from the data reaches a markdown-rendering element unescaped
    for el in list(at.markdown) + list(at.caption) + list(at.warning) + list(at.info) + list(at.subheader):
        assert "<script>" not in el.value and "![x](" not in el.value


def test_errored_verdicts_show_their_error(app):
    app.query_params.update(run=RUN_POLLUTED, item="q2", round="1")
    at = app.run()
    _ok(at)
    r1 = next(c.value for c in at.code if "ERROR" in c.value)
    assert "error: provider timeout after 3 attempts" in r1 and "nan" not in r1


@pytest.mark.parametrize("params, needle", [
    ({"run": "../../etc", "item": "q1"}, "is not a valid run id"),
    ({"run": "no-such-run", "item": "q1"}, "no run 'no-such-run'"),
    ({"run": RUN_SINGLE, "item": "nope"}, "no item 'nope'"),
    ({"run": "![x](http://127.0.0.1:9/e.png)", "item": "q1"}, "![x](http://127.0.0.1:9/e.png)"),
])
def test_bad_deep_links_are_one_error_not_a_traceback(app, params, needle):
    app.query_params.update(params)
    at = app.run()
    assert not at.exception
    assert len(at.error) == 1 and needle in unescape(at.error[0].value)
    assert re.fullmatch(r"(`+) .* \1", at.error[0].value)  # a code span: shown verbatim, loads nothing
    assert at.dataframe[0].value.shape[0] == 4  # the rest of the page is still there


def test_selecting_a_run_row_sets_the_query_params(app):
    at = app.run()
    at.switch_page("pages/1_runs.py").run()
    _ok(at)
    at.session_state["runs_table"] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    _ok(at)
    assert at.query_params.get("run") == at.dataframe[0].value["run"].iloc[2]
    assert at.selectbox(key="answer_run").value == at.query_params["run"]
    # then picking an item puts it in the link too, and the answer appears
    at.selectbox(key="answer_item").set_value(ITEMS[1]).run()
    _ok(at)
    assert at.query_params.get("item") == ITEMS[1]
    assert any(c.value.startswith("Open Settings and reset account 2") for c in at.code)


def test_missing_data_directory_is_an_error_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert at.error and all("data directory does not exist" in unescape(e.value) for e in at.error)


def test_labels_page_shows_gold_by_its_policy_and_the_shipped_labels(app):
    import os

    from evalcore import LabelStore, Store
    at = app.run()
    at.switch_page("pages/12_labels.py").run()
    _ok(at)
    (shipped,) = [d.value for d in at.dataframe]  # nothing decided here yet: only the shipped labels
    assert len(shipped) == len(ITEMS) * len(CRITERIA)
    assert set(shipped["source"]) == {"shipped:t-human"}
    assert [b.label for b in at.get("download_button")] == ["Download the shipped labels (CSV)",
                                                            "Download gold (CSV, a column per reviewer)",
                                                            "Download every edit (CSV)"]
    # two reviewers who disagree give no gold; an adjudicator's decision does
    ls = LabelStore(Store(os.environ["EVALCORE_DATA"], os.environ["EVALCORE_STATE"]))
    item, crit = ITEMS[0], CRITERIA[0]
    ls.add(item_id=item, criterion=crit, value="pass", reviewer="alice")
    ls.add(item_id=item, criterion=crit, value="fail", reviewer="bob")
    at.run()
    _ok(at)
    gold = at.dataframe[0].value
    assert list(gold["status"]) == ["reviewers disagree: waits for an adjudicator"] and gold["gold"].isna().all()
    assert {m.label: m.value for m in at.metric}["Reviewers disagree"] == "1"
    ls.add(item_id=item, criterion=crit, value="fail", reviewer="dana", role="adjudicator")
    at.run()
    gold = at.dataframe[0].value
    assert (list(gold["status"]), list(gold["gold"]), list(gold["adjudicator"])) == (["gold"], ["fail"], ["dana"])


def test_import_evalcore_loads_neither_streamlit_nor_litellm():
    code = ("import sys, evalcore, evalcore.analysis, evalcore.review, evalcore.pairwise, evalcore.storage, evalcore.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'litellm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_a_round_outside_the_generation_is_clamped_with_a_warning(app):
    app.query_params.update(run=RUN_SINGLE, item="q2", round="7")
    at = app.run()
    _ok(at)
    assert any("showing round 2 instead of 7" in unescape(w.value) for w in at.warning)
    assert at.number_input(key="answer_round").value == 2
    assert "Open Settings and reset account 2 (round 2)." in [c.value for c in at.code]
    # switching to a run of the same generation keeps a valid round
    at.selectbox(key="answer_run").set_value(RUN_SPLIT).run()
    _ok(at)
    assert at.query_params["run"] == RUN_SPLIT and at.number_input(key="answer_round").value == 2


def test_every_page_file_is_named_as_its_url():
    """A deep link that is a fresh server's first request is resolved by Streamlit's pages-folder
    mode, by file name (``13_suites.py`` -> ``suites``), before app.py's ``st.navigation`` runs
    (pages/_ui.title then hands it to app.py): a page whose file name is not
    its URL path (``13_suite.py`` at ``/suites`` until session 19) sends that first visitor to the
    Runs page instead."""
    import ast

    tree = ast.parse((Path(__file__).resolve().parent.parent / "app.py").read_text())
    (pages,) = [n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES"]
    rows = ast.literal_eval(ast.unparse(pages).replace("READ", "None").replace("KEEP", "None").replace("GRADE", "None"))
    assert len(rows) == len(PAGES)
    for _section, file, _title, url, _roles in rows:
        assert re.sub(r"^\d+_", "", file.removesuffix(".py")) == url, (file, url)


def test_the_pages_mode_switch_is_checked_against_the_streamlit_it_runs_on():
    """pages/_ui.title switches Streamlit out of its pages-folder mode through an internal
    (``PagesManager.uses_pages_directory``, docs/ARCHITECTURE.md "Streamlit internals"). It was
    written for one version: another one must be checked by the deep-link and concurrent browser
    tests and the pin moved, and every page must draw its title through it (the call is what
    hands a lone page run to app.py)."""
    import streamlit
    from streamlit.runtime.pages_manager import PagesManager

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from pages import _ui

    assert streamlit.__version__ == _ui.PAGES_MODE_WRITTEN_FOR, (
        f"pages/_ui.title was written for Streamlit {_ui.PAGES_MODE_WRITTEN_FOR}, this is {streamlit.__version__}"
    )
    assert hasattr(PagesManager, "uses_pages_directory")
    root = Path(__file__).resolve().parent.parent / "pages"
    for page in sorted(root.glob("[0-9]*.py")):
        text = page.read_text()
        assert "_ui.title(" in text and "st.title(" not in text, page.name
