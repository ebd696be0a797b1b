"""Deterministic criteria (evalcore/llm/checks.py): pure functions, values worked out by hand."""

from __future__ import annotations

import pytest

from evalcore.contract.schema import CheckSpec
from evalcore.llm.checks import mrr_at_k, number_in, recall_at_k, retrieval, run_check


def chk(**kw):
    return CheckSpec(**kw)


@pytest.mark.parametrize("spec, output, passed", [
    (chk(type="regex", pattern=r"\bstep [0-9]+\b"), "First, Step 2: open it.", True),
    (chk(type="regex", pattern=r"\bstep [0-9]+\b", case_sensitive=True), "First, Step 2: open it.", False),
    (chk(type="regex", pattern=r"^\d{4}-\d{2}-\d{2}$"), "2026-01-31", True),
    (chk(type="contains", pattern="Refund"), "your refund is on its way", True),
    (chk(type="contains", pattern="Refund", case_sensitive=True), "your refund is on its way", False),
    (chk(type="contains", pattern="refund"), "no money back", False),
    (chk(type="equals", pattern="Paris"), "  paris \n", True),
    (chk(type="equals", pattern="Paris", case_sensitive=True), "paris", False),
    (chk(type="json"), ' {"a": [1, 2]} ', True),
    (chk(type="json"), "{'a': 1}", False),
    (chk(type="json"), "", False),
    (chk(type="numeric", value=3.14, tolerance=0.01), "3.141", True),
    (chk(type="numeric", value=3.14, tolerance=0.0001), "pi is about 3.141", False),
    (chk(type="numeric", value=1234.5), "The total is 1,234.5 dollars.", True),
    (chk(type="numeric", value=42), "between 10 and 42", True),
])
def test_checks_by_hand(spec, output, passed):
    assert run_check(spec, output).passed is passed


def test_numeric_without_a_number_fails_and_explains():
    o = run_check(chk(type="numeric", value=1.0), "no figures here")
    assert o.passed is False and o.score is None and o.raw_verdict == "no number"


def test_equals_and_numeric_fall_back_to_the_reference():
    assert run_check(chk(type="equals"), "Lyon", reference="lyon").passed is True
    assert run_check(chk(type="numeric", tolerance=0.5), "about 9.8", reference="The answer is 10").passed is True
    o = run_check(chk(type="equals"), "Lyon")
    assert o.passed is None and "reference" in o.error
    o = run_check(chk(type="numeric"), "7", reference="none given")
    assert o.passed is None and "numeric reference" in o.error


def test_number_in_reads_the_whole_text_or_the_last_number():
    assert number_in(" -2.5e3 ") == -2500.0
    assert number_in("step 1, step 2, result 17") == 17.0
    assert number_in("1,234,567 users") == 1234567.0
    assert number_in("nothing") is None


def test_recall_and_mrr_by_hand():
    retrieved = ["d3", "d1", "d3", "d9", "d2"]
    expected = ["d1", "d2"]
    # top-2 (duplicates count once, at their first rank): d3, d1 -> one of two expected
    assert recall_at_k(retrieved, expected, 2) == 0.5
    # top-4 after dedupe: d3, d1, d9, d2 -> both
    assert recall_at_k(retrieved, expected, 4) == 1.0
    assert recall_at_k(retrieved, expected) == 1.0
    # first expected document at rank 2
    assert mrr_at_k(retrieved, expected) == 0.5
    assert mrr_at_k(retrieved, expected, 1) == 0.0
    assert mrr_at_k(["d2"], expected, 3) == 1.0


def test_retrieval_outcome_and_missing_data():
    o = retrieval(["d3", "d1"], ["d1", "d2"], k=2, threshold=0.5, metric="recall")
    assert (o.passed, o.score, o.raw_verdict) == (True, 0.5, "recall@2=0.5 mrr@2=0.5")
    o = retrieval(["d3", "d1"], ["d1", "d2"], k=2, threshold=1.0, metric="mrr")
    assert (o.passed, o.score) == (False, 0.5)
    assert retrieval(["d1"], [], k=None, threshold=0.5).error == "the item has no expected_doc_ids"
    assert retrieval(None, ["d1"], k=None, threshold=0.5).error == "the output records no retrieved_doc_ids"
    assert retrieval([], ["d1"], k=3, threshold=0.5).passed is False


def test_checks_are_pure():
    spec = chk(type="regex", pattern="a+")
    first = run_check(spec, "caaat")
    assert run_check(spec, "caaat") == first and first.reason == "pattern 'a+' matched 'aaa'"
