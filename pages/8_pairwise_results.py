"""Pairwise results: a closed, unblinded session's figures.

Nothing is shown for an open session, nor for one closed in the data but not unblinded in this
state directory: unblinding is the command-line step `evalcore pairs close --keys DIR`, and the
app is never given a keys directory. Every figure comes from evalcore.pairwise.report, the function
behind `evalcore pairs report --json` (downloadable here as JSON). Deep link: ?session=ID.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from evalcore import pairwise
from pages import _text, _ui


@st.cache_data(show_spinner=False, max_entries=16)
def _report(data: str, state: str, session_id: str, stamp: tuple) -> pairwise.Report | pairwise.RankingReport:
    return pairwise.report(_ui.open_store(data, state), session_id)


def _stamp(store, session_id: str) -> tuple:
    """Changes when the session, its unblinded record or the judgments change."""
    out: list[object] = [_ui.fingerprint(store)]
    for p in (
        store.state / "sessions" / session_id / pairwise.UNBLINDED_FILE,
        store.state / pairwise.DB_NAME,
        store.state / f"{pairwise.DB_NAME}-wal",
    ):
        try:
            out.append(p.stat().st_mtime_ns)
        except (FileNotFoundError, OSError):
            out.append(None)
    return tuple(out)


pct = _text.pct


def iv(x) -> str:
    return "-" if not x else f"{100 * x[0]:.1f}-{100 * x[1]:.1f}%"


def p3(x) -> str:
    return "-" if x is None else f"{x:.3g}"


def people(n: int) -> str:
    return f"{n} person" if n == 1 else f"{n} people"


def counts_table(res: pairwise.ArmResult, arms: list[str]) -> pd.DataFrame:
    return pd.DataFrame([{"arm": a, **res.counts[a].to_dict()} for a in arms])


def result_row(name: str, res: pairwise.ArmResult) -> dict:
    st_ = res.sign_test
    return {
        "pairs": name,
        "pairs graded": res.pairs,
        "judgments": res.judgments,
        f"{res.arm} win rate": pct(res.win_rate),
        "95% interval": iv(res.interval),
        f"pairs {res.arm} won / lost / tied": f"{st_.a_pairs} / {st_.b_pairs} / {st_.tied_pairs}" if st_ else "-",
        "sign test p-value": p3(st_ and st_.p_value),
    }


def prop_row(name: str, x: pairwise.Proportion) -> dict:
    return {
        "who": name,
        "decided judgments": x.n,
        "chose the left answer": pct(x.share),
        "95% interval": iv(x.interval),
        "p-value against 50%": p3(x.p_value),
    }


def mirror_row(name: str, x: pairwise.Consistency) -> dict:
    return {
        "who": name,
        "mirrored pairs graded both times": x.n,
        "same answer both times": x.consistent,
        "share consistent": pct(x.share),
    }


def drift_view(d: pairwise.Drift) -> None:
    """Each grader's first third against their last third (`evalcore pairs drift --session S`)."""
    st.markdown("**Drift across the sitting**")
    for c in d.caveats:
        st.warning(_text.md_escape(c))
    if d.graders:
        st.dataframe(
            pd.DataFrame(
                [
                    {"reviewer": g.reviewer, "judgments": g.judgments}
                    | {f"left share, {k} third": pct(t.left.share) for k, t in (("first", g.first), ("last", g.last))}
                    | {
                        f"with the others, {k} third": pct(t.with_majority.share)
                        for k, t in (("first", g.first), ("last", g.last))
                    }
                    | {"p (left)": p3(g.left_p), "p (with the others)": p3(g.agreement_p)}
                    for g in d.graders
                ]
            ),
            hide_index=True,
        )
    st.caption(
        f"Each grader's first third of their judgments against their last third, in the order recorded: the share "
        "choosing the left answer and the share agreeing with the majority of the other people (Fisher's exact "
        f"test). {d.unordered} judgments shipped with the data carry no order and are read only as the others'."
    )


