"""Judges against judges on the report card: kappa between every two judges' runs per criterion (a
low one flags an ambiguous criterion; ``comparison`` names what differs between the two
configurations), repeat consistency across a run's judge rounds (majority-of-k against one
round). The per-judge summary that opens the card is :mod:`evalcore.review.ranking`. Used by
:func:`evalcore.review.reportcard.report_card`.

**The ambiguity threshold.** A criterion is flagged ambiguous when two judges in the same harness
agree below kappa :data:`AMBIGUOUS_KAPPA` = 0.60 on at least :data:`MIN_PAIR_CASES` shared cases.
0.60 is the upper edge of Landis & Koch's "moderate" band (1977: 0.41-0.60 moderate, 0.61-0.80
substantial): two judges that reach no more than moderate agreement on one criterion read it
differently, which is what an ambiguous criterion is. The earlier 0.40 (the bottom of "moderate")
only caught fair or worse agreement and missed the textbook case, a refusal criterion whose judges
agree at kappa 0.44 in a single call and 0.46 split, whose trouble is its wording, not the harness.
When the same two judges judged the criterion in two harness modes (single and split, say), the
flag reports both kappas side by side (``harnesses``): if the judges stay below the line when each
criterion gets its own call, splitting does not fix the criterion; the wording has to change.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result
from evalcore.review.detect import pair_code
from evalcore.stats import agreement as A
from evalcore.storage.aggregates import answers_table, patterns_of, repeat_histogram_sql
from evalcore.storage.store import Store

#: judge-to-judge kappa below this flags the criterion as ambiguous: the upper edge of Landis &
#: Koch's "moderate" band (0.41-0.60); "substantial" agreement starts above it (module docstring)
AMBIGUOUS_KAPPA = 0.60
#: two judges must share this many cases for their kappa to flag a criterion
MIN_PAIR_CASES = 30
#: disputed items listed per ambiguous criterion
MAX_DISPUTED = 20
#: harness modes in the order a comparison names them (one call, grouped calls, one call per criterion)
MODE_ORDER = ("single", "grouped", "split")


def scale_of(crit: S.Criterion | None) -> tuple[list[str], A.Weights, Literal["nominal", "ordinal", "interval"]]:
    """(categories in order, kappa weights, Krippendorff level) of a criterion."""
    kind = crit.kind if crit else "binary"
    if kind == "ternary":
        return ["wrong", "partial", "correct"], "quadratic", "ordinal"
    scores = crit.whole_scores() if crit is not None else None
    if scores is not None:
        return [str(v) for v in scores], "quadratic", "ordinal"
    return ["fail", "pass"], None, "nominal"


def pass_fail(crit: S.Criterion | None) -> bool:
    """Whether a criterion's value on the card is just pass / fail (binary, check, continuous,
    retrieval, an ordinal scale that is not whole scores): then its verdicts are the bits of the
    run's answers table."""
    return scale_of(crit)[0] == ["fail", "pass"]


#: a run's answers table: its path, its pass / fail criteria's bits, every criterion's bit
Mask = tuple[str, dict[str, int], dict[str, int]]


def mask_runs(store: Store, run_ids: list[str], ms: dict) -> dict[str, Mask]:
    """The runs with a current answers table (:func:`evalcore.storage.aggregates.answers_table`):
    run -> (its path, pass / fail criterion -> bit, criterion -> bit). A run whose table lacks a
    rubric criterion is left out (its figures read the verdicts)."""
    out = {}
    for rid in run_ids:
        a = answers_table(store, rid)
        if a is None or "criteria" not in a[1]:
            continue
        bits = {c: k for k, c in enumerate(a[1]["criteria"])}
        rubric = ms[rid].rubric
        if any(c not in bits for c in rubric.names()) or len(bits) > 62:
            continue
        out[rid] = (
            a[0],
            {c.name: bits[c.name] for c in rubric.criteria if pass_fail(c)},
            {c: bits[c] for c in rubric.names()},
        )
    return out


