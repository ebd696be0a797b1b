"""People's labels on a generation, column by column (:func:`people`), the gold they give
(:func:`gold_of`) and the agreement between them on one criterion (:func:`rater_stats`), for the
report card (:mod:`evalcore.review.reportcard`, whose docstring defines gold and raters).

The shipped label sets are read in one DuckDB query: the slice, each label's category
(:func:`label_category`, worked out once per distinct criterion, value and pass flag) and the codes
of the cases, units and raters are computed there; the reviewers' standing decisions (the label
store's, a few per case) join them as parameters. The gold and the agreement are then counted with
numpy over those codes, never a Python loop per label (36,000 shipped labels at the 18M benchmark:
docs/BENCHMARKS.md, session 17).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result
from evalcore.review.judges import scale_of
from evalcore.stats import agreement as A
from evalcore.stats.association import Stat
from evalcore.storage.labels import LabelStore

if TYPE_CHECKING:
    from evalcore.storage.store import Store

SLOT_RE = re.compile(r"^slot\d+$")
MEAN = "mean"


def label_category(crit: S.Criterion | None, value: Any, passed: Any) -> str | None:
    """A person's label (label store value or shipped row) as a category of :func:`scale_of`."""
    cats, _, _ = scale_of(crit)
    if cats == ["fail", "pass"]:
        if passed is None:
            return None
        return "pass" if passed else "fail"
    if value is None:
        return None
    v = str(value).strip().lower()
    if cats[0] == "wrong":
        return v if v in cats else None
    try:
        v = str(int(round(float(v))))
    except ValueError:
        return None
    return v if v in cats else None


def is_slot(rater: str) -> bool:
    """Whether an annotator id names a rater slot rather than a fixed person (``slot1``, ...)."""
    return bool(SLOT_RE.match(rater))


_CODED = ("rater", "source", "item", "criterion", "value")  # columns held as codes into ``names``


@dataclass(frozen=True)
class People:
    """Every person's label on a generation as a category, one array per column: the reviewers'
    (source ``state``, in the order of their edits) first, then each shipped label set's
    (``shipped:<id>``, in its file's order). ``rater``, ``source``, ``item``, ``criterion`` and
    ``value`` (the category) are codes into ``names[column]``; ``gen_round`` is the round."""

    rater: np.ndarray
    source: np.ndarray
    item: np.ndarray
    gen_round: np.ndarray
    criterion: np.ndarray
    value: np.ndarray
    names: dict[str, tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.rater)

    def where(self, keep: np.ndarray) -> People:
        cols = {c: getattr(self, c)[keep] for c in (*_CODED, "gen_round")}
        return People(**cols, names=self.names)

    def of(self, criterion: str) -> People:
        """The labels on one criterion."""
        names = self.names["criterion"]
        return self.where(self.criterion == (names.index(criterion) if criterion in names else -1))

    def code(self, column: str, name: str) -> int:
        """The code of ``name`` in ``column`` (-1 when no label has it)."""
        names = self.names[column]
        return names.index(name) if name in names else -1

    def column(self, column: str) -> list[Any]:
        """A column as its values (names for the coded ones)."""
        if column == "gen_round":
            return self.gen_round.tolist()
        names = self.names[column]
        return [names[k] for k in getattr(self, column).tolist()]

    def units(self) -> np.ndarray:
        """A code per label of its (item, round), in the order of the item ids and rounds."""
        names = self.names["item"]
        rank = np.empty(len(names), dtype=np.int64)
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        return rank[self.item] * (int(self.gen_round.max(initial=0)) + 1) + self.gen_round

    def rows(self) -> list[dict[str, Any]]:
        """One dict per label: rater, source, item_id, gen_round, criterion and value."""
        keys = ("rater", "source", "item_id", "gen_round", "criterion", "value")
        cols = [self.column(c) for c in ("rater", "source", "item", "gen_round", "criterion", "value")]
        return [dict(zip(keys, r)) for r in zip(*cols)]

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]]) -> People:
        """From one dict per label (rater, item_id, gen_round, criterion, value; source, default
        ``state``), for a few labels (a pairwise session's)."""
        cols: dict[str, Any] = {}
        names: dict[str, tuple[str, ...]] = {}
        for c, key in (("rater", "rater"), ("item", "item_id"), ("criterion", "criterion"), ("value", "value")):
            vals = [r[key] for r in rows]
            names[c] = tuple(dict.fromkeys(vals))
            at = {v: k for k, v in enumerate(names[c])}
            cols[c] = np.array([at[v] for v in vals], dtype=np.int64)
        src = [r.get("source", "state") for r in rows]
        names["source"] = tuple(dict.fromkeys(src))
        cols["source"] = np.array([names["source"].index(v) for v in src], dtype=np.int64)
        return People(**cols, gen_round=np.array([int(r["gen_round"]) for r in rows], dtype=np.int64), names=names)