def presentation_view(p: pairwise.Presentation) -> None:
    """What normalisation removed and the structure check per arm (`evalcore pairs presentation --session S`)."""
    if p.sentence is None:
        return
    st.subheader("Presentation: measured apart")
    st.info(_text.md_escape(p.sentence))
    if p.arms:
        st.dataframe(
            pd.DataFrame(
                [
                    {"arm": arm, "raw answers": x.answers}
                    | {
                        f"with {k}": pct(y.share)
                        for k, y in (("lists", x.lists), ("headings", x.headings), ("bold", x.bold), ("code", x.code))
                    }
                    for arm, x in p.arms.items()
                ]
            ),
            hide_index=True,
        )
    st.caption(_text.md_escape(f"The structure check: {p.check}, on the raw answers before normalisation."))


def caveat_rows(r: pairwise.Report) -> list[dict]:
    """The figures read beside the headline: identifiability as shown, people's left share, and
    each model grader's first-position share, as `pairs report` prints them after the result."""
    idf, lp = r.caveats.identifiability, r.caveats.people_left_share
    rows = [
        ("the arms could be told apart (identifiability of the answers as shown)", idf.accuracy, idf.interval),
        ("people chose the left answer (position preference)", lp.share, lp.interval),
        *(
            (f"model grader {g.run_id} chose the answer shown first", g.first_position_share, g.interval)
            for g in r.caveats.graders
        ),
    ]
    return [{"caveat": c, "figure": pct(x), "95% interval": iv(ci), "no effect at": "50%"} for c, x, ci in rows]


def ranking_rows(ranking) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "arm": a.arm,
                "strength": round(a.strength, 3),
                f"{ranking.level:.0%} interval": f"{a.interval[0]:.2f} to {a.interval[1]:.2f}",
                "P(best)": pct(a.p_best),
                "Elo (scale only)": round(a.elo),
                "judgments": a.judgments,
            }
            for a in ranking.arms
        ]
    )


#: the heatmap's point selection: a click on a cell selects its row arm and column arm
CELL_PARAM = "cell"
NO_CELL = "(none)"


def cell_value(a: str, b: str) -> str:
    """A cell as the ``?cell=`` query parameter and the selectbox's option: ``row arm,column arm``."""
    return f"{a},{b}"


def _cell_clicked() -> None:
    """on_select of the heatmap (runs before the rerun): the clicked cell becomes the selectbox's
    choice and the link's ``cell``; a click that clears the selection leaves the open cell as it is."""
    event = st.session_state.get("pr_matrix") or {}
    points = (event.get("selection") or {}).get(CELL_PARAM) or []
    if points and {"arm", "against"} <= set(points[0]):
        value = cell_value(points[0]["arm"], points[0]["against"])
        st.session_state["pr_cell"] = value
        _ui.set_qp(cell=value)


def _cell_to_qp() -> None:
    """on_change of the selectbox: the cell into the link (none: ``cell`` removed)."""
    value = st.session_state.get("pr_cell")
    _ui.set_qp(cell=None if value == NO_CELL else value)


@st.cache_data(show_spinner=False, max_entries=64)
def _cell(data: str, state: str, session_id: str, a: str, b: str, stamp: tuple) -> pairwise.CellPairs:
    return pairwise.cell_pairs(_ui.open_store(data, state), session_id, a, b)


def cell_rows(c: pairwise.CellPairs) -> pd.DataFrame:
    """One row per pair of the cell: the item, the sides, the flags, the word counts, each person's
    choice as shown and the arm it names, people's majority and each model grader's choice."""
    return pd.DataFrame(
        [
            {
                "pair": p.pair_id,
                "item": p.item_id,
                "left": p.left_arm,
                "right": p.right_arm,
                "holdout": "yes" if p.holdout else "",
                "mirrored": "yes" if p.mirrored else "",
                f"words {c.arm_a}": p.words_a,
                f"words {c.arm_b}": p.words_b,
                "people (as shown: arm)": "; ".join(f"{x.who} {x.choice}: {x.arm}" for x in p.people) or "-",
                "people's majority": p.majority_arm or "-",
                "model graders (order: arm)": "; ".join(f"{x.who} {x.order}: {x.arm or '-'}" for x in p.graders) or "-",
            }
            for p in c.pairs
        ]
    )


