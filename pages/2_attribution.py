"""Failure attribution: failures per criterion and their share, all-pass rate with gates, ternary
headline, by class, single-criterion failures, drill-down to reasons.

Placeholder: built in issue 3."""

import streamlit as st

from pages import _ui

st.title("Failure attribution")
_ui.not_built(3, "the failure attribution page")
