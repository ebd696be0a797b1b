"""Probes of the analytics bench: evalcore's form of a slow query against a proposed one, both
checked to return the same numbers (docs/BENCHMARKS.md, findings)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from computations import (  # noqa: E402  (bench/ is on sys.path when these run)
    ANALYTIC_ABOVE,
    BOOT_SEED,
    COST_RUN,
    LEVEL,
    N_BOOT,
    RUN_A,
    RUN_B,
    Ctx,
    _crit_names,
    _pairs,
    phi_bootstrap,
)

BENCH_DIR = Path(os.environ.get("EVALCORE_BENCH_DIR", "/tmp/evalcore-bench"))


# --------------------------------------------------------------------------- probes: where the time goes
# Diagnostics behind the findings in docs/BENCHMARKS.md, each variant in its own process like the
# rest. `evalcore-sql` variants run the SQL that evalcore ran when this bench was written (copied
# here, or built with evalcore's own private helpers); the other variant is the proposed fix. Each
# pair must return the same numbers.

def _rates_sql(distinct: bool) -> str:
    return ("SELECT judge_round, count(*) AS n, count(passed) AS judged, "
            "avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate"
            + (", count(DISTINCT item_id) AS items" if distinct else "")
            + " FROM read_parquet(?) GROUP BY judge_round ORDER BY judge_round")


def probe_rates(c: Ctx, distinct: bool) -> dict:
    out = {}
    for rid in c.run_ids():
        for row in c.q(_rates_sql(distinct), [c.v(rid)]):
            out.update({f"{rid}.{row[0]}.n": row[1], f"{rid}.{row[0]}.judged": row[2], f"{rid}.{row[0]}.rate": row[3]})
    return out


def _people_fails(c: Ctx) -> dict:
    crits = _crit_names(c, RUN_A)
    labels = ", ".join(f"'{p}'" for p in c.labels())
    hcols = ", ".join(f"bool_or(NOT passed) FILTER (WHERE criterion = '{cr}') AS h_{cr}" for cr in crits)
    res = c.con().cursor().execute(
        f"WITH l AS (SELECT item_id, gen_round, criterion, 2 * count(*) FILTER (WHERE passed) > count(passed) AS passed "
        f"FROM read_parquet([{labels}]) GROUP BY ALL) SELECT item_id, gen_round, {hcols} FROM l GROUP BY ALL "
        "ORDER BY item_id, gen_round").fetchnumpy()
    return {cr: res[f"h_{cr}"].astype(bool) for cr in crits}


def probe_boot_per_pair(f: dict) -> dict:
    from evalcore.stats import association as stats
    out = {}
    for a, b in _pairs(sorted(f)):
        iv = stats.phi_intervals_paired({"people": (f[a], f[b])}, seed=BOOT_SEED, n_boot=N_BOOT, level=LEVEL,
                                        analytic_above=ANALYTIC_ABOVE)["people"]
        out[f"{a}x{b}.lo"], out[f"{a}x{b}.hi"] = iv[0], iv[1]
    return out


def probe_boot_once(f: dict) -> dict:
    out = {}
    for (a, b), (lo, hi) in phi_bootstrap(f, _pairs(sorted(f))).items():
        out[f"{a}x{b}.lo"], out[f"{a}x{b}.hi"] = lo, hi
    return out


def _people_join_setup(c: Ctx, semijoin: bool):
    """evalcore.analysis.instruments(..., human=True)'s people join, built with evalcore's own helpers;
    with `semijoin`, each run's verdict rows are first restricted to the labelled items."""
    from evalcore import analysis as A
    store, sel, crits = c.store(), A.Selection(), _crit_names(c, RUN_A)
    parts = []
    for i, rid in enumerate([RUN_A, RUN_B]):
        rsql, rparams = A._verdict_rows_sql(store, rid, sel)
        if semijoin:
            rsql = f"SELECT * FROM ({rsql}) WHERE item_id IN (SELECT item_id FROM read_parquet(?::VARCHAR[]))"
            rparams = [*rparams, c.labels()]
        psql, pparams = A._pivot_sql(rsql, rparams, crits, f"i{i}")
        parts.append((f"i{i}", psql, pparams))
    hsql, hparams = A._people_rows_sql(store, store.run(RUN_A).manifest.gen_id)
    psql, pparams = A._pivot_sql(hsql, hparams, crits, "hp")
    return lambda: A._joined(store, [("hp", psql, pparams)] + parts, len(crits))


