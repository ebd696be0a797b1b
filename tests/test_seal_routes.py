"""The seal covers every route to a sealed answer's text or its size (issue 38.2).

A new pairwise session is made on the demo's two arm generations (120 pairs) and the attacks of
tests/test_blinding_attack.py are run through every route that reaches those generations: the
matching attack on the texts a route gives (a shown text looked up among them names its arm), and
the length attack on the sizes it gives (the longer shown text is the larger answer's arm).
Through the data directory's files both recover nearly every side (the threat is real); through
every command and every reader the pages call, each recovers what a seeded coin does, and a
one-sided binomial test (scipy) finds nothing better than chance.

Every command of the click group is either a route, with its attack below, or listed with why
it reaches no answer's text or size; so is every evalcore name the pages call. A new command or a
new name fails this file until it is placed.
"""

from __future__ import annotations

import ast
import json
import shutil

import click
import pyarrow.parquet as pq
import pytest
from conftest import DEMO, REPO
from scipy.stats import binomtest
from test_blinding_attack import _attack, _length_attack

from evalcore import Store, analysis, review
from evalcore.cli import cli

SESSION = "fresh"
RUN = {"accounts-g1": "accounts-g1-split", "accounts-g2": "accounts-g2-split"}
CRITERIA = ("accurate", "answers_question", "concise")
RUBRIC = REPO / "tests" / "golden" / "rubrics" / "local.toml"
PER_ITEM = 40  # the per-item routes are asked about the items of this many pairs; the others are the coin's

# Commands that reach no answer's text and no answer's size, and why.
COUNTS = "counts, rates and intervals over answers"
TOTALS = "totals over every answer of a run, generation or class"
UNTOUCHED: dict[str, str] = {
    **dict.fromkeys(["attribution", "crosstab", "association", "position", "flips", "people-crosstab"], COUNTS),
    "grouping": "phi of criterion pairs and the cost projection's totals: no answer's text or size",
    **dict.fromkeys(["agreement", "correct", "compare", "gate", "trend", "correlate", "reliability"], COUNTS),
    **dict.fromkeys(["runs", "generations", "suites", "cost"], TOTALS),
    "diff": "configurations' knobs",
    "answers": "verdict marks per answer and judge round, and the item's input: no answer's text or size",
    "validate": "checks the files; names a file and a field, never a text",
    "schema": "the data contract",
    "index": "writes sufficient statistics (counts) and hashes of the files",
    "demo": "writes a new demo world",
    **{f"import {k}": "reads the user's own files into new entities" for k in
       ("hanna", "summeval", "inspect", "promptfoo", "long", "wide", "pairs", "pandalm", "battles")},
    **{f"import {k}": "reads a platform's exported files into new entities" for k in
       ("langfuse", "langsmith", "braintrust", "otel")},
    **{f"import {k}": "reads a running server's spans or traces into new entities" for k in ("phoenix", "mlflow")},
    "labels push": "sends gold values and who decided them to the server the answers came from: no answer text",
    **{f"labels {k}": "people's labels, no answer text" for k in ("add", "list", "export", "check", "recover")},
    **{f"labels {k}": "experts' sign-offs on gold and accuracy counts on it, no answer text" for k in ("signoff", "signed")},
    "generate": "sends a suite's inputs, not a generation's answers",
    "judge-pairs": "a session's shown texts: what its graders see",
    "rederive": "re-derives a run's verdicts from its journal; prints counts",
    "pairs make": "makes a session: its shown texts are what its graders read; prints counts",
    **{f"pairs {k}": "a session's labels and (once closed) its report" for k in ("label", "close", "report")},
    **{f"pairs {k}": "people's choices as shown, counted per grader, and their times: no answer" for k in
       ("sitting", "drift")},
    "pairs presentation": "shares of an arm's raw answers with lists, headings, bold or code, only once the session "
    "is unblinded: no answer text",
    "pairs cell": "one win-matrix cell's pairs of a closed session: choices and the answers' word counts, no text; "
    "refused while the session is open (tests/test_pairs_cells.py)",
    "pairs schedule": "the owner's run with the key: pair ids, probabilities and the leader's P(best), no answer",
    "pairs progress": "counts of pairs judged and queued, and the schedule's verdict: no answer, no arm",
    **{f"queue {k}": "cases by item, round and criterion; a decision on a sealed case is refused (test_blinding_attack)"
       for k in ("detect", "build", "list", "show", "decide", "next", "leases", "undo")},
    **{f"queue {k}": "reviewers' counts, times and agreement, and slices of a queue: no answer" for k in
       ("team", "assign", "assignments")},
    "home": "counts of what waits (cases, disputes, pairs, runs): no answer",
    **{f"state {k}": "copies the state directory's files (and the keys only with --keys) as an operator's archive: "
       "like the data directory's own files, not a reader of evalcore's" for k in ("backup", "restore")},
    "state upgrade": "schema versions and counts of the label store and the ledger",
    **{f"ledger {k}": "the decision ledger's entries" for k in ("add", "amend", "retire", "list", "export", "predict",
                                                                  "check")},
    "revision-cost": "the outputs' token counts and costs, summed: no answer's text or size",
    "bail-flips": "the outputs' abstained flags per item and round: no answer's text or size",
    "temperature": COUNTS,
    **{f"suite {k}": "a suite's items (inputs, references), not answers" for k in
       ("check", "repair", "versions", "looks", "show", "items", "item")},
}


