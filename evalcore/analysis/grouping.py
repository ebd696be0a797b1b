"""Which criteria deserve their own call: groupings of a rubric's criteria into calls, ranked by the
induced association they remove against what the extra calls cost (issue 44, the seed article 000).

* :func:`grouping`: from a run whose criteria share a call (single, or grouped) and a split run on
  the same answers, the pairs :func:`~evalcore.analysis.instruments.association` classes
  ``induced`` (people included when the generation has labels: the class needs them), each with
  the phi it loses when its two criteria are asked apart (its single-call phi minus its split phi).
  For each number of calls per answer from one up to the fewest that separate every induced pair,
  the grouping that removes the most of it (every grouping of the criteria in induced pairs is
  tried; the other criteria stay together in the largest call), priced per 1,000 answers by the
  Cost page's projection of the run (:func:`~evalcore.analysis.projection.project` with the
  run's fitted S, c_k, f, o_k and prices), then one call per criterion for reference. The
  recommendation is the cheapest grouping that removes every induced pair; with no induced pair,
  none.

A grouping's cost depends only on its number of calls (every call carries the shared context S
once and each criterion's text once), so for each number of calls the grouping that removes the
most induced phi is the one to show.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from evalcore.analysis.cost import run_cost
from evalcore.analysis.instruments import _people_rows_sql, association, harness_words, judged_together
from evalcore.analysis.projection import Projection, project
from evalcore.analysis.selection import DEFAULT_SELECTION, Selection
from evalcore.contract.results import Result
from evalcore.errors import InputError, NotFoundError
from evalcore.storage.store import Store

#: the criteria in induced pairs whose every grouping is tried (Bell(9) = 21,147 groupings); above
#: it, one grouping per number of calls from a greedy colouring of the induced pairs
EXACT_UP_TO = 9


@dataclass
class PairMove(Result):
    """An induced pair: its phi judged in one call, judged split, and the difference a split removes."""

    a: str
    b: str
    phi_single: float
    phi_split: float
    removed: float


@dataclass
class Unsettled(Result):
    """A pair whose phi falls past the threshold when split but that is not classed induced, and why."""

    a: str
    b: str
    phi_single: float
    phi_split: float
    cls: str
    reason: str


@dataclass
class GroupingRow(Result):
    """One grouping of the criteria into calls, priced per ``answers`` answers."""

    calls_per_answer: int
    groups: list[list[str]]
    phi_removed: float
    separated: list[PairMove]
    kept_together: list[PairMove]
    cost_usd: float | None
    extra_cost_usd: float | None
    tokens_in: float | None
    tokens_out: float | None
    text: str


@dataclass
class Grouping(Result):
    """:func:`grouping`: what ``evalcore grouping RUN --json`` prints and the association page shows."""

    run_id: str
    split_run: str
    gen_id: str
    selection: dict[str, Any]
    people: bool
    people_answers: int
    threshold: float
    answers: int
    induced: list[PairMove]
    unsettled: list[Unsettled]
    rows: list[GroupingRow]
    recommended_calls: int | None
    text: str
    cost_source: str
    warnings: list[str]


def _split_partner(store: Store, run_id: str, split_run: str | None) -> str:
    """The split run to compare with: the one given (checked), else the run the association page
    opens beside RUN (:func:`harness_words`: a complete split run on its generation, same criteria)."""
    if split_run is None:
        partners = harness_words(store, run_id).association_runs[1:]
        if not partners:
            gen = store.run(run_id).manifest.gen_id
            raise NotFoundError(
                f"no complete split run with the criteria of {run_id} on generation {gen}: judge one "
                "(evalcore judge --mode split) or import one with --mode split, then give it with --split",
                field="--split",
            )
        return partners[0]
    m = store.run(split_run).manifest
    if m.mode != "split":
        raise InputError(
            f"{split_run} is a {m.mode} run, not split: give a one-criterion-per-call run", field="--split"
        )
    return split_run


def _partitions(items: list[str]):
    """Every set partition of ``items`` (restricted growth strings), as lists of lists."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        yield [[first], *part]
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]


def _greedy(items: list[str], edges: list[PairMove]) -> list[list[str]]:
    """A colouring of the induced pairs' graph, most-connected criterion first: no induced pair in one part."""
    near = {c: {e.b if e.a == c else e.a for e in edges if c in (e.a, e.b)} for c in items}
    parts: list[list[str]] = []
    for c in sorted(items, key=lambda c: -len(near[c])):
        part = next((p for p in parts if not near[c] & set(p)), None)
        if part is None:
            parts.append([c])
        else:
            part.append(c)
    return parts