def probe_people_join(run) -> dict:
    import numpy as np
    res = run()
    return {k: float(np.nansum(np.asarray(v, dtype=float))) for k, v in res.items() if k not in ("item_id", "gen_round")} | {
        "rows": len(next(iter(res.values())))}


def probe_flips_evalcore_sql(c: Ctx) -> dict:
    """The two queries of evalcore.analysis.flips (judge round 1) before fef4f6b."""
    crits = _crit_names(c, RUN_A)
    base = ("SELECT item_id, gen_round, criterion, passed, label, score, position FROM read_parquet(?) "
            "WHERE judge_round = ?")
    rows = c.q(
        f"WITH a AS ({base}), b AS ({base}), j AS (SELECT criterion, a.passed AS pa, b.passed AS pb, item_id, gen_round "
        "FROM a JOIN b USING (item_id, gen_round, criterion) WHERE a.passed IS NOT NULL AND b.passed IS NOT NULL "
        "AND list_contains(?::VARCHAR[], criterion)) "
        "SELECT criterion, count(*) AS n, count(*) FILTER (WHERE NOT pa) AS fail_a, count(*) FILTER (WHERE NOT pb) AS fail_b, "
        "count(*) FILTER (WHERE NOT pa AND pb) AS fail_a_pass_b, count(*) FILTER (WHERE pa AND NOT pb) AS pass_a_fail_b, "
        "count(*) FILTER (WHERE NOT pa AND NOT pb) AS fail_both FROM j GROUP BY criterion",
        [c.v(RUN_A), 1, c.v(RUN_B), 1, crits])
    k = len(crits)
    allp = c.q(
        f"WITH a AS ({base}), b AS ({base}), j AS (SELECT item_id, gen_round, a.passed AS pa, b.passed AS pb "
        "FROM a JOIN b USING (item_id, gen_round, criterion) WHERE list_contains(?::VARCHAR[], criterion)), "
        "per AS (SELECT item_id, gen_round, count(*) AS k, count(pa) AS ka, count(pb) AS kb, bool_and(pa) AS all_a, "
        "bool_and(pb) AS all_b FROM j GROUP BY item_id, gen_round) "
        "SELECT count(*) FILTER (WHERE k = ? AND ka = k AND kb = k) AS answers, "
        "count(*) FILTER (WHERE k = ? AND ka = k AND kb = k AND all_a) AS all_pass_a, "
        "count(*) FILTER (WHERE k = ? AND ka = k AND kb = k AND all_b) AS all_pass_b FROM per",
        [c.v(RUN_A), 1, c.v(RUN_B), 1, crits, k, k, k])[0]
    out = {f"all_pass.{n}": v for n, v in zip(("answers", "passed_a", "passed_b"), allp)}
    for r in rows:
        out.update({f"{r[0]}.{n}": v for n, v in zip(("n", "fa", "fb", "fapb", "pafb", "both"), r[1:])})
    return out


