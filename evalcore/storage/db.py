"""The database under the label store and the decision ledger: SQLite or PostgreSQL.

* **SQLite** in the state directory is the embedded default (:func:`evalcore.storage.state.open_state_db`:
  WAL, ``synchronous=FULL``, ``BEGIN IMMEDIATE``).
* **PostgreSQL** on a team server when a ``postgresql://`` URL is given: ``EVALCORE_DB``, the
  ``--db`` option of the ``evalcore`` command (bound to its Store by :func:`use_database`) or the
  ``url`` argument of :class:`~evalcore.storage.labels.LabelStore` and the ledger. Driver: psycopg 3,
  imported on the first connection. The same append-only guarantees: PL/pgSQL triggers refuse
  UPDATE, DELETE and TRUNCATE on the append-only tables.

Both are used through one :class:`Database`: SQL is written once, in portable SQL with ``?``
placeholders (``ON CONFLICT ... DO UPDATE``, ISO-8601 timestamps compared as text, no rowid); rows
are :class:`sqlite3.Row` or :class:`Row`, both readable as ``row["column"]``, ``row[0]`` and
``dict(row)``. For PostgreSQL the connection translates ``?`` to psycopg's ``%s`` and SQLite's
``json_each(expr) alias`` (what :meth:`LabelStore.json_values` writes) to
``jsonb_array_elements_text((expr)::jsonb) AS alias(value)``. :meth:`Database.begin` starts a write
transaction in which one writer at a time proceeds: ``BEGIN IMMEDIATE`` on SQLite, a
transaction-level advisory lock (``pg_advisory_xact_lock``, one key per store) on PostgreSQL, so
read-then-write steps (leases, the ledger's next id) behave the same on both. Text columns are
``COLLATE "C"`` on PostgreSQL, so text sorts and compares byte-wise as in SQLite, whatever the
server's locale.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import time
import weakref
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from evalcore.errors import LabelError
from evalcore.storage.state import open_state_db

ENV = "EVALCORE_DB"
SCHEMES = ("postgresql://", "postgres://")

_BOUND: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def is_url(value: str | None) -> bool:
    return bool(value) and str(value).startswith(SCHEMES)


def mask(url: str) -> str:
    """The URL with its password (in the user part or a ``password=`` parameter) shown as ``***``."""
    url = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*):[^@/?#]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def check_url(url: str, field: str = "--db") -> str:
    if not is_url(url):
        raise LabelError(
            f"{mask(url) if '://' in url else url!r} is not a postgresql:// URL "
            "(leave it unset for SQLite in the state directory)",
            field=field,
        )
    return url


def use_database(store: Any, url: str | None) -> None:
    """Make the label store and the ledger of this Store use ``url`` (the CLI's ``--db``)."""
    if url:
        _BOUND[store] = check_url(url)


def database_url(store: Any, url: str | None = None) -> str | None:
    """The PostgreSQL URL a store's label store and ledger use: ``url``, else the one bound by
    :func:`use_database`, else ``EVALCORE_DB``; None for SQLite in the state directory."""
    for value, field in ((url, "url"), (_BOUND.get(store), "--db"), (os.environ.get(ENV), ENV)):
        if value:
            return check_url(value, field)
    return None


class Row:
    """A PostgreSQL row as :class:`sqlite3.Row` reads: ``row["column"]``, ``row[0]``, ``dict(row)``,
    ``tuple(row)`` (the values)."""

    __slots__ = ("_index", "_names", "_values")

    def __init__(self, names: tuple[str, ...], index: dict[str, int], values: tuple[Any, ...]):
        self._names, self._index, self._values = names, index, values

    def keys(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._index[key]]
            except KeyError:
                raise IndexError(f"no column {key!r}") from None
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return NotImplemented
        return self._names == other._names and self._values == other._values

    def __hash__(self) -> int:
        return hash((self._names, self._values))

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._names, self._values))!r})"


def _pg_rows(cursor: Any) -> Any:
    names = tuple(d.name for d in cursor.description or ())
    index: dict[str, int] = {}
    for i, n in enumerate(names):
        index.setdefault(n, i)  # the first of two equal names, as sqlite3.Row
    return lambda values: Row(names, index, tuple(values))


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_ALIAS = frozenset({"where", "on", "join", "left", "inner", "cross", "group", "order", "limit", "union", "using"})


