"""Making a blinded pairwise session (``evalcore pairs make``), and the definitions its later
steps share. Grading and closing (unblinding) are :mod:`evalcore.pairwise.grading`, the report of
a closed session is :mod:`evalcore.pairwise.results`, the normalisation
:mod:`evalcore.pairwise.blinding` and the identifiability check :mod:`evalcore.pairwise.leakage`.

Making a session
----------------
:func:`make_session` loads the arms, two or more (:func:`parse_arm`, :func:`load_arm`: an
:class:`Arm` from a generation id in the data directory or from a file, each once by name and by
source), plans (:func:`plan_session`) and writes (:func:`write_plan`). The items all arms answer
get ``pairs_per_item`` original pairs each (default 1), which two arms each pair compares drawn by
:mod:`evalcore.pairwise.schedule` (balanced over the pairs of arms, the items and, per pair of
arms, the sides; two arms: one pair per item, as before K arms). The answers are normalised
(:mod:`evalcore.pairwise.blinding`), optionally length-matched per pair, and each pair gets a
random id and a side per arm; everything is computed into a :class:`SessionPlan` before anything
is written. ``sessions/<id>/pairs.parquet`` and ``session.json`` go to the data directory with no
arm name anywhere; the key (which arm is on which side) goes to ``<keys>/<id>/`` (key.json,
key.parquet and blinding.json, the record of the transform and of the identifiability check),
which is never inside the data or the state directory, and is written first. Before anything is
written the identifiability check runs on the shown texts of each pair of arms apart (a grader who
tells two arms apart does so in their pairs; at the Bonferroni level 1 - 0.05 / M over M pairs of
arms) and a warning names, by --arm position, each pair of arms that can be told apart; with more than two arms blinding.json records every pair of arms'
check (``by_arm_pair``), headlines the one most easily told apart, and records the schedule's
counts (``schedule``). Key rows are ``pair_id, left_arm, right_arm`` for any number of arms.

Of the later steps only closing reads the key, so the app is never given a keys directory. Their
shared definitions are here: the name and schema of ``<state>/pairs.sqlite`` (:data:`DB_NAME`,
``_DDL``), the choices (:data:`CHOICES`: left, right, same) and probe guesses
(:data:`GUESSES`), and :class:`SessionOpenError`, raised when a result is asked for while the
session is open.

Sides and seeds
---------------
Two seeds make the transform reproducible without making it guessable. ``seed`` (recorded in
session.json) draws the pair ids, the holdout and mirrored pairs and the row order: none of that
depends on the arms. The sides are drawn from ``seed`` together with a ``key_seed`` that is
recorded in the key directory only (drawn at random unless given), so that nobody holding the
data and this code can redraw the sides, nor (with more than two arms) which arms a pair compares,
drawn from the same two seeds in a stream of its own. Within each pair of arms exactly half of its
original pairs (one more or less for an odd count) have the arm given first on the left, in a
random arrangement (:func:`evalcore.pairwise.schedule.balanced_sides`); a mirrored pair repeats an
original with the sides swapped.
"""

from __future__ import annotations

import csv
import json
import re
import secrets
import shutil
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import FormatError, InputError, NotFoundError, PathEscapeError
from evalcore.pairwise import blinding, leakage, schedule
from evalcore.storage.files import atomic_write_bytes
from evalcore.storage.paths import check_id, inside, utcnow
from evalcore.storage.seal import seal_hash
from evalcore.storage.store import Store

DB_NAME = "pairs.sqlite"
PAIRS_DB_VERSION = 1
BLINDING_FILE = "blinding.json"
CHOICES = ("left", "right", "same")
GUESSES = ("left", "right", "unsure")
PROBE_PAIRS = 8
INSTRUCTIONS_MAX = 4000  # characters of a session's instructions to its graders
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
    generation: str | None = None  # the generation of the data directory it was read from (sealed while open)


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
    except RecursionError:
        raise FormatError("cannot be read: nests arrays or objects too deeply", file=path, field="file") from None
    except OSError as e:
        raise FormatError(f"cannot be read: {e}", file=path, field="file") from None
    raise InputError(f"unknown file type {ext!r} (csv, tsv, jsonl, json, parquet)", file=path, field="--arm")


