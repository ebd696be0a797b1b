"""Review queue: one case at a time from the adjudication queue of a generation (disagreements plus
a random audit of agreed cases), decided blind first; decisions are appended to the label store.

Deep link to a case: ``?gen=GEN&queue=QUEUE&item=ITEM&round=N&criterion=C``. Keyboard: the
decision keys shown on the buttons (P / F, 1 2 3, or the score), T (the test is wrong), S (skip),
U (undo), N (next). Everything here calls evalcore.review.queue; docs/REVIEW.md explains the queue.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import review
from pages import _ui

NAV_KEYS = {"test_wrong": "T", "skip": "S", "undo": "U", "next": "N"}
TERNARY_KEYS = {"correct": "1", "partial": "2", "wrong": "3"}
BINARY_KEYS = {"pass": "P", "fail": "F"}


def decision_key(value: str) -> str | None:
    """The keyboard shortcut of a decision button (C and R are Streamlit's own)."""
    if value in BINARY_KEYS:
        return BINARY_KEYS[value]
    if value in TERNARY_KEYS:
        return TERNARY_KEYS[value]
    return value if len(value) == 1 and value.isdigit() else None


def key_caption(choices: list[str]) -> str:
    """The decision keys in words: a score scale as "1 to 5 (the score)", otherwise each key and
    what it decides ("P pass, F fail")."""
    if choices and all(c.isdigit() and len(c) == 1 for c in choices):
        return f"{choices[0]} to {choices[-1]} (the score)"
    return ", ".join(f"{decision_key(v)} {v}" for v in choices if decision_key(v))


def _filters() -> review.Filters:
    s = st.session_state
    return review.Filters.of(
        s.get("review_f_reason", []),
        s.get("review_f_criterion", []),
        s.get("review_f_run", []),
        s.get("review_f_class", []),
        include_holdout=bool(s.get("holdout|review")),
    )


def _run_label(run_id: str) -> str:
    run = next((r for r in _ui.summary("runs_summary") if r["run_id"] == run_id), None)
    return run_id + (_ui.suite_suffix(run) if run else "")


def _reviewer() -> str:
    return (st.session_state.get("review_reviewer") or "").strip()


def _goto(case: dict | None) -> None:
    if case is None:
        _ui.set_qp(item=None, round=None, criterion=None)
    else:
        _ui.set_qp(item=case["item_id"], round=case["gen_round"], criterion=case["criterion"])


def _record(queue_id: str, case: tuple, outcome: str, value: str | None = None) -> None:
    """on_click of a decision, test-is-wrong or skip button."""
    s = st.session_state
    tags = [t.strip() for t in (s.get("review_tags") or "").split(",") if t.strip()]
    try:
        e = review.decide(
            _ui.store(),
            queue_id,
            *case,
            _reviewer(),
            outcome=outcome,
            value=value,
            note=s.get("review_note") or None,
            tags=tags,
        )
    except evalcore.EvalcoreError as err:
        s["review_flash"] = ("error", err.message)
        return
    s["review_note"] = ""
    s["review_tags"] = ""
    if outcome == "skipped":
        s["review_flash"] = ("info", f"Skipped {case[0]} ({case[2]}).")
        _goto(review.next_case(_ui.store(), queue_id, _reviewer(), _filters()))
    else:
        s["review_flash"] = (
            "success",
            f"Recorded edit {e['edit_id']}: {e['outcome']} {e['value'] or ''} on {case[0]} ({case[2]}).",
        )


def _next(queue_id: str) -> None:
    _goto(review.next_case(_ui.store(), queue_id, _reviewer(), _filters()))


def _undo(queue_id: str) -> None:
    s = st.session_state
    try:
        w = review.undo(_ui.store(), queue_id, _reviewer())
    except evalcore.EvalcoreError as err:
        s["review_flash"] = ("error", err.message)
        return
    if w is None:
        s["review_flash"] = ("info", "Nothing of yours to undo in this queue.")
        return
    s["review_flash"] = ("info", f"Undone: edit {w['supersedes']} on {w['item_id']} ({w['criterion']}) is withdrawn.")
    _goto({"item_id": w["item_id"], "gen_round": w["gen_round"], "criterion": w["criterion"]})


def _build(gen_id: str) -> None:
    s = st.session_state
    try:
        q = review.build_queue(
            _ui.store(),
            gen_id,
            audit_rate=float(s.get("review_audit_rate", 5.0)) / 100,
            seed=int(s.get("review_seed", 0)),
            reviewers_required=int(s.get("review_n", 1)),
            created_by=_reviewer() or None,
        )
    except evalcore.EvalcoreError as err:
        s["review_flash"] = ("error", err.message)
        return
    s["review_flash"] = (
        "success",
        f"Built queue {q['queue_id']}: {q['flagged']} raised cases and {q['audit_sampled']} audited agreed cases.",
    )
    _ui.set_qp(queue=q["queue_id"], item=None, round=None, criterion=None)


def build_form(gen_id: str, label: str) -> None:
    c1, c2, c3 = st.columns(3)
    c1.number_input(
        "Audit rate (% of agreed cases)", min_value=0.0, max_value=100.0, value=5.0, step=1.0, key="review_audit_rate"
    )
    c2.number_input("Seed", min_value=0, value=0, step=1, key="review_seed")
    c3.number_input("Reviewers per case (N)", min_value=1, max_value=9, value=1, step=1, key="review_n")
    st.button(label, key="review_build", on_click=_build, args=(gen_id,))


st.title("Review queue")
store = _ui.store()
flash = st.session_state.pop("review_flash", None)
if flash:
    getattr(st, flash[0])(_ui.md_escape(flash[1]))

with _ui.boundary():
    judged = {g: len(review.runs_on(store, g)) for g in store.ids("generation")}
    gens = sorted((g for g, n in judged.items() if n), key=lambda g: (-judged[g], g))  # most runs first
    if not gens:
        st.info("No generation in this data directory has judged runs: nothing to review.")
        st.stop()
    _ui.sync_widget("review_gen", "gen", gens)
    gen_id = st.selectbox(
        "Generation",
        gens,
        key="review_gen",
        on_change=_ui.widget_to_qp,
        args=("review_gen", "gen"),
        kwargs={"clear": ("queue", "item", "round", "criterion")},
    )
    st.text_input(
        "Reviewer (required: decisions are recorded under this name)", key="review_reviewer", placeholder="your name"
    )
    hold = _ui.holdout_toggle("review", [store.generation(gen_id).manifest.suite_id])
    _ui.suite_version_warning(review.runs_on(store, gen_id))
    qs = review.queues(store, gen_id)
    if not qs:
        det = review.detect(store, gen_id)
        st.info(
            _ui.md_escape(
                f"No review queue on {gen_id} yet. Building one raises {len(det['raised'])} of its "
                f"{det['population']} cases and draws the audit from the {len(det['agreed'])} agreed "
                "ones; it is written to the state directory, never to the data."
            )
        )
        st.dataframe(
            pd.DataFrame([{"reason": k, "cases": v, "what": review.REASONS[k]} for k, v in det["counts"].items()]),
            hide_index=True,
        )
        build_form(gen_id, "Build queue")
        st.stop()
    ids = [q["queue_id"] for q in qs]
    _ui.sync_widget("review_queue", "queue", ids)
    if st.session_state.get("review_queue") not in ids:
        st.session_state["review_queue"] = ids[-1]
    queue_id = st.selectbox(
        "Queue",
        ids,
        key="review_queue",
        on_change=_ui.widget_to_qp,
        args=("review_queue", "queue"),
        kwargs={"clear": ("item", "round", "criterion")},
    )
    q = next(x for x in qs if x["queue_id"] == queue_id)
    st.caption(
        _ui.md_escape(
            f"Built {q['created_at']} with seed {q['seed']}: {q['flagged']} raised cases, {q['audit_sampled']} of "
            f"{q['agreed']} agreed cases drawn for the audit (rate {q['audit_rate']:.3g}), {q['reviewers_required']} "
            f"reviewer(s) per case; runs read: {', '.join(q['runs'])}."
        )
    )
    with st.expander("Build a new queue"):
        build_form(gen_id, "Build a new queue")

    all_cases = review.cases(store, queue_id)
    f1, f2, f3, f4 = st.columns(4)
    f1.multiselect("Reason", [*review.PRIORITY, review.AUDIT], key="review_f_reason")
    f2.multiselect("Criterion", sorted({c["criterion"] for c in all_cases}), key="review_f_criterion")
    f3.multiselect("Run", q["runs"], key="review_f_run", format_func=_run_label)
    f4.multiselect("Class", sorted({c["class"] or "(none)" for c in all_cases}), key="review_f_class")
    o1, o2 = st.columns(2)
    blind = o1.toggle("Blind first: hide the judges' verdicts until I decide", value=True, key="review_blind")
    hide = o2.toggle("Hide judge identities", value=False, key="review_hide_judges")

    reviewer = _reviewer()
    filters = _filters()
    prog = review.progress(store, queue_id, reviewer or None, filters)
    if not reviewer:
        st.info("Enter your name above to review: every decision is recorded under it.")
        st.caption(
            f"{prog['cases']} cases match the filters; {prog['complete']} have their "
            f"{prog['reviewers_required']} review(s)."
        )
        st.stop()
    done = prog["handled_by_me"]
    st.progress(
        done / prog["cases"] if prog["cases"] else 1.0,
        text=f"You: {done} of {prog['cases']} handled; {prog['waiting_for_me']} waiting for you; "
        f"complete (with {prog['reviewers_required']} review(s)): {prog['complete']}.",
    )

    item_q, crit_q = _ui.qp("item"), _ui.qp("criterion")
    if item_q is None or crit_q is None:
        nxt = review.next_case(store, queue_id, reviewer, filters)
        if nxt is None:
            st.success("Nothing left for you in this queue with these filters.")
        else:
            _goto(nxt)
            item_q, crit_q = nxt["item_id"], nxt["criterion"]
    if item_q is not None and crit_q is not None:
        round_q = _ui.qp_int("round", 1)
        case = (item_q, round_q, crit_q)
        view = review.case_view(store, queue_id, *case, reviewer, blind=blind, hide_judges=hide, include_holdout=hold)
        st.subheader(f"Case {view['rank']}: {view['criterion']}")
        st.caption(
            _ui.md_escape(f"Link: ?gen={gen_id}&queue={queue_id}&item={item_q}&round={round_q}&criterion={crit_q}")
        )
        _ui.labelled_text("What the criterion asks", view["description"] or view["criterion"])
        left, right = st.columns(2)
        with left:
            _ui.labelled_text("Input", view["input"])
            _ui.labelled_text("Context", view["context"])
            if not _ui.missing(view["reference"]):
                _ui.labelled_text("Reference", view["reference"])
            _ui.labelled_text("Must have", "\n".join(f"- {m}" for m in view["must_have"]) or None)
            if view["wrong_if"]:
                _ui.labelled_text("Wrong if", "\n".join(f"- {m}" for m in view["wrong_if"]))
        with right:
            _ui.labelled_text(
                f"Output (item {item_q}, round {round_q})" + (" (the system abstained)" if view["abstained"] else ""),
                view["output"],
            )

        mine = view["mine"]
        if mine is not None:
            st.info(
                _ui.md_escape(
                    f"Your standing edit: {mine['outcome']} {mine['value'] or ''} (edit {mine['edit_id']})"
                    + (f"; note: {mine['note']}" if mine["note"] else "")
                )
            )
        st.text_area("Note (optional; required for 'the test is wrong')", key="review_note", height=68)
        st.text_input("Failure tags (comma-separated)", key="review_tags")
        word = "Revise: " if view["decided"] else ""
        cols = st.columns(len(view["choices"]) + 2)
        for col, value in zip(cols, view["choices"]):
            col.button(
                f"{word}{value}",
                key=f"review_decide_{value}",
                shortcut=decision_key(value),
                on_click=_record,
                args=(queue_id, case, "decided", value),
                type="primary",
            )
        cols[-2].button(
            "The test is wrong",
            key="review_test_wrong",
            shortcut=NAV_KEYS["test_wrong"],
            on_click=_record,
            args=(queue_id, case, "test_wrong"),
        )
        cols[-1].button(
            "Skip",
            key="review_skip",
            shortcut=NAV_KEYS["skip"],
            on_click=_record,
            args=(queue_id, case, "skipped"),
            disabled=view["decided"],
        )
        n1, n2 = st.columns(2)
        n1.button("Undo my last edit", key="review_undo", shortcut=NAV_KEYS["undo"], on_click=_undo, args=(queue_id,))
        n2.button("Next case", key="review_next", shortcut=NAV_KEYS["next"], on_click=_next, args=(queue_id,))
        st.caption("Keys: " + key_caption(view["choices"]) + "; T the test is wrong; S skip; U undo; N next.")

        if not view["revealed"]:
            st.info("Blind first: the judges' verdicts and why this case is in the queue are shown once you decide.")
        else:
            st.subheader("What the judges said")
            reasons = view["reasons"] or []
            st.caption(
                _ui.md_escape(
                    "In the queue because: "
                    + (
                        "; ".join(review.REASONS[r] for r in reasons)
                        if reasons
                        else "it was drawn for the random audit of agreed cases"
                    )
                )
            )
            for v in view["verdicts"] or []:
                said = "ERROR" if v["passed"] is None else ("pass" if v["passed"] else "FAIL")
                extra = "".join(f", {k} {v[k]}" for k in ("label", "score") if not _ui.missing(v[k]))
                lines = [
                    f"{v['judge']} round {v['judge_round']}: {said} (judge said {v['raw_verdict']}{extra})",
                    f"reason: {v['reason'] if v['reason'] is not None else '(none)'}",
                ]
                for k in ("covered", "missed", "triggered"):
                    if v[k] is not None:
                        lines.append(f"{k}: {'; '.join(v[k]) or '(none)'}")
                if v["error"]:
                    lines.append(f"error: {v['error']}")
                _ui.show_text("\n".join(lines))
            if view["detail"]:
                _ui.labelled_text(
                    "What raised it",
                    "\n".join(review.describe_detail(code, d) for code, ds in view["detail"].items() for d in ds),
                )
        if view["decided"]:
            others = view["others"] or []
            st.subheader("Other reviewers")
            if others:
                _ui.show_text(
                    "\n".join(
                        f"{o['reviewer']}: {o['outcome']} {o['value'] or ''}"
                        + (f" ({o['source']})" if o.get("source") else "")
                        + (f"; note: {o['note']}" if o.get("note") else "")
                        for o in others
                    )
                )
            else:
                st.caption("No other reviewer has decided this case.")

    st.divider()
    st.download_button(
        "Download labels (CSV, every edit with its provenance)",
        evalcore.export_labels(evalcore.LabelStore(store), "csv", None, history=True),
        file_name="labels-history.csv",
        mime="text/csv",
        key="review_labels_csv",
    )
