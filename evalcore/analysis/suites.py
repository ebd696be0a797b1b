"""What reading a suite needs: its holdout items, its versions and the log of looks at the
holdout. Suite upkeep (admission checks, repairs as new suite versions, flags, the suite page's
overview) is :mod:`evalcore.review.suites`; docs/SUITES.md is the reference.

* **holdout** items are hidden by default: :func:`holdout_filter` is the anti-join the analysis
  layer adds when a caller does not pass ``include_holdout=True`` (there is no hidden default:
  every function takes it as an argument); :func:`holdout_ids` and :func:`holdout_count` (cached on
  the items file's mtime) list and count them. The flags are the current version's
  (:func:`evalcore.storage.holdout.items_path`): ``suite repair --field holdout`` sets or clears
  one. :func:`suite_of_run` names a run's suite. Every
  look at them is appended to ``<state>/suites.sqlite`` (:func:`log_look`, :func:`looks`; SQLite,
  WAL, ``synchronous=FULL``, rows never updated or deleted).
* **versions**: version 1 is the suite in the data directory (read-only to the app) and versions
  2, 3, ... live in the state directory, ``<state>/suites/<suite_id>/v<N>/`` (:func:`state_root`;
  manifest.json + items.parquet, the data contract's shapes). :func:`versions` and
  :func:`all_versions` list them oldest first (the last is current), :func:`pick_version` picks one.
  :data:`REPAIRABLE` names the fields a repair may change and how each value is read.
* :func:`suite_mark` tells whether a generation answered the suite's current version; runs on an
  older one are marked ``suite v1, superseded by v2`` wherever runs are listed
  (:func:`run_marks`).

Nothing here imports streamlit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalcore.contract import schema as S
from evalcore.errors import FormatError, InputError, NotFoundError, PathEscapeError
from evalcore.storage.files import read_json_model
from evalcore.storage.holdout import VERSION_DIR, VERSIONS_DIR, items_path
from evalcore.storage.integrity import check_database
from evalcore.storage.paths import check_id, inside, utcnow
from evalcore.storage.state import open_state_db, writable_state
from evalcore.storage.store import Store

#: the fields a repair may change, and how a value is read (`item_id` is not repairable)
REPAIRABLE: dict[str, str] = {
    "input": "text",
    "context": "text",
    "reference": "text",
    "must_have": "list",
    "nice_to_have": "list",
    "wrong_if": "list",
    "expected_doc_ids": "list",
    "class": "label",
    "difficulty": "label",
    "holdout": "flag",
}
LOOKS_DB = "suites.sqlite"
NONE = "(none)"


# --------------------------------------------------------------------------- holdout


_HOLD_CACHE: dict[str, tuple[int, int]] = {}


def holdout_count(store: Store, suite_id: str) -> int:
    """Number of holdout items of a suite's current version (cached on its items file's mtime)."""
    path = items_path(store, suite_id)
    stamp = os.stat(path).st_mtime_ns
    hit = _HOLD_CACHE.get(path)
    if hit is None or hit[0] != stamp:
        hit = (stamp, int(store.sql("SELECT count(*) FROM read_parquet(?) WHERE holdout", [path])[0][0]))
        _HOLD_CACHE[path] = hit
    return hit[1]


def holdout_ids(store: Store, suite_id: str) -> list[str]:
    """The suite's holdout items, in id order (its current version's flags: a repair may set them)."""
    return [
        r[0]
        for r in store.sql(
            "SELECT item_id FROM read_parquet(?) WHERE holdout ORDER BY 1", [items_path(store, suite_id)]
        )
    ]


def holdout_filter(store: Store, suite_id: str, include_holdout: bool | None = None) -> tuple[str, list[Any]]:
    """A SQL condition on a column ``item_id`` that leaves the suite's holdout items out, with its
    parameters; ``("", [])`` when they are included or the suite has none (so the query is then
    exactly what it was without holdout items)."""
    if bool(include_holdout) or not holdout_count(store, suite_id):
        return "", []
    return (
        "item_id NOT IN (SELECT item_id FROM read_parquet(?) WHERE holdout)",
        [items_path(store, suite_id)],
    )


def suite_of_run(store: Store, run_id: str) -> str:
    return store.generation(store.run(run_id).manifest.gen_id).manifest.suite_id


_LOOKS_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS looks (
    look_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    suite_id      TEXT NOT NULL,
    page          TEXT NOT NULL,
    who           TEXT,
    at            TEXT NOT NULL,
    holdout_items INTEGER NOT NULL,
    source        TEXT NOT NULL CHECK (source IN ('app', 'cli'))
);
CREATE INDEX IF NOT EXISTS looks_suite ON looks (suite_id, look_id);
CREATE TRIGGER IF NOT EXISTS looks_no_update BEFORE UPDATE ON looks
BEGIN SELECT RAISE(ABORT, 'looks are append-only'); END;
CREATE TRIGGER IF NOT EXISTS looks_no_delete BEFORE DELETE ON looks
BEGIN SELECT RAISE(ABORT, 'looks are append-only'); END;
INSERT OR IGNORE INTO meta VALUES ('schema_version', '1');
"""


