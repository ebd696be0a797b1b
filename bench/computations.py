"""The computations the analytics bench measures, three ways each: ``*_ev`` (the evalcore library
function), ``*_duckdb`` (a hand-written DuckDB query of the same aggregate on the Parquet files, no
evalcore) and ``*_pandas`` (an idiomatic, vectorised pandas version); ``*_canon`` reduces each
result to the numbers that must agree. ALL DATA IS SIMULATED (evalcore.demo.scale)."""

from __future__ import annotations

import json
import math
import os
from datetime import datetime
from pathlib import Path

from evalcore.demo.scale import CRITERIA, SINGLE, SPLIT, SUITE  # noqa: E402

BENCH_DIR = Path(os.environ.get("EVALCORE_BENCH_DIR", "/tmp/evalcore-bench"))


# --------------------------------------------------------------------------- shared maths (no evalcore)
# The baselines use only these few formulas on counts, written here from their definitions, so
# that a baseline never calls evalcore; the equality check then also cross-checks evalcore.stats.

LEVEL = 0.90  # evalcore's default interval level for phi
N_BOOT, BOOT_SEED = 2000, 0  # evalcore association's defaults
ANALYTIC_ABOVE = 20000


def phi_counts(n11, r1, c1, n):
    """phi from the fail/fail count and the fail margins (fail coded 1); None when undefined."""
    den = r1 * (n - r1) * c1 * (n - c1)
    if n == 0 or den <= 0:
        return None
    return max(-1.0, min(1.0, (n * n11 - r1 * c1) / math.sqrt(den)))


def phi_analytic(n11, r1, c1, n, level=LEVEL):
    """phi +- z SE with the asymptotic SE of Bishop, Fienberg & Holland (1975), clipped to [-1, 1]."""
    from statistics import NormalDist
    ph = phi_counts(n11, r1, c1, n)
    if ph is None:
        return None, None, None
    p1, q1, p2, q2 = r1 / n, (n - r1) / n, c1 / n, (n - c1) / n
    var = (1 - ph ** 2 + (ph + ph ** 3 / 2) * (p1 - q1) * (p2 - q2) / math.sqrt(p1 * q1 * p2 * q2)
           - 0.75 * ph ** 2 * ((p1 - q1) ** 2 / (p1 * q1) + (p2 - q2) ** 2 / (p2 * q2))) / n
    half = NormalDist().inv_cdf((1 + level) / 2) * math.sqrt(max(var, 0.0))
    return ph, max(-1.0, ph - half), min(1.0, ph + half)


def phi_bootstrap(fails: dict, pairs: list[tuple[str, str]], seed=BOOT_SEED, n_boot=N_BOOT, level=LEVEL) -> dict:
    """Percentile bootstrap of phi for every pair on the same resamples of the answers, drawn as
    evalcore's engine draws them (written out here, not imported): the answers' distinct patterns
    of fail flags over the criteria (in the order the pairs first name them); with few patterns
    (8 per pattern at least) a resample is the patterns' counts, multinomial(n, their shares), drawn
    in blocks of 2e6 / patterns resamples from default_rng(seed); else n answer indices per resample
    in blocks of 2e6 / n, counted by pattern. Then the counts of every pair at once as W @ X."""
    import numpy as np
    crits: list[str] = []
    for a, b in pairs:
        crits += [c for c in (a, b) if c not in crits]
    flags = np.column_stack([np.asarray(fails[c]).astype(bool) for c in crits])
    patterns, inverse, counts = np.unique(flags, axis=0, return_inverse=True, return_counts=True)
    inverse = np.asarray(inverse).reshape(-1)
    n, p = flags.shape[0], patterns.shape[0]
    cols = []
    for a, b in pairs:
        fa, fb = patterns[:, crits.index(a)].astype(float), patterns[:, crits.index(b)].astype(float)
        cols += [fa * fb, fa, fb]
    x = np.column_stack(cols)
    rng = np.random.default_rng(seed)
    few = p * 8 <= n
    chunk = max(1, min(n_boot, 2_000_000 // max(p if few else n, 1)))
    sums, done = [], 0
    while done < n_boot:
        m = min(chunk, n_boot - done)
        if few:
            w = rng.multinomial(n, counts / n, size=m)
        else:
            idx = rng.integers(0, n, size=(m, n))
            w = np.bincount((inverse[idx] + p * np.arange(m)[:, None]).ravel(), minlength=m * p).reshape(m, p)
        sums.append(w @ x)
        done += m
    s = np.vstack(sums)
    n11, r1, c1 = s[:, 0::3], s[:, 1::3], s[:, 2::3]
    den = r1 * (n - r1) * c1 * (n - c1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ph = np.where(den > 0, np.clip((n * n11 - r1 * c1) / np.sqrt(den), -1.0, 1.0), np.nan)
    out = {}
    for j, pair in enumerate(pairs):
        ok = ph[:, j][~np.isnan(ph[:, j])]
        if ok.size:
            lo, hi = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
            out[pair] = (float(lo), float(hi))
        else:
            out[pair] = (None, None)
    return out


def mcnemar_p(b: int, c: int) -> float:
    from scipy.stats import binomtest
    return 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5).pvalue)


def _pairs(names):
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]


# --------------------------------------------------------------------------- the computations
# Each computation has: `ev` (evalcore, in-process), `duckdb` (hand-written SQL on the Parquet
# files), `pandas` (idiomatic vectorised pandas) and `cli` (the evalcore command line). `canon`
# turns evalcore's result into the flat dict of numbers that the baselines return directly.

RUN_A, RUN_B, CT_A, CT_B = SINGLE, SPLIT, "answers_question", "cites_source"
PD_READ = {"dtype_backend": "pyarrow"}  # the fastest of pandas' readers here (see docs/BENCHMARKS.md)


class Ctx:
    """What one child process holds between its cold and warm call (the Store, a connection)."""

    def __init__(self, data: Path, state: Path):
        self.data, self.state = data, state
        self._store = self._con = None

    def store(self):
        if self._store is None:
            from evalcore import Store
            self._store = Store(self.data, self.state)
        return self._store

    def con(self):
        if self._con is None:
            import duckdb
            self._con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                                          "autoload_known_extensions": False})
        return self._con

    def q(self, sql: str, params=None) -> list[tuple]:
        cur = self.con().cursor()
        try:
            return cur.execute(sql, params or []).fetchall()
        finally:
            cur.close()

    def v(self, run: str) -> str:
        return str(self.data / "runs" / run / "verdicts.parquet")

    def calls(self, run: str) -> str:
        return str(self.data / "runs" / run / "calls.parquet")

    def manifest(self, kind: str, id_: str) -> dict:
        return json.loads((self.data / kind / id_ / "manifest.json").read_text())

    def run_ids(self) -> list[str]:
        return sorted(p.name for p in (self.data / "runs").iterdir() if p.is_dir() and not p.name.startswith("."))

    def items(self) -> str:
        gen = self.manifest("runs", RUN_A)["gen_id"]
        return str(self.data / "suites" / self.manifest("generations", gen)["suite_id"] / "items.parquet")

    def outputs(self, run: str) -> str:
        return str(self.data / "generations" / self.manifest("runs", run)["gen_id"] / "outputs.parquet")

    def labels(self) -> list[str]:
        return [str(p / "labels.parquet") for p in sorted((self.data / "labels").iterdir()) if p.is_dir()]


