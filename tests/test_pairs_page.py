"""The Pairwise grading and Pairwise results pages through AppTest, and the key out of the app's
reach.

* Over random sessions with random-UUID arm names: grading by button records judgments with
  their time and resumes where it left off; no arm name appears in anything the pages render
  or keep in session state while the session is open; the results page shows nothing (and
  offers no download) until the session is closed.
* The optional probe at the end; a closed session takes no judgment and shows its results.
* A Python audit hook (``sys.addaudithook``, events ``open``, ``os.listdir``, ``os.scandir``)
  sees no access to any path under the keys directory while the app runs with the keys present
  beside the data (the default place); the same hook does see ``evalcore.pairwise.grading.read_key``.
* No page or app.py source names a key reader, and the app takes no keys option.
"""

from __future__ import annotations

import ctypes
import html
import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_pairs import key_rows, make_world, random_session

from evalcore import pairwise as P
from evalcore.storage.paths import default_keys_dir

pytestmark = pytest.mark.app

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")


def rendered(at: AppTest) -> str:
    """Everything the page rendered (every element's protobuf as text)."""
    out: list[str] = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def state_text(at: AppTest) -> str:
    st = at.session_state._state.filtered_state
    return repr({k: st[k] for k in st})


def no_arm(text: str, arms) -> None:
    for a in arms:
        assert a.lower() not in text.lower(), a
        assert a.replace("-", "").lower() not in text.lower(), a


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_app(w: dict, monkeypatch, **query) -> AppTest:
    monkeypatch.setenv("EVALCORE_DATA", str(w["data"]))
    monkeypatch.setenv("EVALCORE_STATE", str(w["state"]))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update(query)
    return at


def grading(at: AppTest) -> AppTest:
    at.run()
    at.switch_page("pages/7_pairwise_grading.py").run()
    _ok(at)
    return at


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_grading_by_button_shows_no_arm_and_resumes(tmp_path, monkeypatch, seed):
    w = random_session(tmp_path, seed, n_items=12, mirror=0.25, holdout=2)
    arms, sid = w["arms"], w["session"]
    at = grading(open_app(w, monkeypatch, session=sid))
    assert [t.value for t in at.title] == ["Pairwise grading"]
    assert "Type your name" in at.info[0].value and not at.button
    at.text_input(key="pw_name_0").set_value("Ann Reviewer").run()
    _ok(at)
    assert at.query_params.get("reviewer") == "Ann Reviewer"
    assert not at.text_input  # the name field is gone once named: no shortcut key can type into it
    assert any("Grading as **Ann Reviewer**" in m.value for m in at.markdown)
    total = len(P.load_pairs(w["store"], sid))
    seen = []
    for k, choice in enumerate(["left", "same", "right", "left"]):
        shown = P.progress(w["store"], sid, "Ann Reviewer").next_pair
        view = P.pair_view(w["store"], sid, shown)
        codes = [c.value for c in at.code]
        assert view.left_text in codes and view.right_text in codes  # both answers, as text
        grading_buttons = [b for b in at.button if b.key.startswith("pw_judgment")]
        assert [b.label for b in grading_buttons] == ["Left better", "Same", "Right better"]
        assert [b.proto.shortcut for b in grading_buttons] == ["a", "s", "d"]
        assert [b.key for b in at.button if b.key == "pw_undo"] == (["pw_undo"] if k else [])
        assert at.get("progress")[0].proto.text.startswith(f"{k} of {total} pairs graded")
        no_arm(rendered(at) + state_text(at), arms)
        at.button(key=f"pw_judgment_{choice}").click().run()
        _ok(at)
        seen.append((shown, choice))
    cur = P.JudgmentStore(w["store"]).current(sid, "Ann Reviewer")
    assert [(j["pair_id"], j["choice"]) for j in cur] == seen
    assert all(j["via"] == "app" and j["seconds"] is not None and j["seconds"] >= 0 for j in cur)
    no_arm(rendered(at) + state_text(at), arms)
    # the results page: nothing while open, no download
    at.switch_page("pages/8_pairwise_results.py").run()
    _ok(at)
    assert "is open" in at.info[0].value and not at.dataframe and not at.get("download_button")
    assert not at.metric
    no_arm(rendered(at) + state_text(at), arms)
    # a new visit with the same name resumes at pair 5
    at2 = grading(open_app(w, monkeypatch, session=sid, reviewer="Ann Reviewer"))
    assert at2.get("progress")[0].proto.text.startswith(f"4 of {total} pairs graded")
    assert P.progress(w["store"], sid, "Ann Reviewer").next_pair not in {s for s, _ in seen}


