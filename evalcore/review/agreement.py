"""The agreement page's figures beyond the report card: people's and model graders' agreement in
closed pairwise sessions (``session_agreement``), ``agreement``, everything ``evalcore
agreement`` prints: the report card of every judged generation and every session, and
``disagreements``, the cases people leave without gold, as the Labels and Agreement pages count them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from evalcore.analysis.answers import has_classes
from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.review.detect import runs_on
from evalcore.review.raters import People, RaterStats, gold_of, people, rater_stats
from evalcore.review.reportcard import (
    PAIR_CHOICES,
    UNPARSEABLE,
    Confusion,
    ReportCard,
    _criterion_names,
    _slice,
    report_card,
)
from evalcore.stats import agreement as A
from evalcore.stats.majority import majority_accuracy
from evalcore.storage.gold import gold
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store

#: a pairwise choice's code: left, same, right
_CODE = {c: k for k, c in enumerate(PAIR_CHOICES)}
#: a session's model grader: its run, manifest and (pair, order) -> choice
_Grader = tuple[str, S.RunManifest, dict[tuple[str, str], Any]]


@dataclass
class Majority(Result):
    """People's strict-majority choice per pair, counted; pairs without a majority or a choice."""

    left: int
    same: int
    right: int
    no_majority: int
    unjudged: int


@dataclass
class GraderVsPeople(Result):
    """A model grader in one order against people's majority (unparseable: a category of its own, and
    a miss in ``accuracy``: :func:`evalcore.stats.majority.majority_accuracy`, as ``pairs report``)."""

    run_id: str
    judge_model: str
    order: str
    n: int
    unparseable: int
    accuracy: float | None
    kappa: float | None
    kappa_ci: list[float | None]
    kappa_reason: str | None
    confusion: Confusion


@dataclass
class GraderPair(Result):
    """Two graders against each other on the pairs as shown (a pair either could not parse dropped)."""

    a: str
    b: str
    order: str
    n: int
    dropped: int
    dropped_unparseable: int
    agreement: float | None
    kappa: float | None
    reason: str | None


@dataclass
class SessionAgreement(Result):
    """:func:`session_agreement`."""

    session_id: str
    status: str
    pairs: int
    judgments: int
    reviewers: RaterStats
    categories: list[str]
    majority: Majority
    graders: list[GraderVsPeople]
    grader_pairs: list[GraderPair]
    seed: int
    n_boot: int
    level: float


@dataclass
class Agreement(Result):
    """:func:`agreement`: what ``evalcore agreement --json`` prints."""

    generations: list[ReportCard]
    sessions: list[SessionAgreement]


def session_agreement(
    store: Store, session_id: str, *, seed: int = 0, n_boot: int = 1000, level: float = 0.95
) -> SessionAgreement:
    """Agreement in a closed pairwise session: people against each other (Cohen's kappa for each pair
    of fixed people, Fleiss' kappa, Krippendorff's alpha), the majority choice of the people per pair
    (strict majority; counts of left / same / right), each model grader of the session against that
    majority (three classes, ties included; an unparseable or missing verdict counts as a miss: it is
    its own category), and the graders against each other (pairs where either is unparseable
    dropped). Choices are in as-shown terms; the key is never read."""
    entry = store.session(session_id)
    m = entry.manifest
    if m.status != "closed":
        raise InputError(f"session {session_id} is open: its agreement is shown once it is closed", field="session")
    jpath = entry.path / "judgments.parquet"
    judgments = (
        store.records("SELECT pair_id, reviewer, choice FROM read_parquet(?) ORDER BY pair_id, reviewer", [str(jpath)])
        if jpath.exists()
        else []
    )
    pairs = [
        r[0]
        for r in store.sql(
            "SELECT pair_id FROM read_parquet(?) ORDER BY pair_id", [store.path_of("session", session_id, "pairs")]
        )
    ]
    pi = {p: k for k, p in enumerate(pairs)}
    rows = [
        {
            "rater": j["reviewer"],
            "item_id": j["pair_id"],
            "gen_round": 1,
            "criterion": "preference",
            "value": j["choice"],
        }
        for j in judgments
    ]
    people = rater_stats(People.from_rows(rows), list(PAIR_CHOICES), None, "nominal")
    by_pair: dict[str, list[int]] = defaultdict(list)
    for j in judgments:
        by_pair[j["pair_id"]].append(_CODE[j["choice"]])
    majority = {p: A.strict_majority(v) for p, v in by_pair.items()}
    counts = Counter(PAIR_CHOICES[v] for v in majority.values() if v is not None)
    gold_pairs = sorted((p for p, v in majority.items() if v is not None), key=cast(Callable[[str], int], pi.get))
    graders = _session_graders(store, session_id)
    return SessionAgreement(
        session_id,
        m.status,
        len(pairs),
        len(judgments),
        people,
        list(PAIR_CHOICES),
        Majority(
            counts["left"],
            counts["same"],
            counts["right"],
            no_majority=sum(1 for v in majority.values() if v is None),
            unjudged=len(pairs) - len(by_pair),
        ),
        _graders_vs_majority(graders, gold_pairs, majority, seed=seed, n_boot=n_boot, level=level),
        _grader_pairs(graders, pairs),
        seed,
        n_boot,
        level,
    )