def _num(x):
    """numpy scalars -> Python, NaN / pandas NA -> None (without importing pandas: the measuring parent
    and the evalcore children must not pay for it)."""
    if x is None or type(x).__name__ == "NAType":
        return None
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


# ---- runs: evalcore runs --json (queries.runs_summary)

def runs_canon(rows: list[dict]) -> dict:
    out = {}
    for r in rows:
        rid = r["run_id"]
        for i, v in enumerate(r["all_pass_by_round"]):
            out[f"{rid}.all_pass_r{i + 1}"] = v
        for k in ("verdicts", "errored_verdicts", "items", "calls", "failed_calls", "tokens_in", "tokens_out",
                  "cost_usd", "cost_unknown_calls", "latency_ms_mean", "latency_ms_p95", "cache_hits",
                  "system_latency_ms_mean"):
            out[f"{rid}.{k}"] = r[k]
    return out


def runs_ev(c: Ctx):
    from evalcore.analysis.summary import runs_summary
    return runs_summary(c.store())


def runs_duckdb(c: Ctx) -> dict:
    out = {}
    for rid in c.run_ids():
        rounds = c.q("SELECT judge_round, count(*), count(passed), avg(passed::DOUBLE), count(DISTINCT item_id) "
                     "FROM read_parquet(?) GROUP BY judge_round ORDER BY judge_round", [c.v(rid)])
        calls = c.q("SELECT count(*), count(error), sum(tokens_in), sum(tokens_out), sum(cost_usd), "
                    "count(*) - count(cost_usd), avg(latency_ms), quantile_cont(latency_ms, 0.95), "
                    "count(*) FILTER (WHERE cache_hit) FROM read_parquet(?)", [c.calls(rid)])[0]
        lat = c.q("SELECT avg(latency_ms) FROM read_parquet(?)", [c.outputs(rid)])[0][0]
        k = len(c.manifest("runs", rid)["rubric"]["criteria"])
        # the all-pass rate per judge round: answers with every criterion judged, passing all of them
        for jr, rate in c.q("SELECT judge_round, avg(allp::DOUBLE) FROM (SELECT judge_round, bool_and(passed) AS allp "
                            "FROM read_parquet(?) GROUP BY item_id, gen_round, judge_round "
                            "HAVING count(passed) = ? AND count(*) = ?) GROUP BY 1 ORDER BY 1", [c.v(rid), k, k]):
            out[f"{rid}.all_pass_r{jr}"] = rate
        out.update({f"{rid}.verdicts": sum(r[1] for r in rounds),
                    f"{rid}.errored_verdicts": sum(r[1] - r[2] for r in rounds),
                    f"{rid}.items": max(r[4] for r in rounds)})
        for k, v in zip(("calls", "failed_calls", "tokens_in", "tokens_out", "cost_usd", "cost_unknown_calls",
                         "latency_ms_mean", "latency_ms_p95", "cache_hits"), calls):
            out[f"{rid}.{k}"] = v
        out[f"{rid}.system_latency_ms_mean"] = lat
    return out


def runs_pandas(c: Ctx) -> dict:
    import pandas as pd
    out = {}
    for rid in c.run_ids():
        v = pd.read_parquet(c.v(rid), columns=["item_id", "judge_round", "passed"], **PD_READ)
        g = v.groupby("judge_round").agg(n=("passed", "size"), judged=("passed", "count"),
                                         rate=("passed", "mean"), items=("item_id", "nunique"))
        calls = pd.read_parquet(c.calls(rid), columns=["error", "tokens_in", "tokens_out", "cost_usd", "latency_ms",
                                                       "cache_hit"], **PD_READ)
        lat = pd.read_parquet(c.outputs(rid), columns=["latency_ms"], **PD_READ)["latency_ms"].mean()
        k = len(c.manifest("runs", rid)["rubric"]["criteria"])
        a = pd.read_parquet(c.v(rid), columns=["item_id", "gen_round", "judge_round", "passed"], **PD_READ)
        a = a.groupby(["item_id", "gen_round", "judge_round"]).agg(n=("passed", "size"), judged=("passed", "count"),
                                                                  allp=("passed", "all"))
        a = a[(a["n"] == k) & (a["judged"] == k)]
        for jr, rate in a.groupby(level="judge_round")["allp"].mean().items():
            out[f"{rid}.all_pass_r{jr}"] = float(rate)
        known = calls["cost_usd"].notna()
        out.update({
            f"{rid}.verdicts": int(g["n"].sum()), f"{rid}.errored_verdicts": int((g["n"] - g["judged"]).sum()),
            f"{rid}.items": int(g["items"].max()), f"{rid}.calls": len(calls),
            f"{rid}.failed_calls": int(calls["error"].notna().sum()),
            f"{rid}.tokens_in": int(calls["tokens_in"].sum()), f"{rid}.tokens_out": int(calls["tokens_out"].sum()),
            f"{rid}.cost_usd": float(calls["cost_usd"].sum()) if known.any() else None,
            f"{rid}.cost_unknown_calls": int((~known).sum()),
            f"{rid}.latency_ms_mean": float(calls["latency_ms"].mean()),
            f"{rid}.latency_ms_p95": float(calls["latency_ms"].quantile(0.95)),
            f"{rid}.cache_hits": int(calls["cache_hit"].sum()), f"{rid}.system_latency_ms_mean": float(lat)})
    return out


# ---- attribution RUN_A (judge round 1)

def attribution_canon(r: dict) -> dict:
    out = {f"answers.{k}": r[k] for k in ("answers", "answers_with_errors", "answers_incomplete", "answers_complete")}
    out["all_pass"] = r["all_pass"]["passed"]
    out["gates_pass"] = r["gates"]["passed"]
    for c in r["criteria"]:
        for k in ("judged", "failed", "errored", "fail_rate", "fail_only_this"):
            out[f"{c['criterion']}.{k}"] = c[k]
    for b in r["by_class"]:
        out[f"class.{b['class']}.{b['criterion']}.judged"] = b["judged"]
        out[f"class.{b['class']}.{b['criterion']}.failed"] = b["failed"]
    return out


def attribution_ev(c: Ctx):
    from evalcore.analysis.failures import attribution
    return attribution(c.store(), RUN_A)


def _attr_out(crit_rows, answer_rows, class_rows, k: int) -> dict:
    out = {"answers.answers": 0, "answers.answers_with_errors": 0, "answers.answers_incomplete": 0,
           "answers.answers_complete": 0, "all_pass": 0, "gates_pass": 0}
    only = {}
    for o, n, werr, inc, comp, allp, gates in answer_rows:
        for key, val in (("answers.answers", n), ("answers.answers_with_errors", werr),
                         ("answers.answers_incomplete", inc), ("answers.answers_complete", comp),
                         ("all_pass", allp), ("gates_pass", gates)):
            out[key] += int(val)
        if o is not None:
            only[o] = only.get(o, 0) + int(n)
    for crit, judged, failed, errored in crit_rows:
        out.update({f"{crit}.judged": int(judged), f"{crit}.failed": int(failed), f"{crit}.errored": int(errored),
                    f"{crit}.fail_rate": failed / judged if judged else None,
                    f"{crit}.fail_only_this": only.get(crit, 0)})
    for cls, crit, judged, failed in class_rows:
        out[f"class.{cls}.{crit}.judged"] = int(judged)
        out[f"class.{cls}.{crit}.failed"] = int(failed)
    return out


