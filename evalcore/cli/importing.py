"""``evalcore import ...``: the importers' commands (the work is in evalcore.importers)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from evalcore.cli._common import FINITE, cli, pct_ci
from evalcore.errors import InputError
from evalcore.importers.defaults import DEFAULT_THRESHOLD, PANDALM_SEED

# light modules only: readers, pandas and data-set importers load in the command that runs (a cheap --help)
from evalcore.importers.frame import (
    INPUT_FORMATS,
    KIND_CHOICES,
)
from evalcore.importers.recorded import MODES, HarnessOpts

if TYPE_CHECKING:
    from evalcore.importers.tabular import Opts


@cli.group("import")
def import_() -> None:
    """Import evaluation data from CSV, JSONL or Parquet."""


# --------------------------------------------------------------------------- options
# Options several import commands take, defined once (each application makes a new click.Option).


def _options(*opts: Callable) -> Callable:
    """One decorator applying ``opts`` in the order given (the first is the first in --help)."""

    def apply(f: Callable) -> Callable:
        for opt in reversed(opts):
            f = opt(f)
        return f

    return apply


_json_option = click.option("--json", "as_json", is_flag=True, help="Print ids and counts as JSON.")
_gate_option = click.option(
    "--gate", multiple=True, metavar="NAME", help="Mark a criterion as a hard gate (repeatable)."
)
_suite_id_option = click.option("--suite-id", default=None, help="Id of the new suite (default: from the file name).")
_gen_id_option = click.option("--gen-id", default=None, help="Id of the new generation (default: from the file name).")
_run_id_option = click.option("--run-id", default=None, help="Id of the new run (default: from the file name).")
_item_col_option = click.option("--item-col", default=None, help="Item id column.  [default: item_id]")
_item_extra_col_options = _options(
    click.option("--context-col", default=None, help="Item context column (optional).  [default: context]"),
    click.option("--reference-col", default=None, help="Reference answer column (optional).  [default: reference]"),
    click.option("--class-col", default=None, help="Item class column (optional).  [default: class]"),
)
_judge_pinned_option = click.option(
    "--judge-pinned",
    is_flag=True,
    help="The judge model is a pinned snapshot although its name carries no date (recorded as knob judge_pinned).",
)
_keys_option = click.option(
    "--keys",
    type=click.Path(file_okay=False),
    default=None,
    help="Keys directory (default: <data>-keys, beside the data directory; never inside it).",
)

# --------------------------------------------------------------------------- published data sets
# evalcore/importers/datasets/*.py; docs/DATASETS.md


_THRESHOLD_HELP = (
    "Pass threshold of every criterion on the 1-5 scale: a score >= T passes.  [default: 3, the scale's midpoint]"
)
# hanna and summeval: a directory and the threshold on their 1-5 scale
_scored_dataset_options = _options(
    click.argument("source", metavar="DIR"),
    click.option("--threshold", type=FINITE, default=DEFAULT_THRESHOLD, help=_THRESHOLD_HELP),
    _json_option,
    click.pass_obj,
)


@import_.command("hanna")
@_scored_dataset_options
def import_hanna_cmd(obj, source: str, threshold: float, as_json: bool) -> None:
    """Import HANNA (DIR holds hanna_metric_scores_llm.csv[.gz]): stories, crowd ratings, LLM judges."""
    from evalcore.importers.datasets.hanna import HANNA_GEN, import_hanna

    s = import_hanna(obj.data_opt, source, threshold)
    ls = ", ".join(f"{k} ({v['labels']} labels by {', '.join(v['annotators'])})" for k, v in s["labelsets"].items())
    err = f", {s['errored_verdicts']} outside 1-5 recorded as errors" if s["errored_verdicts"] else ""
    _emit(
        s,
        as_json,
        f"imported HANNA from {s['source']}: suite {s['suite_id']} ({s['items']} stories), generation "
        f"{HANNA_GEN} ({s['outputs']} outputs; text: {s['story_text']}), label sets {ls}, "
        f"{len(s['runs'])} runs ({s['verdicts']} verdicts{err}); threshold {s['threshold']:g}; "
        f"{s['seconds']} s",
    )


@import_.command("summeval")
@_scored_dataset_options
def import_summeval_cmd(obj, source: str, threshold: float, as_json: bool) -> None:
    """Import SummEval expert means (DIR holds summeval_expert_avg.jsonl[.gz])."""
    from evalcore.importers.datasets.summeval import import_summeval

    s = import_summeval(obj.data_opt, source, threshold)
    _emit(
        s,
        as_json,
        f"imported SummEval from {s['source']}: suite {s['suite_id']} ({s['items']} articles), "
        f"{len(s['gen_ids'])} generations summeval-<system> ({s['outputs']} summaries), "
        f"{len(s['labelsets'])} label sets summeval-<system>-experts ({s['labels']} labels); "
        f"threshold {s['threshold']:g}; {s['seconds']} s",
    )


# --------------------------------------------------------------------------- inspect, promptfoo


_KIND_KEYS = ("kind", "criterion_kind", "threshold", "criterion_threshold", "scale", "criterion_scale", "gate")


@import_.command("inspect")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option(
    "--suite",
    "attach",
    default=None,
    metavar="ID",
    help="Attach to this existing suite (sample ids and inputs must match) instead of creating one.",
)
@_suite_id_option
@_gen_id_option
@_run_id_option
@click.option(
    "--judge-model",
    default=None,
    help="The judge as a pinned snapshot (default: each scorer's model, else inspect-scorer:<name>).",
)
@click.option(
    "--criterion-kind",
    multiple=True,
    metavar="NAME=KIND",
    help=f"Kind of a numeric scorer ({', '.join(KIND_CHOICES)}); C/I/P/N scorers are binary or ternary.",
)
@click.option("--threshold", type=FINITE, default=None, help="Pass threshold (score >= T) of the numeric scorers.")
@click.option("--criterion-threshold", multiple=True, metavar="NAME=T", help="Pass threshold of one scorer.")
@click.option("--scale", default=None, metavar="MIN:MAX", help="Scale of the numeric scorers.")
@click.option("--criterion-scale", multiple=True, metavar="NAME=MIN:MAX", help="Scale of one numeric scorer.")
@_gate_option
@click.option(
    "--knob", "knobs", multiple=True, metavar="KEY=VALUE", help="Record a setting (repeatable), as for import long."
)
@click.option("--description", default=None, help="Free text stored with the suite and the run.")
@_judge_pinned_option
@_json_option
@click.pass_obj
def import_inspect_cmd(obj, log: str, attach, knobs, judge_pinned: bool, as_json: bool, **kw) -> None:
    """Import an Inspect AI eval log (format version 2: .json, or the .eval archive)."""
    from evalcore.importers.inspect_ai import ToolOpts, import_inspect
    from evalcore.importers.kinds import KindOptions

    kinds = KindOptions.from_cli(log, None, *(kw.pop(k) for k in _KIND_KEYS[1:]))  # no --kind here
    pinned = ["run.judge_pinned=true"] if judge_pinned else []
    o = ToolOpts(kinds, attach, knobs=[*knobs, *pinned], **kw)  # kw: the ids, --judge-model and --description
    s = import_inspect(obj.data_opt, log, o)
    text = _with_notes(s, _text_summary(s) + f"; log status {s['status']}, run {s['run_status']}")
    _emit(s, as_json, text)
    _warn_judge(s.get("judge_model"), judge_pinned)


@import_.command("promptfoo")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--suite",
    "attach",
    default=None,
    metavar="ID",
    help="Attach to this existing suite (test ids and inputs must match) instead of creating one.",
)
@_suite_id_option
@click.option(
    "--id-prefix",
    default=None,
    help="Prefix of the generation and run ids, <prefix>-<provider> (default: the file name).",
)
@click.option(
    "--judge-model",
    default=None,
    help="The judge as a pinned snapshot (default: the grading providers of the model-graded assertions).",
)
@_gate_option
@click.option(
    "--knob",
    "knobs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Record a setting on every generation / run (repeatable), as for import long.",
)
@click.option("--description", default=None, help="Free text stored with the suite and the runs.")
@_judge_pinned_option
@_json_option
@click.pass_obj
def import_promptfoo_cmd(
    obj, file: str, attach, suite_id, id_prefix, judge_model, gate, knobs, description, judge_pinned, as_json
) -> None:
    """Import a promptfoo results file (promptfoo eval -o results.json; results version 3)."""
    from evalcore.contract import hashing as H
    from evalcore.importers.inspect_ai import ToolOpts
    from evalcore.importers.kinds import KindOptions
    from evalcore.importers.promptfoo import import_promptfoo

    if id_prefix is not None and not H.is_valid_id(id_prefix):
        raise InputError(
            f"{id_prefix!r} is not a valid id prefix (letters, digits, . _ -)", file=file, field="--id-prefix"
        )
    o = ToolOpts(
        KindOptions.from_cli(file, gates=gate),
        attach,
        suite_id,
        None,
        None,
        judge_model,
        [*knobs, *(["run.judge_pinned=true"] if judge_pinned else [])],
        description,
        id_prefix,
    )
    s = import_promptfoo(obj.data_opt, file, o)
    runs = "; ".join(
        f"run {r['run_id']} on generation {r['gen_id']} ({r['verdicts']} verdicts"
        + (f", {r['missing_verdicts']} not graded" if r["missing_verdicts"] else "")
        + (f", all pass {pct_ci(r['all_pass']['rate'], r['all_pass']['ci95'])}" if r["all_pass"]["of"] else "")
        + ")"
        for r in s["runs"]
    )
    _emit(
        s,
        as_json,
        f"imported {s['file']}: suite {s['suite_id']} ({'new' if s['suite_created'] else 'existing'}, "
        f"{s['items']} test cases), {len(s['generations'])} generations, {runs}",
    )
    _warn_judge(s.get("judge_model"), judge_pinned)


# --------------------------------------------------------------------------- summaries


SHOWN_CRITERIA = 20  # the summary line names at most this many criteria with their kinds


def _emit(summary: dict[str, Any], as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps(summary, indent=1, default=str))
    else:
        click.echo(text)


def _text_summary(s: dict[str, Any]) -> str:
    kinds = list(s["criteria"].items())
    crit = ", ".join(f"{k} {v}" for k, v in kinds[:SHOWN_CRITERIA]) + (
        f" and {len(kinds) - SHOWN_CRITERIA:,} more criteria (--json lists them)" if len(kinds) > SHOWN_CRITERIA else ""
    )
    head = (
        f"imported {s['file']}: suite {s['suite_id']} ({'new' if s['suite_created'] else 'existing'}, "
        f"{s['items']} items), generation {s['gen_id']} ({'reused' if s['gen_reused'] else 'new'}, "
        f"{s['outputs']} outputs), "
    )
    if "labelset_id" in s:
        return head + (
            f"label set {s['labelset_id']} ({s['labels']} labels by {len(s['annotators'])} annotators; {crit})"
        )
    rate = pct_ci(s["all_pass"]["rate"], s["all_pass"]["ci95"])
    miss = f", {s['missing_verdicts']} missing" if s["missing_verdicts"] else ""
    return head + f"run {s['run_id']} ({s['verdicts']} verdicts{miss}, all pass {rate}; {crit})"


def _with_notes(s: dict[str, Any], text: str) -> str:
    """The summary line, then one line per note of the import (e.g. a scale inferred from the values)."""
    return "\n".join([text, *(f"note: {n}" for n in s.get("notes") or [])])


# --------------------------------------------------------------------------- import long / wide: _shared

# the file's format and its columns
_column_options = _options(
    click.option(
        "--input-format",
        type=click.Choice(INPUT_FORMATS),
        default=None,
        help="File format (default: from the extension: .csv .tsv .jsonl .ndjson .json .parquet .pq).",
    ),
    _item_col_option,
    click.option("--input-col", default=None, help="Input (question, task) column.  [default: input]"),
    click.option("--output-col", default=None, help="Output (answer) column.  [default: output]"),
    click.option(
        "--gen-round-col",
        default=None,
        help="Generation round column (1, 2, ...); absent: every row is round 1.  [default: gen_round]",
    ),
    click.option(
        "--judge-round-col",
        default=None,
        help="Judge round column (1, 2, ...); absent: every row is round 1.  [default: judge_round]",
    ),
    click.option("--reason-col", default=None, help="The judge's reason column (optional).  [default: reason]"),
    _item_extra_col_options,
)
# the rubric: criteria, their kinds, thresholds, scales and gates
_criterion_options = _options(
    click.option("--criteria", default=None, help="Comma-separated criteria, in rubric order."),
    click.option(
        "--kind",
        type=click.Choice(KIND_CHOICES),
        default=None,
        help="Kind of every criterion (default: inferred per criterion from its values).",
    ),
    click.option("--criterion-kind", multiple=True, metavar="NAME=KIND", help="Kind of one criterion (repeatable)."),
    click.option(
        "--threshold",
        type=FINITE,
        default=None,
        help="Pass threshold (score >= T passes) of the ordinal and continuous criteria.",
    ),
    click.option(
        "--criterion-threshold",
        multiple=True,
        metavar="NAME=T",
        help="Pass threshold of one criterion (repeatable).",
    ),
    click.option(
        "--scale",
        default=None,
        metavar="MIN:MAX",
        help="Scale of the ordinal and continuous criteria (values outside are refused).",
    ),
    click.option(
        "--criterion-scale", multiple=True, metavar="NAME=MIN:MAX", help="Scale of one criterion (repeatable)."
    ),
    _gate_option,
    click.option(
        "--allow-missing",
        is_flag=True,
        help="Record missing values as verdicts without a value (passed null) and mark the run partial, "
        "instead of refusing the file.",
    ),
)
# what the import writes: the suite (new or existing), the ids, the judge, the knobs
_target_options = _options(
    click.option(
        "--suite",
        "attach",
        default=None,
        metavar="ID",
        help="Attach to this existing suite (items must match) instead of creating one.",
    ),
    _suite_id_option,
    _gen_id_option,
    _run_id_option,
    click.option(
        "--labelset-id", default=None, help="Id of the new label set with --human (default: from the file name)."
    ),
    click.option("--judge-model", default="unknown", show_default=True, help="The judge model, as a pinned snapshot."),
    click.option(
        "--knob",
        "knobs",
        multiple=True,
        metavar="KEY=VALUE",
        help="Record a setting (repeatable): system keys go to the generation, others to the run; "
        "gen.KEY / run.KEY force the side (or use --gen-knob / --judge-knob).",
    ),
    click.option("--description", default=None, help="Free text stored with the suite, run or label set."),
)
# people's labels instead of a judge's verdicts
_human_options = _options(
    click.option("--human", is_flag=True, help="The values are people's labels: write a label set, not a run."),
    click.option(
        "--annotator-col", default=None, help="With --human: annotator column.  [default: annotator, if present]"
    ),
    click.option(
        "--annotator",
        default="annotator",
        show_default=True,
        help="With --human and no annotator column: the one annotator's id.",
    ),
)
# the items' statements and the system's abstentions
_statement_col_options = _options(
    click.option(
        "--must-have-col",
        default=None,
        help="Item must-have statements column (a JSON list or a|b|c), stored on the suite.  [default: must_have]",
    ),
    click.option(
        "--wrong-if-col",
        default=None,
        help="Item wrong-if statements column, stored on the suite.  [default: wrong_if]",
    ),
    click.option(
        "--abstained-col",
        default=None,
        help="The system's own 'could not answer' flag per output (true/false).  [default: abstained]",
    ),
)
# how the judge was called (HarnessOpts) and what it said beside the verdict
_harness_options = _options(
    click.option(
        "--mode",
        type=click.Choice(MODES),
        default=None,
        help="How the judge was called: single (one call, every criterion), grouped (one call per "
        "--group) or split (one call per criterion).  [default: not known: imported]",
    ),
    click.option(
        "--group",
        "groups",
        multiple=True,
        metavar="A,B",
        help="With --mode grouped: the criteria of one call (repeatable; every criterion in one group).",
    ),
    click.option(
        "--field-order",
        default=None,
        metavar="A,B,C",
        help="Order the criteria were emitted in within their call (default: the rubric order); "
        "positions follow from it unless the file records them.",
    ),
    click.option(
        "--position-col",
        default=None,
        help="long: each verdict's emission position within its call (0, 1, ...).  [default: position]",
    ),
    click.option(
        "--raw-verdict-col",
        default=None,
        help="long: the judge's own verdict before post-processing; the value column is the derived "
        "one.  [default: raw_verdict]",
    ),
    click.option(
        "--covered-col", default=None, help="long: must-have items the judge says are covered.  [default: covered]"
    ),
    click.option(
        "--missed-col", default=None, help="long: must-have items the judge says are missing.  [default: missed]"
    ),
    click.option(
        "--triggered-col",
        default=None,
        help="long: wrong-if items the judge says are triggered.  [default: triggered]",
    ),
    click.option(
        "--judge-family",
        default=None,
        help="The judge's model family (default: from --judge-model where the family is known).",
    ),
    click.option(
        "--prompt-variant",
        default=None,
        help="The judge's named prompt variant (also --knob prompt_variant=NAME).  [default: default]",
    ),
)
# the contract's other fields (evalcore.importers.fields), the suite's flags, the two sides' knobs
_field_options = _options(
    click.option(
        "--col",
        "cols",
        multiple=True,
        metavar="FIELD=COLUMN",
        help="Read a field from a column of another name (repeatable): latency_ms, tokens_in, tokens_out, "
        "cost_usd, retrieved_doc_ids (per answer); judge_latency_ms, judge_tokens_in, judge_tokens_out, "
        "judge_cost_usd (per judge call); holdout, difficulty, nice_to_have, expected_doc_ids (per item). "
        "[default: the column named as the field]",
    ),
    click.option("--strict", is_flag=True, help="Refuse a file with a column the import does not use."),
    click.option("--curated", is_flag=True, help="Mark the new suite as curated (its items were reviewed)."),
    click.option(
        "--quotas",
        default=None,
        metavar="JSON|FILE",
        help="Class and difficulty quotas of the new suite (docs/SUITES.md).",
    ),
    click.option(
        "--gen-knob",
        "gen_knobs",
        multiple=True,
        metavar="KEY=VALUE",
        help="Record a setting of the system under test on the generation (repeatable), e.g. generator_model=...",
    ),
    click.option(
        "--judge-knob",
        "judge_knobs",
        multiple=True,
        metavar="KEY=VALUE",
        help="Record a setting of the judge on the run (repeatable), e.g. temperature=0.",
    ),
    _judge_pinned_option,
)
_shared = _options(
    _column_options,
    _criterion_options,
    _target_options,
    _human_options,
    _statement_col_options,
    _harness_options,
    _field_options,
    _json_option,
)


def _opts(file: str, kw: dict) -> Opts:
    """The options of `import long` / `wide` (``kw``: what ``_shared`` added, less --json)."""
    from evalcore.importers.kinds import KindOptions
    from evalcore.importers.tabular import Opts

    kinds = KindOptions.from_cli(file, *(kw.pop(k) for k in _KIND_KEYS))
    harness = HarnessOpts(
        groups=list(kw.pop("groups")),
        **{f.name: kw.pop(f.name) for f in dataclasses.fields(HarnessOpts) if f.name != "groups"},
    )
    lists: dict[str, Any] = {k: list(kw.pop(k)) for k in ("knobs", "cols", "gen_knobs", "judge_knobs")}
    return Opts(file=file, kinds=kinds, suite=kw.pop("attach"), harness=harness, **lists, **kw)


def _warn_judge(judge_model: str | None, pinned: bool) -> None:
    """A warning on stderr for each judge model of a tool's import named by a floating alias (an
    Inspect scorer that calls no model is not a judge model)."""
    from evalcore.importers.plan import floating_alias, floating_warning

    for m in (m.strip() for m in (judge_model or "").split(",")):
        if m and not m.startswith("inspect-scorer:") and not pinned and floating_alias(m):
            click.echo(f"warning: {floating_warning(m)}", err=True)


def _warn(s: dict[str, Any]) -> None:
    """The import's warnings on stderr, one line each: the columns it did not use, a floating judge alias."""
    if s.get("ignored_columns"):
        click.echo(
            f"warning: ignored columns: {', '.join(s['ignored_columns'])}; map them with --col FIELD=COLUMN "
            "(docs/IMPORT.md lists the fields) or --strict to refuse them",
            err=True,
        )
    for w in s.get("warnings") or []:
        click.echo(f"warning: {w}", err=True)


