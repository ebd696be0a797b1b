"""A domain expert's sign-off on gold (article 004: "expert sign-off is still outstanding").

Gold decided in the review queue (:mod:`evalcore.storage.gold`) is somebody's call; an expert's
sign-off says a person who knows the domain has read it and stands by it. Each gold case (a
generation's item, round and criterion) is signed off or not yet: ``signoffs`` is an append-only
table in the label store's database (SQLite in the state directory or PostgreSQL, the same one
the label store uses), one row per act (``signed`` or ``revoked``, by whom, when, an optional
note); a case's state is its latest act. The table is created on first use with idempotent DDL in
both dialects, as the ledger's is (no earlier schema to migrate from).

Who may sign off: one of :data:`SIGNERS` (the adjudicator and admin roles, those that settle gold;
:func:`evalcore.storage.roles.acting`, read again at the moment of the write). There is no
``expert`` role in the roles file: the name recorded is the person's, and the roles file says who
may sign."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore.contract.results import Result
from evalcore.errors import InputError, LabelError
from evalcore.storage.db import Database, append_only_schema, connect
from evalcore.storage.gold import gold
from evalcore.storage.integrity import check_database
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import utcnow
from evalcore.storage.roles import acting

#: the roles that may sign gold off
SIGNERS = ("adjudicator", "admin")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS signoffs (
    signoff_id  INTEGER PRIMARY KEY AUTOINCREMENT,
    gen_id      TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    gen_round   INTEGER NOT NULL,
    criterion   TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('signed', 'revoked')),
    expert      TEXT NOT NULL CHECK (length(trim(expert)) > 0),
    note        TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS signoffs_key ON signoffs (gen_id, item_id, gen_round, criterion, signoff_id);
CREATE TRIGGER IF NOT EXISTS signoffs_no_update BEFORE UPDATE ON signoffs
BEGIN SELECT RAISE(ABORT, 'sign-offs are append-only: revoke instead'); END;
CREATE TRIGGER IF NOT EXISTS signoffs_no_delete BEFORE DELETE ON signoffs
BEGIN SELECT RAISE(ABORT, 'sign-offs are append-only: revoke instead'); END;
"""
_DDL, _OBJECTS = append_only_schema(_SCHEMA, {"signoffs": "sign-offs are append-only: revoke instead"})
Key = tuple[str, str, int, str]


@dataclass
class SignOff(Result):
    """One gold case's sign-off act."""

    gen_id: str
    item_id: str
    gen_round: int
    criterion: str
    action: str
    expert: str
    note: str | None
    signed_at: str


def _con(labels: LabelStore) -> Database:
    con = connect(labels.url or labels.path, lock="labels")
    try:
        con.ensure(_DDL[con.dialect], _OBJECTS[con.dialect])
    except BaseException:
        con.close()
        raise
    return con


def current(labels: LabelStore, gen_id: str | None = None) -> dict[Key, SignOff]:
    """Each gold case's latest sign-off act that is ``signed`` (a revoked one is absent)."""
    if labels.url is None and not check_database(labels.path):
        return {}
    con = _con(labels)
    try:
        rows = con.execute(
            "SELECT s.* FROM signoffs s WHERE s.signoff_id = (SELECT max(t.signoff_id) FROM signoffs t "
            "WHERE t.gen_id = s.gen_id AND t.item_id = s.item_id AND t.gen_round = s.gen_round "
            "AND t.criterion = s.criterion)"
            + (" AND s.gen_id = ?" if gen_id is not None else "")
            + " ORDER BY s.signoff_id",
            (gen_id,) if gen_id is not None else (),
        ).fetchall()
    finally:
        con.close()
    out = {}
    for r in rows:
        if r["action"] == "signed":
            k = (r["gen_id"], r["item_id"], int(r["gen_round"]), r["criterion"])
            out[k] = SignOff(*k, r["action"], r["expert"], r["note"], r["created_at"])
    return out


def sign_off(
    labels: LabelStore,
    gen_id: str,
    item_ids: list[str],
    *,
    by: str = "",
    claims: Mapping[str, Any] | None = None,
    criterion: str | None = None,
    gen_round: int | None = None,
    revoke: bool = False,
    note: str | None = None,
) -> list[SignOff]:
    """Sign off (or, with ``revoke``, take back the sign-off of) the gold of these items on a
    generation: every gold case of each item, or only ``criterion`` / ``gen_round``. Refused in one
    line, with nothing written, when the signer lacks a role of :data:`SIGNERS`, an item has no
    such gold, or (revoking) it is not signed off."""
    if not by.strip() and claims is None:
        raise LabelError("who signs off is required", field="--by")
    who = acting(labels.store.state, *SIGNERS, name=by.strip(), claims=claims).name
    if not item_ids:
        raise InputError("name at least one item", field="--item")
    signed = current(labels, gen_id)
    keys: list[Key] = []
    for item in dict.fromkeys(item_ids):
        cases = [
            (g["gen_id"], g["item_id"], int(g["gen_round"]), g["criterion"])
            for g in gold(labels, gen_id, item_id=item)
            if g["status"] == "gold"
            and (criterion is None or g["criterion"] == criterion)
            and (gen_round is None or g["gen_round"] == gen_round)
        ]
        if revoke:
            cases = [k for k in cases if k in signed]
        if not cases:
            what = "signed-off gold" if revoke else "gold"
            on = f" on {criterion}" if criterion else ""
            raise InputError(
                f"item {item!r} has no {what}{on} on generation {gen_id!r} to {'revoke' if revoke else 'sign off'}",
                field="--item",
            )
        keys += cases
    at, action = utcnow().isoformat(), "revoked" if revoke else "signed"
    con = _con(labels)
    try:
        con.begin()
        try:
            con.executemany(
                "INSERT INTO signoffs (gen_id, item_id, gen_round, criterion, action, expert, note, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*k, action, who, note, at) for k in keys],
            )
            con.commit()
        except BaseException:
            con.rollback()
            raise
    finally:
        con.close()
    return [SignOff(*k, action, who, note, at) for k in keys]
