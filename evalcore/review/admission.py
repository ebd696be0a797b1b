"""The admission checks on a suite version's items (docs/SUITES.md): the schema (item count,
content hash, empty inputs), quoted spans that must occur in the item's context or source, exact and
near duplicate inputs, and the manifest's class and difficulty quotas. :func:`item_checks` reads the
items a batch at a time; :func:`evalcore.review.suites.check` keeps its result as a memo in the state
and adds the open flags."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from evalcore.analysis.suites import NONE
from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import EvalcoreError, FormatError, InputError
from evalcore.storage.files import check_parquet
from evalcore.storage.store import Store


def finding(check: str, item_id: str | None, field: str | None, problem: str, detail: str | None = None) -> dict:
    return {"check": check, "item_id": item_id, "field": field, "problem": problem, "detail": detail}


#: the admission checks, in the order their findings are listed
CHECKS = ("schema", "quotes", "duplicates", "quotas", "flags")
#: near duplicates: Jaccard similarity of the sets of character 4-grams of the normalised inputs
SHINGLE = 4
NEAR_DUPLICATE_THRESHOLD = 0.75
#: above this many items the near-duplicate join is skipped (exact duplicates are still found): it
#: holds every item's shingles in memory (10,000 items: 2.4 s), and a million items did not finish
#: in 10 minutes at 20 GB (docs/BENCHMARKS.md). Said in the result's notes, never silently.
NEAR_DUPLICATE_MAX_ITEMS = 50_000
#: the join stops after this many near-duplicate pairs (a suite of templated items can hold a
#: quadratic number of them); said in the notes.
NEAR_DUPLICATE_MAX_PAIRS = 10_000
#: fields whose quoted spans must occur in the source (wrong_if quotes wrong claims on purpose)
QUOTED_FIELDS = ("reference", "must_have", "nice_to_have")
_QUOTE = re.compile(r'"([^"\n]+)"|\u201c([^\u201d\n]+)\u201d')
_TYPO = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "}
)


# --------------------------------------------------------------------------- checks


def normalise(text: Any) -> str:
    """Text as the checks compare it: Unicode NFKC, typographic quotes / dashes / no-break spaces
    made plain, case folded, runs of whitespace made one space, trimmed."""
    t = unicodedata.normalize("NFKC", str(text or "")).translate(_TYPO).casefold()
    return " ".join(t.split())


def quoted_spans(text: Any) -> list[str]:
    """Spans in straight double quotes ("...") or typographic ones (\u201c...\u201d), on one line."""
    return [a or b for a, b in _QUOTE.findall(str(text or ""))]


def quote_findings(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for it in items:
        src = "\n".join(normalise(it.get(k)) for k in ("context", "source") if isinstance(it.get(k), str))
        for field in QUOTED_FIELDS:
            val = it.get(field)
            entries = [val] if isinstance(val, str) else list(val or [])
            for k, entry in enumerate(entries):
                where = "" if isinstance(val, str) else f" ({field} entry {k + 1})"
                for span in quoted_spans(entry):
                    ns = normalise(span)
                    if not ns:
                        continue
                    if not src.strip():
                        out.append(
                            finding(
                                "quotes",
                                it["item_id"],
                                field,
                                "quote without a source",
                                f'"{span}" cannot be checked: the item has no context or source{where}',
                            )
                        )
                    elif ns not in src:
                        out.append(
                            finding(
                                "quotes",
                                it["item_id"],
                                field,
                                "fabricated quote",
                                f'"{span}" does not occur in the context or source{where}',
                            )
                        )
    return out


def shingles(text: str, k: int = SHINGLE) -> set[str]:
    """The character k-grams of a (normalised) text; a text shorter than k is its own one shingle."""
    if not text:
        return set()
    if len(text) <= k:
        return {text}
    return {text[i : i + k] for i in range(len(text) - k + 1)}


def near_duplicate_pairs(
    texts: dict[str, str], threshold: float = NEAR_DUPLICATE_THRESHOLD, k: int = SHINGLE, max_pairs: int | None = None
) -> list[tuple[str, str, float]]:
    """Every pair of texts whose shingle sets have Jaccard similarity >= ``threshold``, as
    (first id, second id, similarity) in id order. Exact, not sampled: the PPJoin similarity join
    (Xiao et al., "Efficient similarity joins for near duplicate detection", WWW 2008). Shingles
    are ordered rarest first; two sets with Jaccard >= t share a shingle among the first
    |x| - ceil(t |x|) + 1 of each (prefix filter), so only pairs sharing a rare shingle become
    candidates; sets are visited by size, a candidate smaller than t |x| is skipped (size filter),
    and one whose overlap can no longer reach ceil(t / (1 + t) (|x| + |y|)) given where the shared
    shingles sit is dropped (positional filter) before the exact Jaccard is computed."""
    if not 0 < threshold <= 1:
        raise InputError(f"the threshold must lie in (0, 1], not {threshold}", field="--threshold")
    ids = sorted(texts)
    raw = [shingles(texts[i], k) for i in ids]
    freq = Counter(s for st in raw for s in st)
    rank = {tok: r for r, (tok, _) in enumerate(sorted(freq.items(), key=lambda kv: (kv[1], kv[0])))}
    recs = [sorted(rank[t] for t in st) for st in raw]
    size = [len(r) for r in recs]
    sets: list[frozenset | None] = [None] * len(recs)
    index: dict[int, list[tuple[int, int]]] = defaultdict(list)
    start: dict[int, int] = defaultdict(int)
    t = threshold
    ratio = t / (1 + t)
    out = []
    for x in sorted(range(len(ids)), key=lambda i: (size[i], i)):
        rx, lx = recs[x], size[x]
        if not lx:
            continue
        min_size = t * lx - 1e-9
        seen: dict[int, int] = {}
        for i in range(lx - math.ceil(t * lx - 1e-9) + 1):
            lst = index.get(rx[i])
            if not lst:
                continue
            s = start[rx[i]]
            while s < len(lst) and size[lst[s][0]] < min_size:
                s += 1
            start[rx[i]] = s
            for y, j in lst[s:]:
                a = seen.get(y, 0)
                if a < 0:
                    continue
                ly = size[y]
                if a + min(lx - i, ly - j) >= math.ceil(ratio * (lx + ly) - 1e-9):
                    seen[y] = a + 1
                else:
                    seen[y] = -1
        for i in range(lx - math.ceil(2 * ratio * lx - 1e-9) + 1):
            index[rx[i]].append((x, i))
        if seen:
            sx = sets[x] = sets[x] or frozenset(rx)
            for y, a in seen.items():
                if a <= 0:
                    continue
                sy = sets[y] = sets[y] or frozenset(recs[y])
                inter = len(sx & sy)
                jac = inter / (lx + size[y] - inter)
                if jac >= t - 1e-12:
                    first, second = sorted((ids[x], ids[y]))
                    out.append((first, second, jac))
                    if max_pairs is not None and len(out) >= max_pairs:
                        return sorted(out)
    return sorted(out)


def duplicate_findings(
    items: list[dict[str, Any]], threshold: float = NEAR_DUPLICATE_THRESHOLD, notes: list[str] | None = None
) -> list[dict[str, Any]]:
    """Exact duplicates (the same normalised input: one finding per item after the first of its
    group) and near duplicates among the rest (one finding per pair, on the later item). The near
    duplicate join is skipped above NEAR_DUPLICATE_MAX_ITEMS distinct inputs and stops after
    NEAR_DUPLICATE_MAX_PAIRS pairs; either is appended to ``notes``."""
    groups: dict[str, list[str]] = defaultdict(list)
    for it in sorted(items, key=lambda r: r["item_id"]):
        groups[normalise(it.get("input"))].append(it["item_id"])
    return duplicates_of(groups, threshold, notes)


def duplicates_of(
    groups: dict[str, list[str]], threshold: float = NEAR_DUPLICATE_THRESHOLD, notes: list[str] | None = None
) -> list[dict[str, Any]]:
    """:func:`duplicate_findings` of the items grouped by normalised input (each group's ids in
    item id order)."""
    out = []
    reps = {}
    for text, ids in groups.items():
        reps[ids[0]] = text
        for other in ids[1:]:
            out.append(
                finding(
                    "duplicates",
                    other,
                    "input",
                    "exact duplicate",
                    f"the same input as {ids[0]} (after case and whitespace normalisation)",
                )
            )
    notes = notes if notes is not None else []
    if len(reps) > NEAR_DUPLICATE_MAX_ITEMS:
        notes.append(
            f"near duplicates not checked: {len(reps):,} distinct inputs is more than "
            f"{NEAR_DUPLICATE_MAX_ITEMS:,} (exact duplicates were checked)"
        )
        pairs = []
    else:
        pairs = near_duplicate_pairs(reps, threshold, max_pairs=NEAR_DUPLICATE_MAX_PAIRS)
        if len(pairs) >= NEAR_DUPLICATE_MAX_PAIRS:
            notes.append(f"near duplicates: stopped after {NEAR_DUPLICATE_MAX_PAIRS:,} pairs; there may be more")
    for a, b, jac in pairs:
        out.append(
            finding(
                "duplicates",
                b,
                "input",
                "near duplicate",
                f"input {jac:.2f} similar to {a}'s (Jaccard of character {SHINGLE}-grams; threshold {threshold:g})",
            )
        )
    return sorted(out, key=lambda f: (f["item_id"], f["problem"], f["detail"]))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def quota_findings(items: list[dict[str, Any]], quotas: S.SuiteQuotas | None) -> list[dict[str, Any]]:
    """Class and difficulty shares and counts against the manifest's quotas (all items, holdout
    included): ``quota exceeded`` above a maximum, ``quota not met`` below a minimum."""
    counts = {dim: Counter((it.get(dim) or NONE) for it in items) for dim in ("class", "difficulty")}
    return quotas_of(len(items), counts, quotas)


def quotas_of(n: int, counts: dict[str, Counter], quotas: S.SuiteQuotas | None) -> list[dict[str, Any]]:
    """:func:`quota_findings` of ``n`` items counted by class and by difficulty."""
    if quotas is None:
        return []
    out = []
    for dim, bounds in (("class", quotas.class_), ("difficulty", quotas.difficulty)):
        for value, b in sorted(bounds.items()):
            c = counts[dim].get(value, 0)
            share = c / n if n else 0.0
            have = f"{dim} {value}: {c} of {n} items ({_pct(share)})"
            if b.max is not None and share > b.max + 1e-12:
                out.append(finding("quotas", None, dim, "quota exceeded", f"{have}, maximum {_pct(b.max)}"))
            if b.max_count is not None and c > b.max_count:
                out.append(finding("quotas", None, dim, "quota exceeded", f"{have}, maximum {b.max_count} items"))
            if b.min is not None and share < b.min - 1e-12:
                out.append(finding("quotas", None, dim, "quota not met", f"{have}, minimum {_pct(b.min)}"))
            if b.min_count is not None and c < b.min_count:
                out.append(finding("quotas", None, dim, "quota not met", f"{have}, minimum {b.min_count} items"))
    return out


def schema_finding(e: EvalcoreError) -> dict[str, Any]:
    return finding("schema", None, e.field, e.problem, e.file)


CHECK_BATCH = 50_000  # items a batch of the checks reads as Python rows
CHECKS_VERSION = 1  # of item_checks: a memo made by another version of the checks is not read


def item_checks(
    store: Store, d: Path, man: S.SuiteManifest, threshold: float
) -> tuple[int | None, list[dict[str, Any]], list[str]]:
    """The checks on one version's items (``d``: its directory): the item count, the findings
    (schema, quotes, duplicates, quotas) and the notes."""
    findings: list[dict[str, Any]] = []
    notes: list[str] = []
    path = d / "items.parquet"
    try:
        check_parquet(path, "items")
        store._check_unique(path, "items")
        table = store.arrow("SELECT * FROM read_parquet(?) ORDER BY item_id", [str(path)])
    except FormatError as e:
        return None, [schema_finding(e)], notes
    # a batch of items at a time as Python rows (a million items as dicts of every column took 1.35
    # GB): the content hash streamed, the inputs grouped and the classes counted as they come
    digest = H.SuiteHash()
    n = 0
    groups: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, Counter] = {"class": Counter(), "difficulty": Counter()}
    empty: list[dict[str, Any]] = []
    quotes: list[dict[str, Any]] = []
    for batch in table.to_batches(max_chunksize=CHECK_BATCH):
        rows = batch.to_pylist()
        if not rows:
            continue
        digest.update(rows)
        n += len(rows)
        for it in rows:  # in item id order: each group's ids in item id order
            text = normalise(it.get("input"))
            if not text:
                empty.append(finding("schema", it["item_id"], "input", "empty input"))
            groups[text].append(it["item_id"])
            for dim in counts:
                counts[dim][it.get(dim) or NONE] += 1
        quotes += quote_findings(rows)
        del rows
    if n != man.n_items:
        findings.append(
            finding(
                "schema",
                None,
                "n_items",
                f"the manifest says {man.n_items} items, the file holds {n}",
                str(d / "manifest.json"),
            )
        )
    h = digest.value()
    if h != man.content_hash:
        findings.append(
            finding(
                "schema",
                None,
                "content_hash",
                f"the manifest says {man.content_hash}, the items hash to {h}",
                str(d / "manifest.json"),
            )
        )
    findings += empty + quotes
    findings += duplicates_of(groups, threshold, notes)
    findings += quotas_of(n, counts, man.quotas)
    return n, findings, notes
