"""Blinded pairwise sessions (evalcore.pairwise.sessions) end to end, without the app.

* Property tests over random sessions whose arm names are random UUIDs: the sides are balanced
  and independent of item order; no arm name reaches the data directory, the state directory or
  the command output while a session is open; pair ids carry no information about the sides;
  blind -> grade -> unblind gives the counts of a simulator that knows which arm is where.
* On the bundled demo: the report names the heading as the leak before normalisation and length
  after it; a negative control with identically distributed arms contains 50%; the model grader's
  flips and first-position preference are those the demo planted.
* The gates: no result while open, close needs the key, a closed session takes no judgment.

``make_world`` and ``random_session`` are shared with tests/test_pairs_page.py and
tests/test_browser_pairs.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from scipy import stats

from evalcore import contract as S
from evalcore import demo as D
from evalcore import pairwise as P
from evalcore.cli._common import cli
from evalcore.errors import FormatError, InputError, NotFoundError, PathEscapeError
from evalcore.storage.store import Store

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "data" / "demo"
DEMO_KEYS = REPO / "data" / "demo-keys"
EVALCORE = str(Path(sys.executable).with_name("evalcore"))
WORDS = ("account settings page email password member invite billing export link code sign secure team "
         "plan change confirm open choose save remove device app web").split()
CLASSES = ("billing", "access", "data")


# --------------------------------------------------------------------------- worlds


def _text(rng: np.random.Generator, words: float, heading: float, bullets: float) -> str:
    n = max(6, int(rng.normal(words, 25)))
    body = [str(rng.choice(WORDS)) for _ in range(n)]
    sentences = [" ".join(body[i:i + 8]).capitalize() + "." for i in range(0, n, 8)]
    lines = []
    if rng.random() < heading:
        lines += ["## " + " ".join(rng.choice(WORDS, 2)).title(), ""]
    if rng.random() < bullets:
        lines += [f"- {s}" for s in sentences[:3]] + [""] + [" ".join(sentences[3:])]
    else:
        lines.append(" ".join(sentences))
    return "\n".join(lines).strip()


def make_world(root: Path, arm_names: tuple[str, str], *, n_items: int = 40, seed: int = 0,
               styles=((120, 0.5, 0.4), (120, 0.5, 0.4)), missing: int = 0, hostile: str | None = None,
               tag: str | None = None) -> dict:
    """A data directory with one suite and one generation per arm (ids that do not contain the
    arm names); ``styles`` give (mean words, heading share, bullet share) per arm. ``missing``
    items have no answer in the second arm; ``tag`` opens every answer of the second arm."""
    rng = np.random.default_rng(seed)
    data = root / "data"
    store = Store(data.mkdir(parents=True, exist_ok=True) or data, root / "state")
    items = [{"item_id": f"it-{k:03d}", "input": f"Question {k}: how do I change my {rng.choice(WORDS)}?"
              + (f" {hostile}" if hostile and k == 0 else ""),
              "class": CLASSES[k % len(CLASSES)], "holdout": False} for k in range(n_items)]
    sm = S.SuiteManifest(suite_id="s-pw", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items),
                         n_items=n_items, simulated=True)
    store.write_suite(sm, items)
    gens = []
    for a, (words, heading, bullets) in enumerate(styles):
        gid = f"g{a}-{uuid.UUID(int=int(rng.integers(2 ** 63))).hex[-10:]}"
        outs = []
        for k, it in enumerate(items):
            if a == 1 and k < missing:
                continue
            text = _text(rng, words, heading, bullets)
            if hostile and k == 0:
                text = hostile + "\n" + text
            if tag and a == 1:
                text = f"{tag} {text}"
            outs.append({"item_id": it["item_id"], "round": 1, "output": text})
        gm = S.GenerationManifest(gen_id=gid, suite_id="s-pw", suite_hash=sm.content_hash,
                                  created_at="2026-01-01T00:00:00Z", source="simulated",
                                  outputs_hash=S.outputs_hash(outs), simulated=True)
        store.write_generation(gm, outs)
        gens.append(gid)
    return {"data": data, "state": root / "state", "keys": root / "keys", "gens": gens, "arms": arm_names,
            "items": items, "store": store}


def random_session(root: Path, seed: int, *, n_items: int | None = None, mirror: float = 0.2, holdout: int = 3,
                   n_perm: int = 0, **kw) -> dict:
    """A world with random-UUID arm names and a session made from it."""
    rng = np.random.default_rng([seed, 77])
    arms = (str(uuid.UUID(int=int(rng.integers(2 ** 63)) << 64 | int(rng.integers(2 ** 63)))),
            str(uuid.UUID(int=int(rng.integers(2 ** 63)) << 64 | int(rng.integers(2 ** 63)))))
    n = n_items or int(rng.integers(12, 50))
    w = make_world(root, arms, n_items=n, seed=seed, **kw)
    w["summary"] = P.make_session(w["store"], "sess", [f"{arms[0]}={w['gens'][0]}", f"{arms[1]}={w['gens'][1]}"],
                                  keys_dir=w["keys"], mirror=mirror, holdout=min(holdout, n - 1), seed=seed,
                                  key_seed=seed + 7919, n_perm=n_perm)  # fixed sides: the statistical
    # checks below then hold or fail the same way in every run (a drawn key_seed made them ~5% flaky)
    w["session"] = "sess"
    return w


def key_rows(w: dict) -> list[dict]:
    return pq.read_table(w["keys"] / w["session"] / "key.parquet").to_pylist()


def all_text_under(root: Path) -> list[tuple[Path, bytes]]:
    """Every file's bytes under root, and for Parquet files also every value as text."""
    out = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        raw = p.read_bytes()
        out.append((p, raw.lower()))
        if p.suffix == ".parquet":
            t = pq.read_table(p)
            out.append((p, " ".join(str(x) for c in t.columns for x in c.to_pylist()).lower().encode()))
    return out