def _answers(path: str, where: str, cut: tuple[str, list]) -> tuple[str, list]:
    """The rows of an answers table meeting ``where`` and the slice condition ``cut``."""
    cond = f"{where} AND ({cut[0]})" if cut[0] else where
    return f"SELECT * FROM read_parquet(?) WHERE {cond}", [path, *cut[1]]


def _bit(col: str, k: int) -> str:
    return f"(({col} >> {int(k)}) & 1)"


def comparison(a: S.RunManifest, b: S.RunManifest) -> str:
    """What two runs on one generation compare: ``harness`` (one judge model, two harness modes),
    ``judges`` (one harness mode, different judge models or prompt variants) or ``mixed`` (both
    differ: a disagreement cannot be put on either); ``replicate`` when the judge model, harness and
    prompt variant are the same."""
    if pair_code(a, b) == "harness_disagree":
        return "harness"
    if a.mode == b.mode:
        same = a.judge_model == b.judge_model and a.prompt_variant == b.prompt_variant
        return "replicate" if same else "judges"
    return "mixed"


@dataclass
class JudgePair(Result):
    """Two judges' runs against each other on one criterion, on the cases both judged."""

    a: str
    b: str
    n: int
    agreement: float | None
    kappa: float | None
    reason: str | None
    comparison: str


@dataclass
class LowPair(Result):
    """Two judges in one harness agreeing below :data:`AMBIGUOUS_KAPPA` (``mode``: the harness)."""

    a: str
    b: str
    kappa: float
    n: int
    mode: str


@dataclass
class ModeKappa(Result):
    """Two judges' kappa in one harness mode."""

    mode: str
    a: str
    b: str
    n: int
    kappa: float | None


@dataclass
class HarnessComparison(Result):
    """Two judges' kappa in each harness mode they judged in, and what it says (:func:`harness_comparisons`)."""

    judges: list[str]
    by_mode: list[ModeKappa]
    text: str


@dataclass
class Disputed(Result):
    """An item the low pairs of an ambiguous criterion disagree on."""

    item_id: str
    gen_round: int
    pairs_disagreeing: int


@dataclass
class Ambiguous(Result):
    """Whether a criterion is flagged ambiguous; when it is, why (the rest of the fields)."""

    flag: bool
    threshold: float = OMIT
    pairs: list[LowPair] = OMIT
    harnesses: list[HarnessComparison] = OMIT
    disputed_items: list[Disputed] = OMIT


def _judge_pairs(
    store: Store,
    vsql: str | None,
    vparams: list,
    run_ids: list[str],
    ms: dict,
    judge_round: int,
    cut: tuple[str, list] = ("", []),
) -> dict[str, tuple[list[JudgePair], Ambiguous]]:
    """Per criterion, Cohen's kappa between every two runs (runs are fixed raters) on the cases both
    judged, from confusion counts computed in DuckDB (:func:`_pair_tables`). The criterion is flagged
    ambiguous when two judges in the same harness (:func:`comparison` ``judges``) agree below
    :data:`AMBIGUOUS_KAPPA` on at least :data:`MIN_PAIR_CASES` cases:
    people could read it either way. Listed with it: the cases those judges dispute."""
    out: dict[str, list[JudgePair]] = defaultdict(list)
    for (crit_name, ra, rb), cells in sorted(_pair_tables(store, vsql, vparams, run_ids, ms, judge_round, cut).items()):
        crit = ms[ra].rubric.get(crit_name)
        cats, weights, _ = scale_of(crit)
        code = {c: k for k, c in enumerate(cats)}
        t = np.zeros((len(cats), len(cats)))
        for va, vb, n in cells:
            if va in code and vb in code:
                t[code[va], code[vb]] += n
        s = A.kappa_from_confusion(t, weights)
        n = int(t.sum())
        agreement = float(np.trace(t) / n) if n else None
        out[crit_name].append(JudgePair(ra, rb, n, agreement, s.value, s.reason, comparison(ms[ra], ms[rb])))
    lows = {
        crit_name: low
        for crit_name, pairs in out.items()
        if (
            low := [
                p
                for p in pairs
                if p.comparison == "judges"
                and p.kappa is not None
                and p.kappa < AMBIGUOUS_KAPPA
                and p.n >= MIN_PAIR_CASES
            ]
        )
    }
    disputed = _disputed(store, vsql, vparams, judge_round, lows) if lows else {}
    flags = {
        crit_name: Ambiguous(
            True,
            AMBIGUOUS_KAPPA,
            [LowPair(p.a, p.b, cast(float, p.kappa), p.n, ms[p.a].mode) for p in low],
            harness_comparisons(out[crit_name], low, ms),
            disputed.get(crit_name, []),
        )
        for crit_name, low in lows.items()
    }
    return {c: (pairs, flags.get(c, Ambiguous(False))) for c, pairs in out.items()}


