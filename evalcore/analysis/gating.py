"""The CI gate over :func:`evalcore.analysis.comparison.compare`, its allowlist of known misses,
the Markdown summary for a pull request and the trend across runs. See docs/COMPARE.md.

* :func:`gate` passes only when the two-sided bar holds (a gain that clears both its interval and
  the noise floor, no stable regression of its own, no polluted or partial run), no new miss
  appears outside the allowlist, every allowlist entry is live and still missed (an entry that now
  passes fails the gate until it is removed, unless ``accept_now_passing`` says so in the output;
  an expired entry fails it), and, with ``max_latency_increase``, the system under test's latency
  per answer (mean and p95) rose by no more than that.
* :func:`read_allowlist`: ``ITEM_ID OWNER EXPIRES [reason]``, one entry a line.
* :func:`markdown` writes a comparison or a gate for a pull request.
* :func:`trend`: a headline (``all_pass``, ``ternary`` or a criterion) over time across runs,
  broken where the instrument changed (the judge, its rounds or the suite: the gate's own
  classification); polluted runs are marked, latency per answer stands beside each point.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from evalcore.analysis.bar import GAIN_REASONS
from evalcore.analysis.comparepower import Power
from evalcore.analysis.comparison import (
    TERNARY,
    Both,
    Comparison,
    _answers,
    _pct,
    _pivot_sql,
    _pts,
    _selection,
    compare,
    per_round,
    rounds_text,
)
from evalcore.analysis.configs import diff_knobs, fmt_value, instrument_changes, knob_values
from evalcore.analysis.corrected import CorrectedDelta
from evalcore.analysis.cost import answer_latency
from evalcore.analysis.selection import Selection
from evalcore.analysis.thresholds import NO_THRESHOLD
from evalcore.contract import schema as S
from evalcore.contract.markdown import md_text
from evalcore.contract.results import Result
from evalcore.errors import InputError, NotFoundError
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- the allowlist

_ALLOW_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)(?:\s+(.*))?$")
ALLOWLIST_FORMAT = "ITEM_ID OWNER EXPIRES(YYYY-MM-DD) [reason]"


def read_allowlist(path: str | Path) -> list[dict[str, Any]]:
    """Allowlist: one known miss per line, ``ITEM_ID OWNER EXPIRES [reason...]`` (EXPIRES a
    ``YYYY-MM-DD`` calendar date: the entry stops excusing the item after that day); ``#`` starts a
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
        if m is None:
            raise InputError(
                f"an entry needs an owner and an expiry date: {ALLOWLIST_FORMAT}", file=p, field=f"line {n}"
            )
        item, owner, expires, reason = m.group(1), m.group(2), m.group(3), (m.group(4) or "").strip()
        if re.fullmatch(r"\d[\d/.-]*", owner):
            raise InputError(f"an entry needs an owner before its date: {ALLOWLIST_FORMAT}", file=p, field=f"line {n}")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", expires):
            raise InputError(
                f"expiry date {expires!r} is not YYYY-MM-DD ({ALLOWLIST_FORMAT})", file=p, field=f"line {n}"
            )
        try:
            exp = date.fromisoformat(expires)
        except ValueError:
            raise InputError(f"expiry date {expires!r} is not a calendar date", file=p, field=f"line {n}") from None
        if item in seen:
            raise InputError(f"item {item!r} is listed twice", file=p, field=f"line {n}")
        seen.add(item)
        out.append({"item_id": item, "owner": owner, "expires": exp.isoformat(), "reason": reason, "line": n})
    return out


# --------------------------------------------------------------------------- the latency bar

_LAT_BAR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%|ms|s)\s*$")


