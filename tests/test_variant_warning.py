"""Issue 15: the "evaluate each criterion independently" prompt variant is warned about wherever a
run with it is used: its run listing, attribution, the association, harness flips, the comparison's
knob diff, the report card, the Runs and attribution pages, and `evalcore judge` when asked for it
(tests/test_judge.py)."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import DEMO, EVALCORE

RUN = "support-single-indep"
PHRASE = "evaluate each criterion independently, in one call"


def _json(tmp_path, *args):
    r = subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), *args, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_every_figure_of_an_independent_variant_run_carries_the_warning(tmp_path):
    runs = {r["run_id"]: r for r in _json(tmp_path, "runs")}
    assert runs[RUN]["prompt_variant"] == "independent" and PHRASE in runs[RUN]["variant_warning"]
    assert all(r["variant_warning"] is None for k, r in runs.items() if r["prompt_variant"] != "independent")
    assert PHRASE in _json(tmp_path, "attribution", RUN)["variant_warning"]
    assert "variant_warning" not in _json(tmp_path, "attribution", "support-single")
    assert any(PHRASE in w for w in _json(tmp_path, "association", RUN, "support-split")["warnings"])
    assert not any(PHRASE in w for w in _json(tmp_path, "association", "support-single", "support-split")["warnings"])
    assert any(PHRASE in w for w in _json(tmp_path, "flips", RUN, "support-split")["warnings"])
    assert any(PHRASE in w for w in _json(tmp_path, "diff", "support-single", RUN)["warnings"])
    (card,) = _json(tmp_path, "agreement", "--gen", "support-g1", "--n-boot", "20")["generations"]
    assert sum(PHRASE in w for w in card["warnings"]) == 1  # the report card: once, for that run
    text = subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), "attribution", RUN],
                          capture_output=True, text=True).stdout
    assert text.startswith("WARNING: run support-single-indep asks its judge")


@pytest.mark.parametrize("page, params", [("pages/1_runs.py", {}), ("pages/2_attribution.py", {"run": RUN})])
def test_the_pages_show_it(tmp_path, monkeypatch, page, params):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(DEMO.parent.parent / "app.py"), default_timeout=60)
    at.run()
    at.switch_page(page)
    at.query_params.update(**params)
    at.run()
    assert not at.exception
    assert any("evaluate each criterion independently" in w.value for w in at.warning)


@pytest.mark.parametrize("variant, text, mode, warned", [
    ("independent", "", "single", True),  # the variant by name
    ("default", "Judge every criterion independently of the others.", "single", True),  # by its words
    ("default", "Evaluate each criterion independently.", "grouped", True),
    ("default", "Judge the answer against the rubric.", "single", False),
    ("independent", "", "split", False),  # each criterion has its own call: nothing to warn about
])
def test_the_warning_reads_the_prompts_words_and_the_harness(variant, text, mode, warned):
    from evalcore.analysis.selection import variant_warning

    w = variant_warning("r", variant, text, mode)
    assert (w is not None) == warned
    if w:
        # seed 000: the instruction moves the association little; its harm is the claim it makes
        assert "worse" not in w and "moves the association between criteria little" in w
        assert ("(its prompt says so)" in w) == (variant != "independent")