def probe_flips_pivot_sql(c: Ctx) -> dict:
    """The same numbers from one query that first pivots each run to one row per answer (six verdicts
    and six presence counts), then joins the two million-row pivots instead of two 6M-row tables."""
    crits = _crit_names(c, RUN_A)

    def pivot(path):
        cols = ", ".join(f"bool_or(passed) FILTER (WHERE criterion = '{cr}') AS p_{cr}, "
                         f"count(*) FILTER (WHERE criterion = '{cr}') AS k_{cr}" for cr in crits)
        return f"SELECT item_id, gen_round, {cols} FROM read_parquet('{path}') WHERE judge_round = 1 GROUP BY ALL"

    per = []
    for cr in crits:
        both = f"a.p_{cr} IS NOT NULL AND b.p_{cr} IS NOT NULL"
        per += [f"count(*) FILTER (WHERE {both})", f"count(*) FILTER (WHERE {both} AND NOT a.p_{cr})",
                f"count(*) FILTER (WHERE {both} AND NOT b.p_{cr})",
                f"count(*) FILTER (WHERE {both} AND NOT a.p_{cr} AND b.p_{cr})",
                f"count(*) FILTER (WHERE {both} AND a.p_{cr} AND NOT b.p_{cr})",
                f"count(*) FILTER (WHERE {both} AND NOT a.p_{cr} AND NOT b.p_{cr})"]
    full = " AND ".join(f"a.k_{cr} = 1 AND b.k_{cr} = 1 AND a.p_{cr} IS NOT NULL AND b.p_{cr} IS NOT NULL" for cr in crits)
    all_a = " AND ".join(f"a.p_{cr}" for cr in crits)
    all_b = " AND ".join(f"b.p_{cr}" for cr in crits)
    row = c.q(f"WITH a AS ({pivot(c.v(RUN_A))}), b AS ({pivot(c.v(RUN_B))}) SELECT count(*) FILTER (WHERE {full}), "
              f"count(*) FILTER (WHERE {full} AND {all_a}), count(*) FILTER (WHERE {full} AND {all_b}), "
              f"{', '.join(per)} FROM a JOIN b USING (item_id, gen_round)")[0]
    out = {f"all_pass.{n}": v for n, v in zip(("answers", "passed_a", "passed_b"), row[:3])}
    for i, cr in enumerate(crits):
        vals = row[3 + 6 * i:3 + 6 * (i + 1)]
        if vals[0]:
            out.update({f"{cr}.{n}": v for n, v in zip(("n", "fa", "fb", "fapb", "pafb", "both"), vals)})
    return out


# evalcore.analysis.comparison's SQL at 89b9eb5 (the commit whose compare is measured above), copied so that the probe
# stays what it was while evalcore moves on: _pivot_sql over _sel_sql (judge round 1; the bench suite has no
# holdout items, so no holdout condition), per_round, _item_sql and _summary_sql.

def _c89_pivot(c: Ctx, run: str, crits: list[str]) -> tuple[str, list]:
    base = ("SELECT item_id, gen_round, criterion, passed, label, score, position FROM read_parquet(?) "
            "WHERE judge_round = ?")
    cols = ", ".join(f"bool_or(passed) FILTER (WHERE criterion = ?) AS c{i}" for i in range(len(crits)))
    sql = (f"SELECT item_id, gen_round, CASE WHEN count(passed) < ? THEN NULL ELSE bool_and(passed) END AS all_pass"
           f"{', ' + cols if cols else ''} FROM ({base}) GROUP BY item_id, gen_round")
    return sql, [len(_crit_names(c, run)), *crits, c.v(run), 1]


def _c89_per_round(piv: str, n_crits: int) -> str:
    cols = ["avg(all_pass::INT) AS all_pass"] + [f"avg(c{i}::INT) AS c{i}" for i in range(n_crits)]
    return f"SELECT gen_round, count(*) AS answers, {', '.join(cols)} FROM ({piv}) GROUP BY gen_round ORDER BY gen_round"


def _c89_item(pa: str, pb: str, n_crits: int) -> str:
    names = ["all_pass"] + [f"c{i}" for i in range(n_crits)]
    sel_cols = ", ".join(f"a.{n} AS a{j}, b.{n} AS b{j}" for j, n in enumerate(names))
    aggs = []
    for j in range(len(names)):
        both = f"a{j} IS NOT NULL AND b{j} IS NOT NULL"
        aggs.append(f"count(*) FILTER (WHERE {both}) AS nn{j}, count(*) FILTER (WHERE b{j}::INT > a{j}::INT) AS up{j}, "
                    f"count(*) FILTER (WHERE b{j}::INT < a{j}::INT) AS down{j}, avg(b{j}::INT - a{j}::INT) AS d{j}, "
                    f"bool_and(NOT a{j}) AS amiss{j}, bool_and(NOT b{j}) AS bmiss{j}, "
                    f"var_samp(a{j}::DOUBLE) AS va{j}, var_samp(b{j}::DOUBLE) AS vb{j}")
    return (f"WITH a AS ({pa}), b AS ({pb}), j AS (SELECT item_id, gen_round, {sel_cols} FROM a JOIN b "
            f"USING (item_id, gen_round)), per_item AS (SELECT item_id, count(*) AS paired, {', '.join(aggs)} FROM j "
            "GROUP BY item_id)")


