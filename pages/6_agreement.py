"""Agreement and judge report card: for a generation, first the summary per judge (in words, then
one row per judge run: the card's ``summary``), then for the criterion picked (one at a time) every judge and
harness against gold per criterion (kappa with a bootstrap interval, accuracy, confusion matrix, leniency), pass rates
corrected for the judge's sensitivity and specificity, people against each other, repeat
consistency and majority-of-k, judge against judge (a low kappa flags an ambiguous criterion, with single against split when the
same two judges judged it in both harnesses),
same-family warnings, post-processing contradictions and failure tags; for a closed pairwise
session, people against each other and each model grader against the majority of people.

Deep links: ``?gen=GEN`` or ``?session=SESSION``. The figures are evalcore.review.reportcard's, the same as
``evalcore agreement --json``. The "Scores and reliability" section of a generation is
evalcore.analysis.scores': ``evalcore correlate --run RUN [--class C ...] --json`` and
``evalcore reliability --run RUN ... --people --gen GEN [--class C ...] --json``.

The card is cached (``st.cache_data``) on the data directory's fingerprint, the state directory's
label store and suite versions, and the label store's edits and queues of the generation (a team
server's too), so a widget click or a rerun does not recompute it.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from evalcore import EvalcoreError, analysis, review
from pages import _cache, _select, _text, _ui

METHODS = (("pearson", "Pearson"), ("spearman", "Spearman"), ("kendall", "Kendall tau-b"))
N_BOOT = 1000


@st.cache_data(show_spinner=False, max_entries=16)
def _report_card(
    data: str, state: str, fp: tuple, gen_id: str, classes: tuple[str, ...], target: float
) -> review.ReportCard:
    return review.report_card(_ui.open_store(data, state), gen_id, classes=classes, target=target)


def report_card(
    data_store, gen_id: str, classes: tuple[str, ...], target: float = review.TARGET_HALF_WIDTH
) -> review.ReportCard:
    """``review.report_card`` (`evalcore agreement --gen GEN --json`), cached until the data, the
    suite versions or the label store change: a widget click reruns the page, and the card reads
    every run's verdicts and bootstraps every judge on every criterion."""
    fp = (
        _ui.fingerprint(data_store)
        + _ui.state_fingerprint(data_store)
        + _ui.suite_fingerprint(data_store)
        + review.labels_revision(data_store, gen_id)
    )
    return _report_card(str(data_store.data), str(data_store.state), fp, gen_id, tuple(classes), float(target))


@st.cache_data(show_spinner=False, max_entries=16)
def _session_agreement(data: str, state: str, fp: tuple, session_id: str) -> review.SessionAgreement:
    return review.session_agreement(_ui.open_store(data, state), session_id)


def session_agreement(data_store, session_id: str) -> review.SessionAgreement:
    """``review.session_agreement``, cached like :func:`report_card` (and on the session's choices file)."""
    jpath = data_store.session(session_id).path / "judgments.parquet"
    fp = _ui.fingerprint(data_store) + ((str(jpath), jpath.stat().st_mtime_ns if jpath.exists() else None),)
    return _session_agreement(str(data_store.data), str(data_store.state), fp, session_id)


