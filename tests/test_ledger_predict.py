"""A prediction written before the run (issue 44, article 004: "FALSIFIED"): `evalcore ledger
predict` writes the expected outcome, `ledger check` tests it against the run(s) that came (held /
falsified, with both numbers), on the demo and on an import; ledgers written before predictions
existed read as before; bad input is one line and writes nothing; the Ledger page shows it."""

from __future__ import annotations

import csv
import html
import json
import sqlite3

import pytest
from conftest import DEMO, REPO, tree_hash

from evalcore.review.ledger import Ledger
from evalcore.storage.store import Store


def _j(ev, data, state, *args):
    code, out, err = ev("--data", data, "--state", state, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_demo_prediction_is_falsified_and_another_holds_with_both_numbers(tmp_path, ev):
    st = tmp_path / "state"
    p = _j(ev, DEMO, st, "ledger", "predict", "--title", "split lifts all-pass", "--expect", ">= 45%", "--by", "ana")
    assert p["type"] == "prediction" and p["prediction"] == {"op": ">=", "value": 0.45, "text": ">= 45%"}
    (pending,) = _j(ev, DEMO, st, "ledger", "list")
    assert pending["outcome"]["state"] == "pending" and pending["outcome"]["text"].endswith("no run yet")
    e = _j(ev, DEMO, st, "ledger", "check", p["entry_id"], "--run", "support-split", "--by", "ana")
    mean = _j(ev, DEMO, st, "compare", "support-single", "support-split")["figures"]["all_pass"]["b"]["mean"]
    assert e["type"] == "falsified" and e["outcome"]["observed"] == mean < 0.45
    assert e["outcome"]["text"].startswith(f"predicted all_pass mean >= 45%; observed {100 * mean:.1f}%: FALSIFIED")
    assert "written after support-split was made" in e["outcome"]["text"]  # the demo's runs predate it
    d = _j(ev, DEMO, st, "ledger", "predict", "--title", "judge B is more lenient", "--expect", "> 0", "--by", "ana")
    e2 = _j(ev, DEMO, st, "ledger", "check", d["entry_id"], "--baseline", "support-split", "--candidate",
            "support-split-judgeB", "--by", "ana")
    delta = _j(ev, DEMO, st, "compare", "support-split", "support-split-judgeB")["figures"]["all_pass"]["delta"]["mean"]
    assert e2["type"] == "prediction" and e2["outcome"]["state"] == "held" and e2["outcome"]["observed"] == delta > 0
    code, out, _ = ev("--data", DEMO, "--state", st, "ledger", "export")
    assert code == 0 and "observed 40.0%: FALSIFIED" in out and "checked against support-split" in out
    code, out, _ = ev("--data", DEMO, "--state", st, "ledger", "list")
    assert "prediction" in out.splitlines()[0] and "FALSIFIED" in out


@pytest.mark.parametrize("args, words", [
    (("predict", "--title", "t", "--expect", "about 0.8", "--by", "ana"), "--expect: 'about 0.8' is not '<op> <value>'"),
    (("predict", "--title", "t", "--expect", ">= lots", "--by", "ana"), "--expect: '>= lots' is not"),
    (("add", "--title", "t", "--type", "prediction", "--run", "support-split", "--by", "ana"),
     "--type: a prediction is written before its run"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, ev, args, words):
    st = tmp_path / "state"
    before = tree_hash(DEMO, st)
    code, _, err = ev("--data", DEMO, "--state", st, "ledger", *args)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert tree_hash(DEMO, st) == before


def test_check_refuses_twice_a_non_prediction_and_a_missing_run(tmp_path, ev):
    st = tmp_path / "state"
    p = _j(ev, DEMO, st, "ledger", "predict", "--title", "t", "--expect", "< 0.5", "--by", "ana")
    a = _j(ev, DEMO, st, "ledger", "add", "--title", "t", "--type", "accepted", "--run", "support-split", "--by", "ana")
    for args, words in [(("check", a["entry_id"], "--run", "support-split"), "is not a prediction"),
                        (("check", p["entry_id"], "--run", "ghost"), "--run: no run 'ghost'"),
                        (("check", p["entry_id"]), "check a prediction against --run")]:
        code, _, err = ev("--data", DEMO, "--state", st, "ledger", *args, "--by", "ana")
        assert code == 2 and words in err, err
    _j(ev, DEMO, st, "ledger", "check", p["entry_id"], "--run", "support-split", "--by", "ana")
    code, _, err = ev("--data", DEMO, "--state", st, "ledger", "check", p["entry_id"], "--run", "support-split",
                      "--by", "ana")
    assert code == 2 and "was checked on" in err


def test_a_ledger_written_before_predictions_reads_as_before(tmp_path):
    store = Store(DEMO, tmp_path / "state")
    led = Ledger(store)
    e = led.add(title="old", by="ana", type_="accepted", runs=["support-split"])
    con = sqlite3.connect(led.path)  # an amend as the code before issue 44 wrote it: title, type and note only
    con.execute("INSERT INTO ledger_events (entry_id, action, at, by, payload) VALUES (?, 'amend', ?, 'ana', ?)",
                (e["entry_id"], "2026-01-02T00:00:00+00:00", json.dumps({"title": None, "type": None, "note": "n"})))
    con.commit()
    con.close()
    (old,) = led.entries()
    assert old["note"] == "n" and old["runs"] == ["support-split"] and "outcome" not in old
    assert old["figures_now"]["runs"]["support-split"]["mean"] == e["figures"]["runs"]["support-split"]["mean"]


def test_an_import_is_checked_against_its_own_mean(tmp_path, ev):
    data, st = tmp_path / "data", tmp_path / "state"
    data.mkdir()  # the prediction is written before the run: the data directory has no run yet
    passes = [1, 1, 0, 1, 1, 0, 1, 1, 0, 1]  # 7 of 10
    with (tmp_path / "r.csv").open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["item_id", "input", "output", "criterion", "value"]] + [
            [f"q{i}", f"Question {i}?", f"Answer {i}.", "ok", "pass" if v else "fail"] for i, v in enumerate(passes)])
    p = _j(ev, data, st, "ledger", "predict", "--title", "the new prompt passes 3 in 4", "--expect", ">= 0.75",
           "--by", "ana")
    run = _j(ev, data, st, "import", "long", tmp_path / "r.csv", "--judge-model", "j-2025-01-01")["run_id"]
    e = _j(ev, data, st, "ledger", "check", p["entry_id"], "--run", run, "--by", "ana")
    assert e["outcome"] == {"state": "falsified", "expected": ">= 0.75", "observed": 0.7, "of": "mean",
                            "text": "predicted all_pass mean >= 0.75; observed 0.7: FALSIFIED"}
    assert e["type"] == "falsified" and e["runs"] == [run]


@pytest.mark.app
def test_the_ledger_page_shows_the_prediction(tmp_path, ev, monkeypatch):
    from streamlit.testing.v1 import AppTest

    st = tmp_path / "state"
    p = _j(ev, DEMO, st, "ledger", "predict", "--title", "split lifts all-pass", "--expect", ">= 45%", "--by", "ana")
    _j(ev, DEMO, st, "ledger", "check", p["entry_id"], "--run", "support-split", "--by", "ana")
    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(st))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/11_ledger.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (table,) = [d.value for d in at.dataframe if "prediction" in d.value.columns]
    assert table["prediction"].iloc[0].startswith("predicted all_pass mean >= 45%; observed 40.0%: FALSIFIED")
    assert any("FALSIFIED" in html.unescape(e.value) for e in at.error)
    # writing one on the page: the form's fields, then its button
    at.text_input(key="p_title").set_value("judge B passes more")
    (expected,) = [t for t in at.text_input if t.label == "Expected"]
    (who,) = [t for t in at.text_input if t.label == "Who predicts"]
    expected.set_value("> 2%")
    who.set_value("ben")
    (go,) = [b for b in at.button if b.label == "Write the prediction"]
    go.click().run()
    assert not at.exception, [e.value for e in at.exception]
    new = Ledger(Store(DEMO, st)).get("L2")
    assert new["type"] == "prediction" and new["prediction"]["text"] == "> 2%" and new["added_by"] == "ben"


def test_amend_cannot_make_an_entry_a_prediction(tmp_path, ev):
    st = tmp_path / "state"
    a = _j(ev, DEMO, st, "ledger", "add", "--title", "t", "--type", "accepted", "--run", "support-split", "--by", "ana")
    code, _, err = ev("--data", DEMO, "--state", st, "ledger", "amend", a["entry_id"], "--type", "prediction",
                      "--by", "ana")
    assert code == 2 and "--type: a prediction is written before its run" in err
