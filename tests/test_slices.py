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
    return subprocess.run(
        [EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), *args], capture_output=True, text=True
    )


def _direct(classes: list[str]) -> dict[str, tuple[int, int]]:
    """Per criterion (judged, failed) on judge round 1 over non-holdout items of these classes."""
    gen = json.loads((DEMO / "runs" / RUN / "manifest.json").read_text())["gen_id"]
    gen_suite = json.loads((DEMO / "generations" / gen / "manifest.json").read_text())["suite_id"]
    rows = duckdb.connect().execute(
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
    assert sum(c.judged for c in whole.criteria) > sum(j for j, _ in got.values())  # a slice is smaller


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
    x = json.loads(
        _cli(
            tmp_path, "crosstab", RUN, "--a", "grounded", "--b", "answers_question", "--class", "shipping", "--json"
        ).stdout
    )
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
    table = _attr_table(at)
    expected = json.loads(
        _cli(tmp_path, "attribution", RUN, "--class", "billing", "--class", "returns", "--json").stdout
    )
    assert list(table["failed"]) == [c["failed"] for c in expected["criteria"]]
    at.multiselect(key="slice|attribution").set_value([]).run()  # no slice: every item again
    table = _attr_table(at)
    whole = json.loads(_cli(tmp_path, "attribution", RUN, "--json").stdout)
    assert list(table["failed"]) == [c["failed"] for c in whole["criteria"]]


def _attr_table(at):
    return next(d.value for d in at.table if list(d.value.columns)[:1] == ["criterion"])


def test_people_crosstab_takes_the_slice_too(tmp_path):
    base = ["people-crosstab", "support-g1", "--a", "grounded", "--b", "answers_question", "--json"]
    whole = json.loads(_cli(tmp_path, *base).stdout)["table"]["total"]["total"]
    parts = [
        json.loads(_cli(tmp_path, *base, "--class", c).stdout)["table"]["total"]["total"]
        for c in ("account", "billing", "returns", "shipping", "subscriptions")
    ]
    assert all(p < whole for p in parts) and sum(parts) == whole  # the classes partition the items


def test_a_list_of_items_the_user_names_is_a_slice(tmp_path):
    ids = [
        r[0]
        for r in duckdb.connect().sql(
            f"SELECT DISTINCT item_id FROM '{DEMO}/runs/{RUN}/verdicts.parquet' v JOIN '{DEMO}/suites/support/items.parquet' i "
            "USING (item_id) WHERE NOT i.holdout ORDER BY 1 LIMIT 40"
        ).fetchall()
    ]
    f = tmp_path / "items.txt"
    f.write_text("# the first forty\n" + "\n".join(ids) + "\n", encoding="utf-8")
    r = _cli(tmp_path, "attribution", RUN, "--items", str(f), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["selection"]["items"] == 40
    direct = dict(
        duckdb.connect().execute(
            f"SELECT criterion, count(passed) FROM '{DEMO}/runs/{RUN}/verdicts.parquet' WHERE judge_round = 1 "
            "AND list_contains(?, item_id) GROUP BY 1",
            [ids],
        ).fetchall()
    )
    assert {c["criterion"]: c["judged"] for c in out["criteria"]} == direct
    f.write_text("\n".join([*ids[:3], "no-such-item"]), encoding="utf-8")
    r = _cli(tmp_path, "attribution", RUN, "--items", str(f))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "'no-such-item'" in r.stderr and "--items" in r.stderr
    r = _cli(tmp_path, "attribution", RUN, "--items", str(tmp_path / "absent.txt"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--items" in r.stderr


def _card(tmp_path, *args) -> dict:
    r = _cli(tmp_path, "agreement", "--gen", "support-g1", "--n-boot", "20", *args, "--json")
    assert r.returncode == 0, r.stderr
    (g,) = json.loads(r.stdout)["generations"]
    return g


def test_the_report_card_on_a_slice_counts_its_items_only(tmp_path):
    """`agreement --class`: gold cases partition over the classes; each judge's pass rate is bare
    DuckDB's on the slice's items (the report card reads every item, holdout included); naming the
    same items in a file gives the same card."""
    whole = _card(tmp_path)
    assert whole["slice"] is None
    classes = ("account", "billing", "returns", "shipping", "subscriptions")
    cards = {c: _card(tmp_path, "--class", c) for c in classes}
    for name in ("answers_question", "grounded"):
        gold = [next(x for x in cards[c]["criteria"] if x["criterion"] == name)["gold_cases"] for c in classes]
        assert all(0 < g for g in gold)
        assert sum(gold) == next(x for x in whole["criteria"] if x["criterion"] == name)["gold_cases"]
    billing = cards["billing"]
    assert billing["slice"] == {"classes": ["billing"], "items": 0}
    direct = {
        (c, k / n)
        for c, k, n in duckdb.connect().execute(
            f"SELECT criterion, count(*) FILTER (WHERE passed), count(passed) FROM '{DEMO}/runs/{RUN}/verdicts.parquet' "
            f"JOIN '{DEMO}/suites/support/items.parquet' i USING (item_id) WHERE judge_round = 1 AND i.class = 'billing' "
            "GROUP BY 1"
        ).fetchall()
    }
    got = {(c["criterion"], j["pass_rate"]) for c in billing["criteria"] for j in c["judges"] if j["run_id"] == RUN}
    assert got == direct
    assert sum(billing["queue_reasons"].values()) < sum(whole["queue_reasons"].values())
    ids = [
        r[0]
        for r in duckdb.connect().sql(
            f"SELECT item_id FROM '{DEMO}/suites/support/items.parquet' WHERE class = 'billing'"
        ).fetchall()
    ]
    f = tmp_path / "billing.txt"
    f.write_text("\n".join(ids), encoding="utf-8")
    named = _card(tmp_path, "--items", str(f))
    assert named["slice"] == {"classes": [], "items": len(ids)}
    assert named["criteria"] == billing["criteria"] and named["queue_reasons"] == billing["queue_reasons"]
    text = _cli(tmp_path, "agreement", "--gen", "support-g1", "--n-boot", "20", "--class", "billing")
    assert "slice: classes billing only" in text.stdout


def _app(tmp_path, monkeypatch, page: str, **params):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(DEMO.parent.parent / "app.py"), default_timeout=60)
    at.query_params.update(**params)
    at.run()  # Home, the default page, drawn first
    at.switch_page(page)
    at.query_params.update(**params)
    at.run()
    assert not at.exception and not at.error, (at.exception, at.error)
    return at


def _json(tmp_path, *args):
    r = _cli(tmp_path, *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_runs_and_generations_on_a_slice(tmp_path, monkeypatch):
    """`runs --class` / `generations --class`: pass rates and outputs over the slice's items (bare
    DuckDB), runs on suites without the class left out; the Runs page shows the same figures."""
    runs = _json(tmp_path, "runs", "--class", "billing")
    assert runs and all(r["suite_id"] == "support" and r["classes"] == ["billing"] for r in runs)
    split = next(r for r in runs if r["run_id"] == RUN)
    k = len(split["criteria"])
    want = duckdb.connect().execute(
        "SELECT judge_round, avg(allp::DOUBLE) FROM (SELECT judge_round, bool_and(passed) AS allp FROM "
        f"'{DEMO}/runs/{RUN}/verdicts.parquet' JOIN '{DEMO}/suites/support/items.parquet' i USING (item_id) "
        "WHERE NOT i.holdout AND i.class = 'billing' GROUP BY item_id, gen_round, judge_round "
        f"HAVING count(passed) = {k} AND count(*) = {k}) GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert split["all_pass_by_round"] == pytest.approx([w[1] for w in want], abs=1e-12)
    (gen,) = _json(tmp_path, "generations", "--class", "billing")
    n = duckdb.connect().execute(
        f"SELECT count(*) FROM '{DEMO}/generations/support-g1/outputs.parquet' JOIN "
        f"'{DEMO}/suites/support/items.parquet' i USING (item_id) WHERE NOT i.holdout AND i.class = 'billing'"
    ).fetchall()[0][0]
    assert gen["outputs"] == n and n < next(g for g in _json(tmp_path, "generations") if g["gen_id"] == "support-g1")[
        "outputs"
    ]
    at = _app(tmp_path, monkeypatch, "pages/1_runs.py", **{"class": "billing"})
    assert at.multiselect(key="slice|runs").value == ["billing"]
    table = next(d for d in at.dataframe if d.key == "runs_table").value
    assert list(table["run"]) == [r["run_id"] for r in runs]
    assert list(table["all pass"]) == pytest.approx([100 * r["all_pass"]["rate"] for r in runs])
    assert any("Slice: items of class billing only" in c.value for c in at.caption)


def test_cost_on_a_slice(tmp_path, monkeypatch):
    """`cost RUN --class`: the judge's calls and the system's outputs of the slice's items (bare
    DuckDB; cost counts holdout items too, as they were paid for); the Cost page shows the same."""
    r = _json(tmp_path, "cost", RUN, "--class", "billing")
    calls, cost = duckdb.connect().execute(
        f"SELECT count(*), sum(cost_usd) FROM '{DEMO}/runs/{RUN}/calls.parquet' JOIN "
        f"'{DEMO}/suites/support/items.parquet' i USING (item_id) WHERE i.class = 'billing'"
    ).fetchall()[0]
    assert r["classes"] == ["billing"] and r["judge"]["calls"] == calls
    assert r["judge"]["cost_usd"] == pytest.approx(cost, rel=1e-12)
    assert r["judge"]["calls"] < _json(tmp_path, "cost", RUN)["judge"]["calls"]
    assert r["projection"]["items"] == r["items"] == 120  # the projection's N is the slice's
    table = _json(tmp_path, "cost", "--all", "--class", "billing")
    assert {t["run_id"] for t in table} == {x["run_id"] for x in _json(tmp_path, "runs", "--class", "billing")}
    bad = _cli(tmp_path, "cost", "--all", "--class", "nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "'nope'" in bad.stderr
    at = _app(tmp_path, monkeypatch, "pages/10_cost.py", run=RUN, **{"class": "billing"})
    page = at.dataframe[0].value  # the per-configuration table comes first
    assert list(page["judge calls"]) == [t["judge_calls"] for t in table]


def test_compare_and_agreement_pages_on_a_slice(tmp_path, monkeypatch):
    c = _json(tmp_path, "compare", "support-single", RUN, "--class", "billing")
    assert c["selection"]["classes"] == ["billing"]
    at = _app(tmp_path, monkeypatch, "pages/9_compare.py", a="support-single", b=RUN, **{"class": "billing"})
    assert at.multiselect(key="slice|compare").value == ["billing"]
    assert any(f"New misses: {c['new_miss_count']}**" in m.value for m in at.markdown)
    whole = _json(tmp_path, "compare", "support-single", RUN)
    assert whole["selection"].get("classes") is None
    card = _card(tmp_path, "--class", "billing")
    at = _app(tmp_path, monkeypatch, "pages/6_agreement.py", gen="support-g1", **{"class": "billing"})
    assert at.multiselect(key="slice|agreement").value == ["billing"]
    assert any(f"{card['gold']['shipped']} from labels shipped" in c.value for c in at.caption)
    assert card["gold"]["shipped"] < _card(tmp_path)["gold"]["shipped"]
