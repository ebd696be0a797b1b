"""The report card's opening (:func:`judge_summary`): one row per judge run, computed from the card's
per-criterion figures alone, and what they say in words, including which runs are ranked and why
the others are not. Used by :func:`evalcore.review.reportcard.report_card`.

**What a ranking rests on.** The words rank the judges by mean kappa against gold and by leniency.

* A criterion counts in a run's means (kappa, accuracy, leniency) only where the run has at least
  :data:`MIN_GOLD_CASES` = 30 gold cases on it: the count the ambiguity flag asks of two judges
  (:data:`evalcore.review.judges.MIN_PAIR_CASES`). On n cases one case moves the agreement by 1/n
  and kappa by about twice that where chance agreement is one half; on 2 cases kappa can only be -1,
  0, 1 or undefined. A run with no such criterion is not ranked; the words name it with the most
  gold cases it has on one criterion.
* A run that made calls and lost some (``partial``: not every call made; ``polluted``: calls
  failed after every retry) is not ranked while a complete run is: its figures rest on the verdicts
  that came back. When no complete run can be ranked, they are ranked, and the words say so.
* An imported run whose source gave values outside the scale
  (:class:`~evalcore.contract.schema.OutOfScale`: recorded as errored verdicts; the run made no
  call, so none failed) is ranked while they are at most
  :data:`~evalcore.contract.schema.OUT_OF_SCALE_TOLERANCE` (1%) of its verdicts; above that it is
  named with its share and not ranked.

**One unit per figure.** Kappa is printed with two decimals, leniency (a difference of two pass
rates) in points of pass rate with one decimal, the same unit as the pass rates beside it;
a figure that rounds to 0.0 is said to be 0.0, without a sign, and the words about its direction
("most lenient", "strictest") follow the rounded figure they print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result

if TYPE_CHECKING:
    from evalcore.review.reportcard import CriterionCard, JudgeVsGold

#: gold cases a run needs on a criterion for the criterion to count in its summary's means and
#: ranking: the count the ambiguity flag asks of two judges (module docstring)
MIN_GOLD_CASES = 30


@dataclass
class JudgeSummary(Result):
    """One judge run's row of the summary (:func:`judge_summary` says what each figure is)."""

    run_id: str
    judge_model: str
    mode: str
    prompt_variant: str
    status: str
    criteria: int
    gold_cases: int
    most_gold_cases: int
    kappa_criteria: int
    fewest_gold_cases: int | None
    mean_kappa: float | None
    mean_accuracy: float | None
    leniency_criteria: int
    leniency: float | None
    score_leniency: float | None
    ambiguous: int
    ambiguous_criteria: list[str]
    corrected_criteria: int
    observed_pass_rate: float | None
    corrected_pass_rate: float | None
    out_of_scale: float | None
    not_ranked: str | None


@dataclass
class Summary(Result):
    """The report card's opening: a row per judge run and the findings in words."""

    judges: list[JudgeSummary]
    text: list[str]


def _mean(xs: Sequence[float]) -> float | None:
    return float(np.mean(xs)) if xs else None


def judge_summary(criteria: list[CriterionCard], ms: dict[str, S.RunManifest]) -> Summary:
    """The report card's opening: one row per judge run (``judges``, in the card's run order) and
    what they say in words (``text``), from the card's ``criteria`` entries alone (no figure of its
    own). Per run: its judge model, harness mode, prompt variant and status; ``criteria`` it judges;
    ``gold_cases``, its verdicts on gold cases summed over criteria, and ``most_gold_cases`` on one
    criterion. The means are over the criteria where it has at least :data:`MIN_GOLD_CASES` gold
    cases: ``mean_kappa``, the unweighted mean of its kappa against gold over the
    ``kappa_criteria`` of those where kappa is defined (``fewest_gold_cases``: the fewest gold cases
    on one of them); ``mean_accuracy`` likewise; ``leniency``, the mean over the pass / fail and
    ternary ones (``leniency_criteria``) of its pass rate minus gold's on the same cases, and
    ``score_leniency``, the mean score difference over the ordinal ones. ``ambiguous``: how many
    criteria it is flagged ambiguous on (one of a pair agreeing below the ambiguity threshold),
    named in ``ambiguous_criteria``; over the ``corrected_criteria`` where the corrected pass rate
    is defined, the mean ``observed_pass_rate`` and mean ``corrected_pass_rate``.
    ``out_of_scale``: the share of an imported run's values outside the scale (None without any);
    ``not_ranked``: why it is left out of the ranking by kappa (None when it is ranked; the module
    docstring has the rules). The words are :func:`summary_text`."""
    rows = []
    for rid, m in ms.items():
        js = [(c, j) for c in criteria for j in c.judges if j.run_id == rid]
        if js:
            rows.append(_row(m, js))
    _rank(rows)
    return Summary(rows, summary_text(rows, criteria))


