"""Scripted labelling in one process: ``evalcore labels add --from FILE`` (CSV or JSON Lines, or
standard input) checks every edit before writing any, then writes them in batches.

8,000 labels through one invocation are all exported afterwards, each exactly once with its note;
a bad row anywhere refuses the whole file in one line naming the file, the line and the field, and
writes nothing."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

N = 8000


def _cli(data, state, *args, stdin=None):
    env = {**os.environ, "EVALCORE_DATA": str(data), "EVALCORE_STATE": str(state)}
    return subprocess.run([sys.executable, "-m", "evalcore", *map(str, args)], capture_output=True, text=True,
                          env=env, input=stdin, timeout=600)


def _rows(n):
    for k in range(n):
        score = k % 2 == 0
        yield {"item_id": f"i{k % 3}", "round": 1 + (k // 3) % 2, "criterion": "score" if score else "ok",
               "value": str(k % 6) if score else ("pass" if k % 4 else "fail"), "reviewer": f"r{k % 9}",
               "note": f"batch note {k}", "tags": "a;b" if k % 5 == 0 else ""}


def test_eight_thousand_labels_in_one_invocation_are_all_exported(tiny, tmp_path):
    data, state = tiny
    src = tmp_path / "edits.csv"
    with open(src, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(next(_rows(1))))
        w.writeheader()
        w.writerows(_rows(N))
    r = _cli(data, state, "labels", "add", "--from", src, "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["added"] == N and info["last_edit_id"] - info["first_edit_id"] == N - 1
    out = _cli(data, state, "labels", "export", "--format", "json", "--history", "--no-shipped")
    hist = json.loads(out.stdout)
    assert len(hist) == N
    notes = sorted(h["note"] for h in hist)
    assert notes == sorted(f"batch note {k}" for k in range(N))
    by_note = {h["note"]: h for h in hist}
    for k, want in enumerate(_rows(N)):
        got = by_note[want["note"]]
        assert (got["item_id"], got["gen_round"], got["criterion"], got["value"], got["reviewer"]) == (
            want["item_id"], want["round"], want["criterion"], want["value"], want["reviewer"]), k
        assert (got["tags"] == ["a", "b"]) == (k % 5 == 0)


def test_json_lines_on_stdin_with_defaults_from_the_options(tiny, tmp_path):
    data, state = tiny
    lines = "\n".join(json.dumps({"item": f"i{k}", "criterion": "ok", "value": "pass"}) for k in range(3))
    r = _cli(data, state, "labels", "add", "--from", "-", "--reviewer", "ann", "--queue", "script", "--json",
             stdin=lines + "\n")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["added"] == 3
    hist = json.loads(_cli(data, state, "labels", "export", "--format", "json", "--history", "--no-shipped").stdout)
    assert {(h["item_id"], h["reviewer"], h["queue"]) for h in hist} == {(f"i{k}", "ann", "script") for k in range(3)}


def test_a_bad_row_refuses_the_file_and_writes_nothing(tiny, tmp_path):
    data, state = tiny
    good = _cli(data, state, "labels", "add", "--item", "i0", "--criterion", "ok", "--value", "pass", "--reviewer", "x")
    assert good.returncode == 0, good.stderr
    rows = list(_rows(600))
    rows[433]["value"] = "9"  # outside the score's 0-5 scale (line 435 with the header)
    src = tmp_path / "bad.csv"
    with open(src, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for path, want in ((src, "line 435"), (tmp_path / "missing.csv", "cannot be read")):
        r = _cli(data, state, "labels", "add", "--from", path)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert str(path.name) in lines[0] and want in lines[0], lines[0]
    Path(tmp_path / "unknown.csv").write_text("item_id,criterion,verdict\ni0,ok,pass\n")
    r = _cli(data, state, "labels", "add", "--from", tmp_path / "unknown.csv", "--reviewer", "x")
    assert r.returncode == 2 and "unknown column 'verdict'" in r.stderr and "line 2" in r.stderr
    hist = json.loads(_cli(data, state, "labels", "export", "--format", "json", "--history", "--no-shipped").stdout)
    assert len(hist) == 1  # only the first, single add