def _state_rows(labels: LabelStore, gen_id: str, category) -> dict[str, list]:
    """The reviewers' standing decisions as categories (adjudicators settle; they are no rater)."""
    out: dict[str, list] = {k: [] for k in ("item_id", "gen_round", "criterion", "rater", "value")}
    for e in labels.standing(gen_id):
        if e["outcome"] != "decided" or e.get("role") == "adjudicator":
            continue
        cat = category(e["criterion"], e["value"], e["passed"])
        if cat is not None:
            for k, v in (("item_id", e["item_id"]), ("gen_round", int(e["gen_round"])), ("criterion", e["criterion"])):
                out[k].append(v)
            out["rater"].append(e["reviewer"])
            out["value"].append(cat)
    return out


def labels_revision(store: Store, gen_id: str) -> tuple:
    """Changes with every edit and queue written for the generation (edits and queues are
    append-only), on SQLite and on a PostgreSQL team server alike: a cache key for what the label
    store says about it (the state directory's file times say nothing about a team server)."""
    labels = LabelStore(store)
    e = labels.rows("SELECT count(*) AS n, max(edit_id) AS last FROM edits WHERE gen_id = ?", [gen_id])
    q = labels.rows("SELECT count(*) AS n FROM queues WHERE gen_id = ?", [gen_id])
    return tuple(tuple(r.values()) for r in e + q)


def people(
    store: Store,
    gen_id: str,
    crits: dict[str, S.Criterion | None],
    cut: tuple[str, list[Any]] = ("", []),
) -> People:
    """Every person's label on the generation as a category (:class:`People`): the label store's
    standing decisions and the shipped annotators'; published means (annotator ``mean``) are kept
    with ``rater = "mean"``. ``cut``: an item condition on the generation's suite items (the
    report card's slice), keeping only their labels."""

    labels = LabelStore(store)
    memo: dict[tuple, str | None] = {}

    def category(criterion: str, value: Any, passed: Any) -> str | None:
        mk = (criterion, value, passed)
        if mk not in memo:
            c = crits.get(criterion) if criterion in crits else labels.criterion_for(gen_id, criterion)
            memo[mk] = label_category(c, value, passed)
        return memo[mk]

    state = _state_rows(labels, gen_id, category)
    sets = [
        (f"shipped:{lid}", store.path_of("labelset", lid, "labels"))
        for lid in store.ids("labelset")
        if store.labelset(lid).manifest.gen_id == gen_id
    ]
    branches: list[str] = []
    params: list[Any] = []
    if sets:
        cats: dict[str, list[Any]] = {"criterion": [], "value": [], "passed": [], "cat": []}
        for criterion, value, passed in store.sql(
            "SELECT DISTINCT criterion, value, passed FROM read_parquet(?::VARCHAR[])", [[p for _, p in sets]]
        ):
            cat = category(criterion, value, passed)
            if cat is not None:
                for k, v in zip(cats, (criterion, value, passed, cat)):
                    cats[k].append(v)
        ship = " UNION ALL ".join(
            f"SELECT {k + 1} AS part, ?::VARCHAR AS source, item_id, gen_round::BIGINT AS gen_round, criterion, "
            "annotator AS rater, value, passed, file_row_number AS ord FROM read_parquet(?, file_row_number = true)"
            for k in range(len(sets))
        )
        branches.append(
            "SELECT s.part, s.source, s.item_id, s.gen_round, s.criterion, s.rater, m.cat AS value, s.ord "
            f"FROM ({ship}) s JOIN (SELECT unnest(?::VARCHAR[]) AS criterion, unnest(?::VARCHAR[]) AS value, "
            "unnest(?::BOOLEAN[]) AS passed, unnest(?::VARCHAR[]) AS cat) m ON s.criterion = m.criterion "
            "AND s.value IS NOT DISTINCT FROM m.value AND s.passed IS NOT DISTINCT FROM m.passed"
        )
        params += [x for s in sets for x in s] + [cats[k] for k in cats]
    branches.append(
        "SELECT 0 AS part, 'state' AS source, unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion, unnest(?::VARCHAR[]) AS rater, unnest(?::VARCHAR[]) AS value, "
        "unnest(range(?::BIGINT)) AS ord"
    )
    params += [state[k] for k in ("item_id", "gen_round", "criterion", "rater", "value")] + [len(state["rater"])]
    where = ""
    if cut[0]:
        where = f"WHERE item_id IN (SELECT item_id FROM read_parquet(?) WHERE {cut[0]})"
        params += [store.path_of("suite", store.generation(gen_id).manifest.suite_id, "items"), *cut[1]]
    got = store.arrow(f"SELECT * FROM ({' UNION ALL '.join(branches)}) l {where}", params)
    order = np.lexsort((np.asarray(got["ord"]), np.asarray(got["part"])))  # state, then each set in its file's order
    cols: dict[str, Any] = {"gen_round": np.asarray(got["gen_round"], dtype=np.int64)[order]}
    names: dict[str, tuple[str, ...]] = {}
    for c, col in (
        ("rater", "rater"),
        ("source", "source"),
        ("item", "item_id"),
        ("criterion", "criterion"),
        ("value", "value"),
    ):
        enc = got[col].dictionary_encode().combine_chunks()  # (pyarrow.compute, loaded on first use)
        cols[c] = np.asarray(enc.indices, dtype=np.int64)[order]
        names[c] = tuple(enc.dictionary.to_pylist())
    return People(**cols, names=names)


