"""Summaries of what is in a store, computed in DuckDB over the Parquet files.

Each function returns typed results (evalcore.contract.results) small enough to print as JSON or
hand to a page; nothing here loads a whole table into pandas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalcore.analysis.answers import has_classes, no_suite_with
from evalcore.analysis.failures import AllPassRate, TernaryRow, all_pass_by_round, ternary_rows
from evalcore.analysis.means import CriterionMean, criterion_means
from evalcore.analysis.provenance import model_words
from evalcore.analysis.selection import Selection, item_condition, manifest_variant_warning
from evalcore.analysis.suites import suite_mark, versions
from evalcore.analysis.thresholds import threshold_note
from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result, key
from evalcore.errors import InputError, NotFoundError
from evalcore.llm.client import floating_alias
from evalcore.storage.aggregates import Table, call_scan, generation_row, output_totals, row_count, verdict_rounds
from evalcore.storage.holdout import items_path
from evalcore.storage.seal import withhold
from evalcore.storage.store import Store

_CALL_KEYS = (
    "calls",
    "failed_calls",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "cost_unknown_calls",
    "latency_ms_mean",
    "latency_ms_p95",
    "cache_hits",
)


def _call_totals(store: Store, run_id: str, m: S.RunManifest) -> dict[str, Any]:
    # cost_usd sums the calls whose price is known (null when none is); cost_unknown_calls counts
    # the others, so an unknown price is never silently taken as 0.
    tot = call_scan(store, Table(store.path_of("run", run_id, "calls"), kind="run", eid=run_id))[0]
    calls = {k: tot[k] for k in _CALL_KEYS}
    if calls["calls"] == 0:  # imported or simulated without a calls table: fall back to the manifest
        t = m.totals
        calls.update(
            calls=t.calls,
            failed_calls=t.failed_calls,
            tokens_in=t.tokens_in,
            tokens_out=t.tokens_out,
            cost_usd=t.cost_usd,
            cost_unknown_calls=0 if t.cost_usd is not None else t.calls,
            latency_ms_mean=t.latency_ms_mean,
            latency_ms_p95=t.latency_ms_p95,
        )
    return calls


def judge_alias_warning(m: S.RunManifest) -> str | None:
    """One line when the run's judge model is a floating alias (``gpt-4o``, ``ChatGPT``: its
    verdicts can change under the same name, :func:`evalcore.llm.client.floating_alias`) and the
    run does not record it pinned (knob ``judge_pinned``, ``import ... --judge-pinned``)."""
    if (m.knobs or {}).get("judge_pinned") in (True, "true") or not floating_alias(m.judge_model):
        return None
    return f"judge model {m.judge_model!r} is not a dated snapshot: its verdicts can change under the same name"


@dataclass
class RunSummary(Result):
    """One run (:func:`run_summary`): a row of ``evalcore runs --json`` and of the Runs page."""

    run_id: str
    gen_id: str
    suite_id: str
    suite_version: int | None
    suite_current_version: int
    suite_superseded: bool
    suite_mark: str | None
    include_holdout: bool
    classes: list[str]
    status: str
    source: str
    simulated: bool
    judge_model: str
    mode: str
    prompt_variant: str
    variant_warning: str | None
    #: a judge model named by a floating alias, not a dated snapshot, unless the run records it
    #: pinned (:func:`judge_alias_warning`); None otherwise
    judge_alias_warning: str | None
    criteria: list[str]
    judge_rounds: int
    items: int
    verdicts: int
    errored_verdicts: int
    pair_verdicts: int
    kind: str
    #: the headline: answers passing every criterion in judge round 1, of the complete answers,
    #: with its Wilson interval (attribution's figure); None for a run without criteria
    all_pass: AllPassRate | None
    #: the all-pass rate of each judge round, and its spread (max - min) over them
    all_pass_by_round: list[float | None]
    all_pass_spread: float | None
    #: the ternary headline of each ternary criterion (judge round 1), with its interval
    ternary: list[TernaryRow]
    #: each ordinal and continuous criterion's mean score (judge round 1) with its 95% t interval (issue 40)
    means: list[CriterionMean]
    calls: int
    failed_calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    cost_unknown_calls: int
    latency_ms_mean: float | None
    latency_ms_p95: float | None
    cache_hits: int
    system_latency_ms_mean: float | None
    description: str
    #: the criteria scored without a pass threshold (:func:`evalcore.analysis.thresholds.threshold_note`);
    #: absent when every scored criterion has one
    threshold_note: str = OMIT


def run_summary(
    store: Store,
    run_id: str,
    include_holdout: bool | None = None,
    _versions: dict[str, list[dict]] | None = None,
    classes: tuple[str, ...] = (),
) -> RunSummary:
    """One run: its configuration, status, its headline (the all-pass rate of judge round 1 with
    its interval, the all-pass rate of every judge round and their spread = max - min; the ternary
    headline of each ternary criterion), calls, tokens, cost and latency; the version of the
    suite its generation answered (``suite_mark``: "suite v1, superseded by v2" when a repair made
    a newer one). Pass rates, items and verdict counts leave the suite's holdout items out unless
    ``include_holdout``; calls, tokens, cost and latency are what the run spent, on every item.
    ``classes`` (a slice) restricts the pass rates, items and verdict counts to those item classes."""
    entry = store.run(run_id)
    m = entry.manifest
    gen = store.generation(m.gen_id).manifest
    include = bool(include_holdout)
    cond, cparams = item_condition(store, gen.suite_id, include_holdout=include, classes=tuple(classes))
    rounds = verdict_rounds(
        store, Table(store.path_of("run", run_id, "verdicts"), cond, tuple(cparams), kind="run", eid=run_id)
    )
    sel = Selection(include_holdout=include, classes=tuple(classes))
    all_pass = all_pass_by_round(store, run_id, sel) if m.rubric.criteria and rounds else []
    rated = [r.rate for r in all_pass if r.rate is not None]
    n, judged = sum(r[1] for r in rounds), sum(r[2] for r in rounds)
    calls = _call_totals(store, run_id, m)
    out_lat = output_totals(
        store, Table(store.path_of("generation", m.gen_id, "outputs"), kind="generation", eid=m.gen_id)
    )["latency_ms_mean"]
    vs = (_versions or {}).get(gen.suite_id) or versions(store, gen.suite_id)
    if _versions is not None:
        _versions[gen.suite_id] = vs
    pair_rows = 0
    if (entry.path / "pair_verdicts.parquet").exists():
        pv = Table(store.path_of("run", run_id, "pair_verdicts"), kind="run", eid=run_id)
        pair_rows = row_count(store, pv, "pair_verdicts")
    return RunSummary(
        run_id=run_id,
        gen_id=m.gen_id,
        suite_id=gen.suite_id,
        **suite_mark(store, gen.suite_id, gen.suite_hash, vs),
        include_holdout=include,
        classes=list(classes),
        status=m.status,
        source=m.source,
        simulated=m.simulated,
        judge_model=m.judge_model,
        mode=m.mode,
        prompt_variant=m.prompt_variant,
        variant_warning=manifest_variant_warning(m),
        judge_alias_warning=judge_alias_warning(m),
        criteria=m.rubric.names(),
        threshold_note=threshold_note(run_id, m.rubric) or OMIT,
        judge_rounds=m.judge_rounds,
        items=max((r[4] for r in rounds), default=0),
        verdicts=n,
        errored_verdicts=n - judged,
        pair_verdicts=pair_rows,
        # a model grader of a pairwise session has pair verdicts and no per-criterion verdicts
        kind="pairwise grader" if pair_rows and not n else "criteria",
        all_pass=all_pass[0] if all_pass else None,
        all_pass_by_round=[r.rate for r in all_pass],
        all_pass_spread=(max(rated) - min(rated)) if len(rated) > 1 else (0.0 if rated else None),
        ternary=ternary_rows(store, run_id, sel) if rounds else [],
        means=criterion_means(store, run_id, sel) if rounds else [],
        **calls,
        system_latency_ms_mean=out_lat,
        description=m.description,
    )


def runs_summary(store: Store, include_holdout: bool | None = None, classes: tuple[str, ...] = ()) -> list[RunSummary]:
    """Every run in the store, in id order; with ``classes`` (a slice), the runs on suites with
    these item classes, their pass rates over those items."""
    cache: dict[str, list[dict]] = {}
    out = [
        run_summary(store, rid, include_holdout, cache, classes=tuple(classes))
        for rid in store.ids("run")
        if has_classes(store, store.generation(store.run(rid).manifest.gen_id).manifest.suite_id, tuple(classes))
    ]
    if classes and not out:
        raise no_suite_with("run", tuple(classes))
    return out


@dataclass
class GenerationSummary(Result):
    """One generation: a row of ``evalcore generations --json`` (:func:`generations_summary`)."""

    gen_id: str
    suite_id: str
    suite_version: int | None
    suite_current_version: int
    suite_superseded: bool
    suite_mark: str | None
    include_holdout: bool
    classes: list[str]
    status: str
    source: str
    simulated: bool
    rounds: int
    items: int
    outputs: int
    abstained_rate: float | None
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    latency_ms_mean: float | None
    errored_outputs: int
    knobs: dict[str, Any]


def generations_summary(
    store: Store, include_holdout: bool | None = None, classes: tuple[str, ...] = ()
) -> list[GenerationSummary]:
    """Every generation: items, outputs, abstention and errors leave the suite's holdout items out
    unless ``include_holdout``; tokens, cost and latency count every output (what was spent). With
    ``classes`` (a slice), the generations on suites with these item classes, their items, outputs,
    abstention and errors over those items."""
    out: list[GenerationSummary] = []
    include = bool(include_holdout)
    cache: dict[str, list[dict]] = {}
    for gid in store.ids("generation"):
        m = store.generation(gid).manifest
        if not has_classes(store, m.suite_id, tuple(classes)):
            continue
        cond, cparams = item_condition(store, m.suite_id, include_holdout=include, classes=tuple(classes))
        path = store.path_of("generation", gid, "outputs")
        row = generation_row(store, Table(path, kind="generation", eid=gid), cond, tuple(cparams))
        if m.suite_id not in cache:
            cache[m.suite_id] = versions(store, m.suite_id)
        out.append(
            GenerationSummary(
                gen_id=gid,
                suite_id=m.suite_id,
                **suite_mark(store, m.suite_id, m.suite_hash, cache[m.suite_id]),
                include_holdout=include,
                classes=list(classes),
                status=m.status,
                source=m.source,
                simulated=m.simulated,
                rounds=m.rounds,
                items=row[0],
                outputs=row[1],
                abstained_rate=row[2],
                tokens_in=int(row[3] or 0),
                tokens_out=int(row[4] or 0),
                cost_usd=row[5],
                latency_ms_mean=row[6],
                errored_outputs=row[7],
                knobs=m.knobs,
            )
        )
    if classes and not out:
        raise no_suite_with("generation", tuple(classes))
    return out


@dataclass
class SuiteSummary(Result):
    """One suite: a row of ``evalcore suites --json`` (:func:`suites_summary`)."""

    suite_id: str
    items: int
    holdout_items: int
    curated: bool
    simulated: bool
    content_hash: str
    created_at: str
    description: str


def suites_summary(store: Store) -> list[SuiteSummary]:
    out = []
    for sid in store.ids("suite"):
        e = store.suite(sid)
        m = e.manifest
        row = store.sql(
            "SELECT count(*), count(*) FILTER (WHERE holdout) FROM read_parquet(?)", [items_path(store, sid)]
        )[0]
        out.append(
            SuiteSummary(
                suite_id=sid,
                items=row[0],
                holdout_items=row[1],
                curated=m.curated,
                simulated=m.simulated,
                content_hash=m.content_hash,
                created_at=m.created_at.isoformat(),
                description=m.description,
            )
        )
    return out


@dataclass
class ItemVerdict(Result):
    """One verdict on the answer of :func:`item_view`."""

    criterion: str
    judge_round: int
    passed: bool | None
    score: float | None
    label: str | None
    raw_verdict: str | None
    reason: str | None
    covered: list[str] | None
    missed: list[str] | None
    triggered: list[str] | None
    position: int
    call_id: str | None
    error: str | None


@dataclass
class ItemView(Result):
    """One answer with its item and its verdicts in a run (:func:`item_view`; ``evalcore show --json``)."""

    run_id: str
    gen_id: str
    item_id: str
    gen_round: int
    run_status: str
    input: str
    context: str | None
    reference: str | None
    must_have: list[str] | None
    wrong_if: list[str] | None
    klass: str | None = field(metadata=key("class"))
    holdout: bool | None
    output: str | None
    abstained: bool | None
    verdicts: list[ItemVerdict]


def item_view(
    store: Store, run_id: str, item_id: str, gen_round: int = 1, include_holdout: bool | None = None
) -> ItemView:
    """One answer with its item and every verdict on it in a run (for drill-downs and deep links).
    A holdout item is refused unless ``include_holdout``."""

    run = store.run(run_id)
    gen = store.generation(run.manifest.gen_id)
    items = store.records(
        "SELECT * FROM read_parquet(?) WHERE item_id = ?",
        [store.path_of("suite", gen.manifest.suite_id, "items"), item_id],
    )
    if not items:
        raise NotFoundError(f"no item {item_id!r} in suite {gen.manifest.suite_id!r}", field="item")
    if items[0].get("holdout") and not include_holdout:
        raise InputError(
            f"item {item_id!r} is a holdout item of suite {gen.manifest.suite_id!r}: hidden unless "
            "holdout items are shown (--include-holdout, or 'Show holdout items'; the look is logged)",
            field="item",
        )
    outs = withhold(  # the texts of an open pairwise session's arms are withheld (storage.seal)
        store,
        gen.id,
        store.records(
            "SELECT output, abstained FROM read_parquet(?) WHERE item_id = ? AND round = ?",
            [store.path_of("generation", gen.id, "outputs"), item_id, int(gen_round)],
        ),
    )
    verdicts = store.records(
        "SELECT criterion, judge_round, passed, score, label, raw_verdict, reason, covered, missed, triggered, "
        "position, call_id, error FROM read_parquet(?) WHERE item_id = ? AND gen_round = ? "
        "ORDER BY judge_round, position, criterion",
        [store.path_of("run", run_id, "verdicts"), item_id, int(gen_round)],
    )
    rec = items[0]
    return ItemView(
        run_id=run_id,
        gen_id=gen.id,
        item_id=item_id,
        gen_round=gen_round,
        run_status=run.manifest.status,
        input=rec["input"],
        context=rec.get("context"),
        reference=rec.get("reference"),
        must_have=rec.get("must_have"),
        wrong_if=rec.get("wrong_if"),
        klass=rec.get("class"),
        holdout=rec.get("holdout"),
        output=outs[0]["output"] if outs else None,
        abstained=outs[0]["abstained"] if outs else None,
        verdicts=[ItemVerdict(**v) for v in verdicts],
    )


@dataclass
class DataOverview(Result):
    """What a data directory holds (:func:`data_overview`)."""

    data_dir: str
    state_dir: str
    simulated: bool
    suites: int
    generations: int
    runs: int
    sessions: int
    labelsets: int
    simulated_kinds: list[str] = field(default_factory=list)  # the kinds with a simulated manifest, e.g. ["suites"]
    real_models: list[str] = field(default_factory=list)  # "real model: M on HOST" of each generation or run


def data_overview(store: Store) -> DataOverview:
    """What a data directory holds: counts per kind, whether any manifest says the data was made by
    evalcore's simulator and of which kinds (the app then shows a "SIMULATED demo data" badge), and the
    real models that made its generations and runs (evalcore.analysis.provenance: a badge each)."""
    kinds = {
        "suite": "suites",
        "generation": "generations",
        "run": "runs",
        "session": "sessions",
        "labelset": "labelsets",
    }
    counts = {name: 0 for name in kinds.values()}
    simulated: list[str] = []
    real: dict[str, None] = {}
    for kind, name in kinds.items():
        for id_ in store.ids(kind):
            counts[name] += 1
            m = store.get(kind, id_).manifest
            if getattr(m, "simulated", False) and name not in simulated:
                simulated.append(name)
            words = model_words(m)
            if words is not None and words.startswith("real model"):
                real[words] = None
    return DataOverview(
        store.where(), str(store.state), bool(simulated), **counts, simulated_kinds=simulated, real_models=list(real)
    )


def run_item_ids(
    store: Store,
    run_id: str,
    limit: int = 500,
    include_holdout: bool | None = None,
    classes: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The first ``limit`` item ids (in id order) answered in a run's generation, with the
    generation's number of rounds and of items: enough to offer a picker without loading a
    million ids. Holdout items are left out unless ``include_holdout``; ``classes``: only items of
    these classes (a slice)."""
    run = store.run(run_id)
    gen = store.generation(run.manifest.gen_id)
    path = store.path_of("generation", gen.id, "outputs")
    cond, cparams = item_condition(
        store, gen.manifest.suite_id, include_holdout=bool(include_holdout), classes=tuple(classes)
    )
    where = f"WHERE {cond}" if cond else ""
    ids = [
        r[0]
        for r in store.sql(
            f"SELECT DISTINCT item_id FROM read_parquet(?) {where} ORDER BY 1 LIMIT ?", [path, *cparams, int(limit)]
        )
    ]
    n = store.sql(f"SELECT count(DISTINCT item_id) FROM read_parquet(?) {where}", [path, *cparams])[0][0]
    return {"run_id": run_id, "gen_id": gen.id, "rounds": gen.manifest.rounds, "items": n, "item_ids": ids}
