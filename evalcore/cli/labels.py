"""``evalcore labels add | list | export | check | recover``: human labels, an append-only history in the state
directory (:mod:`evalcore.storage.labels`).

``add`` records one decision (appended; nothing is overwritten), ``list`` shows each decided
case's gold and status (:mod:`evalcore.storage.gold`) or the whole history, with labels shipped in
the data directory marked as such, and ``export`` writes them with their provenance. ``check``
runs SQLite's full integrity check; ``recover`` copies what can be read of a damaged store into a
new file (:mod:`evalcore.storage.recover`).
"""

from __future__ import annotations

from pathlib import Path

import click

from evalcore.cli._common import Ctx, _table, cli, emit, role_option

# --------------------------------------------------------------------------- labels


@cli.group()
def labels() -> None:
    """Human labels: an append-only history in the state directory."""


@labels.command("add")
@click.option("--item", "item_id", default=None, help="The item (required unless --from gives it).")
@click.option("--criterion", default=None, help="The criterion (required unless --from gives it).")
@click.option("--value", default=None, help="pass/fail, a score, or correct/partial/wrong.")
@click.option("--reviewer", default=None, help="Who decided (required unless --from gives it).")
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Many edits from a CSV (header row) or JSON Lines file, '-' for standard input: columns as these "
    "options (item_id, criterion, value, reviewer, note, gen_id, round, outcome, queue, reason_code, "
    "supersedes, tags ;-separated, role); the options fill empty cells. All are checked before any is written.",
)
@click.option("--note", default=None)
@click.option("--gen", "gen_id", default=None, help="Generation (needed when the item is in several).")
@click.option("--round", "gen_round", type=int, default=1, show_default=True, help="Generation round.")
@click.option(
    "--outcome",
    type=click.Choice(["decided", "test_wrong", "skipped", "withdrawn"]),
    default="decided",
    show_default=True,
)
@click.option("--queue", default="cli", show_default=True, help="Where the decision came from.")
@click.option("--reason-code", default=None, help="Why the case was reviewed.")
@click.option("--supersedes", type=int, default=None, help="Edit id this one replaces or withdraws.")
@click.option("--tag", "tags", multiple=True, help="Free-form failure tag (repeatable).")
@role_option
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_add(obj: Ctx, as_json, from_file, **edit) -> None:
    """Record one decision, or many with --from (appended; nothing is overwritten)."""
    from evalcore.storage.labels import LabelStore

    ls = LabelStore(obj.store)
    edit["tags"] = list(edit["tags"])  # the other options are LabelStore.add's arguments as they are
    if from_file is not None:
        _add_from(ls, from_file, as_json, edit)
        return
    for opt, key in (("--item", "item_id"), ("--criterion", "criterion"), ("--reviewer", "reviewer")):
        if edit[key] is None:
            raise click.UsageError(f"Missing option '{opt}' (or give many edits with --from FILE).")
    if edit["outcome"] == "decided" and edit["value"] is None:
        raise click.UsageError("--value is required for a decision")
    row = ls.add(**edit)
    emit(
        row,
        as_json,
        f"edit {row['edit_id']}: {row['gen_id']}/{row['item_id']} r{row['gen_round']} "
        f"{row['criterion']} = {row['value']} ({row['outcome']}) by {row['reviewer']} -> {ls.path}",
    )


