"""Shared fixtures: a tiny data directory written through the store, and paths of the repo."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EVALCORE = str(Path(sys.executable).with_name("evalcore"))
DEMO = REPO / "data" / "demo"
#: the hand-written pairwise table of tests/golden/import and the options that import it (two arms, the
#: model grader in both orders, two people)
PAIRS_CSV = REPO / "tests" / "golden" / "import" / "pairs.csv"
PAIRS_ARGS = ["--arm-a", "concise", "--arm-b", "detailed", "--model-as-shown-col", "grader_as_shown",
              "--model-swapped-col", "grader_swapped", "--human-col", "rater_ana", "--human-col", "rater_ben"]


def tree_hash(*roots: Path) -> str:
    """One hash over every file's path and bytes under the given directories."""
    h = hashlib.sha256()
    for root in roots:
        if not Path(root).exists():
            h.update(f"{root}:absent".encode())
            continue
        for p in sorted(Path(root).rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def make_tiny(data: Path) -> None:
    """A data directory with one suite (3 items), one generation (2 rounds) and one run
    (2 criteria, 2 judge rounds), written through the store."""
    from evalcore import contract as S
    from evalcore.storage.store import Store

    st = Store(data.mkdir(parents=True, exist_ok=True) or data, data.parent / "unused-state")
    items = [{"item_id": f"i{k}", "input": f"question {k}", "must_have": ["x"], "class": "c", "holdout": False}
             for k in range(3)]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items),
                         n_items=3)
    st.write_suite(sm, items)
    outputs = [{"item_id": f"i{k}", "round": r, "output": f"answer {k} r{r}", "latency_ms": 10.0}
               for k in range(3) for r in (1, 2)]
    gm = S.GenerationManifest(gen_id="g", suite_id="s", suite_hash=sm.content_hash,
                              created_at="2026-01-01T00:00:00Z", source="imported",
                              outputs_hash=S.content_hash(outputs), rounds=2)
    st.write_generation(gm, outputs)
    rubric = S.Rubric(criteria=[S.Criterion(name="ok", kind="binary"),
                                S.Criterion(name="score", kind="ordinal", scale_min=0, scale_max=5, threshold=3)])
    verdicts, calls = [], []
    for k in range(3):
        for r in (1, 2):
            for jr in (1, 2):
                cid = f"c{k}{r}{jr}"
                calls.append({"call_id": cid, "item_id": f"i{k}", "gen_round": r, "judge_round": jr,
                              "criteria": ["ok", "score"], "tokens_in": 100, "tokens_out": 20,
                              "cost_usd": 0.001, "latency_ms": 50.0})
                verdicts.append({"run_id": "r", "item_id": f"i{k}", "gen_round": r, "criterion": "ok",
                                 "judge_round": jr, "passed": k != 0, "raw_verdict": "pass" if k else "fail",
                                 "position": 0, "call_id": cid})
                verdicts.append({"run_id": "r", "item_id": f"i{k}", "gen_round": r, "criterion": "score",
                                 "judge_round": jr, "passed": k >= 1, "score": float(2 + k),
                                 "raw_verdict": str(2 + k), "position": 1, "call_id": cid})
    rm = S.RunManifest(run_id="r", gen_id="g", created_at="2026-01-01T00:00:00Z", rubric=rubric,
                       rubric_hash=rubric.hash(), mode="single", field_order=["ok", "score"], judge_model="m",
                       source="imported", judge_rounds=2)
    st.write_run(rm, verdicts, calls)


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    """(data dir, state dir) of a tiny valid world."""
    data = tmp_path / "data"
    make_tiny(data)
    state = tmp_path / "state"
    return data, state


@pytest.fixture(autouse=True)
def _no_user_env(monkeypatch, tmp_path):
    """Tests never read the developer's EVALCORE_* settings by accident, and a command run without
    ``--state`` writes its state (derived tables, the review detection) into the test's own
    directory, not the checkout's ./.evalcore-state."""
    for k in ("EVALCORE_DATA", "EVALCORE_STATE", "EVALCORE_DB"):
        monkeypatch.setenv(k, "")  # (recorded, so a test's own setting is undone too)
        monkeypatch.delenv(k)
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "default-state"))
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def pytest_configure(config):
    """The controlling process names the directory of the session's PostgreSQL cluster (started
    by the first test that needs it, shared by the xdist workers: tests/pg_util.py)."""
    if not hasattr(config, "workerinput"):
        import pg_util
        os.environ[pg_util.ROOT_ENV] = pg_util.new_root()


# The modules whose slowest test took longest in CI (.ci/run's --durations=40, 2 cores), longest first.
# Under `-n 2 --dist loadgroup` xdist hands out the xdist_groups first (the most tests first), then
# the other tests in collection order, one at a time to whichever worker is free: a long test
# collected last leaves the other worker idle at the end, so these run first (issue 45). Order only:
# nothing is skipped, and each module's tests keep their own order.
SLOW_FIRST = ["test_real_model", "test_spark", "test_browser_concurrent", "test_browser_injection", "test_gate_noise",
              "test_atomic_writes", "test_packaging", "test_platforms_live", "test_browser_login",
              "test_derived_compare", "test_datasets", "test_import_fields", "test_one_relation", "test_scores",
              "test_labels_concurrency", "test_browser_team", "test_slices", "test_holdout_repair"]
