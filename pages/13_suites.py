"""Suites: pick a suite; its version, items, holdout items, age and how often it was used to tune;
the runs on it (those on an older version marked); its versions with their repairs; the findings
of the admission checks and the open "the test is wrong" flags; the items with their findings; and
a form that repairs one field of one item as a new suite version. Holdout items are hidden unless
"Show holdout items" is on (each view is then logged).

Deep link: ``?suite=SUITE[&item=ITEM]``.

Figures: evalcore.review.suites.overview (``evalcore suite show SUITE --json``), check (``evalcore suite
check SUITE --json``), versions (``evalcore suite versions SUITE --json``), items (``evalcore
suite items SUITE --json``); the form calls evalcore.review.suites.repair (``evalcore suite repair``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis, review
from pages import _access, _cache, _select, _text, _ui


def _as_text(value) -> str | None:
    if value is None:
        return None
    return "\n".join(value) if isinstance(value, list) else str(value)


def _has_item(store, suite_id: str, item_id: str, hold: bool) -> bool:
    try:
        review.item(store, suite_id, item_id, include_holdout=hold)
        return True
    except evalcore.EvalcoreError:  # not in the suite, or held out and hidden: not offered
        return False


_ui.title("Suites")
store = _ui.store()
flash = st.session_state.pop("suite_flash", None)
if flash:
    getattr(st, flash[0])(_text.md_escape(flash[1]))

with _text.boundary():
    ids = [s.suite_id for s in _cache.summary(evalcore.suites_summary)]
    if not ids:
        st.info("No suites in this data directory.")
        st.stop()
    _ui.sync_widget("suite_pick", "suite", ids)
    suite_id = st.selectbox(
        "Suite",
        ids,
        key="suite_pick",
        on_change=_ui.widget_to_qp,
        args=("suite_pick", "suite"),
        kwargs={"clear": ("item",)},
    )
    hold = _select.holdout_toggle("suites", [suite_id])
    ov = review.overview(store, suite_id)
    res = review.visible_findings(store, _cache.suite_call(review.check, suite_id), hold)
    runs = [r for r in _cache.summary(evalcore.runs_summary, include_holdout=hold) if r.suite_id == suite_id]

    # ------------------------------------------------------------ headline
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("Version", f"v{ov['current_version']}")
    m1.caption(
        f"{len(ov['versions'])} version(s); version 1 is the data directory's, repairs live in the state directory"
    )
    m2.metric("Items", ov["items"])
    m2.caption(f"{ov['holdout_items']} holdout items, " + ("shown (this view is logged)" if hold else "hidden below"))
    m3.metric("Age", f"{ov['age_days']} days")
    m3.caption(
        f"since the suite was frozen ({ov['created_at'][:10]}); the current version is "
        f"{ov['current_version_age_days']} days old"
    )
    t = ov["tuning"]
    m4.metric("Used to tune", t["uses"])
    m4.caption(
        f"{t['generations']} generation(s) made on it and {t['runs']} judge run(s) over them: each is a "
        "measurement a change could have been tuned against"
    )
    m5.metric("Open flags", ov["flags"]["open"])
    m5.caption(f"'the test is wrong' flags from the label store not yet repaired; {ov['flags']['resolved']} resolved")
    _select.curated_note([suite_id])
    st.caption(f"Looks at the holdout items logged so far: {ov['looks']} (evalcore suite looks).")

    # ------------------------------------------------------------ runs on the suite
    st.subheader("Runs on this suite")
    _select.suite_version_warning([r.run_id for r in runs])
    if runs:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "run": r.run_id,
                        "generation": r.gen_id,
                        "suite version": r.suite_mark or f"v{r.suite_version}",
                        "status": r.status,
                        "mode": r.mode,
                        "judge model": r.judge_model,
                    }
                    for r in runs
                ]
            ),
            hide_index=True,
            key="suite_runs",
        )
    else:
        st.info("No run judges answers to this suite.")

    # ------------------------------------------------------------ versions
    st.subheader("Versions")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "version": f"v{v['version']}" + (" (current)" if v["current"] else ""),
                    "created": v["created_at"],
                    "content hash": v["content_hash"],
                    "items": v["n_items"],
                    "stored in": v["where"],
                    "changes": "; ".join(
                        f"{c['item_id']} {c['field']} by {c['by']}"
                        + (f" (resolves flag {c['flag']})" if c["flag"] is not None else "")
                        + f": {c['why']}"
                        for c in v["changes"]
                    )
                    or "-",
                }
                for v in ov["versions"]
            ]
        ),
        hide_index=True,
        key="suite_versions",
    )

    # ------------------------------------------------------------ findings
    st.subheader("Findings")
    st.caption(
        _text.md_escape(
            f"Admission checks on v{res['version']}: "
            + ", ".join(f"{k} {v}" for k, v in res["counts"].items())
            + (
                f"; {res['holdout_findings_hidden']} findings on holdout items hidden"
                if res["holdout_findings_hidden"]
                else ""
            )
            + f". Near duplicates: Jaccard of character {res['shingle']}-grams >= {res['threshold']:g}."
        )
    )
    for note in res.get("notes") or []:
        st.info(_text.md_escape(note))
    if res["findings"]:
        st.dataframe(
            pd.DataFrame(res["findings"])[["check", "item_id", "field", "problem", "detail"]],
            hide_index=True,
            key="suite_findings",
        )
    else:
        st.success("No findings.")

    # ------------------------------------------------------------ items
    st.subheader("Items")
    c_only, c_page, _ = st.columns([2, 1, 3])
    only = c_only.toggle("Only items with findings or open flags", key="suite_only_findings")
    # one read of the page asked for (its number kept by the widget), the count with it
    page_key = f"suite_items_page_{suite_id}_{only}"

    def items_page(page: int) -> dict:
        return review.items(
            store,
            suite_id,
            None,
            hold,
            res["findings"],
            offset=(page - 1) * _ui.TABLE_PAGE,
            limit=_ui.TABLE_PAGE,
            only_findings=only,
        )

    wanted = int(st.session_state.get(page_key, 1))
    it = items_page(wanted)
    pages = max(1, -(-it["items"] // _ui.TABLE_PAGE))
    if wanted > pages:  # fewer items than when the page was picked (holdout hidden again): the last page
        st.session_state[page_key] = pages
        it = items_page(pages)
    c_page.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, key=page_key)
    shown = len(it["rows"])
    st.caption(
        f"{it['items']:,} items of v{it['version']}"
        + (" with findings or open flags" if only else "")
        + (f"; {it['holdout_hidden']:,} holdout items hidden" if it["holdout_hidden"] else "")
        + (f"; items {it['offset'] + 1:,}-{it['offset'] + shown:,} in item id order" if shown < it["items"] else "")
        + f". `evalcore suite items {suite_id} --offset {it['offset']} --limit {_ui.TABLE_PAGE} --json` lists the same."
    )
    if it["rows"]:
        st.dataframe(
            pd.DataFrame(
                [
                    {k: r[k] for k in ("item_id", "class", "difficulty", "holdout", "findings", "open_flags", "input")}
                    for r in it["rows"]
                ]
            ),
            hide_index=True,
            key="suite_items",
        )

    # ------------------------------------------------------------ repair
    st.subheader("Repair an item")
    # the picker offers the flagged items, the items with findings and this page's items (a suite
    # may hold millions), and the item a link names
    open_flags = [f for f in review.flags(store, suite_id) if f["resolved_by"] is None]
    linked = _ui.qp("item")
    options = list(
        dict.fromkeys(
            [f["item_id"] for f in open_flags]
            + [f["item_id"] for f in res["findings"] if f["item_id"]]
            + [r["item_id"] for r in it["rows"]]
            + ([linked] if linked and _has_item(store, suite_id, linked, hold) else [])
        )
    )
    if not options:
        st.stop()
    open_flags = [f for f in open_flags if f["item_id"] in options]
    flagged = {f["item_id"] for f in open_flags}
    _ui.sync_widget("suite_item", "item", options)
    if st.session_state.get("suite_item") not in options:
        st.session_state["suite_item"] = open_flags[0]["item_id"] if open_flags else options[0]
    c_item, c_field = st.columns(2)
    item_id = c_item.selectbox(
        "Item",
        options,
        key="suite_item",
        on_change=_ui.widget_to_qp,
        args=("suite_item", "item"),
        format_func=lambda i: f"{i} (flagged: the test is wrong)" if i in flagged else i,
    )
    field = c_field.selectbox("Field", list(analysis.REPAIRABLE), key="suite_field")
    current = review.item(store, suite_id, item_id, include_holdout=hold)
    is_list = analysis.REPAIRABLE[field] == "list"
    _text.labelled_text(f"Current {field} (v{current['version']})", _as_text(current.get(field)))
    mine = [f for f in open_flags if f["item_id"] == item_id]
    if mine:
        _text.labelled_text(
            "Open flags on this item",
            "\n".join(
                f"edit {f['edit_id']} by {f['reviewer']} on {f['criterion']} ({f['gen_id']} round {f['gen_round']}): "
                f"{f['note'] or '(no note)'}"
                for f in mine
            ),
        )
    flag_options = [None] + [f["edit_id"] for f in mine]
    if st.session_state.get("_suite_repair_for") != (suite_id, item_id, field):
        st.session_state["_suite_repair_for"] = (suite_id, item_id, field)
        st.session_state["suite_new_value"] = _as_text(current.get(field)) or ""
        st.session_state["suite_flag"] = flag_options[-1]
    if st.session_state.get("suite_flag") not in flag_options:
        st.session_state["suite_flag"] = None
    with st.form("suite_repair_form"):
        st.text_area("New value" + (" (one entry per line)" if is_list else ""), key="suite_new_value")
        st.text_input("Who makes the repair", key="suite_by")
        st.text_area("Why the test was wrong", key="suite_why", height=68)
        st.selectbox(
            "Resolves flag", flag_options, key="suite_flag", format_func=lambda e: "none" if e is None else f"edit {e}"
        )
        submitted = st.form_submit_button("Create new suite version", key="suite_repair_submit", type="primary")
    st.caption(
        "A repair writes the next suite version into the state directory (the data is never written); "
        "runs on older versions are then marked on every page that lists runs."
    )
    if submitted:
        s = st.session_state
        r = review.repair(
            store,
            suite_id,
            item_id,
            field,
            s.get("suite_new_value"),
            s.get("suite_by") or "",
            s.get("suite_why") or "",
            s.get("suite_flag"),
            claims=_access.claims(),
        )
        s.pop("_suite_repair_for", None)
        s["suite_flash"] = (
            "success",
            f"Created v{r['version']} of {suite_id}: {item_id} {field} repaired"
            + (f", resolving flag {r['change']['flag']}" if r["change"]["flag"] is not None else "")
            + ". Runs on older versions are now marked.",
        )
        st.rerun()