def assert_no_arm_name(texts, arms) -> None:
    for where, blob in texts:
        blob = blob if isinstance(blob, bytes) else str(blob).lower().encode()
        for a in arms:
            assert a.lower().encode() not in blob, (where, a)
            assert a.replace("-", "").lower().encode() not in blob, (where, a)  # nor its hex without dashes


# --------------------------------------------------------------------------- properties over random sessions

SEEDS = list(range(16))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> list[dict]:
    return [random_session(tmp_path_factory.mktemp(f"rs{s}"), s) for s in SEEDS]


def test_sides_are_balanced_and_independent_of_item_order(sessions):
    first_left, ranks = [], []
    for w in sessions:
        pairs = {p["pair_id"]: p for p in P.load_pairs(w["store"], w["session"])}
        key = {k["pair_id"]: k for k in key_rows(w)}
        orig = sorted((p for p in pairs.values() if not p["mirror_of"]), key=lambda p: p["item_id"])
        fl = [key[p["pair_id"]]["left_arm"] == w["arms"][0] for p in orig]
        assert abs(sum(fl) - len(fl) / 2) <= 0.5  # exactly balanced within a session
        first_left += fl
        ranks += list(np.linspace(0, 1, len(fl)))
        for p in pairs.values():  # a mirror swaps the arms of its original
            if p["mirror_of"]:
                o = key[p["mirror_of"]]
                assert (key[p["pair_id"]]["left_arm"], key[p["pair_id"]]["right_arm"]) == (o["right_arm"], o["left_arm"])
    fl = np.array(first_left)
    assert stats.binomtest(int(fl.sum()), len(fl), 0.5).pvalue > 0.05
    # independent of item order: no correlation with the item's rank, halves alike
    r = stats.pearsonr(np.array(ranks), fl.astype(float))
    assert r.pvalue > 0.01, r
    early, late = fl[np.array(ranks) < 0.5], fl[np.array(ranks) >= 0.5]
    table = [[early.sum(), (~early).sum()], [late.sum(), (~late).sum()]]
    assert stats.chi2_contingency(table).pvalue > 0.01


