"""Grading and closing a blinded pairwise session (steps 2 and 3 of
:mod:`evalcore.pairwise.sessions`).

* **grade**: :class:`JudgmentStore` is ``<state>/pairs.sqlite``, where people's choices (left,
  right or same, as shown: :func:`record_judgment`) and the identification probe's answers
  (:func:`record_probe`) are appended (SQLite in WAL mode, append-only, like the label store).
  :func:`undo_judgment` takes back a reviewer's latest judgment by appending a row to
  ``withdrawals`` (nothing is updated or deleted, as a ``withdrawn`` edit of the label store).
  :func:`reviewer_order`, :func:`progress` and :func:`pair_view` are what the grading page shows;
  none of them reads the key. The probe is a step of its own (``progress().step``): it starts
  only once every pair is graded, and the page enters it with a button of its own.
* **close**: :func:`close_session` reads the key (:func:`read_key`), checks it against the session
  and writes ``<state>/sessions/<id>/unblinded.json``; the data directory is not touched.
  :func:`session_status`, :func:`sessions_overview` and :func:`unblinded` say where a session
  stands.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.errors import FormatError, InputError, NotFoundError
from evalcore.pairwise import blinding
from evalcore.pairwise.schedulelog import SCHEDULE_DDL, ScheduleProgress, schedule_progress
from evalcore.pairwise.sessions import (
    _DDL,
    BLINDING_FILE,
    CHOICES,
    DB_NAME,
    GUESSES,
    PAIRS_DB_VERSION,
    PROBE_PAIRS,
    SessionOpenError,
    arm_identifiability,
)
from evalcore.storage.files import atomic_write_bytes, check_parquet, read_json_model
from evalcore.storage.integrity import check_database
from evalcore.storage.paths import check_id, inside, utcnow
from evalcore.storage.seal import unblinded_path
from evalcore.storage.state import open_state_db, writable_state
from evalcore.storage.store import Store

#: a session of more than two arms closed without ``pairs make``'s record: the shown texts' identifiability
#: is measured for each pair of arms that share at least this many original pairs
MIN_IDENTIFIABILITY_PAIRS = 20

# --------------------------------------------------------------------------- the state: judgments

# An undo appends a withdrawal naming the judgment it takes back (judgments themselves are never
# updated or deleted); a withdrawn judgment is in no reviewer's current choices.
_UNDO_DDL = """
CREATE TABLE IF NOT EXISTS withdrawals (
    withdrawal_id INTEGER PRIMARY KEY AUTOINCREMENT,
    judgment_id   INTEGER NOT NULL UNIQUE REFERENCES judgments(judgment_id),
    session_id    TEXT NOT NULL,
    reviewer      TEXT NOT NULL CHECK (length(trim(reviewer)) > 0),
    created_at    TEXT NOT NULL,
    via           TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS withdrawals_no_update BEFORE UPDATE ON withdrawals
BEGIN SELECT RAISE(ABORT, 'withdrawals are append-only'); END;
CREATE TRIGGER IF NOT EXISTS withdrawals_no_delete BEFORE DELETE ON withdrawals
BEGIN SELECT RAISE(ABORT, 'withdrawals are append-only'); END;
"""
_LIVE = "judgment_id NOT IN (SELECT w.judgment_id FROM withdrawals w)"

# Pairs people grade first in an open session, with the reason they were queued (for instance
# ``grader_inconsistent``: a model grader chose differently in the two orders). Append-only, one
# row per pair: queueing a pair again changes nothing.
_FIRST_DDL = """
CREATE TABLE IF NOT EXISTS first_pairs (
    first_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    pair_id     TEXT NOT NULL,
    reason      TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    source      TEXT,
    created_at  TEXT NOT NULL,
    via         TEXT NOT NULL,
    UNIQUE (session_id, pair_id)
);
CREATE TRIGGER IF NOT EXISTS first_pairs_no_update BEFORE UPDATE ON first_pairs
BEGIN SELECT RAISE(ABORT, 'first_pairs are append-only'); END;
CREATE TRIGGER IF NOT EXISTS first_pairs_no_delete BEFORE DELETE ON first_pairs
BEGIN SELECT RAISE(ABORT, 'first_pairs are append-only'); END;
"""


class JudgmentStore:
    """``<state>/pairs.sqlite``: people's pairwise choices and probe answers, append-only.

    Each write is one transaction with ``synchronous=FULL`` in WAL mode (as the label store), so
    an acknowledged judgment survives a killed process and concurrent reviewers wait for each
    other instead of losing rows. A reviewer's current choice on a pair is their latest one."""

    def __init__(self, store: Store):
        self.store = store
        self.path = writable_state(store, DB_NAME)

    def _connect(self, create: bool = True) -> sqlite3.Connection:
        con = open_state_db(self.path, create)
        con.executescript(_DDL + _UNDO_DDL + _FIRST_DDL + SCHEDULE_DDL)
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(PAIRS_DB_VERSION),))
        elif int(row[0]) > PAIRS_DB_VERSION:
            raise FormatError(
                f"schema_version {row[0]} is newer than this evalcore reads ({PAIRS_DB_VERSION})",
                file=self.path,
                field="schema_version",
            )
        return con

    def _insert(self, table: str, cols: tuple[str, ...], values: tuple) -> dict[str, Any]:
        with closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                cur = con.execute(
                    f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", values
                )
                rid = cur.lastrowid
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            pk = "judgment_id" if table == "judgments" else "probe_id"
            return dict(con.execute(f"SELECT * FROM {table} WHERE {pk} = ?", (rid,)).fetchone())

    def add(
        self, session_id: str, pair_id: str, reviewer: str, choice: str, seconds: float | None = None, via: str = "cli"
    ) -> dict[str, Any]:
        return self._insert(
            "judgments",
            ("session_id", "pair_id", "reviewer", "choice", "seconds", "created_at", "via"),
            (session_id, pair_id, reviewer.strip(), choice, seconds, utcnow().isoformat(), via),
        )

    def add_probe(
        self, session_id: str, pair_id: str, reviewer: str, guess: str, seconds: float | None = None, via: str = "app"
    ) -> dict[str, Any]:
        return self._insert(
            "probes",
            ("session_id", "pair_id", "reviewer", "guess", "seconds", "created_at", "via"),
            (session_id, pair_id, reviewer.strip(), guess, seconds, utcnow().isoformat(), via),
        )

    def withdraw_last(
        self, session_id: str, reviewer: str, via: str = "app", expect: int | None = None
    ) -> dict[str, Any] | None:
        """Append a withdrawal of the reviewer's latest judgment in the session that is not
        withdrawn yet (one transaction); the judgment taken back, or None when there is none,
        or when ``expect`` is given and the latest one is another judgment (a second press of an
        undo button that was drawn for a judgment already taken back)."""
        with closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                row = con.execute(
                    f"SELECT * FROM judgments WHERE session_id = ? AND reviewer = ? AND {_LIVE} "
                    "ORDER BY judgment_id DESC LIMIT 1",
                    (session_id, reviewer.strip()),
                ).fetchone()
                if row is not None and expect is not None and row["judgment_id"] != expect:
                    row = None
                if row is not None:
                    con.execute(
                        "INSERT INTO withdrawals (judgment_id, session_id, reviewer, created_at, via) VALUES (?, ?, ?, ?, ?)",
                        (row["judgment_id"], session_id, reviewer.strip(), utcnow().isoformat(), via),
                    )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return dict(row) if row is not None else None

    def add_first(
        self, session_id: str, pair_ids: Iterable[str], reason: str, source: str | None, via: str = "cli"
    ) -> list[str]:
        """Queue pairs to be graded first (one transaction); the pair ids newly queued (a pair
        already queued keeps its first reason)."""
        added = []
        with closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                for pid in pair_ids:
                    cur = con.execute(
                        "INSERT OR IGNORE INTO first_pairs (session_id, pair_id, reason, source, created_at, via) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (session_id, pid, reason, source, utcnow().isoformat(), via),
                    )
                    if cur.rowcount:
                        added.append(pid)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        return added

    def first(self, session_id: str) -> list[dict[str, Any]]:
        """The pairs queued to be graded first in a session, in the order they were queued."""
        return self._rows("SELECT * FROM first_pairs WHERE session_id = ? ORDER BY first_id", (session_id,))

    def _rows(self, sql: str, params: tuple) -> list[dict[str, Any]]:
        if not check_database(self.path):
            return []
        with closing(self._connect(create=False)) as con:
            return [dict(r) for r in con.execute(sql, params).fetchall()]

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Every judgment of the session in the order given, each with ``withdrawn`` (0 or 1)."""
        return self._rows(
            "SELECT j.*, CAST(j.judgment_id IN (SELECT w.judgment_id FROM withdrawals w) AS INTEGER) AS withdrawn "
            "FROM judgments j WHERE j.session_id = ? ORDER BY j.judgment_id",
            (session_id,),
        )

    def current(self, session_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
        """The latest choice of each reviewer on each pair that no withdrawal takes back."""
        sql = (
            f"SELECT j.* FROM judgments j WHERE j.session_id = ? AND j.{_LIVE} AND j.judgment_id = "
            "(SELECT max(k.judgment_id) FROM judgments k WHERE k.session_id = j.session_id "
            f"AND k.pair_id = j.pair_id AND k.reviewer = j.reviewer AND k.{_LIVE})"
        )
        params: tuple = (session_id,)
        if reviewer is not None:
            sql += " AND j.reviewer = ?"
            params += (reviewer.strip(),)
        return self._rows(sql + " ORDER BY j.judgment_id", params)

    def probes(self, session_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
        sql = (
            "SELECT p.* FROM probes p WHERE p.session_id = ? AND p.probe_id = (SELECT max(q.probe_id) FROM probes q "
            "WHERE q.session_id = p.session_id AND q.pair_id = p.pair_id AND q.reviewer = p.reviewer)"
        )
        params: tuple = (session_id,)
        if reviewer is not None:
            sql += " AND p.reviewer = ?"
            params += (reviewer.strip(),)
        return self._rows(sql + " ORDER BY p.probe_id", params)


# --------------------------------------------------------------------------- status, grading


@dataclass
class SessionStatus(Result):
    """:func:`session_status`: where a session stands."""

    session_id: str
    status: Literal["open", "closed"]
    unblinded: bool
    closed_at: str | None


@dataclass
class SessionInfo(SessionStatus):
    """A session of :func:`sessions_overview`: its status, pair count and provenance."""

    n_pairs: int
    suite_id: str | None
    source: str
    simulated: bool
    created_at: str
    instructions: str  # what the maker tells the graders ("" when nothing)
    created_by: str | None  # who made it (whom a grader tells they are done)


def session_status(store: Store, session_id: str) -> SessionStatus:
    """A session is closed when it was unblinded into this state directory, or when its
    session.json says closed (an imported or demo session); only an unblinded one has results here."""
    m = store.session(session_id).manifest
    p = unblinded_path(store, session_id)
    if p.is_file():
        rec = json.loads(p.read_text(encoding="utf-8"))
        return SessionStatus(session_id, "closed", True, rec.get("closed_at"))
    return SessionStatus(session_id, m.status, False, None)


def sessions_overview(store: Store) -> list[SessionInfo]:
    """Every session with its status and pair count (nothing that depends on the key)."""
    out = []
    for sid in store.ids("session"):
        m = store.session(sid).manifest
        out.append(
            SessionInfo(
                **vars(session_status(store, sid)),
                n_pairs=m.n_pairs,
                suite_id=m.suite_id,
                source=m.source,
                simulated=m.simulated,
                created_at=m.created_at.isoformat(),
                instructions=m.instructions,
                created_by=m.created_by,
            )
        )
    return out


def load_pairs(store: Store, session_id: str) -> list[dict[str, Any]]:
    return store.records(
        "SELECT pair_id, item_id, left_text, right_text, mirror_of, holdout FROM read_parquet(?) ORDER BY pair_id",
        [store.path_of("session", session_id, "pairs")],
    )


def _order_key(session_id: str, reviewer: str, pair_id: str) -> str:
    return hashlib.sha256(f"{session_id}\x00{reviewer.strip()}\x00{pair_id}".encode()).hexdigest()


def reviewer_order(
    pair_ids: Iterable[str],
    session_id: str,
    reviewer: str,
    mirror_of: dict[str, str | None] | None = None,
    first: Iterable[str] = (),
) -> list[str]:
    """The order a reviewer sees the pairs in: fixed per reviewer (so grading resumes where it
    left off), different between reviewers (so no order effect is shared by all). Pairs in
    ``first`` (queued to be graded first: :meth:`JudgmentStore.add_first`) come before the rest,
    each part in the reviewer's order. A mirrored pair that would come within a quarter of the
    session after its original is moved to the end, so that the repeat is not recognised as one."""
    ids = list(pair_ids)
    early = set(first) & set(ids)
    order = sorted(ids, key=lambda p: (p not in early, _order_key(session_id, reviewer, p)))
    if not mirror_of:
        return order
    gap = max(3, len(order) // 4)
    pos = {p: i for i, p in enumerate(order)}
    near = [p for p in order if mirror_of.get(p) in pos and abs(pos[p] - pos[cast(str, mirror_of[p])]) < gap]
    return [p for p in order if p not in set(near)] + near


def _require_open(store: Store, session_id: str) -> None:
    if session_status(store, session_id).status != "open":
        raise InputError(f"session {session_id!r} is closed: it takes no more judgments", field="--session")


def _require_pair(store: Store, session_id: str, pair_id: str, field: str) -> None:
    """Refuse a closed session, or a pair that is not one of its pairs."""
    _require_open(store, session_id)
    ids = {
        p[0] for p in store.sql("SELECT pair_id FROM read_parquet(?)", [store.path_of("session", session_id, "pairs")])
    }
    if pair_id not in ids:
        raise NotFoundError(f"no pair {pair_id!r} in session {session_id!r}", field=field)


def _check_reviewer(reviewer: str | None) -> str:
    if reviewer is None or not str(reviewer).strip():
        raise InputError("a reviewer name is required", field="--reviewer")
    r = " ".join(str(reviewer).split())
    if len(r) > 80:
        raise InputError("a reviewer name is at most 80 characters", field="--reviewer")
    return r


def record_judgment(
    store: Store,
    session_id: str,
    pair_id: str,
    reviewer: str,
    choice: str,
    seconds: float | None = None,
    via: str = "cli",
) -> dict[str, Any]:
    """Append a choice (left, right or same, as shown) on a pair of an open session."""
    reviewer = _check_reviewer(reviewer)
    if choice not in CHOICES:
        raise InputError(f"choice {choice!r} is not one of {', '.join(CHOICES)}", field="--choice")
    _require_pair(store, session_id, pair_id, "--pair")
    if seconds is not None and (not math.isfinite(float(seconds)) or float(seconds) < 0):
        seconds = None
    return JudgmentStore(store).add(session_id, pair_id, reviewer, choice, seconds, via)


def record_probe(
    store: Store,
    session_id: str,
    pair_id: str,
    reviewer: str,
    guess: str,
    seconds: float | None = None,
    via: str = "app",
) -> dict[str, Any]:
    """Append a probe answer: which side the reviewer thinks their arm X wrote (or unsure)."""
    reviewer = _check_reviewer(reviewer)
    if guess not in GUESSES:
        raise InputError(f"guess {guess!r} is not one of {', '.join(GUESSES)}", field="guess")
    _require_pair(store, session_id, pair_id, "pair")
    return JudgmentStore(store).add_probe(session_id, pair_id, reviewer, guess, seconds, via)


@dataclass
class Undone(Result):
    """:func:`undo_judgment`: the judgment taken back."""

    pair_id: str
    choice: str
    judgment_id: int


def undo_judgment(
    store: Store, session_id: str, reviewer: str, via: str = "app", *, judgment_id: int | None = None
) -> Undone | None:
    """Take back the reviewer's latest judgment in an open session (appended as a withdrawal; the
    pair is then theirs to grade again). With ``judgment_id`` (``progress().last_judgment`` when
    the undo was offered), only that judgment is taken back. None when there is nothing (else) to undo."""
    reviewer = _check_reviewer(reviewer)
    _require_open(store, session_id)
    row = JudgmentStore(store).withdraw_last(session_id, reviewer, via, expect=judgment_id)
    return None if row is None else Undone(row["pair_id"], row["choice"], row["judgment_id"])


@dataclass
class Progress(Result):
    """:func:`progress`: where one reviewer stands in a session."""

    session_id: str
    reviewer: str
    total: int
    graded: int
    next_pair: str | None
    probe_pairs: list[str]
    probe_left: list[str]
    can_undo: bool
    last_judgment: int | None
    step: Literal["grade", "probe", "done"]
    schedule: ScheduleProgress  # the session's: the active schedule (no arm named)


def progress(store: Store, session_id: str, reviewer: str) -> Progress:
    """Where one reviewer stands: pairs graded, the next pair in their order (None when done),
    the probe pairs still to answer, whether there is a judgment to undo (and its id), and the step:
    ``"grade"`` while a pair is left, then ``"probe"`` while probe pairs are left (the page
    enters it only on an explicit request), then ``"done"``. Reads no choice but the
    reviewer's own."""
    reviewer = _check_reviewer(reviewer)
    mirror_of = dict(
        store.sql("SELECT pair_id, mirror_of FROM read_parquet(?)", [store.path_of("session", session_id, "pairs")])
    )
    pairs = [{"pair_id": k} for k in mirror_of]
    js = JudgmentStore(store)
    first = [f["pair_id"] for f in js.first(session_id)]
    order = reviewer_order([p["pair_id"] for p in pairs], session_id, reviewer, mirror_of, first)
    mine = js.current(session_id, reviewer)
    done = {j["pair_id"] for j in mine}
    nxt = next((p for p in order if p not in done), None)
    # the probe pairs do not depend on what was queued first
    plain = reviewer_order([p["pair_id"] for p in pairs], session_id, reviewer, mirror_of) if first else order
    originals = [p for p in plain if not mirror_of[p]]
    probe = originals[: min(PROBE_PAIRS, len(originals))]
    probed = {p["pair_id"] for p in js.probes(session_id, reviewer)}
    left = [p for p in probe if p not in probed]
    return Progress(
        session_id,
        reviewer,
        len(order),
        len(done & set(order)),
        nxt,
        probe,
        left,
        bool(mine),
        max((j["judgment_id"] for j in mine), default=None),
        "grade" if nxt is not None else ("probe" if left else "done"),
        session_schedule(store, session_id),
    )


