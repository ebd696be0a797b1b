"""Two judges' scores against each other (``evalcore correlate --run R1 --against-run R2``): the
figures :func:`evalcore.analysis.scores.correlate` gives a judge against people, with a second
judge in people's place. The two sides are two runs on the same generations (one run per
generation on each side, pooled) or two judge rounds of one run (``--judge-round 1
--against-round 2``), on the answers both scored:

* **pooled**: Pearson, Spearman and Kendall's tau-b over every answer;
* **within items**: the correlation over the answers of one item (its outputs across the pooled
  generations and generation rounds), averaged over items (the G-Eval "summary-level" convention);
  with ``group_by``, the same within the groups of any column (a conversation, a system);
* **system level**: the two judges' mean score per item class (the system that wrote the answer,
  as the HANNA import records it), correlated over the classes.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.analysis.scores import (
    CriterionCorrelations,
    MeanOverCriteria,
    _joined,
    _judge_text,
    _mean_over,
    _scope,
    _score_rows,
)
from evalcore.analysis.scoresql import judge_sql, pooled_runs
from evalcore.contract.results import OMIT, Result
from evalcore.errors import InputError, NotFoundError
from evalcore.storage.store import Store


@dataclass
class JudgeAgainstJudge(Result):
    """:func:`correlate_judges`: what ``evalcore correlate --against-run --json`` prints."""

    runs: list[str]
    against_runs: list[str]
    gen_ids: list[str]
    judge: str
    against: str
    classes: list[str] | None
    include_holdout: bool
    seed: int
    n_boot: int
    level: float
    criteria: list[CriterionCorrelations]
    mean_over_criteria: MeanOverCriteria
    warnings: list[str]
    exclude_classes: list[str] = OMIT
    group_by: str = OMIT


def correlate_judges(
    store: Store,
    run_ids: list[str],
    against_runs: list[str],
    *,
    judge_round: int | None = None,
    against_round: int | None = None,
    classes: list[str] | None = None,
    exclude: list[str] | None = None,
    include_holdout: bool = False,
    group_by: str | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
) -> JudgeAgainstJudge:
    """Per numeric criterion both sides score, the runs' scores (``judge_round``, or the mean over
    their judge rounds) against ``against_runs``' (``against_round``, by default ``judge_round``)
    on the same answers; the figures of :func:`evalcore.analysis.scores.correlate`."""
    if not run_ids or not against_runs:
        raise InputError("give the runs of both judges", field="--against-run")
    manifests, gens, criteria = pooled_runs(store, run_ids, classes, exclude)
    other, other_gens, other_criteria = pooled_runs(store, against_runs, classes, exclude)
    if sorted(other_gens) != sorted(gens):
        raise InputError(
            f"--against-run judges generations {', '.join(sorted(other_gens))}, --run {', '.join(sorted(gens))}: "
            "give one run per generation on each side",
            field="--against-run",
        )
    a_round = judge_round if against_round is None else against_round
    for rid, m in other.items():
        if a_round is not None and not 1 <= a_round <= m.judge_rounds:
            flag = "--against-round" if against_round is not None else "--judge-round"
            raise InputError(f"run {rid} has judge rounds 1-{m.judge_rounds}, not {a_round}", field=flag)
    if set(other) == set(manifests) and a_round == judge_round:
        raise InputError("a judge against itself: give other runs, or another --against-round", field="--against-run")
    shared = [c for c in criteria if c in other_criteria]
    if not shared:
        raise InputError("the two judges share no ordinal or continuous criterion", field="--against-run")
    a_parts = [judge_sql(store, rid, judge_round, classes, include_holdout, exclude) for rid in manifests]
    b_parts = [judge_sql(store, rid, a_round, classes, include_holdout, exclude) for rid in other]
    data = _joined(store, a_parts, b_parts, shared)
    if not data or not len(data["criterion"]):
        raise NotFoundError("the two judges scored no answer in common", field="--against-run")
    rows = _score_rows(store, data, manifests, shared, group_by, seed=seed, n_boot=n_boot, level=level)
    return JudgeAgainstJudge(
        runs=list(manifests),
        against_runs=list(other),
        gen_ids=gens,
        judge=_judge_text(judge_round),
        against=_judge_text(a_round),
        **_scope(classes, include_holdout, exclude),
        seed=seed,
        n_boot=n_boot,
        level=level,
        criteria=rows,
        mean_over_criteria=_mean_over(rows),
        warnings=[f"run {r} is {m.status}" for r, m in {**manifests, **other}.items() if m.status != "complete"],
        group_by=group_by or OMIT,
    )