def test_no_arm_name_in_the_data_the_state_or_the_output_while_open(sessions, tmp_path):
    for w in sessions[:4]:
        arms = w["arms"]
        # the command output of make (a fresh session) and label
        w2 = make_world(tmp_path / w["gens"][0], arms, n_items=10, seed=1)
        res = CliRunner().invoke(cli, ["--data", str(w2["data"]), "--state", str(w2["state"]), "pairs", "make",
                                       "--session", "s2", "--arm", f"{arms[0]}={w2['gens'][0]}",
                                       "--arm", f"{arms[1]}={w2['gens'][1]}", "--keys", str(w2["keys"]), "--json"])
        assert res.exit_code == 0, res.output
        pid = P.load_pairs(w2["store"], "s2")[0]["pair_id"]
        res2 = CliRunner().invoke(cli, ["--data", str(w2["data"]), "--state", str(w2["state"]), "pairs", "label",
                                        "--session", "s2", "--pair", pid, "--reviewer", "ann", "--choice", "left"])
        assert res2.exit_code == 0, res2.output
        assert_no_arm_name([("make", res.output), ("label", res2.output)], arms)
        # data and state hold no arm name; the key does
        P.record_judgment(w["store"], w["session"], P.load_pairs(w["store"], w["session"])[0]["pair_id"], "ann", "same")
        assert_no_arm_name(all_text_under(w["data"]) + all_text_under(w["state"]), arms)
        key_text = b" ".join(b for _, b in all_text_under(w["keys"]))
        assert all(a.lower().encode() in key_text for a in arms)
        # the session manifest says open and nothing about arms
        m = json.loads((w["data"] / "sessions" / w["session"] / "session.json").read_text())
        # (instructions and created_by are written only when the maker gives them)
        assert m["status"] == "open" and set(m) == set(S.SessionManifest.model_fields) - {"instructions", "created_by"}


def test_pair_ids_carry_no_information(sessions, tmp_path):
    pat = re.compile(r"^p-[0-9abcdefghjkmnpqrstvwxyz]{12}$")
    ranks, sides = [], []
    for w in sessions:
        key = {k["pair_id"]: k for k in key_rows(w)}
        pairs = P.load_pairs(w["store"], w["session"])
        assert all(pat.match(p["pair_id"]) for p in pairs)
        assert [p["pair_id"] for p in pairs] == sorted(p["pair_id"] for p in pairs)  # row order = id order
        orig = [p for p in pairs if not p["mirror_of"]]
        ids = sorted(p["pair_id"] for p in orig)
        ranks += [ids.index(p["pair_id"]) / max(1, len(ids) - 1) for p in orig]
        sides += [key[p["pair_id"]]["left_arm"] == w["arms"][0] for p in orig]
    assert stats.pearsonr(ranks, np.array(sides, float)).pvalue > 0.01
    # by construction: the same public seed with another secret key seed gives the same ids, rows
    # and texts-as-a-set, and other sides
    w = make_world(tmp_path / "k", ("arm-a-x", "arm-b-y"), n_items=30, seed=5)
    arms = [P.load_arm(w["store"], n, g) for n, g in zip(w["arms"], w["gens"])]
    one = P.plan_session("sx", arms, seed=42, key_seed=1, mirror=0.2, holdout=2, n_perm=0)
    two = P.plan_session("sx", arms, seed=42, key_seed=2, mirror=0.2, holdout=2, n_perm=0)
    assert [p["pair_id"] for p in one.pairs] == [p["pair_id"] for p in two.pairs]
    assert [(p["item_id"], p["mirror_of"], p["holdout"]) for p in one.pairs] == \
           [(p["item_id"], p["mirror_of"], p["holdout"]) for p in two.pairs]
    assert [k["left_arm"] for k in one.key_rows] != [k["left_arm"] for k in two.key_rows]
    assert one.manifest.settings.seed == 42 and "key_seed" not in one.manifest.model_dump_json()


