"""Runs: suites, generations and runs with status (partial and polluted flagged), judge, mode,
pass rate per judge round with mean and spread, calls, tokens, cost and latency; the picked run's
answers (paged, filtered by a failing criterion, the rounds and a flip; one line per judge round, a
mark per criterion); and the answer view that deep links open, drawn first:
``?run=RUN&item=ITEM[&round=N]``; ``?class=A,B`` slices every figure to items of these classes
(``--class``). docs/APP.md.

Every figure comes from evalcore.suites_summary / generations_summary / runs_summary and
evalcore.analysis.run_answers, the same functions behind ``evalcore suites|generations|runs|answers --json``. Holdout items are left out of the
figures and the item picker unless "Show holdout items" is on (``--include-holdout``; the look is
logged); a run on an older version of its suite is marked "suite v1, superseded by v2".
"""

from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis
from pages import _cache, _select, _text, _ui

FLAG = {"complete": "complete", "partial": "⚠ partial", "polluted": "⚠ polluted"}
MS = st.column_config.NumberColumn(format="%.0f ms")
USD = st.column_config.NumberColumn(format="$%.4f")


def _means(r: evalcore.RunSummary) -> str | None:
    """Each ordinal and continuous criterion's mean score with its 95% interval, or None."""
    return "; ".join(m.text() for m in r.means) or None


def _ternary(r: evalcore.RunSummary) -> str | None:
    """The ternary headline of each ternary criterion with its interval, or None."""
    return "; ".join(f"{t.criterion} {_text.pct(t.headline)} {_text.pct_ci(t.ci95)}" for t in r.ternary) or None


# ---------------------------------------------------------------- a run's answers and one answer
PAGE_SIZE = 50  # answers per page of a run's list
MARK = {"pass": "✓ pass", "fail": "✗ FAIL", "error": "⚠ error", None: "-"}
FLIP = "↯ "  # before a verdict that differs between judge rounds
CSS = {"pass": "background-color: #e6f4ea", "fail": "background-color: #fce8e6", "error": "background-color: #fef7e0"}
FLIP_CSS = "background-color: #ffd54f; font-weight: bold"
FROM_LIST = "_answer_from_list"  # the answer last opened from the list: drawn under it, not first


def _cell(mark: str | None, flipped: bool) -> tuple[str, str]:
    """A verdict's text and style in a grid: a flipped criterion's marked ↯ and coloured."""
    return (FLIP if flipped else "") + MARK[mark], FLIP_CSS if flipped else CSS.get(mark or "", "")


def _styled(rows: list[dict[str, tuple[str, str] | Any]]) -> Any:
    """A styled table from rows of plain values and (text, style) cells (:func:`_cell`)."""
    table = pd.DataFrame([{k: v[0] if isinstance(v, tuple) else v for k, v in r.items()} for r in rows])
    css = pd.DataFrame([{k: v[1] if isinstance(v, tuple) else "" for k, v in r.items()} for r in rows])
    return table.style.apply(lambda _: css.set_axis(table.index), axis=None)


def _grid(criteria: list[str], marks: list[list[str | None]], flips: list[list[str]], head: list[dict]) -> Any:
    """Verdicts as a styled table: one line per judge round (``head``: each line's leading columns,
    ``flips``: its answer's flipped criteria), one column per criterion."""
    return _styled(
        [
            {**h, **{c: _cell(m, c in flipped) for c, m in zip(criteria, line)}}
            for h, line, flipped in zip(head, marks, flips)
        ]
    )


def _restart() -> None:
    st.session_state.pop("answers_page", None)  # a new filter shows its first page


