"""Command-line commands of issue 7: ``diff``, ``compare``, ``gate``, ``trend`` and ``ledger``
(registered on the CLI group by evalcore.cli; the work is in evalcore.analysis.comparison,
evalcore.analysis.gating and evalcore.review.ledger)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalcore.cli._common import FINITE, Ctx, _selection, _table, emit, selection_options
from evalcore.cli.suite import holdout_option, read_suites

if TYPE_CHECKING:
    from evalcore.analysis.configs import Diff

_HOLDOUT_HELP = "Count holdout items too (hidden by default)."


def _compare_options(f):
    f = click.option(
        "--effect",
        type=FINITE,
        default=0.05,
        show_default=True,
        help="Effect to size the comparison for (items or rounds needed), as a rate difference.",
    )(f)
    f = click.option("--n-boot", type=int, default=2000, show_default=True, help="Bootstrap resamples.")(f)
    f = click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")(f)
    f = click.option(
        "--metric",
        default="all_pass",
        show_default=True,
        help="Headline figure of the verdict: all_pass, ternary ((correct + 0.5 partial) / N) or a criterion "
        "both runs judged.",
    )(f)
    return holdout_option(_HOLDOUT_HELP)(f)


def _diff_text(d: Diff) -> str:
    rows = [{"knob": r.label, "side": r.side, "status": r.status, "a": _val(r.a), "b": _val(r.b)} for r in d.knobs]
    out = [
        f"A {d.a.kind} {d.a.id}  vs  B {d.b.kind} {d.b.id}: {d.kind}",
        _table(
            rows,
            [
                ("knob", "knob", False),
                ("side", "side", False),
                ("status", "status", False),
                ("a", "A", False),
                ("b", "B", False),
            ],
        ),
    ]
    out += [f"WARNING: {w}" for w in d.warnings]
    return "\n".join(out)


def _val(v) -> str:
    from evalcore.analysis.configs import fmt_value

    s = fmt_value(v)
    return s if len(s) <= 48 else s[:45] + "..."


def _lat(v: dict | None) -> str:
    return "—" if not v else f"{v['mean_ms']:,.0f} / {v['p95_ms']:,.0f} ms"


@click.command("diff")
@click.argument("a")
@click.argument("b")
@click.option("--under-test", default=None, help="The knob the change is about; every other differing knob is a rival.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def diff_cmd(obj: Ctx, a, b, under_test, as_json) -> None:
    """Every knob of two runs (or two generations): held, differs, one side, or not recorded."""
    from evalcore.analysis.configs import diff

    d = diff(obj.store, a, b, under_test=under_test)
    emit(d, as_json, _diff_text(d))


@click.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@_compare_options
@selection_options
@click.option("--markdown", "md", is_flag=True, help="Print the Markdown summary instead of text.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def compare_cmd(obj: Ctx, baseline, candidate, metric, judge_round, majority, gen_round, md, as_json, **kw) -> None:
    """Per-round figures, paired deltas, stable wins and regressions, noise floor, power, the
    two-sided bar, cost beside score."""
    from evalcore.analysis.comparison import compare
    from evalcore.analysis.gating import markdown

    sel = _selection(obj, judge_round, majority, gen_round)
    from evalcore.review.corrected import correct

    c = compare(
        obj.store, baseline, candidate, sel=sel, headline=metric, correct=correct, **kw
    )  # kw: seed, n_boot, effect
    emit(c, as_json, markdown(c) + _means_text(c))


def _means_text(c) -> str:
    """Each ordinal and continuous criterion's mean score on both sides (issue 40), after the summary."""
    if not c.means:
        return ""
    rows = [
        {
            "criterion": m.criterion,
            "a": m.baseline.text(name=False),
            "b": m.candidate.text(name=False),
            "d": None if m.difference is None else f"{m.difference:+.3f}",
        }
        for m in c.means
    ]
    cols = [("criterion", "criterion", False), ("a", "A mean [95% t]", False), ("b", "B mean [95% t]", False),
            ("d", "B - A", False)]  # fmt: skip
    return "\n\nMean scores over the items both runs judged\n" + _table(rows, cols)


