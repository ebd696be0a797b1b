"""Criteria scored without a pass threshold (issue 40).

An ordinal or continuous criterion may be imported with no threshold (``import long`` / ``wide``
without ``--threshold``): its verdicts carry scores and no pass / fail (``passed`` is null). The
score figures (correlate, reliability, the means) read the scores and need none; every figure that
counts passes and fails says so in one line (:func:`threshold_note`) rather than show 0% or call the
verdicts errored: ``runs`` and the Runs page, ``attribution``, ``compare``, ``correct``, the report
card (``agreement``, the Agreement page).
"""

from __future__ import annotations

from evalcore.contract import schema as S

SCORED = ("ordinal", "continuous")
#: the words every note of :func:`threshold_note` carries (compare's text picks its notes by them)
NO_THRESHOLD = "no pass threshold"


def unthresholded(rubric: S.Rubric) -> list[str]:
    """The rubric's ordinal and continuous criteria that have no pass threshold, in rubric order."""
    return [c.name for c in rubric.criteria if c.kind in SCORED and c.threshold is None]


def threshold_note(run_id: str, rubric: S.Rubric) -> str | None:
    """One line naming the run's criteria without a pass threshold and how to give one; None when
    every scored criterion has one."""
    names = unthresholded(rubric)
    if not names:
        return None
    which = ", ".join(names)
    return (
        f"run {run_id}: {which} {'has' if len(names) == 1 else 'have'} {NO_THRESHOLD}, so no pass / fail "
        f"figure counts {'it' if len(names) == 1 else 'them'} (scores only: correlate, reliability, mean score); "
        f"give one by importing again with --threshold T or --criterion-threshold {names[0]}=T"
    )