def _c89_summary(n_metrics: int, rounds: int) -> str:
    cols = []
    for j in range(n_metrics):
        full = f"nn{j} = paired AND paired = {int(rounds)} AND paired > 0"
        cols.append(
            f"count(d{j}) AS n{j}, avg(d{j}) AS mean{j}, stddev_samp(d{j}) AS sd{j}, "
            f"coalesce(list(item_id ORDER BY item_id) FILTER (WHERE {full} AND up{j} = paired), []) AS wins{j}, "
            f"coalesce(list(item_id ORDER BY item_id) FILTER (WHERE {full} AND down{j} = paired), []) AS regs{j}, "
            f"coalesce(list(item_id ORDER BY item_id) FILTER (WHERE bmiss{j} AND NOT amiss{j}), []) AS new{j}, "
            f"coalesce(list(item_id ORDER BY item_id) FILTER (WHERE amiss{j} AND NOT bmiss{j}), []) AS fixed{j}, "
            f"avg(va{j}) AS va{j}, avg(vb{j}) AS vb{j}")
    return "SELECT " + ", ".join(cols) + " FROM per_item"


def probe_compare_sql(c: Ctx, form: str) -> dict:
    """compare's SQL as evalcore 89b9eb5 ran it (copied above). ``evalcore``: per_round pivots each run,
    then the summary query pivots both again, joins them, aggregates per item and builds, for every
    figure, the sorted lists of every stable win, stable regression, new miss and fixed miss. ``counts``:
    the same with each list replaced by its count. ``once``: each run pivoted once and the per-item rows
    computed once (tables), the per-round rates and the counted summary from them, and the headline's
    first 50 stable wins, regressions and new misses (what the page lists) by three ``ORDER BY item_id
    LIMIT 50`` queries. ``once-novar``: ``once`` without the per-item variances across generation rounds
    (``var_samp``, for ``power`` only), which are null with one round."""
    import re
    crits = _crit_names(c, RUN_A)
    metrics = ["all_pass", *crits]
    once = form.startswith("once")
    out: dict[str, Any] = {}
    cur = c.con().cursor()
    try:
        pivots = {run: _c89_pivot(c, run, crits) for run in (RUN_A, RUN_B)}
        figs = []
        for tag, run in (("a", RUN_A), ("b", RUN_B)):
            piv, params = pivots[run]
            if once:
                cur.execute(f"CREATE OR REPLACE TEMP TABLE probe_cmp_{tag} AS {piv}", params)
                piv, params = f"SELECT * FROM probe_cmp_{tag}", []
            rows = cur.execute(_c89_per_round(piv, len(crits)), params).fetchall()
            figs.append({name: [r[2 + j] for r in rows] for j, name in enumerate(metrics)})
        for run, f in zip((RUN_A, RUN_B), figs):
            for name in metrics:
                for i, v in enumerate(f[name]):
                    out[f"{run}.r{i + 1}.{name}"] = v
        rounds = min(len(figs[0]["all_pass"]), len(figs[1]["all_pass"]))
        if once:
            cte, params = _c89_item("SELECT * FROM probe_cmp_a", "SELECT * FROM probe_cmp_b", len(crits)), []
        else:
            cte, params = _c89_item(pivots[RUN_A][0], pivots[RUN_B][0], len(crits)), [*pivots[RUN_A][1], *pivots[RUN_B][1]]
        summary = _c89_summary(len(metrics), rounds)
        if form != "evalcore":
            summary = re.sub(r"coalesce\(list\(item_id ORDER BY item_id\) FILTER \(WHERE ([^)]*)\), \[\]\) AS (\w+)",
                             r"count(*) FILTER (WHERE \1) AS \2", summary)
        if form == "once-novar":
            assert rounds < 2, "the variances are null only with one generation round"
            cte = re.sub(r", var_samp\(a\d+::DOUBLE\) AS va\d+, var_samp\(b\d+::DOUBLE\) AS vb\d+", "", cte)
            summary = re.sub(r", avg\(va\d+\) AS va\d+, avg\(vb\d+\) AS vb\d+", "", summary)
            assert "var_samp" not in cte and "avg(va" not in summary
        if once:
            cur.execute(f"CREATE OR REPLACE TEMP TABLE probe_cmp_items AS {cte} SELECT * FROM per_item")
            res = cur.execute(f"WITH per_item AS (SELECT * FROM probe_cmp_items) {summary}")
        else:
            res = cur.execute(cte + " " + summary, params)
        row = dict(zip([d[0] for d in res.description], res.fetchone()))
        if once:
            full = f"nn0 = paired AND paired = {int(rounds)} AND paired > 0"
            for cond in (f"{full} AND up0 = paired", f"{full} AND down0 = paired", "bmiss0 AND NOT amiss0"):
                cur.execute(f"SELECT item_id FROM probe_cmp_items WHERE {cond} ORDER BY item_id LIMIT 50").fetchall()
            cur.execute("DROP TABLE probe_cmp_a; DROP TABLE probe_cmp_b; DROP TABLE probe_cmp_items")
    finally:
        cur.close()
    for j, name in enumerate(metrics):
        out.update({f"{name}.n": row[f"n{j}"], f"{name}.mean": row[f"mean{j}"], f"{name}.sd": row[f"sd{j}"]})
        for k in ("wins", "regs", "new", "fixed"):
            v = row[f"{k}{j}"]
            out[f"{name}.{k}"] = len(v) if form == "evalcore" else v
    return out


