"""Output of a real model is labelled as a real model's, never SIMULATED (issue 41); the demo stays SIMULATED.

SmolLM2-135M-Instruct on node-llama-cpp behind tests/llm_server/server.mjs (tests/llm_util.py; `make llm`)
answers two questions of the demo's (simulated) suite `support`, copied alone into a fresh data directory as
the live experiment does (tests/llm_server/live-demo.sh), and judges them in one call each: 2 generation
calls and 2 judge calls (plus a probe, if the commands negotiate a form). Then evalcore.analysis.run_provenance,
the sidebar's badges (evalcore.data_overview) and the Association page on that run say "real model:
smollm2-135m-instruct on 127.0.0.1" and that only the questions are simulated.
"""

from __future__ import annotations

import html
import shutil

import pytest
from conftest import DEMO
from llm_util import MODEL_NAME, LocalLLM, missing, unavailable

MODEL = f"openai/{MODEL_NAME}"
REAL = f"real model: {MODEL_NAME} on 127.0.0.1"
ONE = """name = "support-1"

[[criteria]]
name = "answers_question"
kind = "binary"
description = "Does the answer address the customer's actual question?"

[[criteria]]
name = "cites_source"
kind = "binary"
description = "Does the answer name or quote the passage it relied on (e.g. [doc-12])?"
"""
CALL = ["--concurrency", "1", "--timeout", "300", "--max-retries", "2", "--allow-polluted", "--seed", "1"]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A data directory holding the demo's suite `support` alone, a generation `live-g` of two answers by the
    real model and a single-call run `live-single` of the real model over them."""
    why = missing()
    if why:
        unavailable(why)
    root = tmp_path_factory.mktemp("live")
    llm = LocalLLM(root)
    data, state = root / "data", root / "state"
    shutil.copytree(DEMO / "suites" / "support", data / "suites" / "support")
    (root / "one.toml").write_text(ONE)
    from evalcore.cli import main

    base = ["--data", str(data), "--state", str(state)]
    steps = [
        ["generate", "--suite", "support", "--model", MODEL, "--limit", "2", "--gen-id", "live-g"],
        ["judge", "--gen", "live-g", "--rubric", str(root / "one.toml"), "--mode", "single", "--model", MODEL],
    ]
    try:
        for step, extra in zip(steps, [["--max-tokens", "120"], ["--run-id", "live-single", "--max-tokens", "160"]]):
            try:
                main([*base, *step, *extra, "--api-base", llm.url, *CALL])
            except SystemExit as e:
                assert not e.code, step
    finally:
        llm.stop()
    return data, state


def test_the_real_models_run_is_labelled_real_not_simulated(live):
    from evalcore import Store, analysis, data_overview

    store = Store(*live)
    p = analysis.run_provenance(store, "live-single")
    assert (p.judge, p.answers) == (REAL, REAL)
    assert p.questions_simulated and p.simulated  # the questions are the demo's simulated suite's
    assert p.label == f"{REAL} (answers and verdicts); the questions are the SIMULATED suite support's"
    ov = data_overview(store)
    assert ov.simulated_kinds == ["suites"] and ov.real_models == [REAL]


def test_the_association_page_and_sidebar_say_real_model(live, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(live[0]))
    monkeypatch.setenv("EVALCORE_STATE", str(live[1]))
    at = AppTest.from_file(str(DEMO.parents[1] / "app.py"), default_timeout=120)
    at.switch_page("pages/3_association.py")
    at.query_params.update({"runs": "live-single", "a": "answers_question", "b": "cites_source"})
    at.run()
    assert not at.exception, at.exception
    shown = html.unescape(" ".join(str(e.value) for e in [*at.markdown, *at.caption]))
    assert f"live-single: {REAL} (answers and verdicts)" in shown
    assert f"{REAL}" in " ".join(str(e.value) for e in at.sidebar.markdown)  # the sidebar's badge
    assert "SIMULATED demo data" not in shown and "SIMULATED: made by" not in shown