def _pair_tables(
    store: Store, vsql: str | None, vparams: list, run_ids: list[str], ms: dict, judge_round: int, cut: tuple[str, list]
) -> dict[tuple[str, str, str], list[tuple[str, str, int]]]:
    """(criterion, run a, run b) -> the confusion cells (a's value, b's value, cases) of every two
    runs (a < b) on each criterion both judge. The cells of a criterion that is pass / fail in two
    runs with answers tables come from the tables (:func:`_pair_masks`; ``cut`` is the slice
    condition on ``item_id``), the others from the verdicts (``vsql``, already cut)."""
    masks = mask_runs(store, run_ids, ms) if judge_round >= 1 else {}
    tables: dict[tuple[str, str, str], list[tuple[str, str, int]]] = defaultdict(list)
    from_masks: set[tuple[str, str, str]] = set()
    for ra in sorted(masks):
        for rb in sorted(masks):
            crits = [c for c in masks[ra][1] if ra < rb and c in masks[rb][1]]
            if crits:
                got = _pair_masks(store, masks[ra], masks[rb], crits, judge_round, cut, (ra, rb))
                for key, cells in got.items():
                    tables[(key, ra, rb)] = cells
                from_masks |= {(c, ra, rb) for c in crits}
    rest = [
        (c, ra, rb)
        for ra in run_ids
        for rb in run_ids
        if ra < rb
        for c in ms[ra].rubric.names()
        if c in ms[rb].rubric.names() and (c, ra, rb) not in from_masks
    ]
    if not from_masks:
        rows = store.records(
            f"WITH x AS (SELECT * FROM ({vsql}) WHERE judge_round = ? AND value IS NOT NULL) "
            "SELECT a.criterion, a.run_id AS ra, b.run_id AS rb, a.value AS va, b.value AS vb, count(*) AS n "
            "FROM x a JOIN x b USING (item_id, gen_round, criterion) WHERE a.run_id < b.run_id GROUP BY ALL",
            [*vparams, int(judge_round)],
        )
    elif rest:
        x, xparams = _pairs_x(vsql, vparams, sorted({(t[i], t[0]) for t in rest for i in (1, 2)}))
        rows = store.records(
            f"WITH x AS (SELECT * FROM ({x}) WHERE judge_round = ? AND value IS NOT NULL), "
            "t AS (SELECT unnest(?::VARCHAR[]) AS criterion, unnest(?::VARCHAR[]) AS ra, unnest(?::VARCHAR[]) AS rb) "
            "SELECT a.criterion, a.run_id AS ra, b.run_id AS rb, a.value AS va, b.value AS vb, count(*) AS n "
            "FROM x a JOIN x b USING (item_id, gen_round, criterion) "
            "JOIN t ON t.criterion = a.criterion AND t.ra = a.run_id AND t.rb = b.run_id GROUP BY ALL",
            [*xparams, int(judge_round), [t[0] for t in rest], [t[1] for t in rest], [t[2] for t in rest]],
        )
    else:
        rows = []
    for r in rows:
        tables[(r["criterion"], r["ra"], r["rb"])].append((r["va"], r["vb"], r["n"]))
    return tables


