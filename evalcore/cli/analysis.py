"""The analysis commands: ``evalcore attribution``, ``crosstab``, ``association``, ``position``,
``flips`` and their drill-downs ``failing``, ``people-crosstab``, ``cell`` and ``flipped``;
``grouping`` (which criteria deserve their own call); and ``answers``, a run's answers with every verdict.

Each reads a :class:`~evalcore.analysis.selection.Selection` (``--judge-round``, ``--majority``,
``--gen-round``) and prints what the function of :mod:`evalcore.analysis.failures`,
:mod:`evalcore.analysis.instruments`, :mod:`evalcore.analysis.harness` or
:mod:`evalcore.analysis.answers` returns, as JSON with ``--json``; the drill-downs list the
answers behind a figure one page at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from evalcore.cli._common import (
    Ctx,
    _fmt,
    _selection,
    _table,
    class_option,
    cli,
    emit,
    page_options,
    pct_ci,
    selection_options,
)
from evalcore.cli.suite import holdout_option

if TYPE_CHECKING:
    from evalcore.analysis.failures import RunStatus, TwoByTwoReport


@cli.command()
@click.argument("run_id")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def attribution(obj: Ctx, run_id, judge_round, majority, gen_round, as_json) -> None:
    """Failures per criterion, their share, the all-pass and gate rates, failures by class."""
    from evalcore.analysis.caveats import run_caveats
    from evalcore.analysis.failures import attribution as attr

    r = attr(obj.store, run_id, _selection(obj, judge_round, majority, gen_round))
    lines = [*_warnings(r), r.harness.text]
    lines.append(
        _table(
            [{**c.to_dict(), "fail_rate_text": pct_ci(c.fail_rate, c.fail_rate_ci95)} for c in r.criteria],
            [
                ("criterion", "criterion", False),
                ("gate", "gate", False),
                ("judged", "judged", False),
                ("failed", "failed", False),
                ("fail_rate_text", "fail rate [95% CI]", False),
                ("share_of_failures", "share", True),
                ("fail_only_this", "only this", False),
                ("errored", "errored", False),
            ],
        )
    )
    ap, g = r.all_pass, r.gates
    lines.append(
        f"all-pass: {ap.passed}/{ap.of} = {pct_ci(ap.rate, ap.ci95)} of complete answers "
        f"({r.answers_with_errors} with errored verdicts, {r.answers_incomplete} incomplete, excluded)"
    )
    if g.criteria:
        lines.append(f"through the gates ({', '.join(g.criteria)}): {g.passed}/{g.of} = {pct_ci(g.rate, g.ci95)}")
    for t in r.ternary:
        lines.append(
            f"{t.criterion}: correct {t.correct}, partial {t.partial}, wrong {t.wrong}; "
            f"headline (correct + 0.5 partial) / N = {pct_ci(t.headline, t.ci95)}"
        )
    if r.means:
        lines.append(
            "mean score [95% t interval]: "
            + "; ".join(f"{m.text()} of {m.n}" + (f" ({m.errored} errored)" if m.errored else "") for m in r.means)
        )
    cav = run_caveats(obj.store, run_id)
    emit({**r.to_dict(), "caveats": cav}, as_json, "\n".join(lines + cav.lines()))


@cli.command()
@click.argument("run_id")
@click.option("--a", "a", required=True, help="Criterion in the rows.")
@click.option("--b", "b", required=True, help="Criterion in the columns.")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def crosstab(obj: Ctx, run_id, a, b, judge_round, majority, gen_round, as_json) -> None:
    """The 2x2 of two criteria, B's failure rate within each row of A, their ratio, phi."""
    from evalcore.analysis.failures import crosstab as ct

    r = ct(obj.store, run_id, a, b, _selection(obj, judge_round, majority, gen_round))
    t = r.table
    w = max(len(a), 8)
    lines = _warnings(r) + [
        f"{'':{w}}  {b + ' pass':>14}  {b + ' fail':>14}  {'total':>7}  {b} fails",
        f"{a + ' pass':{w}}  {t.a_pass.b_pass:>14}  {t.a_pass.b_fail:>14}  {t.a_pass.total:>7}  "
        f"{_fmt(r.b_fail_rate_given_a_pass, True)}",
        f"{a + ' fail':{w}}  {t.a_fail.b_pass:>14}  {t.a_fail.b_fail:>14}  {t.a_fail.total:>7}  "
        f"{_fmt(r.b_fail_rate_given_a_fail, True)}",
        f"{'total':{w}}  {t.total.b_pass:>14}  {t.total.b_fail:>14}  {t.total.total:>7}",
        _ratio_phi(r),
    ]
    emit(r, as_json, "\n".join(lines))


