"""Criteria association: do two criteria fail together because the answers do, or because one call
returned both? The 2x2 of two criteria for one instrument with the rates conditioned on the row,
their ratio and phi; the phi matrix of every instrument (runs on one generation, and people)
side by side; every pair classed ``induced``, ``real`` or ``undetermined`` with its reason; the
position effect of single calls; and the answers in any cell of the 2x2 with each judge's reason.

Deep link: ``?runs=A,B,...&a=C1&b=C2[&human=1][&in=RUN|people][&cell=ff|fp|pf|pp][&judge=N|majority][&round=N]``.

Figures: evalcore.analysis.instruments (``evalcore association RUN... --human --json``; its matrices'
``rank`` holds the Kendall tau-b, Spearman and Pearson shown beside phi for numeric criteria), crosstab
(``evalcore crosstab RUN --a --b --json``; people: ``evalcore people-crosstab``), position_effect
(``evalcore position``), cell_answers (``evalcore cell``); which criteria deserve their own call:
evalcore.analysis.grouping (``evalcore grouping RUN --split RUN --json``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis, review, stats
from pages import _access, _cache, _select, _text, _ui

PAGE_SIZE = 25
FINDING_ANSWERS = 5  # answers quoted under the finding
PEOPLE = analysis.PEOPLE
DEFAULT_RUNS = ["support-single", "support-split"]
CELLS = {"ff": (True, True), "fp": (True, False), "pf": (False, True), "pp": (False, False)}


def _runs_to_qp() -> None:
    _ui.set_qp(runs=",".join(st.session_state.get("assoc_runs") or []) or None)


def _default_runs(runs: list[evalcore.RunSummary]) -> list[str]:
    ids = [r.run_id for r in runs]
    if all(r in ids for r in DEFAULT_RUNS):
        return list(DEFAULT_RUNS)
    complete = [r for r in runs if r.status == "complete"]
    for r in complete:  # a single-call run and a split run on one generation tell the story best
        split = next((s for s in complete if s.gen_id == r.gen_id and s.mode == "split"), None)
        if r.mode == "single" and split:
            return [r.run_id, split.run_id]
    return ids[:1]


def _send_to_review(gen_id: str, run_ids: list[str], sel: analysis.Selection, a: str, b: str) -> None:
    """Start a queue on the pair's two criteria and the items a judge fails on either that people
    have not labelled on both (review.items_to_label, found on the click: a page's render does not
    scan every pair), built in a process of its own (review.start_build); every case of them goes in
    (audit rate 1)."""
    key = f"assoc_job|{a}|{b}"
    st.session_state.pop(f"{key}|end", None)
    try:
        items = review.items_to_label(_ui.store(), run_ids, a, b, sel)
        if not items:
            st.session_state[f"{key}|end"] = {
                "state": "none",
                "error": f"every answer a judge here fails on {a} or {b} is labelled by people already",
            }
            return
        st.session_state[key] = review.start_build(
            _ui.store(),
            gen_id,
            criteria=[a, b],
            items=items,
            audit_rate=1.0,
            created_by=_access.current_name() or None,
            claims=_access.claims(),
        )
    except evalcore.EvalcoreError as err:
        st.session_state[f"{key}|end"] = {"state": "failed", "error": err.message}


@st.fragment(run_every=1.0)
def _pair_build(a: str, b: str) -> None:
    """The pair's queue build while it runs, once a second; at its end the page says where it went."""
    key = f"assoc_job|{a}|{b}"
    status = review.build_status(_ui.store(), st.session_state[key])
    if status["state"] == "running":
        st.progress(
            float(status.get("fraction") or 0.0), text=f"Building the queue: {status.get('stage', 'starting')}..."
        )
        return
    st.session_state[f"{key}|end"] = status
    del st.session_state[key]
    st.rerun()


def _pair_end(gen_id: str, a: str, b: str) -> None:
    """Where the pair's queue went (a link to it in Review), or why it was not built."""
    end = st.session_state.get(f"assoc_job|{a}|{b}|end")
    if end is None:
        return
    if end["state"] == "none":
        st.info(_text.md_escape(f"Nothing to send: {end['error']}."))
        return
    if end["state"] == "failed":
        st.error(_text.md_escape(f"The queue was not built: {end['error']}"))
        return
    q = review.get_queue(_ui.store(), end["queue_id"])
    st.success(
        _text.md_escape(
            f"Queue {q['queue_id']}: {q['population']} cases of {len(q['audit_design']['scope']['items'])} items on "
            f"{a} and {b} wait in Review for a decision."
        )
    )
    st.page_link("pages/5_review.py", label="Review them", query_params={"gen": gen_id, "queue": q["queue_id"]})


