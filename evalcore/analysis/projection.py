"""The single / grouped / split projection of evalcore.analysis.cost: the model (shared context S,
c_k per criterion, output f + o_k per call, prices and latency fitted to the measured calls), the
pure :func:`project` and the report section ``_projection``. evalcore.analysis.cost's docstring and
docs/COST.md give the equations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore.analysis.costsql import NO_CRITERION, Table, _sliced
from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result
from evalcore.errors import InputError
from evalcore.llm.client import count_text_tokens, tokenizer_name
from evalcore.llm.prompts import criteria_block
from evalcore.llm.rubric import MODEL_KINDS, spec_from_manifest
from evalcore.storage.aggregates import DONE, MOMENTS, PRICED, TIMED, call_moments, list_moments, wall_measured
from evalcore.storage.store import Store

# ----------------------------------------------------------------------------- the projection model


def criterion_tokens(
    rubric: S.Rubric, knobs: dict | None, model: str, names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """``c_k`` for each model-judged criterion of a rubric (then any other name in ``names``): the
    tokens criterion k adds to the judge's criteria block, i.e. the block rendered for k alone
    minus the block's frame (rendered for no criterion), counted offline with the judge model's
    tokenizer (:func:`evalcore.llm.client.count_text_tokens`: tiktoken's encodings bundled with litellm,
    or one token per 4 bytes; nothing is downloaded and litellm is not imported).

    The block is rendered for an item without must_have / wrong_if lists, so a ternary
    criterion's per-item lists count in ``S``. Fallbacks, named in ``source``: a criterion without
    a description, anchor or examples is counted from what the judge is still sent (its name, the
    question and the JSON shape); a name the calls use that is not a model-judged criterion of the
    rubric is counted as a binary criterion of that name."""

    spec = spec_from_manifest(rubric, knobs or {})
    crits = [c for c in rubric.criteria if c.kind in MODEL_KINDS]
    known = {c.name for c in crits}
    extra = [n for n in (names or []) if n not in known and n != NO_CRITERION]
    out = []
    for c in crits + [S.Criterion(name=n, kind="binary") for n in extra]:
        m = c.model or model
        frame = count_text_tokens(criteria_block([], {}, spec), m)
        tokens = count_text_tokens(criteria_block([c], {}, spec), m) - frame
        if c.name in extra:
            source = "name only: not a model-judged criterion of the rubric"
        elif c.description or c.pass_anchor or spec.examples.get(c.name):
            source = "rubric text"
        else:
            source = "name and answer format only: the rubric has no text for it"
        out.append({"criterion": c.name, "tokens": tokens, "source": source, "tokenizer": tokenizer_name(m)})
    return out


def _shared_tokens(
    store: Store, calls_path: str | Table, ck: dict[str, float], moments: list[list[Any]] | None = None
) -> tuple[float | None, float | None, int]:
    """``S`` = mean over completed calls with measured tokens of tokens_in - sum of their c_k; its
    standard deviation and the number of calls measured. DuckDB groups the calls by their list of
    criteria (calls with the same list have the same sum of c_k, and there are few lists) and returns
    the count, sum and sum of squares of tokens_in per list; the moments of tokens_in - sum(c_k)
    follow from those (``moments``: :func:`list_moments` of the same calls, when already read)."""
    rows = list_moments(store, calls_path) if moments is None else moments
    groups = [(crits, k, t1, t2) for crits, k, t1, t2, *_ in rows if k]
    n = sum(g[1] for g in groups)
    if not n:
        return None, None, 0
    s1 = s2 = 0.0
    for crits, k, t1, t2 in groups:
        c = float(sum(ck.get(name, 0) for name in (crits or [])))
        s1 += t1 - k * c  # sum of (t - c)
        s2 += t2 - 2 * c * t1 + k * c * c  # sum of (t - c)^2
    mean = s1 / n
    return mean, math.sqrt(max(s2 / n - mean * mean, 0.0)), n


_PRICED, _TIMED, _DONE, _MOMENTS = PRICED, TIMED, DONE, MOMENTS
_wall_measured = wall_measured


@dataclass
class Prices(Result):
    """:func:`fit_prices`: dollars per token in and out fitted to the priced calls."""

    input_per_token: float
    output_per_token: float
    input_per_million: float
    output_per_million: float
    calls_priced: int
    fit_rms_relative: float | None
    source: str


def fit_prices(store: Store, calls_path: str | Table, moments: dict[str, Any] | None = None) -> Prices | None:
    """Prices per token fitted to the calls with a known cost and measured tokens:
    ``scipy.optimize.nnls`` of cost on (tokens_in, tokens_out), no intercept. DuckDB returns the
    sums of squares and cross-products, and the least-squares problem is solved on those (the
    same minimiser as on the rows, without reading them). None when no call has a cost."""
    mo = moments or call_moments(store, calls_path)
    n, sii, sio, soo, sic, soc, scc = (mo[k] for k in ("p_n", "p_ii", "p_io", "p_oo", "p_ic", "p_oc", "p_cc"))
    if not n or not sii or not soo:
        return None
    x, rms = nnls_from_moments(np.array([[sii, sio], [sio, soo]], float), np.array([sic, soc], float), float(scc))
    return Prices(
        x[0],
        x[1],
        x[0] * 1e6,
        x[1] * 1e6,
        n,
        rms,
        f"non-negative least squares of cost on tokens in and out over {n} calls with a known cost",
    )


def nnls_from_moments(xtx: np.ndarray, xty: np.ndarray, yty: float) -> tuple[list[float], float | None]:
    """argmin_{b >= 0} |X b - y|^2 from X'X, X'y and y'y alone: with X'X = V diag(d) V', the
    problem equals min |diag(sqrt d) V' b - diag(1/sqrt d) V' X'y|^2 plus a constant, which
    ``scipy.optimize.nnls`` solves. Columns are scaled to unit norm first. Returns b and the
    root of the residual sum of squares relative to |y| (None when y is 0)."""
    from scipy.optimize import nnls

    scale = np.sqrt(np.diag(xtx))
    a = xtx / np.outer(scale, scale)
    g = xty / scale
    d, v = np.linalg.eigh(a)
    keep = d > 1e-12 * d.max()
    m = np.sqrt(d[keep])[:, None] * v[:, keep].T
    z = (v[:, keep].T @ g) / np.sqrt(d[keep])
    bn, _ = nnls(m, z)
    b = bn / scale
    rss = float(b @ xtx @ b - 2 * b @ xty + yty)
    rel = math.sqrt(max(rss, 0.0) / yty) if yty > 0 else None
    return [float(v_) for v_ in b], rel


@dataclass
class LatencyModel(Result):
    """:func:`fit_latency`: a call's latency as a fixed time plus a time per output token."""

    ms_per_call: float
    ms_per_output_token: float
    calls: int
    fit_rms_relative: float | None
    mean_ms_per_call: float
    source: str