@import_.command("long")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--criterion-col", default=None, help="Criterion name column.  [default: criterion]")
@click.option("--value-col", default=None, help="Value column (the judge's verdict as given).  [default: value]")
@_shared
@click.pass_obj
def import_long_cmd(obj, file: str, criterion_col, value_col, as_json: bool, **kw) -> None:
    """Import one row per item x criterion [x generation round] [x judge round]."""
    from evalcore.importers.tabular import import_long

    s = import_long(obj.data_opt, file, _opts(file, kw), criterion_col, value_col)
    _emit(s, as_json, _with_notes(s, _text_summary(s)))
    _warn(s)


@import_.command("wide")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--reason-suffix",
    default="_reason",
    show_default=True,
    help="A column <criterion><suffix> holds that criterion's reason (empty: none).",
)
@_shared
@click.pass_obj
def import_wide_cmd(obj, file: str, reason_suffix: str, as_json: bool, **kw) -> None:
    """Import one row per item [x round], one column per criterion."""
    from evalcore.importers.tabular import import_wide

    s = import_wide(obj.data_opt, file, _opts(file, kw), reason_suffix)
    _emit(s, as_json, _with_notes(s, _text_summary(s)))
    _warn(s)


@import_.command("pairs")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--input-format",
    type=click.Choice(INPUT_FORMATS),
    default=None,
    help="File format (default: from the extension).",
)
@_item_col_option
@click.option("--input-col", default=None, help="Input column.  [default: input]")
@click.option("--output-a-col", default=None, help="First answer (shown on the left).  [default: output_a]")
@click.option("--output-b-col", default=None, help="Second answer (shown on the right).  [default: output_b]")
@click.option("--arm-a", default=None, help="Arm name of every output_a (with --arm-b).")
@click.option("--arm-b", default=None, help="Arm name of every output_b (with --arm-a).")
@click.option("--arm-a-col", default=None, help="Column naming output_a's arm per row.  [default: arm_a]")
@click.option("--arm-b-col", default=None, help="Column naming output_b's arm per row.  [default: arm_b]")
@click.option(
    "--model-as-shown-col",
    default=None,
    help="The model grader's choice with a on the left (a/b/tie or left/right/same).",
)
@click.option(
    "--model-swapped-col",
    default=None,
    help="The model grader's choice with the pair swapped (a/b name the file's columns; left/right "
    "name what the grader saw and are flipped).",
)
@click.option("--model-as-shown-reason-col", default=None, help="The grader's reason, as shown.")
@click.option("--model-swapped-reason-col", default=None, help="The grader's reason, swapped.")
@click.option(
    "--human-col",
    "human_cols",
    multiple=True,
    metavar="COL",
    help="A column of one person's choices (a/b/tie or left/right/same); the column name is the reviewer (repeatable).",
)
@click.option(
    "--annotator-col",
    default=None,
    help="Column naming who chose (rows with the same item, arms and answers form one pair).",
)
@click.option("--choice-col", default=None, help="With --annotator-col: the choice column.")
@click.option("--seconds-col", default=None, help="Seconds the person took (optional).")
@_item_extra_col_options
@click.option("--suite", "attach", default=None, metavar="ID", help="Attach to this existing suite.")
@_suite_id_option
@click.option("--session-id", default=None, help="Id of the session (default: from the file name; never an arm name).")
@click.option("--run-id", default=None, help="Id of the model grader's run (default: <session>-grader).")
@click.option("--judge-model", default="unknown", show_default=True, help="The model grader, as a pinned snapshot.")
@_judge_pinned_option
@click.option(
    "--col",
    "cols",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Read a field from a column of another name (repeatable): latency_ms_a, tokens_in_a, tokens_out_a, "
    "cost_usd_a, retrieved_doc_ids_a and the same ending _b (per answer); judge_latency_ms_as_shown, "
    "judge_tokens_in_as_shown, judge_tokens_out_as_shown, judge_cost_usd_as_shown and the same ending "
    "_swapped (per grader call).  [default: the column named as the field]",
)
@click.option("--strict", is_flag=True, help="Refuse a file with a column the import does not use.")
@click.option(
    "--seed", type=int, default=None, help="Seed of the pair ids (default: drawn, and recorded in session.json)."
)
@_keys_option
# Arena / MT-Bench shapes (evalcore/importers/common.py; docs/IMPORT.md)
@click.option(
    "--preset",
    type=click.Choice(("arena", "mt-bench")),
    default=None,
    help="Column defaults of a known shape: arena (model_a/model_b/winner/judge/conversation_a/b) or "
    "mt-bench (model_1/model_2/g1_winner/g2_winner/judge with --questions and --answers).",
)
@click.option(
    "--conversation-a-col",
    default=None,
    help="Column of conversation a (a list of {role, content} messages): input and output_a come from it.",
)
@click.option("--conversation-b-col", default=None, help="Column of conversation b: output_b comes from it.")
@click.option(
    "--turn-col",
    default=None,
    help="Column of the turn judged (1, 2, ...): conversations are cut after it; turn k > 1 is item <id>-turn<k>.",
)
@click.option(
    "--questions",
    type=click.Path(dir_okay=False),
    default=None,
    help="MT-Bench question.jsonl (question_id, turns, category, reference): the inputs.",
)
@click.option(
    "--answers",
    type=click.Path(),
    default=None,
    help="MT-Bench model_answer directory (<model>.jsonl) or one answers .jsonl: the outputs.",
)
@click.option(
    "--judge-col",
    default=None,
    help="Column naming the model grader per row (a list [model, prompt] as in MT-Bench, or a name).",
)
@_json_option
@click.pass_obj
def import_pairs_cmd(obj, file: str, as_json: bool, **kw) -> None:
    """Import pairwise comparisons as a closed, blinded session (key in the keys directory)."""
    from evalcore.importers.pair_presets import PairExtras, pairs_preparer
    from evalcore.importers.pairs import PairOpts, import_pairs

    # the Arena / MT-Bench options go to PairExtras, the others (under their own names) to PairOpts
    extras = PairExtras(**{f.name: kw.pop(f.name) for f in dataclasses.fields(PairExtras)})
    human_cols, cols = list(kw.pop("human_cols")), list(kw.pop("cols"))
    o = PairOpts(file=file, suite=kw.pop("attach"), human_cols=human_cols, cols=cols, state=obj.state_opt, **kw)
    s = import_pairs(obj.data_opt, file, o, pairs_preparer(extras))
    _close_imported(obj, s)
    _emit(
        s,
        as_json,
        _with_notes(
            s,
            f"imported {s['file']}: session {s['session_id']} (closed, {s['pairs']} pairs, "
            f"{s['judgments']} human choices, {s['pair_verdicts']} model verdicts"
            + (f", {s['grader_calls']} grader calls" if s["grader_calls"] else "")
            + f"), suite {s['suite_id']}, generations {', '.join(s['gen_ids'])}, key in {s['keys']}; "
            + _unblinded_text(s),
        ),
    )
    _warn(s)


