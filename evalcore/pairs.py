"""Blinded pairwise sessions: make, grade, close (unblind), report.

The life of a session
---------------------
1. **make** (:func:`plan_session` + :func:`write_plan`, ``evalcore pairs make``): two arms'
   answers are paired by item, normalised (:mod:`evalcore.blinding`), optionally length-matched,
   and each pair gets a random id and a side per arm. ``sessions/<id>/pairs.parquet`` and
   ``session.json`` go to the data directory with no arm name anywhere; the key (which arm is on
   which side) goes to ``<keys>/<id>/`` (key.json, key.parquet and blinding.json, the record of
   the transform and of the identifiability check), which is never inside the data or the state
   directory. Before anything is written the identifiability check runs on the shown texts and
   a warning says when the arms can be told apart.
2. **grade** (:class:`JudgmentStore`, the Pairwise grading page, ``evalcore pairs label``):
   people's choices (left, right, same) are appended to ``<state>/pairs.sqlite`` (SQLite in WAL
   mode, append-only, like the label store); so are the answers of the optional identification
   probe. Nothing that depends on the key exists yet, so nothing can show a result.
3. **close** (:func:`close_session`, ``evalcore pairs close --keys DIR``): the one step that
   reads the key. It checks the key against the session and writes the unblinded record to
   ``<state>/sessions/<id>/unblinded.json``; from then on the session is closed and takes no
   more judgments.
4. **report** (:func:`report`, ``evalcore pairs report``, the Pairwise results page): refused
   until the session is closed here.

The app is never given a keys directory: its pages call :func:`session_status`,
:func:`record_judgment`, :func:`next_pair` and :func:`report`, which read only the data and the
state directories.

Sides and seeds
---------------
Two seeds make the transform reproducible without making it guessable. ``seed`` (recorded in
session.json) draws the pair ids, the holdout and mirrored pairs and the row order: none of that
depends on the arms. The sides are drawn from ``seed`` together with a ``key_seed`` that is
recorded in the key directory only (drawn at random unless given), so that nobody holding the
data and this code can redraw the sides. Exactly half of the original pairs (one more or less
for an odd count) have the first arm on the left, in a random arrangement; a mirrored pair
repeats an original with the sides swapped.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
import secrets
import shutil
import sqlite3
import zlib
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow.parquet as pq
from scipy import stats as _st

from . import blinding
from . import schema as S
from .errors import FormatError, InputError, NotFoundError, PathEscapeError
from .store import Store, atomic_write_bytes, check_id, inside, open_state_db, read_json_model, utcnow, writable_state

DB_NAME = "pairs.sqlite"
PAIRS_DB_VERSION = 1
BLINDING_FILE = "blinding.json"
UNBLINDED_FILE = "unblinded.json"
CHOICES = ("left", "right", "same")
GUESSES = ("left", "right", "unsure")
PROBE_PAIRS = 8
ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
FILE_TEXT_COLUMNS = ("output", "text", "answer", "response")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judgments (
    judgment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    pair_id     TEXT NOT NULL,
    reviewer    TEXT NOT NULL CHECK (length(trim(reviewer)) > 0),
    choice      TEXT NOT NULL CHECK (choice IN ('left', 'right', 'same')),
    seconds     REAL,
    created_at  TEXT NOT NULL,
    via         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_key ON judgments (session_id, reviewer, pair_id);
CREATE TABLE IF NOT EXISTS probes (
    probe_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    pair_id     TEXT NOT NULL,
    reviewer    TEXT NOT NULL CHECK (length(trim(reviewer)) > 0),
    guess       TEXT NOT NULL CHECK (guess IN ('left', 'right', 'unsure')),
    seconds     REAL,
    created_at  TEXT NOT NULL,
    via         TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS judgments_no_update BEFORE UPDATE ON judgments
BEGIN SELECT RAISE(ABORT, 'pair judgments are append-only'); END;
CREATE TRIGGER IF NOT EXISTS judgments_no_delete BEFORE DELETE ON judgments
BEGIN SELECT RAISE(ABORT, 'pair judgments are append-only'); END;
CREATE TRIGGER IF NOT EXISTS probes_no_update BEFORE UPDATE ON probes
BEGIN SELECT RAISE(ABORT, 'probe answers are append-only'); END;
CREATE TRIGGER IF NOT EXISTS probes_no_delete BEFORE DELETE ON probes
BEGIN SELECT RAISE(ABORT, 'probe answers are append-only'); END;
"""


class SessionOpenError(InputError):
    """A result was asked for while the session is open (or not unblinded here)."""


# --------------------------------------------------------------------------- arms


@dataclass
class Arm:
    """One arm's answers: ``texts`` maps item id -> the raw answer (before normalisation)."""

    name: str
    source: str
    texts: dict[str, str]
    suite_id: str | None = None
    unusable: list[str] = field(default_factory=list)  # items whose answer errored or is empty


def parse_arm(spec: str) -> tuple[str, str]:
    """``NAME=GEN_OR_FILE`` -> (name, value)."""
    name, sep, value = spec.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise InputError(f"{spec!r} is not NAME=GENERATION_OR_FILE", field="--arm")
    return name.strip(), value.strip()


def _read_file_rows(path: Path) -> list[dict[str, Any]]:
    ext = path.suffix.lower()
    try:
        if ext in (".csv", ".tsv"):
            with path.open(newline="", encoding="utf-8") as f:
                return list(csv.DictReader(f, delimiter="\t" if ext == ".tsv" else ","))
        if ext in (".jsonl", ".ndjson"):
            rows = []
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    obj = json.loads(line)
                    if not isinstance(obj, dict):
                        raise FormatError(f"line {n} is not a JSON object", file=path, field="row")
                    rows.append(obj)
            return rows
        if ext == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
                raise FormatError("must be a JSON list of objects", file=path, field="rows")
            return data
        if ext in (".parquet", ".pq"):
            return pq.read_table(path).to_pylist()
    except (UnicodeDecodeError, json.JSONDecodeError, csv.Error) as e:
        raise FormatError(f"cannot be read: {e}", file=path, field="file") from None
    except OSError as e:
        raise FormatError(f"cannot be read: {e}", file=path, field="file") from None
    raise InputError(f"unknown file type {ext!r} (csv, tsv, jsonl, json, parquet)", file=path, field="--arm")