def fit_latency(store: Store, calls_path: str | Table, moments: dict[str, Any] | None = None) -> LatencyModel | None:
    """Latency of a call as ``ms_per_call + ms_per_output_token * tokens_out``, fitted by
    non-negative least squares (DuckDB sums, as :func:`fit_prices`) to the completed calls with a
    measured latency and output. When every such call wrote the same number of tokens the two
    cannot be told apart: the mean latency is all per call. None when no call is measured."""
    mo = moments or call_moments(store, calls_path)
    n, so, soo, sl, sol, sll = (mo[k] for k in ("l_n", "l_o", "l_oo", "l_l", "l_ol", "l_ll"))
    if not n:
        return None
    if soo * n - so * so <= 1e-9 * max(soo * n, 1.0):  # no spread in tokens out
        a, b, rms, how = sl / n, 0.0, None, "mean latency per call (every call wrote the same output tokens)"
    else:
        (a, b), rms = nnls_from_moments(np.array([[n, so], [so, soo]], float), np.array([sl, sol], float), float(sll))
        how = f"non-negative least squares of latency on (1, tokens out) over {n} completed calls"
    return LatencyModel(float(a), float(b), n, rms, sl / n, how)


def _partition(k: int, groups: int, partition: Sequence[Sequence[int]] | None) -> list[list[int]]:
    """The grouped harness's calls as lists of criterion indices: ``partition`` when given (checked to
    cover each of the k criteria once in ``groups`` parts), else the criteria in order cut into
    ``groups`` consecutive parts of near-equal size."""
    if partition is not None:
        parts = [list(map(int, p)) for p in partition]
        flat = sorted(i for p in parts for i in p)
        if len(parts) != groups or flat != list(range(k)) or any(not p for p in parts):
            raise InputError(
                f"the partition must put each of the {k} criteria in exactly one of {groups} groups",
                field="partition",
            )
        return parts
    size, extra = divmod(k, groups)
    out, start = [], 0
    for g in range(groups):
        n = size + (1 if g < extra else 0)
        out.append(list(range(start, start + n)))
        start += n
    return out


