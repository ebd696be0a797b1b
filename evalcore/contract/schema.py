"""The data contract, version 1: every file evalcore writes or reads, as pydantic models.

Three levels keep a change of the system under test apart from a change of judge:

* a **suite** is frozen items (``suites/<suite_id>/``),
* a **generation** is one configuration of the system under test answering a suite, possibly
  several times (generation rounds; ``generations/<gen_id>/``),
* a **run** is one judge configuration applied to one generation (``runs/<run_id>/``).

Pairwise **sessions** (``sessions/<session_id>/``) show two arms' answers blind; their **key**
lives in a separate keys directory. **Label sets** (``labels/<labelset_id>/``) are human labels
that ship with the data (simulated people in the demo, annotators of an imported data set).

Manifests are JSON files validated by the ``*Manifest`` models. Tables are Parquet files whose
columns are described by the ``*Row`` models: their pyarrow schema is derived from the model, and
the ``schema_version`` sits in the Parquet key-value metadata (``evalcore.schema_version``).
docs/FORMAT.md is generated from this module (``evalcore schema --markdown``) and a test keeps
the two identical.
"""

from __future__ import annotations

import math
import types
import typing
from collections import Counter
from datetime import datetime
from typing import Any, Literal

import pyarrow as pa  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_serializer, model_validator

from evalcore.contract.hashing import content_hash, is_valid_id

SCHEMA_VERSION = 1
#: Version of the derived tables (``derived/index.json``, docs/FORMAT.md "Derived tables"): a set of
#: another version is not read, and is rebuilt.
DERIVED_VERSION = 2

CriterionKind = Literal["binary", "ordinal", "ternary", "continuous", "check", "retrieval"]
HarnessMode = Literal["single", "split", "grouped", "imported"]
Status = Literal["complete", "partial", "polluted"]
TERNARY_LABELS = ("correct", "partial", "wrong")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# --------------------------------------------------------------------------- rubric


class CheckSpec(_Model):
    """How a deterministic ``check`` criterion is computed without a model call."""

    type: Literal["regex", "contains", "equals", "numeric", "json"] = Field(
        description="regex: pattern found; contains/equals: text test; numeric: |x - value| <= "
        "tolerance; json: output parses as JSON"
    )
    pattern: str | None = Field(default=None, description="regex pattern or text to look for")
    value: float | None = Field(default=None, description="expected number for `numeric`")
    tolerance: float | None = Field(default=None, description="allowed absolute difference for `numeric`")
    case_sensitive: bool = Field(default=False, description="whether text tests respect case")


class Criterion(_Model):
    """One requirement of a rubric."""

    name: str = Field(description="criterion id, unique in the rubric (letters, digits, _ . -)")
    kind: CriterionKind = Field(
        description="binary (pass/fail); ordinal (integer scale, pass at threshold); ternary "
        "(correct/partial/wrong: partial counts half in the headline and fails the all-pass "
        "rate); continuous (mean of ratings, pass at threshold); check (deterministic, no model "
        "call); retrieval (recall@k / MRR against expected_doc_ids)"
    )
    description: str = Field(default="", description="what the judge is asked, in plain words")
    pass_anchor: str | None = Field(default=None, description="what a passing answer looks like")
    scale_min: float | None = Field(default=None, description="lowest score on the scale (ordinal, continuous)")
    scale_max: float | None = Field(default=None, description="highest score on the scale (ordinal, continuous)")
    threshold: float | None = Field(
        default=None, description="score at or above which the criterion passes (ordinal, continuous, retrieval)"
    )
    gate: bool = Field(default=False, description="a hard gate: failing it fails the answer whatever else holds")
    group: str | None = Field(default=None, description="group name for the `grouped` harness")
    model: str | None = Field(default=None, description="judge model for this criterion alone, if not the run's")
    check: CheckSpec | None = Field(default=None, description="the deterministic test of a `check` criterion")
    k: int | None = Field(default=None, description="cut-off for a `retrieval` criterion (recall@k)")

    @field_validator("name")
    @classmethod
    def _name_is_id(cls, v: str) -> str:
        if not is_valid_id(v):
            raise ValueError(f"criterion name {v!r} is not a valid id")
        return v

    @model_validator(mode="after")
    def _finite_scale(self) -> Criterion:
        """Numbers of the scale are finite, the scale runs upward and the threshold lies on it."""
        for key in ("scale_min", "scale_max", "threshold"):
            x = getattr(self, key)
            if x is not None and not math.isfinite(x):
                raise ValueError(f"{key} of criterion {self.name!r} is {x!r}, not a finite number")
        lo, hi, t = self.scale_min, self.scale_max, self.threshold
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"the scale of criterion {self.name!r} runs from {lo:g} down to {hi:g}")
        if t is not None and lo is not None and hi is not None and not lo <= t <= hi:
            raise ValueError(f"the threshold of criterion {self.name!r} ({t:g}) is outside its scale {lo:g}-{hi:g}")
        return self

    def whole_scores(self) -> list[int] | None:
        """The scores of an ordinal criterion on a scale of whole numbers that starts at a whole
        number and spans at most 10 points (what a reviewer decides and what agreement counts as
        categories); None for any other criterion, which is decided and counted as pass / fail."""
        lo, hi = self.scale_min, self.scale_max
        if self.kind != "ordinal" or lo is None or hi is None or hi - lo > 10 or not float(lo).is_integer():
            return None
        return list(range(int(lo), int(hi) + 1))


