"""Harness comparison: per criterion, fail under A and pass under B and the reverse; how the
composition of failures moved.

Placeholder: built in issue 3."""

import streamlit as st

from pages import _ui

st.title("Harness comparison")
_ui.not_built(3, "the harness comparison page")