@functools.lru_cache(maxsize=1024)
def to_postgres(sql: str) -> str:
    """SQL with ``?`` placeholders (outside quotes and comments) as psycopg's ``%s``, every other
    ``%`` doubled, and ``json_each(expr) alias`` as ``jsonb_array_elements_text((expr)::jsonb) AS
    alias(value)``."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"":
            j = sql.find(ch, i + 1)
            j = n - 1 if j < 0 else j
            out.append(sql[i : j + 1].replace("%", "%%"))
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            out.append(sql[i:j].replace("%", "%%"))
            i = j
        elif ch == "?":
            out.append("%s")
            i += 1
        elif ch == "%":
            out.append("%%")
            i += 1
        elif sql[i : i + 10].lower() == "json_each(" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            end = _closing(sql, i + 9)
            inner = to_postgres(sql[i + 10 : end])
            k = end + 1
            m = re.compile(r"\s+(?:AS\s+)?", re.I).match(sql, k)
            alias = "json_each"
            if m:
                a = _IDENT.match(sql, m.end())
                if a and a.group(0).lower() not in _NOT_ALIAS:
                    alias, k = a.group(0), a.end()
            out.append(f"jsonb_array_elements_text(({inner})::jsonb) AS {alias}(value)")
            i = k
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _closing(sql: str, start: int) -> int:
    """Index of the parenthesis closing the one at ``start`` (quotes respected)."""
    depth, i = 0, start
    while i < len(sql):
        ch = sql[i]
        if ch in "'\"":
            j = sql.find(ch, i + 1)
            i = len(sql) if j < 0 else j + 1
            continue
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return i
        i += 1
    raise ValueError(f"unbalanced parentheses in {sql!r}")


def lock_key(name: str) -> int:
    """The advisory lock of one store (``labels``, ``ledger``) on a PostgreSQL database."""
    return zlib.crc32(f"evalcore:{name}".encode())


class Database:
    """One connection to the database of a store; see the module docstring."""

    dialect = ""
    where = ""  # the file or the URL (password masked), for messages
    integrity_errors: tuple[type[BaseException], ...] = ()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def append(self, sql: str, params: Sequence[Any], key: str) -> int:
        """Run one INSERT in a write transaction of its own (as :meth:`begin`) and return the
        ``key`` column of the new row."""
        raise NotImplementedError

    def insert(self, sql: str, params: Sequence[Any], key: str) -> int:
        """Run one INSERT inside the caller's open transaction and return the ``key`` column of
        the new row."""
        raise NotImplementedError

    def begin(self) -> None:
        """Start a write transaction: one writer at a time proceeds, the others wait."""
        raise NotImplementedError

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            self.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        raise NotImplementedError

    def objects(self) -> set[str]:
        """Names of the tables, indexes, views and triggers (of the current schema)."""
        raise NotImplementedError

    def columns(self, table: str) -> set[str]:
        raise NotImplementedError

    def ensure(self, ddl: str, objects: frozenset[str]) -> None:
        """Create what is missing of a schema (idempotent DDL); a schema that has every object is
        left alone, without taking the write lock."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SqliteDatabase(Database):
    dialect = "sqlite"
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: Path, create: bool = True):
        self.where = str(path)
        self.raw = open_state_db(path, create)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.raw.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.raw.executemany(sql, rows)

    def append(self, sql: str, params: Sequence[Any], key: str) -> int:
        self.begin()
        try:
            rowid = self.raw.execute(sql, params).lastrowid
            self.commit()
        except BaseException:
            self.rollback()
            raise
        assert rowid is not None
        return rowid

    def insert(self, sql: str, params: Sequence[Any], key: str) -> int:
        rowid = self.raw.execute(sql, params).lastrowid
        assert rowid is not None
        return rowid

    def begin(self) -> None:
        self.raw.execute("BEGIN IMMEDIATE")

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def objects(self) -> set[str]:
        return {r[0] for r in self.raw.execute("SELECT name FROM sqlite_master")}

    def columns(self, table: str) -> set[str]:
        return {r[1] for r in self.raw.execute(f"PRAGMA table_info({table})")}

    def ensure(self, ddl: str, objects: frozenset[str]) -> None:
        if not self.objects() >= objects:
            self.raw.executescript(ddl)

    def close(self) -> None:
        self.raw.close()