def _close_imported(obj, s: dict) -> None:
    """An imported session is closed: unblinded at once when it can be (``unblinded``: the record's path, else
    None and ``not_unblinded``: why); ranked then when it has more than two arms."""
    from evalcore.pairwise.grading import close_imported
    from evalcore.pairwise.rankstore import refresh

    s["unblinded"], why = close_imported(obj.store, s["session_id"], os.path.dirname(s["keys"]))
    if why:
        s["not_unblinded"] = why
    elif s["unblinded"]:
        refresh(obj.store, s["session_id"])


def _unblinded_text(s: dict) -> str:
    if s["unblinded"]:
        return f"unblinded in {s['unblinded']} (`evalcore pairs report --session {s['session_id']}` reads it)"
    return f"not unblinded: {s['not_unblinded']}"


# PandaLM's pairwise test set with its two judges (evalcore/importers/datasets/pandalm.py; docs/REVIEW.md)
@import_.command("pandalm")
@click.argument("source", metavar="DIR")
@_keys_option
@click.option("--seed", type=int, default=PANDALM_SEED, show_default=True, help="Seed of the random pair ids.")
@_json_option
@click.pass_obj
def import_pandalm_cmd(obj, source: str, keys: str | None, seed: int, as_json: bool) -> None:
    """Import PandaLM (DIR holds testset-v1.json and the two judges' files): a closed pairwise
    session with three annotators, and gpt-3.5-turbo and PandaLM-7B as model graders."""
    from evalcore.importers.datasets.pandalm import import_pandalm

    s = import_pandalm(obj.data_opt, source, keys=keys, seed=seed, state=obj.state_opt)
    _close_imported(obj, s)
    judges = ", ".join(
        f"{r['run_id']} ({r['pair_verdicts']} verdicts, {r['unparseable']} unparseable kept as errors)"
        for r in s["runs"]
    )
    _emit(
        s,
        as_json,
        f"imported PandaLM from {s['source']}: suite {s['suite_id']} ({s['items']} instructions), "
        f"{len(s['gen_ids'])} generations pandalm-arm1..{len(s['gen_ids'])}, closed session {s['session_id']} ({s['pairs']} pairs, "
        f"{s['judgments']} choices by {', '.join(s['reviewers'])}), runs {judges}; key in {s['keys']}; "
        f"{_unblinded_text(s)}; {s['seconds']} s",
    )