def _emit_curated(obj: Ctx, r, run_ids: list[str], as_json: bool, text: str) -> None:
    """Emit a figure over runs with the curated caption (issue 44): ``curated`` in the JSON (null
    when no run's suite was picked by hand) and its line under the text."""
    from evalcore.analysis.caveats import curated_note

    note = curated_note(obj.store, run_ids=run_ids)
    emit({**r.to_dict(), "curated": note}, as_json, text + (f"\n{note}" if note else ""))


def _ratio_phi(r: TwoByTwoReport) -> str:
    """A 2x2's ratio and phi, each with why it is undefined."""
    return (
        f"ratio {_fmt(r.ratio)}"
        + (f" ({r.ratio_reason})" if r.ratio_reason else "")
        + f"; phi {_fmt(r.phi)}"
        + (f" ({r.phi_reason})" if r.phi_reason else "")
    )


@cli.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--human", is_flag=True, help="Add people (label sets and the label store) as an instrument.")
@selection_options
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--n-boot", type=int, default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def association(obj: Ctx, run_ids, human, judge_round, majority, gen_round, seed, n_boot, as_json) -> None:
    """phi for every criterion pair per instrument, side by side, classed induced / real / undetermined."""
    from evalcore.analysis.instruments import association as assoc
    from evalcore.analysis.instruments import iv_text

    r = assoc(
        obj.store,
        list(run_ids),
        human=human,
        sel=_selection(obj, judge_round, majority, gen_round),
        seed=seed,
        n_boot=n_boot,
    )
    names = [i.name for i in r.instruments]
    rows = [
        {"pair": f"{p.a} x {p.b}", "class": p.cls, **{n: iv_text(p.instruments[n]) for n in names}} for p in r.pairs
    ]
    head = (
        f"{r.shared_answers} shared answers"
        + (f", {r.people_answers} labelled by people" if human else "")
        + f"; {int(100 * r.level)}% intervals, threshold {r.threshold}"
    )
    f = r.finding
    text = "\n".join(
        [
            *(f"WARNING: {w}" for w in r.warnings),
            *([f.text, f"({f.cls}: {f.meaning})"] if f else []),
            *([r.reference_note] if r.reference_note else []),
            head,
            _table(rows, [("pair", "pair", False), *((n, n, False) for n in names), ("class", "class", False)]),
        ]
    )
    _emit_curated(obj, r, list(run_ids), as_json, text)


@cli.command()
@click.argument("run_id")
@click.option("--reference", default=None, help="A one-criterion (split) run on the same generation.")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def position(obj: Ctx, run_id, reference, judge_round, majority, gen_round, as_json) -> None:
    """The position effect in a single-call run: failure rate and agreement with a split run by position.

    This covers criteria judged in one call (where in the emitted list a criterion came). The
    position bias of a pairwise grader (which side of a pair it prefers) is in `evalcore pairs
    report --session S --json` under each grader's `position`: accuracy per order and their mean,
    agreement between orders, flips towards the first or second shown, ties."""
    from evalcore.analysis.failures import position_effect

    r = position_effect(obj.store, run_id, reference, _selection(obj, judge_round, majority, gen_round))
    emit(
        r,
        as_json,
        _table(
            r.positions,
            [
                ("position", "position", False),
                ("judged", "judged", False),
                ("fail_rate_text", "fail rate [95% CI]", False),
                ("fail_rate_after_fail", "fail | previous failed", True),
                ("agreement_with_reference", "agrees with reference", True),
            ],
        ),
    )


@cli.command()
@click.argument("run_a")
@click.argument("run_b")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def flips(obj: Ctx, run_a, run_b, judge_round, majority, gen_round, as_json) -> None:
    """Per criterion: fail under A and pass under B, the reverse, both; composition; all-pass under each."""
    from evalcore.analysis.harness import flips as fl

    r = fl(obj.store, run_a, run_b, _selection(obj, judge_round, majority, gen_round))
    ap = r.all_pass
    text = "\n".join(
        [
            *(f"WARNING: {w}" for w in r.warnings),
            _table(
                r.criteria,
                [
                    ("criterion", "criterion", False),
                    ("fail_a", "fail A", False),
                    ("fail_b", "fail B", False),
                    ("fail_a_pass_b", "A fail, B pass", False),
                    ("pass_a_fail_b", "A pass, B fail", False),
                    ("fail_both", "both", False),
                    ("share_of_failures_a", "share A", True),
                    ("share_of_failures_b", "share B", True),
                ],
            ),
            f"all-pass on {ap.answers} answers: A {pct_ci(ap.a, ap.ci95_a)}, B {pct_ci(ap.b, ap.ci95_b)}",
            f"{r.reason_moved.text}; "
            f"{sum(c.fail_a_pass_b + c.pass_a_fail_b for c in r.criteria)} answer-criterion verdicts changed",
        ]
    )
    _emit_curated(obj, r, [run_a, run_b], as_json, text)


