"""Chart builders for the analysis pages: pure functions from the plain dicts of
:mod:`evalcore.analysis` to altair charts (or, where altair's constructors cost a page render
too much, to :class:`Spec`: the Vega-Lite spec written out). No streamlit, no I/O; the data sits inline in the
chart (``alt.Data(values=...)``), so a test reads marks, encodings and values from ``to_dict()``
without rendering anything.

* :func:`failure_shares`: each criterion's share of all failures (horizontal bars).
* :func:`class_heatmap`: fail rate by item class and criterion.
* :func:`phi_heatmaps`: the phi matrix of each instrument side by side (undefined cells grey).
* :func:`position_lines`: failure rate, P(fail | previous failed) and agreement by emission position.
* :func:`flip_bars`: per criterion, failures under A only, under both, under B only (diverging).
* :func:`composition_bars`: the composition of failures under each of two runs (stacked shares).
* :func:`cost_by_criterion`: a run's cost (or tokens, latency) per criterion by the sharing rule.
* :func:`projection_bars`: calls, tokens and cost of the single / grouped / split projection.
* :func:`trend_lines`: a headline over time, the line broken where the measurement changed.
* :func:`round_dots`: figures per generation round with their mean, for two configurations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import altair as alt

#: What a cell whose statistic is undefined shows.
UNDEFINED = "undefined"
_GREY = "#d9d9d9"
# Flip segments: fixed names and colours so the legend reads the same on every pair of runs.
ONLY_A, BOTH, ONLY_B = "fails under A only", "fails under both", "fails under B only"


class Spec:
    """A chart written as its Vega-Lite spec rather than built with altair's classes, where
    building it costs (the phi matrices: altair's constructors validate and copy every channel,
    about 0.2 s of CPU a render at six criteria under a profiler; the position lines 0.1 s).
    ``to_dict()`` validates it against the Vega-Lite schema through altair's ``kind`` (``validate=False``: the spec as it is), as an altair chart's does."""

    def __init__(self, spec: dict[str, Any], kind: Any) -> None:
        self.spec, self.kind = spec, kind

    def to_dict(self, validate: bool = True) -> dict[str, Any]:
        if validate:
            self.kind.from_dict(self.spec, validate=True)
        return json.loads(json.dumps(self.spec))


def _data(rows: list[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=rows)


def _height(bands: int, extra: int = 90) -> int:
    """Height of a chart with ``bands`` rows: the page draws charts with ``autosize: fit``, where
    the height includes the title and the axes, so they get ``extra`` pixels on top of the rows."""
    return 30 * max(bands, 1) + extra


def _rate(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def failure_shares(criteria: list[Mapping[str, Any]], select: str | None = None) -> alt.Chart:
    """Each criterion's share of all failures, from :func:`evalcore.analysis.failures`'s
    ``criteria`` (rubric order kept). One row per criterion: criterion, share (None when there is
    no failure at all), failed, fail_rate, gate. ``select``: the name of a point selection on the
    criterion, so that a click on a bar can open its failures."""
    rows = [
        {
            "criterion": c["criterion"],
            "share": c["share_of_failures"],
            "failed": c["failed"],
            "fail_rate": c["fail_rate"],
            "gate": bool(c.get("gate")),
        }
        for c in criteria
    ]
    order = [r["criterion"] for r in rows]
    chart = alt.Chart(_data(rows))
    if select:
        chart = chart.add_params(alt.selection_point(name=select, fields=["criterion"], on="click"))
    return (
        chart.mark_bar()
        .encode(
            x=alt.X("share:Q", title="share of all failures", axis=alt.Axis(format="%")),
            y=alt.Y("criterion:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
            color=alt.Color(
                "gate:N", title="hard gate", scale=alt.Scale(domain=[False, True], range=["#4c78a8", "#e45756"])
            ),
            tooltip=[
                alt.Tooltip("criterion:N"),
                alt.Tooltip("failed:Q", title="failures"),
                alt.Tooltip("share:Q", format=".1%", title="share of failures"),
                alt.Tooltip("fail_rate:Q", format=".1%", title="fail rate"),
            ],
        )
        .properties(height=_height(len(rows), extra=110), title="Where the failures land")
    )


def class_heatmap(by_class: list[Mapping[str, Any]], criteria: Iterable[str]) -> alt.LayerChart | alt.FacetChart:
    """Fail rate by item class (rows) and criterion (columns), from attribution's ``by_class``.
    One row per (class, criterion): class, criterion, failed, judged, fail_rate, label."""
    rows = [
        {
            "class": r["class"],
            "criterion": r["criterion"],
            "failed": r["failed"],
            "judged": r["judged"],
            "fail_rate": r["fail_rate"],
            "label": _rate(r["fail_rate"]),
        }
        for r in by_class
    ]
    order = list(criteria)
    base = alt.Chart(_data(rows)).encode(
        x=alt.X(
            "criterion:N", sort=order, title=None, axis=alt.Axis(labelAngle=-40, labelOverlap=False, labelLimit=160)
        ),
        y=alt.Y("class:N", title="class"),
    )
    rect = base.mark_rect().encode(
        color=alt.Color(
            "fail_rate:Q",
            title="fail rate",
            scale=alt.Scale(domain=[0, 1], scheme="oranges"),
            legend=alt.Legend(format="%"),
        ),
        tooltip=[
            alt.Tooltip("class:N"),
            alt.Tooltip("criterion:N"),
            alt.Tooltip("failed:Q", title="failures"),
            alt.Tooltip("judged:Q"),
            alt.Tooltip("fail_rate:Q", format=".1%", title="fail rate"),
        ],
    )
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("label:N"), color=alt.condition("datum.fail_rate > 0.5", alt.value("white"), alt.value("black"))
    )
    return alt.layer(rect, text).properties(
        height=_height(len({r["class"] for r in rows}), extra=210), title="Fail rate by class"
    )


def _phi_rows(matrices: Mapping[str, Mapping[str, Any]], criteria: list[str], names: list[str]) -> list[dict[str, Any]]:
    """:func:`phi_heatmaps`'s data: one row per (instrument, a, b)."""
    rows = []
    for name in names:
        phi = matrices[name]["phi"]
        for a in criteria:
            for b in criteria:
                cell = phi[a][b]
                v = cell["value"]
                rows.append(
                    {
                        "instrument": name,
                        "a": a,
                        "b": b,
                        "phi": v,
                        "label": UNDEFINED if v is None else f"{v:.2f}",
                        "reason": cell.get("reason"),
                    }
                )
    return rows