@click.command("gate")
@click.argument("baseline")
@click.argument("candidate")
@click.option(
    "--allowlist",
    type=click.Path(dir_okay=False),
    default=None,
    help="Known misses, one per line: ITEM_ID OWNER EXPIRES(YYYY-MM-DD) [reason].",
)
@click.option(
    "--accept-now-passing",
    is_flag=True,
    help="Pass even though allowlisted items now pass (the output says so); by default they fail the gate "
    "until removed.",
)
@click.option(
    "--corrected",
    is_flag=True,
    help="Decide the gain on the corrected delta (PPI++ pass rates against gold on both sides) instead of the "
    "raw judge verdicts; fails when either side has no gold.",
)
@click.option(
    "--allow-measurement-change",
    is_flag=True,
    help="Gate even when the judge, its rounds or the suite changed (the summary leads with it); by default "
    "such a pair fails: it compares instruments, not systems.",
)
@click.option(
    "--max-latency-increase",
    default=None,
    metavar="25%|500ms|2s",
    help="Also fail when the system's latency per answer (mean or p95) rose by more than this.",
)
@click.option(
    "--markdown",
    "md_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the Markdown summary (for a pull request) to this file.",
)
@_compare_options
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def gate_cmd(obj: Ctx, md_file, metric, effect, judge_round, majority, gen_round, as_json, **kw) -> None:
    """Exit 0 only when the two-sided bar holds (a gain clearing its interval and the noise floor),
    no new miss appears outside the allowlist, no entry expired or now passes, and the latency bar
    holds (exit 1 otherwise; 2 for bad input)."""
    from evalcore.analysis.gating import gate, markdown

    # kw: the two runs, the allowlist, the bootstrap and the latency bar (--effect sizes compare only)
    from evalcore.review.corrected import correct

    g = gate(obj.store, sel=_selection(obj, judge_round, majority, gen_round), headline=metric, correct=correct, **kw)
    text = markdown(g)
    if md_file:
        Path(md_file).write_text(text, encoding="utf-8")
    emit(g, as_json, text)
    sys.exit(0 if g.gate.passed else 1)


@click.command("trend")
@click.option("--suite", "suite_id", default=None, help="Only runs over this suite.")
@click.option("--metric", default="all_pass", show_default=True, help="all_pass, ternary or a criterion name.")
@holdout_option(_HOLDOUT_HELP)
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def trend_cmd(obj: Ctx, suite_id, metric, judge_round, majority, gen_round, as_json) -> None:
    """A headline over time across runs, broken where the judge model, judge prompt, rubric or suite
    changed; polluted runs are marked."""
    from evalcore.analysis.gating import trend

    t = trend(obj.store, suite_id=suite_id, metric=metric, sel=_selection(obj, judge_round, majority, gen_round))
    read_suites(p.suite_id for p in t.points)
    rows = [
        {
            "segment": p.segment,
            "run": p.run_id,
            "created": p.created_at[:16],
            "value": p.value,
            "spread": p.spread,
            "status": "POLLUTED" if p.polluted else p.status,
            "latency": _lat(p.latency.get("system")),
            "breaks": "; ".join(p.breaks),
        }
        for p in t.points
    ]
    emit(
        t,
        as_json,
        _table(
            rows,
            [
                ("segment", "line", False),
                ("run", "run", False),
                ("created", "created", False),
                ("value", metric, True),
                ("spread", "spread", True),
                ("status", "status", False),
                ("latency", "system latency mean / p95", False),
                ("breaks", "break", False),
            ],
        ),
    )


@click.group("ledger")
def ledger() -> None:
    """The decision ledger (in the state directory): decisions linked to the runs they rest on."""


