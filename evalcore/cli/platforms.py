"""``evalcore import langfuse|langsmith|braintrust|otel``: runs and people's labels from the files the
platforms themselves export (issue 40). Each command parses in its importer module and writes through
the same run and label writers as ``import long``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from evalcore.cli._common import FINITE, pct_ci
from evalcore.cli.importing import _KIND_KEYS, _emit, _gate_option, _json_option, _options, import_
from evalcore.importers.frame import KIND_CHOICES

_platform_options = _options(
    click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False)),
    click.option("--judge-model", default=None, help="The judge as a pinned snapshot (default: as the file names it)."),
    click.option(
        "--kind", type=click.Choice(KIND_CHOICES), default=None, help="Kind of every criterion (default: inferred)."
    ),
    click.option("--criterion-kind", multiple=True, metavar="NAME=KIND", help="Kind of one criterion (repeatable)."),
    click.option(
        "--threshold", type=FINITE, default=None, help="Pass threshold (score >= T passes) of scored criteria."
    ),
    click.option(
        "--criterion-threshold", multiple=True, metavar="NAME=T", help="Threshold of one criterion (repeatable)."
    ),
    click.option("--scale", default=None, metavar="MIN:MAX", help="Scale of the ordinal and continuous criteria."),
    click.option(
        "--criterion-scale", multiple=True, metavar="NAME=MIN:MAX", help="Scale of one criterion (repeatable)."
    ),
    _gate_option,
    click.option("--suite-id", default=None, help="Id of the new suite (default: as --id-prefix)."),
    click.option("--id-prefix", default=None, help="Base of the new ids (default: the platform's name)."),
    click.option(
        "--knob", "knobs", multiple=True, metavar="KEY=VALUE", help="A setting, as for import long (repeatable)."
    ),
    click.option("--description", default=None, help="Free text stored with the suite and the runs."),
    _json_option,
    click.pass_obj,
)


def _opts(files: tuple[str, ...], kw: dict[str, Any]):
    from evalcore.contract import hashing as H
    from evalcore.errors import InputError
    from evalcore.importers.kinds import KindOptions
    from evalcore.importers.platform import PlatformOpts

    prefix = kw.pop("id_prefix")
    if prefix is not None and not H.is_valid_id(prefix):
        raise InputError(
            f"{prefix!r} is not a valid id prefix (letters, digits, . _ -)", file=files[0], field="--id-prefix"
        )
    kinds = KindOptions.from_cli(files[0], *(kw.pop(k) for k in _KIND_KEYS))
    return PlatformOpts(kinds, kw.pop("suite_id"), prefix, kw.pop("description"), list(kw.pop("knobs")))


def _report(s: dict[str, Any], as_json: bool) -> None:
    runs = "; ".join(
        f"run {r['run_id']} by {r['judge_model']} ({r['verdicts']} verdicts"
        + (f", {r['missing_verdicts']} missing" if r["missing_verdicts"] else "")
        + (f", all pass {pct_ci(r['all_pass']['rate'], r['all_pass']['ci95'])}" if r["all_pass"]["of"] else "")
        + ")"
        for r in s["runs"]
    )
    labels = (
        f"; label set {s['labelset_id']} ({s['labels']} labels by {', '.join(s['annotators'])})"
        if "labelset_id" in s
        else ""
    )
    text = (
        f"imported {s['platform']} {s['file']}: suite {s['suite_id']} ({s['items']} items), generation {s['gen_id']}"
        + (f"; {runs}" if runs else "")
        + labels
    )
    _emit(s, as_json, "\n".join([text, *(f"note: {n}" for n in s["notes"])]))


def _command(name: str, doc: str, *extra: Callable) -> Callable:
    """An ``import <platform>`` command: its own options, then the platform options all share."""

    def wrap(f: Callable) -> Callable:
        f.__doc__ = doc
        return import_.command(name)(_options(*extra, _platform_options)(f))

    return wrap


_human_score_option = click.option(
    "--human-score",
    multiple=True,
    metavar="NAME=CRITERION",
    help="The score NAME is people's label on CRITERION (repeatable).",
)
_annotator_option = click.option(
    "--annotator", default=None, help="Who gave the --human-score labels when the file does not say."
)


@_command(
    "langfuse",
    "Import Langfuse observations and scores (API list responses, JSON or JSON Lines; one file or several).",
    click.option(
        "--api-scores",
        type=click.Choice(["ignore", "judge", "human"]),
        default="ignore",
        show_default=True,
        help="Scores with source API: left out, or a judge's, or people's.",
    ),
)
def import_langfuse_cmd(obj, files, api_scores: str, judge_model, as_json: bool, **kw) -> None:
    from evalcore.importers.langfuse import import_langfuse

    _report(import_langfuse(obj.data_opt, list(files), _opts(files, kw), judge_model, api_scores), as_json)


@_command("langsmith", "Import LangSmith runs and feedback (JSON or JSON Lines; one file or several).")
def import_langsmith_cmd(obj, files, judge_model, as_json: bool, **kw) -> None:
    from evalcore.importers.langsmith import import_langsmith

    _report(import_langsmith(obj.data_opt, list(files), _opts(files, kw), judge_model), as_json)


@_command(
    "braintrust",
    "Import Braintrust experiment events and feedback records (JSON or JSON Lines; one file or several).",
    _human_score_option,
    _annotator_option,
)
def import_braintrust_cmd(obj, files, human_score, annotator, judge_model, as_json: bool, **kw) -> None:
    from evalcore.importers.braintrust import import_braintrust

    o = _opts(files, kw)
    _report(import_braintrust(obj.data_opt, list(files), o, judge_model, list(human_score), annotator), as_json)


@_command(
    "otel",
    "Import OTLP JSON spans with OpenTelemetry GenAI attributes and gen_ai.evaluation.result events.",
    _human_score_option,
    _annotator_option,
)
def import_otel_cmd(obj, files, human_score, annotator, judge_model, as_json: bool, **kw) -> None:
    from evalcore.importers.otel import import_otel

    o = _opts(files, kw)
    _report(import_otel(obj.data_opt, list(files), o, judge_model, list(human_score), annotator), as_json)
