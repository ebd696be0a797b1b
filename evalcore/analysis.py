"""Where failures land, and whether criteria move together: attribution, the 2x2, the phi matrix
per instrument, the position effect of single calls, and flips between two harnesses.

Every aggregate runs in DuckDB over the run's Parquet files and returns a small result; the
statistics on those counts are the pure functions of :mod:`evalcore.stats`.

The unit is an **answer**: one item in one generation round. A run's verdict on an answer for a
criterion comes from one judge round (``judge_round``, default 1) or from the majority over judge
rounds (``majority=True``: more passes than fails passes; a tie fails, the conservative reading).
Errored verdicts (``passed`` null) are excluded from rates and counted apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import stats
from .errors import EvalcoreError, InputError, NotFoundError
from .labels import LabelStore
from .store import Store
from .suite import holdout_filter, include_holdout_default, suite_of_run

PEOPLE = "people"


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True)
class Selection:
    """Which verdicts stand for a run's answer. Holdout items of the run's suite are left out
    unless ``include_holdout`` (default False; True inside :func:`evalcore.suite.holdout_included`,
    which the command line's ``--include-holdout`` uses)."""

    judge_round: int | None = 1
    majority: bool = False
    gen_round: int | None = None
    include_holdout: bool = field(default_factory=include_holdout_default)

    def describe(self) -> dict[str, Any]:
        return {"judge_round": None if self.majority else self.judge_round, "majority": self.majority,
                "gen_round": self.gen_round, "include_holdout": self.include_holdout}


def _hold(store: Store, run_id: str, sel: Selection) -> tuple[str, list[Any]]:
    """The condition leaving out the holdout items of the run's suite (none when included)."""
    return holdout_filter(store, suite_of_run(store, run_id), sel.include_holdout)


def _sel_sql(sel: Selection, hold: tuple[str, list[Any]] = ("", [])) -> tuple[str, list[Any]]:
    """SQL over ``read_parquet(?)`` giving (item_id, gen_round, criterion, passed, label, score, position)
    per answer and criterion; the path is the first parameter. ``hold`` is :func:`_hold`'s
    condition leaving out holdout items."""
    where, params = [], []
    if sel.gen_round is not None:
        where.append("gen_round = ?")
        params.append(int(sel.gen_round))
    if hold[0]:
        where.append(hold[0])
        params += hold[1]
    if sel.majority:
        w = ("WHERE " + " AND ".join(where)) if where else ""
        sql = ("SELECT item_id, gen_round, criterion, "
               "CASE WHEN count(passed) = 0 THEN NULL ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END "
               "AS passed, mode(label) AS label, avg(score) AS score, min(position) AS position "
               f"FROM read_parquet(?) {w} GROUP BY item_id, gen_round, criterion")
    else:
        where.append("judge_round = ?")
        params.append(int(sel.judge_round or 1))
        sql = ("SELECT item_id, gen_round, criterion, passed, label, score, position "
               f"FROM read_parquet(?) WHERE {' AND '.join(where)}")
    return sql, params


def _run_status(store: Store, run_id: str) -> dict[str, Any]:
    m = store.run(run_id).manifest
    out: dict[str, Any] = {"run_id": run_id, "status": m.status}
    if m.status != "complete":
        out["warning"] = (f"run {run_id} is {m.status}: "
                          + ("some calls failed after every retry, so its figures rest on fewer verdicts"
                             if m.status == "polluted" else "not every call was made, so its figures cover part of the items"))
    return out


def _check_criterion(store: Store, run_id: str, name: str) -> None:
    names = store.run(run_id).manifest.rubric.names()
    if name not in names:
        raise InputError(f"criterion {name!r} is not in run {run_id}'s rubric ({', '.join(names)})", field="criterion")


def _check_judge_round(store: Store, run_id: str, sel: Selection) -> None:
    k = store.run(run_id).manifest.judge_rounds
    if not sel.majority and sel.judge_round is not None and not (1 <= sel.judge_round <= k):
        raise InputError(f"run {run_id} has judge rounds 1-{k}, not {sel.judge_round}", field="--judge-round")


# --------------------------------------------------------------------------- attribution


def attribution(store: Store, run_id: str, sel: Selection = Selection()) -> dict[str, Any]:
    """Failures per criterion and their share of all failures; the all-pass rate and the rate
    through the hard gates; the ternary headline; failures by class; answers failing one criterion
    only (what a gate on that criterion alone would block)."""
    run = store.run(run_id)
    _check_judge_round(store, run_id, sel)
    m = run.manifest
    crits = m.rubric.criteria
    gates = [c.name for c in crits if c.gate]
    vpath = store.path_of("run", run_id, "verdicts")
    gen = store.generation(m.gen_id)
    ipath = store.path_of("suite", gen.manifest.suite_id, "items")
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    per_crit = store.records(
        f"WITH sel AS ({base}) SELECT criterion, count(*) AS verdicts, count(passed) AS judged, "
        "count(*) FILTER (WHERE NOT passed) AS failed, count(*) - count(passed) AS errored, "
        "count(*) FILTER (WHERE label = 'correct') AS correct, count(*) FILTER (WHERE label = 'partial') AS partial, "
        "count(*) FILTER (WHERE label = 'wrong') AS wrong FROM sel GROUP BY criterion", [vpath, *params])
    by_name = {r["criterion"]: r for r in per_crit}
    n_crit = len(crits)
    answers = store.records(
        f"WITH sel AS ({base}), per_answer AS ("
        "  SELECT item_id, gen_round, count(*) AS present, count(*) - count(passed) AS errored, "
        "  count(*) FILTER (WHERE NOT passed) AS fails, "
        "  count(*) FILTER (WHERE NOT passed AND list_contains(?::VARCHAR[], criterion)) AS gate_fails, "
        "  max(criterion) FILTER (WHERE NOT passed) AS failed_criterion "
        "  FROM sel GROUP BY item_id, gen_round) "
        "SELECT count(*) AS answers, "
        "count(*) FILTER (WHERE errored > 0) AS with_errors, "
        "count(*) FILTER (WHERE errored = 0 AND present < ?) AS incomplete, "
        "count(*) FILTER (WHERE errored = 0 AND present = ?) AS complete, "
        "count(*) FILTER (WHERE errored = 0 AND present = ? AND fails = 0) AS all_pass, "
        "count(*) FILTER (WHERE errored = 0 AND present = ? AND gate_fails = 0) AS gates_pass, "
        "list(failed_criterion) FILTER (WHERE errored = 0 AND present = ? AND fails = 1) AS only "
        "FROM per_answer", [vpath, *params, gates, n_crit, n_crit, n_crit, n_crit, n_crit])[0]
    only_counts: dict[str, int] = {}
    for c in answers.pop("only") or []:
        only_counts[c] = only_counts.get(c, 0) + 1
    total_fail = sum(r["failed"] for r in per_crit)
    criteria = []
    for c in crits:
        r = by_name.get(c.name, {"verdicts": 0, "judged": 0, "failed": 0, "errored": 0})
        lo, hi = stats.wilson(r["failed"], r["judged"]) if r["judged"] else (None, None)
        criteria.append({
            "criterion": c.name, "kind": c.kind, "gate": c.gate, "threshold": c.threshold,
            "judged": r["judged"], "failed": r["failed"], "errored": r["errored"],
            "fail_rate": r["failed"] / r["judged"] if r["judged"] else None, "fail_rate_ci95": [lo, hi],
            "share_of_failures": r["failed"] / total_fail if total_fail else None,
            "fail_only_this": only_counts.get(c.name, 0),
        })
    ternary = []
    for c in crits:
        if c.kind == "ternary":
            r = by_name.get(c.name, {})
            cor, par, wr = r.get("correct", 0), r.get("partial", 0), r.get("wrong", 0)
            ternary.append({"criterion": c.name, "correct": cor, "partial": par, "wrong": wr,
                            "headline": stats.ternary_headline(cor, par, wr),
                            "all_pass_rate": cor / (cor + par + wr) if (cor + par + wr) else None})
    by_class = store.records(
        f"WITH sel AS ({base}) SELECT coalesce(i.class, '(none)') AS class, s.criterion, count(s.passed) AS judged, "
        "count(*) FILTER (WHERE NOT s.passed) AS failed FROM sel s JOIN read_parquet(?) i USING (item_id) "
        "GROUP BY ALL ORDER BY 1, 2", [vpath, *params, ipath])
    for r in by_class:
        r["fail_rate"] = r["failed"] / r["judged"] if r["judged"] else None
    complete = answers["complete"]
    return {
        **_run_status(store, run_id), "gen_id": m.gen_id, "selection": sel.describe(),
        "criteria": criteria, "total_failures": total_fail,
        "answers": answers["answers"], "answers_with_errors": answers["with_errors"],
        "answers_incomplete": answers["incomplete"], "answers_complete": complete,
        "all_pass": {"passed": answers["all_pass"], "of": complete,
                     "rate": answers["all_pass"] / complete if complete else None,
                     "ci95": list(stats.wilson(answers["all_pass"], complete)) if complete else [None, None]},
        "gates": {"criteria": gates, "passed": answers["gates_pass"] if gates else None, "of": complete if gates else None,
                  "rate": (answers["gates_pass"] / complete if complete else None) if gates else None},
        "ternary": ternary,
        "by_class": by_class,
    }


# --------------------------------------------------------------------------- the 2x2


def crosstab(store: Store, run_id: str, a: str, b: str, sel: Selection = Selection()) -> dict[str, Any]:
    """The 2x2 of two criteria over the answers where both have a verdict: A in rows, B in columns,
    the rate at which B fails within each row of A, their ratio, and phi."""
    _check_criterion(store, run_id, a)
    _check_criterion(store, run_id, b)
    _check_judge_round(store, run_id, sel)
    if a == b:
        raise InputError("--a and --b name the same criterion", field="--b")
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    row = store.records(
        f"WITH sel AS ({base}), ab AS (SELECT item_id, gen_round, "
        "bool_or(passed) FILTER (WHERE criterion = ?) AS a, bool_or(passed) FILTER (WHERE criterion = ?) AS b "
        "FROM sel WHERE criterion IN (?, ?) GROUP BY item_id, gen_round) "
        "SELECT count(*) FILTER (WHERE a AND b) AS pp, count(*) FILTER (WHERE a AND NOT b) AS pf, "
        "count(*) FILTER (WHERE NOT a AND b) AS fp, count(*) FILTER (WHERE NOT a AND NOT b) AS ff, "
        "count(*) FILTER (WHERE a IS NULL OR b IS NULL) AS excluded FROM ab",
        [store.path_of("run", run_id, "verdicts"), *params, a, b, a, b])[0]
    t = stats.TwoByTwo(row["pp"], row["pf"], row["fp"], row["ff"])
    return {**_run_status(store, run_id), "a": a, "b": b, "selection": sel.describe(),
            **two_by_two_report(t, a, b), "excluded_answers": row["excluded"]}


def two_by_two_report(t: "stats.TwoByTwo", a: str, b: str) -> dict[str, Any]:
    """The 2x2 as plain data: cells, totals, conditioned rates, ratio, phi (or why it is undefined)."""
    ph = stats.phi(t, a=a, b=b)
    rates = stats.conditioned_rates(t, a=a, b=b)
    reason = ph.reason
    return {
        "table": {"a_pass": {"b_pass": t.a_pass_b_pass, "b_fail": t.a_pass_b_fail, "total": t.a_pass},
                  "a_fail": {"b_pass": t.a_fail_b_pass, "b_fail": t.a_fail_b_fail, "total": t.a_fail},
                  "total": {"b_pass": t.b_pass, "b_fail": t.b_fail, "total": t.n}},
        "n": t.n,
        "b_fail_rate_given_a_pass": rates["pass_row"]["rate"],
        "b_fail_rate_given_a_fail": rates["fail_row"]["rate"],
        "b_fail_rate_given_a_pass_ci95": rates["pass_row"].get("ci"),
        "b_fail_rate_given_a_fail_ci95": rates["fail_row"].get("ci"),
        "ratio": rates["ratio"]["value"], "ratio_reason": rates["ratio"].get("reason"),
        "phi": ph.value, "phi_reason": reason,
    }


# --------------------------------------------------------------------------- instruments


def _pair_kind(mode: str, groups: list[list[str]] | None, a: str, b: str) -> str:
    """How two criteria were judged in an instrument: in one call (`single`), in separate calls
    (`one_criterion`), by `people`, or unknown (`other`: an imported run)."""
    if mode == "single":
        return "single"
    if mode == "split":
        return "one_criterion"
    if mode == "grouped":
        same = any(a in g and b in g for g in (groups or []))
        return "single" if same else "one_criterion"
    if mode == PEOPLE:
        return "people"
    return "other"


def _verdict_rows_sql(store: Store, run_id: str, sel: Selection) -> tuple[str, list[Any]]:
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    return (f"SELECT item_id, gen_round, criterion, passed, score FROM ({base})",
            [store.path_of("run", run_id, "verdicts"), *params])


def _people_rows_sql(store: Store, gen_id: str) -> tuple[str, list[Any]] | None:
    """People's verdict per answer and criterion. From the label sets shipped with the data: an
    annotator named `mean` (a published mean of several people) when present, else the majority of
    the annotators (a tie fails) and the mean of their scores. Current labels decided in the label
    store override shipped ones for the same answer and criterion."""
    paths = [store.path_of("labelset", lid, "labels") for lid in store.ids("labelset")
             if store.labelset(lid).manifest.gen_id == gen_id]
    gold = _gold_overrides(store, gen_id)
    if not paths and not gold:
        return None
    g_cols = [[g["item_id"] for g in gold], [int(g["gen_round"]) for g in gold], [g["criterion"] for g in gold],
              [g["passed"] for g in gold]]
    gold_sql = ("SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
                "unnest(?::VARCHAR[]) AS criterion, unnest(?::BOOLEAN[]) AS passed, NULL::DOUBLE AS score")
    if not paths:
        return gold_sql, g_cols
    shipped = ("WITH l AS (SELECT item_id, gen_round, criterion, annotator, passed, score FROM read_parquet(?::VARCHAR[])), "
               "m AS (SELECT DISTINCT item_id, gen_round, criterion FROM l WHERE annotator = 'mean'), "
               "s AS (SELECT item_id, gen_round, criterion, passed, score FROM l WHERE annotator = 'mean' "
               "UNION ALL SELECT item_id, gen_round, criterion, "
               "CASE WHEN count(passed) = 0 THEN NULL ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END, "
               "avg(score) FROM l ANTI JOIN m USING (item_id, gen_round, criterion) GROUP BY item_id, gen_round, criterion), "
               f"g AS ({gold_sql}) "
               "SELECT * FROM g UNION ALL SELECT * FROM s ANTI JOIN g USING (item_id, gen_round, criterion)")
    return shipped, [paths, *g_cols]


def _gold_overrides(store: Store, gen_id: str) -> list[dict[str, Any]]:
    """Current labels decided in the label store, with a derived pass/fail."""
    try:
        rows = LabelStore(store).current(gen_id)
    except EvalcoreError:  # e.g. a state directory inside the data directory: no overrides
        return []
    return [r for r in rows if r.get("passed") is not None]


def _pivot_sql(rows_sql: str, rows_params: list[Any], criteria: list[str], tag: str,
               numeric: set[str] = frozenset()) -> tuple[str, list[Any]]:
    """One row per answer: a fail flag (1.0 / 0.0 / NULL) per criterion, and a score for the
    numeric ones."""
    cols, params = [], []
    for j, c in enumerate(criteria):
        cols.append(f"CAST(bool_or(NOT passed) FILTER (WHERE criterion = ?) AS DOUBLE) AS {tag}_f{j}")
        params.append(c)
        if c in numeric:
            cols.append(f"avg(score) FILTER (WHERE criterion = ?) AS {tag}_s{j}")
            params.append(c)
    return (f"SELECT item_id, gen_round, {', '.join(cols)} FROM ({rows_sql}) GROUP BY item_id, gen_round",
            params + rows_params)


def _joined(store: Store, parts: list[tuple[str, str, list[Any]]], n_crit: int) -> dict[str, np.ndarray]:
    """Join the pivots of several instruments on the answers where every one has a verdict on every
    criterion; return the columns as numpy arrays."""
    ctes, params = [], []
    for tag, sql, p in parts:
        ctes.append(f"{tag} AS ({sql})")
        params += p
    first = parts[0][0]
    joins = " ".join(f"JOIN {tag} USING (item_id, gen_round)" for tag, _, _ in parts[1:])
    notnull = " AND ".join(f"{tag}_f{j} IS NOT NULL" for tag, _, _ in parts for j in range(n_crit))
    # ordered by answer so that a seeded bootstrap resamples the same answers every time
    sql = (f"WITH {', '.join(ctes)} SELECT * EXCLUDE (item_id, gen_round) FROM {first} {joins} WHERE {notnull} "
           "ORDER BY item_id, gen_round")
    cur = store._con().cursor()
    try:
        res = cur.execute(sql, params).fetchnumpy()
    finally:
        cur.close()
    out = {}
    for k, v in res.items():
        if isinstance(v, np.ma.MaskedArray):
            v = v.astype(float).filled(np.nan)
        out[k] = np.asarray(v)
    out["n"] = len(next(iter(out.values()))) if out else 0
    return out


def association(store: Store, run_ids: list[str], *, human: bool = False, sel: Selection = Selection(),
                seed: int = 0, n_boot: int = 2000, level: float | None = None,
                analytic_above: int = 20000) -> dict[str, Any]:
    """phi (and, for numeric criteria, Kendall tau-b and Spearman) for every criterion pair in each
    instrument, side by side, each pair classed `induced`, `real` or `undetermined`
    (:func:`evalcore.stats.classify_association`).

    Runs are compared on the answers they all share; people on the answers they labelled that the
    runs share too (the runs' matrices on those answers are also given). Intervals come from a
    seeded paired bootstrap over answers (the same resampled answers for every instrument), or the
    analytic interval above ``analytic_above`` answers."""
    if not run_ids:
        raise InputError("give at least one run", field="RUN")
    if len(set(run_ids)) != len(run_ids):
        raise InputError("a run is named twice", field="RUN")
    manifests = {rid: store.run(rid).manifest for rid in run_ids}
    gens = {rid: m.gen_id for rid, m in manifests.items()}
    if len(set(gens.values())) > 1:
        listing = ", ".join(f"{r} -> {g}" for r, g in gens.items())
        raise InputError(f"runs judge different generations ({listing}): association compares instruments on the "
                         "same answers", field="RUN")
    gen_id = next(iter(gens.values()))
    level = stats.DEFAULT_LEVEL if level is None else level
    rubrics = [m.rubric for m in manifests.values()]
    common = [c.name for c in rubrics[0].criteria if all(rb.get(c.name) for rb in rubrics)]
    if len(common) < 2:
        raise InputError("the runs share fewer than two criteria", field="RUN")
    kinds = {c.name: c.kind for c in rubrics[0].criteria}
    numeric = {c for c in common if kinds.get(c) in ("ordinal", "continuous")}
    k = len(common)

    parts = []
    for i, rid in enumerate(run_ids):
        rsql, rparams = _verdict_rows_sql(store, rid, sel)
        psql, pparams = _pivot_sql(rsql, rparams, common, f"i{i}", numeric)
        parts.append((f"i{i}", psql, pparams))
    machines = _joined(store, parts, k)
    instruments = [{"name": rid, "tag": f"i{i}", "mode": manifests[rid].mode, "groups": manifests[rid].groups,
                    "status": manifests[rid].status} for i, rid in enumerate(run_ids)]
    people = None
    if human:
        ps = _people_rows_sql(store, gen_id)
        if ps is None:
            raise NotFoundError(f"no human labels for generation {gen_id} (label sets or the label store)",
                                field="--human")
        ps = _people_hold(store, gen_id, sel, ps)
        psql, pparams = _pivot_sql(ps[0], ps[1], common, "hp", numeric)
        # the runs restricted to the labelled items before pivoting (not 1M answers for 2,000 labels)
        labelled = f"SELECT DISTINCT item_id FROM ({ps[0]})"
        people_parts = []
        for i, rid in enumerate(run_ids):
            rsql, rparams = _verdict_rows_sql(store, rid, sel)
            rsql = f"SELECT * FROM ({rsql}) WHERE item_id IN ({labelled})"
            qsql, qparams = _pivot_sql(rsql, [*rparams, *ps[1]], common, f"i{i}", numeric)
            people_parts.append((f"i{i}", qsql, qparams))
        people = _joined(store, [("hp", psql, pparams)] + people_parts, k)
        instruments.append({"name": PEOPLE, "tag": "hp", "mode": PEOPLE, "groups": None, "status": "complete"})

    def fails(data: dict[str, np.ndarray], tag: str, j: int) -> np.ndarray:
        return data[f"{tag}_f{j}"] > 0.5

    def scores(data: dict[str, np.ndarray], tag: str, j: int) -> np.ndarray:
        return data[f"{tag}_s{j}"]

    n_m = machines["n"]
    n_p = people["n"] if people is not None else 0
    matrices, on_people = {}, {}
    for inst in instruments:
        data = people if inst["name"] == PEOPLE else machines
        matrices[inst["name"]] = _matrix(data, inst["tag"], common, kinds, fails, scores)
        if people is not None and inst["name"] != PEOPLE:
            on_people[inst["name"]] = _matrix(people, inst["tag"], common, kinds, fails, scores)

    # one paired draw of resampled answers serves every pair and every run (the same seed gives the
    # same resamples, so this equals drawing per pair, at a fraction of the cost); people apart
    index = [(i, j) for i in range(k) for j in range(i + 1, k)]
    machine_cols = {(inst["name"], i, j): (fails(machines, inst["tag"], i), fails(machines, inst["tag"], j))
                    for inst in instruments if inst["name"] != PEOPLE for i, j in index}
    all_ivs = stats.phi_intervals_paired(machine_cols, seed=seed, n_boot=n_boot, level=level,
                                         analytic_above=analytic_above) if n_m else {}
    if people is not None and n_p:
        all_ivs.update(stats.phi_intervals_paired(
            {(PEOPLE, i, j): (fails(people, "hp", i), fails(people, "hp", j)) for i, j in index},
            seed=seed, n_boot=n_boot, level=level, analytic_above=analytic_above))
    pairs_out = []
    for i, j in index:
        a, b = common[i], common[j]
        ivs = {inst["name"]: all_ivs.get((inst["name"], i, j)) for inst in instruments}
        evidence, per_inst = [], {}
        for inst in instruments:
            name = inst["name"]
            cell = matrices[name]["phi"][a][b]
            iv = ivs.get(name)
            lo, hi = (iv[0], iv[1]) if iv else (None, None)
            n = n_p if name == PEOPLE else n_m
            call = _pair_kind(inst["mode"], inst["groups"], a, b)
            per_inst[name] = {"phi": cell["value"], "phi_reason": cell["reason"], "lo": lo, "hi": hi, "n": n,
                              "call": call}
            evidence.append(stats.InstrumentEvidence(name=name, kind=call, value=cell["value"], lo=lo, hi=hi, n=n))
        cls = stats.classify_association(evidence)
        pairs_out.append({"a": a, "b": b, "class": cls.cls, "reason": cls.reason, "instruments": per_inst})
    for inst in instruments:
        inst.pop("tag")
    return {
        "gen_id": gen_id, "criteria": common, "selection": sel.describe(), "level": level, "seed": seed,
        "n_boot": n_boot, "threshold": stats.ASSOCIATION_THRESHOLD,
        "instruments": instruments, "shared_answers": n_m, "people_answers": n_p,
        "matrices": matrices, "matrices_on_people_answers": on_people, "pairs": pairs_out,
        "warnings": [f"run {i['name']} is {i['status']}" for i in instruments if i["status"] != "complete"],
    }


def _matrix(data, tag, criteria, kinds, fails, scores) -> dict[str, Any]:
    """phi for every ordered pair (the diagonal included, as 1 or undefined), failure rates, and
    Kendall tau-b / Spearman between numeric criteria."""
    n = data["n"]
    phi: dict[str, dict[str, Any]] = {a: {} for a in criteria}
    rank: dict[str, dict[str, Any]] = {a: {} for a in criteria}
    fail_rate = {}
    for i, a in enumerate(criteria):
        fa = fails(data, tag, i)
        fail_rate[a] = float(fa.mean()) if n else None
        for j, b in enumerate(criteria):
            fb = fails(data, tag, j)
            s = stats.phi(stats.TwoByTwo.from_arrays(fa, fb))
            phi[a][b] = {"value": s.value, "reason": s.reason}
            if i != j and kinds.get(a) in ("ordinal", "continuous") and kinds.get(b) in ("ordinal", "continuous"):
                tau, rho = stats.kendall_tau_b(scores(data, tag, i), scores(data, tag, j)), \
                    stats.spearman(scores(data, tag, i), scores(data, tag, j))
                rank[a][b] = {"kendall_tau_b": tau.value, "spearman": rho.value, "reason": tau.reason or rho.reason}
    return {"n": n, "fail_rate": fail_rate, "phi": phi, "rank": rank}


# --------------------------------------------------------------------------- position effect


def position_effect(store: Store, run_id: str, reference_run: str | None = None,
                    sel: Selection = Selection()) -> dict[str, Any]:
    """In a single-call run: the failure rate by emission position, P(fail | the field before
    failed) by position, and, given a one-criterion reference run on the same generation, the
    agreement with it by position."""
    m = store.run(run_id).manifest
    if m.mode not in ("single", "grouped"):
        raise InputError(f"run {run_id} is {m.mode}: the position effect needs a single-call run", field="RUN")
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    vpath = store.path_of("run", run_id, "verdicts")
    rows = store.records(
        f"WITH sel AS ({base}), v AS (SELECT *, lag(passed) OVER (PARTITION BY item_id, gen_round ORDER BY position) "
        "AS prev FROM sel) SELECT position, count(passed) AS judged, count(*) FILTER (WHERE NOT passed) AS failed, "
        "count(*) FILTER (WHERE prev = false AND passed IS NOT NULL) AS after_fail, "
        "count(*) FILTER (WHERE prev = false AND NOT passed) AS fail_after_fail FROM v GROUP BY position ORDER BY position",
        [vpath, *params])
    agreement = {}
    if reference_run:
        rm = store.run(reference_run).manifest
        if rm.gen_id != m.gen_id:
            raise InputError(f"{reference_run} judges {rm.gen_id}, {run_id} judges {m.gen_id}: not the same answers",
                             field="--reference")
        rbase, rparams = _sel_sql(sel, _hold(store, reference_run, sel))
        for r in store.records(
                f"WITH a AS ({base}), b AS ({rbase}) SELECT a.position, count(*) AS n, "
                "count(*) FILTER (WHERE a.passed = b.passed) AS agree FROM a JOIN b USING (item_id, gen_round, criterion) "
                "WHERE a.passed IS NOT NULL AND b.passed IS NOT NULL GROUP BY a.position ORDER BY 1",
                [vpath, *params, store.path_of("run", reference_run, "verdicts"), *rparams]):
            agreement[r["position"]] = r["agree"] / r["n"] if r["n"] else None
    out = []
    for r in rows:
        out.append({"position": r["position"], "judged": r["judged"], "failed": r["failed"],
                    "fail_rate": r["failed"] / r["judged"] if r["judged"] else None,
                    "fail_rate_after_fail": r["fail_after_fail"] / r["after_fail"] if r["after_fail"] else None,
                    "agreement_with_reference": agreement.get(r["position"])})
    return {**_run_status(store, run_id), "reference_run": reference_run, "field_order": m.field_order,
            "positions": out}


# --------------------------------------------------------------------------- flips


def flips(store: Store, run_a: str, run_b: str, sel: Selection = Selection()) -> dict[str, Any]:
    """Per criterion, on the answers both runs judged: fail under A and pass under B (rescued), the
    reverse (new), fail under both; the composition of failures under each; the all-pass rate under
    each. What the aggregate hides is how much the composition moved."""
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    if ma.gen_id != mb.gen_id:
        raise InputError(f"{run_a} judges generation {ma.gen_id} and {run_b} judges {mb.gen_id}: flips compare "
                         "two harnesses on the same answers", field="RUN_B")
    common = [c for c in ma.rubric.names() if c in mb.rubric.names()]
    if not common:
        raise InputError(f"{run_a} and {run_b} share no criterion", field="RUN_B")
    base, params = _sel_sql(sel, _hold(store, run_a, sel))
    pa_, pb_ = store.path_of("run", run_a, "verdicts"), store.path_of("run", run_b, "verdicts")
    k = len(common)
    # pivot each run to one row per answer first, then join the two pivots: one pass, and a join of
    # answers rather than of verdict rows (docs/BENCHMARKS.md, findings)
    pivot_cols = ", ".join(f"bool_or(passed) FILTER (WHERE criterion = ?) AS c{j}" for j in range(k))
    pivot = f"SELECT item_id, gen_round, {pivot_cols} FROM ({base}) GROUP BY item_id, gen_round"
    aggs = []
    for j in range(k):
        a, b = f"a.c{j}", f"b.c{j}"
        aggs += [f"count(*) FILTER (WHERE {a} IS NOT NULL AND {b} IS NOT NULL) AS n{j}",
                 f"count(*) FILTER (WHERE NOT {a} AND {b} IS NOT NULL) AS fail_a{j}",
                 f"count(*) FILTER (WHERE NOT {b} AND {a} IS NOT NULL) AS fail_b{j}",
                 f"count(*) FILTER (WHERE NOT {a} AND {b}) AS fail_a_pass_b{j}",
                 f"count(*) FILTER (WHERE {a} AND NOT {b}) AS pass_a_fail_b{j}",
                 f"count(*) FILTER (WHERE NOT {a} AND NOT {b}) AS fail_both{j}"]
    complete = " AND ".join(f"a.c{j} IS NOT NULL AND b.c{j} IS NOT NULL" for j in range(k))
    all_a = " AND ".join(f"a.c{j}" for j in range(k))
    all_b = " AND ".join(f"b.c{j}" for j in range(k))
    aggs += [f"count(*) FILTER (WHERE {complete}) AS answers",
             f"count(*) FILTER (WHERE {complete} AND {all_a}) AS all_pass_a",
             f"count(*) FILTER (WHERE {complete} AND {all_b}) AS all_pass_b"]
    got = store.records(
        f"WITH a AS ({pivot}), b AS ({pivot}) SELECT {', '.join(aggs)} FROM a JOIN b USING (item_id, gen_round)",
        [*common, pa_, *params, *common, pb_, *params])[0]
    keys = ("n", "fail_a", "fail_b", "fail_a_pass_b", "pass_a_fail_b", "fail_both")
    rows = [{"criterion": c, **{key: got[f"{key}{j}"] for key in keys}} for j, c in enumerate(common)]
    allp = {key: got[key] for key in ("answers", "all_pass_a", "all_pass_b")}
    by = {r["criterion"]: r for r in rows}
    tot_a = sum(r["fail_a"] for r in rows)
    tot_b = sum(r["fail_b"] for r in rows)
    per = []
    for c in common:
        r = by.get(c, {"n": 0, "fail_a": 0, "fail_b": 0, "fail_a_pass_b": 0, "pass_a_fail_b": 0, "fail_both": 0})
        mc = stats.mcnemar(r["fail_a_pass_b"], r["pass_a_fail_b"])
        per.append({**{k: r[k] for k in ("n", "fail_a", "fail_b", "fail_a_pass_b", "pass_a_fail_b", "fail_both")},
                    "criterion": c,
                    "share_of_failures_a": r["fail_a"] / tot_a if tot_a else None,
                    "share_of_failures_b": r["fail_b"] / tot_b if tot_b else None,
                    "mcnemar_p": mc["p_value"]})
    n = allp["answers"]
    return {
        "run_a": run_a, "run_b": run_b, "gen_id": ma.gen_id, "selection": sel.describe(),
        "status_a": ma.status, "status_b": mb.status,
        "warnings": [f"run {r} is {s}" for r, s in ((run_a, ma.status), (run_b, mb.status)) if s != "complete"],
        "criteria": per, "failures_a": tot_a, "failures_b": tot_b,
        "all_pass": {"answers": n, "a": allp["all_pass_a"] / n if n else None, "b": allp["all_pass_b"] / n if n else None,
                     "passed_a": allp["all_pass_a"], "passed_b": allp["all_pass_b"]},
    }


# --------------------------------------------------------------------------- drill-downs
# The answers behind a figure: one page of them at a time (``limit`` at most MAX_LIMIT, from
# ``offset``), in (item_id, gen_round) order, with the total. Membership is decided by the same
# SQL as the figure, so a drill-down's total equals the count it was opened from.

MAX_LIMIT = 500
#: The cells of a flips table an answer can sit in (see :func:`flips`).
DIRECTIONS = ("fail_a_pass_b", "pass_a_fail_b", "fail_both")


def parse_selection(judge: str | int | None = None, gen_round: str | int | None = None,
                    include_holdout: bool | None = None) -> Selection:
    """A :class:`Selection` from link or widget values: ``judge`` is ``"majority"`` or a judge
    round number (default 1); ``gen_round`` a generation round number, or None / ``"all"`` for
    every round; ``include_holdout`` the "Show holdout items" toggle (None: the default, off)."""
    if isinstance(judge, str) and judge.strip().lower() == "majority":
        sel_judge, majority = None, True
    else:
        try:
            sel_judge, majority = (int(judge) if judge not in (None, "") else 1), False
        except (TypeError, ValueError):
            raise InputError(f"judge must be 'majority' or a judge round number, not {judge!r}", field="judge") from None
    if gen_round in (None, "", "all"):
        g = None
    else:
        try:
            g = int(gen_round)
        except (TypeError, ValueError):
            raise InputError(f"generation round must be a number or 'all', not {gen_round!r}", field="round") from None
    hold = include_holdout_default() if include_holdout is None else bool(include_holdout)
    return Selection(judge_round=sel_judge if not majority else None, majority=majority, gen_round=g,
                     include_holdout=hold)


def _check_page(limit: int, offset: int) -> None:
    if not (1 <= int(limit) <= MAX_LIMIT):
        raise InputError(f"limit must lie between 1 and {MAX_LIMIT}, not {limit}", field="--limit")
    if int(offset) < 0:
        raise InputError(f"offset must not be negative, not {offset}", field="--offset")


def _reason_sql(sel: Selection) -> tuple[str, list[Any]]:
    """Like :func:`_sel_sql` (the same verdict per answer and criterion) plus the judge's own
    words: raw_verdict, reason, error and the judge round they come from. Under the majority the
    words are those of the first judge round whose verdict agrees with the majority."""
    where, params = [], []
    if sel.gen_round is not None:
        where.append("gen_round = ?")
        params.append(int(sel.gen_round))
    if not sel.majority:
        where.append("judge_round = ?")
        params.append(int(sel.judge_round or 1))
        return ("SELECT item_id, gen_round, criterion, passed, label, score, raw_verdict, reason, error, judge_round "
                f"FROM read_parquet(?) WHERE {' AND '.join(where)}", params)
    w = ("WHERE " + " AND ".join(where)) if where else ""
    key = "v.item_id = m.item_id AND v.gen_round = m.gen_round AND v.criterion = m.criterion"
    sql = (f"WITH v AS (SELECT * FROM read_parquet(?) {w}), "
           "m AS (SELECT item_id, gen_round, criterion, "
           "CASE WHEN count(passed) = 0 THEN NULL ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END AS passed, "
           "mode(label) AS label, avg(score) AS score FROM v GROUP BY item_id, gen_round, criterion), "
           f"pick AS (SELECT m.item_id, m.gen_round, m.criterion, min(v.judge_round) AS jr FROM m JOIN v ON {key} "
           "AND v.passed IS NOT DISTINCT FROM m.passed GROUP BY ALL) "
           "SELECT m.item_id, m.gen_round, m.criterion, m.passed, m.label, m.score, v.raw_verdict, v.reason, v.error, "
           f"v.judge_round FROM m JOIN pick USING (item_id, gen_round, criterion) JOIN v ON {key} AND v.judge_round = pick.jr")
    return sql, params


def _keys_sql() -> str:
    """A table of (item_id, gen_round) from two bound lists."""
    return "SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round"


def _answer_texts(store: Store, gen_id: str, keys: list[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Input, class, output and the abstained flag of a few answers."""
    if not keys:
        return {}
    gen = store.generation(gen_id)
    rows = store.records(
        f"WITH k AS ({_keys_sql()}) SELECT k.item_id, k.gen_round, i.class, i.input, o.output, o.abstained "
        "FROM k LEFT JOIN read_parquet(?) o ON o.item_id = k.item_id AND o.round = k.gen_round "
        "LEFT JOIN read_parquet(?) i ON i.item_id = k.item_id",
        [[k[0] for k in keys], [int(k[1]) for k in keys], store.path_of("generation", gen_id, "outputs"),
         store.path_of("suite", gen.manifest.suite_id, "items")])
    return {(r["item_id"], r["gen_round"]): r for r in rows}


def _page_of(store: Store, members_sql: str, params: list[Any], limit: int, offset: int) -> tuple[int, list[tuple]]:
    """The total and one page of (item_id, gen_round) of a membership query."""
    total = store.sql(f"SELECT count(*) FROM ({members_sql})", params)[0][0]
    page = store.sql(f"SELECT item_id, gen_round FROM ({members_sql}) ORDER BY item_id, gen_round LIMIT ? OFFSET ?",
                     [*params, int(limit), int(offset)])
    return total, [(r[0], r[1]) for r in page]


def _words(store: Store, run_id: str, sel: Selection, criteria: list[str],
           keys: list[tuple[str, int]]) -> dict[tuple[str, int, str], dict[str, Any]]:
    """A run's verdict and reason on some criteria of a few answers."""
    if not keys:
        return {}
    rsql, rparams = _reason_sql(sel)
    rows = store.records(
        f"WITH k AS ({_keys_sql()}), r AS ({rsql}) SELECT r.* FROM r JOIN k USING (item_id, gen_round) "
        "WHERE list_contains(?::VARCHAR[], r.criterion)",
        [[k[0] for k in keys], [int(k[1]) for k in keys], store.path_of("run", run_id, "verdicts"), *rparams,
         list(criteria)])
    return {(r["item_id"], r["gen_round"], r["criterion"]): r for r in rows}


def _said(row: dict[str, Any] | None) -> dict[str, Any]:
    if row is None:
        return {"passed": None, "raw_verdict": None, "reason": None, "error": None, "judge_round": None,
                "missing": True}
    return {"passed": row["passed"], "raw_verdict": row.get("raw_verdict"), "reason": row.get("reason"),
            "error": row.get("error"), "judge_round": row.get("judge_round"), "missing": False}


def answers_failing(store: Store, run_id: str, criterion: str, only: bool = False, sel: Selection = Selection(),
                    limit: int = 25, offset: int = 0) -> dict[str, Any]:
    """The answers a run fails on ``criterion`` (with ``only``: the answers that fail it and no
    other criterion, among answers with a verdict on every criterion and none errored: what a
    gate on that criterion alone would block), each with its input, output, class and the judge's
    verdict and reason. ``total`` equals :func:`attribution`'s ``failed`` (``fail_only_this``)."""
    _check_criterion(store, run_id, criterion)
    _check_judge_round(store, run_id, sel)
    _check_page(limit, offset)
    m = store.run(run_id).manifest
    vpath = store.path_of("run", run_id, "verdicts")
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    if only:
        members = (f"WITH sel AS ({base}), per AS (SELECT item_id, gen_round, count(*) AS present, "
                   "count(*) - count(passed) AS errored, count(*) FILTER (WHERE NOT passed) AS fails, "
                   "count(*) FILTER (WHERE NOT passed AND criterion = ?) AS this FROM sel GROUP BY item_id, gen_round) "
                   "SELECT item_id, gen_round FROM per WHERE errored = 0 AND present = ? AND fails = 1 AND this = 1")
        mparams = [vpath, *params, criterion, len(m.rubric.criteria)]
    else:
        members = f"SELECT item_id, gen_round FROM ({base}) WHERE criterion = ? AND NOT passed"
        mparams = [vpath, *params, criterion]
    total, keys = _page_of(store, members, mparams, limit, offset)
    texts = _answer_texts(store, m.gen_id, keys)
    words = _words(store, run_id, sel, [criterion], keys)
    answers = []
    for k in keys:
        t = texts.get(k, {})
        w = words.get((k[0], k[1], criterion), {})
        answers.append({"item_id": k[0], "gen_round": k[1], "class": t.get("class"), "input": t.get("input"),
                        "output": t.get("output"), "abstained": t.get("abstained"),
                        "label": w.get("label"), "score": w.get("score"), **_said(w or None)})
    return {**_run_status(store, run_id), "criterion": criterion, "only": bool(only), "selection": sel.describe(),
            "total": total, "offset": int(offset), "limit": int(limit), "answers": answers}


def _same_generation(store: Store, run_ids: list[str]) -> str:
    """The generation every run judges, or the error :func:`association` gives."""
    if not run_ids:
        raise InputError("give at least one run", field="RUN")
    gens = {rid: store.run(rid).manifest.gen_id for rid in run_ids}
    if len(set(gens.values())) > 1:
        listing = ", ".join(f"{r} -> {g}" for r, g in gens.items())
        raise InputError(f"runs judge different generations ({listing}): association compares instruments on the "
                         "same answers", field="RUN")
    return next(iter(gens.values()))


def _people_hold(store: Store, gen_id: str, sel: Selection, ps: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    """People's rows without the holdout items of the generation's suite (unless included)."""
    cond, cparams = holdout_filter(store, store.generation(gen_id).manifest.suite_id, sel.include_holdout)
    if not cond:
        return ps
    return f"SELECT * FROM ({ps[0]}) WHERE {cond}", [*ps[1], *cparams]


def _people_sql(store: Store, gen_id: str, sel: Selection) -> tuple[str, list[Any]]:
    ps = _people_rows_sql(store, gen_id)
    if ps is None:
        raise NotFoundError(f"no human labels for generation {gen_id} (label sets or the label store)",
                            field="--human")
    ps = _people_hold(store, gen_id, sel, ps)
    if sel.gen_round is None:
        return ps
    return f"SELECT * FROM ({ps[0]}) WHERE gen_round = ?", [*ps[1], int(sel.gen_round)]


def _ab_sql(rows_sql: str) -> str:
    """Per answer, the verdicts on two criteria (parameters: the rows', then a, b, a, b)."""
    return (f"WITH sel AS ({rows_sql}) SELECT item_id, gen_round, "
            "bool_or(passed) FILTER (WHERE criterion = ?) AS a, bool_or(passed) FILTER (WHERE criterion = ?) AS b "
            "FROM sel WHERE criterion IN (?, ?) GROUP BY item_id, gen_round")


def people_crosstab(store: Store, gen_id: str, a: str, b: str, sel: Selection = Selection()) -> dict[str, Any]:
    """:func:`crosstab` for people: the 2x2 of two criteria over the answers people labelled in
    a generation (the label sets shipped with the data, overridden by current labels of the
    label store, as in :func:`association`). Only ``sel.gen_round`` applies."""
    if a == b:
        raise InputError("--a and --b name the same criterion", field="--b")
    store.generation(gen_id)
    rows_sql, rparams = _people_sql(store, gen_id, sel)
    row = store.records(
        f"WITH ab AS ({_ab_sql(rows_sql)}) SELECT count(*) FILTER (WHERE a AND b) AS pp, "
        "count(*) FILTER (WHERE a AND NOT b) AS pf, count(*) FILTER (WHERE NOT a AND b) AS fp, "
        "count(*) FILTER (WHERE NOT a AND NOT b) AS ff, count(*) FILTER (WHERE a IS NULL OR b IS NULL) AS excluded "
        "FROM ab", [*rparams, a, b, a, b])[0]
    t = stats.TwoByTwo(row["pp"], row["pf"], row["fp"], row["ff"])
    return {"instrument": PEOPLE, "gen_id": gen_id, "a": a, "b": b, "selection": {"gen_round": sel.gen_round},
            **two_by_two_report(t, a, b), "excluded_answers": row["excluded"]}


def cell_answers(store: Store, run_ids: list[str], a: str, b: str, a_failed: bool, b_failed: bool, in_run: str,
                 human: bool = False, sel: Selection = Selection(), limit: int = 25, offset: int = 0) -> dict[str, Any]:
    """The answers in one cell of the 2x2 of ``a`` (rows) and ``b`` (columns) as instrument
    ``in_run`` (one of ``run_ids``, or ``"people"``) judged them, each with its input and output
    and every instrument's verdict and reason on the two criteria (people give a verdict, no
    reason). ``total`` equals that cell of :func:`crosstab` (:func:`people_crosstab`)."""
    run_ids = list(run_ids)
    if len(set(run_ids)) != len(run_ids):
        raise InputError("a run is named twice", field="RUN")
    gen_id = _same_generation(store, run_ids)
    if a == b:
        raise InputError("--a and --b name the same criterion", field="--b")
    human = human or in_run == PEOPLE
    if in_run != PEOPLE and in_run not in run_ids:
        raise InputError(f"--in {in_run!r} is not one of the runs ({', '.join(run_ids)})"
                         + (" or people" if human else ""), field="--in")
    for rid in run_ids:
        _check_criterion(store, rid, a)
        _check_criterion(store, rid, b)
        _check_judge_round(store, rid, sel)
    _check_page(limit, offset)
    if in_run == PEOPLE:
        rows_sql, rparams = _people_sql(store, gen_id, sel)
    else:
        base, params = _sel_sql(sel, _hold(store, in_run, sel))
        rows_sql, rparams = base, [store.path_of("run", in_run, "verdicts"), *params]
    members = f"SELECT item_id, gen_round FROM ({_ab_sql(rows_sql)}) WHERE a = ? AND b = ?"
    total, keys = _page_of(store, members, [*rparams, a, b, a, b, not a_failed, not b_failed], limit, offset)
    texts = _answer_texts(store, gen_id, keys)
    words = {rid: _words(store, rid, sel, [a, b], keys) for rid in run_ids}
    people: dict[tuple[str, int, str], dict[str, Any]] = {}
    if human and keys:
        psql, pparams = _people_sql(store, gen_id, sel)
        for r in store.records(f"WITH k AS ({_keys_sql()}), p AS ({psql}) SELECT p.* FROM p JOIN k USING "
                               "(item_id, gen_round) WHERE p.criterion IN (?, ?)",
                               [[k[0] for k in keys], [int(k[1]) for k in keys], *pparams, a, b]):
            people[(r["item_id"], r["gen_round"], r["criterion"])] = {**r, "reason": None, "raw_verdict": None,
                                                                     "error": None, "judge_round": None}
    answers = []
    for k in keys:
        t = texts.get(k, {})
        verdicts = {rid: {c: _said(words[rid].get((k[0], k[1], c))) for c in (a, b)} for rid in run_ids}
        if human:
            verdicts[PEOPLE] = {c: _said(people.get((k[0], k[1], c))) for c in (a, b)}
        answers.append({"item_id": k[0], "gen_round": k[1], "class": t.get("class"), "input": t.get("input"),
                        "output": t.get("output"), "abstained": t.get("abstained"), "verdicts": verdicts})
    return {"gen_id": gen_id, "in": in_run, "a": a, "b": b, "a_failed": bool(a_failed), "b_failed": bool(b_failed),
            "instruments": run_ids + ([PEOPLE] if human else []), "selection": sel.describe(),
            "total": total, "offset": int(offset), "limit": int(limit), "answers": answers}


def flip_answers(store: Store, run_a: str, run_b: str, criterion: str, direction: str = "fail_a_pass_b",
                 sel: Selection = Selection(), limit: int = 25, offset: int = 0) -> dict[str, Any]:
    """The answers behind one cell of :func:`flips` for ``criterion``: ``fail_a_pass_b`` (A fails
    them and B passes them), ``pass_a_fail_b`` or ``fail_both``, each with its input, output and
    both runs' verdicts and reasons. ``total`` equals the matching count of :func:`flips`."""
    if direction not in DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}", field="--direction")
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    if ma.gen_id != mb.gen_id:
        raise InputError(f"{run_a} judges generation {ma.gen_id} and {run_b} judges {mb.gen_id}: flips compare "
                         "two harnesses on the same answers", field="RUN_B")
    _check_criterion(store, run_a, criterion)
    _check_criterion(store, run_b, criterion)
    _check_judge_round(store, run_a, sel)
    _check_judge_round(store, run_b, sel)
    _check_page(limit, offset)
    cond = {"fail_a_pass_b": "NOT pa AND pb", "pass_a_fail_b": "pa AND NOT pb", "fail_both": "NOT pa AND NOT pb"}[direction]
    base, params = _sel_sql(sel, _hold(store, run_a, sel))
    members = (f"WITH a AS ({base}), b AS ({base}) SELECT item_id, gen_round FROM (SELECT item_id, gen_round, "
               "a.passed AS pa, b.passed AS pb FROM a JOIN b USING (item_id, gen_round, criterion) WHERE criterion = ? "
               f"AND a.passed IS NOT NULL AND b.passed IS NOT NULL) WHERE {cond}")
    total, keys = _page_of(store, members, [store.path_of("run", run_a, "verdicts"), *params,
                                            store.path_of("run", run_b, "verdicts"), *params, criterion], limit, offset)
    texts = _answer_texts(store, ma.gen_id, keys)
    wa = _words(store, run_a, sel, [criterion], keys)
    wb = _words(store, run_b, sel, [criterion], keys)
    answers = []
    for k in keys:
        t = texts.get(k, {})
        answers.append({"item_id": k[0], "gen_round": k[1], "class": t.get("class"), "input": t.get("input"),
                        "output": t.get("output"), "abstained": t.get("abstained"),
                        "a": _said(wa.get((k[0], k[1], criterion))), "b": _said(wb.get((k[0], k[1], criterion)))})
    return {"run_a": run_a, "run_b": run_b, "gen_id": ma.gen_id, "criterion": criterion, "direction": direction,
            "selection": sel.describe(),
            "warnings": [f"run {r} is {s}" for r, s in ((run_a, ma.status), (run_b, mb.status)) if s != "complete"],
            "total": total, "offset": int(offset), "limit": int(limit), "answers": answers}


def composition_shift(fl: dict[str, Any], *, within: float = 0.01) -> dict[str, Any]:
    """What the aggregate hides in a :func:`flips` result: the change in the all-pass rate, how far
    the composition of failures moved (total variation distance between the two shares: half the
    sum of |share under A - share under B|, 0 = the same mix, 1 = no criterion in common), and how
    many answer-criterion verdicts flipped; ``most_moved`` names the criterion whose share moved
    most, with its share under each. ``hidden`` is true when the all-pass rates are within
    ``within`` (one point) of each other while some verdicts flipped."""
    a, b = fl["all_pass"]["a"], fl["all_pass"]["b"]
    delta = None if a is None or b is None else b - a
    tv = 0.5 * sum(abs((c["share_of_failures_a"] or 0.0) - (c["share_of_failures_b"] or 0.0)) for c in fl["criteria"])
    flipped = sum(c["fail_a_pass_b"] + c["pass_a_fail_b"] for c in fl["criteria"])
    moved = sorted(fl["criteria"], key=lambda c: -abs((c["share_of_failures_a"] or 0.0) - (c["share_of_failures_b"] or 0.0)))
    top = moved[0] if moved and tv > 0 else None
    return {"all_pass_delta": delta, "composition_distance": tv, "flipped_verdicts": flipped,
            "most_moved": None if top is None else {"criterion": top["criterion"], "share_a": top["share_of_failures_a"],
                                                    "share_b": top["share_of_failures_b"]},
            "hidden": delta is not None and abs(delta) <= within and flipped > 0}