def _num(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _ci(pair, pct: bool = False) -> str:
    if not pair or pair[0] is None:
        return "-"
    return f"[{_text.pct(pair[0])}, {_text.pct(pair[1])}]" if pct else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _leniency(c: review.CriterionCard, j) -> dict[str, str]:
    """A judge's leniency on one criterion: points of pass rate, or on an ordinal scale (no pass
    category) the mean score difference; a dash without gold cases."""
    if not c.categories or not ({"pass", "correct"} & set(c.categories)):
        return {"leniency (score)": _signed(j.leniency) if j.n else "-"}
    return {"leniency (points)": review.points(j.leniency) if j.n else "-"}


def _plain(rows: list[dict]) -> None:
    """A small table of our own figures and ids from the data, made inert for markdown."""
    if rows:
        inert = [{k: _text.md_escape("-" if v is None else v) for k, v in r.items()} for r in rows]
        st.table(pd.DataFrame(inert).fillna("-"), hide_index=True)


def _signed(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:+.{digits}f}"


def _summary_rows(summary: review.Summary) -> list[dict]:
    """The per-judge summary of the report card (``card.summary``, `evalcore agreement --json`)."""
    return [
        {
            "run": r.run_id,
            "judge model": r.judge_model,
            "mode": r.mode,
            "prompt variant": r.prompt_variant,
            "status": r.status,
            "ranked": "yes" if r.not_ranked is None else f"no: {r.not_ranked}",
            "gold cases": r.gold_cases,
            "mean kappa vs gold": _num(r.mean_kappa) + (f" ({r.kappa_criteria} criteria)" if r.kappa_criteria else ""),
            "mean accuracy": _text.pct(r.mean_accuracy),
            # points of pass rate, as the words above say it; an ordinal scale's score difference apart
            "leniency (points)": ("-" if r.leniency is None else review.points(r.leniency))
            + ("" if r.score_leniency is None else f"; scores {_signed(r.score_leniency)}"),
            "ambiguous on": f"{r.ambiguous} of {r.criteria}",
            "pass rate -> corrected": (
                "-"
                if r.corrected_pass_rate is None
                else f"{_text.pct(r.observed_pass_rate)} -> {_text.pct(r.corrected_pass_rate)} ({r.corrected_criteria} criteria)"
            ),
        }
        for r in summary.judges
    ]


def show_summary(card: review.ReportCard) -> None:
    """The card's opening: the summary per judge in words, then as a table."""
    st.subheader("Judges at a glance")
    for line in card.summary.text:
        st.markdown(_text.md_escape(line))
    _plain(_summary_rows(card.summary))
    st.expander("What the columns mean").caption(
        "One row per judge run. Ranked: whether the words above rank it, and why not. Gold cases: its verdicts on cases with gold, summed over criteria. Mean kappa and "
        f"accuracy: unweighted means over the criteria where they are defined on at least {review.MIN_GOLD_CASES} "
        "gold cases. Leniency: its pass rate minus gold's on the same cases, in points of pass rate, mean over "
        "those of the pass / fail and ternary criteria (on ordinal scales, the mean score difference). Ambiguous "
        "on: criteria where it is one of two judges agreeing below the threshold. Pass rate "
        "-> corrected: means over the criteria with a corrected rate. The detail per criterion is in the tabs below. "
        "`evalcore agreement --gen " + card.gen_id + " --json` (`summary`)"
    )


def _ambiguous_warning(a: review.Ambiguous) -> None:
    st.warning(
        _text.md_escape(
            f"Ambiguous criterion: judges in the same harness agree below kappa {a.threshold} ("
            + ", ".join(f"{p.a} ~ {p.b} {p.kappa:.2f}" for p in a.pairs)
            + ")."
            + "".join(f" {' and '.join(h.judges)}: {h.text}." for h in a.harnesses)
            + " Disputed items: "
            + ", ".join(d.item_id for d in a.disputed_items)
        )
    )


def _confusions(c: review.CriterionCard) -> list[dict]:
    """Every judge's confusion matrix on the criterion as one table: a row per judge, a column per
    cell (gold -> judge)."""
    rows = []
    for j in c.judges:
        if not j.n:
            continue
        conf = j.confusion
        row: dict[str, str | int] = {"run": j.run_id}
        for gi, g in enumerate(conf.labels):
            for ji, jl in enumerate(conf.labels):
                row[f"gold {g} -> judge {jl}"] = conf.matrix[gi][ji]
        rows.append(row)
    return rows


def _ppi_row(
    run_id: str, p: review.PpiRate | review.PpiUnavailable, rg: review.Corrected | review.NotCorrected | None, observed
) -> dict:
    rate = p if isinstance(p, review.PpiRate) else None
    lo = rate.labels_only if rate else None
    row = {
        "run": run_id,
        "observed": _text.pct(observed),
        "PPI++": _text.pct(p.value),
        "PPI++ interval": _ci(p.ci, pct=True),
        "labels": rate.n_labels if rate else 0,
        "worth (labels)": "-" if rate is None or rate.n_eff is None else f"{rate.n_eff:.0f}",
        "labels only": _text.pct(lo.value if lo else None),
        "labels-only interval": _ci(lo.ci if lo else None, pct=True),
    }
    if rg is not None:
        row["sens./spec. corrected"] = _text.pct(rg.value)
    row["stopping rule"] = review.half_width_text(p)
    return row


def show_ppi(c: review.CriterionCard) -> None:
    """PPI++ per judge beside the labels-only and the sensitivity / specificity corrections."""
    st.markdown("**Corrected pass rate (PPI++)**")
    _plain([_ppi_row(j.run_id, j.ppi, j.corrected, j.pass_rate) for j in c.judges])
    samples = sorted({j.ppi.sample for j in c.judges if isinstance(j.ppi, review.PpiRate | review.PpiFailed)})
    st.caption(
        _text.md_escape(
            "PPI++: the judge's verdict on every case plus the gold of the queue audit's decided prefix (in key order), "
            "each weighted by 1 / its inclusion probability; 'worth' is the labels a labels-only estimate would need "
            "for the same interval. Sample: "
            + ("; ".join(samples) or "none yet")
            + ". docs/REVIEW.md says what it assumes."
        )
    )


def show_criterion(c: review.CriterionCard) -> None:
    """The detail of one criterion: judges against gold, people, repeat consistency, judge against judge."""
    if c.ambiguous.flag:
        _ambiguous_warning(c.ambiguous)
    st.caption(_text.md_escape(f"{c.criterion} ({c.kind}), {c.gold_cases} gold cases."))
    rows, notes = [], set()
    for j in c.judges:
        cr = j.corrected if isinstance(j.corrected, review.Corrected) else None
        notes.add((cr.note if cr else None) or j.corrected.reason or "")
        rows.append(
            {
                "run": j.run_id,
                "mode": j.mode,
                "status": j.status,
                "gold cases": j.n,
                "kappa": _num(j.kappa),
                "kappa interval": _ci(j.kappa_ci),
                "accuracy": _text.pct(j.accuracy),
                **_leniency(c, j),
                "pass rate": _text.pct(j.pass_rate),
                "corrected": _text.pct(j.corrected.value),
                "corrected interval": _ci(cr.ci if cr else None, pct=True),
                "gold for correction": cr.gold if cr else "-",
            }
        )
    if rows:
        _plain(rows)
        show_ppi(c)
        for n in sorted(notes - {""}):
            st.caption(_text.md_escape(n))
        conf = _confusions(c)
        if conf:
            with st.expander("Confusion matrices (rows gold, columns judge)"):
                _plain(conf)
    rv = c.reviewers
    if len(rv.raters) >= 2:
        st.caption(
            _text.md_escape(
                "People: "
                + "; ".join(f"{p.a} ~ {p.b} Cohen's kappa {_num(p.kappa)} on {p.n}" for p in rv.cohen)
                + (f"; Fleiss' kappa {_num(rv.fleiss.kappa)} on {rv.fleiss.n}" if rv.fleiss else "")
                + (f"; Krippendorff's alpha {_num(rv.krippendorff.alpha)}" if rv.krippendorff else "")
                + (f" (rater slots, no Cohen's kappa: {', '.join(rv.slots)})" if rv.slots else "")
            )
        )
    if c.repeat:
        _plain(
            [
                {
                    "run": r.run_id,
                    "rounds": r.rounds,
                    "cases": r.n,
                    "same in every round": _text.pct(r.unanimous_share),
                    "Fleiss' kappa over rounds": _num(r.fleiss_kappa),
                    "majority = round 1": _text.pct(r.majority_vs_round1),
                    "round 1 vs gold (kappa)": _num(r.round1_vs_gold.kappa),
                    "majority vs gold (kappa)": _num(r.majority_vs_gold.kappa),
                }
                for r in c.repeat
            ]
        )
    if c.judge_pairs:
        with st.expander("Judge against judge"):
            pairs = [
                {
                    "a": p.a,
                    "b": p.b,
                    "compares": p.comparison,
                    "cases": p.n,
                    "agreement": _text.pct(p.agreement),
                    "kappa": _num(p.kappa),
                }
                for p in c.judge_pairs
            ]
            st.dataframe(pd.DataFrame(pairs), hide_index=True)


def show_generation(card: review.ReportCard, split: review.Disagreements, scores: Callable[[], None]) -> None:
    """The card: gold and the runs' warnings in a line each, the summary per judge, then one tab per
    section, the criterion picker's first (``scores`` draws the last tab, Scores and reliability)."""
    g = card.gold
    st.caption(
        _text.md_escape(
            f"Gold: {g.state} cases decided by reviewers (state directory), {g.shipped} from labels shipped with "
            f"the data; no gold where people disagree: {split.reviewers} cases where reviewers disagree (until an "
            f"adjudicator settles them) and {split.annotators} shipped {'case' if split.annotators == 1 else 'cases'} "
            f"whose annotators reach no majority; {g.pending} "
            f"waiting for more reviewers. Judges read at judge round {card.judge_round}; "
            f"bootstrap: {card.n_boot} resamples, seed {card.seed}, {int(card.level * 100)}% intervals."
            + (f" Corrected rates weighted by queue {card.queue}." if card.queue else "")
        )
    )
    if card.warnings:
        with st.expander(f"{len(card.warnings)} warning(s) on the runs read", icon=":material/warning:"):
            for w in card.warnings:
                st.warning(_text.md_escape(w))
    show_summary(card)
    shown = [(a.run_id, a.ppi) for a in card.all_pass if isinstance(a.ppi, review.PpiRate | review.PpiFailed)]
    sections: dict[str, Callable[[], None]] = {}
    if card.criteria:
        sections["Per criterion"] = lambda: _per_criterion(card)
    if shown:
        sections["All-pass rate (PPI++)"] = lambda: _all_pass(shown)
    if card.contradictions:
        sections[
            f"Post-processing contradictions ({len(card.contradictions)} run{'' if len(card.contradictions) == 1 else 's'})"
        ] = lambda: _contradictions(card)
    if card.tags:
        sections[f"Failure tags ({len(card.tags)})"] = lambda: _plain(
            [{"tag": k, "cases": v} for k, v in card.tags.items()]
        )
    if card.flagged_for_repair:
        sections[f"Items flagged for repair ({len(card.flagged_for_repair)})"] = lambda: _plain(
            [{k: f[k] for k in ("item_id", "criterion", "reviewer", "note")} for f in card.flagged_for_repair]
        )
    sections["Temperature"] = lambda: _temperature(card)
    sections["Scores and reliability"] = scores
    for tab, draw in zip(st.tabs(list(sections)), sections.values()):
        with tab:
            draw()


def _temperature(card: review.ReportCard) -> None:
    """Runs that differ only in the judge's temperature, side by side (review.temperature_view of this
    card: `evalcore temperature GEN --json`)."""
    view = review.temperature_view(_ui.store(), card)
    st.caption(_text.md_escape(view.text))
    for g in view.groups:
        st.markdown(_text.md_escape(f"{g.judge_model}, {g.mode} harness, prompt {g.prompt_variant}"))
        _plain(
            [
                {
                    "run": r.run_id,
                    "temperature": f"{r.temperature:g}",
                    "criterion": c.criterion,
                    "judge rounds": c.judge_rounds,
                    "rounds agree": _text.pct(c.unanimous_share),
                    "Fleiss kappa": _num(c.fleiss_kappa),
                    "gold cases": c.gold_cases,
                    "accuracy on gold": _text.pct(c.accuracy),
                    "majority of rounds on gold": _text.pct(c.majority_accuracy),
                }
                for r in g.runs
                for c in r.criteria
            ]
        )


def _per_criterion(card: review.ReportCard) -> None:
    # one criterion's detail at a time (a radio, not a tab per criterion): tabs would draw every
    # criterion's tables on each run of the page, and only one is read at once
    labels = {c.criterion: c.criterion + (" (ambiguous)" if c.ambiguous.flag else "") for c in card.criteria}
    if st.session_state.get("agreement_criterion") not in labels:
        st.session_state.pop("agreement_criterion", None)
    name = st.radio("Criterion", list(labels), format_func=labels.get, horizontal=True, key="agreement_criterion")
    show_criterion(next(c for c in card.criteria if c.criterion == name))


def _all_pass(shown: list) -> None:
    _plain([_ppi_row(rid, p, None, p.observed) for rid, p in shown])
    st.caption(
        "An answer is labelled when every pass / fail criterion of the run has it in the audit's decided prefix; "
        "its inclusion probability is the smallest of its cases'."
    )


def _contradictions(card: review.ReportCard) -> None:
    _plain(
        [
            {
                "run": c.run_id,
                "post-processing": c.postprocess_version,
                "rewrote the judge's verdict": c.postprocess_rewrite,
                "statement contradicts verdict": c.statement_contradicts,
            }
            for c in card.contradictions
        ]
    )
    for c in card.contradictions:
        with st.expander(f"The cases of {c.run_id}"):
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "item": x.item_id,
                            "round": x.gen_round,
                            "criterion": x.criterion,
                            "reasons": ", ".join(x.reasons),
                        }
                        for x in c.cases
                    ]
                ),
                hide_index=True,
            )
    st.caption("Each is a case in the review queue (reasons statement_contradicts / postprocess_rewrite).")


