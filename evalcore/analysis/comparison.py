"""Compare two configurations: per-round figures with their spread, paired per-item deltas,
stable wins and regressions, the noise floor, the two-sided bar, the power of the comparison, a
CI gate and a trend across runs. Which knobs differ is :mod:`evalcore.analysis.configs`
(:func:`~evalcore.analysis.configs.diff`, where compare and gate start). See docs/COMPARE.md for
every definition.

* :func:`compare` is everything the compare page shows for a baseline and a candidate run:
  :func:`per_round` figures (``all_pass`` then every criterion both runs judged,
  :func:`metrics_of`), the paired deltas with a seeded percentile bootstrap interval
  (:mod:`evalcore.stats.bootstrap`; an analytic t interval past :data:`BOOTSTRAP_MAX_ITEMS`
  items), stable wins and regressions, the noise floor and :func:`power`.
* :func:`two_sided_bar`, and :func:`gate` on top of it with a known-miss allowlist
  (:func:`read_allowlist`); :func:`markdown` and :func:`rounds_text` write them for a pull request.
* :func:`trend`: a headline over time across runs, broken where the judge model, the judge prompt
  or the rubric changed (:data:`BREAK_KNOBS`) or the suite did.

Vocabulary (tested in tests/test_compare.py):

* generation round r of A is paired with generation round r of B. An item is a **stable win**
  when B is better than A in every paired round, a **stable regression** when it is worse in every
  paired round (a round where either side errored breaks stability).
* the **noise floor** of a figure is the largest round-to-round spread (max - min over generation
  rounds) of that figure within either configuration; unknown with one round.
* the **two-sided bar** holds when B shows a gain (the paired mean delta's interval lies above
  zero, or at least one stable win with a positive mean delta) and no stable regression of its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from evalcore.analysis.configs import diff
from evalcore.analysis.selection import Selection, _hold, _sel_sql
from evalcore.contract import schema as S
from evalcore.errors import InputError, NotFoundError
from evalcore.stats.bootstrap import generator, percentile_interval, resample
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- knobs


# --------------------------------------------------------------------------- per-answer figures


def metrics_of(store: Store, run_a: str, run_b: str | None = None) -> list[str]:
    """``all_pass`` then every criterion both runs judged (in A's rubric order)."""
    ca = [c.name for c in store.run(run_a).manifest.rubric.criteria]
    if run_b is not None:
        cb = {c.name for c in store.run(run_b).manifest.rubric.criteria}
        ca = [c for c in ca if c in cb]
    return ["all_pass", *ca]


def _selection(sel: Selection, include_holdout: bool | None) -> Selection:
    """``sel`` with holdout items included or not (None: as ``sel`` says, which is the command
    line's ``--include-holdout`` or hidden)."""
    return sel if include_holdout is None else replace(sel, include_holdout=bool(include_holdout))


def _pivot_sql(store: Store, run_id: str, criteria: list[str], sel: Selection, n_crit: int) -> tuple[str, list[Any]]:
    """(item_id, gen_round, all_pass, c0..ck) per answer: all_pass is null when a verdict errored
    or is missing; ci is that criterion's derived pass (null when errored)."""
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    cols = ", ".join(f"bool_or(passed) FILTER (WHERE criterion = ?) AS c{i}" for i in range(len(criteria)))
    sql = (
        f"SELECT item_id, gen_round, CASE WHEN count(passed) < ? THEN NULL ELSE bool_and(passed) END AS all_pass"
        f"{', ' + cols if cols else ''} FROM ({base}) GROUP BY item_id, gen_round"
    )
    return sql, [n_crit, *criteria, store.path_of("run", run_id, "verdicts"), *params]


def per_round(
    store: Store,
    run_id: str,
    *,
    sel: Selection | None = None,
    include_holdout: bool | None = None,
    metrics: list[str] | None = None,
) -> dict[str, Any]:
    """Each figure per generation round (r1, r2, ...), then the mean over rounds and the spread
    (max - min) that the noise floor is made of."""
    m = store.run(run_id).manifest
    sel = _selection(sel or Selection(), include_holdout)
    metrics = metrics or metrics_of(store, run_id)
    crits = [x for x in metrics if x != "all_pass"]
    piv, params = _pivot_sql(store, run_id, crits, sel, len(m.rubric.criteria))
    cols = ["avg(all_pass::INT) AS all_pass"] + [f"avg(c{i}::INT) AS c{i}" for i in range(len(crits))]
    rows = store.sql(
        f"SELECT gen_round, count(*) AS answers, {', '.join(cols)} FROM ({piv}) GROUP BY gen_round ORDER BY gen_round",
        params,
    )
    return {"run_id": run_id, "status": m.status, **_round_figures(rows, metrics)}


def _round_figures(rows: list[tuple], metrics: list[str]) -> dict[str, Any]:
    """Rows (gen_round, answers, all_pass, c0, c1, ...) -> rounds, answers per round, and per figure
    its value per round, mean, spread (max - min) and sd."""
    rounds = [int(r[0]) for r in rows]
    figures = {}
    for j, name in enumerate(metrics):
        vals = [None if r[2 + j] is None else float(r[2 + j]) for r in rows]
        got = [v for v in vals if v is not None]
        figures[name] = {
            "by_round": vals,
            "mean": float(np.mean(got)) if got else None,
            "spread": (max(got) - min(got)) if len(got) > 1 else None,
            "sd": float(np.std(got, ddof=1)) if len(got) > 1 else None,
        }
    return {"rounds": rounds, "answers_by_round": [int(r[1]) for r in rows], "figures": figures}


def _item_sql(store: Store, run_a: str, run_b: str, crits: list[str], sel: Selection, variances: bool = True):
    """A ``WITH ... per_item AS (...)`` prefix: per item and figure j, the paired rounds judged on
    both sides (nn{j}), rounds better (up{j}) and worse (down{j}), the mean delta d{j}, whether each
    side failed every judged round (amiss{j}, bmiss{j}) and each side's variance across rounds."""
    na = len(store.run(run_a).manifest.rubric.criteria)
    nb = len(store.run(run_b).manifest.rubric.criteria)
    pa, qa = _pivot_sql(store, run_a, crits, sel, na)
    pb, qb = _pivot_sql(store, run_b, crits, sel, nb)
    names = ["all_pass"] + [f"c{i}" for i in range(len(crits))]
    sel_cols = ", ".join(f"a.{n} AS a{j}, b.{n} AS b{j}" for j, n in enumerate(names))
    aggs = []
    for j in range(len(names)):
        both = f"a{j} IS NOT NULL AND b{j} IS NOT NULL"
        aggs.append(
            f"count(*) FILTER (WHERE {both}) AS nn{j}, count(*) FILTER (WHERE b{j}::INT > a{j}::INT) AS up{j}, "
            f"count(*) FILTER (WHERE b{j}::INT < a{j}::INT) AS down{j}, avg(b{j}::INT - a{j}::INT) AS d{j}, "
            f"bool_and(NOT a{j}) AS amiss{j}, bool_and(NOT b{j}) AS bmiss{j}, "
            + (
                f"var_samp(a{j}::DOUBLE) AS va{j}, var_samp(b{j}::DOUBLE) AS vb{j}"
                if variances
                else f"NULL::DOUBLE AS va{j}, NULL::DOUBLE AS vb{j}"
            )
        )
    cte = (
        f"WITH a AS MATERIALIZED ({pa}), b AS MATERIALIZED ({pb}), j AS (SELECT item_id, gen_round, {sel_cols} FROM a JOIN b "
        f"USING (item_id, gen_round)), per_item AS (SELECT item_id, count(*) AS paired, {', '.join(aggs)} FROM j "
        "GROUP BY item_id)"
    )
    return cte, [*qa, *qb], names


def _summary_sql(n_metrics: int, rounds: int, limit: int, listed: int, full: bool) -> str:
    """Per figure over items: n, mean and sd of the deltas, counts of stable wins and regressions
    (better or worse in every one of the ``rounds`` paired rounds) and of new and fixed misses, mean
    within-item variances; for figure ``listed`` (the headline) also the ids: the first ``limit``
    in id order, or every one when ``full`` (the gate's allowlist needs them all); then each side's
    figures per generation round (from the same pivots: each run is read once)."""
    cols = []
    for j in range(n_metrics):
        cond = {
            "wins": f"nn{j} = paired AND paired = {int(rounds)} AND paired > 0 AND up{j} = paired",
            "regs": f"nn{j} = paired AND paired = {int(rounds)} AND paired > 0 AND down{j} = paired",
            "new": f"bmiss{j} AND NOT amiss{j}",
            "fixed": f"amiss{j} AND NOT bmiss{j}",
        }
        cols.append(
            f"count(d{j}) AS n{j}, avg(d{j}) AS mean{j}, stddev_samp(d{j}) AS sd{j}, "
            f"avg(va{j}) AS va{j}, avg(vb{j}) AS vb{j}"
        )
        for key, c in cond.items():
            cols.append(f"count(*) FILTER (WHERE {c}) AS count_{key}{j}")
            if j == listed:
                ids = f"list(item_id) FILTER (WHERE {c})" if full else f"min(item_id, {int(limit)}) FILTER (WHERE {c})"
                cols.append(f"coalesce({ids}, []) AS {key}{j}")
    per_round = ", ".join(
        ["count(*) AS answers", "avg(all_pass::INT) AS m0"]
        + [f"avg(c{j - 1}::INT) AS m{j}" for j in range(1, n_metrics)]
    )
    return (
        f", rounds AS (SELECT side, gen_round, {per_round} FROM (SELECT 'a' AS side, * FROM a UNION ALL "
        "SELECT 'b' AS side, * FROM b) GROUP BY side, gen_round), "
        f"summary AS (SELECT {', '.join(cols)} FROM per_item) "
        "SELECT (SELECT list(struct_pack(side, gen_round, answers, "
        + ", ".join(f"m{j}" for j in range(n_metrics))
        + ") ORDER BY side, gen_round) FROM rounds) AS per_round, * FROM summary"
    )


BOOTSTRAP_MAX_ITEMS = 20000


def _interval(
    d: np.ndarray | None, n: int, mean: float | None, sd: float | None, seed: int, n_boot: int, level: float = 0.95
) -> dict[str, Any]:
    """Seeded percentile bootstrap of the mean paired delta (:mod:`evalcore.stats.bootstrap`) up to
    20,000 items (``d`` holds the deltas), an analytic t interval from ``n``, ``mean`` and ``sd``
    above."""
    from scipy import stats as sst

    if n == 0 or mean is None:
        return {"low": None, "high": None, "method": None, "reason": "no item judged in both"}
    if n == 1 or not sd:
        return {
            "low": mean,
            "high": mean,
            "method": "degenerate",
            "reason": "every item has the same delta" if n > 1 else "one item",
        }
    if d is not None:
        dd = np.asarray(d, dtype=float)
        iv = percentile_interval(resample(lambda idx: dd[idx].mean(axis=-1), dd.size, n_boot, generator(seed)), level)
        return {
            "low": iv.lo,
            "high": iv.hi,
            "method": f"bootstrap (percentile, {n_boot} resamples, seed {seed})",
        }
    half = float(sst.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n))
    return {"low": mean - half, "high": mean + half, "method": f"analytic (t, more than {BOOTSTRAP_MAX_ITEMS:,} items)"}