# Modules whose tests share a costly module-scoped fixture: in one xdist_group each, so the fixture is
# built once instead of once on each worker that draws one of the module's tests. Setup seconds of the
# fixture, measured with `pytest --setup-only --durations=40 -n 0` at load average 13-23: packaging's
# venv 216 s, cli_golden's replay 176 s, scores' HANNA data 85 s, score_stats' world 35 s, datasets'
# real imports 14 s, demo's regeneration 11 s.
ONE_WORKER = {"test_packaging", "test_cli_golden", "test_scores", "test_score_stats", "test_datasets", "test_demo"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: the rest keep their order
    for item in items:
        if item.path.stem in ONE_WORKER and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    if config.getoption("loadgroup", default=False):  # an xdist worker under --dist loadgroup
        _group_suffix(items)


def _group_suffix(items) -> None:
    """Name each xdist_group test ``<nodeid>@<group>``, which is how the loadgroup scheduler knows
    its group. xdist 3.8 writes the suffix into ``item._nodeid``, which pytest 9.2 no longer reads
    (its node ids are structured: ``item._id``), so without this every group was silently spread
    over both workers, each starting the group's server or JVM (pytest-dev/pytest-xdist#1386)."""
    from _pytest.nodeid import coerce_node_id

    for item in items:
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        if names and "@" not in item.nodeid.rsplit("]", 1)[-1]:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(names))}")


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        import pg_util
        pg_util.stop(os.environ.pop(pg_util.ROOT_ENV, None))


@pytest.fixture(scope="session")
def pg_server() -> str:
    """The URL of this worker's database on the session's PostgreSQL server (skips without the
    binaries, fails under EVALCORE_REQUIRE_PG=1)."""
    import pg_util
    return pg_util.server_url()


@pytest.fixture
def pg_url(pg_server):
    """A URL of an empty schema of its own on the test server (dropped afterwards)."""
    import pg_util
    url, name = pg_util.new_schema(pg_server)
    yield url
    pg_util.drop_schema(pg_server, name)


class Backend:
    """The label store's database in a test: ``name`` (sqlite / postgres) and its ``url``
    (None for SQLite in the state directory)."""

    def __init__(self, name: str, url: str | None):
        self.name, self.url = name, url

    def __repr__(self) -> str:
        return self.name


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, monkeypatch) -> Backend:
    """Each test that uses it runs on SQLite and on PostgreSQL (EVALCORE_DB set to a fresh schema,
    so LabelStore, the ledger, the CLI and subprocesses all use it)."""
    if request.param == "sqlite":
        return Backend("sqlite", None)
    url = request.getfixturevalue("pg_url")
    monkeypatch.setenv("EVALCORE_DB", url)
    return Backend("postgres", url)


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium through Playwright (never `playwright install`); skips without it unless
    EVALCORE_REQUIRE_BROWSER=1, where it fails."""
    from browser_util import chromium_path, launch, unavailable
    if chromium_path() is None:
        unavailable("Debian chromium is not installed (/usr/bin/chromium or `chromium` on PATH): apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright Python package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def ev(capsys):
    """Run ``evalcore ARGS`` in-process through ``evalcore.cli.main`` (typed errors become one line
    on stderr and exit 2): returns (exit code, stdout, stderr)."""
    from evalcore.cli import main

    def run(*args):
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def _mount(where, size: str) -> None:
    import subprocess

    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        why = f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode}): these tests need root"
        if os.environ.get("EVALCORE_REQUIRE_MOUNT") == "1":
            pytest.fail(f"{why} (EVALCORE_REQUIRE_MOUNT=1)")
        pytest.skip(why)


@pytest.fixture
def mnt(tmp_path):
    """``mnt(size)`` mounts a real tmpfs of that size at ``tmp_path / "mnt"`` and returns it;
    unmounted at the end. Needs root: skips without it, fails under EVALCORE_REQUIRE_MOUNT=1."""
    import subprocess

    where = tmp_path / "mnt"
    made = []

    def make(size="16m"):
        _mount(where, size)
        made.append(where)
        return where

    yield make
    for w in made:
        subprocess.run(["umount", "-l", str(w)], check=False)


def card_data(at) -> dict:
    """The data an AppTest run handed the review card (pages/_card.py): the component's JSON."""
    import json

    def find(node):
        for c in node.children.values() if isinstance(getattr(node, "children", None), dict) else []:
            if type(c).__name__ == "UnknownElement" and c.proto.component_name == "evalcore_review_card":
                return c
            hit = find(c)
            if hit is not None:
                return hit
        return None

    el = find(at._tree)
    assert el is not None, "no review card on the page"
    return json.loads(el.proto.json)