def load_arm(store: Store, name: str, value: str, gen_round: int = 1) -> Arm:
    """An arm from a generation id in the data directory (its answers of ``gen_round``) or from a
    file (csv, tsv, jsonl, json or parquet with columns item_id and output)."""
    if S.is_valid_id(value) and store.dir_of("generation", value).is_dir():
        g = store.generation(value)
        rows = store.records("SELECT item_id, output, error FROM read_parquet(?) WHERE round = ? ORDER BY item_id",
                             [store.path_of("generation", value, "outputs"), int(gen_round)])
        if not rows:
            raise InputError(f"generation {value!r} has no answers in round {gen_round}", field="--round")
        texts, bad = {}, []
        for r in rows:
            if r["error"] is not None or r["output"] is None or not str(r["output"]).strip():
                bad.append(r["item_id"])
            else:
                texts[r["item_id"]] = str(r["output"])
        return Arm(name, value, texts, g.manifest.suite_id, bad)
    path = Path(value).expanduser()
    if not path.is_file():
        raise NotFoundError(f"{value!r} is neither a generation in {store.data} nor a file", field="--arm")
    rows = _read_file_rows(path)
    if not rows:
        raise InputError("has no rows", file=path, field="--arm")
    cols = set(rows[0])
    text_col = next((c for c in FILE_TEXT_COLUMNS if c in cols), None)
    if "item_id" not in cols or text_col is None:
        raise FormatError(f"needs columns item_id and one of {', '.join(FILE_TEXT_COLUMNS)}", file=path,
                          field="columns")
    texts, bad = {}, []
    for n, r in enumerate(rows, 1):
        iid = r.get("item_id")
        if iid is None or not str(iid).strip():
            raise FormatError(f"row {n} has no item_id", file=path, field="item_id")
        iid = str(iid)
        if iid in texts or iid in bad:
            raise FormatError(f"item {iid!r} appears twice (row {n})", file=path, field="item_id")
        t = r.get(text_col)
        if t is None or not str(t).strip():
            bad.append(iid)
        else:
            texts[iid] = str(t)
    return Arm(name, str(path.resolve()), texts, None, bad)


# --------------------------------------------------------------------------- make


@dataclass
class SessionPlan:
    """Everything ``pairs make`` writes, computed before anything is written."""

    manifest: S.SessionManifest
    pairs: list[dict]
    key_manifest: S.KeyManifest
    key_rows: list[dict]
    blinding: dict
    summary: dict
    warnings: list[str]


def _new_ids(rng: np.random.Generator, n: int) -> list[str]:
    used: set[str] = set()
    out = []
    while len(out) < n:
        pid = "p-" + "".join(ID_ALPHABET[i] for i in rng.integers(0, len(ID_ALPHABET), 12))
        if pid not in used:
            used.add(pid)
            out.append(pid)
    return out


def _mentions(haystack: str, needle: str) -> bool:
    return needle.lower() in haystack.lower()


def _names_word(haystack: str, name: str) -> bool:
    """The arm name as a word of its own in a text a grader reads (names under 3 characters,
    such as "a" or "x", would be found everywhere and are not looked for)."""
    if len(name) < 3:
        return False
    return re.search(rf"(?<![0-9A-Za-z]){re.escape(name)}(?![0-9A-Za-z])", haystack, flags=re.IGNORECASE) is not None


