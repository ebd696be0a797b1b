"""Cost: calls, tokens, cost and latency of a judge run (overall and per criterion), of the system
under test it judged, per configuration, and a projection of the single, grouped and split
harnesses for N items from the tokens the run measured.

Every aggregate runs in DuckDB over the Parquet files (``calls.parquet`` of a run,
``outputs.parquet`` of its generation) and returns a small result; nothing loads a run into
pandas. ``evalcore cost RUN --json`` / ``evalcore cost --all --json`` print exactly what
:func:`run_cost` / :func:`cost_table` return, and the Cost page shows nothing else.

Definitions (docs/COST.md has them with worked figures):

* **unknown stays unknown**: ``cost_usd`` sums the calls (outputs) whose cost is known and is
  null when none is; ``cost_unknown_calls`` (``cost_unknown_outputs``) counts the others. An
  unknown cost is never summed as 0. Per-answer figures (``cost_usd_per_answer``) are given only
  when every cost is known.
* **sharing rule**: a call that asks several criteria gives each of them an equal share
  (1 / number of criteria it asked) of its tokens in, tokens out, cost and latency. The shares of
  the criteria therefore sum to the run's totals. A criterion's ``calls`` counts the calls that
  asked it (so they sum to more than the run's calls in single and grouped runs), and its latency
  mean / p50 / p95 are those of the calls that asked it, whole (a call takes as long as it takes,
  whoever shares it). A call that lists no criterion is put under ``(none)``.
* **latency**: mean, median (p50) and 95th percentile (``quantile_cont``) of ``latency_ms`` over
  the calls (outputs) that report it; ``latency_ms_total`` is their sum.

Projection (:func:`project`, a pure function): a call that asks the set G of criteria for one
answer takes ``S + sum(c_k for k in G)`` input tokens, where ``c_k`` is the number of tokens
criterion k adds to the judge's criteria block (:func:`criterion_tokens`) and ``S`` everything
else the call carries (system text, question, context, reference, the answer, the block's frame).
``S`` is estimated from the measured calls as ``mean(tokens_in - sum(c_k))``. A call writes
``f + sum(o_k for k in G)`` output tokens: ``f`` its own frame and rationale, ``o_k`` each verdict's
reason and value, fitted by least squares of tokens out on the criteria lists of the run's calls
and, when those cannot tell ``f`` from the ``o_k`` (every call asks the same list), of its sibling
runs' (same generation, judge model and rubric, another number of calls per answer); when nothing
identifies ``f`` it is taken as 0 and the projection says so. Prices per token are fitted to the
calls with a known cost by non-negative least squares of cost on (tokens in, tokens out); a call's
latency is ``l_call + l_out * tokens_out``, fitted the same way. For N items judged R times each,
with g calls per answer (single 1, grouped = number of groups, split K) and concurrency c (the
run's recorded ``--concurrency``, else 1, said):

    calls      = N * R * g
    tokens_in  = N * R * (g * S + sum_k c_k)
    tokens_out = N * R * (g * f + sum_k o_k)
    cost       = tokens_in * price_in + tokens_out * price_out    (null when the prices are unknown)
    latency    = g * l_call + l_out * (g * f + sum_k o_k)         (one answer, calls one after another)
    fanned out = l_call + l_out * (f + max over calls of sum(o_k in the call))   (an answer's calls in parallel)
    wall time  = max(N * R * latency / min(c, calls), fanned out)                (the whole run at concurrency c)

docs/COST.md gives the same with worked figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalcore.analysis.answers import has_classes, no_suite_with
from evalcore.analysis.costsql import (
    _LAT,
    NO_CRITERION,
    SHARING_RULE,
    CallTotals,
    CriterionCost,
    Table,
    _call_scan,
    _manifest_totals,
    _num,
    _per_unit,
    _sliced,
    _src,
    _unnest,
    call_totals,
    cost_label,
    output_totals,
    per_criterion,
    stored_cost,
)
from evalcore.analysis.projection import (
    _DONE,
    _MOMENTS,
    _PRICED,
    _TIMED,
    OutLists,
    Projection,
    _calls_per_answer,
    _concurrency,
    _groups_of,
    _output_model,
    _partition,
    _projection,
    _shared_tokens,
    _siblings,
    _wall_measured,
    call_moments,
    criterion_tokens,
    fit_latency,
    fit_output,
    fit_prices,
    nnls_from_moments,
    output_lists,
    project,
)
from evalcore.analysis.summary import judge_alias_warning
from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.errors import InputError, NotFoundError
from evalcore.storage.aggregates import latency_summary
from evalcore.storage.store import Store

# the aggregates and the projection live in their own modules; these names stay importable from here
__all__ = [
    "NO_CRITERION",
    "SHARING_RULE",
    "_DONE",
    "_LAT",
    "_MOMENTS",
    "_PRICED",
    "_TIMED",
    "OutLists",
    "Table",
    "_call_scan",
    "_calls_per_answer",
    "_concurrency",
    "_groups_of",
    "_manifest_totals",
    "_num",
    "_output_model",
    "_partition",
    "_per_unit",
    "_projection",
    "_shared_tokens",
    "_siblings",
    "_src",
    "_unnest",
    "_wall_measured",
    "answer_latency",
    "call_moments",
    "call_totals",
    "cost_label",
    "cost_table",
    "criterion_tokens",
    "fit_latency",
    "fit_output",
    "fit_prices",
    "nnls_from_moments",
    "output_lists",
    "output_totals",
    "per_criterion",
    "project",
    "run_cost",
    "stored_cost",
]


# ----------------------------------------------------------------------------- reports


@dataclass
class SystemTotals(Result):
    """The system under test: its generation's outputs.parquet (:func:`output_totals`)."""

    gen_id: str
    generator_model: str | None
    outputs: int
    errored_outputs: int
    items: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    cost_unknown_outputs: int
    cost_usd_per_output: float | None
    latency_ms_mean: float | None
    latency_ms_p50: float | None
    latency_ms_p95: float | None
    latency_ms_total: float | None


