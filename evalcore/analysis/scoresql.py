"""The answers' scores as SQL, read by :mod:`evalcore.analysis.scores`.

The unit is an **answer**: (generation, item, generation round). Every figure reads Parquet through
DuckDB and can pool several generations (a run belongs to one generation, so several runs pool
theirs; people can be read over any generations, e.g. SummEval's 16 systems, which have people's
ratings and no judge).

* **A judge's score** of an answer on a criterion is the verdicts' ``score``: the mean over the
  run's judge rounds (default) or one judge round; errored verdicts (score null) are left out and
  counted.
* **People's score**: from the label sets of the generation (``labels/<id>/labels.parquet``), the
  annotator ``mean`` (a published mean of several people) where there is one, else the mean of the
  annotators' scores; a gold value settled in the label store
  (:func:`evalcore.storage.gold.settled`) replaces it for that answer and criterion.
* ``classes`` keeps only the items of these classes (the suite's items ``class`` column),
  ``exclude`` leaves out the items of these (an item without a class stays); holdout items are left
  out unless ``include_holdout``.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from evalcore.analysis.suites import holdout_filter
from evalcore.errors import EvalcoreError, InputError, NotFoundError
from evalcore.storage.gold import settled
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store

NUMERIC = ("ordinal", "continuous")
MEAN = "mean"


def numpy_columns(store: Store, sql: str, params: list[Any]) -> dict[str, np.ndarray]:
    cur = store._con().cursor()
    try:
        res = cur.execute(sql, params).fetchnumpy()
    finally:
        cur.close()
    out = {}
    for k, v in res.items():
        if isinstance(v, np.ma.MaskedArray):
            v = cast(np.ma.MaskedArray, v.astype(float) if v.dtype.kind in "iufb" else v).filled(
                np.nan if v.dtype.kind in "iufb" else None
            )
        out[k] = np.asarray(v)
    return out


def item_filter(
    store: Store, gen_id: str, classes: list[str] | None, include_holdout: bool, exclude: list[str] | None = None
) -> tuple[str, list[Any]]:
    """A condition on ``item_id``: the holdout items left out (unless included), only ``classes``,
    none of ``exclude``."""
    suite = store.generation(gen_id).manifest.suite_id
    conds, params = [], []
    hold = holdout_filter(store, suite, include_holdout)
    if hold[0]:
        conds.append(hold[0])
        params += hold[1]
    if classes:
        marks = ", ".join("?" for _ in classes)
        conds.append(f"item_id IN (SELECT item_id FROM read_parquet(?) WHERE class IN ({marks}))")
        params += [store.path_of("suite", suite, "items"), *classes]
    if exclude:
        marks = ", ".join("?" for _ in exclude)
        conds.append(f"item_id NOT IN (SELECT item_id FROM read_parquet(?) WHERE class IN ({marks}))")
        params += [store.path_of("suite", suite, "items"), *exclude]
    return " AND ".join(conds) or "TRUE", params


def check_classes(
    store: Store, gen_ids: list[str], classes: list[str] | None, exclude: list[str] | None = None
) -> None:
    """Every class named (kept or left out) is a class of an item of these generations' suites."""
    if not classes and not exclude:
        return
    known: set[str] = set()
    for suite in {store.generation(g).manifest.suite_id for g in gen_ids}:
        path = store.path_of("suite", suite, "items")
        known |= {r[0] for r in store.sql("SELECT DISTINCT class FROM read_parquet(?) WHERE class IS NOT NULL", [path])}
    for named, flag in ((classes, "--class"), (exclude, "--exclude-class")):
        unknown = [c for c in named or [] if c not in known]
        if unknown:
            listing = ", ".join(sorted(known)) or "none"
            raise InputError(f"no item of class {unknown[0]!r} in these suites (classes: {listing})", field=flag)
    both = sorted(set(classes or []) & set(exclude or []))
    if both:
        raise InputError(f"class {both[0]!r} is both kept (--class) and left out", field="--exclude-class")


