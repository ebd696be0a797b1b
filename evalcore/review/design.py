"""The design of a review queue as the report card weighs it: the queue (the latest of the
generation, or the one named), its cases' strata and inclusion probabilities for the gold decided
in it (:func:`design_cases`), and what each stratum stands for per run and criterion
(:func:`design_sizes`). Everything is read from the queue's Parquet copy
(:func:`evalcore.review.queue.queue_file`) with DuckDB: a queue may hold millions of cases, and
none becomes a Python object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.review.judges import mask_runs
from evalcore.review.queue import get_queue, queue_file
from evalcore.storage import derived
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store


def design_of(store: Store, gen_id: str, queue_id: str | None) -> dict[str, Any] | None:
    """The latest (or given) queue of the generation and its cases' strata and weights."""
    labels = LabelStore(store)
    if queue_id is None and not labels.queues(gen_id):
        return None
    q = get_queue(store, queue_id, gen_id=gen_id)
    if q["gen_id"] != gen_id:
        raise InputError(f"queue {q['queue_id']!r} is on generation {q['gen_id']!r}, not {gen_id!r}", field="--queue")
    return {"queue": q, "path": queue_file(store, q)}


def design_cases(store: Store, design: dict[str, Any], keys: list[tuple], cut: tuple[str, list[Any]]) -> dict:
    """(item, gen round, criterion) -> (stratum, inclusion probability) of the queue's cases among
    ``keys`` (the gold decided in the app), over the slice."""
    if not keys:
        return {}
    queue = "SELECT * FROM read_parquet(?)" + (f" WHERE {cut[0]}" if cut[0] else "")
    rows = store.sql(
        "WITH g AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion) SELECT q.item_id, q.gen_round, q.criterion, q.stratum, q.inclusion_prob "
        f"FROM ({queue}) q SEMI JOIN g USING (item_id, gen_round, criterion)",
        [[k[0] for k in keys], [int(k[1]) for k in keys], [k[2] for k in keys], design["path"], *cut[1]],
    )
    return {(r[0], int(r[1]), r[2]): (r[3], float(r[4])) for r in rows}


def design_sizes(
    store: Store,
    design: dict[str, Any],
    vsql: str | None,
    vparams: list[Any],
    run_ids: list[str],
    ms: dict[str, S.RunManifest],
    judge_round: int,
    cut: tuple[str, list[Any]],
) -> dict[str, dict[str, dict[str, float]]]:
    """run -> criterion -> stratum -> the number of queue cases the run judged at ``judge_round``
    (a value, not errored) weighted by 1 / inclusion probability: what each stratum stands for.
    Summed in DuckDB over the queue's Parquet copy joined to the run's answers table (its masks)
    or, without one, to its verdicts. Nobody's decision changes it, so it is kept as a memo of the
    queue's copy and the runs' files (:func:`evalcore.storage.derived.memo`): while a team
    reviews, the report card does not sum every queue case again for each decision."""

    def compute() -> dict[str, dict[str, dict[str, float]]]:
        out: dict[str, dict[str, dict[str, float]]] = {}
        queue = "SELECT * FROM read_parquet(?)" + (f" WHERE {cut[0]}" if cut[0] else "")
        masks = mask_runs(store, run_ids, ms)
        for rid in run_ids:
            m = masks.get(rid)
            if m is not None and len(m[1]) == len(m[2]):  # every criterion pass / fail: judged = passed or failed bit
                bit = (
                    "CASE q.criterion "
                    + " ".join(f"WHEN {_sql_str(c)} THEN {int(k)}" for c, k in m[2].items())
                    + " END"
                )
                sql = (
                    f"SELECT q.criterion, q.stratum, sum(1.0 / q.inclusion_prob) FROM ({queue}) q "
                    "JOIN read_parquet(?) a ON a.item_id = q.item_id AND a.gen_round = q.gen_round AND a.judge_round = ? "
                    f"WHERE (((a.passed | a.failed) >> {bit}) & 1) = 1 GROUP BY ALL"
                )
                params: list[Any] = [design["path"], *cut[1], m[0], int(judge_round)]
            elif vsql is not None:
                sql = (
                    f"WITH x AS (SELECT DISTINCT item_id, gen_round, criterion FROM ({vsql}) WHERE run_id = ? "
                    "AND judge_round = ? AND value IS NOT NULL) SELECT q.criterion, q.stratum, sum(1.0 / q.inclusion_prob) "
                    f"FROM ({queue}) q SEMI JOIN x USING (item_id, gen_round, criterion) GROUP BY ALL"
                )
                params = [*vparams, rid, int(judge_round), design["path"], *cut[1]]
            else:
                continue
            for crit, stratum, size in store.sql(sql, params):
                out.setdefault(rid, {}).setdefault(crit, {})[stratum] = float(size)
        return out

    src = {"queue": Path(design["path"])}
    for rid in run_ids:
        src.update({f"{rid}/{name}": path for name, path in derived.sources(store, "run", rid).items()})
    key = {"runs": run_ids, "judge_round": int(judge_round), "cut": [cut[0], list(cut[1])]}
    return derived.memo(store, f"design-sizes.{design['queue']['queue_id']}", src, key, compute)


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
