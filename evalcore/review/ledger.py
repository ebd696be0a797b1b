"""The decision ledger: what was decided about a configuration, linked to the runs it rests on.

Lives in the state directory (``ledger.sqlite``: SQLite in WAL mode, append-only like the label
store: triggers refuse UPDATE and DELETE). An entry is an ``add`` event; ``amend`` and ``retire``
are later events on it, so the history is never rewritten. Figures are never typed: ``add``
computes them from the runs (and keeps that snapshot), and ``list`` / ``export`` recompute them from
the runs as they stand (the snapshot stands in, said so, when a run has left the data directory).

Automatic typing and flags:

* an entry whose baseline and candidate differ in judge knobs alone over identical answers is a
  **measurement correction**, whatever else it is called (a different ``--type`` is refused);
* an entry resting on one generation round is flagged ``one round``;
* a paired delta inside the noise floor is flagged ``within the noise floor``;
* a polluted or partial run is flagged, and simulated data is flagged as simulated.
"""

from __future__ import annotations

import json
from typing import Any

from evalcore.analysis import comparison as C
from evalcore.errors import InputError, LabelError, NotFoundError
from evalcore.storage.paths import utcnow
from evalcore.storage.state import open_state_db, writable_state
from evalcore.storage.store import Store

DB_NAME = "ledger.sqlite"
TYPES = ("accepted", "rejected", "reverted", "falsified", "measurement-correction", "possible-noise")
TYPE_WORDS = {
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


def normalise_type(t: str | None) -> str | None:
    if t is None:
        return None
    key = "-".join(str(t).strip().lower().replace("_", " ").split())
    if key not in TYPES:
        raise InputError(f"unknown type {t!r}; one of {', '.join(TYPES)}", field="--type")
    return key


class Ledger:
    """The ledger of one state directory."""

    def __init__(self, store: Store):
        self.store = store
        self.path = writable_state(store, DB_NAME)

    def _con(self, create: bool = True):
        con = open_state_db(self.path, create=create)
        con.executescript(_SCHEMA)
        return con

    # ---- reading

    def events(self) -> list[dict[str, Any]]:
        if not self.path.exists():
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
            if e["action"] == "amend":
                for k in ("title", "type", "note"):
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
        return entries

    def get(self, entry_id: str) -> dict[str, Any]:
        for ent in self.entries(live=False):
            if ent["entry_id"] == entry_id:
                return ent
        raise NotFoundError(f"no ledger entry {entry_id!r} in {self.path}", field="entry id")

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
    ) -> dict[str, Any]:
        """Add an entry; its figures are computed from the runs (never typed)."""
        title = (title or "").strip()
        by = (by or "").strip()
        if not title:
            raise InputError("an entry needs a title", field="--title")
        if not by:
            raise LabelError("who decided is required", field="--by")
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
            con.execute("BEGIN IMMEDIATE")
            if entry_id is None:
                n = con.execute("SELECT count(*) FROM ledger_events WHERE action = 'add'").fetchone()[0]
                entry_id = f"L{n + 1}"
            con.execute(
                "INSERT INTO ledger_events (entry_id, action, at, by, payload) VALUES (?, ?, ?, ?, ?)",
                (entry_id, action, utcnow().isoformat(), by, json.dumps(payload, default=str)),
            )
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()
        return entry_id

    def _append(self, entry_id: str, action: str, by: str, payload: dict[str, Any]) -> dict[str, Any]:
        by = (by or "").strip()
        if not by:
            raise LabelError("who is required", field="--by")
        ent = self.get(entry_id)
        if ent["status"] == "retired":
            raise InputError(f"entry {entry_id} is retired", field="entry id")
        self._insert(entry_id, action, by, payload)
        return self.get(entry_id)

    def amend(
        self, entry_id: str, *, by: str, title: str | None = None, type_: str | None = None, note: str | None = None
    ) -> dict[str, Any]:
        t = normalise_type(type_)
        ent = self.get(entry_id)
        if t is not None and ent.get("type_automatic") and t != "measurement-correction":
            raise InputError(
                f"entry {entry_id} changes the judge alone over identical answers: it stays a measurement correction",
                field="--type",
            )
        if title is not None and not title.strip():
            raise InputError("a title cannot be empty", field="--title")
        if title is None and t is None and note is None:
            raise InputError("nothing to amend: give --title, --type or --note", field="--title")
        return self._append(entry_id, "amend", by, {"title": title, "type": t, "note": note})

    def retire(self, entry_id: str, *, by: str, reason: str) -> dict[str, Any]:
        if not (reason or "").strip():
            raise InputError("say why the entry is retired", field="--reason")
        return self._append(entry_id, "retire", by, {"reason": reason.strip()})


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
            flags.append(f"{rid} is {m.status}")
    if baseline and candidate:
        c = C.compare(store, baseline, candidate, seed=seed, headline=metric)
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
            }
        )
        if c["rounds_paired"] < 2:
            flags.append("one round")
        if f["within_noise"]:
            flags.append("within the noise floor")
        if c["diff"]["rivals"]:
            flags.append("rival explanations: " + ", ".join(c["diff"]["rivals"]))
    else:
        out["runs"] = {}
        for rid in runs:
            pr = C.per_round(store, rid, metrics=C.metrics_of(store, rid))
            if metric not in pr["figures"]:
                raise InputError(f"{metric!r} is not a figure of run {rid!r}", field="--metric")
            f = pr["figures"][metric]
            out["runs"][rid] = {"by_round": f["by_round"], "mean": f["mean"], "spread": f["spread"]}
        if any(r < 2 for r in rounds):
            flags.append("one round")
    if simulated:
        flags.append("SIMULATED data")
    out["flags"] = flags
    return out


