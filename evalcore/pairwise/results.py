"""The report of a closed pairwise session (docs/PAIRWISE.md): win rates with paired intervals,
people's and model graders' position consistency and agreement, identifiability of the arms.

* :func:`report` is every figure of a closed, unblinded session (refused while it is open: the
  unblinded record comes from :mod:`evalcore.pairwise.grading`); :func:`format_report` is the
  report as text for ``evalcore pairs report``.
* :func:`win_stats`: the paired result of arm A over arm B from per-pair scores, with a seeded
  percentile bootstrap over pairs (:mod:`evalcore.stats.bootstrap`).
* :func:`cohen_kappa` and :func:`krippendorff_alpha_nominal`: agreement on the choices as report
  rows, the statistics being :mod:`evalcore.stats.agreement`'s; identifiability is
  :mod:`evalcore.pairwise.leakage`'s check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from evalcore.errors import FormatError
from evalcore.pairwise import leakage as blinding
from evalcore.pairwise.grading import JudgmentStore, _people, load_pairs, unblinded
from evalcore.pairwise.sessions import CHOICES
from evalcore.pairwise.verdicts import GRADER_INCONSISTENT, caveats, pair_verdicts, verdict, verdict_counts
from evalcore.stats import agreement
from evalcore.stats.bootstrap import generator, percentile_interval, resample
from evalcore.storage.files import Entry
from evalcore.storage.seal import unblinded_path
from evalcore.storage.store import Store


def _st() -> Any:
    """scipy.stats, imported on first use (it costs about a second of start-up)."""
    from scipy import stats

    return stats


# --------------------------------------------------------------------------- statistics (pure)


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str] = CHOICES) -> dict:
    """Cohen's kappa of two raters' choices over the same pairs, as a report row: the statistic is
    :func:`evalcore.stats.agreement.cohen_kappa` (unweighted) on the choices coded by
    ``categories``. Undefined (None with a reason) with no pairs or when both raters used one and
    the same choice throughout (chance agreement 1)."""
    n = len(a)
    if n != len(b):
        raise ValueError("cohen_kappa needs two equally long sequences")
    if n == 0:
        return {"kappa": None, "n": 0, "agreement": None, "reason": "no units rated by both"}
    code = {c: i for i, c in enumerate(categories)}
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    s = agreement.cohen_kappa([code[x] for x in a], [code[y] for y in b], len(categories))
    if s.value is None:
        return {
            "kappa": None,
            "n": n,
            "agreement": po,
            "reason": "both used a single category throughout: chance agreement is 1 and kappa is undefined",
        }
    return {"kappa": s.value, "n": n, "agreement": po, "reason": None}


def krippendorff_alpha_nominal(units: Sequence[Sequence[str]]) -> dict:
    """Krippendorff's alpha for nominal choices, any number of people per pair (pairs with fewer
    than two choices are left out), as a report row: the statistic is
    :func:`evalcore.stats.agreement.krippendorff_alpha` (the ``krippendorff`` package) over a
    slots x pairs array (alpha depends on the values within each unit, not on who gave them).
    Undefined when a single value occurs (no disagreement is possible)."""
    kept = [list(u) for u in units if len(u) >= 2]
    cats = sorted({v for u in kept for v in u})
    if not kept:
        return {"alpha": None, "units": 0, "reason": "no unit was rated by two or more people"}
    if len(cats) < 2:
        return {"alpha": None, "units": len(kept), "reason": "only one value occurs: alpha is undefined"}
    code = {c: i for i, c in enumerate(cats)}
    data = np.full((max(len(u) for u in kept), len(kept)), float(agreement.MISSING))
    for j, u in enumerate(kept):
        data[: len(u), j] = [code[v] for v in u]
    s = agreement.krippendorff_alpha(data, "nominal", len(cats))
    return {"alpha": s.value, "units": len(kept), "reason": s.reason}


def win_stats(scores: Sequence[float], *, seed: int, n_boot: int = 2000, level: float = 0.95) -> dict:
    """Paired result of arm A over arm B from per-pair scores s_i in [0, 1] (1: A won the pair,
    0: B won, 0.5: a tie; several people on one pair average). ``win_rate`` is the mean of s_i,
    its interval a seeded percentile bootstrap over pairs (each pair resampled whole: the paired
    design), and the sign test counts pairs with s_i > 0.5 against s_i < 0.5 (exact two-sided
    binomial, ties left out)."""
    s = np.asarray(list(scores), dtype=float)
    n = len(s)
    if n == 0:
        return {"pairs": 0, "win_rate": None, "interval": None, "sign_test": None, "reason": "no graded pairs"}
    iv = percentile_interval(
        resample(lambda idx: s[idx].mean(axis=1), n, n_boot, generator([int(seed), 0xB007])), level
    )
    a, b = int((s > 0.5).sum()), int((s < 0.5).sum())
    sign = {
        "a_pairs": a,
        "b_pairs": b,
        "tied_pairs": n - a - b,
        "p_value": float(_st().binomtest(a, a + b, 0.5).pvalue) if a + b else 1.0,
    }
    return {
        "pairs": n,
        "win_rate": float(s.mean()),
        "interval": [iv.lo, iv.hi],
        "level": level,
        "sign_test": sign,
        "reason": None,
    }


def _prop(k: int, n: int) -> dict:
    if n == 0:
        return {"k": 0, "n": 0, "share": None, "interval": None, "p_value": None}
    ci = _st().binomtest(k, n).proportion_ci(method="wilson")
    return {
        "k": k,
        "n": n,
        "share": k / n,
        "interval": [float(ci.low), float(ci.high)],
        "p_value": float(_st().binomtest(k, n, 0.5).pvalue),
    }


# --------------------------------------------------------------------------- report


_SWAP = {"left": "right", "right": "left", "same": "same"}


def _arm_score(choice: str, key: dict, arm: str) -> float:
    """1 if ``arm`` won under this as-shown choice, 0 if it lost, 0.5 for same."""
    if choice == "same":
        return 0.5
    winner = key["left_arm"] if choice == "left" else key["right_arm"]
    return 1.0 if winner == arm else 0.0


def _wlt(judgments: list[dict], key_of: dict, arms: list[str]) -> dict:
    out = {a: {"wins": 0, "losses": 0, "ties": 0} for a in arms}
    for j in judgments:
        s = _arm_score(j["choice"], key_of[j["pair_id"]], arms[0])
        if s == 0.5:
            for a in arms:
                out[a]["ties"] += 1
        else:
            w, l_ = (arms[0], arms[1]) if s == 1 else (arms[1], arms[0])
            out[w]["wins"] += 1
            out[l_]["losses"] += 1
    return out


def _result(judgments: list[dict], pair_ids: list[str], key_of: dict, arms: list[str], seed: int) -> dict:
    per_pair: dict[str, list[float]] = {}
    mine = [j for j in judgments if j["pair_id"] in set(pair_ids)]
    for j in mine:
        per_pair.setdefault(j["pair_id"], []).append(_arm_score(j["choice"], key_of[j["pair_id"]], arms[0]))
    scores = [float(np.mean(v)) for _, v in sorted(per_pair.items())]
    return {
        "judgments": len(mine),
        "counts": _wlt(mine, key_of, arms),
        "arm": arms[0],
        "over": arms[1],
        **win_stats(scores, seed=seed),
    }


def _grader_runs(store: Store, session_id: str) -> list[str]:
    out = []
    for rid in store.ids("run"):
        e = store.get("run", rid)
        if (e.manifest.knobs or {}).get("session_id") == session_id and (e.path / "pair_verdicts.parquet").exists():
            out.append(rid)
    return out


#: people's or a grader's result over some pairs: :func:`_result` of (judgments, pair ids) on a session
_Result = Callable[[list[dict], list[str]], dict]


def _grader(store: Store, run_id: str, pairs: dict, people: list[dict], headline: list[str], res: _Result) -> dict:
    e = store.run(run_id)
    pv = store.records(
        'SELECT v.pair_id, v."order", v.choice, c.judge_round FROM read_parquet(?) v '
        'LEFT JOIN read_parquet(?) c ON v.call_id = c.call_id ORDER BY v.pair_id, v."order"',
        [str(e.path / "pair_verdicts.parquet"), str(e.path / "calls.parquet")],
    )
    pv = [r for r in pv if r["pair_id"] in pairs]
    ok = [r for r in pv if r["choice"] is not None]
    # flips: the two orders of one pair (and judge round) disagree, in as-shown terms
    by: dict[tuple[str, int], dict[str, str]] = {}
    for r in ok:
        by.setdefault((r["pair_id"], r["judge_round"] or 1), {})[r["order"]] = r["choice"]
    both = [v for v in by.values() if "as_shown" in v and "swapped" in v]
    flips = sum(v["as_shown"] != v["swapped"] for v in both)
    reversals = sum({v["as_shown"], v["swapped"]} == {"left", "right"} for v in both)
    decided = [r for r in ok if r["choice"] != "same"]
    first = sum((r["order"] == "as_shown") == (r["choice"] == "left") for r in decided)
    # the result averaged over both orders (and rounds): per pair, the mean of its verdicts
    per_pair: dict[str, list[float]] = {}
    for r in ok:
        per_pair.setdefault(r["pair_id"], []).append({"left": 1.0, "same": 0.5, "right": 0.0}[r["choice"]])
    avg_choice = {
        p: ("left" if np.mean(v) > 0.5 else "right" if np.mean(v) < 0.5 else "same") for p, v in per_pair.items()
    }
    as_shown_choice = {
        r["pair_id"]: r["choice"] for r in ok if r["order"] == "as_shown" and (r["judge_round"] or 1) == 1
    }
    graded_headline = [p for p in headline if p in per_pair]
    averaged = res([{"pair_id": p, "choice": avg_choice[p]} for p in graded_headline], graded_headline)
    shown_only = [p for p in headline if p in as_shown_choice]
    first_only = res([{"pair_id": p, "choice": as_shown_choice[p]} for p in shown_only], shown_only)
    kappas, majority, kappa_majority = _against_people(avg_choice, people)
    return {
        "run_id": run_id,
        "judge_model": e.manifest.judge_model,
        "status": e.manifest.status,
        "verdicts": len(pv),
        "errored_verdicts": len(pv) - len(ok),
        "pairs": len(per_pair),
        "flips": {
            "compared": len(both),
            "flips": flips,
            "reversals": reversals,
            "share": flips / len(both) if both else None,
            "reversal_share": reversals / len(both) if both else None,
        },
        "first_position": _prop(first, len(decided)),
        "position": _position(by, both, ok, majority),
        "pair_verdicts": _grader_verdicts(store, e, pairs, headline, res),
        "averaged_over_orders": averaged,
        "as_shown_only": first_only,
        "kappa_vs_people": kappas,
        "kappa_vs_majority": kappa_majority,
        "cost": _grader_cost(store, e, len(per_pair)),
    }


def _against_people(avg_choice: dict[str, str], people: list[dict]) -> tuple[dict[str, dict], dict[str, str], dict]:
    """A grader's averaged choice against each person's (kappa per reviewer) and people's strict majority."""
    kappas = {}
    for rev in sorted({j["reviewer"] for j in people}):
        js = [j for j in people if j["reviewer"] == rev and j["pair_id"] in avg_choice]
        kappas[rev] = cohen_kappa([avg_choice[j["pair_id"]] for j in js], [j["choice"] for j in js])
    majority = {}
    for p in avg_choice:
        cs = [j["choice"] for j in people if j["pair_id"] == p]
        if cs:
            top = max(CHOICES, key=cs.count)
            if sum(c == top for c in cs) > len(cs) / 2:
                majority[p] = top
    mp = sorted(majority)
    return kappas, majority, cohen_kappa([avg_choice[p] for p in mp], [majority[p] for p in mp])


