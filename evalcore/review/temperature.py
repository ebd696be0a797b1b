"""Temperature, consistency and accuracy (issue 44, article 003): the judge runs of one generation
that differ only in the judge's sampling temperature, side by side, each with its repeat
consistency (the share of cases its judge rounds all agree on, and Fleiss' kappa over the rounds)
and its accuracy on gold (round 1, and the majority of the rounds), per criterion.

Runs differ "only in the temperature" when they share the judge model, the rubric (its hash), the
harness (mode, groups, field order), the prompt (variant, template hash, post-processing version,
structured output) and the judge knobs, and record different temperatures; the sampling seed may
differ. A run that records no temperature is left out, and said. Every figure is the report card's
(:func:`evalcore.review.reportcard.report_card`: its ``repeat`` rows and its judges against gold),
read here, not recomputed. ``evalcore temperature --json`` prints :func:`temperature_views`; the
Agreement page shows :func:`temperature_view` of the card it already holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.review.detect import runs_on
from evalcore.review.reportcard import ReportCard, report_card
from evalcore.storage.store import Store


@dataclass
class TemperatureFigures(Result):
    """One run on one criterion."""

    criterion: str
    judge_rounds: int
    repeat_cases: int | None
    unanimous_share: float | None
    fleiss_kappa: float | None
    gold_cases: int
    accuracy: float | None
    majority_accuracy: float | None


@dataclass
class TemperatureRun(Result):
    run_id: str
    temperature: float
    criteria: list[TemperatureFigures]


@dataclass
class TemperatureGroup(Result):
    """Runs that differ only in the judge's temperature, coolest first."""

    judge_model: str
    mode: str
    prompt_variant: str
    rubric_hash: str
    runs: list[TemperatureRun]


@dataclass
class TemperatureView(Result):
    gen_id: str
    groups: list[TemperatureGroup]
    no_temperature: list[str]
    text: str


def judge_temperature(m: S.RunManifest) -> float | None:
    """The run's judge temperature: the manifest's field (a judged run), else its ``temperature`` knob
    (an import's ``--judge-knob temperature=...``, a platform's recorded setting)."""
    t = m.temperature if m.temperature is not None else m.knobs.get("temperature")
    return float(t) if isinstance(t, int | float) and not isinstance(t, bool) else None


def _same_but_temperature(m: S.RunManifest) -> str:
    """What two runs must share to differ only in the temperature (and the sampling seed)."""
    knobs = {k: v for k, v in m.knobs.items() if k not in ("temperature", "seed")}
    keep = (
        m.judge_model, m.rubric_hash, m.mode, m.groups, m.field_order, m.prompt_variant, m.prompt_hash,
        m.postprocess_version, m.structured_output, knobs,
    )  # fmt: skip
    return json.dumps(keep, sort_keys=True, default=str)


def _figures(card: ReportCard, run_id: str, rounds: int) -> list[TemperatureFigures]:
    out = []
    for c in card.criteria:
        rep = next((r for r in c.repeat if r.run_id == run_id), None)
        judge = next((j for j in c.judges if j.run_id == run_id), None)
        if rep is None and judge is None:
            continue
        out.append(
            TemperatureFigures(
                criterion=c.criterion,
                judge_rounds=rounds,
                repeat_cases=None if rep is None else rep.n,
                unanimous_share=None if rep is None else rep.unanimous_share,
                fleiss_kappa=None if rep is None else rep.fleiss_kappa,
                gold_cases=0 if judge is None else judge.n,
                accuracy=None if judge is None else judge.accuracy,
                majority_accuracy=None if rep is None else rep.majority_vs_gold.accuracy,
            )
        )
    return out


def temperature_view(store: Store, card: ReportCard) -> TemperatureView:
    """The runs of the card's generation that differ only in the judge's temperature (module docstring)."""
    ms = {rid: store.run(rid).manifest for rid in card.runs}
    temp = {rid: judge_temperature(m) for rid, m in ms.items()}
    untold = [rid for rid, t in temp.items() if t is None]
    by_key: dict[str, list[S.RunManifest]] = {}
    for rid, m in ms.items():
        if temp[rid] is not None:
            by_key.setdefault(_same_but_temperature(m), []).append(m)
    groups = []
    for runs in by_key.values():
        if len({temp[m.run_id] for m in runs}) < 2:
            continue
        runs.sort(key=lambda m: (temp[m.run_id], m.run_id))
        first = runs[0]
        groups.append(
            TemperatureGroup(
                first.judge_model, first.mode, first.prompt_variant, first.rubric_hash,
                [TemperatureRun(m.run_id, temp[m.run_id] or 0.0, _figures(card, m.run_id, m.judge_rounds))
                 for m in runs],
            )
        )  # fmt: skip
    if groups:
        text = f"{len(groups)} set(s) of runs on {card.gen_id} differ only in the judge's temperature: " + "; ".join(
            ", ".join(f"{r.run_id} at {r.temperature:g}" for r in g.runs) for g in groups
        )
    else:
        temps = sorted({f"{t:g}" for t in temp.values() if t is not None})
        text = (
            f"No runs on {card.gen_id} differ only in the judge's temperature (same judge model, rubric, harness "
            f"and prompt): {len(ms)} run(s), temperatures recorded: {', '.join(temps) or 'none'}. Judge the "
            "generation again with another --temperature to see consistency and accuracy side by side."
        )
    if untold:
        text += f" Not compared: {', '.join(untold)} record no temperature."
    return TemperatureView(card.gen_id, groups, untold, text)


def temperature_views(store: Store, gen_ids: tuple[str, ...] = (), *, judge_round: int = 1) -> list[TemperatureView]:
    """:func:`temperature_view` of each generation named, else of every judged one."""
    ids = gen_ids or tuple(g for g in store.ids("generation") if runs_on(store, g))
    return [temperature_view(store, report_card(store, g, judge_round=judge_round)) for g in ids]
