"""The active schedule run on an open session (issue 43; ``evalcore pairs schedule``): the next
pairs where a judgment teaches most which arm is best, queued for people to grade first, and the
stopping rule.

It is a step the session's owner runs with the keys directory, like ``pairs close``: the key maps
each pair to its arms, which the choice needs, and the grading page never reads it. What it writes
to the state names pairs only (:mod:`evalcore.pairwise.schedulelog`): the queued pairs join the
first-pairs queue (:meth:`evalcore.pairwise.grading.JudgmentStore.add_first`'s table, reason
``active_schedule``), which :func:`evalcore.pairwise.grading.progress` puts before each reviewer's
own order; each pick's probability, pool, weight, reason and ``sides_relaxed`` and the run's
verdict (settled or not) are appended beside it.

How the picks are made (:func:`schedule`):

* the **history** is every person's current choice (shipped or the state's) on the session's
  non-holdout pairs, originals and mirrors, each mapped to its arms with the key: arm a = the arm
  shown left, its score 1 (left), 0.5 (same) or 0 (right), the item, the reviewer as the grader;
* the **candidates** are the original, non-holdout pairs nobody has judged yet and nobody has
  queued yet, with their fixed sides and items;
* the **stopping rule** (:func:`evalcore.stats.activeschedule.settled` at ``level``) is asked
  first; when the top arm is settled nothing is queued and the answer is "close the session";
* else :func:`evalcore.stats.activeschedule.choose` is called ``n`` times with ``grader=None`` (the
  queue is every reviewer's, so the sides are balanced over all judgments), with the seed
  ``[seed, judgments so far, rank]``, each pick removed from the candidates before the next. Only
  the first pick is drawn on everything known: the outcomes of the picks before it are unknown, so
  the later ones are the best by the same fit and history among the candidates left (their ``p``
  and ``weight`` are those of that reduced candidate set, as recorded).
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.pairwise.grading import (
    JudgmentStore,
    _checked_key,
    _people,
    load_pairs,
    read_key,
    session_status,
)
from evalcore.pairwise.schedulelog import REASON, record_run
from evalcore.stats import activeschedule as act
from evalcore.storage.paths import utcnow
from evalcore.storage.store import Store

N_BOOT = 1000
_SCORE = {"left": 1.0, "same": 0.5, "right": 0.0}


@dataclass
class Pick(Result):
    """One pair queued: its rank in the run, what ``choose`` returned for it (no arm named)."""

    pair_id: str
    item_id: str
    rank: int
    p: float
    pool: int
    weight: float
    reason: str
    sides_relaxed: bool
    score: float


@dataclass
class Scheduled(Result):
    """:func:`schedule`: the judgments seen, the pairs queued, the stopping rule's answer (the
    leader is named: only the owner, who has the key, runs this) and what to do next."""

    session_id: str
    arms: list[str]
    judgments: int
    candidates: int
    queued: list[Pick]
    level: float
    settled: bool
    leader: str | None
    p_best: float
    seed: int
    recommendation: str


def schedule(
    store: Store,
    session_id: str,
    keys_dir: Path | str,
    *,
    n: int = 1,
    level: float = 0.9,
    seed: int | None = None,
    n_boot: int = N_BOOT,
    via: str = "cli",
) -> Scheduled:
    """Queue the next ``n`` pairs of an open session to be graded first, chosen by the active
    schedule, after asking the stopping rule (the module's docstring); refused for a session that
    is unknown or closed, a key that is not the session's, ``n`` < 1 or a level outside (0, 1)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"--next must be at least 1, got {n!r}", field="--next")
    if not 0.0 < float(level) < 1.0:
        raise InputError(f"--level must lie strictly between 0 and 1, got {level!r}", field="--level")
    entry = store.session(session_id)
    if session_status(store, session_id).status != "open":
        raise InputError(f"session {session_id!r} is closed: nothing is left to schedule", field="--session")
    km, rows, _ = read_key(keys_dir, session_id)
    arms = list(km.arms)
    pairs = load_pairs(store, session_id)
    by_id = _checked_key(pairs, rows, arms, Path(keys_dir).resolve() / session_id / "key.parquet")
    seed = int(entry.manifest.settings.seed) if seed is None else int(seed)
    hist, judged = _history(store, session_id, pairs, by_id, arms)
    n_seen = int(hist.a.size)
    verdict = _stopping(hist, level, n_boot, seed)
    js = JudgmentStore(store)
    queued_before = {f["pair_id"] for f in js.first(session_id)}
    cand_pairs = [
        p for p in pairs
        if not p["mirror_of"] and not p["holdout"] and p["pair_id"] not in judged | queued_before
    ]  # fmt: skip
    picks = [] if verdict.settled or not cand_pairs else _picks(hist, cand_pairs, by_id, arms, n, seed)
    with closing(js._connect()) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            now_queued = {
                r[0] for r in con.execute("SELECT pair_id FROM first_pairs WHERE session_id = ?", (session_id,))
            }
            if now_queued != queued_before:  # another run (or a queue) wrote meanwhile: its picks are stale
                raise InputError(
                    f"the first-pairs queue of {session_id!r} changed while the schedule ran: run it again",
                    field="--session",
                )
            for pk in picks:
                con.execute(
                    "INSERT OR IGNORE INTO first_pairs (session_id, pair_id, reason, source, created_at, via) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, pk.pair_id, REASON, f"schedule:{n_seen}", utcnow().isoformat(), via),
                )
            record_run(
                con, session_id, judgments_seen=n_seen, level=level, settled=verdict.settled, seed=seed,
                picks=[vars(pk) for pk in picks], via=via,
            )  # fmt: skip
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    leader = arms[verdict.top] if verdict.top >= 0 else None
    return Scheduled(
        session_id, arms, n_seen, len(cand_pairs), picks, float(level), verdict.settled, leader,
        verdict.p_best, seed, _recommend(verdict.settled, picks, cand_pairs, level),
    )  # fmt: skip


def _history(store: Store, session_id: str, pairs: list[dict], by_id: dict, arms: list[str]):
    """The judgments so far as :class:`evalcore.stats.activeschedule.History`, and the pairs judged."""
    counted = {p["pair_id"]: p for p in pairs if not p["holdout"]}
    idx = {a: i for i, a in enumerate(arms)}
    people = [r for r in _people(store, session_id) if r["choice"] is not None]
    rows = [r for r in people if r["pair_id"] in counted]
    keys = [by_id[r["pair_id"]] for r in rows]
    hist = act.history(
        np.array([idx[k["left_arm"]] for k in keys], dtype=np.int64),
        np.array([idx[k["right_arm"]] for k in keys], dtype=np.int64),
        [_SCORE[r["choice"]] for r in rows],
        k=len(arms),
        item=np.array([counted[r["pair_id"]]["item_id"] for r in rows], dtype=object),
        a_left=np.ones(len(rows), bool),
        grader=np.array([r["reviewer"] for r in rows], dtype=object),
    )
    return hist, {r["pair_id"] for r in people}


def _stopping(hist: act.History, level: float, n_boot: int, seed: int) -> act.Settled:
    """The stopping rule on the judgments so far; nothing is settled, and no arm leads (top -1),
    while an arm has no judgment (its strength cannot be estimated)."""
    if np.union1d(hist.a, hist.b).size < hist.k:
        return act.Settled(False, -1, 0.0)
    return act.settled(
        hist.a, hist.b, hist.y, k=hist.k, item=hist.item, level=level, n_boot=n_boot, seed=[seed, int(hist.a.size)]
    )


def _picks(hist: act.History, cand_pairs: list[dict], by_id: dict, arms: list[str], n: int, seed: int) -> list[Pick]:
    """``n`` calls of ``choose`` (fewer when the candidates run out), each pick removed before the next."""
    idx = {a: i for i, a in enumerate(arms)}
    left = np.array([idx[by_id[p["pair_id"]]["left_arm"]] for p in cand_pairs], dtype=np.int64)
    right = np.array([idx[by_id[p["pair_id"]]["right_arm"]] for p in cand_pairs], dtype=np.int64)
    items = np.array([p["item_id"] for p in cand_pairs], dtype=object)
    ids = [p["pair_id"] for p in cand_pairs]
    out: list[Pick] = []
    for rank in range(min(n, len(ids))):
        cands = act.candidates(left, right, items, k=hist.k)
        c = act.choose(hist, cands, grader=None, seed=[seed, int(hist.a.size), rank])
        out.append(Pick(ids[c.index], str(c.item), rank, c.p, c.pool, c.weight, c.reason, c.sides_relaxed, c.score))
        keep = np.arange(len(ids)) != c.index
        left, right, items = left[keep], right[keep], items[keep]
        ids = [p for i, p in enumerate(ids) if i != c.index]
    return out


def _recommend(settled: bool, picks: list[Pick], cand_pairs: list[dict], level: float) -> str:
    if settled:
        return f"the top arm is settled at {100 * level:.0f}%: close the session (`evalcore pairs close`)"
    if not cand_pairs:
        return "no original pair is left unjudged and unqueued: grade the queued pairs, or close the session"
    return f"{len(picks)} pair(s) queued to be graded first: run `evalcore pairs schedule` again once they are judged"


def format_scheduled(s: Scheduled) -> str:
    """The text of ``evalcore pairs schedule``."""
    lead = (
        f"leader {s.leader}, P(best) {100 * s.p_best:.1f}% ({'settled' if s.settled else 'not settled'} at "
        f"{100 * s.level:.0f}%)"
        if s.leader is not None
        else f"not every arm has a judgment yet: nothing is settled at {100 * s.level:.0f}%"
    )
    lines = [
        f"session {s.session_id}: {s.judgments} judgments of {len(s.arms)} arms so far; {s.candidates} original "
        f"pair(s) not judged or queued",
        f"stopping rule: {lead}",
        *(
            f"  queued {q.pair_id} (item {q.item_id}): p {q.p:.3f}, pool {q.pool}, weight {q.weight:.2f}, {q.reason}"
            + (", sides relaxed" if q.sides_relaxed else "")
            for q in s.queued
        ),
        s.recommendation,
    ]
    return "\n".join(lines)
