"""The identifiability check: can the arms of a blinded session still be told apart from the
surface of the shown texts? (:func:`identifiability`; :func:`describe` is its one line.)

Each original pair (mirrors left out) is one observation: its features are left minus right of
:func:`surface_features` (``length`` in words, ``headings``, ``bullets``, ``blank_lines``) and of
``marker`` (1 when the answer holds the session's :func:`find_marker`, a word or opening found in
exactly one answer of most pairs: a tag one arm puts on its answers), each as ``log1p``; its label
is whether the first arm is on the left, so chance is 50% whatever the arms. A ridge logistic
regression without intercept (swapping the sides flips the prediction; penalty ``RIDGE`` on
standardised columns, Newton's method) is cross-validated over ``folds`` seeded folds of pairs (a
prediction of exactly one half counts as half right). Reported: ``accuracy``; ``interval``, a
percentile bootstrap over pairs (:mod:`evalcore.stats.bootstrap`); ``p_value``, a permutation
test, (1 + #{permuted accuracy >= observed}) / (1 + n_perm); the same per feature alone, with
``leaking_feature`` (the best feature alone) named only when its interval and the full model's
exclude 50%; and ``identifiable``: the full model's interval excludes 50%. The marker is chosen
from the texts without the key (whether a word is in exactly one answer of a pair does not depend
on which side is which arm), so the cross-validation and the permutation test stay honest. The
check sees surface features only, so 50% bounds what a grader can do from these features, not
from everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalcore.pairwise.blinding import (
    _BULLET,
    DEFAULT_BOOT,
    DEFAULT_FOLDS,
    DEFAULT_PERMUTATIONS,
    FEATURES,
    LEVEL,
    MARKER_PREFIX,
    RIDGE,
    structure,
    word_count,
)
from evalcore.stats.bootstrap import percentile_interval, resample

# --------------------------------------------------------------------------- features


def surface_features(text: str) -> dict[str, int]:
    """Counts a reader sees at a glance: ``length`` (words), ``headings`` (ATX heading lines and
    setext underlines, as the Markdown parser finds them), ``bullets`` (prose lines starting with a
    bullet glyph or a list number) and ``blank_lines`` (runs of two or more blank prose lines).
    Code (fenced, indented, inline: :func:`evalcore.pairwise.blinding.structure`) is not
    formatting: a ``# comment`` in a fence is no heading and a diff's ``-`` lines are no bullets."""
    st = structure(text)
    headings = len(st.atx | st.underlines)
    bullets = sum(1 for i, ln in enumerate(st.lines) if st.prose(i) and _BULLET.match(ln))
    runs, blank = 0, 0
    for i, ln in enumerate(st.lines):
        if ln.strip() or i in st.code:
            runs += blank >= 2
            blank = 0
        else:
            blank += 1
    return {"length": word_count(text), "headings": headings, "bullets": bullets, "blank_lines": runs}


def _marker_candidates(text: str) -> set[tuple[str, str]]:
    """A text's words as written (between whitespace) and its openings of 1 to MARKER_PREFIX characters."""
    s = text.strip()
    return {("word", w) for w in s.split()} | {("opening", s[:k]) for k in range(1, min(MARKER_PREFIX, len(s)) + 1)}


def has_marker(text: str, marker: dict | None) -> bool:
    """Whether ``text`` holds ``marker`` (:func:`find_marker`): the word, or the opening."""
    if not marker:
        return False
    s = text.strip()
    return marker["text"] in s.split() if marker["kind"] == "word" else s.startswith(marker["text"])


def find_marker(left: Sequence[str], right: Sequence[str]) -> dict | None:
    """The word (as written) or opening (up to MARKER_PREFIX characters) in exactly one answer of the
    most pairs, when that is more than half of them: a tag or prefix one arm's answers share and the
    other's lack. Ties go to a word, then the longer, then the first in order. ``{"kind": "word" |
    "opening", "text", "pairs"}`` (pairs: in how many it is in one answer only), else None. The key is
    not read: being in one answer of a pair does not depend on which side is which arm."""
    counts: Counter[tuple[str, str]] = Counter()
    for lt, rt in zip(left, right):
        counts.update(_marker_candidates(lt) ^ _marker_candidates(rt))
    if not counts:
        return None
    kind, text = min(counts, key=lambda m: (-counts[m], m[0] != "word", -len(m[1]), m[1]))
    n = counts[(kind, text)]
    return {"kind": kind, "text": text, "pairs": n} if 2 * n > len(left) else None


def marker_words(marker: dict | None) -> str:
    """The marker for a person: ``the word "[v2]"`` or ``the opening "v2:"``."""
    return "no marker" if not marker else f'the {marker["kind"]} "{marker["text"]}"'


def feature_matrix(texts: Sequence[str], marker: dict | None = None) -> np.ndarray:
    """(n, len(FEATURES)) raw counts; ``marker`` 1 where the text holds the session's marker."""
    rows = [[*(surface_features(t)[f] for f in FEATURES[:-1]), float(has_marker(t, marker))] for t in texts]
    return np.array(rows, dtype=float).reshape(-1, len(FEATURES))


# --------------------------------------------------------------------------- the check


def _fit(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, iters: int = 30) -> np.ndarray:
    """Ridge logistic regression without intercept, labels y in {-1, +1}, by Newton's method."""
    w = np.zeros(x.shape[1])
    eye = ridge * np.eye(x.shape[1])
    for _ in range(iters):
        z = x @ w
        p = 1.0 / (1.0 + np.exp(-z))
        t = (y + 1) / 2
        grad = x.T @ (p - t) + ridge * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + eye
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-9:
            break
    return w


