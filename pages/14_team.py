"""Team: how each reviewer is doing on a review queue (cases decided, skipped and flagged, time per
case, cases per hour, agreement with the adjudicator and with gold), and slices of the queue given
to named reviewers. For adjudicators and admins.

Figures: evalcore.review.team (``evalcore queue team QUEUE --json``; docs/REVIEW.md, "The team view").
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evalcore import review
from pages import _access, _text, _ui

_ui.title("Team")
store = _ui.store()
if "team_done" in st.session_state:  # what the last assignment did (said after the rerun it asked for)
    st.success(_text.md_escape(st.session_state.pop("team_done")))


def _agreement_cells(prefix: str, a: Any) -> dict[str, Any]:
    """Three cells: the kappa (None below the minimum), its interval as text, the shared cases."""
    interval = f"{a.lo:.2f} to {a.hi:.2f}" if a.lo is not None and a.hi is not None else ""
    return {
        f"κ {prefix}": a.kappa,
        f"κ {prefix} 95% interval": interval,
        f"cases shared with {prefix}": a.cases,
    }


def team_table(t: review.TeamReport) -> pd.DataFrame:
    rows = []
    for r in t.reviewers:
        rows.append(
            {
                "reviewer": r.reviewer,
                "role": r.role,
                "decided": r.decided,
                "skipped": r.skipped,
                "test is wrong": r.test_wrong,
                "median s per case": r.median_seconds,
                "cases per hour": r.cases_per_hour,
                **_agreement_cells("vs adjudicator", r.with_adjudicator),
                **_agreement_cells("vs gold", r.with_gold),
            }
        )
    return pd.DataFrame(rows)


with _text.boundary():
    qs = review.queues(store)
    if not qs:
        st.info("No review queue yet: an adjudicator builds one on the Review queue page (or `evalcore queue build`).")
        st.stop()
    ids = [q["queue_id"] for q in qs]
    _ui.sync_widget("team_queue", "queue", ids)
    if st.session_state.get("team_queue") not in ids:
        st.session_state["team_queue"] = ids[-1]
    queue_id = st.selectbox("Queue", ids, key="team_queue", on_change=_ui.widget_to_qp, args=("team_queue", "queue"))
    t = review.team(store, queue_id)
    people = [r for r in t.reviewers if r.role == "reviewer"]
    st.caption(
        _text.md_escape(
            f"{len(people)} reviewer(s) and {len(t.reviewers) - len(people)} adjudicator(s) have worked queue "
            f"{t.queue_id} ({t.reviewers_required} reviewer(s) per case). A time per case is the gap between two "
            f"edits of a reviewer in this queue; gaps over {t.break_seconds // 60} minutes are breaks and left out. "
            f"Kappa is shown with its {t.level:.0%} interval on at least {t.min_cases} shared cases."
        )
    )
    if not t.reviewers:
        st.info("Nobody has decided a case of this queue yet.")
    else:
        st.dataframe(
            team_table(t),
            hide_index=True,
            column_config={
                "median s per case": st.column_config.NumberColumn(format="%.1f"),
                "cases per hour": st.column_config.NumberColumn(format="%.1f"),
                "κ vs adjudicator": st.column_config.NumberColumn(format="%.2f"),
                "κ vs gold": st.column_config.NumberColumn(format="%.2f"),
            },
        )
        rated = [r for r in t.reviewers if r.cases_per_hour is not None]
        if rated:
            st.bar_chart(
                pd.DataFrame(
                    {"reviewer": [r.reviewer for r in rated], "cases per hour": [r.cases_per_hour for r in rated]}
                ),
                x="reviewer",
                y="cases per hour",
                horizontal=True,
                height=60 + 30 * len(rated),
            )
        short = [
            f"{r.reviewer} ({r.with_gold.cases} shared with gold)"
            for r in t.reviewers
            if r.role == "reviewer" and r.with_gold.kappa is None
        ]
        if short:
            st.caption(
                _text.md_escape(f"No kappa against gold for {', '.join(short)}: fewer than {t.min_cases} shared cases.")
            )

    st.subheader("Slices given to named reviewers")
    if t.assignments:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "slice": "; ".join(f"{k}: {', '.join(v)}" for k, v in a.slice.items() if v),
                        "cases": a.cases,
                        "reviewers": ", ".join(a.reviewers),
                        "assigned by": a.assigned_by,
                        "when": a.created_at[:16].replace("T", " "),
                    }
                    for a in t.assignments
                ]
            ),
            hide_index=True,
        )
    else:
        st.caption("No slice is assigned: every case goes to whoever asks next.")

    who = _access.identity("team", verb="Assigning", label="Your name (an adjudicator or admin)")
    if who is None:
        st.stop()
    facets = review.facets(store, queue_id)
    q = next(x for x in qs if x["queue_id"] == queue_id)
    known = sorted({r.reviewer for r in people} | {n for a in t.assignments for n in a.reviewers})
    with st.form("team_assign"):
        c1, c2 = st.columns(2)
        names = c1.multiselect("Reviewers", known, key="team_names", accept_new_options=True)
        classes = c2.multiselect("Item class", facets["classes"], key="team_classes")
        c3, c4, c5 = st.columns(3)
        reasons = c3.multiselect("Reason", [*review.PRIORITY, review.AUDIT], key="team_reasons")
        runs = c4.multiselect("Run", q["runs"], key="team_runs")
        criteria = c5.multiselect("Criterion", facets["criteria"], key="team_criteria")
        assign = st.form_submit_button("Assign the slice")
        take_back = st.form_submit_button("Take the slice back")
    if assign or take_back:
        a = review.assign(
            store,
            queue_id,
            [] if take_back else names,
            classes=classes,
            reasons=reasons,
            runs=runs,
            criteria=criteria,
            by=who.name,
            claims=_access.claims(),
        )
        st.session_state["team_done"] = (
            f"{a.cases} cases given to {', '.join(a.reviewers)}" if a.reviewers else f"{a.cases} cases taken back"
        )
        st.rerun()
