"""Caveats said where their figure is (issue 44): the curated suite's caption on the command line's
attribution too (`caveats` in --json, a line in the text), the frozen set's caveat, and the
document axis of retrieval criteria (evalcore.analysis.caveats), on the demo and on an import,
and once each on the Attribution page."""

from __future__ import annotations

import html
import json

import pytest
from conftest import DEMO
from streamlit.testing.v1 import AppTest

from evalcore.analysis.caveats import curated_text

FROZEN = "Measured on the frozen items of suite {}: these figures say nothing about inputs unlike those items"


def test_the_demo_attribution_says_the_frozen_set(ev, tmp_path):
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "s", "attribution", "support-single", "--json")
    assert code == 0, err
    c = json.loads(out)["caveats"]
    assert c["curated"] is None and c["document_axis"] is None and c["frozen"].startswith(FROZEN.format("support"))
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "s", "attribution", "support-single")
    assert code == 0 and out.count(FROZEN.format("support")) == 1, err


def _imported(ev, tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(
        "item_id,input,output,criterion,value,retrieved_doc_ids,expected_doc_ids\n"
        "q1,Refund?,Yes in 5 days.,helpful,pass,d1|d2,d1\nq2,Fee?,1 EUR.,helpful,fail,d3|d4,d1\n"
        "q3,Hours?,9-5.,helpful,pass,d5,d5\n",
        encoding="utf-8",
    )
    rubric = tmp_path / "retrieval.toml"
    rubric.write_text(
        'name = "retrieval"\n[[criteria]]\nname = "recall2"\nkind = "retrieval"\nk = 2\nthreshold = 0.5\n'
    )
    d, s = tmp_path / "d", tmp_path / "s"
    for args in (["import", "long", f, "--run-id", "mine", "--curated"],
                 ["judge", "--gen", "r", "--rubric", rubric, "--mode", "split", "--model", "none", "--run-id", "ret",
                  "--quiet"]):  # fmt: skip
        code, _, err = ev("--data", d, "--state", s, *args, "--json")
        assert code == 0, err
    return d, s


def test_an_import_of_a_curated_suite_with_retrieval(ev, tmp_path):
    d, s = _imported(ev, tmp_path)
    code, out, err = ev("--data", d, "--state", s, "attribution", "ret", "--json")
    assert code == 0, err
    c = json.loads(out)["caveats"]
    assert c["curated"] == curated_text(["r"])
    assert c["document_axis"].startswith("recall2 scored on documents (the expected document ids): the right document")
    code, out, err = ev("--data", d, "--state", s, "attribution", "mine")
    assert code == 0 and out.count(curated_text(["r"])) == 1 and "scored on documents" not in out, err


@pytest.mark.app
def test_the_attribution_page_says_each_once(ev, tmp_path, monkeypatch):
    d, s = _imported(ev, tmp_path)
    monkeypatch.setenv("EVALCORE_DATA", str(d))
    monkeypatch.setenv("EVALCORE_STATE", str(s))
    at = AppTest.from_file(str(DEMO.parent.parent / "app.py"), default_timeout=60)
    at.query_params.update(run="ret")
    at.run()
    at.switch_page("pages/2_attribution.py").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [html.unescape(c.value) for c in at.caption]
    for needle in (curated_text(["r"]), FROZEN.format("r"), "recall2 scored on documents"):
        assert sum(needle in c for c in captions) == 1, (needle, captions)


def test_the_curated_caption_is_on_the_other_figures_the_pages_caption(ev, tmp_path):
    """association, flips and agreement carry `curated` as the Association, Harness and Agreement
    pages carry its caption: null on the demo, the caption (once, in the text too) on a curated import."""
    for args in (["association", "support-single", "support-split", "--n-boot", "50"],
                 ["flips", "support-single", "support-split"], ["agreement", "--gen", "accounts-g1", "--n-boot", "50"]):
        code, out, err = ev("--data", DEMO, "--state", tmp_path / "demo-s", *args, "--json")
        assert code == 0, err
        assert json.loads(out)["curated"] is None, args
    d, s = _imported(ev, tmp_path)
    code, _, err = ev("--data", d, "--state", s, "judge", "--gen", "r", "--rubric", tmp_path / "retrieval.toml",
                      "--mode", "split", "--model", "none", "--run-id", "ret2", "--quiet", "--json")
    assert code == 0, err
    two = tmp_path / "two.csv"  # a second curated suite, of two criteria (association needs two)
    two.write_text("item_id,input,output,criterion,value\n" + "".join(
        f"t{k},Q{k}?,A{k}.,{c},{'pass' if (k + j) % 3 else 'fail'}\n" for k in range(6) for j, c in enumerate("ab")))
    code, _, err = ev("--data", d, "--state", s, "import", "long", two, "--run-id", "two", "--curated", "--json")
    assert code == 0, err
    for args, suite in ((["association", "two", "--n-boot", "50"], "two"), (["flips", "ret", "ret2"], "r"),
                        (["agreement", "--gen", "r", "--n-boot", "50"], "r")):
        code, out, err = ev("--data", d, "--state", s, *args, "--json")
        assert code == 0, (args, err)
        assert json.loads(out)["curated"] == curated_text([suite]), args
        code, out, err = ev("--data", d, "--state", s, *args)
        assert code == 0 and out.count(curated_text([suite])) == 1, (args, err)