def _numeric_runs(store, gen_id: str) -> list[str]:
    return [
        r
        for r in review.runs_on(store, gen_id)
        if any(c.kind in ("ordinal", "continuous") for c in store.run(r).manifest.rubric.criteria)
    ]


def show_scores(store, gen_id: str, classes: tuple[str, ...]) -> None:
    """Judge against people per criterion (pooled and within items, with intervals) and the
    reliability table: the figures of `evalcore correlate` and `evalcore reliability`, on the
    page's slice (``classes``)."""
    st.subheader("Scores and reliability")
    _correlations(store, gen_id, classes)
    _reliability(store, gen_id, classes)


def _correlations(store, gen_id: str, classes: tuple[str, ...]) -> None:
    """Judge against people per criterion, pooled and within items (`evalcore correlate`)."""
    runs = _numeric_runs(store, gen_id)
    if not runs:
        st.caption("No run on this generation has an ordinal or continuous criterion: no scores to correlate.")
        return
    rid = st.selectbox("Judge run (scores)", runs, key="agreement_scores_run")
    try:
        res = _cache.analysis_call(analysis.correlate, [rid], classes=list(classes) or None, n_boot=N_BOOT)
    except EvalcoreError as err:
        st.caption(_text.md_escape(f"Judge against people: {err.message}"))
        return
    rows = []
    for c in res.criteria:
        row = {"criterion": c.criterion, "answers": c.answers_both, "items": c.items}
        for m, title in METHODS:
            row[f"pooled {title}"] = getattr(c.pooled, m).text()
            row[f"within items {title}"] = getattr(c.within_items, m).text()
        rows.append(row)
    _plain(rows)
    pct = int(round(100 * res.level))
    st.caption(
        _text.md_escape(
            f"{res.judge.capitalize()} against people ({res.people}). Pooled: one correlation over "
            "every answer both scored; within items: the correlation over each item's outputs (generation "
            f"rounds), averaged over items (G-Eval / UniEval). {pct}% bootstrap intervals over items, "
            f"seed {res.seed}, {res.n_boot} resamples. "
            f"`evalcore correlate --run {rid}" + "".join(f" --class {c}" for c in classes) + " --json`"
        )
    )