def _p(v: float | None, signed: bool = False) -> str:
    return C._pct(v, signed)


def _rounds(f: dict[str, Any]) -> str:
    return C.rounds_text(f)


def export_markdown(entries: list[dict[str, Any]]) -> str:
    """The ledger as Markdown, figures as the runs hold them now."""
    lines = ["# Decision ledger", ""]
    if not entries:
        lines.append("No entries yet (`evalcore ledger add`).")
    for e in entries:
        f = e.get("figures_now") or e["figures"]
        head = f"## {e['entry_id']}: {e['title']} — {TYPE_WORDS[e['type']]}"
        if e["status"] == "retired":
            head += " (retired)"
        lines += [head, ""]
        lines.append(
            f"- added {e['added_at'][:10]} by {e['added_by']}"
            + ("; type set automatically (judge-only change over identical answers)" if e.get("type_automatic") else "")
        )
        if e["baseline"]:
            lines.append(
                f"- baseline `{e['baseline']}` -> candidate `{e['candidate']}` ({f.get('kind')}; "
                f"changed: {', '.join(f.get('changed') or []) or 'nothing recorded'})"
            )
            lines.append(f"- {f['metric']}: baseline {_rounds(f['baseline'])}; candidate {_rounds(f['candidate'])}")
            ci = f.get("ci95") or [None, None]
            lines.append(
                f"- paired delta {_p(f['delta'], True)} (95% CI {_p(ci[0], True)} to {_p(ci[1], True)}), "
                f"noise floor {_p(f['noise_floor'])}, stable wins {f['stable_wins']}, stable regressions "
                f"{f['stable_regressions']}"
            )
            lines.append(f"- {f['verdict']}")
        for rid, rf in (f.get("runs") or {}).items():
            lines.append(f"- `{rid}` {f['metric']}: {_rounds(rf)}")
        if e.get("runs") and e["baseline"]:
            lines.append("- also rests on: " + ", ".join(f"`{r}`" for r in e["runs"]))
        flags = f.get("flags") or []
        if flags:
            lines.append("- flags: " + "; ".join(flags))
        if e.get("figures_source", "runs") != "runs":
            lines.append(f"- figures: {e['figures_source']}")
        if e.get("note"):
            lines.append(f"- note: {e['note']}")
        for h in e["history"][1:]:
            what = (
                f"retired: {h.get('reason')}"
                if h["action"] == "retire"
                else "amended " + ", ".join(f"{k}={h[k]!r}" for k in ("title", "type", "note") if h.get(k) is not None)
            )
            lines.append(f"- {h['at'][:10]} {h['by']}: {what}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