def _cv_correct(d: np.ndarray, y: np.ndarray, folds: np.ndarray, k: int) -> np.ndarray:
    """Per-pair correctness (1, 0, or 0.5 for a tie) of the k-fold cross-validated model."""
    correct = np.empty(len(y))
    for f in range(k):
        test = folds == f
        train = ~test
        xt = d[train]
        scale = np.sqrt(np.mean(xt**2, axis=0)) if xt.size else np.zeros(d.shape[1])
        usable = scale > 0
        if not usable.any() or not train.any():
            correct[test] = 0.5
            continue
        w = _fit(xt[:, usable] / scale[usable], y[train])
        z = (d[test][:, usable] / scale[usable]) @ w
        sign = np.sign(z)
        correct[test] = np.where(sign == 0, 0.5, (sign == y[test]).astype(float))
    return correct


def _boot_interval(correct: np.ndarray, rng: np.random.Generator, n_boot: int, level: float) -> list[float]:
    p = percentile_interval(resample(lambda idx: correct[idx].mean(axis=1), len(correct), n_boot, rng), level)
    return [float(p.lo or 0.0), float(p.hi or 0.0)]


def identifiability(
    left: np.ndarray,
    right: np.ndarray,
    first_left: Sequence[bool] | np.ndarray,
    *,
    seed: int,
    marker: dict | None = None,
    folds: int = DEFAULT_FOLDS,
    n_perm: int = DEFAULT_PERMUTATIONS,
    n_boot: int = DEFAULT_BOOT,
    level: float = LEVEL,
) -> dict:
    """Can the side of the first arm be predicted from the surface features of a pair?

    ``left`` and ``right`` are (n, len(FEATURES)) raw counts of the texts shown on each side of
    the n original pairs; ``first_left[i]`` says whether the first arm is on the left of pair i.
    Everything random comes from ``seed``; ``marker`` (:func:`find_marker`) is recorded as the one
    the ``marker`` column stands for. See the module docstring for the method. Returns plain data;
    with fewer than 6 pairs every figure is None with a ``reason``."""
    left = np.asarray(left, dtype=float).reshape(-1, len(FEATURES))
    right = np.asarray(right, dtype=float).reshape(-1, len(FEATURES))
    y = np.where(np.asarray(first_left, dtype=bool), 1.0, -1.0)
    n = len(y)
    base = {
        "n_pairs": n,
        "level": level,
        "folds": None,
        "permutations": n_perm,
        "chance": 0.5,
        "marker": marker,
        "method": "cross-validated logistic regression of the first arm's side on left-minus-right "
        "log1p surface features and a marker; bootstrap interval over pairs; permutation p-value",
    }
    if n < 6:
        return {
            **base,
            "accuracy": None,
            "interval": None,
            "p_value": None,
            "identifiable": None,
            "leaking_feature": None,
            "features": {},
            "reason": f"{n} pairs: too few to cross-validate",
        }
    k = int(min(folds, n // 2))
    d = np.log1p(left) - np.log1p(right)
    rng = np.random.default_rng([int(seed), 0x1D])
    fold_of = rng.permutation(np.arange(n) % k)
    correct = _cv_correct(d, y, fold_of, k)
    acc = float(correct.mean())
    interval = _boot_interval(correct, rng, n_boot, level)
    hits = 0
    for _ in range(n_perm):
        if _cv_correct(d, rng.permutation(y), fold_of, k).mean() >= acc - 1e-12:
            hits += 1
    p_value = (1 + hits) / (1 + n_perm)
    features: dict[str, dict[str, Any]] = {}
    for j, name in enumerate(FEATURES):
        c = _cv_correct(d[:, [j]], y, fold_of, k)
        features[name] = {"accuracy": float(c.mean()), "interval": _boot_interval(c, rng, n_boot, level)}
    top = max(FEATURES, key=lambda f: (features[f]["accuracy"], -FEATURES.index(f)))
    # named only when the arms are identifiable: with five features, one alone clears 50% by chance
    # more often than the model does (the demo's negative control: the word "way", 57% [50-64%])
    leaking = top if interval[0] > 0.5 and features[top]["interval"][0] > 0.5 else None
    return {
        **base,
        "folds": k,
        "accuracy": acc,
        "interval": interval,
        "p_value": float(p_value),
        "identifiable": bool(interval[0] > 0.5),
        "leaking_feature": leaking,
        "features": features,
        "reason": None,
    }


def feature_means(texts: Sequence[str], marker: dict | None = None) -> dict[str, float | None]:
    """Mean of each feature over some texts (one arm's answers), for the report (``marker``: the
    share of the texts that hold it)."""
    if not len(texts):
        return {f: None for f in FEATURES}
    m = feature_matrix(texts, marker).mean(axis=0)
    return {f: float(v) for f, v in zip(FEATURES, m)}


def describe(check: dict) -> str:
    """One line for a person: accuracy, interval, p-value and the leaking feature."""
    if check.get("accuracy") is None:
        return f"not measured ({check.get('reason')})"
    lo, hi = check["interval"]
    leak = leaking_words(check)
    return (
        f"{100 * check['accuracy']:.0f}% of pairs' sides guessed right from surface features "
        f"({100 * check['level']:.0f}% interval {100 * lo:.0f}-{100 * hi:.0f}%, permutation p "
        f"{check['p_value']:.3f}, chance 50%); " + (f"leaking feature: {leak}" if leak else "no single feature leaks")
    )


def leaking_words(check: dict) -> str | None:
    """The leaking feature for a person; the marker with its word or opening and in how many pairs
    it is in one answer only (``the word "[v2]" (a marker: in one answer of 40 of 40 pairs)``)."""
    leak, m = check.get("leaking_feature"), check.get("marker")
    if leak != "marker" or not m:
        return leak
    return f"{marker_words(m)} (a marker: in one answer of {m['pairs']} of {check['n_pairs']} pairs)"