class Rubric(_Model):
    """The criteria a run judges, in their declared order."""

    name: str = Field(default="rubric", description="rubric name")
    criteria: list[Criterion] = Field(description="criteria in declared order")
    _index: tuple[list[Criterion], dict[str, Criterion]] | None = PrivateAttr(default=None)

    @field_validator("criteria")
    @classmethod
    def _unique(cls, v: list[Criterion]) -> list[Criterion]:
        dupes = sorted(n for n, k in Counter(c.name for c in v).items() if k > 1)
        if dupes:
            raise ValueError(f"duplicate criterion names: {', '.join(dupes)}")
        if not v:
            raise ValueError("a rubric needs at least one criterion")
        return v

    def names(self) -> list[str]:
        return [c.name for c in self.criteria]

    def get(self, name: str) -> Criterion | None:
        # by a dict built once per criteria list (a lookup per cell: linear in a wide file, not quadratic)
        crit = self.criteria
        if self._index is None or self._index[0] is not crit or len(self._index[1]) != len(crit):
            self._index = (crit, {c.name: c for c in reversed(crit)})
        return self._index[1].get(name)

    def hash(self) -> str:
        return content_hash(self.model_dump(mode="json"))


# --------------------------------------------------------------------------- manifests


class Totals(_Model):
    """Sums over the calls of a generation or a run."""

    calls: int = Field(default=0, description="model calls made (0 for imported or simulated data without calls)")
    failed_calls: int = Field(default=0, description="calls that still failed after every retry")
    tokens_in: int = Field(default=0, description="prompt tokens over all calls")
    tokens_out: int = Field(default=0, description="completion tokens over all calls")
    cost_usd: float | None = Field(
        default=None, description="total cost in US dollars; null when any price is unknown, never 0 for unknown"
    )
    latency_ms_mean: float | None = Field(default=None, description="mean latency of one call in milliseconds")
    latency_ms_p95: float | None = Field(default=None, description="95th percentile latency in milliseconds")
    lost_requests: int = Field(
        default=0,
        description="requests in flight when a process making the calls was killed: sent, never journaled, "
        "perhaps billed (their tokens are not in tokens_in; omitted when 0)",
    )
    tokens_in_estimated: int = Field(
        default=0, description="prompt tokens of the lost requests, estimated offline (not counted in tokens_in)"
    )

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: Any) -> Any:
        """``lost_requests`` and ``tokens_in_estimated`` are written only when a request was lost:
        totals without one are written exactly as before they existed."""
        out = handler(self)
        if isinstance(out, dict):
            for key in ("lost_requests", "tokens_in_estimated"):
                if out.get(key) == 0:
                    del out[key]
        return out


class QuotaBound(_Model):
    """One target of a suite quota (docs/SUITES.md): shares of the suite's items (``min`` /
    ``max``, 0-1) and/or counts of items (``min_count`` / ``max_count``). Every bound given must
    hold; at least one is given."""

    min: float | None = Field(default=None, ge=0, le=1, description="smallest allowed share of the suite's items (0-1)")
    max: float | None = Field(default=None, ge=0, le=1, description="largest allowed share of the suite's items (0-1)")
    min_count: int | None = Field(default=None, ge=0, description="smallest allowed number of items")
    max_count: int | None = Field(default=None, ge=0, description="largest allowed number of items")

    @model_validator(mode="after")
    def _consistent(self) -> QuotaBound:
        if all(v is None for v in (self.min, self.max, self.min_count, self.max_count)):
            raise ValueError("a quota needs at least one of min, max, min_count, max_count")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        if self.min_count is not None and self.max_count is not None and self.min_count > self.max_count:
            raise ValueError(f"min_count {self.min_count} is above max_count {self.max_count}")
        return self


class SuiteQuotas(_Model):
    """``quotas`` in a suite manifest: targets per item class and per difficulty tier, checked by
    ``evalcore suite check``. A value not named is unconstrained; items without a class or
    difficulty count as ``(none)``. Shares are of all the suite's items, holdout included."""

    class_: dict[str, QuotaBound] = Field(
        default_factory=dict, alias="class", description='class -> bounds, e.g. {"billing": {"max": 0.3}}'
    )
    difficulty: dict[str, QuotaBound] = Field(
        default_factory=dict, description='difficulty tier -> bounds, e.g. {"hard": {"min": 0.2}}'
    )