def attribution_duckdb(c: Ctx) -> dict:
    m = c.manifest("runs", RUN_A)
    crits = [x["name"] for x in m["rubric"]["criteria"]]
    gates = [x["name"] for x in m["rubric"]["criteria"] if x.get("gate")]
    k, v = len(crits), c.v(RUN_A)
    crit_rows = c.q("SELECT criterion, count(passed), count(*) FILTER (WHERE NOT passed), count(*) - count(passed) "
                    "FROM read_parquet(?) WHERE judge_round = 1 GROUP BY criterion", [v])
    # one row per "only failed criterion" (NULL for every other answer), with the answer counts
    answer_rows = c.q(
        "WITH a AS (SELECT count(*) AS present, count(*) - count(passed) AS errored, "
        "  count(*) FILTER (WHERE NOT passed) AS fails, "
        "  count(*) FILTER (WHERE NOT passed AND criterion IN (SELECT unnest(?::VARCHAR[]))) AS gate_fails, "
        "  any_value(criterion) FILTER (WHERE NOT passed) AS failed_one "
        "  FROM read_parquet(?) WHERE judge_round = 1 GROUP BY item_id, gen_round) "
        "SELECT CASE WHEN errored = 0 AND present = ? AND fails = 1 THEN failed_one END, count(*), "
        "count(*) FILTER (WHERE errored > 0), count(*) FILTER (WHERE errored = 0 AND present < ?), "
        "count(*) FILTER (WHERE errored = 0 AND present = ?), "
        "count(*) FILTER (WHERE errored = 0 AND present = ? AND fails = 0), "
        "count(*) FILTER (WHERE errored = 0 AND present = ? AND gate_fails = 0) FROM a GROUP BY 1",
        [gates, v, k, k, k, k, k])
    class_rows = c.q("SELECT coalesce(i.class, '(none)'), v.criterion, count(v.passed), "
                     "count(*) FILTER (WHERE NOT v.passed) FROM read_parquet(?) v JOIN read_parquet(?) i "
                     "USING (item_id) WHERE v.judge_round = 1 GROUP BY ALL", [v, c.items()])
    return _attr_out(crit_rows, answer_rows, class_rows, k)


def attribution_pandas(c: Ctx) -> dict:
    import pandas as pd
    m = c.manifest("runs", RUN_A)
    crits = [x["name"] for x in m["rubric"]["criteria"]]
    gates = [x["name"] for x in m["rubric"]["criteria"] if x.get("gate")]
    k = len(crits)
    v = pd.read_parquet(c.v(RUN_A), columns=["item_id", "gen_round", "criterion", "passed"],
                        filters=[("judge_round", "==", 1)], **PD_READ)
    v["failed"] = v["passed"].eq(False).fillna(False)  # errored (null) is not a failure
    v["judged"] = v["passed"].notna()
    per = v.groupby("criterion").agg(judged=("judged", "sum"), failed=("failed", "sum"), n=("judged", "size"))
    crit_rows = [(cr, int(r.judged), int(r.failed), int(r.n - r.judged)) for cr, r in per.iterrows()]
    v["gate_failed"] = v["failed"] & v["criterion"].isin(gates)
    a = v.groupby(["item_id", "gen_round"]).agg(present=("judged", "size"), judged=("judged", "sum"),
                                                fails=("failed", "sum"), gate_fails=("gate_failed", "sum"))
    errored, complete = a["present"] - a["judged"] > 0, a["present"] == k
    ok = ~errored & complete
    one = v.loc[v["failed"]].set_index(["item_id", "gen_round"])["criterion"]
    only = one[one.index.isin(a.index[ok & (a["fails"] == 1)])].value_counts()
    answer_rows = [(None, len(a), int(errored.sum()), int((~errored & (a["present"] < k)).sum()), int(ok.sum()),
                    int((ok & (a["fails"] == 0)).sum()), int((ok & (a["gate_fails"] == 0)).sum()))]
    items = pd.read_parquet(c.items(), columns=["item_id", "class"], **PD_READ)
    j = v.merge(items, on="item_id")
    j["class"] = j["class"].fillna("(none)")
    bc = j.groupby(["class", "criterion"]).agg(judged=("judged", "sum"), failed=("failed", "sum"))
    class_rows = [(cl, cr, r.judged, r.failed) for (cl, cr), r in bc.iterrows()]
    out = _attr_out(crit_rows, answer_rows, class_rows, k)
    for cr in crits:
        out[f"{cr}.fail_only_this"] = int(only.get(cr, 0))
    return out


# ---- crosstab RUN_A --a CT_A --b CT_B

def crosstab_canon(r: dict) -> dict:
    t = r["table"]
    return {"pp": t["a_pass"]["b_pass"], "pf": t["a_pass"]["b_fail"], "fp": t["a_fail"]["b_pass"],
            "ff": t["a_fail"]["b_fail"], "excluded": r["excluded_answers"],
            "rate_pass_row": r["b_fail_rate_given_a_pass"], "rate_fail_row": r["b_fail_rate_given_a_fail"],
            "ratio": r["ratio"], "phi": r["phi"]}


def crosstab_ev(c: Ctx):
    from evalcore.analysis.failures import crosstab
    return crosstab(c.store(), RUN_A, CT_A, CT_B)


def _ct_out(pp, pf, fp, ff, excluded) -> dict:
    pp, pf, fp, ff = int(pp), int(pf), int(fp), int(ff)
    rp = pf / (pp + pf) if pp + pf else None
    rf = ff / (fp + ff) if fp + ff else None
    n = pp + pf + fp + ff
    return {"pp": pp, "pf": pf, "fp": fp, "ff": ff, "excluded": int(excluded), "rate_pass_row": rp,
            "rate_fail_row": rf, "ratio": rf / rp if rp and rf is not None else None,
            "phi": phi_counts(ff, fp + ff, pf + ff, n)}


def crosstab_duckdb(c: Ctx) -> dict:
    row = c.q("WITH w AS (SELECT bool_or(passed) FILTER (WHERE criterion = ?) AS a, "
              "bool_or(passed) FILTER (WHERE criterion = ?) AS b FROM read_parquet(?) "
              "WHERE judge_round = 1 AND criterion IN (?, ?) GROUP BY item_id, gen_round) "
              "SELECT count(*) FILTER (WHERE a AND b), count(*) FILTER (WHERE a AND NOT b), "
              "count(*) FILTER (WHERE NOT a AND b), count(*) FILTER (WHERE NOT a AND NOT b), "
              "count(*) FILTER (WHERE a IS NULL OR b IS NULL) FROM w", [CT_A, CT_B, c.v(RUN_A), CT_A, CT_B])[0]
    return _ct_out(*row)