# The Arena's battles table as a closed session of K arms (evalcore/importers/battles.py; docs/IMPORT.md)
_BATTLE_COLS = (
    ("item", "Item id column.  [default: question_id when present, else one item per battle]"),
    ("model-a", "Model of the left answer.  [default: model_a]"),
    ("model-b", "Model of the right answer.  [default: model_b]"),
    ("winner", "The winner: model_a, model_b, tie or tie (bothbad).  [default: winner]"),
    ("judge", "Who voted: the reviewer, as written.  [default: judge]"),
    ("conversation-a", "Conversation a: the input and the left answer (optional).  [default: conversation_a]"),
    ("conversation-b", "Conversation b: the right answer (optional).  [default: conversation_b]"),
    ("turn", "The turn judged, read with item ids or conversations.  [default: turn]"),
    ("class", "Item class column.  [default: language]"),
)


@import_.command("battles")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--input-format", type=click.Choice(INPUT_FORMATS), default=None, help="Format (default: extension).")
@_options(*(click.option(f"--{name}-col", default=None, help=text) for name, text in _BATTLE_COLS))
@_suite_id_option
@click.option("--session-id", default=None, help="Id of the session (default: from the file name; never a model).")
@click.option("--seed", type=int, default=None, help="Seed of the pair ids (default: drawn; kept in session.json).")
@_keys_option
@click.option("--strict", is_flag=True, help="Refuse a file with a column the import does not use.")
@_json_option
@click.pass_obj
def import_battles_cmd(obj, as_json: bool, **kw) -> None:
    """Import battles in the Chatbot Arena's shape (model_a, model_b, winner, judge): a closed session of K arms."""
    from evalcore.importers.battles import BattleOpts, import_battles

    s = import_battles(obj.data_opt, BattleOpts(state=obj.state_opt, **kw))
    _close_imported(obj, s)
    texts = " and ".join(s["texts"]) if s["texts"] else "none in the file (placeholders)"
    text = (
        f"imported {s['file']}: session {s['session_id']} (closed, {s['battles']} battles between {s['arms']} models"
        f" as {s['pairs']} pairs, {s['ties']} ties of which {s['ties_bothbad']} both bad; {s['judgments']} votes by "
        f"{len(s['reviewers'])} judges; texts: {texts}), suite {s['suite_id']}, key in {s['keys']}; "
    )
    _emit(s, as_json, _with_notes(s, text + _unblinded_text(s)))
    _warn(s)