def test_probe_at_the_end_then_closed(tmp_path, monkeypatch):
    w = random_session(tmp_path, 21, n_items=8, mirror=0.0, holdout=0)
    sid, st = w["session"], w["store"]
    at = grading(open_app(w, monkeypatch, session=sid, reviewer="bo"))
    for _ in range(8):
        at.button(key="pw_judgment_same").click().run()
        _ok(at)
    assert any("graded every pair" in s.value for s in at.success)
    # the probe is its own step: entered with a button, and nothing on the way has a grading key
    assert [b.label for b in at.button] == ["Change name", "Undo my last choice", "Answer the probe", "Skip the probe"]
    assert [b.proto.shortcut for b in at.button if b.key != "pw_undo"] == ["", "", ""]
    assert not [b for b in at.button if b.key.startswith(("pw_probe_left", "pw_probe_right", "pw_probe_unsure"))]
    at.button(key="pw_probe_start").click().run()
    _ok(at)
    assert at.query_params.get("step") == "probe"
    assert [b.label for b in at.button] == ["Change name", "X wrote the left one", "Can't tell",
                                            "X wrote the right one", "Skip the probe"]
    # the grading keys answer a probe (issue 39), once the probe step was entered with its button
    assert [b.proto.shortcut for b in at.button] == ["", "a", "s", "d", ""]
    at.button(key="pw_probe_left").click().run()
    at.button(key="pw_probe_unsure").click().run()
    _ok(at)
    assert [p["guess"] for p in P.JudgmentStore(st).probes(sid, "bo")] == ["left", "unsure"]
    at.button(key="pw_skip_probe").click().run()
    _ok(at)
    assert not [b for b in at.button if b.key.startswith("pw_probe")]
    no_arm(rendered(at) + state_text(at), w["arms"])
    # close from the command line's function; the grading page then refuses, results appear
    P.close_session(st, sid, w["keys"], n_perm=9)
    at = grading(open_app(w, monkeypatch, session=sid, reviewer="bo"))
    assert "closed" in at.info[0].value and [b.key for b in at.button] == ["pw_change_name"]
    at.switch_page("pages/8_pairwise_results.py").run()
    _ok(at)
    assert [t.value for t in at.title] == ["Pairwise results"] and at.dataframe
    assert any("win rate" in m.label for m in at.metric)
    assert [b.label for b in at.get("download_button")] == ["Download the report (JSON)"]
    text = rendered(at)
    assert all(a in text for a in w["arms"])  # unblinded now: the checker above would have seen them
    # one reviewer is "1 person"; every column is named in words (no bare "n", "p" or "share")
    assert any("judgments by 1 person." in html.unescape(c.value) for c in at.caption)
    for f in at.dataframe:
        assert not {"n", "p", "share", "a", "b", "interval"} & set(map(str, f.value.columns)), list(f.value.columns)
    assert [w_ for w_ in [*at.warning, *at.success, *at.info] if html.unescape(w_.value).startswith("Verdict:")]


def test_undo_takes_back_the_last_choice_and_the_pair_comes_back(tmp_path, monkeypatch):
    w = random_session(tmp_path, 23, n_items=6, mirror=0.0, holdout=0)
    sid, st = w["session"], w["store"]
    at = grading(open_app(w, monkeypatch, session=sid, reviewer="cy"))
    first = P.progress(st, sid, "cy").next_pair
    assert not [b for b in at.button if b.key == "pw_undo"]  # nothing to undo yet
    at.button(key="pw_judgment_left").click().run()
    second = P.progress(st, sid, "cy").next_pair
    at.button(key="pw_judgment_right").click().run()
    _ok(at)
    assert at.button(key="pw_undo").proto.shortcut == "u"
    at.button(key="pw_undo").click().run()
    _ok(at)
    assert any("Took back your choice on pair" in c.value for c in at.caption)
    assert at.get("progress")[0].proto.text.startswith("1 of 6 pairs graded")
    assert P.progress(st, sid, "cy").next_pair == second  # the undone pair is shown again
    at.button(key="pw_judgment_same").click().run()
    cur = P.JudgmentStore(st).current(sid, "cy")
    assert [(j["pair_id"], j["choice"]) for j in cur] == [(first, "left"), (second, "same")]
    hist = P.JudgmentStore(st).history(sid)
    assert [(j["choice"], j["withdrawn"]) for j in hist] == [("left", 0), ("right", 1), ("same", 0)]
    no_arm(rendered(at) + state_text(at), w["arms"])


