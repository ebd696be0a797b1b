"""The decision ledger: what was decided about a configuration, linked to the runs it rests on.

Lives in the state directory (``ledger.sqlite``: SQLite in WAL mode), or beside the label store on
the team PostgreSQL server of ``EVALCORE_DB`` / ``--db`` (:mod:`evalcore.storage.db`); append-only
like the label store: triggers refuse UPDATE and DELETE. An entry is an ``add`` event; ``amend`` and ``retire``
are later events on it, so the history is never rewritten. Figures are never typed: ``add``
computes them from the runs (and keeps that snapshot), and ``list`` / ``export`` recompute them from
the runs as they stand (the snapshot stands in, said so, when a run has left the data directory).

Automatic typing and flags:

* an entry whose baseline and candidate differ in judge knobs alone over identical answers is a
  **measurement correction**, whatever else it is called (a different ``--type`` is refused);
* an entry resting on one generation round is flagged ``one round``;
* a paired delta inside the noise floor is flagged ``within the noise floor``;
* a polluted or partial run is flagged (a polluted one as ``POLLUTED``), and simulated data is
  flagged as simulated;
* differing item coverage between baseline and candidate is flagged (the first rival explanation);
* a run whose judge model is a floating alias rather than a dated snapshot is flagged as the report
  card flags it (``run R: judge model 'gpt-4o' is not a dated snapshot ...``), unless the run
  records it pinned (``--judge-pinned``).

Latency per answer (mean and p95, of the system under test and of the judge) stands beside the
score in the figures, the list and the export.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from evalcore.analysis import comparison as C
from evalcore.analysis.cost import answer_latency
from evalcore.analysis.summary import judge_alias_warning
from evalcore.contract.markdown import md_text
from evalcore.errors import InputError, LabelError, NotFoundError
from evalcore.storage.db import Database, append_only_schema, connect, database_url, mask
from evalcore.storage.integrity import check_database
from evalcore.storage.paths import utcnow
from evalcore.storage.roles import acting
from evalcore.storage.state import writable_state
from evalcore.storage.store import Store

DB_NAME = "ledger.sqlite"
#: the roles that keep the ledger (the Ledger page's, app.py KEEP)
KEEPERS = ("adjudicator", "admin")
TYPES = ("accepted", "rejected", "reverted", "falsified", "measurement-correction", "possible-noise", "prediction")
TYPE_WORDS = {
    "prediction": "prediction (written before the run)",
    "accepted": "accepted",
    "rejected": "rejected",
    "reverted": "reverted",
    "falsified": "FALSIFIED",
    "measurement-correction": "measurement correction, NOT system improvement",
    "possible-noise": "possible noise",
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger_events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id TEXT NOT NULL,
    action   TEXT NOT NULL CHECK (action IN ('add', 'amend', 'retire')),
    at       TEXT NOT NULL,
    by       TEXT NOT NULL,
    payload  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_events_entry ON ledger_events (entry_id, seq);
CREATE TRIGGER IF NOT EXISTS ledger_no_update BEFORE UPDATE ON ledger_events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: amend or retire an entry instead'); END;
CREATE TRIGGER IF NOT EXISTS ledger_no_delete BEFORE DELETE ON ledger_events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: retire an entry instead'); END;
"""
_DDL, _OBJECTS = append_only_schema(
    _SCHEMA, {"ledger_events": "the ledger is append-only: amend or retire an entry instead"}
)


def normalise_type(t: str | None) -> str | None:
    if t is None:
        return None
    key = "-".join(str(t).strip().lower().replace("_", " ").split())
    if key not in TYPES:
        raise InputError(f"unknown type {t!r}; one of {', '.join(TYPES)}", field="--type")
    return key


