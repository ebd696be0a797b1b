"""Runs: suites, generations and runs with status (partial and polluted flagged), judge, mode,
pass rate per judge round with mean and spread, calls, tokens, cost and latency; and the answer
view that deep links open: ``?run=RUN&item=ITEM[&round=N]``; ``?class=A,B`` slices every figure to
items of these classes (``--class``).

Every figure comes from evalcore.suites_summary / generations_summary / runs_summary, the same
functions behind ``evalcore suites|generations|runs --json``. Holdout items are left out of the
figures and the item picker unless "Show holdout items" is on (``--include-holdout``; the look is
logged); a run on an older version of its suite is marked "suite v1, superseded by v2".
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from pages import _cache, _select, _text, _ui

FLAG = {"complete": "complete", "partial": "⚠ partial", "polluted": "⚠ polluted"}
MS = st.column_config.NumberColumn(format="%.0f ms")
USD = st.column_config.NumberColumn(format="$%.4f")


def _ternary(r: evalcore.RunSummary) -> str | None:
    """The ternary headline of each ternary criterion with its interval, or None."""
    return "; ".join(f"{t.criterion} {_text.pct(t.headline)} {_text.pct_ci(t.ci95)}" for t in r.ternary) or None


_ui.title("Runs")
store = _ui.store()
suites = _cache.summary(evalcore.suites_summary)  # evalcore.suites_summary, cached until the data changes
suite_ids = [s.suite_id for s in suites]
hold = _select.holdout_toggle("runs", suite_ids)
classes = _select.class_slice("runs", suite_ids)
gens: list[evalcore.GenerationSummary] = []
runs: list[evalcore.RunSummary] = []
with _text.boundary():  # a class no run's suite has is one st.error
    gens = _cache.summary(evalcore.generations_summary, include_holdout=hold, classes=classes)
    runs = _cache.summary(evalcore.runs_summary, include_holdout=hold, classes=classes)
if classes and not runs:
    st.stop()
_select.slice_caption(
    classes,
    "Pass rates, items, verdicts and outputs count these items; runs on suites without these classes are left "
    "out; calls, tokens and cost are what each run spent on every item.",
    ["runs"],
)
run_ids = [r.run_id for r in runs]
by_id = {r.run_id: r for r in runs}

# ---------------------------------------------------------------- flags first
flagged = [r for r in runs if r.status != "complete"]
if flagged:
    st.warning(
        "Not complete, so their figures are not comparable with the others: "
        + "; ".join(
            _text.md_escape(
                f"{r.run_id} is {r.status} ({r.failed_calls} failed calls, {r.errored_verdicts} errored verdicts)"
            )
            for r in flagged
        )
    )
flagged_gens = [g for g in gens if g.status != "complete"]
if flagged_gens:
    st.warning(
        "Generations not complete: " + "; ".join(_text.md_escape(f"{g.gen_id} is {g.status}") for g in flagged_gens)
    )
_select.suite_version_warning(run_ids)
for r in runs:
    if r.variant_warning:
        st.warning(_text.md_escape(r.variant_warning), icon=":material/warning:")

# ---------------------------------------------------------------- runs
st.subheader("Runs")
if not runs:
    st.info("No runs in this data directory.")
else:
    n_rounds = max((len(r.all_pass_by_round) for r in runs), default=0)
    rows = []
    for r in runs:
        by_round = r.all_pass_by_round + [None] * (n_rounds - len(r.all_pass_by_round))
        rows.append(
            {
                "run": r.run_id,
                "status": FLAG.get(r.status, r.status),
                "all pass": _text.pct100(r.all_pass.rate if r.all_pass else None),
                "95% CI": _text.pct_ci(r.all_pass.ci95 if r.all_pass else None),
                "ternary headline": _ternary(r),
                "mode": r.mode,
                "prompt variant": r.prompt_variant,
                "judge rounds": r.judge_rounds,
                **{f"all pass r{i + 1}": _text.pct100(v) for i, v in enumerate(by_round)},
                "spread": _text.pct100(r.all_pass_spread),
                "errored verdicts": r.errored_verdicts,
                "calls": r.calls,
                "failed calls": r.failed_calls,
                "tokens in": r.tokens_in,
                "tokens out": r.tokens_out,
                "cost": r.cost_usd,
                "unpriced calls": r.cost_unknown_calls,
                "judge latency": r.latency_ms_mean,
                "system latency": r.system_latency_ms_mean,
                "judge model": r.judge_model,
                "generation": r.gen_id,
                "suite version": r.suite_mark or f"v{r.suite_version}",
            }
        )
    table = pd.DataFrame(rows)
    config = {
        "all pass": _text.PCT,
        **{f"all pass r{i + 1}": _text.PCT for i in range(n_rounds)},
        "spread": _text.PCT,
        "cost": USD,
        "judge latency": MS,
        "system latency": MS,
    }

    event = st.dataframe(
        table,
        key="runs_table",
        hide_index=True,
        column_config=config,
        on_select="rerun",
        selection_mode="single-row",
        height="content" if len(rows) <= 40 else 700,
        placeholder="-",
    )
    picked = list(event.selection.rows) if event is not None else []
    if _select.new_pick("runs_table", picked) and picked:
        _ui.set_qp(run=run_ids[picked[0]])
    st.caption(
        "All pass: the answers passing every criterion in judge round 1, of the complete answers, with its 95% "
        "interval (Wilson; items as clusters where generation rounds are pooled), as the Attribution page counts it; "
        "then the same rate per judge round and its spread (max - min). Per-criterion rates are on the Attribution "
        "page. Cost sums the calls whose "
        "price is known; unpriced calls counts the others (never taken as 0). Select a row to open its "
        "answers below."
        + ("" if hold else " Pass rates leave the suites' holdout items out; cost and tokens count every call.")
    )
    _select.curated_note([r.suite_id for r in runs])
    with st.expander("Runs as a plain table (copyable text)"):
        plain = pd.DataFrame(
            [
                {
                    "run": r.run_id,
                    "status": FLAG.get(r.status, r.status),
                    "mode": r.mode,
                    "judge model": r.judge_model,
                    "judge rounds": str(r.judge_rounds),
                    "all pass": _text.pct(r.all_pass.rate if r.all_pass else None)
                    + (" " + _text.pct_ci(r.all_pass.ci95) if r.all_pass and r.all_pass.ci95[0] is not None else ""),
                    **{
                        f"all pass r{i + 1}": _text.pct(v)
                        for i, v in enumerate(r.all_pass_by_round + [None] * (n_rounds - len(r.all_pass_by_round)))
                    },
                    "spread": _text.pct(r.all_pass_spread),
                    "ternary headline": _ternary(r) or "-",
                    "errored verdicts": str(r.errored_verdicts),
                    "calls": str(r.calls),
                    "suite version": r.suite_mark or f"v{r.suite_version}",
                }
                for r in runs
            ]
        )
        st.table(plain.map(_text.md_escape), hide_index=True)

# ---------------------------------------------------------------- generations and suites
st.subheader("Generations")
if gens:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "generation": g.gen_id,
                    "suite": g.suite_id,
                    "suite version": g.suite_mark or f"v{g.suite_version}",
                    "status": FLAG.get(g.status, g.status),
                    "source": g.source,
                    "rounds": g.rounds,
                    "items": g.items,
                    "outputs": g.outputs,
                    "abstained": _text.pct100(g.abstained_rate),
                    "errored outputs": g.errored_outputs,
                    "tokens in": g.tokens_in,
                    "tokens out": g.tokens_out,
                    "cost": g.cost_usd,
                    "system latency": g.latency_ms_mean,
                    "knobs": ", ".join(f"{k}={v}" for k, v in sorted(g.knobs.items())),
                }
                for g in gens
            ]
        ),
        hide_index=True,
        column_config={"abstained": _text.PCT, "cost": USD, "system latency": MS},
        placeholder="-",
    )
else:
    st.info("No generations in this data directory.")

st.subheader("Suites")
if suites:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "suite": s.suite_id,
                    "items": s.items,
                    "holdout items": s.holdout_items,
                    "curated": s.curated,
                    "simulated": s.simulated,
                    "content hash": s.content_hash,
                    "created": s.created_at,
                    "description": s.description,
                }
                for s in suites
            ]
        ),
        hide_index=True,
    )
    _select.curated_note(suite_ids)
else:
    st.info("No suites in this data directory.")

# ---------------------------------------------------------------- the answer view (deep links)
st.subheader("Answer")
st.caption("Link to one answer with ?run=RUN&item=ITEM&round=N; everything below is shown as plain text.")
_ui.sync_widget("answer_run", "run", run_ids)
c_run, c_item, c_round = st.columns([2, 2, 1])
c_run.selectbox(
    "Run",
    run_ids,
    index=None,
    key="answer_run",
    placeholder="choose a run",
    on_change=_ui.widget_to_qp,
    args=("answer_run", "run"),
    format_func=lambda r: r + _select.suite_suffix(by_id[r]),
)
run_q, item_q, round_q = _ui.qp("run"), _ui.qp("item"), _ui.qp_int("round", 1)

with _text.boundary():
    if run_q is None:
        st.stop()
    picker = evalcore.run_item_ids(store, run_q, include_holdout=hold, classes=classes)
    options = picker["item_ids"] + ([item_q] if item_q and item_q not in picker["item_ids"] else [])
    _ui.sync_widget("answer_item", "item", options)
    item_label = (
        f"Item ({picker['items']} in {_text.md_escape(picker['gen_id'])}"
        + ("" if hold else ", holdout items hidden")
        + "; type any id)"
    )
    c_item.selectbox(
        item_label,
        options,
        index=None,
        key="answer_item",
        placeholder="choose or type an item id",
        accept_new_options=True,
        on_change=_ui.widget_to_qp,
        args=("answer_item", "item"),
    )
    rounds = max(picker["rounds"], 1)
    if not 1 <= round_q <= rounds:
        st.warning(
            _text.md_escape(
                f"{picker['gen_id']} has generation rounds 1 to {rounds}; showing round "
                f"{min(max(round_q, 1), rounds)} instead of {round_q}."
            )
        )
        round_q = min(max(round_q, 1), rounds)
        _ui.set_qp(round=round_q)
    if st.session_state.get("answer_round") != round_q:
        st.session_state["answer_round"] = round_q
    c_round.number_input(
        "Generation round",
        min_value=1,
        max_value=rounds,
        step=1,
        key="answer_round",
        on_change=_ui.widget_to_qp,
        args=("answer_round", "round"),
    )
    if item_q is None:
        st.stop()
    view = evalcore.item_view(store, run_q, item_q, round_q, include_holdout=hold)
    if run_q in by_id and by_id[run_q].suite_mark:
        st.warning(
            _text.md_escape(
                f"Run {run_q} is on {by_id[run_q].suite_mark}: this item may have been repaired "
                "since (evalcore suite versions)."
            )
        )
    status = by_id[run_q].status if run_q in by_id else "complete"
    if status != "complete":
        st.warning(
            _text.md_escape(
                f"Run {run_q} is {status}: verdicts may be missing or errored, and its figures "
                "are not comparable with complete runs."
            )
        )
    if view.output is None:
        st.warning(_text.md_escape(f"No answer for item {item_q} in round {round_q} of {picker['gen_id']}."))
    left, right = st.columns(2)
    with left:
        _text.labelled_text("Input", view.input)
        _text.labelled_text("Context", view.context)
        _text.labelled_text("Must have", "\n".join(f"- {m}" for m in view.must_have or []) or None)
        if not _text.missing(view.reference):
            _text.labelled_text("Reference", view.reference)
    with right:
        _text.labelled_text("Output" + (" (the system abstained)" if view.abstained else ""), view.output)
        for jr in sorted({v.judge_round for v in view.verdicts}):
            lines = []
            for v in (v for v in view.verdicts if v.judge_round == jr):
                shown = {"score": _text.or_none(v.score), "label": v.label}
                extra = "".join(f", {k} {x}" for k, x in shown.items() if x is not None)
                said = f"judge said {v.raw_verdict}" if v.raw_verdict is not None else "no verdict"
                lines.append(f"{v.criterion}: {_text.verdict_word(v.passed)} ({said}{extra})")
                lines.append(f"  reason: {v.reason if v.reason is not None else '(none)'}")
                if v.error is not None:
                    lines.append(f"  error: {v.error}")
            _text.labelled_text(f"Verdicts, judge round {jr}", "\n".join(lines))
        if not view.verdicts:
            st.info("No verdicts on this answer in this run.")
