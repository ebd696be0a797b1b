"""Pairwise results: results of a closed, unblinded session.

Placeholder: built in issue 6."""

import streamlit as st

from pages import _ui

st.title("Pairwise results")
_ui.not_built(6, "the pairwise results page")