def balanced_sides(rng: np.random.Generator, n: int) -> np.ndarray:
    """n booleans, ``True`` = the first arm on the left: exactly half True (the odd one out a
    coin), in a random arrangement."""
    v = np.zeros(n, dtype=bool)
    v[: n // 2] = True
    if n % 2:
        v[n // 2] = bool(rng.random() < 0.5)
    return rng.permutation(v)


def plan_session(session_id: str, arms: Sequence[Arm], *, normalise: Iterable[str] = blinding.NORMALISATIONS,
                 length_match: bool = False, mirror: float = 0.0, holdout: int = 0, seed: int | None = None,
                 key_seed: int | None = None, gen_round: int = 1, created_at: datetime | None = None,
                 source: str = "made", simulated: bool = False, n_perm: int = blinding.DEFAULT_PERMUTATIONS,
                 suite_id: str | None = None) -> SessionPlan:
    """Pair two arms by item, normalise, draw sides, run the identifiability check. Pure: nothing
    is written (see :func:`write_plan`)."""
    check_id(session_id, "session id")
    if len(arms) != 2:
        raise InputError(f"a session compares two arms, got {len(arms)}", field="--arm")
    a0, a1 = arms
    if a0.name == a1.name:
        raise InputError(f"both arms are called {a0.name!r}", field="--arm")
    for a in arms:
        if _mentions(session_id, a.name):
            raise InputError(f"session id {session_id!r} names one of the arms: a blinded session must not",
                             field="--session")
    try:
        steps = blinding.check_steps(normalise)
    except ValueError as e:
        raise InputError(str(e), field="--normalise") from None
    if not 0.0 <= float(mirror) <= 1.0:
        raise InputError(f"mirror fraction {mirror} is not between 0 and 1", field="--mirror")
    suites = {a.suite_id for a in arms if a.suite_id}
    if len(suites) > 1:
        raise InputError(f"the arms answer different suites ({', '.join(sorted(suites))})", field="--arm")
    suite_id = suite_id or (suites.pop() if suites else None)
    items = sorted(set(a0.texts) & set(a1.texts))
    if not items:
        raise InputError("the two arms have no item in common", field="--arm")
    n = len(items)
    holdout = int(holdout)
    if not 0 <= holdout < n:
        raise InputError(f"--holdout {holdout} must leave at least one of the {n} pairs in the headline",
                         field="--holdout")
    seed = int(seed) if seed is not None else secrets.randbelow(2 ** 31)
    key_seed = int(key_seed) if key_seed is not None else secrets.randbits(62)
    created_at = created_at or utcnow()
    tag = zlib.crc32(session_id.encode("utf-8"))
    pub = np.random.default_rng([seed, tag, 0x5E55])
    sides = balanced_sides(np.random.default_rng([seed, key_seed, tag, 0x51DE]), n)

    missing = {}
    for pos, (a, other) in enumerate(((a0, a1), (a1, a0))):
        lacking = sorted((set(other.texts) - set(a.texts)) | set(a.unusable))
        missing[pos] = lacking
    raw = [(a0.texts[i], a1.texts[i]) for i in items]
    shown_arm = [(blinding.normalise(x, steps), blinding.normalise(y, steps)) for x, y in raw]
    trimmed_words = [0, 0]
    if length_match:
        matched = []
        for x, y in shown_arm:
            mx, my = blinding.length_match(x, y)
            trimmed_words[0] += blinding.word_count(x) - blinding.word_count(mx)
            trimmed_words[1] += blinding.word_count(y) - blinding.word_count(my)
            matched.append((mx, my))
        shown_arm = matched

    n_mirror = min(int(round(float(mirror) * n)), n - holdout)
    all_ids = _new_ids(pub, n + n_mirror)
    ids, mirror_ids = all_ids[:n], all_ids[n:]
    held = np.zeros(n, dtype=bool)
    if holdout:
        held[pub.choice(n, holdout, replace=False)] = True
    candidates = np.flatnonzero(~held)
    mirrored = sorted(pub.choice(candidates, n_mirror, replace=False).tolist()) if n_mirror else []

    pairs, key = [], []
    names = (a0.name, a1.name)
    for k, iid in enumerate(items):
        first_left = bool(sides[k])
        x, y = shown_arm[k]
        left, right = (x, y) if first_left else (y, x)
        la, ra = (names if first_left else names[::-1])
        pairs.append({"pair_id": ids[k], "item_id": iid, "left_text": left, "right_text": right,
                      "mirror_of": None, "holdout": bool(held[k])})
        key.append({"pair_id": ids[k], "left_arm": la, "right_arm": ra})
    for m, k in zip(mirror_ids, mirrored):
        p, kk = pairs[k], key[k]
        pairs.append({"pair_id": m, "item_id": p["item_id"], "left_text": p["right_text"],
                      "right_text": p["left_text"], "mirror_of": p["pair_id"], "holdout": False})
        key.append({"pair_id": m, "left_arm": kk["right_arm"], "right_arm": kk["left_arm"]})
    pairs.sort(key=lambda r: r["pair_id"])
    key.sort(key=lambda r: r["pair_id"])

    # the identifiability check, on the original pairs as a grader would see them
    def oriented(texts):
        lt = [t[0] if sides[k] else t[1] for k, t in enumerate(texts)]
        rt = [t[1] if sides[k] else t[0] for k, t in enumerate(texts)]
        return blinding.feature_matrix(lt), blinding.feature_matrix(rt)

    before = blinding.identifiability(*oriented(raw), sides, seed=seed, n_perm=n_perm)
    after = blinding.identifiability(*oriented(shown_arm), sides, seed=seed, n_perm=n_perm)
    before["feature_means"] = {a0.name: blinding.feature_means([r[0] for r in raw]),
                               a1.name: blinding.feature_means([r[1] for r in raw])}
    after["feature_means"] = {a0.name: blinding.feature_means([s[0] for s in shown_arm]),
                              a1.name: blinding.feature_means([s[1] for s in shown_arm])}

    warnings = []
    if after.get("identifiable"):
        lo, hi = after["interval"]
        warnings.append(
            f"the arms can be told apart from the shown answers: {100 * after['accuracy']:.0f}% of pairs' sides "
            f"guessed right (interval {100 * lo:.0f}-{100 * hi:.0f}%, chance 50%)"
            + (f"; the leaking feature is {after['leaking_feature']}" if after["leaking_feature"] else "")
            + ("" if length_match or after["leaking_feature"] != "length" else "; consider --length-match"))
    for pos, a in enumerate(arms):
        ord_ = ("first", "second")[pos]
        hits = [p["item_id"] for p in pairs if _names_word(p["left_text"] + "\n" + p["right_text"], a.name)
                or _names_word(p["item_id"], a.name)]
        if hits:
            warnings.append(f"the {ord_} --arm's name appears in {len(set(hits))} shown pair(s) (items "
                            f"{', '.join(sorted(set(hits))[:5])}): a grader can read it")
        if missing[pos]:
            warnings.append(f"the {ord_} --arm has no usable answer for {len(missing[pos])} item(s) "
                            f"({', '.join(missing[pos][:5])}{', ...' if len(missing[pos]) > 5 else ''}): left out")

    settings = S.SessionSettings(normalise=steps, length_match=bool(length_match),
                                 mirror_fraction=float(mirror), holdout=holdout, seed=seed)
    manifest = S.SessionManifest(session_id=session_id, suite_id=suite_id, created_at=created_at,
                                 settings=settings, status="open", n_pairs=len(pairs), source=source,
                                 simulated=simulated)
    km = S.KeyManifest(session_id=session_id, arms={a0.name: a0.source, a1.name: a1.source}, created_at=created_at)
    record = {
        "schema_version": S.SCHEMA_VERSION, "session_id": session_id, "arms": list(names),
        "sources": {a0.name: a0.source, a1.name: a1.source}, "seed": seed, "key_seed": key_seed,
        "gen_round": int(gen_round), "normalise": steps, "length_match": bool(length_match),
        "words_trimmed": {names[0]: trimmed_words[0], names[1]: trimmed_words[1]},
        "missing": {names[0]: missing[0], names[1]: missing[1]},
        "identifiability": {"before": before, "after": after}, "created_at": created_at.isoformat(),
    }
    summary = {
        "session_id": session_id, "suite_id": suite_id, "pairs": len(pairs), "original_pairs": n,
        "mirrors": n_mirror, "holdout": holdout, "seed": seed, "normalise": steps,
        "length_match": bool(length_match),
        "missing": {"first_arm": len(missing[0]), "second_arm": len(missing[1])},
        "identifiability": {"before": _public_check(before), "after": _public_check(after)},
        "warnings": warnings,
    }
    return SessionPlan(manifest, pairs, km, key, record, summary, warnings)


def _public_check(check: dict) -> dict:
    """An identifiability check without the per-arm feature means (which name the arms)."""
    return {k: v for k, v in check.items() if k != "feature_means"}


def _refuse_keys_inside(store: Store, kdir: Path) -> None:
    kdir = kdir.resolve()
    for root, what in ((store.data, "data"), (Path(store.state).resolve(), "state")):
        if kdir == root or kdir.is_relative_to(root):
            raise PathEscapeError(f"the keys directory must not be inside the {what} directory (the app reads it)",
                                  file=kdir, field="--keys")
        if root.is_relative_to(kdir):
            raise PathEscapeError(f"the keys directory must not contain the {what} directory", file=kdir,
                                  field="--keys")


def write_plan(store: Store, plan: SessionPlan, keys_dir: Path | str | None = None, judgments: Any = None,
               overwrite: bool = False) -> dict:
    """Write the key (first, into the keys directory) and then the session (into the data
    directory). A failure while writing the session removes the key again."""
    kdir = Path(keys_dir) if keys_dir is not None else store.keys
    _refuse_keys_inside(store, kdir)
    sid = plan.manifest.session_id
    target = inside(kdir.resolve(), check_id(sid, "session id"))
    if not overwrite:
        if store.dir_of("session", sid).exists():
            raise InputError(f"session {sid!r} already exists", file=store.dir_of("session", sid), field="--session")
        if target.exists():
            raise InputError(f"a key for session {sid!r} already exists", file=target, field="--keys")
    store.write_key(plan.key_manifest, plan.key_rows, keys_dir=kdir)
    atomic_write_bytes(target / BLINDING_FILE, (json.dumps(plan.blinding, indent=1, sort_keys=True) + "\n").encode())
    try:
        store.write_session(plan.manifest, plan.pairs, judgments, overwrite=overwrite)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return {**plan.summary, "keys": str(target), "path": str(store.dir_of("session", sid))}


def make_session(store: Store, session_id: str, arm_specs: Sequence[str], *, keys_dir: Path | str | None = None,
                 gen_round: int = 1, **kw: Any) -> dict:
    """``evalcore pairs make``: load the arms, plan, write. Returns the summary (no arm name)."""
    arms = [load_arm(store, *parse_arm(s), gen_round=gen_round) for s in arm_specs]
    if len(arms) != 2:
        raise InputError(f"give exactly two --arm NAME=GEN_OR_FILE, got {len(arms)}", field="--arm")
    kdir = Path(keys_dir) if keys_dir is not None else store.keys
    _refuse_keys_inside(store, kdir)
    plan = plan_session(session_id, arms, gen_round=gen_round, **kw)
    return write_plan(store, plan, kdir)


# --------------------------------------------------------------------------- the state: judgments


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
        con.executescript(_DDL)
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(PAIRS_DB_VERSION),))
        elif int(row[0]) > PAIRS_DB_VERSION:
            raise FormatError(f"schema_version {row[0]} is newer than this evalcore reads ({PAIRS_DB_VERSION})",
                              file=self.path, field="schema_version")
        return con

    def _insert(self, table: str, cols: tuple[str, ...], values: tuple) -> dict[str, Any]:
        with closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                cur = con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                  values)
                rid = cur.lastrowid
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            pk = "judgment_id" if table == "judgments" else "probe_id"
            return dict(con.execute(f"SELECT * FROM {table} WHERE {pk} = ?", (rid,)).fetchone())

    def add(self, session_id: str, pair_id: str, reviewer: str, choice: str, seconds: float | None = None,
            via: str = "cli") -> dict[str, Any]:
        return self._insert("judgments", ("session_id", "pair_id", "reviewer", "choice", "seconds", "created_at", "via"),
                            (session_id, pair_id, reviewer.strip(), choice, seconds, utcnow().isoformat(), via))

    def add_probe(self, session_id: str, pair_id: str, reviewer: str, guess: str, seconds: float | None = None,
                  via: str = "app") -> dict[str, Any]:
        return self._insert("probes", ("session_id", "pair_id", "reviewer", "guess", "seconds", "created_at", "via"),
                            (session_id, pair_id, reviewer.strip(), guess, seconds, utcnow().isoformat(), via))

    def _rows(self, sql: str, params: tuple) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        with closing(self._connect(create=False)) as con:
            return [dict(r) for r in con.execute(sql, params).fetchall()]

    def history(self, session_id: str) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM judgments WHERE session_id = ? ORDER BY judgment_id", (session_id,))

    def current(self, session_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
        """The latest choice of each reviewer on each pair."""
        sql = ("SELECT j.* FROM judgments j WHERE j.session_id = ? AND j.judgment_id = (SELECT max(k.judgment_id) "
               "FROM judgments k WHERE k.session_id = j.session_id AND k.pair_id = j.pair_id AND k.reviewer = j.reviewer)")
        params: tuple = (session_id,)
        if reviewer is not None:
            sql += " AND j.reviewer = ?"
            params += (reviewer.strip(),)
        return self._rows(sql + " ORDER BY j.judgment_id", params)

    def probes(self, session_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT p.* FROM probes p WHERE p.session_id = ? AND p.probe_id = (SELECT max(q.probe_id) FROM probes q "
               "WHERE q.session_id = p.session_id AND q.pair_id = p.pair_id AND q.reviewer = p.reviewer)")
        params: tuple = (session_id,)
        if reviewer is not None:
            sql += " AND p.reviewer = ?"
            params += (reviewer.strip(),)
        return self._rows(sql + " ORDER BY p.probe_id", params)


# --------------------------------------------------------------------------- status, grading


def _unblinded_path(store: Store, session_id: str) -> Path:
    check_id(session_id, "session id")
    return inside(Path(store.state), "sessions", session_id, UNBLINDED_FILE)


def session_status(store: Store, session_id: str) -> dict[str, Any]:
    """``{"status": "open" | "closed", "unblinded": bool, "closed_at": ...}``. A session is closed
    when it was unblinded into this state directory, or when its session.json says closed (an
    imported or demo session); only an unblinded one has results here."""
    m = store.session(session_id).manifest
    p = _unblinded_path(store, session_id)
    if p.is_file():
        rec = json.loads(p.read_text(encoding="utf-8"))
        return {"session_id": session_id, "status": "closed", "unblinded": True, "closed_at": rec.get("closed_at")}
    return {"session_id": session_id, "status": m.status, "unblinded": False, "closed_at": None}


def sessions_overview(store: Store) -> list[dict[str, Any]]:
    """Every session with its status and pair count (nothing that depends on the key)."""
    out = []
    for sid in store.ids("session"):
        m = store.session(sid).manifest
        out.append({**session_status(store, sid), "n_pairs": m.n_pairs, "suite_id": m.suite_id,
                    "source": m.source, "simulated": m.simulated, "created_at": m.created_at.isoformat()})
    return out


def load_pairs(store: Store, session_id: str) -> list[dict[str, Any]]:
    return store.records("SELECT pair_id, item_id, left_text, right_text, mirror_of, holdout FROM read_parquet(?) "
                         "ORDER BY pair_id", [store.path_of("session", session_id, "pairs")])


def _order_key(session_id: str, reviewer: str, pair_id: str) -> str:
    return hashlib.sha256(f"{session_id}\x00{reviewer.strip()}\x00{pair_id}".encode()).hexdigest()


def reviewer_order(pair_ids: Iterable[str], session_id: str, reviewer: str,
                   mirror_of: dict[str, str | None] | None = None) -> list[str]:
    """The order a reviewer sees the pairs in: fixed per reviewer (so grading resumes where it
    left off), different between reviewers (so no order effect is shared by all). A mirrored
    pair that would come within a quarter of the session after its original is moved to the end,
    so that the repeat is not recognised as one."""
    order = sorted(pair_ids, key=lambda p: _order_key(session_id, reviewer, p))
    if not mirror_of:
        return order
    gap = max(3, len(order) // 4)
    pos = {p: i for i, p in enumerate(order)}
    near = [p for p in order if mirror_of.get(p) in pos and abs(pos[p] - pos[mirror_of[p]]) < gap]
    return [p for p in order if p not in set(near)] + near


def _require_open(store: Store, session_id: str) -> None:
    st = session_status(store, session_id)
    if st["status"] != "open":
        raise InputError(f"session {session_id!r} is closed: it takes no more judgments", field="--session")


def _check_reviewer(reviewer: str | None) -> str:
    if reviewer is None or not str(reviewer).strip():
        raise InputError("a reviewer name is required", field="--reviewer")
    r = " ".join(str(reviewer).split())
    if len(r) > 80:
        raise InputError("a reviewer name is at most 80 characters", field="--reviewer")
    return r


def record_judgment(store: Store, session_id: str, pair_id: str, reviewer: str, choice: str,
                    seconds: float | None = None, via: str = "cli") -> dict[str, Any]:
    """Append a choice (left, right or same, as shown) on a pair of an open session."""
    reviewer = _check_reviewer(reviewer)
    if choice not in CHOICES:
        raise InputError(f"choice {choice!r} is not one of {', '.join(CHOICES)}", field="--choice")
    _require_open(store, session_id)
    ids = {p[0] for p in store.sql("SELECT pair_id FROM read_parquet(?)", [store.path_of("session", session_id, "pairs")])}
    if pair_id not in ids:
        raise NotFoundError(f"no pair {pair_id!r} in session {session_id!r}", field="--pair")
    if seconds is not None and (not math.isfinite(float(seconds)) or float(seconds) < 0):
        seconds = None
    return JudgmentStore(store).add(session_id, pair_id, reviewer, choice, seconds, via)


def record_probe(store: Store, session_id: str, pair_id: str, reviewer: str, guess: str,
                 seconds: float | None = None, via: str = "app") -> dict[str, Any]:
    """Append a probe answer: which side the reviewer thinks their arm X wrote (or unsure)."""
    reviewer = _check_reviewer(reviewer)
    if guess not in GUESSES:
        raise InputError(f"guess {guess!r} is not one of {', '.join(GUESSES)}", field="guess")
    _require_open(store, session_id)
    ids = {p[0] for p in store.sql("SELECT pair_id FROM read_parquet(?)", [store.path_of("session", session_id, "pairs")])}
    if pair_id not in ids:
        raise NotFoundError(f"no pair {pair_id!r} in session {session_id!r}", field="pair")
    return JudgmentStore(store).add_probe(session_id, pair_id, reviewer, guess, seconds, via)


def progress(store: Store, session_id: str, reviewer: str) -> dict[str, Any]:
    """Where one reviewer stands: pairs graded, the next pair in their order (None when done),
    and the probe pairs still to answer. Reads no choice but the reviewer's own count."""
    reviewer = _check_reviewer(reviewer)
    mirror_of = dict(store.sql("SELECT pair_id, mirror_of FROM read_parquet(?)",
                               [store.path_of("session", session_id, "pairs")]))
    pairs = [{"pair_id": k} for k in mirror_of]
    order = reviewer_order([p["pair_id"] for p in pairs], session_id, reviewer, mirror_of)
    js = JudgmentStore(store)
    done = {j["pair_id"] for j in js.current(session_id, reviewer)}
    nxt = next((p for p in order if p not in done), None)
    originals = [p for p in order if not mirror_of[p]]
    probe = originals[:min(PROBE_PAIRS, len(originals))]
    probed = {p["pair_id"] for p in js.probes(session_id, reviewer)}
    return {"session_id": session_id, "reviewer": reviewer, "total": len(order), "graded": len(done & set(order)),
            "next_pair": nxt, "probe_pairs": probe, "probe_left": [p for p in probe if p not in probed]}


def pair_view(store: Store, session_id: str, pair_id: str) -> dict[str, Any]:
    """One pair as the grader sees it: the item's input (when the suite is there) and both texts."""
    rows = store.records("SELECT pair_id, item_id, left_text, right_text FROM read_parquet(?) WHERE pair_id = ?",
                         [store.path_of("session", session_id, "pairs"), pair_id])
    if not rows:
        raise NotFoundError(f"no pair {pair_id!r} in session {session_id!r}", field="pair")
    p = rows[0]
    m = store.session(session_id).manifest
    p["input"] = None
    if m.suite_id and store.dir_of("suite", m.suite_id).is_dir():
        r = store.sql("SELECT input FROM read_parquet(?) WHERE item_id = ?",
                      [store.path_of("suite", m.suite_id, "items"), p["item_id"]])
        p["input"] = r[0][0] if r else None
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
    from .store import check_parquet
    check_parquet(d / "key.parquet", "key")
    rows = pq.read_table(d / "key.parquet").to_pylist()
    record = None
    if (d / BLINDING_FILE).is_file():
        record = json.loads((d / BLINDING_FILE).read_text(encoding="utf-8"))
    return km, rows, record


def close_session(store: Store, session_id: str, keys_dir: Path | str, *, n_perm: int = blinding.DEFAULT_PERMUTATIONS) -> dict:
    """Unblind: check the key against the session and write ``<state>/sessions/<id>/unblinded.json``.
    The data directory is not touched. Refused when the session is already unblinded here."""
    entry = store.session(session_id)
    out = _unblinded_path(store, session_id)
    if out.is_file():
        raise InputError(f"session {session_id!r} is already closed and unblinded in {store.state}", field="--session")
    km, rows, record = read_key(keys_dir, session_id)
    pairs = load_pairs(store, session_id)
    arms = list(km.arms)
    if len(arms) != 2:
        raise FormatError(f"names {len(arms)} arms, a session has two", file=Path(keys_dir) / session_id / "key.json",
                          field="arms")
    by_id = {r["pair_id"]: r for r in rows}
    kfile = Path(keys_dir).resolve() / session_id / "key.parquet"
    for p in pairs:
        k = by_id.get(p["pair_id"])
        if k is None:
            raise FormatError(f"has no row for pair {p['pair_id']!r} of the session", file=kfile, field="pair_id")
        if {k["left_arm"], k["right_arm"]} != set(arms):
            raise FormatError(f"pair {p['pair_id']!r} is not one of each arm ({k['left_arm']!r}, {k['right_arm']!r})",
                              file=kfile, field="left_arm")
    extra = set(by_id) - {p["pair_id"] for p in pairs}
    if extra:
        raise FormatError(f"has {len(extra)} pair(s) the session does not (e.g. {sorted(extra)[0]!r})", file=kfile,
                          field="pair_id")
    by_pair = {p["pair_id"]: p for p in pairs}
    for p in pairs:  # a mirror repeats its original with the arms swapped
        if p["mirror_of"]:
            o, k = by_id[p["mirror_of"]], by_id[p["pair_id"]]
            if (o["left_arm"], o["right_arm"]) != (k["right_arm"], k["left_arm"]) or p["mirror_of"] not in by_pair:
                raise FormatError(f"mirror {p['pair_id']!r} does not swap the arms of {p['mirror_of']!r}", file=kfile,
                                  field="left_arm")
    if record is not None and record.get("arms"):
        arms = [a for a in record["arms"] if a in km.arms] or arms
        ident = record.get("identifiability")
    else:
        ident = None
    if ident is None:  # a session not made by `pairs make`: measure the shown texts only
        originals = [p for p in pairs if not p["mirror_of"]]
        fl = [by_id[p["pair_id"]]["left_arm"] == arms[0] for p in originals]
        after = blinding.identifiability(blinding.feature_matrix([p["left_text"] for p in originals]),
                                         blinding.feature_matrix([p["right_text"] for p in originals]), fl,
                                         seed=int(entry.manifest.settings.seed), n_perm=n_perm)
        after["feature_means"] = {
            a: blinding.feature_means([p["left_text"] if by_id[p["pair_id"]]["left_arm"] == a else p["right_text"]
                                       for p in originals]) for a in arms}
        ident = {"before": {"accuracy": None, "reason": "the raw answers were not recorded: this session was not made "
                            "by `evalcore pairs make`"}, "after": after}
    rec = {"schema_version": S.SCHEMA_VERSION, "session_id": session_id, "closed_at": utcnow().isoformat(),
           "arms": arms, "sources": dict(km.arms), "key": [by_id[p["pair_id"]] for p in pairs],
           "identifiability": ident,
           "made": {k: record[k] for k in ("gen_round", "normalise", "length_match", "words_trimmed", "missing")
                    if k in record} if record else None,
           "judgments_at_close": len(_people(store, session_id))}
    atomic_write_bytes(out, (json.dumps(rec, indent=1, default=str) + "\n").encode("utf-8"))
    return {"session_id": session_id, "closed": True, "unblinded": str(out), "arms": arms, "pairs": len(pairs),
            "judgments": rec["judgments_at_close"]}


def unblinded(store: Store, session_id: str) -> dict:
    """The unblinded record, or SessionOpenError while there is none in this state directory."""
    st = session_status(store, session_id)
    if not st["unblinded"]:
        if st["status"] == "open":
            raise SessionOpenError(f"session {session_id!r} is open: results are shown only after "
                                   f"`evalcore pairs close --session {session_id} --keys DIR`", field="--session")
        raise SessionOpenError(f"session {session_id!r} is closed but not unblinded in this state directory: run "
                               f"`evalcore pairs close --session {session_id} --keys DIR`", field="--session")
    return json.loads(_unblinded_path(store, session_id).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- statistics (pure)


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str] = CHOICES) -> dict:
    """Cohen's kappa of two raters over the same units: (p_o - p_e) / (1 - p_e), with p_o the
    share of agreement and p_e = sum_c p_a(c) p_b(c) the agreement expected from the raters'
    marginals. Undefined (None with a reason) with no units or when p_e = 1 (both raters used
    one and the same category throughout)."""
    n = len(a)
    if n != len(b):
        raise ValueError("cohen_kappa needs two equally long sequences")
    if n == 0:
        return {"kappa": None, "n": 0, "agreement": None, "reason": "no units rated by both"}
    a, b = list(a), list(b)
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in categories)
    if pe >= 1 - 1e-12:
        return {"kappa": None, "n": n, "agreement": po, "reason": "both used a single category throughout: chance "
                "agreement is 1 and kappa is undefined"}
    return {"kappa": (po - pe) / (1 - pe), "n": n, "agreement": po, "reason": None}


def krippendorff_alpha_nominal(units: Sequence[Sequence[str]]) -> dict:
    """Krippendorff's alpha for nominal values, any number of raters per unit (units with fewer
    than two values are left out). With o_ck the coincidence counts (each ordered pair of values
    within a unit weighted 1 / (m_u - 1)), n_c = sum_k o_ck and n = sum_c n_c:
    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k. Undefined when a single value
    occurs (no disagreement is possible)."""
    units = [list(u) for u in units if len(u) >= 2]
    cats = sorted({v for u in units for v in u})
    if not units:
        return {"alpha": None, "units": 0, "reason": "no unit was rated by two or more people"}
    if len(cats) < 2:
        return {"alpha": None, "units": len(units), "reason": "only one value occurs: alpha is undefined"}
    idx = {c: i for i, c in enumerate(cats)}
    o = np.zeros((len(cats), len(cats)))
    for u in units:
        m = len(u)
        counts = np.zeros(len(cats))
        for v in u:
            counts[idx[v]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    nc = o.sum(axis=1)
    n = nc.sum()
    off = o.sum() - np.trace(o)
    exp = (np.outer(nc, nc).sum() - (nc ** 2).sum())
    return {"alpha": float(1 - (n - 1) * off / exp), "units": len(units), "reason": None}


def win_stats(scores: Sequence[float], *, seed: int, n_boot: int = 2000, level: float = 0.95) -> dict:
    """Paired result of arm A over arm B from per-pair scores s_i in [0, 1] (1: A won the pair,
    0: B won, 0.5: a tie; several people on one pair average). ``win_rate`` is the mean of s_i,
    its interval a seeded percentile bootstrap over pairs (each pair resampled whole: the paired
    design), and the sign test counts pairs with s_i > 0.5 against s_i < 0.5 (exact two-sided
    binomial, ties left out)."""
    s = np.asarray(list(scores), dtype=float)
    n = len(s)
    if n == 0:
        return {"pairs": 0, "win_rate": None, "interval": None, "sign_test": None, "reason": "no graded pairs"}
    rng = np.random.default_rng([int(seed), 0xB007])
    means = s[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)
    tail = (1 - level) / 2
    a, b = int((s > 0.5).sum()), int((s < 0.5).sum())
    sign = {"a_pairs": a, "b_pairs": b, "tied_pairs": n - a - b,
            "p_value": float(_st.binomtest(a, a + b, 0.5).pvalue) if a + b else 1.0}
    return {"pairs": n, "win_rate": float(s.mean()),
            "interval": [float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))],
            "level": level, "sign_test": sign, "reason": None}