def _add_from(ls, from_file: str, as_json: bool, defaults: dict) -> None:
    """``labels add --from FILE``: every edit of the file checked, then written in batches."""
    import sys
    import time

    from evalcore.errors import InputError
    from evalcore.storage.labelvalues import read_edit_file

    name = "<stdin>" if from_file == "-" else from_file
    try:
        raw = sys.stdin.buffer.read() if from_file == "-" else Path(from_file).read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"is not UTF-8 text (byte {e.start})", file=name, field="--from") from None
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror})", file=name, field="--from") from None
    t0 = time.perf_counter()
    edits = read_edit_file(text, name, {k: v for k, v in defaults.items() if v not in (None, [])})
    ids = ls.add_many(edits, source=name)
    info = {
        "added": len(ids),
        "first_edit_id": ids[0] if ids else None,
        "last_edit_id": ids[-1] if ids else None,
        "file": str(ls.where),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    text_out = (
        f"{len(ids):,} edits ({ids[0]}-{ids[-1]}) -> {ls.where}" if ids else f"no edits in {name}: nothing written"
    )
    emit(info, as_json, text_out)


@labels.command("list")
@click.option("--history", is_flag=True, help="Every edit, not the gold each case has.")
@click.option("--shipped/--no-shipped", default=True, show_default=True, help="Include labels shipped with the data.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_list(obj: Ctx, history: bool, shipped: bool, as_json: bool) -> None:
    """Show each decided case's gold and status (or every edit), shipped labels marked as such."""
    from evalcore.storage.export import label_rows
    from evalcore.storage.labels import LabelStore

    _cols, rows = label_rows(LabelStore(obj.store), history=history, include_shipped=shipped)
    if history:
        cols = [
            ("source", "source", False),
            ("edit_id", "edit", False),
            ("gen_id", "gen", False),
            ("item_id", "item", False),
            ("criterion", "criterion", False),
            ("value", "value", False),
            ("outcome", "outcome", False),
            ("reviewer", "reviewer", False),
            ("role", "role", False),
            ("created_at", "when", False),
        ]
    else:
        for r in rows:
            r["said"] = "; ".join(f"{k} {v}" for k, v in r["reviewers"].items())
        cols = [
            ("source", "source", False),
            ("gen_id", "gen", False),
            ("item_id", "item", False),
            ("criterion", "criterion", False),
            ("status", "status", False),
            ("value", "gold", False),
            ("gold_from", "from", False),
            ("said", "reviewers said", False),
        ]
    emit(rows, as_json, _table(rows, cols))


@labels.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "parquet", "json", "langfuse", "langsmith", "braintrust"]),
    default="csv",
    show_default=True,
    help="langfuse, langsmith, braintrust: adjudicated gold as JSON Lines of score create bodies, feedback "
    "create bodies or log_feedback arguments, with provenance (docs/IMPORT.md).",
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="File to write (stdout for text formats).")
@click.option("--history", is_flag=True, help="Every edit instead of each case's gold.")
@click.option("--wide", is_flag=True, help="Also one column per reviewer (reviewer:NAME) beside gold.")
@click.option("--shipped/--no-shipped", default=True, show_default=True)
@click.pass_obj
def labels_export(obj: Ctx, fmt: str, out: str | None, history: bool, wide: bool, shipped: bool) -> None:
    """Export gold with its provenance (status, who decided, the policy's source), or every edit."""
    from evalcore.storage.export import export_labels
    from evalcore.storage.labels import LabelStore

    if fmt in ("langfuse", "langsmith", "braintrust"):
        from evalcore.importers.goldout import export_platform

        if history or wide:
            raise click.UsageError("--history and --wide do not apply to a platform format")
        text = export_platform(LabelStore(obj.store), fmt, Path(out) if out else None)
        if text is not None:
            click.echo(text, nl=False)
        return
    text = export_labels(
        LabelStore(obj.store), fmt, Path(out) if out else None, history=history, include_shipped=shipped, wide=wide
    )
    if text is not None:
        click.echo(text, nl=False)


@labels.command("check")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_check(obj: Ctx, as_json: bool) -> None:
    """Check the label store in full (SQLite's integrity_check; opening runs only the cheap checks):
    exit 0 when it is whole, 2 with the first problem otherwise."""
    from evalcore.errors import StateError
    from evalcore.storage.labels import LabelStore
    from evalcore.storage.recover import check_store

    ls = LabelStore(obj.store)
    if ls.url:
        n = ls.rows("SELECT count(*) AS n FROM edits")[0]["n"]
        info = {"file": ls.where, "exists": True, "ok": True, "problems": [], "edits": n}
    else:
        info = check_store(ls.path)
    if not info["ok"]:
        raise StateError(f"is damaged (integrity_check: {info['problems'][0]})", file=ls.path)
    emit(
        info,
        as_json,
        f"{info['file']}: whole, {info['edits'] or 0:,} edits" if info["exists"] else f"{info['file']}: no store yet",
    )