_ui.title("Criteria association")
store = _ui.store()
runs = _select.criteria_runs()
by_id = {r.run_id: r for r in runs}
run_ids = list(by_id)

# ---------------------------------------------------------------- instruments
asked = _ui.carried("runs")  # the link's runs, else the runs picked on another page
if asked is not None:
    wanted = [x for x in asked.split(",") if x]
    unknown = [x for x in wanted if x not in by_id]
    if unknown:
        with _text.boundary():
            store.run(unknown[0])  # a bad or unknown id is one st.error
            st.warning(_text.md_escape(f"Run {unknown[0]} has no criterion verdicts; left out."))
    known = [x for x in dict.fromkeys(wanted) if x in by_id]
    if st.session_state.get("assoc_runs") != known:
        st.session_state["assoc_runs"] = known
elif "assoc_runs" not in st.session_state:
    st.session_state["assoc_runs"] = _default_runs(runs)
c_runs, c_human = st.columns([3, 1])
chosen = c_runs.multiselect(
    "Runs (instruments on one generation)",
    run_ids,
    key="assoc_runs",
    on_change=_runs_to_qp,
    format_func=lambda r: f"{r} ({by_id[r].mode})" + _select.suite_suffix(by_id[r]),
)
hold = _select.holdout_toggle("association", [by_id[r].suite_id for r in chosen])
gen_ids = {by_id[r].gen_id for r in chosen}
labelled = {store.labelset(lid).manifest.gen_id for lid in store.ids("labelset")}
human_q = _ui.qp("human")
if human_q is not None:
    st.session_state["assoc_human"] = human_q == "1"
elif "assoc_human" not in st.session_state:
    st.session_state["assoc_human"] = len(gen_ids) == 1 and gen_ids <= labelled
human = c_human.checkbox(
    "Add people",
    key="assoc_human",
    on_change=lambda: _ui.set_qp(human="1" if st.session_state["assoc_human"] else "0"),
    help="Human labels of this generation: the label sets shipped with the data, overridden "
    "by labels decided in the label store.",
)
gens = {g.gen_id: g for g in _cache.summary(evalcore.generations_summary)}
c_judge, c_round, _ = st.columns([2, 2, 3])
judge, gen_round = _select.rounds(
    "assoc",
    min([max(1, by_id[r].judge_rounds or 1) for r in chosen] or [1]),
    max([gens[g].rounds or 1 for g in gen_ids] or [1]),
    (c_judge, c_round),
)
sel = analysis.parse_selection(
    judge,
    gen_round,
    include_holdout=hold,
    classes=_select.class_slice("association", [by_id[r].suite_id for r in chosen]),
)

if not chosen:
    st.info("Choose one or more runs on the same generation.")
    st.stop()