def power(
    sd_delta: float | None,
    within_var: float | None,
    rounds: int,
    n_items: int,
    effect: float,
    *,
    alpha: float = 0.05,
    power_: float = 0.8,
) -> dict[str, Any]:
    """Minimum detectable effect of the paired comparison at this noise, and the items (at 1, 2,
    3, 5, 10 rounds) or rounds (at these items) needed to see ``effect``. The per-item delta's
    variance splits into item-to-item spread tau^2 and round noise w/R (w = the two
    configurations' within-item round variances added): var(R) = tau^2 + w / R."""
    from statsmodels.stats.power import TTestPower

    tp = TTestPower()
    out: dict[str, Any] = {"alpha": alpha, "power": power_, "effect": effect, "items": n_items, "rounds": rounds}
    if sd_delta is None or n_items < 2 or sd_delta == 0:
        out.update(
            mde=None,
            reason="no spread in the per-item deltas to size a test from" if n_items >= 2 else "fewer than two items",
            items_needed={},
            rounds_needed=None,
        )
        return out
    w = within_var or 0.0
    tau2 = max(0.0, sd_delta**2 - w / max(rounds, 1))

    def sd_at(r: int) -> float:
        return math.sqrt(tau2 + w / r)

    def n_for(r: int) -> int | None:
        s = sd_at(r)
        if s == 0:
            return None
        try:
            n = tp.solve_power(effect_size=effect / s, nobs=None, alpha=alpha, power=power_, alternative="two-sided")
        except Exception:
            return None
        return int(math.ceil(float(np.atleast_1d(n)[0])))

    es = float(
        np.atleast_1d(
            tp.solve_power(effect_size=None, nobs=n_items, alpha=alpha, power=power_, alternative="two-sided")
        )[0]
    )
    out["mde"] = es * sd_delta
    out["tau2"] = tau2
    out["within_var"] = w
    out["items_needed"] = {str(r): n_for(r) for r in (1, 2, 3, 5, 10)}
    need = None
    for r in range(1, 51):
        if es * sd_at(r) <= effect:
            need = r
            break
    out["rounds_needed"] = need
    out["rounds_note"] = (
        None
        if need is not None
        else f"item-to-item spread alone (sd {math.sqrt(tau2):.3f}) keeps the minimum detectable effect "
        f"above {effect:g} at {n_items} items: more rounds cannot reach it, more items can"
    )
    return out


