"""Every ``--json`` command of the CLI gives the output kept in tests/golden/cli/ (issue 12): the
package layout, the refactors and the shared implementations must not change a figure. The steps
and the normalisation are in tests/cli_golden.py."""

from __future__ import annotations

import difflib
import json

import pytest
from cli_golden import OUT, STEPS, run_steps


@pytest.fixture(scope="module")
def replay(tmp_path_factory) -> dict[str, str]:
    from cli_golden import _inprocess
    return run_steps(tmp_path_factory.mktemp("golden-cli"), _inprocess)


def test_every_step_has_a_golden_file_and_no_file_is_stale():
    names = {n for n, _ in STEPS}
    assert len(names) == len(STEPS), "two steps share a name"
    files = {p.stem for p in OUT.glob("*.json")}
    assert files == names, f"missing: {sorted(names - files)}, stale: {sorted(files - names)}"


def test_every_json_command_is_covered():
    """A new --json command gets a golden step too."""
    import click

    from evalcore.cli import cli
    covered = {tuple(a for a in argv[:2] if not a.startswith("-")) for _, argv in STEPS}
    missing = []

    def walk(g: click.Group, prefix: tuple[str, ...]) -> None:
        for name, c in g.commands.items():
            if isinstance(c, click.Group):
                walk(c, prefix + (name,))
            elif any(p.name == "as_json" for p in c.params):
                path = prefix + (name,)
                if not any(cv[:len(path)] == path for cv in covered):
                    missing.append(" ".join(path))
    walk(cli, ())
    # Not replayed here: `import pandalm` reads the real data set only (tests/test_pandalm.py, on
    # ../shared); `rederive` re-derives a judged run's verdicts (tests/test_judge.py, on a run judged
    # through the fake server); `import phoenix|mlflow` and `labels push` talk to a running server
    # (tests/test_platforms_live.py, on real Phoenix and MLflow servers); `state backup|restore|upgrade`
    # print the archive's and the databases' paths, times and sizes (tests/test_state_backup.py).
    # `pairs sitting` reads the clock (minutes since the sitting began: tests/test_fatigue.py); `temperature`
    # builds a report card per judged generation, seconds each (tests/test_temperature_view.py).
    live = {"import phoenix", "import mlflow", "labels push", "state backup", "state restore", "state upgrade"}
    clock = {"pairs sitting", "temperature"}
    assert sorted(set(missing) - {"import pandalm", "rederive"} - live - clock) == []


@pytest.mark.parametrize("name", [n for n, _ in STEPS])
def test_output_is_unchanged(replay, name):
    want = (OUT / f"{name}.json").read_text()
    got = replay[name]
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now", n=2))
        pytest.fail(f"{name}: output differs from tests/golden/cli/{name}.json:\n{diff[:4000]}")


def test_no_command_prints_the_pooled_verdict_rate_as_a_pass_rate():
    """Issue 37.2: the share of passing verdicts pooled over criteria hides what moved (seed 000); the
    golden output of every --json command (what the pages show, from the same typed results) carries
    the all-pass rate instead. Per-criterion pass rates (a judge's ``pass_rate`` on one criterion of
    the report card) stay."""
    import re

    pooled = re.compile(r'"pass_rate(_by_round|_mean|_spread)"')
    hits = [p.name for p in sorted(OUT.glob("*.json")) if pooled.search(p.read_text())]
    assert hits == []
    for name in ("import-long", "import-wide", "import-inspect", "import-promptfoo"):
        summary = json.loads((OUT / f"{name}.json").read_text())
        runs = summary.get("runs", [summary])
        assert all("pass_rate" not in r and "all_pass" in r for r in runs), name