with _text.boundary():
    res = _cache.analysis_call(analysis.association, list(chosen), human=human, sel=sel)
    for w in res.warnings:
        st.warning(_text.md_escape(w))
    _select.curated_note([by_id[r].suite_id for r in chosen])
    for r in chosen:  # who made the verdicts and answers: SIMULATED, or the real model and its server
        st.caption(_text.md_escape(f"{r}: {_cache.analysis_call(analysis.run_provenance, r).label}"))
    criteria = res.criteria
    names = [i.name for i in res.instruments]
    pairs = res.pairs
    singles = [i.name for i in res.instruments if i.mode in ("single", "grouped")]

    # ------------------------------------------------------------ the finding, first
    f = res.finding
    if f is not None:
        box = {"induced": st.warning, "real": st.success}.get(f.cls, st.info)
        box(_text.md_escape(f.text), icon=":material/lightbulb:")
        st.caption(
            _text.md_escape(f"{f.cls.capitalize()}: {f.meaning}.")
            + (" " + _text.md_escape(res.reference_note) if res.reference_note else "")
        )
        if singles and f.cls != "real":
            with st.expander(f"What {singles[0]} wrote on answers failing both {f.a} and {f.b}"):
                # the first page of the cell the 2x2 below opens on (the same call, so one query for both:
                # the expander's body runs on every render, open or not), of which the first few
                said = _cache.analysis_call(
                    analysis.cell_answers,
                    list(chosen),
                    f.a,
                    f.b,
                    True,
                    True,
                    singles[0],
                    human,
                    sel,
                    PAGE_SIZE,
                    0,
                )
                first = said.answers[:FINDING_ANSWERS]
                st.caption(
                    _text.md_escape(
                        f"{said.total} answers fail both in {singles[0]}; the first {len(first)}, with the "
                        "judge's own reasons and what the other instruments said:"
                    )
                )
                for x in first:
                    own = x.verdicts[singles[0]]
                    others = "; ".join(
                        f"{who}: {f.a} {_text.verdict_word(v[f.a]['passed'])}, {f.b} {_text.verdict_word(v[f.b]['passed'])}"
                        for who, v in x.verdicts.items()
                        if who != singles[0] and not v[f.a]["missing"]
                    )
                    _text.labelled_text(
                        f"{x.item_id} (round {x.gen_round})" + (f" - {others}" if others else ""),
                        f"{f.a}: {own[f.a]['reason'] or '(no reason)'}\n{f.b}: {own[f.b]['reason'] or '(no reason)'}",
                    )
    st.caption(
        _text.md_escape(
            f"Generation {res.gen_id}: {res.shared_answers} answers judged by every run"
            + (f"; people labelled {res.people_answers} of them" if human else "")
            + ". Fail is coded 1: a positive phi means the two criteria fail together."
        )
    )
    for i in res.instruments:
        if isinstance(i.note, str):  # given for a run whose calls were not its recorded mode
            st.caption(_text.md_escape(f"{i.name}: {i.note}."))

    # ------------------------------------------------------------ phi matrices (click a cell)
    st.subheader("phi, instrument by instrument")
    matrices = {n: m.to_dict() for n, m in res.matrices.items()}  # the chart reads dicts
    heat = _cache.chart(
        st,
        _cache.chart_spec(analysis.phi_heatmaps, matrices, criteria, names, per_row=2, select="cell"),
        key=f"assoc_heat|{','.join(chosen)}|{int(human)}",
        on_select="rerun",
        selection_mode="cell",
        width=None,
    )
    clicked = _cache.chart_points(heat, "cell")
    picked_cell = (clicked[0].get("instrument"), clicked[0].get("a"), clicked[0].get("b")) if clicked else None
    if _select.new_pick("assoc_heat", picked_cell) and picked_cell and picked_cell[1] != picked_cell[2]:
        if picked_cell[0] in names:
            _ui.set_qp(**{"in": picked_cell[0], "a": picked_cell[1], "b": picked_cell[2], "cell": "ff"})
            for key in ("assoc_in", "assoc_a", "assoc_b", "assoc_cell"):
                st.session_state.pop(key, None)
    st.caption(
        "phi of the two fail columns over the answers every run judged (people: the answers they "
        "labelled). Click a cell to open its 2x2 and the answers failing both, below. Grey cells are undefined: "
        "a criterion that never fails, or fails on every answer, carries no information about failing together."
    )

    # ------------------------------------------------------------ the 2x2
    st.subheader("Two criteria")
    for key, param, options in (("assoc_in", "in", names), ("assoc_a", "a", criteria), ("assoc_b", "b", criteria)):
        _ui.keep(key, options)
        _ui.sync_widget(key, param, options)
    st.session_state.setdefault("assoc_in", singles[0] if f is not None and singles else names[0])
    first_a, first_b = (f.a, f.b) if f is not None else (criteria[0], criteria[1])
    st.session_state.setdefault("assoc_a", first_a)
    st.session_state.setdefault("assoc_b", first_b)
    c_in, c_a, c_b = st.columns(3)
    inst = c_in.selectbox("Instrument", names, key="assoc_in", on_change=_ui.widget_to_qp, args=("assoc_in", "in"))
    a = c_a.selectbox("A (rows)", criteria, key="assoc_a", on_change=_ui.widget_to_qp, args=("assoc_a", "a"))
    b = c_b.selectbox("B (columns)", criteria, key="assoc_b", on_change=_ui.widget_to_qp, args=("assoc_b", "b"))
    if a == b:
        st.warning("Choose two different criteria for A and B.")
        ct: analysis.TwoByTwoReport | None = None
    elif inst == PEOPLE:
        ct = _cache.analysis_call(analysis.people_crosstab, res.gen_id, a, b, sel)
    else:
        ct = _cache.analysis_call(analysis.crosstab, inst, a, b, sel)
    if ct is not None:
        t = ct.table
        g_col = m_col = st.container()
        with g_col:
            _text.plain_table(
                [
                    {
                        "": name,
                        f"{b} passes": row.b_pass,
                        f"{b} fails": row.b_fail,
                        "total": row.total,
                        f"{b} fail rate": rate,
                    }
                    for name, row, rate in (
                        (f"{a} passes", t.a_pass, _text.pct(ct.b_fail_rate_given_a_pass)),
                        (f"{a} fails", t.a_fail, _text.pct(ct.b_fail_rate_given_a_fail)),
                        ("total", t.total, ""),
                    )
                ]
            )
        g_col.caption(
            "The fail rate divides a cell by its own row total, so rows holding different numbers of answers "
            "compare. "
            + (f"{ct.excluded_answers} answers without a verdict on both are left out." if ct.excluded_answers else "")
        )
        r1, r2, r3, r4 = m_col.columns(4)
        r1.metric("B fails if A passes", _text.pct(ct.b_fail_rate_given_a_pass))
        r2.metric("B fails if A fails", _text.pct(ct.b_fail_rate_given_a_fail))
        r3.metric("Ratio", "undefined" if ct.ratio is None else f"x{ct.ratio:.1f}")
        r4.metric("phi", "undefined" if ct.phi is None else f"{ct.phi:.2f}")
        for why in (ct.phi_reason, ct.ratio_reason):
            if why:
                m_col.caption(_text.md_escape(why))
        here = next((p for p in pairs if {p.a, p.b} == {a, b}), None)
        if here is not None:
            m_col.caption(_text.md_escape(f"Class: {here.cls}. {here.reason}"))

        # -------------------------------------------------------- answers in one cell
        _ui.sync_widget("assoc_cell", "cell", list(CELLS))
        st.session_state.setdefault("assoc_cell", "ff")
        cells = {"ff": t.a_fail.b_fail, "fp": t.a_fail.b_pass, "pf": t.a_pass.b_fail, "pp": t.a_pass.b_pass}
        cell = st.radio(
            "Answers in the cell",
            list(CELLS),
            key="assoc_cell",
            horizontal=True,
            on_change=_ui.widget_to_qp,
            args=("assoc_cell", "cell"),
            format_func=lambda c: (
                f"{a} {'fails' if CELLS[c][0] else 'passes'}, {b} {'fails' if CELLS[c][1] else 'passes'} ({cells[c]})"
            ),
        )
        pages = max(1, -(-cells[cell] // PAGE_SIZE))
        page = 1
        if pages > 1:
            page = st.columns([1, 5])[0].number_input(
                f"Page (of {pages})",
                min_value=1,
                max_value=pages,
                value=1,
                step=1,
                key=f"assoc_page|{inst}|{a}|{b}|{cell}",
            )
        ca = _cache.analysis_call(
            analysis.cell_answers, list(chosen), a, b, *CELLS[cell], inst, human, sel, PAGE_SIZE, (page - 1) * PAGE_SIZE
        )
        if not ca.answers:
            st.info("No answers in this cell.")
        else:
            st.caption(
                _text.md_escape(
                    f"{ca.total} answers in this cell for {inst}; {ca.offset + 1} to "
                    f"{ca.offset + len(ca.answers)} shown, with every instrument's verdict. Select a row to read "
                    "the answer and each judge's reason."
                )
            )
            listing = pd.DataFrame(
                [
                    {
                        "item": x.item_id,
                        "round": x.gen_round,
                        "class": x.cls,
                        **{
                            f"{who}: {c}": _text.verdict_word(v[c]["passed"]) if not v[c]["missing"] else "-"
                            for who, v in x.verdicts.items()
                            for c in (a, b)
                        },
                    }
                    for x in ca.answers
                ]
            )
            ev = _text.wide_table(
                listing,
                pin="item",
                key=f"assoc_answers|{','.join(chosen)}|{int(human)}|{inst}|{a}|{b}|{cell}|{judge}|{gen_round}|{page}",
                on_select="rerun",
                selection_mode="single-row",
            )
            picked = list(ev.selection.rows) if ev is not None else []
            if picked:
                x = ca.answers[picked[0]]
                st.caption(_text.md_escape(f"{x.item_id}, generation round {x.gen_round}, class {x.cls or '-'}"))
                i_col, o_col = st.columns(2)
                with i_col:
                    _text.labelled_text("Input", x.input)
                    _text.labelled_text("Output" + (" (the system abstained)" if x.abstained else ""), x.output)
                with o_col:
                    for who, v in x.verdicts.items():
                        lines = []
                        for c in (a, b):
                            s = v[c]
                            if s["missing"]:
                                lines.append(f"{c}: no verdict")
                                continue
                            lines.append(f"{c}: {_text.verdict_word(s['passed'])}")
                            if who != PEOPLE:
                                lines.append(f"  reason: {s['reason'] if s['reason'] is not None else '(none)'}")
                        _text.labelled_text(who, "\n".join(lines))
                if inst != PEOPLE:
                    st.page_link(
                        "pages/1_runs.py",
                        label="Open this answer with every verdict in Runs",
                        query_params={"run": inst, "item": x.item_id, "round": str(x.gen_round)},
                    )

    # ------------------------------------------------------------ pairs side by side
    st.subheader("Pairs: induced, real or undetermined")

    def _rank(n: str, p: analysis.Pair, key: str) -> str:
        cell = res.matrices[n].rank[p.a].get(p.b)
        if cell is None:
            return "-"
        v = {"kendall_tau_b": cell.kendall_tau_b, "spearman": cell.spearman, "pearson": cell.pearson}[key]
        return "undefined" if v is None else f"{v:.2f}"

    # the rank correlations of the scores beside phi, for pairs of ordinal / continuous criteria
    ranked = [n for n in names if any(p.b in res.matrices[n].rank[p.a] for p in pairs)]
    order = {"induced": 0, "real": 1, "undetermined": 2}
    shown = sorted(pairs, key=lambda p: order[p.cls])
    _text.plain_table(
        [
            {
                "pair": f"{p.a} x {p.b}",
                "class": p.cls,
                **{f"phi {n}": analysis.iv_text(p.instruments[n]) for n in names},
                **{f"Kendall tau-b {n}": _rank(n, p, "kendall_tau_b") for n in ranked},
                **{f"Spearman {n}": _rank(n, p, "spearman") for n in ranked},
                **{f"Pearson {n}": _rank(n, p, "pearson") for n in ranked},
            }
            for p in shown
        ]
    )
    with st.expander("Why each pair is classed as it is"):
        st.markdown(
            "\n".join(
                f"- **{_text.md_escape(p.a)} x {_text.md_escape(p.b)}** ({p.cls}): {_text.md_escape(p.reason)}"
                for p in shown
            )
        )
    labels = {f"{p.a} x {p.b} ({p.cls})": p for p in shown}

    def _open_pair() -> None:
        p = labels.get(st.session_state.get("assoc_pair_pick") or "")
        st.session_state["assoc_pair_pick"] = ""  # the picker starts blank again: a pick is a jump, not a state
        if p is not None:
            _ui.set_qp(a=p.a, b=p.b, cell="ff")
            for key in ("assoc_a", "assoc_b", "assoc_cell"):
                st.session_state.pop(key, None)

    st.selectbox("Open a pair's 2x2 above", ["", *labels], key="assoc_pair_pick", on_change=_open_pair)
    by_class = {c: [f"{p.a} x {p.b}" for p in pairs if p.cls == c] for c in ("induced", "real")}
    st.caption(
        _text.md_escape(
            "; ".join(f"{c} ({len(v)}): {', '.join(v) if v else 'none'}" for c, v in by_class.items())
            + f"; undetermined: {sum(p.cls == 'undetermined' for p in pairs)}"
        )
    )
    undetermined = [p for p in shown if p.cls == "undetermined"]
    if undetermined:
        st.markdown("**Labels that would settle the undetermined pairs**")
        st.caption(
            "For each undetermined pair: the items whose answers a judge here fails on either criterion and people "
            "have not labelled on both. Sending them to review builds a queue of their cases on the two criteria; "
            "each decision settled there becomes a person's label, which this page counts."
        )
        for p in undetermined:
            c_pair, c_send = st.columns([3, 2])
            c_pair.markdown(_text.md_escape(f"{p.a} x {p.b}: {p.reason}"))
            if f"assoc_job|{p.a}|{p.b}" not in st.session_state:
                c_send.button(
                    "Send these items to review",
                    key=f"assoc_send|{p.a}|{p.b}",
                    on_click=_send_to_review,
                    args=(res.gen_id, list(chosen), sel, p.a, p.b),
                )
            with c_send:
                if f"assoc_job|{p.a}|{p.b}" in st.session_state:
                    _pair_build(p.a, p.b)
                _pair_end(res.gen_id, p.a, p.b)
    pct = int(round(100 * res.level))
    st.caption(
        f"phi with its {pct}% paired bootstrap interval (seed {res.seed}, {res.n_boot} resamples); on a sparse 2x2 "
        "(a cell, observed or expected, below 5 answers) the posterior interval, which holds its coverage there. "
        + "; ".join(f"**{c}**: {_text.md_escape(w)}" for c, w in analysis.CLASS_WORDS.items())
        + f". The rule, with threshold T = {res.threshold}: **real** when people's interval lies beyond +/-T; "
        "**induced** when a single-call run's interval lies beyond +/-T while every one-criterion run's and "
        "people's lie inside (-T, T) on a table with enough failures; otherwise **undetermined**, with the first "
        f"missing piece as the reason. People count from {stats.MIN_PEOPLE} labelled answers."
    )
    if ranked:
        st.caption(
            "Kendall tau-b and Spearman: the rank correlation of the two criteria's scores (not their fail flags) "
            "on the same answers; Pearson: their linear correlation, for ordinal and continuous criteria (`evalcore association --json`, under "
            "matrices -> rank). The full matrix over every answer of a run, or of people pooled over "
            "generations: `evalcore correlate --matrix --run RUN` / `--people`."
        )

    # ------------------------------------------------------------ which criteria deserve their own call
    st.subheader("Which criteria deserve their own call")
    one_call = [i.name for i in res.instruments if i.mode in ("single", "grouped")]
    split = next((i.name for i in res.instruments if i.mode == "split"), None)
    if not one_call or split is None:
        st.caption("Add a single-call run and a split run on this generation to price splitting the induced pairs.")
    else:
        grp = _cache.analysis_call(analysis.grouping, one_call[0], split, sel=sel)
        (st.warning if grp.recommended_calls else st.info)(_text.md_escape(grp.text))
        _text.plain_table(
            [
                {
                    "calls per answer": g.calls_per_answer,
                    "phi removed": f"{g.phi_removed:.2f}",
                    f"cost per {grp.answers:,} answers": "-" if g.cost_usd is None else f"${g.cost_usd:.2f}",
                    "over one call": "-" if g.extra_cost_usd is None else f"+${g.extra_cost_usd:.2f}",
                    "grouping": g.text,
                }
                for g in grp.rows
            ]
        )
        st.caption(
            _text.md_escape(
                f"phi removed: each induced pair's phi in {grp.run_id} (one call) minus its phi in {grp.split_run} "
                f"(split), summed over the induced pairs the grouping asks in different calls"
                + (f"; people on {grp.people_answers} answers settle which pairs are induced" if grp.people else "")
                + f". Cost: {grp.cost_source}. `evalcore grouping {grp.run_id} --split {grp.split_run} --json`."
            )
        )

    # ------------------------------------------------------------ position effects
    st.subheader("Position effect in single calls")
    singles = [i.name for i in res.instruments if i.mode in ("single", "grouped")]
    reference = next((i.name for i in res.instruments if i.mode == "split"), None)
    if not singles:
        st.caption(
            "No single-call run among the instruments: add one to see how verdicts depend on the position "
            "a field is emitted at."
        )
    else:
        effects = [_cache.analysis_call(analysis.position_effect, rid, reference, sel) for rid in singles]
        _cache.chart(st, _cache.chart_spec(analysis.position_lines, [e.to_dict() for e in effects]), width=None)
        st.caption(
            _text.md_escape(
                "By the position a verdict was emitted at in its call: the fail rate, the fail rate when the field "
                "before it failed"
                + (
                    f", and the agreement with the one-criterion run {reference} on the same answer and criterion"
                    if reference
                    else " (add a split run to see the agreement with one call per criterion)"
                )
                + "."
            )
        )
