"""evalcore.analysis.charts: each builder is a pure function whose chart is checked through to_dict(): the
mark, the encodings and the data values it carries (inline, so nothing needs rendering)."""

from __future__ import annotations

import subprocess
import sys

import altair as alt
import pytest
from conftest import DEMO, REPO

from evalcore.analysis import charts
from evalcore.analysis import instruments as analysis
from evalcore.stats import association as stats
from evalcore.storage.store import Store


def values(spec: dict) -> list[dict]:
    return spec["data"]["values"]


def enc(spec: dict) -> dict:
    return spec["encoding"]


CRITS = [
    {"criterion": "answers_question", "gate": False, "failed": 98, "fail_rate": 98 / 600, "share_of_failures": 0.25},
    {"criterion": "grounded", "gate": False, "failed": 0, "fail_rate": 0.0, "share_of_failures": 0.0},
    {"criterion": "no_fabrication", "gate": True, "failed": 294, "fail_rate": 0.49, "share_of_failures": 0.75},
]


def test_failure_shares_is_one_bar_per_criterion_in_rubric_order():
    spec = charts.failure_shares(CRITS).to_dict()
    assert spec["mark"]["type"] == "bar"
    e = enc(spec)
    assert (e["x"]["field"], e["x"]["type"]) == ("share", "quantitative")
    assert (e["y"]["field"], e["y"]["type"]) == ("criterion", "nominal")
    assert e["y"]["sort"] == ["answers_question", "grounded", "no_fabrication"]
    assert e["color"]["field"] == "gate"
    assert [(v["criterion"], v["share"], v["failed"], v["gate"]) for v in values(spec)] == [
        ("answers_question", 0.25, 98, False), ("grounded", 0.0, 0, False), ("no_fabrication", 0.75, 294, True)]


def test_failure_shares_without_failures_keeps_null_shares():
    spec = charts.failure_shares([{**c, "failed": 0, "share_of_failures": None} for c in CRITS]).to_dict()
    assert [v["share"] for v in values(spec)] == [None, None, None]


def test_class_heatmap_has_a_cell_and_a_label_per_class_and_criterion():
    by_class = [{"class": "billing", "criterion": "grounded", "judged": 10, "failed": 3, "fail_rate": 0.3},
                {"class": "billing", "criterion": "no_fabrication", "judged": 10, "failed": 6, "fail_rate": 0.6},
                {"class": "returns", "criterion": "grounded", "judged": 0, "failed": 0, "fail_rate": None}]
    spec = charts.class_heatmap(by_class, ["grounded", "no_fabrication"]).to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rect", "text"]
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["field"] == "fail_rate"
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert text["encoding"]["text"]["field"] == "label"
    assert rect["encoding"]["x"]["sort"] == ["grounded", "no_fabrication"]
    assert [(v["class"], v["criterion"], v["fail_rate"], v["label"]) for v in values(spec)] == [
        ("billing", "grounded", 0.3, "30.0%"), ("billing", "no_fabrication", 0.6, "60.0%"),
        ("returns", "grounded", None, "-")]


def _matrix(criteria, phis):
    """A matrix as association() returns it, from {(a, b): Stat}."""
    out = {a: {} for a in criteria}
    for a in criteria:
        for b in criteria:
            s = phis.get((a, b)) or phis.get((b, a)) or stats.Stat(1.0)
            out[a][b] = {"value": s.value, "reason": s.reason}
    return {"n": 10, "fail_rate": {}, "phi": out, "rank": {}}


