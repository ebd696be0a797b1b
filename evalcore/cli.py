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


# --------------------------------------------------------------------------- import
# (commands are added by evalcore.importer.register)


@cli.group("import")
def import_() -> None:
    """Import evaluation data from CSV, JSONL or Parquet."""


def _register_importers() -> None:
    import importlib.util
    if importlib.util.find_spec("evalcore.importer") is None:  # pragma: no cover - during development only
        return
    from .importer import register
    register(import_)


_register_importers()


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
