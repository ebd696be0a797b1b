"""The label store: human decisions as an append-only history, in SQLite (WAL mode) in the state
directory or on a team PostgreSQL server (``EVALCORE_DB`` / ``--db``; :mod:`evalcore.storage.db`).

Every decision is a new row of ``edits`` with its provenance: reviewer, time, the queue and reason
code it came from, a note, the edit it supersedes and its outcome:

* ``decided``     the reviewer gave a value (pass / fail, a score, correct / partial / wrong);
* ``test_wrong``  the item itself is wrong (flagged for repair; no value);
* ``skipped``     the reviewer passed on the case (no value);
* ``withdrawn``   undo: takes back the edit named in ``supersedes``.

Rows are never updated or deleted (triggers refuse it). The *current* label of an (generation,
item, round, criterion) is derived from the history: the latest ``decided`` edit that no
``withdrawn`` edit takes back. Each write is one transaction with ``synchronous=FULL``, so a
decision that was acknowledged survives a killed process, and concurrent writers wait for each
other (``busy_timeout``; an advisory lock on PostgreSQL) instead of losing rows.

Labels that ship with a data set (label sets in the data directory) are never copied here; they
are read from the data and shown with ``source = "shipped:<labelset_id>"``.

Several reviewers can decide the same case. Each reviewer's *standing* edit on a case is their
latest ``decided`` / ``test_wrong`` / ``skipped`` edit that no ``withdrawn`` edit takes back
(:meth:`LabelStore.standing`, read once per figure or command); gold is settled from them
(:mod:`evalcore.storage.gold`). The review queues live here too (``queues`` and ``queue_cases``,
append-only, written once by :func:`evalcore.review.build.build_queue`). The schema is created on
first use; a database that already has every table is opened without the write lock.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from evalcore import scope
from evalcore.contract import schema as S
from evalcore.contract.readers import name_key, spelled
from evalcore.errors import LabelError, StateError
from evalcore.storage import labelvalues
from evalcore.storage.db import LABELS_DDL, LABELS_OBJECTS, Database, connect, database_url, mask
from evalcore.storage.integrity import check_database
from evalcore.storage.paths import utcnow
from evalcore.storage.shipped import shipped_sets
from evalcore.storage.state import writable_state
from evalcore.storage.store import Store

DB_NAME = "labels.sqlite"
LABELS_SCHEMA_VERSION = 3
OUTCOMES = ("decided", "test_wrong", "skipped", "withdrawn")
ROLES = ("reviewer", "adjudicator")  # the capacity an edit was made in (edits.role)
_READY: set[str] = set()  # PostgreSQL URLs whose tables this process found (their version is read each time)

# a reviewer's standing edit per case: the latest decided / test_wrong / skipped edit of theirs that
# no withdrawn edit takes back
_STANDING_SQL = """
WITH w AS (SELECT supersedes FROM edits WHERE outcome = 'withdrawn' AND supersedes IS NOT NULL),
s AS (SELECT e.*, row_number() OVER (PARTITION BY e.gen_id, e.item_id, e.gen_round, e.criterion, e.reviewer
                                     ORDER BY e.edit_id DESC) AS rn
      FROM edits e WHERE e.outcome IN ('decided', 'test_wrong', 'skipped') AND e.edit_id NOT IN (SELECT supersedes FROM w)
      {where})
