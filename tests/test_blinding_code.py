"""Normalisation leaves code byte for byte (evalcore.pairwise.blinding.structure: markdown-it-py
decides what is code) while it normalises the prose around it. Each test fails on the line
regexes this replaced, which ignored fences: inside a fenced block ``# install first`` became
``install first`` and a diff line lost its ``-``."""

from __future__ import annotations

import pytest

from evalcore import pairwise as B

BACKTICK_FENCE = """## Installing

Run this first:

```bash
# install first
pip install evalcore\u0020\u0020\u0020
- not a bullet
1. not a list


## not a heading
```

- Then sign in."""

TILDE_DIFF = """### The change ###

~~~diff
--- a/config.toml
+++ b/config.toml
@@ -1,2 +1,2 @@
- timeout = 5
+ timeout = 30
~~~



* Restart the service."""


def _block(text: str, opener: str, closer: str) -> str:
    start = text.index(opener)
    return text[start : text.index(closer, start + len(opener)) + len(closer)]


@pytest.mark.parametrize(
    ("text", "opener", "closer"),
    [(BACKTICK_FENCE, "```bash", "\n```"), (TILDE_DIFF, "~~~diff", "\n~~~")],
    ids=["backticks-bash", "tildes-diff"],
)
def test_fenced_code_is_kept_byte_for_byte_and_the_prose_is_normalised(text, opener, closer):
    out = B.normalise(text)
    block = _block(text, opener, closer)
    assert block in out  # the fence, its language tag, trailing spaces and blank lines included
    before, after = out.split(block)
    for prose in (before, after):
        assert "#" not in prose and "- Then" not in prose and "* Restart" not in prose
        assert "\n\n\n" not in prose
    assert B.normalise(out) == out  # idempotent


def test_comments_and_diff_lines_inside_a_fence_survive_every_step():
    for steps in (["headings"], ["bullets"], ["blank-lines"], list(B.NORMALISATIONS)):
        out = B.normalise(BACKTICK_FENCE, steps)
        assert "\n# install first\n" in out and "\n- not a bullet\n1. not a list\n" in out
        assert "\n## not a heading\n" in out and "pip install evalcore   \n" in out
        diff = B.normalise(TILDE_DIFF, steps)
        assert "\n- timeout = 5\n+ timeout = 30\n" in diff and "\n--- a/config.toml\n+++ b/config.toml\n" in diff
    assert B.normalise(BACKTICK_FENCE).startswith("Installing\n\nRun this first:\n\n```bash\n")
    assert B.normalise(TILDE_DIFF).startswith("The change\n\n~~~diff\n")
    assert B.normalise(TILDE_DIFF).endswith("~~~\n\nRestart the service.")


def test_indented_code_is_kept():
    text = "Intro.\n\n    # a shell comment\n    - a dash   \n\n\n\n## Next\n\nDone."
    out = B.normalise(text)
    assert out == "Intro.\n\n    # a shell comment\n    - a dash   \n\nNext\n\nDone."


def test_inline_code_is_kept():
    assert B.normalise("- Use `#  keep` and `-  x`   ") == "Use `#  keep` and `-  x`"
    # a code span over two lines keeps its second line's bullet glyph and its trailing spaces
    text = "Say `a  \n\u2022 b` now\n\n\n\nend"
    assert B.normalise(text) == "Say `a  \n\u2022 b` now\n\nend"
    st = B.structure(text)
    assert 1 in st.starts_in_code and 0 in st.ends_in_code


def test_an_unclosed_fence_runs_to_the_end():
    text = "Look:\n\n```\n# all of this is code\n- to the end   "
    assert B.normalise(text) == text


def test_code_is_not_counted_as_formatting():
    plain = B.surface_features("# A\n- b\n\n\n\nc")
    fenced = B.surface_features("```\n# A\n- b\n\n\n\nc\n```")
    assert plain["headings"] == 1 and plain["bullets"] == 1 and plain["blank_lines"] == 1
    assert fenced["headings"] == 0 and fenced["bullets"] == 0 and fenced["blank_lines"] == 0


def test_a_rule_after_a_fence_is_not_a_setext_underline():
    text = "```\ncode\n```\n---\nafter"
    assert B.normalise(text) == text
