"""`evalcore import battles` (issue 43): the Chatbot Arena's battles table (model_a, model_b, winner,
judge) as a closed, blinded session of K arms, checked against pandas on the file.

tests/golden/import/arena/clean_battle.csv is FastChat's clean_battle shape without texts (the
"simple" release: model_a, model_b, winner, judge, turn, anony, language, tstamp): 60 battles
between 6 models, 13 ties (6 both bad), 9 voters, 5 battles not anonymous.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import REPO

ARENA = REPO / "tests" / "golden" / "import" / "arena"
CLEAN = ARENA / "clean_battle.csv"
IGNORED = "warning: ignored columns: turn, tstamp; map them with --col FIELD=COLUMN (docs/IMPORT.md lists the fields) or --strict to refuse them\n"


def _import(ev, data: Path, *args) -> dict:
    code, out, err = ev("--data", data, "--state", data.parent / "state", "import", "battles", *args, "--json")
    assert code == 0, err
    return json.loads(out) | {"stderr": err}


def _table(path: Path) -> pd.DataFrame:
    return pq.read_table(path).to_pandas()


def _per_model(battles: pd.DataFrame) -> pd.DataFrame:
    """Wins, losses and ties per model from (model_a, model_b, winner) rows, in pandas."""
    a = battles.assign(model=battles.model_a, won=battles.winner == "model_a", lost=battles.winner == "model_b")
    b = battles.assign(model=battles.model_b, won=battles.winner == "model_b", lost=battles.winner == "model_a")
    both = pd.concat([a, b]).assign(tie=lambda d: d.winner.str.startswith("tie"))
    return both.groupby("model")[["won", "lost", "tie"]].sum().astype(int).sort_index()


def test_a_battles_table_is_a_closed_session_of_six_arms(tmp_path, ev):
    data = tmp_path / "data"
    s = _import(ev, data, CLEAN, "--seed", "11")
    csv = pd.read_csv(CLEAN)
    assert s["stderr"] == IGNORED  # turn names nothing without item ids or texts; tstamp is not stored
    assert (s["battles"], s["pairs"], s["judgments"], s["arms"]) == (len(csv), len(csv), len(csv), 6)
    assert (
        s["ties"] == csv.winner.str.startswith("tie").sum()
        and s["ties_bothbad"] == (csv.winner == "tie (bothbad)").sum()
    )
    assert s["not_anonymous"] == (~csv.anony).sum() and s["texts"] is None
    assert s["reviewers"] == sorted(csv.judge.unique())  # arena_user_N as written
    session = json.loads((data / "sessions" / s["session_id"] / "session.json").read_text())
    assert (session["status"], session["source"], session["n_pairs"], session["settings"]["seed"]) == (
        "closed",
        "imported",
        len(csv),
        11,
    )
    keys = Path(s["keys"])
    assert set(json.loads((keys / "key.json").read_text())["arms"]) == set(csv.model_a) | set(csv.model_b)
    pairs = _table(data / "sessions" / s["session_id"] / "pairs.parquet")
    judged = (
        _table(data / "sessions" / s["session_id"] / "judgments.parquet")
        .merge(_table(keys / "key.parquet"), on="pair_id")
        .merge(pairs, on="pair_id")
    )
    # battle-NN is the file's NN-th battle: the key puts its model_a on the left, its model_b on the right
    row = judged.item_id.str.removeprefix("battle-").astype(int) - 1
    assert (judged.left_arm.to_numpy() == csv.model_a[row].to_numpy()).all()
    assert (judged.right_arm.to_numpy() == csv.model_b[row].to_numpy()).all()
    assert (judged.reviewer.to_numpy() == csv.judge[row].to_numpy()).all()
    assert judged.left_text.str.startswith("[no text in the battles file").all()
    assert (judged.left_text == judged.right_text).all()  # one placeholder: neither arm, no length difference
    # the session's wins and ties per model (choices through the key) equal pandas on the file
    back = judged.assign(
        model_a=judged.left_arm,
        model_b=judged.right_arm,
        winner=judged.choice.map({"left": "model_a", "right": "model_b", "same": "tie"}),
    )
    assert _per_model(back).equals(_per_model(csv))
    items = _table(data / "suites" / s["suite_id"] / "items.parquet")
    assert items.set_index("item_id")["class"].to_dict() == {
        f"battle-{k + 1:02d}": v for k, v in enumerate(csv.language)
    }
    for model in set(csv.model_a):  # arm names only in the key
        for p in data.rglob("*"):
            text = _table(p).to_json() if p.suffix == ".parquet" else p.read_text() if p.is_file() else ""
            assert model not in text, (model, p)


def test_battles_with_conversations_import_as_import_pairs_preset_arena_does(tmp_path, ev):
    """The same pairs, choices and key as `import pairs --preset arena` (the golden Arena file, texts
    from its conversations, turn 2 as item <id>-turn2); language becomes the item's class."""
    s = _import(ev, tmp_path / "b", ARENA / "battles.jsonl", "--seed", "3")
    assert s["texts"] == ["conversation_a", "conversation_b"] and s["arms"] == 2
    code, out, err = ev(
        "--data",
        tmp_path / "p",
        "--state",
        tmp_path / "ps",
        "import",
        "pairs",
        ARENA / "battles.jsonl",
        "--preset",
        "arena",
        "--seed",
        "3",
        "--json",
    )
    p = json.loads(out)
    for sub in ("pairs", "judgments"):
        mine = _table(tmp_path / "b" / "sessions" / s["session_id"] / f"{sub}.parquet")
        assert mine.equals(_table(tmp_path / "p" / "sessions" / p["session_id"] / f"{sub}.parquet")), sub
    assert _table(Path(s["keys"]) / "key.parquet").equals(_table(Path(p["keys"]) / "key.parquet"))
    items = _table(tmp_path / "b" / "suites" / s["suite_id"] / "items.parquet")
    assert "English" in set(items["class"]) and any(items.item_id.str.endswith("-turn2"))