def _disputed(
    store: Store, vsql: str | None, vparams: list, judge_round: int, lows: dict[str, list[JudgePair]]
) -> dict[str, list[Disputed]]:
    """The disputed items of every flagged criterion in one scan: per criterion, the cases its low
    pairs disagree on, most disagreeing pairs first, at most :data:`MAX_DISPUTED`."""
    flat = [(c, p.a, p.b) for c, low in lows.items() for p in low]
    disputed: dict[str, list[Disputed]] = defaultdict(list)
    for d in store.records(
        f"WITH x AS (SELECT * FROM ({vsql}) WHERE judge_round = ? AND value IS NOT NULL "
        "AND list_contains(?::VARCHAR[], criterion)), "
        "p AS (SELECT unnest(?::VARCHAR[]) AS criterion, unnest(?::VARCHAR[]) AS ra, unnest(?::VARCHAR[]) AS rb), "
        "d AS (SELECT a.criterion, a.item_id, a.gen_round, count(*) AS pairs FROM x a "
        "JOIN x b USING (item_id, gen_round, criterion) "
        "JOIN p ON p.criterion = a.criterion AND p.ra = a.run_id AND p.rb = b.run_id "
        "WHERE a.value <> b.value GROUP BY ALL) "
        "SELECT * FROM d QUALIFY row_number() OVER (PARTITION BY criterion ORDER BY pairs DESC, item_id, gen_round) "
        "<= ? ORDER BY criterion, pairs DESC, item_id, gen_round",
        [*vparams, int(judge_round), list(lows), *([f[i] for f in flat] for i in range(3)), MAX_DISPUTED],
    ):
        disputed[d["criterion"]].append(Disputed(d["item_id"], d["gen_round"], d["pairs"]))
    return disputed


def _pair_masks(
    store: Store,
    a: Mask,
    b: Mask,
    crits: list[str],
    judge_round: int,
    cut: tuple[str, list],
    runs: tuple[str, str] | None = None,
) -> dict[str, list[tuple[str, str, int]]]:
    """Two runs' confusion counts (a's value, b's value, answers) per pass / fail criterion at one
    judge round, from their answers tables joined on the integer item key, or, over every item (no
    ``cut``), from the two ``runs``' pair table (:mod:`evalcore.storage.pairs`)."""
    from evalcore.analysis.selection import Selection, pair_pattern_sql

    cells = [("pass", "passed"), ("fail", "failed")]
    every = Selection(judge_round=int(judge_round), include_holdout=True)  # every item: no cut
    pp = pair_pattern_sql(store, *runs, every) if runs is not None and not cut[0] else None
    if pp is not None:  # the joined answers already counted by pattern
        cols = [
            f"coalesce(sum(n) FILTER (WHERE {_bit('a_' + ca, a[1][c])} = 1 AND {_bit('b_' + cb, b[1][c])} = 1), 0)"
            for c in crits
            for _, ca in cells
            for _, cb in cells
        ]
        (row,) = store.sql(f"SELECT {', '.join(cols)} FROM ({pp[0]})", pp[1])
    else:
        qa, pa = _answers(a[0], f"judge_round = {int(judge_round)}", cut)
        qb, pb = _answers(b[0], f"judge_round = {int(judge_round)}", cut)
        cols = [
            f"count(*) FILTER (WHERE {_bit('a.' + ca, a[1][c])} = 1 AND {_bit('b.' + cb, b[1][c])} = 1)"
            for c in crits
            for _, ca in cells
            for _, cb in cells
        ]
        (row,) = store.sql(f"SELECT {', '.join(cols)} FROM ({qa}) a JOIN ({qb}) b USING (item, gen_round)", [*pa, *pb])
    out: dict[str, list[tuple[str, str, int]]] = {}
    it = iter(row)
    for c in crits:
        got = [(va, vb, int(next(it))) for va, _ in cells for vb, _ in cells]
        if any(n for _, _, n in got):
            out[c] = [g for g in got if g[2]]
    return out


def judge_label(m: S.RunManifest) -> str:
    """A judge as the summary names it: the judge model, and its prompt variant unless default."""
    return m.judge_model + ("" if m.prompt_variant in ("", "default") else f" ({m.prompt_variant})")


def _mode_key(mode: str) -> tuple[int, str]:
    return (MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER), mode)