def _grader_verdicts(store: Store, e: Entry, pairs: dict, headline: list[str], res: _Result) -> dict:
    """The grader's verdict per pair: the choice made in both orders, else inconsistent."""
    pv_of = {p: v for p, v in pair_verdicts(store, e.id).items() if p in pairs}
    consistent = [p for p in headline if pv_of.get(p) in CHOICES]
    queued = [
        f["pair_id"]
        for f in JudgmentStore(store).first(str((e.manifest.knobs or {}).get("session_id")))
        if f["source"] == e.id and f["reason"] == GRADER_INCONSISTENT
    ]
    return {
        "counts": verdict_counts(pv_of),
        "headline_counts": verdict_counts(pv_of, headline),
        "inconsistent_pairs": sorted(p for p, v in pv_of.items() if v == "inconsistent"),
        "queued_for_people": len(queued),
        "consistent_result": res([{"pair_id": p, "choice": pv_of[p]} for p in consistent], consistent),
    }


def _grader_cost(store: Store, e: Entry, n_pairs: int) -> dict:
    """The grader run's calls, cost and tokens, and its cost per pair judged."""
    calls = store.records(
        "SELECT count(*) AS calls, sum(cost_usd) AS cost, count(cost_usd) AS priced, "
        "sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out FROM read_parquet(?)",
        [str(e.path / "calls.parquet")],
    )[0]
    n_calls = int(calls["calls"] or 0)
    cost = None if calls["priced"] == 0 else float(calls["cost"])
    return {
        "calls": n_calls,
        "cost_usd": cost,
        "unpriced_calls": n_calls - int(calls["priced"] or 0),
        "tokens_in": int(calls["tokens_in"] or 0),
        "tokens_out": int(calls["tokens_out"] or 0),
        "cost_per_pair_usd": (cost / n_pairs) if cost is not None and n_pairs else None,
    }


