"""Review queue: one case at a time from the adjudication queue of a generation (disagreements plus
a random audit of agreed cases), decided blind first; decisions are appended to the label store.

Deep link to a case: ``?gen=GEN&queue=QUEUE&item=ITEM&round=N&criterion=C``. Keyboard: one key
per decision (P / F, 1 2 3, or the score), after which the next case comes at once; T (the test
is wrong), S (skip), M (write a note; Esc leaves it), B (previous case), U (undo), N (next). A case
handed out is leased to the reviewer (evalcore.review.claims), so a team can work one queue at
once. Everything here calls evalcore.review; docs/REVIEW.md explains the queue.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import review
from pages import _access, _card, _select, _text, _ui

NAV_KEYS = {"test_wrong": "T", "skip": "S", "undo": "U", "next": "N", "back": "B"}
NOTE_LABEL = "Note (M to write, Esc to leave; required for 'the test is wrong')"
TRAIL = "review_trail"  # the cases this browser session was on, for "previous case"
# M focuses the note box and Esc leaves it, so a note takes one key and the decision keys work again;
# a key pressed while a toggle has the focus (after a click) goes to the page's shortcuts
NOTE_KEYS_JS = """<script>
(() => {
  const doc = window.document;
  if (doc.__evalcoreNoteKeys) return;
  doc.__evalcoreNoteKeys = true;
  doc.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
    if (e.key === "Escape" && typing) { t.blur(); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "m" || e.key === "M") {
      const box = doc.querySelector('textarea[aria-label^="Note"]');
      if (box) { e.preventDefault(); e.stopPropagation(); box.focus(); }
    }
  }, true);
  // a toggle keeps the focus after a click, and Streamlit's shortcut keys ignore every key then:
  // a plain key pressed on a toggle lets go of it and goes to the page instead
  doc.addEventListener("keydown", (e) => {
    const t = e.target;
    if (!(t && t.tagName === "INPUT" && t.type === "checkbox")) return;
    if (e.key.length !== 1 || e.key === " " || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    t.blur();
    doc.body.dispatchEvent(new KeyboardEvent("keydown", {key: e.key, code: e.code, keyCode: e.keyCode,
      which: e.which, bubbles: true, cancelable: true}));
  }, true);
})();
</script>"""
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


def _reviewer() -> str:
    return _access.current_name()


def _role() -> str:
    return "adjudicator" if st.session_state.get("review_adjudicate") else "reviewer"


def _remember(case: tuple) -> None:
    trail = st.session_state.setdefault(TRAIL, [])
    if not trail or trail[-1] != case:
        trail.append(case)
        del trail[:-50]


def _goto(case: dict | None) -> None:
    if case is None:
        _ui.set_qp(item=None, round=None, criterion=None)
    else:
        _ui.set_qp(item=case["item_id"], round=case["gen_round"], criterion=case["criterion"])


def _record(queue_id: str, case: tuple[str, int, str], outcome: str, value: str | None = None) -> None:
    """on_click of a decision, test-is-wrong or skip button: record it, then go straight on to
    the next case (unless the reviewer asked to see the judges after each decision)."""
    s = st.session_state
    tags = [t.strip() for t in (s.get("review_tags") or "").split(",") if t.strip()]
    before = _estimates(queue_id, case[2]) if outcome == "decided" else {}
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
            role=_role(),
            claims=_access.claims(),  # the role is checked in the core, now: a revoked one refuses
        )
    except evalcore.EvalcoreError as err:
        s["review_flash"] = ("error", err.message)
        return
    s["review_note"] = ""
    s["review_tags"] = ""
    _remember(case)
    if outcome == "skipped":
        s["review_flash"] = ("info", f"Skipped {case[0]} ({case[2]}).")
    else:
        s["review_flash"] = (
            "success",
            f"Recorded edit {e['edit_id']}: {e['outcome']} {e['value'] or ''} on {case[0]} ({case[2]}).",
        )
    if outcome == "decided":
        s["review_narrowed"] = _narrowed(case[2], before, _estimates(queue_id, case[2]))
    if outcome == "skipped" or not s.get("review_reveal_after"):
        _next(queue_id)


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


def _next(queue_id: str) -> None:
    try:
        _goto(review.next_case(_ui.store(), queue_id, _reviewer(), _filters(), role=_role()))
    except evalcore.EvalcoreError as err:
        st.session_state["review_flash"] = ("error", err.message)


def _back() -> None:
    trail = st.session_state.get(TRAIL) or []
    if not trail:
        st.session_state["review_flash"] = ("info", "No earlier case in this browser session.")
        return
    item, gen_round, crit = trail.pop()
    _goto({"item_id": item, "gen_round": gen_round, "criterion": crit})


def _undo(queue_id: str) -> None:
    s = st.session_state
    try:
        w = review.undo(_ui.store(), queue_id, _reviewer(), claims=_access.claims())
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
            audit=str(s.get("review_audit", "uniform")),
            claims=_access.claims(),
        )
    except evalcore.EvalcoreError as err:
        s["review_flash"] = ("error", err.message)
        return
    s["review_flash"] = (
        "success",
        f"Built queue {q['queue_id']}: {q['flagged']} raised cases and {q['audit_sampled']} audited agreed cases.",
    )
    _ui.set_qp(queue=q["queue_id"], item=None, round=None, criterion=None)


def _progress_text(prog: dict) -> str:
    return (
        f"You: {prog['handled_by_me']} of {prog['cases']} handled; {prog['waiting_for_me']} waiting for you; "
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
narrowed = st.session_state.pop("review_narrowed", None)
if narrowed:
    st.info(_text.md_escape(narrowed))

with _text.boundary():
    me = _access.identity("review", verb="Reviewing")
    if me is None:
        st.caption("Every decision is recorded under your name.")
        st.stop()
    reviewer = me.name
    card_slot = st.container()  # the card, when on, right under the name: the case on the first screen
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
        st.info(
            _text.md_escape(
                f"No review queue on {gen_id} yet. Building one raises {det['raised']} of its "
                f"{det['population']} cases and draws the audit from the {det['agreed']} agreed "
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
                f"Built {q['created_at']} with seed {q['seed']}: {q['flagged']} raised cases, {q['audit_sampled']} of "
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
        o1, o2, o3 = st.columns(3)
        blind = o1.toggle("Blind first: hide the judges' verdicts until I decide", value=True, key="review_blind")
        hide = o2.toggle("Hide judge identities", value=False, key="review_hide_judges")
        o3.toggle(
            "Show the judges after each decision (then N for the next case)", value=False, key="review_reveal_after"
        )
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
    filters = _filters()
    prog = review.progress(store, queue_id, reviewer, filters)

    card_mode = st.toggle(
        "Card: one screen per case, keys answered in the browser (1, 2, 3... decide; T S M B U N)",
        key="review_card_mode",
        value=_ui.qp("card") == "1",
    )
    if not card_mode:
        st.progress(prog["handled_by_me"] / prog["cases"] if prog["cases"] else 1.0, text=_progress_text(prog))
    item_q, crit_q = _ui.qp("item"), _ui.qp("criterion")
    if card_mode:
        with card_slot:
            _review_card(store, queue_id, reviewer, role, filters, blind, hide, hold, adjudicating)
    elif item_q is None or crit_q is None:
        nxt = review.next_case(store, queue_id, reviewer, filters, role=role)
        if nxt is None:
            st.success(
                "No disagreement waits for an adjudicator in this queue."
                if adjudicating
                else "Nothing left for you in this queue with these filters."
            )
            n0, n1 = st.columns(2)
            n0.button("Previous case", key="review_back", shortcut=NAV_KEYS["back"], on_click=_back)
            n1.button(
                "Undo my last edit", key="review_undo", shortcut=NAV_KEYS["undo"], on_click=_undo, args=(queue_id,)
            )
        else:
            _goto(nxt)
            item_q, crit_q = nxt["item_id"], nxt["criterion"]
    if not card_mode and item_q is not None and crit_q is not None:
        round_q = _ui.qp_int("round", 1)
        case = (item_q, round_q, crit_q)
        view = review.case_view(
            store, queue_id, *case, reviewer, blind=blind, hide_judges=hide, include_holdout=hold, role=role
        )
        st.subheader(f"Case {view['rank']}: {view['criterion']}" + (" (adjudication)" if adjudicating else ""))
        busy = [
            x["reviewer"]
            for x in review.leases(store, queue_id)
            if (x["item_id"], x["gen_round"], x["criterion"]) == case and x["reviewer"] != reviewer
        ]
        if busy and not view["decided"]:
            st.warning(_text.md_escape(f"{', '.join(busy)} has this case open right now."))
        sealed = bool(view.get("withheld"))  # deciding waits for the pairwise session to close
        if sealed:
            st.warning(
                _text.md_escape(
                    f"This answer is withheld: its generation is an arm of the open pairwise session "
                    f"{view['withheld']}. Its cases are decided once that session is closed."
                )
            )
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
                disabled=sealed,
                width="stretch",
            )
        cols[-2].button(
            "The test is wrong",
            key="review_test_wrong",
            shortcut=NAV_KEYS["test_wrong"],
            on_click=_record,
            args=(queue_id, case, "test_wrong"),
            disabled=sealed,
            width="stretch",
        )
        cols[-1].button(
            "Skip",
            key="review_skip",
            shortcut=NAV_KEYS["skip"],
            on_click=_record,
            args=(queue_id, case, "skipped"),
            disabled=view["decided"] or adjudicating,
            width="stretch",
        )
        n0, n1, n2 = st.columns(3)
        n0.button("Previous case", key="review_back", shortcut=NAV_KEYS["back"], on_click=_back, width="stretch")
        n1.button(
            "Undo my last edit",
            key="review_undo",
            shortcut=NAV_KEYS["undo"],
            on_click=_undo,
            args=(queue_id,),
            width="stretch",
        )
        n2.button(
            "Next case", key="review_next", shortcut=NAV_KEYS["next"], on_click=_next, args=(queue_id,), width="stretch"
        )
        st.caption(
            "Keys: "
            + key_caption(view["choices"])
            + "; T the test is wrong; S skip; M note; B previous; U undo; N next."
        )
        c_note, c_tags = st.columns([3, 1])
        c_note.text_area(NOTE_LABEL, key="review_note", height=68)
        c_tags.text_input("Failure tags (comma-separated)", key="review_tags")
        st.html(NOTE_KEYS_JS, unsafe_allow_javascript=True)
        mine = view["mine"]
        if mine is not None:
            st.info(
                _text.md_escape(
                    f"Your standing edit: {mine['outcome']} {mine['value'] or ''} (edit {mine['edit_id']})"
                    + (f"; note: {mine['note']}" if mine["note"] else "")
                )
            )
        _text.labelled_text("What the criterion asks", view["description"] or view["criterion"])
        left, right = st.columns(2)
        with left:
            _text.labelled_text("Input", view["input"])
            _text.labelled_text("Context", view["context"])
            if not _text.missing(view["reference"]):
                _text.labelled_text("Reference", view["reference"])
            _text.labelled_text("Must have", "\n".join(f"- {m}" for m in view["must_have"]) or None)
            if view["wrong_if"]:
                _text.labelled_text("Wrong if", "\n".join(f"- {m}" for m in view["wrong_if"]))
        with right:
            _text.labelled_text(
                f"Output (item {item_q}, round {round_q})" + (" (the system abstained)" if view["abstained"] else ""),
                view["output"],
            )
        st.caption(
            _text.md_escape(f"Link: ?gen={gen_id}&queue={queue_id}&item={item_q}&round={round_q}&criterion={crit_q}")
        )

        if not view["revealed"]:
            st.info("Blind first: the judges' verdicts and why this case is in the queue are shown once you decide.")
        else:
            st.subheader("What the judges said")
            reasons = view["reasons"] or []
            st.caption(
                _text.md_escape(
                    "In the queue because: "
                    + (
                        "; ".join(review.REASONS[r] for r in reasons)
                        if reasons
                        else "it was drawn for the random audit of agreed cases"
                    )
                )
            )
            for v in view["verdicts"] or []:
                said = _text.verdict_word(v["passed"])
                extra = "".join(f", {k} {v[k]}" for k in ("label", "score") if not _text.missing(v[k]))
                lines = [
                    f"{v['judge']} round {v['judge_round']}: {said} (judge said {v['raw_verdict']}{extra})",
                    f"reason: {v['reason'] if v['reason'] is not None else '(none)'}",
                ]
                for k in ("covered", "missed", "triggered"):
                    if v[k] is not None:
                        lines.append(f"{k}: {'; '.join(v[k]) or '(none)'}")
                if v["error"]:
                    lines.append(f"error: {v['error']}")
                _text.show_text("\n".join(lines))
            if view["detail"]:
                _text.labelled_text(
                    "What raised it",
                    "\n".join(review.describe_detail(code, d) for code, ds in view["detail"].items() for d in ds),
                )
        if view["others"] is not None:
            others = view["others"]
            st.subheader("Other reviewers")
            if others:
                _text.show_text(
                    "\n".join(
                        f"{o['reviewer']}{' (adjudicator)' if o.get('role') == 'adjudicator' else ''}: "
                        f"{o['outcome']} {o['value'] or ''}"
                        + (f" ({o['source']})" if o.get("source") else "")
                        + (f"; note: {o['note']}" if o.get("note") else "")
                        for o in others
                    )
                )
            else:
                st.caption("No other reviewer has decided this case.")
            g = view["gold"]
            if g is not None:
                st.caption(
                    _text.md_escape(
                        f"Gold: {g['status']}"
                        + (f" = {g['value']}" if g["value"] is not None else "")
                        + (f" (settled by {g['adjudicator']})" if g["adjudicator"] else "")
                        + f"; {g['decided']} of {g['required']} reviewer(s) decided."
                    )
                )

    st.divider()
    st.download_button(
        "Download labels (CSV, every edit with its provenance)",
        lambda: evalcore.export_labels(evalcore.LabelStore(store), "csv", None, history=True) or "",
        file_name="labels-history.csv",
        mime="text/csv",
        key="review_labels_csv",
        on_click="ignore",
    )