def _phi_layers(criteria: list[str]) -> list[dict[str, Any]]:
    """:func:`phi_heatmaps`'s cells (the rect named ``view_phi_0``, which a selection points at) and
    their labels."""
    axis_x = {"labelAngle": -45, "labelLimit": 160, "labelOverlap": False}
    xy = {
        "x": {"field": "b", "type": "nominal", "sort": list(criteria), "title": None, "axis": axis_x},
        "y": {
            "field": "a",
            "type": "nominal",
            "sort": list(criteria),
            "title": None,
            "axis": {"labelLimit": 200, "labelOverlap": False},
        },
    }
    rect: dict[str, Any] = {
        "name": "view_phi_0",
        "mark": {"type": "rect"},
        "encoding": {
            **xy,
            "color": {
                "condition": {"test": "datum.phi === null", "value": _GREY},
                "field": "phi",
                "type": "quantitative",
                "title": "phi",
                "scale": {"domain": [-1, 1], "scheme": "redblue", "reverse": True},
            },
            "tooltip": [
                {"field": "instrument", "type": "nominal"},
                {"field": "a", "type": "nominal", "title": "A"},
                {"field": "b", "type": "nominal", "title": "B"},
                {"field": "label", "type": "nominal", "title": "phi"},
                {"field": "reason", "type": "nominal"},
            ],
        },
    }
    text = {
        "mark": {"type": "text", "fontSize": 10},
        "encoding": {
            **xy,
            "text": {"field": "label", "type": "nominal"},
            "color": {
                "condition": {"test": "datum.phi !== null && abs(datum.phi) > 0.6", "value": "white"},
                "value": "black",
            },
        },
    }
    return [rect, text]


def phi_heatmaps(
    matrices: Mapping[str, Mapping[str, Any]],
    criteria: list[str],
    instruments: Iterable[str] | None = None,
    per_row: int = 3,
    select: str | None = None,
) -> Spec:
    """The phi matrix of each instrument side by side, from :func:`evalcore.analysis.instruments`'s
    ``matrices``. One row per (instrument, row criterion a, column criterion b), the diagonal
    included: phi (None when undefined), label (the value to two places, or "undefined") and the
    reason. Undefined cells are grey; the colour scale is shared and runs from -1 to 1; the
    matrices wrap after ``per_row`` instruments. ``select``: the name of a point selection on
    (instrument, a, b), so that a click on a cell can open it (Streamlit's ``on_select``)."""
    names = list(instruments) if instruments is not None else list(matrices)
    rows = _phi_rows(matrices, criteria, names)
    side = max(160, 34 * len(criteria))
    spec: dict[str, Any] = {
        "$schema": alt.SCHEMA_URL,
        "config": {"view": {"continuousWidth": 300, "continuousHeight": 300}},
        "data": {"values": rows},
        "facet": {
            "field": "instrument",
            "type": "nominal",
            "sort": names,
            "title": None,
            "header": {"labelFontSize": 13},
        },
        "spec": {"layer": _phi_layers(criteria), "width": side, "height": side},
        "columns": min(len(names), per_row),
    }
    if select:
        spec["params"] = [
            {
                "name": select,
                "select": {"type": "point", "fields": ["instrument", "a", "b"], "on": "click"},
                "views": ["view_phi_0"],
            }
        ]
    return Spec(spec, alt.FacetChart)