def _prop(k: int, n: int) -> dict:
    if n == 0:
        return {"k": 0, "n": 0, "share": None, "interval": None, "p_value": None}
    ci = _st.binomtest(k, n).proportion_ci(method="wilson")
    return {"k": k, "n": n, "share": k / n, "interval": [float(ci.low), float(ci.high)],
            "p_value": float(_st.binomtest(k, n, 0.5).pvalue)}


# --------------------------------------------------------------------------- report


_SWAP = {"left": "right", "right": "left", "same": "same"}


def _arm_score(choice: str, key: dict, arm: str) -> float:
    """1 if ``arm`` won under this as-shown choice, 0 if it lost, 0.5 for same."""
    if choice == "same":
        return 0.5
    winner = key["left_arm"] if choice == "left" else key["right_arm"]
    return 1.0 if winner == arm else 0.0


def _wlt(judgments: list[dict], key_of: dict, arms: list[str]) -> dict:
    out = {a: {"wins": 0, "losses": 0, "ties": 0} for a in arms}
    for j in judgments:
        s = _arm_score(j["choice"], key_of[j["pair_id"]], arms[0])
        if s == 0.5:
            for a in arms:
                out[a]["ties"] += 1
        else:
            w, l_ = (arms[0], arms[1]) if s == 1 else (arms[1], arms[0])
            out[w]["wins"] += 1
            out[l_]["losses"] += 1
    return out