def crosstab_pandas(c: Ctx) -> dict:
    import pandas as pd
    v = pd.read_parquet(c.v(RUN_A), columns=["item_id", "gen_round", "criterion", "passed"],
                        filters=[("judge_round", "==", 1), ("criterion", "in", [CT_A, CT_B])], **PD_READ)
    w = v.pivot(index=["item_id", "gen_round"], columns="criterion", values="passed")
    both = w.dropna()
    t = pd.crosstab(both[CT_A].astype(bool), both[CT_B].astype(bool))
    cell = lambda a, b: int(t.loc[a, b]) if a in t.index and b in t.columns else 0  # noqa: E731
    return _ct_out(cell(True, True), cell(True, False), cell(False, True), cell(False, False), len(w) - len(both))


# ---- association RUN_A RUN_B [--human]

def association_canon(r: dict) -> dict:
    out = {"shared_answers": r["shared_answers"], "people_answers": r["people_answers"]}
    for p in r["pairs"]:
        for name, v in p["instruments"].items():
            for k in ("phi", "lo", "hi", "n"):
                out[f"{name}.{p['a']}x{p['b']}.{k}"] = v[k]
    for name, m in r["matrices"].items():
        for crit, rate in m["fail_rate"].items():
            out[f"{name}.{crit}.fail_rate"] = rate
    for name, m in r["matrices_on_people_answers"].items():
        for a, b in _pairs(r["criteria"]):
            out[f"on_people.{name}.{a}x{b}.phi"] = m["phi"][a][b]["value"]
    return out


def association_ev(c: Ctx, human: bool = False):
    from evalcore.analysis.instruments import association
    return association(c.store(), [RUN_A, RUN_B], human=human)


def _assoc_out(crits, runs, n_m, sums, people=None) -> dict:
    """sums[run] = (r1 per criterion, n11 per pair) over the n_m shared answers; people = (n_p,
    fails per instrument on the people's answers as {name: {criterion: 0/1 array}})."""
    out = {"shared_answers": int(n_m), "people_answers": 0}
    pairs = _pairs(crits)
    for run in runs:
        r1, n11 = sums[run]
        for cr in crits:
            out[f"{run}.{cr}.fail_rate"] = r1[cr] / n_m if n_m else None
        for a, b in pairs:
            ph, lo, hi = phi_analytic(n11[(a, b)], r1[a], r1[b], n_m) if n_m > ANALYTIC_ABOVE else (None, None, None)
            out.update({f"{run}.{a}x{b}.phi": ph, f"{run}.{a}x{b}.lo": lo, f"{run}.{a}x{b}.hi": hi,
                        f"{run}.{a}x{b}.n": int(n_m)})
    if people is not None:
        n_p, fails = people
        out["people_answers"] = int(n_p)
        f = fails["people"]
        ivs = phi_bootstrap(f, pairs)
        for cr in crits:
            out[f"people.{cr}.fail_rate"] = float(f[cr].mean()) if n_p else None
        for a, b in pairs:
            ph = phi_counts(int((f[a] & f[b]).sum()), int(f[a].sum()), int(f[b].sum()), n_p)
            lo, hi = ivs[(a, b)] if ph is not None else (None, None)
            out.update({f"people.{a}x{b}.phi": ph, f"people.{a}x{b}.lo": lo, f"people.{a}x{b}.hi": hi,
                        f"people.{a}x{b}.n": int(n_p)})
            for run in runs:
                g = fails[run]
                out[f"on_people.{run}.{a}x{b}.phi"] = phi_counts(int((g[a] & g[b]).sum()), int(g[a].sum()),
                                                                 int(g[b].sum()), n_p)
    return out


def _crit_names(c: Ctx, run: str) -> list[str]:
    return [x["name"] for x in c.manifest("runs", run)["rubric"]["criteria"]]


def association_duckdb(c: Ctx, human: bool = False) -> dict:
    crits, runs = _crit_names(c, RUN_A), [RUN_A, RUN_B]
    pairs = _pairs(crits)

    def pivot(tag, path, where=""):
        cols = ", ".join(f"bool_or(NOT passed) FILTER (WHERE criterion = '{cr}')::INT AS {tag}_{cr}" for cr in crits)
        return (f"{tag} AS (SELECT item_id, gen_round, {cols} FROM read_parquet('{path}') "
                f"WHERE judge_round = 1 {where} GROUP BY item_id, gen_round)")

    notnull = " AND ".join(f"{t}_{cr} IS NOT NULL" for t in ("a", "b") for cr in crits)
    aggs = ["count(*)"] + [f"sum({t}_{cr})" for t in ("a", "b") for cr in crits] + \
        [f"sum({t}_{x} * {t}_{y})" for t in ("a", "b") for x, y in pairs]
    row = c.q(f"WITH {pivot('a', c.v(RUN_A))}, {pivot('b', c.v(RUN_B))} SELECT {', '.join(aggs)} "
              f"FROM a JOIN b USING (item_id, gen_round) WHERE {notnull}")[0]
    n_m, vals = row[0], [int(x or 0) for x in row[1:]]
    sums, k = {}, len(crits)
    for i, run in enumerate(runs):
        r1 = dict(zip(crits, vals[i * k:(i + 1) * k]))
        n11 = dict(zip(pairs, vals[2 * k + i * len(pairs):2 * k + (i + 1) * len(pairs)]))
        sums[run] = (r1, n11)
    people = None
    if human:
        import numpy as np
        labels = ", ".join(f"'{p}'" for p in c.labels())
        hcols = ", ".join(f"bool_or(NOT passed) FILTER (WHERE criterion = '{cr}')::INT AS h_{cr}" for cr in crits)
        only = f"AND item_id IN (SELECT item_id FROM read_parquet([{labels}]))"
        hn = " AND ".join(f"h_{cr} IS NOT NULL" for cr in crits)
        res = c.con().cursor().execute(
            f"WITH l AS (SELECT item_id, gen_round, criterion, CASE WHEN count(passed) = 0 THEN NULL "
            f"ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END AS passed FROM read_parquet([{labels}]) "
            f"GROUP BY ALL), h AS (SELECT item_id, gen_round, {hcols} FROM l GROUP BY ALL), "
            f"{pivot('a', c.v(RUN_A), only)}, {pivot('b', c.v(RUN_B), only)} "
            f"SELECT * FROM h JOIN a USING (item_id, gen_round) JOIN b USING (item_id, gen_round) "
            f"WHERE {hn} AND {notnull} ORDER BY item_id, gen_round").fetchnumpy()  # the bootstrap's answer order
        fails = {name: {cr: np.asarray(res[f"{t}_{cr}"]).astype(bool) for cr in crits}
                 for name, t in (("people", "h"), (RUN_A, "a"), (RUN_B, "b"))}
        people = (len(res["item_id"]), fails)
    return _assoc_out(crits, runs, n_m, sums, people)