def load_arm(store: Store, name: str, value: str, gen_round: int = 1) -> Arm:
    """An arm from a generation id in the data directory (its answers of ``gen_round``) or from a
    file (csv, tsv, jsonl, json or parquet with columns item_id and output)."""
    if H.is_valid_id(value) and store.dir_of("generation", value).is_dir():
        g = store.generation(value)
        rows = store.records(
            "SELECT item_id, output, error FROM read_parquet(?) WHERE round = ? ORDER BY item_id",
            [store.path_of("generation", value, "outputs"), int(gen_round)],
        )
        if not rows:
            raise InputError(f"generation {value!r} has no answers in round {gen_round}", field="--round")
        texts, bad = {}, []
        for r in rows:
            if r["error"] is not None or r["output"] is None or not str(r["output"]).strip():
                bad.append(r["item_id"])
            else:
                texts[r["item_id"]] = str(r["output"])
        return Arm(name, value, texts, g.manifest.suite_id, bad, generation=value)
    path = Path(value).expanduser()
    if not path.is_file():
        raise NotFoundError(f"{value!r} is neither a generation in {store.data} nor a file", field="--arm")
    rows = _read_file_rows(path)
    if not rows:
        raise InputError("has no rows", file=path, field="--arm")
    cols = set(rows[0])
    text_col = next((c for c in FILE_TEXT_COLUMNS if c in cols), None)
    if "item_id" not in cols or text_col is None:
        raise FormatError(
            f"needs columns item_id and one of {', '.join(FILE_TEXT_COLUMNS)}", file=path, field="columns"
        )
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
    out: list[str] = []
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


def plan_session(
    session_id: str,
    arms: Sequence[Arm],
    *,
    normalise: Iterable[str] = blinding.NORMALISATIONS,
    length_match: bool = False,
    mirror: float = 0.0,
    holdout: int = 0,
    seed: int | None = None,
    key_seed: int | None = None,
    gen_round: int = 1,
    created_at: datetime | None = None,
    source: str = "made",
    simulated: bool = False,
    n_perm: int = blinding.DEFAULT_PERMUTATIONS,
    suite_id: str | None = None,
    pairs_per_item: int = 1,
) -> SessionPlan:
    """Schedule the arms' pairs by item (:mod:`evalcore.pairwise.schedule`), normalise, draw sides,
    run the identifiability check per arm pair. Pure: nothing is written (see :func:`write_plan`)."""
    steps, suite_id, items, holdout = _checked(session_id, arms, normalise, mirror, holdout, suite_id, pairs_per_item)
    seed = int(seed) if seed is not None else secrets.randbelow(2**31)
    key_seed = int(key_seed) if key_seed is not None else secrets.randbits(62)
    created_at = created_at or utcnow()
    tag = zlib.crc32(session_id.encode("utf-8"))
    pub = np.random.default_rng([seed, tag, 0x5E55])
    slots = schedule.assign(np.random.default_rng([seed, key_seed, tag, 0x5C4E]), len(items), len(arms), pairs_per_item)
    sides = schedule.draw_sides(np.random.default_rng([seed, key_seed, tag, 0x51DE]), slots)
    names = [a.name for a in arms]
    everyone = set().union(*(a.texts for a in arms))
    missing = [sorted((everyone - set(a.texts)) | set(a.unusable)) for a in arms]
    raw = [(arms[i].texts[items[t]], arms[j].texts[items[t]]) for t, i, j in slots]
    shown_arm, trimmed = _shown(raw, steps, length_match)
    slot_names = [(names[i], names[j]) for _, i, j in slots]
    pairs, key = _draw_pairs(pub, [items[t] for t, _, _ in slots], shown_arm, sides, slot_names, holdout, mirror)
    checks = _arm_pair_checks(slots, raw, shown_arm, sides, names, seed, n_perm)
    warnings = _plan_warnings(arms, pairs, missing, checks, length_match)
    manifest = S.SessionManifest(
        session_id=session_id,
        suite_id=suite_id,
        created_at=created_at,
        settings=S.SessionSettings(
            normalise=steps, length_match=bool(length_match), mirror_fraction=float(mirror), holdout=holdout, seed=seed
        ),
        status="open",
        n_pairs=len(pairs),
        source=cast(Literal["made", "imported", "simulated"], source),
        simulated=simulated,
        sealed=sorted(seal_hash(session_id, a.generation) for a in arms if a.generation),
    )
    km = S.KeyManifest(session_id=session_id, arms={a.name: a.source for a in arms}, created_at=created_at)
    record = {
        "schema_version": S.SCHEMA_VERSION,
        "session_id": session_id,
        "arms": names,
        "sources": {a.name: a.source for a in arms},
        **{"seed": seed, "key_seed": key_seed, "gen_round": int(gen_round), "normalise": steps},
        **{"length_match": bool(length_match), "words_trimmed": _words_trimmed(slots, trimmed, names)},
        "missing": dict(zip(names, missing)),
        "identifiability": _identifiability(checks, names, public=False),
        "created_at": created_at.isoformat(),
    }
    summary = {
        "session_id": session_id,
        "suite_id": suite_id,
        "pairs": len(pairs),
        "original_pairs": len(slots),
        "mirrors": len(pairs) - len(slots),
        "holdout": holdout,
        "seed": seed,
        "normalise": steps,
        "length_match": bool(length_match),
        "missing": {f"{_ordinal(k)}_arm": len(m) for k, m in enumerate(missing)},
        "identifiability": _identifiability(checks, names, public=True),
        "warnings": warnings,
    }
    if len(arms) > 2:
        record.update(pairs_per_item=int(pairs_per_item), schedule=_schedule_counts(slots, sides, names))
        summary.update(arms=len(arms), items=len(items), pairs_per_item=int(pairs_per_item))
    return SessionPlan(manifest, pairs, km, key, record, summary, warnings)