class SuiteChange(_Model):
    """One repair recorded in a suite version's manifest: which item and field changed, from what
    to what, who made it, why, and the \"test is wrong\" flag it resolves."""

    item_id: str = Field(description="the item repaired")
    field: str = Field(
        description="the column changed (input, context, reference, must_have, nice_to_have, "
        "wrong_if, expected_doc_ids, class, difficulty)"
    )
    before: str | list[str] | None = Field(default=None, description="the value in the previous version")
    after: str | list[str] | None = Field(default=None, description="the value in this version")
    by: str = Field(description="who made the repair")
    why: str = Field(description="why the test was wrong")
    at: datetime = Field(description="when the repair was made (UTC)")
    flag: int | None = Field(default=None, description="the label-store edit (outcome test_wrong) this repair resolves")


class SuiteManifest(_Model):
    """``suites/<suite_id>/manifest.json``. A repaired version (2, 3, ...) has the same shape and
    lives in the state directory: ``<state>/suites/<suite_id>/v<N>/`` (docs/SUITES.md)."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="data contract version this file follows")
    suite_id: str = Field(description="suite id (the directory name)")
    description: str = Field(default="", description="what the items are")
    created_at: datetime = Field(description="when the suite was frozen (UTC)")
    content_hash: str = Field(description="hash of the items (ids, inputs, references and requirement lists)")
    n_items: int = Field(description="number of items")
    curated: bool = Field(
        default=False, description="items were picked by hand: absolute rates are labelled as from a curated suite"
    )
    simulated: bool = Field(default=False, description="made by evalcore's simulator, not by a real system")
    source: str = Field(default="", description="where the items came from (a command, a data set)")
    version: int = Field(
        default=1,
        ge=1,
        description="suite version: 1 is the suite in the data directory; each repair "
        "makes the next one in the state directory (omitted when 1)",
    )
    supersedes: str | None = Field(
        default=None, description="content_hash of the version this one replaces (omitted for version 1)"
    )
    changes: list[SuiteChange] = Field(
        default_factory=list,
        description="the repairs that make this version from the previous one (omitted for version 1)",
    )
    quotas: SuiteQuotas | None = Field(
        default=None,
        description="class and difficulty targets checked by `evalcore "
        "suite check` (docs/SUITES.md; omitted when there are none)",
    )

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: Any) -> Any:
        """``version``, ``supersedes``, ``changes`` and ``quotas`` are written only when they say
        something: a version-1 suite without quotas is written exactly as before they existed."""
        out = handler(self)
        if isinstance(out, dict):
            for key, default in (("version", 1), ("supersedes", None), ("changes", []), ("quotas", None)):
                if key in out and out[key] == default:
                    del out[key]
        return out


class GenerationManifest(_Model):
    """``generations/<gen_id>/manifest.json``: one configuration of the system under test."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="data contract version this file follows")
    gen_id: str = Field(description="generation id (the directory name)")
    suite_id: str = Field(description="the suite answered")
    suite_hash: str = Field(description="content_hash of the suite when it was answered")
    created_at: datetime = Field(description="when the generation was written (UTC)")
    knobs: dict[str, Any] = Field(
        default_factory=dict,
        description="settings of the system under test: generator_model, temperature, "
        "writer_prompt_hash, revision_budget, token_budget, corpus_snapshot, retrieval, and any "
        "key=value the user recorded",
    )
    rounds: int = Field(default=1, description="generation rounds (each item answered this many times)")
    status: Status = Field(
        default="complete", description="complete, partial (items missing) or polluted (errored outputs)"
    )
    source: Literal["generated", "imported", "simulated"] = Field(description="how the outputs came to be")
    outputs_hash: str = Field(
        description="hash of (item_id, round, output) for every row: equal hashes mean identical answers"
    )
    totals: Totals = Field(
        default_factory=Totals, description="calls, tokens, cost and latency of the system under test"
    )
    simulated: bool = Field(default=False, description="made by evalcore's simulator")


#: share of a run's values that may lie outside its scale while it is ranked (docs/DATASETS.md says why)
OUT_OF_SCALE_TOLERANCE = 0.01


def percent(x: float) -> str:
    """``x`` in percent with the decimals (1 to 4) that tell it from 0 and from the tolerance."""
    apart = [t for d in (1, 2, 3) if (t := f"{x:.{d}%}") not in (f"{0:.{d}%}", f"{OUT_OF_SCALE_TOLERANCE:.{d}%}")]
    return (apart or [f"{x:.{1 if x in (0, OUT_OF_SCALE_TOLERANCE) else 4}%}"])[0]


