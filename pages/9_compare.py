"""Compare configurations: "did my change help?". The knob diff first (held, differs, one side, not
recorded), with a warning naming each rival explanation and a measurement change labelled as such;
then each figure per generation round (r1 / r2 / r3, mean, spread), paired per-item deltas with a
seeded bootstrap interval and the noise floor beside each, stable wins and regressions, the
two-sided bar, the power of the comparison, cost beside score, and the trend across runs.

Deep link: ``?a=BASELINE&b=CANDIDATE[&metric=all_pass|CRITERION][&class=A,B]`` (a slice).

Figures: evalcore.analysis.comparison (``evalcore diff A B --json``, ``evalcore compare A B --json``,
``evalcore trend --suite S --json``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis, review
from pages import _cache, _select, _text, _ui

PTS = st.column_config.NumberColumn(format="%+.1f pts")


def _defaults(runs: list[evalcore.RunSummary]) -> tuple[str, str]:
    """Two complete runs on different generations of one suite with the same judge (a system
    change), else any two runs on one suite, else the first two."""
    complete = [r for r in runs if r.status == "complete"] or runs
    for r in complete:
        for s in complete:
            if (
                s.run_id != r.run_id
                and s.suite_id == r.suite_id
                and s.gen_id != r.gen_id
                and s.judge_model == r.judge_model
                and s.mode == r.mode
            ):
                return r.run_id, s.run_id
    for r in complete:
        other = [s for s in complete if s.suite_id == r.suite_id and s.run_id != r.run_id]
        if other:
            return r.run_id, other[0].run_id
    ids = [r.run_id for r in runs]
    return ids[0], ids[-1]


_ui.title("Compare configurations")
store = _ui.store()
runs = _select.criteria_runs()
by_id = {r.run_id: r for r in runs}
run_ids = list(by_id)
if len(run_ids) < 2:
    st.info("Comparing needs two runs with criterion verdicts.")
    st.stop()

c_a, c_b, c_m = st.columns([2, 2, 1])
run_a, run_b = _select.two_runs(by_id, _defaults(runs), ("cmp_a", "cmp_b"), ("Baseline", "Candidate"), (c_a, c_b))
if run_a == run_b:
    st.info("Pick two different runs.")
    st.stop()
with _text.boundary():
    metrics = _cache.analysis_call(analysis.metrics_of, run_a, run_b)
    _ui.sync_widget("cmp_metric", "metric", metrics)
    st.session_state.setdefault("cmp_metric", "all_pass")
    metric = c_m.selectbox(
        "Headline", metrics, key="cmp_metric", on_change=_ui.widget_to_qp, args=("cmp_metric", "metric")
    )
    include_holdout = _select.holdout_toggle("compare", [by_id[run_a].suite_id, by_id[run_b].suite_id])
    classes = _select.class_slice("compare", [by_id[run_a].suite_id, by_id[run_b].suite_id])
    sel = analysis.Selection(include_holdout=include_holdout, classes=classes)
    d = _cache.analysis_call(analysis.diff, run_a, run_b)
    c = _cache.analysis_call(analysis.compare, run_a, run_b, headline=metric, sel=sel)
    c.corrected = _cache.analysis_call(review.corrected_of, run_a, run_b, metric, sel=sel)  # where both have gold
_select.slice_caption(classes, "Every figure below counts these items.", ["compare", run_a, run_b])

if c.simulated:
    st.badge("SIMULATED data: made by evalcore's simulator, not by a real system", color="orange")

# ---------------------------------------------------------------- 1. what differs
st.subheader("What differs")
if d.measurement_change:
    st.warning(
        "**Measurement change, not a system change**: only the judge changed and the answers are identical "
        "(same outputs hash). Levels on either side are different measurements.",
        icon=":material/straighten:",
    )
else:
    st.markdown(f"This is a **{_text.md_escape(d.kind)}**.")
if d.instrument_text:
    st.warning(
        _text.md_escape(d.instrument_text)
        + ". `evalcore gate` refuses this pair unless given --allow-measurement-change.",
        icon=":material/block:",
    )
for w in d.warnings:
    if "rival explanation" in w:
        st.warning(_text.md_escape("Rival explanations: " + w), icon=":material/warning:")
    elif "measurement change" not in w:
        st.info(_text.md_escape(w))
counts = d.counts
st.caption(
    f"{counts['differs']} differ, {counts['one side']} recorded on one side only, {counts['held']} held, "
    f"{counts['not recorded']} not recorded on either side (never counted as held)."
)
show_held = st.toggle("Show held and unrecorded knobs", value=False)
krows = [
    {
        "knob": r.label,
        "side": r.side,
        "status": r.status,
        "baseline": "" if r.a is None else str(r.a),
        "candidate": "" if r.b is None else str(r.b),
    }
    for r in d.knobs
    if show_held or r.status in ("differs", "one side")
]
if krows:
    st.dataframe(pd.DataFrame(krows), hide_index=True, width="stretch")
else:
    st.write("Every recorded knob is held.")

# ---------------------------------------------------------------- 2. verdict
st.subheader("Verdict")
v = c.verdict
if v.holds:
    st.success(_text.md_escape(v.text), icon=":material/check_circle:")
else:  # a verdict, not an error of the page: st.error is kept for what went wrong
    st.warning(_text.md_escape(v.text), icon=":material/cancel:")
if c.corrected is not None:  # both generations have gold: the delta on the judge-corrected scale
    (st.warning if c.corrected.disagrees else st.info)(
        "**Corrected scale** (PPI++ against gold): " + _text.md_escape(c.corrected.text), icon=":material/balance:"
    )
cov = c.coverage
if cov.note:
    st.warning(
        _text.md_escape(cov.note + " — the first rival explanation of any difference"), icon=":material/warning:"
    )
else:
    st.caption(f"Both runs answered the same {cov.shared_items} items.")
for n in c.notes:
    if " is POLLUTED: " in n:
        st.warning(_text.md_escape(n), icon=":material/report:")
for n in v.notes + [x for x in c.notes if x != cov.note and "POLLUTED" not in x]:
    st.caption(_text.md_escape(n))

# ---------------------------------------------------------------- 3. per round and deltas
st.subheader("Per generation round, paired deltas and the noise floor")
rows = []
for name in c.metrics:
    f = c.figures[name]
    row: dict[str, object] = {"figure": name}
    for side, who in ((f.a, "baseline"), (f.b, "candidate")):
        for k, val in enumerate(side.by_round, 1):
            row[f"{who} r{k}"] = _text.pct100(val)
        row[f"{who} mean"] = _text.pct100(side.mean)
        row[f"{who} spread"] = _text.pct100(side.spread)
    dl = f.delta
    row.update(
        {
            "paired delta": _text.pct100(dl.mean),
            "CI low": _text.pct100(dl.ci95[0]),
            "CI high": _text.pct100(dl.ci95[1]),
            "noise floor": _text.pct100(f.noise_floor),
            "within noise": None if f.within_noise is None else ("yes" if f.within_noise else "no"),
            "stable wins": f.stable_wins,
            "stable regressions": f.stable_regressions,
        }
    )
    rows.append(row)
df = pd.DataFrame(rows)
cfg = {
    col: (PTS if col in ("paired delta", "CI low", "CI high") else _text.PCT)
    for col in df.columns
    if col not in ("figure", "within noise", "stable wins", "stable regressions")
}
_text.wide_table(df, pin="figure", width="stretch", column_config=cfg)
h = c.figures[metric]
st.caption(
    f"Items paired: {h.delta.items}; interval: {h.delta.method}. Stable win = better in every one "
    f"of the {c.rounds_paired} paired generation rounds; stable regression = worse in every one. Noise floor = "
    "the largest round-to-round spread of the figure within either configuration."
)
_cache.chart(st, _cache.chart_spec(analysis.round_dots, {k: f.to_dict() for k, f in c.figures.items()}))

w_col, r_col, m_col = st.columns(3)
with w_col:
    st.markdown(f"**Stable wins ({_text.md_escape(metric)}): {h.stable_wins}**")
    st.dataframe(pd.DataFrame({"item": h.stable_win_items}), hide_index=True, height=160)
with r_col:
    st.markdown(f"**Stable regressions: {h.stable_regressions}**")
    st.dataframe(pd.DataFrame({"item": h.stable_regression_items}), hide_index=True, height=160)
with m_col:
    st.markdown(f"**New misses: {c.new_miss_count}** (failed in every round by the candidate, not by the baseline)")
    st.dataframe(pd.DataFrame({"item": c.new_misses}), hide_index=True, height=160)

if c.means:  # issue 40: ordinal and continuous criteria by their mean score
    st.subheader("Mean score per criterion")
    _text.plain_table(
        [
            {
                "criterion": m.criterion,
                "baseline mean [95% CI]": m.baseline.text(name=False),
                "candidate mean [95% CI]": m.candidate.text(name=False),
                "candidate - baseline": None if m.difference is None else f"{m.difference:+.3f}",
            }
            for m in c.means
        ]
    )
    st.caption(
        "Over the items both runs judged; each side's 95% interval is Student's t (its normal limit above 100 "
        "answers). The difference is not a paired test: the deltas above are."
    )

# ---------------------------------------------------------------- 4. power
st.subheader("How small a change can this comparison see?")
effect_pts = st.slider("Effect to detect (points)", 1.0, 30.0, 5.0, 0.5)
pw = h.power
assert isinstance(pw, analysis.Power)  # the page never skips it
if pw.mde is not None:  # no new pass over the runs
    pw = _cache.pure_call(analysis.power, h.delta.sd, pw.within_var, pw.rounds, pw.items, effect_pts / 100)
if pw.mde is None:
    st.info(_text.md_escape(pw.reason or "not enough data to size the comparison"))
else:
    a1, a2, a3 = st.columns(3)
    a1.metric(
        "Minimum detectable effect",
        f"{100 * pw.mde:.1f} pts",
        help=f"paired t-test, alpha {pw.alpha}, power {pw.power}, {pw.items} items",
    )
    a2.metric(
        f"Rounds needed for {effect_pts:g} pts at {pw.items} items",
        "-" if pw.rounds_needed is None else str(pw.rounds_needed),
    )
    a3.metric("Item-to-item spread (sd)", f"{100 * pw.tau2**0.5:.1f} pts")
    if pw.rounds_note:
        st.caption(_text.md_escape(pw.rounds_note))
    st.dataframe(
        pd.DataFrame(
            [
                {"generation rounds": int(k), f"items needed for {effect_pts:g} pts": n}
                for k, n in pw.items_needed.items()
            ]
        ),
        hide_index=True,
    )

# ---------------------------------------------------------------- 5. cost beside score
st.subheader("Cost and latency beside score")
crow = []
for who, run, cc, lat, side in (
    ("baseline", c.baseline, c.cost.baseline, c.latency.baseline, h.a),
    ("candidate", c.candidate, c.cost.candidate, c.latency.candidate, h.b),
):
    crow.append(
        {
            "configuration": f"{who}: {run}",
            metric + " mean": _text.pct100(side.mean),
            "system calls": cc.system["calls"],
            "system tokens": cc.system["tokens_in"] + cc.system["tokens_out"],
            "system cost (USD)": cc.system["cost_usd"],
            "judge calls": cc.judge["calls"],
            "judge tokens": cc.judge["tokens_in"] + cc.judge["tokens_out"],
            "judge cost (USD)": cc.judge["cost_usd"],
            **{
                f"{who_} latency {k[:-3]} (ms)": (lat.get(who_) or {}).get(k)
                for who_ in ("system", "judge")
                for k in ("mean_ms", "p95_ms")
            },
        }
    )
costs = pd.DataFrame(crow)
_text.wide_table(
    costs,
    pin="configuration",
    width="stretch",
    column_config={
        metric + " mean": _text.PCT,
        "system cost (USD)": st.column_config.NumberColumn(format="$%.4f"),
        "judge cost (USD)": st.column_config.NumberColumn(format="$%.4f"),
        **{col: st.column_config.NumberColumn(format="%.0f") for col in costs.columns if col.endswith("(ms)")},
    },
)
st.download_button(
    "Download the Markdown summary (for a pull request)",
    analysis.markdown(c),
    file_name=f"compare-{run_a}-{run_b}.md",
    mime="text/markdown",
)

# ---------------------------------------------------------------- 6. trend
st.subheader("Trend across runs")
suite = by_id[run_b].suite_id
with _text.boundary():
    t = _cache.analysis_call(analysis.trend, suite_id=suite, metric=metric, sel=sel)
if t.points:
    st.caption(
        f"Runs over suite {suite}, in the order they were made. The line breaks where the judge model, the "
        f"judge prompt, the rubric or the suite changed: {t.segments} unbroken stretch(es)."
    )
    _cache.chart(st, _cache.chart_spec(analysis.trend_lines, [p.to_dict() for p in t.points], metric))
    if t.polluted:
        st.warning(
            _text.md_escape(
                "POLLUTED points (not a measurement): " + ", ".join(t.polluted) + " — shown with status polluted"
            ),
            icon=":material/report:",
        )