def _check_project(k: int, out_tokens: Sequence[float], items: int, rounds: int, concurrency: int, groups: int) -> None:
    """:func:`project`'s sizes: at least one criterion, an output figure for each, whole numbers."""
    if k < 1:
        raise InputError("the projection needs at least one model-judged criterion", field="criteria")
    if len(out_tokens) != k:
        raise InputError(f"{len(out_tokens)} output figures for {k} criteria", field="out_tokens")
    for name, v in (("--items", items), ("--rounds", rounds), ("concurrency", concurrency)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"{v!r} must be a whole number of at least 1", field=name)
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or not 1 <= groups <= k:
        raise InputError(f"{groups!r} must be a whole number from 1 to the number of criteria ({k})", field="--groups")


@dataclass
class ProjectedRow(Result):
    """One harness mode of :func:`project`; where its output tokens come from is added by run_cost."""

    mode: str
    calls_per_answer: int
    calls: int
    tokens_in: float
    tokens_out: float
    tokens_out_per_call_max: float
    cost_usd: float | None
    latency_ms_per_answer: float | None
    latency_ms_per_answer_fanout: float | None
    concurrency: int
    wall_ms: float | None
    calls_x_single: float | None = None
    tokens_in_x_single: float | None = None
    tokens_out_x_single: float | None = None
    cost_usd_x_single: float | None = None
    tokens_out_source: str = OMIT
    tokens_out_run: str | None = OMIT
    tokens_out_per_answer_measured: float | None = OMIT