def judged_pairs(store: Store, session_id: str) -> set[str]:
    """The pairs someone has a current choice on (shipped or the state's)."""
    return {r["pair_id"] for r in _people(store, session_id) if r["choice"] is not None}


def session_schedule(store: Store, session_id: str) -> ScheduleProgress:
    """The active schedule's progress on a session (:mod:`evalcore.pairwise.schedulelog`): its
    original, non-holdout pairs judged by anyone, the pairs it queued and their judged share, its
    last run and verdict. Reads no key."""
    originals = [
        r[0]
        for r in store.sql(
            "SELECT pair_id FROM read_parquet(?) WHERE coalesce(mirror_of, '') = '' AND NOT coalesce(holdout, false)",
            [store.path_of("session", session_id, "pairs")],
        )
    ]
    path = JudgmentStore(store).path
    return schedule_progress(path, session_id, originals, lambda: judged_pairs(store, session_id))


@dataclass
class PairView(Result):
    """:func:`pair_view`: one pair as the grader sees it."""

    pair_id: str
    item_id: str
    left_text: str
    right_text: str
    input: str | None


def pair_view(store: Store, session_id: str, pair_id: str) -> PairView:
    """One pair as the grader sees it: the item's input (when the suite is there) and both texts."""
    rows = store.records(
        "SELECT pair_id, item_id, left_text, right_text FROM read_parquet(?) WHERE pair_id = ?",
        [store.path_of("session", session_id, "pairs"), pair_id],
    )
    if not rows:
        raise NotFoundError(f"no pair {pair_id!r} in session {session_id!r}", field="pair")
    p = PairView(**rows[0], input=None)
    m = store.session(session_id).manifest
    if m.suite_id and store.dir_of("suite", m.suite_id).is_dir():
        r = store.sql(
            "SELECT input FROM read_parquet(?) WHERE item_id = ?",
            [store.path_of("suite", m.suite_id, "items"), p.item_id],
        )
        p.input = r[0][0] if r else None
    return p


