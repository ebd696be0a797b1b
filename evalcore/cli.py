"""The ``evalcore`` command line.

Every command takes ``--data`` (``EVALCORE_DATA``) and ``--state`` (``EVALCORE_STATE``); every
figure the app shows is available here with ``--json``. Typed errors become one line on stderr
(``error: <file>: <field>: <problem>``) and exit code 2; only bugs show a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .errors import EvalcoreError


class Ctx:
    def __init__(self, data: str | None, state: str | None):
        self.data_opt = data
        self.state_opt = state
        self._store = None

    @property
    def store(self):
        if self._store is None:
            from .store import Store
            self._store = Store(self.data_opt, self.state_opt)
        return self._store


def emit(obj: Any, as_json: bool, text: str | None = None) -> None:
    if as_json:
        click.echo(json.dumps(obj, indent=1, default=str, allow_nan=False) if obj is not None else "null")
    elif text is not None:
        click.echo(text)


def _fmt(v: Any, pct: bool = False) -> str:
    if v is None:
        return "-"
    if pct:
        return f"{100 * v:.1f}%"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _table(rows: list[dict], cols: list[tuple[str, str, bool]]) -> str:
    head = [c[1] for c in cols]
    body = [[_fmt(r.get(k), pct) for k, _, pct in cols] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data", envvar="EVALCORE_DATA", type=click.Path(file_okay=False), default=None,
              help="Data directory (suites, generations, runs, sessions). Default: $EVALCORE_DATA or the bundled demo.")
@click.option("--state", envvar="EVALCORE_STATE", type=click.Path(file_okay=False), default=None,
              help="Writable state directory (labels, judgments, ledger). Default: $EVALCORE_STATE or ./.evalcore-state.")
@click.version_option(package_name="evalcore")
@click.pass_context
def cli(ctx: click.Context, data: str | None, state: str | None) -> None:
    """evalcore: an adjudication workbench for LLM-as-a-judge evaluations."""
    ctx.obj = Ctx(data, state)


# --------------------------------------------------------------------------- browsing


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def runs(obj: Ctx, as_json: bool) -> None:
    """List runs: status, judge, mode, pass rate per judge round, calls, tokens, cost, latency."""
    from .queries import runs_summary
    rows = runs_summary(obj.store)
    text = _table(rows, [("run_id", "run", False), ("status", "status", False), ("mode", "mode", False),
                         ("judge_model", "judge", False), ("judge_rounds", "rounds", False),
                         ("items", "items", False), ("pass_rate_mean", "pass", True),
                         ("pass_rate_spread", "spread", True), ("calls", "calls", False),
                         ("cost_usd", "cost $", False)])
    emit(rows, as_json, text)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def generations(obj: Ctx, as_json: bool) -> None:
    """List generations: suite, rounds, outputs, abstention, tokens, cost, latency, knobs."""
    from .queries import generations_summary
    rows = generations_summary(obj.store)
    emit(rows, as_json, _table(rows, [("gen_id", "generation", False), ("suite_id", "suite", False),
                                      ("status", "status", False), ("rounds", "rounds", False),
                                      ("outputs", "outputs", False), ("abstained_rate", "abstained", True),
                                      ("cost_usd", "cost $", False)]))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def suites(obj: Ctx, as_json: bool) -> None:
    """List suites: items, holdout items, curated, content hash."""
    from .queries import suites_summary
    rows = suites_summary(obj.store)
    emit(rows, as_json, _table(rows, [("suite_id", "suite", False), ("items", "items", False),
                                      ("holdout_items", "holdout", False), ("curated", "curated", False),
                                      ("content_hash", "hash", False)]))


@cli.command()
@click.argument("run_id")
@click.argument("item_id")
@click.option("--gen-round", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(obj: Ctx, run_id: str, item_id: str, gen_round: int, as_json: bool) -> None:
    """Show one answer with its item and every verdict on it in RUN_ID."""
    from .queries import item_view
    v = item_view(obj.store, run_id, item_id, gen_round)
    lines = [f"item {item_id} (round {gen_round}) in run {run_id}", "", "INPUT:", str(v["input"]), "",
             "OUTPUT:", str(v["output"]), "", "VERDICTS:"]
    for d in v["verdicts"]:
        lines.append(f"  r{d['judge_round']} {d['criterion']}: {d['raw_verdict']} -> passed={d['passed']}  {d['reason'] or ''}")
    emit(v, as_json, "\n".join(lines))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def validate(obj: Ctx, as_json: bool) -> None:
    """Check every file in the data directory against the data contract."""
    counts = obj.store.validate()
    emit({"ok": True, **counts}, as_json, "ok: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


@cli.command()
@click.option("--markdown", is_flag=True, help="Print docs/FORMAT.md (the default).")
def schema(markdown: bool) -> None:
    """Print the data contract (docs/FORMAT.md is this command's output)."""
    from .schema import format_markdown
    click.echo(format_markdown(), nl=False)


@cli.command()
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Data directory to write.")
@click.option("--seed", type=int, default=None, help="Seed of the simulated world (default: the demo's).")
@click.option("--keys", type=click.Path(file_okay=False), default=None, help="Keys directory (default: <out>-keys).")
def demo(out: str, seed: int | None, keys: str | None) -> None:
    """Write the SIMULATED demo world (suites, generations, runs, labels, sessions)."""
    from .demo import DEFAULT_SEED, generate_demo
    summary = generate_demo(Path(out), DEFAULT_SEED if seed is None else seed, Path(keys) if keys else None)
    click.echo(f"wrote simulated demo to {out}: " + ", ".join(f"{k}={v}" for k, v in summary.items()))


# --------------------------------------------------------------------------- analysis


def _selection(judge_round: int | None, majority: bool, gen_round: int | None):
    from .analysis import Selection
    if majority and judge_round is not None:
        raise click.UsageError("--judge-round and --majority exclude each other")
    return Selection(judge_round=judge_round or 1, majority=majority, gen_round=gen_round)


def selection_options(f):
    f = click.option("--gen-round", type=int, default=None, help="Only this generation round (default: all).")(f)
    f = click.option("--majority", is_flag=True, help="Majority over judge rounds (a tie fails).")(f)
    f = click.option("--judge-round", type=int, default=None, help="Judge round to read (default 1).")(f)
    return f


@cli.command()
@click.argument("run_id")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def attribution(obj: Ctx, run_id, judge_round, majority, gen_round, as_json) -> None:
    """Failures per criterion, their share, the all-pass and gate rates, failures by class."""
    from .analysis import attribution as attr
    r = attr(obj.store, run_id, _selection(judge_round, majority, gen_round))
    lines = []
    if r.get("warning"):
        lines.append(f"WARNING: {r['warning']}")
    lines.append(_table(r["criteria"], [("criterion", "criterion", False), ("gate", "gate", False),
                                        ("judged", "judged", False), ("failed", "failed", False),
                                        ("fail_rate", "fail rate", True), ("share_of_failures", "share", True),
                                        ("fail_only_this", "only this", False), ("errored", "errored", False)]))
    ap = r["all_pass"]
    lines.append(f"all-pass: {ap['passed']}/{ap['of']} = {_fmt(ap['rate'], True)} of complete answers "
                 f"({r['answers_with_errors']} with errored verdicts, {r['answers_incomplete']} incomplete, excluded)")
    if r["gates"]["criteria"]:
        g = r["gates"]
        lines.append(f"through the gates ({', '.join(g['criteria'])}): {g['passed']}/{g['of']} = {_fmt(g['rate'], True)}")
    for t in r["ternary"]:
        lines.append(f"{t['criterion']}: correct {t['correct']}, partial {t['partial']}, wrong {t['wrong']}; "
                     f"headline (correct + 0.5 partial) / N = {_fmt(t['headline'], True)}")
    emit(r, as_json, "\n".join(lines))


@cli.command()
@click.argument("run_id")
@click.option("--a", "a", required=True, help="Criterion in the rows.")
@click.option("--b", "b", required=True, help="Criterion in the columns.")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def crosstab(obj: Ctx, run_id, a, b, judge_round, majority, gen_round, as_json) -> None:
    """The 2x2 of two criteria, B's failure rate within each row of A, their ratio, phi."""
    from .analysis import crosstab as ct
    r = ct(obj.store, run_id, a, b, _selection(judge_round, majority, gen_round))
    t = r["table"]
    w = max(len(a), 8)
    lines = ([f"WARNING: {r['warning']}"] if r.get("warning") else []) + [
        f"{'':{w}}  {b + ' pass':>14}  {b + ' fail':>14}  {'total':>7}  {b} fails",
        f"{a + ' pass':{w}}  {t['a_pass']['b_pass']:>14}  {t['a_pass']['b_fail']:>14}  {t['a_pass']['total']:>7}  "
        f"{_fmt(r['b_fail_rate_given_a_pass'], True)}",
        f"{a + ' fail':{w}}  {t['a_fail']['b_pass']:>14}  {t['a_fail']['b_fail']:>14}  {t['a_fail']['total']:>7}  "
        f"{_fmt(r['b_fail_rate_given_a_fail'], True)}",
        f"{'total':{w}}  {t['total']['b_pass']:>14}  {t['total']['b_fail']:>14}  {t['total']['total']:>7}",
        f"ratio {_fmt(r['ratio'])}" + (f" ({r['ratio_reason']})" if r["ratio_reason"] else "")
        + f"; phi {_fmt(r['phi'])}" + (f" ({r['phi_reason']})" if r["phi_reason"] else "")]
    emit(r, as_json, "\n".join(lines))


@cli.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--human", is_flag=True, help="Add people (label sets and the label store) as an instrument.")
@selection_options
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--n-boot", type=int, default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def association(obj: Ctx, run_ids, human, judge_round, majority, gen_round, seed, n_boot, as_json) -> None:
    """phi for every criterion pair per instrument, side by side, classed induced / real / undetermined."""
    from .analysis import association as assoc
    r = assoc(obj.store, list(run_ids), human=human, sel=_selection(judge_round, majority, gen_round), seed=seed,
              n_boot=n_boot)
    names = [i["name"] for i in r["instruments"]]
    rows = []
    for p in r["pairs"]:
        row = {"pair": f"{p['a']} x {p['b']}", "class": p["class"]}
        for n in names:
            v = p["instruments"][n]
            iv = "" if v["lo"] is None else f" [{v['lo']:.2f}, {v['hi']:.2f}]"
            row[n] = "undefined" if v["phi"] is None else f"{v['phi']:.2f}{iv}"
        rows.append(row)
    head = (f"{r['shared_answers']} shared answers" + (f", {r['people_answers']} labelled by people" if human else "")
            + f"; {int(100 * r['level'])}% intervals, threshold {r['threshold']}")
    text = "\n".join([*(f"WARNING: {w}" for w in r["warnings"]), head,
                      _table(rows, [("pair", "pair", False), *((n, n, False) for n in names), ("class", "class", False)])])
    emit(r, as_json, text)


@cli.command()
@click.argument("run_id")
@click.option("--reference", default=None, help="A one-criterion (split) run on the same generation.")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def position(obj: Ctx, run_id, reference, judge_round, majority, gen_round, as_json) -> None:
    """The position effect in a single-call run: failure rate and agreement with a split run by position."""
    from .analysis import position_effect
    r = position_effect(obj.store, run_id, reference, _selection(judge_round, majority, gen_round))
    emit(r, as_json, _table(r["positions"], [("position", "position", False), ("judged", "judged", False),
                                             ("fail_rate", "fail rate", True),
                                             ("fail_rate_after_fail", "fail | previous failed", True),
                                             ("agreement_with_reference", "agrees with reference", True)]))


@cli.command()
@click.argument("run_a")
@click.argument("run_b")
@selection_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def flips(obj: Ctx, run_a, run_b, judge_round, majority, gen_round, as_json) -> None:
    """Per criterion: fail under A and pass under B, the reverse, both; composition; all-pass under each."""
    from .analysis import flips as fl
    r = fl(obj.store, run_a, run_b, _selection(judge_round, majority, gen_round))
    ap = r["all_pass"]
    text = "\n".join([*(f"WARNING: {w}" for w in r["warnings"]),
                      _table(r["criteria"], [("criterion", "criterion", False), ("fail_a", "fail A", False),
                                             ("fail_b", "fail B", False), ("fail_a_pass_b", "A fail, B pass", False),
                                             ("pass_a_fail_b", "A pass, B fail", False), ("fail_both", "both", False),
                                             ("share_of_failures_a", "share A", True),
                                             ("share_of_failures_b", "share B", True)]),
                      f"all-pass on {ap['answers']} answers: A {_fmt(ap['a'], True)}, B {_fmt(ap['b'], True)}"])
    emit(r, as_json, text)


# --------------------------------------------------------------------------- drill-downs
# The answers behind a figure of the analysis commands, one page at a time.


def page_options(f):
    f = click.option("--offset", type=int, default=0, show_default=True, help="Skip this many answers.")(f)
    f = click.option("--limit", type=int, default=25, show_default=True, help="Answers per page (at most 500).")(f)
    return f


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
@click.pass_obj
def failing(obj: Ctx, run_id, criterion, only, judge_round, majority, gen_round, limit, offset, as_json) -> None:
    """The answers RUN_ID fails on a criterion, with the judge's reason (attribution drill-down)."""
    from .analysis import answers_failing
    r = answers_failing(obj.store, run_id, criterion, only, _selection(judge_round, majority, gen_round), limit, offset)
    lines = ([f"WARNING: {r['warning']}"] if r.get("warning") else []) + [_page_line(r)]
    for a in r["answers"]:
        lines += _answer_lines(a, [(criterion, a)])
    emit(r, as_json, "\n".join(lines))


@cli.command("people-crosstab")
@click.argument("gen_id")
@click.option("--a", "a", required=True, help="Criterion in the rows.")
@click.option("--b", "b", required=True, help="Criterion in the columns.")
@click.option("--gen-round", type=int, default=None, help="Only this generation round (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def people_crosstab_cmd(obj: Ctx, gen_id, a, b, gen_round, as_json) -> None:
    """The 2x2 of two criteria as people labelled them in GEN_ID (label sets and the label store)."""
    from .analysis import Selection, people_crosstab
    r = people_crosstab(obj.store, gen_id, a, b, Selection(gen_round=gen_round))
    t = r["table"]
    text = "\n".join([
        f"people on {gen_id}: {r['n']} answers",
        f"{a} pass: {b} pass {t['a_pass']['b_pass']}, {b} fail {t['a_pass']['b_fail']}; "
        f"{b} fails {_fmt(r['b_fail_rate_given_a_pass'], True)}",
        f"{a} fail: {b} pass {t['a_fail']['b_pass']}, {b} fail {t['a_fail']['b_fail']}; "
        f"{b} fails {_fmt(r['b_fail_rate_given_a_fail'], True)}",
        f"ratio {_fmt(r['ratio'])}" + (f" ({r['ratio_reason']})" if r["ratio_reason"] else "")
        + f"; phi {_fmt(r['phi'])}" + (f" ({r['phi_reason']})" if r["phi_reason"] else "")])
    emit(r, as_json, text)


@cli.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--a", "a", required=True, help="Criterion in the rows.")
@click.option("--b", "b", required=True, help="Criterion in the columns.")
@click.option("--a-verdict", type=click.Choice(["pass", "fail"]), default="fail", show_default=True,
              help="The row of the cell.")
@click.option("--b-verdict", type=click.Choice(["pass", "fail"]), default="fail", show_default=True,
              help="The column of the cell.")
@click.option("--in", "in_run", default=None, help="Whose 2x2: one of the runs, or 'people' (default: the first run).")
@click.option("--human", is_flag=True, help="Also show people's verdicts.")
@selection_options
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def cell(obj: Ctx, run_ids, a, b, a_verdict, b_verdict, in_run, human, judge_round, majority, gen_round, limit, offset,
         as_json) -> None:
    """The answers in one cell of a 2x2, with every instrument's verdict and reason on both criteria."""
    from .analysis import cell_answers
    r = cell_answers(obj.store, list(run_ids), a, b, a_verdict == "fail", b_verdict == "fail", in_run or run_ids[0],
                     human, _selection(judge_round, majority, gen_round), limit, offset)
    lines = [f"{a} {a_verdict}, {b} {b_verdict} under {r['in']}: {_page_line(r)}"]
    for ans in r["answers"]:
        lines += _answer_lines(ans, [(f"{who} {c}", s) for who, per in ans["verdicts"].items() for c, s in per.items()])
    emit(r, as_json, "\n".join(lines))


@cli.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--criterion", required=True, help="The criterion whose verdicts changed.")
@click.option("--direction", type=click.Choice(["fail_a_pass_b", "pass_a_fail_b", "fail_both"]), default="fail_a_pass_b",
              show_default=True, help="Which cell of the flips table.")
@selection_options
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def flipped(obj: Ctx, run_a, run_b, criterion, direction, judge_round, majority, gen_round, limit, offset,
            as_json) -> None:
    """The answers behind one cell of `flips` on a criterion, with both runs' verdicts and reasons."""
    from .analysis import flip_answers
    r = flip_answers(obj.store, run_a, run_b, criterion, direction, _selection(judge_round, majority, gen_round),
                     limit, offset)
    lines = [*(f"WARNING: {w}" for w in r["warnings"]), f"{criterion}, {direction}: {_page_line(r)}"]
    for ans in r["answers"]:
        lines += _answer_lines(ans, [(f"A {run_a}", ans["a"]), (f"B {run_b}", ans["b"])])
    emit(r, as_json, "\n".join(lines))


# --------------------------------------------------------------------------- labels


@cli.group()
def labels() -> None:
    """Human labels: an append-only history in the state directory."""


@labels.command("add")
@click.option("--item", "item_id", required=True)
@click.option("--criterion", required=True)
@click.option("--value", default=None, help="pass/fail, a score, or correct/partial/wrong.")
@click.option("--reviewer", required=True)
@click.option("--note", default=None)
@click.option("--gen", "gen_id", default=None, help="Generation (needed when the item is in several).")
@click.option("--round", "gen_round", type=int, default=1, show_default=True, help="Generation round.")
@click.option("--outcome", type=click.Choice(["decided", "test_wrong", "skipped", "withdrawn"]), default="decided",
              show_default=True)
@click.option("--queue", default="cli", show_default=True, help="Where the decision came from.")
@click.option("--reason-code", default=None, help="Why the case was reviewed.")
@click.option("--supersedes", type=int, default=None, help="Edit id this one replaces or withdraws.")
@click.option("--tag", "tags", multiple=True, help="Free-form failure tag (repeatable).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_add(obj: Ctx, item_id, criterion, value, reviewer, note, gen_id, gen_round, outcome, queue,
               reason_code, supersedes, tags, as_json) -> None:
    """Record one decision (appended; nothing is overwritten)."""
    from .labels import LabelStore
    ls = LabelStore(obj.store)
    if outcome == "decided" and value is None:
        raise click.UsageError("--value is required for a decision")
    row = ls.add(item_id=item_id, criterion=criterion, value=value, reviewer=reviewer, note=note, gen_id=gen_id,
                 gen_round=gen_round, outcome=outcome, queue=queue, reason_code=reason_code, supersedes=supersedes,
                 tags=tags)
    emit(row, as_json, f"edit {row['edit_id']}: {row['gen_id']}/{row['item_id']} r{row['gen_round']} "
                       f"{row['criterion']} = {row['value']} ({row['outcome']}) by {row['reviewer']} -> {ls.path}")


@labels.command("list")
@click.option("--history", is_flag=True, help="Every edit, not only the current labels.")
@click.option("--shipped/--no-shipped", default=True, show_default=True, help="Include labels shipped with the data.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_list(obj: Ctx, history: bool, shipped: bool, as_json: bool) -> None:
    """Show current labels (or the history), shipped ones marked as such."""
    from .labels import LabelStore
    ls = LabelStore(obj.store)
    rows = (ls.shipped() if shipped else []) + (ls.history() if history else ls.current())
    emit(rows, as_json, _table(rows, [("source", "source", False), ("edit_id", "edit", False), ("gen_id", "gen", False),
                                      ("item_id", "item", False), ("criterion", "criterion", False),
                                      ("value", "value", False), ("outcome", "outcome", False),
                                      ("reviewer", "reviewer", False), ("created_at", "when", False)]))


@labels.command("export")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="File to write (stdout for csv/json).")
@click.option("--history", is_flag=True, help="Every edit instead of the current labels.")
@click.option("--shipped/--no-shipped", default=True, show_default=True)
@click.pass_obj
def labels_export(obj: Ctx, fmt: str, out: str | None, history: bool, shipped: bool) -> None:
    """Export labels with their provenance."""
    from .labels import LabelStore, export_labels
    text = export_labels(LabelStore(obj.store), fmt, Path(out) if out else None, history=history,
                         include_shipped=shipped)
    if text is not None:
        click.echo(text, nl=False)


# --------------------------------------------------------------------------- pairwise sessions
# make -> label -> close (the one step given the keys directory) -> report. See docs/PAIRWISE.md.


@cli.group()
def pairs() -> None:
    """Blinded pairwise sessions: make, label, close (unblind), report."""


@pairs.command("make")
@click.option("--session", "session_id", required=True, help="Id of the new session (must not name an arm).")
@click.option("--arm", "arms", multiple=True, required=True,
              help="NAME=GENERATION_OR_FILE, twice. A file has columns item_id and output (csv, tsv, jsonl, json, parquet).")
@click.option("--keys", "keys_dir", type=click.Path(file_okay=False), default=None,
              help="Keys directory (default: <data>-keys, beside the data directory; never inside data or state).")
@click.option("--normalise", default="headings,bullets,blank-lines", show_default=True,
              help="Comma-separated normalisations (headings, bullets, blank-lines); 'none' for none.")
@click.option("--length-match", is_flag=True, help="Trim the longer answer of each pair to about the shorter's length.")
@click.option("--mirror", type=float, default=0.0, show_default=True,
              help="Share of pairs shown again with the sides swapped (position consistency).")
@click.option("--holdout", type=int, default=0, show_default=True, help="Pairs held out of the headline (drawn at random).")
@click.option("--seed", type=int, default=None, help="Seed of ids, holdouts and mirrors (default: drawn; recorded).")
@click.option("--key-seed", type=int, default=None,
              help="Secret seed of the sides, kept in the keys directory (default: drawn).")
@click.option("--round", "gen_round", type=int, default=1, show_default=True, help="Generation round of generation arms.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_make(obj: Ctx, session_id, arms, keys_dir, normalise, length_match, mirror, holdout, seed, key_seed,
               gen_round, as_json) -> None:
    """Pair two arms by item, normalise, draw sides; write the session (no arm name) and the key."""
    from .blinding import describe
    from .pairs import make_session
    steps = [] if normalise.strip().lower() == "none" else normalise.split(",")
    s = make_session(obj.store, session_id, list(arms), keys_dir=Path(keys_dir) if keys_dir else None,
                     gen_round=gen_round, normalise=steps, length_match=length_match, mirror=mirror,
                     holdout=holdout, seed=seed, key_seed=key_seed)
    lines = [f"session {s['session_id']}: {s['pairs']} pairs ({s['original_pairs']} items, {s['mirrors']} mirrored, "
             f"{s['holdout']} held out), status open, seed {s['seed']}",
             f"normalised: {', '.join(s['normalise']) or 'nothing'}" + ("; lengths matched" if s["length_match"] else ""),
             f"identifiability before normalisation: {describe(s['identifiability']['before'])}",
             f"identifiability as shown: {describe(s['identifiability']['after'])}",
             *(f"WARNING: {w}" for w in s["warnings"]),
             f"session: {s['path']}", f"key: {s['keys']} (give it to `evalcore pairs close` only)"]
    emit(s, as_json, "\n".join(lines))


@pairs.command("label")
@click.option("--session", "session_id", required=True)
@click.option("--pair", "pair_id", required=True)
@click.option("--reviewer", required=True)
@click.option("--choice", type=click.Choice(["left", "right", "same"]), required=True, help="As shown.")
@click.option("--seconds", type=float, default=None, help="Time the judgment took.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_label(obj: Ctx, session_id, pair_id, reviewer, choice, seconds, as_json) -> None:
    """Record one person's choice on a pair of an open session (appended to the state)."""
    from .pairs import progress, record_judgment
    row = record_judgment(obj.store, session_id, pair_id, reviewer, choice, seconds, via="cli")
    p = progress(obj.store, session_id, row["reviewer"])
    emit({**row, "graded": p["graded"], "total": p["total"]}, as_json,
         f"judgment {row['judgment_id']}: {pair_id} = {choice} by {row['reviewer']} "
         f"({p['graded']} of {p['total']} pairs graded)")


@pairs.command("close")
@click.option("--session", "session_id", required=True)
@click.option("--keys", "keys_dir", type=click.Path(file_okay=False), required=True,
              help="The keys directory the session's key was written to.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_close(obj: Ctx, session_id, keys_dir, as_json) -> None:
    """Close a session and unblind it into the state directory (the only step that reads a key)."""
    from .pairs import close_session
    r = close_session(obj.store, session_id, Path(keys_dir))
    emit(r, as_json, f"closed {session_id}: {r['pairs']} pairs, {r['judgments']} judgments; unblinded into "
                     f"{r['unblinded']}")


@pairs.command("report")
@click.option("--session", "session_id", required=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_report(obj: Ctx, session_id, seed, as_json) -> None:
    """Results of a closed, unblinded session (refused while it is open)."""
    from .pairs import format_report, report
    r = report(obj.store, session_id, seed=seed)
    emit(r, as_json, format_report(r))


# --------------------------------------------------------------------------- import
# (commands are added by evalcore.importer.register and evalcore.import_tools.register)


@cli.group("import")
def import_() -> None:
    """Import evaluation data from CSV, JSONL or Parquet."""


def _register_importers() -> None:
    from . import import_tools, importer
    importer.register(import_)  # long, wide, pairs, hanna, summeval, pandalm
    import_tools.register(import_)  # inspect, promptfoo (issue 8)


_register_importers()


# --------------------------------------------------------------------------- models (issue 4)
# generate, judge, judge-pairs, rederive: the commands that call models (litellm is imported by
# evalcore.models only when a call is about to be made). See docs/JUDGE.md.


def _run_options(f):
    """Options every model-calling command takes; they may change between a start and --resume."""
    f = click.option("--quiet", is_flag=True, help="No progress line on stderr.")(f)
    f = click.option("--price", default=None, metavar="IN,OUT",
                     help="US dollars per million input and output tokens, for a model litellm has no price for "
                          "(otherwise the cost is reported as unknown, never 0).")(f)
    f = click.option("--backoff", type=float, default=1.0, show_default=True,
                     help="First backoff in seconds after a 429, 5xx or timeout; doubles per retry, with jitter.")(f)
    f = click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per attempt.")(f)
    f = click.option("--max-retries", type=int, default=4, show_default=True,
                     help="Retries per call after the first attempt (429, 5xx, timeouts, parse errors).")(f)
    f = click.option("--concurrency", type=int, default=8, show_default=True, help="Calls in flight at most.")(f)
    f = click.option("--api-base", default=None, help="Base URL of an OpenAI-compatible endpoint (e.g. a local server).")(f)
    return f


def _opts(api_base, concurrency, max_retries, timeout, backoff, price, quiet):
    from .judge import RunOptions
    from .models import parse_price
    return RunOptions(concurrency=concurrency, max_retries=max_retries, timeout=timeout, backoff=backoff,
                      api_base=api_base, price=parse_price(price), progress=not quiet)


def _interrupted(e: Exception) -> None:
    click.echo(str(e), err=True)
    sys.exit(130)


def _cost(v) -> str:
    return "unknown (no price; pass --price IN,OUT)" if v is None else f"${v:.4f}"


def _done_text(r: dict, what: str, n_label: str, n_key: str) -> str:
    lines = [f"{what} {r.get('run_id') or r.get('gen_id')}: {r['status']}, {r['calls']} calls "
             f"({r.get('failed_calls', r.get('failed', 0))} failed, {r.get('cache_hits', 0)} from the cache), "
             f"{r[n_key]} {n_label}, tokens {r['tokens_in']} in / {r['tokens_out']} out, cost {_cost(r['cost_usd'])}",
             f"written to {r['path']}"]
    if r["status"] == "polluted":
        ids = r.get("failed_call_ids") or []
        lines.insert(0, f"WARNING: POLLUTED: {len(ids) or r.get('failed', 0)} calls still failed after every retry"
                        + (f": {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}" if ids else "")
                        + "; every figure of this result says so")
    return "\n".join(lines)


@cli.command()
@click.option("--suite", "suite_id", default=None, help="Suite to answer.")
@click.option("--model", default=None, help="Model of the system under test, as litellm names it.")
@click.option("--system-prompt", type=click.Path(dir_okay=False), default=None,
              help="File with the system prompt (its hash is recorded as writer_prompt_hash).")
@click.option("--rounds", type=int, default=None, help="Generation rounds: each item answered this many times [1].")
@click.option("--knob", "knob", multiple=True, metavar="KEY=VALUE", help="Record a setting of the system (repeatable).")
@click.option("--temperature", type=float, default=None)
@click.option("--seed", type=int, default=None, help="Seed of round 1; round r sends seed + r - 1.")
@click.option("--limit", type=int, default=None, help="Only the first N items (by item id).")
@click.option("--gen-id", default=None, help="Id of the new generation (default gen-<time>).")
@click.option("--resume", is_flag=True, help="Finish an interrupted generation (--gen-id) without re-sending any completed call.")
@click.option("--reuse", is_flag=True, help="Serve identical calls (same request, same round) from earlier journals.")
@click.option("--dry-run", is_flag=True, help="Print the calls and an offline token and cost estimate; send nothing.")
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def generate(obj: Ctx, suite_id, model, system_prompt, rounds, knob, temperature, seed, limit, gen_id, resume, reuse,
             dry_run, api_base, concurrency, max_retries, timeout, backoff, price, quiet, as_json) -> None:
    """The system under test answers a suite through litellm (rounds, tokens, cost, latency, abstained)."""
    from .generate import GenerateRequest, generate as gen
    from .generate import parse_knobs
    from .judge import format_dry_run, require_writable_data
    from .models import Interrupted
    if not dry_run:
        require_writable_data(obj.data_opt, "generate")
    req = GenerateRequest(suite_id=suite_id, model=model, system_prompt=system_prompt, rounds=rounds,
                          temperature=temperature, seed=seed, limit=limit, gen_id=gen_id, resume=resume, reuse=reuse,
                          dry_run=dry_run, knobs=parse_knobs(knob))
    try:
        r = gen(obj.store, req, _opts(api_base, concurrency, max_retries, timeout, backoff, price, quiet))
    except Interrupted as e:
        _interrupted(e)
    if dry_run:
        emit(r, as_json, format_dry_run(r))
        return
    emit(r, as_json, _done_text(r, "generation", "outputs", "outputs")
         + f"\nabstained: {r['abstained']} of {r['outputs']}")


@cli.command()
@click.option("--gen", "gen_id", default=None, help="Generation to judge.")
@click.option("--rubric", type=click.Path(dir_okay=False), default=None, help="Rubric file (TOML or YAML).")
@click.option("--mode", type=click.Choice(["single", "split", "grouped"]), default=None,
              help="single: one call returns every criterion; split: one call per criterion; grouped: one per group.")
@click.option("--model", default=None, help="Judge model, as litellm names it.")
@click.option("--rounds", type=int, default=None, help="Independent judge rounds over each output [1].")
@click.option("--temperature", type=float, default=None)
@click.option("--seed", type=int, default=None, help="Seed of judge round 1; round r sends seed + r - 1.")
@click.option("--field-order", default=None, metavar="fixed|rotate|A,B,...",
              help="Order the criteria are asked in: the rubric's (fixed), rotated per item, or a list.")
@click.option("--prompt-variant", default=None, help="default, or independent (an evaluate-each-criterion-on-its-own line).")
@click.option("--items", type=click.Path(dir_okay=False), default=None,
              help="Judge only these items (CSV with item_id[,gen_round], JSONL, JSON or one id per line).")
@click.option("--limit", type=int, default=None, help="Only the first N items (by item id).")
@click.option("--run-id", default=None, help="Id of the new run (default run-<time>); with --resume, the run to finish.")
@click.option("--resume", is_flag=True, help="Finish an interrupted run without re-sending any completed call.")
@click.option("--reuse", is_flag=True, help="Serve identical calls (same request, same round) from earlier journals; hits are counted.")
@click.option("--dry-run", is_flag=True, help="Print the calls and an offline token and cost estimate; send nothing.")
@click.option("--structured", type=click.Choice(["auto", "json_schema", "tolerant"]), default="auto", show_default=True,
              help="response_format with a strict JSON schema, or the tolerant parse alone (auto: where supported).")
@click.option("--postprocess", default=None, help="Post-processing version (default: the current one).")
@click.option("--description", default="", help="Free text shown beside the run.")
@click.option("--knob", "knob", multiple=True, metavar="KEY=VALUE", help="Record a setting of the judge (repeatable).")
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def judge(obj: Ctx, gen_id, rubric, mode, model, rounds, temperature, seed, field_order, prompt_variant, items, limit,
          run_id, resume, reuse, dry_run, structured, postprocess, description, knob, api_base, concurrency,
          max_retries, timeout, backoff, price, quiet, as_json) -> None:
    """Judge a generation with a rubric in single, split or grouped mode; journaled and resumable."""
    from .generate import parse_knobs
    from .judge import POSTPROCESS_VERSION, JudgeRequest, format_dry_run, judge as run_judge, require_writable_data
    from .models import Interrupted
    if not dry_run:
        require_writable_data(obj.data_opt, "judge")
    req = JudgeRequest(gen_id=gen_id, rubric=rubric, mode=mode, model=model, rounds=rounds, temperature=temperature,
                       seed=seed, field_order=field_order, prompt_variant=prompt_variant, items=items, limit=limit,
                       run_id=run_id, resume=resume, reuse=reuse, structured=structured, description=description,
                       knobs=parse_knobs(knob), dry_run=dry_run, postprocess=postprocess or POSTPROCESS_VERSION)
    try:
        r = run_judge(obj.store, req, _opts(api_base, concurrency, max_retries, timeout, backoff, price, quiet))
    except Interrupted as e:
        _interrupted(e)
    if dry_run:
        emit(r, as_json, format_dry_run(r))
        return
    emit(r, as_json, _done_text(r, "run", "verdicts", "verdicts"))


@cli.command("judge-pairs")
@click.option("--session", "session_id", default=None, help="Pairwise session to grade.")
@click.option("--model", default=None, help="Grader model, as litellm names it.")
@click.option("--gen", "gen_id", default=None,
              help="Generation the run is attached to (the contract needs one; default: the first of the session's suite).")
@click.option("--rounds", type=int, default=None, help="Independent rounds over each pair and order [1].")
@click.option("--temperature", type=float, default=None)
@click.option("--seed", type=int, default=None, help="Seed of round 1; round r sends seed + r - 1.")
@click.option("--limit", type=int, default=None, help="Only the first N pairs (by pair id).")
@click.option("--run-id", default=None, help="Id of the new run (default pairs-<time>); with --resume, the run to finish.")
@click.option("--resume", is_flag=True, help="Finish an interrupted run without re-sending any completed call.")
@click.option("--reuse", is_flag=True, help="Serve identical calls from earlier journals; hits are counted.")
@click.option("--dry-run", is_flag=True, help="Print the calls and an offline token and cost estimate; send nothing.")
@click.option("--description", default="", help="Free text shown beside the run.")
@click.option("--knob", "knob", multiple=True, metavar="KEY=VALUE", help="Record a setting (repeatable).")
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def judge_pairs(obj: Ctx, session_id, model, gen_id, rounds, temperature, seed, limit, run_id, resume, reuse, dry_run,
                description, knob, api_base, concurrency, max_retries, timeout, backoff, price, quiet, as_json) -> None:
    """A model grades every pair of a session in both orders; choices stored in as-shown terms."""
    from .generate import parse_knobs
    from .judge import format_dry_run, judge_pairs as run_pairs, require_writable_data
    from .models import Interrupted
    if not dry_run:
        require_writable_data(obj.data_opt, "judge-pairs")
    try:
        r = run_pairs(obj.store, session_id=session_id, model=model, gen_id=gen_id, rounds=rounds,
                      temperature=temperature, seed=seed, limit=limit, run_id=run_id, resume=resume, reuse=reuse,
                      dry_run=dry_run, description=description, knobs=parse_knobs(knob),
                      opts=_opts(api_base, concurrency, max_retries, timeout, backoff, price, quiet))
    except Interrupted as e:
        _interrupted(e)
    if dry_run:
        emit(r, as_json, format_dry_run(r))
        return
    emit(r, as_json, _done_text(r, "pairwise run", "pair verdicts", "pair_verdicts"))


@cli.command()
@click.argument("run_id")
@click.option("--run-id", "new_run_id", default=None, help="Id of the new run (default RUN.<version>).")
@click.option("--postprocess", default=None, help="Post-processing version (default: the current one).")
@click.option("--on-abstain", type=click.Choice(["judge", "fail"]), default=None,
              help="What an abstained answer gets (default: as the rubric says).")
@click.option("--threshold", "thresholds", multiple=True, metavar="CRITERION=VALUE",
              help="A new pass threshold for an ordinal, continuous or retrieval criterion (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def rederive(obj: Ctx, run_id, new_run_id, postprocess, on_abstain, thresholds, as_json) -> None:
    """Recompute a run's derived fields from its stored judge output, into a new run, without a model call."""
    from .judge import POSTPROCESS_VERSION, rederive as rd, require_writable_data
    require_writable_data(obj.data_opt, "rederive")
    th = {}
    for t in thresholds:
        k, sep, v = t.partition("=")
        try:
            th[k.strip()] = float(v)
        except ValueError:
            raise click.UsageError(f"--threshold {t!r} is not CRITERION=NUMBER") from None
        if not sep:
            raise click.UsageError(f"--threshold {t!r} is not CRITERION=NUMBER")
    r = rd(obj.store, run_id, new_run_id=new_run_id, version=postprocess or POSTPROCESS_VERSION,
           on_abstain=on_abstain, thresholds=th or None)
    emit(r, as_json, f"run {r['run_id']}: derived fields of {r['from']} recomputed under {r['postprocess_version']} "
                     f"without a model call; {r['changed']} of {r['verdicts']} verdicts changed -> {r['path']}")


# --------------------------------------------------------------------------- adjudication (issue 5)
# The review queue and the agreement / judge report card; docs/REVIEW.md.


def _filters(reasons, criteria, runs, classes):
    from .queue import Filters
    return Filters.of(reasons, criteria, runs, classes)


def filter_options(f):
    f = click.option("--class", "classes", multiple=True, help="Only items of this class (repeatable).")(f)
    f = click.option("--run", "runs_", multiple=True, help="Only cases this run is involved in (repeatable).")(f)
    f = click.option("--criterion", "criteria", multiple=True, help="Only this criterion (repeatable).")(f)
    f = click.option("--reason", "reasons", multiple=True,
                     help="Only cases raised for this reason code, or `audit` (repeatable).")(f)
    return f


@cli.group("queue")
def queue_group() -> None:
    """The review queue: disagreements plus a random audit, in the state directory."""


@queue_group.command("detect")
@click.argument("gen_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_detect(obj: Ctx, gen_id: str, as_json: bool) -> None:
    """Show what a queue on GEN_ID would hold (nothing is written)."""
    from .queue import detect
    d = detect(obj.store, gen_id)
    out = {k: d[k] for k in ("gen_id", "runs", "population", "counts")}
    out.update(raised=len(d["raised"]), agreed=len(d["agreed"]), cases=d["raised"])
    text = (f"{gen_id}: {d['population']} cases judged by {len(d['runs'])} runs; {len(d['raised'])} raised, "
            f"{len(d['agreed'])} agreed\n" + "\n".join(f"  {k}: {v}" for k, v in d["counts"].items()))
    emit(out, as_json, text)


@queue_group.command("build")
@click.argument("gen_id")
@click.option("--audit-rate", type=float, default=0.05, show_default=True,
              help="Share of the agreed cases drawn into the audit stratum (0-1).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the audit draw and the order.")
@click.option("--reviewers", "reviewers_required", type=int, default=1, show_default=True,
              help="Reviewers each case needs (N).")
@click.option("--by", "created_by", default=None, help="Who built it (recorded).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_build(obj: Ctx, gen_id: str, audit_rate: float, seed: int, reviewers_required: int, created_by: str | None,
                as_json: bool) -> None:
    """Build a review queue on GEN_ID (appended to the label store; the data is not written)."""
    from .queue import build_queue
    q = build_queue(obj.store, gen_id, audit_rate=audit_rate, seed=seed, reviewers_required=reviewers_required,
                    created_by=created_by)
    text = (f"queue {q['queue_id']}: {q['flagged']} raised cases + {q['audit_sampled']} audited of {q['agreed']} "
            f"agreed (inclusion probability {q['audit_inclusion_prob']:.4g}); {q['reviewers_required']} reviewer(s) "
            f"per case\n" + "\n".join(f"  {k}: {v}" for k, v in q["counts"].items()))
    emit(q, as_json, text)


@queue_group.command("list")
@click.argument("gen_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_list(obj: Ctx, gen_id: str | None, as_json: bool) -> None:
    """List the review queues (of GEN_ID), oldest first."""
    from .queue import progress, queues
    rows = [{**q, **{k: v for k, v in progress(obj.store, q["queue_id"]).items() if k in ("cases", "complete")}}
            for q in queues(obj.store, gen_id)]
    emit(rows, as_json, _table(rows, [("queue_id", "queue", False), ("gen_id", "generation", False),
                                      ("created_at", "built", False), ("flagged", "raised", False),
                                      ("audit_sampled", "audited", False), ("audit_rate", "audit rate", False),
                                      ("reviewers_required", "N", False), ("complete", "complete", False)]))


@queue_group.command("show")
@click.argument("gen_id", required=False)
@click.option("--queue", "queue_id", default=None, help="Queue id (default: the latest of GEN_ID).")
@filter_options
@click.option("--reviewer", default=None, help="Mark what this reviewer has handled.")
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_show(obj: Ctx, gen_id, queue_id, reasons, criteria, runs_, classes, reviewer, limit, offset,
               as_json) -> None:
    """The cases of a queue in priority order, with how many reviews each has."""
    from .queue import cases, get_queue, progress
    if gen_id is None and queue_id is None:
        raise click.UsageError("give GEN_ID or --queue")
    q = get_queue(obj.store, queue_id, gen_id=gen_id)
    f = _filters(reasons, criteria, runs_, classes)
    rows = cases(obj.store, q["queue_id"], f, reviewer)
    page = rows[offset:offset + limit]
    out = {"queue": q, "progress": progress(obj.store, q["queue_id"], reviewer, f), "total": len(rows),
           "offset": offset, "limit": limit, "cases": page}
    text = _table([{**r, "reasons": ",".join(r["reasons"]) or "audit"} for r in page],
                  [("rank", "rank", False), ("item_id", "item", False), ("gen_round", "round", False),
                   ("criterion", "criterion", False), ("stratum", "stratum", False), ("reasons", "reasons", False),
                   ("reviews", "reviews", False), ("mine", "mine", False)])
    emit(out, as_json, f"queue {q['queue_id']}: {len(rows)} cases; showing {offset + 1}-{offset + len(page)}\n" + text)


@queue_group.command("decide")
@click.option("--queue", "queue_id", required=True, help="Queue id.")
@click.option("--item", "item_id", required=True)
@click.option("--round", "gen_round", type=int, default=1, show_default=True, help="Generation round.")
@click.option("--criterion", required=True)
@click.option("--reviewer", required=True)
@click.option("--value", default=None, help="pass/fail, correct/partial/wrong or a score.")
@click.option("--test-wrong", is_flag=True, help="The test is wrong: flag the item for repair (say why in --note).")
@click.option("--skip", is_flag=True, help="Pass on the case.")
@click.option("--note", default=None)
@click.option("--tag", "tags", multiple=True, help="Free-form failure tag (repeatable).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def queue_decide(obj: Ctx, queue_id, item_id, gen_round, criterion, reviewer, value, test_wrong, skip, note, tags,
                 as_json) -> None:
    """Record a decision on a case of a queue (an appended edit with the queue's provenance)."""
    from .queue import decide
    if sum(bool(x) for x in (value is not None, test_wrong, skip)) != 1:
        raise click.UsageError("give exactly one of --value, --test-wrong, --skip")
    outcome = "test_wrong" if test_wrong else "skipped" if skip else "decided"
    row = decide(obj.store, queue_id, item_id, gen_round, criterion, reviewer, outcome=outcome, value=value,
                 note=note, tags=tags)
    emit(row, as_json, f"edit {row['edit_id']}: {row['item_id']} r{row['gen_round']} {row['criterion']} "
                       f"{row['outcome']} {row['value'] or ''} by {row['reviewer']} (queue {row['queue']})")


@queue_group.command("undo")
@click.option("--queue", "queue_id", required=True, help="Queue id.")
@click.option("--reviewer", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def queue_undo(obj: Ctx, queue_id, reviewer, as_json) -> None:
    """Withdraw the reviewer's last edit in the queue (a withdrawn edit; nothing is deleted)."""
    from .queue import undo
    row = undo(obj.store, queue_id, reviewer)
    emit(row, as_json, "nothing to undo" if row is None else
         f"edit {row['edit_id']} withdraws edit {row['supersedes']} ({row['item_id']} r{row['gen_round']} "
         f"{row['criterion']})")


def _agreement_text(r: dict) -> str:
    lines = []
    for g in r["generations"]:
        lines.append(f"== generation {g['gen_id']}: gold on {g['gold']['state']} cases decided here, "
                     f"{g['gold']['shipped']} from shipped labels ({g['gold']['split']} split)")
        lines += [f"WARNING: {w}" for w in g["warnings"]]
        for c in g["contradictions"]:
            lines.append(f"{c['run_id']} ({c['postprocess_version']}): post-processing rewrote the judge on "
                         f"{c['postprocess_rewrite']} cases; the judge's statement contradicts its verdict on "
                         f"{c['statement_contradicts']}")
        for c in g["criteria"]:
            lines.append(f"-- {c['criterion']} ({c['kind']}{', weighted ' + c['weights'] if c['weights'] else ''}), "
                         f"{c['gold_cases']} gold cases")
            for j in c["judges"]:
                cr = j["corrected"]
                corr = "-" if cr.get("value") is None else (
                    f"{_fmt(cr['value'], True)} [{_fmt(cr['ci'][0], True)}, {_fmt(cr['ci'][1], True)}] ({cr['gold']})")
                ci = j["kappa_ci"]
                lines.append(f"   {j['run_id']}: n={j['n']} kappa {_fmt(j['kappa'])}"
                             + (f" [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci[0] is not None else "")
                             + f" accuracy {_fmt(j['accuracy'], True)} leniency {_fmt(j.get('leniency'))}"
                             f"; pass rate {_fmt(j['pass_rate'], True)} corrected {corr}")
            if c["ambiguous"].get("flag"):
                lines.append(f"   AMBIGUOUS: judges agree below kappa {c['ambiguous']['threshold']}: "
                             + ", ".join(f"{p['a']} ~ {p['b']} {_fmt(p['kappa'])}" for p in c["ambiguous"]["pairs"]))
        if g["tags"]:
            lines.append("failure tags: " + ", ".join(f"{k} {v}" for k, v in g["tags"].items()))
    for s in r["sessions"]:
        m = s["majority"]
        lines.append(f"== session {s['session_id']}: {s['pairs']} pairs, majority left {m['left']} / same {m['same']} "
                     f"/ right {m['right']} ({m['no_majority']} without a majority)")
        for c in s["reviewers"]["cohen"]:
            lines.append(f"   {c['a']} ~ {c['b']}: Cohen's kappa {_fmt(c['kappa'])} on {c['n']} pairs")
        if s["reviewers"]["fleiss"]:
            lines.append(f"   Fleiss' kappa {_fmt(s['reviewers']['fleiss']['kappa'])}, Krippendorff's alpha "
                         f"{_fmt(s['reviewers']['krippendorff']['alpha'])}")
        for g in s["graders"]:
            lines.append(f"   {g['run_id']} ({g['order']}) vs people: accuracy {_fmt(g['accuracy'], True)}, kappa "
                         f"{_fmt(g['kappa'])} on {g['n']} pairs ({g['unparseable']} unparseable counted as misses)")
        for p in s["grader_pairs"]:
            lines.append(f"   {p['a']} ~ {p['b']}: agreement {_fmt(p['agreement'], True)}, kappa {_fmt(p['kappa'])} "
                         f"on {p['n']} pairs ({p['dropped_unparseable']} unparseable dropped)")
    return "\n".join(lines)


@cli.command("agreement")
@click.option("--gen", "gen_ids", multiple=True, help="Only this generation (repeatable; default: every judged one).")
@click.option("--session", "session_ids", multiple=True,
              help="Only this closed pairwise session (repeatable; default: every closed one with choices).")
@click.option("--queue", "queue_id", default=None, help="Weight by this queue (default: the generation's latest).")
@click.option("--judge-round", type=int, default=1, show_default=True, help="Judge round read as each judge's verdict.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--n-boot", type=int, default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def agreement_cmd(obj: Ctx, gen_ids, session_ids, queue_id, judge_round, seed, n_boot, as_json) -> None:
    """The agreement and judge report card: judges against gold, people against each other, repeat
    consistency, judge against judge, corrected pass rates, same-family warnings."""
    from .reportcard import agreement
    if n_boot < 1:
        raise click.UsageError("--n-boot must be at least 1")
    given = bool(gen_ids or session_ids)
    r = agreement(obj.store, gen_ids=list(gen_ids) if given else None,
                  session_ids=list(session_ids) if given else None, seed=seed, n_boot=n_boot,
                  judge_round=judge_round, queue_id=queue_id)
    emit(r, as_json, _agreement_text(r))


# --------------------------------------------------------------------------- commands in their own modules
# Each module's register(cli) adds its commands; heavy imports stay inside the commands.


def _register_modules() -> None:
    from . import compare_cli
    compare_cli.register(cli)
    from . import suite_cli
    suite_cli.register(cli)
    from . import cost_cli
    cost_cli.register(cli)


_register_modules()


def main(argv: list[str] | None = None) -> None:
    """Entry point: typed errors become one line on stderr and exit code 2."""
    try:
        cli.main(args=argv, prog_name="evalcore", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except EvalcoreError as e:
        click.echo(f"error: {e.message}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except BrokenPipeError:  # pragma: no cover
        sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
