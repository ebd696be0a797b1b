"""Home: what evalcore is, in two sentences, and what waits for the person using it, one part per
role with one button to the page where it waits.

Every number comes from ``evalcore.waiting`` (evalcore/home.py), the function behind
``evalcore home --json``: the cases of each generation's newest review queue waiting for this
reviewer, the disputes waiting for an adjudicator, the open pairwise sessions with pairs left, the
runs and those not complete. Nothing here takes a lease or writes anything.
"""

from __future__ import annotations

import streamlit as st

import evalcore
from pages import _access, _text, _ui

ABOUT = (
    "evalcore checks LLM judges: it shows where the judges' verdicts on each run fail and whether two "
    "judges, harnesses or configurations agree. People review the cases where the judges may be wrong, "
    "and their decisions become the gold the judges, the corrected pass rates and the release gate are "
    "measured against."
)


def _n(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def _first_waiting(rows) -> dict[str, str]:
    """The link's query of the first queue with something waiting (else the first queue)."""
    pick = next((q for q in rows if q.waiting), rows[0])
    return {"gen": pick.gen_id, "queue": pick.queue_id}


def _part(text: str, page: str, label: str, query: dict[str, str] | None = None) -> None:
    c_text, c_button = st.columns([3, 1], vertical_alignment="center")
    c_text.markdown(text)
    c_button.page_link(page, label=label, icon=":material/arrow_forward:", query_params=query, width="stretch")


def _queues(home: evalcore.Home) -> None:
    """The reviewer's and the adjudicator's parts, or one line saying there is no queue yet."""
    part = home.cases or home.disputes
    if part is None:
        return
    if not part.queues:
        _part(
            "No review queue yet. Anyone with the reviewer, adjudicator or admin role builds one on the Review "
            "page (or with `evalcore queue build GEN`).",
            "pages/5_review.py",
            "Open Review",
        )
        return
    _cases(home)
    _disputes(home)


def _cases(home: evalcore.Home) -> None:
    c = home.cases
    if c is None:
        return
    where = "; ".join(f"{q.queue_id}: {q.waiting}" for q in c.queues)
    text = (
        f"**{_n(c.waiting, 'case waits', 'cases wait')} for you** ({_text.md_escape(where)})."
        if c.reviewer
        else f"**{_n(c.waiting, 'case is', 'cases are')} not yet complete** ({_text.md_escape(where)}); "
        "give your name on the Review page to see yours."
    )
    _part(text, "pages/5_review.py", "Review", _first_waiting(c.queues))


def _disputes(home: evalcore.Home) -> None:
    d = home.disputes
    if d is None or not d.queues:
        return
    _part(
        f"**{_n(d.waiting, 'case waits', 'cases wait')} for an adjudicator**: their reviewers disagree "
        "(turn on Adjudicate on the Review page).",
        "pages/5_review.py",
        "Adjudicate",
        _first_waiting(d.queues),
    )


def _grading(home: evalcore.Home) -> None:
    g = home.grading
    if g is None or (not g.sessions and "grader" not in home.roles):
        return
    left = f"{_n(g.pairs_left, 'pair', 'pairs')} left" + (" for you" if home.name else "")
    text = f"**{_n(g.sessions, 'pairwise session', 'pairwise sessions')} to grade** ({left})."
    query = {"session": g.open[0].session_id} if g.open else None
    _part(text, "pages/7_pairwise_grading.py", "Grade pairs", query)


def _runs(home: evalcore.Home) -> None:
    r = home.runs
    if r is None:
        return
    flagged = f", {r.not_complete} not complete (partial or polluted: their figures are not comparable)"
    _part(
        f"**{_n(r.runs, 'run', 'runs')}**{flagged if r.not_complete else ', every one complete'}.",
        "pages/1_runs.py",
        "Runs",
    )


if _ui.qp("run") is not None:  # a link to a run's answer made before Home was "/" (/?run=R&item=I)
    st.switch_page("pages/1_runs.py", query_params=st.query_params.to_dict())
_ui.title("evalcore")
st.markdown(ABOUT)
with _text.boundary():
    acc = _access.current_access()
    if acc is None:  # no login configured and no name typed yet: the roles a typed name gets
        acc = _access.typed_access()
    home = evalcore.waiting(_ui.store(), acc.name, acc.roles, acc.sessions)
    st.subheader(f"Waiting for {_text.md_escape(acc.display)}" if acc.name else "Waiting")
    _queues(home)
    _grading(home)
    _runs(home)