# --------------------------------------------------------------------------- close


def read_key(keys_dir: Path | str, session_id: str) -> tuple[S.KeyManifest, list[dict], dict | None]:
    """The key of a session from a keys directory: manifest, rows, and the blinding record when
    the session was made by ``pairs make``."""
    d = inside(Path(keys_dir).resolve(), check_id(session_id, "session id"))
    if not d.is_dir():
        raise NotFoundError(f"no key for session {session_id!r} in {Path(keys_dir).resolve()}", field="--keys")
    km = read_json_model(d / "key.json", S.KeyManifest)
    if km.session_id != session_id:
        raise FormatError(f"is the key of session {km.session_id!r}", file=d / "key.json", field="session_id")

    check_parquet(d / "key.parquet", "key")
    rows = pq.read_table(d / "key.parquet").to_pylist()
    record = None
    if (d / BLINDING_FILE).is_file():
        record = json.loads((d / BLINDING_FILE).read_text(encoding="utf-8"))
    return km, rows, record


def close_session(
    store: Store, session_id: str, keys_dir: Path | str, *, n_perm: int = blinding.DEFAULT_PERMUTATIONS
) -> dict:
    """Unblind: check the key against the session and write ``<state>/sessions/<id>/unblinded.json``.
    The data directory is not touched. Refused when the session is already unblinded here."""
    entry = store.session(session_id)
    out = unblinded_path(store, session_id)
    if out.is_file():
        raise InputError(f"session {session_id!r} is already closed and unblinded in {store.state}", field="--session")
    km, rows, record = read_key(keys_dir, session_id)
    pairs = load_pairs(store, session_id)
    arms = list(km.arms)
    if len(arms) < 2:
        raise FormatError(
            f"names {len(arms)} arm(s), a session compares at least two",
            file=Path(keys_dir) / session_id / "key.json",
            field="arms",
        )
    by_id = _checked_key(pairs, rows, arms, Path(keys_dir).resolve() / session_id / "key.parquet")
    if record is not None and record.get("arms") and set(record["arms"]) >= set(arms):
        arms = [a for a in record["arms"] if a in km.arms]
        ident = record.get("identifiability")
    else:
        ident = None
    if ident is None:  # a session not made by `pairs make`: measure the shown texts only
        seed = int(entry.manifest.settings.seed)
        ident = {
            "before": {
                "accuracy": None,
                "reason": "the raw answers were not recorded: this session was not made by `evalcore pairs make`",
            },
            **_shown_identifiability(pairs, by_id, arms, seed, n_perm),
        }
    rec = {
        "schema_version": S.SCHEMA_VERSION,
        "session_id": session_id,
        "closed_at": utcnow().isoformat(),
        "arms": arms,
        "sources": dict(km.arms),
        "key": [by_id[p["pair_id"]] for p in pairs],
        "identifiability": ident,
        "made": {
            k: record[k] for k in ("gen_round", "normalise", "length_match", "words_trimmed", "missing") if k in record
        }
        if record
        else None,
        "judgments_at_close": len(_people(store, session_id)),
    }
    atomic_write_bytes(out, (json.dumps(rec, indent=1, default=str) + "\n").encode("utf-8"))
    return {
        "session_id": session_id,
        "closed": True,
        "unblinded": str(out),
        "arms": arms,
        "pairs": len(pairs),
        "judgments": rec["judgments_at_close"],
    }


