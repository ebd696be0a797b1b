"""``evalcore import phoenix|mlflow`` and ``evalcore labels push``: judge scores and people's
annotations read from a running Arize Phoenix or MLflow tracking server, and adjudicated gold
written back to it (issue 40)."""

from __future__ import annotations

from typing import Any

import click

from evalcore.cli._common import FINITE, Ctx, emit
from evalcore.cli.importing import (
    _gate_option,
    _json_option,
    _options,
    import_,
)
from evalcore.cli.labels import labels
from evalcore.importers.frame import KIND_CHOICES

PLATFORMS = ("phoenix", "mlflow")

_server_import_options = _options(
    click.option("--kind", type=click.Choice(KIND_CHOICES), default=None, help="Kind of every criterion."),
    click.option("--criterion-kind", multiple=True, metavar="NAME=KIND", help="Kind of one criterion (repeatable)."),
    click.option("--threshold", type=FINITE, default=None, help="Pass threshold (score >= T) of the scored criteria."),
    click.option("--criterion-threshold", multiple=True, metavar="NAME=T", help="Pass threshold of one criterion."),
    click.option("--scale", default=None, metavar="MIN:MAX", help="Scale of the scored criteria."),
    click.option("--criterion-scale", multiple=True, metavar="NAME=MIN:MAX", help="Scale of one criterion."),
    _gate_option,
    *(
        click.option(f"--{what}-id", default=None, help=f"Id of the new {name} (default: the project's name).")
        for what, name in (
            ("suite", "suite"),
            ("gen", "generation"),
            ("run", "run"),
            ("labelset", "people's label set"),
        )
    ),
    click.option(
        "--judge-model",
        default=None,
        help="The judge, as a pinned snapshot (default: the model the server names, when one; else unknown).",
    ),
    click.option("--description", default=None, help="Free text stored with the suite, run and label set."),
    _json_option,
)


def _server_import(obj: Ctx, platform: str, url: str, name: str, as_json: bool, kw: dict[str, Any]) -> None:
    from evalcore.importers import mlflow, phoenix
    from evalcore.importers.kinds import KindOptions
    from evalcore.importers.server import Server, ServerImport, write_pulled

    keys = ("kind", "criterion_kind", "threshold", "criterion_threshold", "scale", "criterion_scale", "gate")
    kinds = KindOptions.from_cli(url, *(kw.pop(k) for k in keys))
    server = Server(platform, url)
    try:
        pulled = (phoenix if platform == "phoenix" else mlflow).pull(server, name)
    finally:
        server.close()
    s = write_pulled(obj.data_opt, pulled, ServerImport(kinds=kinds, **kw))
    lines = [f"imported {s['source']}:"]
    if s["run"]:
        r = s["run"]
        lines.append(
            f"  suite {r['suite_id']} ({r['items']} answers), generation {r['gen_id']}, run {r['run_id']} "
            f"({r['verdicts']} verdicts)"
        )
    if s["labels"]:
        la = s["labels"]
        lines.append(f"  label set {la['labelset_id']} ({la['labels']} labels by {', '.join(la['annotators'])})")
    lines += [
        f"note: {n}"
        for n in s["notes"] + [n for part in (s["run"], s["labels"]) if part for n in part.get("notes") or []]
    ]
    emit(s, as_json, "\n".join(lines))


@import_.command("phoenix")
@click.argument("url")
@click.option("--project", required=True, help="The Phoenix project (its name or id).")
@_server_import_options
@click.pass_obj
def import_phoenix_cmd(obj: Ctx, url: str, project: str, as_json: bool, **kw) -> None:
    """Import a Phoenix project's root spans: LLM span annotations as a run, HUMAN ones as people's labels."""
    _server_import(obj, "phoenix", url, project, as_json, kw)


@import_.command("mlflow")
@click.argument("url")
@click.option("--experiment", required=True, help="The MLflow experiment's name.")
@_server_import_options
@click.pass_obj
def import_mlflow_cmd(obj: Ctx, url: str, experiment: str, as_json: bool, **kw) -> None:
    """Import an MLflow experiment's traces: LLM_JUDGE feedback as a run, HUMAN feedback as people's labels."""
    _server_import(obj, "mlflow", url, experiment, as_json, kw)


@labels.command("push")
@click.option(
    "--to",
    "to",
    nargs=2,
    type=(click.Choice(PLATFORMS), str),
    required=True,
    metavar="PLATFORM URL",
    help="phoenix URL or mlflow URL: the running server to write gold to.",
)
@click.option("--project", default=None, help="phoenix: the project whose spans the generation's items are.")
@click.option("--experiment", default=None, help="mlflow: the experiment whose traces the generation's items are.")
@click.option("--gen", "gen_id", required=True, help="The generation imported from that project or experiment.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_push(obj: Ctx, to: tuple[str, str], project, experiment, gen_id: str, as_json: bool) -> None:
    """Write the generation's gold (with who decided it, the policy and when) back to Phoenix or MLflow.

    A second push writes nothing new: a case already there is updated only when its gold changed."""
    from evalcore.importers import mlflow, phoenix
    from evalcore.importers.goldout import provenance
    from evalcore.importers.server import Server, gold_to_push
    from evalcore.storage.labels import LabelStore

    platform, url = to
    name = project if platform == "phoenix" else experiment
    if not name:
        raise click.UsageError(f"--to {platform} needs --{'project' if platform == 'phoenix' else 'experiment'}")
    cases, notes = gold_to_push(LabelStore(obj.store), gen_id)
    server = Server(platform, url)
    try:
        counts = (phoenix if platform == "phoenix" else mlflow).push(server, name, cases, provenance)
    finally:
        server.close()
    out = {"platform": platform, "url": server.url, "target": name, "gen_id": gen_id, "cases": len(cases)}
    out |= counts | {"notes": notes}
    text = (
        f"pushed {len(cases)} gold cases of {gen_id} to {platform} {server.url} {name}: "
        f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged"
    )
    emit(out, as_json, "\n".join([text, *(f"note: {n}" for n in notes)]))