def compare(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    sel: Selection | None = None,
    include_holdout: bool | None = None,
    seed: int = 0,
    n_boot: int = 2000,
    effect: float = 0.05,
    headline: str = "all_pass",
    allow: Iterable[str] = (),
    list_limit: int = 50,
) -> dict[str, Any]:
    """Everything the compare page shows for baseline ``run_a`` and candidate ``run_b``."""
    if n_boot < 1:
        raise InputError("must be at least 1", field="--n-boot")
    sel = _selection(sel or Selection(), include_holdout)
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    for rid, m in ((run_a, ma), (run_b, mb)):
        if m.mode == "imported" and not m.rubric.criteria:
            raise InputError(f"run {rid!r} has no criteria to compare", field="run id")
    metrics = metrics_of(store, run_a, run_b)
    if headline not in metrics:
        raise InputError(f"{headline!r} is not a figure of both runs; figures: {', '.join(metrics)}", field="--metric")
    crits = metrics[1:]
    d = diff(store, run_a, run_b)
    allow = set(allow)
    g = store.generation
    rounds_paired = 1 if sel.gen_round is not None else min(g(ma.gen_id).manifest.rounds, g(mb.gen_id).manifest.rounds)
    # within-item variance across rounds feeds the power figures only, and needs two rounds
    cte, params, names = _item_sql(store, run_a, run_b, crits, sel, variances=rounds_paired > 1)
    hi = metrics.index(headline)
    summary = store.records(cte + " " + _summary_sql(len(metrics), rounds_paired, list_limit, hi, bool(allow)), params)[
        0
    ]
    sides = {}
    for side, m in (("a", ma), ("b", mb)):
        rows = [
            (r["gen_round"], r["answers"], *(r[f"m{j}"] for j in range(len(metrics))))
            for r in (summary["per_round"] or [])
            if r["side"] == side
        ]
        sides[side] = {"run_id": m.run_id, "status": m.status, **_round_figures(rows, metrics)}
    fa, fb = sides["a"], sides["b"]
    rounds_paired = min(len(fa["rounds"]), len(fb["rounds"]))
    vectors = None
    if 0 < max(summary[f"n{j}"] for j in range(len(metrics))) <= BOOTSTRAP_MAX_ITEMS:
        rows = store.sql(
            cte + " SELECT " + ", ".join(f"d{j}" for j in range(len(metrics))) + " FROM per_item ORDER BY item_id",
            params,
        )
        vectors = np.array([[np.nan if x is None else float(x) for x in r] for r in rows], dtype=float).reshape(
            len(rows), len(metrics)
        )
    per_metric = {}
    for j, name in enumerate(metrics):
        n, mean_delta, sd = int(summary[f"n{j}"]), summary[f"mean{j}"], summary[f"sd{j}"]
        mean_delta = None if mean_delta is None else float(mean_delta)
        dv = None if vectors is None else vectors[~np.isnan(vectors[:, j]), j]
        iv = _interval(dv, n, mean_delta, None if sd is None else float(sd), seed, n_boot)
        wins, regs, new, fixed = (sorted(summary.get(f"{k}{j}") or []) for k in ("wins", "regs", "new", "fixed"))
        va, vb = summary[f"va{j}"], summary[f"vb{j}"]
        within = None if va is None and vb is None else float(va or 0.0) + float(vb or 0.0)
        spreads = [x for x in (fa["figures"][name]["spread"], fb["figures"][name]["spread"]) if x is not None]
        noise = max(spreads) if spreads else None
        per_metric[name] = {
            "a": fa["figures"][name],
            "b": fb["figures"][name],
            "delta": {
                "mean": mean_delta,
                "of_means": (
                    None
                    if fa["figures"][name]["mean"] is None or fb["figures"][name]["mean"] is None
                    else fb["figures"][name]["mean"] - fa["figures"][name]["mean"]
                ),
                "ci95": [iv["low"], iv["high"]],
                "method": iv["method"],
                "items": n,
                "sd": None if sd is None else float(sd),
                **({"reason": iv["reason"]} if iv.get("reason") else {}),
            },
            "noise_floor": noise,
            "within_noise": (None if noise is None or mean_delta is None else abs(mean_delta) <= noise),
            "stable_wins": int(summary[f"count_wins{j}"]),
            "stable_regressions": int(summary[f"count_regs{j}"]),
            # ids for the headline figure only (counts for every figure)
            "stable_win_items": wins[:list_limit] if j == hi else None,
            "stable_regression_items": regs[:list_limit] if j == hi else None,
            "_wins": wins,
            "_regs": regs,
            "_new_miss": new,
            "_fixed": fixed,
            "_counts": {k: int(summary[f"count_{k}{j}"]) for k in ("wins", "regs", "new", "fixed")},
            "power": power(None if sd is None else float(sd), within, max(rounds_paired, 1), n, effect),
        }
    h = per_metric[headline]
    verdict = two_sided_bar(
        h["delta"]["mean"],
        h["delta"]["ci95"][0],
        h["_counts"]["wins"],
        h["_regs"],
        h["_counts"]["regs"],
        allow,
        rounds_paired,
        [(run_a, ma.status), (run_b, mb.status)],
    )
    out_metrics = {}
    for name, v in per_metric.items():
        out_metrics[name] = {k: x for k, x in v.items() if not k.startswith("_")}
    notes = []
    if len(fa["rounds"]) != len(fb["rounds"]):
        notes.append(
            f"the runs cover different generation rounds ({len(fa['rounds'])} vs {len(fb['rounds'])}); "
            f"only the {rounds_paired} they share are paired"
        )
    return {
        "baseline": run_a,
        "candidate": run_b,
        "headline": headline,
        "metrics": metrics,
        "selection": sel.describe(),
        "include_holdout": sel.include_holdout,
        "seed": seed,
        "n_boot": n_boot,
        "rounds_paired": rounds_paired,
        "diff": d,
        "figures": out_metrics,
        "verdict": verdict,
        "new_misses": h["_new_miss"][:list_limit],
        "new_miss_count": h["_counts"]["new"],
        "fixed_misses": h["_fixed"][:list_limit],
        "fixed_miss_count": h["_counts"]["fixed"],
        "cost": {"baseline": _cost(store, ma), "candidate": _cost(store, mb)},
        "simulated": bool(d["a"]["simulated"] or d["b"]["simulated"]),
        "notes": notes,
        "_all": {"regs": h["_regs"], "new_miss": h["_new_miss"], "new_miss_count": h["_counts"]["new"]},
    }


