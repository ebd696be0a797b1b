"""``evalcore export --hive DIR``: the chosen runs' verdicts and calls, their generations' outputs,
their suites' items, gold on their generations and each run's rubric, as hive-partitioned Parquet
that Spark, Trino, Polars, pyarrow.dataset and DuckDB read as tables (docs/SCALE.md shows the
queries and the layout)::

    DIR/export.json                                     what was exported: runs, tables, row counts
    DIR/items/suite=S/part-0.parquet                    items.parquet of each suite (contract columns)
    DIR/outputs/suite=S/generation=G/part-0.parquet     outputs.parquet of each generation
    DIR/verdicts/suite=S/generation=G/run=R/part-0.parquet
    DIR/calls/suite=S/generation=G/run=R/part-0.parquet
    DIR/criteria/suite=S/generation=G/run=R/part-0.parquet   the run's rubric, one row per criterion
    DIR/labels/suite=S/generation=G/part-0.parquet      gold per case (shipped and decided), when any

The partition values are the ids themselves (ids are letters, digits, ``.``, ``_`` and ``-``, so a
directory name never needs escaping); a reader should take them as strings, since an id like
``2024`` would otherwise be read as a number. Each file keeps the contract's columns unchanged
(docs/FORMAT.md), so ``verdicts`` also carries ``run_id``. A generation sealed by an open pairwise
session (storage.seal) is exported withheld: its outputs' ``output`` is the withheld line and the
sizes, costs and latencies of its outputs and of its runs' calls are null; ``export.json`` names it
under ``withheld`` with the session, and the rows are all there.

The export is written into a temporary directory beside ``DIR`` and renamed over it at the end: a
killed export leaves no half-written ``DIR``, and an existing ``DIR`` is replaced only with
``overwrite``. DuckDB copies each table file to file (``COPY (SELECT ...) TO``), so no table passes
through Python and memory stays at DuckDB's cap whatever the size of the runs.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from evalcore.contract.schema import SCHEMA_VERSION
from evalcore.errors import InputError
from evalcore.storage import remote
from evalcore.storage.export import labels_table
from evalcore.storage.files import atomic_directory
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import utcnow
from evalcore.storage.seal import SIZE_COLUMNS, sealed_generations, withheld_text
from evalcore.storage.store import Store

FORMAT_NAME = "evalcore-hive"
FORMAT_VERSION = 1
#: table -> its partition columns, outermost first
TABLES: dict[str, tuple[str, ...]] = {
    "items": ("suite",),
    "outputs": ("suite", "generation"),
    "verdicts": ("suite", "generation", "run"),
    "calls": ("suite", "generation", "run"),
    "criteria": ("suite", "generation", "run"),
    "labels": ("suite", "generation"),
}
PART = "part-0.parquet"


def _part_dir(root: Path, table: str, values: dict[str, str]) -> Path:
    d = root / table
    for col in TABLES[table]:
        d = d / f"{col}={values[col]}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _copy(con: Any, src: str, dest: Path, withheld: str | None = None) -> int:
    """One contract table copied file to file by DuckDB; its row count. ``withheld``: the open
    pairwise session sealing the table's answers (storage.seal): ``output`` (when the table has
    it) reads :func:`withheld_text` and the size columns (:data:`SIZE_COLUMNS`) are null."""
    q = str(dest).replace("'", "''")
    select, params = "*", [src]
    if withheld is not None:
        cols = {r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [src]).fetchall()}
        swap = [f"NULL::{t} AS {c}" for c, t in SIZE_COLUMNS.items() if c in cols]
        if "output" in cols:
            swap.insert(0, "?::VARCHAR AS output")
            params.insert(0, withheld_text(withheld))
        select = f"* REPLACE ({', '.join(swap)})"
    n = con.execute(f"COPY (SELECT {select} FROM read_parquet(?)) TO '{q}' (FORMAT parquet, COMPRESSION zstd)", params)
    return int(n.fetchall()[0][0])  # COPY returns the rows it wrote


def _criteria_rows(store: Store, run_id: str) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    crits = store.run(run_id).manifest.rubric.criteria
    return pa.table(
        {
            "run_id": pa.array([run_id] * len(crits), pa.string()),
            "position": pa.array(list(range(len(crits))), pa.int64()),
            "criterion": pa.array([c.name for c in crits], pa.string()),
            "kind": pa.array([c.kind for c in crits], pa.string()),
            "gate": pa.array([bool(c.gate) for c in crits], pa.bool_()),
            "threshold": pa.array([c.threshold for c in crits], pa.float64()),
        }
    )


def _write_arrow(tbl: Any, dest: Path) -> None:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    pq.write_table(tbl, dest, compression="zstd")


def export_hive(store: Store, out: str | Path, run_ids: list[str] | None = None, *, overwrite: bool = False) -> dict:
    """Write the runs (every run when ``run_ids`` is None or empty) under ``out`` as above; returns
    what ``export.json`` records. An object-storage URL (``s3://bucket/prefix``) is written from a
    local export in the state directory, uploaded once it is complete (:func:`remote.upload_tree`)."""
    if remote.is_remote(out):
        url = str(out).rstrip("/")
        remote.check_empty(url, overwrite=overwrite)  # before anything is exported
        with tempfile.TemporaryDirectory(dir=store.state_path()) as tmp:
            info = export_hive(store, Path(tmp) / "hive", run_ids)
            info["path"] = remote.upload_tree(Path(tmp) / "hive", url, overwrite=overwrite)
        return info
    out = Path(out)
    runs = list(dict.fromkeys(run_ids or store.ids("run")))
    if not runs:
        raise InputError("no run to export", file=store.data, field="--run")
    if out.exists() and not overwrite:
        raise InputError("already exists (pass --overwrite to replace it)", file=out, field="--hive")
    if out.exists() and not out.is_dir():
        raise InputError("is not a directory", file=out, field="--hive")
    data = store.data.resolve()
    if out.resolve() == data or out.resolve().is_relative_to(data):
        raise InputError("is inside the data directory; export somewhere else", file=out, field="--hive")
    where: dict[str, dict[str, str]] = {}
    for rid in runs:  # every id checked (and every run validated) before anything is written
        gen_id = store.run(rid).manifest.gen_id
        where[rid] = {"suite": store.generation(gen_id).manifest.suite_id, "generation": gen_id, "run": rid}
    gens = {w["generation"]: w for w in where.values()}
    sealed = {g: sid for g, sid in sealed_generations(store).items() if g in gens}
    suites = {w["suite"] for w in where.values()}
    rows: dict[str, int] = dict.fromkeys(TABLES, 0)
    files: dict[str, int] = dict.fromkeys(TABLES, 0)
    labels = LabelStore(store)
    with atomic_directory(out, overwrite=overwrite) as tmp:
        con = store.connect()
        try:
            for s in sorted(suites):
                rows["items"] += _copy(
                    con, store.path_of("suite", s, "items"), _part_dir(tmp, "items", {"suite": s}) / PART
                )
                files["items"] += 1
            for g, w in sorted(gens.items()):
                d = _part_dir(tmp, "outputs", w)
                rows["outputs"] += _copy(con, store.path_of("generation", g, "outputs"), d / PART, sealed.get(g))
                files["outputs"] += 1
                gold = labels_table(labels, gen_id=g)
                if gold.num_rows:
                    _write_arrow(gold, _part_dir(tmp, "labels", w) / PART)
                    rows["labels"] += gold.num_rows
                    files["labels"] += 1
            for rid, w in where.items():
                for table in ("verdicts", "calls"):
                    seal = sealed.get(w["generation"]) if table == "calls" else None  # a call's size is its answer's
                    rows[table] += _copy(con, store.path_of("run", rid, table), _part_dir(tmp, table, w) / PART, seal)
                    files[table] += 1
                crit = _criteria_rows(store, rid)
                _write_arrow(crit, _part_dir(tmp, "criteria", w) / PART)
                rows["criteria"] += crit.num_rows
                files["criteria"] += 1
        finally:
            con.close()
        info = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "contract_version": SCHEMA_VERSION,
            "created_at": utcnow().isoformat(),
            "source": str(store.data),
            "runs": [dict(w) for w in where.values()],
            **({"withheld": dict(sorted(sealed.items()))} if sealed else {}),
            "tables": {
                t: {"partitions": list(TABLES[t]), "files": files[t], "rows": rows[t]} for t in TABLES if files[t]
            },
        }
        (tmp / "export.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    info["path"] = str(out.resolve())
    return info