@labels.command("recover")
@click.option(
    "--from", "src", type=click.Path(), default=None, help="The damaged store (default: this state's labels.sqlite)."
)
@click.option("--out", required=True, type=click.Path(), help="The new file to write (never an existing one).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_recover(obj: Ctx, src: str | None, out: str, as_json: bool) -> None:
    """Copy what can be read of a damaged SQLite label store (and its -wal) into a new file; the
    damaged one is left as it is. Put the new file in its place once you have checked it."""
    from evalcore.storage.recover import recover
    from evalcore.storage.state import writable_state

    path = Path(src) if src else writable_state(obj.store, "labels.sqlite")
    rep = recover(path, Path(out))
    text = f"{rep['out']}: " + "; ".join(
        f"{t} {v['recovered']:,} rows"
        + (f" ({v['unreadable_ranges']} unreadable ranges)" if v["unreadable_ranges"] else "")
        for t, v in rep["tables"].items()
    )
    emit(rep, as_json, text)


# --------------------------------------------------------------------------- export --hive


@cli.command("export")
@click.option(
    "--hive",
    "hive",
    required=True,
    type=click.Path(file_okay=False),
    help="Directory (or object-storage URL: s3://bucket/prefix) to write: hive-partitioned Parquet "
    "(suite=/generation=/run=) that Spark, Trino and Polars read.",
)
@click.option("--run", "run_ids", multiple=True, help="Run to export (repeatable; default every run).")
@click.option("--overwrite", is_flag=True, help="Replace an existing export directory (in one rename, at the end).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def export(obj: Ctx, hive: str, run_ids: tuple[str, ...], overwrite: bool, as_json: bool) -> None:
    """Write runs' verdicts and calls, their outputs, items, rubrics and gold as a hive layout
    other engines read (docs/SCALE.md)."""
    from evalcore.storage.hive import export_hive

    info = export_hive(obj.store, hive, list(run_ids), overwrite=overwrite)
    text = f"{info['path']}: {len(info['runs'])} runs; " + ", ".join(
        f"{t} {v['rows']:,} rows" for t, v in info["tables"].items()
    )
    for gen, sid in info.get("withheld", {}).items():
        text += (
            f"\nwithheld: generation {gen} is an arm of the open pairwise session {sid}: its answers' texts, "
            "and the sizes, costs and latencies of its outputs and calls, are not exported until the session is closed"
        )
    emit(info, as_json, text)


@labels.command("signoff")
@click.option("--gen", "gen_id", required=True, help="The generation whose gold is signed off.")
@click.option("--item", "item_ids", multiple=True, required=True, help="An item whose gold is signed off (repeatable).")
@click.option("--criterion", default=None, help="Only this criterion's gold (default: every gold case of the item).")
@click.option("--round", "gen_round", type=int, default=None, help="Only this generation round.")
@click.option("--by", default="", help="The domain expert signing off (needs the adjudicator or admin role).")
@click.option("--note", default=None)
@click.option("--revoke", is_flag=True, help="Take back the sign-off instead.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_signoff(obj: Ctx, gen_id, item_ids, criterion, gen_round, by, note, revoke, as_json) -> None:
    """A domain expert signs off gold cases (appended; --revoke takes a sign-off back)."""
    from evalcore.storage.labels import LabelStore
    from evalcore.storage.signoff import sign_off

    rows = sign_off(
        LabelStore(obj.store), gen_id, list(item_ids), by=by, criterion=criterion, gen_round=gen_round,
        revoke=revoke, note=note,
    )  # fmt: skip
    emit(
        rows,
        as_json,
        "\n".join(f"{r.action} {r.gen_id}/{r.item_id} r{r.gen_round} {r.criterion} by {r.expert}" for r in rows),
    )


@labels.command("signed")
@click.option("--gen", "gen_id", required=True, help="The generation.")
@click.option("--judge-round", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def labels_signed(obj: Ctx, gen_id: str, judge_round: int, as_json: bool) -> None:
    """Each judge run's accuracy on gold signed off by a domain expert, beside all gold."""
    from evalcore.review.signedgold import signed_gold

    r = signed_gold(obj.store, gen_id, judge_round=judge_round)

    def acc(x) -> str:
        return "-" if x.accuracy is None else f"{100 * x.accuracy:.1f}% of {x.cases}"

    lines = [f"{r.gen_id}: {r.gold_cases} gold cases, {r.signed_off} signed off by a domain expert"]
    lines += [f"  {x.run_id} {x.criterion}: all gold {acc(x.all_gold)}; signed off {acc(x.signed_off)}" for x in r.runs]
    if r.caveat:
        lines.append(r.caveat)
    emit(r, as_json, "\n".join(lines))