@cli.command()
@click.argument("run_id")
@click.option(
    "--split",
    "split_run",
    default=None,
    help="A split run on the same generation (default: the "
    "complete split run with RUN_ID's criteria that the association page opens beside it).",
)
@click.option("--answers", type=int, default=1000, show_default=True, help="Price each grouping per this many answers.")
@selection_options
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed of the association.")
@click.option("--n-boot", type=int, default=2000, show_default=True, help="Bootstrap resamples of the association.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def grouping(obj: Ctx, run_id, split_run, answers, judge_round, majority, gen_round, seed, n_boot, as_json) -> None:
    """Which criteria deserve their own call: groupings by the induced phi they remove against their cost."""
    from evalcore.analysis.grouping import grouping as group

    r = group(
        obj.store,
        run_id,
        split_run,
        sel=_selection(obj, judge_round, majority, gen_round),
        answers=answers,
        seed=seed,
        n_boot=n_boot,
    )
    rows = [
        {
            "calls": g.calls_per_answer,
            "removed": f"{g.phi_removed:.2f}",
            "cost": "-" if g.cost_usd is None else f"${g.cost_usd:.2f}",
            "extra": "-" if g.extra_cost_usd is None else f"+${g.extra_cost_usd:.2f}",
            "grouping": g.text,
        }
        for g in r.rows
    ]
    text = "\n".join(
        [
            *(f"WARNING: {w}" for w in r.warnings),
            r.text,
            f"{r.run_id} (one call) against {r.split_run} (split)"
            + (f", people on {r.people_answers} answers" if r.people else ", no human labels")
            + f"; cost per {r.answers:,} answers: {r.cost_source}",
            _table(
                rows,
                [
                    ("calls", "calls", False),
                    ("removed", "phi removed", False),
                    ("cost", "cost", False),
                    ("extra", "over one call", False),
                    ("grouping", "grouping", False),
                ],
            ),
        ]
    )
    emit(r, as_json, text)


def _warnings(r: RunStatus) -> list[str]:
    """A figure's run warnings (status, prompt variant) as WARNING lines."""
    return [f"WARNING: {w}" for w in r.status_warnings()]


def _verdict_word(passed: Any) -> str:
    return "ERROR" if passed is None else ("pass" if passed else "FAIL")


def _answer_lines(a: dict, said: list[tuple[str, dict]]) -> list[str]:
    lines = [f"- {a['item_id']} (round {a['gen_round']}, class {a.get('class') or '-'})"]
    for who, s in said:
        if s.get("missing"):
            lines.append(f"    {who}: no verdict")
            continue
        lines.append(f"    {who}: {_verdict_word(s['passed'])}" + (f": {s['reason']}" if s.get("reason") else ""))
    lines.append(f"    output: {a.get('output')}")
    return lines


def _page_line(r: dict) -> str:
    shown = len(r["answers"])
    first = r["offset"] + 1 if shown else r["offset"]
    return f"{r['total']} answers; showing {first}-{r['offset'] + shown}"


@cli.command()
@click.argument("run_id")
@click.option("--criterion", required=True, help="The criterion whose failures to list.")
@click.option("--only", is_flag=True, help="Only answers that fail this criterion and no other.")
@selection_options
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def failing(obj: Ctx, run_id, criterion, only, judge_round, majority, gen_round, limit, offset, as_json) -> None:
    """The answers RUN_ID fails on a criterion, with the judge's reason (attribution drill-down)."""
    from evalcore.analysis.answers import answers_failing

    r = answers_failing(
        obj.store, run_id, criterion, only, _selection(obj, judge_round, majority, gen_round), limit, offset
    )
    d = r.to_dict()  # the drill-downs' lines read their JSON rows
    lines = [*_warnings(r), _page_line(d)]
    for a in d["answers"]:
        lines += _answer_lines(a, [(criterion, a)])
    emit(r, as_json, "\n".join(lines))


@cli.command()
@click.argument("run_id")
@click.option(
    "--failing", default=None, help="Only answers failing this criterion, or 'any' criterion (default: every answer)."
)
@click.option(
    "--flipped", is_flag=True, help="Only answers with a criterion passed in one judge round, failed in another."
)
@selection_options
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def answers(obj: Ctx, run_id, failing, flipped, judge_round, majority, gen_round, limit, offset, as_json) -> None:
    """RUN_ID's answers with each criterion's verdict in every judge round (the Runs page's list)."""
    from evalcore.analysis.answerlist import run_answers

    sel = _selection(obj, judge_round, majority, gen_round)
    r = run_answers(obj.store, run_id, failing, sel, limit, offset, flipped=flipped)
    d = r.to_dict()
    lines = [*_warnings(r), _page_line(d), "criteria: " + ", ".join(f"{k + 1} {c}" for k, c in enumerate(r.criteria))]
    for a in r.answers:
        lines.append(f"- {a.item_id} (round {a.gen_round}, class {a.cls or '-'})")
        lines += [f"    judge round {v.judge_round}: " + " ".join(_MARKS[m] for m in v.verdicts) for v in a.rounds]
        if a.flipped:
            lines.append("    flipped between judge rounds: " + ", ".join(a.flipped))
    emit(r, as_json, "\n".join(lines))


_MARKS = {"pass": "pass", "fail": "FAIL", "error": "ERROR", None: "-"}


@cli.command("people-crosstab")
@click.argument("gen_id")
@click.option("--a", "a", required=True, help="Criterion in the rows.")
@click.option("--b", "b", required=True, help="Criterion in the columns.")
@click.option("--gen-round", type=int, default=None, help="Only this generation round (default: all).")
@class_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def people_crosstab_cmd(obj: Ctx, gen_id, a, b, gen_round, as_json) -> None:
    """The 2x2 of two criteria as people labelled them in GEN_ID (label sets and the label store)."""
    from evalcore.analysis.answers import people_crosstab
    from evalcore.analysis.selection import Selection

    r = people_crosstab(
        obj.store,
        gen_id,
        a,
        b,
        Selection(gen_round=gen_round, include_holdout=obj.include_holdout, classes=obj.classes),
    )
    t = r.table
    text = "\n".join(
        [
            f"people on {gen_id}: {r.n} answers",
            f"{a} pass: {b} pass {t.a_pass.b_pass}, {b} fail {t.a_pass.b_fail}; "
            f"{b} fails {_fmt(r.b_fail_rate_given_a_pass, True)}",
            f"{a} fail: {b} pass {t.a_fail.b_pass}, {b} fail {t.a_fail.b_fail}; "
            f"{b} fails {_fmt(r.b_fail_rate_given_a_fail, True)}",
            _ratio_phi(r),
        ]
    )
    emit(r, as_json, text)


@cli.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--a", "a", required=True, help="Criterion in the rows.")
@click.option("--b", "b", required=True, help="Criterion in the columns.")
@click.option(
    "--a-verdict", type=click.Choice(["pass", "fail"]), default="fail", show_default=True, help="The row of the cell."
)
@click.option(
    "--b-verdict",
    type=click.Choice(["pass", "fail"]),
    default="fail",
    show_default=True,
    help="The column of the cell.",
)
@click.option("--in", "in_run", default=None, help="Whose 2x2: one of the runs, or 'people' (default: the first run).")
@click.option("--human", is_flag=True, help="Also show people's verdicts.")
@selection_options
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def cell(
    obj: Ctx,
    run_ids,
    a,
    b,
    a_verdict,
    b_verdict,
    in_run,
    human,
    judge_round,
    majority,
    gen_round,
    limit,
    offset,
    as_json,
) -> None:
    """The answers in one cell of a 2x2, with every instrument's verdict and reason on both criteria."""
    from evalcore.analysis.answers import cell_answers

    r = cell_answers(
        obj.store,
        list(run_ids),
        a,
        b,
        a_verdict == "fail",
        b_verdict == "fail",
        in_run or run_ids[0],
        human,
        _selection(obj, judge_round, majority, gen_round),
        limit,
        offset,
    )
    d = r.to_dict()  # (the answer lines read the drill-downs' JSON)
    lines = [f"{a} {a_verdict}, {b} {b_verdict} under {r.in_run}: {_page_line(d)}"]
    for ans in d["answers"]:
        lines += _answer_lines(ans, [(f"{who} {c}", s) for who, per in ans["verdicts"].items() for c, s in per.items()])
    emit(r, as_json, "\n".join(lines))


@cli.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--criterion", required=True, help="The criterion whose verdicts changed.")
@click.option(
    "--direction",
    type=click.Choice(["fail_a_pass_b", "pass_a_fail_b", "fail_both"]),
    default="fail_a_pass_b",
    show_default=True,
    help="Which cell of the flips table.",
)
@selection_options
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def flipped(
    obj: Ctx, run_a, run_b, criterion, direction, judge_round, majority, gen_round, limit, offset, as_json
) -> None:
    """The answers behind one cell of `flips` on a criterion, with both runs' verdicts and reasons."""
    from evalcore.analysis.harness import flip_answers

    r = flip_answers(
        obj.store, run_a, run_b, criterion, direction, _selection(obj, judge_round, majority, gen_round), limit, offset
    )
    d = r.to_dict()  # (the answer lines read the drill-downs' JSON)
    lines = [*(f"WARNING: {w}" for w in r.warnings), f"{criterion}, {direction}: {_page_line(d)}"]
    for ans in d["answers"]:
        lines += _answer_lines(ans, [(f"A {run_a}", ans["a"]), (f"B {run_b}", ans["b"])])
    emit(r, as_json, "\n".join(lines))