def test_results_page_on_the_demo_needs_unblinding_in_the_state(monkeypatch, tmp_path):
    demo = REPO / "data" / "demo"
    w = {"data": demo, "state": tmp_path / "state"}
    at = open_app(w, monkeypatch, session="accounts-ab").run()
    at.switch_page("pages/8_pairwise_results.py").run()
    _ok(at)
    assert "not been unblinded" in at.info[0].value and not at.dataframe
    from evalcore.storage.store import Store
    P.close_session(Store(demo, tmp_path / "state"), "accounts-ab", REPO / "data" / "demo-keys")
    at = open_app(w, monkeypatch, session="accounts-ab").run()
    at.switch_page("pages/8_pairwise_results.py").run()
    _ok(at)
    frames = [d.value for d in at.dataframe]
    ident = next(f for f in frames if "leaking feature" in f.columns)
    assert list(ident["leaking feature"]) == ['the word "wrong" (a marker: in one answer of 91 of 120 pairs)'] * 2
    assert any(m.label == "order flips" for m in at.metric)
    # position bias in one place, the figures of `pairs report --json`
    pos = next(f for f in frames if "accuracy vs people's majority" in f.columns)
    rep = P.report(Store(demo, tmp_path / "state"), "accounts-ab")
    (g,) = rep.graders
    assert list(pos["ties"]) == [g.position.orders[o].ties for o in ("as_shown", "swapped")]
    flips = g.position.flips
    assert any(f"towards the answer shown first: {flips.towards_first_shown}" in c.value for c in at.caption)
    # the result is followed by its caveats and the verdict in words, as in `pairs report`
    (verdict,) = [html.unescape(w_.value) for w_ in at.warning if html.unescape(w_.value).startswith("Verdict:")]
    assert verdict == f"Verdict: {rep.verdict.text}" and verdict.startswith("Verdict: Not blind: ")
    assert "the preference cannot be read as blind" in verdict
    cav = next(f for f in frames if "caveat" in f.columns)
    assert list(cav["figure"]) == ["86.7%", "57.5%", "55.2%"]
    assert list(cav["95% interval"]) == ["80.4-92.1%", "50.8-64.0%", "49.1-61.1%"]
    assert any("judgments by 3 people." in html.unescape(c.value) for c in at.caption)
    per_pair = next(f for f in frames if "inconsistent (the orders disagree)" in f.columns)
    assert list(per_pair["inconsistent (the orders disagree)"]) == [18]


AUDIT = textwrap.dedent('''
    import json, os, sys
    keys = os.path.realpath(sys.argv[1])
    hits, seen = [], [0]
    armed = [True]

    def hook(event, args):
        if not armed[0] or event not in ("open", "os.listdir", "os.scandir"):
            return
        path = args[0] if args else None
        if path is None or isinstance(path, int):
            return
        p = os.path.realpath(os.fsdecode(path))
        seen[0] += 1
        if p == keys or p.startswith(keys + os.sep):
            hits.append([event, p])

    sys.addaudithook(hook)
    from streamlit.testing.v1 import AppTest
    app, open_sid, closed_sid = sys.argv[2], sys.argv[3], sys.argv[4]
    at = AppTest.from_file(app, default_timeout=60).run()
    at.switch_page("pages/7_pairwise_grading.py").run()
    at.text_input(key="pw_name_0").set_value("audit").run()
    for _ in range(3):
        at.button(key="pw_judgment_left").click().run()
    at.query_params.clear()  # as a page switch in the browser does
    at.switch_page("pages/8_pairwise_results.py").run()
    frames = len(at.dataframe)
    at.selectbox(key="pr_session").set_value(open_sid).run()
    exceptions = [str(e.value) for e in at.exception]
    app_hits, app_seen = list(hits), seen[0]
    if "--control" in sys.argv:
        from evalcore import pairwise
        pairwise.read_key(keys, closed_sid)  # the control: a key reader is seen by the same hook
    print(json.dumps({"app_hits": app_hits, "seen": app_seen, "control_hits": len(hits) - len(app_hits),
                      "frames": frames, "exceptions": exceptions}))
''')


