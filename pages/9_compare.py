"""Compare configurations: knob diff, per-round figures with spread, paired deltas, stable wins and
regressions, noise floor, gate verdict.

Placeholder: built in issue 7."""

import streamlit as st

from pages import _ui

st.title("Compare configurations")
_ui.not_built(7, "the compare configurations page")