def _row(m: S.RunManifest, js: list[tuple[CriterionCard, JudgeVsGold]]) -> JudgeSummary:
    """A run's summary row from its entries (criterion, figures against gold), before ranking."""
    rid = m.run_id
    enough = [j for _, j in js if j.n >= MIN_GOLD_CASES]
    kappa = [j for j in enough if j.kappa is not None]
    passfail = [j.leniency for j in enough if j.leniency is not OMIT and j.gold_pass_rate is not OMIT]
    scores = [j.leniency for j in enough if j.leniency is not OMIT and j.gold_pass_rate is OMIT]
    corr = [j.corrected for _, j in js if j.corrected.value is not None]
    amb = [c.criterion for c, _ in js if c.ambiguous.flag and any(rid in (p.a, p.b) for p in c.ambiguous.pairs)]
    return JudgeSummary(
        rid,
        m.judge_model,
        m.mode,
        m.prompt_variant,
        m.status,
        criteria=len(js),
        gold_cases=sum(int(j.n) for _, j in js),
        most_gold_cases=max(int(j.n) for _, j in js),
        kappa_criteria=len(kappa),
        fewest_gold_cases=min((int(j.n) for j in kappa), default=None),
        mean_kappa=_mean([float(j.kappa) for j in kappa if j.kappa is not None]),
        mean_accuracy=_mean([j.accuracy for j in enough if j.accuracy is not None]),
        leniency_criteria=len(passfail),
        leniency=_mean(passfail),
        score_leniency=_mean(scores),
        ambiguous=len(amb),
        ambiguous_criteria=amb,
        corrected_criteria=len(corr),
        observed_pass_rate=_mean([c.observed for c in corr if c.observed is not None]),
        corrected_pass_rate=_mean([c.value for c in corr if c.value is not None]),
        out_of_scale=m.out_of_scale.share if m.out_of_scale else None,
        not_ranked=None,
    )


# why a run is not ranked (``not_ranked``), in the order the rules apply and the words list them
OUT_OF_SCALE = f"more than {S.OUT_OF_SCALE_TOLERANCE:.0%} of the imported values outside the scale"
NO_GOLD = "no gold cases"
FEW_GOLD = f"fewer than {MIN_GOLD_CASES} gold cases on every criterion"
NO_KAPPA = f"kappa undefined on every criterion with {MIN_GOLD_CASES} gold cases"
PARTIAL = "partial (not every call was made) while a complete run is ranked"
POLLUTED = "polluted (some of its verdicts have no value) while a complete run is ranked"
NOT_RANKED = (OUT_OF_SCALE, NO_GOLD, FEW_GOLD, NO_KAPPA, PARTIAL, POLLUTED)


def _beyond_tolerance(r: JudgeSummary) -> bool:
    return r.out_of_scale is not None and r.out_of_scale > S.OUT_OF_SCALE_TOLERANCE


def _rank(rows: list[JudgeSummary]) -> None:
    """Set each row's ``not_ranked`` (the rules of the module docstring)."""
    for r in rows:
        r.not_ranked = (
            OUT_OF_SCALE
            if _beyond_tolerance(r)
            else NO_GOLD
            if r.gold_cases == 0
            else FEW_GOLD
            if r.most_gold_cases < MIN_GOLD_CASES
            else NO_KAPPA
            if r.mean_kappa is None
            else None
        )
    if any(r.not_ranked is None and r.status == "complete" for r in rows):
        for r in rows:
            if r.not_ranked is None and r.status != "complete":
                r.not_ranked = PARTIAL if r.status == "partial" else POLLUTED


def _criteria(n: int) -> str:
    return f"{n} criterion" if n == 1 else f"{n} criteria"


def points(x: float) -> str:
    """A difference of two rates (a share) in points of rate, one decimal: "+4.2", "-27.6", and
    "0.0" for whatever rounds to it (no sign: it has no direction)."""
    p = round(100 * x, 1)
    return "0.0" if p == 0 else f"{p:+.1f}"


def _kappa_words(r: JudgeSummary) -> str:
    each = (
        f"{r.fewest_gold_cases} gold cases"
        if r.kappa_criteria == 1
        else f"at least {r.fewest_gold_cases} gold cases each"
    )
    return f"mean kappa {r.mean_kappa:.2f} over {_criteria(r.kappa_criteria)} with {each}"