def _commands(group: click.Group, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for name, c in group.commands.items():
        out |= _commands(c, f"{prefix}{name} ") if isinstance(c, click.Group) else {f"{prefix}{name}"}
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A copy of the demo with a new open session on the two arms (made as users make one)."""
    from evalcore.cli import main

    tmp = tmp_path_factory.mktemp("seal")
    data, keys, state = tmp / "data", tmp / "keys", tmp / "state"
    shutil.copytree(DEMO, data)
    shutil.copytree(REPO / "data" / "demo-keys", keys)
    try:
        main(["--data", str(data), "--state", str(state), "pairs", "make", "--session", SESSION, "--arm",
              "concise=accounts-g1", "--arm", "detailed=accounts-g2", "--keys", str(keys), "--seed", "3",
              "--key-seed", "5", "--json"])
    except SystemExit as e:
        assert e.code == 0
    store = Store(data, state)
    pairs = pq.read_table(store.session(SESSION).path / "pairs.parquet").to_pylist()
    return {"data": data, "keys": keys, "state": state, "tmp": tmp, "items": [p["item_id"] for p in pairs]}


def _chance(n: int, right: int) -> bool:
    return binomtest(right, n, 0.5, alternative="greater").pvalue > 0.05


def _rows(obj):
    """Every dict with an item_id and an output anywhere in a JSON answer."""
    if isinstance(obj, dict):
        if "item_id" in obj and "output" in obj:
            yield obj
        for v in obj.values():
            yield from _rows(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _rows(v)


def _answer_in_prompt(messages) -> str | None:
    text = "\n".join(m["content"] for m in messages or [])
    if "<answer_to_grade>\n" not in text:
        return None
    return text.split("<answer_to_grade>\n", 1)[1].split("\n</answer_to_grade>", 1)[0]


# --------------------------------------------------------------------------- each route: (texts_of, sizes_of)


def _show(w, ev):
    def texts(gen):
        out = {}
        for item in w["items"][:PER_ITEM]:
            code, o, err = ev(*w["args"], "show", RUN[gen], item, "--gen-round", "1", "--include-holdout", "--json")
            assert code == 0, err
            out[(item, 1)] = json.loads(o)["output"]
        return out
    return texts, None


def _drill(w, ev, argv_of):
    def texts(gen):
        out = {}
        for argv in argv_of(RUN[gen]):
            code, o, err = ev(*w["args"], *argv, "--limit", "500", "--include-holdout", "--json")
            assert code == 0, err
            out |= {(r["item_id"], r["gen_round"]): r["output"] for r in _rows(json.loads(o)) if r.get("output")}
        return out
    return texts, None


def _judge(w, ev):
    """`judge --dry-run`: the first prompt of a dry run on each item (--items picks it) and the
    token estimate of every call (--json)."""
    base = ["judge", "--rubric", RUBRIC, "--mode", "single", "--model", "openai/x", "--dry-run", "--json"]

    def texts(gen):
        out = {}
        for item in w["items"][:PER_ITEM]:
            f = w["tmp"] / f"items-{item}.csv"
            f.write_text(f"item_id,gen_round\n{item},1\n")
            code, o, err = ev(*w["args"], *base, "--gen", gen, "--items", f)
            assert code == 0, err
            text = _answer_in_prompt(json.loads(o)["first_prompt"])
            if text is not None:
                out[(item, 1)] = text
        return out

    def sizes(gen):
        code, o, err = ev(*w["args"], *base, "--gen", gen)
        assert code == 0, err
        calls = json.loads(o)["calls"]
        return {c["call_id"].split("/")[0]: c["tokens_in_est"] for c in calls if "/g1/j1/" in c["call_id"]}
    return texts, sizes


def _export(w, ev):
    """`export --hive`: the outputs partition's texts; the sizes of the outputs (tokens out) and of
    the judge calls on them (tokens in, summed per answer)."""
    root = w["tmp"] / "hive"
    code, _, err = ev(*w["args"], "export", "--hive", root, "--overwrite", "--run", RUN["accounts-g1"],
                      "--run", RUN["accounts-g2"])
    assert code == 0, err
    outputs = {gen: pq.read_table(next((root / "outputs").glob(f"*/generation={gen}/*.parquet"))).to_pylist()
               for gen in RUN}
    calls = {gen: pq.read_table(next((root / "calls").glob(f"*/generation={gen}/*/*.parquet"))).to_pylist()
             for gen in RUN}

    def texts(gen):
        return {(r["item_id"], r["round"]): r["output"] for r in outputs[gen]}

    def sizes(gen):
        by_item: dict[str, int | None] = {r["item_id"]: r["tokens_out"] for r in outputs[gen] if r["round"] == 1}
        for r in calls[gen]:
            if r["gen_round"] == 1 and r["judge_round"] == 1 and r["tokens_in"] is not None:
                by_item[r["item_id"]] = (by_item.get(r["item_id"]) or 0) + r["tokens_in"]
        return by_item
    return texts, sizes


ROUTES = {
    "show": _show,
    "failing": lambda w, ev: _drill(w, ev, lambda run: [["failing", run, "--criterion", c] for c in CRITERIA]),
    "cell": lambda w, ev: _drill(w, ev, lambda run: [
        ["cell", run, "--a", "accurate", "--b", "concise", "--a-verdict", a, "--b-verdict", b]
        for a in ("pass", "fail") for b in ("pass", "fail")]),
    "flipped": lambda w, ev: _drill(w, ev, lambda run: [
        ["flipped", run, run, "--criterion", c, "--direction", "fail_both"] for c in CRITERIA]),
    "judge": _judge,
    "export": _export,
}


def test_every_command_is_a_route_or_says_why_it_reaches_no_answer():
    commands = _commands(cli)
    assert not set(ROUTES) & set(UNTOUCHED)
    assert commands - set(ROUTES) - set(UNTOUCHED) == set(), "place each new command in ROUTES or UNTOUCHED"
    assert set(ROUTES) | set(UNTOUCHED) == commands, "a listed command no longer exists"


def test_the_attacks_on_the_files_recover_the_sides(world):
    """The control: the same two attacks, given what the files hold, recover nearly every side."""
    store = Store(world["data"], world["state"])

    def files(gen):
        return pq.read_table(store.path_of("generation", gen, "outputs")).to_pylist()

    n, matched, right = _attack(store, SESSION, world["keys"],
                                lambda gen: {(r["item_id"], r["round"]): r["output"] for r in files(gen)})
    assert matched >= 0.85 * n and right >= 0.9 * n, (n, matched, right)
    n, sized, right = _length_attack(store, SESSION, world["keys"],
                                     lambda gen: {r["item_id"]: r["tokens_out"] for r in files(gen) if r["round"] == 1})
    assert sized >= 0.9 * n and right >= 0.8 * n and not _chance(n, right), (n, sized, right)


@pytest.mark.parametrize("command", sorted(ROUTES))
def test_the_attack_through_each_command_is_chance(world, ev, command):
    world["args"] = ["--data", world["data"], "--state", world["state"]]
    store = Store(world["data"], world["state"])
    texts_of, sizes_of = ROUTES[command](world, ev)
    n, matched, right = _attack(store, SESSION, world["keys"], texts_of)
    assert matched == 0 and _chance(n, right), (command, n, matched, right)
    if sizes_of is not None:
        n, sized, right = _length_attack(store, SESSION, world["keys"], sizes_of)
        assert sized == 0 and _chance(n, right), (command, n, sized, right)


def test_a_judge_run_on_a_sealed_generation_is_refused_and_writes_nothing(world, ev):
    args = ["--data", world["data"], "--state", world["state"]]
    before = sorted(p.name for p in (world["data"] / "runs").iterdir())
    code, out, err = ev(*args, "judge", "--gen", "accounts-g1", "--rubric", RUBRIC, "--mode", "single", "--model",
                        "openai/x", "--limit", "1", "--run-id", "sealed-try")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "open pairwise session accounts-practice" in err and "pairs close" in err
    assert sorted(p.name for p in (world["data"] / "runs").iterdir()) == before
    assert not list(world["state"].rglob("sealed-try"))


# --------------------------------------------------------------------------- the pages

#: evalcore functions the pages call that return answers' texts; each is attacked below
READERS = {"evalcore.item_view", "analysis.answers_failing", "analysis.cell_answers", "analysis.flip_answers",
           "review.card"}
#: what the grading page shows: a session's shown texts, what its graders see
SHOWN = {"pairwise.pair_view"}
#: every other evalcore function the pages call: figures, counts, listings, writes, no answer text or size
NO_ANSWER = set("""
analysis.association analysis.attribution analysis.class_heatmap analysis.compare analysis.composition_bars
analysis.composition_shift analysis.correlate analysis.cost_by_criterion analysis.cost_label analysis.cost_table
analysis.crosstab analysis.diff analysis.failure_shares analysis.flip_bars analysis.flips analysis.holdout_count
analysis.item_classes analysis.iv_text analysis.log_look analysis.markdown analysis.metrics_of
analysis.parse_selection analysis.people_crosstab analysis.phi_heatmaps analysis.position_effect
analysis.position_lines analysis.power analysis.projection_bars analysis.reliability analysis.round_dots
analysis.rounds_text analysis.run_answers analysis.run_cost analysis.trend analysis.trend_lines analysis.verdict_grid
evalcore.analysis evalcore.csv_text evalcore.data_overview evalcore.default_data_dir evalcore.default_state_dir
evalcore.export_labels evalcore.generations_summary evalcore.gold evalcore.load_roles evalcore.pinned
evalcore.resolve_access evalcore.run_item_ids evalcore.runs_summary evalcore.suites_summary
pairwise.leaking_words pairwise.progress pairwise.record_judgment pairwise.record_probe pairwise.report
pairwise.sessions_overview pairwise.undo_judgment
review.build_queue review.check review.corrected_of review.criterion_estimates review.curated_suites review.decide
review.describe_detail review.detection_summary review.disagreements review.disputes review.export_markdown review.facets review.flags
review.get_queue review.half_width_text review.item review.items review.labels_revision review.leases
review.next_case review.overview review.points review.progress review.queues review.repair review.report_card
review.runs_on review.session_agreement review.undo review.visible_findings
evalcore.waiting review.assign review.team review.start_build review.build_status review.items_to_label
analysis.run_provenance
analysis.revision_costs analysis.suite_bail_flips review.temperature_view
analysis.grouping
review.signed_gold pairwise.sitting pairwise.drift pairwise.presentation analysis.run_caveats
evalcore.labels_version pairwise.cell_pairs
""".split())
NAMESPACES = {"evalcore", "analysis", "review", "pairwise", "stats", "llm", "importers", "demo"}


def _page_names() -> set[str]:
    """Every ``namespace.name`` the pages and the app use, but classes and constants (capitalised)."""
    out = set()
    for page in sorted((REPO / "pages").glob("*.py")) + [REPO / "app.py"]:
        for node in ast.walk(ast.parse(page.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in NAMESPACES:
                if not node.attr[:1].isupper():
                    out.add(f"{node.value.id}.{node.attr}")
    return out


def test_every_name_the_pages_call_is_a_reader_or_reaches_no_answer():
    names = _page_names()
    assert names - READERS - SHOWN - NO_ANSWER == set(), "place each new name in READERS, SHOWN or NO_ANSWER"
    assert READERS <= names


def test_the_attack_through_each_reader_the_pages_call_is_chance(world):
    store = Store(world["data"], world["state"])
    items = world["items"][:PER_ITEM]
    queues = {gen: review.build_queue(store, gen, audit_rate=1.0, seed=1)["queue_id"] for gen in RUN}

    def each(rows):
        return {(r.item_id, r.gen_round): r.output for r in rows if r.output}

    readers = {
        "evalcore.item_view": lambda gen: {
            (i, 1): analysis.item_view(store, RUN[gen], i, 1, include_holdout=True).output for i in items},
        "analysis.answers_failing": lambda gen: {
            k: v for c in CRITERIA for k, v in each(analysis.answers_failing(store, RUN[gen], c, limit=500).answers).items()},
        "analysis.cell_answers": lambda gen: {
            k: v for a in (True, False) for b in (True, False)
            for k, v in each(analysis.cell_answers(store, [RUN[gen]], "accurate", "concise", a, b, RUN[gen],
                                                   limit=500).answers).items()},
        "analysis.flip_answers": lambda gen: {
            k: v for c in CRITERIA
            for k, v in each(analysis.flip_answers(store, RUN[gen], RUN[gen], c, "fail_both", limit=500).answers).items()},
        "review.card": lambda gen: {  # one case of each answer the queue holds, as the card is handed it
            (c["item_id"], c["gen_round"]): review.card.one_case(
                store, queues[gen], (c["item_id"], c["gen_round"], c["criterion"]), "ann", include_holdout=True
            )["output"]
            for c in {(c["item_id"], c["gen_round"]): c for c in review.cases(store, queues[gen])
                      if c["item_id"] in items}.values()},
    }
    assert set(readers) == READERS
    for name, texts_of in readers.items():
        n, matched, right = _attack(store, SESSION, world["keys"], texts_of)
        assert matched == 0 and _chance(n, right), (name, n, matched, right)