def _list_filters(m: Any, n_rounds: int) -> tuple[str | None, str, str, bool]:
    """The list's filters: which answers (every one, failing any criterion, failing one), in which
    judge round's verdict (or the majority), in which generation round, and whether only those
    with a verdict that flipped between judge rounds."""
    names, k = m.rubric.names(), max(1, int(m.judge_rounds or 1))
    fails = [None, analysis.FAILING_ANY, *names]
    judges = [str(i) for i in range(1, k + 1)] + (["majority"] if k > 1 else [])
    grounds = ["all"] + [str(i) for i in range(1, n_rounds + 1)]
    for key, options in (("answers_failing", fails), ("answers_judge", judges), ("answers_ground", grounds)):
        _ui.keep(key, options)
    c_fail, c_judge, c_round = st.columns([3, 2, 2])
    failing = c_fail.selectbox(
        "Answers",
        fails,
        key="answers_failing",
        format_func=lambda f: (
            "every answer" if f is None else ("failing any criterion" if f == "any" else f"failing {f}")
        ),
        on_change=_restart,
    )
    judge = c_judge.selectbox(
        "Judge verdict",
        judges,
        key="answers_judge",
        format_func=lambda v: f"majority of {k} rounds (a tie fails)" if v == "majority" else f"judge round {v}",
        on_change=_restart,
        help="The verdict that decides which answers fail; every judge round is shown on its own line.",
    )
    ground = c_round.selectbox(
        "Generation round",
        grounds,
        key="answers_ground",
        format_func=lambda v: "every round" if v == "all" else f"round {v}",
        on_change=_restart,
    )
    flipped = k > 1 and st.toggle(
        "Only answers with a flip (a criterion passed in one judge round and failed in another)",
        key="answers_flipped",
        on_change=_restart,
    )
    return failing, judge, ground, bool(flipped)