@ledger.command("add")
@click.option("--title", required=True, help="What was decided, in a line.")
@click.option(
    "--type",
    "type_",
    default=None,
    help="accepted, rejected, reverted, falsified, measurement-correction, possible-noise "
    "(a judge-only change over identical answers is typed measurement-correction automatically).",
)
@click.option("--baseline", default=None, help="Baseline run.")
@click.option("--candidate", default=None, help="Candidate run.")
@click.option("--run", "runs", multiple=True, help="A run the entry rests on (repeatable).")
@click.option("--metric", default="all_pass", show_default=True, help="Headline figure.")
@click.option("--note", default="", help="Free text.")
@click.option("--by", required=True, help="Who decided.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed of the delta's interval.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def ledger_add(obj: Ctx, runs, as_json, **kw) -> None:
    """Add an entry; its figures are pulled from the runs, never typed."""
    from evalcore.review.ledger import Ledger

    e = Ledger(obj.store).add(runs=list(runs), **kw)
    emit(
        e,
        as_json,
        f"{e['entry_id']}: {e['type']}"
        + (" (automatic)" if e["type_automatic"] else "")
        + (f"; flags: {'; '.join(e['flags'])}" if e["flags"] else ""),
    )


@ledger.command("amend")
@click.argument("entry_id")
@click.option("--title", default=None)
@click.option("--type", "type_", default=None)
@click.option("--note", default=None)
@click.option("--by", required=True, help="Who amends.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def ledger_amend(obj: Ctx, entry_id, title, type_, note, by, as_json) -> None:
    """Amend an entry's title, type or note (appended; the history keeps every version)."""
    from evalcore.review.ledger import Ledger

    e = Ledger(obj.store).amend(entry_id, by=by, title=title, type_=type_, note=note)
    emit(e, as_json, f"{e['entry_id']}: amended ({len(e['history'])} events)")


@ledger.command("retire")
@click.argument("entry_id")
@click.option("--reason", required=True)
@click.option("--by", required=True, help="Who retires it.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def ledger_retire(obj: Ctx, entry_id, reason, by, as_json) -> None:
    """Retire an entry (it stays in the ledger, marked retired)."""
    from evalcore.review.ledger import Ledger

    e = Ledger(obj.store).retire(entry_id, by=by, reason=reason)
    emit(e, as_json, f"{e['entry_id']}: retired")


@ledger.command("predict")
@click.option("--title", required=True, help="What the run should show, in a line.")
@click.option("--metric", default="all_pass", show_default=True, help="The figure predicted.")
@click.option(
    "--expect",
    required=True,
    help="'<op> <value>' on the metric's mean of one run, or on the paired delta of a baseline and a "
    "candidate: '>= 0.80', '< 75%', '> 2%'.",
)
@click.option("--note", default="", help="Free text.")
@click.option("--by", required=True, help="Who predicts.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def ledger_predict(obj: Ctx, as_json, **kw) -> None:
    """Write the expected outcome before the run (an entry of type prediction; `ledger check` tests it)."""
    from evalcore.review.ledger import Ledger

    e = Ledger(obj.store).predict(**kw)
    emit(e, as_json, f"{e['entry_id']}: prediction {e['metric']} {e['prediction']['text']}")


@ledger.command("check")
@click.argument("entry_id")
@click.option("--run", default=None, help="The run the prediction is about (its metric's mean).")
@click.option("--baseline", default=None, help="Baseline run (the prediction is about the paired delta).")
@click.option("--candidate", default=None, help="Candidate run.")
@click.option("--by", required=True, help="Who checks.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def ledger_check(obj: Ctx, entry_id, as_json, **kw) -> None:
    """Check a prediction against the run(s) that came: held, or FALSIFIED (the entry's type becomes falsified)."""
    from evalcore.review.ledger import Ledger

    led = Ledger(obj.store)
    led.check(entry_id, **kw)
    e = next(x for x in led.entries() if x["entry_id"] == entry_id)
    emit(e, as_json, f"{entry_id}: {e['outcome']['text']}")


@ledger.command("list")
@click.option("--active", is_flag=True, help="Leave retired entries out.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def ledger_list(obj: Ctx, active, as_json) -> None:
    """Entries with their figures as the runs hold them now, and their flags."""
    from evalcore.review.ledger import Ledger

    es = Ledger(obj.store).entries(include_retired=not active)
    rows = [
        {
            "id": e["entry_id"],
            "type": e["type"],
            "status": e["status"],
            "title": e["title"],
            "runs": " -> ".join(x for x in (e["baseline"], e["candidate"]) if x) or ", ".join(e["runs"]),
            "flags": "; ".join(e["figures_now"]["flags"]),
            "latency": e["figures_now"].get("latency_text") or "—",
            "prediction": e["outcome"]["text"] if e.get("outcome") else "",
        }
        for e in es
    ]
    emit(
        es,
        as_json,
        _table(
            rows,
            [
                ("id", "id", False),
                ("type", "type", False),
                ("status", "status", False),
                ("title", "title", False),
                ("runs", "runs", False),
                ("latency", "system latency", False),
                ("flags", "flags", False),
            ]
            + ([("prediction", "prediction", False)] if any(r["prediction"] for r in rows) else []),
        )
        if rows
        else "no ledger entries (evalcore ledger add)",
    )


@ledger.command("export")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of stdout.")
@click.pass_obj
def ledger_export(obj: Ctx, fmt, output) -> None:
    """The whole ledger as Markdown (figures as the runs hold them) or JSON."""
    import json

    from evalcore.review.ledger import Ledger, export_markdown

    es = Ledger(obj.store).entries()
    text = export_markdown(es) if fmt == "md" else json.dumps(es, indent=1, default=str)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    for command in (diff_cmd, compare_cmd, gate_cmd, trend_cmd, ledger):
        cli.add_command(command)