def association_pandas(c: Ctx, human: bool = False) -> dict:
    import numpy as np
    import pandas as pd
    crits, runs = _crit_names(c, RUN_A), [RUN_A, RUN_B]
    pairs = _pairs(crits)

    def wide(path, tag):
        v = pd.read_parquet(path, columns=["item_id", "gen_round", "criterion", "passed"],
                            filters=[("judge_round", "==", 1)], **PD_READ)
        v["fail"] = ~v["passed"]
        w = v.pivot(index=["item_id", "gen_round"], columns="criterion", values="fail")[crits]
        return w.add_prefix(f"{tag}_")

    a, b = wide(c.v(RUN_A), "a"), wide(c.v(RUN_B), "b")
    j = a.join(b, how="inner").dropna()
    sums = {}
    for run, tag in ((RUN_A, "a"), (RUN_B, "b")):
        f = j[[f"{tag}_{cr}" for cr in crits]].to_numpy(dtype=np.int64)
        r1 = dict(zip(crits, (int(x) for x in f.sum(axis=0))))
        co = f.T @ f  # co-failure counts of every pair
        sums[run] = (r1, {(x, y): int(co[crits.index(x), crits.index(y)]) for x, y in pairs})
    # phi straight from pandas/numpy as well, to check the counts route: np.corrcoef of the 0/1 columns
    for run, tag in ((RUN_A, "a"), (RUN_B, "b")):
        r = np.corrcoef(j[[f"{tag}_{cr}" for cr in crits]].to_numpy(dtype=float), rowvar=False)
        for x, y in pairs:
            ph = phi_counts(sums[run][1][(x, y)], sums[run][0][x], sums[run][0][y], len(j))
            assert ph is None or abs(r[crits.index(x), crits.index(y)] - ph) < 1e-9, (run, x, y)
    people = None
    if human:
        lab = pd.concat([pd.read_parquet(p, columns=["item_id", "gen_round", "criterion", "passed"], **PD_READ)
                         for p in c.labels()])
        g = lab.groupby(["item_id", "gen_round", "criterion"])["passed"].agg(["sum", "count"])
        maj = (2 * g["sum"] > g["count"]).where(g["count"] > 0)
        h = (~maj.astype("boolean")).unstack("criterion")[crits].add_prefix("h_")
        jj = h.join(j, how="inner").dropna().sort_index()  # the bootstrap's answer order
        fails = {name: {cr: jj[f"{t}_{cr}"].to_numpy(dtype=bool) for cr in crits}
                 for name, t in (("people", "h"), (RUN_A, "a"), (RUN_B, "b"))}
        people = (len(jj), fails)
    return _assoc_out(crits, runs, len(j), sums, people)


# ---- position RUN_A --reference RUN_B

def position_canon(r: dict) -> dict:
    out = {}
    for p in r["positions"]:
        for k in ("judged", "failed", "fail_rate", "fail_rate_after_fail", "agreement_with_reference"):
            out[f"{p['position']}.{k}"] = p[k]
    return out


def position_ev(c: Ctx):
    from evalcore.analysis.failures import position_effect
    return position_effect(c.store(), RUN_A, RUN_B)


def _pos_out(rows) -> dict:
    out = {}
    for pos, judged, failed, after, fail_after, n, agree in rows:
        out.update({f"{pos}.judged": int(judged), f"{pos}.failed": int(failed),
                    f"{pos}.fail_rate": failed / judged if judged else None,
                    f"{pos}.fail_rate_after_fail": fail_after / after if after else None,
                    f"{pos}.agreement_with_reference": agree / n if n else None})
    return out


def position_duckdb(c: Ctx) -> dict:
    rows = c.q(
        "WITH w AS (SELECT item_id, gen_round, criterion, position, passed, "
        "  lag(passed) OVER (PARTITION BY item_id, gen_round ORDER BY position) AS prev "
        "  FROM read_parquet(?) WHERE judge_round = 1), "
        "r AS (SELECT item_id, gen_round, criterion, passed AS ref FROM read_parquet(?) WHERE judge_round = 1) "
        "SELECT position, count(passed), count(*) FILTER (WHERE NOT passed), "
        "count(*) FILTER (WHERE prev = false AND passed IS NOT NULL), count(*) FILTER (WHERE prev = false AND NOT passed), "
        "count(*) FILTER (WHERE passed IS NOT NULL AND ref IS NOT NULL), count(*) FILTER (WHERE passed = ref) "
        "FROM w LEFT JOIN r USING (item_id, gen_round, criterion) GROUP BY position ORDER BY position",
        [c.v(RUN_A), c.v(RUN_B)])
    return _pos_out(rows)


def position_pandas(c: Ctx) -> dict:
    import pandas as pd
    cols = ["item_id", "gen_round", "criterion", "position", "passed"]
    v = pd.read_parquet(c.v(RUN_A), columns=cols, filters=[("judge_round", "==", 1)], **PD_READ)
    v = v.sort_values(["item_id", "gen_round", "position"])
    v["prev"] = v.groupby(["item_id", "gen_round"])["passed"].shift()
    ref = pd.read_parquet(c.v(RUN_B), columns=cols[:3] + ["passed"], filters=[("judge_round", "==", 1)], **PD_READ)
    m = v.merge(ref.rename(columns={"passed": "ref"}), on=["item_id", "gen_round", "criterion"], how="left")
    after = m["prev"].eq(False).fillna(False)
    both = m["passed"].notna() & m["ref"].notna()
    m = m.assign(judged=m["passed"].notna(), failed=m["passed"].eq(False).fillna(False),
                 after=after & m["passed"].notna(), fail_after=after & m["passed"].eq(False).fillna(False),
                 both=both, agree=both & m["passed"].eq(m["ref"]).fillna(False))
    g = m.groupby("position")[["judged", "failed", "after", "fail_after", "both", "agree"]].sum()
    return _pos_out([(p, *r) for p, r in zip(g.index, g.itertuples(index=False))])


# ---- flips RUN_A RUN_B

def flips_canon(r: dict) -> dict:
    out = {f"all_pass.{k}": r["all_pass"][k] for k in ("answers", "passed_a", "passed_b")}
    for c in r["criteria"]:
        for k in ("n", "fail_a", "fail_b", "fail_a_pass_b", "pass_a_fail_b", "fail_both", "mcnemar_p"):
            out[f"{c['criterion']}.{k}"] = c[k]
    return out


def flips_ev(c: Ctx):
    from evalcore.analysis.harness import flips
    return flips(c.store(), RUN_A, RUN_B)


def _flips_out(crit_rows, answers, pa_, pb_) -> dict:
    out = {"all_pass.answers": int(answers), "all_pass.passed_a": int(pa_), "all_pass.passed_b": int(pb_)}
    for crit, n, fa, fb, fapb, pafb, both in crit_rows:
        out.update({f"{crit}.n": int(n), f"{crit}.fail_a": int(fa), f"{crit}.fail_b": int(fb),
                    f"{crit}.fail_a_pass_b": int(fapb), f"{crit}.pass_a_fail_b": int(pafb),
                    f"{crit}.fail_both": int(both), f"{crit}.mcnemar_p": mcnemar_p(int(fapb), int(pafb))})
    return out