def _answers_list(s: evalcore.Store, run_id: str, hold: bool, classes: tuple[str, ...]) -> None:
    """A run's answers, paged, filtered by a failing criterion and the rounds, each as its grid of
    verdicts (evalcore.analysis.run_answers, ``evalcore answers``); a selected line opens its answer."""
    m = s.run(run_id).manifest
    failing, judge, ground, flipped = _list_filters(m, max(1, int(s.generation(m.gen_id).manifest.rounds or 1)))
    sel = analysis.parse_selection(judge, ground, include_holdout=hold, classes=classes)
    page = int(st.session_state.get("answers_page") or 1)
    res = _cache.analysis_call(
        analysis.run_answers, run_id, failing, sel, PAGE_SIZE, (page - 1) * PAGE_SIZE, flipped=flipped
    )
    pages = max(1, -(-res.total // PAGE_SIZE))
    if page > pages:
        page, res = 1, _cache.analysis_call(analysis.run_answers, run_id, failing, sel, PAGE_SIZE, 0, flipped=flipped)
        st.session_state["answers_page"] = 1
    if not res.answers:
        st.info(_text.md_escape(f"No answer of {run_id} under these filters."))
        return
    lines = [(a, v) for a in res.answers for v in a.rounds]
    head = [
        {
            "item": a.item_id if v.judge_round == 1 else "",
            "round": str(a.gen_round) if v.judge_round == 1 else "",
            "class": (a.cls or "-") if v.judge_round == 1 else "",
            "judge round": v.judge_round,
        }
        for a, v in lines
    ]
    table_key = f"answers_table|{run_id}|{failing}|{judge}|{ground}|{page}" + ("|flipped" if flipped else "")
    event = st.dataframe(
        _grid(res.criteria, [v.verdicts for _, v in lines], [a.flipped for a, _ in lines], head),
        key=table_key,
        hide_index=True,
        column_config={
            "item": st.column_config.TextColumn(width=max(80, 8 * max(len(a.item_id) for a in res.answers)))
        },
        on_select="rerun",
        selection_mode="single-row",
        height=min(35 * len(lines) + 38, 720),
    )
    picked = list(event.selection.rows) if event is not None else []
    if _select.new_pick(table_key, picked) and picked:
        a = lines[picked[0]][0]
        st.session_state[FROM_LIST] = (run_id, a.item_id, a.gen_round)
        _ui.set_qp(item=a.item_id, round=a.gen_round)
        st.rerun()  # the answer opens under the list, even where a link had put another first
    _list_caption(res, (failing, judge, ground, flipped), hold, classes)
    if pages > 1:
        st.number_input(
            f"Page (of {pages}, {PAGE_SIZE} answers each)", min_value=1, max_value=pages, step=1, key="answers_page"
        )


def _list_caption(res: Any, filters: tuple[str | None, str, str, bool], hold: bool, classes: tuple[str, ...]) -> None:
    """What the list shows, said from its figures, and the command that gives the same rows."""
    failing, judge, ground, flipped = filters
    what = {None: "answers", "any": "answers failing any criterion"}.get(failing, f"answers failing {failing}")
    verdict = "the majority over judge rounds" if judge == "majority" else f"judge round {judge}"
    n_flipped = sum(1 for a in res.answers if a.flipped)
    cmd = ["evalcore", "answers", res.run_id, *(["--failing", failing] if failing else [])]
    cmd += ["--flipped"] if flipped else []
    cmd += (["--majority"] if judge == "majority" else ["--judge-round", judge]) + (
        [] if ground == "all" else ["--gen-round", ground]
    )
    cmd += ["--limit", str(PAGE_SIZE), "--offset", str(res.offset), *(["--include-holdout"] if hold else [])]
    cmd += [x for c in classes for x in ("--class", c)]
    st.caption(
        _text.md_escape(
            f"{res.total} {what}"
            + ("" if failing is None else f" in {verdict}")
            + (" with a flip between judge rounds" if flipped else "")
            + f"; showing {res.offset + 1}-{res.offset + len(res.answers)}, one line per judge round: ✓ pass, "
            "✗ fail, ⚠ the judge's call failed, - no verdict; ↯ a criterion passed in one judge round and "
            f"failed in another ({n_flipped} of the {len(res.answers)} answers shown). Select a line to open "
            "its answer below."
        )
        + " Same rows: "
        + _text.code_span(shlex.join([*cmd, "--json"]))
    )


def _answer_section(
    s: evalcore.Store, by_id: dict[str, evalcore.RunSummary], run_q: str, hold: bool, classes: tuple[str, ...]
) -> None:
    """One answer of the run: the item and round pickers (bound to ``?item=`` and ``?round=``), then
    its output, its verdicts as a grid over the judge rounds, the judges' words and the item."""
    st.subheader("Answer")
    st.caption("Link to one answer with ?run=RUN&item=ITEM&round=N; everything below is shown as plain text.")
    item_q, round_q = _ui.qp("item"), _ui.qp_int("round", 1)
    c_item, c_round = st.columns([4, 1])
    picker = evalcore.run_item_ids(s, run_q, include_holdout=hold, classes=classes)
    options = picker["item_ids"] + ([item_q] if item_q and item_q not in picker["item_ids"] else [])
    _ui.sync_widget("answer_item", "item", options)
    c_item.selectbox(
        f"Item ({picker['items']} in {_text.md_escape(picker['gen_id'])}"
        + ("" if hold else ", holdout items hidden")
        + "; type any id)",
        options,
        index=None,
        key="answer_item",
        placeholder="choose or type an item id, or select a line above",
        accept_new_options=True,
        on_change=_ui.widget_to_qp,
        args=("answer_item", "item"),
    )
    rounds = max(picker["rounds"], 1)
    if not 1 <= round_q <= rounds:
        st.warning(
            _text.md_escape(
                f"{picker['gen_id']} has generation rounds 1 to {rounds}; showing round "
                f"{min(max(round_q, 1), rounds)} instead of {round_q}."
            )
        )
        round_q = min(max(round_q, 1), rounds)
        _ui.set_qp(round=round_q)
    if st.session_state.get("answer_round") != round_q:
        st.session_state["answer_round"] = round_q
    c_round.number_input(
        "Generation round",
        min_value=1,
        max_value=rounds,
        step=1,
        key="answer_round",
        on_change=_ui.widget_to_qp,
        args=("answer_round", "round"),
    )
    if item_q is None:
        return
    view = evalcore.item_view(s, run_q, item_q, round_q, include_holdout=hold)
    _answer_warnings(by_id.get(run_q), run_q, item_q, round_q, picker["gen_id"], view)
    left, right = st.columns(2)
    with left:
        _text.labelled_text("Output" + (" (the system abstained)" if view.abstained else ""), view.output)
        _text.labelled_text("Input", view.input)
        _text.labelled_text("Context", view.context)
        _text.labelled_text("Must have", "\n".join(f"- {m}" for m in view.must_have or []) or None)
        if not _text.missing(view.reference):
            _text.labelled_text("Reference", view.reference)
    with right:
        _verdicts(s, run_q, view)


def _answer_warnings(
    run: evalcore.RunSummary | None, run_q: str, item_q: str, round_q: int, gen_id: str, view: Any
) -> None:
    if run is not None and run.suite_mark:
        st.warning(
            _text.md_escape(
                f"Run {run_q} is on {run.suite_mark}: this item may have been repaired since (evalcore suite versions)."
            )
        )
    status = run.status if run is not None else "complete"
    if status != "complete":
        st.warning(
            _text.md_escape(
                f"Run {run_q} is {status}: verdicts may be missing or errored, and its figures "
                "are not comparable with complete runs."
            )
        )
    if view.output is None:
        st.warning(_text.md_escape(f"No answer for item {item_q} in round {round_q} of {gen_id}."))


def _verdicts(s: evalcore.Store, run_id: str, view: Any) -> None:
    """An answer's verdicts: a grid of criteria over judge rounds (a flip marked), then the
    judges' own words per judge round as plain text."""
    if not view.verdicts:
        st.info("No verdicts on this answer in this run.")
        return
    m = s.run(run_id).manifest
    names = m.rubric.names()
    rows = [v.to_dict() for v in view.verdicts]
    marks, flipped = analysis.verdict_grid(names, rows, m.judge_rounds)
    st.caption(
        _text.md_escape(
            "Verdicts: one column per judge round"
            + (f"; ↯ flipped between judge rounds: {', '.join(flipped)}" if flipped else "")
        )
    )
    st.dataframe(
        _styled(  # criteria down, judge rounds across: a half-width column holds six criteria
            [
                {
                    "criterion": c,
                    **{f"judge round {jr}": _cell(line[j], c in flipped) for jr, line in enumerate(marks, 1)},
                }
                for j, c in enumerate(names)
            ]
        ),
        hide_index=True,
    )
    for jr in sorted({v.judge_round for v in view.verdicts}):
        lines = []
        for v in (v for v in view.verdicts if v.judge_round == jr):
            shown = {"score": _text.or_none(v.score), "label": v.label}
            extra = "".join(f", {k} {x}" for k, x in shown.items() if x is not None)
            said = f"judge said {v.raw_verdict}" if v.raw_verdict is not None else "no verdict"
            lines.append(f"{v.criterion}: {_text.verdict_word(v.passed)} ({said}{extra})")
            lines.append(f"  reason: {v.reason if v.reason is not None else '(none)'}")
            if v.error is not None:
                lines.append(f"  error: {v.error}")
        _text.labelled_text(f"Verdicts, judge round {jr}", "\n".join(lines))


_ui.title("Runs")
store = _ui.store()
suites = _cache.summary(evalcore.suites_summary)  # evalcore.suites_summary, cached until the data changes
suite_ids = [s.suite_id for s in suites]
hold = _select.holdout_toggle("runs", suite_ids)
classes = _select.class_slice("runs", suite_ids)
gens: list[evalcore.GenerationSummary] = []
runs: list[evalcore.RunSummary] = []
with _text.boundary():  # a class no run's suite has is one st.error
    gens = _cache.summary(evalcore.generations_summary, include_holdout=hold, classes=classes)
    runs = _cache.summary(evalcore.runs_summary, include_holdout=hold, classes=classes)
if classes and not runs:
    st.stop()
_select.slice_caption(
    classes,
    "Pass rates, items, verdicts and outputs count these items; runs on suites without these classes are left "
    "out; calls, tokens and cost are what each run spent on every item.",
    ["runs"],
)
run_ids = [r.run_id for r in runs]
by_id = {r.run_id: r for r in runs}

# ---------------------------------------------------------------- a linked answer first
# A link naming an answer (?run=R&item=I[&round=N]) opens on it, above everything else; an answer
# opened from the list below is drawn under the list instead.
if "answer_run" not in st.session_state:  # the page is opened anew (its widgets' state is gone): a link, not the list
    st.session_state.pop(FROM_LIST, None)
run_q, item_q = _ui.qp("run"), _ui.qp("item")
linked = (
    run_q is not None
    and item_q is not None
    and st.session_state.get(FROM_LIST) != (run_q, item_q, _ui.qp_int("round", 1))
)
if linked:
    with _text.boundary():
        _answer_section(store, by_id, str(run_q), hold, classes)

# ---------------------------------------------------------------- flags first
flagged = [r for r in runs if r.status != "complete"]
if flagged:
    st.warning(
        "Not complete, so their figures are not comparable with the others: "
        + "; ".join(
            _text.md_escape(
                f"{r.run_id} is {r.status} ({r.failed_calls} failed calls, {r.errored_verdicts} errored verdicts)"
            )
            for r in flagged
        )
    )
flagged_gens = [g for g in gens if g.status != "complete"]
if flagged_gens:
    st.warning(
        "Generations not complete: " + "; ".join(_text.md_escape(f"{g.gen_id} is {g.status}") for g in flagged_gens)
    )
_select.suite_version_warning(run_ids)
for r in runs:
    if r.variant_warning:
        st.warning(_text.md_escape(r.variant_warning), icon=":material/warning:")
for r in runs:
    if isinstance(r.threshold_note, str):  # absent when every scored criterion has a threshold
        st.info(_text.md_escape(r.threshold_note), icon=":material/info:")
_text.judge_not_pinned(runs)

# ---------------------------------------------------------------- runs
st.subheader("Runs")
if not runs:
    st.info("No runs in this data directory.")
else:
    n_rounds = max((len(r.all_pass_by_round) for r in runs), default=0)
    rows = []
    for r in runs:
        by_round = r.all_pass_by_round + [None] * (n_rounds - len(r.all_pass_by_round))
        rows.append(
            {
                "run": r.run_id,
                "status": FLAG.get(r.status, r.status),
                "all pass": _text.pct100(r.all_pass.rate if r.all_pass else None),
                "95% CI": _text.pct_ci(r.all_pass.ci95 if r.all_pass else None),
                "ternary headline": _ternary(r),
                "mean score [95% CI]": _means(r),
                "mode": r.mode,
                "prompt variant": r.prompt_variant,
                "judge rounds": r.judge_rounds,
                **{f"all pass r{i + 1}": _text.pct100(v) for i, v in enumerate(by_round)},
                "spread": _text.pct100(r.all_pass_spread),
                "errored verdicts": r.errored_verdicts,
                "calls": r.calls,
                "failed calls": r.failed_calls,
                "tokens in": r.tokens_in,
                "tokens out": r.tokens_out,
                "cost": r.cost_usd,
                "unpriced calls": r.cost_unknown_calls,
                "judge latency": r.latency_ms_mean,
                "system latency": r.system_latency_ms_mean,
                "judge model": r.judge_model,
                "generation": r.gen_id,
                "suite version": r.suite_mark or f"v{r.suite_version}",
            }
        )
    table = pd.DataFrame(rows)
    config = {
        "all pass": _text.PCT,
        **{f"all pass r{i + 1}": _text.PCT for i in range(n_rounds)},
        "spread": _text.PCT,
        "cost": USD,
        "judge latency": MS,
        "system latency": MS,
    }

    event = st.dataframe(
        table,
        key="runs_table",
        hide_index=True,
        column_config=config,
        on_select="rerun",
        selection_mode="single-row",
        height="content" if len(rows) <= 40 else 700,
        placeholder="-",
    )
    picked = list(event.selection.rows) if event is not None else []
    if _select.new_pick("runs_table", picked) and picked:
        _ui.set_qp(run=run_ids[picked[0]], item=None, round=None)
    st.caption(
        "All pass: the answers passing every criterion in judge round 1, of the complete answers, with its 95% "
        "interval (Wilson; items as clusters where generation rounds are pooled), as the Attribution page counts it; "
        "then the same rate per judge round and its spread (max - min). Per-criterion rates are on the Attribution "
        "page. Cost sums the calls whose "
        "price is known; unpriced calls counts the others (never taken as 0). Select a row to open its "
        "answers below."
        + ("" if hold else " Pass rates leave the suites' holdout items out; cost and tokens count every call.")
    )
    _select.curated_note([r.suite_id for r in runs])
    with st.expander("Runs as a plain table (copyable text)"):
        plain = pd.DataFrame(
            [
                {
                    "run": r.run_id,
                    "status": FLAG.get(r.status, r.status),
                    "mode": r.mode,
                    "judge model": r.judge_model,
                    "judge rounds": str(r.judge_rounds),
                    "all pass": _text.pct(r.all_pass.rate if r.all_pass else None)
                    + (" " + _text.pct_ci(r.all_pass.ci95) if r.all_pass and r.all_pass.ci95[0] is not None else ""),
                    **{
                        f"all pass r{i + 1}": _text.pct(v)
                        for i, v in enumerate(r.all_pass_by_round + [None] * (n_rounds - len(r.all_pass_by_round)))
                    },
                    "spread": _text.pct(r.all_pass_spread),
                    "ternary headline": _ternary(r) or "-",
                    "mean score [95% CI]": _means(r) or "-",
                    "errored verdicts": str(r.errored_verdicts),
                    "calls": str(r.calls),
                    "suite version": r.suite_mark or f"v{r.suite_version}",
                }
                for r in runs
            ]
        )
        st.table(plain.map(_text.md_escape), hide_index=True)

# ---------------------------------------------------------------- the picked run's answers
st.subheader("Answers of a run")
_ui.sync_widget("answer_run", "run", run_ids)
st.selectbox(
    "Run",
    run_ids,
    index=None,
    key="answer_run",
    placeholder="choose a run, or select a row above",
    on_change=_ui.widget_to_qp,
    args=("answer_run", "run"),
    format_func=lambda r: r + _select.suite_suffix(by_id[r]),
)
run_q = _ui.qp("run")
if run_q is not None and not (linked and run_q not in by_id):  # a linked unknown run: one error, above
    with _text.boundary():
        if run_q not in by_id:
            store.run(run_q)  # a bad or unknown id is one st.error
            st.info(_text.md_escape(f"Run {run_q} is not among the runs above."))
        elif by_id[run_q].kind != "criteria" or not by_id[run_q].verdicts:
            st.info(_text.md_escape(f"Run {run_q} has no criterion verdicts to list."))
        else:
            _answers_list(store, run_q, hold, classes)
        if not linked:
            _answer_section(store, by_id, run_q, hold, classes)

# ---------------------------------------------------------------- generations and suites
st.subheader("Generations")
if gens:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "generation": g.gen_id,
                    "suite": g.suite_id,
                    "suite version": g.suite_mark or f"v{g.suite_version}",
                    "status": FLAG.get(g.status, g.status),
                    "source": g.source,
                    "rounds": g.rounds,
                    "items": g.items,
                    "outputs": g.outputs,
                    "abstained": _text.pct100(g.abstained_rate),
                    "errored outputs": g.errored_outputs,
                    "tokens in": g.tokens_in,
                    "tokens out": g.tokens_out,
                    "cost": g.cost_usd,
                    "system latency": g.latency_ms_mean,
                    "knobs": ", ".join(f"{k}={v}" for k, v in sorted(g.knobs.items())),
                }
                for g in gens
            ]
        ),
        hide_index=True,
        column_config={"abstained": _text.PCT, "cost": USD, "system latency": MS},
        placeholder="-",
    )