def two_sided_bar(
    mean_delta: float | None,
    ci_low: float | None,
    n_wins: int,
    regs: list[str],
    n_regs: int,
    allow: set[str],
    rounds: int,
    statuses: list[tuple[str, str]],
) -> dict[str, Any]:
    """A gain (interval above zero, or a stable win with a positive mean) and no stable regression
    outside the allowlist; a polluted or partial run fails it. ``regs`` holds every stable
    regression when ``allow`` is not empty, else the first few of the ``n_regs``. Pure."""
    allowed = [i for i in regs if i in allow]
    own = [i for i in regs if i not in allow]
    n_own = n_regs - len(allowed)
    gain = mean_delta is not None and ((ci_low is not None and ci_low > 0) or (n_wins > 0 and mean_delta > 0))
    reasons = []
    if not gain:
        reasons.append(
            "no gain: "
            + (
                "no item judged in both runs"
                if mean_delta is None
                else f"mean delta {mean_delta:+.3f} with its interval reaching {ci_low:+.3f} and {n_wins} stable wins"
            )
        )
    if n_own:
        reasons.append(
            f"{n_own} stable regression{'s' if n_own != 1 else ''} of its own: "
            + ", ".join(own[:10])
            + (" ..." if n_own > 10 else "")
        )
    bad = [f"{r} is {s}" for r, s in statuses if s != "complete"]
    if bad:
        reasons.append("not a measurement to gate on: " + "; ".join(bad))
    notes = []
    if rounds < 2:
        notes.append("rests on one generation round: a stable win or regression is a single comparison here")
    if allowed:
        notes.append(f"{len(allowed)} stable regression(s) on the allowlist: {', '.join(allowed[:10])}")
    holds = gain and not n_own and not bad
    return {
        "holds": holds,
        "gain": gain,
        "regressions_own": own[:50],
        "regressions_own_count": n_own,
        "regressions_allowed": allowed,
        "reasons": reasons,
        "notes": notes,
        "text": (
            "PASSES the two-sided bar: a gain and no regression of its own"
            if holds
            else "FAILS the two-sided bar: " + "; ".join(reasons)
        ),
    }


