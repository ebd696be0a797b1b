"""evalcore.pairwise.blinding: normalisation, length matching, surface features and the identifiability
check, on texts whose tells are planted by hand."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore import pairwise as B
from evalcore.pairwise import leakage as L

RAW = """## Resetting your password

Here is how.



- Open the sign-in page.
* Enter your email.
• Follow the link.
1. Pick a new password.
2) Sign in again.

Setext title
============

Done.   """


def test_normalise_strips_each_tell_and_keeps_the_words():
    out = B.normalise(RAW)
    assert out == ("Resetting your password\n\nHere is how.\n\nOpen the sign-in page.\nEnter your email.\n"
                   "Follow the link.\nPick a new password.\nSign in again.\n\nSetext title\n\nDone.")
    assert B.normalise(out) == out  # idempotent
    f = B.surface_features(out)
    assert f["headings"] == 0 and f["bullets"] == 0 and f["blank_lines"] == 0
    assert f["length"] == B.word_count(RAW) - 7  # '##', five glyphs / numbers and the ==== line


def test_normalise_steps_are_separate():
    assert B.normalise(RAW, []) == RAW
    only_h = B.normalise(RAW, ["headings"])
    assert "## " not in only_h and "- Open" in only_h and "\n\n\n\n" in only_h
    only_b = B.normalise(RAW, ["bullets"])
    assert "## Resetting" in only_b and "\nOpen the sign-in page." in only_b
    only_blank = B.normalise(RAW, ["blank-lines"])
    assert "\n\n\n" not in only_blank and "## Resetting" in only_blank and only_blank.endswith("Done.")
    with pytest.raises(ValueError, match="unknown normalisation"):
        B.normalise(RAW, ["emoji"])


def test_a_rule_is_not_a_heading_and_closing_hashes_go():
    assert B.normalise("a\n\n---\n\nb") == "a\n\n---\n\nb"  # a thematic break after a blank line stays
    assert B.normalise("### Title ###\ntext") == "Title\ntext"
    assert B.surface_features("Title\n---\ntext")["headings"] == 1


def test_surface_features_by_hand():
    f = B.surface_features(RAW)
    assert f == {"length": B.word_count(RAW), "headings": 2, "bullets": 5, "blank_lines": 1}


def test_trim_to_words_prefers_the_nearest_sentence_end():
    text = "One two three. Four five six seven. Eight nine ten eleven twelve."
    assert B.trim_to_words(text, 7) == "One two three. Four five six seven."
    assert B.trim_to_words(text, 100) == text
    assert B.trim_to_words("a b c d e f g h i j", 4) == "a b c d"  # no sentence end near: cut at the word
    # the nearest end may be past n (within the slack): cutting always short would reverse the tell
    long = " ".join(["w"] * 19) + " end. " + " ".join(["x"] * 10) + "."
    assert B.word_count(B.trim_to_words(long, 19)) == 20


def test_length_match_trims_only_the_longer():
    a, b = "Short answer here.", "A much longer answer. It goes on. And on and on. Until it stops."
    ma, mb = B.length_match(a, b)
    assert ma == a and B.word_count(mb) <= B.word_count(a) + 1 and mb.startswith("A much longer")
    assert B.length_match(b, a) == (mb, a)


def _pairs(rng, n, gap_words, heading_share=(0.0, 0.0)):
    """n pairs of synthetic texts: arm 0 is gap_words longer on average (sd 40) and has a heading
    with its share; sides drawn balanced."""
    def text(arm):
        words = max(5, int(rng.normal(150 + (gap_words if arm == 0 else 0), 40)))
        head = "## Title\n\n" if rng.random() < heading_share[arm] else ""
        return head + " ".join(["word"] * words) + "."
    first = [text(0) for _ in range(n)]
    second = [text(1) for _ in range(n)]
    sides = np.random.default_rng(1).permutation(np.arange(n) < n // 2)
    left = [f if s else g for f, g, s in zip(first, second, sides)]
    right = [g if s else f for f, g, s in zip(first, second, sides)]
    return B.feature_matrix(left), B.feature_matrix(right), sides


def test_identifiability_finds_a_planted_length_tell():
    lf, rf, sides = _pairs(np.random.default_rng(0), 120, gap_words=80)
    r = B.identifiability(lf, rf, sides, seed=3, n_perm=99)
    assert r["identifiable"] and r["interval"][0] > 0.5 and r["p_value"] <= 0.02
    assert r["leaking_feature"] == "length" and r["accuracy"] > 0.8
    assert r["features"]["headings"]["accuracy"] == 0.5  # constant feature: every prediction a tie


def test_identifiability_names_the_heading_when_it_is_the_stronger_tell():
    lf, rf, sides = _pairs(np.random.default_rng(0), 120, gap_words=15, heading_share=(0.95, 0.05))
    r = B.identifiability(lf, rf, sides, seed=3, n_perm=49)
    assert r["leaking_feature"] == "headings"


def test_identifiability_of_identical_arms_contains_chance():
    lf, rf, sides = _pairs(np.random.default_rng(7), 120, gap_words=0)
    r = B.identifiability(lf, rf, sides, seed=3, n_perm=99)
    assert r["interval"][0] <= 0.5 <= r["interval"][1] and not r["identifiable"]
    assert r["leaking_feature"] is None and r["p_value"] > 0.05


def test_identifiability_is_seeded_and_symmetric():
    lf, rf, sides = _pairs(np.random.default_rng(2), 60, gap_words=40)
    a = B.identifiability(lf, rf, sides, seed=11, n_perm=19)
    assert a == B.identifiability(lf, rf, sides, seed=11, n_perm=19)
    # swapping every pair's sides (and the labels with them) changes nothing
    b = B.identifiability(rf, lf, ~np.asarray(sides), seed=11, n_perm=19)
    assert b["accuracy"] == a["accuracy"]


def test_identifiability_with_too_few_pairs_says_why():
    r = B.identifiability(np.zeros((3, len(B.FEATURES))), np.zeros((3, len(B.FEATURES))), [True, False, True], seed=0)
    assert r["accuracy"] is None and "too few" in r["reason"]
    assert "not measured" in B.describe(r)


def _tagged(rng, n, tag, glue=" ", share=1.0):
    """n pairs of texts drawn from one vocabulary and one length distribution; arm 0's answers open
    with ``tag`` (a share of them); sides drawn balanced. (left texts, right texts, sides)"""
    words = "account email link page reset open settings team billing plan".split()

    def text(arm):
        body = " ".join(rng.choice(words, int(rng.integers(40, 90)))).capitalize() + "."
        return tag + glue + body if arm == 0 and tag and rng.random() < share else body

    first, second = [text(0) for _ in range(n)], [text(1) for _ in range(n)]
    sides = np.random.default_rng(1).permutation(np.arange(n) < n // 2)
    return (
        [f if s else g for f, g, s in zip(first, second, sides)],
        [g if s else f for f, g, s in zip(first, second, sides)],
        sides,
    )


@pytest.mark.parametrize(
    ("tag", "glue", "marker"), [("[draft-2]", " ", ("word", "[draft-2]")), ("v2:", "", ("opening", "v2:"))]
)
def test_a_tag_one_arm_puts_on_its_answers_is_the_leaking_feature(tag, glue, marker):
    """Issue 37: one arm's answers carrying a visible tag read "no single feature leaks" (50%): the
    four counts do not see a word. The marker is found without the key and leaks."""
    lt, rt, sides = _tagged(np.random.default_rng(0), 40, tag, glue)
    m = L.find_marker(lt, rt)
    assert (m["kind"], m["text"], m["pairs"]) == (*marker, 40)
    r = B.identifiability(B.feature_matrix(lt, m), B.feature_matrix(rt, m), sides, seed=3, marker=m, n_perm=49)
    assert r["identifiable"] and r["accuracy"] == 1.0 and r["leaking_feature"] == "marker"
    assert r["features"]["length"]["interval"][0] <= 0.5  # the tag adds a word at most: length does not tell
    assert B.describe(r).endswith(
        f'leaking feature: the {marker[0]} "{marker[1]}" (a marker: in one answer of 40 of 40 pairs)'
    )
    # without the marker column (the check before issue 37) nothing leaks
    old = B.identifiability(B.feature_matrix(lt), B.feature_matrix(rt), sides, seed=3, n_perm=49)
    assert not old["identifiable"] and "no single feature leaks" in B.describe(old)


def test_a_marker_is_one_answer_of_most_pairs_and_chosen_without_the_key():
    rng = np.random.default_rng(5)
    lt, rt, sides = _tagged(rng, 40, "[x]", share=0.4)  # in one answer of about 16 pairs: not most
    assert L.find_marker(lt, rt) is None
    lt, rt, sides = _tagged(rng, 40, "[x]", share=0.8)
    m = L.find_marker(lt, rt)
    assert m["text"] == "[x]" and 20 < m["pairs"] < 40
    assert L.find_marker(rt, lt) == m  # the sides (the key) do not enter its choice
    lt, rt, sides = _tagged(rng, 40, None)  # arms from one distribution: no word or opening is a marker
    assert L.find_marker(lt, rt) is None
    assert B.feature_matrix(lt)[:, B.FEATURES.index("marker")].tolist() == [0.0] * 40