def parse_latency_bar(text: str | float | None) -> dict[str, Any] | None:
    """``25%`` (relative to the baseline), ``500ms`` or ``2s`` (absolute) -> the bar; None -> None."""
    if text is None:
        return None
    m = _LAT_BAR.match(str(text))
    if m is None:
        raise InputError(f"{text!r} is not a latency bar: give 25%, 500ms or 2s", field="--max-latency-increase")
    v, unit = float(m.group(1)), m.group(2)
    if unit == "%":
        return {"relative": v / 100, "text": f"{m.group(1)}%"}
    return {"absolute_ms": v * (1000 if unit == "s" else 1), "text": f"{m.group(1)}{unit}"}


@dataclass
class LatencyCheck(Result):
    """One figure (mean or p95) of the system's latency per answer against the bar."""

    figure: str
    baseline_ms: float
    candidate_ms: float
    limit_ms: float
    holds: bool


@dataclass
class LatencyBar(Result):
    """:func:`latency_bar`."""

    bar: str | None
    checks: list[LatencyCheck]
    holds: bool
    reasons: list[str]


def latency_bar(latency: Both[dict[str, Any]], bar: dict[str, Any] | None) -> LatencyBar:
    """The system under test's latency per answer (mean and p95) against the bar: the candidate may
    be slower than the baseline by at most the bar (relative or absolute). Pure."""
    base, cand = latency.baseline.get("system"), latency.candidate.get("system")
    out = LatencyBar(None if bar is None else bar["text"], [], True, [])
    if bar is None:
        return out
    if not base or not cand:
        out.holds = False
        out.reasons.append("the latency bar cannot be checked: latency per answer is not recorded on both sides")
        return out
    for key, label in (("mean_ms", "mean"), ("p95_ms", "p95")):
        a, b = base[key], cand[key]
        limit = a * (1 + bar["relative"]) if "relative" in bar else a + bar["absolute_ms"]
        ok = b <= limit
        out.checks.append(LatencyCheck(label, a, b, limit, ok))
        if not ok:
            out.holds = False
            out.reasons.append(
                f"latency per answer ({label}) rose from {a:,.0f} ms to {b:,.0f} ms, past the bar of {bar['text']} "
                f"(at most {limit:,.0f} ms)"
            )
    return out


# --------------------------------------------------------------------------- the gate


@dataclass
class AllowlistEntry(Result):
    """An allowlist entry (:func:`read_allowlist`) with its days to expiry and its state."""

    item_id: str
    owner: str
    expires: str
    reason: str
    line: int
    expires_in_days: int
    state: str


@dataclass
class GateCheck(Result):
    """The gate's verdict, its new misses outside the allowlist, the allowlist's upkeep and the latency bar."""

    passed: bool
    reasons: list[str]
    notes: list[str]
    new_misses_own: list[str]
    new_misses_own_count: int
    allowlist: str | None
    allowlist_entries: list[AllowlistEntry]
    allowlist_now_passing: list[str]
    allowlist_expired: list[str]
    accept_now_passing: bool
    latency_bar: LatencyBar
    measurement_change: str | None
    allow_measurement_change: bool
    #: with ``--corrected``: the gain is decided on the corrected delta, not the raw one
    decided_on: str