def _cost(store: Store, m: S.RunManifest) -> dict[str, Any]:
    g = store.generation(m.gen_id).manifest
    return {"judge": m.totals.model_dump(), "system": g.totals.model_dump()}


# --------------------------------------------------------------------------- the gate

_ALLOW_LINE = re.compile(r"^(\S+)(?:\s+(\d{4}-\d{2}-\d{2}))?(?:\s+(.*))?$")


def read_allowlist(path: str | Path) -> list[dict[str, Any]]:
    """Allowlist: one known miss per line, ``ITEM_ID [YYYY-MM-DD] [reason...]``; ``#`` starts a
    comment. One clear error naming the line for anything else."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", file=p, field="--allowlist") from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", file=p, field="--allowlist") from None
    out, seen = [], set()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _ALLOW_LINE.match(line)
        parts = line.split()
        if m is None or (len(parts) > 1 and not m.group(2) and re.fullmatch(r"\d[\d/.-]*", parts[1])):
            raise InputError(f"added date {parts[1]!r} is not YYYY-MM-DD", file=p, field=f"line {n}")
        item, added, reason = m.group(1), m.group(2), (m.group(3) or "").strip()
        if added:
            try:
                added_d = date.fromisoformat(added)
            except ValueError:
                raise InputError(f"added date {added!r} is not a calendar date", file=p, field=f"line {n}") from None
        else:
            added_d = None
        if item in seen:
            raise InputError(f"item {item!r} is listed twice", file=p, field=f"line {n}")
        seen.add(item)
        out.append({"item_id": item, "added": added_d.isoformat() if added_d else None, "reason": reason, "line": n})
    return out


def gate(
    store: Store,
    baseline: str,
    candidate: str,
    *,
    allowlist: str | Path | None = None,
    sel: Selection | None = None,
    include_holdout: bool | None = None,
    seed: int = 0,
    n_boot: int = 2000,
    headline: str = "all_pass",
    today: date | None = None,
) -> dict[str, Any]:
    """Passes only when the two-sided bar holds and no new miss appears outside the allowlist;
    reports the allowlist's upkeep (entries now passing, their age)."""
    entries = read_allowlist(allowlist) if allowlist else []
    allow = {e["item_id"] for e in entries}
    sel = _selection(sel or Selection(), include_holdout)
    c = compare(store, baseline, candidate, sel=sel, seed=seed, n_boot=n_boot, headline=headline, allow=allow)
    all_ = c.pop("_all")
    # with an allowlist the lists are complete; without one, every new miss is the candidate's own
    new_miss_own = [i for i in all_["new_miss"] if i not in allow]
    n_new_own = all_["new_miss_count"] - (len(all_["new_miss"]) - len(new_miss_own))
    today = today or datetime.now(UTC).date()
    # upkeep: an allowlisted item the candidate does not miss (passes in some round) can come off
    listed = [e["item_id"] for e in entries]
    cand_miss = _misses(store, candidate, headline, sel, listed)
    items = _known_items(store, candidate, listed)
    upkeep = []
    for e in entries:
        age = (today - date.fromisoformat(e["added"])).days if e["added"] else None
        state = (
            "not in the suite"
            if e["item_id"] not in items
            else "still missed"
            if e["item_id"] in cand_miss
            else "now passing: remove it"
        )
        upkeep.append({**e, "age_days": age, "state": state})
    passed = bool(c["verdict"]["holds"]) and not n_new_own
    reasons = list(c["verdict"]["reasons"])
    if n_new_own:
        reasons.append(
            f"{n_new_own} new miss(es) outside the allowlist: {', '.join(new_miss_own[:10])}"
            + (" ..." if n_new_own > 10 else "")
        )
    c.update(
        gate={
            "passed": passed,
            "reasons": reasons,
            "new_misses_own": new_miss_own[:50],
            "new_misses_own_count": n_new_own,
            "allowlist": allowlist and str(allowlist),
            "allowlist_entries": upkeep,
            "allowlist_now_passing": [u["item_id"] for u in upkeep if u["state"].startswith("now passing")],
        }
    )
    return c


