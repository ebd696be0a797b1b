"""The judge's own sentence against its stored verdict: a small list of phrases that claim full
coverage ("covers every must-have", "all requirements met") or a failure ("does not cover",
"misses a must-have"), read case-insensitively in a verdict's free-text ``reason``.

A reason that claims full coverage while the stored verdict fails, or claims a failure while it
passes, is a ``statement_contradicts`` case of the review queue (:mod:`evalcore.review.detect`
adds :func:`why_sql` to the judge's structured statement), on judged and imported runs alike.

The limits, said once (docs/REVIEW.md): a phrase list reads words, not meaning. It does not see
"covers every must-have except the fee", a negation far from the verb ("I would not say it covers
every must-have"), other languages, or a claim put in other words; a reason holding phrases of
both kinds is left alone (it is read as mixed, not as a claim). It only adds cases to review: a
person decides each."""

from __future__ import annotations

import re

_ITEMS = r"(must[- ]haves?|must[- ]have (items|points)|required (items|points)|requirements?|key points?)"
#: phrases that claim every requirement is met (regular expressions, matched case-insensitively)
PASS_PHRASES: tuple[str, ...] = (
    rf"\b(covers|addresses|meets|satisfies|includes) (every|each|all)( of)?( the)? {_ITEMS}",
    rf"\ball (of )?(the )?{_ITEMS} (are |were )?(met|covered|satisfied|addressed|present)\b",
    r"\bnothing (is )?missing\b",
)
#: phrases that claim a requirement is not met
FAIL_PHRASES: tuple[str, ...] = (
    r"\b(does not|doesn't|did not|didn't|fails to) (cover|address|meet|satisfy|include)\b",
    rf"\bmiss(es|ed|ing)? (a|an|one|two|some|several|the|key) {_ITEMS}",
    rf"\b{_ITEMS} (is |are |was |were )?not (met|covered|satisfied|addressed)\b",
    rf"\bnot all (of )?(the )?{_ITEMS}",
)
PASS_PATTERN = "(?i)(" + "|".join(PASS_PHRASES) + ")"
FAIL_PATTERN = "(?i)(" + "|".join(FAIL_PHRASES) + ")"
PASS_WHY = "verdict fails, but the judge's reason claims full coverage: "
FAIL_WHY = "verdict passes, but the judge's reason claims a failure: "


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def why_sql(reason: str = "reason", passed: str = "passed") -> str:
    """SQL (DuckDB) for why a verdict's reason contradicts it, or NULL: the words of
    :data:`PASS_WHY` / :data:`FAIL_WHY` and the phrase matched, in double quotes."""
    p, f = _lit(PASS_PATTERN), _lit(FAIL_PATTERN)
    return (
        f"CASE WHEN {reason} IS NULL THEN NULL "
        f"WHEN NOT {passed} AND regexp_matches({reason}, {p}) AND NOT regexp_matches({reason}, {f}) "
        f"THEN {_lit(PASS_WHY)} || '\"' || regexp_extract({reason}, {p}) || '\"' "
        f"WHEN {passed} AND regexp_matches({reason}, {f}) AND NOT regexp_matches({reason}, {p}) "
        f"THEN {_lit(FAIL_WHY)} || '\"' || regexp_extract({reason}, {f}) || '\"' END"
    )


def claim(reason: str | None) -> str | None:
    """What a reason claims: ``pass`` (full coverage), ``fail`` (a requirement not met), or None
    (neither, or both)."""
    if not reason:
        return None
    says_pass, says_fail = re.search(PASS_PATTERN, reason), re.search(FAIL_PATTERN, reason)
    if says_pass and not says_fail:
        return "pass"
    if says_fail and not says_pass:
        return "fail"
    return None