def cell_view(store, r: pairwise.RankingReport) -> None:
    """The pairs of the cell picked by a click on the heatmap, the selectbox or ``?cell=A,B``
    (`evalcore pairs cell --session NAME --a A --b B --json`)."""
    options = [NO_CELL, *(cell_value(a, b) for a in r.arms for b in r.arms if a != b)]
    _ui.sync_widget("pr_cell", "cell", options)
    _ui.keep("pr_cell", options)
    st.selectbox(
        "Open the pairs of",
        options,
        key="pr_cell",
        on_change=_cell_to_qp,
        format_func=lambda v: v if v == NO_CELL else " against ".join(v.split(",", 1)),
        help="The row arm against the column arm: the same as a click on that cell of the win matrix.",
    )
    picked = st.session_state.get("pr_cell")
    if not picked or picked == NO_CELL:
        return
    a, b = picked.split(",", 1)
    c = _cell(str(store.data), str(store.state), r.session_id, a, b, _stamp(store, r.session_id))
    n = c.counts
    st.markdown(_text.md_escape(f"Pairs of {a} against {b}"))
    st.caption(
        _text.md_escape(
            f"{'SIMULATED session. ' if c.simulated else ''}{len(c.pairs)} original pairs of {a} and {b}. "
            f"Source {c.source_is}: {a} won {n.wins}, lost {n.losses}, tied {n.ties} of {n.judgments} judgments "
            f"({c.counted}), the cell's wins / losses / ties."
        )
    )
    if c.pairs:
        _text.wide_table(cell_rows(c), pin="pair", key="pr_cell_table")


def win_heatmap(ranking, arms: list[str]) -> dict:
    """The win matrix as a Vega-Lite heatmap: per row arm and column arm, the share of their
    decided judgments the row arm won (ties apart), labelled wins / losses / ties."""
    rows = [
        {
            "arm": c.arm,
            "against": c.against,
            "won": c.wins / (c.wins + c.losses) if c.wins + c.losses else None,
            "label": f"{c.wins}/{c.losses}/{c.ties}",
        }
        for c in ranking.win_matrix
    ]
    enc = {
        "x": {"field": "against", "type": "nominal", "sort": arms},
        "y": {"field": "arm", "type": "nominal", "sort": arms},
    }
    return {
        "data": {"values": rows},
        "encoding": enc,
        "layer": [
            {
                "mark": {"type": "rect", "cursor": "pointer"},
                "params": [{"name": CELL_PARAM, "select": {"type": "point", "fields": ["arm", "against"]}}],
                "encoding": {
                    "color": {
                        "field": "won",
                        "type": "quantitative",
                        "scale": {"domain": [0, 1], "scheme": "blueorange"},
                        "title": "row arm won",
                    },
                    "tooltip": [
                        {"field": "arm"},
                        {"field": "against"},
                        {"field": "label", "title": "wins/losses/ties"},
                    ],
                },
            },
            {"mark": {"type": "text", "fontSize": 11}, "encoding": {"text": {"field": "label"}}},
        ],
    }