def _misses(store: Store, run_id: str, metric: str, sel: Selection, ids: list[str]) -> set[str]:
    """Which of ``ids`` the run fails in every generation round (for the allowlist's upkeep)."""
    if not ids:
        return set()
    m = store.run(run_id).manifest
    crits = [] if metric == "all_pass" else [metric]
    piv, params = _pivot_sql(store, run_id, crits, sel, len(m.rubric.criteria))
    col = "all_pass" if metric == "all_pass" else "c0"
    return {
        r[0]
        for r in store.sql(
            f"SELECT item_id FROM ({piv}) WHERE list_contains(?::VARCHAR[], item_id) "
            f"GROUP BY item_id HAVING bool_and(NOT {col})",
            [*params, ids],
        )
    }


def _known_items(store: Store, run_id: str, ids: list[str]) -> set[str]:
    """Which of ``ids`` are items of the run's suite."""
    if not ids:
        return set()
    gen = store.generation(store.run(run_id).manifest.gen_id).manifest
    return {
        r[0]
        for r in store.sql(
            "SELECT item_id FROM read_parquet(?) WHERE list_contains(?::VARCHAR[], item_id)",
            [store.path_of("suite", gen.suite_id, "items"), ids],
        )
    }


# --------------------------------------------------------------------------- text and markdown


