"""Issue 40: a judge model that is not a dated snapshot is flagged everywhere a judge is named, the
Cost page and the decision ledger too, as `runs`, `compare` and the report card flag it
(tests/test_judge_alias.py), and not when the run records it pinned (`import ... --judge-pinned`).

The world: the same answers (tests/golden/import/rag_long.csv) judged three times, by `gpt-4o`
(alias), by `gpt-4o` said to be pinned (pinned) and by `gpt-4o-2024-08-06` (dated); the pairwise
grader of an imported session named `gpt-4` (pairs-grader) is flagged the same way.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from conftest import REPO

GOLD = REPO / "tests" / "golden" / "import"
ARGS = ["--threshold", "3", "--scale", "1:5", "--mode", "split"]
SAID = "judge model '{}' is not a dated snapshot: its verdicts can change under the same name"
ALIAS = SAID.format("gpt-4o")


@pytest.fixture
def world(ev, tmp_path) -> Path:
    data = tmp_path / "d"
    for rid, model, extra in (
        ("alias", "gpt-4o", []),
        ("pinned", "gpt-4o", ["--judge-pinned"]),
        ("dated", "gpt-4o-2024-08-06", []),
    ):
        first = ["--suite-id", "rag"] if rid == "alias" else ["--suite", "rag"]  # the same generation
        code, _, err = ev(
            "--data",
            data,
            "import",
            "long",
            GOLD / "rag_long.csv",
            *ARGS,
            *first,
            "--run-id",
            rid,
            "--judge-model",
            model,
            *extra,
            "--json",
        )
        assert code == 0, err
    code, _, err = ev(
        "--data",
        data,
        "--state",
        tmp_path / "s",
        "import",
        "pairs",
        GOLD / "pairs.csv",
        "--arm-a",
        "concise",
        "--arm-b",
        "detailed",
        "--model-as-shown-col",
        "grader_as_shown",
        "--model-swapped-col",
        "grader_swapped",
        "--human-col",
        "rater_ana",
        "--judge-model",
        "gpt-4",
        "--seed",
        "1",
        "--keys",
        tmp_path / "k",
        "--json",
    )
    assert code == 0, err
    return data


def test_cost_json_flags_the_alias_but_not_a_pinned_or_dated_judge(world, ev):
    code, out, err = ev("--data", world, "cost", "--all", "--json")
    assert code == 0, err
    got = {r["run_id"]: r["judge_alias_warning"] for r in json.loads(out)}
    assert got == {"alias": ALIAS, "pinned": None, "dated": None, "pairs-grader": SAID.format("gpt-4")}
    for rid in got:
        code, out, err = ev("--data", world, "cost", rid, "--json")
        assert code == 0 and json.loads(out)["judge_alias_warning"] == got[rid], err


def test_cost_text_says_it_as_runs_does(world, ev):
    note = f"note: run alias: {ALIAS} (pinned? re-import with --judge-pinned)"
    code, out, err = ev("--data", world, "cost", "alias")
    assert code == 0 and [line for line in out.splitlines() if line.startswith("note: ")] == [note], err
    code, out, _ = ev("--data", world, "runs")
    assert note in out.splitlines()  # the same words
    code, out, _ = ev("--data", world, "cost", "pinned")
    assert code == 0 and "not a dated snapshot" not in out
    code, out, _ = ev("--data", world, "cost", "--all")
    assert [line for line in out.splitlines() if line.startswith("note: ")] == [
        note,
        f"note: run pairs-grader: {SAID.format('gpt-4')} (pinned? re-import with --judge-pinned)",
    ]


def test_the_ledger_flags_an_entry_resting_on_the_alias(world, ev, tmp_path):
    state = tmp_path / "state"
    code, out, err = ev(
        "--data",
        world,
        "--state",
        state,
        "ledger",
        "add",
        "--title",
        "pin the judge",
        "--baseline",
        "dated",
        "--candidate",
        "alias",
        "--by",
        "ana",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["flags"].count(f"run alias: {ALIAS}") == 1
    code, out, err = ev(
        "--data",
        world,
        "--state",
        state,
        "ledger",
        "add",
        "--title",
        "pinned judge",
        "--baseline",
        "dated",
        "--candidate",
        "pinned",
        "--by",
        "ana",
        "--json",
    )
    assert code == 0, err
    assert not [f for f in json.loads(out)["flags"] if "not a dated snapshot" in f]
    code, out, err = ev("--data", world, "--state", state, "ledger", "list", "--json")
    assert code == 0, err
    flags = {e["entry_id"]: [f for f in e["figures_now"]["flags"] if "dated snapshot" in f] for e in json.loads(out)}
    assert flags == {"L1": [f"run alias: {ALIAS}"], "L2": []}
    code, out, err = ev("--data", world, "--state", state, "ledger", "export", "--format", "md")
    assert code == 0 and out.count("not a dated snapshot") == 1, err


def _page(world: Path, tmp_path: Path, monkeypatch, page: str, **params: str):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params.update(params)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.app
def test_the_cost_page_says_it_in_the_runs_pages_words(world, tmp_path, monkeypatch):
    at = _page(world, tmp_path, monkeypatch, "pages/10_cost.py", run="alias")
    notes = [html.unescape(c.value) for c in at.caption if "Judge not pinned" in html.unescape(c.value)]
    tail = " (a snapshot named without its date: re-import with --judge-pinned if it is one)."
    every = f"Judge not pinned: alias: {ALIAS}; pairs-grader: {SAID.format('gpt-4')}{tail}"  # every configuration
    assert notes == [every, f"Judge not pinned: alias: {ALIAS}{tail}"]  # and the run shown
    at = _page(world, tmp_path, monkeypatch, "pages/10_cost.py", run="pinned")
    assert at.selectbox(key="cost_run").value == "pinned"
    assert [html.unescape(c.value) for c in at.caption if "Judge not pinned" in html.unescape(c.value)] == [every]


@pytest.mark.app
def test_the_ledger_page_shows_the_flag(world, ev, tmp_path, monkeypatch):
    code, _, err = ev(
        "--data",
        world,
        "--state",
        tmp_path / "state",
        "ledger",
        "add",
        "--title",
        "pin the judge",
        "--baseline",
        "dated",
        "--candidate",
        "alias",
        "--by",
        "ana",
    )
    assert code == 0, err
    at = _page(world, tmp_path, monkeypatch, "pages/11_ledger.py")
    (table,) = [d.value for d in at.dataframe if "flags" in d.value.columns]
    assert f"run alias: {ALIAS}" in table.loc[0, "flags"].split("; ")
    assert any(f"run alias: {ALIAS}" in html.unescape(w.value) for w in at.warning)