def _shown_identifiability(pairs: list[dict], by_id: dict, arms: list[str], seed: int, n_perm: int) -> dict:
    """The identifiability check of the shown texts of a session not made by ``pairs make``: of
    the two arms (``after``); with more arms, of each pair of arms that share at least
    :data:`MIN_IDENTIFIABILITY_PAIRS` original pairs (``by_arm_pair``), ``after`` being the one
    most easily told apart (``most_identifiable``), as ``pairs make`` records many arms."""
    by_arms: dict[frozenset, list[dict]] = {}
    for p in pairs:
        if not p["mirror_of"]:
            k = by_id[p["pair_id"]]
            by_arms.setdefault(frozenset((k["left_arm"], k["right_arm"])), []).append(p)
    checks: list[dict[str, Any]] = []
    for x, a in enumerate(arms):
        for b in arms[x + 1 :]:
            mine = by_arms.get(frozenset((a, b)), [])
            if len(arms) > 2 and len(mine) < MIN_IDENTIFIABILITY_PAIRS:
                continue
            fl = [by_id[p["pair_id"]]["left_arm"] == a for p in mine]
            texts = [(p["left_text"], p["right_text"])[:: 1 if f else -1] for p, f in zip(mine, fl)]  # a's, b's
            if mine and all(
                x == y for x, y in texts
            ):  # an import without texts (`import battles`): nothing shown apart
                after = {
                    "accuracy": None,
                    "reason": "both sides show the same text in every pair: nothing to tell apart",
                }
            else:
                after = arm_identifiability(texts, fl, [a, b], seed=seed, n_perm=n_perm)
            checks.append({"arms": [a, b], "pairs": len(mine), "after": after})
    if len(arms) == 2:
        return {"after": checks[0]["after"]}
    if not checks:
        return {"after": {"accuracy": None, "reason": f"no two arms share {MIN_IDENTIFIABILITY_PAIRS} pairs"}}
    worst = max(checks, key=lambda c: (bool(c["after"].get("identifiable")), c["after"].get("accuracy") or 0.0))
    return {"after": worst["after"], "most_identifiable": worst["arms"], "by_arm_pair": checks}


