"""evalcore.labels_version, what the pages' cached figures key on for the label store: it moves with
every label written, on SQLite and on PostgreSQL (where nothing in the state directory changes, so
before it the pages of a team server kept showing the figures of their first render)."""

from __future__ import annotations

import sys
from pathlib import Path

import evalcore
from evalcore import LabelStore, Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def test_a_label_moves_the_version_on_both_backends(tiny, backend):
    data, state = tiny
    store = Store(data, state)
    before = evalcore.labels_version(store)
    assert evalcore.labels_version(store) == before  # reading does not move it
    LabelStore(store).add(item_id="i0", criterion="ok", value="pass", reviewer="ann")
    first = evalcore.labels_version(store)
    assert first != before
    LabelStore(store).add(item_id="i1", criterion="ok", value="fail", reviewer="ann")
    assert evalcore.labels_version(store) not in (before, first)
    if backend.name == "postgres":
        assert first[0] == "postgres" and isinstance(first[1], int)
        assert not (Path(state) / "labels.sqlite").exists()  # nothing in the state directory to stat


def test_the_pages_state_fingerprint_follows_postgresql(tiny, backend):
    from pages import _ui

    data, state = tiny
    store = Store(data, state)
    before = _ui.state_fingerprint(store)
    LabelStore(store).add(item_id="i0", criterion="ok", value="pass", reviewer="ann")
    assert _ui.state_fingerprint(store) != before