def with_brief(
    plan: SessionPlan, arms: Sequence[Arm], instructions: str = "", created_by: str | None = None
) -> SessionPlan:
    """``plan`` with what its graders read before the first pair (``instructions``: what "better"
    means here; trimmed, at most :data:`INSTRUCTIONS_MAX` characters, naming no arm) and who made
    it (``created_by``, one line: whom a grader tells they are done), in its manifest and summary."""
    text = str(instructions or "").strip()
    if len(text) > INSTRUCTIONS_MAX:
        raise InputError(
            f"the instructions are {len(text)} characters long, more than {INSTRUCTIONS_MAX}", field="--instructions"
        )
    for a in arms:
        if _names_word(text, a.name):
            raise InputError(
                "the instructions name one of the arms: graders read them, and a blinded session must not",
                field="--instructions",
            )
    by = " ".join(str(created_by or "").split())[:200] or None
    plan.manifest = plan.manifest.model_copy(update={"instructions": text, "created_by": by})
    plan.summary.update({k: v for k, v in (("instructions", text), ("created_by", by)) if v})
    return plan


def _checked(
    session_id: str,
    arms: Sequence[Arm],
    normalise: Iterable[str],
    mirror: float,
    holdout: int,
    suite_id: str | None,
    per_item: int = 1,
) -> tuple[list[str], str | None, list[str], int]:
    """The checked normalisation steps, suite (else the arms'), the items all arms answer and holdout."""
    check_id(session_id, "session id")
    _check_arms(arms, per_item)
    for a in arms:
        if _mentions(session_id, a.name):
            raise InputError(
                f"session id {session_id!r} names one of the arms: a blinded session must not", field="--session"
            )
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
    items = sorted(set.intersection(*(set(a.texts) for a in arms)))
    if not items:
        raise InputError(
            "the two arms have no item in common" if len(arms) == 2 else f"no item is answered by all {len(arms)} arms",
            field="--arm",
        )
    holdout, n = int(holdout), len(items) * int(per_item)
    if not 0 <= holdout < n:
        raise InputError(
            f"--holdout {holdout} must leave at least one of the {n} pairs in the headline", field="--holdout"
        )
    return steps, suite_id, items, holdout


