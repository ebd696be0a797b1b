"""Failure attribution: where a run's failures land. Per criterion the failures, the fail rate with
its interval, the share of all failures and the answers that fail it alone (what a gate on it
alone would block); the all-pass rate and the rate through the hard gates; the ternary headline;
failures by class; errored verdicts counted. Then the failing answers of one criterion with the
judge's reason, and one of them in full.

Deep link: ``?run=RUN[&criterion=C][&judge=N|majority][&round=N][&only=1]``.

Figures: evalcore.analysis.failures (``evalcore attribution RUN --json``); the drill-down:
evalcore.analysis.answers_failing (``evalcore failing RUN --criterion C [--only] --json``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis
from pages import _cache, _select, _text, _ui

PAGE_SIZE = 25


def _interval(lo: float | None, hi: float | None) -> str:
    return "-" if lo is None or hi is None else f"{100 * lo:.1f}-{100 * hi:.1f}"


_ui.title("Failure attribution")
store = _ui.store()
runs = _select.criteria_runs()
gens = {g.gen_id: g for g in _cache.summary(evalcore.generations_summary)}
run_ids = [r.run_id for r in runs]
by_id = {r.run_id: r for r in runs}

# ---------------------------------------------------------------- what to read
asked = _ui.qp("run")
if asked is not None and asked not in by_id:
    with _text.boundary():
        store.run(asked)  # a bad or unknown id is one st.error; a known one has no verdicts
        st.warning(_text.md_escape(f"Run {asked} has no criterion verdicts; showing another run."))
_ui.sync_widget("attr_run", "run", run_ids)
if "attr_run" not in st.session_state:
    st.session_state["attr_run"] = next((r.run_id for r in runs if r.status == "complete"), run_ids[0])
c_run, c_judge, c_round = st.columns([3, 2, 2])
run_id = c_run.selectbox(
    "Run",
    run_ids,
    key="attr_run",
    on_change=_ui.widget_to_qp,
    args=("attr_run", "run"),
    format_func=lambda r: _select.run_label(by_id[r]),
)
hold = _select.holdout_toggle("attribution", [by_id[run_id].suite_id])
judge, gen_round = _select.rounds(
    "attr",
    max(1, by_id[run_id].judge_rounds or 1),
    max(1, gens[by_id[run_id].gen_id].rounds),
    (c_judge, c_round),
)
sel = analysis.parse_selection(
    judge, gen_round, include_holdout=hold, classes=_select.class_slice("attribution", [by_id[run_id].suite_id])
)

with _text.boundary():
    r = _cache.analysis_call(analysis.attribution, run_id, sel)
    for w in r.status_warnings():
        st.warning(_text.md_escape(w))
    for caveat in analysis.run_caveats(store, run_id).lines():  # curated, frozen set, document axis: once each
        st.caption(_text.md_escape(caveat))
    crits = r.criteria
    names = [c.criterion for c in crits]
    st.markdown(_text.md_escape(r.harness.text))
    if r.harness.association_runs:
        st.page_link(
            "pages/3_association.py",
            label="Which of these fail together? Criteria association",
            query_params={"runs": ",".join(r.harness.association_runs), "human": "1"},
            icon=":material/grid_on:",
        )

    # ------------------------------------------------------------ headline figures
    ap, gates = r.all_pass, r.gates
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("All criteria pass", _text.pct(ap.rate))  # the labels fit a quarter of the page at 1024 px
    lo, hi = ap.ci95
    m1.caption(
        f"{ap.passed} of {ap.of} complete answers"
        + (f"; 95% interval {_text.pct(lo)} to {_text.pct(hi)}" if lo is not None else "")
    )
    if gates.criteria:
        m2.metric("Pass the gates", _text.pct(gates.rate))
        m2.caption(
            _text.md_escape(f"{gates.passed} of {gates.of} pass every gate: {', '.join(gates.criteria)}; 95% interval ")
            + _text.pct_ci(gates.ci95)
        )
    else:
        m2.metric("Pass the gates", "-")
        m2.caption("No criterion of this rubric is a hard gate.")
    m3.metric("Complete answers", r.answers_complete)
    m3.caption(f"of {r.answers}: a verdict on every criterion; {r.answers_incomplete} incomplete")
    errored = sum(c.errored for c in crits)
    m4.metric("Errored verdicts", errored)
    m4.caption(
        f"{r.answers_with_errors} answers with an errored verdict are left out of the all-pass rate; "
        "errored verdicts are left out of every rate"
    )
    for t in r.ternary:
        st.metric(_text.md_escape(f"{t.criterion}: headline"), _text.pct(t.headline))
        st.caption(
            f"(correct + 0.5 x partial) / N = ({t.correct} + 0.5 x {t.partial}) / "
            f"{t.correct + t.partial + t.wrong}, 95% interval {_text.pct_ci(t.ci95)}: a partial answer counts half here, "
            "and counts as a "
            f"failure in the all-pass rate ({_text.pct(t.all_pass_rate)} correct)."
        )

    if r.means:  # issue 40: ordinal and continuous criteria by their mean score too
        st.subheader("Mean score per criterion")
        _text.plain_table(
            [
                {
                    "criterion": m.criterion,
                    "kind": m.kind,
                    "answers": m.n,
                    "mean": None if m.mean is None else f"{m.mean:.3f}",
                    "95% interval": m.text(name=False).partition(" ")[2] or "-",
                    **({"errored": m.errored} if any(x.errored for x in r.means) else {}),
                }
                for m in r.means
            ]
        )
        st.caption(
            "The mean of the answers' scores on each ordinal and continuous criterion, with its 95% interval "
            "(Student's t; its normal limit above 100 answers). Pass / fail criteria are read by their fail rate below."
        )

    # ------------------------------------------------------------ per criterion
    st.subheader("Per criterion")
    thresholds = any(c.threshold is not None for c in crits)
    errors = any(c.errored for c in crits)
    judged = {c.judged for c in crits}  # one count for all: said once, under the table
    _text.plain_table(
        [
            {
                "criterion": c.criterion,
                "gate": "yes" if c.gate else "",
                **({"threshold": c.threshold} if thresholds else {}),
                **({"judged": c.judged} if len(judged) > 1 else {}),
                "failed": c.failed,
                "fail rate": _text.pct(c.fail_rate),
                "95% interval": _interval(*c.fail_rate_ci95),
                "share": _text.pct(c.share_of_failures),
                "only this": c.fail_only_this,
                **({"errored": c.errored} if errors else {}),
            }
            for c in crits
        ]
    )
    st.caption(
        (f"Each criterion judged on {next(iter(judged))} answers. " if len(judged) == 1 else "")
        + f"{r.total_failures} failures in all. Share: the criterion's share of them. Only this: answers that "
        "fail this criterion and no other (what a gate on it alone would block). Gate: a hard gate. The 95% "
        "interval of the fail rate is in percent. Click a bar to list its failing answers below."
    )
    left, right = st.columns(2)
    with left:
        bars = _cache.chart(
            st,
            _cache.chart_spec(analysis.failure_shares, [c.to_dict() for c in crits], select="crit"),
            key=f"attr_bars|{run_id}",
            on_select="rerun",
            selection_mode="crit",
        )
    hit = _cache.chart_points(bars, "crit")
    clicked = hit[0].get("criterion") if hit else None
    if _select.new_pick("attr_bars", clicked) and clicked in names:
        _ui.set_qp(criterion=clicked)
        st.session_state.pop("attr_crit", None)
    if r.by_class:
        _cache.chart(right, _cache.chart_spec(analysis.class_heatmap, [c.to_dict() for c in r.by_class], names))

    # ------------------------------------------------------------ drill-down
    st.subheader("Failing answers")
    _ui.sync_widget("attr_crit", "criterion", names)
    _ui.keep("attr_crit", names)
    if "attr_crit" not in st.session_state:
        st.session_state["attr_crit"] = max(crits, key=lambda c: c.failed).criterion
    if st.session_state.get("attr_only") != (_ui.qp("only") == "1"):
        st.session_state["attr_only"] = _ui.qp("only") == "1"
    d1, d2, d3 = st.columns([3, 3, 1])
    crit = d1.selectbox(
        "Criterion", names, key="attr_crit", on_change=_ui.widget_to_qp, args=("attr_crit", "criterion")
    )
    only = d2.checkbox(
        "Only answers failing this criterion alone",
        key="attr_only",
        on_change=lambda: _ui.set_qp(only="1" if st.session_state["attr_only"] else None),
    )
    count = next(c.fail_only_this if only else c.failed for c in crits if c.criterion == crit)
    pages = max(1, -(-count // PAGE_SIZE))
    page = d3.number_input(
        "Page", min_value=1, max_value=pages, value=1, step=1, key=f"attr_page|{crit}|{int(only)}|{pages}"
    )
    res = _cache.analysis_call(analysis.answers_failing, run_id, crit, only, sel, PAGE_SIZE, (page - 1) * PAGE_SIZE)
    if not res.answers:
        st.info("No answer fails this criterion" + (" alone." if only else "."))
    else:
        first = res.offset + 1
        labels = any(a.label is not None for a in res.answers)  # ternary: the label after post-processing
        rows = pd.DataFrame(
            [
                {
                    "item": a.item_id,
                    "round": a.gen_round,
                    "class": a.cls,
                    "judge said": a.raw_verdict,
                    **({"label": a.label} if labels else {}),
                    "reason": a.reason,
                }
                for a in res.answers
            ]
        )
        st.caption(
            f"{res.total} answers; {first} to {res.offset + len(res.answers)} shown. The reason is "
            "the judge's own words"
            + ("; the label is the verdict after post-processing" if labels else "")
            + ". Select a row to read the answer."
        )
        key = f"attr_answers|{run_id}|{crit}|{int(only)}|{judge}|{gen_round}|{page}|{int(hold)}"
        ev = st.dataframe(
            rows, key=key, hide_index=True, on_select="rerun", selection_mode="single-row", placeholder="-"
        )
        chosen = list(ev.selection.rows) if ev is not None else []
        if chosen:
            a = res.answers[chosen[0]]
            st.caption(_text.md_escape(f"{a.item_id}, generation round {a.gen_round}, class {a.cls or '-'}"))
            i_col, o_col = st.columns(2)
            with i_col:
                _text.labelled_text("Input", a.input)
            with o_col:
                _text.labelled_text("Output" + (" (the system abstained)" if a.abstained else ""), a.output)
                said = _text.verdict_word(a.passed)
                said += "" if a.label is None else f" (label {a.label}; the judge said {a.raw_verdict})"
                _text.labelled_text(f"The judge on this criterion, judge round {a.judge_round}: {said}", a.reason)
            st.page_link(
                "pages/1_runs.py",
                label="Open this answer with every verdict in Runs",
                query_params={"run": run_id, "item": a.item_id, "round": str(a.gen_round)},
            )
