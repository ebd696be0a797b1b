"""`pairs make` over K >= 2 arms (issue 43): the balanced schedule of evalcore.pairwise.schedule.

* The schedule over many K, budgets and item counts: every unordered pair of arms within one of
  the others, every item exactly its budget of distinct arm pairs, arms within one (even K) or
  two (odd K), and each arm pair's sides exactly balanced.
* Three- and five-arm sessions made end to end: the same counts read back from key.parquet and
  pairs.parquet, mirrors swapping their original's arms; no arm name and no generation id in the
  data directory, the state directory or the command's output; the identifiability check recorded
  per arm pair (a long-answering arm told apart from the two others, those two not), warning by
  --arm position.
* Two arms exactly as before: the plan's pairs, key and record for fixed seeds hash to what
  commit 604a443's sessions.py (before K arms) wrote; tests/golden/cli pins the command's output.
* Refusals: one arm, a repeated arm (by name or by source), a budget past K(K-1)/2.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_pairs import all_text_under, assert_no_arm_name, make_world

from evalcore import pairwise as P
from evalcore.cli import main
from evalcore.cli._common import cli
from evalcore.errors import InputError
from evalcore.pairwise import schedule
from evalcore.pairwise.sessions import arm_identifiability

LONG, PLAIN = (260, 0.9, 0.7), (120, 0.2, 0.2)


def _names(k: int, seed: int) -> tuple[str, ...]:
    rng = np.random.default_rng([seed, 43])
    return tuple(str(uuid.UUID(int=int(rng.integers(2**63)) << 64 | int(rng.integers(2**63)))) for _ in range(k))


def _make(root: Path, k: int, *, per_item: int, n_items: int = 24, styles=None, seed: int = 1, **kw) -> dict:
    names = _names(k, seed)
    w = make_world(root, names, n_items=n_items, seed=seed, styles=styles or (PLAIN,) * k)
    specs = [f"{a}={g}" for a, g in zip(names, w["gens"])]
    kw = {"mirror": 0.2, "holdout": 2, "seed": seed, "n_perm": 0, **kw}
    w["summary"] = P.make_session(w["store"], "sess", specs, keys_dir=w["keys"], pairs_per_item=per_item, **kw)
    w["key"] = {r["pair_id"]: r for r in pq.read_table(w["keys"] / "sess" / "key.parquet").to_pylist()}
    w["pairs"] = P.load_pairs(w["store"], "sess")
    w["record"] = json.loads((w["keys"] / "sess" / "blinding.json").read_text())
    return w


def _spread(counts) -> int:
    return max(counts) - min(counts)


# --------------------------------------------------------------------------- the schedule alone


def test_the_schedule_balances_arm_pairs_items_arms_and_sides():
    for k in range(2, 9):
        for per_item in sorted({1, min(2, schedule.n_arm_pairs(k)), schedule.n_arm_pairs(k)}):
            for n in (1, 5, 23):
                rng = np.random.default_rng([k, per_item, n])
                slots = schedule.assign(rng, n, k, per_item)
                by_pair = Counter((i, j) for _, i, j in slots)
                assert _spread([by_pair[(i, j)] for i in range(k) for j in range(i + 1, k)]) <= 1, (k, per_item, n)
                arms = Counter(a for _, i, j in slots for a in (i, j))
                assert _spread([arms[a] for a in range(k)]) <= (1 if k % 2 == 0 else 2), (k, per_item, n)
                for item in range(n):
                    mine = [(i, j) for t, i, j in slots if t == item]
                    assert len(mine) == len(set(mine)) == per_item
                sides = schedule.draw_sides(rng, slots)
                for pair, m in by_pair.items():
                    first_left = sum(sides[s] for s, (_, i, j) in enumerate(slots) if (i, j) == pair)
                    assert abs(first_left - m / 2) <= 0.5
    with pytest.raises(ValueError, match="between 1 and 3"):
        schedule.assign(np.random.default_rng(0), 4, 3, 4)


def test_the_schedule_is_random_over_items():
    """Which items get which arm pair varies with the generator: item 0 does not always get one pair."""
    firsts = {tuple(schedule.assign(np.random.default_rng(s), 6, 5, 1)[0][1:]) for s in range(40)}
    assert len(firsts) > 5


# --------------------------------------------------------------------------- sessions of three and five arms


@pytest.mark.parametrize(("k", "per_item"), [(3, 1), (3, 2), (5, 1), (5, 3)])
def test_k_arm_sessions_are_balanced(tmp_path, k, per_item):
    w = _make(tmp_path, k, per_item=per_item)
    names, key, pairs = w["arms"], w["key"], w["pairs"]
    orig = [p for p in pairs if not p["mirror_of"]]
    assert len(orig) == 24 * per_item == w["summary"]["original_pairs"]
    assert Counter(p["item_id"] for p in orig) == dict.fromkeys((it["item_id"] for it in w["items"]), per_item)
    pos = {a: n for n, a in enumerate(names)}
    arm_pair = {
        p["pair_id"]: tuple(sorted((key[p["pair_id"]]["left_arm"], key[p["pair_id"]]["right_arm"]), key=pos.get))
        for p in pairs
    }
    for item in {p["item_id"] for p in orig}:
        mine = [arm_pair[p["pair_id"]] for p in orig if p["item_id"] == item]
        assert len(set(mine)) == len(mine)  # an item shows an arm pair once
    counts = Counter(arm_pair[p["pair_id"]] for p in orig)
    assert len(counts) == k * (k - 1) // 2 and _spread(counts.values()) <= 1
    for pair, m in counts.items():
        first_left = sum(key[p["pair_id"]]["left_arm"] == pair[0] for p in orig if arm_pair[p["pair_id"]] == pair)
        assert abs(first_left - m / 2) <= 0.5, pair
    assert w["record"]["schedule"] == [
        {
            "arms": list(pair),
            "pairs": counts[pair],
            "first_left": sum(key[p["pair_id"]]["left_arm"] == pair[0] for p in orig if arm_pair[p["pair_id"]] == pair),
        }
        for pair in sorted(counts, key=lambda pr: (pos[pr[0]], pos[pr[1]]))
    ]
    for p in pairs:  # a mirror swaps its original's arms; holdouts are originals
        if p["mirror_of"]:
            o, m = key[p["mirror_of"]], key[p["pair_id"]]
            assert (m["left_arm"], m["right_arm"]) == (o["right_arm"], o["left_arm"]) and not p["holdout"]
    assert sum(p["holdout"] for p in pairs) == 2 and len(pairs) - len(orig) == round(0.2 * len(orig))
    km = json.loads((w["keys"] / "sess" / "key.json").read_text())
    assert km["arms"] == dict(zip(names, w["gens"]))
    s = w["summary"]
    assert (s["arms"], s["items"], s["pairs_per_item"]) == (k, 24, per_item)
    levels = {c["after"]["level"] for c in w["record"]["identifiability"]["by_arm_pair"]}
    assert len(levels) == 1 and levels.pop() == pytest.approx(1 - 0.05 / len(counts))  # Bonferroni
    assert set(s["missing"]) == {f"{o}_arm" for o in ("first", "second", "third", "fourth", "fifth")[:k]}


def test_no_arm_name_nor_generation_id_in_the_data_dir_of_three_arms(tmp_path):
    names = _names(3, 5)
    w = make_world(tmp_path, names, n_items=12, seed=5, styles=(PLAIN,) * 3)
    res = CliRunner().invoke(
        cli,
        [
            "--data",
            str(w["data"]),
            "--state",
            str(w["state"]),
            "pairs",
            "make",
            "--session",
            "s3",
            *[x for a, g in zip(names, w["gens"]) for x in ("--arm", f"{a}={g}")],
            "--keys",
            str(w["keys"]),
            "--pairs-per-item",
            "3",
            "--mirror",
            "0.1",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    assert s["pairs"] == 36 + 4 and s["identifiability"]["by_arm_pair"][0]["arms"] == [1, 2]
    pid = P.load_pairs(w["store"], "s3")[0]["pair_id"]
    res2 = CliRunner().invoke(
        cli,
        [
            "--data",
            str(w["data"]),
            "--state",
            str(w["state"]),
            "pairs",
            "label",
            "--session",
            "s3",
            "--pair",
            pid,
            "--reviewer",
            "ann",
            "--choice",
            "left",
        ],
    )
    assert res2.exit_code == 0, res2.output
    assert_no_arm_name([("make", res.output), ("label", res2.output)], names)
    assert_no_arm_name(all_text_under(w["data"]) + all_text_under(w["state"]), names)
    # the generations themselves are in the data directory; nothing the session wrote names one
    assert_no_arm_name(all_text_under(w["data"] / "sessions") + all_text_under(w["state"]), w["gens"])
    key_text = b" ".join(b for _, b in all_text_under(w["keys"]))
    assert all(a.lower().encode() in key_text and g.lower().encode() in key_text for a, g in zip(names, w["gens"]))


def test_identifiability_is_checked_and_recorded_per_arm_pair(tmp_path):
    """The first arm answers long with headings, the other two alike: the two arm pairs with the
    first are told apart (by length), the third is not; blinding.json has each, named."""
    w = _make(tmp_path, 3, per_item=3, n_items=30, styles=(LONG, PLAIN, PLAIN), n_perm=19, mirror=0.0, holdout=0)
    names, rec = w["arms"], w["record"]["identifiability"]
    by = {tuple(c["arms"]): c for c in rec["by_arm_pair"]}
    assert set(by) == {(names[0], names[1]), (names[0], names[2]), (names[1], names[2])}
    for pair, c in by.items():
        assert c["pairs"] == c["after"]["n_pairs"] == c["before"]["n_pairs"] == 30
        assert c["after"]["level"] == c["before"]["level"] == pytest.approx(1 - 0.05 / 3)  # Bonferroni, 3 pairs
        assert set(c["after"]["feature_means"]) == set(pair)
        assert bool(c["after"]["identifiable"]) == (names[0] in pair), pair
    assert by[(names[0], names[1])]["after"]["leaking_feature"] == "length"
    assert rec["most_identifiable"][0] == names[0] and rec["after"] == by[tuple(rec["most_identifiable"])]["after"]
    # the recorded check is the check of that arm pair's pairs as shown, sides from the key
    mine = sorted(
        (
            p
            for p in w["pairs"]
            if {w["key"][p["pair_id"]]["left_arm"], w["key"][p["pair_id"]]["right_arm"]} == {names[1], names[2]}
        ),
        key=lambda p: p["item_id"],
    )
    fl = [w["key"][p["pair_id"]]["left_arm"] == names[1] for p in mine]
    texts = [(p["left_text"], p["right_text"])[:: 1 if f else -1] for p, f in zip(mine, fl)]
    again = arm_identifiability(texts, np.array(fl), names[1:], seed=1, n_perm=19, level=1 - (1 - 0.95) / 3)
    assert json.dumps(again, sort_keys=True) == json.dumps(by[(names[1], names[2])]["after"], sort_keys=True)
    # the output names arm pairs by --arm position, never by name
    s = w["summary"]
    assert [c["arms"] for c in s["identifiability"]["by_arm_pair"]] == [[1, 2], [1, 3], [2, 3]]
    assert s["identifiability"]["most_identifiable"][0] == 1
    told = [x for x in s["warnings"] if "can be told apart" in x]
    assert len(told) == 2 and all("length" in x for x in told)
    assert any(x.startswith("the first and second --arm can be told apart") for x in told)
    assert any(x.startswith("the first and third --arm can be told apart") for x in told)
    assert_no_arm_name([("summary", json.dumps(s))], names)


# --------------------------------------------------------------------------- two arms as before


def test_two_arms_are_planned_exactly_as_before_k_arms(tmp_path):
    """The digests were printed by commit 604a443's evalcore/pairwise/sessions.py (two arms only)
    for this world and these seeds; the K-arm code must give the same pairs, key and record."""
    w = make_world(tmp_path, ("alpha", "beta"), n_items=20, seed=2, missing=2)
    arms = [P.load_arm(w["store"], n, g) for n, g in zip(w["arms"], w["gens"])]
    want = {
        False: "dc6bb5e3cb9e72affa7c382c9cbbff1128bb8e0c8aa1a2c0cbef79716c72ca00",
        True: "7258da9ba8143987f0c4db6429dba5e00c6146ce918ea9fd5a726f15d9f2c2e0",
    }
    for length_match, digest in want.items():
        plan = P.plan_session(
            "sx",
            arms,
            seed=7,
            key_seed=8,
            mirror=0.25,
            holdout=2,
            n_perm=0,
            length_match=length_match,
            created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
        )
        rec = {k: v for k, v in plan.blinding.items() if k != "identifiability"}
        blob = json.dumps({"pairs": plan.pairs, "key": plan.key_rows, "blinding": rec}, sort_keys=True, default=str)
        assert hashlib.sha256(blob.encode()).hexdigest() == digest, length_match
        assert set(plan.blinding["identifiability"]) == {"before", "after"}
        assert "arms" not in plan.summary and set(plan.summary["missing"]) == {"first_arm", "second_arm"}


# --------------------------------------------------------------------------- refusals


def test_one_arm_a_repeated_arm_and_too_many_pairs_per_item_are_refused(tmp_path, capsys):
    names = ("alpha", "bravo", "charlie")
    w = make_world(tmp_path, names, n_items=8, styles=(PLAIN,) * 3)
    st, (g0, g1, g2) = w["store"], w["gens"]
    cases = [
        ([f"alpha={g0}"], {}, "give two --arm NAME=GEN_OR_FILE or more, got 1"),
        ([f"alpha={g0}", f"bravo={g1}", f"alpha={g2}"], {}, "two arms are called 'alpha': give each arm once"),
        ([f"alpha={g0}", f"bravo={g1}", f"charlie={g1}"], {}, "arms 'bravo' and 'charlie' are the same answers"),
        (
            [f"alpha={g0}", f"bravo={g1}", f"charlie={g2}"],
            {"pairs_per_item": 4},
            "--pairs-per-item 4 is not between 1 and 3",
        ),
        ([f"alpha={g0}", f"bravo={g1}"], {"pairs_per_item": 2}, "--pairs-per-item 2 is not between 1 and 1"),
        (
            [f"alpha={g0}", f"bravo={g1}", f"charlie={g2}"],
            {"pairs_per_item": 2, "holdout": 16},
            "--holdout 16 must leave at least one of the 16 pairs",
        ),
    ]
    for specs, kw, msg in cases:
        with pytest.raises(InputError) as e:
            P.make_session(st, "s1", specs, keys_dir=w["keys"], n_perm=0, **kw)
        assert msg in str(e.value), (specs, str(e.value))
    assert not (w["data"] / "sessions").exists() and not w["keys"].exists()  # nothing written
    capsys.readouterr()
    with pytest.raises(SystemExit) as ex:
        main(
            [
                "--data",
                str(w["data"]),
                "--state",
                str(w["state"]),
                "pairs",
                "make",
                "--session",
                "s1",
                "--arm",
                f"alpha={g0}",
                "--keys",
                str(w["keys"]),
            ]
        )
    out = capsys.readouterr()
    assert ex.value.code == 2 and out.out == "", out
    assert out.err == "error: --arm: give two --arm NAME=GEN_OR_FILE or more, got 1\n"
    assert not (w["data"] / "sessions").exists() and not w["keys"].exists()