def _session_graders(store: Store, session_id: str) -> list[_Grader]:
    """The session's model graders: the runs with its ``session_id`` knob and pair verdicts."""
    graders = []
    for rid in store.ids("run"):
        run = store.run(rid)
        if (run.manifest.knobs or {}).get("session_id") == session_id and (run.path / "pair_verdicts.parquet").exists():
            pv = store.records(
                'SELECT pair_id, "order", choice FROM read_parquet(?)', [store.path_of("run", rid, "pair_verdicts")]
            )
            graders.append((rid, run.manifest, {(r["pair_id"], r["order"]): r["choice"] for r in pv}))
    return graders


def _graders_vs_majority(
    graders: list[_Grader], gold_pairs: list[str], majority: dict[str, int | None], seed: int, n_boot: int, level: float
) -> list[GraderVsPeople]:
    """Each grader in each order against people's majority on ``gold_pairs``, unparseable a fourth class."""
    cats4 = [*PAIR_CHOICES, UNPARSEABLE]
    code4 = {c: k for k, c in enumerate(cats4)}
    out = []
    for rid, rm, ch in graders:
        for order in ("as_shown", "swapped"):
            if not any(k[1] == order for k in ch):
                continue
            vals = [ch.get((p, order)) for p in gold_pairs]
            g = np.array([majority[p] for p in gold_pairs], dtype=np.int64)
            j = np.array([code4[v] if v in code4 else code4[UNPARSEABLE] for v in vals], dtype=np.int64)
            iv = A.cohen_kappa_interval(g, j, seed=seed, k=4, n_boot=n_boot, level=level)
            acc = majority_accuracy(
                {p: PAIR_CHOICES[cast(int, majority[p])] for p in gold_pairs},
                {p: v if v in _CODE else None for p, v in zip(gold_pairs, vals)},
            )
            out.append(
                GraderVsPeople(
                    rid,
                    rm.judge_model,
                    order,
                    acc.n,
                    acc.unparseable,
                    acc.share,
                    iv.value,
                    [iv.lo, iv.hi],
                    iv.reason,
                    Confusion("people (majority)", "grader", cats4, A.confusion(g, j, 4).tolist()),
                )
            )
    return out


def _grader_pairs(graders: list[_Grader], pairs: list[str]) -> list[GraderPair]:
    """Every two graders against each other on the pairs as shown (a pair either could not parse dropped)."""
    out = []
    for a in range(len(graders)):
        for b in range(a + 1, len(graders)):
            (ra, _, ca), (rb, _, cb) = graders[a], graders[b]
            x = [
                (_CODE[ca[(p, "as_shown")]], _CODE[cb[(p, "as_shown")]])
                for p in pairs
                if ca.get((p, "as_shown")) in _CODE and cb.get((p, "as_shown")) in _CODE
            ]
            xa = np.array([t[0] for t in x], dtype=np.int64)
            xb = np.array([t[1] for t in x], dtype=np.int64)
            s = A.cohen_kappa(xa, xb, 3)
            both = sum(1 for p in pairs if (p, "as_shown") in ca and (p, "as_shown") in cb)
            agreement = A.accuracy(xa, xb).value
            out.append(
                GraderPair(ra, rb, "as_shown", len(x), len(pairs) - len(x), both - len(x), agreement, s.value, s.reason)
            )
    return out


