"""The adjudication queue: every kind of disagreement on a generation, plus a random audit of the
cases everyone agreed on, for people to decide. docs/REVIEW.md is the reference.

A **case** is one answer (an item in one generation round) on one criterion: the unit the label
store records. Which cases are raised, and with which reason codes (a judge's statement against
its own verdict, post-processing against the raw verdict, two runs, two harnesses, judge rounds),
is :func:`evalcore.review.detect.detect`; this module builds the queue from them and records the
decisions.

* :func:`evalcore.review.build.build_queue` detects, samples the audit, orders the cases
  and appends the queue to the label store; :func:`queues` and
  :func:`get_queue` read queues back.
* :func:`cases`, :func:`progress`, :func:`next_case`, :func:`find_case` and :func:`case_view` are
  what the review page and ``evalcore queue list | show`` read, narrowed by :class:`Filters`
  (:func:`filter_sql`).
* :func:`decide` records a reviewer's decision (:func:`decision_values` are the values a criterion
  takes), :func:`undo` withdraws the last one, and :func:`flagged_for_repair` lists the items
  someone said the test is wrong for.

**Audit.** Each criterion's cases (judged by at least one run, raised or not) are drawn by
sequential Poisson sampling, ``ceil(rate * M)`` of ``M`` (:mod:`evalcore.review.audit`: uniform, or
active, favouring the raised cases); the queue holds every raised case and the audited agreed ones
(stratum ``audit``, inclusion probability ``min(1, size * tau)``). Each audited case records its
key and size, so any prefix of the audit in key order that people have decided is a sample with
known inclusion probabilities (:mod:`evalcore.review.correct`), and a weighted estimate (weight =
1 / inclusion probability) speaks for the whole generation.

**Priority order.** Raised cases by their most serious reason, in the order of
:data:`~evalcore.review.detect.PRIORITY` (a contradiction in the judge's own record first, then a
rewrite by post-processing, then two runs disagreeing, then two harnesses, then judge rounds);
within a reason, cases with more reason codes first, then a seeded random order. The audited cases
are spread through that order by their place in the audit (so a queue worked half-way has half its
audit done, in key order), a raised case that is audited too at the earlier of its two places; the
audited are not told apart from raised cases before the reviewer decides.

A built queue is written to the label store in the state directory (:meth:`LabelStore.write_queue`),
never into the data directory; decisions are edits of the label store with ``queue`` = the queue id.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evalcore.contract import schema as S
from evalcore.errors import InputError, LabelError, NotFoundError
from evalcore.review.detect import _FALSE, _TRUE, PRIORITY, REASONS, verdicts_sql
from evalcore.review.texts import AHEAD, answered, case_texts, holdout
from evalcore.storage.gold import gold
from evalcore.storage.labels import ROLES, LabelStore
from evalcore.storage.roles import acting
from evalcore.storage.seal import sealed_by, withhold
from evalcore.storage.store import Store

AUDIT = "audit"
STRATA = ("disagreement", "audit")
OUTCOMES = ("decided", "test_wrong", "skipped")


# --------------------------------------------------------------------------- a queue's cases as Parquet

QUEUE_FILES = "queue"  # a product of evalcore.storage.derived: <state>/derived/queue/<queue_id>/cases.parquet
CASES = "cases.parquet"
_QUEUE_COLUMNS = ("item_id", "gen_round", "criterion", "class", "stratum", "inclusion_prob", "audit_key", "audit_size")


# what a queue's header says that its copy is made from (not audit_rate: PostgreSQL keeps it as a
# 4-byte REAL, so it does not read back as the number written)
_STAMP_KEYS = (
    "queue_id", "gen_id", "created_at", "seed", "runs", "population", "flagged", "agreed", "audit_sampled",
    "detector_version", "audit_design",
)  # fmt: skip


def _kept_copy(store: Store, queue: dict[str, Any], build: Any, *, force: bool) -> str:
    """The queue's copy as a product of :mod:`evalcore.storage.derived` (no source file: its key is
    the stamp of the queue's header), built by ``build(out) -> memo`` when it is not current."""
    from evalcore.contract.hashing import content_hash
    from evalcore.storage import derived
    from evalcore.storage.state import writable_state

    stamp = content_hash({k: queue.get(k) for k in _STAMP_KEYS})
    qid = str(queue["queue_id"])
    s = derived.kept(store, QUEUE_FILES, qid, {}, build, {"stamp": stamp}, force=force, needed=True)
    if s is None or CASES not in s.files:
        raise InputError(
            f"the cases of queue {qid} could not be copied into the state directory (said in the warning before)",
            file=writable_state(store, derived.DIR),
            field="--state",
        )
    return s.path(CASES)