def _gold(store: Store, gen_id: str) -> list[dict[str, Any]]:
    try:
        return settled(LabelStore(store), gen_id)
    except EvalcoreError:  # e.g. a state directory inside the data directory: no overrides
        return []


def people_kinds(store: Store, gen_id: str) -> dict[str, str]:
    """Criterion kinds of people's labels: the label sets' rubrics, else (none has one) the runs' on
    the generation."""
    kinds: dict[str, str] = {}
    for lid in store.ids("labelset"):
        m = store.labelset(lid).manifest
        if m.gen_id == gen_id and m.rubric:
            kinds.update({c.name: c.kind for c in m.rubric.criteria})
    if kinds:
        return kinds
    for rid in store.ids("run"):
        m2 = store.run(rid).manifest
        if m2.gen_id == gen_id:
            for c in m2.rubric.criteria:
                kinds.setdefault(c.name, c.kind)
    return kinds


def judge_sql(
    store: Store,
    run_id: str,
    judge_round: int | None,
    classes: list[str] | None,
    include_holdout: bool,
    exclude: list[str] | None = None,
) -> tuple[str, list[Any]]:
    """(gen_id, item_id, gen_round, criterion, score, errored) per answer: the mean over judge rounds
    or one round."""
    m = store.run(run_id).manifest
    cond, params = item_filter(store, m.gen_id, classes, include_holdout, exclude)
    if judge_round is not None:
        if not 1 <= judge_round <= m.judge_rounds:
            raise InputError(
                f"run {run_id} has judge rounds 1-{m.judge_rounds}, not {judge_round}", field="--judge-round"
            )
        cond += " AND judge_round = ?"
        params.append(int(judge_round))
    return (
        "SELECT ?::VARCHAR AS gen_id, item_id, gen_round, criterion, avg(score) AS score, "
        "count(*) - count(score) AS errored FROM read_parquet(?) "
        f"WHERE {cond} GROUP BY ALL",
        [m.gen_id, store.path_of("run", run_id, "verdicts"), *params],
    )


def people_sql(
    store: Store, gen_id: str, classes: list[str] | None, include_holdout: bool, exclude: list[str] | None = None
) -> tuple[str, list[Any]] | None:
    """(gen_id, item_id, gen_round, criterion, score) per answer: the `mean` annotator, else the mean
    of the annotators; settled gold in the label store replaces both."""
    paths = store.labelset_paths(gen_id)
    gold = [g for g in _gold(store, gen_id) if _as_float(g.get("value")) is not None]
    if not paths and not gold:
        return None
    cond, cparams = item_filter(store, gen_id, classes, include_holdout, exclude)
    g_sql = (
        "SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion, unnest(?::DOUBLE[]) AS score"
    )
    g_params = [
        [g["item_id"] for g in gold],
        [int(g["gen_round"]) for g in gold],
        [g["criterion"] for g in gold],
        [_as_float(g["value"]) for g in gold],
    ]
    if paths:
        shipped = (
            "WITH l AS (SELECT item_id, gen_round, criterion, annotator, score FROM read_parquet(?::VARCHAR[]) "
            "WHERE score IS NOT NULL), "
            f"m AS (SELECT DISTINCT item_id, gen_round, criterion FROM l WHERE annotator = '{MEAN}'), "
            f"s AS (SELECT item_id, gen_round, criterion, score FROM l WHERE annotator = '{MEAN}' "
            "UNION ALL SELECT item_id, gen_round, criterion, avg(score) FROM l ANTI JOIN m "
            "USING (item_id, gen_round, criterion) GROUP BY ALL), "
            f"g AS ({g_sql}) "
            "SELECT * FROM g UNION ALL SELECT * FROM s ANTI JOIN g USING (item_id, gen_round, criterion)"
        )
        body, bparams = shipped, [paths, *g_params]
    else:
        body, bparams = g_sql, g_params
    return (
        f"SELECT ?::VARCHAR AS gen_id, item_id, gen_round, criterion, score FROM ({body}) WHERE {cond}",
        [gen_id, *bparams, *cparams],
    )