def _position(
    by: dict[tuple[str, int], dict[str, str]], both: list[dict[str, str]], ok: list[dict], majority: dict[str, str]
) -> dict:
    """Position bias of a model grader in one place. Choices are in as-shown terms (a grader that
    picks whatever is shown first says ``left`` in the as-shown order and ``right`` in the swapped
    one). Per order: accuracy against people's majority (pairs with one) and ties; their mean;
    agreement between the two orders; flips by direction: towards the answer shown first, towards
    the one shown second, or to or from a tie."""
    out: dict[str, Any] = {"orders": {}}
    accs = []
    for order in ("as_shown", "swapped"):
        rows = [r for r in ok if r["order"] == order]
        scored = [r for r in rows if r["pair_id"] in majority]
        acc = _prop(sum(r["choice"] == majority[r["pair_id"]] for r in scored), len(scored))
        out["orders"][order] = {
            "verdicts": len(rows),
            "ties": sum(r["choice"] == "same" for r in rows),
            "vs_people": acc,
        }
        if acc["share"] is not None:
            accs.append(acc["share"])
    out["mean_accuracy_over_orders"] = float(np.mean(accs)) if len(accs) == 2 else None
    towards_first = sum(v["as_shown"] == "left" and v["swapped"] == "right" for v in both)
    towards_second = sum(v["as_shown"] == "right" and v["swapped"] == "left" for v in both)
    with_tie = sum(v["as_shown"] != v["swapped"] and "same" in (v["as_shown"], v["swapped"]) for v in both)
    out["agreement_between_orders"] = _prop(sum(v["as_shown"] == v["swapped"] for v in both), len(both))
    out["flips"] = {
        "compared": len(both),
        "towards_first_shown": towards_first,
        "towards_second_shown": towards_second,
        "to_or_from_a_tie": with_tie,
    }
    return out