def harness_comparisons(pairs: list[JudgePair], low: list[JudgePair], ms: dict) -> list[HarnessComparison]:
    """Single versus split: for every two judges (judge model and prompt variant) that judged the
    criterion together in more than one harness mode, with at least one of their pairs among the
    ``low`` ones that flag it, their kappa in each mode side by side (``by_mode``, in the order
    single, grouped, split; of several runs of the same two judges in one mode, the pair with the
    most shared cases) and what the comparison says (``text``): e.g. "0.44 single, 0.46 split:
    splitting does not fix an ambiguous criterion"."""
    groups: dict[tuple, dict[str, JudgePair]] = defaultdict(dict)
    for p in pairs:
        if p.comparison != "judges":
            continue
        ma, mb = ms[p.a], ms[p.b]
        key = tuple(sorted((judge_label(ma), judge_label(mb))))
        prev = groups[key].get(ma.mode)
        if prev is None or p.n > prev.n:
            groups[key][ma.mode] = p
    flagged = {(p.a, p.b) for p in low}
    out = []
    for key, by_mode in sorted(groups.items()):
        if len(by_mode) < 2 or not any((p.a, p.b) in flagged for p in by_mode.values()):
            continue
        rows = [ModeKappa(m, p.a, p.b, p.n, p.kappa) for m in sorted(by_mode, key=_mode_key) for p in [by_mode[m]]]
        out.append(HarnessComparison(list(key), rows, _harness_text(rows)))
    return out


def _harness_text(rows: list[ModeKappa]) -> str:
    figures = ", ".join(("-" if r.kappa is None else f"{r.kappa:.2f}") + f" {r.mode}" for r in rows)
    split = [r.kappa for r in rows if r.mode == "split" and r.kappa is not None]
    other = [r.kappa for r in rows if r.mode != "split" and r.kappa is not None]
    if split and other:
        if max(split) < AMBIGUOUS_KAPPA and max(other) < AMBIGUOUS_KAPPA:
            return f"{figures}: splitting does not fix an ambiguous criterion"
        if min(split) >= AMBIGUOUS_KAPPA:
            return (
                f"{figures}: the judges agree once the criterion has a call of its own (the shared call, not "
                "the criterion, looks to be the cause)"
            )
        return f"{figures}: the judges agree less when the criterion has a call of its own"
    below = all(k < AMBIGUOUS_KAPPA for k in split + other)
    return f"{figures}: below kappa {AMBIGUOUS_KAPPA} in every mode" if below else figures


def _repeat(
    store: Store,
    vsql: str | None,
    vparams: list,
    run_ids: list[str],
    ms: dict | None = None,
    cut: tuple[str, list] = ("", []),
) -> dict[str, dict[str, dict]]:
    """Per criterion and run with several judge rounds: cases with every round judged, how many agree
    in every round, Fleiss' kappa over the rounds (interchangeable replicates), and the majority of
    the rounds against round 1. The pass / fail criteria of a run with an answers table are counted
    there (:func:`_repeat_masks`, given ``ms`` and the slice condition ``cut`` on ``item_id``); the
    others from the verdicts (``vsql``, already cut)."""
    if not run_ids:
        return {}
    masks = mask_runs(store, run_ids, ms) if ms is not None else {}
    if not masks:
        return _repeat_sql(store, vsql, vparams, run_ids, None)
    assert ms is not None  # masks are only looked for given the manifests
    # the verdicts' part: every criterion of a run without a table, the other kinds of one with
    sql_pairs = [
        (rid, c) for rid in run_ids for c in ms[rid].rubric.names() if rid not in masks or c not in masks[rid][1]
    ]
    # a run's rounds: its last judge round with a value on any criterion, from both parts
    rounds: dict[str, int] = {}
    for rid, (path, bits, _) in masks.items():
        if not bits:
            continue
        any_bit = sum(1 << k for k in bits.values())
        src = path if cut[0] else patterns_of(path)  # every answer: its patterns
        q, p = _answers(src, f"judge_round >= 1 AND ((passed | failed) & {any_bit}) <> 0", cut)
        r = store.sql(f"SELECT max(judge_round) FROM ({q})", p)[0][0]
        if r is not None:
            rounds[rid] = int(r)
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    if sql_pairs:
        x, params = _pairs_x(vsql, vparams, sql_pairs)
        given: dict[str, int] | None = None
        if any(rid in masks for rid, _ in sql_pairs):
            x_rounds = {
                rid: int(r)
                for rid, r in store.sql(
                    f"SELECT run_id, max(judge_round) FROM ({x}) WHERE value IS NOT NULL GROUP BY ALL", params
                )
            }
            for rid, r in x_rounds.items():
                rounds[rid] = max(r, rounds.get(rid, 0))
            given = {rid: rounds[rid] for rid in {*x_rounds, *(r for r, _ in sql_pairs if r in rounds)}}
        for c, per in _repeat_sql(store, x, params, sorted({rid for rid, _ in sql_pairs}), given).items():
            out[c].update(per)
    for rid, (path, bits, _) in masks.items():
        if bits and rid in rounds:
            a = answers_table(store, rid)
            memo_hist = (a[1] or {}).get("repeat_hist") if a is not None and a[0] == path else None
            for c, e in _repeat_masks(store, path, bits, rounds[rid], cut, memo_hist).items():
                out[c][rid] = e
    return dict(out)


