"""Review queue: the adjudication queue: disagreements plus a random audit; decisions become gold
labels.

Placeholder: built in issue 5."""

import streamlit as st

from pages import _ui

st.title("Review queue")
_ui.not_built(5, "the review queue page")
