"""Agreement and judge report card: each judge and harness against gold per criterion, repeat
consistency, judge-to-judge kappa, corrected pass rates.

Placeholder: built in issue 5."""

import streamlit as st

from pages import _ui

st.title("Agreement and judge report card")
_ui.not_built(5, "the agreement and judge report card page")