def log_look(store: Store, suite_id: str, page: str, who: str | None = None, *, source: str = "app") -> dict[str, Any]:
    """Append one look at a suite's holdout items to ``<state>/suites.sqlite`` (SQLite, WAL,
    ``synchronous=FULL``, one transaction: an acknowledged look survives a killed process; rows
    are never updated or deleted)."""
    check_id(suite_id, "suite id")
    store.suite(suite_id)
    if source not in ("app", "cli"):
        raise InputError(f"source {source!r} is not app or cli", field="source")
    if not page or not str(page).strip():
        raise InputError("a look needs the page or command it was made from", field="page")
    who = (who or "").strip() or None
    row = (suite_id, str(page).strip(), who, utcnow().isoformat(), holdout_count(store, suite_id), source)
    con = open_state_db(writable_state(store, LOOKS_DB))
    try:
        con.executescript(_LOOKS_DDL)
        con.execute("BEGIN IMMEDIATE")
        try:
            cur = con.execute(
                "INSERT INTO looks (suite_id, page, who, at, holdout_items, source) VALUES (?,?,?,?,?,?)", row
            )
            look_id = cur.lastrowid
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.close()
    return {
        "look_id": look_id,
        "suite_id": row[0],
        "page": row[1],
        "who": row[2],
        "at": row[3],
        "holdout_items": row[4],
        "source": row[5],
    }


def looks(store: Store, suite_id: str | None = None) -> list[dict[str, Any]]:
    """Every logged look (at one suite's holdout items), oldest first."""
    if suite_id is not None:
        check_id(suite_id, "suite id")
    path = writable_state(store, LOOKS_DB)
    if not check_database(path):
        return []
    con = open_state_db(path, create=False)
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'looks'").fetchone():
            return []
        sql = "SELECT * FROM looks" + (" WHERE suite_id = ?" if suite_id else "") + " ORDER BY look_id"
        return [dict(r) for r in con.execute(sql, (suite_id,) if suite_id else ())]
    finally:
        con.close()


# --------------------------------------------------------------------------- versions


def state_root(store: Store, suite_id: str) -> Path:
    """``<state>/suites/<suite_id>`` (refused inside the data directory)."""
    check_id(suite_id, "suite id")
    writable_state(store, VERSIONS_DIR)
    return inside(store.state, VERSIONS_DIR, suite_id)


def _version_info(m: S.SuiteManifest, path: Path, where: str) -> dict[str, Any]:
    return {
        "version": m.version,
        "content_hash": m.content_hash,
        "created_at": m.created_at.isoformat(),
        "n_items": m.n_items,
        "supersedes": m.supersedes,
        "where": where,
        "path": str(path),
        "changes": [c.model_dump(mode="json") for c in m.changes],
    }


def _state_versions(store: Store, suite_id: str, first: int) -> list[tuple[dict[str, Any], S.SuiteManifest]]:
    try:
        root = state_root(store, suite_id)
    except PathEscapeError:  # a state directory inside the data: no versions can live there
        return []
    if not root.is_dir():
        return []
    out = []
    for p in root.iterdir():
        m = VERSION_DIR.match(p.name)
        if not m or not p.is_dir():
            continue
        n = int(m.group(1))
        man = read_json_model(p / "manifest.json", S.SuiteManifest)
        if man.suite_id != suite_id:
            raise FormatError(
                f"says suite {man.suite_id!r} but sits under {suite_id!r}", file=p / "manifest.json", field="suite_id"
            )
        if man.version != n or n <= first:
            raise FormatError(
                f"says version {man.version} but sits in directory v{n}"
                if man.version != n
                else f"version {n} is not above the data directory's version {first}",
                file=p / "manifest.json",
                field="version",
            )
        out.append((_version_info(man, p, "state"), man))
    return sorted(out, key=lambda t: t[0]["version"])


def all_versions(store: Store, suite_id: str) -> list[tuple[dict[str, Any], S.SuiteManifest]]:
    e = store.suite(suite_id)
    first = (_version_info(e.manifest, e.path, "data"), e.manifest)
    return [first, *_state_versions(store, suite_id, e.manifest.version)]


def versions(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """Every version of a suite, oldest first: version 1 from the data directory, the repaired ones
    from the state directory; the last is ``current``."""
    out = [v for v, _ in all_versions(store, suite_id)]
    for v in out:
        v["current"] = v is out[-1]
    return out


def pick_version(vs: list[tuple[dict, S.SuiteManifest]], version: int | None) -> tuple[dict, S.SuiteManifest]:
    if version is None:
        return vs[-1]
    for v in vs:
        if v[0]["version"] == int(version):
            return v
    raise NotFoundError(
        f"suite {vs[0][1].suite_id!r} has versions {', '.join(str(v[0]['version']) for v in vs)}, not {version}",
        field="--version",
    )


def suite_mark(store: Store, suite_id: str, suite_hash: str, _versions: list[dict] | None = None) -> dict[str, Any]:
    """Which version of the suite a generation answered (by its ``suite_hash``), the current version
    and the mark shown beside its runs: ``suite v1, superseded by v2``, or that the hash matches no
    version; None when the generation answered the current version."""
    vs = _versions if _versions is not None else versions(store, suite_id)
    cur = vs[-1]["version"]
    hit = next((v["version"] for v in reversed(vs) if v["content_hash"] == suite_hash), None)
    if hit is None:
        mark = f"suite {suite_id}: hash {suite_hash} matches no version (current v{cur})"
    elif hit != cur:
        mark = f"suite v{hit}, superseded by v{cur}"
    else:
        mark = None
    return {
        "suite_version": hit,
        "suite_current_version": cur,
        "suite_superseded": mark is not None,
        "suite_mark": mark,
    }


def run_marks(store: Store) -> dict[str, dict[str, Any]]:
    """:func:`suite_mark` of every run, by run id."""
    by_suite: dict[str, list[dict]] = {}
    out = {}
    for rid in store.ids("run"):
        gen = store.generation(store.run(rid).manifest.gen_id).manifest
        if gen.suite_id not in by_suite:
            by_suite[gen.suite_id] = versions(store, gen.suite_id)
        out[rid] = {
            "run_id": rid,
            "gen_id": gen.gen_id,
            "suite_id": gen.suite_id,
            **suite_mark(store, gen.suite_id, gen.suite_hash, by_suite[gen.suite_id]),
        }
    return out
