"""Suite upkeep: admission checks, repairs as new suite versions, flags, and the suite page's
overview (age and tuning use). docs/SUITES.md is the reference; what reading needs (versions,
holdout filters, the look log) is :mod:`evalcore.analysis.suites`.

* :func:`check` runs the admission checks (:data:`CHECKS`) and returns findings ``{check, item_id,
  field, problem, detail}``: ``schema`` (the contract, item count, content hash, empty inputs),
  ``quotes`` (every span quoted in a reference, must-have or nice-to-have entry occurs in the
  item's context or ``source`` column after :func:`normalise`: otherwise a *fabricated quote*),
  ``duplicates`` (the same normalised input; near duplicates by the Jaccard similarity of
  character shingles, :func:`near_duplicate_pairs`), ``quotas`` (class and difficulty targets in
  the manifest) and ``flags`` (items reviewers flagged "the test is wrong" that no later version
  repaired, :func:`flags`).
* :func:`repair` writes the next **version** of a suite with one field of one item changed, to
  ``<state>/suites/<suite_id>/v<N>/`` (the data directory is read-only; version 1 is the suite
  there), whole with one rename under a file lock; the manifest records the change, who, why,
  when, and the flag it resolves.
* :func:`items`, :func:`item`, :func:`tuning_use`, :func:`overview` and :func:`curated_suites`
  are what the suite page and ``evalcore suite`` show.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from evalcore.analysis.suites import (
    REPAIRABLE,
    all_versions,
    holdout_ids,
    looks,
    pick_version,
    state_root,
    versions,
)
from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import EvalcoreError, FormatError, InputError, LabelError, NotFoundError
from evalcore.review.admission import (
    CHECKS,
    CHECKS_VERSION,
    NEAR_DUPLICATE_THRESHOLD,
    SHINGLE,
    finding,
    item_checks,
    schema_finding,
)
from evalcore.storage import derived
from evalcore.storage.files import atomic_directory, check_parquet, to_table, write_json_model
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import check_id, utcnow
from evalcore.storage.roles import acting
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- repair


def parse_value(field: str, value: Any) -> str | list[str] | bool | None:
    """A repair's new value for ``field``: text (stripped; empty is null, except for the input,
    which may not be empty), a list (a JSON list of strings, or one entry per line; empty
    entries dropped; no entries is null), or the holdout flag (true / false, yes / no, 1 / 0)."""
    if REPAIRABLE.get(field) == "flag":
        return _flag(field, value)
    if field not in REPAIRABLE:
        raise InputError(f"field {field!r} cannot be repaired (one of {', '.join(REPAIRABLE)})", field="--field")
    if REPAIRABLE[field] == "list":
        if isinstance(value, (list, tuple)):
            entries = list(value)
        else:
            text = str(value if value is not None else "").strip()
            if text.startswith("["):
                try:
                    entries = json.loads(text)
                except json.JSONDecodeError as e:
                    raise InputError(f"does not parse as a JSON list: {e.msg}", field="--value") from None
                if not isinstance(entries, list):
                    raise InputError("must be a JSON list of strings", field="--value")
            else:
                entries = text.splitlines()
        if not all(isinstance(x, str) for x in entries):
            raise InputError(f"every entry of {field} must be text", field="--value")
        entries = [x.strip() for x in entries if x.strip()]
        return entries or None
    if value is not None and not isinstance(value, str):
        raise InputError(f"{field} takes text", field="--value")
    text = (value or "").strip()
    if field == "input" and not text:
        raise InputError("an item's input cannot be empty", field="--value")
    return text or None


_FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _flag(field: str, value: Any) -> bool:
    """A flag's new value: a bool, or one of :data:`_FLAGS` (any case)."""
    if isinstance(value, bool):
        return value
    got = _FLAGS.get(str(value if value is not None else "").strip().lower())
    if got is None:
        raise InputError(f"{field} takes true or false, not {value!r}", field="--value")
    return got


def _logged(value: Any) -> Any:
    """A value as a version's change log keeps it: a flag as ``true`` / ``false``, the rest as is."""
    return str(value).lower() if isinstance(value, bool) else value


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _items_table(table: pa.Table) -> pa.Table:
    """The contract's columns (typed as the contract says) followed by any extra columns the file
    had (e.g. ``source``), with the evalcore metadata."""
    base = to_table(table, "items")
    meta = base.schema.metadata
    for name in table.column_names:
        if name not in base.column_names:
            base = base.append_column(table.schema.field(name), table.column(name))
    return base.replace_schema_metadata(meta)