def report(store: Store, session_id: str, *, seed: int = 0) -> dict:
    """Every figure of a closed, unblinded session (see docs/PAIRWISE.md). Refused while open."""
    rec = unblinded(store, session_id)
    arms: list[str] = rec["arms"]
    key_of = {k["pair_id"]: k for k in rec["key"]}
    pairs = {p["pair_id"]: p for p in load_pairs(store, session_id)}
    missing = set(pairs) - set(key_of)
    if missing:
        raise FormatError(
            f"the unblinded key lacks {len(missing)} pair(s) of the session (the session changed after it was closed)",
            file=unblinded_path(store, session_id),
            field="key",
        )
    m = store.session(session_id).manifest
    originals = [p for p in pairs.values() if not p["mirror_of"]]
    headline = sorted(p["pair_id"] for p in originals if not p["holdout"])
    held = sorted(p["pair_id"] for p in originals if p["holdout"])
    people = [j for j in _people(store, session_id) if j["pair_id"] in pairs]
    res: _Result = partial(_result, key_of=key_of, arms=arms, seed=seed)
    reviewers = sorted({j["reviewer"] for j in people})
    left_pref = _left_preference(people, reviewers)
    graders = [_grader(store, rid, pairs, people, headline, res) for rid in _grader_runs(store, session_id)]
    result = res(people, headline)
    cav = caveats(rec.get("identifiability"), left_pref, graders)
    return {
        "session_id": session_id,
        "closed_at": rec.get("closed_at"),
        "arms": arms,
        "sources": rec.get("sources"),
        "settings": m.settings.model_dump(mode="json"),
        "suite_id": m.suite_id,
        "simulated": m.simulated,
        "pairs": {
            "total": len(pairs),
            "original": len(originals),
            "headline": len(headline),
            "holdout": len(held),
            "mirrored": len(pairs) - len(originals),
        },
        "reviewers": reviewers,
        "judgments": len(people),
        "result": result,
        "caveats": cav,
        "verdict": verdict(result, cav, arms),
        "holdout": res(people, held),
        "by_class": _by_class(store, m.suite_id, pairs, people, headline, res),
        "left_preference": left_pref,
        "mirror_consistency": _mirror_consistency(pairs, people, reviewers),
        "agreement": _people_agreement(pairs, people, reviewers),
        "probe": _probes(store, session_id, pairs, key_of, arms),
        "timing": {
            r: {
                "judgments": sum(1 for j in people if j["reviewer"] == r),
                "median_seconds": (
                    float(np.median(s))
                    if (s := [j["seconds"] for j in people if j["reviewer"] == r and j["seconds"] is not None])
                    else None
                ),
            }
            for r in reviewers
        },
        "identifiability": rec.get("identifiability"),
        "made": rec.get("made"),
        "graders": graders,
        "seed": seed,
    }