else:
    st.info("No generations in this data directory.")

st.subheader("Suites")
if suites:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "suite": s.suite_id,
                    "items": s.items,
                    "holdout items": s.holdout_items,
                    "curated": s.curated,
                    "simulated": s.simulated,
                    "content hash": s.content_hash,
                    "created": s.created_at,
                    "description": s.description,
                }
                for s in suites
            ]
        ),
        hide_index=True,
    )
    _select.curated_note(suite_ids)
else:
    st.info("No suites in this data directory.")

# ---------------------------------------------------------------- answer-versus-bail flips (issue 44)
# analysis.suite_bail_flips, `evalcore bail-flips --json`: below the generations' abstained rate and the suites
with _text.boundary():
    for bf in _cache.analysis_call(analysis.suite_bail_flips, include_holdout=hold):
        with st.expander(_text.md_escape(f"Answer-versus-bail flips, {bf.suite_id}: {bf.text}")):
            st.caption(
                _text.md_escape(
                    f"Items whose abstained flag is not the same in every generation round of "
                    f"{', '.join(bf.generations)}: the system answered in one reading and bailed in another."
                )
            )
            if bf.flipped_items:
                st.dataframe(
                    pd.DataFrame(
                        [
                            {
                                "item": x.item_id,
                                "between rounds of": ", ".join(x.between_rounds),
                                "between configurations": x.between_configurations,
                                "readings": ", ".join(
                                    f"{r.gen_id} r{r.round} {'bail' if r.abstained else 'answer'}" for r in x.readings
                                ),
                            }
                            for x in bf.flipped_items
                        ]
                    ),
                    hide_index=True,
                )