def project(
    shared_tokens_in: float,
    criterion_tokens_in: Sequence[float],
    out_tokens: Sequence[float],
    prices: tuple[float, float] | None,
    items: int,
    groups: int,
    rounds: int = 1,
    latency: tuple[float, float] | None = None,
    out_per_call: float = 0.0,
    concurrency: int = 1,
    partition: Sequence[Sequence[int]] | None = None,
) -> list[ProjectedRow]:
    """The single, grouped and split harnesses for ``items`` items judged ``rounds`` times each,
    from ``S`` (``shared_tokens_in``), ``c_k`` per criterion (``criterion_tokens_in``), ``o_k``
    output tokens per verdict (``out_tokens``, same order), ``f`` output tokens every call writes
    once whatever it asks (``out_per_call``: the JSON frame), prices per token (in, out; None when
    unknown), ``groups`` calls per answer in grouped mode (``partition``: which criteria share a
    grouped call, as lists of indices; default: the criteria in order cut into near-equal parts),
    the latency model (ms per call, ms per output token; None when unknown) and the calls in
    flight at most (``concurrency``). Pure: one row per mode with calls, calls per answer, tokens
    in and out, cost, the largest call's output, the latency of one answer with its calls one after
    another (``g * ms_per_call + ms_per_output_token * tokens_out per answer``) and fanned out (the
    slowest call: ``ms_per_call + ms_per_output_token * largest call's output``), the whole run's
    wall time at ``concurrency`` and each of calls, tokens and cost as a multiple of the single
    call's."""
    k = len(criterion_tokens_in)
    _check_project(k, out_tokens, items, rounds, concurrency, groups)
    values = [shared_tokens_in, out_per_call, *criterion_tokens_in, *out_tokens, *(prices or ()), *(latency or ())]
    if any(v is None or not math.isfinite(float(v)) for v in values):
        raise InputError("S, f, c_k, output tokens, prices and latency must be finite numbers", field="projection")
    f = float(out_per_call)
    o = [float(v) for v in out_tokens]
    sum_c, sum_o = float(sum(criterion_tokens_in)), float(sum(o))
    base = items * rounds
    layouts = (
        ("single", [list(range(k))]),
        ("grouped", _partition(k, int(groups), partition)),
        ("split", [[i] for i in range(k)]),
    )
    rows: list[ProjectedRow] = []
    for mode, calls in layouts:
        g = len(calls)
        tin = base * (g * float(shared_tokens_in) + sum_c)
        out_answer = g * f + sum_o
        tout = base * out_answer
        largest = f + max(sum(o[i] for i in c) for c in calls)
        cost = None if prices is None else tin * prices[0] + tout * prices[1]
        seq = fan = wall = None
        if latency is not None:
            seq = g * latency[0] + latency[1] * out_answer
            fan = latency[0] + latency[1] * largest
            wall = max(base * seq / min(int(concurrency), base * g), fan)
        rows.append(ProjectedRow(mode, g, base * g, tin, tout, largest, cost, seq, fan, int(concurrency), wall))
    single = rows[0]
    for r in rows:
        for key in ("calls", "tokens_in", "tokens_out", "cost_usd"):
            a, b = getattr(r, key), getattr(single, key)
            setattr(r, f"{key}_x_single", a / b if a is not None and b else None)
    return rows


def _groups_of(m: S.RunManifest, names: list[str]) -> tuple[int, str, list[list[str]]]:
    """Calls per answer of the grouped harness, where that number comes from, and which criteria
    share a call (the run's groups, else the rubric's criterion groups)."""
    if m.mode == "grouped" and m.groups:
        parts = [[n for n in g if n in names] for g in m.groups]
        parts = [p for p in parts if p]
        rest = [n for n in names if not any(n in p for p in parts)]
        return len(m.groups), "the run's groups", parts + [[n] for n in rest]
    seen: dict[str, list[str]] = {}
    for c in m.rubric.criteria:
        if c.name in names:
            seen.setdefault(c.group or c.name, []).append(c.name)
    parts = list(seen.values())
    parts += [[n] for n in names if not any(n in p for p in parts)]
    g = len(seen) or len(names)
    if g == len(names):
        return g, "the rubric names no groups: each criterion is its own group, so grouped equals split", parts
    return g, "the rubric's criterion groups", parts


# ----------------------------------------------------------------------------- output tokens per call

OutLists = list[tuple[frozenset[str], int, float, float]]  # criteria asked, calls, sum and sum of squares of tokens_out


def output_lists(store: Store, calls_path: str | Table, moments: list[list[Any]] | None = None) -> OutLists:
    """The completed calls with measured output grouped by the set of criteria they asked (DuckDB:
    count, sum and sum of squares of tokens_out per criteria list, :func:`list_moments`, or
    ``moments`` when already read; lists with the same criteria in another order are merged).
    Calls that list no criterion are left out."""
    rows = list_moments(store, calls_path) if moments is None else moments
    merged: dict[frozenset[str], list[float]] = {}
    for crits, *_in, n, t1, t2 in rows:
        if not crits or not n:
            continue
        acc = merged.setdefault(frozenset(crits), [0, 0.0, 0.0])
        acc[0] += n
        acc[1] += float(t1)
        acc[2] += float(t2)
    return [(key, int(n), t1, t2) for key, (n, t1, t2) in merged.items()]