def _by_class(
    store: Store, suite_id: str | None, pairs: dict, people: list[dict], headline: list[str], res: _Result
) -> dict[str, dict]:
    """People's headline result per class of the suite's items (``(none)``: an item without one)."""
    classes: dict[str, str] = {}
    if suite_id and store.dir_of("suite", suite_id).is_dir():
        for iid, cls in store.sql(
            'SELECT item_id, "class" FROM read_parquet(?)', [store.path_of("suite", suite_id, "items")]
        ):
            classes[iid] = cls if cls is not None else "(none)"
    by_class = {}
    for cls in sorted({classes.get(pairs[p]["item_id"], "(none)") for p in headline}):
        ids = [p for p in headline if classes.get(pairs[p]["item_id"], "(none)") == cls]
        by_class[cls] = res(people, ids)
    return by_class


def _left_preference(people: list[dict], reviewers: list[str]) -> dict:
    """People's preference for the left answer among their decided judgments, in all and per reviewer."""
    decided = [j for j in people if j["choice"] != "same"]

    def left(js: list[dict]) -> dict:
        return _prop(sum(j["choice"] == "left" for j in js), len(js))

    return {
        "all": left(decided),
        "by_reviewer": {r: left([j for j in decided if j["reviewer"] == r]) for r in reviewers},
    }


def _mirror_consistency(pairs: dict, people: list[dict], reviewers: list[str]) -> dict:
    """How often each reviewer's choice on a mirrored pair is the swap of their choice on its original."""
    choice_of = {(j["pair_id"], j["reviewer"]): j["choice"] for j in people}
    cons: dict[str, list[bool]] = {}
    for p in pairs.values():
        if p["mirror_of"]:
            for r in reviewers:
                a, b = choice_of.get((p["mirror_of"], r)), choice_of.get((p["pair_id"], r))
                if a is not None and b is not None:
                    cons.setdefault(r, []).append(_SWAP[a] == b)
    all_c = [x for v in cons.values() for x in v]
    return {
        "mirrored_pairs": sum(1 for p in pairs.values() if p["mirror_of"]),
        "all": {"consistent": sum(all_c), "n": len(all_c), "share": (sum(all_c) / len(all_c)) if all_c else None},
        "by_reviewer": {r: {"consistent": sum(v), "n": len(v), "share": sum(v) / len(v)} for r, v in cons.items()},
    }