def flips_duckdb(c: Ctx) -> dict:
    k = len(_crit_names(c, RUN_A))
    rows = c.q(
        "WITH j AS MATERIALIZED (SELECT criterion, a.passed AS pa, b.passed AS pb, item_id, gen_round "
        "  FROM read_parquet(?) a JOIN read_parquet(?) b USING (item_id, gen_round, criterion) "
        "  WHERE a.judge_round = 1 AND b.judge_round = 1), "
        "c AS (SELECT criterion, count(*) AS n, count(*) FILTER (WHERE NOT pa) AS fa, count(*) FILTER (WHERE NOT pb) AS fb, "
        "  count(*) FILTER (WHERE NOT pa AND pb) AS fapb, count(*) FILTER (WHERE pa AND NOT pb) AS pafb, "
        "  count(*) FILTER (WHERE NOT pa AND NOT pb) AS both FROM j WHERE pa IS NOT NULL AND pb IS NOT NULL "
        "  GROUP BY criterion), "
        "t AS (SELECT count(*) FILTER (WHERE ok) AS answers, count(*) FILTER (WHERE ok AND all_a) AS pa_, "
        "  count(*) FILTER (WHERE ok AND all_b) AS pb_ FROM (SELECT count(*) = ? AND count(pa) = ? AND count(pb) = ? "
        "  AS ok, bool_and(pa) AS all_a, bool_and(pb) AS all_b FROM j GROUP BY item_id, gen_round)) "
        "SELECT c.*, t.* FROM c, t ORDER BY criterion", [c.v(RUN_A), c.v(RUN_B), k, k, k])
    return _flips_out([r[:7] for r in rows], *rows[0][7:])


def flips_pandas(c: Ctx) -> dict:
    import pandas as pd
    k = len(_crit_names(c, RUN_A))
    cols, keys = ["item_id", "gen_round", "criterion", "passed"], ["item_id", "gen_round", "criterion"]
    a = pd.read_parquet(c.v(RUN_A), columns=cols, filters=[("judge_round", "==", 1)], **PD_READ)
    b = pd.read_parquet(c.v(RUN_B), columns=cols, filters=[("judge_round", "==", 1)], **PD_READ)
    j = a.merge(b, on=keys, suffixes=("_a", "_b"))
    pa_, pb_ = j["passed_a"], j["passed_b"]
    both = pa_.notna() & pb_.notna()
    fa, fb = pa_.eq(False).fillna(False), pb_.eq(False).fillna(False)
    d = pd.DataFrame({"criterion": j["criterion"], "n": both, "fa": both & fa, "fb": both & fb,
                      "fapb": both & fa & ~fb, "pafb": both & ~fa & fb, "both": both & fa & fb})
    per = d.groupby("criterion").sum()
    crit_rows = [(cr, *r) for cr, r in zip(per.index, per.itertuples(index=False))]
    ans = pd.DataFrame({"item_id": j["item_id"], "gen_round": j["gen_round"], "ka": pa_.notna(), "kb": pb_.notna(),
                        "fa": fa, "fb": fb}).groupby(["item_id", "gen_round"]).agg(
        k=("ka", "size"), ka=("ka", "sum"), kb=("kb", "sum"), fa=("fa", "sum"), fb=("fb", "sum"))
    ok = (ans["k"] == k) & (ans["ka"] == k) & (ans["kb"] == k)
    return _flips_out(crit_rows, int(ok.sum()), int((ok & (ans["fa"] == 0)).sum()), int((ok & (ans["fb"] == 0)).sum()))



# ---- compare RUN_A RUN_B (evalcore.analysis.comparison.compare). The bench generation has ONE generation round, so a
# stable win (regression) is an item that is better (worse) in B than in A in that single round.

CMP_METRICS = ["all_pass", *CRITERIA]


def compare_canon(r: dict) -> dict:
    out = {"rounds_paired": r["rounds_paired"]}
    for side, run in (("a", r["baseline"]), ("b", r["candidate"])):
        for name in r["metrics"]:
            for i, v in enumerate(r["figures"][name][side]["by_round"]):
                out[f"{run}.r{i + 1}.{name}"] = v
    for name in r["metrics"]:
        f = r["figures"][name]
        out.update({f"{name}.delta_mean": f["delta"]["mean"], f"{name}.delta_lo": f["delta"]["ci95"][0],
                    f"{name}.delta_hi": f["delta"]["ci95"][1], f"{name}.items": f["delta"]["items"],
                    f"{name}.stable_wins": f["stable_wins"], f"{name}.stable_regressions": f["stable_regressions"]})
    return out


def compare_ev(c: Ctx):
    from evalcore.analysis.comparison import compare as compare_runs
    return compare_runs(c.store(), RUN_A, RUN_B)


def t_interval(n: int, mean: float | None, sd: float | None, level: float = 0.95):
    """The analytic t interval of a mean paired delta (evalcore.analysis.comparison's past 20,000 items)."""
    from scipy.stats import t
    if not n or mean is None:
        return None, None
    if n == 1 or not sd:
        return mean, mean
    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def _cmp_out(rounds: dict, summary: dict, n_rounds: int) -> dict:
    """rounds[run] = [(gen_round, rate of each CMP_METRICS)], summary[metric] = (items, mean delta, sd of the
    per-item deltas, stable wins, stable regressions)."""
    out = {"rounds_paired": int(n_rounds)}
    for run, rows in rounds.items():
        for i, row in enumerate(rows):
            for name, v in zip(CMP_METRICS, row[1:]):
                out[f"{run}.r{i + 1}.{name}"] = _num(v)
    for name, (n, mean, sd, wins, regs) in summary.items():
        n, mean, sd = int(n), _num(mean), _num(sd)
        if n <= ANALYTIC_ABOVE:  # evalcore bootstraps below that; the baselines do not
            raise SystemExit(f"compare baselines: {n} items is not past {ANALYTIC_ABOVE:,} (analytic interval only)")
        lo, hi = t_interval(n, mean, sd)
        out.update({f"{name}.delta_mean": mean, f"{name}.delta_lo": lo, f"{name}.delta_hi": hi, f"{name}.items": n,
                    f"{name}.stable_wins": int(wins), f"{name}.stable_regressions": int(regs)})
    return out


def _hold_sql(c: Ctx) -> str:
    """The condition leaving the suite's holdout items out, or nothing when it has none (as evalcore does)."""
    if not c.q("SELECT count(*) FROM read_parquet(?) WHERE holdout", [c.items()])[0][0]:
        return ""
    return f"AND item_id NOT IN (SELECT item_id FROM read_parquet('{c.items()}') WHERE holdout)"


def _cmp_pivot(c: Ctx, run: str, crits: list[str], hold: str) -> str:
    """One row per answer of a run (judge round 1, holdout items left out): m0 = all_pass (null when fewer
    judged verdicts than the rubric's criteria), m1.. = each criterion's pass, as 0/1."""
    k = len(_crit_names(c, run))
    cols = ", ".join(f"bool_or(passed) FILTER (WHERE criterion = '{cr}')::INT AS m{j + 1}" for j, cr in enumerate(crits))
    return (f"SELECT item_id, gen_round, CASE WHEN count(passed) < {k} THEN NULL ELSE bool_and(passed)::INT END AS m0, "
            f"{cols} FROM read_parquet('{c.v(run)}') WHERE judge_round = 1 {hold} GROUP BY item_id, gen_round")