def ranking_view(store, r: pairwise.RankingReport) -> None:
    """A session of more than two arms: each source's ranking and people's majority's win matrix."""
    st.caption(
        _text.md_escape(
            f"{len(r.arms)} arms ({', '.join(r.arms)}); closed {r.closed_at}; {r.judgments} judgments by "
            f"{people(len(r.reviewers))}; {r.pairs.headline} headline pairs, {r.pairs.with_majority} with a strict "
            "majority of people."
        )
    )
    sources = [("people's majority", r.people), *((f"reviewer {k}", v) for k, v in r.by_reviewer.items())]
    sources += [(f"model grader {g.run_id}", g.ranking) for g in r.graders]
    for c in r.caveats:
        st.warning(_text.md_escape(c))
    for name, x in sources:
        st.subheader(_text.md_escape(f"Ranking: {name}"))
        if x.reason:
            st.info(_text.md_escape(f"No ranking: {x.reason}"))
            continue
        st.dataframe(ranking_rows(x), hide_index=True)
        lp = x.position
        st.caption(
            _text.md_escape(
                f"{x.model}, from {x.judgments} judgments on {x.items} items. Intervals: {x.intervals}. "
                f"Chose {x.position_is}: {pct(lp.share)} ({iv(lp.interval)}) of {lp.n} decided judgments. "
                + (
                    ""
                    if x.length is None
                    else f"Length explains {pct(x.length.length_share)} of the spread between arms."
                )
            )
        )
    st.subheader("Win matrix (people's majority)")
    st.vega_lite_chart(
        win_heatmap(r.people, r.arms),
        width="stretch",
        on_select=_cell_clicked,
        selection_mode=CELL_PARAM,
        key="pr_matrix",
    )
    st.caption(
        "Each cell: the row arm's wins / losses / ties against the column arm; the colour is its share of the "
        "decided judgments. Click a cell (or choose it below) to open its pairs."
    )
    cell_view(store, r)
    st.download_button(
        "Download the report (JSON)",
        json.dumps(r.to_dict(), indent=1, default=str),
        file_name=f"{r.session_id}-report.json",
        mime="application/json",
        key="pr_download",
    )


_ui.title("Pairwise results")
store = _ui.store()

