"""Issue 16, start-up: `evalcore --version` and `--help` import none of the heavy libraries, and
`evalcore runs` none that it does not use (scipy, statsmodels, altair, pandas, litellm, the
importers). Module sets, not times: the CPU figures are bench/startup.py's (docs/BENCHMARKS.md)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "statsmodels", "pandas", "altair", "litellm", "krippendorff", "streamlit")


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def _tops(mods: set[str]) -> set[str]:
    return {m.split(".")[0] for m in mods}


def test_version_and_help_import_no_heavy_library():
    mods = _loaded("from evalcore.cli import cli\ntry:\n    cli(['--version'])\nexcept SystemExit:\n    pass")
    assert not _tops(mods) & {*HEAVY, "numpy", "pyarrow", "duckdb", "pydantic"}, sorted(_tops(mods) & {*HEAVY})
    light = {"evalcore.importers.frame", "evalcore.importers.recorded", "evalcore.importers.defaults"}
    assert not any(m.startswith("evalcore.importers.") and m not in light for m in mods)
    mods = _loaded("from evalcore.cli import cli\ntry:\n    cli(['--help'])\nexcept SystemExit:\n    pass")
    assert not _tops(mods) & {*HEAVY, "duckdb", "pydantic"}


def test_runs_loads_what_it_uses_only(tmp_path):
    from conftest import DEMO

    mods = _loaded(
        "from evalcore.cli import cli\n"
        f"try:\n    cli(['--data', {str(DEMO)!r}, '--state', {str(tmp_path / 'st')!r}, 'runs', '--json'])\n"
        "except SystemExit:\n    pass"
    )
    assert {"duckdb", "pydantic"} <= _tops(mods)  # what it reads with
    assert not _tops(mods) & set(HEAVY), sorted(_tops(mods) & set(HEAVY))
    assert "evalcore.analysis.charts" not in mods and "evalcore.importers.tabular" not in mods


def test_the_lazy_doors_give_every_name_they_list():
    """`evalcore`, `evalcore.analysis` and `evalcore.importers` import their names on first use:
    every name in their __all__ resolves (a name whose module moved would fail here, not in a page)."""
    import importlib

    for pkg in ("evalcore", "evalcore.analysis", "evalcore.importers"):
        m = importlib.import_module(pkg)
        missing = [n for n in m.__all__ if getattr(m, n, None) is None]
        assert missing == [], (pkg, missing)


def test_the_apps_first_page_loads_no_library_it_does_not_draw_with(tmp_path):
    """The app's first page (Home since issue 39; it was Runs) in AppTest, in its own process:
    pandas, but neither scipy, statsmodels, altair nor litellm."""
    from conftest import DEMO, REPO

    code = (
        "import os, sys\n"
        f"os.environ['EVALCORE_DATA'] = {str(DEMO)!r}; os.environ['EVALCORE_STATE'] = {str(tmp_path / 'st')!r}\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(REPO / 'app.py')!r}, default_timeout=60); at.run()\n"
        "assert not at.exception, at.exception\n"
    )
    tops = _tops(_loaded(code))
    assert "streamlit" in tops and "pandas" in tops
    assert not tops & {"scipy", "statsmodels", "altair", "litellm", "krippendorff"}, sorted(tops)
