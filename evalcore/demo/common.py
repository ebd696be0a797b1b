"""Constants and small helpers of the SIMULATED demo world, shared by its parts
(:mod:`evalcore.demo.support`, :mod:`evalcore.demo.scales`, :mod:`evalcore.demo.scale`,
:mod:`evalcore.demo.accounts` and :mod:`evalcore.demo.world`, which writes the whole).

* the settings of the model of truth: :data:`DEFAULT_SEED`, the fixed :data:`CREATED_AT` and
  simulated prices; for the support suite its size, holdout, unanswerable and note shares, its six
  :data:`CRITERIA` and their true failure rates (``grounded`` and ``no_fabrication`` drawn
  jointly), the two judges (:data:`JUDGE_A`, :data:`JUDGE_B`), judge rounds and borderline
  weights, the single call's field order and the carryover by emission position
  (:data:`CARRYOVER`, :data:`INDEPENDENT_SCALE`, :data:`GROUPS`, :data:`GROUP_CARRYOVER`), the
  buggy post-processing rule, the polluted and partial runs and the human labels; for the accounts
  suite its size, generation rounds, :data:`ARMS` and their styles, bail mix, mirrored, holdout and
  practice pairs, the simulated reviewers and the people's and the grader's position preferences.
* ``_rng``: an independent, deterministic stream per world piece,
  ``default_rng([seed, crc32(tag), ...])``, so tuning one piece never reshuffles another.
* ``_Cols`` collects rows column-wise into an arrow table in the contract's schema; ``_totals``
  computes a manifest's totals from its calls table; ``_call_row``, ``_judge_tokens`` and
  ``_template`` make a simulated judge call's row, token counts and template.
* ``_split_call`` makes one call of a split run and its verdict, ``_output_row`` a writer's
  output row.
* ``_write_suite``, ``_write_generation``, ``_write_run`` and ``_write_split_run`` write a
  simulated suite, generation or judge run with the manifest fields every part shares.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.demo.text import INDEPENDENT_LINE, JUDGE_TEMPLATE
from evalcore.stats.descriptive import percentile
from evalcore.storage.store import Store

DEFAULT_SEED = 89  # picked by simulation: every figure tests/test_demo.py checks holds with margin
# --------------------------------------------------------------------------- constants

CREATED_AT = datetime(2026, 1, 1, tzinfo=UTC)
SOURCE: Final = "simulated"
PRICE_MAP_VERSION = "simulated-prices-2026-01"

# support suite
SUPPORT = "support"
N_SUPPORT_ITEMS = 600
HOLDOUT_SHARE = 0.10
UNANSWERABLE_SHARE = 0.06
NOTE_SHARE = 0.05  # answers that end with an honest "couldn't find ..." note (the ternary bug's trigger)
CRITERIA = ("answers_question", "grounded", "cites_source", "no_fabrication", "refuses_when_unanswerable", "on_tone")
TRUTH_FAIL = {  # marginal true fail rates (grounded / no_fabrication are set jointly below)
    "answers_question": 0.15,
    "cites_source": 0.10,
    "refuses_when_unanswerable": 0.05,
    "on_tone": 0.06,
}
P_GROUNDED_FAIL = 0.19
P_NOFAB_FAIL_IF_UNGROUNDED = 0.62
P_NOFAB_FAIL_IF_GROUNDED = 0.074

# judges
JUDGE_A: dict[str, Any] = {
    "model": "simulated/judge-alpha-2025-06-01",
    "reported": "judge-alpha-2025-06-01",
    "family": "alpha",
    "price_in": 3.0,
    "price_out": 15.0,  # USD per million tokens
    "miss_fail": 0.06,
    "false_fail": 0.012,
    "borderline": 0.062,
}
JUDGE_B: dict[str, Any] = {
    "model": "simulated/judge-beta-2025-04-15",
    "reported": "judge-beta-2025-04-15",
    "family": "beta",
    "price_in": 0.5,
    "price_out": 1.5,
    "miss_fail": 0.22,
    "false_fail": 0.008,
    "borderline": 0.06,
}
JUDGE_ROUNDS = 3
BORDERLINE_WEIGHT = {  # judgement-heavy criteria have more borderline cells than objective ones
    "answers_question": 0.4,
    "grounded": 2.0,
    "cites_source": 0.2,
    "no_fabrication": 2.0,
    "refuses_when_unanswerable": 0.4,
    "on_tone": 1.0,
}

SINGLE_FIELD_ORDER = [
    "answers_question",
    "cites_source",
    "on_tone",
    "refuses_when_unanswerable",
    "grounded",
    "no_fabrication",
]
CARRYOVER = (0.0, 0.66, 0.78, 0.86, 0.94, 0.97)  # c_k by emission position k
# under the single call, the first field written takes the blame for a failure the judge read on another
# criterion this often (seed 000's "C1 fails 132 times single, 11 split"): after the carryover
FIRST_FIELD_BLAME = 0.45
INDEPENDENT_SCALE = 0.9
GROUPS = [
    ["answers_question", "on_tone"],
    ["grounded", "no_fabrication", "cites_source"],
    ["refuses_when_unanswerable"],
]
GROUP_CARRYOVER = (0.0, 0.30, 0.40)
RETRY_POLICY = {"max_retries": 2, "backoff": "exponential", "timeout_s": 60}  # of every simulated judge run

TERNARY_NOISE = 0.04  # the ternary judge moves a label one step this often
POSTPROCESS_BUGGY = "pp-2.1-buggy"
BUG_PATTERN = re.compile(r"couldn't find", re.IGNORECASE)
N_POLLUTED_ITEMS = 40
POLLUTED_FAIL_SHARE = 0.035
N_PARTIAL_ITEMS = 150
N_HUMAN_ITEMS = 60
HUMAN_SLIP = 0.01
HUMAN_OVERLAP = 12  # items the second annotator also labels

# accounts suite
ACCOUNTS = "accounts"
N_ACCOUNTS_ITEMS = 120
GEN_ROUNDS = 3
# arm name -> gen id: neutral ids, so that no listing, link or file name tells a grader which arm is which
ARMS = {"concise": "accounts-g1", "detailed": "accounts-g2"}
# share of answers with a heading, bullet probability, steps, range of extra sentences
ARM_STYLE: dict[str, dict[str, Any]] = {
    # Lengths overlap (SD ~75 words in each arm, means ~94 apart) so that, before normalisation,
    # the heading (a title, and sub-headings in the long arm) is the strongest tell and length the
    # second; normalisation strips the first and leaves the second (docs/PAIRWISE.md).
    "concise": {"heading": 0.54, "bullets": 0.42, "steps": (2, 3, 4), "extras": (0, 21), "sections": 0},
    "detailed": {"heading": 0.91, "bullets": 0.62, "steps": (4, 5, 6), "extras": (7, 27), "sections": 2},
}
BAIL_MIX = ((0.80, 0.02), (0.15, 0.35), (0.05, 0.85))  # (share of items, bail probability per round)
MIRROR_SHARE = 0.10
N_HOLDOUT_PAIRS = 6
N_PRACTICE_PAIRS = 15
REVIEWERS = {"sim-reviewer-1": 0.80, "sim-reviewer-2": 0.55, "sim-reviewer-3": 0.35}  # share of pairs seen
LEFT_BIAS_PEOPLE = 0.05
FIRST_BIAS_GRADER = 0.15  # the grader's switch to the first-read answer
GRADER_SAME = 0.03
P_SAME = 0.08


def _rng(seed: int, *tags: str) -> np.random.Generator:
    """An independent, deterministic stream per world piece."""
    return np.random.default_rng([seed, *(zlib.crc32(t.encode()) for t in tags)])


def _at(hours: float) -> datetime:
    return CREATED_AT + timedelta(hours=hours)


# --------------------------------------------------------------------------- small helpers


class _Cols:
    """Collects rows column-wise and turns them into an arrow table in the contract's schema."""

    def __init__(self, table: str):
        self.table = table
        self.schema = S.arrow_schema(S.TABLES[table][0])
        self.cols: dict[str, list] = {f.name: [] for f in self.schema}
        self.n = 0

    def add(self, **row: Any) -> None:
        for name, values in self.cols.items():
            values.append(row.pop(name, None))
        if row:
            raise KeyError(f"unknown columns for {self.table}: {sorted(row)}")
        self.n += 1

    def arrow(self) -> pa.Table:
        model = S.TABLES[self.table][0]
        defaults = {
            (i.alias or k): i.default
            for k, i in model.model_fields.items()
            if not i.is_required() and i.default is not None
        }
        arrays = []
        for f in self.schema:
            vals = self.cols[f.name]
            if f.name in defaults:
                vals = [defaults[f.name] if v is None else v for v in vals]
            arrays.append(pa.array(vals, f.type))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _fill(template: str, slots: dict[str, Any]) -> str:
    return template.format(**slots)


