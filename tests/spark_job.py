"""Run docs/SCALE.md's Spark recipe as it is written, in `.venv-spark`'s python (PySpark, no
evalcore): the page's ```` ```python spark ```` block makes the session and ``read_export``; its
```` ```sql spark ```` blocks are the statements, each named by its first line (``-- function: ...``,
``-- view: ...``, ``-- query: ...``). Reads a plan as JSON on stdin::

    {"doc": "docs/SCALE.md",
     "exports": [{"root": DIR, "attribution": [RUN, ...], "crosstab": [[RUN, A, B], ...],
                  "compare": [[BASELINE, CANDIDATE], ...]}]}

and prints, as one JSON line, each query's rows (``Row.asDict``) in the same layout, with the Spark
version and the seconds the session took to start and the whole job took. tests/test_spark.py
runs it and compares the rows with evalcore's figures."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path


def blocks(doc: str) -> tuple[str, dict[str, str], list[str]]:
    """The page's Python block, its named queries and its other statements (functions, views) in order."""
    (py,) = re.findall(r"```python spark\n(.*?)```", doc, flags=re.S)
    queries: dict[str, str] = {}
    ddl: list[str] = []
    for block in re.findall(r"```sql spark\n(.*?)```", doc, flags=re.S):
        for stmt in re.split(r";\n", block):
            if not stmt.strip():
                continue
            name = re.match(r"-- (function|view|cache|query): ([a-z_ ]+)", stmt)
            if name is None:
                raise SystemExit(f"a statement without its '-- query: name' line: {stmt[:80]!r}")
            if name.group(1) == "query":
                queries[name.group(2).strip()] = stmt
            else:
                ddl.append(stmt)
    return py, queries, ddl


def rows(spark, sql: str, **args: str) -> list[dict]:
    return [r.asDict(recursive=True) for r in spark.sql(sql, args=args).collect()]


def jvm_cpu() -> float:
    """The CPU seconds this process's children (the JVM py4j started) have used so far, from /proc."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            total += int(fields[11]) + int(fields[12])
    return total / tick


def main() -> None:
    plan = json.load(sys.stdin)
    t0 = time.monotonic()
    py, queries, ddl = blocks(open(plan["doc"], encoding="utf-8").read())
    ns: dict = {}
    exec(compile(py, plan["doc"], "exec"), ns)
    spark, read_export = ns["spark"], ns["read_export"]
    spark.sparkContext.setLogLevel("ERROR")
    started = time.monotonic() - t0
    out = []
    for e in plan["exports"]:
        read_export(e["root"])
        t = time.monotonic()
        for stmt in ddl:
            spark.sql(stmt)
        views = time.monotonic() - t
        att = {
            run: {
                "criteria": rows(spark, queries["attribution"], run=run),
                "answers": rows(spark, queries["attribution answers"], run=run)[0],
                "by_class": rows(spark, queries["attribution by class"], run=run),
            }
            for run in e.get("attribution", [])
        }
        ct = [rows(spark, queries["crosstab"], run=r, a=a, b=b)[0] for r, a, b in e.get("crosstab", [])]
        cmp = [rows(spark, queries["compare"], baseline=a, candidate=b) for a, b in e.get("compare", [])]
        out.append(
            {
                "attribution": att,
                "crosstab": ct,
                "compare": cmp,
                "seconds": {"views": views, "total": time.monotonic() - t},
            }
        )
    seconds = {"start": started, "total": time.monotonic() - t0, "jvm_cpu": jvm_cpu()}
    print(json.dumps({"spark": spark.version, "seconds": seconds, "exports": out}))
    spark.stop()


if __name__ == "__main__":
    main()