def _pairs_x(vsql: str | None, vparams: list, pairs: list[tuple[str, str]]) -> tuple[str, list]:
    """The verdict values of these (run, criterion) pairs."""
    return (
        f"SELECT v.* FROM ({vsql}) v SEMI JOIN (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) "
        "AS criterion) p USING (run_id, criterion)",
        [*vparams, [p[0] for p in pairs], [p[1] for p in pairs]],
    )


def _repeat_masks(
    store: Store,
    path: str,
    bits: dict[str, int],
    rounds: int,
    cut: tuple[str, list],
    memo_hist: list[list[int]] | None = None,
) -> dict[str, dict]:
    """:func:`_repeat`'s figures of one run's pass / fail criteria from its answers table: per
    answer and criterion, in one packed sum over its judge rounds, the rounds judged, the passes
    and round 1's verdict (:func:`evalcore.storage.aggregates.repeat_histogram_sql`); then, in
    DuckDB, how many answers have each code per criterion. Only that histogram comes back; over
    every item (no slice) it is the run's memo (``memo_hist``, one row per criterion bit), and no
    answer is read."""
    names = list(bits)
    if memo_hist is not None and not cut[0]:
        pos = {k: j for j, k in enumerate(bits.values())}
        hist = [(pos[k], code, cnt) for k, code, cnt in memo_hist if k in pos]
    else:
        q, p = _answers(path, "judge_round >= 1", cut)
        hist = store.sql(repeat_histogram_sql(q, list(bits.values())), p)
    acc: dict[str, dict[str, int]] = {
        c: dict(n=0, sq=0, unanimous=0, passes=0, fails=0, ties=0, agree=0, both=0) for c in names
    }
    for j, code, cnt in hist:
        a = acc[names[int(j)]]
        judged, passes, cnt = int(code) & 0xFFFF, (int(code) >> 16) & 0xFFFF, int(cnt)
        r1 = "pass" if int(code) >> 32 & 1 else "fail" if int(code) >> 33 & 1 else None
        fails = judged - passes
        if judged == rounds:
            a["n"] += cnt
            a["sq"] += (passes * passes + fails * fails) * cnt
            a["unanimous"] += cnt if passes in (0, judged) else 0
            a["passes"] += passes * cnt
            a["fails"] += fails * cnt
        maj = "pass" if 2 * passes > judged else "fail" if 2 * fails > judged else None
        if maj is None:
            a["ties"] += cnt
        elif r1 is not None:
            a["both"] += cnt
            a["agree"] += cnt if maj == r1 else 0
    out = {}
    for c, a in acc.items():
        if not a["n"]:
            continue
        f = A.fleiss_kappa_from_sums(a["n"], rounds, float(a["sq"]), [t for t in (a["passes"], a["fails"]) if t])
        out[c] = {
            "rounds": rounds,
            "n": a["n"],
            "unanimous": a["unanimous"],
            "unanimous_share": a["unanimous"] / a["n"],
            "fleiss_kappa": f.value,
            "fleiss_reason": f.reason,
            "majority_ties": a["ties"],
            "majority_vs_round1": (a["agree"] / a["both"]) if a["both"] else None,
        }
    return out


