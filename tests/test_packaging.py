"""An installed evalcore stands on its own (issue 12): ``pip install <repo>`` into a fresh virtual
environment in a temporary directory outside the repository, then the commands a new user runs
first. The bundled SIMULATED demo comes with the package (found through package resources);
the demo's keys never do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(REPO)],
                       capture_output=True, text=True, cwd=root)
    if r.returncode != 0:
        pytest.fail(f"pip install failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return venv


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd), "LITELLM_OFFLINE_MODE": "true"}
    return subprocess.run([str(venv / "bin" / "evalcore"), *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_demo_then_runs_from_a_wheel_outside_the_repository(installed, tmp_path):
    site = next((installed / "lib").glob("python3*/site-packages"))
    assert not (site / "evalcore" / "__init__.py").is_relative_to(REPO)
    out = _run(installed, "demo", "--out", str(tmp_path / "D"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    runs = _run(installed, "--data", str(tmp_path / "D"), "runs", "--json", cwd=tmp_path)
    assert runs.returncode == 0, runs.stderr
    got = {r["run_id"]: r["calls"] for r in json.loads(runs.stdout)}
    want = {r["run_id"]: r["calls"] for r in json.loads((REPO / "tests" / "golden" / "cli" / "runs.json").read_text())}
    assert got == want


def test_the_bundled_demo_is_found_through_package_resources(installed, tmp_path):
    site = next((installed / "lib").glob("python3*/site-packages"))
    bundled = site / "evalcore" / "demo" / "data"
    assert (bundled / "suites" / "support" / "items.parquet").is_file()
    assert not any(p.name.startswith("key") for p in site.rglob("key*.parquet")), "a key was packaged"
    assert (site / "evalcore" / "py.typed").is_file()
    default = _run(installed, "runs", "--json", cwd=tmp_path)  # no --data: the bundled demo
    assert default.returncode == 0, default.stderr
    assert len(json.loads(default.stdout)) == 12
    as_module = subprocess.run([str(installed / "bin" / "python"), "-m", "evalcore", "--version"],
                               capture_output=True, text=True, cwd=tmp_path)
    assert as_module.returncode == 0 and "evalcore, version" in as_module.stdout
