"""Labels: what people decided, case by case, as gold by the label store's stated policy
(docs/REVIEW.md, "Gold": an adjudicator's decision, else the reviewers' unanimous decision once as
many decided as the case needs), with each case's status and who said what; the labels that ship
with the data (marked "shipped"); downloads of gold (one column per reviewer too) and of every edit."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import evalcore
from evalcore import review
from pages import _text, _ui

STATUS_WORDS = {
    "gold": "gold",
    "pending": "waiting for more reviewers",
    "reviewers_disagree": "reviewers disagree: waits for an adjudicator",
    "test_wrong": "the test is wrong",
    "shipped": "shipped with the data",
}

SHIPPED_SHOWN = 1_000

_ui.title("Labels")
store = _ui.store()
labels = evalcore.LabelStore(store)
with _text.boundary():
    rows = evalcore.gold(labels)
    n_shipped = sum(len(r) for _, r in labels.shipped_rows(None))
    counts = {s: sum(r["status"] == s for r in rows) for s in ("gold", "pending", "test_wrong")}
    split = review.disagreements(store)  # the count the Agreement page shows too
    c1, c2, c3, c4, c5 = st.columns(5)
    c1.metric("Gold (decided here)", counts["gold"])
    c2.metric("Reviewers disagree", split.reviewers)
    c3.metric("Waiting for reviewers", counts["pending"])
    c4.metric("The test is wrong", counts["test_wrong"])
    c5.metric("Shipped with the data", n_shipped)
    st.caption(
        "Gold is an adjudicator's decision where there is one, else the reviewers' unanimous decision once as many "
        "reviewers decided as the case needs; reviewers who disagree leave the case without gold until an adjudicator "
        "settles it. The report card, the corrected rates and the export read this same gold. Shipped labels are read "
        "from the data directory's label sets and never copied."
        + (
            f" On {split.annotators} shipped case(s) the annotators reach no strict majority: no gold there either "
            "(the Agreement page counts them with the reviewers' disagreements)."
            if split.annotators
            else ""
        )
    )
    if rows:
        frame = pd.DataFrame(
            [
                {
                    "gen_id": r["gen_id"],
                    "item_id": r["item_id"],
                    "gen_round": r["gen_round"],
                    "criterion": r["criterion"],
                    "status": STATUS_WORDS.get(r["status"], r["status"]),
                    "gold": _text.number(r["value"]),
                    "from": r["gold_from"] or "",
                    "adjudicator": r["adjudicator"] or "",
                    "reviewers said": "; ".join(f"{k}: {v}" for k, v in r["reviewers"].items()),
                    "decided / needed": f"{r['decided']} / {r['required']}",
                    "notes": json.dumps(r["notes"], ensure_ascii=False) if r["notes"] else "",
                    "last decision": r["decided_at"],
                }
                for r in rows
            ]
        )
        st.dataframe(frame, hide_index=True)
    else:
        st.info("No decision has been made here yet (the Review queue page, or `evalcore labels add`).")
    if n_shipped:
        with st.expander(f"Labels shipped with the data ({n_shipped:,})"):
            cols = ["source", "gen_id", "item_id", "gen_round", "criterion", "value", "passed", "reviewer"]
            shown = labels.shipped(limit=SHIPPED_SHOWN)  # a collapsed table is still sent to the browser whole
            frame = pd.DataFrame(shown)[cols]
            frame["value"] = frame["value"].map(_text.number)  # a published mean, 2.6666666666666665: 2.67
            st.dataframe(frame, hide_index=True)
            if n_shipped > len(shown):
                st.caption(f"The first {len(shown):,} of {n_shipped:,}; the download below has them all.")
            st.download_button(
                "Download the shipped labels (CSV)",
                lambda: evalcore.csv_text(cols, labels.shipped()),
                file_name="labels-shipped.csv",
                mime="text/csv",
                key="labels_shipped_csv",
                on_click="ignore",
            )
    d1, d2 = st.columns(2)
    d1.download_button(
        "Download gold (CSV, a column per reviewer)",
        lambda: evalcore.export_labels(labels, "csv", None, wide=True) or "",
        file_name="labels-gold.csv",
        mime="text/csv",
        key="labels_csv",
        on_click="ignore",
    )
    d2.download_button(
        "Download every edit (CSV)",
        lambda: evalcore.export_labels(labels, "csv", None, history=True) or "",
        file_name="labels-history.csv",
        mime="text/csv",
        key="labels_history_csv",
        on_click="ignore",
    )
