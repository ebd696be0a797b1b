"""What a page shows: the run pickers (:func:`two_runs`), the judge and generation rounds
(:func:`rounds`), the sidebar's item-class slice and holdout toggle, all kept in the link; and the
notes on the runs in view (an older suite version, a curated suite).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

import evalcore
from evalcore import analysis, review
from pages._access import current_name
from pages._cache import analysis_call, summary
from pages._text import boundary, code_span, md_escape
from pages._ui import choose_runs, chosen_runs, keep, qp, set_qp, store, sync_widget, widget_to_qp


def criteria_runs() -> list[evalcore.RunSummary]:
    """Runs with per-criterion verdicts (not pairwise graders) for a page's run pickers; stops the
    page with a note when there are none, and warns about the runs whose generation answered an
    older version of its suite (show them in a picker with :func:`run_label`)."""
    runs = [r for r in summary(evalcore.runs_summary) if r.kind == "criteria" and r.verdicts]
    if not runs:
        st.info("No runs with criterion verdicts in this data directory.")
        st.stop()
    suite_version_warning([r.run_id for r in runs])
    return runs


def suite_suffix(run: evalcore.RunSummary | dict) -> str:
    """What a run picker appends to a run (a summary, or its ``analysis.run_marks`` entry) on an
    older version of its suite: `` (⚠ suite v1, superseded by v2)``; nothing on the current version."""
    mark = run.get("suite_mark") if isinstance(run, dict) else run.suite_mark
    return f" (⚠ {mark})" if mark else ""


def run_label(run: evalcore.RunSummary) -> str:
    """A run as a picker shows it: its id, ``(⚠ partial)`` / ``(⚠ polluted)`` when it is not
    complete, and :func:`suite_suffix`."""
    status = "" if run.status == "complete" else f" (⚠ {run.status})"
    return run.run_id + status + suite_suffix(run)


def suite_version_warning(run_ids: Sequence[str] | None = None) -> None:
    """One st.warning naming the runs (of ``run_ids``, default all) whose generation answered an
    older version of its suite: their items were repaired since, so their figures may rest on a
    wrong test."""
    runs = evalcore.analysis.run_marks(store()).values()  # manifests only: no scan of the verdicts
    wanted = None if run_ids is None else set(run_ids)
    marked = [r for r in runs if r.get("suite_mark") and (wanted is None or r["run_id"] in wanted)]
    if marked:
        st.warning(
            "On an old suite version (items repaired since; evalcore suite versions): "
            + "; ".join(md_escape(f"{r['run_id']}: {r['suite_mark']}") for r in marked)
        )


def curated_note(suite_ids: Sequence[str]) -> None:
    """A caption beside absolute rates when they come from a curated suite."""
    cur = review.curated_suites(store(), list(dict.fromkeys(suite_ids)))
    if cur:
        st.caption(
            md_escape(
                f"From a curated suite ({', '.join(cur)}): absolute rates describe the items picked "
                "by hand, not a population."
            )
        )


def two_runs(
    by_id: dict[str, evalcore.RunSummary],
    defaults: tuple[str, str],
    keys: tuple[str, str],
    labels: tuple[str, str],
    columns: Sequence[Any],
) -> tuple[str, str]:
    """Two run pickers bound to the query parameters ``a`` and ``b`` (a link naming an unknown run
    is one st.error, a run without criterion verdicts one warning); each option shows the run's
    mode, generation, status and suite-version mark. A link naming neither opens on the runs last
    picked (:func:`pages._ui.chosen_runs`): A the first, B the second or else the default that is
    not A; the two picked here are remembered for the next page."""
    s = store()
    run_ids = list(by_id)
    carried = [r for r in chosen_runs() if r in by_id]
    if carried and qp("a") is None and qp("b") is None:
        b = carried[1] if len(carried) > 1 else (defaults[1] if defaults[1] != carried[0] else defaults[0])
        set_qp(a=carried[0], b=b)
    for param in ("a", "b"):
        asked = qp(param)
        if asked is not None and asked not in by_id:
            with boundary():
                s.run(asked)  # a bad or unknown id is one st.error
                st.warning(md_escape(f"Run {asked} has no criterion verdicts."))
    for key, param, default in zip(keys, ("a", "b"), defaults):
        sync_widget(key, param, run_ids)
        st.session_state.setdefault(key, default)

    def fmt(r: str) -> str:
        run = by_id[r]
        return (
            f"{r} ({run.mode}, {run.gen_id})"
            + ("" if run.status == "complete" else f" ⚠ {run.status}")
            + suite_suffix(run)
        )

    def picked_here(key: str, param: str) -> None:
        widget_to_qp(key, param)
        choose_runs([st.session_state[k] for k in keys])

    picked = [
        col.selectbox(label, run_ids, key=key, on_change=picked_here, args=(key, param), format_func=fmt)
        for col, label, key, param in zip(columns, labels, keys, ("a", "b"))
    ]
    return picked[0], picked[1]


def rounds(prefix: str, k: int, n_rounds: int, columns: Sequence[Any]) -> tuple[str, str]:
    """The "Judge verdict" (judge round 1 to ``k``, and their majority when ``k > 1``) and
    "Generation round" (every round, or 1 to ``n_rounds``) pickers in ``columns``, keyed
    ``PREFIX_judge`` and ``PREFIX_round`` and bound to the query parameters ``judge`` and ``round``."""

    def pick(col: Any, label: str, param: str, options: list[str], fmt: Callable[[str], str]) -> str:
        key = f"{prefix}_{param}"
        keep(key, options)
        sync_widget(key, param, options)
        return col.selectbox(label, options, key=key, on_change=widget_to_qp, args=(key, param), format_func=fmt)

    judge = pick(
        columns[0],
        "Judge verdict",
        "judge",
        [str(i) for i in range(1, k + 1)] + (["majority"] if k > 1 else []),
        lambda v: f"majority of {k} rounds (a tie fails)" if v == "majority" else f"judge round {v}",
    )
    gen_round = pick(
        columns[1],
        "Generation round",
        "round",
        ["all"] + [str(i) for i in range(1, n_rounds + 1)],
        lambda v: "every round" if v == "all" else f"round {v}",
    )
    return judge, gen_round


HOLDOUT_LABEL = "Show holdout items"
_WHO_KEYS = ("suite_by",)  # beside current_name(): the Suites page's own name field


def class_slice(page: str, suite_ids: Sequence[str]) -> tuple[str, ...]:
    """The sidebar "Only these item classes" of one page: a slice of every figure on it (empty:
    every item); kept in the link as ``?class=a,b``."""
    classes: list[str] = []
    with boundary():
        for sid in suite_ids:
            classes += [c for c in analysis_call(analysis.item_classes, sid) if c not in classes]
    if len(classes) < 2:
        return ()
    key = f"slice|{page}"
    linked = [c for c in (qp("class") or "").split(",") if c in classes]
    if key not in st.session_state and linked:
        st.session_state[key] = linked
    picked = st.sidebar.multiselect(
        "Only these item classes", classes, key=key, help="A slice: every figure on this page counts these items only."
    )
    set_qp(**{"class": ",".join(picked) or None})
    return tuple(picked)


def slice_caption(classes: Sequence[str], what: str, command: Sequence[str]) -> None:
    """The caption under a page's slice: which classes, ``what`` the slice does to the page's
    figures, and the command that gives the same figures (``command`` + ``--class C`` each)."""
    if not classes:
        return
    cmd = shlex.join(["evalcore", *command, *(x for c in classes for x in ("--class", c))])
    st.caption(
        f"Slice: items of class {md_escape(', '.join(classes))} only. {md_escape(what)} Same figures: " + code_span(cmd)
    )


def holdout_toggle(page: str, suite_ids: Sequence[str]) -> bool:
    """The sidebar toggle "Show holdout items" of one page (off by default, and off again on every
    other page). While it is on, every render of the page appends one look per suite in view
    that has holdout items to the state directory (evalcore.analysis.suites.log_look; ``evalcore suite
    looks SUITE``), with the viewer's name when known."""
    on = st.sidebar.toggle(
        HOLDOUT_LABEL, key=f"holdout|{page}", help="Holdout items are never used to tune; every look at them is logged."
    )
    if not on:
        st.sidebar.caption("Holdout items are hidden from lists and figures.")
        return False
    who = current_name() or None
    if who is None:
        typed = st.sidebar.text_input("Your name (logged with each look)", key=f"holdout_who|{page}")
        who = (typed or "").strip() or next(
            (str(st.session_state[k]).strip() for k in _WHO_KEYS if str(st.session_state.get(k) or "").strip()), None
        )
    s = store()
    logged = []
    with boundary():
        for sid in dict.fromkeys(suite_ids):
            if analysis.holdout_count(s, sid):
                analysis.log_look(s, sid, page, who)
                logged.append(sid)
    st.sidebar.caption(
        md_escape(
            "Holdout items are shown; this view is logged" + (f" for {', '.join(logged)}" if logged else "") + "."
        )
    )
    return True


def new_pick(key: str, value: Any) -> bool:
    """Whether a table's or chart's selection ``value`` is a new click rather than the same
    selection shown again on a rerun; remembers it under ``key``."""
    slot = f"_picked|{key}"
    if st.session_state.get(slot) == value:
        return False
    st.session_state[slot] = value
    return True