def _pick(rng: np.random.Generator, seq: list) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _totals(calls: _Cols) -> S.Totals:
    """Manifest totals computed from the calls table (or a generation's outputs, which have no
    error column: none of their calls failed)."""
    c = calls.cols
    n = calls.n
    if n == 0:
        return S.Totals()
    failed = sum(1 for e in c.get("error", ()) if e)
    lat = np.array([x for x in c["latency_ms"] if x is not None], dtype=float)
    cost = [x for x in c["cost_usd"] if x is not None]
    return S.Totals(
        calls=n,
        failed_calls=failed,
        tokens_in=int(sum(x for x in c["tokens_in"] if x is not None)),
        tokens_out=int(sum(x for x in c["tokens_out"] if x is not None)),
        cost_usd=round(float(sum(cost)), 6) if cost else None,
        latency_ms_mean=round(float(lat.mean()), 1) if lat.size else None,
        latency_ms_p95=round(float(p), 1) if (p := percentile(lat, 95)) is not None else None,
    )


def _words(text: str | None) -> int:
    return len(text.split()) if text else 0


def _call_row(
    rng, judge, run_id, call_no, item, output, gen_round, judge_round, crits, tpl_hash, hours, error: str | None = None
) -> dict:
    tin, tout = _judge_tokens(rng, item, output, len(crits))
    latency = float(400 + 11 * tout + rng.lognormal(5.3, 0.45))
    row = dict(
        call_id=f"{run_id}-c{call_no:06d}",
        item_id=item["item_id"],
        gen_round=gen_round,
        judge_round=judge_round,
        criteria=list(crits),
        model=judge["reported"],
        prompt_hash=H.text_hash(f"{tpl_hash}|{item['item_id']}|{gen_round}|{','.join(crits)}"),
        tokens_in=tin,
        tokens_out=tout,
        cost_usd=round((tin * judge["price_in"] + tout * judge["price_out"]) / 1e6, 8),
        latency_ms=round(latency, 1),
        attempts=1,
        cache_hit=False,
        error=None,
        started_at=_at(hours) + timedelta(milliseconds=int(call_no) * 137),
    )
    if error:
        row.update(
            tokens_in=None, tokens_out=None, cost_usd=None, attempts=3, error=error, latency_ms=round(latency * 6, 1)
        )
    return row