def _as_float(v: Any) -> float | None:
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def people_gens(store: Store, gen_ids: list[str] | None) -> list[str]:
    """The generations to read people on: those given, else every generation with a label set."""
    if gen_ids:
        for g in gen_ids:
            store.generation(g)  # an unknown id is one error naming it
        if len(set(gen_ids)) != len(gen_ids):
            raise InputError("a generation is named twice", field="--gen")
        return list(gen_ids)
    gens = sorted({store.labelset(lid).manifest.gen_id for lid in store.ids("labelset")})
    if not gens:
        raise NotFoundError("no label set in this data directory: people have no scores to read", field="--people")
    return gens


def run_manifests(store: Store, run_ids: list[str]) -> dict[str, Any]:
    if len(set(run_ids)) != len(run_ids):
        raise InputError("a run is named twice", field="--run")
    return {rid: store.run(rid).manifest for rid in run_ids}


def pooled_runs(
    store: Store, run_ids: list[str], classes: list[str] | None, exclude: list[str] | None = None
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The runs' manifests, their generations (one run each: they are pooled) and the numeric
    criteria they share."""
    manifests = run_manifests(store, run_ids)
    gens = [m.gen_id for m in manifests.values()]
    if len(set(gens)) != len(gens):
        raise InputError("two runs judge the same generation: pool one run per generation", field="--run")
    check_classes(store, gens, classes, exclude)
    return manifests, gens, numeric_common([{c.name: c.kind for c in m.rubric.criteria} for m in manifests.values()])


def numeric_common(rubrics: list[dict[str, str]]) -> list[str]:
    first = rubrics[0]
    return [c for c, k in first.items() if k in NUMERIC and all(r.get(c) in NUMERIC for r in rubrics[1:])]


def classes_of(store: Store, gens: list[str]) -> dict[tuple[str, str], str | None]:
    """(gen_id, item_id) -> the item's class, for the generations' suites."""
    out: dict[tuple[str, str], str | None] = {}
    for g in gens:
        suite = store.generation(g).manifest.suite_id
        for item_id, c in store.sql(
            "SELECT item_id, class FROM read_parquet(?)", [store.path_of("suite", suite, "items")]
        ):
            out[(g, item_id)] = c
    return out


#: columns of the suite's items that --group-by cannot name: lists and flags, not groups
_NOT_GROUPS = ("must_have", "nice_to_have", "wrong_if", "expected_doc_ids", "holdout")


def group_values(store: Store, gens: list[str], column: str) -> dict[tuple[str, str], str | None]:
    """(gen_id, item_id) -> the answer's group for ``--group-by COLUMN``: ``item_id`` (the item),
    ``gen_id`` (the generation, a system) or a column of the generations' suites' items (``class``,
    ``difficulty``, a column an import kept); None where the item has no value."""
    out: dict[tuple[str, str], str | None] = {}
    for g in gens:
        path = store.path_of("suite", store.generation(g).manifest.suite_id, "items")
        cols = [r[0] for r in store.sql("SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(?))", [path])]
        if column == "gen_id":
            rows = store.sql("SELECT item_id, ?::VARCHAR FROM read_parquet(?)", [g, path])
        elif column in cols and column not in _NOT_GROUPS:
            quoted = column.replace('"', '""')
            rows = store.sql(f'SELECT item_id, CAST("{quoted}" AS VARCHAR) FROM read_parquet(?)', [path])
        else:
            usable = ", ".join(c for c in ["gen_id", *cols] if c not in _NOT_GROUPS)
            raise InputError(f"no column {column!r} to group by (columns: {usable})", field="--group-by")
        out.update({(g, i): v for i, v in rows})
    return out
