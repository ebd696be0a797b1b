"""Slices: `--class` restricts every analysis figure to items of some classes (the suite's `class`
column), through the one selection every figure starts from. Checked against bare DuckDB over the
same Parquet files, on the bundled demo."""

from __future__ import annotations

import json
import subprocess

import duckdb
import pytest
from conftest import DEMO, EVALCORE

from evalcore import Selection, Store
from evalcore.analysis import attribution

RUN = "support-split"


def _cli(tmp_path, *args):
    return subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), *args],
                          capture_output=True, text=True)


def _direct(classes: list[str]) -> dict[str, tuple[int, int]]:
    """Per criterion (judged, failed) on judge round 1 over non-holdout items of these classes."""
    gen = json.loads((DEMO / "runs" / RUN / "manifest.json").read_text())["gen_id"]
    gen_suite = json.loads((DEMO / "generations" / gen / "manifest.json").read_text())["suite_id"]
    rows = duckdb.execute(
        f"SELECT criterion, count(passed), count(*) FILTER (WHERE NOT passed) FROM '{DEMO}/runs/{RUN}/verdicts.parquet' v "
        f"JOIN '{DEMO}/suites/{gen_suite}/items.parquet' i USING (item_id) "
        "WHERE judge_round = 1 AND NOT i.holdout AND list_contains(?, i.class) GROUP BY 1",
        [classes],
    ).fetchall()
    return {c: (int(j), int(f)) for c, j, f in rows}


@pytest.mark.parametrize("classes", [["billing"], ["billing", "returns"]])
def test_attribution_on_a_slice_equals_duckdb(tmp_path, classes):
    args = ["attribution", RUN, "--json"] + [x for c in classes for x in ("--class", c)]
    r = _cli(tmp_path, *args)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["selection"]["classes"] == classes
    got = {c["criterion"]: (c["judged"], c["failed"]) for c in out["criteria"]}
    assert got == _direct(classes)
    whole = attribution(Store(DEMO, tmp_path / "s2"), RUN, Selection())
    assert sum(c["judged"] for c in whole["criteria"]) > sum(j for j, _ in got.values())  # a slice is smaller


def test_an_unknown_class_is_one_line_naming_the_classes(tmp_path):
    r = _cli(tmp_path, "attribution", RUN, "--class", "nope")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "'nope'" in r.stderr and "billing" in r.stderr and "--class" in r.stderr


def test_a_slice_reaches_the_crosstab_and_flips(tmp_path):
    b = json.loads(_cli(tmp_path, "flips", "support-single", RUN, "--class", "shipping", "--json").stdout)
    assert b["selection"]["classes"] == ["shipping"]
    both = _direct(["shipping"])
    # every answer of the slice judged by both runs: at most what the split run judged on the slice
    assert {c["criterion"] for c in b["criteria"]} <= set(both)
    assert all(0 < c["n"] <= both[c["criterion"]][0] for c in b["criteria"])
    x = json.loads(_cli(tmp_path, "crosstab", RUN, "--a", "grounded", "--b", "answers_question", "--class", "shipping",
                        "--json").stdout)
    assert x["selection"]["classes"] == ["shipping"]
    assert x["table"]["total"]["total"] == both["grounded"][0]  # every shipping answer judged on both
    assert x["table"]["a_fail"]["total"] == both["grounded"][1]


def test_the_attribution_and_harness_pages_slice_as_the_cli_does(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(DEMO.parent.parent / "app.py"), default_timeout=30)
    at.run()
    at.switch_page("pages/2_attribution.py")
    at.query_params.update(run=RUN, **{"class": "billing,returns"})
    at.run()
    assert not at.exception and not at.error
    assert at.multiselect(key="slice|attribution").value == ["billing", "returns"]
    table = next(d for d in at.dataframe if d.key == "attr_table").value
    expected = json.loads(_cli(tmp_path, "attribution", RUN, "--class", "billing", "--class", "returns",
                               "--json").stdout)
    assert list(table["failed"]) == [c["failed"] for c in expected["criteria"]]
    at.multiselect(key="slice|attribution").set_value([]).run()  # no slice: every item again
    table = next(d for d in at.dataframe if d.key == "attr_table").value
    whole = json.loads(_cli(tmp_path, "attribution", RUN, "--json").stdout)
    assert list(table["failed"]) == [c["failed"] for c in whole["criteria"]]


def test_people_crosstab_takes_the_slice_too(tmp_path):
    base = ["people-crosstab", "support-g1", "--a", "grounded", "--b", "answers_question", "--json"]
    whole = json.loads(_cli(tmp_path, *base).stdout)["table"]["total"]["total"]
    parts = [json.loads(_cli(tmp_path, *base, "--class", c).stdout)["table"]["total"]["total"]
             for c in ("account", "billing", "returns", "shipping", "subscriptions")]
    assert all(p < whole for p in parts) and sum(parts) == whole  # the classes partition the items


def test_a_list_of_items_the_user_names_is_a_slice(tmp_path):
    ids = [r[0] for r in duckdb.sql(
        f"SELECT DISTINCT item_id FROM '{DEMO}/runs/{RUN}/verdicts.parquet' v JOIN '{DEMO}/suites/support/items.parquet' i "
        "USING (item_id) WHERE NOT i.holdout ORDER BY 1 LIMIT 40").fetchall()]
    f = tmp_path / "items.txt"
    f.write_text("# the first forty\n" + "\n".join(ids) + "\n", encoding="utf-8")
    r = _cli(tmp_path, "attribution", RUN, "--items", str(f), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["selection"]["items"] == 40
    direct = dict(duckdb.execute(
        f"SELECT criterion, count(passed) FROM '{DEMO}/runs/{RUN}/verdicts.parquet' WHERE judge_round = 1 "
        "AND list_contains(?, item_id) GROUP BY 1", [ids]).fetchall())
    assert {c["criterion"]: c["judged"] for c in out["criteria"]} == direct
    f.write_text("\n".join([*ids[:3], "no-such-item"]), encoding="utf-8")
    r = _cli(tmp_path, "attribution", RUN, "--items", str(f))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "'no-such-item'" in r.stderr and "--items" in r.stderr
    r = _cli(tmp_path, "attribution", RUN, "--items", str(tmp_path / "absent.txt"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--items" in r.stderr