def _best_by_calls(criteria: list[str], edges: list[PairMove]) -> dict[int, list[list[str]]]:
    """For each number of calls from 1 to the fewest separating every induced pair: the grouping of
    ``criteria`` that removes the most induced phi (the criteria in no induced pair join the largest call)."""
    involved = [c for c in criteria if any(c in (e.a, e.b) for e in edges)]
    others = [c for c in criteria if c not in involved]
    exact = len(involved) <= EXACT_UP_TO
    candidates = list(_partitions(involved)) if exact else [[involved], _greedy(involved, edges)]
    best: dict[int, tuple[float, list[list[str]]]] = {}
    for parts in candidates:
        score = sum(e.removed for e in edges if not any(e.a in p and e.b in p for p in parts))
        g = max(len(parts), 1)  # no induced pair: the one empty grouping, every criterion in one call
        if g not in best or score > best[g][0] + 1e-12:
            best[g] = (score, parts)
    full = sum(e.removed for e in edges)
    fewest = min((g for g, (s, _) in best.items() if s >= full - 1e-12), default=1)
    out = {}
    for g in range(1, fewest + 1):
        if g not in best:
            continue
        parts = [list(p) for p in best[g][1]] or [[]]
        max(parts, key=len).extend(others)
        order = {c: i for i, c in enumerate(criteria)}
        parts = [sorted(p, key=order.__getitem__) for p in parts if p]
        out[g] = sorted(parts, key=lambda p: (len(p), order[p[0]]))
    return out


def _pair_moves(res: Any, run_id: str, split_run: str) -> tuple[list[PairMove], list[Unsettled]]:
    """The induced pairs judged in one call by ``run_id``, with their phi in it and in the split run;
    and the pairs whose phi falls past the threshold when split without being classed induced."""
    induced, unsettled = [], []
    for p in res.pairs:
        one, apart = p.instruments[run_id], p.instruments[split_run]
        if one.call != "single" or one.phi is None or apart.phi is None:
            continue
        move = PairMove(p.a, p.b, one.phi, apart.phi, one.phi - apart.phi)
        if p.cls == "induced":
            induced.append(move)
        elif move.removed > res.threshold:
            unsettled.append(Unsettled(p.a, p.b, one.phi, apart.phi, p.cls, p.reason))
    return induced, unsettled


def _priced(proj: Projection, groups: list[list[str]], answers: int) -> tuple[float | None, ...]:
    """Cost, tokens in and tokens out of ``answers`` answers judged once with ``groups`` as calls:
    the Cost page's projection (:func:`project`) with the run's fitted parameters."""
    if not proj.available:
        return None, None, None
    names = [c.criterion for c in proj.criteria]
    known = [c.out_tokens_per_verdict for c in proj.criteria if c.out_tokens_per_verdict is not None]
    fill = sum(known) / len(known) if known else 0.0
    out = [c.out_tokens_per_verdict if c.out_tokens_per_verdict is not None else fill for c in proj.criteria]
    parts = [p for p in ([names.index(n) for n in g if n in names] for g in groups) if p]
    # criteria the run asked that the association does not share (e.g. judged without a model) join the largest call
    max(parts, key=len).extend(i for i in range(len(names)) if not any(i in p for p in parts))
    pr = proj.prices
    rows = project(
        proj.shared_tokens_in,
        [c.tokens_in for c in proj.criteria],
        out,
        None if pr is None else (pr.input_per_token, pr.output_per_token),
        answers,
        len(parts),
        out_per_call=proj.output.tokens_per_call,
        partition=parts,
    )
    return rows[1].cost_usd, rows[1].tokens_in, rows[1].tokens_out


def _row_text(groups: list[list[str]], k: int, separated: list[PairMove]) -> str:
    """A grouping in words: one call, one call per criterion, or which induced pairs it splits."""
    if len(groups) == 1:
        return "every criterion in one call"
    if len(groups) == k:
        return "every criterion in its own call"
    seen = Counter(c for e in separated for c in (e.a, e.b))
    apart: dict[str, list[str]] = {}
    for e in separated:  # each pair under the member in more of them: "split b from a and c"
        hub, other = (e.a, e.b) if seen[e.a] >= seen[e.b] else (e.b, e.a)
        apart.setdefault(hub, []).append(other)
    calls = " | ".join(", ".join(g) for g in groups)
    if not apart:
        return f"{len(groups)} calls: {calls}"
    split = "; ".join(f"{a} from {' and '.join(bs)}" for a, bs in apart.items())
    return f"split {split}, keep the rest together: {calls}"