def probe_callscan(c: Ctx, split: bool) -> dict:
    """run_cost's (and cost_table's) scan of calls.parquet: evalcore.analysis.cost._call_scan, one query with the
    count(DISTINCT ...) of answers, items and rounds beside the sums and quantiles; or the same numbers
    from two queries (the sums and quantiles; the distinct counts alone)."""
    path = c.calls(COST_RUN)
    if not split:
        from evalcore.analysis.cost import _call_scan
        tot, counts = _call_scan(c.store(), path)
        keys = ("calls", "failed_calls", "answers", "tokens_in", "tokens_out", "cost_usd", "cost_unknown_calls",
                "latency_ms_mean", "latency_ms_p50", "latency_ms_p95", "latency_ms_total", "cache_hits")
        return {**{k: tot[k] for k in keys}, **{f"n_{k}": v for k, v in counts.items()}}
    a = c.q("SELECT count(*), count(error), sum(tokens_in), sum(tokens_out), sum(cost_usd), count(*) - count(cost_usd), "
            "avg(latency_ms), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95), sum(latency_ms), "
            "count(*) FILTER (WHERE cache_hit) FROM read_parquet(?)", [path])[0]
    d = c.q("SELECT count(DISTINCT (item_id, gen_round)), count(DISTINCT item_id), count(DISTINCT (gen_round, judge_round)), "
            "count(DISTINCT gen_round) FROM read_parquet(?)", [path])[0]
    return {"calls": a[0], "failed_calls": a[1], "answers": d[0], "tokens_in": a[2], "tokens_out": a[3],
            "cost_usd": a[4], "cost_unknown_calls": a[5], "latency_ms_mean": a[6], "latency_ms_p50": a[7],
            "latency_ms_p95": a[8], "latency_ms_total": a[9], "cache_hits": a[10], "n_items": d[1], "n_answers": d[0],
            "n_rounds": d[2], "n_gen_rounds": d[3]}


def _projection_setup(c: Ctx):
    """c_k of each criterion as run_cost's projection counts them (evalcore.analysis.cost.criterion_tokens; the
    tokenizer is not timed)."""
    from evalcore.analysis.cost import criterion_tokens
    m = c.store().run(COST_RUN).manifest
    ck = {r["criterion"]: r["tokens"] for r in criterion_tokens(m.rubric, m.knobs, m.judge_model, m.rubric.names())}
    return c, ck


def probe_projection(arg, one_scan: bool) -> dict:
    """The projection's sums over calls.parquet: evalcore.analysis.cost._shared_tokens (a scan grouped by the calls'
    criteria list) then call_moments (a second scan); or both from one scan grouped by the list."""
    from evalcore.analysis import cost as K
    c, ck = arg
    path = c.calls(COST_RUN)
    if not one_scan:
        s, sd, n = K._shared_tokens(c.store(), path, ck)
        return {"S": s, "S_sd": sd, "S_n": n, **K.call_moments(c.store(), path)}
    moments = ", ".join(f"{agg} FILTER (WHERE {where})" for agg, where in K._MOMENTS.values())
    groups = c.q(f"SELECT criteria, count(*) FILTER (WHERE {K._DONE}), sum(tokens_in::DOUBLE) FILTER (WHERE {K._DONE}), "
                 f"sum(tokens_in::DOUBLE * tokens_in) FILTER (WHERE {K._DONE}), {moments} FROM read_parquet(?) "
                 "GROUP BY criteria", [path])
    n = sum(g[1] for g in groups)
    s1 = s2 = 0.0
    for g in groups:
        if not g[1]:
            continue
        k = float(sum(ck.get(name, 0) for name in (g[0] or [])))
        s1 += g[2] - g[1] * k
        s2 += g[3] - 2 * k * g[2] + g[1] * k * k
    mean = s1 / n if n else None
    out = {"S": mean, "S_sd": math.sqrt(max(s2 / n - mean * mean, 0.0)) if n else None, "S_n": n}
    for i, name in enumerate(K._MOMENTS):
        vals = [g[4 + i] for g in groups if g[4 + i] is not None]
        out[name] = float(sum(vals)) if vals else None
    return out


