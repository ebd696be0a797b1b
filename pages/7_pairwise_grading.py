"""Pairwise grading: the blinded side-by-side session.

Placeholder: built in issue 6."""

import streamlit as st

from pages import _ui

st.title("Pairwise grading")
_ui.not_built(6, "the pairwise grading page")