def _simulate_and_grade(w: dict, seed: int) -> dict:
    """Reviewers who know nothing but the texts' true arms (the simulator's truth) choose; the
    simulator tallies wins per arm itself; returns its tallies by subset."""
    rng = np.random.default_rng([seed, 9])
    key = {k["pair_id"]: k for k in key_rows(w)}
    pairs = P.load_pairs(w["store"], w["session"])
    cls = {it["item_id"]: it["class"] for it in w["items"]}
    a0, a1 = w["arms"]
    pref0 = {it["item_id"]: float(rng.uniform(0.1, 0.9)) for it in w["items"]}
    tally: dict[str, dict] = {}

    def add(subset, arm_won):
        t = tally.setdefault(subset, {a0: [0, 0, 0], a1: [0, 0, 0]})  # wins, losses, ties
        if arm_won is None:
            t[a0][2] += 1
            t[a1][2] += 1
        else:
            other = a1 if arm_won == a0 else a0
            t[arm_won][0] += 1
            t[other][1] += 1

    for p in pairs:
        k = key[p["pair_id"]]
        for reviewer in ("r1", "r2", "r3"):
            if rng.random() < 0.3:
                continue
            u = rng.random()
            won = None if u < 0.1 else (a0 if u < 0.1 + 0.9 * pref0[p["item_id"]] else a1)
            choice = "same" if won is None else ("left" if k["left_arm"] == won else "right")
            P.record_judgment(w["store"], w["session"], p["pair_id"], reviewer, choice, seconds=3.0)
            if p["mirror_of"]:
                continue
            add("holdout" if p["holdout"] else "headline", won)
            if not p["holdout"]:
                add(cls[p["item_id"]], won)
    return tally


def test_unblinded_counts_equal_the_simulator_that_knows_the_truth(sessions):
    for i, w in enumerate(sessions[8:14]):
        tally = _simulate_and_grade(w, i)
        with pytest.raises(P.SessionOpenError, match="is open"):
            P.report(w["store"], w["session"])
        P.close_session(w["store"], w["session"], w["keys"], n_perm=9)
        r = P.report(w["store"], w["session"])
        assert r.arms == list(w["arms"])

        def counts(res):
            return {a: [res.counts[a].wins, res.counts[a].losses, res.counts[a].ties] for a in w["arms"]}

        empty = {a: [0, 0, 0] for a in w["arms"]}
        assert counts(r.result) == tally.get("headline", empty)
        assert counts(r.holdout) == tally.get("holdout", empty)
        for c, x in r.by_class.items():
            assert counts(x) == tally.get(c, empty), c
        a0 = w["arms"][0]
        t = tally["headline"][a0]
        assert r.result.judgments == sum(t)


# --------------------------------------------------------------------------- make: inputs and refusals


def test_make_refuses_what_would_break_the_blinding(tmp_path):
    w = make_world(tmp_path, ("alpha", "beta"), n_items=12)
    st, g0, g1 = w["store"], *w["gens"]
    arms = [f"alpha={g0}", f"beta={g1}"]
    with pytest.raises(PathEscapeError, match="inside the data"):
        P.make_session(st, "s1", arms, keys_dir=w["data"] / "keys")
    with pytest.raises(PathEscapeError, match="inside the state"):
        P.make_session(st, "s1", arms, keys_dir=w["state"] / "keys")
    with pytest.raises(InputError, match="names one of the arms"):
        P.make_session(st, "alpha-vs-x", arms, keys_dir=w["keys"])
    with pytest.raises(InputError, match="both arms"):
        P.make_session(st, "s1", [f"alpha={g0}", f"alpha={g1}"], keys_dir=w["keys"])
    with pytest.raises(NotFoundError, match="neither a generation"):
        P.make_session(st, "s1", [f"alpha={g0}", "beta=/no/such/file.csv"], keys_dir=w["keys"])
    with pytest.raises(InputError, match="NAME="):
        P.make_session(st, "s1", [f"alpha={g0}", "beta"], keys_dir=w["keys"])
    assert not (w["data"] / "sessions").exists() and not w["keys"].exists()  # nothing written
    s = P.make_session(st, "s1", arms, keys_dir=w["keys"], n_perm=9)
    assert s["pairs"] == 12 and (w["keys"] / "s1" / "blinding.json").is_file()
    with pytest.raises(InputError, match="already exists"):
        P.make_session(st, "s1", arms, keys_dir=w["keys"], n_perm=9)


def test_missing_items_are_reported_and_files_can_be_arms(tmp_path):
    w = make_world(tmp_path, ("alpha", "beta"), n_items=15, missing=4)
    f = tmp_path / "beta.jsonl"
    rows = pq.read_table(w["data"] / "generations" / w["gens"][1] / "outputs.parquet").to_pylist()
    f.write_text("\n".join(json.dumps({"item_id": r["item_id"], "output": r["output"]}) for r in rows[:-1]) + "\n")
    s = P.make_session(w["store"], "s1", [f"alpha={w['gens'][0]}", f"beta={f}"], keys_dir=w["keys"], n_perm=9)
    assert s["original_pairs"] == 10 and s["missing"] == {"first_arm": 0, "second_arm": 5}
    assert any("second --arm has no usable answer for 5 item(s) (it-000, it-001, it-002, it-003, it-014)" in x
               for x in s["warnings"])
    assert not any("first --arm" in x for x in s["warnings"])
    km = json.loads((w["keys"] / "s1" / "key.json").read_text())
    assert km["arms"] == {"alpha": w["gens"][0], "beta": str(f.resolve())}
    rec = json.loads((w["keys"] / "s1" / "blinding.json").read_text())
    assert rec["missing"]["alpha"] == [] and len(rec["missing"]["beta"]) == 5