def _result(judgments: list[dict], pair_ids: list[str], key_of: dict, arms: list[str], seed: int) -> dict:
    per_pair: dict[str, list[float]] = {}
    mine = [j for j in judgments if j["pair_id"] in set(pair_ids)]
    for j in mine:
        per_pair.setdefault(j["pair_id"], []).append(_arm_score(j["choice"], key_of[j["pair_id"]], arms[0]))
    scores = [float(np.mean(v)) for _, v in sorted(per_pair.items())]
    return {"judgments": len(mine), "counts": _wlt(mine, key_of, arms), "arm": arms[0], "over": arms[1],
            **win_stats(scores, seed=seed)}


def _people(store: Store, session_id: str) -> list[dict]:
    """Shipped judgments (the data) and the state's current ones; a state judgment by the same
    reviewer on the same pair replaces a shipped one."""
    e = store.session(session_id)
    rows: dict[tuple[str, str], dict] = {}
    if (e.path / "judgments.parquet").exists():
        for r in store.records("SELECT pair_id, reviewer, choice, seconds FROM read_parquet(?)",
                               [str(e.path / "judgments.parquet")]):
            rows[(r["pair_id"], r["reviewer"])] = {**r, "source": "shipped"}
    for r in JudgmentStore(store).current(session_id):
        rows[(r["pair_id"], r["reviewer"])] = {"pair_id": r["pair_id"], "reviewer": r["reviewer"],
                                               "choice": r["choice"], "seconds": r["seconds"], "source": "state"}
    return sorted(rows.values(), key=lambda r: (r["pair_id"], r["reviewer"]))


