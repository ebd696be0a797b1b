"""Decision ledger: what was decided about each configuration, linked to the runs it rests on, with
figures pulled from the runs (never typed) and the automatic flags (one round, within the noise
floor, a judge-only change typed as a measurement correction). Entries are added, amended and
retired here or with ``evalcore ledger``; nothing is ever rewritten (the history stays).

Figures: evalcore.review.ledger (``evalcore ledger list --json``, ``evalcore ledger export --format md``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis, review
from pages import _access, _cache, _select, _text, _ui

_ui.title("Ledger")
store = _ui.store()
ledger = review.Ledger(store)
run_ids = [r.run_id for r in _cache.summary(evalcore.runs_summary) if r.kind == "criteria" and r.verdicts]
_select.suite_version_warning(run_ids)  # runs on an old suite version (issue 8)

with _text.boundary():
    entries = ledger.entries()

st.caption(
    f"{len(entries)} entries in {_ui.display_path(ledger.path)}. Figures below are recomputed from the runs "
    "each time; the delta is the paired per-item delta of the candidate over the baseline."
)
if entries:
    table = []
    for e in entries:
        f = e["figures_now"]
        table.append(
            {
                "id": e["entry_id"],
                "decision": review.TYPE_WORDS[e["type"]],
                "status": e["status"],
                "title": e["title"],
                "baseline": e["baseline"] or "",
                "candidate": e["candidate"] or "",
                "delta (pts)": None if f.get("delta") is None else 100 * f["delta"],
                "two-sided bar": (None if "two_sided_bar" not in f else ("holds" if f["two_sided_bar"] else "fails")),
                "polluted": ", ".join(f.get("polluted") or []),
                "system latency mean / p95": f.get("latency_text") or "",
                "flags": "; ".join(f.get("flags") or []),
                "prediction": e["outcome"]["text"] if e.get("outcome") else "",
                "added": e["added_at"][:10],
                "by": e["added_by"],
            }
        )
    st.dataframe(
        pd.DataFrame(table),
        hide_index=True,
        width="stretch",
        column_config={"delta (pts)": st.column_config.NumberColumn(format="%+.1f")},
    )
    st.download_button(
        "Download the ledger (Markdown)", review.export_markdown(entries), file_name="ledger.md", mime="text/markdown"
    )
    for e in entries:
        f = e["figures_now"]
        with st.expander(
            _text.md_escape(
                f"{e['entry_id']}: {e['title']} — {review.TYPE_WORDS[e['type']]}"
                + (" (retired)" if e["status"] == "retired" else "")
            )
        ):
            if e["baseline"]:
                st.markdown(
                    f"Baseline {_text.code_span(e['baseline'])} → candidate {_text.code_span(e['candidate'])}: "
                    f"{_text.md_escape(f.get('kind'))}; changed: {_text.md_escape(', '.join(f.get('changed') or []) or 'nothing recorded')}"
                )
                st.text(
                    f"{f['metric']}: baseline {analysis.rounds_text(f['baseline'])}\n"
                    f"{f['metric']}: candidate {analysis.rounds_text(f['candidate'])}\n"
                    f"paired delta {_text.pct(f['delta'])}, 95% CI {_text.pct(f['ci95'][0])} to {_text.pct(f['ci95'][1])}, "
                    f"noise floor {_text.pct(f['noise_floor'])}\n"
                    f"stable wins {f['stable_wins']}, stable regressions {f['stable_regressions']}\n{f['verdict']}"
                )
                st.page_link(
                    "pages/9_compare.py",
                    label="Open in Compare configurations",
                    query_params={"a": e["baseline"], "b": e["candidate"], "metric": f["metric"]},
                )
            for rid, rf in (f.get("runs") or {}).items():
                st.text(f"{rid} {f['metric']}: {analysis.rounds_text(rf)}")
            if e.get("outcome"):
                (st.error if e["outcome"]["state"] == "falsified" else st.info)(_text.md_escape(e["outcome"]["text"]))
            if f.get("flags"):
                st.warning(_text.md_escape("Flags: " + "; ".join(f["flags"])))
            if e.get("figures_source", "runs") != "runs":
                st.info(_text.md_escape(f"Figures: {e['figures_source']}"))
            if e.get("note"):
                _text.labelled_text("Note", e["note"])
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "at": h["at"][:19],
                            "by": h["by"],
                            "action": h["action"],
                            "what": h.get("reason")
                            or ", ".join(f"{k}: {h[k]}" for k in ("title", "type", "note") if h.get(k)),
                        }
                        for h in e["history"]
                    ]
                ),
                hide_index=True,
                width="stretch",
            )
else:
    st.info("No decisions recorded yet. Add one below or with `evalcore ledger add`.")

# ---------------------------------------------------------------- add, amend, retire
st.subheader("Record a decision")
if len(run_ids) >= 1:
    with st.form("ledger_add", clear_on_submit=False):
        title = st.text_input("Title", placeholder="What was decided, in a line")
        c1, c2 = st.columns(2)
        baseline = c1.selectbox("Baseline run", ["(none)"] + run_ids)
        candidate = c2.selectbox("Candidate run", ["(none)"] + run_ids)
        others = st.multiselect("Other runs it rests on", run_ids)
        type_ = st.selectbox(
            "Decision",
            ["(automatic for a judge-only change)"] + [t for t in review.TYPES if t != "prediction"],
            format_func=lambda t: review.TYPE_WORDS.get(t, t),
        )
        note = st.text_area("Note")
        by = st.text_input("Who decided")
        submitted = st.form_submit_button("Add to the ledger")
    if submitted:
        with _text.boundary():
            e = ledger.add(
                title=title,
                by=by,
                type_=None if type_.startswith("(") else type_,
                baseline=None if baseline == "(none)" else baseline,
                candidate=None if candidate == "(none)" else candidate,
                runs=others,
                note=note,
                claims=_access.claims(),
            )
            st.success(
                _text.md_escape(
                    f"Added {e['entry_id']} as {review.TYPE_WORDS[e['type']]}"
                    + (" (set automatically)" if e["type_automatic"] else "")
                )
            )
            st.rerun()

# ---------------------------------------------------------------- a prediction written before the run (issue 44)
st.subheader("Write a prediction before the run")
st.caption(
    "What the run should show, written before it exists: '<op> <value>' on the metric's mean of one run "
    "('>= 0.80', '< 75%'), or on the paired delta of a baseline and a candidate ('> 2%'). "
    "Check it below when the run comes (`evalcore ledger predict` / `ledger check`)."
)
with st.form("ledger_predict"):
    p_title = st.text_input("Title", placeholder="What the run should show, in a line", key="p_title")
    c1, c2 = st.columns(2)
    p_metric = c1.text_input("Metric", value="all_pass")
    p_expect = c2.text_input("Expected", placeholder=">= 0.80")
    p_by = st.text_input("Who predicts")
    predicted = st.form_submit_button("Write the prediction")
if predicted:
    with _text.boundary():
        e = ledger.predict(title=p_title, metric=p_metric, expect=p_expect, by=p_by, claims=_access.claims())
        st.success(_text.md_escape(f"Wrote {e['entry_id']}: {e['metric']} {e['prediction']['text']}"))
        st.rerun()
pending = [e["entry_id"] for e in entries if e.get("outcome") and e["outcome"]["state"] == "pending"]
if pending and run_ids:
    with st.form("ledger_check"):
        target_p = st.selectbox("Prediction", pending)
        c1, c2, c3 = st.columns(3)
        p_run = c1.selectbox("Its run (the metric's mean)", ["(none)"] + run_ids)
        p_base = c2.selectbox("or a baseline", ["(none)"] + run_ids)
        p_cand = c3.selectbox("and a candidate (the paired delta)", ["(none)"] + run_ids)
        p_who = st.text_input("Who checks")
        checked = st.form_submit_button("Check the prediction")
    if checked:
        with _text.boundary():
            ledger.check(
                target_p,
                by=p_who,
                run=None if p_run == "(none)" else p_run,
                baseline=None if p_base == "(none)" else p_base,
                candidate=None if p_cand == "(none)" else p_cand,
                claims=_access.claims(),
            )
            st.rerun()

active = [e["entry_id"] for e in entries if e["status"] == "active"]
if active:
    st.subheader("Amend or retire")
    with st.form("ledger_change"):
        target = st.selectbox("Entry", active)
        action = st.radio("Action", ["amend", "retire"], horizontal=True)
        new_type = st.selectbox(
            "New decision (amend)", ["(keep)"] + list(review.TYPES), format_func=lambda t: review.TYPE_WORDS.get(t, t)
        )
        new_note = st.text_area("New note (amend) or reason (retire)")
        who = st.text_input("Who")
        go = st.form_submit_button("Apply")
    if go:
        with _text.boundary():
            if action == "retire":
                ledger.retire(target, by=who, reason=new_note, claims=_access.claims())
            else:
                ledger.amend(
                    target,
                    by=who,
                    type_=None if new_type == "(keep)" else new_type,
                    note=new_note or None,
                    claims=_access.claims(),
                )
            st.rerun()
