"""Suites: admission findings, flags, repairs, holdout, age and tuning use.

Placeholder: built in issue 8."""

import streamlit as st

from pages import _ui

st.title("Suites")
_ui.not_built(8, "the suite page")
