"""evalcore's Streamlit app: page config, data and state directories, navigation over pages/.

    streamlit run app.py -- --data DIR --state DIR     (or EVALCORE_DATA / EVALCORE_STATE)

Without either, the app opens the bundled SIMULATED demo (data/demo) and keeps its writable state
in ./.evalcore-state. Pages are thin: they read widgets, call evalcore and render.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # so that pages can `from pages import _ui` however the app is started
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from pages import _ui  # noqa: E402

st.set_page_config(page_title="evalcore", layout="wide")

data_dir, state_dir = _ui.resolve_dirs(sys.argv[1:])
_ui.set_dirs(data_dir, state_dir)


def page(file: str, title: str, url: str, default: bool = False) -> st.Page:
    return st.Page(str(ROOT / "pages" / file), title=title, url_path=url, default=default)


nav = st.navigation(
    {
        "Browse": [
            page("1_runs.py", "Runs", "runs", default=True),
            page("2_attribution.py", "Failure attribution", "attribution"),
            page("3_association.py", "Criteria association", "association"),
            page("4_harness.py", "Harness comparison", "harness"),
        ],
        "Adjudicate": [
            page("5_review.py", "Review queue", "review"),
            page("6_agreement.py", "Agreement and judge report card", "agreement"),
            page("12_labels.py", "Labels", "labels"),
            page("13_suite.py", "Suites", "suites"),
        ],
        "Pairwise": [
            page("7_pairwise_grading.py", "Pairwise grading", "pairwise_grading"),
            page("8_pairwise_results.py", "Pairwise results", "pairwise_results"),
        ],
        "Decide": [
            page("9_compare.py", "Compare configurations", "compare"),
            page("10_cost.py", "Cost", "cost"),
            page("11_ledger.py", "Ledger", "ledger"),
        ],
    }
)

with st.sidebar:
    st.text(f"data: {_ui.display_path(data_dir)}")
    with _ui.boundary():
        if _ui.summary("data_overview")["simulated"]:
            st.badge("SIMULATED demo data", color="orange")

with _ui.boundary():
    nav.run()
