"""Ledger: decisions linked to the runs they rest on.

Placeholder: built in issue 7."""

import streamlit as st

from pages import _ui

st.title("Ledger")
_ui.not_built(7, "the ledger page")