def _grader_runs(store: Store, session_id: str) -> list[str]:
    out = []
    for rid in store.ids("run"):
        e = store.get("run", rid)
        if (e.manifest.knobs or {}).get("session_id") == session_id and (e.path / "pair_verdicts.parquet").exists():
            out.append(rid)
    return out


def _grader(store: Store, run_id: str, pairs: dict, key_of: dict, arms: list[str], people: list[dict],
            headline: list[str], seed: int) -> dict:
    e = store.run(run_id)
    pv = store.records(
        "SELECT v.pair_id, v.\"order\", v.choice, c.judge_round FROM read_parquet(?) v "
        "LEFT JOIN read_parquet(?) c ON v.call_id = c.call_id ORDER BY v.pair_id, v.\"order\"",
        [str(e.path / "pair_verdicts.parquet"), str(e.path / "calls.parquet")])
    pv = [r for r in pv if r["pair_id"] in pairs]
    ok = [r for r in pv if r["choice"] is not None]
    # flips: the two orders of one pair (and judge round) disagree, in as-shown terms
    by: dict[tuple[str, int], dict[str, str]] = {}
    for r in ok:
        by.setdefault((r["pair_id"], r["judge_round"] or 1), {})[r["order"]] = r["choice"]
    both = [v for v in by.values() if "as_shown" in v and "swapped" in v]
    flips = sum(v["as_shown"] != v["swapped"] for v in both)
    reversals = sum({v["as_shown"], v["swapped"]} == {"left", "right"} for v in both)
    decided = [r for r in ok if r["choice"] != "same"]
    first = sum((r["order"] == "as_shown") == (r["choice"] == "left") for r in decided)
    # the result averaged over both orders (and rounds): per pair, the mean of its verdicts
    per_pair: dict[str, list[float]] = {}
    for r in ok:
        per_pair.setdefault(r["pair_id"], []).append({"left": 1.0, "same": 0.5, "right": 0.0}[r["choice"]])
    avg_choice = {p: ("left" if np.mean(v) > 0.5 else "right" if np.mean(v) < 0.5 else "same")
                  for p, v in per_pair.items()}
    as_shown_choice = {r["pair_id"]: r["choice"] for r in ok if r["order"] == "as_shown" and (r["judge_round"] or 1) == 1}
    graded_headline = [p for p in headline if p in per_pair]
    averaged = _result([{"pair_id": p, "choice": avg_choice[p]} for p in graded_headline], graded_headline, key_of,
                       arms, seed)
    shown_only = [p for p in headline if p in as_shown_choice]
    first_only = _result([{"pair_id": p, "choice": as_shown_choice[p]} for p in shown_only], shown_only, key_of,
                         arms, seed)
    # against people: the grader's averaged three-way choice and each person's, on the same pairs
    kappas = {}
    for rev in sorted({j["reviewer"] for j in people}):
        js = [j for j in people if j["reviewer"] == rev and j["pair_id"] in avg_choice]
        kappas[rev] = cohen_kappa([avg_choice[j["pair_id"]] for j in js], [j["choice"] for j in js])
    majority = {}
    for p in avg_choice:
        cs = [j["choice"] for j in people if j["pair_id"] == p]
        if cs:
            top = max(CHOICES, key=cs.count)
            if sum(c == top for c in cs) > len(cs) / 2:
                majority[p] = top
    mp = sorted(majority)
    kappa_majority = cohen_kappa([avg_choice[p] for p in mp], [majority[p] for p in mp])
    calls = store.records("SELECT count(*) AS calls, sum(cost_usd) AS cost, count(cost_usd) AS priced, "
                          "sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out FROM read_parquet(?)",
                          [str(e.path / "calls.parquet")])[0]
    n_calls = int(calls["calls"] or 0)
    cost = None if calls["priced"] == 0 else float(calls["cost"])
    return {
        "run_id": run_id, "judge_model": e.manifest.judge_model, "status": e.manifest.status,
        "verdicts": len(pv), "errored_verdicts": len(pv) - len(ok), "pairs": len(per_pair),
        "flips": {"compared": len(both), "flips": flips, "reversals": reversals,
                  "share": flips / len(both) if both else None,
                  "reversal_share": reversals / len(both) if both else None},
        "first_position": _prop(first, len(decided)),
        "averaged_over_orders": averaged, "as_shown_only": first_only,
        "kappa_vs_people": kappas, "kappa_vs_majority": kappa_majority,
        "cost": {"calls": n_calls, "cost_usd": cost, "unpriced_calls": n_calls - int(calls["priced"] or 0),
                 "tokens_in": int(calls["tokens_in"] or 0), "tokens_out": int(calls["tokens_out"] or 0),
                 "cost_per_pair_usd": (cost / len(per_pair)) if cost is not None and per_pair else None},
    }