def test_question_ids_without_texts_keep_each_battle_its_own_pair(tmp_path, ev):
    """Two battles on one question by the same voter: two pairs on one item (placeholders per battle)."""
    f = tmp_path / "same_question.jsonl"
    rows = [
        {"question_id": "q1", "model_a": "m1", "model_b": "m2", "winner": w, "judge": "arena_user_1"}
        for w in ("model_a", "tie")
    ] + [{"question_id": "q2", "model_a": "m3", "model_b": "m1", "winner": "model_b", "judge": "arena_user_1"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = _import(ev, tmp_path / "d", f, "--strict")
    assert (s["pairs"], s["judgments"], s["arms"], s["ignored_columns"]) == (3, 3, 3, [])
    items = _table(tmp_path / "d" / "suites" / s["suite_id"] / "items.parquet")
    assert sorted(items.item_id) == ["q1", "q2"]


def _davidson_mle(battles: pd.DataFrame) -> dict[str, float]:
    """Davidson's Bradley-Terry by hand: P(a wins) = pa / (pa + pb + nu sqrt(pa pb)), P(tie) = nu sqrt(pa pb)
    / (...), p = exp(strength), strengths summing to zero, maximised with scipy from the CSV."""
    from scipy.optimize import minimize

    models = sorted(set(battles.model_a) | set(battles.model_b))
    ia, ib = battles.model_a.map(models.index).to_numpy(), battles.model_b.map(models.index).to_numpy()
    won_a, won_b = (battles.winner == "model_a").to_numpy(), (battles.winner == "model_b").to_numpy()

    def nll(x):
        beta = np.append(x[:-1], -x[:-1].sum())  # the last strength: minus the others' sum
        pa, pb, tie = np.exp(beta[ia]), np.exp(beta[ib]), np.exp(x[-1]) * np.exp((beta[ia] + beta[ib]) / 2)
        num = np.where(won_a, pa, np.where(won_b, pb, tie))
        return -np.sum(np.log(num / (pa + pb + tie)))

    x = minimize(nll, np.zeros(len(models)), method="BFGS", options={"gtol": 1e-10}).x
    return dict(zip(models, np.append(x[:-1], -x[:-1].sum()), strict=True))


def test_the_report_ranks_the_six_models_as_a_hand_written_davidson_fit(tmp_path, ev):
    """`pairs report` on the imported battles: the people's strengths equal a hand-written maximum
    likelihood of Davidson's model on the CSV (one vote per battle: the majority is the vote). One
    voter for every battle: the report ranks each person too, with a bootstrap each (9 voters took
    40 of its 55 s at load 20)."""
    data, battles = tmp_path / "data", pd.read_csv(CLEAN).assign(judge="arena_user_1")
    battles.to_csv(tmp_path / "battles.csv", index=False)
    s = _import(ev, data, tmp_path / "battles.csv", "--seed", "11")
    assert s["unblinded"], s.get("not_unblinded")
    code, out, err = ev(
        "--data", data, "--state", tmp_path / "state", "pairs", "report", "--session", s["session_id"], "--json"
    )
    assert code == 0, err
    people = json.loads(out)["people"]
    got = {a["arm"]: a["strength"] for a in people["arms"]}
    want = _davidson_mle(battles)
    assert got == pytest.approx(want, abs=1e-5)
    assert all(lo < got[a["arm"]] < hi for a in people["arms"] for lo, hi in [a["interval"]])


def _break(tmp_path: Path, how: str) -> tuple[Path, str, str]:
    """The golden table broken one way: (file, the field named, the words said)."""
    csv = pd.read_csv(CLEAN)
    if how == "unknown winner":
        csv.loc[6, "winner"] = "model_c"
        want = ("winner", "line 8: 'model_c' is not a winner: a battle's winner is one of model_a, model_b, tie")
    elif how == "no winner":
        csv.loc[6, "winner"] = None
        want = ("winner", "line 8: no value: a battle's winner is one of")
    elif how == "same model":
        csv.loc[9, "model_b"] = csv.loc[9, "model_a"]
        want = ("model_b", f"line 11: both answers are from arm '{csv.loc[9, 'model_a']}'")
    elif how == "missing column":
        csv = csv.drop(columns="judge")
        want = ("judge", "column is missing (the file has: model_a, model_b, winner, turn")
    elif how == "no judge":
        csv.loc[3, "judge"] = None
        want = ("judge", "line 5: empty value: every row needs a judge (who voted)")
    else:
        csv["anony"] = csv.anony.astype(object)
        csv.loc[2, "anony"] = "maybe"
        want = ("anony", "line 4: 'maybe' is not true or false")
    f = tmp_path / "battles.csv"
    csv.to_csv(f, index=False)
    return f, *want


@pytest.mark.parametrize("how", ["unknown winner", "no winner", "same model", "missing column", "no judge", "anony"])
def test_bad_battles_are_refused_in_one_line_and_nothing_is_written(tmp_path, ev, how):
    f, field, words = _break(tmp_path, how)
    data = tmp_path / "data"
    code, out, err = ev("--data", data, "--state", tmp_path / "state", "import", "battles", f)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: {f}: {field}: ") and words in err, err
    assert not data.exists() and not (tmp_path / "data-keys").exists()


def test_strict_refuses_the_columns_it_does_not_use(tmp_path, ev):
    code, out, err = ev("--data", tmp_path / "d", "import", "battles", CLEAN, "--strict")
    assert code == 2 and err == (
        f"error: {CLEAN}: --strict: columns the import does not use: turn, tstamp; map them "
        "with --col FIELD=COLUMN (docs/IMPORT.md lists the fields) or leave them out of the file\n"
    )
    assert not (tmp_path / "d").exists()
