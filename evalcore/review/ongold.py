"""The judges' values on the gold cases, as arrays: what the report card compares with gold.

For every run and criterion, :class:`OnGold` holds one row per gold case of that criterion (in the
order of the card's gold keys) and one column per judge round: ``present`` (the run judged the case
in that round) and ``value`` (the judge's category, None when the verdict errored). The report card
reads a judge round's column for each judge against gold (:meth:`OnGold.at`) and every round for the
repeat figures (:func:`repeat_entry`): 12,000 gold cases at 18M verdict rows, so no per-case Python
beyond building the arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.review.judges import _answers, _pairs_x, mask_runs
from evalcore.stats import agreement as A
from evalcore.storage.itemkeys import item_rows
from evalcore.storage.store import Store

#: gold key: (item_id, gen_round, criterion)
Key = tuple[str, int, str]
#: a pass / fail bit pair's value: passed, failed, neither (errored)
_PASS_FAIL = np.array(["pass", "fail", None], dtype=object)


@dataclass
class OnGold:
    """Per (run, criterion): ``present`` and ``value``, shape (gold cases of the criterion, rounds)."""

    keys: dict[str, list[Key]]  # criterion -> its gold keys, in the card's order
    present: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    value: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)

    def _arrays(self, rid: str, crit: str, rounds: int) -> tuple[np.ndarray, np.ndarray]:
        """The arrays of (rid, crit), created (or widened) to hold ``rounds`` judge rounds."""
        n = len(self.keys.get(crit, []))
        p, v = self.present.get((rid, crit)), self.value.get((rid, crit))
        if p is None or v is None or p.shape[1] < rounds:
            width = max(rounds, 0 if p is None else p.shape[1])
            p2, v2 = np.zeros((n, width), dtype=bool), np.full((n, width), None, dtype=object)
            if p is not None and v is not None:
                p2[:, : p.shape[1]], v2[:, : v.shape[1]] = p, v
            self.present[(rid, crit)], self.value[(rid, crit)] = p2, v2
            return p2, v2
        return p, v

    def at(self, rid: str, crit: str, judge_round: int) -> list[str | None]:
        """The run's value on each gold case of ``crit`` at ``judge_round`` (None: not judged, or
        errored)."""
        n = len(self.keys.get(crit, []))
        p, v = self.present.get((rid, crit)), self.value.get((rid, crit))
        if p is None or v is None or not 1 <= judge_round <= p.shape[1]:
            return [None] * n
        col = v[:, judge_round - 1].copy()
        col[~p[:, judge_round - 1]] = None
        return col.tolist()


def on_gold(
    store: Store,
    vsql: str | None,
    vparams: list[Any],
    run_ids: list[str],
    ms: dict[str, S.RunManifest],
    gkeys: Sequence[Key],
    cut: tuple[str, list[Any]],
) -> OnGold:
    """Every run's values on the gold cases ``gkeys``, every judge round. A pass / fail criterion
    of a run with an answers table is read from its masks (the rows of the gold answers only, by
    integer item key, from the rows of the labelled items kept in the state: :mod:`evalcore.storage.itemkeys`), the rest from the
    verdicts (``vsql``)."""
    by_crit: dict[str, list[Key]] = {}
    for k in gkeys:
        by_crit.setdefault(k[2], []).append(k)
    out = OnGold(by_crit)
    answers = sorted({(k[0], k[1]) for k in gkeys})
    a_index = {a: i for i, a in enumerate(answers)}
    # per criterion: answer index -> the row of its gold case (-1: no gold case on this answer)
    rows_of = {}
    for c, ks in by_crit.items():
        r = np.full(len(answers), -1, dtype=np.int64)
        r[[a_index[(k[0], k[1])] for k in ks]] = np.arange(len(ks))
        rows_of[c] = r
    masks = mask_runs(store, run_ids, ms)
    for rid, (path, bits, _) in masks.items():
        wanted = {c: k for c, k in bits.items() if c in by_crit}
        if not wanted:
            continue
        got_rows = item_rows(store, path, sorted({a[0] for a in answers}))  # the gold items' rows, kept
        keys = None if got_rows is None else got_rows[0]
        q, p = _answers(path if got_rows is None else got_rows[1], "judge_round >= 1", cut)
        col, kind, ids = (
            ("item_id", "VARCHAR", [a[0] for a in answers])
            if keys is None
            else ("item", "INTEGER", [keys.get(a[0], -1) for a in answers])
        )
        got = store.arrays(  # the store's shared connection: a fresh one costs about 20 ms
            f"WITH g AS (SELECT unnest(?::{kind}[]) AS {col}, unnest(?::BIGINT[]) AS gen_round, "
            "unnest(range(?::BIGINT)) AS ai) "
            f"SELECT g.ai, a.judge_round, a.present, a.passed, a.failed FROM ({q}) a "
            f"JOIN g ON a.{col} = g.{col} AND a.gen_round = g.gen_round",
            [ids, [a[1] for a in answers], len(answers), *p],
        )
        if not len(got["ai"]):
            continue
        ai, jr = np.asarray(got["ai"], dtype=np.int64), np.asarray(got["judge_round"], dtype=np.int64)
        present, passed, failed = (np.asarray(got[x], dtype=np.int64) for x in ("present", "passed", "failed"))
        rounds = int(jr.max())
        for c, bit in wanted.items():
            row = rows_of[c][ai]
            on = (row >= 0) & ((present >> bit) & 1 == 1)
            if not on.any():
                continue
            pa, va = out._arrays(rid, c, rounds)
            r_, j_ = row[on], jr[on] - 1
            pa[r_, j_] = True
            pick = np.where((passed[on] >> bit) & 1 == 1, 0, np.where((failed[on] >> bit) & 1 == 1, 1, 2))
            va[r_, j_] = _PASS_FAIL[pick]
    rest = [(rid, c) for rid in run_ids for c in ms[rid].rubric.names() if rid not in masks or c not in masks[rid][1]]
    if not masks:
        x, xparams = vsql, vparams
    elif rest:
        x, xparams = _pairs_x(vsql, vparams, rest)
    else:
        return out
    row_of = {c: {k: i for i, k in enumerate(ks)} for c, ks in by_crit.items()}
    for rid, item_id, gen_round, crit, jr_, value in store.sql(
        f"WITH x AS ({x}), g AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion) SELECT x.run_id, x.item_id, x.gen_round, x.criterion, "
        "x.judge_round, x.value FROM x JOIN g USING (item_id, gen_round, criterion) ORDER BY x.judge_round DESC",
        [*xparams, [k[0] for k in gkeys], [k[1] for k in gkeys], [k[2] for k in gkeys]],
    ):
        if jr_ < 1:
            continue
        pa, va = out._arrays(rid, crit, int(jr_))
        i = row_of[crit][(item_id, int(gen_round), crit)]
        pa[i, jr_ - 1], va[i, jr_ - 1] = True, value
    return out


@dataclass
class VsGold(Result):
    """Round 1 or the majority of the rounds against gold."""

    n: int
    kappa: float | None
    accuracy: float | None


@dataclass
class RepeatRow(Result):
    """A run's repeat consistency on one criterion (:func:`evalcore.review.judges._repeat`'s
    figures), with round 1 and the majority of the rounds each against gold."""

    run_id: str
    rounds: int
    n: int
    unanimous: int
    unanimous_share: float | None
    fleiss_kappa: float | None
    fleiss_reason: str | None
    majority_ties: int | None
    majority_vs_round1: float | None
    round1_vs_gold: VsGold
    majority_vs_gold: VsGold


def repeat_entry(
    per_run: dict[str, dict],
    og: OnGold,
    name: str,
    gold_codes: np.ndarray,
    cats: list[str],
    weights: A.Weights,
) -> list[RepeatRow]:
    """Repeat consistency rows of criterion ``name``, with the majority of the rounds and round 1
    each against gold (``gold_codes``: gold's category index per gold case of ``name``)."""
    code = {c: k for k, c in enumerate(cats)}
    rows = []
    for rid, r in sorted(per_run.items()):
        p, v = og.present.get((rid, name)), og.value.get((rid, name))
        if p is None or v is None:
            g1 = j1 = gm = jm = np.zeros(0, dtype=np.int64)
        else:
            codes = np.full(v.shape, A.MISSING, dtype=np.int64)
            for c, k in code.items():  # elementwise == on the object array: no Python call per case
                codes[p & (v == c)] = k
            judged = p.any(axis=1)  # a case the run judged in some round (errored or not)
            first = judged & (codes[:, 0] != A.MISSING)
            g1, j1 = gold_codes[first], codes[first, 0]
            valid = codes != A.MISSING
            counts = np.stack([(codes == k).sum(axis=1) for k in range(len(cats))], axis=1)
            top = counts.argmax(axis=1)
            strict = judged & (2 * counts.max(axis=1) > valid.sum(axis=1))
            gm, jm = gold_codes[strict], top[strict]
        vs = [
            VsGold(
                int(len(g)), A.cohen_kappa(g, j, len(cats), weights).value, A.accuracy(g, j).value if len(g) else None
            )
            for g, j in ((g1, j1), (gm, jm))
        ]
        rows.append(RepeatRow(run_id=rid, **r, round1_vs_gold=vs[0], majority_vs_gold=vs[1]))
    return rows
