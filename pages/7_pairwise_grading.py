"""Pairwise grading: the blinded side-by-side session, one pair at a time.

The reviewer is known from the login (st.login) or gives their name once per browser session
(pages/_access.py identity); a grader-only login sees its assigned sessions alone. They read the
question and the two answers (plain text, same width and style) and choose Left better / Same /
Right better, by button or by keyboard (A / S / D); U takes back their last choice. Each choice is
appended to the state directory with the time it took (an undo appends a withdrawal); the
reviewer's order is fixed, so grading resumes where it left off. Before the first pair the page
shows the session's instructions (what its maker says "better" means here: ``pairs make
--instructions``), with a button to start; they stay one click away beside every pair. After the
last pair an optional probe asks which side the reviewer thinks one arm (their own "X") wrote, to
measure whether the blinding held: a step of its own, entered with a button (so a grading key
pressed once too often answers nothing), answered with the same keys. The end screen says what
happens next (the session's maker closes it and reads the results) and whom to tell; a grader is
never pointed to a page their role cannot open.

Where the session's owner runs the active schedule (``evalcore pairs schedule``), one line under
the progress bar says where it stands for the session (``progress().schedule``, as ``evalcore
pairs progress``): pairs judged, pairs it queued, whether it last said the top arm is settled.

The page reads only the data and the state directories (evalcore.pairwise.progress, pair_view,
record_judgment, undo_judgment, record_probe) and never a key: nothing it shows depends on which
arm is which, and no result is shown while the session is open. Deep links:
?session=ID&reviewer=NAME (no login) and &step=probe.
"""

from __future__ import annotations

import time

import streamlit as st

import evalcore
from evalcore import pairwise
from pages import _access, _text, _ui

SHOWN = "_pw_shown"  # (session, reviewer, pair, monotonic time it was first drawn)
ERROR = "_pw_error"
SKIP_PROBE = "_pw_skip_probe"
PROBING = "_pw_probing"  # (session, reviewer) whose probe step was entered with its button
UNDONE = "_pw_undone"  # what the last undo took back
STARTED = "_pw_started"  # (session, reviewer) who read the instructions and pressed Start
NO_INSTRUCTIONS = (
    "The person who made this session wrote no instructions: choose the answer that answers the question "
    "better, as you would judge it yourself."
)
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
        prog = pairwise.progress(store, session_id, reviewer)
        shown = prog.next_pair if kind == "judgment" else next(iter(prog.probe_left), None)
        if pair_id != shown:  # a key or click on a button of a pair already answered (a stale one)
            return
        if kind == "judgment":
            pairwise.record_judgment(
                store, session_id, pair_id, reviewer, value, _seconds(session_id, reviewer, pair_id), via="app"
            )
        else:
            pairwise.record_probe(store, session_id, pair_id, reviewer, value, _seconds(session_id, reviewer, pair_id))
        st.session_state.pop(ERROR, None)
        st.session_state.pop(UNDONE, None)
    except evalcore.EvalcoreError as err:
        st.session_state[ERROR] = err.message


def _show_pair(store, session_id: str, reviewer: str, pair_id: str) -> None:
    view = pairwise.pair_view(store, session_id, pair_id)
    if st.session_state.get(SHOWN, (None,) * 3)[:3] != (session_id, reviewer, pair_id):
        st.session_state[SHOWN] = (session_id, reviewer, pair_id, time.monotonic())
    if view.input is not None:
        _text.labelled_text("Question", view.input)
    left, right = st.columns(2)
    with left:
        st.caption("Left")
        _text.show_text(view.left_text)
    with right:
        st.caption("Right")
        _text.show_text(view.right_text)


def _buttons(kind: str, options, session_id: str, reviewer: str, pair_id: str, *, shortcuts: bool) -> None:
    for col, (label, value, key) in zip(st.columns(len(options)), options):
        col.button(
            label,
            key=f"pw_{kind}_{value}",
            shortcut=key if shortcuts else None,
            width="stretch",
            on_click=_record,
            args=(kind, session_id, reviewer, pair_id, value),
        )


def _undo(session_id: str, reviewer: str, judgment_id: int) -> None:
    """Button callback: take back the judgment the button was drawn for (appended as a
    withdrawal); a second press of the same button takes back nothing more."""
    try:
        took = pairwise.undo_judgment(_ui.store(), session_id, reviewer, via="app", judgment_id=judgment_id)
        if took is None:
            return
        st.session_state[UNDONE] = f"Took back your choice on pair {took.pair_id}: grade it again."
        st.session_state.pop(ERROR, None)
        _leave_probe()
    except evalcore.EvalcoreError as err:
        st.session_state[ERROR] = err.message