def fit_output(lists: OutLists, names: Sequence[str], fix_f: bool = False) -> dict[str, Any]:
    """Least squares of a call's tokens_out on ``f + sum(o_k for k in the call)`` over the calls
    summarised in ``lists`` (:func:`output_lists`, of one run or several): the normal equations are
    summed from the per-list counts and sums (a list of n calls with output sum T adds n x x' to
    X'X and T x to X'y, x = (1, indicators of its criteria)) and solved by the pseudo-inverse, so
    that a sum of o_k the calls do not tell apart is shared equally (the minimum-norm solution).

    ``identified``: whether the calls determine f (a least-squares solution has the same f
    whatever the pseudo-inverse picks; with every call asking lists of one size, f and the o_k
    cannot be told apart). With ``fix_f`` (or when nothing identifies f) f is fixed at 0 and only
    the o_k are fitted. A criterion of ``names`` in no list has o_k None; lists naming a criterion
    outside ``names`` are left out (``calls_skipped``)."""
    index = {n: i for i, n in enumerate(names)}
    dim = len(names) + 1
    xtx = np.zeros((dim, dim))
    xty = np.zeros(dim)
    yty = 0.0
    n_calls = skipped = 0
    for crits, n, t1, t2 in lists:
        if any(c not in index for c in crits):
            skipped += n
            continue
        x = np.zeros(dim)
        x[0] = 1.0
        for c in crits:
            x[1 + index[c]] = 1.0
        xtx += n * np.outer(x, x)
        xty += t1 * x
        yty += t2
        n_calls += n
    measured = [j for j in range(1, dim) if xtx[j, j] > 0]
    out: dict[str, Any] = {
        "f": 0.0,
        "identified": False,
        "o": {n: None for n in names},
        "calls": n_calls,
        "calls_skipped": skipped,
        "rms_tokens": None,
    }
    if not measured:
        return out
    cols = ([] if fix_f else [0]) + measured
    a = xtx[np.ix_(cols, cols)]
    pinv = np.linalg.pinv(a, rcond=1e-12, hermitian=True)
    identified = False
    if not fix_f:
        e0 = np.zeros(len(cols))
        e0[0] = 1.0
        identified = bool(np.linalg.norm(a @ pinv @ e0 - e0) < 1e-8)
    if not fix_f and not identified:  # f and the o_k cannot be told apart: f = 0, only o_k fitted
        cols = measured
        a = xtx[np.ix_(cols, cols)]
        pinv = np.linalg.pinv(a, rcond=1e-12, hermitian=True)
    b = pinv @ xty[cols]
    coef = np.zeros(dim)
    coef[cols] = b
    rss = float(coef @ xtx @ coef - 2 * coef @ xty + yty)
    out.update(
        f=float(coef[0]),
        identified=identified,
        o={n: (float(coef[1 + i]) if 1 + i in measured else None) for i, n in enumerate(names)},
        rms_tokens=math.sqrt(max(rss, 0.0) / n_calls) if n_calls else None,
    )
    return out


def _calls_per_answer(lists: OutLists, names: Sequence[str]) -> tuple[int, float, int] | None:
    """A run's calls per answer, its measured output tokens per answer (the sum over its criteria
    lists of their mean output) and its calls, when its lists partition ``names`` (each criterion
    in exactly one list); else None."""
    sets = [crits for crits, n, _, _ in lists if n]
    flat = [c for s in sets for c in s]
    if not sets or len(flat) != len(set(flat)) or set(flat) != set(names):
        return None
    return len(sets), sum(t1 / n for _, n, t1, _ in lists if n), sum(n for _, n, _, _ in lists)


def _siblings(store: Store, run_id: str, m: S.RunManifest) -> list[str]:
    """Other runs of the store on the same generation with the same judge model and rubric that
    have calls (a model grader of a pairwise session excluded), by id."""
    out = []
    for rid in store.ids("run"):
        if rid == run_id:
            continue
        e = store.run(rid)
        o = e.manifest
        if (o.gen_id, o.judge_model, o.rubric_hash) != (m.gen_id, m.judge_model, m.rubric_hash):
            continue
        if (e.path / "pair_verdicts.parquet").exists() or not (e.path / "calls.parquet").exists():
            continue
        out.append(rid)
    return out


