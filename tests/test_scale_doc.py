"""docs/SCALE.md's queries over the hive export are run as they are written: the two SQL blocks
with DuckDB, the Python block with Polars, over `evalcore export --hive` of the demo, against
`attribution --json` and `crosstab --json`."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import duckdb
from conftest import DEMO, EVALCORE, REPO

DOC = (REPO / "docs" / "SCALE.md").read_text()
SQL = re.findall(r"```sql\n(.*?)```", DOC, flags=re.S)
PY = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)


def _json(state: Path, *args: str):
    r = subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(state), *args, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_documented_queries_reproduce_attribution_and_crosstab(tmp_path):
    assert len(SQL) == 2 and len(PY) == 1
    state, out = tmp_path / "state", tmp_path / "hive"
    _json(state, "export", "--hive", str(out), "--run", "support-split")
    con = duckdb.connect()
    # the views exactly as the doc's DuckDB line defines them
    (views,) = re.findall(r"- \*\*DuckDB\*\*: (.*?)\n- \*\*Spark", DOC, flags=re.S)
    stmts = re.findall(r"`(CREATE VIEW .*?;)`", " ".join(views.split()))
    assert len(stmts) == 1
    con.execute(stmts[0].replace("DIR", str(out)))
    con.execute(f"CREATE VIEW items AS SELECT * FROM read_parquet('{out}/items/**/*.parquet', "
                "hive_partitioning = true, hive_types = {'suite': VARCHAR})")
    att = _json(state, "attribution", "support-split")
    got = con.execute(SQL[0]).fetchall()
    want = sorted((c["criterion"], c["judged"], c["failed"], c["errored"]) for c in att["criteria"])
    assert got == want and len(got) == 6
    ct = _json(state, "crosstab", "support-split", "--a", "answers_question", "--b", "cites_source")["table"]
    got = {(a, b): n for a, b, n in con.execute(SQL[1]).fetchall()}
    assert got == {(1, 1): ct["a_pass"]["b_pass"], (1, 0): ct["a_pass"]["b_fail"],
                   (0, 1): ct["a_fail"]["b_pass"], (0, 0): ct["a_fail"]["b_fail"]}
    # the Polars block, run as written
    ns: dict = {}
    exec(compile(PY[0], "docs/SCALE.md", "exec"), ns)
    df = ns["attribution"](str(out), "support-split")
    assert [tuple(r) for r in df.select("criterion", "judged", "failed", "errored").iter_rows()] == want