with _text.boundary():
    sessions = pairwise.sessions_overview(store)
    if not sessions:
        st.info("No pairwise sessions in this data directory.")
        st.stop()
    ids = [s.session_id for s in sessions]
    status = {s.session_id: s for s in sessions}
    _ui.sync_widget("pr_session", "session", ids)
    if st.session_state.get("pr_session") not in ids:
        st.session_state["pr_session"] = next((s.session_id for s in sessions if s.unblinded), ids[0])
    st.selectbox(
        "Session",
        ids,
        key="pr_session",
        on_change=_ui.widget_to_qp,
        args=("pr_session", "session"),
        format_func=lambda s: f"{s} ({'unblinded' if status[s].unblinded else status[s].status})",
    )
    session_id = st.session_state["pr_session"]
    s = status[session_id]
    if s.status == "open":
        st.info(
            _text.md_escape(
                f"Session {session_id} is open: no result is shown until it is closed. Closing is a "
                f"command-line step, given the keys directory (which this app never reads): "
                f"evalcore pairs close --session {session_id} --keys DIR"
            )
        )
        st.stop()
    if not s.unblinded:
        st.info(
            _text.md_escape(
                f"Session {session_id} is closed but has not been unblinded into this state "
                f"directory. Unblind it from the command line (the app never reads keys): "
                f"evalcore pairs close --session {session_id} --keys DIR"
            )
        )
        st.stop()

    r = _report(str(store.data), str(store.state), session_id, _stamp(store, session_id))
    if isinstance(r, pairwise.RankingReport):
        ranking_view(store, r)
        st.stop()
    arms = r.arms
    a, b = arms
    sources = r.sources or {}
    st.caption(
        _text.md_escape(
            f"{a} ({sources.get(a)}) against {b} ({sources.get(b)}); closed "
            f"{r.closed_at}; {r.judgments} judgments by {people(len(r.reviewers))}."
        )
    )
    if r.simulated:
        st.badge("SIMULATED session", color="orange")

    # ------------------------------------------------------------ the result
    st.subheader("Result")
    res = r.result
    c1, c2, c3 = st.columns(3)
    c1.metric(_text.md_escape(f"{a} win rate"), pct(res.win_rate))
    c2.metric("95% bootstrap interval", iv(res.interval))
    c3.metric("sign test p-value", p3(res.sign_test and res.sign_test.p_value))
    verdict = r.verdict
    if verdict.caveats or verdict.code in ("too_few_pairs", "no_result"):
        shout = st.warning
    else:
        shout = st.success if verdict.code in ("a_preferred", "b_preferred") else st.info
    shout(_text.md_escape(f"Verdict: {verdict.text}"))
    st.dataframe(pd.DataFrame(caveat_rows(r)), hide_index=True)
    st.caption(
        "Read the result with these beside it. An identifiability interval above 50% means the answers' "
        "surface told the arms apart, so people may have recognised the system rather than judged the "
        "answer; a left share away from 50% is a position preference (the balanced sides keep it out of "
        "the win rate, but it is noise in each judgment)."
    )
    st.dataframe(counts_table(res, arms), hide_index=True)
    st.caption(
        "Win rate: per pair, 1 if the arm won, 0 if it lost, 0.5 for same (averaged over the people who "
        "graded the pair), then the mean over the headline pairs (holdout and mirrored pairs apart). The "
        "interval resamples pairs (seeded); the sign test counts pairs won against pairs lost."
    )
    rows = [result_row("headline", res), result_row("holdout", r.holdout)]
    rows += [result_row(f"class {c}", x) for c, x in r.by_class.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True)

    # ------------------------------------------------------------ position and consistency
    st.subheader("Position and consistency")
    lp = r.left_preference
    st.dataframe(
        pd.DataFrame([prop_row("everyone", lp.all)] + [prop_row(k, v) for k, v in lp.by_reviewer.items()]),
        hide_index=True,
    )
    st.caption(
        "Share of decided judgments (same left out) that chose the left answer; 50% is no position "
        "preference. Sides were drawn at random, so an arm preference does not move it."
    )
    mc = r.mirror_consistency
    st.dataframe(
        pd.DataFrame([mirror_row("everyone", mc.all)] + [mirror_row(k, v) for k, v in mc.by_reviewer.items()]),
        hide_index=True,
    )
    st.caption(
        f"Consistency on the {mc.mirrored_pairs} mirrored pairs (a pair shown again with the sides "
        "swapped): the same answer chosen both times, or same both times."
    )
    drift_view(pairwise.drift(store, session_id))

    # ------------------------------------------------------------ people
    st.subheader("Agreement between people")
    al = r.agreement.krippendorff_alpha
    st.text(
        f"Krippendorff's alpha (nominal): {p3(al.alpha)} over {al.units} pairs graded by two or more people"
        + (f" ({al.reason})" if al.reason else "")
    )
    if r.agreement.pairwise:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "reviewer": x.a,
                        "other reviewer": x.b,
                        "pairs both graded": x.n,
                        "agreement": pct(x.agreement),
                        "Cohen's kappa": p3(x.kappa),
                    }
                    for x in r.agreement.pairwise
                ]
            ),
            hide_index=True,
        )
    st.dataframe(
        pd.DataFrame(
            [
                {"reviewer": k, "judgments": v.judgments, "median seconds per judgment": v.median_seconds}
                for k, v in r.timing.items()
            ]
        ),
        hide_index=True,
    )

    # ------------------------------------------------------------ identifiability
    st.subheader("Could the arms be told apart?")
    ident = r.identifiability or {}
    rows = []
    for when, label in (("before", "before normalisation"), ("after", "as shown")):
        c = ident.get(when) or {}
        rows.append(
            {
                "texts": label,
                "pairs": c.get("n_pairs"),
                "sides guessed right": pct(c.get("accuracy")),
                "95% interval": iv(c.get("interval")),
                "permutation p-value": p3(c.get("p_value")),
                "leaking feature": pairwise.leaking_words(c) or ("-" if c.get("accuracy") is None else "none"),
                **{
                    f"guessed right from {f.replace('_', ' ')} alone": pct(
                        ((c.get("features") or {}).get(f) or {}).get("accuracy")
                    )
                    for f in pairwise.FEATURES
                },
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        "A cross-validated predictor of which side the first arm is on, from the surface features of a "
        "pair (length, headings, bullets, blank lines, and a marker: a word or opening found in one answer "
        "of most pairs). 50% is chance; an interval above 50% means a grader could tell the arms apart "
        "from these features alone."
    )
    means = []
    for when in ("before", "after"):
        for arm, m in ((ident.get(when) or {}).get("feature_means") or {}).items():
            means.append(
                {
                    "texts": "before normalisation" if when == "before" else "as shown",
                    "arm": arm,
                    **{f"mean {f.replace('_', ' ')}": (None if v is None else round(v, 2)) for f, v in m.items()},
                }
            )
    if means:
        st.dataframe(pd.DataFrame(means), hide_index=True)
    if r.probe:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "reviewer": k,
                        "pairs answered": v.answered,
                        "unsure": v.unsure,
                        f"side called X was {a}": pct(v.first_arm_share),
                        "consistency": pct(v.consistency),
                        "p-value against 50%": p3(v.p_value),
                    }
                    for k, v in r.probe.items()
                ]
            ),
            hide_index=True,
        )
        st.caption(
            "The probe: a reviewer who can tell the arms apart calls the same arm X every time, so the share "
            "is far from 50% (in either direction)."
        )
    presentation_view(pairwise.presentation(store, session_id))

    # ------------------------------------------------------------ model graders
    for g in r.graders:
        st.subheader(_text.md_escape(f"Model grader {g.run_id}"))
        f, fp = g.flips, g.first_position
        c1, c2, c3 = st.columns(3)
        c1.metric(
            "order flips",
            f"{f.flips} of {f.compared}",
            help="pairs whose verdict changed when the "
            "order was swapped (reversals: left in one order, right in the other)",
        )
        c2.metric("first-position preference", pct(fp.share), help=f"95% interval {iv(fp.interval)}")
        c3.metric("cost", "-" if g.cost.cost_usd is None else f"${g.cost.cost_usd:.4f}")
        st.dataframe(
            pd.DataFrame(
                [
                    result_row("averaged over both orders", g.averaged_over_orders),
                    result_row("as shown only", g.as_shown_only),
                ]
            ),
            hide_index=True,
        )
        pv = g.pair_verdicts
        cnt = pv.counts
        st.markdown("**Its verdict per pair** (the choice it made in both orders)")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "left in both orders": cnt["left"],
                        "right in both orders": cnt["right"],
                        "same in both orders": cnt["same"],
                        "inconsistent (the orders disagree)": cnt["inconsistent"],
                        "one order only": cnt["one_order"],
                        "queued for people first": pv.queued_for_people,
                    }
                ]
            ),
            hide_index=True,
        )
        st.dataframe(
            pd.DataFrame([result_row("judged the same in both orders", pv.consistent_result)]), hide_index=True
        )
        st.caption(
            _text.md_escape(
                "Inconsistent pairs have no verdict: the grader's choice depended on the order. While a session "
                "is open they can be given to people first: evalcore pairs label --session "
                f"{session_id} --queue-inconsistent {g.run_id}"
            )
        )
        po = g.position
        st.markdown("**Position bias**")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "order": order.replace("_", " "),
                        "accuracy vs people's majority": pct(o.vs_people.share),
                        "pairs with a majority": o.vs_people.n,
                        "ties": o.ties,
                        "verdicts": o.verdicts,
                    }
                    for order, o in po.orders.items()
                ]
            ),
            hide_index=True,
        )
        pf = po.flips
        st.caption(
            f"Accuracy averaged over both orders: {pct(po.mean_accuracy_over_orders)}; the two orders agree on "
            f"{pct(po.agreement_between_orders.share)} of {pf.compared} pairs. Flips towards the answer shown "
            f"first: {pf.towards_first_shown}; towards the one shown second: {pf.towards_second_shown}; to or "
            f"from a tie: {pf.to_or_from_a_tie}."
        )
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "against": k,
                        "pairs graded by both": v.n,
                        "agreement": pct(v.agreement),
                        "Cohen's kappa": p3(v.kappa),
                    }
                    for k, v in [("people's majority", g.kappa_vs_majority), *g.kappa_vs_people.items()]
                ]
            ),
            hide_index=True,
        )
        st.caption(
            _text.md_escape(
                f"{g.judge_model}: {g.verdicts} verdicts ({g.errored_verdicts} errored), reversals "
                f"{f.reversals}, first position {iv(fp.interval)}; {g.cost.calls} calls, "
                f"{g.cost.unpriced_calls} unpriced, tokens {g.cost.tokens_in} in / "
                f"{g.cost.tokens_out} out."
            )
        )

    st.download_button(
        "Download the report (JSON)",
        json.dumps(r.to_dict(), indent=1, default=str),
        file_name=f"{session_id}-report.json",
        mime="application/json",
        key="pr_download",
    )
