"""Compare two configurations: per-round figures with their spread over the items both answered,
paired per-item deltas, stable wins and regressions, the noise floor, the two-sided bar, latency
and cost beside score, and the power of the comparison. Which knobs differ is
:mod:`evalcore.analysis.configs` (:func:`~evalcore.analysis.configs.diff`, where compare starts);
the gate, its allowlist, the Markdown summary and the trend are :mod:`evalcore.analysis.gating`.
See docs/COMPARE.md for every definition.

* :func:`compare` is everything the compare page shows for a baseline and a candidate run:
  :func:`per_round` figures (``all_pass``, ``ternary`` when the rubric grades correct / partial /
  wrong, then every criterion both runs judged, :func:`metrics_of`), the paired deltas with a
  seeded percentile bootstrap interval (:mod:`evalcore.stats.bootstrap`; an analytic t interval
  past :data:`BOOTSTRAP_MAX_ITEMS` items), stable wins and regressions, the noise floor, the item
  coverage of each side, latency per answer and the power of the comparison
  (:func:`~evalcore.analysis.comparepower.power`).
* :func:`two_sided_bar`: the verdict compare and the gate share.

Vocabulary (tested in tests/test_compare.py):

* generation round r of A is paired with generation round r of B. An item is a **stable win**
  when B is better than A in every paired round, a **stable regression** when it is worse in every
  paired round (a round where either side errored breaks stability).
* the **noise floor** of a figure is the largest round-to-round spread (max - min over generation
  rounds) of that figure within either configuration; unknown with one round.
* the **two-sided bar** holds when B shows a gain that clears both the interval (the paired mean
  delta's 95% interval lies above zero) and the noise floor (the mean delta is larger than it),
  and no stable regression of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import numpy as np

from evalcore.analysis.bar import Verdict, _pct, _pts, two_sided_bar
from evalcore.analysis.comparecounts import TERNARY, Masks, _answers, _mask_figures, _pair_summary, _summary_sql
from evalcore.analysis.comparepower import Power, Skipped, power
from evalcore.analysis.configs import Diff, diff
from evalcore.analysis.corrected import CorrectedDelta
from evalcore.analysis.cost import answer_latency
from evalcore.analysis.means import CriterionMean, criterion_means, numeric_criteria
from evalcore.analysis.selection import Selection, _hold, _sel_sql, polluted_reason
from evalcore.analysis.summary import judge_alias_warning
from evalcore.analysis.thresholds import threshold_note
from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result
from evalcore.errors import InputError, NotFoundError
from evalcore.stats.bootstrap import generator, percentile_interval, resample
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- per-answer figures


def _ternary_names(store: Store, run_id: str) -> list[str]:
    return [c.name for c in store.run(run_id).manifest.rubric.criteria if c.kind == "ternary"]


def metrics_of(store: Store, run_a: str, run_b: str | None = None) -> list[str]:
    """``all_pass``, then ``ternary`` (the headline (correct + 0.5 partial) / N) when both runs
    judge the same ternary criteria, then every criterion both runs judged (in A's rubric order)."""
    ca = [c.name for c in store.run(run_a).manifest.rubric.criteria]
    tern = _ternary_names(store, run_a)
    if run_b is not None:
        cb = {c.name for c in store.run(run_b).manifest.rubric.criteria}
        ca = [c for c in ca if c in cb]
        if tern != _ternary_names(store, run_b):
            tern = []
    return ["all_pass", *([TERNARY] if tern and TERNARY not in ca else []), *ca]


def _selection(sel: Selection, include_holdout: bool | None) -> Selection:
    """``sel`` with holdout items included or not (None: as ``sel`` says, which is the command
    line's ``--include-holdout`` or hidden)."""
    return sel if include_holdout is None else replace(sel, include_holdout=bool(include_holdout))


_TERNARY_VALUE = (
    "CASE WHEN lower(label) = 'correct' THEN 1.0 WHEN lower(label) = 'partial' THEN 0.5 "
    "WHEN lower(label) = 'wrong' THEN 0.0 WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END"
)


def _pivot_sql(
    store: Store, run_id: str, metrics: list[str], sel: Selection, masks: Masks | None = None
) -> tuple[str, list[Any]]:
    """(item_id, gen_round, m0, m1, ...) per answer, one DOUBLE column per figure of ``metrics``:
    ``all_pass`` 1/0, null when a verdict errored or is missing; ``ternary`` correct 1, partial
    0.5, wrong 0 (the mean over ternary criteria), null when one errored; a criterion its derived
    pass 1/0 (null when errored). With ``masks`` (the run's answers table, :func:`_answers`) the
    same figures from its bit masks, with ``item`` (the generation's integer item key) beside
    ``item_id``."""
    m = store.run(run_id).manifest
    if masks is not None:
        return _mask_pivot_sql(masks, metrics, len(m.rubric.criteria))
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    cols: list[str] = []
    cp: list[Any] = []
    for j, name in enumerate(metrics):
        if name == "all_pass":
            cols.append(f"CASE WHEN count(passed) < ? THEN NULL ELSE bool_and(passed)::INT::DOUBLE END AS m{j}")
            cp.append(len(m.rubric.criteria))
        elif name == TERNARY:
            tern = _ternary_names(store, run_id)
            inl = "list_contains(?::VARCHAR[], criterion)"
            cols.append(
                f"CASE WHEN count({_TERNARY_VALUE}) FILTER (WHERE {inl}) < ? THEN NULL "
                f"ELSE avg({_TERNARY_VALUE}) FILTER (WHERE {inl}) END AS m{j}"
            )
            cp += [tern, len(tern), tern]
        else:
            cols.append(f"(bool_or(passed) FILTER (WHERE criterion = ?))::INT::DOUBLE AS m{j}")
            cp.append(name)
    sql = f"SELECT item_id, gen_round, {', '.join(cols)} FROM ({base}) GROUP BY item_id, gen_round"
    return sql, [*cp, store.path_of("run", run_id, "verdicts"), *params]


def _mask_pivot_sql(masks: Masks, metrics: list[str], n_criteria: int) -> tuple[str, list[Any]]:
    """:func:`_pivot_sql`'s figures from an answers table: one row per answer already, so no
    grouping (:func:`_mask_figures`)."""
    msql, mparams, names = masks
    cols = [f"{f} AS m{j}" for j, f in enumerate(_mask_figures(metrics, names, n_criteria))]
    return f"SELECT item_id, item, gen_round, {', '.join(cols)} FROM ({msql})", list(mparams)


@dataclass
class Rounds(Result):
    """One figure of one run: its value per generation round, their mean, spread (max - min) and sd."""

    by_round: list[float | None]
    mean: float | None
    spread: float | None
    sd: float | None


@dataclass
class PerRound(Result):
    """:func:`per_round`: a run's figures per generation round."""

    run_id: str
    status: str
    rounds: list[int]
    answers_by_round: list[int]
    figures: dict[str, Rounds]


def per_round(
    store: Store,
    run_id: str,
    *,
    sel: Selection | None = None,
    include_holdout: bool | None = None,
    metrics: list[str] | None = None,
) -> PerRound:
    """Each figure per generation round (r1, r2, ...), then the mean over rounds and the spread
    (max - min) that the noise floor is made of."""
    m = store.run(run_id).manifest
    sel = _selection(sel or Selection(), include_holdout)
    metrics = metrics or metrics_of(store, run_id)
    masks = _answers(store, [run_id], metrics, sel)
    piv, params = _pivot_sql(store, run_id, metrics, sel, None if masks is None else masks[run_id])
    cols = [f"avg(m{j}) AS m{j}" for j in range(len(metrics))]
    rows = store.sql(
        f"SELECT gen_round, count(*) AS answers, {', '.join(cols)} FROM ({piv}) GROUP BY gen_round ORDER BY gen_round",
        params,
    )
    return _round_figures(m, rows, metrics)


def _round_figures(m: S.RunManifest, rows: list[tuple], metrics: list[str]) -> PerRound:
    """Rows (gen_round, answers, m0, m1, ...) of run ``m`` -> its :class:`PerRound`."""
    figures = {}
    for j, name in enumerate(metrics):
        vals = [None if r[2 + j] is None else float(r[2 + j]) for r in rows]
        got = [v for v in vals if v is not None]
        figures[name] = Rounds(
            vals,
            float(np.mean(got)) if got else None,
            (max(got) - min(got)) if len(got) > 1 else None,
            float(np.std(got, ddof=1)) if len(got) > 1 else None,
        )
    return PerRound(m.run_id, m.status, [int(r[0]) for r in rows], [int(r[1]) for r in rows], figures)


def _item_sql(
    store: Store, run_a: str, run_b: str, metrics: list[str], sel: Selection, variances: bool = True
) -> tuple[str, list[Any], str]:
    """A ``WITH ... per_item AS (...)`` prefix: per item and figure j, the paired rounds judged on
    both sides (nn{j}), rounds better (up{j}) and worse (down{j}), the mean delta d{j}, whether each
    side failed (scored 0 in) every judged round (amiss{j}, bmiss{j}) and each side's variance
    across rounds; with its parameters and the item key the sides are joined on.

    From both runs' answers tables when both have one (:func:`_answers`), else from their verdict
    rows. The key is ``item``, the generation's integer item key, when both runs judge one
    generation (it orders the items as ``item_id`` does); ``item_id`` otherwise, since each
    generation numbers its own items."""
    masks = _answers(store, (run_a, run_b), metrics, sel)
    key = "item_id"
    if masks is not None and store.run(run_a).manifest.gen_id == store.run(run_b).manifest.gen_id:
        key = "item"
    pa, qa = _pivot_sql(store, run_a, metrics, sel, None if masks is None else masks[run_a])
    pb, qb = _pivot_sql(store, run_b, metrics, sel, None if masks is None else masks[run_b])
    sel_cols = ", ".join(f"a.m{j} AS a{j}, b.m{j} AS b{j}" for j in range(len(metrics)))
    # with the integer key the item id rides along (one per item) for the listed ids
    ids, id_agg = ("a.item_id AS item_id, ", "any_value(item_id) AS item_id, ") if key == "item" else ("", "")
    head = (
        f"WITH a AS MATERIALIZED ({pa}), b AS MATERIALIZED ({pb}), j AS (SELECT {key}, {ids}gen_round, {sel_cols} "
        f"FROM a JOIN b USING ({key}, gen_round))"
    )
    g = store.generation
    most = max(g(store.run(r).manifest.gen_id).manifest.rounds for r in (run_a, run_b))
    if masks is not None and most == 1:  # one answer per item: per_item is the joined row itself
        return head + _single_round_per_item(len(metrics), key, bool(id_agg)), [*qa, *qb], key
    if masks is not None and most <= PACKED_MAX_ROUNDS:
        return head + _packed_per_item(len(metrics), key, id_agg, variances), [*qa, *qb], key
    aggs = []
    for j in range(len(metrics)):
        both = f"a{j} IS NOT NULL AND b{j} IS NOT NULL"
        aggs.append(
            f"count(*) FILTER (WHERE {both}) AS nn{j}, count(*) FILTER (WHERE b{j} > a{j}) AS up{j}, "
            f"count(*) FILTER (WHERE b{j} < a{j}) AS down{j}, avg(b{j} - a{j}) AS d{j}, "
            f"bool_and(a{j} = 0) AS amiss{j}, bool_and(b{j} = 0) AS bmiss{j}, "
            + (
                f"var_samp(a{j}) AS va{j}, var_samp(b{j}) AS vb{j}"
                if variances
                else f"NULL::DOUBLE AS va{j}, NULL::DOUBLE AS vb{j}"
            )
        )
    cte = (
        f"{head}, per_item AS MATERIALIZED (SELECT {key}, {id_agg}count(*) AS paired, "
        f"{', '.join(aggs)} FROM j GROUP BY {key})"
    )
    return cte, [*qa, *qb], key


#: the most generation rounds the packed counts hold (8 bits a count)
PACKED_MAX_ROUNDS = 255

#: the counts per item and figure that the packed sums carry, 8 bits each (a count is at most
#: the paired generation rounds, fewer than 256), 8 to a BIGINT
_PACKED = {
    "nn": "a{j} IS NOT NULL AND b{j} IS NOT NULL",
    "up": "b{j} > a{j}",
    "down": "b{j} < a{j}",
    "ca": "a{j} IS NOT NULL",
    "a1": "a{j} = 1",
    "cb": "b{j} IS NOT NULL",
    "b1": "b{j} = 1",
}


def _packed_per_item(n_metrics: int, key: str, id_agg: str, variances: bool) -> str:
    """``per_item`` of :func:`_item_sql` over figures that are 1, 0 or null (every figure of an
    answers table): per item a few sums of packed counts instead of eight aggregates per figure
    (a sixth of the memory of 1M groups), unpacked into the same columns. A figure's values being
    0 or 1, its mean delta is (up - down) / nn (sums of integers: exact), a side misses when it
    judged some round and passed none (``bool_and(a = 0)``, null when it judged none); the
    variances are the same ``var_samp``."""
    lanes = [(j, name, cond.format(j=j)) for j in range(n_metrics) for name, cond in _PACKED.items()]
    words: list[list[str]] = [[] for _ in range((len(lanes) + 7) // 8)]
    unpack = {}
    for i, (j, name, cond) in enumerate(lanes):
        w, shift = divmod(i, 8)
        words[w].append(f"CASE WHEN {cond} THEN {1 << (8 * shift)} ELSE 0 END")
        unpack[(j, name)] = f"((w{w} >> {8 * shift}) & 255)::BIGINT"
    sums = ", ".join(f"sum({' + '.join(parts)}) AS w{w}" for w, parts in enumerate(words))
    var = "".join(f", var_samp(a{j}) AS va{j}, var_samp(b{j}) AS vb{j}" for j in range(n_metrics)) if variances else ""
    cols = []
    for j in range(n_metrics):
        u = {name: unpack[(j, name)] for name in _PACKED}
        cols.append(
            f"{u['nn']} AS nn{j}, {u['up']} AS up{j}, {u['down']} AS down{j}, "
            f"CASE WHEN {u['nn']} > 0 THEN ({u['up']} - {u['down']})::DOUBLE / {u['nn']} END AS d{j}, "
            f"CASE WHEN {u['ca']} > 0 THEN {u['a1']} = 0 END AS amiss{j}, "
            f"CASE WHEN {u['cb']} > 0 THEN {u['b1']} = 0 END AS bmiss{j}, "
            + (f"va{j}, vb{j}" if variances else f"NULL::DOUBLE AS va{j}, NULL::DOUBLE AS vb{j}")
        )
    item_id = "item_id, " if id_agg else ""
    return (
        f", packed AS MATERIALIZED (SELECT {key}, {id_agg}count(*) AS paired, {sums}{var} FROM j GROUP BY {key}), "
        f"per_item AS (SELECT {key}, {item_id}paired, {', '.join(cols)} FROM packed)"
    )


def _single_round_per_item(n_metrics: int, key: str, with_id: bool) -> str:
    """``per_item`` of :func:`_item_sql` when both generations have one round: each item is one
    joined row, so no aggregate over the items is needed. Over figures that are 1, 0 or null these
    are :func:`_packed_per_item`'s columns exactly (the mean delta of one pair is b - a; a side
    misses when it judged the answer and scored 0; one round has no variance)."""
    cols = []
    for j in range(n_metrics):
        cols.append(
            f"(a{j} IS NOT NULL AND b{j} IS NOT NULL)::BIGINT AS nn{j}, coalesce(b{j} > a{j}, false)::BIGINT AS up{j}, "
            f"coalesce(b{j} < a{j}, false)::BIGINT AS down{j}, (b{j} - a{j})::DOUBLE AS d{j}, "
            f"a{j} = 0 AS amiss{j}, b{j} = 0 AS bmiss{j}, NULL::DOUBLE AS va{j}, NULL::DOUBLE AS vb{j}"
        )
    item_id = "item_id, " if with_id else ""
    return f", per_item AS (SELECT {key}, {item_id}1::BIGINT AS paired, {', '.join(cols)} FROM j)"


BOOTSTRAP_MAX_ITEMS = 20000


def _interval(
    d: np.ndarray | None, n: int, mean: float | None, sd: float | None, seed: int, n_boot: int, level: float = 0.95
) -> dict[str, Any]:
    """Seeded percentile bootstrap of the mean paired delta (:mod:`evalcore.stats.bootstrap`) up to
    20,000 items (``d`` holds the deltas), an analytic t interval from ``n``, ``mean`` and ``sd``
    above."""
    from scipy import stats as sst

    if n == 0 or mean is None:
        return {"low": None, "high": None, "method": None, "reason": "no item judged in both"}
    if n == 1 or not sd:
        return {
            "low": mean,
            "high": mean,
            "method": "degenerate",
            "reason": "every item has the same delta" if n > 1 else "one item",
        }
    if d is not None:
        dd = np.asarray(d, dtype=float)
        iv = percentile_interval(resample(lambda idx: dd[idx].mean(axis=-1), dd.size, n_boot, generator(seed)), level)
        return {
            "low": iv.lo,
            "high": iv.hi,
            "method": f"bootstrap (percentile, {n_boot} resamples, seed {seed})",
        }
    half = float(sst.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n))
    return {"low": mean - half, "high": mean + half, "method": f"analytic (t, more than {BOOTSTRAP_MAX_ITEMS:,} items)"}


def _runs_and_metrics(
    store: Store, run_a: str, run_b: str, headline: str
) -> tuple[S.RunManifest, S.RunManifest, list[str]]:
    """The two runs' manifests and the figures both have (the headline among them)."""
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    for rid, m in ((run_a, ma), (run_b, mb)):
        if m.mode == "imported" and not m.rubric.criteria:
            raise InputError(f"run {rid!r} has no criteria to compare", field="run id")
    metrics = metrics_of(store, run_a, run_b)
    if headline not in metrics:
        raise InputError(f"{headline!r} is not a figure of both runs; figures: {', '.join(metrics)}", field="--metric")
    return ma, mb, metrics


def _summary(
    store: Store,
    ma: S.RunManifest,
    mb: S.RunManifest,
    metrics: list[str],
    sel: Selection,
    limit: int,
    hi: int,
    full: bool,
) -> tuple[dict[str, Any], np.ndarray | None]:
    """The summary row of the paired items (:func:`_pair_summary`, else :func:`_summary_sql`),
    and the per-item deltas (one column per figure) when few enough items are paired for the
    bootstrap."""
    g = store.generation
    rounds_paired = 1 if sel.gen_round is not None else min(g(ma.gen_id).manifest.rounds, g(mb.gen_id).manifest.rounds)
    # within-item variance across rounds feeds the power figures only, and needs two rounds
    cte, params, key = _item_sql(store, ma.run_id, mb.run_id, metrics, sel, variances=rounds_paired > 1)
    src_a, src_b = _latency_sources(store, ma), _latency_sources(store, mb)
    summary = (
        _pair_summary(store, ma.run_id, mb.run_id, metrics, sel, limit, hi, full)
        or store.records(
            cte + " " + _summary_sql(len(metrics), rounds_paired, limit, hi, full, key, (len(src_a), len(src_b))),
            [*params, *src_a, *src_b],
        )[0]
    )
    if not 0 < max(summary[f"n{j}"] for j in range(len(metrics))) <= BOOTSTRAP_MAX_ITEMS:
        return summary, None
    rows = store.sql(
        cte + " SELECT " + ", ".join(f"d{j}" for j in range(len(metrics))) + f" FROM per_item ORDER BY {key}", params
    )
    vectors = np.array([[np.nan if x is None else float(x) for x in r] for r in rows], dtype=float)
    return summary, vectors.reshape(len(rows), len(metrics))


def _side(summary: dict[str, Any], side: str, m: S.RunManifest, metrics: list[str]) -> PerRound:
    """One side's per-round figures (``side``: a or b)."""
    rows = [
        (r["gen_round"], r["answers"], *(r[f"m{j}"] for j in range(len(metrics))))
        for r in (summary["per_round"] or [])
        if r["side"] == side
    ]
    return _round_figures(m, rows, metrics)


@dataclass
class Delta(Result):
    """A figure's paired per-item delta (B - A) over the items both runs judged, with its interval."""

    mean: float | None
    of_means: float | None
    ci95: list[float | None]
    method: str | None
    items: int
    sd: float | None
    reason: str = OMIT


@dataclass
class Paired(Result):
    """One figure of :func:`compare`: each side per round, the paired delta, the noise floor, stable
    wins and regressions (their ids for the headline only) and the power."""

    a: Rounds
    b: Rounds
    delta: Delta
    noise_floor: float | None
    within_noise: bool | None
    stable_wins: int
    stable_regressions: int
    stable_win_items: list[str] | None
    stable_regression_items: list[str] | None
    power: Power | Skipped


def _ids(summary: dict[str, Any], kind: str, j: int) -> list[str]:
    """The sorted ids of figure ``j``'s ``kind`` (wins, regs, new, fixed): listed for the headline only."""
    return sorted(summary.get(f"{kind}{j}") or [])


def _per_metric(
    summary: dict[str, Any],
    vectors: np.ndarray | None,
    metrics: list[str],
    fa: PerRound,
    fb: PerRound,
    rounds_paired: int,
    hi: int,
    *,
    seed: int,
    n_boot: int,
    effect: float,
    list_limit: int,
    power_figures: bool,
) -> dict[str, Paired]:
    """Each figure's sides, paired delta with its interval, noise floor, stable wins and
    regressions and power."""
    per_metric = {}
    for j, name in enumerate(metrics):
        n, mean_delta, sd = int(summary[f"n{j}"]), summary[f"mean{j}"], summary[f"sd{j}"]
        mean_delta = None if mean_delta is None else float(mean_delta)
        sd = None if sd is None else float(sd)
        dv = None if vectors is None else vectors[~np.isnan(vectors[:, j]), j]
        iv = _interval(dv, n, mean_delta, sd, seed, n_boot)
        va, vb = summary[f"va{j}"], summary[f"vb{j}"]
        within = None if va is None and vb is None else float(va or 0.0) + float(vb or 0.0)
        a, b = fa.figures[name], fb.figures[name]
        spreads = [x for x in (a.spread, b.spread) if x is not None]
        noise = max(spreads) if spreads else None
        per_metric[name] = Paired(
            a,
            b,
            Delta(
                mean_delta,
                None if a.mean is None or b.mean is None else b.mean - a.mean,
                [iv["low"], iv["high"]],
                iv["method"],
                n,
                sd,
                iv.get("reason") or OMIT,
            ),
            noise,
            None if noise is None or mean_delta is None else abs(mean_delta) <= noise,
            int(summary[f"count_wins{j}"]),
            int(summary[f"count_regs{j}"]),
            _ids(summary, "wins", j)[:list_limit] if j == hi else None,
            _ids(summary, "regs", j)[:list_limit] if j == hi else None,
            power(sd, within, max(rounds_paired, 1), n, effect) if power_figures else Skipped(),
        )
    return per_metric


@dataclass
class Coverage(Result):
    """Each side's items and the shared ones; when they differ, the note and the rival explanation."""

    baseline_items: int
    candidate_items: int
    shared_items: int
    differs: bool
    note: str | None
    rival: str | None


def _notes(
    store: Store, summary: dict[str, Any], ma: S.RunManifest, mb: S.RunManifest, rounds: tuple[int, int], paired: int
) -> tuple[Coverage, list[str], list[str]]:
    """The item coverage of each side, the notes under the comparison (coverage, rounds not
    paired, polluted runs) and the polluted runs. ``rounds``: each side's generation rounds."""
    items = (int(summary["items_a"] or 0), int(summary["items_b"] or 0), int(summary["n_shared"] or 0))
    coverage = _coverage(ma.run_id, mb.run_id, *items)
    notes = [coverage.note] if coverage.note else []
    if rounds[0] != rounds[1]:
        notes.append(
            f"the runs cover different generation rounds ({rounds[0]} vs {rounds[1]}); "
            f"only the {paired} they share are paired"
        )
    g = store.generation
    for m in (ma, mb):
        gs = g(m.gen_id).manifest.status
        if "polluted" in (m.status, gs):
            why = (
                polluted_reason(m)
                if m.status == "polluted"
                else "some of its generation's calls failed after every retry"
            )
            notes.append(f"{m.run_id} is POLLUTED: {why}, so its figures are not a measurement")
        if m.out_of_scale is not None:
            notes.append(f"{m.run_id}: {m.out_of_scale.note()} (a note on the imported data: no call was made)")
        if w := judge_alias_warning(m):
            notes.append(f"{m.run_id}: {w}")
        if t := threshold_note(m.run_id, m.rubric):
            notes.append(t)
    polluted = [m.run_id for m in (ma, mb) if "polluted" in (m.status, g(m.gen_id).manifest.status)]
    return coverage, notes, polluted


def _verdict(
    store: Store, h: Paired, regs: list[str], allow: set[str], rounds: int, ma: S.RunManifest, mb: S.RunManifest
) -> Verdict:
    """:func:`two_sided_bar` on the headline figure ``h`` (``regs``: its stable regressions), the
    runs' statuses and those of their generations that are not complete beside it."""
    g = store.generation
    return two_sided_bar(
        h.delta.mean,
        h.delta.ci95[0],
        h.stable_wins,
        regs,
        h.stable_regressions,
        allow,
        rounds,
        [(ma.run_id, ma.status), (mb.run_id, mb.status)]
        + [(f"generation {m.gen_id}", gs) for m in (ma, mb) if (gs := g(m.gen_id).manifest.status) != "complete"],
        noise_floor=h.noise_floor,
    )


T = TypeVar("T")


@dataclass
class Both(Result, Generic[T]):
    """A figure of the baseline and of the candidate."""

    baseline: T
    candidate: T


@dataclass
class Totals(Result):
    """A run's recorded calls, tokens and cost: the judge's (the run's) and the system's (its generation's)."""

    judge: dict[str, Any]
    system: dict[str, Any]


@dataclass
class MeanPair(Result):
    """One ordinal or continuous criterion in :func:`compare`: each side's mean score with its
    95% t interval over the items both runs judged, and the candidate's mean less the baseline's."""

    criterion: str
    baseline: CriterionMean
    candidate: CriterionMean
    difference: float | None


def mean_pairs(store: Store, run_a: str, run_b: str, sel: Selection) -> list[MeanPair]:
    """:class:`MeanPair` of each criterion both runs judge as ordinal or continuous (in A's order)."""
    kinds_b = dict(numeric_criteria(store, run_b))
    names = [n for n, _ in numeric_criteria(store, run_a) if n in kinds_b]
    if not names:
        return []
    a = criterion_means(store, run_a, sel, names=names, shared_with=run_b)
    b = {m.criterion: m for m in criterion_means(store, run_b, sel, names=names, shared_with=run_a)}
    out = []
    for m in a:
        mb = b[m.criterion].mean
        out.append(MeanPair(m.criterion, m, b[m.criterion], None if m.mean is None or mb is None else mb - m.mean))
    return out


@dataclass
class Comparison(Result):
    """:func:`compare`: what ``evalcore compare --json`` prints and the Compare page shows."""

    baseline: str
    candidate: str
    headline: str
    metrics: list[str]
    selection: dict[str, Any]
    include_holdout: bool
    seed: int
    n_boot: int
    rounds_paired: int
    diff: Diff
    coverage: Coverage
    rivals: list[str]
    figures: dict[str, Paired]
    #: each ordinal and continuous criterion both runs judged: both sides' mean scores over the items both judged
    means: list[MeanPair]
    verdict: Verdict
    new_misses: list[str]
    new_miss_count: int
    fixed_misses: list[str]
    fixed_miss_count: int
    cost: Both[Totals]
    latency: Both[dict[str, Any]]
    polluted: list[str]
    simulated: bool
    notes: list[str]
    #: the corrected delta where both generations have gold (:mod:`evalcore.analysis.corrected`), else None
    corrected: CorrectedDelta | None


def compare(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    sel: Selection | None = None,
    include_holdout: bool | None = None,
    seed: int = 0,
    n_boot: int = 2000,
    effect: float = 0.05,
    headline: str = "all_pass",
    allow: Iterable[str] = (),
    list_limit: int = 50,
    power_figures: bool = True,
    every_new_miss: list[str] | None = None,
    correct: Callable[[Store, Comparison], CorrectedDelta | None] | None = None,
) -> Comparison:
    """Everything the compare page shows for baseline ``run_a`` and candidate ``run_b``, over the
    items both runs answered (each side's own count is reported, and differing coverage is the
    first rival explanation). ``power_figures=False`` leaves the power out (it decides nothing;
    a simulation of many gates saves half its time). The gate's: ``allow``, the allowlisted items,
    and ``every_new_miss``, a list to receive the headline's new misses (all of them with ``allow``).
    ``correct`` (:func:`evalcore.review.corrected.correct`) adds the corrected delta."""
    if n_boot < 1:
        raise InputError("must be at least 1", field="--n-boot")
    sel = _selection(sel or Selection(), include_holdout)
    ma, mb, metrics = _runs_and_metrics(store, run_a, run_b, headline)
    d = diff(store, run_a, run_b)
    allow = set(allow)
    hi = metrics.index(headline)
    summary, vectors = _summary(store, ma, mb, metrics, sel, list_limit, hi, bool(allow))
    fa, fb = _side(summary, "a", ma, metrics), _side(summary, "b", mb, metrics)
    rounds_paired = min(len(fa.rounds), len(fb.rounds))
    figures = _per_metric(summary, vectors, metrics, fa, fb, rounds_paired, hi, seed=seed, n_boot=n_boot,
                          effect=effect, list_limit=list_limit, power_figures=power_figures)  # fmt: skip
    verdict = _verdict(store, figures[headline], _ids(summary, "regs", hi), allow, rounds_paired, ma, mb)
    coverage, notes, polluted = _notes(store, summary, ma, mb, (len(fa.rounds), len(fb.rounds)), rounds_paired)
    new_miss = _ids(summary, "new", hi)
    if every_new_miss is not None:
        every_new_miss += new_miss
    c = Comparison(
        baseline=run_a,
        candidate=run_b,
        headline=headline,
        metrics=metrics,
        selection=sel.describe(),
        include_holdout=sel.include_holdout,
        seed=seed,
        n_boot=n_boot,
        rounds_paired=rounds_paired,
        diff=d,
        coverage=coverage,
        rivals=([coverage.rival] if coverage.rival else []) + d.rivals,
        figures=figures,
        means=mean_pairs(store, run_a, run_b, sel),
        verdict=verdict,
        new_misses=new_miss[:list_limit],
        new_miss_count=int(summary[f"count_new{hi}"]),
        fixed_misses=_ids(summary, "fixed", hi)[:list_limit],
        fixed_miss_count=int(summary[f"count_fixed{hi}"]),
        cost=Both(_cost(store, ma), _cost(store, mb)),
        latency=_latency(store, summary, run_a, run_b),
        polluted=polluted,
        simulated=d.a.simulated or d.b.simulated,
        notes=notes,
        corrected=None,
    )
    # the corrected delta reads the report card, a layer above: its caller hands the hook in
    c.corrected = correct(store, c) if correct is not None else None
    return c


def _latency(store: Store, summary: dict[str, Any], run_a: str, run_b: str) -> Both[dict[str, Any]]:
    """Each side's latency per answer over the shared items: over every item when no item outside
    them has a row in the tables it reads (then no id list is handed to it, nor pulled out of DuckDB)."""
    shared = list(summary["shared_items"] or [])
    return Both(
        answer_latency(store, run_a, shared if summary["outside_a"] else None),
        answer_latency(store, run_b, shared if summary["outside_b"] else None),
    )


def _latency_sources(store: Store, m: S.RunManifest) -> list[str]:
    """The tables :func:`~evalcore.analysis.cost.answer_latency` reads for a run: its generation's
    outputs and its calls, those that exist."""
    out = []
    for kind, eid, table in (("generation", m.gen_id, "outputs"), ("run", m.run_id, "calls")):
        try:
            out.append(store.path_of(kind, eid, table))
        except NotFoundError:
            pass
    return out


def _coverage(run_a: str, run_b: str, items_a: int, items_b: int, shared: int) -> Coverage:
    """Each side's items and the shared ones; when they differ, the note and the rival explanation
    (the figures are over the shared items only, so the sides' own headlines would not compare)."""
    differs = not (items_a == items_b == shared)
    text = (
        f"item coverage differs: {run_a} answered {items_a} items, {run_b} {items_b}; every figure is over the "
        f"{shared} both answered"
    )
    return Coverage(
        items_a,
        items_b,
        shared,
        differs,
        text if differs else None,
        f"item coverage ({items_a} vs {items_b} items, {shared} shared)" if differs else None,
    )


def _cost(store: Store, m: S.RunManifest) -> Totals:
    return Totals(m.totals.model_dump(), store.generation(m.gen_id).manifest.totals.model_dump())


def rounds_text(f: dict[str, Any]) -> str:
    """``r1 / r2 / r3 -> mean (spread)`` as the seed writes it."""
    parts = " / ".join(_pct(v) for v in f["by_round"])
    if len(f["by_round"]) <= 1:
        return parts
    return f"{parts} -> {_pct(f['mean'])} (spread {_pts(f['spread'])})"