def _reliability(store, gen_id: str, classes: tuple[str, ...]) -> None:
    """The reliability of every instrument on each criterion (`evalcore reliability`)."""
    with_rounds = [r for r in review.runs_on(store, gen_id) if (store.run(r).manifest.judge_rounds or 1) >= 2]
    labelled = any(store.labelset(lid).manifest.gen_id == gen_id for lid in store.ids("labelset"))
    if not with_rounds and not labelled:
        st.caption("No run judged twice and no label set: nothing to measure reliability on.")
        return
    try:
        rel = _cache.analysis_call(
            analysis.reliability,
            run_ids=with_rounds,
            people=labelled,
            gen_ids=[gen_id] if labelled else None,
            classes=list(classes) or None,
        )
    except EvalcoreError as err:
        st.caption(_text.md_escape(f"Reliability: {err.message}"))
        return
    rows = []
    for inst in rel.instruments:
        who = (
            "people"
            if isinstance(inst, analysis.PeopleReliability)
            else f"{inst.name} ({inst.judge_rounds} judge rounds)"
        )
        for c in inst.criteria:
            i = c.icc
            rows.append(
                {
                    "raters": who,
                    "criterion": c.criterion,
                    "alpha level": c.level,
                    "items": c.items,
                    "Krippendorff's alpha": _num(c.alpha),
                    "ICC(1)": _num(i and i.icc1),
                    "ICC(1,k)": _num(i and i.icc1k),
                    "ICC(2,1)": _num(i and i.icc2_1),
                    "ICC(3,1)": _num(i and i.icc3_1),
                    "Fleiss' kappa": _num(c.fleiss),
                    # OMIT (no spread) for pass / fail criteria
                    "SD within answer": _num(getattr(c.spread, "mean_sd", None)),
                }
            )
    _plain(rows)
    for inst in rel.instruments:
        if inst.note:
            st.caption(_text.md_escape(f"{inst.name}: {inst.note}"))
    st.caption(
        _text.md_escape(
            "Krippendorff's alpha at the criterion's level (interval, ordinal, nominal); the ICCs of Shrout & Fleiss "
            "on the items every rater rated; Fleiss' kappa with each value a category (a 1-5 scale as five); "
            "SD within answer: the mean over answers of the standard deviation of their scores across the raters "
            "(judge rounds, people). `evalcore reliability"
            + "".join(f" --run {r}" for r in with_rounds)
            + (f" --people --gen {gen_id}" if labelled else "")
            + "".join(f" --class {c}" for c in classes)
            + " --json`"
        )
    )