@dataclass
class GoldCounts(Result):
    """The report card's cases with gold from the state and from shipped labels, split and pending."""

    state: int = 0
    shipped: int = 0
    split: int = 0
    pending: int = 0


def gold_of(
    p: People, state: list[dict[str, Any]], crits: dict[str, S.Criterion | None]
) -> tuple[dict[tuple, dict[str, Any]], GoldCounts]:
    """Gold per (item, round, criterion) as a category: the label store's gold by its stated policy
    (``state``: :func:`evalcore.storage.gold.gold` rows), else the shipped labels of ``p`` (a
    published mean's, else the annotators' strict majority: see the report card's docstring); and
    counts: cases with gold from the state, from shipped labels, ``split`` (reviewers or annotators
    disagree) and ``pending`` (fewer reviewers than the case needs)."""
    gold: dict[tuple, dict[str, Any]] = {}
    counts = GoldCounts()
    decided_here = set()
    for g in state:
        key = (g["item_id"], int(g["gen_round"]), g["criterion"])
        decided_here.add(key)
        if g["status"] == "gold":
            cat = label_category(crits.get(g["criterion"]), g["value"], g["passed"])
            if cat is not None:
                gold[key] = {"value": cat, "source": "state", "raters": g["decided"], "gold_from": g["gold_from"]}
                counts.state += 1
        elif g["status"] == "reviewers_disagree":
            counts.split += 1
        elif g["status"] == "pending":
            counts.pending += 1
    shipped = p.source != p.code("source", "state")
    if not shipped.any():
        return gold, counts
    # a code per case (item, round, criterion), and where each case's first label is
    keys, first, case = np.unique(
        p.units() * len(p.names["criterion"]) + p.criterion, return_index=True, return_inverse=True
    )
    items, crit_names = p.names["item"], p.names["criterion"]

    def key_of(at: int) -> tuple[str, int, str]:
        return items[p.item[at]], int(p.gen_round[at]), crit_names[p.criterion[at]]

    if decided_here:
        done = np.array([key_of(at) in decided_here for at in first.tolist()], dtype=bool)
        shipped &= ~done[case]
    n_case, n_val = len(keys), len(p.names["value"])
    case, val, mean = case[shipped], p.value[shipped], p.rater[shipped] == p.code("rater", MEAN)
    has_mean = np.zeros(n_case, dtype=bool)
    has_mean[case[mean]] = True
    use = mean == has_mean[case]  # a published mean stands for its case's annotators
    tally = np.bincount(case[use] * n_val + val[use], minlength=n_case * n_val).reshape(n_case, n_val)
    total, top, pick = tally.sum(axis=1), tally.max(axis=1), tally.argmax(axis=1)
    counts.split += int(np.sum((total > 0) & (2 * top <= total)))
    won = np.flatnonzero((total > 0) & (2 * top > total))
    counts.shipped = len(won)
    for at, v, n in zip(first[won].tolist(), pick[won].tolist(), total[won].tolist()):
        gold[key_of(at)] = {"value": p.names["value"][v], "source": "shipped", "raters": n, "gold_from": "shipped"}
    return gold, counts


