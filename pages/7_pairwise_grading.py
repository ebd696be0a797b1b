"""Pairwise grading: the blinded side-by-side session, one pair at a time.

A reviewer gives their name, reads the question and the two answers (plain text, same width and
style) and chooses Left better / Same / Right better, by button or by keyboard (A / S / D). Each
choice is appended to the state directory with the time it took; the reviewer's order is fixed,
so grading resumes where it left off. After the last pair an optional probe asks which side the
reviewer thinks one arm (their own "X") wrote, to measure whether the blinding held.

The page reads only the data and the state directories (evalcore.pairwise.progress, pair_view,
record_judgment, record_probe) and never a key: nothing it shows depends on which arm is which,
and no result is shown while the session is open. Deep links: ?session=ID&reviewer=NAME.
"""

from __future__ import annotations

import time

import streamlit as st

import evalcore
from evalcore import pairwise
from pages import _ui

SHOWN = "_pw_shown"  # (session, reviewer, pair, monotonic time it was first drawn)
ERROR = "_pw_error"
SKIP_PROBE = "_pw_skip_probe"
CHOICES = [("Left better", "left", "A"), ("Same", "same", "S"), ("Right better", "right", "D")]
GUESSES = [
    ("X wrote the left one", "left", "A"),
    ("Can't tell", "unsure", "S"),
    ("X wrote the right one", "right", "D"),
]


def _seconds(session_id: str, reviewer: str, pair_id: str) -> float | None:
    shown = st.session_state.get(SHOWN)
    if shown and shown[:3] == (session_id, reviewer, pair_id):
        return round(time.monotonic() - shown[3], 2)
    return None


def _record(kind: str, session_id: str, reviewer: str, pair_id: str, value: str) -> None:
    """Button callback: append the judgment (or probe answer); an error is shown on the rerun."""
    store = _ui.store()
    try:
        if kind == "judgment":
            pairwise.record_judgment(
                store, session_id, pair_id, reviewer, value, _seconds(session_id, reviewer, pair_id), via="app"
            )
        else:
            pairwise.record_probe(store, session_id, pair_id, reviewer, value, _seconds(session_id, reviewer, pair_id))
        st.session_state.pop(ERROR, None)
    except evalcore.EvalcoreError as err:
        st.session_state[ERROR] = err.message


def _show_pair(store, session_id: str, reviewer: str, pair_id: str) -> None:
    view = pairwise.pair_view(store, session_id, pair_id)
    if st.session_state.get(SHOWN, (None,) * 3)[:3] != (session_id, reviewer, pair_id):
        st.session_state[SHOWN] = (session_id, reviewer, pair_id, time.monotonic())
    if view["input"] is not None:
        _ui.labelled_text("Question", view["input"])
    left, right = st.columns(2)
    with left:
        st.caption("Left")
        _ui.show_text(view["left_text"])
    with right:
        st.caption("Right")
        _ui.show_text(view["right_text"])


def _buttons(kind: str, options, session_id: str, reviewer: str, pair_id: str) -> None:
    for col, (label, value, key) in zip(st.columns(len(options)), options):
        col.button(
            label,
            key=f"pw_{kind}_{value}",
            shortcut=key,
            width="stretch",
            on_click=_record,
            args=(kind, session_id, reviewer, pair_id, value),
        )


st.title("Pairwise grading")
store = _ui.store()

with _ui.boundary():
    sessions = pairwise.sessions_overview(store)
    if not sessions:
        st.info("No pairwise sessions in this data directory. Make one with `evalcore pairs make`.")
        st.stop()
    ids = [s["session_id"] for s in sessions]
    status = {s["session_id"]: s for s in sessions}
    _ui.sync_widget("pw_session", "session", ids)
    if st.session_state.get("pw_session") not in ids:
        st.session_state["pw_session"] = next((s["session_id"] for s in sessions if s["status"] == "open"), ids[0])
    _ui.sync_widget("pw_reviewer", "reviewer")
    c_session, c_name = st.columns([1, 1])
    c_session.selectbox(
        "Session",
        ids,
        key="pw_session",
        on_change=_ui.widget_to_qp,
        args=("pw_session", "session"),
        format_func=lambda s: f"{s} ({status[s]['status']}, {status[s]['n_pairs']} pairs)",
    )
    c_name.text_input(
        "Your name",
        key="pw_reviewer",
        max_chars=80,
        placeholder="who is grading",
        on_change=_ui.widget_to_qp,
        args=("pw_reviewer", "reviewer"),
    )
    session_id = st.session_state["pw_session"]
    reviewer = " ".join(str(st.session_state.get("pw_reviewer") or "").split())
    if st.session_state.get(ERROR):
        st.error(_ui.code_span(st.session_state[ERROR]))
    if status[session_id]["status"] != "open":
        st.info("This session is closed and takes no more judgments; its results are on the Pairwise results page.")
        st.stop()
    if status[session_id]["simulated"]:
        st.caption("A SIMULATED demo session: its answers were written by evalcore's simulator.")
    if not reviewer:
        st.info(
            "Type your name and press Enter to start. You will see one pair of answers at a time, without "
            "knowing which system wrote which; choose with the buttons or the keys A (left better), "
            "S (same) and D (right better). You can stop at any time and come back: grading resumes where you "
            "left off."
        )
        st.stop()

    prog = pairwise.progress(store, session_id, reviewer)
    st.progress(
        prog["graded"] / prog["total"] if prog["total"] else 1.0,
        text=f"{prog['graded']} of {prog['total']} pairs graded by {_ui.md_escape(reviewer)}",
    )

    if prog["next_pair"] is not None:
        pid = prog["next_pair"]
        _show_pair(store, session_id, reviewer, pid)
        _buttons("judgment", CHOICES, session_id, reviewer, pid)
        st.caption(
            f"Pair {_ui.md_escape(pid)}. Keys: A = left better, S = same, D = right better. Judge the "
            "answers on what they say; the sides were drawn at random for every pair."
        )
        st.stop()

    st.success("You have graded every pair of this session. Thank you.")
    if not prog["probe_left"] or st.session_state.get(SKIP_PROBE) == (session_id, reviewer):
        st.info("Results are shown on the Pairwise results page once the session has been closed.")
        st.stop()
    st.subheader("Could you tell the two systems apart? (optional)")
    st.markdown(
        "Two systems wrote these answers. If you think you can recognise one of them, call it **X**, and "
        "for each pair below say which side X wrote. Keep the same X throughout. Your answers only measure "
        "whether the blinding held; they do not change your judgments."
    )
    done = len(prog["probe_pairs"]) - len(prog["probe_left"])
    st.progress(done / len(prog["probe_pairs"]), text=f"{done} of {len(prog['probe_pairs'])} probe pairs")
    pid = prog["probe_left"][0]
    _show_pair(store, session_id, reviewer, pid)
    _buttons("probe", GUESSES, session_id, reviewer, pid)
    st.button(
        "Skip the probe",
        key="pw_skip_probe",
        on_click=lambda: st.session_state.__setitem__(SKIP_PROBE, (session_id, reviewer)),
    )