def agreement(
    store: Store,
    *,
    gen_ids: Sequence[str] | None = None,
    session_ids: Sequence[str] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
    judge_round: int = 1,
    queue_id: str | None = None,
    classes: tuple[str, ...] = (),
    items: tuple[str, ...] = (),
    alpha_level: A.AlphaLevel | None = None,
    exclude_classes: tuple[str, ...] = (),
) -> Agreement:
    """The report card of every generation with judged runs (or ``gen_ids``) and the agreement of
    every closed pairwise session with people's choices (or ``session_ids``). ``classes`` / ``items``
    slice the report cards (:func:`evalcore.review.reportcard.report_card`); a slice leaves the
    pairwise sessions out, as their pairs are not items of one suite. ``alpha_level`` reports
    people's Krippendorff's alpha at that level instead of the criterion's (:func:`with_alpha_level`)."""
    named = gen_ids is not None
    if gen_ids is None and session_ids is None:
        gen_ids = [g for g in store.ids("generation") if runs_on(store, g)]
        session_ids = [
            s
            for s in store.ids("session")
            if store.session(s).manifest.status == "closed" and (store.session(s).path / "judgments.parquet").exists()
        ]
    gen_ids, session_ids = list(gen_ids or []), list(session_ids or [])
    if classes or items or exclude_classes:
        session_ids = []
        if not named:  # every generation: those whose suite has the slice's classes (kept or left out)
            named_classes = tuple(classes) + tuple(exclude_classes)
            gen_ids = [
                g for g in gen_ids if has_classes(store, store.generation(g).manifest.suite_id, named_classes)
            ] or gen_ids[:1]
    if queue_id is not None and len(gen_ids) != 1:
        raise InputError("--queue needs exactly one --gen", field="--queue")
    for g in gen_ids:
        store.generation(g)
    for s in session_ids:
        store.session(s)
    cards = [
        report_card(
            store,
            g,
            seed=seed,
            n_boot=n_boot,
            level=level,
            judge_round=judge_round,
            queue_id=queue_id,
            classes=tuple(classes),
            items=tuple(items),
            exclude_classes=tuple(exclude_classes),
        )
        for g in gen_ids
    ]
    if alpha_level is not None:
        cards = [
            with_alpha_level(store, card, alpha_level, tuple(classes), tuple(items), tuple(exclude_classes))
            for card in cards
        ]
    return Agreement(
        cards,
        [session_agreement(store, s, seed=seed, n_boot=n_boot, level=level) for s in session_ids],
    )


def with_alpha_level(
    store: Store,
    card: ReportCard,
    level: A.AlphaLevel,
    classes: tuple[str, ...],
    items: tuple[str, ...],
    exclude_classes: tuple[str, ...] = (),
) -> ReportCard:
    """``card`` with people's agreement per criterion (``reviewers``) counted again with
    Krippendorff's alpha at ``level`` (on the same people's labels in the same slice)."""
    gen = store.generation(card.gen_id)
    cut, params, _ = _slice(store, gen.manifest.suite_id, classes, items, exclude_classes)
    ms = [store.run(r).manifest for r in runs_on(store, card.gen_id)]
    labels = LabelStore(store)
    crits = {
        c.criterion: next((m.rubric.get(c.criterion) for m in ms if m.rubric.get(c.criterion)), None)
        or labels.criterion_for(card.gen_id, c.criterion)
        for c in card.criteria
    }
    folk = people(store, card.gen_id, crits, (cut, params))
    for c in card.criteria:
        c.reviewers = rater_stats(folk.of(c.criterion), c.categories, c.weights, level)
    return card


@dataclass
class Disagreements(Result):
    """Cases left without gold because people disagree: ``reviewers``, the label store's cases whose
    reviewers disagree (status ``reviewers_disagree``: they wait for an adjudicator), and
    ``annotators``, cases of the shipped labels whose annotators reach no strict majority (and that
    nobody decided here). The report card's ``gold.split`` is their sum."""

    reviewers: int
    annotators: int


def disagreements(store: Store, gen_id: str | None = None, classes: tuple[str, ...] = ()) -> Disagreements:
    """The cases where people disagree on one generation (or all), counted as the report card counts
    them (:func:`evalcore.review.raters.gold_of` over the same labels, criteria and slice), split by
    who disagrees. The one count behind "reviewers disagree" on the Labels page and "where people
    disagree" on the Agreement page (they said 18 and 19 on one label store: Labels left out the
    shipped labels' splits)."""
    labels = LabelStore(store)
    shipped_on = {store.labelset(lid).manifest.gen_id for lid in store.ids("labelset")}
    reviewers = annotators = 0
    for g in [gen_id] if gen_id is not None else store.ids("generation"):
        cut, params, in_slice = _slice(store, store.generation(g).manifest.suite_id, classes, ())
        rows = [r for r in gold(labels, g) if in_slice(r["item_id"])]
        here = sum(r["status"] == "reviewers_disagree" for r in rows)
        reviewers += here
        if g in shipped_on:
            ms = {rid: store.run(rid).manifest for rid in runs_on(store, g)}
            crits = {
                n: next((m.rubric.get(n) for m in ms.values() if m.rubric.get(n)), None) or labels.criterion_for(g, n)
                for n in _criterion_names(store, g, ms, labels)
            }
            annotators += gold_of(people(store, g, crits, (cut, params)), rows, crits)[1].split - here
    return Disagreements(reviewers, annotators)