def _not_ranked_words(rows: list[JudgeSummary]) -> str:
    """ " Not ranked, REASON: run (figure), run; REASON: run." or "" when every row is ranked."""

    def named(r: JudgeSummary) -> str:
        said = [r.status] if r.status != "complete" and r.not_ranked not in (PARTIAL, POLLUTED) else []
        said += [S.percent(r.out_of_scale or 0.0)] if r.not_ranked == OUT_OF_SCALE else []
        said += [f"at most {r.most_gold_cases}"] if r.not_ranked == FEW_GOLD else []
        return r.run_id + (f" ({', '.join(said)})" if said else "")

    parts = []
    for reason in NOT_RANKED:
        runs = [named(r) for r in rows if r.not_ranked == reason]
        if runs:
            parts.append(f"{reason}: {', '.join(runs)}")
    return f" Not ranked, {'; '.join(parts)}." if parts else ""


def _agreement_sentence(rows: list[JudgeSummary]) -> str:
    """Which ranked run agrees best with gold and which least, then the runs not ranked and why."""
    ranked = sorted((r for r in rows if r.not_ranked is None), key=lambda r: -(r.mean_kappa or 0.0))
    if not any(r.gold_cases for r in rows):
        return "No judge has a kappa against gold yet: no criterion has gold cases the judges judged."
    if not ranked:
        return "No judge is ranked against gold." + _not_ranked_words(rows)
    best = ranked[0]
    s = f"{best.run_id} agrees best with gold ({_kappa_words(best)})"
    if len(ranked) > 1:
        s += f"; {ranked[-1].run_id} least ({_kappa_words(ranked[-1])})"
    if any(r.status != "complete" for r in ranked):
        s += "; no complete run can be ranked, so partial and polluted runs are"
    return s + "." + _not_ranked_words(rows)


def _leniency_sentence(rows: list[JudgeSummary]) -> str | None:
    """The most and least lenient of the runs that may be ranked (by the rules on the imported values
    and on calls; the gold count is in ``leniency`` already), in points of pass rate."""
    pool = [r for r in rows if r.leniency is not None and not _beyond_tolerance(r)]
    if any(r.status == "complete" for r in pool):
        pool = [r for r in pool if r.status == "complete"]
    lenient = sorted(pool, key=lambda r: -(r.leniency or 0.0))
    if not lenient:
        return None

    def said(r: JudgeSummary) -> str:
        return (
            f"{points(r.leniency or 0.0)} points of pass rate against gold, mean over {_criteria(r.leniency_criteria)}"
        )

    def how(r: JudgeSummary, top: bool) -> str:
        p = points(r.leniency or 0.0)
        if p == "0.0":
            return "passes as often as gold"
        if top:
            return "is most lenient" if p.startswith("+") else "is the least strict"
        return "is strictest" if p.startswith("-") else "is the least lenient"

    most, least = lenient[0], lenient[-1]
    s = "" if points(most.leniency or 0.0).startswith("+") else "No judge passes more often than gold; "
    s += f"{most.run_id} {how(most, True)} ({said(most)})"
    if len(lenient) > 1:
        s += f"; {least.run_id} {how(least, False)} ({said(least)})"
    return s + "."


def _out_of_scale_sentence(rows: list[JudgeSummary]) -> str | None:
    """How the imported runs with values outside their scale were treated."""
    noted = [r for r in rows if r.out_of_scale is not None]
    if not noted:
        return None
    within = [r for r in noted if not _beyond_tolerance(r)]
    tol = f"{S.OUT_OF_SCALE_TOLERANCE:.0%}"
    s = (
        f"{len(noted)} of {len(rows)} runs were imported with values outside their scale, kept as errored "
        f"verdicts and left out of their figures (a note on the source data: no call was made, none failed)"
    )
    if within:
        top = max(r.out_of_scale or 0.0 for r in within)
        s += f"; {len(within)} with at most {tol} (up to {S.percent(top)}) are ranked"
    if len(within) < len(noted):
        s += f"; {len(noted) - len(within)} with more are not ranked"
    return s + "."


def summary_text(rows: list[JudgeSummary], criteria: list[CriterionCard]) -> list[str]:
    """The summary in words, one sentence per finding, each generated from the rows' figures:
    agreement with gold (the ranked runs, then the others and why), the imported values outside
    the scale, leniency, the ambiguous criteria. Ties go to the run that comes first."""
    out = [_agreement_sentence(rows)]
    out += [s for s in (_out_of_scale_sentence(rows), _leniency_sentence(rows)) if s]
    flagged = [c.criterion for c in criteria if c.ambiguous.flag]
    if flagged:
        threshold = next(c.ambiguous.threshold for c in criteria if c.ambiguous.flag)
        s = (
            f"{len(flagged)} of {len(criteria)} criteria flagged ambiguous (two judges in one harness agree below "
            f"kappa {threshold}): {', '.join(flagged)}"
        )
        both = [f"{c.criterion} {h.text}" for c in criteria if c.ambiguous.flag for h in c.ambiguous.harnesses]
        out.append(s + (". Single against split: " + "; ".join(both) if both else "") + ".")
    else:
        out.append("No criterion is flagged ambiguous.")
    return out
