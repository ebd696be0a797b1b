"""The stored report of a closed session of more than two arms (issue 43): computed once, read after.

A closed session's ranking (:func:`evalcore.pairwise.ranking.ranking_report`: Bradley-Terry with
bootstrap intervals for people's majority, each person and each model grader) costs seconds of CPU,
and its figures change only when its inputs do. :func:`ranking` returns the report stored in
``<state>/sessions/<id>/report.json`` when the stamp stored with it equals its inputs' stamp now
(:func:`stamp`), and otherwise computes it and stores it again (atomically: a temporary file renamed
over the old one). A file that is stale, unreadable or not a report is recomputed, never trusted.
:func:`refresh` computes and stores it at once (the close's step, so a page's first request reads it).

The stamp names every input of the ranking: the unblinded record's content hash, the session's
files (its manifest, pairs and shipped judgments: content hashes), people's judgments in the state
(count and last id of judgments and of withdrawals), each model grader run of the session (its id,
its manifest's and its pair verdicts' content hashes), the seed, and this module's
:data:`STORE_VERSION` with evalcore's version (a new release recomputes). A session of two arms is
not stored (:func:`evalcore.pairwise.results.report` computes its report each time).
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from evalcore.contract.results import plain
from evalcore.errors import FormatError
from evalcore.pairwise.grading import JudgmentStore, load_pairs, unblinded
from evalcore.pairwise.ranking import RankingReport, grader_runs, ranking_report
from evalcore.storage.files import atomic_write_bytes
from evalcore.storage.paths import check_id, inside
from evalcore.storage.seal import unblinded_path
from evalcore.storage.store import Store

#: the stored report's file in the session's state directory
REPORT_FILE = "report.json"
#: bumped when the stored file's layout or the ranking's figures change meaning
STORE_VERSION = 1


def report_path(store: Store, session_id: str) -> Path:
    """``<state>/sessions/<id>/report.json``."""
    check_id(session_id, "session id")
    return inside(Path(store.state), "sessions", session_id, REPORT_FILE)


def _sha(path: Path) -> str | None:
    """The file's sha256, None when there is none."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _evalcore_version() -> str:
    try:
        return version("evalcore")
    except PackageNotFoundError:
        return "unknown"


def _judgment_marks(store: Store, session_id: str) -> dict[str, Any]:
    """People's judgments in the state: count and last id of the session's judgments and withdrawals."""
    js = JudgmentStore(store)
    rows = js._rows(
        "SELECT (SELECT count(*) FROM judgments WHERE session_id = ?) AS judgments, "
        "(SELECT max(judgment_id) FROM judgments WHERE session_id = ?) AS last_judgment, "
        "(SELECT count(*) FROM withdrawals WHERE session_id = ?) AS withdrawals, "
        "(SELECT max(withdrawal_id) FROM withdrawals WHERE session_id = ?) AS last_withdrawal",
        (session_id,) * 4,
    )
    return rows[0] if rows else {"judgments": 0, "last_judgment": None, "withdrawals": 0, "last_withdrawal": None}


def stamp(store: Store, session_id: str, *, seed: int = 0) -> dict[str, Any]:
    """Every input of the session's ranking, as a JSON object that changes when one of them does."""
    e = store.session(session_id)
    graders = []
    for rid in grader_runs(store, session_id):
        r = store.run(rid)
        graders.append(
            {
                "run_id": rid,
                "manifest": _sha(r.path / "manifest.json"),
                "pair_verdicts": _sha(r.path / "pair_verdicts.parquet"),
            }
        )
    return {
        "store_version": STORE_VERSION,
        "evalcore": _evalcore_version(),
        "seed": seed,
        "unblinded": _sha(unblinded_path(store, session_id)),
        "session_manifest": hashlib.sha256(e.manifest.model_dump_json().encode("utf-8")).hexdigest(),
        "session": {p.name: _sha(p) for p in sorted(e.path.iterdir()) if p.is_file()} if e.path.is_dir() else None,
        "people": _judgment_marks(store, session_id),
        "graders": graders,
    }


_ADAPTER: TypeAdapter[RankingReport] = TypeAdapter(RankingReport)


def load(store: Store, session_id: str, want: dict[str, Any]) -> RankingReport | None:
    """The stored report when its stamp equals ``want``; None when there is none, it is stale, or
    the file is not a whole stored report (it is then recomputed by the caller)."""
    try:
        doc = json.loads(report_path(store, session_id).read_text(encoding="utf-8"))
    except (FileNotFoundError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("stamp") != want:
        return None
    try:
        return _ADAPTER.validate_python(doc.get("report"))
    except ValidationError:
        return None


def save(store: Store, session_id: str, r: RankingReport, st: dict[str, Any]) -> Path:
    """Write the report with its stamp (temporary file renamed over the old one). A figure that is
    not a number (a length regression on separated data) is written as ``NaN``, which Python's
    json reads back."""
    path = report_path(store, session_id)
    doc = {"stamp": st, "report": plain(r)}
    atomic_write_bytes(path, (json.dumps(doc, indent=1, default=str) + "\n").encode("utf-8"))
    return path


def checked_record(store: Store, session_id: str) -> dict:
    """The unblinded record (refused while the session is open), refused when its key lacks a pair
    of the session (the session changed after it was closed)."""
    rec = unblinded(store, session_id)
    key_ids = {k["pair_id"] for k in rec["key"]}
    missing = {p["pair_id"] for p in load_pairs(store, session_id)} - key_ids
    if missing:
        raise FormatError(
            f"the unblinded key lacks {len(missing)} pair(s) of the session (the session changed after it was closed)",
            file=unblinded_path(store, session_id),
            field="key",
        )
    return rec


def ranking(store: Store, session_id: str, rec: dict, *, seed: int = 0) -> RankingReport:
    """The session's ranking: the stored one when its stamp is current, else computed and stored."""
    want = stamp(store, session_id, seed=seed)
    got = load(store, session_id, want)
    if got is not None:
        return got
    r = ranking_report(store, session_id, rec, seed=seed)
    try:
        save(store, session_id, r, want)
    except OSError:  # a state directory that cannot be written: the report is computed each time
        pass
    return r


def refresh(store: Store, session_id: str, *, seed: int = 0) -> RankingReport | None:
    """Compute and store the ranking of a closed session of more than two arms now (after
    ``pairs close``), whatever is stored; None for a session of two arms (not stored)."""
    rec = checked_record(store, session_id)
    if len(rec["arms"]) <= 2:
        return None
    want = stamp(store, session_id, seed=seed)
    r = ranking_report(store, session_id, rec, seed=seed)
    save(store, session_id, r, want)
    return r