class Ledger:
    """The ledger of one state directory, or of the PostgreSQL database of ``url`` (default: the
    Store's ``--db``, else ``EVALCORE_DB``)."""

    def __init__(self, store: Store, url: str | None = None):
        self.store = store
        self.path = writable_state(store, DB_NAME)
        self.url = database_url(store, url)
        self.where = mask(self.url) if self.url else str(self.path)  # for messages

    def _con(self, create: bool = True) -> Database:
        con = connect(self.url or self.path, lock="ledger", create=create)
        try:
            con.ensure(_DDL[con.dialect], _OBJECTS[con.dialect])
        except BaseException:
            con.close()
            raise
        return con

    # ---- reading

    def events(self) -> list[dict[str, Any]]:
        if self.url is None and not check_database(self.path):
            return []
        con = self._con(create=False)
        try:
            rows = con.execute(
                "SELECT seq, entry_id, action, at, by, payload FROM ledger_events ORDER BY seq"
            ).fetchall()
        finally:
            con.close()
        return [
            {
                "seq": r["seq"],
                "entry_id": r["entry_id"],
                "action": r["action"],
                "at": r["at"],
                "by": r["by"],
                "payload": json.loads(r["payload"]),
            }
            for r in rows
        ]

    def entries(self, *, live: bool = True, include_retired: bool = True) -> list[dict[str, Any]]:
        """Current entries, folded from their events; with ``live`` the figures are recomputed from
        the runs."""
        out: dict[str, dict[str, Any]] = {}
        for e in self.events():
            p = e["payload"]
            if e["action"] == "add":
                out[e["entry_id"]] = {
                    **p,
                    "entry_id": e["entry_id"],
                    "added_at": e["at"],
                    "added_by": e["by"],
                    "status": "active",
                    "history": [],
                }
            ent = out.get(e["entry_id"])
            if ent is None:  # pragma: no cover - an amend without an add cannot be written
                continue
            if e["action"] == "amend":  # a prediction's check also brings its runs and figures
                for k in ("title", "type", "note", *CHECKED):
                    if p.get(k) is not None:
                        ent[k] = p[k]
            if e["action"] == "retire":
                ent["status"] = "retired"
                ent["retired_reason"] = p.get("reason", "")
            ent["history"].append({"seq": e["seq"], "action": e["action"], "at": e["at"], "by": e["by"], **p})
        entries = [v for v in out.values() if include_retired or v["status"] == "active"]
        if live:
            for ent in entries:
                ent["figures_now"], ent["figures_source"] = self._live(ent)
        for ent in entries:
            if ent.get("prediction"):
                ent["outcome"] = outcome(ent["prediction"], ent.get("figures_now") or ent["figures"], ent)
        return entries

    def get(self, entry_id: str) -> dict[str, Any]:
        for ent in self.entries(live=False):
            if ent["entry_id"] == entry_id:
                return ent
        raise NotFoundError(f"no ledger entry {entry_id!r} in {self.where}", field="entry id")

    def _live(self, ent: dict[str, Any]) -> tuple[dict[str, Any], str]:
        try:
            return figures(
                self.store, ent["baseline"], ent["candidate"], ent["runs"], ent["metric"], ent.get("seed", 0)
            ), "runs"
        except NotFoundError:
            return ent["figures"], "snapshot (a run it rests on is no longer in the data directory)"

    # ---- writing

    def add(
        self,
        *,
        title: str,
        by: str,
        type_: str | None = None,
        baseline: str | None = None,
        candidate: str | None = None,
        runs: list[str] | tuple[str, ...] = (),
        note: str = "",
        metric: str = "all_pass",
        seed: int = 0,
        claims: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Add an entry; its figures are computed from the runs (never typed). Whoever adds it holds
        the adjudicator or admin role now (:func:`~evalcore.storage.roles.acting`)."""
        title = (title or "").strip()
        by = (by or "").strip()
        if not title:
            raise InputError("an entry needs a title", field="--title")
        if not by and claims is None:
            raise LabelError("who decided is required", field="--by")
        by = acting(self.store.state, *KEEPERS, name=by, claims=claims).name
        if (baseline is None) != (candidate is None):
            raise InputError("give both --baseline and --candidate, or neither (then --run)", field="--baseline")
        if baseline is None and not runs:
            raise InputError("an entry rests on runs: give --baseline and --candidate, or --run", field="--run")
        for opt, rid in [("--baseline", baseline), ("--candidate", candidate)] + [("--run", r) for r in runs]:
            if rid is not None:
                if rid not in self.store.ids("run"):
                    raise NotFoundError(f"no run {rid!r} in {self.store.data}", field=opt)
                self.store.run(rid)
        t = normalise_type(type_)
        if t == "prediction":
            raise InputError("a prediction is written before its run: evalcore ledger predict", field="--type")
        fig = figures(self.store, baseline, candidate, list(runs), metric, seed)
        if fig.get("measurement_change"):
            if t not in (None, "measurement-correction"):
                raise InputError(
                    f"{baseline} -> {candidate} changes the judge alone over identical answers: it is a "
                    f"measurement correction, not {t!r}",
                    field="--type",
                )
            t = "measurement-correction"
        if t is None:
            raise InputError(f"give the decision: one of {', '.join(TYPES)}", field="--type")
        payload = {
            "title": title,
            "type": t,
            "note": note,
            "baseline": baseline,
            "candidate": candidate,
            "runs": list(runs),
            "metric": metric,
            "seed": seed,
            "figures": fig,
            "flags": fig["flags"],
            "type_automatic": bool(fig.get("measurement_change")),
        }
        entry_id = self._insert(None, "add", by, payload)
        return {**payload, "entry_id": entry_id, "added_by": by, "status": "active"}

    def _insert(self, entry_id: str | None, action: str, by: str, payload: dict[str, Any]) -> str:
        """Append one event in its own immediate transaction; a new entry (``entry_id`` None) takes
        the next id inside it, so concurrent writers never share one."""
        con = self._con()
        try:
            con.begin()
            if entry_id is None:
                n = con.execute("SELECT count(*) FROM ledger_events WHERE action = 'add'").fetchone()[0]
                entry_id = f"L{n + 1}"
            con.execute(
                "INSERT INTO ledger_events (entry_id, action, at, by, payload) VALUES (?, ?, ?, ?, ?)",
                (entry_id, action, utcnow().isoformat(), by, json.dumps(payload, default=str)),
            )
            con.commit()
        except BaseException:
            con.rollback()
            raise
        finally:
            con.close()
        return entry_id

    def _append(
        self, entry_id: str, action: str, by: str, payload: dict[str, Any], claims: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        by = (by or "").strip()
        if not by and claims is None:
            raise LabelError("who is required", field="--by")
        by = acting(self.store.state, *KEEPERS, name=by, claims=claims).name
        ent = self.get(entry_id)
        if ent["status"] == "retired":
            raise InputError(f"entry {entry_id} is retired", field="entry id")
        self._insert(entry_id, action, by, payload)
        return self.get(entry_id)

    def amend(
        self,
        entry_id: str,
        *,
        by: str,
        title: str | None = None,
        type_: str | None = None,
        note: str | None = None,
        claims: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        t = normalise_type(type_)
        ent = self.get(entry_id)
        if t is not None and ent.get("type_automatic") and t != "measurement-correction":
            raise InputError(
                f"entry {entry_id} changes the judge alone over identical answers: it stays a measurement correction",
                field="--type",
            )
        if t == "prediction" and not ent.get("prediction"):
            raise InputError("a prediction is written before its run: evalcore ledger predict", field="--type")
        if title is not None and not title.strip():
            raise InputError("a title cannot be empty", field="--title")
        if title is None and t is None and note is None:
            raise InputError("nothing to amend: give --title, --type or --note", field="--title")
        return self._append(entry_id, "amend", by, {"title": title, "type": t, "note": note}, claims)

    def retire(self, entry_id: str, *, by: str, reason: str, claims: Mapping[str, Any] | None = None) -> dict[str, Any]:
        if not (reason or "").strip():
            raise InputError("say why the entry is retired", field="--reason")
        return self._append(entry_id, "retire", by, {"reason": reason.strip()}, claims)

    # ---- predictions (issue 44): the expected outcome written before the run, checked when it comes

    def predict(
        self, *, title: str, metric: str, expect: str, by: str, note: str = "", claims: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Write what a run should show before it exists: ``expect`` is ``'<op> <value>'`` on the
        metric's mean (one run) or on the paired delta (a baseline and a candidate), checked by
        :meth:`check`. An entry of type ``prediction`` with no runs yet."""
        title, by = (title or "").strip(), (by or "").strip()
        if not title:
            raise InputError("a prediction needs a title", field="--title")
        if not by and claims is None:
            raise LabelError("who predicts is required", field="--by")
        pred = parse_expect(expect)
        by = acting(self.store.state, *KEEPERS, name=by, claims=claims).name
        payload: dict[str, Any] = {
            "title": title, "type": "prediction", "note": note, "baseline": None, "candidate": None, "runs": [],
            "metric": metric, "seed": 0, "figures": {"metric": metric, "flags": []}, "flags": [],
            "type_automatic": False, "prediction": pred,
        }  # fmt: skip
        entry_id = self._insert(None, "add", by, payload)
        return {**payload, "entry_id": entry_id, "added_by": by, "status": "active"}

    def check(
        self,
        entry_id: str,
        *,
        by: str,
        run: str | None = None,
        baseline: str | None = None,
        candidate: str | None = None,
        claims: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Check a prediction against the run(s) that came: its figures are computed from them and
        the entry becomes ``falsified`` when the figure misses the expectation (it stays a
        prediction when it holds). Appended as an amend event: the prediction is never rewritten."""
        ent = self.get(entry_id)
        if not ent.get("prediction"):
            raise InputError(f"entry {entry_id} is not a prediction (evalcore ledger predict)", field="entry id")
        if ent.get("checked_at"):
            raise InputError(f"prediction {entry_id} was checked on {ent['checked_at'][:10]}", field="entry id")
        if (run is None) == (baseline is None and candidate is None) or (baseline is None) != (candidate is None):
            raise InputError("check a prediction against --run, or against --baseline and --candidate", field="--run")
        for opt, rid in (("--run", run), ("--baseline", baseline), ("--candidate", candidate)):
            if rid is not None and rid not in self.store.ids("run"):
                raise NotFoundError(f"no run {rid!r} in {self.store.data}", field=opt)
        runs = [run] if run else []
        fig = figures(self.store, baseline, candidate, runs, ent["metric"], ent.get("seed", 0))
        out = outcome(ent["prediction"], fig, {"baseline": baseline, "runs": runs})
        added = datetime.fromisoformat(ent["added_at"])
        after = [r for r in (run, baseline, candidate) if r and self.store.run(r).manifest.created_at < added]
        payload = {
            "title": None, "type": "falsified" if out["state"] == "falsified" else None, "note": None,
            "baseline": baseline, "candidate": candidate, "runs": runs, "figures": fig, "flags": fig["flags"],
            "checked_at": utcnow().isoformat(), "written_after": after,
        }  # fmt: skip
        return self._append(entry_id, "amend", by, payload, claims)


def figures(
    store: Store, baseline: str | None, candidate: str | None, runs: list[str], metric: str, seed: int = 0
) -> dict[str, Any]:
    """The figures an entry rests on, from the runs: a comparison for a baseline and a candidate,
    each run's per-round headline otherwise; with the automatic flags."""
    flags: list[str] = []
    out: dict[str, Any] = {"metric": metric}
    rounds: list[int] = []
    simulated = False
    all_runs = [r for r in (baseline, candidate) if r] + list(runs)
    for rid in all_runs:
        m = store.run(rid).manifest
        g = store.generation(m.gen_id).manifest
        rounds.append(g.rounds)
        simulated = simulated or m.simulated or g.simulated
        if m.status != "complete":
            flags.append(f"{rid} is {'POLLUTED' if m.status == 'polluted' else m.status}")
        if g.status == "polluted":
            flags.append(f"generation {m.gen_id} of {rid} is POLLUTED")
        if w := judge_alias_warning(m):  # as the report card says it (issue 40)
            flags.append(f"run {rid}: {w}")
    out["polluted"] = [
        rid for rid in all_runs if "polluted" in (store.run(rid).manifest.status, _gen_status(store, rid))
    ]
    if baseline and candidate:
        c = C.compare(store, baseline, candidate, seed=seed, headline=metric).to_dict()
        f = c["figures"][metric]
        out.update(
            {
                "baseline": {"by_round": f["a"]["by_round"], "mean": f["a"]["mean"], "spread": f["a"]["spread"]},
                "candidate": {"by_round": f["b"]["by_round"], "mean": f["b"]["mean"], "spread": f["b"]["spread"]},
                "delta": f["delta"]["mean"],
                "ci95": f["delta"]["ci95"],
                "noise_floor": f["noise_floor"],
                "stable_wins": f["stable_wins"],
                "stable_regressions": f["stable_regressions"],
                "two_sided_bar": c["verdict"]["holds"],
                "verdict": c["verdict"]["text"],
                "kind": c["diff"]["kind"],
                "changed": c["diff"]["changed"],
                "measurement_change": c["diff"]["measurement_change"],
                "rounds_paired": c["rounds_paired"],
                "coverage": c["coverage"],
                "latency": c["latency"],
            }
        )
        out["latency_text"] = (
            _latency_text(c["latency"]["baseline"]) + " -> " + _latency_text(c["latency"]["candidate"])
        )
        if c["rounds_paired"] < 2:
            flags.append("one round")
        if f["within_noise"]:
            flags.append("within the noise floor")
        if c["rivals"]:
            flags.append("rival explanations: " + ", ".join(c["rivals"]))
    else:
        out["runs"] = {}
        for rid in runs:
            pr = C.per_round(store, rid, metrics=C.metrics_of(store, rid)).to_dict()
            if metric not in pr["figures"]:
                raise InputError(f"{metric!r} is not a figure of run {rid!r}", field="--metric")
            f = pr["figures"][metric]
            lat = answer_latency(store, rid)
            out["runs"][rid] = {"by_round": f["by_round"], "mean": f["mean"], "spread": f["spread"], "latency": lat}
        out["latency_text"] = "; ".join(_latency_text(r["latency"]) for r in out["runs"].values())
        if any(r < 2 for r in rounds):
            flags.append("one round")
    if simulated:
        flags.append("SIMULATED data")
    out["flags"] = flags
    return out


def _gen_status(store: Store, run_id: str) -> str:
    return store.generation(store.run(run_id).manifest.gen_id).manifest.status


def _latency_text(lat: dict[str, Any] | None) -> str:
    """``system mean / p95`` per answer in ms, or ``—`` when the runs do not record it."""
    sysl = (lat or {}).get("system")
    return "—" if not sysl else f"{sysl['mean_ms']:,.0f} / {sysl['p95_ms']:,.0f} ms"


def _latency_line(lat: dict[str, Any] | None) -> str:
    parts = []
    for who in ("system", "judge"):
        v = (lat or {}).get(who)
        parts.append(
            f"{who} " + ("not recorded" if not v else f"{v['mean_ms']:,.0f} ms mean, {v['p95_ms']:,.0f} ms p95")
        )
    return ", ".join(parts)


def _p(v: float | None, signed: bool = False) -> str:
    return C._pct(v, signed)


def export_markdown(entries: list[dict[str, Any]]) -> str:
    """The ledger as Markdown, figures as the runs hold them now."""
    lines = ["# Decision ledger", ""]
    if not entries:
        lines.append("No entries yet (`evalcore ledger add`).")
    for e in entries:
        f = e.get("figures_now") or e["figures"]
        head = f"## {e['entry_id']}: {md_text(e['title'])} — {TYPE_WORDS[e['type']]}"
        if f.get("polluted"):
            head += " — POLLUTED: " + md_text(", ".join(f["polluted"]))
        if e["status"] == "retired":
            head += " (retired)"
        lines += [head, ""]
        lines.append(
            f"- added {e['added_at'][:10]} by {md_text(e['added_by'])}"
            + ("; type set automatically (judge-only change over identical answers)" if e.get("type_automatic") else "")
        )
        if e["baseline"]:
            lines.append(
                f"- baseline `{e['baseline']}` -> candidate `{e['candidate']}` ({md_text(f.get('kind'))}; "
                f"changed: {md_text(', '.join(f.get('changed') or []) or 'nothing recorded')})"
            )
            lines.append(
                f"- {f['metric']}: baseline {C.rounds_text(f['baseline'])}; candidate {C.rounds_text(f['candidate'])}"
            )
            ci = f.get("ci95") or [None, None]
            lines.append(
                f"- paired delta {_p(f['delta'], True)} (95% CI {_p(ci[0], True)} to {_p(ci[1], True)}), "
                f"noise floor {_p(f['noise_floor'])}, stable wins {f['stable_wins']}, stable regressions "
                f"{f['stable_regressions']}"
            )
            cov = f.get("coverage")
            if cov and cov.get("differs"):
                lines.append(f"- {md_text(cov['note'])}")
            if f.get("latency"):
                lines.append(
                    f"- latency per answer: baseline {_latency_line(f['latency']['baseline'])}; candidate "
                    f"{_latency_line(f['latency']['candidate'])}"
                )
            lines.append(f"- {md_text(f['verdict'])}")
        for rid, rf in (f.get("runs") or {}).items():
            lines.append(f"- `{rid}` {f['metric']}: {C.rounds_text(rf)}")
            if rf.get("latency"):
                lines.append(f"  - latency per answer: {_latency_line(rf['latency'])}")
        if e.get("runs") and e["baseline"]:
            lines.append("- also rests on: " + ", ".join(f"`{r}`" for r in e["runs"]))
        if e.get("outcome"):
            lines.append(f"- {md_text(e['outcome']['text'])}")
        flags = f.get("flags") or []
        if flags:
            lines.append("- flags: " + md_text("; ".join(flags)))
        if e.get("figures_source", "runs") != "runs":
            lines.append(f"- figures: {md_text(e['figures_source'])}")
        if e.get("note"):
            lines.append(f"- note: {md_text(e['note'])}")
        for h in e["history"][1:]:
            what = (
                f"retired: {h.get('reason')}"
                if h["action"] == "retire"
                else "amended " + ", ".join(f"{k}={h[k]!r}" for k in ("title", "type", "note") if h.get(k) is not None)
            )
            if h.get("checked_at"):  # a prediction's check
                what = "checked against " + " -> ".join(x for x in (h.get("baseline"), h.get("candidate")) if x)
                what += ", ".join(h.get("runs") or [])
            lines.append(f"- {h['at'][:10]} {md_text(h['by'])}: {md_text(what)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


#: what a prediction's check adds to the entry (an amend event's keys besides title, type and note)
CHECKED = ("baseline", "candidate", "runs", "figures", "flags", "checked_at", "written_after")
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def parse_expect(text: str) -> dict[str, Any]:
    """``'<op> <value>'`` (``>= 0.8``, ``< 75%``, ``> -2%``): the op, the value as a proportion and the text."""
    parts = (text or "").split()
    op, raw = (parts[0], "".join(parts[1:])) if parts and parts[0] in _OPS else ("", "")
    pct = raw.endswith("%")
    try:
        value = float(raw[:-1] if pct else raw) / (100 if pct else 1)
    except ValueError:
        raise InputError(
            f"{text!r} is not '<op> <value>' with op one of {', '.join(_OPS)} (e.g. '>= 0.80', '< 75%')",
            field="--expect",
        ) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(f"{text!r}: the value must be a finite number", field="--expect")
    return {"op": op, "value": value, "text": f"{op} {raw}"}


def outcome(pred: dict[str, Any], fig: dict[str, Any], ent: Mapping[str, Any]) -> dict[str, Any]:
    """A prediction against the figures: ``pending`` (no run yet), ``held`` or ``falsified``, with
    the expected and the observed number (the metric's mean of one run, or the paired delta)."""
    what = "paired delta" if ent.get("baseline") else "mean"
    observed: float | None = None
    if ent.get("baseline"):
        observed = fig.get("delta")
    elif ent.get("runs"):
        observed = ((fig.get("runs") or {}).get(ent["runs"][0]) or {}).get("mean")
    metric = fig.get("metric", "")
    if observed is None:
        state = "pending"
        text = f"predicted {metric} {pred['text']}; " + ("no figure yet" if ent.get("runs") else "no run yet")
    else:
        state = "held" if _OPS[pred["op"]](observed, pred["value"]) else "falsified"
        seen = f"{100 * observed:+.1f} pts" if what == "paired delta" else f"{100 * observed:.1f}%"
        seen = seen if pred["text"].endswith("%") else f"{observed:.4g}"
        text = f"predicted {metric} {what} {pred['text']}; observed {seen}: " + (
            "held" if state == "held" else "FALSIFIED"
        )
    if ent.get("written_after"):
        text += f" (written after {', '.join(ent['written_after'])} was made: not a prediction of it)"
    return {"state": state, "expected": pred["text"], "observed": observed, "of": what, "text": text}
