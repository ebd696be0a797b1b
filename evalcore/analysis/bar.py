"""The two-sided bar of a comparison (docs/COMPARE.md, "The two-sided bar"): a gain that clears both
its interval and the noise floor, and no stable regression of its own, in words generated from the
figures, one unit per figure (rates in %, differences and spreads in points)."""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.contract.results import Result


def _pct(v: float | None, signed: bool = False) -> str:
    """A rate as ``40.0%``, a difference of rates as ``+2.5 pts``: one unit per figure."""
    if v is None:
        return "—"
    return f"{v * 100:+.1f} pts" if signed else f"{v * 100:.1f}%"


def _pts(v: float | None) -> str:
    """A spread or a noise floor (a distance between rates) as ``6.5 pts``."""
    return "—" if v is None else f"{v * 100:.1f} pts"


#: how :func:`two_sided_bar`'s reasons about the gain begin (``gate --corrected`` decides the gain
#: on the corrected delta instead, and keeps every other reason)
GAIN_REASONS = ("no gain", "a loss beyond the noise floor")


@dataclass
class Verdict(Result):
    """:func:`two_sided_bar`."""

    holds: bool
    gain: bool
    clears_interval: bool
    clears_noise_floor: bool
    stable_wins: int
    regressions_own: list[str]
    regressions_own_count: int
    regressions_allowed: list[str]
    reasons: list[str]
    notes: list[str]
    text: str


def two_sided_bar(
    mean_delta: float | None,
    ci_low: float | None,
    n_wins: int,
    regs: list[str],
    n_regs: int,
    allow: set[str],
    rounds: int,
    statuses: list[tuple[str, str]],
    *,
    noise_floor: float | None = None,
    bar: float = 0.0,
) -> Verdict:
    """A gain that clears both the interval (its low end above ``bar``) and the noise floor (the
    mean delta larger than the largest round-to-round spread of either side; unknown with one
    round, so no gain can be shown), and no stable regression outside the allowlist; a polluted or
    partial run fails it. ``regs`` holds every stable regression when ``allow`` is not empty, else
    the first few of the ``n_regs``. Pure."""
    allowed = [i for i in regs if i in allow]
    own = [i for i in regs if i not in allow]
    n_own = n_regs - len(allowed)
    clears_ci = mean_delta is not None and ci_low is not None and ci_low > bar
    clears_noise = mean_delta is not None and noise_floor is not None and mean_delta > noise_floor
    gain = clears_ci and clears_noise
    reasons = []
    if mean_delta is None:
        reasons.append("no gain: no item judged in both runs")
    else:
        d = _pct(mean_delta, True)
        if not clears_ci:
            low = "unknown" if ci_low is None else _pct(ci_low, True)
            reasons.append(f"no gain: mean delta {d} with its interval reaching {low} (bar {_pct(bar, True)})")
        if clears_noise:
            pass
        elif noise_floor is None:
            reasons.append("no gain beyond the noise floor: the noise floor is unknown with one generation round")
        elif mean_delta < -noise_floor:
            reasons.append(
                f"a loss beyond the noise floor: mean delta {d} is below minus the noise floor {_pts(noise_floor)}"
            )
        else:
            reasons.append(
                f"no gain beyond the noise floor: mean delta {d} is within the noise floor {_pts(noise_floor)}"
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
    return Verdict(
        holds,
        gain,
        clears_ci,
        clears_noise,
        n_wins,
        own[:50],
        n_own,
        allowed,
        reasons,
        notes,
        "PASSES the two-sided bar: a gain beyond the interval and the noise floor, and no regression of its own"
        if holds
        else "FAILS the two-sided bar: " + "; ".join(reasons),
    )