def _pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "—"
    return f"{v * 100:+.1f} pts" if signed else f"{v * 100:.1f}%"


def rounds_text(f: dict[str, Any]) -> str:
    """``r1 / r2 / r3 -> mean (spread)`` as the seed writes it."""
    parts = " / ".join(_pct(v) for v in f["by_round"])
    if len(f["by_round"]) <= 1:
        return parts
    return f"{parts} -> {_pct(f['mean'])} (spread {_pct(f['spread'], signed=False)})"


def markdown(c: dict[str, Any]) -> str:
    """A Markdown summary of a comparison or a gate, for a pull request."""
    h = c["headline"]
    f = c["figures"][h]
    g = c.get("gate")
    lines = []
    if g is not None:
        lines.append(f"## evalcore gate: {'PASS' if g['passed'] else 'FAIL'}")
    else:
        lines.append("## evalcore compare")
    if c.get("simulated"):
        lines.append("\n**SIMULATED data** (made by evalcore's simulator, not by a real system).")
    lines.append(
        f"\nBaseline `{c['baseline']}`, candidate `{c['candidate']}`, {c['rounds_paired']} paired generation "
        f"round(s); the diff calls this a **{c['diff']['kind']}**."
    )
    for w in c["diff"]["warnings"]:
        lines.append(f"\n> Warning: {w}")
    lines.append(f"\n**{c['verdict']['text']}**")
    for n in c["verdict"]["notes"]:
        lines.append(f"- {n}")
    lines.append("\n| figure | baseline | candidate | paired delta (95% CI) | noise floor |")
    lines.append("|---|---|---|---|---|")
    for name in c["metrics"]:
        v = c["figures"][name]
        d = v["delta"]
        ci = "—" if d["ci95"][0] is None else f"[{_pct(d['ci95'][0], True)}, {_pct(d['ci95'][1], True)}]"
        lines.append(
            f"| {name} | {rounds_text(v['a'])} | {rounds_text(v['b'])} | {_pct(d['mean'], True)} {ci} | "
            f"{_pct(v['noise_floor'])} |"
        )
    lines.append(
        f"\nStable wins ({h}): {f['stable_wins']}"
        + (f" ({', '.join(f['stable_win_items'][:10])})" if f["stable_wins"] else "")
        + f". Stable regressions: {f['stable_regressions']}"
        + (f" ({', '.join(f['stable_regression_items'][:10])})" if f["stable_regressions"] else "")
        + "."
    )
    p = f["power"]
    if p.get("mde") is not None:
        lines.append(
            f"\nMinimum detectable effect at {p['items']} items: {_pct(p['mde'], True)} (alpha {p['alpha']}, "
            f"power {p['power']})."
        )
    if g is not None:
        lines.append(
            f"\nNew misses outside the allowlist: {len(g['new_misses_own'])}"
            + (f" ({', '.join(g['new_misses_own'][:10])})" if g["new_misses_own"] else "")
            + "."
        )
        if g["allowlist_entries"]:
            lines.append("\n| allowlisted item | added | age (days) | state |")
            lines.append("|---|---|---|---|")
            for e in g["allowlist_entries"]:
                lines.append(
                    f"| {e['item_id']} | {e['added'] or '—'} | {e['age_days'] if e['age_days'] is not None else '—'} "
                    f"| {e['state']} |"
                )
    cb, cc = c["cost"]["baseline"], c["cost"]["candidate"]
    lines.append("\n| cost | baseline | candidate |")
    lines.append("|---|---|---|")
    for who in ("system", "judge"):
        for key, label in (
            ("calls", "calls"),
            ("tokens_in", "tokens in"),
            ("tokens_out", "tokens out"),
            ("cost_usd", "cost (USD)"),
        ):
            a, b = cb[who].get(key), cc[who].get(key)
            fmt = (lambda x: "unknown" if x is None else f"{x:.4f}") if key == "cost_usd" else (lambda x: f"{x:,}")
            lines.append(f"| {who} {label} | {fmt(a)} | {fmt(b)} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- trend

BREAK_KNOBS = (("judge_model", "judge model"), ("prompt_hash", "judge prompt"), ("rubric_hash", "rubric"))
# a change of suite breaks the line too: different items are a different measurement


def trend(
    store: Store,
    *,
    suite_id: str | None = None,
    metric: str = "all_pass",
    sel: Selection | None = None,
    include_holdout: bool | None = None,
) -> dict[str, Any]:
    """A headline over time across runs (by created_at), broken where the judge model, the judge
    prompt or the rubric changed: levels on either side of a break are different measurements."""
    sel = _selection(sel or Selection(), include_holdout)
    runs = []
    for e in store.all("run"):
        m = e.manifest
        if not m.rubric.criteria:
            continue
        g = store.generation(m.gen_id).manifest
        if suite_id is not None and g.suite_id != suite_id:
            continue
        if metric != "all_pass" and metric not in m.rubric.names():
            continue
        runs.append((m.created_at, m.run_id, m, g))
    if suite_id is not None and suite_id not in store.ids("suite"):
        raise NotFoundError(f"no suite {suite_id!r} in {store.data}", field="--suite")
    runs.sort(key=lambda t: (t[0], t[1]))
    points, segment, prev = [], 0, None
    for created, rid, m, g in runs:
        pr = per_round(store, rid, sel=sel, metrics=["all_pass"] if metric == "all_pass" else ["all_pass", metric])
        f = pr["figures"][metric]
        if f["mean"] is None:  # no verdicts (a pairwise grader's run) or none under this selection
            continue
        breaks: list[str] = []
        if prev is not None:
            for key, label in BREAK_KNOBS:
                if getattr(prev[0], key) != getattr(m, key):
                    breaks.append(f"{label}: {getattr(prev[0], key)} -> {getattr(m, key)}")
            if prev[1].suite_hash != g.suite_hash:
                breaks.append(
                    f"suite: {prev[1].suite_id} -> {g.suite_id}"
                    if prev[1].suite_id != g.suite_id
                    else f"suite {g.suite_id}: content changed"
                )
            if breaks:
                segment += 1
        points.append(
            {
                "run_id": rid,
                "created_at": created.isoformat(),
                "gen_id": m.gen_id,
                "suite_id": g.suite_id,
                "value": f["mean"],
                "by_round": f["by_round"],
                "spread": f["spread"],
                "status": m.status,
                "judge_model": m.judge_model,
                "mode": m.mode,
                "segment": segment,
                "breaks": breaks,
                "simulated": bool(m.simulated or g.simulated),
            }
        )
        prev = (m, g)
    return {
        "metric": metric,
        "suite_id": suite_id,
        "points": points,
        "segments": (points[-1]["segment"] + 1) if points else 0,
        "simulated": any(p["simulated"] for p in points),
    }