PROBES: dict[str, dict[str, Any]] = {
    "rates-distinct": dict(group="runs-items", run=lambda c: probe_rates(c, True),
                           what="runs_summary's verdict query per run, with count(DISTINCT item_id) (evalcore's)"),
    "rates-nodistinct": dict(group="runs-items", run=lambda c: probe_rates(c, False),
                             what="the same query without count(DISTINCT item_id)"),
    "boot-per-pair": dict(group="bootstrap", setup=_people_fails, run=probe_boot_per_pair,
                          what="people's phi intervals: evalcore.stats.phi_intervals_paired once per pair (15 draws; association before fef4f6b)"),
    "boot-once": dict(group="bootstrap", setup=_people_fails, run=probe_boot_once,
                      what="the same intervals from one draw of the resamples for all 15 pairs"),
    "people-join-evalcore": dict(group="people-join", setup=lambda c: _people_join_setup(c, False),
                                 run=probe_people_join,
                                 what="association --human's people join (evalcore's helpers): both runs pivoted whole"),
    "people-join-semijoin": dict(group="people-join", setup=lambda c: _people_join_setup(c, True),
                                 run=probe_people_join,
                                 what="the same join with each run's rows restricted to the labelled items first"),
    "flips-evalcore-sql": dict(group="flips-join", run=probe_flips_evalcore_sql,
                               what="flips' two queries before fef4f6b: a 6M x 6M join of verdict rows per query"),
    "flips-pivot-sql": dict(group="flips-join", run=probe_flips_pivot_sql,
                            what="one query: pivot each run to 1M answers, then join (evalcore's form since fef4f6b)"),
    "compare-evalcore-sql": dict(group="compare-sql", run=lambda c: probe_compare_sql(c, "evalcore"),
                                 what="compare's SQL at 89b9eb5 (copied): per_round pivots each run, the summary pivots "
                                      "both again and returns every figure's item lists in full"),
    "compare-counts-sql": dict(group="compare-sql", run=lambda c: probe_compare_sql(c, "counts"),
                               what="the same, with each item list replaced by its count"),
    "compare-pivot-once": dict(group="compare-sql", run=lambda c: probe_compare_sql(c, "once"),
                               what="counts, with each run pivoted once and the per-item rows made once (tables); "
                                    "the headline's first 50 wins, regressions, new misses by LIMIT queries"),
    "compare-once-novar": dict(group="compare-sql", run=lambda c: probe_compare_sql(c, "once-novar"),
                               what="the same without the per-item variances across generation rounds (var_samp, "
                                    "for power only; null with one round)"),
    "cost-callscan-evalcore": dict(group="cost-callscan", run=lambda c: probe_callscan(c, False),
                                   what="run_cost's scan of calls.parquet (evalcore.analysis.cost._call_scan): one query, "
                                        "count(DISTINCT) of answers, items, rounds beside the sums and quantiles"),
    "cost-callscan-split": dict(group="cost-callscan", run=lambda c: probe_callscan(c, True),
                                what="the same numbers from two queries: sums and quantiles; the distinct counts alone"),
    "cost-projection-evalcore": dict(group="cost-projection", setup=_projection_setup,
                                     run=lambda a: probe_projection(a, False),
                                     what="the projection's sums: _shared_tokens (a scan grouped by criteria list), "
                                          "then call_moments (a second scan)"),
    "cost-projection-onescan": dict(group="cost-projection", setup=_projection_setup,
                                    run=lambda a: probe_projection(a, True),
                                    what="the same sums from one scan grouped by criteria list"),
}