class PostgresDatabase(Database):
    """A PostgreSQL connection that survives a server restart: a connection found closed is opened
    again; a statement that loses it is run again on the new one when that is safe (a read outside
    a transaction of the caller's: nothing was committed), else refused in one line (a write whose
    commit may or may not have reached the server is never repeated: it was not acknowledged)."""

    dialect = "postgres"
    #: a connection idle this long is checked with a read before a write, so that a server restarted
    #: meanwhile costs a reconnection rather than a refused write
    IDLE_CHECK_S = 1.0

    def __init__(self, url: str, lock: str):
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        self.where = mask(url)
        self._url = url
        self._lock = lock_key(lock)
        self._psycopg = psycopg
        self.integrity_errors = (psycopg.IntegrityError,)
        self._password = ""
        self._in_tx = False  # inside a transaction the caller opened with begin()
        try:
            params = conninfo_to_dict(url)
        except psycopg.Error as e:
            raise LabelError(f"cannot connect to PostgreSQL: {self._scrub(e)}", file=self.where, field="--db") from None
        self._password = str(params.get("password") or "")
        defaults: dict[str, Any] = {"connect_timeout": 10, "application_name": "evalcore"}
        self._extra = {k: v for k, v in defaults.items() if k not in params}
        self._connect()

    def _connect(self) -> None:
        from psycopg.types.numeric import FloatLoader

        try:
            self.raw: Any = self._psycopg.connect(self._url, autocommit=True, row_factory=_pg_rows, **self._extra)
        except self._psycopg.Error as e:
            raise LabelError(f"cannot connect to PostgreSQL: {self._scrub(e)}", file=self.where, field="--db") from None
        # avg() and sums of bigints are numeric: read them as floats, as SQLite returns them
        self.raw.adapters.register_loader("numeric", FloatLoader)
        self._used = time.monotonic()
        self._in_tx = False

    def _lost(self) -> bool:
        return bool(self.raw.closed or self.raw.broken)

    def _lost_in(self, e: BaseException) -> bool:
        """Whether ``e`` (or what it was raised in handling) means the connection is gone: a client-side
        failure (no SQLSTATE), a connection exception (08...) or the server's shutdown (57P...)."""
        seen: BaseException | None = e
        while seen is not None:
            if isinstance(seen, self._psycopg.OperationalError):
                state = getattr(seen, "sqlstate", None)
                if state is None or state.startswith(("08", "57P")):
                    return True
            seen = seen.__cause__ or seen.__context__
        return self._lost()

    def _run(self, op: Any, *, read: bool) -> Any:
        """``op()`` on a live connection (see the class docstring)."""
        if self._lost() and not self._in_tx:
            self._connect()  # found closed before anything was sent: nothing to lose
        elif not read and not self._in_tx and time.monotonic() - self._used > self.IDLE_CHECK_S:
            self._run(lambda: self.raw.execute("SELECT 1"), read=True)
        try:
            out = op()
        except self._psycopg.OperationalError as e:
            if not self._lost_in(e):
                raise
            in_tx, why = self._in_tx, self._scrub(e)
            self.raw.close()
            self._connect()  # the server still down: one line (LabelError), and the next call tries again
            if read and not in_tx:
                return op()
            raise LabelError(
                f"the connection to PostgreSQL was lost during a write ({why}); it was not acknowledged: try again",
                file=self.where,
                field="--db",
            ) from None
        self._used = time.monotonic()
        return out

    def _scrub(self, e: BaseException) -> str:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return text.replace(self._password, "***") if self._password else text

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        head = sql.lstrip()[:6].upper()
        read = head.startswith(("SELECT", "WITH", "SHOW", "VALUES"))
        return self._run(lambda: self.raw.execute(to_postgres(sql), tuple(params)), read=read)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)

        def many() -> None:
            with self.raw.cursor() as cur:
                cur.executemany(to_postgres(sql), rows)

        self._run(many, read=False)

    def append(self, sql: str, params: Sequence[Any], key: str) -> int:
        # pipelined: the four statements go out at once, so the lock is held for the server's work
        # alone, not for round trips to this process
        def once() -> int:
            with self.raw.pipeline():
                self.raw.execute("BEGIN")
                self.raw.execute(f"SELECT pg_advisory_xact_lock({int(self._lock)})")
                cur = self.raw.execute(to_postgres(f"{sql} RETURNING {key}"), tuple(params))
                self.raw.execute("COMMIT")
            return int(cur.fetchone()[0])

        try:
            return int(self._run(once, read=False))
        except BaseException:
            self.rollback()
            raise

    def insert(self, sql: str, params: Sequence[Any], key: str) -> int:
        return int(self.execute(f"{sql} RETURNING {key}", params).fetchone()[0])

    def begin(self) -> None:
        try:  # one round trip (the key is an int of ours, not input)
            self._run(lambda: self.raw.execute(f"BEGIN; SELECT pg_advisory_xact_lock({int(self._lock)})"), read=True)
            self._in_tx = True
        except BaseException:
            self.rollback()
            raise

    def commit(self) -> None:
        try:
            self.execute("COMMIT")
        finally:
            self._in_tx = False

    def rollback(self) -> None:
        self._in_tx = False
        try:
            if not self._lost() and self.in_transaction:
                self.raw.execute("ROLLBACK")
        except self._psycopg.OperationalError:
            self.raw.close()  # the connection is gone, and its transaction with it: the next call reconnects

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.raw.info.transaction_status != TransactionStatus.IDLE)

    def objects(self) -> set[str]:
        rows = self.raw.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() UNION "
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT t.tgisinternal"
        ).fetchall()
        return {r[0] for r in rows}

    def columns(self, table: str) -> set[str]:
        rows = self.raw.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = %s",
            (table,),
        ).fetchall()
        return {r[0] for r in rows}

    def ensure(self, ddl: str, objects: frozenset[str]) -> None:
        if self.objects() >= objects:
            return
        self.begin()  # several processes opening a new database: one creates, the others find it made
        try:
            if not self.objects() >= objects:
                self.raw.execute(ddl)
            self.commit()
        except BaseException:
            self.rollback()
            raise

    def close(self) -> None:
        self.raw.close()