def _prepare(store: Store, suite_id: str, item_id: str, field: str, new: Any, flag: int | None) -> tuple:
    """Read the current version and check a repair against it (item present, value new, flag
    standing and open on this item); nothing is written."""
    vs = all_versions(store, suite_id)
    info, man = vs[-1]
    src = Path(info["path"]) / "items.parquet"
    check_parquet(src, "items")
    table = pq.read_table(src)
    ids = table.column("item_id").to_pylist()
    if item_id not in ids:
        raise NotFoundError(f"no item {item_id!r} in suite {suite_id!r} v{info['version']}", field="--item")
    row = ids.index(item_id)
    before = table.column(field)[row].as_py() if field in table.column_names else None
    if before == new:
        raise InputError(f"{field} of {item_id} already is that value in v{info['version']}", field="--value")
    if flag is not None:
        f = next((x for x in flags(store, suite_id, [v for v, _ in vs]) if x["edit_id"] == flag), None)
        if f is None:
            raise LabelError(
                f"edit {flag} is not a standing 'the test is wrong' flag on suite {suite_id!r}", field="--flag"
            )
        if f["resolved_by"] is not None:
            raise LabelError(f"flag {flag} was already resolved by v{f['resolved_by']}", field="--flag")
        if f["item_id"] != item_id:
            raise LabelError(f"flag {flag} is on item {f['item_id']!r}, not {item_id!r}", field="--flag")
    return vs, info, man, table, row, before