def _split_call(
    rng: np.random.Generator,
    verdicts: _Cols,
    calls: _Cols,
    run_id: str,
    call_no: int,
    item: dict,
    output: str,
    gen_round: int,
    criterion: str,
    tpl_hash: str,
    hours: float,
    **verdict: Any,
) -> None:
    """One call of judge A's split run (one criterion, judge round 1) and its verdict row;
    ``verdict`` holds the verdict's own fields (passed, raw verdict, reason, ...)."""
    row = _call_row(rng, JUDGE_A, run_id, call_no, item, output, gen_round, 1, [criterion], tpl_hash, hours)
    calls.add(**row)
    verdicts.add(
        run_id=run_id,
        item_id=item["item_id"],
        gen_round=gen_round,
        criterion=criterion,
        judge_round=1,
        position=0,
        call_id=row["call_id"],
        **verdict,
    )


def _output_row(
    rng: np.random.Generator,
    item_id: str,
    gen_round: int,
    text: str,
    abstained: bool,
    tin: int,
    tout: int,
    latency: tuple[int, int, float],
    **extra: Any,
) -> dict:
    """A simulated writer's output row, priced at the writer's rates; its latency is
    ``base + per_token * tout`` ms plus a lognormal(5.0, sigma) wait, drawn here
    (``latency`` = (base, per_token, sigma)). ``extra``: other columns (retrieved doc ids)."""
    base, per_token, sigma = latency
    return dict(
        item_id=item_id,
        round=gen_round,
        output=text,
        abstained=abstained,
        **extra,
        tokens_in=tin,
        tokens_out=tout,
        cost_usd=round((tin * 0.15 + tout * 0.6) / 1e6, 8),
        latency_ms=round(float(base + per_token * tout + rng.lognormal(5.0, sigma)), 1),
    )


