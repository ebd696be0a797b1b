"""Whether criteria move together, per instrument: the phi matrices.

An **instrument** is one judge run, or the people who labelled the generation (label sets shipped
with the data, with the label store's current decisions overriding them).

* :func:`association`: phi (and, for numeric criteria, Kendall tau-b and Spearman) for every
  criterion pair in each instrument, side by side on the answers they all share, each pair classed
  ``induced``, ``real`` or ``undetermined`` by how the two criteria were judged (in one call, in
  separate calls, by people) and
  :func:`~evalcore.stats.association.classify_association`; intervals from a seeded paired
  bootstrap over answers (a sparse 2x2: the posterior interval of
  :func:`~evalcore.stats.association.phi_interval_posterior`).
* :func:`harness_words`: how a run was judged, in words (the head of its attribution).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np

from evalcore.analysis.selection import (
    DEFAULT_SELECTION,
    PEOPLE,
    Selection,
    _hold,
    _people_hold,
    _sel_sql,
    answers_relation,
    mask_sql,
    pair_pattern_sql,
    run_warnings,
)
from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result, key
from evalcore.errors import EvalcoreError, InputError, NotFoundError
from evalcore.llm.plan import blocks_for
from evalcore.llm.rubric import MODEL_KINDS, spec_from_manifest
from evalcore.stats import association as stats
from evalcore.stats import correlation
from evalcore.stats.reliability import pearson
from evalcore.storage.gold import settled
from evalcore.storage.itemkeys import item_rows
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- instruments


def _pair_kind(
    mode: str, groups: list[list[str]] | None, a: str, b: str
) -> Literal["single", "one_criterion", "people", "other"]:
    """How two criteria were judged in an instrument: in one call (`single`), in separate calls
    (`one_criterion`), by `people`, or unknown (`other`: an imported run)."""
    if mode == "single":
        return "single"
    if mode == "split":
        return "one_criterion"
    if mode == "grouped":
        same = any(a in g and b in g for g in (groups or []))
        return "single" if same else "one_criterion"
    if mode == PEOPLE:
        return "people"
    return "other"


def judged_together(m: S.RunManifest) -> tuple[str, list[list[str]] | None]:
    """The harness a run really had, as (mode, groups) for :func:`_pair_kind`: a ``single`` run
    whose criteria name different judge models made one call per model (evalcore.llm.plan
    ``blocks_for``), so its criteria of different models were judged in separate calls: it reads as
    ``grouped`` with one group per model. Any other run reads as recorded."""
    if m.mode != "single":
        return m.mode, m.groups
    spec = spec_from_manifest(m.rubric, m.knobs)
    blocks = blocks_for(spec, "single", [c.name for c in spec.model_criteria()], m.judge_model)
    if len(blocks) < 2:
        return m.mode, m.groups
    return "grouped", [names for _block, names, _model in blocks]


@dataclass
class HarnessWords(Result):
    """How a run was judged, in words (:func:`harness_words`), at the head of its attribution."""

    mode: str
    text: str
    association_runs: list[str]


def harness_words(store: Store, run_id: str) -> HarnessWords:
    """How a run was judged, in words, and the runs to open in the association beside it (this run
    and a complete one-criterion run on the same generation, when there is one)."""
    m = store.run(run_id).manifest
    mode, groups = judged_together(m)
    k = len([c for c in m.rubric.criteria if c.kind in MODEL_KINDS])
    if m.mode == "single" and mode == "grouped":
        text = (
            f"{run_id} asked its criteria in one call per judge model ({len(groups or [])} calls per answer): "
            "criteria of the same model share a call, so a failure on one can echo another."
        )
    elif mode == "single":
        text = (
            f"{run_id} judged all {k} criteria in one call per answer (single): a failure recorded on one "
            "criterion can be an echo of another written before it, so read these shares with the association."
        )
    elif mode == "grouped":
        text = (
            f"{run_id} judged its criteria in {len(groups or [])} calls per answer, one per group (grouped): "
            "criteria of one group share a call."
        )
    elif mode == "split":
        text = f"{run_id} judged each criterion in its own call (split): no verdict was written beside another."
    else:
        text = f"{run_id} was imported without a record of how its criteria were asked (mode {m.mode})."
    partners = []
    if mode in ("single", "grouped"):
        names = set(m.rubric.names())
        splits = [
            (rid, o)
            for rid in store.ids("run")
            if rid != run_id
            and (o := store.run(rid).manifest).gen_id == m.gen_id
            and o.mode == "split"
            and o.status == "complete"
            and set(o.rubric.names()) == names
        ]
        # the same judge model first: then only the harness differs
        splits.sort(key=lambda t: (t[1].judge_model != m.judge_model, t[0]))
        partners = [rid for rid, _ in splits[:1]]
    return HarnessWords(m.mode, text, [run_id, *partners] if partners else [])


def _verdict_rows_sql(store: Store, run_id: str, sel: Selection) -> tuple[str, list[Any]]:
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    return (
        f"SELECT item_id, gen_round, criterion, passed, score FROM ({base})",
        [store.path_of("run", run_id, "verdicts"), *params],
    )


def _people_rows_sql(store: Store, gen_id: str) -> tuple[str, list[Any]] | None:
    """People's verdict per answer and criterion. From the label sets shipped with the data: an
    annotator named `mean` (a published mean of several people) when present, else the majority of
    the annotators (a tie fails) and the mean of their scores. Gold decided in the label
    store override shipped ones for the same answer and criterion."""
    paths = store.labelset_paths(gen_id)
    gold = _gold_overrides(store, gen_id)
    if not paths and not gold:
        return None
    g_cols = [
        [g["item_id"] for g in gold],
        [int(g["gen_round"]) for g in gold],
        [g["criterion"] for g in gold],
        [g["passed"] for g in gold],
    ]
    gold_sql = (
        "SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion, unnest(?::BOOLEAN[]) AS passed, NULL::DOUBLE AS score"
    )
    if not paths:
        return gold_sql, g_cols
    shipped = (
        "WITH l AS (SELECT item_id, gen_round, criterion, annotator, passed, score FROM read_parquet(?::VARCHAR[])), "
        "m AS (SELECT DISTINCT item_id, gen_round, criterion FROM l WHERE annotator = 'mean'), "
        "s AS (SELECT item_id, gen_round, criterion, passed, score FROM l WHERE annotator = 'mean' "
        "UNION ALL SELECT item_id, gen_round, criterion, "
        "CASE WHEN count(passed) = 0 THEN NULL ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END, "
        "avg(score) FROM l ANTI JOIN m USING (item_id, gen_round, criterion) GROUP BY item_id, gen_round, criterion), "
        f"g AS ({gold_sql}) "
        "SELECT * FROM g UNION ALL SELECT * FROM s ANTI JOIN g USING (item_id, gen_round, criterion)"
    )
    return shipped, [paths, *g_cols]


def _gold_overrides(store: Store, gen_id: str) -> list[dict[str, Any]]:
    """Gold decided in the label store (the policy of :mod:`evalcore.storage.gold`), with a derived
    pass/fail."""
    try:
        rows = settled(LabelStore(store), gen_id)
    except EvalcoreError:  # e.g. a state directory inside the data directory: no overrides
        return []
    return [r for r in rows if r.get("passed") is not None]


def _pivot_sql(
    rows_sql: str,
    rows_params: list[Any],
    criteria: list[str],
    tag: str,
    numeric: set[str] | frozenset[str] = frozenset(),
) -> tuple[str, list[Any]]:
    """One row per answer: a fail flag (1.0 / 0.0 / NULL) per criterion, and a score for the
    numeric ones."""
    cols, params = [], []
    for j, c in enumerate(criteria):
        cols.append(f"CAST(bool_or(NOT passed) FILTER (WHERE criterion = ?) AS DOUBLE) AS {tag}_f{j}")
        params.append(c)
        if c in numeric:
            cols.append(f"avg(score) FILTER (WHERE criterion = ?) AS {tag}_s{j}")
            params.append(c)
    return (
        f"SELECT item_id, gen_round, {', '.join(cols)} FROM ({rows_sql}) GROUP BY item_id, gen_round",
        params + rows_params,
    )


def _mask_pivot_sql(
    masks: tuple[str, list[Any], list[str]], criteria: list[str], tag: str, key: str = "item", keep: str = ""
) -> tuple[str, list[Any]]:
    """:func:`_pivot_sql`'s fail flags from a run's answers table (:func:`mask_sql`): 1.0 / 0.0 per
    criterion, NULL when errored or absent. ``keep``: a further SQL condition on the answers."""
    msql, mparams, names = masks
    cols = []
    for j, c in enumerate(criteria):
        bit = 1 << names.index(c)
        cols.append(
            f"CASE WHEN (passed | failed) & {bit} != 0 THEN CAST(failed & {bit} != 0 AS DOUBLE) END AS {tag}_f{j}"
        )
    where = f" WHERE {keep}" if keep else ""
    return f"SELECT {key}, gen_round, {', '.join(cols)} FROM ({msql}){where}", list(mparams)


def _joined(
    store: Store,
    parts: list[tuple[str, str, list[Any]]],
    n_crit: int,
    key: str = "item_id",
    unordered_above: int | None = None,
    grouped: tuple[str, list[Any]] | None = None,
    small: bool = False,
) -> dict[str, Any]:
    """Join the pivots of several instruments on the answers where every one has a verdict on every
    criterion; return the columns as numpy arrays. ``key``: the pivots' item column (``item``, the
    integer key of the answers tables, orders the answers as ``item_id`` does).

    With ``unordered_above`` (pass / fail flags only), DuckDB counts the answers per pattern of
    flags (at most 4^k patterns: a few thousand rows instead of one per answer), and when there are
    more answers than that the columns are the patterns, in pattern order, and ``w`` their numbers of
    answers: every figure that does not depend on the order of the answers (counts, phi, the
    analytic interval used above that size) follows from them, and no per-answer row leaves DuckDB. At or below
    it the answers come in answer order, for the seeded bootstrap. ``grouped``: the same pattern
    counts from elsewhere (two runs' pair table, :func:`_pair_grouped_sql`)."""
    ctes, params = [], []
    for tag, sql, p in parts:
        ctes.append(f"{tag} AS ({sql})")
        params += p
    first = parts[0][0]
    joins = " ".join(f"JOIN {tag} USING ({key}, gen_round)" for tag, _, _ in parts[1:])
    notnull = " AND ".join(f"{tag}_f{j} IS NOT NULL" for tag, _, _ in parts for j in range(n_crit))
    joined = f"SELECT * EXCLUDE ({key}, gen_round) FROM {first} {joins} WHERE {notnull}"
    body = f"WITH {', '.join(ctes)} {joined}"
    res: dict[str, Any] | None = None
    weights: np.ndarray | None = None
    if unordered_above is not None:
        cols = [f"{tag}_f{j}" for tag, _, _ in parts for j in range(n_crit)]
        gsql, gparams = grouped or (
            f"SELECT {', '.join(cols)}, count(*) AS ec_n FROM ({body}) GROUP BY ALL ORDER BY {', '.join(cols)}",
            params,
        )
        cur = store._con().cursor()
        try:
            pat = cur.execute(gsql, gparams).fetchnumpy()
        finally:
            cur.close()
        counts = np.asarray(pat.pop("ec_n"), dtype=np.int64)
        if int(counts.sum()) > unordered_above:  # the patterns themselves, weighted by their numbers
            res = {c: np.asarray(v, dtype=float) for c, v in pat.items()}
            weights = counts
    if res is None:
        # ordered by answer so that a seeded bootstrap resamples the same answers every time
        cur = store._con().cursor()
        try:
            if small:  # each part read on its own, under its tag (this cursor's names), then joined
                for tag, sql, p in parts:
                    cur.register(tag, cur.sql(sql, params=p).to_arrow_table())
                res = cur.execute(f"{joined} ORDER BY {key}, gen_round").fetchnumpy()
            else:
                res = cur.execute(f"{body} ORDER BY {key}, gen_round", params).fetchnumpy()
        finally:
            cur.close()
    out: dict[str, Any] = {}  # the columns, and "n" the number of answers
    for k, v in res.items():
        if isinstance(v, np.ma.MaskedArray):
            v = cast(np.ma.MaskedArray, v.astype(float)).filled(np.nan)  # numpy's stubs type astype as ndarray
        out[k] = np.asarray(v)
    out["n"] = len(next(iter(out.values()))) if out else 0
    if weights is not None:  # "w": how many answers each row stands for; "n" counts answers
        out["w"], out["n"] = weights, int(weights.sum())
    return out


def _pair_grouped_sql(pp: tuple[str, list[Any], list[str], list[str]], criteria: list[str]) -> tuple[str, list[Any]]:
    """:func:`_joined`'s pattern counts of two runs (tags i0, i1) from their pair table
    (:func:`~evalcore.analysis.selection.pair_pattern_sql`): the fail flags of every criterion
    per pattern, the answers where both judged all of them, counted."""
    sql, params, names_a, names_b = pp
    cols, notnull = [], []
    for tag, side, names in (("i0", "a", names_a), ("i1", "b", names_b)):
        for j, c in enumerate(criteria):
            bit = 1 << names.index(c)
            cols.append(
                f"CASE WHEN ({side}_passed | {side}_failed) & {bit} != 0 "
                f"THEN CAST({side}_failed & {bit} != 0 AS DOUBLE) END AS {tag}_f{j}"
            )
            notnull.append(f"{tag}_f{j} IS NOT NULL")
    names = [f"{tag}_f{j}" for tag in ("i0", "i1") for j in range(len(criteria))]
    flags = f"SELECT {', '.join(cols)}, n FROM ({sql})"
    return (
        f"SELECT {', '.join(names)}, sum(n)::BIGINT AS ec_n FROM ({flags}) WHERE {' AND '.join(notnull)} "
        f"GROUP BY ALL ORDER BY {', '.join(names)}",
        params,
    )


def _same_generation(store: Store, run_ids: list[str]) -> str:
    """The generation every run judges, or the error :func:`association` gives."""
    if not run_ids:
        raise InputError("give at least one run", field="RUN")
    gens = {rid: store.run(rid).manifest.gen_id for rid in run_ids}
    if len(set(gens.values())) > 1:
        listing = ", ".join(f"{r} -> {g}" for r, g in gens.items())
        raise InputError(
            f"runs judge different generations ({listing}): association compares instruments on the same answers",
            field="RUN",
        )
    return next(iter(gens.values()))


def _shared_criteria(
    store: Store, run_ids: list[str]
) -> tuple[dict[str, S.RunManifest], str, list[str], dict[str, str]]:
    """The runs' manifests, their one generation, the criteria they all have (at least two) and
    the criteria's kinds."""
    if len(set(run_ids)) != len(run_ids):
        raise InputError("a run is named twice", field="RUN")
    gen_id = _same_generation(store, run_ids)
    manifests = {rid: store.run(rid).manifest for rid in run_ids}
    rubrics = [m.rubric for m in manifests.values()]
    common = [c.name for c in rubrics[0].criteria if all(rb.get(c.name) for rb in rubrics)]
    if len(common) < 2:
        raise InputError("the runs share fewer than two criteria", field="RUN")
    return manifests, gen_id, common, {c.name: c.kind for c in rubrics[0].criteria}


@dataclass
class Instrument(Result):
    """One instrument of :func:`association`: a run, with how its calls really went when that is
    not its recorded mode (:func:`judged_together`), or people."""

    name: str
    mode: str
    groups: list[list[str]] | None
    status: str
    calls_as: str = OMIT
    call_groups: list[list[str]] | None = OMIT
    note: str = OMIT

    def calls(self) -> tuple[str, list[list[str]] | None]:
        """How its criteria were asked: (mode, groups) for :func:`_pair_kind`."""
        return (self.mode, self.groups) if self.calls_as is OMIT else (self.calls_as, self.call_groups)


def _run_instruments(run_ids: list[str], manifests: dict[str, S.RunManifest]) -> list[Instrument]:
    """One instrument per run, in the order of the joined columns' tags i0, i1, ..."""
    instruments = []
    for rid in run_ids:
        m = manifests[rid]
        inst = Instrument(rid, m.mode, m.groups, m.status)
        mode, groups = judged_together(m)
        if mode != m.mode:  # a single run with per-criterion judge models made one call per model
            inst.calls_as, inst.call_groups = "grouped", groups
            inst.note = (
                f"one call per judge model ({len(groups or [])} calls per answer): criteria of different "
                "models were judged in separate calls"
            )
        instruments.append(inst)
    return instruments


def _run_parts(
    store: Store,
    run_ids: list[str],
    sel: Selection,
    masks: dict[str, Any],
    common: list[str],
    numeric: set[str],
    key: str = "item",
    keep: tuple[str, list[Any]] = ("", []),
) -> list[tuple[str, str, list[Any]]]:
    """Each run's pivot, tagged i0, i1, ...: from its answers (``masks``) unless a criterion is
    numeric: scores are not in the masks, so those runs are read from their verdicts (the one
    verdict path of a mask figure, for scores). ``keep``: a further condition on the rows, and its
    parameters."""
    parts = []
    for i, rid in enumerate(run_ids):
        if numeric:
            rsql, rparams = _verdict_rows_sql(store, rid, sel)
            rsql = f"SELECT * FROM ({rsql}) WHERE {keep[0]}" if keep[0] else rsql
            psql, pparams = _pivot_sql(rsql, [*rparams, *keep[1]], common, f"i{i}", numeric)
        else:
            psql, pparams = _mask_pivot_sql(masks[rid], common, f"i{i}", key, keep[0])
            pparams = [*pparams, *keep[1]]
        parts.append((f"i{i}", psql, pparams))
    return parts


def _people_part(
    store: Store, gen_id: str, sel: Selection, masks: dict[str, Any], common: list[str], numeric: set[str]
) -> tuple[tuple[str, str, list[Any]], str, tuple[str, list[Any]]]:
    """People's pivot (tag hp), the key to join it on, and the condition that keeps the runs' rows
    to the items people labelled; ``masks`` (the runs' answers, empty when they are read from their
    verdicts) narrowed to those items where they can be."""
    ps = _people_rows_sql(store, gen_id)
    if ps is None:
        raise NotFoundError(f"no human labels for generation {gen_id} (label sets or the label store)", field="--human")
    ps = _people_hold(store, gen_id, sel, ps)
    psql, pparams = _pivot_sql(ps[0], ps[1], common, "hp", numeric)
    # the runs restricted to the labelled items before pivoting (not 1M answers for 2,000 labels):
    # their rows and integer keys (looked up once per item id, storage.itemkeys) where they can be kept
    labelled = f"SELECT DISTINCT item_id FROM ({ps[0]})"
    keys = None
    if masks and all(answers_relation(store, rid)[3] for rid in masks):
        ids = [r[0] for r in store.sql(labelled, ps[1])]
        for rid, m in list(masks.items()):  # each run's rows of the labelled items, kept in the state (one small file)
            got = item_rows(store, m[1][0], ids)
            if got is None:
                keys = None
                break
            keys = got[0] if keys is None else keys  # (the runs on one generation share their keys)
            masks[rid] = (m[0], [got[1], *m[1][1:]], m[2])
    if keys is None:
        return ("hp", psql, pparams), "item_id", (f"item_id IN ({labelled})", ps[1])
    # people's pivot carries the integer key: the runs' parts read no string column
    psql = (
        f"SELECT k.item, p.* EXCLUDE (item_id) FROM ({psql}) p JOIN "
        "(SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::INTEGER[]) AS item) k USING (item_id)"
    )
    hp = ("hp", psql, [*pparams, list(keys), list(keys.values())])
    return hp, "item", ("item IN (SELECT unnest(?::INTEGER[]))", [sorted(keys.values())])


def _fails(data: dict[str, np.ndarray], tag: str, j: int) -> np.ndarray:
    return data[f"{tag}_f{j}"] > 0.5


def _phi_intervals(
    tags: dict[str, str],
    machines: dict[str, Any],
    people: dict[str, Any] | None,
    index: list[tuple[int, int]],
    **kw: Any,
) -> dict[Any, stats.PhiInterval]:
    """Every pair's phi interval per instrument (``tags``: their columns'), keyed (instrument, i, j): one paired draw of
    resampled answers serves every pair and every run (drawn as the counts of the answers'
    fail-flag patterns, stats.association._bootstrap_phis); people apart. ``kw``: seed, n_boot,
    level, analytic_above."""
    # stats.phi_intervals_paired types its keys as str but takes any key
    machine_cols: dict[Any, tuple[np.ndarray, np.ndarray]] = {
        (name, i, j): (_fails(machines, tag, i), _fails(machines, tag, j))
        for name, tag in tags.items()
        if name != PEOPLE
        for i, j in index
    }
    all_ivs: dict[Any, stats.PhiInterval] = (
        stats.phi_intervals_paired(machine_cols, weights=machines.get("w"), **kw) if machines["n"] else {}
    )
    if people is not None and people["n"]:
        all_ivs.update(
            stats.phi_intervals_paired(
                cast(
                    dict[Any, tuple[np.ndarray, np.ndarray]],
                    {(PEOPLE, i, j): (_fails(people, "hp", i), _fails(people, "hp", j)) for i, j in index},
                ),
                **kw,
            )
        )
    return all_ivs


@dataclass
class PairInstrument(Result):
    """One instrument's phi on a criterion pair: its interval, answers, how the pair was asked, the failures;
    ``interval`` is how the interval was drawn: ``bootstrap`` (paired, over answers), ``analytic`` (above
    20,000 answers) or ``posterior`` (a sparse 2x2, stats.association.phi_interval_posterior)."""

    phi: float | None
    phi_reason: str | None
    lo: float | None
    hi: float | None
    n: int
    call: str
    a_fail: int | None
    b_fail: int | None
    interval: str | None


@dataclass
class Pair(Result):
    """A criterion pair of :func:`association`, classed from every instrument's phi."""

    a: str
    b: str
    cls: str = field(metadata=key("class"))
    reason: str
    instruments: dict[str, PairInstrument]


def _pair_rows(
    instruments: list[Instrument],
    tags: dict[str, str],
    matrices: dict[str, Matrix],
    all_ivs: dict[Any, stats.PhiInterval],
    machines: dict[str, Any],
    people: dict[str, Any] | None,
    common: list[str],
    index: list[tuple[int, int]],
) -> list[Pair]:
    """Each criterion pair: every instrument's phi, interval, failure counts and call kind, and the
    pair's class from them."""
    n_p = people["n"] if people is not None else 0
    pairs_out = []
    for i, j in index:
        a, b = common[i], common[j]
        evidence, per_inst = [], {}
        for inst in instruments:
            name = inst.name
            cell = matrices[name].phi[a][b]
            iv = all_ivs.get((name, i, j))
            lo, hi = (iv[0], iv[1]) if iv else (None, None)
            n = n_p if name == PEOPLE else machines["n"]
            call = _pair_kind(*inst.calls(), a, b)
            data = people if name == PEOPLE else machines
            a_fail, b_fail = (
                _count(_fails(data, tags[name], x), data) if n and data is not None else None for x in (i, j)
            )
            method = iv.method if iv else None
            per_inst[name] = PairInstrument(cell.value, cell.reason, lo, hi, n, call, a_fail, b_fail, method)
            evidence.append(
                stats.InstrumentEvidence(
                    name=name, kind=call, value=cell.value, lo=lo, hi=hi, n=n, a_fail=a_fail, b_fail=b_fail
                )
            )
        cls = stats.classify_association(evidence)
        pairs_out.append(Pair(a, b, cls.cls, cls.reason, per_inst))
    return pairs_out


@dataclass
class Finding(Result):
    """The association's finding in words (:func:`finding`)."""

    a: str
    b: str
    cls: str = field(metadata=key("class"))
    text: str
    meaning: str


@dataclass
class PhiCell(Result):
    """phi of two criteria's fail flags, or why it is undefined."""

    value: float | None
    reason: str | None


@dataclass
class RankCell(Result):
    """Kendall tau-b, Spearman and Pearson of two numeric criteria's scores, or why they are undefined."""

    kendall_tau_b: float | None
    spearman: float | None
    reason: str | None
    pearson: float | None = None


@dataclass
class Matrix(Result):
    """One instrument's matrices over its answers (:func:`_matrix`), keyed by criterion, then criterion."""

    n: int
    fail_rate: dict[str, float | None]
    phi: dict[str, dict[str, PhiCell]]
    rank: dict[str, dict[str, RankCell]]


@dataclass
class Association(Result):
    """:func:`association`: what ``evalcore association --json`` prints and the Association page draws."""

    finding: Finding | None
    reference_note: str | None
    gen_id: str
    criteria: list[str]
    selection: dict[str, Any]
    level: float
    seed: int
    n_boot: int
    threshold: float
    instruments: list[Instrument]
    shared_answers: int
    people_answers: int
    matrices: dict[str, Matrix]
    matrices_on_people_answers: dict[str, Matrix]
    pairs: list[Pair]
    warnings: list[str]


def association(
    store: Store,
    run_ids: list[str],
    *,
    human: bool = False,
    sel: Selection = DEFAULT_SELECTION,
    seed: int = 0,
    n_boot: int = 2000,
    level: float | None = None,
    analytic_above: int = 20000,
) -> Association:
    """phi (and, for numeric criteria, Kendall tau-b and Spearman) for every criterion pair in each
    instrument, side by side, each pair classed `induced`, `real` or `undetermined`
    (:func:`evalcore.stats.classify_association`).

    Runs are compared on the answers they all share; people on the answers they labelled that the
    runs share too (the runs' matrices on those answers are also given). Intervals come from a
    seeded paired bootstrap over answers (the same resampled answers for every instrument), or the
    analytic interval above ``analytic_above`` answers; a sparse 2x2 (a cell, observed or expected,
    below 5 answers) gets the posterior interval whatever its size."""
    manifests, gen_id, common, kinds = _shared_criteria(store, run_ids)
    level = stats.DEFAULT_LEVEL if level is None else level
    numeric = {c for c in common if kinds.get(c) in ("ordinal", "continuous")}
    k = len(common)
    masks = {rid: mask_sql(store, rid, sel) for rid in run_ids} if not numeric else {}
    parts = _run_parts(store, run_ids, sel, masks, common, numeric)
    if masks:  # the runs' answers: counted by pattern in DuckDB (from their pair table for two runs)
        pp = pair_pattern_sql(store, run_ids[0], run_ids[1], sel) if len(run_ids) == 2 else None
        grouped = _pair_grouped_sql(pp, common) if pp is not None else None
        machines = _joined(store, parts, k, key="item", unordered_above=analytic_above, grouped=grouped)
    else:
        machines = _joined(store, parts, k)
    instruments = _run_instruments(run_ids, manifests)
    people = None
    if human:
        hp, pkey, keep = _people_part(store, gen_id, sel, masks, common, numeric)
        parts = [hp, *_run_parts(store, run_ids, sel, masks, common, numeric, pkey, keep)]
        people = _joined(store, parts, k, key=pkey, small=True)
        instruments.append(Instrument(PEOPLE, PEOPLE, None, "complete"))
    # each instrument's columns in the joined data: the runs' i0, i1, ..., people's hp
    tags = {inst.name: "hp" if inst.name == PEOPLE else f"i{j}" for j, inst in enumerate(instruments)}
    matrices, on_people = {}, {}
    for name, tag in tags.items():
        matrices[name] = _matrix(people if name == PEOPLE else machines, tag, common, kinds)
        if people is not None and name != PEOPLE:
            on_people[name] = _matrix(people, tag, common, kinds)
    index = [(i, j) for i in range(k) for j in range(i + 1, k)]
    ivs = _phi_intervals(
        tags, machines, people, index, seed=seed, n_boot=n_boot, level=level, analytic_above=analytic_above
    )
    pairs_out = _pair_rows(instruments, tags, matrices, ivs, machines, people, common, index)
    n_p = people["n"] if people is not None else 0
    return Association(
        finding=finding(pairs_out, instruments, n_p),
        reference_note=_reference_note(instruments),
        gen_id=gen_id,
        criteria=common,
        selection=sel.describe(),
        level=level,
        seed=seed,
        n_boot=n_boot,
        threshold=stats.ASSOCIATION_THRESHOLD,
        instruments=instruments,
        shared_answers=machines["n"],
        people_answers=n_p,
        matrices=matrices,
        matrices_on_people_answers=on_people,
        pairs=pairs_out,
        warnings=run_warnings(store, run_ids),
    )


def _count(flags: np.ndarray, data: dict[str, Any]) -> int:
    """How many answers have the flag (``data``'s rows weighted by ``w`` when they are patterns)."""
    w = data.get("w")
    return int(flags.sum()) if w is None else int(w[flags].sum())


def _matrix(data, tag, criteria, kinds) -> Matrix:
    """phi for every ordered pair (the diagonal included, as 1 or undefined), failure rates, and
    Kendall tau-b / Spearman between numeric criteria."""
    n, w = data["n"], data.get("w")  # w: the rows are patterns standing for w answers each
    phi: dict[str, dict[str, PhiCell]] = {a: {} for a in criteria}
    rank: dict[str, dict[str, RankCell]] = {a: {} for a in criteria}
    fail_rate = {}
    for i, a in enumerate(criteria):
        fa = _fails(data, tag, i)
        fail_rate[a] = _count(fa, data) / n if n else None
        for j, b in enumerate(criteria):
            fb = _fails(data, tag, j)
            s = stats.phi(stats.TwoByTwo.from_fails(fa, fb, w))
            phi[a][b] = PhiCell(s.value, s.reason)
            if i != j and kinds.get(a) in ("ordinal", "continuous") and kinds.get(b) in ("ordinal", "continuous"):
                si, sj = data[f"{tag}_s{i}"], data[f"{tag}_s{j}"]
                tau, rho = correlation.kendall_tau_b(si, sj), correlation.spearman(si, sj)
                rank[a][b] = RankCell(tau.value, rho.value, tau.reason or rho.reason, pearson(si, sj).value)
    return Matrix(n, fail_rate, phi, rank)


#: What each class means, in words (docs/ANALYSIS.md has the rule with its threshold).
CLASS_WORDS = {
    "induced": "the two criteria fail together only when one call returns both; judged in separate calls, and by "
    "people, they do not: an artefact of the harness",
    "real": "people see the two criteria fail together: the answers really have it, whatever the harness",
    "undetermined": "the evidence does not settle it (the reason says what is missing)",
}


def iv_text(v: PairInstrument) -> str:
    if v.phi is None:
        return "undefined"
    return f"{v.phi:.2f}" + ("" if v.lo is None else f" [{v.lo:.2f}, {v.hi:.2f}]")


def finding(pairs: list[Pair], instruments: list[Instrument], people_n: int) -> Finding | None:
    """The association's finding in words: the induced pair whose single-call phi stands furthest
    above its one-criterion phi, else the real pair with the largest people phi, else the pair with
    the largest single-call phi (``undetermined``, with its reason). None without pairs."""
    if not pairs:
        return None
    by_name = {i.name: i for i in instruments}

    def phis(p: Pair, call: str) -> list[float]:
        return [v.phi for v in p.instruments.values() if v.call == call and v.phi is not None]

    def gap(p: Pair) -> float:
        s, o = phis(p, "single"), phis(p, "one_criterion")
        return (max(s) if s else 0.0) - (max(o, key=abs) if o else 0.0)

    induced = [p for p in pairs if p.cls == "induced"]
    real = [p for p in pairs if p.cls == "real"]
    if induced:
        p = max(induced, key=gap)
    elif real:
        p = max(real, key=lambda q: phis(q, "people")[0] if phis(q, "people") else 0.0)
    else:
        p = max(pairs, key=lambda q: max(phis(q, "single") or [0.0]))
    parts = []
    for name, v in p.instruments.items():
        mode = "people" if v.call == "people" else by_name[name].mode
        who = f"people ({people_n} labelled answers)" if v.call == "people" else f"{mode} ({name})"
        parts.append(f"{iv_text(v)} {who}")
    lead = {
        "induced": "is induced by the single call",
        "real": "is real: people see it",
        "undetermined": "is undetermined",
    }[p.cls]
    text = f"{p.a} x {p.b} {lead}: phi " + ", ".join(parts) + "."
    if p.cls == "undetermined":
        text += f" Why: {p.reason}."
    return Finding(p.a, p.b, p.cls, text, CLASS_WORDS[p.cls])


def _reference_note(instruments: list[Instrument]) -> str | None:
    """Why people are the reference: a one-criterion run shares the judge and the answers with the
    single-call run, so only people are independent of both."""
    split = [i.name for i in instruments if i.mode == "split"]
    single = [i.name for i in instruments if i.mode in ("single", "grouped")]
    if not split or not single:
        return None
    return (
        f"{', '.join(split)} shares the judge's reading and the answers with {', '.join(single)}: asking one "
        "criterion per call removes what the single call adds, not what the judge gets wrong. People share "
        "neither, so they are the reference."
    )