def connect(target: Path | str, *, lock: str, create: bool = True) -> Database:
    """A connection to a PostgreSQL URL or a SQLite file; ``lock`` names the store's write lock
    (``labels``, ``ledger``)."""
    if isinstance(target, str) and is_url(target):
        return PostgresDatabase(target, lock)
    return SqliteDatabase(Path(target), create)


# --------------------------------------------------------------------------- the label store's schema
# Both dialects create the same tables, view, indexes and append-only triggers (see labels.py).

_LABELS_SQLITE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS edits (
    edit_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    gen_id      TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    gen_round   INTEGER NOT NULL DEFAULT 1,
    criterion   TEXT NOT NULL,
    value       TEXT,
    outcome     TEXT NOT NULL CHECK (outcome IN ('decided', 'test_wrong', 'skipped', 'withdrawn')),
    reviewer    TEXT NOT NULL CHECK (length(trim(reviewer)) > 0),
    created_at  TEXT NOT NULL,
    queue       TEXT,
    reason_code TEXT,
    note        TEXT,
    supersedes  INTEGER REFERENCES edits(edit_id),
    tags        TEXT NOT NULL DEFAULT '[]',
    role        TEXT NOT NULL DEFAULT 'reviewer' CHECK (role IN ('reviewer', 'adjudicator'))
);
CREATE INDEX IF NOT EXISTS edits_key ON edits (gen_id, item_id, gen_round, criterion);
CREATE TRIGGER IF NOT EXISTS edits_no_update BEFORE UPDATE ON edits
BEGIN SELECT RAISE(ABORT, 'label edits are append-only'); END;
CREATE TRIGGER IF NOT EXISTS edits_no_delete BEFORE DELETE ON edits
BEGIN SELECT RAISE(ABORT, 'label edits are append-only'); END;
CREATE VIEW IF NOT EXISTS current_labels AS {current_labels};
CREATE TABLE IF NOT EXISTS queues (
    queue_id           TEXT PRIMARY KEY,
    gen_id             TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    created_by         TEXT,
    seed               INTEGER NOT NULL,
    audit_rate         REAL NOT NULL CHECK (audit_rate >= 0 AND audit_rate <= 1),
    reviewers_required INTEGER NOT NULL CHECK (reviewers_required >= 1),
    runs               TEXT NOT NULL,
    population         INTEGER NOT NULL,
    flagged            INTEGER NOT NULL,
    agreed             INTEGER NOT NULL,
    audit_sampled      INTEGER NOT NULL,
    detector_version   TEXT NOT NULL,
    audit_design       TEXT
);
CREATE TABLE IF NOT EXISTS queue_cases (
    queue_id       TEXT NOT NULL REFERENCES queues(queue_id),
    rank           INTEGER NOT NULL,
    gen_id         TEXT NOT NULL,
    item_id        TEXT NOT NULL,
    gen_round      INTEGER NOT NULL,
    criterion      TEXT NOT NULL,
    class          TEXT,
    stratum        TEXT NOT NULL CHECK (stratum IN ('disagreement', 'audit')),
    reasons        TEXT NOT NULL DEFAULT '[]',
    runs           TEXT NOT NULL DEFAULT '[]',
    detail         TEXT NOT NULL DEFAULT '{{}}',
    inclusion_prob REAL NOT NULL CHECK (inclusion_prob > 0 AND inclusion_prob <= 1),
    audit_key      REAL CHECK (audit_key > 0),
    audit_size     REAL CHECK (audit_size > 0),
    PRIMARY KEY (queue_id, item_id, gen_round, criterion)
);
CREATE INDEX IF NOT EXISTS queue_cases_rank ON queue_cases (queue_id, rank);
CREATE INDEX IF NOT EXISTS queue_cases_key ON queue_cases (gen_id, item_id, gen_round, criterion);
CREATE INDEX IF NOT EXISTS queue_cases_stratum ON queue_cases (queue_id, stratum, criterion, class);
CREATE TABLE IF NOT EXISTS assignments (
    assignment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue_id      TEXT NOT NULL REFERENCES queues(queue_id),
    slice         TEXT NOT NULL,
    reviewers     TEXT NOT NULL DEFAULT '[]',
    assigned_by   TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS assignments_queue ON assignments (queue_id, slice);
CREATE TRIGGER IF NOT EXISTS assignments_no_update BEFORE UPDATE ON assignments
BEGIN SELECT RAISE(ABORT, 'assignments are append-only'); END;
CREATE TRIGGER IF NOT EXISTS assignments_no_delete BEFORE DELETE ON assignments
BEGIN SELECT RAISE(ABORT, 'assignments are append-only'); END;
CREATE TABLE IF NOT EXISTS leases (
    gen_id      TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    gen_round   INTEGER NOT NULL,
    criterion   TEXT NOT NULL,
    reviewer    TEXT NOT NULL,
    queue_id    TEXT NOT NULL,
    taken_at    TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    PRIMARY KEY (gen_id, item_id, gen_round, criterion, reviewer)
);
CREATE INDEX IF NOT EXISTS leases_reviewer ON leases (reviewer, queue_id);
CREATE TABLE IF NOT EXISTS receipts (
    client_id   TEXT PRIMARY KEY,
    reviewer    TEXT NOT NULL,
    edit_id     INTEGER NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS queues_no_update BEFORE UPDATE ON queues
BEGIN SELECT RAISE(ABORT, 'queues are append-only'); END;
CREATE TRIGGER IF NOT EXISTS queues_no_delete BEFORE DELETE ON queues
BEGIN SELECT RAISE(ABORT, 'queues are append-only'); END;
CREATE TRIGGER IF NOT EXISTS queue_cases_no_update BEFORE UPDATE ON queue_cases
BEGIN SELECT RAISE(ABORT, 'queue cases are append-only'); END;
CREATE TRIGGER IF NOT EXISTS queue_cases_no_delete BEFORE DELETE ON queue_cases
BEGIN SELECT RAISE(ABORT, 'queue cases are append-only'); END;
"""

_CURRENT_LABELS = """SELECT e.* FROM edits e
WHERE e.outcome = 'decided'
  AND e.edit_id NOT IN (SELECT supersedes FROM edits WHERE outcome = 'withdrawn' AND supersedes IS NOT NULL)
  AND e.edit_id = (
      SELECT max(d.edit_id) FROM edits d
      WHERE d.gen_id = e.gen_id AND d.item_id = e.item_id AND d.gen_round = e.gen_round
        AND d.criterion = e.criterion AND d.outcome = 'decided'
        AND d.edit_id NOT IN (SELECT supersedes FROM edits WHERE outcome = 'withdrawn' AND supersedes IS NOT NULL))"""

# PostgreSQL: identity ids, doubles for the probabilities, "C" collation (byte order, as SQLite),
# and one PL/pgSQL function behind every append-only trigger (TRUNCATE is refused too).
_T = 'TEXT COLLATE "C"'
_LABELS_POSTGRES_TABLES = (
    _LABELS_SQLITE.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    .replace("supersedes  INTEGER", "supersedes  BIGINT")
    .replace("edit_id     INTEGER NOT NULL", "edit_id     BIGINT NOT NULL")
    .replace("seed               INTEGER", "seed               BIGINT")
    .replace(" REAL ", " DOUBLE PRECISION ")
    .replace(" TEXT", " " + _T)
    .replace("CREATE VIEW IF NOT EXISTS", "CREATE OR REPLACE VIEW")
)
_APPEND_ONLY_FUNCTION = """
CREATE OR REPLACE FUNCTION evalcore_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'restrict_violation';
END
$$;
"""


def _pg_append_only(table: str, message: str) -> str:
    out = []
    for op, level in (("update", "ROW"), ("delete", "ROW"), ("truncate", "STATEMENT")):
        name = f"{table}_no_{op}"
        out.append(
            f"DROP TRIGGER IF EXISTS {name} ON {table};\n"
            f"CREATE TRIGGER {name} BEFORE {op.upper()} ON {table} FOR EACH {level} "
            f"EXECUTE FUNCTION evalcore_append_only('{message}');"
        )
    return "\n".join(out)


def postgres_ddl(sqlite_ddl: str, append_only: dict[str, str]) -> str:
    """The PostgreSQL DDL of a schema written for SQLite: its SQLite triggers replaced by PL/pgSQL
    ones refusing UPDATE, DELETE and TRUNCATE on each table of ``append_only`` (table -> message)."""
    tables = re.sub(r"CREATE TRIGGER IF NOT EXISTS .*?END;\n", "", sqlite_ddl, flags=re.S)
    return tables + _APPEND_ONLY_FUNCTION + "\n".join(_pg_append_only(t, m) for t, m in append_only.items())


def append_only_schema(
    sqlite_ddl: str, append_only: dict[str, str]
) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
    """A schema written once, for SQLite, whose tables of ``append_only`` (table -> message) refuse
    change: the DDL of each dialect (PostgreSQL's with identity keys, BIGINT integers, byte-order text
    and :func:`postgres_ddl`'s triggers) and the objects each creates, read from the DDL (a database
    holding all of them is opened without running it). The sign-offs and the ledger are built so."""
    names = re.findall(r"CREATE (TABLE|INDEX|TRIGGER|VIEW) IF NOT EXISTS (\w+)", sqlite_ddl)
    pg = sqlite_ddl.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    pg = re.sub(r"\bINTEGER\b", "BIGINT", pg).replace(" TEXT", ' TEXT COLLATE "C"')
    kept = frozenset(n for kind, n in names if kind != "TRIGGER")
    return (
        {"sqlite": sqlite_ddl, "postgres": postgres_ddl(pg, append_only)},
        {
            "sqlite": frozenset(n for _, n in names),
            "postgres": kept | {f"{t}_no_{op}" for t in append_only for op in ("update", "delete", "truncate")},
        },
    )


_LABELS_APPEND_ONLY = {
    "edits": "label edits are append-only",
    "queues": "queues are append-only",
    "queue_cases": "queue cases are append-only",
    "assignments": "assignments are append-only",  # slices given to named reviewers (evalcore.review.team)
}
LABELS_DDL = {
    "sqlite": _LABELS_SQLITE.format(current_labels=_CURRENT_LABELS),
    "postgres": postgres_ddl(_LABELS_POSTGRES_TABLES.format(current_labels=_CURRENT_LABELS), _LABELS_APPEND_ONLY),
}
_LABELS_TABLES = frozenset(
    {"meta", "edits", "edits_key", "current_labels", "queues", "queue_cases", "queue_cases_rank", "queue_cases_key"}
    | {"assignments", "assignments_queue"}
    | {"queue_cases_stratum"}
    | {"leases", "leases_reviewer"}
    | {"receipts"}
)
# every object the DDL creates: a database holding all of them is opened without running it
LABELS_OBJECTS = {
    "sqlite": _LABELS_TABLES | {f"{t}_no_{op}" for t in _LABELS_APPEND_ONLY for op in ("update", "delete")},
    "postgres": _LABELS_TABLES
    | {f"{t}_no_{op}" for t in _LABELS_APPEND_ONLY for op in ("update", "delete", "truncate")},
}