def report(store: Store, session_id: str, *, seed: int = 0) -> dict:
    """Every figure of a closed, unblinded session (see docs/PAIRWISE.md). Refused while open."""
    rec = unblinded(store, session_id)
    arms: list[str] = rec["arms"]
    key_of = {k["pair_id"]: k for k in rec["key"]}
    pairs = {p["pair_id"]: p for p in load_pairs(store, session_id)}
    missing = set(pairs) - set(key_of)
    if missing:
        raise FormatError(f"the unblinded key lacks {len(missing)} pair(s) of the session (the session changed after "
                          "it was closed)", file=_unblinded_path(store, session_id), field="key")
    m = store.session(session_id).manifest
    originals = [p for p in pairs.values() if not p["mirror_of"]]
    headline = sorted(p["pair_id"] for p in originals if not p["holdout"])
    held = sorted(p["pair_id"] for p in originals if p["holdout"])
    people = [j for j in _people(store, session_id) if j["pair_id"] in pairs]
    classes: dict[str, str] = {}
    if m.suite_id and store.dir_of("suite", m.suite_id).is_dir():
        for iid, cls in store.sql('SELECT item_id, "class" FROM read_parquet(?)',
                                  [store.path_of("suite", m.suite_id, "items")]):
            classes[iid] = cls if cls is not None else "(none)"
    by_class = {}
    for cls in sorted({classes.get(pairs[p]["item_id"], "(none)") for p in headline}):
        ids = [p for p in headline if classes.get(pairs[p]["item_id"], "(none)") == cls]
        by_class[cls] = _result(people, ids, key_of, arms, seed)
    reviewers = sorted({j["reviewer"] for j in people})
    # position: people's preference for the left answer; consistency on mirrored pairs
    decided = [j for j in people if j["choice"] != "same"]
    left_pref = {"all": _prop(sum(j["choice"] == "left" for j in decided), len(decided)),
                 "by_reviewer": {r: _prop(sum(j["choice"] == "left" for j in decided if j["reviewer"] == r),
                                          sum(1 for j in decided if j["reviewer"] == r)) for r in reviewers}}
    choice_of = {(j["pair_id"], j["reviewer"]): j["choice"] for j in people}
    cons: dict[str, list[bool]] = {}
    for p in pairs.values():
        if p["mirror_of"]:
            for r in reviewers:
                a, b = choice_of.get((p["mirror_of"], r)), choice_of.get((p["pair_id"], r))
                if a is not None and b is not None:
                    cons.setdefault(r, []).append(_SWAP[a] == b)
    all_c = [x for v in cons.values() for x in v]
    mirror = {"mirrored_pairs": sum(1 for p in pairs.values() if p["mirror_of"]),
              "all": {"consistent": sum(all_c), "n": len(all_c), "share": (sum(all_c) / len(all_c)) if all_c else None},
              "by_reviewer": {r: {"consistent": sum(v), "n": len(v), "share": sum(v) / len(v)} for r, v in cons.items()}}
    # agreement between people on the original pairs
    units = {}
    for j in people:
        if not pairs[j["pair_id"]]["mirror_of"]:
            units.setdefault(j["pair_id"], {})[j["reviewer"]] = j["choice"]
    pairwise = []
    for i, r1 in enumerate(reviewers):
        for r2 in reviewers[i + 1:]:
            common = sorted(p for p, u in units.items() if r1 in u and r2 in u)
            if common:
                k = cohen_kappa([units[p][r1] for p in common], [units[p][r2] for p in common])
                pairwise.append({"a": r1, "b": r2, **k})
    agreement = {"pairwise": pairwise,
                 "krippendorff_alpha": krippendorff_alpha_nominal([list(u.values()) for u in units.values()])}
    # the identification probe: does the side a reviewer calls X follow one arm?
    probes = {}
    for r in sorted({p["reviewer"] for p in JudgmentStore(store).probes(session_id)}):
        gs = [p for p in JudgmentStore(store).probes(session_id, r) if p["pair_id"] in pairs and p["guess"] != "unsure"]
        k = sum((key_of[g["pair_id"]]["left_arm"] if g["guess"] == "left" else key_of[g["pair_id"]]["right_arm"])
                == arms[0] for g in gs)
        n = len(gs)
        probes[r] = {"answered": n, "first_arm_share": (k / n) if n else None,
                     "consistency": (max(k, n - k) / n) if n else None,
                     "p_value": float(_st.binomtest(k, n, 0.5).pvalue) if n else None,
                     "unsure": sum(1 for p in JudgmentStore(store).probes(session_id, r) if p["guess"] == "unsure")}
    timing = {r: {"judgments": sum(1 for j in people if j["reviewer"] == r),
                  "median_seconds": (float(np.median(s)) if (s := [j["seconds"] for j in people
                                                                  if j["reviewer"] == r and j["seconds"] is not None])
                                     else None)} for r in reviewers}
    graders = [_grader(store, rid, pairs, key_of, arms, people, headline, seed) for rid in _grader_runs(store, session_id)]
    return {
        "session_id": session_id, "closed_at": rec.get("closed_at"), "arms": arms, "sources": rec.get("sources"),
        "settings": m.settings.model_dump(mode="json"), "suite_id": m.suite_id, "simulated": m.simulated,
        "pairs": {"total": len(pairs), "original": len(originals), "headline": len(headline), "holdout": len(held),
                  "mirrored": len(pairs) - len(originals)},
        "reviewers": reviewers, "judgments": len(people),
        "result": _result(people, headline, key_of, arms, seed),
        "holdout": _result(people, held, key_of, arms, seed),
        "by_class": by_class, "left_preference": left_pref, "mirror_consistency": mirror, "agreement": agreement,
        "probe": probes, "timing": timing, "identifiability": rec.get("identifiability"), "made": rec.get("made"),
        "graders": graders, "seed": seed,
    }