def _template(mode: str, variant: str) -> str:
    return (
        JUDGE_TEMPLATE.replace("{variant_line}", INDEPENDENT_LINE if variant == "independent" else "")
        + f"\n[harness: {mode}]"
    )


def _judge_tokens(rng: np.random.Generator, item: dict, output: str, n_crit: int) -> tuple[int, int]:
    tin = int(
        180
        + 1.3 * (_words(item["input"]) + _words(item.get("context")) + _words(output))
        + 45 * n_crit
        + rng.integers(0, 25)
    )
    tout = int(n_crit * (28 + rng.integers(0, 14)) + 12)
    return tin, tout


# --------------------------------------------------------------------------- writing suites, generations, runs


def _write_suite(store: Store, suite_id: str, hours: float, items: list[dict], description: str) -> S.SuiteManifest:
    """Write a simulated, uncurated suite of ``items``."""
    m = S.SuiteManifest(
        suite_id=suite_id,
        created_at=_at(hours),
        content_hash=H.suite_hash(items),
        n_items=len(items),
        description=description,
        curated=False,
        simulated=True,
        source=SOURCE,
    )
    store.write_suite(m, items, overwrite=True)
    return m


def _write_generation(
    store: Store,
    gen_id: str,
    suite: S.SuiteManifest,
    hours: float,
    knobs: dict[str, Any],
    rounds: int,
    out: _Cols,
    rows: Iterable[dict],
) -> S.GenerationManifest:
    """Write a simulated, complete generation over ``suite``: the output rows collected in ``out``
    (``rows`` are the same rows, for the outputs hash), totals computed from them."""
    m = S.GenerationManifest(
        gen_id=gen_id,
        suite_id=suite.suite_id,
        suite_hash=suite.content_hash,
        created_at=_at(hours),
        knobs=knobs,
        rounds=rounds,
        status="complete",
        source=SOURCE,
        outputs_hash=H.outputs_hash(rows),
        totals=_totals(out),
        simulated=True,
    )
    store.write_generation(m, out.arrow(), overwrite=True)
    return m


def _write_run(
    store: Store,
    verdicts: _Cols,
    calls: _Cols,
    *,
    run_id: str,
    gen_id: str,
    hours: float,
    rubric: S.Rubric,
    judge: dict,
    template: str,
    template_hash: str,
    description: str,
    pair_verdicts: _Cols | None = None,
    **fields: Any,
) -> dict:
    """Write a simulated judge run of ``judge`` (temperature 0, totals from ``calls``); ``fields``
    are the manifest's other fields (mode, field order, rounds, status, ...). Returns the counts."""
    m = S.RunManifest(
        run_id=run_id,
        gen_id=gen_id,
        created_at=_at(hours),
        rubric=rubric,
        rubric_hash=rubric.hash(),
        judge_model=judge["model"],
        judge_family=judge["family"],
        temperature=0.0,
        prompt_template=template,
        prompt_hash=template_hash,
        source=SOURCE,
        totals=_totals(calls),
        price_map_version=PRICE_MAP_VERSION,
        simulated=True,
        description=description,
        **fields,
    )
    pv = pair_verdicts.arrow() if pair_verdicts is not None else None
    store.write_run(m, verdicts.arrow(), calls.arrow(), pv, overwrite=True)
    return {"verdicts": verdicts.n, "calls": calls.n}


def _write_split_run(
    store: Store,
    verdicts: _Cols,
    calls: _Cols,
    *,
    field_order: list[str],
    postprocess_version: str = "pp-1.0",
    **fields: Any,
) -> dict:
    """Write a complete split run of judge A with one judge round (``fields`` as for
    :func:`_write_run`, less the judge). Returns the counts."""
    return _write_run(
        store,
        verdicts,
        calls,
        judge=JUDGE_A,
        mode="split",
        field_order=field_order,
        postprocess_version=postprocess_version,
        retry_policy=RETRY_POLICY,
        structured_output="json_schema",
        judge_rounds=1,
        status="complete",
        **fields,
    )