def compare_duckdb(c: Ctx) -> dict:
    """Each run pivoted once to one row per answer (a temp table); the per-round rates from the pivots; one
    join of the two pivots for the paired per-item deltas and their summary."""
    crits = _crit_names(c, RUN_A)
    m = range(len(CMP_METRICS))
    hold = _hold_sql(c)
    cur = c.con().cursor()
    rounds = {}
    try:
        for tag, run in (("a", RUN_A), ("b", RUN_B)):
            cur.execute(f"CREATE OR REPLACE TEMP TABLE cmp_{tag} AS {_cmp_pivot(c, run, crits, hold)}")
            rounds[run] = cur.execute(f"SELECT gen_round, {', '.join(f'avg(m{j})' for j in m)} FROM cmp_{tag} "
                                      "GROUP BY gen_round ORDER BY gen_round").fetchall()
        n_rounds = min(len(rounds[RUN_A]), len(rounds[RUN_B]))
        per = ", ".join(f"count(b.m{j} - a.m{j}) AS nn{j}, count(*) FILTER (WHERE b.m{j} > a.m{j}) AS up{j}, "
                        f"count(*) FILTER (WHERE b.m{j} < a.m{j}) AS dn{j}, avg(b.m{j} - a.m{j}) AS d{j}" for j in m)
        summ = ", ".join(f"count(d{j}), avg(d{j}), stddev_samp(d{j}), "
                         f"count(*) FILTER (WHERE nn{j} = paired AND paired = {n_rounds} AND up{j} = paired), "
                         f"count(*) FILTER (WHERE nn{j} = paired AND paired = {n_rounds} AND dn{j} = paired)" for j in m)
        row = cur.execute(f"WITH p AS (SELECT item_id, count(*) AS paired, {per} FROM cmp_a a JOIN cmp_b b "
                          f"USING (item_id, gen_round) GROUP BY item_id) SELECT {summ} FROM p").fetchone()
        cur.execute("DROP TABLE cmp_a; DROP TABLE cmp_b")
    finally:
        cur.close()
    return _cmp_out(rounds, {name: row[5 * j:5 * (j + 1)] for j, name in enumerate(CMP_METRICS)}, n_rounds)


def compare_pandas(c: Ctx) -> dict:
    import pandas as pd
    crits = _crit_names(c, RUN_A)
    items = pd.read_parquet(c.items(), columns=["item_id", "holdout"], **PD_READ)
    holdout = items.loc[items["holdout"].fillna(False).astype(bool), "item_id"]

    def wide(run):
        k = len(_crit_names(c, run))
        v = pd.read_parquet(c.v(run), columns=["item_id", "gen_round", "criterion", "passed"],
                            filters=[("judge_round", "==", 1)], **PD_READ)
        v = v[~v["item_id"].isin(holdout)]
        w = v.pivot(index=["item_id", "gen_round"], columns="criterion", values="passed")[crits].astype("float64")
        judged = v.groupby(["item_id", "gen_round"])["passed"].count()
        return pd.concat([w.fillna(1.0).min(axis=1).where(judged >= k).rename("all_pass"), w], axis=1)

    a, b = wide(RUN_A), wide(RUN_B)
    rounds = {}
    for run, w in ((RUN_A, a), (RUN_B, b)):
        g = w.groupby(level="gen_round")[CMP_METRICS].mean()
        rounds[run] = [(r, *vals) for r, vals in zip(g.index, g.itertuples(index=False))]
    n_rounds = min(len(rounds[RUN_A]), len(rounds[RUN_B]))
    j = a.join(b, how="inner", lsuffix="_a", rsuffix="_b")
    d = pd.DataFrame({name: j[f"{name}_b"] - j[f"{name}_a"] for name in CMP_METRICS})
    by_item = d.index.get_level_values("item_id")
    counts = pd.concat({"nn": d.notna(), "up": d > 0, "dn": d < 0}, axis=1).groupby(by_item).sum()
    mean = d.groupby(by_item).mean()
    paired = d.groupby(by_item).size()
    summary = {}
    for name in CMP_METRICS:
        full = (counts[("nn", name)] == paired) & (paired == n_rounds)
        summary[name] = (mean[name].count(), mean[name].mean(), mean[name].std(),
                         (full & (counts[("up", name)] == paired)).sum(), (full & (counts[("dn", name)] == paired)).sum())
    return _cmp_out(rounds, summary, n_rounds)


# ---- trend --suite SUITE (evalcore.analysis.comparison.trend: all_pass of every run over the suite, by created_at, the
# line broken where the judge model, judge prompt, rubric or suite changed)

def trend_canon(r: dict) -> dict:
    out = {"segments": r["segments"], "points": len(r["points"])}
    for p in r["points"]:
        out[f"{p['run_id']}.value"], out[f"{p['run_id']}.segment"] = p["value"], p["segment"]
        for i, v in enumerate(p["by_round"]):
            out[f"{p['run_id']}.r{i + 1}"] = v
    return out


def trend_ev(c: Ctx):
    from evalcore.analysis.gating import trend
    return trend(c.store(), suite_id=SUITE)


def _trend_runs(c: Ctx) -> list[dict]:
    """The suite's runs in created_at order with their manifests (the line's breaks come from these)."""
    runs = []
    for rid in c.run_ids():
        m = c.manifest("runs", rid)
        g = c.manifest("generations", m["gen_id"])
        if g["suite_id"] == SUITE and m["rubric"]["criteria"]:
            runs.append({"id": rid, "m": m, "g": g, "k": len(m["rubric"]["criteria"])})
    return sorted(runs, key=lambda r: (datetime.fromisoformat(r["m"]["created_at"].replace("Z", "+00:00")), r["id"]))


# the run manifest's fields of the instrument: the line breaks where one changes (or the suite does)
_INSTRUMENT = ("judge_model", "prompt_hash", "rubric_hash", "temperature", "mode", "groups", "field_order",
               "prompt_variant", "postprocess_version", "structured_output", "judge_rounds")


def _trend_out(runs: list[dict], by_round: dict) -> dict:
    out, seg, prev, points = {}, 0, None, 0
    for r in runs:
        vals = [_num(v) for v in by_round[r["id"]]]
        got = [v for v in vals if v is not None]
        if not got:
            continue
        if prev is not None and (any(prev["m"].get(k) != r["m"].get(k) for k in _INSTRUMENT)
                                 or prev["g"]["suite_hash"] != r["g"]["suite_hash"]):
            seg += 1
        out[f"{r['id']}.value"], out[f"{r['id']}.segment"] = sum(got) / len(got), seg
        for i, v in enumerate(vals):
            out[f"{r['id']}.r{i + 1}"] = v
        prev, points = r, points + 1
    out["segments"], out["points"] = (seg + 1 if points else 0), points
    return out