def position_lines(results: list[Mapping[str, Any]]) -> Spec:
    """By emission position in a single call: the failure rate, P(fail | the field before failed)
    and the agreement with a one-criterion reference run, from one or more
    :func:`evalcore.analysis.position_effect` results (each with its ``run_id``). One row per run,
    position and defined figure: run, position, criterion (the field emitted there when the
    field order is fixed), metric, value."""
    metrics = [
        ("fail_rate", "fail rate"),
        ("fail_rate_after_fail", "P(fail | previous failed)"),
        ("agreement_with_reference", "agreement with the split run"),
    ]
    rows = []
    for res in results:
        order = res.get("field_order") or []
        for p in res["positions"]:
            pos = p["position"]
            crit = order[pos] if isinstance(order, list) and 0 <= pos < len(order) else None
            for key, label in metrics:
                if p.get(key) is not None:
                    rows.append(
                        {"run": res["run_id"], "position": pos, "criterion": crit, "metric": label, "value": p[key]}
                    )
    spec = {
        "$schema": alt.SCHEMA_URL,
        "config": {"view": {"continuousWidth": 300, "continuousHeight": 300}},
        "data": {"values": rows},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {
                "field": "position",
                "type": "ordinal",
                "title": "position in the call (0 = emitted first)",
                "axis": {"labelAngle": 0},
            },
            "y": {
                "field": "value",
                "type": "quantitative",
                "title": None,
                "scale": {"domain": [0, 1]},
                "axis": {"format": "%"},
            },
            "color": {
                "field": "metric",
                "type": "nominal",
                "title": None,
                "sort": [m[1] for m in metrics],
                "legend": {"labelLimit": 260},
            },
            "strokeDash": {"field": "run", "type": "nominal", "title": "run"},
            "tooltip": [
                {"field": "run", "type": "nominal"},
                {"field": "position", "type": "ordinal"},
                {"field": "criterion", "type": "nominal"},
                {"field": "metric", "type": "nominal"},
                {"field": "value", "type": "quantitative", "format": ".1%"},
            ],
        },
        "height": 260,
    }
    return Spec(spec, alt.Chart)


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
            {
                "criterion": name,
                "segment": BOTH,
                "side": "A",
                "count": c["fail_both"],
                "value": -c["fail_both"],
                "order": 0,
            },
            {
                "criterion": name,
                "segment": ONLY_A,
                "side": "A",
                "count": c["fail_a_pass_b"],
                "value": -c["fail_a_pass_b"],
                "order": 1,
            },
            {
                "criterion": name,
                "segment": BOTH,
                "side": "B",
                "count": c["fail_both"],
                "value": c["fail_both"],
                "order": 0,
            },
            {
                "criterion": name,
                "segment": ONLY_B,
                "side": "B",
                "count": c["pass_a_fail_b"],
                "value": c["pass_a_fail_b"],
                "order": 1,
            },
        ]
    order = [c["criterion"] for c in criteria]
    return (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(
            x=alt.X(
                "value:Q",
                stack="zero",
                title=f"<- failures under A ({a})   |   failures under B ({b}) ->",
                axis=alt.Axis(labelExpr="abs(datum.value)"),
            ),
            y=alt.Y("criterion:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
            color=alt.Color(
                "segment:N",
                title=None,
                scale=alt.Scale(domain=[ONLY_A, BOTH, ONLY_B], range=["#e45756", "#bab0ac", "#4c78a8"]),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("criterion:N"),
                alt.Tooltip("segment:N"),
                alt.Tooltip("side:N", title="under"),
                alt.Tooltip("count:Q", title="answers"),
            ],
        )
        .properties(height=_height(len(criteria)), title="Which answers fail, under each harness")
    )


def composition_bars(criteria: list[Mapping[str, Any]], a: str = "A", b: str = "B") -> alt.Chart:
    """The composition of failures under each run, from :func:`evalcore.analysis.flips`'s
    ``criteria``: one stacked bar per run whose segments are each criterion's share of that run's
    failures. One row per (run, criterion): run ("A: <a>" / "B: <b>"), criterion, share, failed."""
    runs = [f"A: {a}", f"B: {b}"]
    rows = []
    for label, share_key, fail_key in (
        (runs[0], "share_of_failures_a", "fail_a"),
        (runs[1], "share_of_failures_b", "fail_b"),
    ):
        for c in criteria:
            rows.append({"run": label, "criterion": c["criterion"], "share": c[share_key], "failed": c[fail_key]})
    order = [c["criterion"] for c in criteria]
    return (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(
            x=alt.X(
                "share:Q",
                stack="zero",
                title="share of the run's failures",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1]),
            ),
            y=alt.Y("run:N", sort=runs, title=None),
            color=alt.Color(
                "criterion:N", sort=order, title=None, legend=alt.Legend(orient="bottom", columns=2, labelLimit=220)
            ),
            order=alt.Order("order_index:Q"),
            tooltip=[
                alt.Tooltip("run:N"),
                alt.Tooltip("criterion:N"),
                alt.Tooltip("failed:Q", title="failures"),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
        .transform_calculate(
            order_index=f"indexof({json.dumps(order)}, datum.criterion)",
        )
        .properties(height=_height(2, extra=170) + 22 * ((len(order) + 1) // 2), title="Composition of failures")
    )


#: What :func:`cost_by_criterion` can draw, with its axis title.
COST_MEASURES = {
    "cost_usd": "cost (US dollars, equal shares of each call)",
    "tokens_in": "tokens in (equal shares of each call)",
    "tokens_out": "tokens out (equal shares of each call)",
    "latency_ms_total": "latency (ms, equal shares of each call)",
}
#: The figures of :func:`projection_bars`, in the order drawn: key in a projection row -> label.
PROJECTION_METRICS = {"calls": "calls", "tokens_in": "tokens in", "tokens_out": "tokens out", "cost_usd": "cost (USD)"}


def cost_by_criterion(criteria: list[Mapping[str, Any]], measure: str = "cost_usd") -> alt.Chart:
    """One horizontal bar per criterion (order kept) of ``measure`` from
    :func:`evalcore.analysis.cost.run_cost`'s ``per_criterion`` (a call's tokens, cost and latency shared
    equally among its criteria). One row per criterion: criterion, value (None when unknown, e.g.
    a cost no call priced), calls, tokens_in, tokens_out, cost_usd, cost_unknown_calls."""
    if measure not in COST_MEASURES:
        raise ValueError(f"measure must be one of {', '.join(COST_MEASURES)}")
    rows = [
        {
            "criterion": c["criterion"],
            "value": c[measure],
            "calls": c["calls"],
            "tokens_in": c["tokens_in"],
            "tokens_out": c["tokens_out"],
            "cost_usd": c["cost_usd"],
            "cost_unknown_calls": c["cost_unknown_calls"],
        }
        for c in criteria
    ]
    order = [r["criterion"] for r in rows]
    return (
        alt.Chart(_data(rows))
        .mark_bar(color="#4c78a8")
        .encode(
            x=alt.X("value:Q", title=COST_MEASURES[measure]),
            y=alt.Y("criterion:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
            tooltip=[
                alt.Tooltip("criterion:N"),
                alt.Tooltip("calls:Q", title="calls that asked it"),
                alt.Tooltip("tokens_in:Q", format=",.0f", title="tokens in (share)"),
                alt.Tooltip("tokens_out:Q", format=",.0f", title="tokens out (share)"),
                alt.Tooltip("cost_usd:Q", format="$.4f", title="cost (share)"),
                alt.Tooltip("cost_unknown_calls:Q", title="calls with unknown cost"),
            ],
        )
        .properties(height=_height(len(rows)), title="Per criterion")
    )


def projection_bars(rows: list[Mapping[str, Any]]) -> alt.Chart:
    """Calls, tokens in, tokens out and cost of each harness mode, from
    :func:`evalcore.analysis.cost.project`'s rows, as multiples of the single call's figure: one
    scale for the four figures, so one view, which fits the width of its container (a panel per
    figure, each on its own scale, could not: Vega-Lite fits only single views). A group of bars
    per figure, a bar per mode; the figure itself in the tooltip. One row per (mode, figure) whose
    value is known (an unknown cost has no bar): mode, metric, value, x_single."""
    modes = [r["mode"] for r in rows]
    data = [
        {"mode": r["mode"], "metric": label, "value": r[key], "x_single": r.get(f"{key}_x_single")}
        for key, label in PROJECTION_METRICS.items()
        for r in rows
        if r[key] is not None and r.get(f"{key}_x_single") is not None
    ]
    return (
        alt.Chart(_data(data))
        .mark_bar()
        .encode(
            x=alt.X("x_single:Q", title="times the single call's figure"),
            y=alt.Y("metric:N", sort=list(PROJECTION_METRICS.values()), title=None),
            yOffset=alt.YOffset("mode:N", sort=modes),
            color=alt.Color("mode:N", sort=modes, title=None, legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip("mode:N"),
                alt.Tooltip("metric:N"),
                alt.Tooltip("value:Q", format=",.4~f"),
                alt.Tooltip("x_single:Q", format=".2f", title="x single"),
            ],
        )
        .properties(height=alt.Step(14), width="container")
    )


def trend_lines(points: list[Mapping[str, Any]], metric: str = "all_pass") -> alt.LayerChart | alt.FacetChart:
    """A headline across runs over time from :func:`evalcore.analysis.comparison.trend`: one line per segment
    (the line breaks where the judge model, judge prompt, rubric or suite changed) and a labelled
    rule at each break. Points carry run, value, spread and status as tooltips."""
    rows = [
        {
            "run": p["run_id"],
            "created": p["created_at"],
            "value": p["value"],
            "segment": str(p["segment"]),
            "spread": p.get("spread"),
            "status": p.get("status"),
            "judge": p.get("judge_model"),
            "break": "; ".join(p.get("breaks") or []),
        }
        for p in points
    ]
    base = alt.Chart(_data(rows)).encode(
        x=alt.X("created:T", title="run created"),
        y=alt.Y("value:Q", title=metric, axis=alt.Axis(format="%"), scale=alt.Scale(zero=False)),
    )
    lines = base.mark_line(point=True).encode(
        detail="segment:N",
        color=alt.Color("segment:N", title="unbroken line", legend=None),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("value:Q", format=".1%"),
            alt.Tooltip("spread:Q", format=".1%"),
            alt.Tooltip("status:N"),
            alt.Tooltip("judge:N"),
            alt.Tooltip("break:N", title="break before"),
        ],
    )
    breaks = [r for r in rows if r["break"]]
    rules = (
        alt.Chart(_data(breaks))
        .mark_rule(strokeDash=[4, 3], color="#888")
        .encode(x="created:T", tooltip=[alt.Tooltip("break:N", title="line broken: measurement changed")])
    )
    labels = (
        alt.Chart(_data(breaks))
        .mark_text(angle=270, align="left", dx=4, dy=-4, fontSize=10, color="#666")
        .encode(x="created:T", y=alt.value(5), text=alt.Text("break:N"))
    )
    return alt.layer(lines, rules, labels).properties(height=280, title=f"{metric} over time")


def round_dots(figures: Mapping[str, Mapping[str, Any]], a: str = "baseline", b: str = "candidate") -> alt.FacetChart:
    """Each figure per generation round for two configurations (dots) with the mean (tick): the
    spread is visible beside every headline. ``figures`` is :func:`evalcore.analysis.comparison.compare`'s."""
    rows = []
    for name, f in figures.items():
        for who, side in ((a, "a"), (b, "b")):
            for r, v in enumerate(f[side]["by_round"], 1):
                if v is not None:
                    rows.append({"figure": name, "config": who, "round": f"r{r}", "value": v, "kind": "round"})
            if f[side]["mean"] is not None:
                rows.append({"figure": name, "config": who, "round": "mean", "value": f[side]["mean"], "kind": "mean"})
    order = list(figures)
    base = alt.Chart(_data(rows)).encode(
        x=alt.X("value:Q", title="rate", axis=alt.Axis(format="%")),
        y=alt.Y("config:N", title=None),
        color=alt.Color("config:N", title=None, sort=[a, b]),
        tooltip=[
            alt.Tooltip("figure:N"),
            alt.Tooltip("config:N"),
            alt.Tooltip("round:N"),
            alt.Tooltip("value:Q", format=".1%"),
        ],
    )
    dots = base.transform_filter(alt.datum.kind == "round").mark_circle(size=60, opacity=0.7)
    ticks = base.transform_filter(alt.datum.kind == "mean").mark_tick(thickness=3, size=22)
    return (
        alt.layer(dots, ticks, data=_data(rows))
        .facet(row=alt.Row("figure:N", sort=order, title=None, header=alt.Header(labelAngle=0, labelAlign="left")))
        .properties(title="Per generation round (dots) and mean (tick)")
    )