def _output_model(
    store: Store,
    run_id: str,
    m: S.RunManifest,
    calls_path: str | Table,
    names: list[str],
    classes: tuple[str, ...],
    suite_id: str,
    moments: list[list[Any]] | None = None,
) -> dict[str, Any]:
    """f and o_k: from the run's own calls when they identify f, else pooled with the sibling runs
    (:func:`_siblings`) whose calls ask criteria lists of a size the run's own calls do not, else
    with f = 0 assumed on the run's own calls. Also which runs measured which calls per answer."""
    own = output_lists(store, calls_path, moments)
    fit = fit_output(own, names)
    used: dict[str, OutLists] = {run_id: own}
    how = "the run's own calls"
    if not fit["identified"]:
        sizes = {len(c) for c, _, _, _ in own}
        pool = dict(used)
        for rid in _siblings(store, run_id, m):
            lists = output_lists(store, _sliced(store, suite_id, "run", rid, "calls", classes))
            if {len(c) for c, _, _, _ in lists} - sizes:
                pool[rid] = lists
        if len(pool) > 1:
            pooled = fit_output([x for lists in pool.values() for x in lists], names)
            if pooled["identified"]:
                fit, used = pooled, pool
                how = "the run's calls and those of " + ", ".join(r for r in pool if r != run_id)
    if fit["identified"]:
        source = f"least squares of tokens out on f + sum of o_k over {fit['calls']} completed calls ({how})"
    else:
        fit = fit_output(own, names, fix_f=True)
        source = (
            f"f = 0 assumed (not identified: the run's calls ask criteria lists of one size only and no run on "
            f"the same generation with the same judge and rubric asks lists of another size); o_k by least "
            f"squares over {fit['calls']} completed calls of the run"
        )
    measured = {rid: _calls_per_answer(lists, names) for rid, lists in used.items()}
    return {**fit, "source": source, "runs": list(used), "measured": measured}


def _concurrency(m: S.RunManifest) -> tuple[int, str]:
    """The calls in flight at most when the run was made (``--concurrency``, recorded in the run's
    retry policy or knobs), else 1 and a note saying it was not recorded."""
    for where, d in (("retry policy", m.retry_policy), ("knobs", m.knobs)):
        v = (d or {}).get("concurrency")
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1:
            return int(v), f"the run's {where} (--concurrency {int(v)})"
    return 1, "concurrency not recorded: 1 assumed (calls one after another)"


def _out_sources(rows: list[ProjectedRow], measured: dict[str, Any], run_id: str) -> None:
    """Where each mode's output tokens come from, into its row: calls measured with that many calls
    per answer (the run itself first, then the sibling run in the fit with the most such calls)."""
    for r in rows:
        found = [
            (rid != run_id, -got[2], rid, got[1])
            for rid, got in measured.items()
            if got is not None and got[0] == r.calls_per_answer
        ]
        hit = min(found)[2:] if found else None
        r.tokens_out_source = "estimated" if hit is None else "measured"
        r.tokens_out_run = None if hit is None else hit[0]
        r.tokens_out_per_answer_measured = None if hit is None else hit[1]


def _projection_warnings(s: float, o: dict[str, Any], f: float, identified: bool, prices: Prices | None) -> list[str]:
    """What limits the projection: S not positive, criteria never measured, f not identified or
    negative, no known cost."""
    warnings = []
    if s <= 0:
        warnings.append(
            f"the estimated shared context S is {s:.1f} tokens (not positive): the calls carry fewer "
            "tokens than the criteria text alone, so the token counts do not match this tokenizer"
        )
    if any(v is None for v in o.values()):
        warnings.append("criteria never measured in a completed call use the mean output per verdict of the others")
    if not identified:
        warnings.append(
            "the output tokens every call writes once (f, its JSON frame) are not identified by these calls: "
            "f = 0 is assumed, so projected output per answer is the same in every mode; the modes this run "
            "did not measure are estimated"
        )
    elif f < 0:
        warnings.append(
            f"the fitted output per call f is {f:.1f} tokens (negative): the calls do not follow f + sum o_k"
        )
    if prices is None:
        warnings.append("no call has a known cost: projected cost is unknown")
    return warnings