def _undo_button(prog: pairwise.Progress, session_id: str, reviewer: str) -> None:
    if prog.can_undo:
        st.button(
            "Undo my last choice",
            key="pw_undo",
            shortcut="U",
            on_click=_undo,
            args=(session_id, reviewer, prog.last_judgment),
        )


def _in_probe(session_id: str, reviewer: str) -> bool:
    """The probe step was entered with its button (kept in the link: ``?step=probe``)."""
    if _ui.qp("step") == "probe":
        st.session_state[PROBING] = (session_id, reviewer)
    return st.session_state.get(PROBING) == (session_id, reviewer)


def _enter_probe(session_id: str, reviewer: str) -> None:
    st.session_state[PROBING] = (session_id, reviewer)
    st.session_state.pop(UNDONE, None)
    _ui.set_qp(step="probe")


def _leave_probe() -> None:
    st.session_state.pop(PROBING, None)
    _ui.set_qp(step=None)


def _skip_probe(session_id: str, reviewer: str) -> None:
    st.session_state[SKIP_PROBE] = (session_id, reviewer)
    _leave_probe()


def _start(session_id: str, reviewer: str) -> None:
    st.session_state[STARTED] = (session_id, reviewer)


def _sitting(session_id: str, reviewer: str) -> pairwise.Sitting:
    """The sitting cap (``pairwise.sitting``, `evalcore pairs sitting`): past the grader's caps since
    their last break, a break is suggested above the pair; they can go on."""
    caps = {k: st.session_state[w] for k, w in (("cap_judgments", "pw_cap_n"), ("cap_minutes", "pw_cap_m"))
            if w in st.session_state}  # fmt: skip
    s = pairwise.sitting(store, session_id, reviewer, **caps)
    if s.message:
        st.info(_text.md_escape(s.message), icon=":material/coffee:")
    return s


def _break_settings(s: pairwise.Sitting) -> None:
    with st.expander(f"Breaks: {s.judgments} judgments in this sitting"):
        c_n, c_m = st.columns(2)
        c_n.number_input("Suggest a break after this many judgments", 1, 1000, s.cap_judgments, key="pw_cap_n")
        c_m.number_input("... or after this many minutes", 1.0, 600.0, float(s.cap_minutes), key="pw_cap_m")


def _instructions(info: pairwise.SessionInfo) -> None:
    """The maker's instructions, as they wrote them (plain text), or the line saying there are none."""
    if info.instructions:
        by = f" from {info.created_by}" if info.created_by else ""
        st.caption(_text.md_escape(f"Instructions{by} for this session"))
        _text.show_text(info.instructions)
    else:
        st.markdown(NO_INSTRUCTIONS)


def _before_first(info: pairwise.SessionInfo, reviewer: str) -> None:
    """Before the first pair of a session with instructions: them, the keys, and Start (no key: a
    key meant for a pair must not skip the instructions)."""
    st.subheader("Before you start")
    _instructions(info)
    st.markdown(
        "You will see one pair of answers at a time, without knowing which system wrote which. Keys: "
        "A = left better, S = same, D = right better, U = undo your last choice."
    )
    st.button("Start grading", key="pw_start", type="primary", on_click=_start, args=(info.session_id, reviewer))
    st.stop()


def _finished(info: pairwise.SessionInfo, grader_only: bool) -> None:
    """The end screen: what happens next and whom to tell (a grader alone is not sent to the
    results page, which their role cannot open)."""
    maker = info.created_by or "the person who made this session (who gave you its link)"
    later = "" if grader_only else " Its results will be on the Pairwise results page once it is closed."
    st.info(
        _text.md_escape(
            f"What happens next: {maker} closes the session once its graders are done, and reads the results; "
            f"your choices stay blinded until then. Tell {maker} that you have finished.{later}"
        )
    )


_ui.title("Pairwise grading")
store = _ui.store()