@dataclass
class Gate(Comparison):
    """:func:`gate`: the comparison, and the gate on it (what ``evalcore gate --json`` prints)."""

    gate: GateCheck


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
    accept_now_passing: bool = False,
    max_latency_increase: str | None = None,
    power_figures: bool = True,
    allow_measurement_change: bool = False,
    corrected: bool = False,
    correct: Callable[[Store, Comparison], CorrectedDelta | None] | None = None,
) -> Gate:
    """Passes only when the two runs measure with the same instrument (the judge, its rounds and the
    suite held: :func:`~evalcore.analysis.configs.instrument_changes`; ``allow_measurement_change``
    gates anyway, and the summary leads with it), the two-sided bar holds, no new miss appears
    outside the allowlist, no allowlist entry has expired or now passes (unless
    ``accept_now_passing``, said in the output) and the latency bar (when given) holds; reports the
    allowlist's upkeep. ``correct`` (:func:`evalcore.review.corrected.correct`) adds the corrected
    delta; ``corrected`` decides the gain on it (its interval's low end above 0) instead of the raw
    bar, keeping every other check."""
    bar = parse_latency_bar(max_latency_increase)
    entries = read_allowlist(allowlist) if allowlist else []
    today = today or datetime.now(UTC).date()
    live = [e for e in entries if date.fromisoformat(e["expires"]) >= today]
    allow = {e["item_id"] for e in live}
    sel = _selection(sel or Selection(), include_holdout)
    new_miss: list[str] = []
    c = compare(
        store,
        baseline,
        candidate,
        sel=sel,
        seed=seed,
        n_boot=n_boot,
        headline=headline,
        allow=allow,
        power_figures=power_figures,
        every_new_miss=new_miss,
        correct=correct,
    )
    # with an allowlist the list is complete; without one, every new miss is the candidate's own
    new_miss_own = [i for i in new_miss if i not in allow]
    n_new_own = c.new_miss_count - (len(new_miss) - len(new_miss_own))
    upkeep = _upkeep(store, candidate, headline, sel, entries, today)
    expired = [u.item_id for u in upkeep if u.state.startswith("expired")]
    now_passing = [u.item_id for u in upkeep if u.state.startswith("now passing")]
    lat = latency_bar(c.latency, bar)
    own, notes = _allowlist_reasons(n_new_own, new_miss_own, expired, now_passing, accept_now_passing)
    reasons = [*_gain_reasons(c, corrected), *own, *lat.reasons]
    changed = c.diff.instrument_text or None
    if changed and not allow_measurement_change:
        reasons.insert(0, changed)
    return Gate(
        **vars(c),
        gate=GateCheck(
            not reasons,
            reasons,
            notes,
            new_miss_own[:50],
            n_new_own,
            None if allowlist is None else str(allowlist),
            upkeep,
            now_passing,
            expired,
            accept_now_passing,
            lat,
            changed,
            allow_measurement_change,
            "corrected delta" if corrected else "raw delta",
        ),
    )


def _gain_reasons(c: Comparison, corrected: bool) -> list[str]:
    """The comparison's reasons; with ``corrected``, those about the gain are the corrected delta's."""
    if not corrected:
        return list(c.verdict.reasons)
    kept = [r for r in c.verdict.reasons if not r.startswith(GAIN_REASONS)]
    cd = c.corrected
    if cd is None:
        return ["no corrected delta: gold is needed on both runs' generations (review or import labels)", *kept]
    if cd.delta is None:
        return [cd.text, *kept]
    if cd.ci[0] is None or cd.ci[0] <= 0:
        return [f"no gain on the corrected scale: {cd.text}", *kept]
    return kept


def _upkeep(
    store: Store, candidate: str, headline: str, sel: Selection, entries: list[dict[str, Any]], today: date
) -> list[AllowlistEntry]:
    """Each allowlist entry with its days to expiry and its state: an allowlisted item the
    candidate does not miss (passes in some round) must come off."""
    listed = [e["item_id"] for e in entries]
    cand_miss = _misses(store, candidate, headline, sel, listed)
    items = _known_items(store, candidate, listed)
    upkeep = []
    for e in entries:
        days = (date.fromisoformat(e["expires"]) - today).days
        state = (
            "expired: renew it (new date, owner) or remove it"
            if days < 0
            else "not in the suite"
            if e["item_id"] not in items
            else "still missed"
            if e["item_id"] in cand_miss
            else "now passing: remove it"
        )
        upkeep.append(AllowlistEntry(**e, expires_in_days=days, state=state))
    return upkeep


