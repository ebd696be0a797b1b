"""CSV that attacks whoever opens it is neutralised (OWASP's CSV injection advice) in every CSV
evalcore writes: the CLI's label exports (gold, --wide, --history) and the app's downloads, which
go through the same functions. A cell that starts with = + - @, a tab or a carriage return gets a
leading ' (a spreadsheet then shows it as text); plain numbers such as -1 are left alone."""

from __future__ import annotations

import csv
import io

import pytest

from evalcore import LabelStore, Store
from evalcore.storage.export import csv_cell, csv_text, export_labels

ATTACKS = ['=HYPERLINK("http://127.0.0.1:9/x","click")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
           "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


@pytest.mark.parametrize("text", ATTACKS)
def test_formula_starts_get_a_quote(text):
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("text", ["-1", "+0.5", "-2.5e-3", "3", "plain", "a=b", ""])
def test_numbers_and_plain_text_are_left_alone(text):
    assert csv_cell(text) == text


def test_notes_reviewers_and_tags_are_neutralised_in_every_label_export(tiny, ev):
    data, state = tiny
    for k, attack in enumerate(ATTACKS):
        code, _, err = ev("--data", data, "--state", state, "labels", "add", "--item", f"i{k % 3}", "--criterion", "ok",
                          "--value", "pass", "--reviewer", attack, "--note", attack, "--tag", attack)
        assert code == 0, err
    for flags in ([], ["--wide"], ["--history"]):
        code, out, err = ev("--data", data, "--state", state, "labels", "export", "--format", "csv", *flags)
        assert code == 0, err
        cells = [c for row in csv.reader(io.StringIO(out)) for c in row]
        assert cells, flags
        dangerous = [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and not _number(c))]
        assert dangerous == [], (flags, dangerous[:3])
        for attack in ATTACKS:  # the text itself is kept, behind the quote
            assert any(attack.strip() in c for c in cells), (flags, attack)
    # the app's downloads call the same functions (Labels and Review pages: export_labels; shipped: csv_text)
    ls = LabelStore(Store(data, state))
    text = export_labels(ls, "csv", None, history=True)
    assert "'=HYPERLINK(" in text
    assert csv_text(["note"], [{"note": ATTACKS[0]}]).splitlines()[1].startswith("'=") or \
        csv_text(["note"], [{"note": ATTACKS[0]}]).splitlines()[1].startswith("\"'=")


def _number(c: str) -> bool:
    try:
        float(c)
        return True
    except ValueError:
        return False