def trend_duckdb(c: Ctx) -> dict:
    runs = _trend_runs(c)
    hold = _hold_sql(c)
    by_round = {}
    for r in runs:
        rows = c.q(f"SELECT gen_round, avg(p) FROM (SELECT gen_round, CASE WHEN count(passed) < {r['k']} THEN NULL "
                   f"ELSE bool_and(passed)::INT END AS p FROM read_parquet(?) WHERE judge_round = 1 {hold} "
                   "GROUP BY item_id, gen_round) GROUP BY gen_round ORDER BY gen_round", [c.v(r["id"])])
        by_round[r["id"]] = [x[1] for x in rows]
    return _trend_out(runs, by_round)


def trend_pandas(c: Ctx) -> dict:
    import pandas as pd
    runs = _trend_runs(c)
    items = pd.read_parquet(c.items(), columns=["item_id", "holdout"], **PD_READ)
    holdout = items.loc[items["holdout"].fillna(False).astype(bool), "item_id"]
    by_round = {}
    for r in runs:
        v = pd.read_parquet(c.v(r["id"]), columns=["item_id", "gen_round", "passed"],
                            filters=[("judge_round", "==", 1)], **PD_READ)
        v = v[~v["item_id"].isin(holdout)]
        a = v.groupby(["item_id", "gen_round"])["passed"].agg(["count", "all"])
        p = a["all"].astype("float64").where(a["count"] >= r["k"])
        by_round[r["id"]] = list(p.groupby(level="gen_round").mean().sort_index())
    return _trend_out(runs, by_round)


# ---- cost RUN_B (evalcore.analysis.cost.run_cost over calls.parquet: the judge's totals and each criterion's share
# by the equal sharing rule; its projection and the system-under-test totals are not in the canon)

COST_RUN = SPLIT
COST_JUDGE = ("calls", "failed_calls", "answers", "tokens_in", "tokens_out", "cost_usd", "cost_unknown_calls",
              "cost_usd_per_answer", "latency_ms_mean", "latency_ms_p50", "latency_ms_p95", "latency_ms_total",
              "cache_hits")
COST_COUNTS = ("items", "answers", "rounds", "gen_rounds")
COST_CRIT = ("calls", "failed_calls", "tokens_in", "tokens_out", "cost_usd", "cost_unknown_calls", "latency_ms_total",
             "latency_ms_mean", "latency_ms_p50", "latency_ms_p95")


def cost_canon(r: dict) -> dict:
    out = {f"run.{k}": r[k] for k in COST_COUNTS}
    out.update({f"judge.{k}": r["judge"][k] for k in COST_JUDGE})
    for row in r["per_criterion"]:
        out.update({f"{row['criterion']}.{k}": row[k] for k in COST_CRIT})
    return out


def cost_ev(c: Ctx):
    from evalcore.analysis.cost import run_cost
    return run_cost(c.store(), COST_RUN)


def _cost_out(tot, crit_rows) -> dict:
    (calls, failed, answers, tin, tout, cost, unknown, mean, p50, p95, total, hits, items, rounds, gen_rounds) = tot
    cost = _num(cost)
    out = {"run.items": int(items), "run.answers": int(answers), "run.rounds": int(rounds),
           "run.gen_rounds": int(gen_rounds)}
    judge = {"calls": calls, "failed_calls": failed, "answers": answers, "tokens_in": tin, "tokens_out": tout,
             "cost_usd": cost, "cost_unknown_calls": unknown,
             "cost_usd_per_answer": cost / answers if cost is not None and unknown == 0 and answers else None,
             "latency_ms_mean": mean, "latency_ms_p50": p50, "latency_ms_p95": p95, "latency_ms_total": total,
             "cache_hits": hits}
    out.update({f"judge.{k}": _num(v) for k, v in judge.items()})
    for row in crit_rows:
        out.update({f"{row[0]}.{k}": _num(v) for k, v in zip(COST_CRIT, row[1:])})
    return out


def cost_duckdb(c: Ctx) -> dict:
    path = c.calls(COST_RUN)
    tot = c.q("SELECT count(*), count(error), count(DISTINCT (item_id, gen_round)), sum(tokens_in), sum(tokens_out), "
              "sum(cost_usd), count(*) - count(cost_usd), avg(latency_ms), quantile_cont(latency_ms, 0.5), "
              "quantile_cont(latency_ms, 0.95), sum(latency_ms), count(*) FILTER (WHERE cache_hit), "
              "count(DISTINCT item_id), count(DISTINCT (gen_round, judge_round)), count(DISTINCT gen_round) "
              "FROM read_parquet(?)", [path])[0]
    crit_rows = c.q(
        "SELECT criterion, count(*), count(error), sum(tokens_in / k), sum(tokens_out / k), sum(cost_usd / k), "
        "count(*) - count(cost_usd), sum(latency_ms / k), avg(latency_ms), quantile_cont(latency_ms, 0.5), "
        "quantile_cont(latency_ms, 0.95) FROM (SELECT tokens_in, tokens_out, cost_usd, latency_ms, error, "
        "len(cs) AS k, unnest(cs) AS criterion FROM (SELECT *, CASE WHEN len(criteria) > 0 THEN criteria "
        "ELSE ['(none)'] END AS cs FROM read_parquet(?))) GROUP BY criterion", [path])
    return _cost_out(tot, crit_rows)


def cost_pandas(c: Ctx) -> dict:
    import pandas as pd
    d = pd.read_parquet(c.calls(COST_RUN), columns=["item_id", "gen_round", "judge_round", "criteria", "tokens_in",
                                                    "tokens_out", "cost_usd", "latency_ms", "error", "cache_hit"],
                        **PD_READ)
    known = d["cost_usd"].count()
    lat = d["latency_ms"]
    tot = (len(d), d["error"].count(), len(d.drop_duplicates(["item_id", "gen_round"])), d["tokens_in"].sum(),
           d["tokens_out"].sum(), d["cost_usd"].sum() if known else None, len(d) - known, lat.mean(),
           lat.quantile(0.5), lat.quantile(0.95), lat.sum(), d["cache_hit"].sum(), d["item_id"].nunique(),
           len(d.drop_duplicates(["gen_round", "judge_round"])), d["gen_round"].nunique())
    k = d["criteria"].list.len().fillna(0)
    d["k"] = k.where(k > 0, 1)  # a call that lists no criterion counts whole under "(none)"
    u = d.drop(columns=["item_id"]).explode("criteria").rename(columns={"criteria": "criterion"})
    u["criterion"] = u["criterion"].fillna("(none)")
    for col in ("tokens_in", "tokens_out", "cost_usd", "latency_ms"):
        u[f"{col}_share"] = u[col] / u["k"]
    g = u.groupby("criterion")
    per = pd.DataFrame({"calls": g.size(), "failed": g["error"].count(), "tin": g["tokens_in_share"].sum(),
                        "tout": g["tokens_out_share"].sum(), "cost": g["cost_usd_share"].sum(min_count=1),
                        "unknown": g.size() - g["cost_usd"].count(), "lat_total": g["latency_ms_share"].sum(),
                        "lat_mean": g["latency_ms"].mean(), "p50": g["latency_ms"].quantile(0.5),
                        "p95": g["latency_ms"].quantile(0.95)})
    return _cost_out(tot, [(cr, *row) for cr, row in zip(per.index, per.itertuples(index=False))])