class OutOfScale(_Model):
    """An imported run's values outside its rubric's scale, kept as errored verdicts: no call failed."""

    count: int = Field(description="values outside the scale (errored verdicts)")
    of: int = Field(description="values imported (the run's verdicts)")
    scale: str = Field(description="the scale, e.g. `1-5`")

    @property
    def share(self) -> float:  # of the values imported
        return self.count / self.of if self.of else 0.0

    def note(self) -> str:  # e.g. "82 of 6,336 ratings outside 1-5, recorded as errors (1.3%)"
        return f"{self.count:,} of {self.of:,} ratings outside {self.scale}, recorded as errors ({percent(self.share)})"


class RunManifest(_Model):
    """``runs/<run_id>/manifest.json``: one judge configuration applied to one generation."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="data contract version this file follows")
    run_id: str = Field(description="run id (the directory name)")
    gen_id: str = Field(description="the generation judged")
    created_at: datetime = Field(description="when the run was written (UTC)")
    rubric: Rubric = Field(description="the criteria judged")
    rubric_hash: str = Field(description="hash of the rubric")
    mode: HarnessMode = Field(
        description="single (one call returns every criterion), split (one call per criterion), grouped (one call per group), imported"
    )
    groups: list[list[str]] | None = Field(default=None, description="criteria per call in `grouped` mode")
    field_order: list[str] | Literal["rotate"] = Field(
        description="order the criteria are asked and emitted in, or `rotate` per item"
    )
    prompt_variant: str = Field(
        default="default",
        description="named prompt variant, e.g. `independent` for the evaluate-each-criterion-independently instruction",
    )
    judge_model: str = Field(description="judge model as a pinned snapshot")
    judge_family: str | None = Field(default=None, description="model family of the judge (for same-family warnings)")
    temperature: float | None = Field(default=None, description="judge sampling temperature")
    seed: int | None = Field(default=None, description="judge sampling seed, where the provider takes one")
    prompt_template: str = Field(default="", description="prompt template text")
    prompt_hash: str = Field(default="", description="hash of the prompt template text")
    postprocess_version: str = Field(
        default="none", description="version of the post-processing that derived `passed` from the judge's raw verdict"
    )
    retry_policy: dict[str, Any] = Field(default_factory=dict, description="max retries, backoff, timeout")
    structured_output: str = Field(
        default="none",
        description="json_schema, json_object, tool, tolerant-parse (no schema sent) or none; MODEL=FORM, ...",
    )
    reuse_cache: bool = Field(
        default=False, description="whether identical calls could be served from the cache (off by default)"
    )
    cache_hits: int = Field(default=0, description="calls served from the cache")
    judge_rounds: int = Field(default=1, description="independent judge rounds over each output")
    source: Literal["judged", "imported", "simulated"] = Field(
        description="judged by evalcore, imported from a file, or simulated"
    )
    status: Status = Field(
        default="complete",
        description="complete; partial (not every call made); polluted (some calls failed after retries: every aggregate says so)",
    )
    failed_call_ids: list[str] = Field(default_factory=list, description="calls that failed after every retry")
    out_of_scale: OutOfScale | None = Field(
        default=None, description="an imported run's values outside its scale (errored verdicts; status stays complete)"
    )
    totals: Totals = Field(default_factory=Totals, description="calls, tokens, cost and latency of the judge")
    knobs: dict[str, Any] = Field(
        default_factory=dict, description="any other key=value the user recorded about the judge"
    )
    price_map_version: str | None = Field(default=None, description="version of the price table used for cost")
    simulated: bool = Field(default=False, description="made by evalcore's simulator")
    description: str = Field(default="", description="free text shown beside the run")

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: Any) -> Any:
        """``out_of_scale`` is written only when there are such values (other runs as before it existed)."""
        out = handler(self)
        if isinstance(out, dict) and out.get("out_of_scale") is None:
            out.pop("out_of_scale", None)
        return out


class SessionSettings(_Model):
    """How a pairwise session's pairs were made (``settings`` in session.json)."""

    normalise: list[str] = Field(
        default_factory=list, description="normalisations applied: headings, bullets, blank-lines"
    )
    length_match: bool = Field(default=False, description="whether answer lengths were matched")
    mirror_fraction: float = Field(default=0.0, description="share of pairs shown again in swapped order")
    holdout: int = Field(default=0, description="pairs held out of the headline")
    seed: int = Field(default=0, description="seed of the left/right draw")