def _people_agreement(pairs: dict, people: list[dict], reviewers: list[str]) -> dict:
    """Agreement between people on the original pairs: every two reviewers' kappa, Krippendorff's alpha."""
    units: dict[str, dict[str, str]] = {}
    for j in people:
        if not pairs[j["pair_id"]]["mirror_of"]:
            units.setdefault(j["pair_id"], {})[j["reviewer"]] = j["choice"]
    pairwise = []
    for i, r1 in enumerate(reviewers):
        for r2 in reviewers[i + 1 :]:
            common = sorted(p for p, u in units.items() if r1 in u and r2 in u)
            if common:
                k = cohen_kappa([units[p][r1] for p in common], [units[p][r2] for p in common])
                pairwise.append({"a": r1, "b": r2, **k})
    return {
        "pairwise": pairwise,
        "krippendorff_alpha": krippendorff_alpha_nominal([list(u.values()) for u in units.values()]),
    }


def _probes(store: Store, session_id: str, pairs: dict, key_of: dict, arms: list[str]) -> dict[str, dict]:
    """The identification probe per reviewer: does the side they call X follow one arm?"""
    probes = {}
    js = JudgmentStore(store)
    for r in sorted({p["reviewer"] for p in js.probes(session_id)}):
        answers = js.probes(session_id, r)
        gs = [p for p in answers if p["pair_id"] in pairs and p["guess"] != "unsure"]
        k = sum(
            (key_of[g["pair_id"]]["left_arm"] if g["guess"] == "left" else key_of[g["pair_id"]]["right_arm"]) == arms[0]
            for g in gs
        )
        n = len(gs)
        probes[r] = {
            "answered": n,
            "first_arm_share": (k / n) if n else None,
            "consistency": (max(k, n - k) / n) if n else None,
            "p_value": float(_st().binomtest(k, n, 0.5).pvalue) if n else None,
            "unsure": sum(1 for p in answers if p["guess"] == "unsure"),
        }
    return probes


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _iv(x: Sequence[float] | None) -> str:
    return "-" if not x else f"{100 * x[0]:.1f}-{100 * x[1]:.1f}%"


def caveat_lines(r: dict) -> list[str]:
    """The lines that follow the headline result wherever it is shown: identifiability of the
    answers as shown, people's and each model grader's position preference, and the verdict."""
    c = r["caveats"]
    idf = c["identifiability"]
    lines = [
        "identifiability as shown: not measured"
        if idf["accuracy"] is None
        else f"identifiability as shown: {_pct(idf['accuracy'])} ({_iv(idf['interval'])}; chance 50%)"
        + (f", leaking feature {idf['leaking_feature']}" if idf["leaking_feature"] else "")
    ]
    lp = c["people_left_share"]
    lines.append(
        f"people's left share: {_pct(lp['share'])} ({_iv(lp['interval'])}) of {lp['n']} decided judgments"
        if lp["n"]
        else "people's left share: no decided judgments"
    )
    for g in c["graders"]:
        pv = g["pair_verdicts"]
        lines.append(
            f"model grader {g['run_id']}: first-position share {_pct(g['first_position_share'])} "
            f"({_iv(g['interval'])}); pair verdicts left {pv['left']}, right {pv['right']}, same {pv['same']}, "
            f"inconsistent {pv['inconsistent']}" + (f", one order only {pv['one_order']}" if pv["one_order"] else "")
        )
    lines.append(f"verdict: {r['verdict']['text']}")
    return lines


def _block(title: str, x: dict, a: str) -> list[str]:
    """A result's lines: arm ``a``'s wins, losses and ties, and its win rate with the sign test."""
    c = x["counts"]
    out = [
        f"{title}: {a} wins {c[a]['wins']}, loses {c[a]['losses']}, ties {c[a]['ties']} "
        f"({x['judgments']} judgments on {x['pairs']} pairs)"
    ]
    if x.get("win_rate") is not None:
        st = x["sign_test"]
        out.append(
            f"  {a} win rate {_pct(x['win_rate'])} (bootstrap {_iv(x['interval'])}); sign test "
            f"{st['a_pairs']} vs {st['b_pairs']} pairs, p = {st['p_value']:.3g}"
        )
    return out