@dataclass
class CohenPair(Result):
    """Cohen's kappa of two fixed people on the cases both labelled."""

    a: str
    b: str
    n: int
    kappa: float | None
    reason: str | None
    agreement: float | None


@dataclass
class Fleiss(Result):
    """Fleiss' kappa on the cases every rater labelled."""

    n: int
    raters: int
    kappa: float | None
    reason: str | None


@dataclass
class Krippendorff(Result):
    """Krippendorff's alpha on every case with two labels or more."""

    n: int
    level: str
    alpha: float | None
    reason: str | None


@dataclass
class RaterStats(Result):
    """:func:`rater_stats`; ``reason`` (and no Fleiss or Krippendorff) with fewer than two raters."""

    raters: list[str]
    slots: list[str]
    cohen: list[CohenPair] = field(default_factory=list)
    fleiss: Fleiss | None = None
    krippendorff: Krippendorff | None = None
    reason: str = OMIT


def rater_stats(p: People, cats: list[str], weights: A.Weights, level: A.AlphaLevel) -> RaterStats:
    """Agreement between people on one criterion (``p`` holds its labels only, :meth:`People.of`): Cohen's kappa for
    each pair of fixed people (on the cases both labelled), Fleiss' kappa on the cases every rater
    labelled, Krippendorff's alpha on every case with two labels or more: on the categories' codes,
    or at the interval and ratio levels on the scores the categories name (``"1"`` .. ``"5"``)."""
    person = p.rater != p.code("rater", MEAN)
    codes, r = np.unique(p.rater[person], return_inverse=True)
    raters = sorted(p.names["rater"][k] for k in codes.tolist())
    rank = np.array([raters.index(p.names["rater"][k]) for k in codes.tolist()], dtype=np.int64)
    r = rank[r] if len(r) else r
    out = RaterStats(raters, [x for x in raters if is_slot(x)])
    if len(raters) < 2:
        out.reason = "fewer than two raters"
        return out
    units, u = np.unique(p.units()[person], return_inverse=True)
    code = {c: k for k, c in enumerate(cats)}
    of_value = np.array([code.get(v, A.MISSING) for v in p.names["value"]], dtype=np.int64)
    mat = np.full((len(raters), len(units)), A.MISSING, dtype=np.int64)
    mat[r, u] = of_value[p.value[person]]
    fixed = [(k, x) for k, x in enumerate(raters) if not is_slot(x)]
    for i, (ka, a) in enumerate(fixed):
        for kb, b in fixed[i + 1 :]:
            x, y = mat[ka], mat[kb]
            both = (x != A.MISSING) & (y != A.MISSING)
            s = A.cohen_kappa(x[both], y[both], len(cats), weights)
            agree = float(np.mean(x[both] == y[both])) if both.any() else None
            out.cohen.append(CohenPair(a, b, int(both.sum()), s.value, s.reason, agree))
    full = np.all(mat != A.MISSING, axis=0)
    table = (
        np.stack([np.sum(mat[:, full] == k, axis=0) for k in range(len(cats))], axis=1)
        if full.any()
        else np.zeros((0, len(cats)))
    )
    f = A.fleiss_kappa(table)
    out.fleiss = Fleiss(int(full.sum()), len(raters), f.value, f.reason)
    al = _alpha(mat, cats, level)
    out.krippendorff = Krippendorff(int(np.sum(np.sum(mat != A.MISSING, axis=0) >= 2)), level, al.value, al.reason)
    return out


def _alpha(mat: np.ndarray, cats: list[str], level: A.AlphaLevel) -> Stat:
    """Krippendorff's alpha of a (raters x units) array of category codes: interval and ratio
    distances on the numbers the categories name (codes where they name none: wrong / partial /
    correct as 0 / 1 / 2, fail / pass as 0 / 1)."""
    if level not in ("interval", "ratio"):
        return A.krippendorff_alpha(mat, level, k=len(cats))
    try:
        values = np.array([float(c) for c in cats], dtype=float)
    except ValueError:
        values = np.arange(len(cats), dtype=float)
    scores = np.where(mat == A.MISSING, np.nan, values[np.clip(mat, 0, None)])
    return A.krippendorff_alpha(scores, level, codes=False)