class SessionManifest(_Model):
    """``sessions/<session_id>/session.json``: a blinded pairwise session. No arm name appears
    here or in pairs.parquet; the key is in the keys directory."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="data contract version this file follows")
    session_id: str = Field(description="session id (the directory name)")
    suite_id: str | None = Field(default=None, description="the suite whose items are paired")
    created_at: datetime = Field(description="when the session was made (UTC)")
    settings: SessionSettings = Field(default_factory=SessionSettings, description="how the pairs were made")
    status: Literal["open", "closed"] = Field(default="open", description="open (grading, no results shown) or closed")
    n_pairs: int = Field(description="number of pairs, mirrors included")
    source: Literal["made", "imported", "simulated"] = Field(description="how the session came to be")
    simulated: bool = Field(default=False, description="made by evalcore's simulator")
    sealed: list[str] = Field(
        default_factory=list,
        description="while the session is open, its arm generations in this data directory, each as "
        "sha256('<session_id>:<gen_id>') (32 hex digits; no arm named): evalcore withholds their answers' "
        "texts until the session is closed (docs/PAIRWISE.md, sealing)",
    )
    instructions: str = Field(default="", description="what the graders read first: what 'better' means here")
    created_by: str | None = Field(default=None, description="who made the session: whom a grader tells when done")

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: Any) -> Any:
        """The last three fields are written only when set: a session without them is written as before."""
        out = handler(self)
        drop = ("sealed", "instructions", "created_by") if isinstance(out, dict) else ()
        return {k: v for k, v in out.items() if v or k not in drop} if drop else out


class LabelSetManifest(_Model):
    """``labels/<labelset_id>/manifest.json``: human labels shipped with the data."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="data contract version this file follows")
    labelset_id: str = Field(description="label set id (the directory name)")
    gen_id: str = Field(description="the generation whose outputs were labelled")
    created_at: datetime = Field(description="when the labels were written (UTC)")
    annotators: list[str] = Field(default_factory=list, description="annotator ids")
    rubric: Rubric | None = Field(default=None, description="the criteria labelled, when they are not a run's")
    description: str = Field(default="", description="who labelled what, how")
    simulated: bool = Field(default=False, description="labels of simulated people")


class KeyManifest(_Model):
    """``<keys>/<session_id>/key.json``: the unblinding key's header; outside the data directory."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="data contract version this file follows")
    session_id: str = Field(description="the session this key unblinds")
    arms: dict[str, str] = Field(description="arm name -> generation id or file it came from")
    created_at: datetime = Field(description="when the key was written (UTC)")


# --------------------------------------------------------------------------- table rows


class ItemRow(_Model):
    """``suites/<suite_id>/items.parquet``: one row per item."""

    item_id: str = Field(description="item id, unique in the suite")
    input: str = Field(description="the question or task")
    context: str | None = Field(default=None, description="passages the answer may use")
    reference: str | None = Field(default=None, description="a reference answer")
    must_have: list[str] | None = Field(default=None, description="short statements a correct answer must contain")
    nice_to_have: list[str] | None = Field(default=None, description="statements that improve an answer")
    wrong_if: list[str] | None = Field(default=None, description="statements that make an answer wrong")
    expected_doc_ids: list[str] | None = Field(default=None, description="documents retrieval should find")
    class_: str | None = Field(default=None, alias="class", description="item class, for breakdowns")
    difficulty: str | None = Field(default=None, description="difficulty tier")
    holdout: bool = Field(default=False, description="held out: hidden by default, never used to tune")


class OutputRow(_Model):
    """``generations/<gen_id>/outputs.parquet``: one row per item and generation round."""

    item_id: str = Field(description="the item answered")
    round: int = Field(description="generation round, from 1")
    output: str = Field(description="the system's answer, shown as text only")
    abstained: bool = Field(default=False, description="the system's own 'could not answer' flag")
    retrieved_doc_ids: list[str] | None = Field(default=None, description="documents retrieved, in rank order")
    tokens_in: int | None = Field(default=None, description="prompt tokens of the system under test")
    tokens_out: int | None = Field(default=None, description="completion tokens of the system under test")
    cost_usd: float | None = Field(default=None, description="cost of the answer; null when unknown")
    latency_ms: float | None = Field(default=None, description="latency of the answer in milliseconds")
    error: str | None = Field(default=None, description="why no answer was produced")


class VerdictRow(_Model):
    """``runs/<run_id>/verdicts.parquet``: one row per item, generation round, criterion and judge round."""

    run_id: str = Field(description="the run")
    item_id: str = Field(description="the item")
    gen_round: int = Field(description="generation round of the output judged, from 1")
    criterion: str = Field(description="criterion name from the run's rubric")
    judge_round: int = Field(description="judge round, from 1")
    passed: bool | None = Field(default=None, description="derived pass/fail; null when the call errored")
    score: float | None = Field(default=None, description="numeric score (ordinal, continuous, retrieval)")
    label: str | None = Field(default=None, description="derived ternary label: correct, partial or wrong")
    raw_verdict: str | None = Field(default=None, description="the judge's own value, before post-processing")
    reason: str | None = Field(default=None, description="the judge's reason, shown as text only")
    covered: list[str] | None = Field(default=None, description="must_have items the judge says are covered")
    missed: list[str] | None = Field(default=None, description="must_have items the judge says are missing")
    triggered: list[str] | None = Field(default=None, description="wrong_if items the judge says are triggered")
    position: int = Field(default=0, description="order emitted within its call (0 for a one-criterion call)")
    call_id: str | None = Field(default=None, description="the call that produced this verdict")
    error: str | None = Field(default=None, description="why there is no verdict")


class CallRow(_Model):
    """``runs/<run_id>/calls.parquet``: one row per judge call."""

    call_id: str = Field(description="call id, unique in the run")
    item_id: str = Field(description="the item")
    gen_round: int = Field(description="generation round of the output judged")
    judge_round: int = Field(description="judge round")
    criteria: list[str] = Field(description="criteria this call judged")
    model: str | None = Field(default=None, description="model as the provider reported it")
    prompt_hash: str | None = Field(default=None, description="hash of the rendered prompt")
    tokens_in: int | None = Field(default=None, description="prompt tokens")
    tokens_out: int | None = Field(default=None, description="completion tokens")
    cost_usd: float | None = Field(default=None, description="cost; null when the price is unknown, never 0")
    latency_ms: float | None = Field(default=None, description="latency in milliseconds")
    attempts: int = Field(default=1, description="attempts, retries included")
    cache_hit: bool = Field(default=False, description="served from the cache (only with --reuse)")
    error: str | None = Field(default=None, description="why the call failed after every retry")
    started_at: datetime | None = Field(default=None, description="when the first attempt started (UTC)")


class PairVerdictRow(_Model):
    """``runs/<run_id>/pair_verdicts.parquet``: a model grader's choices in a pairwise session."""

    pair_id: str = Field(description="the pair")
    order: Literal["as_shown", "swapped"] = Field(description="whether the grader saw the pair as shown or swapped")
    choice: Literal["left", "right", "same"] | None = Field(
        default=None, description="choice in as-shown terms; null when the call errored"
    )
    reason: str | None = Field(default=None, description="the grader's reason")
    call_id: str | None = Field(default=None, description="the call")