def format_report(r: dict) -> str:
    """The report as text for the command line."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    def iv(x):
        return "-" if not x else f"{100 * x[0]:.1f}-{100 * x[1]:.1f}%"

    a, b = r["arms"]
    res = r["result"]
    lines = [f"session {r['session_id']}: {a} vs {b} (closed {r['closed_at']})" + (" SIMULATED" if r["simulated"] else ""),
             f"pairs: {r['pairs']['headline']} in the headline, {r['pairs']['holdout']} holdout, "
             f"{r['pairs']['mirrored']} mirrored; {r['judgments']} judgments by {len(r['reviewers'])} people", ""]

    def block(title, x):
        c = x["counts"]
        out = [f"{title}: {a} wins {c[a]['wins']}, loses {c[a]['losses']}, ties {c[a]['ties']} "
               f"({x['judgments']} judgments on {x['pairs']} pairs)"]
        if x.get("win_rate") is not None:
            st = x["sign_test"]
            out.append(f"  {a} win rate {pct(x['win_rate'])} (bootstrap {iv(x['interval'])}); sign test "
                       f"{st['a_pairs']} vs {st['b_pairs']} pairs, p = {st['p_value']:.3g}")
        return out

    lines += block("headline", res)
    lines += block("holdout", r["holdout"])
    for cls, x in r["by_class"].items():
        lines += block(f"class {cls}", x)
    lp = r["left_preference"]["all"]
    lines += ["", f"people chose the left answer in {pct(lp['share'])} of decided judgments "
                  f"({iv(lp['interval'])}, p = {lp['p_value']:.3g})" if lp["n"] else "people: no decided judgments"]
    mc = r["mirror_consistency"]["all"]
    if mc["n"]:
        lines.append(f"consistent on mirrored pairs: {mc['consistent']} of {mc['n']} ({pct(mc['share'])})")
    al = r["agreement"]["krippendorff_alpha"]
    if al["alpha"] is not None:
        lines.append(f"agreement between people: Krippendorff's alpha {al['alpha']:.3f} over {al['units']} pairs")
    for x in r["agreement"]["pairwise"]:
        if x["kappa"] is not None:
            lines.append(f"  kappa {x['a']} / {x['b']}: {x['kappa']:.3f} on {x['n']} pairs")
    ident = r.get("identifiability") or {}
    for when in ("before", "after"):
        c = ident.get(when)
        if c:
            lines.append(f"identifiability {when} normalisation: {blinding.describe(c)}")
    for rev, p in r["probe"].items():
        if p["answered"]:
            lines.append(f"probe {rev}: the side called X was {a} in {pct(p['first_arm_share'])} of "
                         f"{p['answered']} pairs (p = {p['p_value']:.3g})")
    for g in r["graders"]:
        f = g["flips"]
        fp = g["first_position"]
        lines += ["", f"model grader {g['run_id']} ({g['judge_model']}):",
                  f"  order flips {f['flips']} of {f['compared']} pairs ({pct(f['share'])}), reversals {f['reversals']}",
                  f"  first-position preference {pct(fp['share'])} ({iv(fp['interval'])})"]
        lines += ["  " + s for s in block("averaged over both orders", g["averaged_over_orders"])]
        km = g["kappa_vs_majority"]
        if km["kappa"] is not None:
            lines.append(f"  kappa vs people's majority: {km['kappa']:.3f} on {km['n']} pairs")
        c = g["cost"]
        lines.append(f"  cost: {c['calls']} calls, " + ("unknown" if c["cost_usd"] is None else f"${c['cost_usd']:.4f}")
                     + (f" (${c['cost_per_pair_usd']:.4f} per pair)" if c["cost_per_pair_usd"] is not None else ""))
    return "\n".join(lines)