def close_imported(store: Store, session_id: str, keys_dir: Path | str) -> tuple[str | None, str | None]:
    """Unblind a session an import wrote as closed into this state directory at once, so that
    ``pairs report`` reads it without ``pairs close`` (issue 40; of any number of arms since issue
    43: PandaLM's five): (the path of its unblinded record, None) or (None, why not): this state
    directory already holds a record of that session id (another data directory's session of the
    same name: it is left as it is)."""
    if unblinded_path(store, session_id).is_file():
        return None, (
            f"{store.state} already holds an unblinded record of a session {session_id!r} (another data "
            f"directory's?): left as it is; `pairs close` with another --state unblinds it"
        )
    return str(close_session(store, session_id, keys_dir)["unblinded"]), None


def _checked_key(pairs: list[dict], rows: list[dict], arms: list[str], kfile: Path) -> dict[str, dict]:
    """The key's rows by pair id, refused unless they are the session's pairs, each two distinct
    arms of the key's (one of each of two arms), and every mirror swaps the arms of its original."""
    by_id = {r["pair_id"]: r for r in rows}
    for p in pairs:
        k = by_id.get(p["pair_id"])
        if k is None:
            raise FormatError(f"has no row for pair {p['pair_id']!r} of the session", file=kfile, field="pair_id")
        if k["left_arm"] == k["right_arm"]:
            raise FormatError(
                f"pair {p['pair_id']!r} is not one of each arm: it names {k['left_arm']!r} on both sides",
                file=kfile,
                field="right_arm",
            )
        if len(arms) == 2 and {k["left_arm"], k["right_arm"]} != set(arms):
            raise FormatError(
                f"pair {p['pair_id']!r} is not one of each arm ({k['left_arm']!r}, {k['right_arm']!r})",
                file=kfile,
                field="left_arm",
            )
        for side in ("left_arm", "right_arm"):
            if k[side] not in arms:
                raise FormatError(
                    f"pair {p['pair_id']!r} names arm {k[side]!r}, which is not one of key.json's arms "
                    f"({', '.join(arms)})",
                    file=kfile,
                    field=side,
                )
    extra = set(by_id) - {p["pair_id"] for p in pairs}
    if extra:
        raise FormatError(
            f"has {len(extra)} pair(s) the session does not (e.g. {sorted(extra)[0]!r})", file=kfile, field="pair_id"
        )
    by_pair = {p["pair_id"]: p for p in pairs}
    for p in pairs:  # a mirror repeats its original with the arms swapped
        if p["mirror_of"]:
            o, k = by_id[p["mirror_of"]], by_id[p["pair_id"]]
            if (o["left_arm"], o["right_arm"]) != (k["right_arm"], k["left_arm"]) or p["mirror_of"] not in by_pair:
                raise FormatError(
                    f"mirror {p['pair_id']!r} does not swap the arms of {p['mirror_of']!r}",
                    file=kfile,
                    field="left_arm",
                )
    return by_id


