"""Cost: calls, tokens, cost and latency per configuration and criterion; single / grouped / split
projection.

Placeholder: built in issue 7."""

import streamlit as st

from pages import _ui

st.title("Cost")
_ui.not_built(7, "the cost page")