class PairRow(_Model):
    """``sessions/<session_id>/pairs.parquet``: what a grader sees. Encodes no arm."""

    pair_id: str = Field(description="random id that encodes nothing")
    item_id: str = Field(description="the item both answers respond to")
    left_text: str = Field(description="answer shown on the left, after normalisation")
    right_text: str = Field(description="answer shown on the right, after normalisation")
    mirror_of: str | None = Field(default=None, description="pair this one repeats in swapped order")
    holdout: bool = Field(default=False, description="held out of the headline")


class JudgmentRow(_Model):
    """``sessions/<session_id>/judgments.parquet``: people's choices that ship with the data
    (simulated people in the demo, annotators in an import). Choices made in the app go to the
    state directory instead."""

    pair_id: str = Field(description="the pair")
    reviewer: str = Field(description="who chose")
    choice: Literal["left", "right", "same"] = Field(description="choice in as-shown terms")
    seconds: float | None = Field(default=None, description="time taken")


class KeyRow(_Model):
    """``<keys>/<session_id>/key.parquet``: which arm is on which side. Never in the data directory."""

    pair_id: str = Field(description="the pair")
    left_arm: str = Field(description="arm shown on the left")
    right_arm: str = Field(description="arm shown on the right")


class LabelRow(_Model):
    """``labels/<labelset_id>/labels.parquet``: one row per item, round, criterion and annotator."""

    item_id: str = Field(description="the item")
    gen_round: int = Field(default=1, description="generation round of the output labelled")
    criterion: str = Field(description="criterion name")
    annotator: str = Field(description="annotator id (or `mean` for a published mean of several people)")
    value: str | None = Field(
        default=None, description="the label as given (pass/fail, a score, correct/partial/wrong)"
    )
    passed: bool | None = Field(default=None, description="derived pass/fail")
    score: float | None = Field(default=None, description="numeric value, when the label is a score")


