"""Review queue: the adjudication queue of a generation (disagreements plus a random audit of agreed
cases), decided blind first on the review card; decisions are appended to the label store.

The card (pages/_card.py) shows one case on one screen and answers keys in the browser: 1, 2, 3...
the choices in order (P / F too), T the test is wrong (with a note), S skip, M note, B previous, U
undo, N next. It holds the reviewer's next cases, leased to them (evalcore.review.claims), so a
team works one queue at once. Deep link to a case: ``?gen=GEN&queue=QUEUE&item=ITEM&round=N&criterion=C``.
Everything here calls evalcore.review; docs/REVIEW.md explains the queue.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import review
from pages import _access, _card, _select, _text, _ui

BUILDERS = ("reviewer", "adjudicator", "admin")  # who may build a queue (evalcore.review.build)


def _filters() -> review.Filters:
    s = st.session_state
    return review.Filters.of(
        s.get("review_f_reason", []),
        s.get("review_f_criterion", []),
        s.get("review_f_run", []),
        s.get("review_f_class", []),
        include_holdout=bool(s.get("holdout|review")),
    )


def _estimates(queue_id: str, criterion: str) -> dict[str, review.PpiRate | review.PpiFailed]:
    """The criterion's PPI++ entries per run from the queue audit's decided prefix
    (``evalcore correct RUN --criterion C --json``); empty when they cannot be read."""
    store = _ui.store()
    try:
        gen_id = review.get_queue(store, queue_id)["gen_id"]
        return review.criterion_estimates(store, gen_id, criterion, queue_id=queue_id)
    except evalcore.EvalcoreError:
        return {}


def _narrowed(
    criterion: str,
    before: dict[str, review.PpiRate | review.PpiFailed],
    after: dict[str, review.PpiRate | review.PpiFailed],
) -> str | None:
    """How much the decision narrowed each run's interval on the criterion, in points, and the
    stopping rule; None when no interval exists after it."""
    lines = []
    for rid, a in list(after.items())[:3]:
        if not isinstance(a, review.PpiRate) or a.half_width is None:
            continue
        was_rate = before.get(rid)
        b = was_rate.half_width if isinstance(was_rate, review.PpiRate) else None
        was = f"+/- {100 * b:.1f} -> " if b is not None else "now "
        change = f" ({100 * (b - a.half_width):+.1f} points narrower)" if b is not None else ""
        lines.append(
            f"{rid}: {was}+/- {100 * a.half_width:.1f} points{change} at {_text.pct(a.value)} from "
            f"{a.n_labels} audit labels; {review.half_width_text(a)}."
        )
    if not lines:
        return None
    return f"Corrected pass rate of {criterion} (PPI++, 95% interval): " + " ".join(lines)


def _build(gen_id: str) -> None:
    """Start building a queue in a process of its own (evalcore.review.jobs): the page goes on, and
    :func:`build_progress` says how far it is. Building takes no lease: nobody holds a case of it
    until they open the card."""
    s = st.session_state
    try:
        s["review_job"] = review.start_build(
            _ui.store(),
            gen_id,
            audit_rate=float(s.get("review_audit_rate", 5.0)) / 100,
            seed=int(s.get("review_seed", 0)),
            reviewers_required=int(s.get("review_n", 1)),
            created_by=_access.current_name() or None,
            audit=str(s.get("review_audit", "uniform")),
            claims=_access.claims(),
        )
    except evalcore.EvalcoreError as err:
        s["review_flash"] = ("error", err.message)


@st.fragment(run_every=1.0)
def build_progress() -> None:
    """The running build, once a second, until it ends; then the page opens its queue."""
    job = st.session_state.get("review_job")
    if not job:
        return
    status = review.build_status(_ui.store(), job)
    if status["state"] == "running":
        st.progress(
            float(status.get("fraction") or 0.0),
            text=f"Building the queue on {status['gen_id']}: {status.get('stage', 'starting')}...",
        )
        return
    del st.session_state["review_job"]
    if status["state"] == "failed":
        st.session_state["review_flash"] = ("error", f"The queue was not built: {status['error']}")
    else:
        st.session_state["review_flash"] = ("success", f"Built queue {status['queue_id']}.")
        _ui.set_qp(queue=status["queue_id"], item=None, round=None, criterion=None)
    st.rerun()


def _progress_text(prog: dict) -> str:
    """The reviewer's progress in the queue's own counts (evalcore.review.queue.case_counts: raised
    and audited add up to the cases in scope; holdout items' cases are said apart)."""
    hidden = f"; {prog['holdout_hidden']} more on holdout items, hidden" if prog.get("holdout_hidden") else ""
    return (
        f"You: {prog['handled_by_me']} of {prog['cases']} cases handled ({prog['raised']} raised + "
        f"{prog['audited']} audited{hidden}); {prog['waiting_for_me']} waiting for you; "
        f"complete (with {prog['reviewers_required']} review(s)): {prog['complete']}."
    )


def _review_card(
    store: evalcore.Store,
    queue_id: str,
    reviewer: str,
    role: str,
    filters: review.Filters,
    blind: bool,
    hide: bool,
    hold: bool,
    adjudicating: bool,
) -> None:
    item, crit = _ui.qp("item"), _ui.qp("criterion")
    _card.review_card(
        store,
        queue_id,
        reviewer,
        role=role,
        filters=filters,
        options={"blind": blind, "hide_judges": hide, "include_holdout": hold},
        reveal_after=bool(st.session_state.get("review_reveal_after")),
        claims=_access.claims(),
        progress=lambda: _progress_text(review.progress(store, queue_id, reviewer, filters)),
        empty_text="No disagreement waits for an adjudicator in this queue."
        if adjudicating
        else "Nothing left for you in this queue with these filters.",
        link=f"?gen={review.get_queue(store, queue_id)['gen_id']}&queue={queue_id}",
        linked=None if item is None or crit is None else (item, _ui.qp_int("round", 1), crit),
        narrow=(lambda c: _estimates(queue_id, c), _narrowed) if st.session_state.get("review_narrow") else None,
    )


def build_form(gen_id: str, label: str) -> None:
    c0, c1, c2, c3 = st.columns(4)
    c0.selectbox(
        "Audit",
        ["uniform", "active"],
        key="review_audit",
        help="Active draws raised cases twice as often as agreed ones; the estimates weigh each by 1 / its probability.",
    )
    c1.number_input(
        "Audit rate (% of each criterion's cases)",
        min_value=0.0,
        max_value=100.0,
        value=5.0,
        step=1.0,
        key="review_audit_rate",
    )
    c2.number_input("Seed", min_value=0, value=0, step=1, key="review_seed")
    c3.number_input("Reviewers per case (N)", min_value=1, max_value=9, value=1, step=1, key="review_n")
    st.button(label, key="review_build", on_click=_build, args=(gen_id,))


_ui.title("Review queue")
store = _ui.store()
flash = st.session_state.pop("review_flash", None)
if flash:
    getattr(st, flash[0])(_text.md_escape(flash[1]))

with _text.boundary():
    me = _access.identity("review", verb="Reviewing")
    if me is None:
        st.caption("Every decision is recorded under your name.")
        st.stop()
    reviewer = me.name
    card_slot = st.container()  # the card right under the name: the case on the first screen
    build_progress()
    judged = {g: len(review.runs_on(store, g)) for g in store.ids("generation")}
    gens = sorted((g for g, n in judged.items() if n), key=lambda g: (-judged[g], g))  # most runs first
    if not gens:
        st.info("No generation in this data directory has judged runs: nothing to review.")
        st.stop()
    _ui.sync_widget("review_gen", "gen", gens)
    c_gen, c_queue = st.columns(2)
    gen_id = c_gen.selectbox(
        "Generation",
        gens,
        key="review_gen",
        on_change=_ui.widget_to_qp,
        args=("review_gen", "gen"),
        kwargs={"clear": ("queue", "item", "round", "criterion")},
    )
    hold = _select.holdout_toggle("review", [store.generation(gen_id).manifest.suite_id])
    _select.suite_version_warning(review.runs_on(store, gen_id))
    qs = review.queues(store, gen_id)
    if not qs:
        det = review.detection_summary(store, gen_id)
        may_build = bool(set(me.roles) & set(BUILDERS))
        with card_slot:
            st.info(
                _text.md_escape(
                    f"No review queue on {gen_id} yet: nothing waits for you here. "
                    + (
                        f"Building one (below) raises {det['raised']} of its {det['population']} cases and "
                        f"draws the audit from the {det['agreed']} agreed ones; it runs in the background and "
                        "is written to the state directory, never to the data."
                        if may_build
                        else f"A queue is built by someone with the {', '.join(BUILDERS)} role; ask one of them."
                    )
                )
            )
        st.dataframe(
            pd.DataFrame([{"reason": k, "cases": v, "what": review.REASONS[k]} for k, v in det["counts"].items()]),
            hide_index=True,
        )
        if may_build and not st.session_state.get("review_job"):
            build_form(gen_id, "Build queue")
        st.stop()
    ids = [q["queue_id"] for q in qs]
    _ui.sync_widget("review_queue", "queue", ids)
    if st.session_state.get("review_queue") not in ids:  # the latest over the whole generation
        st.session_state["review_queue"] = review.get_queue(store, gen_id=gen_id)["queue_id"]
    queue_id = c_queue.selectbox(
        "Queue",
        ids,
        key="review_queue",
        on_change=_ui.widget_to_qp,
        args=("review_queue", "queue"),
        kwargs={"clear": ("item", "round", "criterion")},
    )
    q = next(x for x in qs if x["queue_id"] == queue_id)
    with st.expander("Queue, filters and options"):
        st.caption(
            _text.md_escape(
                f"Built {q['created_at']} with seed {q['seed']} (holdout items included): {q['flagged']} raised "
                f"cases, {q['audit_sampled']} of "
                f"{q['agreed']} agreed cases drawn for the audit ({(q.get('audit_design') or {}).get('method', 'uniform')}, "
                f"rate {q['audit_rate']:.3g}), "
                f"{q['reviewers_required']} reviewer(s) per case; runs read: {', '.join(q['runs'])}."
            )
        )
        facets = review.facets(store, queue_id)
        f1, f2, f3, f4 = st.columns(4)
        f1.multiselect("Reason", [*review.PRIORITY, review.AUDIT], key="review_f_reason")
        f2.multiselect("Criterion", facets["criteria"], key="review_f_criterion")
        marks = evalcore.analysis.run_marks(store)  # manifests only, read once: the page never scans verdicts
        f3.multiselect(
            "Run", q["runs"], key="review_f_run", format_func=lambda r: r + _select.suite_suffix(marks.get(r) or {})
        )
        f4.multiselect("Class", facets["classes"], key="review_f_class")
        o1, o2, o3, o4 = st.columns(4)
        blind = o1.toggle("Blind first: hide the judges' verdicts until I decide", value=True, key="review_blind")
        hide = o2.toggle("Hide judge identities", value=False, key="review_hide_judges")
        o3.toggle(
            "Show the judges after each decision (then N for the next case)", value=False, key="review_reveal_after"
        )
        o4.toggle(
            "Say how each decision narrows the corrected pass rate (reads the judges: slower on large runs)",
            value=False,
            key="review_narrow",
        )
        if not st.session_state.get("review_job"):
            st.markdown("**Build a new queue**")
            build_form(gen_id, "Build a new queue")

    adjudicating = False
    if "adjudicator" in me.roles:
        d = review.disputes(store, queue_id)
        adjudicating = st.toggle(
            f"Adjudicate: cases whose reviewers disagree ({d['waiting']} waiting, {d['settled']} settled)",
            key="review_adjudicate",
            on_change=_ui.set_qp,
            kwargs={"item": None, "round": None, "criterion": None},
        )
    role = "adjudicator" if adjudicating else "reviewer"
    with card_slot:
        _review_card(store, queue_id, reviewer, role, _filters(), blind, hide, hold, adjudicating)

    st.divider()
    st.download_button(
        "Download labels (CSV, every edit with its provenance)",
        lambda: evalcore.export_labels(evalcore.LabelStore(store), "csv", None, history=True) or "",
        file_name="labels-history.csv",
        mime="text/csv",
        key="review_labels_csv",
        on_click="ignore",
    )