def test_phi_heatmaps_hold_one_row_per_instrument_and_pair_with_undefined_as_none():
    crits = ["a", "b", "c"]
    t_const = stats.TwoByTwo(10, 0, 0, 0)  # nothing fails: phi undefined
    undefined = stats.phi(t_const, a="c", b="c")
    single = _matrix(crits, {("a", "b"): stats.Stat(0.56), ("a", "c"): stats.Stat(0.1), ("b", "c"): stats.Stat(-0.2)})
    people = _matrix(crits, {("a", "b"): stats.Stat(-0.01), ("a", "c"): undefined, ("b", "c"): undefined,
                             ("c", "c"): undefined})
    spec = charts.phi_heatmaps({"single": single, "people": people}, crits, ["single", "people"]).to_dict()
    assert spec["facet"]["field"] == "instrument" and spec["columns"] == 2
    assert spec["facet"]["sort"] == ["single", "people"]
    rect, text = spec["spec"]["layer"]
    assert (rect["mark"]["type"], text["mark"]["type"]) == ("rect", "text")
    color = rect["encoding"]["color"]
    assert color["condition"]["test"] == "datum.phi === null"  # undefined cells are drawn grey
    assert color["field"] == "phi" and color["scale"]["domain"] == [-1, 1]
    rows = values(spec)
    assert len(rows) == 2 * 3 * 3  # every ordered pair, the diagonal included, per instrument
    cell = {(r["instrument"], r["a"], r["b"]): r for r in rows}
    assert cell[("single", "a", "b")]["phi"] == 0.56 and cell[("single", "a", "b")]["label"] == "0.56"
    assert cell[("single", "c", "b")]["phi"] == -0.2
    assert cell[("people", "a", "c")]["phi"] is None and cell[("people", "a", "c")]["label"] == charts.UNDEFINED
    assert "never fails" in cell[("people", "c", "c")]["reason"]
    assert cell[("people", "a", "b")]["phi"] == -0.01


def test_phi_heatmaps_carry_the_demo_association_matrices(tmp_path):
    s = Store(DEMO, tmp_path / "state")
    res = analysis.association(s, ["support-single", "support-split"], n_boot=50)
    spec = charts.phi_heatmaps({n: m.to_dict() for n, m in res.matrices.items()}, res.criteria).to_dict()
    rows = values(spec)
    assert len(rows) == 2 * len(res.criteria) ** 2
    for r in rows:
        assert r["phi"] == res.matrices[r["instrument"]].phi[r["a"]][r["b"]].value
    assert {r["instrument"] for r in rows} == {"support-single", "support-split"}


def test_position_lines_skip_undefined_points_and_name_the_field():
    res = {"run_id": "single", "field_order": ["x", "y"], "positions": [
        {"position": 0, "fail_rate": 0.1, "fail_rate_after_fail": None, "agreement_with_reference": 1.0},
        {"position": 1, "fail_rate": 0.3, "fail_rate_after_fail": 0.8, "agreement_with_reference": 0.7}]}
    spec = charts.position_lines([res]).to_dict()
    assert spec["mark"] == {"type": "line", "point": True}
    e = enc(spec)
    assert (e["x"]["field"], e["x"]["type"]) == ("position", "ordinal")
    assert (e["y"]["field"], e["y"]["type"]) == ("value", "quantitative")
    assert e["color"]["field"] == "metric" and e["strokeDash"]["field"] == "run"
    got = [(v["position"], v["criterion"], v["metric"], v["value"]) for v in values(spec)]
    assert got == [(0, "x", "fail rate", 0.1), (0, "x", "agreement with the split run", 1.0),
                   (1, "y", "fail rate", 0.3), (1, "y", "P(fail | previous failed)", 0.8),
                   (1, "y", "agreement with the split run", 0.7)]


FLIPS = [{"criterion": "grounded", "fail_a": 264, "fail_b": 140, "fail_a_pass_b": 124, "pass_a_fail_b": 0,
          "fail_both": 140, "share_of_failures_a": 0.6, "share_of_failures_b": 0.7},
         {"criterion": "on_tone", "fail_a": 176, "fail_b": 60, "fail_a_pass_b": 126, "pass_a_fail_b": 10,
          "fail_both": 50, "share_of_failures_a": 0.4, "share_of_failures_b": 0.3}]