# --------------------------------------------------------------------------- arrow schemas


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """Map a row field's annotation to (arrow type, nullable)."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        annotation = args[0]
        origin = typing.get_origin(annotation)
    if origin is list:
        return pa.list_(pa.string()), nullable
    if origin is Literal or annotation is str:
        return pa.string(), nullable
    if annotation is bool:
        return pa.bool_(), nullable
    if annotation is int:
        return pa.int64(), nullable
    if annotation is float:
        return pa.float64(), nullable
    if annotation is datetime:
        return pa.timestamp("us", tz="UTC"), nullable
    raise TypeError(f"no arrow type for {annotation!r}")  # pragma: no cover - a bug in this file


def arrow_schema(row: type[_Model]) -> pa.Schema:
    """The pyarrow schema of a ``*Row`` model (column names use the field aliases)."""
    fields = []
    for name, info in row.model_fields.items():
        typ, nullable = _arrow_type(info.annotation)
        fields.append(pa.field(info.alias or name, typ, nullable=nullable))
    return pa.schema(fields)


# Tables by file name: (row model, key columns that must be unique).
TABLES: dict[str, tuple[type[_Model], tuple[str, ...]]] = {
    "items": (ItemRow, ("item_id",)),
    "outputs": (OutputRow, ("item_id", "round")),
    "verdicts": (VerdictRow, ("item_id", "gen_round", "criterion", "judge_round")),
    "calls": (CallRow, ("call_id",)),
    "pair_verdicts": (PairVerdictRow, ("pair_id", "order", "call_id")),
    "pairs": (PairRow, ("pair_id",)),
    "judgments": (JudgmentRow, ("pair_id", "reviewer")),
    "key": (KeyRow, ("pair_id",)),
    "labels": (LabelRow, ("item_id", "gen_round", "criterion", "annotator")),
}


def _fields_markdown(model: type[_Model]) -> list[str]:
    """The table of a manifest model's fields for docs/FORMAT.md."""
    rows = ["| field | type | description |", "|---|---|---|"]
    for name, info in model.model_fields.items():
        ann = str(info.annotation).replace("typing.", "").replace("evalcore.contract.schema.", "")
        ann = ann.replace("|", "or")
        rows.append(f"| `{info.alias or name}` | `{ann}` | {info.description or ''} |")
    return rows


def _table_markdown(fname: str, model: type[_Model], keys: tuple[str, ...]) -> list[str]:
    """The section of docs/FORMAT.md on one Parquet table: its key and columns."""
    out = [
        f"### {fname}.parquet ({model.__name__})",
        "",
        (model.__doc__ or "").strip(),
        "",
        f"Unique key: ({', '.join(keys)}).",
        "",
        "| column | arrow type | nullable | description |",
        "|---|---|---|---|",
    ]
    for (name, info), fld in zip(model.model_fields.items(), arrow_schema(model)):
        out.append(f"| `{fld.name}` | `{fld.type}` | {'yes' if fld.nullable else 'no'} | {info.description or ''} |")
    return [*out, ""]


def _derived_markdown() -> list[str]:
    """The sections of docs/FORMAT.md on derived values and derived tables."""
    return [
        "## Derived values",
        "",
        "* `passed` is derived from the judge's `raw_verdict` by the run's post-processing, whose",
        "  version is in the manifest; the raw verdict and reason are never overwritten.",
        "* ternary: `correct` passes, `partial` and `wrong` fail; the headline counts partial as half:",
        "  (correct + 0.5 partial) / N. The all-pass rate counts partial as a failure.",
        "* ordinal and continuous: `passed = score >= threshold`.",
        "* an errored verdict has `passed` null and `error` set; aggregates exclude and count it.",
        "",
        "## Derived tables (version %d)" % DERIVED_VERSION,
        "",
        "Sufficient statistics of a run or a generation, so that a figure reads kilobytes instead of",
        "every verdict row (`evalcore.storage.derived` is the mechanism, `evalcore.storage.aggregates`",
        "the contents). They are written with the run or generation (`derived/` beside its files), by",
        "`evalcore index`, or, when the set beside is missing or stale, by the first reader into",
        "`<state>/derived/` (the data directory is only ever read). A set is read only while it is",
        "current: its `derived_version` is this one, every source file hashes to the sha256 that",
        "`sources` records, every file of the set to what `files` records, and the memo to",
        "`memo_sha256`; otherwise every figure reads the full data, with the same numbers (to 12",
        "significant digits: DuckDB's parallel sums differ past that). A file's hash is reused while",
        "its size, mtime and inode are unchanged. `EVALCORE_DERIVED=0` turns every read off.",
        "",
        "`index.json`: `derived_version`, `kind` (run or generation), `id`, `sources` (name -> sha256:",
        "`manifest.json` and the tables of the entity; for a run also `generation/manifest.json`,",
        "`generation/outputs.parquet`, whose item ids give the integer item keys, and",
        "`suite/items.parquet`, whose holdout flags and classes each answer carries), `files` (name ->",
        "sha256), `memo` (small aggregates by name) and `memo_sha256` (of the memo's canonical JSON).",
        "",
        "`answers.parquet` (a run's): one row per item, generation round and judge round with at least",
        "one verdict row, sorted by (item, gen_round, judge_round); judge round 0 is the majority over",
        "the judge rounds (more passes than fails passes; a tie fails; errored when no round judged),",
        "present when the run has more than one. Bit k of a mask is the k-th criterion of the rubric",
        "(memo `answers.criteria`); at most 62 criteria. Not written (memo `answers.not_derived` says",
        "why) when a verdict row appears twice, names a criterion outside the rubric or an item the",
        "generation did not answer.",
        "",
        "| column | type | description |",
        "|---|---|---|",
        "| `item_id` | `string` | the item |",
        "| `item` | `int32` | the item's rank among the generation's item ids (from 0): a key shared by every run on it |",
        "| `gen_round` | `int32` | generation round |",
        "| `judge_round` | `int32` | judge round, 0 for the majority |",
        "| `present` | `int64` | bit k set: a verdict row on criterion k exists |",
        "| `passed` | `int64` | bit k set: criterion k passed |",
        "| `failed` | `int64` | bit k set: criterion k failed (present and neither: errored) |",
        "| `holdout` | `bool` | the item is a holdout item of the suite |",
        "| `class` | `string` | the item's class, `(none)` when it has none |",
        "",
        "`patterns.parquet` (a run's, beside its answers table): the answers table counted by pattern,",
        "one row per (`judge_round`, `gen_round`, `holdout`, `class`, `present`, `passed`, `failed`)",
        "with the number of answers `n` (int64); a few thousand rows at most for six criteria, whatever",
        "the run's size. Attribution and the 2x2 read it, their holdout and class conditions applied.",
        "",
        "A run's memo: `answers` (criteria, majority_round, positions, and with several judge rounds",
        "`repeat_hist`: per criterion bit, how many answers have each code of rounds judged, passes",
        "and round 1's verdict; `round_present`: per judge round the criteria it has verdict rows on;",
        "`unjudged`: how many answers have each mask of criteria no round judged), `verdict_rounds` (per judge round: verdict",
        "rows, judged, pass rate, items), `call_scan` (call totals and counts), `per_criterion` (call",
        "shares by criterion), `list_moments` and `call_moments` (the cost projection's sums), `wall`",
        "(measured wall time), `pair_verdicts` (rows), `calls_outside` (calls naming no item of the generation, or "
        "none). A generation's memo: `output_totals`.",
        "",
    ]