def write_queue_file(store: Store, queue: dict[str, Any], select: str, params: list[Any], con: Any) -> str:
    """Write a queue's Parquet copy from a DuckDB SELECT of its ``_QUEUE_COLUMNS`` in rank order
    (what :func:`evalcore.review.build.build_queue` wrote into the label store)."""

    def build(out: Any) -> dict[str, int]:
        path = str(out / CASES)
        # on the connection itself: a view registered on it (the ranks) is not seen by its cursors
        con.execute(
            f"COPY ({select}) TO '{path.replace(chr(39), chr(39) * 2)}' (FORMAT parquet, COMPRESSION zstd)", params
        ).fetchall()
        ((n,),) = con.execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchall()
        return {"cases": int(n)}

    return _kept_copy(store, queue, build, force=True)


def queue_file(store: Store, queue: dict[str, Any]) -> str:
    """A Parquet copy of the queue's case keys, strata, inclusion probabilities and audit record
    (columns item_id, gen_round, criterion, class, stratum, inclusion_prob, audit_key, audit_size;
    rank order), so that the report card weighs its design in DuckDB instead of turning every case
    into a Python object. A queue never changes once written, so the copy is made once per state
    directory (streamed from the label store, a team's PostgreSQL server too) and kept while the
    queue's header is the one it was made from."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    schema = pa.schema(
        [
            ("item_id", pa.string()),
            ("gen_round", pa.int64()),
            ("criterion", pa.string()),
            ("class", pa.string()),
            ("stratum", pa.string()),
            ("inclusion_prob", pa.float64()),
            ("audit_key", pa.float64()),
            ("audit_size", pa.float64()),
        ]
    )

    def build(out: Any) -> dict[str, int]:
        n = 0
        with pq.ParquetWriter(str(out / CASES), schema, compression="zstd") as w:
            for rows in LabelStore(store).queue_case_batches(queue["queue_id"], _QUEUE_COLUMNS):
                cols = list(zip(*rows))
                w.write_table(pa.table([pa.array(c, f.type) for c, f in zip(cols, schema)], schema=schema))
                n += len(rows)
        return {"cases": n}

    return _kept_copy(store, queue, build, force=False)


# --------------------------------------------------------------------------- reading a queue


def queues(store: Store, gen_id: str | None = None) -> list[dict[str, Any]]:
    return LabelStore(store).queues(gen_id)


def scoped(q: dict[str, Any]) -> bool:
    """Whether a queue holds some criteria and items only (one built to settle them, e.g. the
    association page's "send these items to review"), not the whole generation."""
    return bool((q.get("audit_design") or {}).get("scope"))


def latest(qs: list[dict[str, Any]]) -> dict[str, Any]:
    """The latest of these queues (oldest first) built over the whole generation, else the latest:
    a scoped queue never stands for the generation's audit while a whole one exists."""
    whole = [q for q in qs if not scoped(q)]
    return (whole or qs)[-1]


def get_queue(store: Store, queue_id: str | None = None, *, gen_id: str | None = None) -> dict[str, Any]:
    """A queue by id, or the latest queue of ``gen_id`` (:func:`latest`)."""
    qs = LabelStore(store).queues(gen_id)
    if queue_id is None:
        if not qs:
            raise NotFoundError(
                f"no review queue for generation {gen_id!r} yet: build one (evalcore queue build {gen_id})"
                if gen_id
                else "no review queue yet: build one (evalcore queue build GEN)",
                field="queue",
            )
        return latest(qs)
    for q in qs:
        if q["queue_id"] == queue_id:
            return q
    raise NotFoundError(f"no review queue {queue_id!r} in the state directory", field="queue")


@dataclass(frozen=True)
class Filters:
    """What the reviewer narrows the queue to. Each field is a tuple of accepted values (empty:
    any): reason codes (``audit`` for the audit stratum), criteria, runs (cases that run is involved
    in), item classes (``(none)`` for items without one). Cases on holdout items of the suite are
    left out unless ``include_holdout`` (default False; the command line's ``--include-holdout``
    and the page's toggle set it)."""

    reasons: tuple[str, ...] = ()
    criteria: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    include_holdout: bool = False

    @classmethod
    def of(
        cls,
        reasons: Iterable[str] = (),
        criteria: Iterable[str] = (),
        runs: Iterable[str] = (),
        classes: Iterable[str] = (),
        include_holdout: bool | None = None,
    ) -> Filters:
        hold = bool(include_holdout)
        return cls(tuple(reasons or ()), tuple(criteria or ()), tuple(runs or ()), tuple(classes or ()), hold)


def filter_sql(f: Filters | None) -> tuple[str, list[Any]]:
    """The filters as a condition over ``queue_cases c`` and its bound parameters: values are only
    ever parameters, column names are fixed here. Within a field the values are alternatives (OR);
    fields combine with AND."""
    if f is None:
        return "", []
    where: list[str] = []
    params: list[Any] = []
    if f.reasons:
        bad = [r for r in f.reasons if r != AUDIT and r not in REASONS]
        if bad:
            raise InputError(f"unknown reason code {bad[0]!r} (known: {', '.join([*PRIORITY, AUDIT])})", field="reason")
        alts = []
        if AUDIT in f.reasons:
            alts.append("c.stratum = 'audit'")
        codes = [r for r in f.reasons if r != AUDIT]
        if codes:
            alts.append(
                f"EXISTS (SELECT 1 FROM {LabelStore.json_values('c.reasons')} "
                f"WHERE r.value IN ({', '.join('?' * len(codes))}))"
            )
            params += codes
        where.append("(" + " OR ".join(alts) + ")")
    if f.criteria:
        where.append(f"c.criterion IN ({', '.join('?' * len(f.criteria))})")
        params += list(f.criteria)
    if f.runs:
        where.append(
            f"EXISTS (SELECT 1 FROM {LabelStore.json_values('c.runs')} WHERE r.value IN ({', '.join('?' * len(f.runs))}))"
        )
        params += list(f.runs)
    if f.classes:
        named = [c for c in f.classes if c != "(none)"]
        alts = []
        if named:
            alts.append(f"c.class IN ({', '.join('?' * len(named))})")
            params += named
        if "(none)" in f.classes:
            alts.append("c.class IS NULL")
        where.append("(" + " OR ".join(alts) + ")")
    return " AND ".join(where), params


# a case's key columns matched between queue_cases c and another table
def _on(t: str, c: str = "c") -> str:
    return " AND ".join(f"{t}.{k} = {c}.{k}" for k in ("gen_id", "item_id", "gen_round", "criterion"))


WITHDRAWN = "SELECT supersedes FROM edits WHERE outcome = 'withdrawn' AND supersedes IS NOT NULL"


def _standing_sql() -> str:
    """Each reviewer's standing edit (decided / test_wrong / skipped, not withdrawn) per case of a
    generation: columns item_id, gen_round, criterion, gen_id, reviewer, outcome, role."""
    return (
        "SELECT gen_id, item_id, gen_round, criterion, reviewer, outcome, role FROM ("
        "SELECT e.*, row_number() OVER (PARTITION BY e.item_id, e.gen_round, e.criterion, e.reviewer "
        "ORDER BY e.edit_id DESC) AS rn FROM edits e WHERE e.gen_id = ? "
        "AND e.outcome IN ('decided', 'test_wrong', 'skipped') "
        f"AND e.edit_id NOT IN ({WITHDRAWN})) s WHERE rn = 1"
    )


def _per_case_sql() -> str:
    """Per decided case of a generation: ``reviews`` (reviewers, not adjudicators, who decided or
    said the test is wrong) and ``mine`` (the given reviewer's standing outcome). Parameters: the
    reviewer (or None), the generation."""
    return (
        "SELECT gen_id, item_id, gen_round, criterion, "
        "sum(CASE WHEN outcome IN ('decided', 'test_wrong') AND role = 'reviewer' THEN 1 ELSE 0 END) AS reviews, "
        "max(CASE WHEN reviewer = ? THEN outcome END) AS mine "
        f"FROM ({_standing_sql()}) st GROUP BY gen_id, item_id, gen_round, criterion"
    )


def _held(store: Store, q: dict[str, Any]) -> tuple[str, list[Any]]:
    """The condition over ``queue_cases c``: the case is on one of the suite's holdout items."""
    hidden = sorted(holdout(store, store.generation(q["gen_id"]).manifest.suite_id))
    if not hidden:
        return "1 = 0", []
    return f"c.item_id IN (SELECT h.value FROM {LabelStore.json_values('?', 'h')})", [json.dumps(hidden)]


def _scope(store: Store, q: dict[str, Any], filters: Filters | None) -> tuple[str, list[Any]]:
    """The condition over ``queue_cases c`` for a queue, the filters and the holdout rule."""
    where, params = filter_sql(filters)
    cond, args = ["c.queue_id = ?"], [q["queue_id"]]
    if where:
        cond.append(f"({where})")
        args += params
    if not (filters is not None and filters.include_holdout):
        held, held_args = _held(store, q)
        cond.append(f"NOT ({held})")
        args += held_args
    return " AND ".join(cond), args


_COUNTS: dict[tuple, list[dict[str, Any]]] = {}  # the counts of a queue's cases per scope (see _case_counts)


def _case_counts(store: Store, q: dict[str, Any], filters: Filters | None) -> tuple[dict[str, int], int]:
    """The cases in scope per stratum, and those the holdout rule leaves out (one query)."""
    f = filters or Filters()
    cond, args = _scope(store, q, replace(f, include_holdout=True))
    held, held_args = _held(store, q)
    labels = LabelStore(store)
    key = (labels.where, q["queue_id"], q["created_at"], cond, held, json.dumps([*held_args, *args]))
    rows = _COUNTS.get(key)
    if rows is None:  # a queue's cases never change: counted once per scope and holdout set
        rows = labels.rows(
            f"SELECT c.stratum AS stratum, count(*) AS n, sum(CASE WHEN {held} THEN 1 ELSE 0 END) AS held "
            f"FROM queue_cases c WHERE {cond} GROUP BY c.stratum",
            [*held_args, *args],
        )
        if len(_COUNTS) >= 256:
            _COUNTS.clear()
        _COUNTS[key] = rows
    hide = 0 if f.include_holdout else 1
    return {r["stratum"]: int(r["n"]) - hide * int(r["held"] or 0) for r in rows}, sum(
        hide * int(r["held"] or 0) for r in rows
    )


def case_counts(store: Store, queue_id: str, filters: Filters | None = None) -> dict[str, int]:
    """The queue's cases as every page and command counts them: ``cases``, those the filters and
    the holdout rule leave; its parts ``raised`` (stratum disagreement) and ``audited`` (agreed
    cases the audit drew), so ``raised + audited == cases``; and ``holdout_hidden``, the cases
    (with these filters) on the suite's holdout items, left out unless the filters include them.
    Unfiltered, ``cases + holdout_hidden`` is the queue as built (its header's ``flagged +
    audit_sampled``: the audit draws no holdout item, so the hidden ones are raised cases).
    :func:`progress` carries the same four counts."""
    per, hidden = _case_counts(store, get_queue(store, queue_id), filters)
    raised, audited = per.get(STRATA[0], 0), per.get(STRATA[1], 0)
    return {"cases": raised + audited, "raised": raised, "audited": audited, "holdout_hidden": hidden}


def _decode(r: dict[str, Any]) -> dict[str, Any]:
    for k in ("reasons", "runs", "detail"):
        if isinstance(r.get(k), str):
            r[k] = json.loads(r[k])
    return r


def cases(
    store: Store,
    queue_id: str,
    filters: Filters | None = None,
    reviewer: str | None = None,
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[dict]:
    """The queue's cases in priority order (one page of them with ``limit`` / ``offset``, read
    with SQL), each with ``reviews`` (how many reviewers have decided it, or said the test is
    wrong), ``complete`` (reviews reached the queue's N) and, for ``reviewer``, ``mine``: their
    standing outcome on it (None, decided, test_wrong, skipped)."""
    labels = LabelStore(store)
    q = get_queue(store, queue_id)
    cond, args = _scope(store, q, filters)
    who = reviewer.strip() if reviewer else None
    page = ""
    if limit is not None:
        page = f" LIMIT {int(limit)} OFFSET {int(offset)}"
    rows = labels.rows(
        f"WITH k AS ({_per_case_sql()}) SELECT c.*, coalesce(k.reviews, 0) AS reviews, k.mine AS mine "
        f"FROM queue_cases c LEFT JOIN k ON {_on('k')} WHERE {cond} ORDER BY c.rank{page}",
        (who, q["gen_id"], *args),
    )
    for r in rows:
        _decode(r)
        r["reviews"] = int(r["reviews"])
        r["complete"] = r["reviews"] >= q["reviewers_required"]
    return rows


_FACETS: dict[tuple, dict[str, list[str]]] = {}  # a queue's cases never change: its facets neither


def facets(store: Store, queue_id: str) -> dict[str, list[str]]:
    """What the queue's filters can choose from: its criteria and item classes (``(none)`` for
    items without one), by SQL once per queue and process (a queue is written once)."""
    labels = LabelStore(store)
    q = get_queue(store, queue_id)
    key = (labels.where, q["queue_id"], q["created_at"])
    if key not in _FACETS:
        rows = labels.rows("SELECT DISTINCT criterion, class FROM queue_cases WHERE queue_id = ?", (q["queue_id"],))
        _FACETS[key] = {
            "criteria": sorted({r["criterion"] for r in rows}),
            "classes": sorted({r["class"] or "(none)" for r in rows}),
        }
    return {k: list(v) for k, v in _FACETS[key].items()}


def progress(store: Store, queue_id: str, reviewer: str | None = None, filters: Filters | None = None) -> dict:
    """Counts over the (filtered) queue, by SQL: cases, complete cases, those this reviewer
    handled, and those still waiting for them; by stratum. The cases are counted on the queue's
    index; complete and handled ones from the edits' side (a queue holds far more cases than any
    team decides)."""
    labels = LabelStore(store)
    q = get_queue(store, queue_id)
    n = int(q["reviewers_required"])
    cond, args = _scope(store, q, filters)
    who = reviewer.strip() if reviewer else None
    totals, hidden = _case_counts(store, q, filters)
    done = {
        r["stratum"]: r
        for r in labels.rows(
            f"WITH k AS ({_per_case_sql()}) SELECT c.stratum AS stratum, "
            "sum(CASE WHEN k.reviews >= ? THEN 1 ELSE 0 END) AS complete, "
            "sum(CASE WHEN k.mine IS NOT NULL THEN 1 ELSE 0 END) AS mine, "
            "sum(CASE WHEN k.mine IS NULL AND k.reviews >= ? THEN 1 ELSE 0 END) AS complete_not_mine "
            # CROSS JOIN: SQLite keeps k (the decided cases) as the outer loop, one index lookup each
            "FROM k CROSS JOIN queue_cases c WHERE c.queue_id = ? AND c.item_id = k.item_id "
            f"AND c.gen_round = k.gen_round AND c.criterion = k.criterion AND c.gen_id = k.gen_id AND {cond} "
            "GROUP BY c.stratum",
            (who, q["gen_id"], n, n, q["queue_id"], *args),
        )
    }

    def of(s: str, k: str) -> int:
        return int(done[s][k] or 0) if s in done else 0

    out: dict[str, Any] = {
        "queue_id": q["queue_id"],
        "reviewers_required": n,
        "cases": sum(totals.values()),
        "raised": totals.get(STRATA[0], 0),
        "audited": totals.get(STRATA[1], 0),
        "holdout_hidden": hidden,
        "complete": sum(of(s, "complete") for s in totals),
    }
    if reviewer:
        out["handled_by_me"] = sum(of(s, "mine") for s in totals)
        out["waiting_for_me"] = sum(totals[s] - of(s, "mine") - of(s, "complete_not_mine") for s in totals)
    out["by_stratum"] = {s: {"cases": totals.get(s, 0), "complete": of(s, "complete")} for s in STRATA}
    return out


def find_case(store: Store, queue_id: str, item_id: str, gen_round: int, criterion: str) -> dict[str, Any]:
    labels = LabelStore(store)
    q = get_queue(store, queue_id)
    rows = labels.queue_cases(
        q["queue_id"], "c.item_id = ? AND c.gen_round = ? AND c.criterion = ?", [item_id, int(gen_round), criterion]
    )
    if not rows:
        raise NotFoundError(
            f"item {item_id!r} round {gen_round} on {criterion!r} is not a case of queue {q['queue_id']!r}",
            field="case",
        )
    return rows[0]


def _need_reviewer(reviewer: str | None) -> str:
    if not reviewer or not str(reviewer).strip():
        raise LabelError("a reviewer name is required", field="reviewer")
    return str(reviewer).strip()


def _aliases(runs: Sequence[str]) -> dict[str, str]:
    letters = string.ascii_uppercase
    return {rid: f"judge {letters[k % 26]}{'' if k < 26 else k // 26}" for k, rid in enumerate(sorted(runs))}


def _criterion(store: Store, run_ids: Sequence[str], gen_id: str, name: str) -> S.Criterion | None:
    for rid in run_ids:
        c = store.run(rid).manifest.rubric.get(name)
        if c is not None:
            return c
    return LabelStore(store).criterion_for(gen_id, name)


_VERDICT_KEYS = (
    "judge_round",
    "passed",
    "label",
    "score",
    "raw_verdict",
    "reason",
    "covered",
    "missed",
    "triggered",
    "error",
)
_DECISION_KEYS = ("reviewer", "outcome", "value", "note", "tags", "created_at", "role")


def _case_texts(
    store: Store, q: dict[str, Any], case: dict[str, Any], hold: bool
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The case's item row and its answer (the texts of an open pairwise session's arms withheld:
    storage.seal); a holdout item refused unless ``hold``. Read with the next cases of the queue
    (:mod:`evalcore.review.texts`), so a key press rarely reads a file."""
    suite_id = store.generation(q["gen_id"]).manifest.suite_id
    item_id = case["item_id"]
    if not hold and item_id in holdout(store, suite_id):
        raise InputError(
            f"item {item_id!r} is a holdout item of suite {suite_id!r}: hidden unless "
            "holdout items are shown (--include-holdout, or 'Show holdout items'; the look is logged)",
            field="item",
        )

    def ahead() -> list[tuple[str, int]]:
        return [
            (r["item_id"], r["gen_round"])
            for r in LabelStore(store).rows(
                "SELECT item_id, gen_round FROM queue_cases WHERE queue_id = ? AND rank > ? AND rank <= ? ORDER BY rank",
                (q["queue_id"], case["rank"], case["rank"] + AHEAD),
            )
        ]

    item, out = case_texts(store, q["gen_id"], suite_id, (item_id, int(case["gen_round"])), ahead)
    return item, (withhold(store, q["gen_id"], [out])[0] if out is not None else None)


def _case_verdicts(
    store: Store, runs: list[str], key: tuple[str, int, str], names: dict[str, str], hide_judges: bool
) -> list[dict[str, Any]]:
    """Every judge's verdict rows on the case, each judge under its name (``judge A``... when hidden)."""
    vsql, vparams = verdicts_sql(store, runs)
    rows = store.records(
        f"SELECT * FROM ({vsql}) WHERE item_id = ? AND gen_round = ? AND criterion = ? ORDER BY run_id, judge_round",
        [*vparams, *key],
    )
    out = []
    for r in rows:
        m = store.run(r["run_id"]).manifest
        shown = {} if hide_judges else {"judge_model": m.judge_model, "mode": m.mode}
        out.append({"judge": names.get(r["run_id"], r["run_id"]), **{k: r[k] for k in _VERDICT_KEYS}, **shown})
    if hide_judges:
        out.sort(key=lambda v: (v["judge"], v["judge_round"]))
    return out


def _case_others(
    labels: LabelStore, gen_id: str, key: tuple[str, int, str], standing: list[dict], who: str, role: str
) -> list[dict[str, Any]]:
    """The other reviewers' decisions on the case and the labels shipped with the data."""
    others = [
        {k: e[k] for k in _DECISION_KEYS}
        for e in standing
        if (e["reviewer"] != who or (e.get("role") or "reviewer") != role) and e["outcome"] in ("decided", "test_wrong")
    ]
    return others + [
        {
            "reviewer": s["reviewer"],
            "outcome": "decided",
            "value": s["value"],
            "note": None,
            "tags": [],
            "created_at": s["created_at"],
            "source": s["source"],
        }
        for s in labels.shipped(gen_id)
        if (s["item_id"], s["gen_round"], s["criterion"]) == key
    ]


def case_view(
    store: Store,
    queue_id: str,
    item_id: str,
    gen_round: int,
    criterion: str,
    reviewer: str,
    *,
    blind: bool = True,
    hide_judges: bool = False,
    include_holdout: bool | None = None,
    role: str = "reviewer",
) -> dict[str, Any]:
    """What the reviewer sees of one case (an adjudicator, ``role="adjudicator"``, sees the
    reviewers' decisions and the judges from the start: settling them is the task). The item (input, context, reference, must-have and
    wrong-if items) and the output always. The judges' verdicts and reasons and the reason codes only
    once the reviewer has decided the case, or from the start with ``blind=False``. Other
    reviewers' decisions (and labels shipped with the data) only once this reviewer has decided: the
    core holds them back, whatever the page does. ``hide_judges`` names runs ``judge A``, ``judge B``...
    A case on a holdout item is refused unless ``include_holdout``."""
    who = _need_reviewer(reviewer)
    q = get_queue(store, queue_id)
    case = find_case(store, q["queue_id"], item_id, gen_round, criterion)
    it, out_row = _case_texts(store, q, case, bool(include_holdout))
    labels = LabelStore(store)
    crit = _criterion(store, q["runs"], q["gen_id"], criterion)
    key = (item_id, int(gen_round), criterion)
    standing = [e for e in labels.standing(q["gen_id"], item_id=item_id) if (e["gen_round"], e["criterion"]) == key[1:]]
    adjudicating = role == "adjudicator"
    mine = next((e for e in standing if e["reviewer"] == who and (e.get("role") or "reviewer") == role), None)
    decided = mine is not None and mine["outcome"] in ("decided", "test_wrong")
    reveal = decided or not blind or adjudicating
    names = _aliases(q["runs"]) if hide_judges else {r: r for r in q["runs"]}
    return {
        "queue_id": q["queue_id"],
        "gen_id": q["gen_id"],
        "item_id": item_id,
        "gen_round": int(gen_round),
        "criterion": criterion,
        "rank": case["rank"],
        "class": case["class"],
        "kind": crit.kind if crit else "binary",
        "description": crit.description if crit else "",
        "scale": [crit.scale_min, crit.scale_max] if crit and crit.kind in ("ordinal", "continuous") else None,
        "threshold": crit.threshold if crit else None,
        "choices": decision_values(crit),
        "input": it.get("input"),
        "context": it.get("context"),
        "reference": it.get("reference"),
        "must_have": list(it.get("must_have") or []),
        "wrong_if": list(it.get("wrong_if") or []),
        "output": out_row["output"] if out_row else None,
        "abstained": out_row["abstained"] if out_row else None,
        "reviewers_required": q["reviewers_required"],
        "role": role,
        "gold": _gold_status(labels, q["gen_id"], item_id, int(gen_round), criterion) if reveal else None,
        "mine": mine,
        "decided": decided,
        "revealed": reveal,
        "withheld": out_row.get("withheld") if out_row else None,  # the open session sealing the answer
        "stratum": case["stratum"] if reveal else None,
        "reasons": case["reasons"] if reveal else None,
        "detail": (_rename(case["detail"], names) if hide_judges else case["detail"]) if reveal else None,
        "verdicts": _case_verdicts(store, q["runs"], key, names, hide_judges) if reveal else None,
        "others": _case_others(labels, q["gen_id"], key, standing, who, role) if decided or adjudicating else None,
    }


def _gold_status(labels: LabelStore, gen_id: str, item_id: str, gen_round: int, criterion: str) -> dict | None:
    """The case's row of :func:`evalcore.storage.gold.gold` (status, value, who settled it)."""
    for g in gold(labels, gen_id, item_id=item_id):  # one item's cases, not the generation's
        if (g["item_id"], int(g["gen_round"]), g["criterion"]) == (item_id, gen_round, criterion):
            return {k: g[k] for k in ("status", "value", "gold_from", "adjudicator", "decided", "required")}
    return None


def _rename(obj: Any, names: dict[str, str]) -> Any:
    if isinstance(obj, str):
        return names.get(obj, obj)
    if isinstance(obj, list):
        return [_rename(x, names) for x in obj]
    if isinstance(obj, dict):
        return {k: _rename(v, names) for k, v in obj.items()}
    return obj


def decision_values(crit: S.Criterion | None) -> list[str]:
    """The values a reviewer can give on a criterion: pass / fail; correct / partial / wrong; every
    whole score of a small ordinal scale (:meth:`~evalcore.contract.schema.Criterion.whole_scores`,
    the same categories the report card counts); any other criterion is decided pass / fail
    against its threshold (people give a verdict, not a mean of ratings)."""
    kind = crit.kind if crit else "binary"
    if kind == "ternary":
        return list(S.TERNARY_LABELS)
    scores = crit.whole_scores() if crit is not None else None
    if scores is not None:
        return [str(v) for v in scores]
    return ["pass", "fail"]


def _own_edit(labels: LabelStore, gen_id: str, who: str, key: tuple[str, int, str], role: str) -> dict | None:
    """The reviewer's standing edit on a case in this role, or None."""
    return next(
        (
            e
            for e in labels.standing(gen_id, reviewer=who, item_id=key[0])
            if (e["gen_round"], e["criterion"]) == key[1:] and (e.get("role") or "reviewer") == role
        ),
        None,
    )


def decide(
    store: Store,
    queue_id: str,
    item_id: str,
    gen_round: int,
    criterion: str,
    reviewer: str,
    *,
    outcome: str = "decided",
    value: str | None = None,
    note: str | None = None,
    tags: Iterable[str] = (),
    role: str = "reviewer",
    claims: Mapping[str, Any] | None = None,
    receipt: str | None = None,
) -> dict[str, Any]:
    """Record the reviewer's decision on a case: an appended edit with provenance (queue, the
    case's reason codes or ``audit``, note, tags), superseding their own earlier edit on it. The
    outcome ``test_wrong`` flags the item for repair and needs a note saying what is wrong;
    ``skipped`` passes on the case (refused once the reviewer has decided it: undo first). With
    ``role="adjudicator"`` the decision settles the case whatever the reviewers said (reason code
    ``reviewers_disagree``; see :mod:`evalcore.storage.gold`). Either way the reviewer's lease on
    the case (:mod:`evalcore.review.claims`) is given up. The role is checked now, against the
    roles file and the login (``claims``, the app's) or the typed ``reviewer`` (:func:`acting`): a
    role taken away a moment ago refuses the decision in one line. With ``receipt`` (the id the
    sender gave this act) it is written once however often it is sent: a resend returns the edit."""
    if role not in ROLES:
        raise LabelError(f"role {role!r} is not one of {', '.join(ROLES)}", field="role")
    who = _need_reviewer(acting(store.state, role, name=reviewer, claims=claims).name)
    if outcome not in OUTCOMES:
        raise LabelError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}", field="outcome")
    if role == "adjudicator" and outcome == "skipped":
        raise LabelError("an adjudicator settles a case or leaves it: there is no skip", field="outcome")
    q = get_queue(store, queue_id)
    sealing = sealed_by(store, q["gen_id"])
    if sealing is not None and outcome != "skipped":
        raise LabelError(
            f"the answers of generation {q['gen_id']} are withheld while the pairwise session {sealing} is open "
            "(it pairs them): decide its cases once the session is closed",
            field="queue",
        )
    case = find_case(store, q["queue_id"], item_id, gen_round, criterion)
    labels = LabelStore(store)
    if answered(store, q["gen_id"], (item_id, int(gen_round))):  # shown from the file as it is: no second read
        labels.seen.update({(q["gen_id"], item_id), (q["gen_id"], item_id, int(gen_round))})
    again = labels.by_receipt(receipt, who) if receipt is not None else None
    if again is not None:  # sent before and written: the same edit again, not a second one
        return again
    if outcome == "test_wrong" and not (note or "").strip():
        raise LabelError("say what is wrong with the test in the note", field="note")
    mine = _own_edit(labels, q["gen_id"], who, (item_id, int(gen_round), criterion), role)
    if outcome == "skipped" and mine is not None and mine["outcome"] in ("decided", "test_wrong"):
        raise LabelError("you have decided this case: undo your decision before skipping it", field="outcome")
    if outcome == "decided" and value is not None:
        crit = _criterion(store, q["runs"], q["gen_id"], criterion)
        if crit is not None and crit.kind == "continuous":
            value = _continuous_value(crit, value)
    edit = labels.add(
        item_id=item_id,
        criterion=criterion,
        reviewer=who,
        value=value if outcome == "decided" else None,
        outcome=outcome,
        gen_id=q["gen_id"],
        gen_round=int(gen_round),
        queue=q["queue_id"],
        reason_code="reviewers_disagree" if role == "adjudicator" else (",".join(case["reasons"]) or AUDIT),
        note=(note or "").strip() or None,
        supersedes=mine["edit_id"] if mine else None,
        tags=tags,
        role=role,
        receipt=receipt,
    )
    with labels.transaction() as con:
        con.execute(
            "DELETE FROM leases WHERE reviewer = ? AND gen_id = ? AND item_id = ? AND gen_round = ? AND criterion = ?",
            (who, q["gen_id"], item_id, int(gen_round), criterion),
        )
    return edit


def _continuous_value(crit: S.Criterion, value: str) -> str:
    """pass / fail on a continuous criterion becomes the threshold (pass) or the scale's minimum."""
    v = str(value).strip().lower()
    if v in _TRUE and crit.threshold is not None:
        return repr(crit.threshold)
    if v in _FALSE and crit.scale_min is not None:
        return repr(crit.scale_min)
    return value


def undo(
    store: Store,
    queue_id: str,
    reviewer: str,
    *,
    claims: Mapping[str, Any] | None = None,
    receipt: str | None = None,
) -> dict[str, Any] | None:
    """Withdraw the reviewer's most recent edit made in this queue (a ``withdrawn`` edit: nothing
    is deleted); their edit before it on that case, if any, stands again. Returns the withdrawal
    (its item, round and criterion name the case to go back to), or None. Whoever undoes must hold
    a reviewing role now (:func:`acting`)."""
    who = _need_reviewer(acting(store.state, "reviewer", "adjudicator", name=reviewer, claims=claims).name)
    q = get_queue(store, queue_id)
    return LabelStore(store).undo(who, queue=q["queue_id"], receipt=receipt)


def flagged_for_repair(store: Store, gen_id: str) -> list[dict[str, Any]]:
    """Items whose test someone said is wrong (standing ``test_wrong`` edits), with the note."""
    return [
        {k: e[k] for k in ("item_id", "gen_round", "criterion", "reviewer", "note", "created_at", "queue")}
        for e in LabelStore(store).standing(gen_id)
        if e["outcome"] == "test_wrong"
    ]
