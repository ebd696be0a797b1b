"""Markdown meant to be posted on a pull request (``gate --markdown``, ``compare --markdown``, the
ledger's export) holds data strings as text: rendered as CommonMark with GFM tables
(markdown-it-py), no image, link, script or other tag comes from the data, and no address is left
for GitHub's literal autolinks to find. The world: every free string of tests/browser_util.py's
make_world holds HTML, Markdown images and links, a javascript: URL and autolinks; a ledger entry's
title, author and note too."""

from __future__ import annotations

import re

import pytest
from browser_util import RUN_SINGLE, make_world
from markdown_it import MarkdownIt

from evalcore.contract.markdown import md_text

PAYLOAD = (' <img src="http://127.0.0.1:9/x.png"> ![m](http://127.0.0.1:9/m.png) [go](javascript:alert(1))'
           " <http://127.0.0.1:9/auto> www.example.org ann@example.org <script>x=1</script> <b>bold</b> |cell|"
           " *em* _em_ `code` $x$ ~~s~~")
_TAGS = re.compile(r"<(img|a|script|b|iframe|svg|em|strong|code|del)\b", re.I)
_ADDRESS = re.compile(r"(?i)(?<![\w\u2060])(https?:|ftp:|mailto:|www\.)|[\w.+-]@[\w-]")


def _render(md: str) -> str:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(md)


def test_md_text_is_inert():
    html = _render("- " + md_text("x" + PAYLOAD) + "\n\n| a |\n|---|\n| " + md_text(PAYLOAD) + " |\n")
    assert not _TAGS.search(html), html
    assert not _ADDRESS.search(md_text(PAYLOAD))
    assert "&lt;img" in html and "![m](" in html.replace("\\", "")  # the text itself is all there
    assert html.count("<td>") == 1  # the | inside the cell did not make more cells


@pytest.fixture
def hostile(tmp_path, ev):
    data = make_world(tmp_path / "data", strings=lambda tag: PAYLOAD, simulated=False)
    state = tmp_path / "state"
    code, _, err = ev("--data", data, "--state", state, "ledger", "add", "--title", "t" + PAYLOAD, "--by", "b" + PAYLOAD,
                      "--baseline", "t-split", "--candidate", RUN_SINGLE, "--note", "n" + PAYLOAD)
    assert code == 0, err
    return data, state


def test_gate_compare_and_ledger_markdown_hold_data_as_text(hostile, ev, tmp_path):
    data, state = hostile
    out = tmp_path / "gate.md"
    allow = tmp_path / "allow.txt"  # an owner (one word) that is markup
    allow.write_text("q1 ![m](http://127.0.0.1:9/o.png)<b>x</b>www.example.org 2099-01-01 known\n")
    code, _, err = ev("--data", data, "--state", state, "gate", "t-split", RUN_SINGLE, "--markdown", out,
                      "--allowlist", allow)
    assert code in (0, 1), err
    code, compare_md, err = ev("--data", data, "--state", state, "compare", "t-split", RUN_SINGLE, "--markdown")
    assert code == 0, err
    code, ledger_md, err = ev("--data", data, "--state", state, "ledger", "export")
    assert code == 0, err
    for name, md in (("gate", out.read_text()), ("compare", compare_md), ("ledger", ledger_md)):
        html = _render(md)
        tags = [m.group(0) for m in _TAGS.finditer(html)]
        assert tags == [] or set(t.lower() for t in tags) <= {"<strong", "<code"}, (name, tags)
        # <strong> and <code> are evalcore's own (bold verdicts, ids in code spans): none holds the payload
        for m in re.finditer(r"<(strong|code)>(.*?)</\1>", html, re.S):
            assert "img" not in m.group(2) or "&lt;img" in m.group(2), (name, m.group(0))
        assert not _ADDRESS.search(md), (name, _ADDRESS.search(md).group(0))
    # the data's text is there, inert (compare's Markdown holds no free string of this world: its
    # runs share judge and knobs, so only the gate's allowlist and the ledger carry one)
    assert "&lt;img" in ledger_md and "&lt;b&gt;x&lt;/b&gt;" in out.read_text()
