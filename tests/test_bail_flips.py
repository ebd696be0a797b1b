"""Answer-versus-bail flips (issue 44, article 004): `evalcore bail-flips` and analysis.bail_flips,
on the demo (counted again here with pandas from the outputs' files) and on a hand-made import
whose flips are known, and the Runs page's block."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import DEMO, REPO, tree_hash

HEAD = ["item_id", "input", "output", "gen_round", "abstained", "criterion", "value"]
# item -> abstained per generation round (1, 2) in generation A, then in generation B
FLAGS = {
    "q0": ((False, False), (False, False)),  # never bails
    "q1": ((False, True), (False, True)),  # flips between rounds in both
    "q2": ((True, True), (False, False)),  # flips between configurations only
    "q3": ((True, True), (True, True)),  # always bails
    "q4": ((False, False), (True, False)),  # flips between rounds in B, and between configurations
}


def _pandas_flips(gens: list[str]) -> tuple[int, set[str]]:
    items = pd.read_parquet(DEMO / "suites" / "accounts" / "items.parquet")
    hold = set(items.loc[items["holdout"], "item_id"])
    frames = []
    for g in gens:
        o = pd.read_parquet(DEMO / "generations" / g / "outputs.parquet")
        frames.append(o[o["error"].isna() & ~o["item_id"].isin(hold)].assign(gen=g))
    r = pd.concat(frames)
    per = r.groupby("item_id").agg(gens=("gen", "nunique"), n=("abstained", "nunique"))
    kept = per[per["gens"] == len(gens)]
    return len(kept), set(kept.index[kept["n"] > 1])


def test_the_demo_lists_its_flips_as_pandas_counts_them(tmp_path, ev):
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "bail-flips", "--json")
    assert code == 0, err
    got = {f["suite_id"]: f for f in json.loads(out)}
    acc = got["accounts"]
    n, flipped = _pandas_flips(["accounts-g1", "accounts-g2"])
    assert acc["generations"] == ["accounts-g1", "accounts-g2"] and acc["items"] == n
    assert {x["item_id"] for x in acc["flipped_items"]} == flipped and acc["flipped"] == len(flipped) > 0
    assert acc["text"].startswith(f"{len(flipped)} of {n} items flipped between answering and bailing")
    n1, flipped1 = _pandas_flips(["accounts-g1"])
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "bail-flips", "accounts-g1", "--json")
    (one,) = json.loads(out)
    assert {x["item_id"] for x in one["flipped_items"]} == flipped1 and one["between_configurations"] == 0
    assert got["support"]["flipped"] == 0  # one round, one configuration: nothing can flip


def _import(tmp_path: Path, ev, data: Path, state: Path, which: int, suite: str | None) -> str:
    rows = [[i, f"Question {i}?", f"Answer {i} r{r} g{which}.", r, str(f[which][r - 1]).lower(), "ok", "pass"]
            for i, f in FLAGS.items() for r in (1, 2)]
    path = tmp_path / f"g{which}.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([HEAD, *rows])
    code, out, err = ev("--data", data, "--state", state, "import", "long", path, "--judge-model", "j-2025-01-01",
                        "--gen-id", f"gen{'AB'[which]}", *(["--suite", suite] if suite else []), "--json")
    assert code == 0, err
    return json.loads(out)["suite_id"]


def test_an_import_flips_where_its_flags_do(tmp_path, ev):
    data, state = tmp_path / "data", tmp_path / "state"
    suite = _import(tmp_path, ev, data, state, 0, None)
    _import(tmp_path, ev, data, state, 1, suite)
    code, out, err = ev("--data", data, "--state", state, "bail-flips", "genA", "genB", "--json")
    assert code == 0, err
    (f,) = json.loads(out)
    by = {x["item_id"]: x for x in f["flipped_items"]}
    assert sorted(by) == ["q1", "q2", "q4"] and f["items"] == 5
    assert by["q1"]["between_rounds"] == ["genA", "genB"] and not by["q1"]["between_configurations"]
    assert by["q2"]["between_rounds"] == [] and by["q2"]["between_configurations"]
    assert by["q4"]["between_rounds"] == ["genB"] and by["q4"]["between_configurations"]
    assert [(r["gen_id"], r["round"], r["abstained"]) for r in by["q4"]["readings"]] == [
        ("genA", 1, False), ("genA", 2, False), ("genB", 1, True), ("genB", 2, False)]
    assert f["text"] == "3 of 5 items flipped between answering and bailing (2 between generation rounds, " \
                        "2 between configurations)"
    code, out, err = ev("--data", data, "--state", state, "bail-flips", "genA")
    assert code == 0 and out.startswith(f"{suite} (genA): 1 of 5 items flipped") and "q1: genA r1 answer, genA r2 bail" in out


def test_generations_of_two_suites_are_refused_in_one_line(tmp_path, ev):
    before = tree_hash(DEMO)
    code, _, err = ev("--data", DEMO, "--state", tmp_path / "state", "bail-flips", "support-g1", "accounts-g1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "answer different suites" in err
    assert tree_hash(DEMO) == before


@pytest.mark.app
def test_the_runs_page_shows_the_flips(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    n, flipped = _pandas_flips(["accounts-g1", "accounts-g2"])
    (label,) = [x for e in at.expander if "Answer-versus-bail flips, accounts" in (x := html.unescape(e.label))]
    assert f"{len(flipped)} of {n} items flipped" in label
    (table,) = [d.value for d in at.dataframe if "readings" in d.value.columns]
    assert set(table["item"]) == flipped