def _system(store: Store, gm: S.GenerationManifest, classes: tuple[str, ...]) -> SystemTotals:
    """The totals of a generation's outputs (``gm``: its manifest), sliced to ``classes``."""
    outputs = _sliced(store, gm.suite_id, "generation", gm.gen_id, "outputs", classes)
    return SystemTotals(
        gen_id=gm.gen_id, generator_model=gm.knobs.get("generator_model"), **output_totals(store, outputs)
    )


@dataclass
class RunCost(Result):
    """:func:`run_cost`: what ``evalcore cost RUN --json`` prints and the Cost page shows for one run."""

    run_id: str
    gen_id: str
    suite_id: str
    status: str
    source: str
    mode: str
    judge_model: str
    #: a judge model named by a floating alias, not a dated snapshot, unless the run records it
    #: pinned (:func:`evalcore.analysis.summary.judge_alias_warning`, as runs and compare say it); None otherwise
    judge_alias_warning: str | None
    judge_rounds: int
    simulated: bool
    classes: list[str]
    items: int
    answers: int
    rounds: int
    gen_rounds: int
    judge: CallTotals
    sharing_rule: str
    per_criterion: list[CriterionCost]
    system: SystemTotals
    projection: Projection


def run_cost(
    store: Store,
    run_id: str,
    *,
    items: int | None = None,
    rounds: int | None = None,
    groups: int | None = None,
    classes: tuple[str, ...] = (),
) -> RunCost:
    """One run's cost report: the judge overall (``judge``) and per criterion (``per_criterion``,
    by the sharing rule), the system under test (``system``: the run's generation), and the
    projection of single / grouped / split for ``items`` items (default: the run's) judged
    ``rounds`` times each (default: the run's generation rounds x judge rounds) with ``groups``
    calls per answer in grouped mode (default: the run's groups)."""
    for name, v in (("--items", items), ("--rounds", rounds), ("--groups", groups)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise InputError(f"{v!r} must be a whole number of at least 1", field=name)
    entry = store.run(run_id)
    m = entry.manifest
    gen = store.generation(m.gen_id)
    calls_path = _sliced(store, gen.manifest.suite_id, "run", run_id, "calls", classes)
    scanned, counts = _call_scan(store, calls_path)
    judge = CallTotals(**scanned)
    crit_rows = per_criterion(store, calls_path, m.rubric.names())
    if judge.calls == 0:
        judge = _manifest_totals(m.totals)
        projection = Projection(False, "the run has no calls in calls.parquet")
    elif (entry.path / "pair_verdicts.parquet").exists():
        projection = Projection(
            False,
            "a model grader of a pairwise session: its calls compare two answers, one criterion each, so there "
            "is no single / grouped / split choice to project",
        )
    else:
        asked = [r.criterion for r in crit_rows]
        projection = _projection(
            store, run_id, m, calls_path, asked, counts, items, rounds, groups, classes, gen.manifest.suite_id
        )
    return RunCost(
        run_id=run_id,
        gen_id=gen.id,
        suite_id=gen.manifest.suite_id,
        status=m.status,
        source=m.source,
        mode=m.mode,
        judge_model=m.judge_model,
        judge_alias_warning=judge_alias_warning(m),
        judge_rounds=m.judge_rounds,
        simulated=bool(m.simulated or gen.manifest.simulated),
        classes=list(classes),
        **counts,
        judge=judge,
        sharing_rule=SHARING_RULE,
        per_criterion=crit_rows,
        system=_system(store, gen.manifest, classes),
        projection=projection,
    )


@dataclass
class CostRow(Result):
    """One run of :func:`cost_table`: :class:`CallTotals` as ``judge_*``, :class:`SystemTotals` as ``system_*``."""

    run_id: str
    gen_id: str
    status: str
    mode: str
    judge_model: str
    #: as :attr:`RunCost.judge_alias_warning`
    judge_alias_warning: str | None
    judge_rounds: int
    simulated: bool
    judge_calls: int
    judge_failed_calls: int
    judge_answers: int | None
    judge_tokens_in: int
    judge_tokens_out: int
    judge_cost_usd: float | None
    judge_cost_unknown_calls: int
    judge_cost_usd_per_answer: float | None
    judge_latency_ms_mean: float | None
    judge_latency_ms_p50: float | None
    judge_latency_ms_p95: float | None
    judge_latency_ms_total: float | None
    judge_cache_hits: int
    judge_source: str
    system_generator_model: str | None
    system_outputs: int
    system_errored_outputs: int
    system_items: int
    system_tokens_in: int
    system_tokens_out: int
    system_cost_usd: float | None
    system_cost_unknown_outputs: int
    system_cost_usd_per_output: float | None
    system_latency_ms_mean: float | None
    system_latency_ms_p50: float | None
    system_latency_ms_p95: float | None
    system_latency_ms_total: float | None


def cost_table(store: Store, classes: tuple[str, ...] = ()) -> list[CostRow]:
    """Every run of the store (one configuration each) with the judge's and its system under
    test's calls, tokens, cost and latency side by side. The system figures are its generation's,
    shared by every run on that generation. ``classes``: a slice, the runs on suites with these
    item classes, each over those items' calls and outputs only."""
    gens: dict[str, SystemTotals] = {}
    out = []
    for run_id in store.ids("run"):
        m = store.run(run_id).manifest
        gm = store.generation(m.gen_id).manifest
        if not has_classes(store, gm.suite_id, classes):
            continue
        judge = call_totals(store, _sliced(store, gm.suite_id, "run", run_id, "calls", classes))
        if judge.calls == 0 and not classes:
            judge = _manifest_totals(m.totals)
        if m.gen_id not in gens:
            gens[m.gen_id] = _system(store, gm, classes)
        out.append(
            CostRow(
                run_id=run_id,
                gen_id=m.gen_id,
                status=m.status,
                mode=m.mode,
                judge_model=m.judge_model,
                judge_alias_warning=judge_alias_warning(m),
                judge_rounds=m.judge_rounds,
                simulated=bool(m.simulated or gm.simulated),
                **{f"judge_{k}": v for k, v in judge.to_dict().items()},
                **{f"system_{k}": v for k, v in gens[m.gen_id].to_dict().items() if k != "gen_id"},
            )
        )
    if classes and not out:
        raise no_suite_with("run", classes)
    return out


def answer_latency(store: Store, run_id: str, items: Sequence[str] | None = None) -> dict[str, Any]:
    """Latency per answer (one item in one generation round) of a judged run, for the system under
    test (``latency_ms`` of the generation's outputs.parquet) and for the judge (the ``latency_ms``
    of the run's calls.parquet summed over the calls of one answer and judge round: in split and
    grouped mode an answer's calls are its latency together). Mean and p95
    (:func:`evalcore.stats.descriptive.percentile`) over the answers that report it, restricted to
    ``items`` when given; a side without a table or without a measured answer is None."""
    m = store.run(run_id).manifest
    where, params = ("", ()) if items is None else ("list_contains(?::VARCHAR[], item_id)", (list(items),))
    out: dict[str, Any] = {}
    try:
        out_path = store.path_of("generation", m.gen_id, "outputs")
    except NotFoundError:
        out["system"] = None
    else:
        out["system"] = latency_summary(store, Table(out_path, where, params, "generation", m.gen_id), per_answer=False)
    try:
        calls_path = store.path_of("run", run_id, "calls")
    except NotFoundError:
        out["judge"] = None
    else:
        out["judge"] = latency_summary(store, Table(calls_path, where, params, "run", run_id), per_answer=True)
    return out