def _repeat_sql(
    store: Store, vsql: str | None, vparams: list, run_ids: list[str], rounds: dict[str, int] | None
) -> dict[str, dict[str, dict]]:
    """:func:`_repeat` from the verdict values; a run's rounds are its last judge round with a value
    in ``vsql``, or given (``rounds``: the last over both parts of a run)."""
    x = f"SELECT * FROM ({vsql}) WHERE value IS NOT NULL AND list_contains(?::VARCHAR[], run_id)"
    params = [*vparams, list(run_ids)]
    if rounds is None:
        r_sql, r_params = "r AS (SELECT run_id, max(judge_round) AS rounds FROM x GROUP BY ALL)", []
    else:
        r_sql = "r AS (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::BIGINT[]) AS rounds)"
        r_params = [list(rounds), list(rounds.values())]
    rows = store.records(
        f"WITH x AS ({x}), u AS (SELECT run_id, criterion, item_id, gen_round, value, count(*) AS c FROM x GROUP BY ALL), "
        "pu AS (SELECT run_id, criterion, item_id, gen_round, sum(c) AS m, sum(c * c) AS sq, count(*) AS ncat "
        f"FROM u GROUP BY ALL), {r_sql} "
        "SELECT pu.run_id, pu.criterion, r.rounds, count(*) AS n, sum(sq) AS sq, "
        "count(*) FILTER (WHERE ncat = 1) AS unanimous FROM pu JOIN r USING (run_id) WHERE pu.m = r.rounds GROUP BY ALL",
        [*params, *r_params],
    )
    totals = store.records(
        f"WITH x AS ({x}), pu AS (SELECT run_id, criterion, item_id, gen_round, count(*) AS m FROM x GROUP BY ALL), "
        f"{r_sql} "
        "SELECT x.run_id, x.criterion, x.value, count(*) AS c FROM x JOIN pu USING (run_id, criterion, item_id, gen_round) "
        "JOIN r USING (run_id) WHERE pu.m = r.rounds GROUP BY ALL",
        [*params, *r_params],
    )
    maj = store.records(
        f"WITH x AS ({x}), u AS (SELECT run_id, criterion, item_id, gen_round, value, count(*) AS c FROM x GROUP BY ALL), "
        "pu AS (SELECT run_id, criterion, item_id, gen_round, sum(c) AS m FROM u GROUP BY ALL), "
        "mj AS (SELECT u.* FROM u JOIN pu USING (run_id, criterion, item_id, gen_round) WHERE 2 * u.c > pu.m), "
        "r1 AS (SELECT run_id, criterion, item_id, gen_round, value FROM x WHERE judge_round = 1) "
        "SELECT pu.run_id, pu.criterion, count(mj.value) AS with_majority, count(*) - count(mj.value) AS ties, "
        "count(*) FILTER (WHERE mj.value = r1.value) AS majority_is_round1, count(r1.value) FILTER "
        "(WHERE mj.value IS NOT NULL) AS both FROM pu LEFT JOIN mj USING (run_id, criterion, item_id, gen_round) "
        "LEFT JOIN r1 USING (run_id, criterion, item_id, gen_round) GROUP BY ALL",
        params,
    )
    tot: dict[tuple, dict[str, int]] = defaultdict(dict)
    for t in totals:
        tot[(t["run_id"], t["criterion"])][t["value"]] = t["c"]
    mj = {(m["run_id"], m["criterion"]): m for m in maj}
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        key = (r["run_id"], r["criterion"])
        f = A.fleiss_kappa_from_sums(r["n"], int(r["rounds"]), float(r["sq"]), list(tot[key].values()))
        m = mj.get(key, {})
        out[r["criterion"]][r["run_id"]] = {
            "rounds": int(r["rounds"]),
            "n": r["n"],
            "unanimous": r["unanimous"],
            "unanimous_share": r["unanimous"] / r["n"] if r["n"] else None,
            "fleiss_kappa": f.value,
            "fleiss_reason": f.reason,
            "majority_ties": m.get("ties"),
            "majority_vs_round1": (m["majority_is_round1"] / m["both"]) if m.get("both") else None,
        }
    return dict(out)