def show_signed_gold(s: review.SignedGold) -> None:
    """Accuracy on gold a domain expert signed off, beside all gold (`evalcore labels signed --gen GEN`)."""
    st.subheader("Expert sign-off")
    st.caption(
        f"{s.signed_off} of {s.gold_cases} gold cases decided in the state directory are signed off by a domain "
        "expert (`evalcore labels signoff`). Accuracy: the share of gold cases where the judge passes or fails "
        f"as gold does, judge round {s.judge_round}."
    )
    if s.caveat:
        st.warning(_text.md_escape(s.caveat))
    if s.runs:
        _plain(
            [
                {
                    "run": r.run_id,
                    "criterion": r.criterion,
                    "accuracy on all gold": _text.pct(r.all_gold.accuracy),
                    "gold cases": r.all_gold.cases,
                    "accuracy on signed-off gold": _text.pct(r.signed_off.accuracy),
                    "signed-off cases": r.signed_off.cases,
                }
                for r in s.runs
            ]
        )


def show_session(s: review.SessionAgreement) -> None:
    m = s.majority
    st.caption(
        _text.md_escape(
            f"{s.pairs} pairs, {s.judgments} choices by people. Majority of people: left "
            f"{m.left}, same {m.same}, right {m.right}; {m.no_majority} without a majority."
        )
    )
    rv = s.reviewers
    _plain([{"people": f"{p.a} ~ {p.b}", "pairs": p.n, "Cohen's kappa": _num(p.kappa)} for p in rv.cohen])
    if rv.fleiss and rv.krippendorff:
        st.caption(
            _text.md_escape(
                f"Fleiss' kappa {_num(rv.fleiss.kappa)} on {rv.fleiss.n} pairs; "
                f"Krippendorff's alpha {_num(rv.krippendorff.alpha)}."
            )
        )
    _plain(
        [
            {
                "grader": g.run_id,
                "model": g.judge_model,
                "order": g.order,
                "pairs": g.n,
                "accuracy": _text.pct(g.accuracy),
                "kappa": _num(g.kappa),
                "kappa interval": _ci(g.kappa_ci),
                "unparseable (misses)": g.unparseable,
            }
            for g in s.graders
        ]
    )
    _plain(
        [
            {
                "graders": f"{p.a} ~ {p.b}",
                "pairs": p.n,
                "unparseable dropped": p.dropped_unparseable,
                "agreement": _text.pct(p.agreement),
                "kappa": _num(p.kappa),
            }
            for p in s.grader_pairs
        ]
    )