def _check_arms(arms: Sequence[Arm], per_item: int) -> None:
    """Two arms or more, each once (by name and by source), and a pairs-per-item budget that shows
    an item's arm pair at most once."""
    if len(arms) < 2:
        raise InputError(f"a session compares two arms or more, got {len(arms)}", field="--arm")
    seen: dict[str, Arm] = {}
    for a in arms:
        if a.name in seen:
            two = "both arms" if len(arms) == 2 else "two arms"
            raise InputError(f"{two} are called {a.name!r}: give each arm once", field="--arm")
        same = next((b for b in seen.values() if b.source == a.source), None)
        if same is not None:
            raise InputError(
                f"arms {same.name!r} and {a.name!r} are the same answers ({a.source}): give each arm once",
                field="--arm",
            )
        seen[a.name] = a
    most = schedule.n_arm_pairs(len(arms))
    if isinstance(per_item, bool) or not isinstance(per_item, int) or not 1 <= per_item <= most:
        raise InputError(
            f"--pairs-per-item {per_item} is not between 1 and {most}, the number of pairs of {len(arms)} arms "
            "(an item shows each pair of arms at most once; --mirror shows pairs again)",
            field="--pairs-per-item",
        )


def _ordinal(k: int) -> str:
    """0 -> "first", ..., 9 -> "tenth", then "11th" ...: an --arm by its position."""
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
    return words[k] if k < len(words) else f"{k + 1}th"


def _shown(
    raw: list[tuple[str, str]], steps: list[str], length_match: bool
) -> tuple[list[tuple[str, str]], list[tuple[int, int]]]:
    """Each pair's answers as shown (normalised, length-matched if asked) and the words trimmed from each."""
    shown = [(blinding.normalise(x, steps), blinding.normalise(y, steps)) for x, y in raw]
    if not length_match:
        return shown, [(0, 0)] * len(shown)
    matched, trimmed = [], []
    for x, y in shown:
        mx, my = blinding.length_match(x, y)
        trimmed.append(
            (blinding.word_count(x) - blinding.word_count(mx), blinding.word_count(y) - blinding.word_count(my))
        )
        matched.append((mx, my))
    return matched, trimmed


