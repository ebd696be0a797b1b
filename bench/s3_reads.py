"""The Attribution page's figure over object storage read where it lies, against the same data on
local disk, in one run (issue 42).

    .venv/bin/python bench/s3_reads.py [--data data/demo] [--run support-split] [--repeats 3]
                                       [--out /tmp/evalcore-bench/s3_reads]

moto's server (tests/s3_util.py: authentication on, 127.0.0.1) is started and ``--data`` uploaded
to ``s3://evalcore-test/bench``. Then, alternating disk and S3 in every repeat, a fresh process
(nothing cached in it; its imports are not timed) with an empty state directory does what a fresh
app server does for its first Attribution request, and then what the next request does:

* ``open_s``: ``Store(data, state)``: for S3, one listing and the index (manifests, each table's
  footer read from its last 64 KiB: evalcore.storage.remote);
* ``first_s``: ``analysis.attribution(store, run, Selection())``, the function the Attribution
  page calls; over S3 it reads the tables through DuckDB's registered filesystem (and builds the
  run's derived answers table in the state directory, since the bucket's own derived tables
  cannot be checked against their sources without reading them whole; on disk they are read);
* ``again_s``: a new Store on the same state directory and the same figure (the page's next
  request: the block cache and the derived tables are in the state directory);
* ``restart``: a second fresh process on the state directory the first left (a restarted server's
  first request): its open and its figure.
  With ``--ttl 0`` (the default here) every Store lists the bucket again; with the default of
  evalcore (10 s) a Store opened within 10 s of the last listing in the same process does not.

Bytes and requests are counted at s3fs's calls into botocore in the child (tests/s3_util.py
``counted_requests``): ``bytes`` is what GetObject returned. The figures of both sides are
compared (the same JSON but for the data's own spelling). Prints a markdown section; JSON per
measurement in ``--out``. Any data set the layout holds will do; the demo is SIMULATED, and so is
the scaled world of ``evalcore demo --items N``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
PREFIX = "bench"


def _child(data: str, state: str, run: str) -> dict:
    """One fresh process's first and second request (see the module docstring)."""
    from s3_util import counted_requests

    from evalcore.analysis.failures import attribution
    from evalcore.analysis.selection import Selection
    from evalcore.storage.store import Store

    out: dict = {}
    with counted_requests() as opened:
        t0 = time.perf_counter()
        store = Store(data, state)
        out["open_s"] = time.perf_counter() - t0
    with counted_requests() as first:
        t0 = time.perf_counter()
        figure = attribution(store, run, Selection()).to_dict()
        out["first_s"] = time.perf_counter() - t0
    with counted_requests() as again:
        t0 = time.perf_counter()
        attribution(Store(data, state), run, Selection()).to_dict()
        out["again_s"] = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out.update(opened=opened, first=first, again=again, cpu_s=ru.ru_utime + ru.ru_stime, rss_mb=ru.ru_maxrss / 1024)
    out["figure"] = json.loads(json.dumps(figure).replace(data.rstrip("/"), "<data>"))
    return out


def _measure(data: str, run: str, env: dict, out_dir: Path, name: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="evalcore-s3-reads-") as state:
        got = []
        for _ in range(2):  # a fresh state directory, then a restarted process on the one it left
            p = subprocess.run(
                [sys.executable, __file__, "--child", data, "--state", state, "--run", run],
                capture_output=True,
                text=True,
                env={**os.environ, **env},
            )
            if p.returncode != 0:
                raise SystemExit(f"{name}: {p.stderr[-3000:]}")
            got.append(json.loads(p.stdout))
    r, again = got
    r.update(restart_open_s=again["open_s"], restart_s=again["first_s"], restart=again["first"])
    r["load"] = os.getloadavg()[0]
    (out_dir / f"{name}.json").write_text(json.dumps(r, indent=1))
    return r


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "data" / "demo"))
    ap.add_argument("--run", default="support-split")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--ttl", default="0", help="EVALCORE_REMOTE_TTL: 0 lists the bucket on every Store (the worst case)"
    )
    ap.add_argument("--out", default="/tmp/evalcore-bench/s3_reads")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--state", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_child(a.child, a.state, a.run)))
        return
    from s3_util import BUCKET, s3_server, upload

    data = Path(a.data).resolve()
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [p for p in data.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    rows: dict[str, list[dict]] = {"disk": [], "s3": []}
    with s3_server(out_dir / "moto.log") as creds:
        t0 = time.perf_counter()
        upload(creds, data, PREFIX)
        up_s = time.perf_counter() - t0
        url = f"s3://{BUCKET}/{PREFIX}"
        env = {**creds, "EVALCORE_REMOTE_TTL": a.ttl}
        for i in range(a.repeats):
            for side, where in (("disk", str(data)), ("s3", url)):
                rows[side].append(_measure(where, a.run, env, out_dir, f"{side}-{i}"))
    same = all(r["figure"] == rows["disk"][0]["figure"] for r in rows["disk"] + rows["s3"])
    cmd = f"python bench/s3_reads.py --data {a.data} --run {a.run} --repeats {a.repeats} --ttl {a.ttl}"
    print(f"`{cmd}`: {len(files)} files, ")
    print(f"{_mib(total)} MiB uploaded in {up_s:.1f} s; the figures of both sides equal: {same}.\n")
    print("| side | open s | first request s | next request s | restarted: open s | restarted: request s "
          "| bytes read (open / first / next / restarted) MiB | GETs (open / first / next / restarted) "
          "| CPU s | peak RSS MB | load |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for side, rs in rows.items():

        def med(k: str, rs=rs) -> str:
            return f"{statistics.median(r[k] for r in rs):.2f} ({' / '.join(f'{r[k]:.2f}' for r in rs)})"

        r0 = rs[0]
        keys = ("opened", "first", "again", "restart")
        by = " / ".join(_mib(r0[k]["bytes"]) for k in keys) if side == "s3" else "-"
        gets = " / ".join(str(r0[k]["get"]) for k in keys) if side == "s3" else "-"
        loads = " / ".join(f"{r['load']:.1f}" for r in rs)
        print(
            f"| {side} | {med('open_s')} | {med('first_s')} | {med('again_s')} | {med('restart_open_s')} "
            f"| {med('restart_s')} | {by} | {gets} "
            f"| {statistics.median(r['cpu_s'] for r in rs):.2f} | {max(r['rss_mb'] for r in rs):.0f} | {loads} |"
        )
    print(f"\nThe bucket holds {_mib(total)} MiB (bytes read are of the first repeat; the others read the same).")


if __name__ == "__main__":
    main()
