"""``evalcore state backup | restore``: the state directory (labels, ledger, queues, journals) and,
with the label store on PostgreSQL, its database, as one archive; the pairwise keys only with
``--keys`` (:mod:`evalcore.storage.backup`, docs/DEPLOY.md)."""

from __future__ import annotations

from pathlib import Path

import click

from evalcore.cli._common import Ctx, cli, emit

KEYS_APART = (
    "the pairwise keys are not in this backup (they unblind open sessions: back them up apart, with --keys, "
    "into an archive kept apart from the state's)"
)
KEYS_IN = (
    "this backup HOLDS the pairwise keys: whoever reads it can unblind every open session; keep it apart from "
    "the state's backups"
)


def _state(obj: Ctx) -> Path:
    from evalcore.storage.paths import default_state_dir

    return Path(obj.state_opt) if obj.state_opt else default_state_dir()


def _url(obj: Ctx) -> str | None:
    from evalcore.storage.db import check_url

    return check_url(obj.db_opt) if obj.db_opt else None


@cli.group("state")
def state() -> None:
    """The state directory: backup and restore (docs/DEPLOY.md)."""


@state.command("backup")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option(
    "--keys",
    type=click.Path(file_okay=False),
    default=None,
    help="Also back up this directory of pairwise keys (left out by default: keep such a backup apart).",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def state_backup(obj: Ctx, out: str, keys: str | None, as_json: bool) -> None:
    """Write the state (and the PostgreSQL database of --db) to the new archive OUT while the app
    runs: each SQLite database through SQLite's online backup, PostgreSQL through pg_dump, the
    other files one whole version each; a manifest with every file's sha256 (.tar, or .tar.gz)."""
    from evalcore.storage.backup import backup_state

    m = backup_state(_state(obj), Path(out), url=_url(obj), keys=Path(keys) if keys else None)
    db = m["database"]
    total = sum(f["bytes"] for f in m["files"])
    text = f"{out}: {len(m['files'])} files, {total:,} bytes; labels and ledger: " + (
        f"pg_dump of schema {db['schema']} ({db['url']})" if db["kind"] == "postgres" else "SQLite online backups"
    )
    text += "\n" + (KEYS_IN if m["keys"] else KEYS_APART)
    emit({**m, "out": out, "note": KEYS_IN if m["keys"] else KEYS_APART}, as_json, text)


@state.command("restore")
@click.argument("src", metavar="IN", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace a state directory (or database, or keys) that is not empty.")
@click.option(
    "--keys",
    type=click.Path(file_okay=False),
    default=None,
    help="Restore the backup's pairwise keys into this directory (apart from the state); without it they are not.",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def state_restore(obj: Ctx, src: str, force: bool, keys: str | None, as_json: bool) -> None:
    """Restore a backup into the state directory (a new one; --force replaces one), checking every
    file's sha256 before anything is written; the state is written beside and renamed into place,
    a PostgreSQL dump restored in one transaction. The label store's schema is upgraded when it is
    first opened."""
    from evalcore.storage.backup import restore_state

    r = restore_state(Path(src), _state(obj), url=_url(obj), keys=Path(keys) if keys else None, force=force)
    text = f"{r['state']}: {r['state_files']} files restored from {src} (made {r['created_at']})"
    if r["database"]["kind"] == "postgres":
        text += f"; labels and ledger restored into {r['database']['url']}"
    if r["keys"]["in_backup"] and not keys:
        text += "\nthe backup holds pairwise keys: not restored (give --keys DIR, a directory apart from the state)"
    elif keys:
        text += f"\n{r['keys']['files']} key files restored to {keys}"
    emit(r, as_json, text)


@state.command("upgrade")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def state_upgrade(obj: Ctx, as_json: bool) -> None:
    """Bring the label store and the ledger to this evalcore's schema now, in one transaction each
    (each is also upgraded when it is first opened; a store newer than this evalcore is refused).
    Run it before the app starts, e.g. after an upgrade or a restore; a store not made yet is left
    alone."""
    from evalcore.review.ledger import Ledger
    from evalcore.storage.backup import stored_version
    from evalcore.storage.integrity import check_database
    from evalcore.storage.labels import LabelStore

    ls = LabelStore(obj.store)
    before = stored_version(ls.url or ls.path)
    if ls.url or check_database(ls.path):
        ls.rows("SELECT count(*) AS n FROM edits")  # (opening it applies the upgrade)
        ls.close()
    after = stored_version(ls.url or ls.path)
    ledger = Ledger(obj.store)
    events = len(ledger.events())  # (opening it creates what an older ledger lacks)
    out = {
        "labels": {"where": ls.where, "schema_version_before": before, "schema_version": after},
        "ledger": {"where": ledger.where, "events": events},
    }
    text = f"label store {ls.where}: " + (
        "none yet" if after is None else f"schema {before} -> {after}" if before != after else f"schema {after}"
    )
    emit(out, as_json, text + f"\nledger {ledger.where}: {events} events")