def unblinded(store: Store, session_id: str) -> dict:
    """The unblinded record, or SessionOpenError while there is none in this state directory."""
    st = session_status(store, session_id)
    if not st.unblinded:
        if st.status == "open":
            raise SessionOpenError(
                f"session {session_id!r} is open: results are shown only after "
                f"`evalcore pairs close --session {session_id} --keys DIR`",
                field="--session",
            )
        raise SessionOpenError(
            f"session {session_id!r} is closed but not unblinded in this state directory: run "
            f"`evalcore pairs close --session {session_id} --keys DIR`",
            field="--session",
        )
    return json.loads(unblinded_path(store, session_id).read_text(encoding="utf-8"))


def people_choices(store: Store, session_id: str) -> dict[str, list[str]]:
    """pair -> people's current choices on it, as shown (shipped and the app's: :func:`_people`)."""
    out: dict[str, list[str]] = {}
    for r in _people(store, session_id):
        if r["choice"] is not None:
            out.setdefault(r["pair_id"], []).append(r["choice"])
    return out


def _people(store: Store, session_id: str) -> list[dict]:
    """Shipped judgments (the data) and the state's current ones; a state judgment by the same
    reviewer on the same pair replaces a shipped one."""
    e = store.session(session_id)
    rows: dict[tuple[str, str], dict] = {}
    if (e.path / "judgments.parquet").exists():
        for r in store.records(
            "SELECT pair_id, reviewer, choice, seconds FROM read_parquet(?)", [str(e.path / "judgments.parquet")]
        ):
            rows[(r["pair_id"], r["reviewer"])] = {**r, "source": "shipped"}
    for r in JudgmentStore(store).current(session_id):
        rows[(r["pair_id"], r["reviewer"])] = {
            "pair_id": r["pair_id"],
            "reviewer": r["reviewer"],
            "choice": r["choice"],
            "seconds": r["seconds"],
            "source": "state",
        }
    return sorted(rows.values(), key=lambda r: (r["pair_id"], r["reviewer"]))
