"""The Attribution page's figure over object storage read where it lies, against the same data on
local disk, in one run (issue 42).

    .venv/bin/python bench/s3_reads.py [--data data/demo] [--run support-split] [--repeats 3]
                                       [--checksums sha256|none] [--out /tmp/evalcore-bench/s3_reads]

moto's server (tests/s3_util.py: authentication on, 127.0.0.1) is started and ``--data`` uploaded
to ``s3://evalcore-test/bench``: with ``--checksums sha256`` (the default) one PutObject per file
with its SHA256 checksum (:func:`upload_checksummed`: the store keeps each object's sha256, which
evalcore reads with a HEAD instead of hashing the bytes), with ``none`` as tests/s3_util.py's
``upload`` does (boto3's managed transfer: multipart above 8 MiB, no SHA256; every source of a
derived set is then read whole once per version to check it). Then, alternating disk and S3 in every repeat, a fresh process
(nothing cached in it; its imports are not timed) with an empty state directory does what a fresh
app server does for its first Attribution request, and then what the next request does:

* ``open_s``: ``Store(data, state)``: for S3, the filesystem's client made, one listing and the
  index in one concurrent batch (manifests, each table's last 64 KiB holding its footer, and the
  HEAD of each table listed with a SHA256 checksum: evalcore.storage.remote);
* ``first_s``: ``analysis.attribution(store, run, Selection())``, the function the Attribution
  page calls; over S3 it reads the tables through DuckDB's registered filesystem. The run's
  derived tables in the bucket are checked against their sources' sha256: the store's checksums
  (``sha256``), else the sources read whole (``none``); on disk, the files hashed;
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


def upload_checksummed(creds: dict[str, str], local: Path, prefix: str) -> int:
    """Every file under ``local`` to ``s3://BUCKET/prefix/...`` in one PutObject each with its
    SHA256 checksum (``aws s3api put-object --checksum-algorithm SHA256``), so the store keeps each
    object's full sha256 (evalcore.storage.remote reads it instead of hashing the bytes); how many."""
    from s3_util import BUCKET, s3_client

    s3 = s3_client(creds)
    files = sorted(p for p in local.rglob("*") if p.is_file())
    for p in files:
        key = f"{prefix}/{p.relative_to(local).as_posix()}"
        s3.put_object(Bucket=BUCKET, Key=key, Body=p.read_bytes(), ChecksumAlgorithm="SHA256")
    return len(files)


def _child(data: str, state: str, run: str) -> dict:
    """One fresh process's first and second request (see the module docstring)."""
    from s3_util import counted_requests

    from evalcore.analysis.failures import attribution
    from evalcore.analysis.selection import Selection
    from evalcore.storage.store import Store

    out: dict = {}
    with counted_requests() as opened:
        t0, c0 = time.perf_counter(), time.process_time()
        store = Store(data, state)
        out["open_s"] = time.perf_counter() - t0
    with counted_requests() as first:
        t0 = time.perf_counter()
        figure = attribution(store, run, Selection()).to_dict()
        out["first_s"] = time.perf_counter() - t0
    out["first_cpu_s"] = time.process_time() - c0  # this process's CPU in its open and first request
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
    ap.add_argument("--checksums", choices=("sha256", "none"), default="sha256", help="how the data is uploaded")
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
        (upload_checksummed if a.checksums == "sha256" else upload)(creds, data, PREFIX)
        up_s = time.perf_counter() - t0
        url = f"s3://{BUCKET}/{PREFIX}"
        env = {**creds, "EVALCORE_REMOTE_TTL": a.ttl}
        for i in range(a.repeats):
            for side, where in (("disk", str(data)), ("s3", url)):
                rows[side].append(_measure(where, a.run, env, out_dir, f"{side}-{i}"))
    same = all(r["figure"] == rows["disk"][0]["figure"] for r in rows["disk"] + rows["s3"])
    cmd = f"python bench/s3_reads.py --data {a.data} --run {a.run} --repeats {a.repeats} --ttl {a.ttl} --checksums {a.checksums}"
    print(f"`{cmd}`: {len(files)} files, ")
    print(f"{_mib(total)} MiB uploaded in {up_s:.1f} s; the figures of both sides equal: {same}.\n")
    print("| side | open s | first request s | next request s | restarted: open s | restarted: request s "
          "| bytes read (open / first / next / restarted) MiB | GETs + HEADs (open / first / next / restarted) "
          "| CPU s: open + first request | CPU s: process | peak RSS MB | load |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for side, rs in rows.items():

        def med(k: str, rs=rs) -> str:
            return f"{statistics.median(r[k] for r in rs):.2f} ({' / '.join(f'{r[k]:.2f}' for r in rs)})"

        r0 = rs[0]
        keys = ("opened", "first", "again", "restart")
        by = " / ".join(_mib(r0[k]["bytes"]) for k in keys) if side == "s3" else "-"
        gets = " / ".join(f"{r0[k]['get']} + {r0[k]['head']}" for k in keys) if side == "s3" else "-"
        loads = " / ".join(f"{r['load']:.1f}" for r in rs)
        print(
            f"| {side} | {med('open_s')} | {med('first_s')} | {med('again_s')} | {med('restart_open_s')} "
            f"| {med('restart_s')} | {by} | {gets} "
            f"| {med('first_cpu_s')} | {statistics.median(r['cpu_s'] for r in rs):.2f} "
            f"| {max(r['rss_mb'] for r in rs):.0f} | {loads} |"
        )
    first = [r["open_s"] + r["first_s"] for r in rows["s3"]], [r["open_s"] + r["first_s"] for r in rows["disk"]]
    ratio = statistics.median(first[0]) / statistics.median(first[1])
    print(f"\nThe bucket holds {_mib(total)} MiB (bytes read are of the first repeat; the others read the same).")
    print(f"A fresh process's open and first request, medians: S3 {statistics.median(first[0]):.2f} s, disk "
          f"{statistics.median(first[1]):.2f} s ({ratio:.2f}x).")  # fmt: skip


if __name__ == "__main__":
    main()