with _text.boundary():
    sessions = pairwise.sessions_overview(store)
    who = _access.identity("pw", verb="Grading")
    if who is None and _access.login_configured():
        st.stop()
    if who is not None and who.grader_only:
        sessions = [s for s in sessions if who.may_grade(s.session_id)]
        if not sessions:
            st.info("No pairwise session is assigned to you yet.")
            st.stop()
    if not sessions:
        st.info("No pairwise sessions in this data directory. Make one with `evalcore pairs make`.")
        st.stop()
    ids = [s.session_id for s in sessions]
    status = {s.session_id: s for s in sessions}
    _ui.sync_widget("pw_session", "session", ids)
    if st.session_state.get("pw_session") not in ids:
        st.session_state["pw_session"] = next((s.session_id for s in sessions if s.status == "open"), ids[0])
    st.selectbox(
        "Session",
        ids,
        key="pw_session",
        on_change=_ui.widget_to_qp,
        args=("pw_session", "session"),
        format_func=lambda s: f"{s} ({status[s].status}, {status[s].n_pairs} pairs)",
    )
    session_id = st.session_state["pw_session"]
    _ui.set_qp(session=session_id)  # a reload comes back to this session
    if st.session_state.get(ERROR):
        st.error(_text.code_span(st.session_state[ERROR]))
    if status[session_id].status != "open":
        st.info(
            "This session is closed and takes no more judgments"
            + ("." if who is not None and who.grader_only else "; its results are on the Pairwise results page.")
        )
        st.stop()
    if status[session_id].simulated:
        st.caption("A SIMULATED demo session: its answers were written by evalcore's simulator.")
    if (removed := pairwise.presentation(store, session_id).sentence) is not None:
        st.caption(_text.md_escape(removed))
    if who is None:
        st.info(
            "Type your name and press Enter to start. You will see one pair of answers at a time, without "
            "knowing which system wrote which; choose with the buttons or the keys A (left better), "
            "S (same) and D (right better), U takes back your last choice. You can stop at any time and come "
            "back: grading resumes where you left off."
        )
        st.stop()
    reviewer = who.name
    info = status[session_id]

    prog = pairwise.progress(store, session_id, reviewer)
    if info.instructions and prog.graded == 0 and st.session_state.get(STARTED) != (session_id, reviewer):
        _before_first(info, reviewer)
    st.progress(
        prog.graded / prog.total if prog.total else 1.0,
        text=f"{prog.graded} of {prog.total} pairs graded by {_text.md_escape(who.display)}",
    )
    if prog.schedule.runs:  # the session's active schedule (`evalcore pairs progress`): no arm named
        st.caption(_text.md_escape(f"This session: {prog.schedule.sentence()}."))
    if st.session_state.get(UNDONE):
        st.caption(_text.md_escape(st.session_state[UNDONE]))

    if (pid := prog.next_pair) is not None:  # the grade step
        with st.expander("What 'better' means in this session"):
            _instructions(info)
        sitting = _sitting(session_id, reviewer)
        _show_pair(store, session_id, reviewer, pid)
        _buttons("judgment", CHOICES, session_id, reviewer, pid, shortcuts=True)
        _undo_button(prog, session_id, reviewer)
        st.caption(
            f"Pair {_text.md_escape(pid)}. Keys: A = left better, S = same, D = right better, U = undo. Judge the "
            "answers on what they say; the sides were drawn at random for every pair."
        )
        _break_settings(sitting)
        st.stop()

    st.success("You have graded every pair of this session. Thank you.")
    probing = _in_probe(session_id, reviewer)
    if prog.step == "done" or st.session_state.get(SKIP_PROBE) == (session_id, reviewer):
        _undo_button(prog, session_id, reviewer)
        _finished(info, who.grader_only)
        st.stop()
    if not probing:
        # the probe is a step of its own, entered on purpose: no grading key reaches it
        _undo_button(prog, session_id, reviewer)
        st.markdown(
            "One optional step is left: a short probe of whether you could tell the two systems apart. "
            "It does not change your judgments."
        )
        c_start, c_skip = st.columns(2)
        c_start.button(
            "Answer the probe",
            key="pw_probe_start",
            on_click=_enter_probe,
            args=(session_id, reviewer),
            width="stretch",
        )
        c_skip.button(
            "Skip the probe", key="pw_skip_probe", on_click=_skip_probe, args=(session_id, reviewer), width="stretch"
        )
        _finished(info, who.grader_only)
        st.stop()
    st.subheader("Could you tell the two systems apart? (optional)")
    st.markdown(
        "Two systems wrote these answers. If you think you can recognise one of them, call it **X**, and "
        "for each pair below say which side X wrote. Keep the same X throughout. Your answers only measure "
        "whether the blinding held; they do not change your judgments."
    )
    done = len(prog.probe_pairs) - len(prog.probe_left)
    st.progress(done / len(prog.probe_pairs), text=f"{done} of {len(prog.probe_pairs)} probe pairs")
    pid = prog.probe_left[0]
    _show_pair(store, session_id, reviewer, pid)
    _buttons("probe", GUESSES, session_id, reviewer, pid, shortcuts=True)
    st.caption("Keys: A = X wrote the left one, S = can't tell, D = X wrote the right one.")
    st.button("Skip the probe", key="pw_skip_probe", on_click=_skip_probe, args=(session_id, reviewer))