def _draw_pairs(
    pub: np.random.Generator,
    items: list[str],
    shown: list[tuple[str, str]],
    sides: np.ndarray,
    names: Sequence[tuple[str, str]],
    holdout: int,
    mirror: float,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The shown pairs and their key rows, by pair id: one per original pair (``items``: its item,
    ``names``: its two arms, ``shown``: their texts) on its ``sides``, and the pair ids, holdout and
    mirrored pairs drawn from ``pub`` in this order (a mirror swaps its original's sides)."""
    n = len(items)
    n_mirror = min(int(round(float(mirror) * n)), n - holdout)
    all_ids = _new_ids(pub, n + n_mirror)
    ids, mirror_ids = all_ids[:n], all_ids[n:]
    held = np.zeros(n, dtype=bool)
    if holdout:
        held[pub.choice(n, holdout, replace=False)] = True
    candidates = np.flatnonzero(~held)
    mirrored = sorted(pub.choice(candidates, n_mirror, replace=False).tolist()) if n_mirror else []
    pairs: list[dict[str, Any]] = []
    key: list[dict[str, str]] = []
    for k, iid in enumerate(items):
        first_left = bool(sides[k])
        x, y = shown[k]
        left, right = (x, y) if first_left else (y, x)
        la, ra = names[k] if first_left else names[k][::-1]
        pairs.append(
            {
                "pair_id": ids[k],
                "item_id": iid,
                "left_text": left,
                "right_text": right,
                "mirror_of": None,
                "holdout": bool(held[k]),
            }
        )
        key.append({"pair_id": ids[k], "left_arm": la, "right_arm": ra})
    for m, k in zip(mirror_ids, mirrored):
        p, kk = pairs[k], key[k]
        pairs.append(
            {
                "pair_id": m,
                "item_id": p["item_id"],
                "left_text": p["right_text"],
                "right_text": p["left_text"],
                "mirror_of": p["pair_id"],
                "holdout": False,
            }
        )
        key.append({"pair_id": m, "left_arm": kk["right_arm"], "right_arm": kk["left_arm"]})
    pairs.sort(key=lambda r: r["pair_id"])
    key.sort(key=lambda r: r["pair_id"])
    return pairs, key


def arm_identifiability(
    texts: Sequence[tuple[str, str]],
    sides: Sequence[bool] | np.ndarray,
    names: Sequence[str],
    seed: int,
    n_perm: int,
    level: float = blinding.LEVEL,
) -> dict[str, Any]:
    """:func:`evalcore.pairwise.leakage.identifiability` of the original pairs' ``texts`` (first arm's,
    second's) on their ``sides`` (True: the first arm on the left), with each arm's feature means."""
    lt = [t[0] if sides[k] else t[1] for k, t in enumerate(texts)]
    rt = [t[1] if sides[k] else t[0] for k, t in enumerate(texts)]
    marker = leakage.find_marker(lt, rt)
    out = leakage.identifiability(
        leakage.feature_matrix(lt, marker),
        leakage.feature_matrix(rt, marker),
        sides,
        seed=seed,
        marker=marker,
        n_perm=n_perm,
        level=level,
    )
    out["feature_means"] = {name: leakage.feature_means([t[i] for t in texts], marker) for i, name in enumerate(names)}
    return out


def _arm_pair_checks(
    slots: Sequence[schedule.Slot],
    raw: Sequence[tuple[str, str]],
    shown: Sequence[tuple[str, str]],
    sides: np.ndarray,
    names: Sequence[str],
    seed: int,
    n_perm: int,
) -> list[dict[str, Any]]:
    """:func:`arm_identifiability` of each arm pair's original pairs, raw ("before") and as shown
    ("after"): a grader who can tell two arms apart can in every pair of those two. With M > 1
    pairs of arms each interval is at level 1 - 0.05 / M (Bonferroni), aiming at a 5% chance that
    any pair of arms that cannot be told apart is called identifiable (bench/pairs_false_alarms.py
    measures how near it comes)."""
    out = []
    arm_pairs = sorted({(i, j) for _, i, j in slots})
    level = blinding.LEVEL if len(arm_pairs) == 1 else 1 - (1 - blinding.LEVEL) / len(arm_pairs)
    for i, j in arm_pairs:
        at = [s for s, (_, a, b) in enumerate(slots) if (a, b) == (i, j)]
        two = (names[i], names[j])
        out.append(
            {
                "arms": (i, j),
                "pairs": len(at),
                "before": arm_identifiability([raw[s] for s in at], sides[at], two, seed, n_perm, level),
                "after": arm_identifiability([shown[s] for s in at], sides[at], two, seed, n_perm, level),
            }
        )
    return out


def _words_trimmed(slots: Sequence[schedule.Slot], trimmed: list[tuple[int, int]], names: list[str]) -> dict:
    """The words length matching trimmed from each arm's answers, over its pairs."""
    out = dict.fromkeys(names, 0)
    for (_, i, j), (ti, tj) in zip(slots, trimmed):
        out[names[i]] += ti
        out[names[j]] += tj
    return out


def _identifiability(checks: list[dict[str, Any]], names: Sequence[str], *, public: bool) -> dict[str, Any]:
    """The checks as recorded: two arms, {before, after}; more, those of the arm pair most easily
    told apart as shown, which that is, and every arm pair's (``by_arm_pair``). ``public``: arms by
    their --arm position from 1 and no feature means (for the output), else by name (for the key)."""

    def view(c: dict) -> dict:
        return _public_check(c, names) if public else c

    def arms(c: dict) -> list:
        return [k + 1 if public else names[k] for k in c["arms"]]

    if len(names) == 2:
        return {"before": view(checks[0]["before"]), "after": view(checks[0]["after"])}
    worst = max(checks, key=lambda c: (bool(c["after"].get("identifiable")), c["after"].get("accuracy") or 0.0))
    return {
        "before": view(worst["before"]),
        "after": view(worst["after"]),
        "most_identifiable": arms(worst),
        "by_arm_pair": [
            {"arms": arms(c), "pairs": c["pairs"], "before": view(c["before"]), "after": view(c["after"])}
            for c in checks
        ],
    }


def _schedule_counts(slots: Sequence[schedule.Slot], sides: np.ndarray, names: Sequence[str]) -> list[dict]:
    """Per arm pair (by name, for the key's record): its original pairs and how many have its first arm left."""
    out = []
    for i, j in sorted({(i, j) for _, i, j in slots}):
        at = [s for s, (_, a, b) in enumerate(slots) if (a, b) == (i, j)]
        out.append({"arms": [names[i], names[j]], "pairs": len(at), "first_left": int(sides[at].sum())})
    return out


def _plan_warnings(
    arms: Sequence[Arm], pairs: list[dict[str, Any]], missing: list[list[str]], checks: list[dict], length_match: bool
) -> list[str]:
    """Warnings: the shown answers tell two arms apart (each such arm pair by its --arm positions),
    an arm's name is shown, an arm lacks answers."""
    warnings = []
    for c in checks:
        after = _public_check(c["after"], [a.name for a in arms])
        if not after.get("identifiable"):
            continue
        lo, hi = after["interval"]
        i, j = c["arms"]
        who = "the arms" if len(arms) == 2 else f"the {_ordinal(i)} and {_ordinal(j)} --arm"
        their = "" if len(arms) == 2 else "their "
        warnings.append(
            f"{who} can be told apart from the shown answers: {100 * after['accuracy']:.0f}% of {their}pairs' sides "
            f"guessed right (interval {100 * lo:.0f}-{100 * hi:.0f}%, chance 50%)"
            + (f"; the leaking feature is {leakage.leaking_words(after)}" if after["leaking_feature"] else "")
            + ("" if length_match or after["leaking_feature"] != "length" else "; consider --length-match")
        )
    for pos, a in enumerate(arms):
        ord_ = _ordinal(pos)
        hits = [
            p["item_id"]
            for p in pairs
            if _names_word(p["left_text"] + "\n" + p["right_text"], a.name) or _names_word(p["item_id"], a.name)
        ]
        if hits:
            warnings.append(
                f"the {ord_} --arm's name appears in {len(set(hits))} shown pair(s) (items "
                f"{', '.join(sorted(set(hits))[:5])}): a grader can read it"
            )
        if missing[pos]:
            warnings.append(
                f"the {ord_} --arm has no usable answer for {len(missing[pos])} item(s) "
                f"({', '.join(missing[pos][:5])}{', ...' if len(missing[pos]) > 5 else ''}): left out"
            )
    return warnings


def _public_check(check: dict, names: Sequence[str]) -> dict:
    """An identifiability check without the per-arm feature means (which name the arms), and
    without its marker's text when that names an arm."""
    out = {k: v for k, v in check.items() if k != "feature_means"}
    m = out.get("marker")
    if m and any(_names_word(m["text"], a) for a in names):
        out["marker"] = {**m, "text": "(an arm's name)"}
    return out


def _refuse_keys_inside(store: Store, kdir: Path) -> None:
    kdir = kdir.resolve()
    for root, what in ((store.data, "data"), (Path(store.state).resolve(), "state")):
        if kdir == root or kdir.is_relative_to(root):
            raise PathEscapeError(
                f"the keys directory must not be inside the {what} directory (the app reads it)",
                file=kdir,
                field="--keys",
            )
        if root.is_relative_to(kdir):
            raise PathEscapeError(
                f"the keys directory must not contain the {what} directory", file=kdir, field="--keys"
            )


def write_plan(
    store: Store, plan: SessionPlan, keys_dir: Path | str | None = None, judgments: Any = None, overwrite: bool = False
) -> dict:
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


def make_session(
    store: Store,
    session_id: str,
    arm_specs: Sequence[str],
    *,
    keys_dir: Path | str | None = None,
    gen_round: int = 1,
    instructions: str = "",
    created_by: str | None = None,
    **kw: Any,
) -> dict:
    """``evalcore pairs make``: load the arms, plan, write. Returns the summary (no arm name).
    ``instructions`` and ``created_by``: :func:`with_brief`."""
    if len(arm_specs) < 2:
        raise InputError(f"give two --arm NAME=GEN_OR_FILE or more, got {len(arm_specs)}", field="--arm")
    arms = [load_arm(store, *parse_arm(s), gen_round=gen_round) for s in arm_specs]
    kdir = Path(keys_dir) if keys_dir is not None else store.keys
    _refuse_keys_inside(store, kdir)
    plan = with_brief(plan_session(session_id, arms, gen_round=gen_round, **kw), arms, instructions, created_by)
    return write_plan(store, plan, kdir)