def test_make_through_the_command_line(tmp_path):
    w = make_world(tmp_path, ("alpha", "beta"), n_items=20, styles=((260, 0.9, 0.7), (120, 0.2, 0.2)))
    out = subprocess.run([EVALCORE, "--data", str(w["data"]), "--state", str(w["state"]), "pairs", "make",
                          "--session", "cli-s", "--arm", f"alpha={w['gens'][0]}", "--arm", f"beta={w['gens'][1]}",
                          "--keys", str(w["keys"]), "--mirror", "0.1", "--holdout", "2", "--seed", "3"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "WARNING: the arms can be told apart" in out.stdout and "leaking feature is length" in out.stdout
    assert "consider --length-match" in out.stdout
    assert_no_arm_name([("stdout", out.stdout), ("stderr", out.stderr)], ("alpha", "beta"))
    m = json.loads((w["data"] / "sessions" / "cli-s" / "session.json").read_text())
    assert m["settings"] == {"normalise": ["headings", "bullets", "blank-lines"], "length_match": False,
                             "mirror_fraction": 0.1, "holdout": 2, "seed": 3}
    assert m["n_pairs"] == 22 and m["status"] == "open" and m["source"] == "made"
    # a report while open is one line and exit 2
    rep = subprocess.run([EVALCORE, "--data", str(w["data"]), "--state", str(w["state"]), "pairs", "report",
                          "--session", "cli-s"], capture_output=True, text=True)
    assert rep.returncode == 2 and rep.stdout == "" and "is open" in rep.stderr and len(rep.stderr.splitlines()) == 1
    # length matching removes the length tell
    res = CliRunner().invoke(cli, ["--data", str(w["data"]), "--state", str(w["state"]), "pairs", "make",
                                   "--session", "cli-m", "--arm", f"alpha={w['gens'][0]}", "--arm",
                                   f"beta={w['gens'][1]}", "--keys", str(w["keys"]), "--length-match", "--json"])
    s = json.loads(res.output)
    assert s["identifiability"]["after"]["leaking_feature"] != "length"
    assert s["identifiability"]["before"]["identifiable"]


# --------------------------------------------------------------------------- grading, close, gates


def test_judgments_append_latest_wins_and_closed_takes_none(tmp_path):
    w = random_session(tmp_path, 101, n_items=12, mirror=0.0, holdout=0)
    st, sid = w["store"], w["session"]
    pid = P.load_pairs(st, sid)[0]["pair_id"]
    P.record_judgment(st, sid, pid, "ann", "left", 4.0)
    P.record_judgment(st, sid, pid, " ann ", "right", 2.5)  # the same reviewer, re-graded
    js = P.JudgmentStore(st)
    assert [j["choice"] for j in js.history(sid)] == ["left", "right"]
    assert [(j["reviewer"], j["choice"]) for j in js.current(sid)] == [("ann", "right")]
    prog = P.progress(st, sid, "ann")
    assert prog.graded == 1 and prog.next_pair != pid and prog.total == 12
    with pytest.raises(InputError, match="not one of"):
        P.record_judgment(st, sid, pid, "ann", "both")
    with pytest.raises(NotFoundError, match="no pair"):
        P.record_judgment(st, sid, "p-000000000000", "ann", "left")
    with pytest.raises(InputError, match="reviewer name"):
        P.record_judgment(st, sid, pid, "  ", "left")
    import sqlite3
    con = sqlite3.connect(js.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM judgments")
    con.close()
    # close: needs the right key; then no more judgments, and a second close is refused
    with pytest.raises(NotFoundError, match="no key"):
        P.close_session(st, sid, tmp_path / "elsewhere")
    P.close_session(st, sid, w["keys"], n_perm=9)
    assert P.session_status(st, sid).status == "closed"
    with pytest.raises(InputError, match="closed"):
        P.record_judgment(st, sid, pid, "bob", "left")
    with pytest.raises(InputError, match="already closed"):
        P.close_session(st, sid, w["keys"])
    assert json.loads((w["data"] / "sessions" / sid / "session.json").read_text())["status"] == "open"  # data untouched


def test_close_refuses_a_key_that_does_not_fit(tmp_path):
    w = random_session(tmp_path, 102, n_items=10, mirror=0.2, holdout=0)
    kp = w["keys"] / w["session"] / "key.parquet"
    rows = pq.read_table(kp).to_pylist()
    from evalcore.storage.files import write_parquet
    write_parquet(kp, rows[1:], "key")
    with pytest.raises(FormatError, match="has no row for pair"):
        P.close_session(w["store"], w["session"], w["keys"])
    rows[0]["right_arm"] = rows[0]["left_arm"]
    write_parquet(kp, rows, "key")
    with pytest.raises(FormatError, match="not one of each arm"):
        P.close_session(w["store"], w["session"], w["keys"])
    assert P.session_status(w["store"], w["session"]).status == "open"


def test_concurrent_reviewers_lose_no_judgment(tmp_path):
    w = random_session(tmp_path, 103, n_items=25, mirror=0.0, holdout=0)
    pids = [p["pair_id"] for p in P.load_pairs(w["store"], w["session"])]
    errors = []

    def grade(r):
        try:
            for pid in pids:
                P.record_judgment(w["store"], w["session"], pid, f"r{r}", "same")
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=grade, args=(r,)) for r in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert len(P.JudgmentStore(w["store"]).current(w["session"])) == 4 * len(pids)


def test_probe_measures_whether_people_could_tell(tmp_path):
    w = random_session(tmp_path, 104, n_items=16, mirror=0.0, holdout=0)
    st, sid = w["store"], w["session"]
    key = {k["pair_id"]: k for k in key_rows(w)}
    prog = P.progress(st, sid, "sharp")
    assert len(prog.probe_pairs) == P.PROBE_PAIRS
    for pid in prog.probe_pairs:  # "sharp" always calls the second arm X; "blind" guesses left
        P.record_probe(st, sid, pid, "sharp", "left" if key[pid]["left_arm"] == w["arms"][1] else "right")
        P.record_probe(st, sid, pid, "blind", "left")
    P.record_probe(st, sid, prog.probe_pairs[0], "unsure-one", "unsure")
    P.close_session(st, sid, w["keys"], n_perm=9)
    r = P.report(st, sid).probe
    assert r["sharp"].first_arm_share == 0.0 and r["sharp"].consistency == 1.0
    assert r["sharp"].p_value < 0.01
    left_first = sum(key[pid]["left_arm"] == w["arms"][0] for pid in prog.probe_pairs) / P.PROBE_PAIRS
    assert r["blind"].first_arm_share == left_first and r["blind"].p_value > 0.05  # sides drawn at random
    assert r["unsure-one"].to_dict() == {"answered": 0, "first_arm_share": None, "consistency": None,
                                         "p_value": None, "unsure": 1}


# --------------------------------------------------------------------------- statistics by hand


def test_cohen_kappa_by_hand():
    # 10 units: agree on 7 (4 left, 3 right); marginals A: 5 L, 4 R, 1 S; B: 5 L, 3 R, 2 S
    a = ["left"] * 4 + ["right"] * 3 + ["left", "right", "same"]
    b = ["left"] * 4 + ["right"] * 3 + ["same", "same", "left"]
    po, pe = 0.7, 0.5 * 0.5 + 0.4 * 0.3 + 0.1 * 0.2
    assert P.cohen_kappa(a, b).kappa == pytest.approx((po - pe) / (1 - pe))
    assert P.cohen_kappa(["left"] * 3, ["left"] * 3).kappa is None


def test_krippendorff_alpha_by_hand():
    # two raters, 4 units: (L,L) (L,R) (R,R) (S,S): o = L-L 2, L-R 1, R-L 1, R-R 2, S-S 2
    # n_L = 3, n_R = 3, n_S = 2, n = 8; alpha = 1 - 7 * 2 / (2 * (3*3 + 3*2 + 3*2)) = 1 - 14 / 42
    r = P.krippendorff_alpha_nominal([["left", "left"], ["left", "right"], ["right", "right"], ["same", "same"]])
    assert r.alpha == pytest.approx(1 - 14 / 42)
    assert P.krippendorff_alpha_nominal([["left"], ["left", "left"]]).alpha is None


def test_win_stats_sign_test_and_bootstrap():
    r = P.win_stats([1, 1, 1, 0, 0.5, 1], seed=1)
    assert r.win_rate == pytest.approx(4.5 / 6)
    assert r.sign_test.to_dict() == {"a_pairs": 4, "b_pairs": 1, "tied_pairs": 1,
                                     "p_value": pytest.approx(stats.binomtest(4, 5).pvalue)}
    assert r.interval[0] <= r.win_rate <= r.interval[1]
    assert r == P.win_stats([1, 1, 1, 0, 0.5, 1], seed=1)


# --------------------------------------------------------------------------- the demo


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> P.Report:
    if not (DEMO_KEYS / "accounts-ab").is_dir():
        pytest.fail(f"the bundled demo keys are missing: {DEMO_KEYS} (make demo)")
    state = tmp_path_factory.mktemp("demo-state")
    store = Store(DEMO, state)
    with pytest.raises(P.SessionOpenError, match="not unblinded"):
        P.report(store, "accounts-ab")
    P.close_session(store, "accounts-ab", DEMO_KEYS)
    return P.report(store, "accounts-ab")


def test_demo_report_names_the_marker_word_and_what_normalisation_removes(demo_report):
    """The detailed arm's "If something goes wrong" sub-heading survives normalisation as words: the
    word "wrong" (in 91 of its 120 answers, none of the concise arm's) is the leaking feature before
    and after; the heading markers tell alone before and not after; length tells alone in both."""
    ident = demo_report.identifiability
    before, after = ident["before"], ident["after"]
    for check in (before, after):
        assert check["leaking_feature"] == "marker" and check["interval"][0] > 0.5 and check["p_value"] < 0.01
        assert check["marker"] == {"kind": "word", "text": "wrong", "pairs": 91}
        assert check["features"]["length"]["interval"][0] > 0.5
        means = check["feature_means"]
        assert means["detailed"]["marker"] == 91 / 120 and means["concise"]["marker"] == 0
    assert before["features"]["headings"]["interval"][0] > 0.5
    assert after["features"]["headings"]["accuracy"] == 0.5  # the markers are gone
    assert before["accuracy"] > after["accuracy"]
    means = before["feature_means"]
    assert means["detailed"]["headings"] > means["concise"]["headings"]
    assert 60 < after["feature_means"]["detailed"]["length"] - after["feature_means"]["concise"]["length"] < 130


def test_negative_control_with_identically_distributed_arms_contains_chance(tmp_path):
    """Two rounds of the same arm are two draws from one distribution: as two 'arms' of a session
    (given as files), the check's interval contains 50%, before and after normalisation."""
    rows = pq.read_table(DEMO / "generations" / "accounts-g1" / "outputs.parquet").to_pylist()
    files = []
    for r_ in (2, 3):
        f = tmp_path / f"round{r_}.csv"
        import csv
        with f.open("w", newline="") as fh:
            wr = csv.DictWriter(fh, ["item_id", "output"])
            wr.writeheader()
            wr.writerows({"item_id": r["item_id"], "output": r["output"]} for r in rows if r["round"] == r_)
        files.append(f)
    data = tmp_path / "data"
    shutil.copytree(DEMO / "suites", data / "suites")
    store = Store(data, tmp_path / "state")
    s = P.make_session(store, "control", [f"x={files[0]}", f"y={files[1]}"], keys_dir=tmp_path / "keys", seed=5)
    for when in ("before", "after"):
        c = s["identifiability"][when]
        assert c["interval"][0] <= 0.5 <= c["interval"][1], (when, c["interval"])
        assert not c["identifiable"] and c["leaking_feature"] is None
    assert not s["warnings"]


def test_demo_grader_flips_and_first_position_are_what_was_planted(demo_report):
    (g,) = demo_report.graders
    s, b = D.GRADER_SAME, D.FIRST_BIAS_GRADER
    n = g.flips.compared
    assert n == demo_report.pairs.total
    p_flip = 1 - s * s - (1 - s) ** 2 * (1 - b)
    p_rev = (1 - s) ** 2 * b
    for got, p in ((g.flips.flips, p_flip), (g.flips.reversals, p_rev)):
        assert abs(got - n * p) <= 3 * np.sqrt(n * p * (1 - p)), (got, n * p)
    fp = g.first_position
    expected = (1 + b) / 2
    assert abs(fp.share - expected) <= 3 * np.sqrt(expected * (1 - expected) / fp.n)
    assert fp.interval[0] <= expected <= fp.interval[1]
    assert g.cost.calls == 2 * n and g.cost.cost_usd > 0 and g.cost.unpriced_calls == 0
    assert g.kappa_vs_majority.kappa is not None and g.averaged_over_orders.pairs == demo_report.pairs.headline


def test_demo_people_are_what_was_planted(demo_report):
    """The people's left preference and the arms' result match the simulator's parameters."""
    lp = demo_report.left_preference.all
    assert lp.interval[0] <= 0.5 + D.LEFT_BIAS_PEOPLE <= lp.interval[1]
    res = demo_report.result
    assert res.arm == "concise" and res.interval[1] < 0.5 + 0.05  # the long arm is preferred (p ~ 0.58)
    rows = pq.read_table(DEMO / "generations" / "accounts-g2" / "outputs.parquet").to_pylist()
    short = pq.read_table(DEMO / "generations" / "accounts-g1" / "outputs.parquet").to_pylist()
    bl = [r["abstained"] for r in sorted(rows, key=lambda r: r["item_id"]) if r["round"] == 1]
    bc = [r["abstained"] for r in sorted(short, key=lambda r: r["item_id"]) if r["round"] == 1]
    planted = 1 - float(np.mean(D.accounts_preference(D.DEFAULT_SEED, bl, bc)))
    assert res.interval[0] <= planted <= res.interval[1]


def test_report_command_prints_the_demo_report(tmp_path):
    out = subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(tmp_path), "pairs", "close", "--session",
                          "accounts-ab", "--keys", str(DEMO_KEYS)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "closed accounts-ab: 132 pairs" in out.stdout
    base = ["--data", str(DEMO), "--state", str(tmp_path), "pairs", "report"]
    rep = CliRunner().invoke(cli, base + ["--session", "accounts-ab", "--json"])
    assert rep.exit_code == 0, rep.output
    r = json.loads(rep.output)
    assert r["identifiability"]["after"]["leaking_feature"] == "marker" and r["arms"] == ["concise", "detailed"]
    text = CliRunner().invoke(cli, base + ["--session", "accounts-ab"]).output
    assert text.splitlines()[2].startswith("verdict: Not blind: ") and "order flips" in text
    assert 'leaking feature: the word "wrong" (a marker: in one answer of 91 of 120 pairs)' in text
    # the open practice session: refused, with the command to run
    rep = CliRunner().invoke(cli, base + ["--session", "accounts-practice"])
    assert isinstance(rep.exception, P.SessionOpenError) and "pairs close --session accounts-practice" in str(
        rep.exception)


def test_demo_grader_position_bias_in_one_place(demo_report):
    """Flips by direction add up to the flips and reversals; the planted first-position bias shows
    as flips towards the first shown; per-order accuracy against people's majority, recomputed from
    the grader's verdicts and the people's judgments."""
    (g,) = demo_report.graders
    po, f = g.position, g.flips
    pf = po.flips
    assert pf.compared == f.compared
    assert pf.towards_first_shown + pf.towards_second_shown == f.reversals
    assert pf.towards_first_shown + pf.towards_second_shown + pf.to_or_from_a_tie == f.flips
    assert pf.towards_first_shown > pf.towards_second_shown  # D.FIRST_BIAS_GRADER > 0
    assert po.agreement_between_orders.k == f.compared - f.flips
    shares = [po.orders[o].vs_people.share for o in ("as_shown", "swapped")]
    assert po.mean_accuracy_over_orders == pytest.approx(sum(shares) / 2)
    assert all(0 < s < 1 for s in shares)
    assert all(po.orders[o].verdicts == f.compared for o in ("as_shown", "swapped"))
