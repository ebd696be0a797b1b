"""A run's answers under the Runs table (issue 39: "'Select a row to open its answers below' opens no
answers ... an item id must be picked from a 540-entry list"; "an answer's verdicts are a monospace
dump ... a criterion that flipped between rounds is found by reading three blocks").

Selecting a run lists its answers, paged, one line per judge round with a mark per criterion and
a flipped criterion marked; the filters (failing criterion, judge round, generation round) give
the rows ``evalcore answers RUN --json`` gives; selecting a line opens that answer with its
verdicts as a grid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_util import CRITERIA, RUN_SINGLE, make_world
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest
from test_app import APP, _ok, unescape

from evalcore import Store
from evalcore.analysis import attribution, parse_selection, run_answers
from evalcore.cli import cli

pytestmark = pytest.mark.app
DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_world(tmp_path_factory.mktemp("answers") / "data")


@pytest.fixture
def app(world, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    return AppTest.from_file(APP, default_timeout=60)


def _cli(world: Path, state: Path, *args: str) -> dict:
    out = CliRunner().invoke(cli, ["--data", str(world), "--state", str(state), *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def _runs_page(at: AppTest, run_id: str) -> AppTest:
    at.run()
    at.switch_page("pages/1_runs.py").run()
    _ok(at)
    row = list(at.dataframe[0].value["run"]).index(run_id)
    at.session_state["runs_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    _ok(at)
    return at


def _list(at: AppTest):
    return next(d for d in at.dataframe if "judge round" in d.value.columns and "item" in d.value.columns)


def test_selecting_a_run_lists_its_answers_one_line_per_judge_round(app, world, tmp_path):
    at = _runs_page(app, RUN_SINGLE)
    table = _list(at).value
    cli_rows = _cli(world, tmp_path / "state", "answers", RUN_SINGLE, "--judge-round", "1", "--limit", "50")
    # t-single: 5 items outside the holdout x 2 generation rounds, 3 judge rounds each
    assert cli_rows["total"] == 10 and len(table) == 10 * 3
    assert list(table.columns) == ["item", "round", "class", "judge round", *CRITERIA]
    firsts = table[table["judge round"] == 1]
    assert [(r["item"], int(r["round"])) for _, r in firsts.iterrows()] == [
        (a["item_id"], a["gen_round"]) for a in cli_rows["answers"]
    ]
    marks = {"✓ pass": "pass", "✗ FAIL": "fail", "⚠ error": "error", "-": None}
    for k, a in enumerate(cli_rows["answers"]):
        for v in a["rounds"]:
            line = table.iloc[3 * k + v["judge_round"] - 1]
            shown = [line[c] for c in CRITERIA]
            assert [marks[x.removeprefix("↯ ")] for x in shown] == v["verdicts"]
            assert [c for c, x in zip(CRITERIA, shown) if x.startswith("↯ ")] == a["flipped"]
    assert any(a["flipped"] for a in cli_rows["answers"])  # the world has flips to see
    said = [unescape(c.value) for c in at.caption]
    assert any("10 answers; showing 1-10, one line per judge round" in c for c in said)
    assert any("evalcore answers t-single --judge-round 1 --limit 50 --offset 0 --json" in c for c in said)


def test_the_failing_filter_counts_what_attribution_counts(app, world, tmp_path):
    at = _runs_page(app, RUN_SINGLE)
    at.selectbox(key="answers_failing").set_value(CRITERIA[1]).run()
    at.selectbox(key="answers_judge").set_value("2").run()
    _ok(at)
    table = _list(at).value
    store = Store(world, tmp_path / "state")
    sel = parse_selection(2, None)
    failed = next(c.failed for c in attribution(store, RUN_SINGLE, sel).criteria if c.criterion == CRITERIA[1])
    res = run_answers(store, RUN_SINGLE, CRITERIA[1], sel)
    assert res.total == failed and len(table) == 3 * failed
    second = table[table["judge round"] == 2]  # every listed answer fails it in judge round 2
    assert all(x.removeprefix("↯ ") == "✗ FAIL" for x in second[CRITERIA[1]])
    assert any(f"{failed} answers failing {CRITERIA[1]} in judge round 2" in unescape(c.value) for c in at.caption)
    cli_rows = _cli(
        world, tmp_path / "state", "answers", RUN_SINGLE, "--failing", CRITERIA[1], "--judge-round", "2", "--limit", "50"
    )
    assert cli_rows == json.loads(json.dumps(res.to_dict()))


def test_selecting_a_line_opens_its_answer_with_a_verdict_grid(app):
    at = _runs_page(app, RUN_SINGLE)
    table = _list(at)
    line = 3 * 2 + 1  # the third answer's second judge round
    want = table.value[table.value["judge round"] == 1].iloc[2]
    at.session_state[f"answers_table|{RUN_SINGLE}|None|1|all|1"] = {  # run, filters, page
        "selection": {"rows": [line], "columns": [], "cells": []}
    }
    at.run()
    _ok(at)
    assert at.query_params.get("item") == want["item"] and at.query_params.get("round") == want["round"]
    assert at.selectbox(key="answer_item").value == want["item"]
    grid = next(d.value for d in at.dataframe if list(d.value.columns)[:1] == ["criterion"])
    assert list(grid["criterion"]) == CRITERIA
    assert list(grid.columns) == ["criterion", "judge round 1", "judge round 2", "judge round 3"]
    listed = table.value.iloc[line - 1 : line + 2]  # the answer's three lines in the list
    assert [list(grid[f"judge round {k}"]) for k in (1, 2, 3)] == [list(r[CRITERIA]) for _, r in listed.iterrows()]
    assert any(c.value.startswith("Open Settings and reset account") for c in at.code)  # the output, as text


def test_pages_of_fifty_on_the_demo(tmp_path):
    store = Store(DEMO, tmp_path / "state")
    first, third = run_answers(store, "support-single", limit=50), run_answers(store, "support-single", limit=50, offset=100)
    assert first.total == 540 and len(first.answers) == 50 and third.offset == 100
    assert first.answers[-1].item_id < third.answers[0].item_id
    assert all(len(a.rounds) == 3 and all(len(v.verdicts) == 6 for v in a.rounds) for a in first.answers)


def test_only_answers_with_a_flip(app, world, tmp_path):
    """The flip filter keeps exactly the answers whose grid shows a flip (the SQL over the judge
    rounds' masks and the grid over the verdict rows agree), on the page and in the CLI."""
    store = Store(world, tmp_path / "state")
    every = run_answers(store, RUN_SINGLE, limit=500)
    flips = [(a.item_id, a.gen_round) for a in every.answers if a.flipped]
    res = run_answers(store, RUN_SINGLE, limit=500, flipped=True)
    assert flips and [(a.item_id, a.gen_round) for a in res.answers] == flips and res.total == len(flips)
    failing = run_answers(store, RUN_SINGLE, CRITERIA[0], limit=500, flipped=True)
    assert {(a.item_id, a.gen_round) for a in failing.answers} == {
        (a.item_id, a.gen_round) for a in run_answers(store, RUN_SINGLE, CRITERIA[0], limit=500).answers if a.flipped
    }
    cli_rows = _cli(world, tmp_path / "state", "answers", RUN_SINGLE, "--flipped", "--limit", "500")
    assert cli_rows["flipped_only"] is True and cli_rows["total"] == len(flips)
    at = _runs_page(app, RUN_SINGLE)
    at.toggle(key="answers_flipped").set_value(True).run()
    _ok(at)
    table = _list(at).value
    assert len(table) == 3 * len(flips)
    assert all(any(str(x).startswith("↯ ") for x in r[CRITERIA]) for _, r in table.iterrows())
    assert any(f"{len(flips)} answers with a flip between judge rounds" in unescape(c.value) for c in at.caption)


def test_demo_flips_through_the_stored_answers_table(tmp_path):
    store = Store(DEMO, tmp_path / "state")
    every = [a for off in (0, 500) for a in run_answers(store, "support-single", limit=500, offset=off).answers]
    res = run_answers(store, "support-single", limit=500, flipped=True)
    assert res.total == sum(1 for a in every if a.flipped) == len(res.answers)


def _order(at: AppTest) -> list[str]:
    return [h.value for h in at.subheader if h.value in ("Answer", "Answers of a run")]


def test_an_answer_from_the_list_opens_under_it_and_the_same_answer_linked_later_opens_first(app):
    at = _runs_page(app, RUN_SINGLE)
    at.session_state[f"answers_table|{RUN_SINGLE}|None|1|all|1"] = {
        "selection": {"rows": [3], "columns": [], "cells": []}
    }
    at.run()
    _ok(at)
    link = {k: at.query_params[k] for k in ("run", "item", "round")}
    assert _order(at) == ["Answers of a run", "Answer"]  # under the list, where the click was
    at.switch_page("pages/2_attribution.py")
    at.query_params.clear()
    at.run()
    _ok(at)
    at.switch_page("pages/1_runs.py")  # a drill-down's link to that same answer
    at.query_params.clear()
    at.query_params.update(link)
    at.run()
    _ok(at)
    assert _order(at) == ["Answer", "Answers of a run"]