def repair(
    store: Store,
    suite_id: str,
    item_id: str,
    field: str,
    value: Any,
    by: str,
    why: str,
    flag: int | None = None,
    claims: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the next version of ``suite_id`` with ``field`` of ``item_id`` set to ``value``, and
    return it. Everything is checked before anything is written: the field is repairable, the value
    differs from the current one, ``by`` and ``why`` are given, and ``flag`` (if given) is a
    standing, unresolved "the test is wrong" edit on this item of this suite. Two repairs at once
    are serialised by a file lock; the second builds on the first."""
    by, why = (by or "").strip(), (why or "").strip()
    if not by and claims is None:
        raise InputError("say who makes the repair", field="--by")
    by = acting(store.state, "adjudicator", "admin", name=by, claims=claims).name  # the Suites page's roles, now
    if not why:
        raise InputError("say why the test was wrong", field="--why")
    new = parse_value(field, value)
    if flag is not None and (isinstance(flag, bool) or not isinstance(flag, int)):
        raise InputError(f"the flag is a label-store edit id (a number), not {flag!r}", field="--flag")
    root = state_root(store, suite_id)
    store.suite(suite_id)
    _prepare(store, suite_id, item_id, field, new, flag)  # refuse bad input before anything is created
    with _locked(root):
        vs, info, man, table, row, before = _prepare(store, suite_id, item_id, field, new, flag)
        base = _items_table(table)
        col = base.column(field).to_pylist()
        col[row] = new
        idx = base.column_names.index(field)
        base = base.set_column(idx, base.schema.field(idx), pa.array(col, type=base.schema.field(idx).type))
        h = H.suite_hash(base.to_pylist())
        n = info["version"] + 1
        change = S.SuiteChange(
            item_id=item_id,
            field=field,
            before=_logged(before),
            after=_logged(new),
            by=by,
            why=why,
            at=utcnow(),
            flag=flag,
        )
        manifest = man.model_copy(
            update={
                "version": n,
                "supersedes": man.content_hash,
                "changes": [change],
                "created_at": change.at,
                "content_hash": h,
                "n_items": base.num_rows,
            }
        )
        manifest = S.SuiteManifest.model_validate(manifest.model_dump(by_alias=True))
        final = root / f"v{n}"
        with atomic_directory(final) as tmp:
            with open(tmp / "items.parquet", "wb") as fh:
                pq.write_table(base, fh, compression="zstd")
            write_json_model(tmp / "manifest.json", manifest)
    return {
        "suite_id": suite_id,
        "version": n,
        "supersedes": man.content_hash,
        "content_hash": h,
        "path": str(final),
        "change": change.model_dump(mode="json"),
    }


# --------------------------------------------------------------------------- flags


def flags(store: Store, suite_id: str, _versions: list[dict] | None = None) -> list[dict[str, Any]]:
    """Standing "the test is wrong" edits (label store, outcome ``test_wrong``) on the
    generations of this suite, each with ``resolved_by``: the version whose changes name it, or
    None while it is open."""

    vs = _versions if _versions is not None else versions(store, suite_id)
    resolved = {c["flag"]: v["version"] for v in vs for c in v["changes"] if c.get("flag") is not None}
    gens = [g for g in store.ids("generation") if store.generation(g).manifest.suite_id == suite_id]
    try:
        labels = LabelStore(store)
    except EvalcoreError:  # e.g. a state directory inside the data directory: no label store
        return []
    out = []
    for g in gens:
        for e in labels.standing(g):
            if e["outcome"] == "test_wrong":
                out.append(
                    {
                        k: e[k]
                        for k in (
                            "edit_id",
                            "gen_id",
                            "item_id",
                            "gen_round",
                            "criterion",
                            "reviewer",
                            "note",
                            "created_at",
                            "queue",
                        )
                    }
                    | {"resolved_by": resolved.get(e["edit_id"])}
                )
    return sorted(out, key=lambda f: f["edit_id"])


# --------------------------------------------------------------------------- checks


def _memo_key(
    store: Store, suite_id: str, info: dict[str, Any], threshold: float
) -> tuple[Store, str, dict[str, Path], dict[str, Any]]:
    """derived.memo's store, name, sources and parameters for the checks on one version's items."""
    d = Path(info["path"])
    src = {"items.parquet": d / "items.parquet", "manifest.json": d / "manifest.json"}
    params = {"checks": CHECKS_VERSION, "threshold": threshold, "version": info["version"]}
    return store, f"suite-check-{suite_id}-v{info['version']}", src, params


def index_checks(store: Store, suite_id: str, *, peek: bool = False, force: bool = False) -> dict[str, Any]:
    """``evalcore index``'s row for a suite: the checks on its current version's items kept in the
    state (computed when missing or stale, or always with ``force``; ``peek``: only say whether
    they are current). ``{version, current, stored}``."""
    info, man = pick_version(all_versions(store, suite_id), None)
    key = _memo_key(store, suite_id, info, NEAR_DUPLICATE_THRESHOLD)
    current, _ = derived.memo_get(*key)
    if not peek and (force or not current):
        derived.memo(*key, lambda: item_checks(store, Path(info["path"]), man, NEAR_DUPLICATE_THRESHOLD), force=True)
    return {"version": info["version"], "current": current, "stored": derived.memo_get(*key)[0]}


def check(
    store: Store, suite_id: str, version: int | None = None, threshold: float = NEAR_DUPLICATE_THRESHOLD
) -> dict[str, Any]:
    """Every admission check on a version of a suite (default: the current one). Returns
    ``{suite_id, version, items, threshold, findings, counts}``; a finding is ``{check, item_id,
    field, problem, detail}``. A file that breaks the data contract is a ``schema`` finding (the
    store's own validation) and stops the item-level checks; open flags are listed whatever the
    version."""
    if not 0 < threshold <= 1:
        raise InputError(f"the threshold must lie in (0, 1], not {threshold}", field="--threshold")
    check_id(suite_id, "suite id")
    if not store.dir_of("suite", suite_id).is_dir():
        raise NotFoundError(f"no suite {suite_id!r} in {store.data}", field="suite id")
    findings: list[dict[str, Any]] = []
    notes: list[str] = []
    out = {
        "suite_id": suite_id,
        "version": version,
        "items": None,
        "shingle": SHINGLE,
        "threshold": threshold,
        "notes": notes,
    }
    try:
        vs = all_versions(store, suite_id)
    except FormatError as e:
        findings.append(schema_finding(e))
        return {**out, "findings": findings, "counts": _counts(findings)}
    info, man = pick_version(vs, version)
    out["version"] = info["version"]
    # the checks on the items depend on the version's files alone (a frozen suite): computed once
    # per content and kept in the state (derived.memo); the open flags below are read every time
    n_items, item_findings, item_notes = derived.memo(
        *_memo_key(store, suite_id, info, threshold), lambda: item_checks(store, Path(info["path"]), man, threshold)
    )
    out["items"] = n_items
    findings += item_findings
    notes += item_notes
    for f in flags(store, suite_id, [v for v, _ in vs]):
        if f["resolved_by"] is None:
            findings.append(
                finding(
                    "flags",
                    f["item_id"],
                    f["criterion"],
                    "the test is wrong",
                    f"flagged by {f['reviewer']} (edit {f['edit_id']}, {f['gen_id']} round "
                    f"{f['gen_round']}), not repaired" + (f": {f['note']}" if f["note"] else ""),
                )
            )
    order = {c: k for k, c in enumerate(CHECKS)}
    findings.sort(key=lambda f: order[f["check"]])
    return {**out, "findings": findings, "counts": _counts(findings)}


def visible_findings(store: Store, result: dict[str, Any], include_holdout: bool | None = None) -> dict[str, Any]:
    """:func:`check`'s result with the findings on holdout items left out unless included (their
    number is kept in ``holdout_findings_hidden``); findings on no item (schema, quotas) stay."""
    include = bool(include_holdout)
    on_items = {f["item_id"] for f in result["findings"] if f["item_id"]}
    hidden = (
        on_items & set(holdout_ids(store, result["suite_id"]))
        if on_items and not include and result["items"] is not None
        else set()
    )  # a suite's holdout ids read only when a finding names an item
    shown = [f for f in result["findings"] if f["item_id"] not in hidden]
    return {
        **result,
        "include_holdout": include,
        "findings": shown,
        "counts": _counts(shown),
        "holdout_findings_hidden": len(result["findings"]) - len(shown),
    }


def _counts(findings: list[dict[str, Any]]) -> dict[str, int]:
    c = Counter(f["check"] for f in findings)
    return {k: c.get(k, 0) for k in CHECKS}


def finding_line(f: dict[str, Any]) -> str:
    """One finding on one line: ``check: item: field: problem (detail)``."""
    line = f"{f['check']}: {f['item_id'] or '-'}: {f['field'] or '-'}: {f['problem']}"
    detail = " ".join(str(f["detail"]).split()) if f.get("detail") else ""
    return line + (f" ({detail})" if detail else "")


# --------------------------------------------------------------------------- overview


def items(
    store: Store,
    suite_id: str,
    version: int | None = None,
    include_holdout: bool | None = None,
    findings: list[dict[str, Any]] | None = None,
    *,
    offset: int = 0,
    limit: int | None = None,
    only_findings: bool = False,
) -> dict[str, Any]:
    """The items of a version (default: the current one) with how many findings and open flags
    each has, in item id order; holdout items left out unless included. ``offset`` and ``limit``
    pick one page of them (DuckDB reads only its rows: a suite may hold millions), ``only_findings``
    keeps the items with a finding or an open flag; ``items`` is how many there are in all."""
    include = bool(include_holdout)
    if offset < 0 or (limit is not None and limit < 0):
        raise InputError("offset and limit must not be negative", field="--offset" if offset < 0 else "--limit")
    info, _ = pick_version(all_versions(store, suite_id), version)
    path = str(Path(info["path"]) / "items.parquet")
    per = Counter(f["item_id"] for f in (findings or []) if f["item_id"] and f["check"] != "flags")
    per_flag = Counter(f["item_id"] for f in (findings or []) if f["item_id"] and f["check"] == "flags")
    names = {c for (c,) in store.sql("SELECT name FROM parquet_schema(?)", [path])}
    col = {c: (f'"{c}"' if c in names else "NULL") for c in ("input", "class", "difficulty", "holdout")}
    held = f"coalesce(CAST({col['holdout']} AS BOOLEAN), false)"
    where = [] if include else [f"NOT {held}"]
    params: list[Any] = []
    if only_findings:
        where.append("list_contains(?, item_id)")
        params.append(sorted(set(per) | set(per_flag)))
    cond = " AND ".join(where) or "true"
    ((total, hidden),) = store.sql(
        f"SELECT count(*) FILTER (WHERE {cond}), count(*) FILTER (WHERE {held}) FROM read_parquet(?)", [*params, path]
    )
    page = store.records(
        f"SELECT item_id, {col['input']} AS input, {col['class']} AS class, {col['difficulty']} AS difficulty, "
        f"{held} AS holdout FROM read_parquet(?) WHERE {cond} ORDER BY item_id"
        + (" LIMIT ?" if limit is not None else "")
        + " OFFSET ?",
        [path, *params, *([limit] if limit is not None else []), offset],
    )
    return {
        "suite_id": suite_id,
        "version": info["version"],
        "include_holdout": include,
        "items": total,
        "holdout_hidden": 0 if include else hidden,
        "offset": offset,
        "limit": limit,
        "only_findings": only_findings,
        "rows": [
            {
                "item_id": r["item_id"],
                "input": r["input"],
                "class": r["class"],
                "difficulty": r["difficulty"],
                "holdout": bool(r["holdout"]),
                "findings": per.get(r["item_id"], 0),
                "open_flags": per_flag.get(r["item_id"], 0),
            }
            for r in page
        ],
    }


def item(
    store: Store, suite_id: str, item_id: str, version: int | None = None, include_holdout: bool | None = None
) -> dict[str, Any]:
    """One item of a version (every column), refused when it is held out and holdout items are
    not shown."""
    info, _ = pick_version(all_versions(store, suite_id), version)
    rows = store.records(
        "SELECT * FROM read_parquet(?) WHERE item_id = ?", [str(Path(info["path"]) / "items.parquet"), item_id]
    )
    if not rows:
        raise NotFoundError(f"no item {item_id!r} in suite {suite_id!r} v{info['version']}", field="item")
    if rows[0].get("holdout") and not bool(include_holdout):
        raise InputError(
            f"item {item_id!r} is a holdout item: hidden unless holdout items are shown "
            "(--include-holdout, or 'Show holdout items'; the look is logged)",
            field="item",
        )
    return {"suite_id": suite_id, "version": info["version"], **rows[0]}


def tuning_use(store: Store, suite_id: str, _versions: list[dict] | None = None) -> dict[str, Any]:
    """How often the suite was used to tune: the generations made on it (any version) and the judge
    runs over them; each is a measurement someone could have steered a change by. Per version too
    (by the generation's suite_hash)."""
    vs = _versions if _versions is not None else versions(store, suite_id)
    gens = {g: store.generation(g).manifest for g in store.ids("generation")}
    mine = {g: m for g, m in gens.items() if m.suite_id == suite_id}
    runs = [rid for rid in store.ids("run") if store.run(rid).manifest.gen_id in mine]
    by_version = []
    for v in vs:
        vg = [g for g, m in mine.items() if m.suite_hash == v["content_hash"]]
        by_version.append(
            {
                "version": v["version"],
                "generations": len(vg),
                "runs": sum(store.run(r).manifest.gen_id in vg for r in runs),
            }
        )
    return {
        "generations": len(mine),
        "runs": len(runs),
        "uses": len(mine) + len(runs),
        "by_version": by_version,
        "generation_ids": sorted(mine),
        "run_ids": runs,
    }


def overview(store: Store, suite_id: str, now: datetime | None = None) -> dict[str, Any]:
    """What the suite page shows at the top: versions, items and holdout items of the current
    version, age (whole days since version 1 was frozen, and since the current version), tuning
    use, flags (open and resolved), logged looks, and whether it is curated."""
    now = now or utcnow()
    alls = all_versions(store, suite_id)
    vs = [v for v, _ in alls]
    for v in vs:
        v["current"] = v is vs[-1]
    first, cur = alls[0][1], alls[-1][1]
    path = Path(vs[-1]["path"]) / "items.parquet"
    n, hold = store.sql("SELECT count(*), count(*) FILTER (WHERE holdout) FROM read_parquet(?)", [str(path)])[0]
    fl = flags(store, suite_id, vs)
    return {
        "suite_id": suite_id,
        "description": first.description,
        "curated": cur.curated,
        "simulated": cur.simulated,
        "created_at": first.created_at.isoformat(),
        "current_version": cur.version,
        "current_created_at": cur.created_at.isoformat(),
        "age_days": (now - first.created_at).days,
        "current_version_age_days": (now - cur.created_at).days,
        "items": n,
        "holdout_items": hold,
        "versions": vs,
        "tuning": tuning_use(store, suite_id, vs),
        "flags": {
            "open": sum(f["resolved_by"] is None for f in fl),
            "resolved": sum(f["resolved_by"] is not None for f in fl),
        },
        "looks": len(looks(store, suite_id)),
        "quotas": cur.quotas.model_dump(by_alias=True, exclude_none=True) if cur.quotas else None,
    }


def curated_suites(store: Store, suite_ids: list[str] | None = None) -> list[str]:
    """The curated suites among ``suite_ids`` (default: all): their absolute rates describe the
    picked items, not a population, and are labelled as such."""
    out = []
    for sid in suite_ids if suite_ids is not None else store.ids("suite"):
        if store.suite(sid).manifest.curated and sid not in out:
            out.append(sid)
    return out
