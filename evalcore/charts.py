"""Chart builders for the analysis pages: pure functions from the plain dicts of
:mod:`evalcore.analysis` to altair charts. No streamlit, no I/O; the data sits inline in the
chart (``alt.Data(values=...)``), so a test reads marks, encodings and values from ``to_dict()``
without rendering anything.

* :func:`failure_shares`: each criterion's share of all failures (horizontal bars).
* :func:`class_heatmap`: fail rate by item class and criterion.
* :func:`phi_heatmaps`: the phi matrix of each instrument side by side (undefined cells grey).
* :func:`position_lines`: failure rate, P(fail | previous failed) and agreement by emission position.
* :func:`flip_bars`: per criterion, failures under A only, under both, under B only (diverging).
* :func:`composition_bars`: the composition of failures under each of two runs (stacked shares).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

import altair as alt

__all__ = ["UNDEFINED", "class_heatmap", "composition_bars", "failure_shares", "flip_bars", "phi_heatmaps",
           "position_lines"]

#: What a cell whose statistic is undefined shows.
UNDEFINED = "undefined"
_GREY = "#d9d9d9"
# Flip segments: fixed names and colours so the legend reads the same on every pair of runs.
ONLY_A, BOTH, ONLY_B = "fails under A only", "fails under both", "fails under B only"


def _data(rows: list[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=rows)


def _height(bands: int, extra: int = 90) -> int:
    """Height of a chart with ``bands`` rows: the page draws charts with ``autosize: fit``, where
    the height includes the title and the axes, so they get ``extra`` pixels on top of the rows."""
    return 30 * max(bands, 1) + extra


def _rate(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def failure_shares(criteria: list[Mapping[str, Any]]) -> alt.Chart:
    """Each criterion's share of all failures, from :func:`evalcore.analysis.attribution`'s
    ``criteria`` (rubric order kept). One row per criterion: criterion, share (None when there is
    no failure at all), failed, fail_rate, gate."""
    rows = [{"criterion": c["criterion"], "share": c["share_of_failures"], "failed": c["failed"],
             "fail_rate": c["fail_rate"], "gate": bool(c.get("gate"))} for c in criteria]
    order = [r["criterion"] for r in rows]
    return alt.Chart(_data(rows)).mark_bar().encode(
        x=alt.X("share:Q", title="share of all failures", axis=alt.Axis(format="%")),
        y=alt.Y("criterion:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
        color=alt.Color("gate:N", title="hard gate", scale=alt.Scale(domain=[False, True],
                                                                     range=["#4c78a8", "#e45756"])),
        tooltip=[alt.Tooltip("criterion:N"), alt.Tooltip("failed:Q", title="failures"),
                 alt.Tooltip("share:Q", format=".1%", title="share of failures"),
                 alt.Tooltip("fail_rate:Q", format=".1%", title="fail rate")],
    ).properties(height=_height(len(rows), extra=110), title="Where the failures land")


def class_heatmap(by_class: list[Mapping[str, Any]], criteria: Iterable[str]) -> alt.LayerChart:
    """Fail rate by item class (rows) and criterion (columns), from attribution's ``by_class``.
    One row per (class, criterion): class, criterion, failed, judged, fail_rate, label."""
    rows = [{"class": r["class"], "criterion": r["criterion"], "failed": r["failed"], "judged": r["judged"],
             "fail_rate": r["fail_rate"], "label": _rate(r["fail_rate"])} for r in by_class]
    order = list(criteria)
    base = alt.Chart(_data(rows)).encode(
        x=alt.X("criterion:N", sort=order, title=None,
                axis=alt.Axis(labelAngle=-40, labelOverlap=False, labelLimit=160)),
        y=alt.Y("class:N", title="class"))
    rect = base.mark_rect().encode(
        color=alt.Color("fail_rate:Q", title="fail rate", scale=alt.Scale(domain=[0, 1], scheme="oranges"),
                        legend=alt.Legend(format="%")),
        tooltip=[alt.Tooltip("class:N"), alt.Tooltip("criterion:N"), alt.Tooltip("failed:Q", title="failures"),
                 alt.Tooltip("judged:Q"), alt.Tooltip("fail_rate:Q", format=".1%", title="fail rate")])
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("label:N"),
        color=alt.condition("datum.fail_rate > 0.5", alt.value("white"), alt.value("black")))
    return alt.layer(rect, text).properties(height=_height(len({r["class"] for r in rows}), extra=210),
                                            title="Fail rate by class")


def phi_heatmaps(matrices: Mapping[str, Mapping[str, Any]], criteria: list[str],
                 instruments: Iterable[str] | None = None, per_row: int = 3) -> alt.FacetChart:
    """The phi matrix of each instrument side by side, from :func:`evalcore.analysis.association`'s
    ``matrices``. One row per (instrument, row criterion a, column criterion b), the diagonal
    included: phi (None when undefined), label (the value to two places, or "undefined") and the
    reason. Undefined cells are grey; the colour scale is shared and runs from -1 to 1; the
    matrices wrap after ``per_row`` instruments."""
    names = list(instruments) if instruments is not None else list(matrices)
    rows = []
    for name in names:
        phi = matrices[name]["phi"]
        for a in criteria:
            for b in criteria:
                cell = phi[a][b]
                v = cell["value"]
                rows.append({"instrument": name, "a": a, "b": b, "phi": v,
                             "label": UNDEFINED if v is None else f"{v:.2f}", "reason": cell.get("reason")})
    k = len(criteria)
    side = max(160, 34 * k)
    base = alt.Chart().encode(
        x=alt.X("b:N", sort=criteria, title=None, axis=alt.Axis(labelAngle=-45, labelOverlap=False, labelLimit=160)),
        y=alt.Y("a:N", sort=criteria, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=200)))
    rect = base.mark_rect().encode(
        color=alt.condition("datum.phi === null", alt.value(_GREY),
                            alt.Color("phi:Q", title="phi", scale=alt.Scale(domain=[-1, 1], scheme="redblue",
                                                                            reverse=True))),
        tooltip=[alt.Tooltip("instrument:N"), alt.Tooltip("a:N", title="A"), alt.Tooltip("b:N", title="B"),
                 alt.Tooltip("label:N", title="phi"), alt.Tooltip("reason:N")])
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("label:N"),
        color=alt.condition("datum.phi !== null && abs(datum.phi) > 0.6", alt.value("white"), alt.value("black")))
    return alt.layer(rect, text, data=_data(rows)).properties(width=side, height=side).facet(
        facet=alt.Facet("instrument:N", sort=names, title=None, header=alt.Header(labelFontSize=13)),
        columns=min(len(names), per_row))


def position_lines(results: list[Mapping[str, Any]]) -> alt.Chart:
    """By emission position in a single call: the failure rate, P(fail | the field before failed)
    and the agreement with a one-criterion reference run, from one or more
    :func:`evalcore.analysis.position_effect` results (each with its ``run_id``). One row per run,
    position and defined figure: run, position, criterion (the field emitted there when the
    field order is fixed), metric, value."""
    metrics = [("fail_rate", "fail rate"), ("fail_rate_after_fail", "P(fail | previous failed)"),
               ("agreement_with_reference", "agreement with the split run")]
    rows = []
    for res in results:
        order = res.get("field_order") or []
        for p in res["positions"]:
            pos = p["position"]
            crit = order[pos] if isinstance(order, list) and 0 <= pos < len(order) else None
            for key, label in metrics:
                if p.get(key) is not None:
                    rows.append({"run": res["run_id"], "position": pos, "criterion": crit, "metric": label,
                                 "value": p[key]})
    return alt.Chart(_data(rows)).mark_line(point=True).encode(
        x=alt.X("position:O", title="position in the call (0 = emitted first)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("value:Q", title=None, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("metric:N", title=None, sort=[m[1] for m in metrics], legend=alt.Legend(labelLimit=260)),
        strokeDash=alt.StrokeDash("run:N", title="run"),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("position:O"), alt.Tooltip("criterion:N"),
                 alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".1%")],
    ).properties(height=260)


def flip_bars(criteria: list[Mapping[str, Any]], a: str = "A", b: str = "B") -> alt.Chart:
    """Per criterion, from :func:`evalcore.analysis.flips`'s ``criteria``: the failures under A
    drawn to the left of zero and those under B to the right, each split into the answers that
    fail under both (next to zero) and those that fail under that run only (outside). One row per
    (criterion, segment, side): criterion, segment, side ("A" or "B"), count, value (signed:
    negative for A's side)."""
    rows = []
    for c in criteria:
        name = c["criterion"]
        rows += [
            {"criterion": name, "segment": BOTH, "side": "A", "count": c["fail_both"], "value": -c["fail_both"],
             "order": 0},
            {"criterion": name, "segment": ONLY_A, "side": "A", "count": c["fail_a_pass_b"],
             "value": -c["fail_a_pass_b"], "order": 1},
            {"criterion": name, "segment": BOTH, "side": "B", "count": c["fail_both"], "value": c["fail_both"],
             "order": 0},
            {"criterion": name, "segment": ONLY_B, "side": "B", "count": c["pass_a_fail_b"],
             "value": c["pass_a_fail_b"], "order": 1},
        ]
    order = [c["criterion"] for c in criteria]
    return alt.Chart(_data(rows)).mark_bar().encode(
        x=alt.X("value:Q", stack="zero", title=f"<- failures under A ({a})   |   failures under B ({b}) ->",
                axis=alt.Axis(labelExpr="abs(datum.value)")),
        y=alt.Y("criterion:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
        color=alt.Color("segment:N", title=None, scale=alt.Scale(domain=[ONLY_A, BOTH, ONLY_B],
                                                                range=["#e45756", "#bab0ac", "#4c78a8"])),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("criterion:N"), alt.Tooltip("segment:N"), alt.Tooltip("side:N", title="under"),
                 alt.Tooltip("count:Q", title="answers")],
    ).properties(height=_height(len(criteria)), title="Which answers fail, under each harness")


def composition_bars(criteria: list[Mapping[str, Any]], a: str = "A", b: str = "B") -> alt.Chart:
    """The composition of failures under each run, from :func:`evalcore.analysis.flips`'s
    ``criteria``: one stacked bar per run whose segments are each criterion's share of that run's
    failures. One row per (run, criterion): run ("A: <a>" / "B: <b>"), criterion, share, failed."""
    runs = [f"A: {a}", f"B: {b}"]
    rows = []
    for label, share_key, fail_key in ((runs[0], "share_of_failures_a", "fail_a"),
                                       (runs[1], "share_of_failures_b", "fail_b")):
        for c in criteria:
            rows.append({"run": label, "criterion": c["criterion"], "share": c[share_key], "failed": c[fail_key]})
    order = [c["criterion"] for c in criteria]
    return alt.Chart(_data(rows)).mark_bar().encode(
        x=alt.X("share:Q", stack="zero", title="share of the run's failures", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("run:N", sort=runs, title=None),
        color=alt.Color("criterion:N", sort=order, title=None,
                        legend=alt.Legend(orient="bottom", columns=2, labelLimit=220)),
        order=alt.Order("order_index:Q"),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("criterion:N"), alt.Tooltip("failed:Q", title="failures"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).transform_calculate(
        order_index=f"indexof({json.dumps(order)}, datum.criterion)",
    ).properties(height=_height(2, extra=170) + 22 * ((len(order) + 1) // 2), title="Composition of failures")