def _allowlist_reasons(
    n_new_own: int, new_miss_own: list[str], expired: list[str], now_passing: list[str], accept_now_passing: bool
) -> tuple[list[str], list[str]]:
    """Why the gate fails on the allowlist's account (new misses outside it, entries expired or
    now passing), and the note when now-passing entries are accepted."""
    reasons, notes = [], []
    if n_new_own:
        reasons.append(
            f"{n_new_own} new miss(es) outside the allowlist: {', '.join(new_miss_own[:10])}"
            + (" ..." if n_new_own > 10 else "")
        )
    if expired:
        reasons.append(
            f"{len(expired)} allowlist entr{'y' if len(expired) == 1 else 'ies'} expired: {', '.join(expired)}"
        )
    if now_passing and not accept_now_passing:
        reasons.append(
            f"{len(now_passing)} allowlisted item(s) now pass: remove {', '.join(now_passing)} from the allowlist "
            "(or pass --accept-now-passing)"
        )
    elif now_passing:
        notes.append(
            f"accepted with --accept-now-passing: {len(now_passing)} allowlisted item(s) now pass and are still "
            f"listed: {', '.join(now_passing)}"
        )
    return reasons, notes


def _misses(store: Store, run_id: str, metric: str, sel: Selection, ids: list[str]) -> set[str]:
    """Which of ``ids`` the run fails (scores 0) in every generation round (the allowlist's upkeep);
    from the run's answers table when it has one."""
    if not ids:
        return set()
    masks = _answers(store, [run_id], [metric], sel)
    piv, params = _pivot_sql(store, run_id, [metric], sel, None if masks is None else masks[run_id])
    return {
        r[0]
        for r in store.sql(
            f"SELECT item_id FROM ({piv}) WHERE list_contains(?::VARCHAR[], item_id) "
            "GROUP BY item_id HAVING bool_and(m0 = 0)",
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


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f} ms"


def _md_head(c: Comparison, g: GateCheck | None) -> list[str]:
    """The summary's title, warnings, the runs compared and the verdict with its reasons."""
    lines = [f"## evalcore gate: {'PASS' if g.passed else 'FAIL'}" if g is not None else "## evalcore compare"]
    if g is not None and g.measurement_change:
        lead = "Measurement change, gated anyway (--allow-measurement-change)" if g.allow_measurement_change else "FAIL"
        lines.append(f"\n**{lead}: {md_text(g.measurement_change)}**")
    if c.simulated:
        lines.append("\n**SIMULATED data** (made by evalcore's simulator, not by a real system).")
    for n in c.notes:
        if " is POLLUTED: " in n:
            r, why = n.split(" is POLLUTED: ", 1)
            lines.append(f"\n**POLLUTED: {md_text(r)}** ({md_text(why)}).")
        elif NO_THRESHOLD in n:  # a run's criteria scored without a pass threshold (analysis.thresholds)
            lines.append(f"\n> Note: {md_text(n)}")
    lines.append(
        f"\nBaseline `{c.baseline}`, candidate `{c.candidate}`, {c.rounds_paired} paired generation "
        f"round(s); the diff calls this a **{md_text(c.diff.kind)}**."
    )
    cov = c.coverage
    lines.append(
        f"\nItems: baseline {cov.baseline_items}, candidate {cov.candidate_items}; compared on the "
        f"{cov.shared_items} both answered."
    )
    if cov.note:
        lines.append(f"\n> Warning: {md_text(cov.note)} (the first rival explanation)")
    for w in c.diff.warnings:
        lines.append(f"\n> Warning: {md_text(w)}")
    lines.append(f"\n**{md_text(c.verdict.text)}**")
    if c.corrected is not None:
        lead = (
            "Decided on the corrected scale"
            if g is not None and g.decided_on == "corrected delta"
            else "Corrected scale"
        )
        lines.append(f"\n**{lead}:** {md_text(c.corrected.text)}")
    for n in c.verdict.notes:
        lines.append(f"- {md_text(n)}")
    if g is not None:
        for r in g.reasons:
            if (
                r not in c.verdict.reasons
                and r != g.measurement_change
                and (c.corrected is None or c.corrected.text not in r)
            ):
                lines.append(f"- gate: {md_text(r)}")
        for n in g.notes:
            lines.append(f"- {md_text(n)}")
    return lines


def _md_figures(c: Comparison) -> list[str]:
    """The figures' table, the headline's stable wins and regressions and its minimum detectable
    effect."""
    lines = ["\n| figure | baseline | candidate | paired delta (95% CI) | noise floor |", "|---|---|---|---|---|"]
    for name in c.metrics:
        v = c.figures[name]
        d = v.delta
        ci = "—" if d.ci95[0] is None else f"[{_pct(d.ci95[0], True)}, {_pct(d.ci95[1], True)}]"
        lines.append(
            f"| {md_text(name)} | {rounds_text(v.a.to_dict())} | {rounds_text(v.b.to_dict())} | "
            f"{_pct(d.mean, True)} {ci} | {_pts(v.noise_floor)} |"
        )
    h = c.headline
    f = c.figures[h]
    lines.append(
        f"\nStable wins ({h}): {f.stable_wins}"
        + (f" ({md_text(', '.join((f.stable_win_items or [])[:10]))})" if f.stable_wins else "")
        + f". Stable regressions: {f.stable_regressions}"
        + (f" ({md_text(', '.join((f.stable_regression_items or [])[:10]))})" if f.stable_regressions else "")
        + "."
    )
    p = f.power
    if isinstance(p, Power) and p.mde is not None:
        lines.append(
            f"\nMinimum detectable effect at {p.items} items: {_pct(p.mde, True)} (alpha {p.alpha}, power {p.power})."
        )
    return lines


def _md_allowlist(g: GateCheck) -> list[str]:
    """The gate's new misses outside the allowlist and the allowlist's upkeep."""
    lines = [
        f"\nNew misses outside the allowlist: {len(g.new_misses_own)}"
        + (f" ({md_text(', '.join(g.new_misses_own[:10]))})" if g.new_misses_own else "")
        + "."
    ]
    if g.allowlist_entries:
        lines += ["\n| allowlisted item | owner | expires | days left | state |", "|---|---|---|---|---|"]
        for e in g.allowlist_entries:
            lines.append(
                f"| {md_text(e.item_id)} | {md_text(e.owner)} | {md_text(e.expires)} | "
                f"{e.expires_in_days} | {md_text(e.state)} |"
            )
    return lines


def _md_latency_cost(c: Comparison, g: GateCheck | None) -> list[str]:
    """The latency per answer (and the gate's latency bar) and the cost, side by side."""
    lines = ["\n| latency per answer | baseline | candidate |", "|---|---|---|"]
    for who in ("system", "judge"):
        for key, label in (("mean_ms", "mean"), ("p95_ms", "p95")):
            a, b = (lat.get(who) or {} for lat in (c.latency.baseline, c.latency.candidate))
            lines.append(f"| {who} {label} | {_ms(a.get(key))} | {_ms(b.get(key))} |")
    if g is not None and g.latency_bar.bar:
        lb = g.latency_bar
        lines.append(f"\nLatency bar (system, at most {lb.bar} slower): {'holds' if lb.holds else 'FAILS'}.")
    cb, cc = c.cost.baseline, c.cost.candidate
    lines += ["\n| cost | baseline | candidate |", "|---|---|---|"]
    for who, tb, tc in (("system", cb.system, cc.system), ("judge", cb.judge, cc.judge)):
        for key, label in (
            ("calls", "calls"),
            ("tokens_in", "tokens in"),
            ("tokens_out", "tokens out"),
            ("cost_usd", "cost (USD)"),
        ):
            fmt = (lambda x: "unknown" if x is None else f"{x:.4f}") if key == "cost_usd" else (lambda x: f"{x:,}")
            lines.append(f"| {who} {label} | {fmt(tb.get(key))} | {fmt(tc.get(key))} |")
    return lines


def markdown(c: Comparison) -> str:
    """A Markdown summary of a comparison or a gate, for a pull request."""
    g = c.gate if isinstance(c, Gate) else None
    lines = _md_head(c, g) + _md_figures(c) + (_md_allowlist(g) if g is not None else []) + _md_latency_cost(c, g)
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- trend


def _breaks(
    prev: tuple[S.RunManifest, S.GenerationManifest], now: tuple[S.RunManifest, S.GenerationManifest]
) -> list[str]:
    """Where the line breaks between two consecutive runs: every knob of the instrument that changed
    (:func:`~evalcore.analysis.configs.instrument_changes`, the gate's classification), the suite
    by name."""
    rows = diff_knobs(knob_values(prev[1], prev[0]), knob_values(now[1], now[0]))
    out = []
    for r in instrument_changes(rows):
        if r["knob"] != "suite_hash":
            out.append(f"{r['label']}: {fmt_value(r['a'])} -> {fmt_value(r['b'])}")
        elif prev[1].suite_id != now[1].suite_id:
            out.append(f"suite: {prev[1].suite_id} -> {now[1].suite_id}")
        else:
            out.append(f"suite {now[1].suite_id}: content changed")
    return out


@dataclass
class TrendPoint(Result):
    """One run of :func:`trend`: its headline per round and mean, status, line segment and breaks, latency."""

    run_id: str
    created_at: str
    gen_id: str
    suite_id: str
    value: float
    by_round: list[float | None]
    spread: float | None
    status: str
    polluted: bool
    judge_model: str
    mode: str
    segment: int
    breaks: list[str]
    latency: dict[str, Any]
    simulated: bool


@dataclass
class Trend(Result):
    """:func:`trend`: what ``evalcore trend --json`` prints and the Compare page draws."""

    metric: str
    suite_id: str | None
    points: list[TrendPoint]
    segments: int
    polluted: list[str]
    simulated: bool


def trend(
    store: Store,
    *,
    suite_id: str | None = None,
    metric: str = "all_pass",
    sel: Selection | None = None,
    include_holdout: bool | None = None,
) -> Trend:
    """A headline over time across runs (by created_at), broken where the instrument changed (the
    judge, its rounds or the suite): levels on either side of a break are different measurements. A
    polluted run's point is marked (``polluted``; its value is not a measurement), and each point
    carries the latency per answer of the system and the judge."""
    sel = _selection(sel or Selection(), include_holdout)
    runs = []
    for e in store.all("run"):
        m = e.manifest
        if not m.rubric.criteria:
            continue
        g = store.generation(m.gen_id).manifest
        if suite_id is not None and g.suite_id != suite_id:
            continue
        if metric == TERNARY:
            if not any(c.kind == "ternary" for c in m.rubric.criteria):
                continue
        elif metric != "all_pass" and metric not in m.rubric.names():
            continue
        runs.append((m.created_at, m.run_id, m, g))
    if suite_id is not None and suite_id not in store.ids("suite"):
        raise NotFoundError(f"no suite {suite_id!r} in {store.data}", field="--suite")
    runs.sort(key=lambda t: (t[0], t[1]))
    points: list[TrendPoint] = []
    segment, prev = 0, None
    for created, rid, m, g in runs:
        pr = per_round(store, rid, sel=sel, metrics=["all_pass"] if metric == "all_pass" else ["all_pass", metric])
        f = pr.figures[metric]
        if f.mean is None:  # no verdicts (a pairwise grader's run) or none under this selection
            continue
        breaks: list[str] = [] if prev is None else _breaks(prev, (m, g))
        segment += bool(breaks)
        points.append(
            TrendPoint(
                rid,
                created.isoformat(),
                m.gen_id,
                g.suite_id,
                f.mean,
                f.by_round,
                f.spread,
                m.status,
                m.status == "polluted" or g.status == "polluted",
                m.judge_model,
                m.mode,
                segment,
                breaks,
                answer_latency(store, rid),
                bool(m.simulated or g.simulated),
            )
        )
        prev = (m, g)
    return Trend(
        metric,
        suite_id,
        points,
        (points[-1].segment + 1) if points else 0,
        [p.run_id for p in points if p.polluted],
        any(p.simulated for p in points),
    )
