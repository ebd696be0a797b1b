"""The pairs behind a win matrix cell (issue 43: "the win matrix as a heatmap whose cells open their
pairs"): `pairwise.cells.cell_pairs` and `evalcore pairs cell`. Every cell's counts equal the
report's win matrix cell of the same source, on the three-arm session of test_pairs_ranking and on
PandaLM's five arms; the listed pairs are read against the key the test wrote."""

from __future__ import annotations

import json
from itertools import permutations

import pytest
from test_pairs_ranking import _cli, _grade, _three_arm_session, pandalm_report  # noqa: F401

import evalcore.cli.pairscell  # noqa: F401  (attaches `pairs cell` until evalcore/cli/__init__ imports it)
from evalcore import pairwise as P
from evalcore.errors import EvalcoreError
from evalcore.pairwise.cells import cell_pairs
from evalcore.pairwise.ranking import Ranking, RankingReport
from evalcore.storage.store import Store


def _cells(r: Ranking) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {(c.arm, c.against): (c.wins, c.losses, c.ties) for c in r.win_matrix}


def _assert_cells_match(store: Store, report: RankingReport, sources: dict[str, Ranking]) -> int:
    checked = 0
    for source, ranking in sources.items():
        want = _cells(ranking)
        assert want, source
        for a, b in permutations(report.arms, 2):
            c = cell_pairs(store, report.session_id, a, b, source=source).counts
            assert (c.wins, c.losses, c.ties) == want[(a, b)], (source, a, b)
            assert c.judgments == sum(want[(a, b)])
            checked += 1
    return checked


@pytest.fixture(scope="module")
def tri(tmp_path_factory):
    """The three-arm session graded by two people and closed."""
    w = _three_arm_session(tmp_path_factory.mktemp("cells"))
    judged = _grade(w, 5)
    P.close_session(w["store"], "tri", w["keys"], n_perm=0)
    return w, judged


def test_three_arm_cells_equal_the_win_matrix_and_list_their_pairs(tri):
    w, judged = tri
    st = w["store"]
    r = P.report(st, "tri")
    assert isinstance(r, RankingReport)
    n = _assert_cells_match(st, r, {"people": r.people, **r.by_reviewer})
    assert n == 3 * 6
    pairs = {p["pair_id"]: p for p in P.load_pairs(st, "tri")}
    cell = cell_pairs(st, "tri", "arm-x", "arm-z")
    keyed = sorted(
        pid
        for pid, k in w["key_rows"].items()
        if {k["left_arm"], k["right_arm"]} == {"arm-x", "arm-z"} and not pairs[pid]["mirror_of"]
    )
    assert [p.pair_id for p in cell.pairs] == keyed and keyed
    said = {(pid, who): c for pid, who, c in judged}
    for p in cell.pairs:
        k = w["key_rows"][p.pair_id]
        assert (p.left_arm, p.right_arm) == (k["left_arm"], k["right_arm"])
        assert p.item_id == pairs[p.pair_id]["item_id"] and p.holdout == pairs[p.pair_id]["holdout"]
        assert [x.who for x in p.people] == ["ann", "bo"]
        for x in p.people:
            assert x.choice == said[(p.pair_id, x.who)]
            assert x.arm == (k["left_arm"] if x.choice == "left" else k["right_arm"])
        x_text = pairs[p.pair_id]["left_text" if k["left_arm"] == "arm-x" else "right_text"]
        assert p.words_a == len(x_text.split())
        two = [x.arm for x in p.people]
        assert p.majority_arm == (two[0] if two[0] == two[1] else None)
    # the mirror flag: an original is flagged exactly when a mirror of it exists
    mirrors = {p["mirror_of"] for p in pairs.values() if p["mirror_of"]}
    assert all(p.mirrored == (p.pair_id in mirrors) for p in cell.pairs)


def test_pandalm_five_arm_cells_equal_the_win_matrix(pandalm_report):  # noqa: F811
    root, r = pandalm_report
    st = Store(root / "data", root / "state")
    sources = {"people": r.people, **{g.run_id: g.ranking for g in r.graders}}
    assert len(sources) == 3
    assert _assert_cells_match(st, r, sources) == 3 * 20


def test_pairs_cell_cli_text_and_json(tri, capsys):
    w, _ = tri
    base = ["--data", w["data"], "--state", w["store"].state, "pairs", "cell", "--session", "tri", "--a", "arm-y", "--b", "arm-x"]
    code, out, err = _cli(capsys, *base, "--json")
    assert code == 0, err
    got = json.loads(out)
    want = cell_pairs(w["store"], "tri", "arm-y", "arm-x")
    assert got == json.loads(json.dumps(want.to_dict()))
    assert got["counts"]["judgments"] == sum(got["counts"][k] for k in ("wins", "losses", "ties"))
    code, out, err = _cli(capsys, *base)
    assert code == 0, err
    c = want.counts
    assert f"people's majority: arm-y won {c.wins}, lost {c.losses}, tied {c.ties} of {c.judgments}" in out
    assert sum(1 for line in out.splitlines() if line.startswith(tuple(p.pair_id for p in want.pairs))) == len(
        want.pairs
    )


@pytest.mark.parametrize(
    ("a", "b", "source", "field", "words"),
    [
        ("arm-q", "arm-x", "people", "--a", "'arm-q' is not an arm of this session"),
        ("arm-x", "arm-q", "people", "--b", "'arm-q' is not an arm of this session"),
        ("arm-x", "arm-x", "people", "--b", "a cell is two different arms"),
        ("arm-x", "arm-y", "carol", "--source", "'carol' is neither 'people', a reviewer"),
    ],
)
def test_a_cell_that_does_not_exist_is_refused(tri, capsys, a, b, source, field, words):
    w, _ = tri
    with pytest.raises(EvalcoreError, match=words) as e:
        cell_pairs(w["store"], "tri", a, b, source=source)
    assert e.value.field == field
    code, out, err = _cli(
        capsys, "--data", w["data"], "--state", w["store"].state, "pairs", "cell", "--session", "tri", "--a", a, "--b", b,
        "--source", source,
    )  # fmt: skip
    assert code == 2 and out == "" and field in err and err.count("\n") == 1


def test_an_open_session_has_no_cells(tmp_path):
    w = _three_arm_session(tmp_path)
    with pytest.raises(P.SessionOpenError, match="is open") as e:
        cell_pairs(w["store"], "tri", "arm-x", "arm-y")
    assert e.value.field == "--session"