SELECT * FROM s WHERE rn = 1 ORDER BY edit_id
"""

_EDIT_FIELDS = (
    "gen_id",
    "item_id",
    "gen_round",
    "criterion",
    "value",
    "outcome",
    "reviewer",
    "created_at",
    "queue",
    "reason_code",
    "note",
    "supersedes",
    "tags",
    "role",
)
_INSERT_EDIT = f"INSERT INTO edits ({', '.join(_EDIT_FIELDS)}) VALUES ({', '.join('?' * len(_EDIT_FIELDS))})"
# the reviewer's latest edit that can be undone: not a withdrawal and not itself withdrawn
_LAST_EDIT_SQL = (
    "SELECT * FROM edits WHERE reviewer = ? AND outcome <> 'withdrawn' AND edit_id NOT IN "
    "(SELECT supersedes FROM edits WHERE outcome = 'withdrawn' AND supersedes IS NOT NULL){queue} "
    "ORDER BY edit_id DESC LIMIT 1"
)

#: an export's columns: where the label comes from, its id, the edit's fields (passed beside its value)
EXPORT_COLUMNS = ["source", "edit_id", *_EDIT_FIELDS[:5], "passed", *_EDIT_FIELDS[5:]]


class LabelStore:
    """The label store of a state directory: SQLite there (``labels.sqlite``), or the PostgreSQL
    database of ``url`` (default: the Store's ``--db``, else ``EVALCORE_DB``; see
    :mod:`evalcore.storage.db`)."""

    def __init__(self, store: Store, url: str | None = None):
        self.store = store
        self.path = writable_state(store, DB_NAME)  # (the state directory is checked on both backends)
        self.url = database_url(store, url)
        self.where = mask(self.url) if self.url else str(self.path)  # for messages
        self._local = threading.local()  # one connection per thread, kept open (closing the last one checkpoints)
        self._criteria: dict[str, tuple[tuple, list[str], dict[str, S.Criterion]]] = {}
        self.seen: set[tuple] = set()  # (gen_id, item_id[, round]) in the data: checked once, or read by the caller

    @property
    def dialect(self) -> str:
        return "postgres" if self.url else "sqlite"

    def _absent(self) -> bool:
        """Nothing was ever written (a SQLite store not yet created): readers return nothing."""
        return self.url is None and not check_database(self.path)

    @contextmanager
    def _db(self, create: bool = True) -> Iterator[Database]:
        """This thread's connection (opened on first use and kept: opening and closing a WAL
        database for every edit costs a checkpoint each time)."""
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._connect(create)
            self._local.con = con
        yield con

    def close(self) -> None:
        """Close this thread's connection (it is also closed when the store is garbage-collected)."""
        con = getattr(self._local, "con", None)
        if con is not None:
            self._local.con = None
            con.close()

    def _connect(self, create: bool = True) -> Database:
        con = connect(self.url or self.path, lock="labels", create=create)
        try:
            if self.url not in _READY:  # first use: create what is missing, on nothing or on a whole store
                if con.dialect == "postgres":
                    self._check_partial(con)
                con.ensure(LABELS_DDL[con.dialect], LABELS_OBJECTS[con.dialect])
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is not None and int(row[0]) > LABELS_SCHEMA_VERSION:
                raise LabelError(
                    f"schema_version {row[0]} is newer than this evalcore reads ({LABELS_SCHEMA_VERSION})",
                    file=self.where,
                    field="schema_version",
                )
            if row is None or int(row[0]) < LABELS_SCHEMA_VERSION:
                self._upgrade(con)
        except BaseException:
            con.close()
            raise
        if self.url:
            _READY.add(self.url)
        return con

    def _check_partial(self, con: Database) -> None:
        """A PostgreSQL schema that holds some of the store's tables but not its history
        (``edits``) or its version (``meta``) is not built over: the missing part was lost, not
        never made."""
        have = con.objects() & LABELS_OBJECTS[con.dialect]
        lost = [t for t in ("meta", "edits") if t not in have]
        if have and lost:
            raise StateError(
                f"holds some of the label store's tables ({', '.join(sorted(have)[:4])}...) but not {' or '.join(lost)}: "
                "a new store is made only where there is none; restore the database from a backup",
                file=self.where,
            )

    @staticmethod
    def _upgrade(con: Database) -> None:
        """Bring an older store to this schema in one transaction: version 2 adds ``edits.role``
        (every earlier edit was a reviewer's) and the leases (created by the DDL); version 3 the
        audit's record (``queues.audit_design``, ``queue_cases.audit_key`` and ``audit_size``, NULL
        on queues built before: their audit is not a prefix sample, see
        :mod:`evalcore.review.audit`)."""
        con.begin()
        try:
            if "role" not in con.columns("edits"):
                con.execute(
                    "ALTER TABLE edits ADD COLUMN role TEXT NOT NULL DEFAULT 'reviewer' "
                    "CHECK (role IN ('reviewer', 'adjudicator'))"
                )
            double = "DOUBLE PRECISION" if con.dialect == "postgres" else "REAL"
            if "audit_design" not in con.columns("queues"):
                con.execute("ALTER TABLE queues ADD COLUMN audit_design TEXT")
            for col in ("audit_key", "audit_size"):
                if col not in con.columns("queue_cases"):
                    con.execute(f"ALTER TABLE queue_cases ADD COLUMN {col} {double}")
            con.execute(
                "INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(LABELS_SCHEMA_VERSION),),
            )
            con.commit()
        except BaseException:
            con.rollback()
            raise

    @staticmethod
    def json_values(expr: str, alias: str = "r") -> str:
        """SQL for a table of the text values of the JSON array in ``expr``, one column ``value``,
        aliased ``alias``: for the queue's filters over a case's reasons and runs. Written as
        SQLite's ``json_each``; the PostgreSQL connection runs it as ``jsonb_array_elements_text``
        (:func:`evalcore.storage.db.to_postgres`), so the same SQL serves both."""
        return f"json_each({expr}) {alias}"

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """This thread's connection inside a write transaction (one writer at a time: ``BEGIN
        IMMEDIATE`` on SQLite, the others wait up to the busy timeout; an advisory transaction lock
        on PostgreSQL); committed on leaving, rolled back on an error. For the review queue's
        leases, which read and write in one step. ``con.execute(sql, params)`` takes ``?``
        placeholders on both backends; rows read as ``row["column"]`` and ``dict(row)``."""
        with self._db() as con:
            con.begin()
            try:
                yield con
                con.commit()
            except BaseException:
                con.rollback()
                raise
            finally:
                scope.unpin(self.where, "standing")

    # ---- what a label may say
    def _fingerprint(self) -> tuple:
        out: list[int | None] = []
        for sub in ("runs", "labels"):
            try:
                out.append((self.store.data / sub).stat().st_mtime_ns)
            except FileNotFoundError:
                out.append(None)
        return tuple(out)

    def _index(self, gen_id: str) -> tuple[list[str], dict[str, S.Criterion]]:
        """Criteria judged or labelled on a generation, in order, with their definitions (the first
        run's, then a label set's). Cached until a run or label set is added or replaced."""
        fp = self._fingerprint()
        hit = self._criteria.get(gen_id)
        if hit is not None and hit[0] == fp:
            return hit[1], hit[2]
        names: list[str] = []
        defs: dict[str, S.Criterion] = {}
        for rid in self.store.ids("run"):
            m = self.store.run(rid).manifest
            if m.gen_id == gen_id:
                names += [n for n in m.rubric.names() if n not in names]
                for c in m.rubric.criteria:
                    defs.setdefault(c.name, c)
        shipped_defs: dict[str, S.Criterion] = {}
        for lid in self.store.ids("labelset"):
            m = self.store.labelset(lid).manifest
            if m.gen_id == gen_id and m.rubric:
                names += [n for n in m.rubric.names() if n not in names]
                for c in m.rubric.criteria:
                    shipped_defs.setdefault(c.name, c)
        for k, c in shipped_defs.items():
            defs.setdefault(k, c)
        if not names:  # label sets without a rubric: their criterion column
            for lid in self.store.ids("labelset"):
                if self.store.labelset(lid).manifest.gen_id == gen_id:
                    rows = self.store.sql(
                        "SELECT DISTINCT criterion FROM read_parquet(?) ORDER BY 1",
                        [self.store.path_of("labelset", lid, "labels")],
                    )
                    names += [r[0] for r in rows if r[0] not in names]
        self._criteria[gen_id] = (fp, names, defs)
        return names, defs

    def criterion_for(self, gen_id: str, criterion: str) -> S.Criterion | None:
        """The criterion's definition from any run or label set on this generation."""
        return self._index(gen_id)[1].get(criterion)

    def known_criteria(self, gen_id: str) -> list[str]:
        return list(self._index(gen_id)[0])

    def resolve_gen(self, item_id: str, gen_id: str | None) -> str:
        """The generation an item's label belongs to: the one given, or the only one holding it."""

        def holds(g: str) -> int:
            return self.store.sql(
                "SELECT count(*) FROM read_parquet(?) WHERE item_id = ?",
                [self.store.path_of("generation", g, "outputs"), item_id],
            )[0][0]

        if gen_id is not None:
            if (gen_id, item_id) in self.seen:
                return gen_id
            self.store.generation(gen_id)
            if not holds(gen_id):
                raise LabelError(f"item {item_id!r} is not in generation {gen_id!r}", field="--item")
            self.seen.add((gen_id, item_id))
            return gen_id
        hits = [g for g in self.store.ids("generation") if holds(g)]
        if not hits:
            raise LabelError(f"item {item_id!r} is in no generation of {self.store.data}", field="--item")
        if len(hits) > 1:
            raise LabelError(f"item {item_id!r} is in generations {', '.join(hits)}: pass --gen", field="--item")
        return hits[0]

    normalise_value = staticmethod(labelvalues.normalise_value)
    passed_of = staticmethod(labelvalues.passed_of)

    # ---- writing
    def add(self, *, receipt: str | None = None, **edit: Any) -> dict[str, Any]:
        """Append one edit and return it; ``edit`` holds :meth:`prepare`'s arguments (item_id,
        criterion, reviewer, value, outcome, gen_id, gen_round, queue, reason_code, note,
        supersedes, tags, role). Validates everything before touching the database. ``role`` is
        the capacity the edit is made in: a reviewer's decision, or an adjudicator's, which settles
        the case (see :mod:`evalcore.storage.gold`). With ``receipt`` (an id the sender made for
        this one act, e.g. the review card's), the edit is written at most once: the receipt is
        written in the edit's transaction, and a receipt already held returns the edit it wrote."""
        values, crit = self.prepare(**edit)
        supersedes = values[11]
        if supersedes is None and receipt is None:  # nothing to decide under the lock: one pipelined write
            with self._db() as con:
                edit_id = con.append(_INSERT_EDIT, values, "edit_id")
            scope.unpin(self.where, "standing")
        else:  # what it takes back, and the receipt, are checked in the same transaction that writes it
            with self.transaction() as con:
                done = self._receipted(con, receipt, values[6])
                if done is not None:
                    return done
                if supersedes is not None:
                    self._check_supersedes(con, supersedes, values)
                edit_id = con.insert(_INSERT_EDIT, values, "edit_id")
                self._receipt(con, receipt, values[6], edit_id)
        return self._read_back(edit_id, values, crit)

    def _receipted(self, con: Database, receipt: str | None, reviewer: str) -> dict[str, Any] | None:
        """The edit a receipt already wrote (None when it is new); another reviewer's is refused."""
        if receipt is None:
            return None
        row = con.execute(
            "SELECT r.reviewer AS sender, e.* FROM receipts r JOIN edits e ON e.edit_id = r.edit_id WHERE r.client_id = ?",
            (receipt,),
        ).fetchone()
        if row is None:
            return None
        got = dict(row)
        if got.pop("sender") != reviewer:
            raise LabelError(f"receipt {receipt!r} belongs to another reviewer", field="receipt")
        return self._row(got, self.criterion_for(got["gen_id"], got["criterion"]))

    @staticmethod
    def _receipt(con: Database, receipt: str | None, reviewer: str, edit_id: int) -> None:
        if receipt is not None:
            con.execute(
                "INSERT INTO receipts (client_id, reviewer, edit_id, created_at) VALUES (?, ?, ?, ?)",
                (receipt, reviewer, edit_id, utcnow().isoformat()),
            )

    def by_receipt(self, receipt: str, reviewer: str) -> dict[str, Any] | None:
        """The edit a receipt wrote, or None."""
        if self._absent():
            return None
        with self._db() as con:
            return self._receipted(con, receipt, reviewer.strip())

    def receipts(self, ids: Iterable[str]) -> dict[str, int]:
        """Which of these receipts the store holds, with the edit each wrote."""
        keys = list(dict.fromkeys(ids))
        sql = f"SELECT client_id, edit_id FROM receipts WHERE client_id IN ({', '.join('?' for _ in keys)})"
        rows = [] if not keys or self._absent() else self._plain(sql, tuple(keys))
        return {r["client_id"]: int(r["edit_id"]) for r in rows}

    def add_many(self, edits: Iterable[dict[str, Any]], *, batch: int = 500, source: str | None = None) -> list[int]:
        """Append many edits (each a dict of :meth:`add`'s arguments, optionally with ``_line``,
        where it was read in ``source``): every one is validated before any is written (a bad one
        raises naming its line, or its position ``#N``, and nothing is written), then they go in
        one transaction per ``batch``, each batch read back before the next. Returns the new edit
        ids in order. For scripted labelling: one process, not one per label."""
        edits = self._locate([dict(e) for e in edits])
        prepared = []
        for k, e in enumerate(edits, 1):
            line = e.pop("_line", None)
            try:
                prepared.append(self.prepare(**e))
            except LabelError as err:
                where = f"line {line}" if line is not None else f"#{k}"
                raise LabelError(
                    err.problem, file=err.file or source, field=f"{where} {err.field or ''}".strip()
                ) from None
        ids: list[int] = []
        for start in range(0, len(prepared), batch):
            chunk = prepared[start : start + batch]
            with self.transaction() as con:
                new = []
                for values, _crit in chunk:
                    if values[11] is not None:
                        self._check_supersedes(con, values[11], values)
                    new.append(con.insert(_INSERT_EDIT, values, "edit_id"))
            with self._db() as con:
                rows = con.execute(
                    f"SELECT {', '.join(_EDIT_FIELDS)} FROM edits WHERE edit_id BETWEEN ? AND ? ORDER BY edit_id",
                    (min(new), max(new)),
                ).fetchall()
            got = {tuple(r) for r in rows}
            if any(values not in got for values, _ in chunk):
                raise StateError(
                    f"edits {min(new)}-{max(new)} were written but do not read back as written: check the store "
                    "with `evalcore labels check`",
                    file=self.where,
                )
            ids += new
        return ids

    def _locate(self, edits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Find the items of many edits in the generations with one query per generation (not one
        per edit): the items and rounds found are remembered as :meth:`prepare` checks them, and
        an edit without a generation gets the only one holding its item (none or several: left
        for :meth:`prepare` to refuse in its words)."""
        items = sorted({str(e.get("item_id")) for e in edits if e.get("item_id")})
        named = {e.get("gen_id") for e in edits}
        found: dict[str, set[str]] = {}
        if items:
            for g in self.store.ids("generation"):
                if None not in named and g not in named:
                    continue
                rows = self.store.sql(
                    "SELECT DISTINCT item_id, round FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?::VARCHAR[]))",
                    [self.store.path_of("generation", g, "outputs"), items],
                )
                for item, rnd in rows:
                    self.seen.update({(g, item), (g, item, int(rnd))})
                    found.setdefault(item, set()).add(g)
        for e in edits:
            hits = found.get(str(e.get("item_id")), set())
            if e.get("gen_id") is None and len(hits) == 1:
                e["gen_id"] = next(iter(hits))
        return edits

    def prepare(
        self,
        *,
        item_id: str,
        criterion: str,
        reviewer: str,
        value: str | None = None,
        outcome: str = "decided",
        gen_id: str | None = None,
        gen_round: int = 1,
        queue: str | None = None,
        reason_code: str | None = None,
        note: str | None = None,
        supersedes: int | None = None,
        tags: Iterable[str] = (),
        role: str = "reviewer",
    ) -> tuple[tuple, S.Criterion | None]:
        """Validate one edit against the data (without touching the database) and return the row
        to insert, in ``_EDIT_FIELDS`` order, with its criterion."""
        item_id = unicodedata.normalize("NFC", str(item_id))  # as the data stores it (files.check_ids)
        if not reviewer or not reviewer.strip():
            raise LabelError("a reviewer name is required", field="--reviewer")
        reviewer = unicodedata.normalize("NFC", reviewer).strip()  # compared as typed elsewhere (issue 38)
        if name_key(reviewer) != reviewer:  # a zero-width or direction character: it would pass for another name
            raise LabelError(
                f"the reviewer name {spelled(reviewer)} holds an invisible or direction character and would look "
                f"like {name_key(reviewer)!r}: type the name plainly",
                field="--reviewer",
            )
        if role not in ROLES:
            raise LabelError(f"role {role!r} is not one of {', '.join(ROLES)}", field="--role")
        if outcome not in OUTCOMES:
            raise LabelError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}", field="--outcome")
        gen_id = self.resolve_gen(item_id, gen_id)
        if (gen_id, item_id, int(gen_round)) not in self.seen:
            n = self.store.sql(
                "SELECT count(*) FROM read_parquet(?) WHERE item_id = ? AND round = ?",
                [self.store.path_of("generation", gen_id, "outputs"), item_id, int(gen_round)],
            )[0][0]
            if not n:
                raise LabelError(f"item {item_id!r} has no round {gen_round} in generation {gen_id!r}", field="--round")
            self.seen.add((gen_id, item_id, int(gen_round)))
        known = self.known_criteria(gen_id)
        if criterion not in known:
            raise LabelError(
                f"criterion {criterion!r} is not judged on generation {gen_id!r} (known: {', '.join(known) or 'none'})",
                field="--criterion",
            )
        crit = self.criterion_for(gen_id, criterion)
        if outcome == "decided":
            if value is None:
                raise LabelError("a decision needs a value", field="--value")
            value = self.normalise_value(crit, value)
        elif value is not None and outcome != "decided":
            raise LabelError(f"an edit with outcome {outcome!r} carries no value", field="--value")
        if outcome == "withdrawn" and supersedes is None:
            raise LabelError("undo needs the edit it takes back", field="--supersedes")
        tags = sorted({t.strip() for t in tags if t and t.strip()})
        values = (
            gen_id,
            item_id,
            int(gen_round),
            criterion,
            value,
            outcome,
            reviewer.strip(),
            utcnow().isoformat(),
            queue,
            reason_code,
            note,
            supersedes,
            json.dumps(tags),
            role,
        )
        return values, crit

    def _check_supersedes(self, con: Database, supersedes: int, values: tuple) -> None:
        """Refuse, inside the write transaction, an edit that takes back an edit of another case,
        one already taken back (withdrawn, or replaced by an edit that stands), or another
        reviewer's without the adjudicator role."""
        gen_id, item_id, gen_round, criterion, _v, outcome, reviewer = values[:7]
        role = values[13]
        prev = con.execute(
            "SELECT gen_id, item_id, gen_round, criterion, reviewer FROM edits WHERE edit_id = ?", (supersedes,)
        ).fetchone()
        if prev is None or tuple(prev)[:4] != (gen_id, item_id, gen_round, criterion):
            raise LabelError(f"edit {supersedes} is not a label of this item and criterion", field="--supersedes")
        taken = con.execute(
            "SELECT edit_id, outcome, reviewer FROM edits e WHERE supersedes = ? AND (outcome = 'withdrawn' OR "
            "edit_id NOT IN (SELECT supersedes FROM edits WHERE outcome = 'withdrawn' AND supersedes IS NOT NULL)) "
            "ORDER BY edit_id LIMIT 1",
            (supersedes,),
        ).fetchone()
        if taken is not None:
            how = "withdrawn" if taken["outcome"] == "withdrawn" else "replaced"
            raise LabelError(
                f"edit {supersedes} was already {how} by edit {taken['edit_id']} ({taken['reviewer']}): nothing changed",
                field="--supersedes",
            )
        if outcome == "withdrawn" and prev["reviewer"] != reviewer and role != "adjudicator":
            raise LabelError(
                f"edit {supersedes} is {prev['reviewer']}'s: withdrawing another reviewer's decision needs the "
                "adjudicator role",
                field="--role",
            )

    def _read_back(self, edit_id: int, values: tuple, crit: S.Criterion | None) -> dict[str, Any]:
        """The edit as the store holds it, compared with what was written before it is returned."""
        with self._db() as con:
            row = con.execute("SELECT * FROM edits WHERE edit_id = ?", (edit_id,)).fetchone()
        if row is None or tuple(row[c] for c in _EDIT_FIELDS) != values:
            raise StateError(
                f"edit {edit_id} was written but does not read back as written: check the store with "
                "`evalcore labels check`",
                file=self.where,
            )
        return self._row(row, crit)

    # ---- the review queue (written once by evalcore.review.build.build_queue)
    QUEUE_COLUMNS = (
        "queue_id",
        "gen_id",
        "created_at",
        "created_by",
        "seed",
        "audit_rate",
        "reviewers_required",
        "runs",
        "population",
        "flagged",
        "agreed",
        "audit_sampled",
        "detector_version",
        "audit_design",
    )
    CASE_COLUMNS = (
        "queue_id",
        "rank",
        "gen_id",
        "item_id",
        "gen_round",
        "criterion",
        "class",
        "stratum",
        "reasons",
        "runs",
        "detail",
        "inclusion_prob",
        "audit_key",
        "audit_size",
    )

    def write_queue(self, queue: dict[str, Any], cases: list[dict[str, Any]]) -> None:
        """Append a queue and all its cases in one transaction (all or nothing)."""
        crows = [
            tuple(
                json.dumps(c[k], sort_keys=True) if k in ("reasons", "runs", "detail") else c.get(k)
                for k in self.CASE_COLUMNS
            )
            for c in cases
        ]
        self.write_queue_rows(queue, [crows])

    def write_queue_rows(self, queue: dict[str, Any], batches: Iterable[Iterable[tuple[Any, ...]]]) -> None:
        """Append a queue and its cases streamed in batches, in one transaction (all or nothing):
        each row holds the values of ``CASE_COLUMNS`` in that order, with reasons, runs and detail
        already JSON text as :meth:`write_queue` writes them (``json.dumps(value, sort_keys=True)``)."""
        qrow = [
            json.dumps(queue.get(c), sort_keys=True) if c in ("runs", "audit_design") else queue[c]
            for c in self.QUEUE_COLUMNS
        ]
        insert = (
            f"INSERT INTO queue_cases ({', '.join(self.CASE_COLUMNS)}) VALUES "
            f"({', '.join('?' * len(self.CASE_COLUMNS))})"
        )
        with self._db() as con:
            try:
                with self.transaction():
                    con.execute(
                        f"INSERT INTO queues ({', '.join(self.QUEUE_COLUMNS)}) VALUES "
                        f"({', '.join('?' * len(self.QUEUE_COLUMNS))})",
                        qrow,
                    )
                    for batch in batches:
                        con.executemany(insert, batch)
            except con.integrity_errors as e:
                raise LabelError(
                    f"queue {queue['queue_id']!r} cannot be written: {e}", file=self.where, field="queue"
                ) from None

    def _plain(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        if self._absent():
            return []
        with self._db(create=False) as con:
            return [dict(r) for r in con.execute(sql, params).fetchall()]

    def rows(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """Rows of a read-only query over the label store as dicts (none before the store exists)."""
        return self._plain(sql, tuple(params))

    def queues(self, gen_id: str | None = None) -> list[dict[str, Any]]:
        """Every queue (of one generation), oldest first."""
        rows = (
            self._plain("SELECT * FROM queues WHERE gen_id = ? ORDER BY created_at, queue_id", (gen_id,))
            if gen_id
            else self._plain("SELECT * FROM queues ORDER BY created_at, queue_id")
        )
        for r in rows:
            r["runs"] = json.loads(r["runs"])
            r["audit_design"] = json.loads(r.get("audit_design") or "null")
        return rows

    def queue_cases(self, queue_id: str, where: str = "", params: tuple | list = ()) -> list[dict[str, Any]]:
        """The cases of a queue in rank order; ``where`` is a condition over the columns of
        ``queue_cases`` (aliased ``c``) with bound parameters (see :func:`evalcore.review.queue.filter_sql`)."""
        sql = "SELECT c.* FROM queue_cases c WHERE c.queue_id = ?" + (f" AND ({where})" if where else "")
        rows = self._plain(sql + " ORDER BY c.rank", (queue_id, *params))
        for r in rows:
            for k in ("reasons", "runs", "detail"):
                r[k] = json.loads(r[k])
        return rows

    def queue_case_batches(self, queue_id: str, columns: Sequence[str], batch: int = 100_000) -> Iterator[list[tuple]]:
        """The ``columns`` of a queue's cases in rank order, ``batch`` rows at a time (no row
        becomes a dict: a queue may hold millions of cases)."""
        bad = [c for c in columns if c not in self.CASE_COLUMNS]
        if bad:
            raise ValueError(f"not a column of queue_cases: {bad[0]!r}")
        if self._absent():
            return
        with self._db(create=False) as con:
            cur = con.execute(
                f"SELECT {', '.join(columns)} FROM queue_cases WHERE queue_id = ? ORDER BY rank", (queue_id,)
            )
            while rows := cur.fetchmany(batch):
                yield [tuple(r) for r in rows]

    # ---- reading
    def _row(self, row: Any, crit: S.Criterion | None = None) -> dict[str, Any]:
        d = dict(row)
        d["tags"] = json.loads(d.get("tags") or "[]")
        d["source"] = "state"
        d["passed"] = self.passed_of(crit, d["value"]) if d["outcome"] == "decided" else None
        return d

    def _query(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        if self._absent():
            return []
        with self._db(create=False) as con:
            rows = con.execute(sql, params).fetchall()
        crits: dict[tuple[str, str], S.Criterion | None] = {}
        out = []
        for r in rows:
            k = (r["gen_id"], r["criterion"])
            if k not in crits:
                crits[k] = self.criterion_for(*k)
            out.append(self._row(r, crits[k]))
        return out

    def history(self, gen_id: str | None = None) -> list[dict[str, Any]]:
        """Every edit, oldest first."""
        if gen_id:
            return self._query("SELECT * FROM edits WHERE gen_id = ? ORDER BY edit_id", (gen_id,))
        return self._query("SELECT * FROM edits ORDER BY edit_id")

    def current(self, gen_id: str | None = None) -> list[dict[str, Any]]:
        """The current label of every (generation, item, round, criterion) decided in the app or CLI."""
        if gen_id:
            return self._query("SELECT * FROM current_labels WHERE gen_id = ? ORDER BY edit_id", (gen_id,))
        return self._query("SELECT * FROM current_labels ORDER BY edit_id")

    def standing(
        self, gen_id: str | None = None, *, reviewer: str | None = None, item_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Each reviewer's standing edit on each (generation, item, round, criterion): their latest
        ``decided``, ``test_wrong`` or ``skipped`` edit that no ``withdrawn`` edit takes back.
        Several reviewers of one case each have theirs (unlike :meth:`current`, which keeps the
        latest decision whoever made it). Read once inside an ``evalcore.pinned`` block."""
        where, params = [], []
        for col, val in (("gen_id", gen_id), ("reviewer", reviewer), ("item_id", item_id)):
            if val is not None:
                where.append(f"e.{col} = ?")
                params.append(val)
        sql = _STANDING_SQL.format(where=("AND " + " AND ".join(where)) if where else "")

        def read() -> list[dict[str, Any]]:
            return [{k: v for k, v in r.items() if k != "rn"} for r in self._query(sql, tuple(params))]

        return scope.once((self.where, "standing", repr((gen_id, reviewer, item_id))), read)

    def undo(self, reviewer: str, *, queue: str | None = None, receipt: str | None = None) -> dict[str, Any] | None:
        """Take back the reviewer's most recent edit that can still be undone (not a withdrawal and
        not itself withdrawn; optionally only edits made from ``queue``) with a ``withdrawn`` edit;
        the edit before it (if any) stands again. Which edit is taken back is decided inside the
        transaction that writes the withdrawal, so two undos at once take back the last edit and
        the one before it, never one edit twice. Returns the withdrawal, or None when there is
        nothing to undo. A ``receipt`` (see :meth:`add`) makes the undo happen at most once."""
        if not reviewer or not reviewer.strip():
            raise LabelError("a reviewer name is required", field="--reviewer")
        who = reviewer.strip()
        if self._absent():
            return None
        sql = _LAST_EDIT_SQL.format(queue=" AND queue = ?" if queue is not None else "")
        with self.transaction() as con:
            done = self._receipted(con, receipt, who)
            if done is not None:
                return done
            last = con.execute(sql, (who, queue) if queue is not None else (who,)).fetchone()
            if last is None:
                return None
            values = (
                last["gen_id"],
                last["item_id"],
                last["gen_round"],
                last["criterion"],
                None,
                "withdrawn",
                who,
                utcnow().isoformat(),
                last["queue"],
                last["reason_code"],
                None,
                last["edit_id"],
                "[]",
                last["role"] or "reviewer",
            )
            edit_id = con.insert(_INSERT_EDIT, values, "edit_id")
            self._receipt(con, receipt, who, edit_id)
        return self._read_back(edit_id, values, self.criterion_for(last["gen_id"], last["criterion"]))

    def shipped(self, gen_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Labels read from the data directory's label sets, marked as shipped (each set's rows
        read once while its file's size, mtime and inode are unchanged; fresh dicts every call);
        the first ``limit`` only when given."""
        out: list[dict[str, Any]] = []
        for lid, set_gen, created, rows in shipped_sets(self.store, gen_id):
            if limit is not None:
                rows = rows[: max(0, limit - len(out))]
            out.extend(
                {
                    "source": f"shipped:{lid}",
                    "edit_id": None,
                    "gen_id": set_gen,
                    "item_id": item_id,
                    "gen_round": gen_round,
                    "criterion": criterion,
                    "value": value,
                    "passed": passed,
                    "outcome": "decided",
                    "reviewer": annotator,
                    "created_at": created,
                    "queue": None,
                    "reason_code": None,
                    "note": None,
                    "supersedes": None,
                    "tags": [],
                    "role": None,
                }
                for item_id, gen_round, criterion, annotator, value, passed in rows
            )
        return out

    def shipped_rows(self, gen_id: str | None) -> list[tuple[str, list[tuple]]]:
        """The generation's shipped labels as they are read, for callers that only read them (the
        report card; every generation's with None): per label set its source (``shipped:<id>``) and
        its rows (item_id, gen_round, criterion, annotator, value, passed), shared and not to be
        changed."""
        return [(f"shipped:{lid}", rows) for lid, _, _, rows in shipped_sets(self.store, gen_id)]
