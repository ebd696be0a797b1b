"""Harness comparison: two runs on the same answers (a single call against one call per criterion,
two judges...). Per criterion, the answers that fail under A and pass under B, the reverse, and
those failing under both; the composition of failures under each; the all-pass rate under each,
and what it hides when it barely moves while the failures changed criterion; the answers whose
failing criteria changed, of all the answers both judged. Then the answers that flipped on one
criterion, with both judges' reasons.

Deep link: ``?a=RUN&b=RUN[&criterion=C][&dir=fail_a_pass_b|pass_a_fail_b|fail_both][&judge=N|majority][&round=N]``.

Figures: evalcore.analysis.flips (``evalcore flips A B --json``); the drill-down:
evalcore.analysis.flip_answers (``evalcore flipped A B --criterion C --direction D --json``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis
from pages import _cache, _select, _text, _ui

PAGE_SIZE = 25
DEFAULT_A, DEFAULT_B = "support-single", "support-split"


def _defaults(runs: list[evalcore.RunSummary]) -> tuple[str, str]:
    ids = [r.run_id for r in runs]
    if DEFAULT_A in ids and DEFAULT_B in ids:
        return DEFAULT_A, DEFAULT_B
    complete = [r for r in runs if r.status == "complete"] or runs
    for r in complete:  # two runs on one generation, a single-call one first when there is one
        other = [s for s in complete if s.gen_id == r.gen_id and s.run_id != r.run_id]
        if other:
            other.sort(key=lambda s: s.mode != "split")
            return r.run_id, other[0].run_id
    return ids[0], ids[-1]


_ui.title("Harness comparison")
store = _ui.store()
runs = _select.criteria_runs()
by_id = {r.run_id: r for r in runs}
run_ids = list(by_id)
gens = {g.gen_id: g for g in _cache.summary(evalcore.generations_summary)}

# ---------------------------------------------------------------- the two runs
run_a, run_b = _select.two_runs(by_id, _defaults(runs), ("harness_a", "harness_b"), ("A", "B"), st.columns(2))
c_judge, c_round, _ = st.columns([2, 2, 3])
judge, gen_round = _select.rounds(
    "harness",
    min(max(1, by_id[r].judge_rounds or 1) for r in (run_a, run_b)),
    max(gens[by_id[r].gen_id].rounds or 1 for r in (run_a, run_b)),
    (c_judge, c_round),
)
hold = _select.holdout_toggle("harness", [by_id[r].suite_id for r in (run_a, run_b)])
sel = analysis.parse_selection(
    judge,
    gen_round,
    include_holdout=hold,
    classes=_select.class_slice("harness", [by_id[r].suite_id for r in (run_a, run_b)]),
)

with _text.boundary():
    if run_a == run_b:
        st.info("Choose two different runs.")
        st.stop()
    fl = _cache.analysis_call(analysis.flips, run_a, run_b, sel)
    for w in fl.warnings:
        st.warning(_text.md_escape(w))
    _select.curated_note([by_id[r].suite_id for r in (run_a, run_b)])
    crits = fl.criteria
    names = [c.criterion for c in crits]
    shift = analysis.composition_shift(fl)

    # ------------------------------------------------------------ the aggregate
    ap = fl.all_pass
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("All criteria pass under A", _text.pct(ap.a))
    m1.caption(
        f"{ap.passed_a} of {ap.answers} answers both runs judged on every criterion; 95% interval {_text.pct_ci(ap.ci95_a)}"
    )
    delta = shift.all_pass_delta
    m2.metric(
        "All criteria pass under B",
        _text.pct(ap.b),
        delta=None if delta is None else f"{100 * delta:+.1f} points",
        delta_color="off",
        delta_arrow="off",
    )
    m2.caption(f"{ap.passed_b} of {ap.answers}; 95% interval {_text.pct_ci(ap.ci95_b)}")
    m3.metric("Failures under A / B", f"{fl.failures_a} / {fl.failures_b}")
    m4.metric("Verdicts that changed", shift.flipped_verdicts)
    m4.caption(
        f"the composition of failures moved by {100 * shift.composition_distance:.1f} points "
        "(half the summed change in shares)"
    )
    rm = fl.reason_moved
    m5.metric("Answers whose failing criteria changed", f"{rm.moved} of {rm.answers}")
    m5.caption(
        f"{_text.pct(rm.share)} of the answers both runs judged: {rm.fail_both} fail under both on different "
        f"criteria, {rm.fail_a_only} under A only, {rm.fail_b_only} under B only"
    )
    if shift.hidden:
        mm = shift.most_moved or analysis.MostMoved("-", None, None)
        st.info(
            _text.md_escape(
                f"The all-pass rate is within a point ({_text.pct(ap.a)} under A, {_text.pct(ap.b)} under B) while "
                f"{shift.flipped_verdicts} verdicts changed and the composition of failures moved by "
                f"{100 * shift.composition_distance:.1f} points (the largest move: {mm.criterion}, "
                f"{_text.pct(mm.share_a)} of A's failures and {_text.pct(mm.share_b)} of B's). The aggregate hides "
                "which requirement the failures are filed against."
            )
        )

    # ------------------------------------------------------------ per criterion
    st.subheader("Per criterion")
    table = pd.DataFrame(
        [
            {
                "criterion": c.criterion,
                "A fails, B passes": c.fail_a_pass_b,
                "A passes, B fails": c.pass_a_fail_b,
                "both fail": c.fail_both,
                "fail under A": c.fail_a,
                "fail under B": c.fail_b,
                "share of A's failures": _text.pct100(c.share_of_failures_a),
                "share of B's failures": _text.pct100(c.share_of_failures_b),
                "McNemar p": c.mcnemar_p,
                "answers": c.n,
            }
            for c in crits
        ]
    )
    st.dataframe(
        table,
        key="harness_table",
        hide_index=True,
        placeholder="-",
        column_config={
            "share of A's failures": _text.PCT,
            "share of B's failures": _text.PCT,
            "McNemar p": st.column_config.NumberColumn(format="%.2g"),
        },
    )
    st.caption(
        _text.md_escape(
            f"A = {run_a}, B = {run_b}, on the answers both judged. McNemar p: the exact test on "
            "the answers that changed verdict, one way against the other."
        )
    )
    left, right = st.columns(2)
    rows = [c.to_dict() for c in crits]
    _cache.chart(left, _cache.chart_spec(analysis.flip_bars, rows, run_a, run_b))
    _cache.chart(right, _cache.chart_spec(analysis.composition_bars, rows, run_a, run_b))

    # ------------------------------------------------------------ drill-down
    st.subheader("Answers that flipped")
    _ui.sync_widget("harness_crit", "criterion", names)
    _ui.keep("harness_crit", names)
    st.session_state.setdefault("harness_crit", max(crits, key=lambda c: c.fail_a_pass_b + c.pass_a_fail_b).criterion)
    _ui.sync_widget("harness_dir", "dir", list(analysis.DIRECTIONS))
    st.session_state.setdefault("harness_dir", "fail_a_pass_b")
    d1, d2 = st.columns([2, 3])
    crit = d1.selectbox(
        "Criterion", names, key="harness_crit", on_change=_ui.widget_to_qp, args=("harness_crit", "criterion")
    )
    row = next(c for c in rows if c["criterion"] == crit)
    direction = d2.radio(
        "Which answers",
        list(analysis.DIRECTIONS),
        key="harness_dir",
        horizontal=True,
        on_change=_ui.widget_to_qp,
        args=("harness_dir", "dir"),
        format_func=lambda d: (
            {"fail_a_pass_b": "A fails, B passes", "pass_a_fail_b": "A passes, B fails", "fail_both": "both fail"}[d]
            + f" ({row[d]})"
        ),
    )
    pages = max(1, -(-row[direction] // PAGE_SIZE))
    page = 1
    if pages > 1:
        page = st.columns([1, 5])[0].number_input(
            f"Page (of {pages})", min_value=1, max_value=pages, value=1, step=1, key=f"harness_page|{crit}|{direction}"
        )
    res = _cache.analysis_call(
        analysis.flip_answers, run_a, run_b, crit, direction, sel, PAGE_SIZE, (page - 1) * PAGE_SIZE
    )
    if not res.answers:
        st.info("No answers here.")
    else:
        st.caption(
            f"{res.total} answers; {res.offset + 1} to {res.offset + len(res.answers)} shown. "
            "Reasons are the judges' own words. Select a row to read the answer."
        )
        listing = pd.DataFrame(
            [
                {
                    "item": x.item_id,
                    "round": x.gen_round,
                    "class": x.cls,
                    "A": _text.verdict_word(x.a["passed"]),
                    "A's reason": x.a["reason"],
                    "B": _text.verdict_word(x.b["passed"]),
                    "B's reason": x.b["reason"],
                }
                for x in res.answers
            ]
        )
        ev = st.dataframe(
            listing,
            key=f"harness_answers|{run_a}|{run_b}|{crit}|{direction}|{judge}|{gen_round}|{page}",
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            placeholder="-",
        )
        picked = list(ev.selection.rows) if ev is not None else []
        if picked:
            x = res.answers[picked[0]]
            st.caption(_text.md_escape(f"{x.item_id}, generation round {x.gen_round}, class {x.cls or '-'}"))
            i_col, o_col = st.columns(2)
            with i_col:
                _text.labelled_text("Input", x.input)
                _text.labelled_text("Output" + (" (the system abstained)" if x.abstained else ""), x.output)
            with o_col:
                for side, rid, s in (("a", run_a, x.a), ("b", run_b, x.b)):
                    _text.labelled_text(
                        _text.md_escape(
                            f"{side.upper()} ({rid}): {_text.verdict_word(s['passed'])}, judge round {s['judge_round']}"
                        ),
                        s["reason"],
                    )
            st.page_link(
                "pages/1_runs.py",
                label="Open this answer with every verdict of A in Runs",
                query_params={"run": run_a, "item": x.item_id, "round": str(x.gen_round)},
            )
