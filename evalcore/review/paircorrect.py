"""Corrected rates of a pairwise grader (issue 40): ``evalcore correct RUN`` on a model grader's run
of a pairwise session (``import pandalm``, ``import pairs``, ``judge-pairs``).

The cases are the session's pairs the grader gave a choice on, in each order it was shown them
(``as_shown``, ``swapped``: two estimates, as ``evalcore agreement --session`` reports each order).
The grader's choice is the prediction f; people's strict majority (:func:`strict_majority` of
their current choices) is the gold y, on the pairs a majority decides. For each outcome,
:func:`evalcore.review.correct.ppi_rate` (the report card's PPI++, finite population) estimates the
share of those pairs on which people prefer it: left, same, right as shown, and, once the session
is unblinded in this state directory with two arms, each arm and a tie.

The labelled pairs are taken as a simple random sample of the pairs the grader judged (inclusion
probability n / N), as shipped labels are on the report card: a session's people label pairs in an
order drawn at random per reviewer, but no inclusion probability is recorded. When people decided
every pair (PandaLM), the corrected rate is their share itself, with no width.

Pure reading: people's choices are handed in (``pairwise`` reads them, shipped and from the app);
nothing is written."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.review.correct import Ppi, ppi_rate, shipped_sample, unavailable
from evalcore.review.reportcard import PAIR_CHOICES
from evalcore.stats.agreement import strict_majority
from evalcore.storage.seal import unblinded_path
from evalcore.storage.store import Store

#: how the labelled pairs are taken, said beside every rate
SAMPLE = (
    "people's majority on the pairs they decided (taken as a simple random sample of the pairs the grader "
    "judged: their inclusion probabilities are not recorded)"
)


@dataclass
class OutcomeRate(Result):
    """One outcome's share of pairs: the grader's (``observed``, over the ``verdicts`` pairs it chose
    on) and PPI++ corrected to people's majority."""

    outcome: str
    observed: float | None
    verdicts: int
    ppi: Ppi


@dataclass
class OrderCorrection(Result):
    """The grader in one order: its pairs with a choice, without one, those people's majority
    decides, and the corrected share of each outcome as shown and (unblinded) per arm."""

    order: str
    verdicts: int
    unparseable: int
    gold_pairs: int
    as_shown: list[OutcomeRate]
    by_arm: list[OutcomeRate] | None


@dataclass
class PairCorrection(Result):
    """``evalcore correct RUN`` on a pairwise grader's run."""

    run_id: str
    session_id: str
    level: float
    target_half_width: float
    pairs: int
    majority_pairs: int
    sample: str
    arms: list[str] | None
    arms_reason: str | None
    orders: list[OrderCorrection]


def pair_session(store: Store, run_id: str) -> str | None:
    """The session ``run_id`` grades when it is a pairwise grader's run (pair verdicts and a
    ``session_id`` knob), else None."""
    run = store.run(run_id)
    sid = (run.manifest.knobs or {}).get("session_id")
    return str(sid) if sid and (run.path / "pair_verdicts.parquet").exists() else None


def people_majority(people: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """pair -> people's strict-majority choice, on the pairs a majority decides."""
    code = {c: k for k, c in enumerate(PAIR_CHOICES)}
    out = {}
    for pid, choices in people.items():
        m = strict_majority([code[c] for c in choices])
        if m is not None:
            out[pid] = PAIR_CHOICES[m]
    return out


def _sides(store: Store, session_id: str) -> tuple[list[str] | None, dict[str, str], str | None]:
    """(the two arms, pair -> the left arm) from this state directory's unblinded record of two
    arms, else (None, {}, why not)."""
    path = unblinded_path(store, session_id)
    if not path.is_file():
        return None, {}, f"session {session_id!r} is not unblinded in this state directory: outcomes as shown only"
    rec = json.loads(path.read_text(encoding="utf-8"))
    if len(rec["arms"]) != 2:  # per arm is a ranking then (`pairs report`, issue 43)
        return None, {}, f"session {session_id!r} has {len(rec['arms'])} arms: outcomes as shown only"
    return list(rec["arms"]), {k["pair_id"]: k["left_arm"] for k in rec["key"]}, None


def _rates(
    outcomes: list[str],
    judged: dict[str, str],
    gold: dict[str, str],
    *,
    level: float,
    target: float,
) -> list[OutcomeRate]:
    n = len(judged)
    # cases are keyed as the report card's are, by tuple: (pair id,)
    labelled = shipped_sample(sorted((p,) for p in judged if p in gold), n)
    out = []
    for o in outcomes:
        k = sum(c == o for c in judged.values())
        values = {key: (judged[key[0]] == o, gold[key[0]] == o) for key in labelled}
        if len(values) < 2:
            ppi: Ppi = unavailable("fewer than 2 of the pairs the grader judged have people's majority", target)
        else:
            ppi = ppi_rate(labelled, values, k, n, level=level, target=target, sample=SAMPLE)
        out.append(OutcomeRate(o, k / n if n else None, n, ppi))
    return out


def pair_correction(
    store: Store,
    run_id: str,
    people: Mapping[str, Sequence[str]],
    *,
    level: float = 0.95,
    target: float = 0.05,
) -> PairCorrection:
    """The corrected rates of pairwise grader ``run_id`` against ``people`` (pair -> their current
    choices, as shown)."""
    sid = pair_session(store, run_id)
    if sid is None:
        raise InputError(f"run {run_id!r} is not a pairwise grader's run (no pair verdicts)", field="RUN_ID")
    pairs = {r[0] for r in store.sql("SELECT pair_id FROM read_parquet(?)", [store.path_of("session", sid, "pairs")])}
    verdicts = store.sql(
        'SELECT pair_id, "order", choice FROM read_parquet(?) ORDER BY 1, 2',
        [store.path_of("run", run_id, "pair_verdicts")],
    )
    gold = {p: c for p, c in people_majority(people).items() if p in pairs}
    arms, left_arm, why = _sides(store, sid)

    def arm_terms(choices: dict[str, str]) -> dict[str, str]:
        assert arms is not None
        return {
            p: "same" if c == "same" else (left_arm[p] if c == "left" else next(a for a in arms if a != left_arm[p]))
            for p, c in choices.items()
        }

    orders = []
    for order in ("as_shown", "swapped"):
        rows = [(p, c) for p, o, c in verdicts if o == order and p in pairs]
        if not rows:
            continue
        judged = {p: c for p, c in rows if c is not None}
        orders.append(
            OrderCorrection(
                order,
                len(judged),
                len(rows) - len(judged),
                sum(p in gold for p in judged),
                _rates(list(PAIR_CHOICES), judged, gold, level=level, target=target),
                None
                if arms is None
                else _rates([arms[0], "same", arms[1]], arm_terms(judged), arm_terms(gold), level=level, target=target),
            )
        )
    return PairCorrection(run_id, sid, level, target, len(pairs), len(gold), SAMPLE, arms, why, orders)
