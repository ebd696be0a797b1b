"""Where a run's verdicts and answers came from (evalcore.analysis.provenance, issue 41): the demo stays
SIMULATED on the Association page and in the sidebar; the words for a real model and its server. The real
model's own run is labelled in tests/test_real_model_label.py."""

from __future__ import annotations

import html

from conftest import DEMO

from evalcore.analysis.provenance import provenance, real_model, run_provenance


def test_real_model_words_name_the_model_and_the_servers_host():
    assert real_model("smollm2-135m-instruct", "http://127.0.0.1:41234/v1") == (
        "real model: smollm2-135m-instruct on 127.0.0.1"
    )
    assert real_model("m", "http://localhost:8000") == "real model: m on localhost"
    assert real_model("gpt-4o-2024-08-06", None) == "real model: gpt-4o-2024-08-06"  # a provider: no server


def test_the_demos_runs_are_simulated():
    from evalcore import Store, data_overview

    store = Store(DEMO, DEMO.parent / "no-state")
    for run_id in store.ids("run"):
        p = run_provenance(store, run_id)
        assert (p.judge, p.answers, p.simulated) == ("SIMULATED", "SIMULATED", True), run_id
        assert p.label == "SIMULATED: made by evalcore's simulator"
    ov = data_overview(store)
    assert ov.simulated and {"generations", "runs"} <= set(ov.simulated_kinds) and ov.real_models == []


def test_the_association_page_on_the_demo_says_simulated(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(DEMO.parents[1] / "app.py"), default_timeout=120)
    at.switch_page("pages/3_association.py")
    at.run()
    assert not at.exception, at.exception
    captions = html.unescape(" ".join(str(e.value) for e in at.caption))
    for run_id in ("support-single", "support-split"):
        assert f"{run_id}: SIMULATED: made by evalcore's simulator" in captions
    badges = " ".join(str(e.value) for e in at.sidebar.markdown)
    assert "SIMULATED demo data" in badges and "real model" not in badges


def test_a_real_judge_of_simulated_answers_and_an_imported_run_say_so():
    """The demo's manifests with what `evalcore judge` and `evalcore import` write in their place."""
    from evalcore import Store

    store = Store(DEMO, DEMO.parent / "no-state")
    demo_run, demo_gen = store.run("support-split").manifest, store.generation("support-g1").manifest
    judged = demo_run.model_copy(
        update={
            "source": "judged",
            "simulated": False,
            "judge_model": "smollm2-135m-instruct",
            "knobs": {"api_base": "http://127.0.0.1:5000/v1"},
        }
    )
    p = provenance(judged, demo_gen, True)
    assert p.label == "verdicts: real model: smollm2-135m-instruct on 127.0.0.1; answers (support-g1): SIMULATED"
    generated = demo_gen.model_copy(
        update={
            "source": "generated",
            "simulated": False,
            "knobs": {"requested_model": "openai/gpt-4o", "reported_models": ["gpt-4o-2024-08-06"]},
        }
    )
    p = provenance(judged, generated, False)
    assert (p.answers, p.simulated) == ("real model: gpt-4o-2024-08-06", False)
    imported = demo_run.model_copy(update={"source": "imported", "simulated": False, "judge_model": "Beluga-13B"})
    assert provenance(imported, demo_gen, True).judge == "imported: Beluga-13B"