class Inotify:
    """Linux inotify on a directory tree (ctypes): records every open or read of a file in it, by
    any code, C++ readers (pyarrow, DuckDB) included, which an audit hook does not see."""

    IN_ACCESS, IN_OPEN = 0x1, 0x20

    def __init__(self, root: Path):
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.names = {}
        for d in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
            wd = self.libc.inotify_add_watch(self.fd, str(d).encode(), self.IN_ACCESS | self.IN_OPEN)
            self.names[wd] = d

    def events(self) -> list[str]:
        out = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            i = 0
            while i < len(buf):
                wd, mask, _cookie, n = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16:i + 16 + n].rstrip(b"\0").decode()
                out.append(f"{self.names.get(wd)}/{name} mask={mask:#x}")
                i += 16 + n

    def close(self) -> None:
        os.close(self.fd)


def test_audit_hook_sees_no_access_under_the_keys_directory(tmp_path):
    arms = ("arm-one-7c1f", "arm-two-93ab")
    w = make_world(tmp_path, arms, n_items=14, seed=3)
    keys = default_keys_dir(w["data"])  # the default place, beside the data: present during the run
    assert keys.parent == w["data"].parent
    for sid in ("open-s", "done-s"):
        P.make_session(w["store"], sid, [f"{arms[0]}={w['gens'][0]}", f"{arms[1]}={w['gens'][1]}"], n_perm=9)
    assert (keys / "open-s" / "key.parquet").is_file()
    P.record_judgment(w["store"], "done-s", P.load_pairs(w["store"], "done-s")[0]["pair_id"], "x", "left")
    P.close_session(w["store"], "done-s", keys, n_perm=9)
    script = tmp_path / "audit_run.py"
    script.write_text(AUDIT)
    env = {"EVALCORE_DATA": str(w["data"]), "EVALCORE_STATE": str(w["state"]), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}

    def run(*extra):
        out = subprocess.run([sys.executable, str(script), str(keys), APP, "open-s", "done-s", *extra],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    watch = Inotify(keys)
    try:
        r = run()
        opened = watch.events()
    finally:
        watch.close()
    assert r["exceptions"] == []
    assert r["app_hits"] == []  # the audit hook: no Python open / listdir / scandir under the keys
    assert opened == []  # inotify: no open or read of any file there, by any code
    assert r["seen"] > 100 and r["frames"] > 3  # the hook was live, and the results page did render
    assert len(P.JudgmentStore(w["store"]).current("open-s", "audit")) == 3
    # the controls: both detectors do see a key being read
    assert run("--control")["control_hits"] >= 2  # key.json and blinding.json through Python's open
    watch = Inotify(keys)
    try:
        P.read_key(keys, "done-s")
        seen = watch.events()
    finally:
        watch.close()
    assert any("key.parquet" in e for e in seen) and any("key.json" in e for e in seen)


def test_the_app_never_takes_a_keys_path():
    from pages import _ui
    data, state = _ui.resolve_dirs(["--data", "/tmp/d", "--state", "/tmp/s", "--keys", "/tmp/k"])
    assert (str(data), str(state)) == ("/tmp/d", "/tmp/s")
    forbidden = ("read_key", "close_session", "default_keys_dir", ".keys", "write_key", "KeyManifest",
                 "key.parquet", "key.json", "EVALCORE_KEYS", "blinding.json")
    for f in [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]:
        src = f.read_text(encoding="utf-8")
        for word in forbidden:
            assert word not in src, (f.name, word)


def test_an_unknown_session_in_a_link_is_one_error(tmp_path, monkeypatch):
    w = random_session(tmp_path, 31, n_items=6, mirror=0.0, holdout=0)
    for page in ("7_pairwise_grading.py", "8_pairwise_results.py"):
        at = open_app(w, monkeypatch, session="../../etc").run()
        at.switch_page(f"pages/{page}").run()
        assert not at.exception and not at.error  # an id not in the list is ignored: the first session opens
        key = "pw_session" if page.startswith("7") else "pr_session"
        assert at.selectbox(key=key).value == w["session"]
    assert key_rows(w)