@dataclass
class ProjectionCheck(Result):
    """The projection of the run's own mode at its own size beside what the run measured."""

    mode: str
    calls_measured: int
    calls_projected: int
    tokens_in_measured: int
    tokens_in_projected: float
    tokens_out_measured: int
    tokens_out_projected: float
    wall_ms_measured: float | None
    wall_ms_projected: float | None


def _own_check(
    store: Store, calls_path: str | Table, mode: str, rows: list[ProjectedRow], mo: dict[str, Any]
) -> ProjectionCheck | None:
    """The run's own mode at its own size, against what it measured (None for an imported run)."""
    if mode not in ("single", "split", "grouped"):
        return None
    row = next(r for r in rows if r.mode == mode)
    return ProjectionCheck(
        mode,
        mo["d_n"],
        row.calls,
        int(mo["d_in"] or 0),
        row.tokens_in,
        int(mo["d_out"] or 0),
        row.tokens_out,
        _wall_measured(store, calls_path),
        row.wall_ms,
    )


def _assumptions(
    out_model: dict[str, Any], f: float, concurrency: int, source: str, partition: list | None, groups: int
) -> list[str]:
    """The projection's assumptions in words (``source``: where ``concurrency`` comes from;
    ``partition``: the grouped calls when they are the run's own, else cut into ``groups``)."""
    f_assumption = (
        f"tokens_out(call) = f + sum of o_k over the call's criteria; f = {f:.1f} tokens per call fitted "
        f"({out_model['source']})"
        if out_model["identified"]
        else "tokens_out(call) = f + sum of o_k over the call's criteria with f = 0 ASSUMED (not identified: "
        "no calls asking criteria lists of different sizes), so output per answer is the same in every mode"
    )
    return [
        "tokens_in(call) = S + sum of c_k over the call's criteria; S is the same for every call on an answer",
        f_assumption,
        "each verdict writes the same output tokens o_k whatever shares its call",
        "price is linear in tokens in and out (fitted, no per-call fee)",
        "a call takes a fixed time plus a time per output token (fitted); latency per answer is given with "
        "the answer's calls one after another and fanned out (the largest call's expected latency, not the "
        "expected maximum of random latencies)",
        f"wall time = the calls' summed latency / min(concurrency, calls), at least one fanned-out answer; "
        f"concurrency {concurrency}: {source}; no rate limits or retries",
        *(
            []
            if partition is not None or groups == 1
            else [f"grouped fan-out: the criteria in rubric order cut into {groups} groups of near-equal size"]
        ),
    ]


@dataclass
class CriterionModel(Result):
    """One criterion of the projection's model: c_k (``tokens_in``) and o_k (``out_tokens_per_verdict``)."""

    criterion: str
    tokens_in: int
    tokens_in_source: str
    out_tokens_per_verdict: float | None
    tokenizer: str


@dataclass
class OutputModel(Result):
    """f, the output tokens every call writes once, with its fit (:func:`fit_output`)."""

    tokens_per_call: float
    identified: bool
    source: str
    runs: list[str]
    calls: int
    calls_skipped: int
    fit_rms_tokens: float | None


def _fit_report(
    ck_rows: list[dict[str, Any]], o: dict[str, Any], m: dict[str, Any]
) -> tuple[list[CriterionModel], OutputModel]:
    """The fitted model in the report: c_k and o_k per criterion, and f with its fit (``m``: :func:`_output_model`)."""
    criteria = [
        CriterionModel(r["criterion"], r["tokens"], r["source"], o[r["criterion"]], r["tokenizer"]) for r in ck_rows
    ]
    fit = (m["f"], m["identified"], m["source"], m["runs"], m["calls"], m["calls_skipped"], m["rms_tokens"])
    return criteria, OutputModel(*fit)