_ui.title("Agreement and judge report card")
store = _ui.store()
with _text.boundary():
    judged = {g: len(review.runs_on(store, g)) for g in store.ids("generation")}
    gens = sorted((g for g, n in judged.items() if n), key=lambda g: (-judged[g], g))  # most runs first
    sessions = [
        s
        for s in store.ids("session")
        if store.session(s).manifest.status == "closed" and (store.session(s).path / "judgments.parquet").exists()
    ]
    options = [f"generation {g}" for g in gens] + [f"session {s}" for s in sessions]
    if not options:
        st.info("Nothing to report: no judged generation and no closed pairwise session with people's choices.")
        st.stop()
    want = (
        f"generation {_ui.qp('gen')}"
        if _ui.qp("gen")
        else f"session {_ui.qp('session')}"
        if _ui.qp("session")
        else None
    )
    if want in options and st.session_state.get("agreement_pick") != want:
        st.session_state["agreement_pick"] = want
    c_pick, c_target = st.columns([2, 1])
    pick = c_pick.selectbox("Report on", options, key="agreement_pick")
    kind, name = pick.split(" ", 1)
    link = {"gen": name if kind == "generation" else None, "session": name if kind == "session" else None}
    if any(_ui.qp(k) != v for k, v in link.items()):
        _ui.set_qp(**link)
    classes: tuple[str, ...] = ()
    if kind == "generation":
        classes = _select.class_slice("agreement", [store.generation(name).manifest.suite_id])
        _select.slice_caption(classes, "Every figure below counts these items.", ["agreement", "--gen", name])
        _select.suite_version_warning(review.runs_on(store, name))
        _select.curated_note([store.generation(name).manifest.suite_id])
        st.caption(
            "These figures include the suite's holdout items: the report card is not filtered for them "
            "yet (docs/SUITES.md)."
        )
    target = 5.0
    if kind == "generation":
        target = c_target.number_input(
            "Stopping rule: corrected rates' target half-width (points)",
            min_value=0.5,
            max_value=50.0,
            value=5.0,
            step=0.5,
            key="agreement_target",
            help="How many more labels are expected to bring each PPI++ interval to +/- this many points.",
        )
    with st.spinner("Computing agreement..."):
        if kind == "generation":
            with _text.boundary():
                card = report_card(store, name, classes, float(target) / 100)
                show_generation(
                    card,
                    _cache.analysis_call(review.disagreements, name, classes),
                    lambda: show_scores(store, name, classes),
                )
                show_signed_gold(_cache.analysis_call(review.signed_gold, name))
        else:
            show_session(session_agreement(store, name))
