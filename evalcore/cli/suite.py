"""Command-line commands of issue 8 (suite upkeep): ``evalcore suite check | repair | versions |
looks | show | items | item`` (registered on the CLI group by evalcore.cli; docs/SUITES.md), and
:func:`holdout_option`, the ``--include-holdout`` of every command that lists items or shows figures
over them.

Holdout items are hidden by default. ``--include-holdout`` runs the command with
``include_holdout=True`` handed to the library explicitly and, once it has succeeded, appends one look per suite
with holdout items it read to ``<state>/suites.sqlite`` (who: ``$EVALCORE_USER``, else ``$USER``).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import click

from evalcore.cli._common import FINITE, emit

HOLDOUT_HELP = (
    "Include the suite's holdout items (hidden by default); the look is logged in the state "
    "directory (evalcore suite looks)."
)
_SUITES_READ = "evalcore.suites_read"  # click context meta: the suites a command says it read


def _obj():
    return click.get_current_context().find_root().obj


def _who() -> str | None:
    return os.environ.get("EVALCORE_USER") or os.environ.get("USER") or None


def _suites_read(store, params: dict[str, Any]) -> list[str]:
    """The suites a command read, from its arguments (runs, generations, queues, a suite); every
    suite when it names none (``runs``, ``generations``)."""
    from evalcore.analysis.suites import suite_of_run
    from evalcore.review.queue import get_queue

    runs = [params.get(k) for k in ("run_id", "run_a", "run_b", "reference", "in_run", "baseline", "candidate")]
    suites = [suite_of_run(store, rid) for rid in runs + list(params.get("run_ids") or []) if rid and rid != "people"]
    gen_id = params.get("gen_id")
    queue_id = params.get("queue_id")
    if queue_id or (gen_id and "queue_id" in params):
        gen_id = get_queue(store, queue_id, gen_id=gen_id)["gen_id"]
    suites += [store.generation(g).manifest.suite_id for g in (gen_id, *(params.get("gen_ids") or ())) if g]
    if params.get("suite_id"):
        suites.append(params["suite_id"])
    return list(dict.fromkeys(suites)) or store.ids("suite")


def read_suites(suites: Iterable[str]) -> None:
    """Say which suites the command read, when its arguments do not (``--include-holdout`` logs a look
    on each of them instead)."""
    click.get_current_context().meta[_SUITES_READ] = list(dict.fromkeys(suites))


def log_cli_looks(store, command: str, suites: list[str]) -> list[dict[str, Any]]:
    """One look per suite that has holdout items."""
    from evalcore.analysis.suites import holdout_count, log_look

    return [log_look(store, sid, f"cli:{command}", _who(), source="cli") for sid in suites if holdout_count(store, sid)]


def holdout_option(text: str = HOLDOUT_HELP) -> Callable[[Callable], Callable]:
    """``--include-holdout`` on a command that reads items or figures over them: the command runs
    with ``include_holdout`` set on the context (it hands it to the library explicitly) and, once it
    has succeeded (a verdict's exit code 0 or 1 included: gate, suite check), one look is logged per
    suite it read (:func:`read_suites`, else its arguments). Holdout items are hidden without it."""

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def callback(*args: Any, include_holdout: bool = False, **kwargs: Any) -> Any:
            if not include_holdout:
                return f(*args, **kwargs)
            ctx, obj = click.get_current_context(), _obj()
            obj.include_holdout = True

            def log() -> None:
                suites = ctx.meta[_SUITES_READ] if _SUITES_READ in ctx.meta else _suites_read(obj.store, kwargs)
                log_cli_looks(obj.store, ctx.command_path.partition(" ")[2], suites)

            try:
                result = f(*args, **kwargs)
            except SystemExit as e:
                if e.code in (0, 1):
                    log()
                raise
            log()
            return result

        return click.option("--include-holdout", is_flag=True, help=text)(callback)

    return decorate


# --------------------------------------------------------------------------- evalcore suite


@click.group("suite")
def suite_group() -> None:
    """Suite upkeep: admission checks, repairs as new versions, holdout looks (docs/SUITES.md)."""


@suite_group.command("check")
@click.argument("suite_id")
@click.option("--version", "version", type=int, default=None, help="Suite version (default: the current one).")
@click.option(
    "--threshold",
    type=FINITE,
    default=None,
    help="Near-duplicate threshold: Jaccard similarity of character 4-grams (default 0.75).",
)
@holdout_option("Also list findings on holdout items (the look is logged).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_check(suite_id: str, version: int | None, threshold: float | None, as_json: bool) -> None:
    """Admission checks: schema, quoted spans, duplicates, quotas, open "test is wrong" flags.
    One line per finding; exit code 1 when there is any, 0 when there is none."""
    from evalcore.review.admission import NEAR_DUPLICATE_THRESHOLD
    from evalcore.review.suites import check, finding_line, visible_findings

    store = _obj().store
    r = check(store, suite_id, version, NEAR_DUPLICATE_THRESHOLD if threshold is None else threshold)
    r = visible_findings(store, r, _obj().include_holdout)
    text = (
        "\n".join(finding_line(f) for f in r["findings"])
        if r["findings"]
        else f"ok: no findings in suite {suite_id} v{r['version']}"
    )
    if r["holdout_findings_hidden"] and not as_json:
        text += f"\n({r['holdout_findings_hidden']} findings on holdout items hidden: --include-holdout)"
    for note in r.get("notes") or []:
        text += f"\nnote: {note}"
    emit(r, as_json, text)
    if r["findings"]:
        sys.exit(1)


@suite_group.command("repair")
@click.argument("suite_id")
@click.option("--item", "item_id", required=True, help="The item to repair.")
@click.option(
    "--field",
    "field",
    required=True,
    help="input, context, reference, must_have, nice_to_have, wrong_if, expected_doc_ids, class, difficulty "
    "or holdout.",
)
@click.option(
    "--value",
    required=True,
    help="The new value; a list field takes a JSON list or one entry per line, holdout true or false.",
)
@click.option("--by", "by", required=True, help="Who makes the repair.")
@click.option("--why", required=True, help="Why the test was wrong.")
@click.option("--flag", type=int, default=None, help="The label-store edit (outcome test_wrong) this resolves.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_repair(
    suite_id: str, item_id: str, field: str, value: str, by: str, why: str, flag: int | None, as_json: bool
) -> None:
    """Write the next suite version (in the state directory) with one field of one item changed."""
    from evalcore.review.suites import repair

    r = repair(_obj().store, suite_id, item_id, field, value, by, why, flag)
    c = r["change"]
    emit(
        r,
        as_json,
        f"suite {suite_id} v{r['version']} ({r['content_hash']}, supersedes {r['supersedes']}): "
        f"{c['item_id']} {c['field']} repaired by {c['by']}"
        + (f"; resolves flag {c['flag']}" if c["flag"] is not None else "")
        + f" -> {r['path']}",
    )


@suite_group.command("versions")
@click.argument("suite_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_versions(suite_id: str, as_json: bool) -> None:
    """Every version of a suite with its changes, and the runs on each."""
    from evalcore.analysis.suites import run_marks, versions

    store = _obj().store
    vs = versions(store, suite_id)
    marks = [m for m in run_marks(store).values() if m["suite_id"] == suite_id]
    for v in vs:
        v["runs"] = [m["run_id"] for m in marks if m["suite_version"] == v["version"]]
    lines = []
    for v in vs:
        lines.append(
            f"v{v['version']}{' (current)' if v['current'] else ''}: {v['content_hash']}, {v['n_items']} "
            f"items, {v['created_at']}, {v['where']}; runs: {', '.join(v['runs']) or 'none'}"
        )
        for c in v["changes"]:
            lines.append(
                f"  {c['item_id']} {c['field']} by {c['by']} at {c['at']}"
                + (f" (resolves flag {c['flag']})" if c["flag"] is not None else "")
                + f": {c['why']}"
            )
    emit(vs, as_json, "\n".join(lines))


@suite_group.command("looks")
@click.argument("suite_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_looks(suite_id: str, as_json: bool) -> None:
    """Every logged look at the suite's holdout items (page or command, who, when)."""
    from evalcore.analysis.suites import looks

    store = _obj().store
    store.suite(suite_id)
    rows = looks(store, suite_id)
    emit(
        rows,
        as_json,
        "\n".join(f"{r['at']} {r['source']} {r['page']} by {r['who'] or '(unknown)'}" for r in rows)
        or f"no looks at the holdout items of {suite_id}",
    )


@suite_group.command("show")
@click.argument("suite_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_show(suite_id: str, as_json: bool) -> None:
    """The suite page's figures: versions, items, holdout items, age, tuning use, flags, looks, findings."""
    from evalcore.review.suites import check, overview, visible_findings

    store = _obj().store
    r = overview(store, suite_id)
    c = visible_findings(store, check(store, suite_id), False)
    r["findings"] = c["counts"]
    r["holdout_findings_hidden"] = c["holdout_findings_hidden"]
    t = r["tuning"]
    text = "\n".join(
        [
            f"suite {suite_id}: v{r['current_version']} of {len(r['versions'])}; {r['items']} items "
            f"({r['holdout_items']} holdout){'; CURATED' if r['curated'] else ''}",
            f"age: {r['age_days']} days since frozen ({r['created_at']}); current version {r['current_version_age_days']} "
            "days old",
            f"tuning use: {t['generations']} generations, {t['runs']} judge runs ({t['uses']} uses)",
            f"flags: {r['flags']['open']} open, {r['flags']['resolved']} resolved; holdout looks: {r['looks']}",
            "findings: " + ", ".join(f"{k} {v}" for k, v in r["findings"].items()),
        ]
    )
    emit(r, as_json, text)


@suite_group.command("items")
@click.argument("suite_id")
@click.option("--version", "version", type=int, default=None, help="Suite version (default: the current one).")
@holdout_option()
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True, help="Items to skip (id order).")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most this many items (default: all).")
@click.option("--only-findings", is_flag=True, help="Only the items with a finding or an open flag.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_items(
    suite_id: str,
    version: int | None,
    offset: int,
    limit: int | None,
    only_findings: bool,
    as_json: bool,
) -> None:
    """The items of a suite version with their findings and open flags (holdout hidden by default),
    in item id order; ``--offset`` and ``--limit`` page through a large suite."""
    from evalcore.review.suites import check, items, visible_findings

    store, include_holdout = _obj().store, _obj().include_holdout
    c = visible_findings(store, check(store, suite_id, version), include_holdout)
    r = items(
        store,
        suite_id,
        version,
        include_holdout,
        c["findings"],
        offset=offset,
        limit=limit,
        only_findings=only_findings,
    )
    lines = [
        f"{x['item_id']}{' (holdout)' if x['holdout'] else ''}: {x['findings']} findings, {x['open_flags']} "
        f"open flags; class {x['class'] or '-'}, difficulty {x['difficulty'] or '-'}"
        for x in r["rows"]
    ]
    lines.append(
        f"{r['items']} items"
        + (" with findings or open flags" if only_findings else "")
        + (f", {len(r['rows'])} listed from {offset + 1}" if len(r["rows"]) < r["items"] else " shown")
        + (f"; {r['holdout_hidden']} holdout items hidden (--include-holdout)" if r["holdout_hidden"] else "")
    )
    emit(r, as_json, "\n".join(lines))


@suite_group.command("item")
@click.argument("suite_id")
@click.argument("item_id")
@click.option("--version", "version", type=int, default=None, help="Suite version (default: the current one).")
@holdout_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_item(suite_id: str, item_id: str, version: int | None, as_json: bool) -> None:
    """One item of a suite version, every field."""
    from evalcore.review.suites import item

    r = item(_obj().store, suite_id, item_id, version, _obj().include_holdout)
    read_suites([suite_id] if r.get("holdout") else [])
    emit(r, as_json, "\n".join(f"{k}: {v}" for k, v in r.items()))


def register(cli: click.Group) -> None:
    """Add ``evalcore suite ...``."""
    cli.add_command(suite_group)
