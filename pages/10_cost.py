"""Cost: calls, tokens, cost and latency per configuration (every run, judge and system under test
side by side) and, for one run, overall, per criterion and the single / grouped / split
projection for N items.

Deep link: ``?run=RUN[&items=N][&class=A,B]`` (a slice: the calls and outputs of these item classes).

Figures: evalcore.analysis.cost.cost_table (``evalcore cost --all --json``) and evalcore.analysis.cost.run_cost
(``evalcore cost RUN [--items N] [--class C] --json``); nothing on this page is computed here.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore import analysis
from pages import _cache, _select, _text, _ui

FLAG = {"complete": "complete", "partial": "⚠ partial", "polluted": "⚠ polluted"}
USD = st.column_config.NumberColumn(format="$%.4f")
USD6 = st.column_config.NumberColumn(format="$%.6f")
MS = st.column_config.NumberColumn(format="%.0f ms")
TOK = st.column_config.NumberColumn(format="%.1f")
X = st.column_config.NumberColumn(format="%.2f x")


_ui.title("Cost")
store = _ui.store()
table = _cache.analysis_call(analysis.cost_table)
if not table:
    st.info("No runs in this data directory.")
    st.stop()
classes = _select.class_slice(
    "cost", sorted({store.generation(g).manifest.suite_id for g in {r.gen_id for r in table}})
)
if classes:
    with _text.boundary():
        table = _cache.analysis_call(analysis.cost_table, classes=classes)
    _select.slice_caption(
        classes,
        "Every figure counts their calls and outputs; runs on suites without these classes are left out.",
        ["cost", "--all"],
    )
by_id = {r.run_id: r for r in table}
run_ids = list(by_id)
_select.suite_version_warning(run_ids)  # runs on an old suite version (issue 8)

# ---------------------------------------------------------------- per configuration
st.subheader("Per configuration")
if any(r.simulated for r in table):
    st.badge("SIMULATED", color="orange")
    st.caption(
        "Runs marked simulated were made by evalcore's simulator: their calls, tokens, prices and "
        "latencies are SIMULATED, not measured on a provider."
    )
_text.wide_table(
    pd.DataFrame(
        [
            {
                "run": r.run_id,
                "status": FLAG.get(r.status, r.status),
                "mode": r.mode,
                "simulated": r.simulated,
                "judge model": r.judge_model,
                "judge calls": r.judge_calls,
                "failed calls": r.judge_failed_calls,
                "judge tokens in": r.judge_tokens_in,
                "judge tokens out": r.judge_tokens_out,
                "judge cost": r.judge_cost_usd,
                "judge priced": analysis.cost_label(r.judge_cost_usd, r.judge_cost_unknown_calls, r.judge_calls),
                "unpriced calls": r.judge_cost_unknown_calls,
                "judge cost per answer": r.judge_cost_usd_per_answer,
                "judge latency mean": r.judge_latency_ms_mean,
                "judge latency p95": r.judge_latency_ms_p95,
                "generation": r.gen_id,
                "outputs": r.system_outputs,
                "system tokens in": r.system_tokens_in,
                "system tokens out": r.system_tokens_out,
                "system cost": r.system_cost_usd,
                "system priced": analysis.cost_label(
                    r.system_cost_usd, r.system_cost_unknown_outputs, r.system_outputs, "outputs"
                ),
                "unpriced outputs": r.system_cost_unknown_outputs,
                "system cost per output": r.system_cost_usd_per_output,
                "system latency mean": r.system_latency_ms_mean,
                "system latency p95": r.system_latency_ms_p95,
            }
            for r in table
        ]
    ),
    pin="run",
    key="cost_table",
    placeholder="-",
    column_config={
        "judge cost": USD,
        "system cost": USD,
        "judge cost per answer": USD6,
        "system cost per output": USD6,
        "judge latency mean": MS,
        "judge latency p95": MS,
        "system latency mean": MS,
        "system latency p95": MS,
    },
)
st.caption(
    "Cost sums the calls (outputs) whose cost is known; unpriced counts the others, never taken as 0, and "
    "priced says 'partly priced: N of M calls' beside such a sum ('unknown' only when no call is priced). "
    "A per-answer cost is shown only when every cost is known. The system under test is the run's "
    "generation, shared by every run on it."
)
_text.judge_not_pinned(table)

# ---------------------------------------------------------------- revision passes (issue 44)
st.subheader("Cost over revision passes")
with _text.boundary():
    revisions = _cache.analysis_call(analysis.revision_costs)  # `evalcore revision-cost --json`
    if not revisions:
        st.info("No generation records its revision budget (the generation knob revision_budget).")
    for rv in revisions:
        st.markdown(
            _text.md_escape(
                f"{rv.gen_id}: revision budget {rv.revision_budget}, {rv.answers} answers; prices: {rv.price_source}"
            )
        )
        _text.wide_table(
            pd.DataFrame(
                [
                    {
                        "passes": p.passes,
                        "recorded budget": p.recorded_budget,
                        "appended: tokens in": p.appended_tokens_in,
                        "fresh critic: tokens in": p.fresh_tokens_in,
                        "appended: cost per answer to here": p.appended_cumulative_cost_usd,
                        "fresh critic: cost per answer to here": p.fresh_cumulative_cost_usd,
                    }
                    for p in rv.passes
                ]
            ),
            pin="passes",
            placeholder="unpriced",
            column_config={
                "appended: cost per answer to here": USD6,
                "fresh critic: cost per answer to here": USD6,
                "appended: tokens in": TOK,
                "fresh critic: tokens in": TOK,
            },
        )
        st.caption(_text.md_escape(rv.note))
    st.caption(
        "An appended transcript re-sends every earlier turn, so pass k carries the draft and k - 1 revisions "
        "(quadratic in total); a fresh-context critic sends the brief and the current draft only (linear). "
        "See docs/COST.md."
    )

# ---------------------------------------------------------------- one run
st.subheader("One run")
asked = _ui.qp("run")
if asked is not None and asked not in by_id:
    with _text.boundary():
        store.run(asked)  # a bad or unknown id is one st.error
_ui.sync_widget("cost_run", "run", run_ids)
if st.session_state.get("cost_run") not in run_ids:
    st.session_state["cost_run"] = next(
        (r.run_id for r in table if r.mode == "single" and r.status == "complete"), run_ids[0]
    )
run_id = st.selectbox(
    "Run",
    run_ids,
    key="cost_run",
    on_change=_ui.widget_to_qp,
    args=("cost_run", "run"),
    format_func=lambda r: (
        f"{r} ({by_id[r].mode}, {by_id[r].gen_id})" + ("" if by_id[r].status == "complete" else f" ⚠ {by_id[r].status}")
    ),
)

with _text.boundary():
    base = _cache.analysis_call(analysis.run_cost, run_id, classes=classes)
    if base.simulated:
        st.badge("SIMULATED run", color="orange")
    if base.status != "complete":
        st.warning(
            _text.md_escape(f"Run {run_id} is {base.status}: its figures are not comparable with complete runs.")
        )
    st.caption(
        _text.md_escape(
            f"{base.mode} harness, judge {base.judge_model}; {base.items} items, "
            f"{base.answers} answers, each item judged {base.rounds} time(s)."
        )
    )
    _text.judge_not_pinned([base])
    j, s = base.judge, base.system
    _text.wide_table(
        pd.DataFrame(
            [
                {
                    "who": "judge",
                    "calls or outputs": j.calls,
                    "failed": j.failed_calls,
                    "tokens in": j.tokens_in,
                    "tokens out": j.tokens_out,
                    "cost": j.cost_usd,
                    "priced": analysis.cost_label(j.cost_usd, j.cost_unknown_calls, j.calls),
                    "unknown cost": j.cost_unknown_calls,
                    "latency mean": j.latency_ms_mean,
                    "latency p50": j.latency_ms_p50,
                    "latency p95": j.latency_ms_p95,
                },
                {
                    "who": f"system under test ({s.gen_id})",
                    "calls or outputs": s.outputs,
                    "failed": s.errored_outputs,
                    "tokens in": s.tokens_in,
                    "tokens out": s.tokens_out,
                    "cost": s.cost_usd,
                    "priced": analysis.cost_label(s.cost_usd, s.cost_unknown_outputs, s.outputs, "outputs"),
                    "unknown cost": s.cost_unknown_outputs,
                    "latency mean": s.latency_ms_mean,
                    "latency p50": s.latency_ms_p50,
                    "latency p95": s.latency_ms_p95,
                },
            ]
        ),
        pin="who",
        key="cost_totals",
        placeholder="-",
        column_config={"cost": USD, "latency mean": MS, "latency p50": MS, "latency p95": MS},
    )

    # ------------------------------------------------------------ per criterion
    st.markdown("**Per criterion**")
    crits = base.per_criterion
    _text.wide_table(
        pd.DataFrame(
            [
                {
                    "criterion": c.criterion,
                    "calls": c.calls,
                    "failed calls": c.failed_calls,
                    "tokens in": c.tokens_in,
                    "tokens out": c.tokens_out,
                    "cost": c.cost_usd,
                    "unpriced calls": c.cost_unknown_calls,
                    "latency share": c.latency_ms_total,
                    "latency mean": c.latency_ms_mean,
                    "latency p50": c.latency_ms_p50,
                    "latency p95": c.latency_ms_p95,
                }
                for c in crits
            ]
        ),
        pin="criterion",
        key="cost_criteria",
        placeholder="-",
        column_config={
            "tokens in": TOK,
            "tokens out": TOK,
            "cost": USD,
            "latency share": MS,
            "latency mean": MS,
            "latency p50": MS,
            "latency p95": MS,
        },
    )
    st.caption(
        "A call that asks several criteria gives each an equal share of its tokens, cost and latency, so "
        "the shares add up to the run's totals; calls counts the calls that asked the criterion, and the "
        "latency mean / p50 / p95 are those calls', whole."
    )
    measure = "cost_usd" if any(c.cost_usd is not None for c in crits) else "tokens_in"
    shares = {getattr(c, measure) for c in crits}
    if len(crits) > 1 and len(shares) == 1 and len({c.calls for c in crits}) == 1:
        # one call (or one set of calls) asks every criterion: the chart would be identical bars
        share = next(iter(shares))
        st.info(
            f"Every criterion shares the same {crits[0].calls:,} calls, so each of the {len(crits)} carries an "
            "equal share of them: "
            + (
                "an unknown cost"
                if share is None
                else (f"${share:,.4f}" if measure == "cost_usd" else f"{share:,.0f} tokens in")
            )
            + ". There is nothing to compare between criteria in this run's cost; a split or grouped run "
            "(or the projection below) tells them apart."
        )
    else:
        _cache.chart(st, _cache.chart_spec(analysis.cost_by_criterion, [c.to_dict() for c in crits], measure))

    # ------------------------------------------------------------ projection
    st.markdown("**Projection: single, grouped and split**")
    proj0 = base.projection
    if not proj0.available:
        st.info(_text.md_escape(f"No projection for this run: {proj0.reason}."))
        st.stop()
    key = f"cost_items_{run_id}"
    if key not in st.session_state:
        st.session_state[key] = max(1, _ui.qp_int("items", proj0.items))
    n = st.number_input(
        "Items N",
        min_value=1,
        step=1,
        key=key,
        on_change=_ui.widget_to_qp,
        args=(key, "items"),
        help="Items to judge; each is judged as many times as in this run.",
    )
    rep = base if n == proj0.items else _cache.analysis_call(analysis.run_cost, run_id, items=int(n), classes=classes)
    proj = rep.projection
    for w in proj.warnings:
        st.warning(_text.md_escape(w))
    pr, la, out = proj.prices, proj.latency, proj.output
    st.caption(
        _text.md_escape(
            f"{proj.items} items x {proj.rounds} judging(s); grouped = {proj.groups} calls per answer "
            f"({proj.groups_source}). Shared context S = {proj.shared_tokens_in:.1f} tokens per call, from "
            f"{proj.calls_measured} measured calls; prices "
            + (
                "unknown"
                if pr is None
                else f"${pr.input_per_million:.4g} in / ${pr.output_per_million:.4g} "
                "out per million tokens, fitted to the priced calls"
            )
            + (
                "; latency unknown"
                if la is None
                else f"; latency {la.ms_per_call:.0f} ms per call + {la.ms_per_output_token:.2f} ms per output token"
            )
            + (
                f"; output per call f = {out.tokens_per_call:.1f} tokens ({out.source})"
                if out.identified
                else f"; output per call f = 0 ASSUMED ({out.source})"
            )
            + f"; concurrency {proj.concurrency} ({proj.concurrency_source})."
        )
    )
    _text.wide_table(
        pd.DataFrame(
            [
                {
                    "mode": r.mode,
                    "calls per answer": r.calls_per_answer,
                    "calls": r.calls,
                    "tokens in": r.tokens_in,
                    "tokens out": r.tokens_out,
                    "cost": r.cost_usd,
                    "tokens out from": (
                        "estimated (model)"
                        if r.tokens_out_run is None
                        else f"measured: {r.tokens_out_run}" + (" (this run)" if r.tokens_out_run == run_id else "")
                    ),
                    "latency per answer": r.latency_ms_per_answer,
                    "latency per answer fanned out": r.latency_ms_per_answer_fanout,
                    "wall time": None if r.wall_ms is None else r.wall_ms / 1000,
                    "calls x single": r.calls_x_single,
                    "tokens in x single": r.tokens_in_x_single,
                    "cost x single": r.cost_usd_x_single,
                }
                for r in proj.rows
            ]
        ),
        pin="mode",
        key="cost_projection",
        placeholder="-",
        column_config={
            "tokens in": TOK,
            "tokens out": TOK,
            "cost": USD,
            "latency per answer": MS,
            "latency per answer fanned out": MS,
            "wall time": st.column_config.NumberColumn(format="%.0f s"),
            "calls x single": X,
            "tokens in x single": X,
            "cost x single": X,
        },
    )
    st.caption(
        "Latency per answer: the answer's calls one after another; fanned out: made in parallel, so the "
        "slowest call; wall time: the whole projected run at the concurrency above. Tokens out come from "
        "calls measured in that mode (this run or a named run on the same generation and judge) or are "
        "estimated from f + sum of o_k."
    )
    _cache.chart(st, _cache.chart_spec(analysis.projection_bars, [r.to_dict() for r in proj.rows]))
    st.caption(
        "The chart draws each figure of each mode as a multiple of the single call's (single = 1); the "
        "table above has the figures themselves."
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "criterion": c.criterion,
                    "c_k tokens in": c.tokens_in,
                    "out tokens per verdict": c.out_tokens_per_verdict,
                    "counted from": c.tokens_in_source,
                }
                for c in proj.criteria
            ]
        ),
        key="cost_model",
        hide_index=True,
        placeholder="-",
        column_config={"out tokens per verdict": TOK},
    )
    check = proj.check
    if check:
        st.caption(
            _text.md_escape(
                f"Check at the run's own size and mode ({check.mode}): {check.calls_projected} calls projected, "
                f"{check.calls_measured} measured; {check.tokens_in_projected:.0f} tokens in projected, "
                f"{check.tokens_in_measured} measured; {check.tokens_out_projected:.0f} tokens out projected, "
                f"{check.tokens_out_measured} measured"
                + (
                    ""
                    if check.wall_ms_measured is None or check.wall_ms_projected is None
                    else f"; wall time {check.wall_ms_projected / 1000:.0f} s projected, "
                    f"{check.wall_ms_measured / 1000:.0f} s measured"
                )
                + "."
            )
        )
    st.caption("Assumptions: " + _text.md_escape("; ".join(proj.assumptions)) + ". See docs/COST.md.")