def format_report(r: dict) -> str:
    """The report as text for the command line."""
    a, b = r["arms"]
    lines = [
        f"session {r['session_id']}: {a} vs {b} (closed {r['closed_at']})" + (" SIMULATED" if r["simulated"] else ""),
        f"pairs: {r['pairs']['headline']} in the headline, {r['pairs']['holdout']} holdout, "
        f"{r['pairs']['mirrored']} mirrored; {r['judgments']} judgments by {len(r['reviewers'])} people",
        "",
    ]
    lines += _block("headline", r["result"], a)
    lines += ["  " + x for x in caveat_lines(r)]
    lines += _block("holdout", r["holdout"], a)
    for cls, x in r["by_class"].items():
        lines += _block(f"class {cls}", x, a)
    lp = r["left_preference"]["all"]
    lines += [
        "",
        f"people chose the left answer in {_pct(lp['share'])} of decided judgments "
        f"({_iv(lp['interval'])}, p = {lp['p_value']:.3g})"
        if lp["n"]
        else "people: no decided judgments",
    ]
    mc = r["mirror_consistency"]["all"]
    if mc["n"]:
        lines.append(f"consistent on mirrored pairs: {mc['consistent']} of {mc['n']} ({_pct(mc['share'])})")
    al = r["agreement"]["krippendorff_alpha"]
    if al["alpha"] is not None:
        lines.append(f"agreement between people: Krippendorff's alpha {al['alpha']:.3f} over {al['units']} pairs")
    for x in r["agreement"]["pairwise"]:
        if x["kappa"] is not None:
            lines.append(f"  kappa {x['a']} / {x['b']}: {x['kappa']:.3f} on {x['n']} pairs")
    ident = r.get("identifiability") or {}
    for when in ("before", "after"):
        c = ident.get(when)
        if c:
            lines.append(f"identifiability {when} normalisation: {blinding.describe(c)}")
    for rev, p in r["probe"].items():
        if p["answered"]:
            lines.append(
                f"probe {rev}: the side called X was {a} in {_pct(p['first_arm_share'])} of "
                f"{p['answered']} pairs (p = {p['p_value']:.3g})"
            )
    for g in r["graders"]:
        lines += _grader_lines(g, a)
    return "\n".join(lines)


def _grader_lines(g: dict, a: str) -> list[str]:
    """A model grader's part of the report (``a``: the first arm)."""
    f = g["flips"]
    fp = g["first_position"]
    po = g["position"]
    pf = po["flips"]
    lines = [
        "",
        f"model grader {g['run_id']} ({g['judge_model']}):",
        f"  order flips {f['flips']} of {f['compared']} pairs ({_pct(f['share'])}), reversals {f['reversals']}",
        f"  first-position preference {_pct(fp['share'])} ({_iv(fp['interval'])})",
        f"  flips towards the first shown {pf['towards_first_shown']}, towards the second "
        f"{pf['towards_second_shown']}, to or from a tie {pf['to_or_from_a_tie']}; agreement between orders "
        f"{_pct(po['agreement_between_orders']['share'])}",
    ]
    for order, o in po["orders"].items():
        lines.append(
            f"  {order.replace('_', ' ')}: accuracy vs people {_pct(o['vs_people']['share'])} on "
            f"{o['vs_people']['n']} pairs, ties {o['ties']} of {o['verdicts']}"
        )
    if po["mean_accuracy_over_orders"] is not None:
        lines.append(f"  accuracy averaged over both orders {_pct(po['mean_accuracy_over_orders'])}")
    lines += ["  " + s for s in _block("averaged over both orders", g["averaged_over_orders"], a)]
    pv = g["pair_verdicts"]
    lines += ["  " + s for s in _block("pairs it judged the same in both orders", pv["consistent_result"], a)]
    lines.append(
        f"  inconsistent pairs (the two orders disagree): {pv['counts']['inconsistent']}, "
        f"queued for people first: {pv['queued_for_people']}"
    )
    km = g["kappa_vs_majority"]
    if km["kappa"] is not None:
        lines.append(f"  kappa vs people's majority: {km['kappa']:.3f} on {km['n']} pairs")
    c = g["cost"]
    lines.append(
        f"  cost: {c['calls']} calls, "
        + ("unknown" if c["cost_usd"] is None else f"${c['cost_usd']:.4f}")
        + (f" (${c['cost_per_pair_usd']:.4f} per pair)" if c["cost_per_pair_usd"] is not None else "")
    )
    return lines
