"""Hostile input (issue 20): the corpus of tests/hostile.py (every kind of malformed or hostile
file the issue names, for each of the 8 import commands it applies to) and a seeded fuzz run over
the file-reading import commands, each case on a fresh copy of tests/test_broken_input.py's valid
world, run through the command line's entry in one driver process (tests/hostile.py says how).

* corpus: every case exits 2 with exactly one line on stderr (``error: ...``, no traceback), nothing
  on stdout, the data, state and keys directories byte-identical, under 10 s and with the driver's
  peak resident set under 1 GB. With tests/test_broken_input.py's cases the corpus holds at least
  134 cases.
* fuzz: FUZZ_CASES cases from seed FUZZ_SEED; every case exits 0 or 2, no traceback, one line on
  exit 2 and nothing written, within the same time and memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hostile
from test_broken_input import CASES as BROKEN_CASES
from test_broken_input import base  # noqa: F401 - the fixture: the valid world every case starts from

FUZZ_SEED = 20261203
FUZZ_CASES = 240
LIMIT_MB = 1024


def _drive(base, kind: str, tmp_path, *extra: str) -> list[dict]:  # noqa: F811
    out = tmp_path / f"{kind}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    p = subprocess.run([sys.executable, hostile.__file__, kind, str(base.root), str(out), *extra],
                       capture_output=True, text=True, timeout=1800, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]


def _bounded(r: dict) -> list[str]:
    bad = []
    if r["code"] == "timeout" or r["seconds"] >= hostile.LIMIT_S:
        bad.append(f"ran {r['seconds']} s")
    if r["peak_mb"] >= LIMIT_MB:
        bad.append(f"peak {r['peak_mb']:.0f} MB")
    if "Traceback" in r["stderr"] or str(r["code"]).startswith("crash"):
        bad.append(f"crashed: {r['code']} {r['stderr'][-300:]}")
    return bad


def _one_line_refusal(r: dict) -> list[str]:
    bad = []
    if r["code"] != 2:
        bad.append(f"exit {r['code']}")
    if not (r["stderr"].startswith("error: ") and r["stderr"].endswith("\n") and r["stderr"].count("\n") == 1):
        bad.append(f"stderr is not one line: {r['stderr'][:300]!r}")
    if r["stdout"]:
        bad.append(f"stdout: {r['stdout'][:200]!r}")
    if not r["unchanged"]:
        bad.append("wrote into the data, state or keys directory")
    return bad


def test_the_hostile_corpus_is_refused_in_one_line_within_bounds(base, tmp_path):  # noqa: F811
    results = _drive(base, "corpus", tmp_path)
    assert [r["name"] for r in results] == list(hostile.CORPUS)
    assert len(results) + len(BROKEN_CASES) >= 134
    commands = {r["name"].split(":")[0] for r in results}
    assert commands == {"long", "wide", "pairs", "hanna", "pandalm", "summeval", "inspect", "promptfoo", "judge",
                        "correct", "labels"}
    failures = {r["name"]: _bounded(r) + _one_line_refusal(r) for r in results}
    failures = {k: v for k, v in failures.items() if v}
    assert not failures, json.dumps(failures, indent=1)[:6000]


def test_fuzzed_imports_end_in_success_or_one_line_within_bounds(base, tmp_path):  # noqa: F811
    results = _drive(base, "fuzz", tmp_path, "--seed", str(FUZZ_SEED), "--cases", str(FUZZ_CASES))
    assert len(results) == FUZZ_CASES
    failures = {}
    for r in results:
        bad = _bounded(r)
        if r["code"] not in (0, 2):
            bad.append(f"exit {r['code']}")
        elif r["code"] == 2:
            bad += _one_line_refusal(r)
        if bad:
            failures[r["name"]] = bad
    assert not failures, json.dumps(failures, indent=1)[:6000]
    # the generator does break things: most cases are refused, and some still import
    refused = sum(r["code"] == 2 for r in results)
    assert FUZZ_CASES // 4 <= refused < FUZZ_CASES, refused


def test_a_roles_file_nested_5000_deep_is_one_line(tmp_path):
    """Issue 38.5: a roles.toml nested 5,000 deep ended in a RecursionError (3,000 lines of stderr);
    it is read by the one TOML reader (evalcore.contract.readers.loads_toml), bounded like JSON."""
    import pytest

    from evalcore.errors import FormatError
    from evalcore.storage.roles import load_roles

    for text in ("x = " + "[" * 5000 + "]" * 5000 + "\n", "[" + ".".join(["a"] * 5000) + "]\nb = 1\n"):
        (tmp_path / "roles.toml").write_text(text, encoding="utf-8")
        with pytest.raises(FormatError) as e:
            load_roles(tmp_path)
        assert "nests arrays or objects more than 100 deep" in str(e.value) and "\n" not in str(e.value)
