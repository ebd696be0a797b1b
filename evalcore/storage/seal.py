"""Sealing: the answers of an open pairwise session's arms are not shown while it is open.

A blinded session shows graders the two arms' answers, normalised, with the sides drawn at
random. Whoever can read the arms' own answers elsewhere can match them to the shown texts and
unblind every pair: the texts *are* those answers, so no transform that keeps them readable keeps
them unmatchable. So while a session is open, the generations it pairs (recorded in its
session.json as ``sealed``: a hash of the session id and the generation id per arm, so the file
names no arm) are sealed: every reader of evalcore that returns an answer's text
(:func:`evalcore.analysis.answers` drill-downs, an answer's detail, a review case, a judge's dry
run) gives :func:`withheld_text` in its place, for everyone (the results are cached and shared
across the app's users, so there is no per-viewer exception), and nothing gives an answer's size
either: a dry run's token estimates and the hive export's sizes, costs and latencies are withheld
(:data:`SIZE_COLUMNS`), and a judge run that would send and measure the answers is refused
(:func:`refuse_sealed`). Counts, verdicts and figures over a run are unchanged.
Closing the session (``evalcore pairs close``, which needs the key) lifts the seal. The files
themselves stay where they are: the data directory is the operator's (docs/PAIRWISE.md says who
should be able to read it while a session is open).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.errors import InputError
from evalcore.storage.paths import check_id, inside

if TYPE_CHECKING:
    from evalcore.storage.store import Store


def seal_hash(session_id: str, gen_id: str) -> str:
    """How session.json names a sealed generation: 32 hex digits of sha256('<session>:<gen>')."""
    return hashlib.sha256(f"{session_id}:{gen_id}".encode()).hexdigest()[:32]


UNBLINDED_FILE = "unblinded.json"


def unblinded_path(store: Store, session_id: str) -> Path:
    """Where closing a session writes its unblinded key: ``<state>/sessions/<id>/unblinded.json``
    (a session with this file is closed in this state directory)."""
    check_id(session_id, "session id")
    return inside(Path(store.state), "sessions", session_id, UNBLINDED_FILE)


def _open_seals(store: Store) -> list[tuple[str, list[str]]]:
    """(session id, its ``sealed`` hashes) of every session that is open: its session.json says so
    and it was not closed (unblinded) into this state directory."""
    out = []
    for sid in store.ids("session"):
        m = store.session(sid).manifest
        if m.status == "open" and m.sealed and not unblinded_path(store, sid).is_file():
            out.append((sid, m.sealed))
    return out


def sealed_by(store: Store, gen_id: str) -> str | None:
    """The open session sealing generation ``gen_id`` (the first in id order), or None."""
    return next((sid for sid, hashes in _open_seals(store) if seal_hash(sid, gen_id) in hashes), None)


def sealed_generations(store: Store) -> dict[str, str]:
    """Every sealed generation id -> the open session sealing it (as :func:`sealed_by`)."""
    seals = _open_seals(store)
    if not seals:
        return {}
    out: dict[str, str] = {}
    for gid in store.ids("generation"):
        sid = next((sid for sid, hashes in seals if seal_hash(sid, gid) in hashes), None)
        if sid is not None:
            out[gid] = sid
    return out


def withheld_text(session_id: str) -> str:
    """What an answer's text reads as while its generation is sealed."""
    return (
        f"(withheld: this answer is an arm of the open pairwise session {session_id}, shown again once the "
        "session is closed)"
    )


def withhold(store: Store, gen_id: str, rows: list[dict], key: str = "output") -> list[dict]:
    """``rows`` with ``key`` replaced by :func:`withheld_text` (and ``withheld`` set to the session)
    when ``gen_id`` is sealed; unchanged otherwise."""
    sid = sealed_by(store, gen_id)
    if sid is None:
        return rows
    return [{**r, key: withheld_text(sid), "withheld": sid} for r in rows]


#: The columns of outputs.parquet and calls.parquet that measure one answer (its tokens, and the
#: cost and latency that follow from them): null wherever the answer's text is withheld.
SIZE_COLUMNS = {"tokens_in": "BIGINT", "tokens_out": "BIGINT", "cost_usd": "DOUBLE", "latency_ms": "DOUBLE"}


def refuse_sealed(store: Store, gen_id: str, doing: str, field: str) -> None:
    """One line, when ``gen_id`` is sealed: ``doing`` (e.g. "judging it") would send or show its
    answers, so it waits for the session to close."""
    sid = sealed_by(store, gen_id)
    if sid is not None:
        raise InputError(
            f"generation {gen_id} is an arm of the open pairwise session {sid}: {doing} would send and measure "
            f"its sealed answers; it can once the session is closed (evalcore pairs close --session {sid})",
            field=field,
        )