def test_flip_bars_diverge_from_zero_with_each_side_summing_to_that_runs_failures():
    spec = charts.flip_bars(FLIPS, "single", "split").to_dict()
    assert spec["mark"]["type"] == "bar"
    e = enc(spec)
    assert e["x"]["field"] == "value" and e["x"]["stack"] == "zero"
    assert "single" in e["x"]["title"] and "split" in e["x"]["title"]
    assert e["y"]["sort"] == ["grounded", "on_tone"]
    assert e["color"]["scale"]["domain"] == [charts.ONLY_A, charts.BOTH, charts.ONLY_B]
    assert e["order"]["field"] == "order"
    rows = values(spec)
    assert len(rows) == 4 * len(FLIPS)
    for c in FLIPS:
        mine = [r for r in rows if r["criterion"] == c["criterion"]]
        assert -sum(r["value"] for r in mine if r["side"] == "A") == c["fail_a"]
        assert sum(r["value"] for r in mine if r["side"] == "B") == c["fail_b"]
        only = {r["segment"]: r["count"] for r in mine if r["segment"] != charts.BOTH}
        assert only == {charts.ONLY_A: c["fail_a_pass_b"], charts.ONLY_B: c["pass_a_fail_b"]}
        # "both" sits next to zero on either side
        assert all(r["order"] == 0 for r in mine if r["segment"] == charts.BOTH)


def test_composition_bars_stack_each_runs_shares():
    spec = charts.composition_bars(FLIPS, "single", "split").to_dict()
    assert spec["mark"]["type"] == "bar"
    e = enc(spec)
    assert e["x"]["field"] == "share" and e["x"]["stack"] == "zero"
    assert e["y"]["field"] == "run" and e["y"]["sort"] == ["A: single", "B: split"]
    assert e["color"]["field"] == "criterion" and e["color"]["sort"] == ["grounded", "on_tone"]
    rows = values(spec)
    assert [(r["run"], r["criterion"], r["share"], r["failed"]) for r in rows] == [
        ("A: single", "grounded", 0.6, 264), ("A: single", "on_tone", 0.4, 176),
        ("B: split", "grounded", 0.7, 140), ("B: split", "on_tone", 0.3, 60)]


@pytest.mark.parametrize("build", [
    lambda: charts.failure_shares(CRITS),
    lambda: charts.flip_bars(FLIPS),
    lambda: charts.composition_bars(FLIPS),
    lambda: charts.position_lines([]),
    lambda: charts.phi_heatmaps({"single": {"phi": {"a": {"a": {"value": 0.5}}}}}, ["a"]),
])
def test_builders_return_altair_charts_that_validate(build):
    """Every builder returns an altair chart or a charts.Spec (a Vega-Lite spec written out), and
    either validates against the schema."""
    chart = build()
    assert isinstance(chart, (alt.Chart, alt.LayerChart, alt.FacetChart, charts.Spec))
    assert chart.to_dict(validate=True)["$schema"] == alt.SCHEMA_URL


def test_charts_do_not_import_streamlit():
    code = "import sys, evalcore.analysis.charts; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"


def test_a_chart_written_as_its_spec_is_validated_against_the_vega_lite_schema():
    """charts.Spec (the phi matrices' spec written out, not built with altair) validates like an
    altair chart: a spec Vega-Lite does not allow is refused by ``to_dict()``."""
    import altair as alt
    import jsonschema

    good = charts.phi_heatmaps({"single": {"phi": {"a": {"a": {"value": 1.0}}}}}, ["a"], select="cell")
    spec = good.to_dict()
    assert spec["params"][0]["name"] == "cell" and spec["params"][0]["views"] == ["view_phi_0"]
    bad = charts.Spec({**spec, "spec": {**spec["spec"], "layer": [{"mark": {"type": "no-such-mark"}}]}}, alt.FacetChart)
    with pytest.raises((jsonschema.ValidationError, alt.utils.schemapi.SchemaValidationError)):
        bad.to_dict()
    assert bad.to_dict(validate=False)["spec"]["layer"][0]["mark"]["type"] == "no-such-mark"