def _money(v: float | None) -> str:
    return "an unknown cost (the run's calls carry no price)" if v is None else f"{'+' if v >= 0 else '-'}${abs(v):.2f}"


def _words(rows: list[GroupingRow], rec: GroupingRow | None, unsettled: list[Unsettled], answers: int) -> str:
    """The recommendation in words, or why there is none."""
    if rec is None:
        text = "Nothing to split: no criterion pair is classed induced, so one call loses nothing a split would remove."
        if unsettled:
            text += (
                f" {len(unsettled)} pair(s) fall by more than the threshold when split but are not settled "
                f"({unsettled[0].a} x {unsettled[0].b}: {unsettled[0].reason}); label answers to tell."
            )
        return text
    moves = " and ".join(
        f"{e.removed:.2f} from {e.a} x {e.b} ({e.phi_single:.2f} in one call, {e.phi_split:.2f} split)"
        for e in rec.separated
    )
    return (
        f"{rec.text[0].upper()}{rec.text[1:]} ({rec.calls_per_answer} calls per answer): "
        f"{_money(rec.extra_cost_usd)} per {answers:,} answers over one call; removes phi {moves}."
    )


def grouping(
    store: Store,
    run_id: str,
    split_run: str | None = None,
    *,
    sel: Selection = DEFAULT_SELECTION,
    answers: int = 1000,
    seed: int = 0,
    n_boot: int = 2000,
) -> Grouping:
    """Groupings of ``run_id``'s criteria into calls, ranked by the induced association they remove
    against their cost per ``answers`` answers (module docstring). ``run_id`` asked several criteria
    in one call (single or grouped); ``split_run``: a split run on the same generation (default: the
    one the association page opens beside it)."""
    m = store.run(run_id).manifest
    if judged_together(m)[0] not in ("single", "grouped"):
        raise InputError(
            f"{run_id} is a {m.mode} run: the grouping view needs a run whose criteria share a call (single or "
            "grouped), beside a split run",
            field="RUN",
        )
    if isinstance(answers, bool) or not isinstance(answers, int) or answers < 1:
        raise InputError(f"{answers!r} must be a whole number of at least 1", field="--answers")
    split_run = _split_partner(store, run_id, split_run)
    people = _people_rows_sql(store, m.gen_id) is not None
    res = association(store, [run_id, split_run], human=people, sel=sel, seed=seed, n_boot=n_boot)
    induced, unsettled = _pair_moves(res, run_id, split_run)
    proj = run_cost(store, run_id, classes=sel.classes).projection
    base = _priced(proj, [list(res.criteria)], answers)[0]
    rows = []
    layouts = _best_by_calls(res.criteria, induced)
    fewest = max(layouts)  # the fewest calls per answer that separate every induced pair
    layouts.setdefault(len(res.criteria), [[c] for c in res.criteria])
    for g, groups in layouts.items():
        apart = [e for e in induced if not any(e.a in p and e.b in p for p in groups)]
        cost, tin, tout = _priced(proj, groups, answers)
        rows.append(
            GroupingRow(
                calls_per_answer=g,
                groups=groups,
                phi_removed=sum((e.removed for e in apart), 0.0),
                separated=apart,
                kept_together=[e for e in induced if e not in apart],
                cost_usd=cost,
                extra_cost_usd=None if cost is None or base is None else cost - base,
                tokens_in=tin,
                tokens_out=tout,
                text=_row_text(groups, len(res.criteria), apart),
            )
        )
    rec = next(r for r in rows if r.calls_per_answer == fewest) if induced else None
    return Grouping(
        run_id=run_id,
        split_run=split_run,
        gen_id=res.gen_id,
        selection=sel.describe(),
        people=people,
        people_answers=res.people_answers,
        threshold=res.threshold,
        answers=answers,
        induced=induced,
        unsettled=unsettled,
        rows=rows,
        recommended_calls=None if rec is None else rec.calls_per_answer,
        text=_words(rows, rec, unsettled, answers),
        cost_source=(
            f"the Cost page's projection of {run_id} (evalcore cost {run_id}) for {answers:,} answers judged once"
            if proj.available
            else f"no projection: {proj.reason}"
        ),
        warnings=[*res.warnings, *(proj.warnings if proj.available else [])],
    )
