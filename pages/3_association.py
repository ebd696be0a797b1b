"""Criteria association: 2x2 of any two criteria, phi matrix, instruments side by side (induced / real
/ undetermined), position effects.

Placeholder: built in issue 3."""

import streamlit as st

from pages import _ui

st.title("Criteria association")
_ui.not_built(3, "the criteria association page")