def format_markdown() -> str:
    """docs/FORMAT.md, generated from the models above."""
    out = [
        "# The evalcore data format, version %d" % SCHEMA_VERSION,
        "",
        "Generated by `evalcore schema --markdown` from `evalcore/contract/schema.py`; a test keeps this file",
        "identical to the generator's output. Every JSON manifest has a `schema_version` field; every",
        "Parquet table carries `evalcore.schema_version` and `evalcore.table` in its key-value metadata.",
        "A reader refuses a file whose version is newer than the one it knows, with a message naming",
        "the file.",
        "",
        "```",
        "<data>/",
        "  suites/<suite_id>/manifest.json, items.parquet",
        "  generations/<gen_id>/manifest.json, outputs.parquet",
        "  runs/<run_id>/manifest.json, verdicts.parquet, calls.parquet[, pair_verdicts.parquet]",
        "    derived/index.json, answers.parquet  (derived tables; generations/<gen_id>/derived/ too)",
        "  sessions/<session_id>/session.json, pairs.parquet[, judgments.parquet]",
        "  labels/<labelset_id>/manifest.json, labels.parquet",
        "<keys>/  (a sibling of <data> by default; never inside it, never given to the app)",
        "  <session_id>/key.json, key.parquet",
        "<state>/  (writable; labels.sqlite and everything people and commands write later)",
        "  suites/<suite_id>/v<N>/manifest.json, items.parquet  (repaired suite versions 2, 3, ...)",
        "  derived/<runs|generations>/<id>/  (derived tables rebuilt by a reader), derived/stamps.json",
        "```",
        "",
        "Ids (suite, generation, run, session, label set, criterion) are 1-128 characters of letters,",
        "digits, `.`, `_` and `-`, starting with a letter or digit and never containing `..`.",
        "",
        "## Manifests",
        "",
    ]

    model: type[_Model]
    for model in (
        SuiteManifest,
        GenerationManifest,
        RunManifest,
        SessionManifest,
        LabelSetManifest,
        KeyManifest,
        Totals,
        OutOfScale,
        SessionSettings,
        Rubric,
        Criterion,
        CheckSpec,
        SuiteChange,
        SuiteQuotas,
        QuotaBound,
    ):
        out += [f"### {model.__name__}", "", (model.__doc__ or "").strip(), ""] + _fields_markdown(model) + [""]
    out += ["## Tables (Parquet)", ""]
    for fname, (model, keys) in TABLES.items():
        out += _table_markdown(fname, model, keys)
    return "\n".join(out + _derived_markdown())