@dataclass
class Projection(Result):
    """:func:`run_cost`'s single / grouped / split projection; when not ``available``, only ``reason``."""

    available: bool
    reason: str | None
    items: int = OMIT
    rounds: int = OMIT
    groups: int = OMIT
    groups_source: str = OMIT
    grouped_calls: list[list[str]] | None = OMIT
    shared_tokens_in: float = OMIT
    shared_tokens_in_sd: float | None = OMIT
    calls_measured: int = OMIT
    criteria: list[CriterionModel] = OMIT
    output: OutputModel = OMIT
    prices: Prices | None = OMIT
    latency: LatencyModel | None = OMIT
    concurrency: int = OMIT
    concurrency_source: str = OMIT
    rows: list[ProjectedRow] = field(default_factory=list)
    check: ProjectionCheck | None = OMIT
    warnings: list[str] = OMIT
    assumptions: list[str] = OMIT


def _projection(
    store: Store,
    run_id: str,
    m: S.RunManifest,
    calls_path: str | Table,
    asked: list[str],
    counts: dict[str, int],
    items: int | None,
    rounds: int | None,
    groups: int | None,
    classes: tuple[str, ...] = (),
    suite_id: str = "",
) -> Projection:
    ck_rows = criterion_tokens(m.rubric, m.knobs, m.judge_model, asked)
    names = [r["criterion"] for r in ck_rows]
    ck = {r["criterion"]: r["tokens"] for r in ck_rows}
    moments = list_moments(store, calls_path)  # one scan for S and for the output model
    s, s_sd, measured = _shared_tokens(store, calls_path, ck, moments)
    if not measured or s is None:
        return Projection(False, "no completed call with measured tokens in")
    out_model = _output_model(store, run_id, m, calls_path, names, classes, suite_id, moments)
    o: dict[str, Any] = out_model["o"]
    known_o = [v for v in o.values() if v is not None]
    if not known_o:
        return Projection(False, "no completed call with measured tokens out")
    o_fill = sum(known_o) / len(known_o)
    f = out_model["f"]
    mo = call_moments(store, calls_path)
    prices = fit_prices(store, calls_path, mo)
    latency = fit_latency(store, calls_path, mo)
    concurrency, concurrency_source = _concurrency(m)
    g_default, g_source, parts = _groups_of(m, names)
    n_items = counts["items"] if items is None else items
    n_rounds = counts["rounds"] if rounds is None else rounds
    n_groups = g_default if groups is None else groups
    partition = [[names.index(n) for n in p] for p in parts] if groups is None and len(parts) == n_groups else None
    if groups is not None:
        g_source = "--groups"
    rows = project(
        s,
        [ck[n] for n in names],
        [o[n] if o[n] is not None else o_fill for n in names],
        None if prices is None else (prices.input_per_token, prices.output_per_token),
        n_items,
        n_groups,
        n_rounds,
        None if latency is None else (latency.ms_per_call, latency.ms_per_output_token),
        out_per_call=f,
        concurrency=concurrency,
        partition=partition,
    )
    _out_sources(rows, out_model["measured"], run_id)
    criteria, output = _fit_report(ck_rows, o, out_model)
    own_size = items is None and rounds is None and groups is None
    return Projection(
        available=True,
        reason=None,
        items=n_items,
        rounds=n_rounds,
        groups=n_groups,
        groups_source=g_source,
        grouped_calls=[[names[i] for i in p] for p in partition] if partition is not None else None,
        shared_tokens_in=s,
        shared_tokens_in_sd=s_sd,
        calls_measured=measured,
        criteria=criteria,
        output=output,
        prices=prices,
        latency=latency,
        concurrency=concurrency,
        concurrency_source=concurrency_source,
        rows=rows,
        check=_own_check(store, calls_path, m.mode, rows, mo) if own_size else None,
        warnings=_projection_warnings(s, o, f, out_model["identified"], prices),
        assumptions=_assumptions(out_model, f, concurrency, concurrency_source, partition, n_groups),
    )
