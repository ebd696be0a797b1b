"""Labels: the current human labels (decided in the app or the CLI, from the state directory) and
the labels that ship with the data (marked "shipped"), with a CSV export of both."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from pages import _ui

COLUMNS = [
    "source",
    "gen_id",
    "item_id",
    "gen_round",
    "criterion",
    "value",
    "passed",
    "reviewer",
    "created_at",
    "queue",
    "reason_code",
    "note",
    "edit_id",
    "supersedes",
]

st.title("Labels")
labels = evalcore.LabelStore(_ui.store())
shipped = labels.shipped()
current = labels.current()
rows = current + shipped

c1, c2 = st.columns(2)
c1.metric("Decided here (current)", len(current))
c2.metric("Shipped with the data", len(shipped))
st.caption(
    "Shipped labels are read from the data directory's label sets and never copied; decisions made in the "
    "app or with `evalcore labels add` are appended to the state directory's label store."
)
if rows:
    frame = pd.DataFrame(rows)
    frame["source"] = ["shipped" if s.startswith("shipped:") else "decided here" for s in frame["source"]]
    frame.insert(
        1, "label set", [r["source"].split(":", 1)[1] if r["source"].startswith("shipped:") else "" for r in rows]
    )
    st.dataframe(frame[["source", "label set"] + COLUMNS[1:]], hide_index=True)
else:
    st.info("No labels yet: none ship with this data and none have been decided.")
st.download_button(
    "Download labels (CSV)",
    evalcore.export_labels(labels, "csv", None),
    file_name="labels.csv",
    mime="text/csv",
    key="labels_csv",
)
