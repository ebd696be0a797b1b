"""Three pages and three commands over the bundled demo on a local S3-compatible server against the
same data on disk (issue 17).

    .venv/bin/python bench/remote.py [--runs 3] [--out /tmp/evalcore-bench/remote]

moto's server (tests/s3_util.py: authentication on, 127.0.0.1) is started and the demo uploaded to
``s3://evalcore-test/demo``. Then, alternating disk and S3 in every repeat:

* **pages** (bench/pages.py's ``measure``: a fresh ``streamlit run app.py`` with an empty state
  directory each time, headless Chromium): Runs, Attribution (support-split) and Compare
  (support-split against support-split-judgeB). ``shell_s`` is the app's first page (the Ledger)
  loaded on the fresh server: over S3 it includes filling the index (listing the prefix, reading
  the manifests and the tables' footers; until issue 42 it downloaded every object into a mirror); ``cold`` and ``warm`` are timed as in bench/pages.py, over S3 with
  ``EVALCORE_REMOTE_TTL=0``, so every script run lists the bucket again (the worst case; the
  default lists at most every 10 s);
* **commands** as whole processes (wall time of ``evalcore --data D --state S CMD --json``):
  ``runs``, ``attribution support-split``, ``compare support-split support-split-judgeB``; over S3
  once with an empty state directory (the index filled by the command) and once more with the
  index in place (one listing; the blocks read before come from the local block cache).

The demo is SIMULATED. Prints a markdown section; JSON per measurement in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from s3_util import BUCKET, s3_server, upload  # noqa: E402

import pages as pb  # noqa: E402

DEMO = ROOT / "data" / "demo"
EVALCORE = str(Path(sys.executable).with_name("evalcore"))
DEMO_PAGES = {
    "runs": "/",
    "attribution": "/attribution?run=support-split",
    "compare": "/compare?a=support-split&b=support-split-judgeB",
}
COMMANDS = {
    "runs": ["runs"],
    "attribution": ["attribution", "support-split"],
    "compare": ["compare", "support-split", "support-split-judgeB"],
}


def _all(rs: list[dict], key: str) -> str:
    return " / ".join(f"{r[key]:.2f}" for r in rs)


def command(data: str, state: Path, args: list[str]) -> float:
    t = time.perf_counter()
    r = subprocess.run([EVALCORE, "--data", data, "--state", str(state), *args, "--json"], capture_output=True)
    dt = time.perf_counter() - t
    if r.returncode:
        raise RuntimeError(r.stderr.decode()[-2000:])
    return round(dt, 3)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench/remote"))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    pb.PAGES.update(DEMO_PAGES)
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    rows: list[dict] = []
    cmds: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="evalcore-remote-") as tmp_s:
        tmp = Path(tmp_s)
        with s3_server(tmp / "moto.log") as creds:
            n_objects = upload(creds, DEMO, "demo")
            os.environ.update(creds)
            os.environ["EVALCORE_REMOTE_TTL"] = "0"
            url = f"s3://{BUCKET}/demo"
            for k in range(a.runs):
                for where, data in (("disk", str(DEMO)), ("s3", url)):
                    (tmp / where).mkdir(exist_ok=True)
                    for name in DEMO_PAGES:
                        r = pb.measure(data, name, k, tmp / where, "1", 120)  # type: ignore[arg-type]
                        r["where"] = where
                        print(json.dumps(r), file=sys.stderr)
                        rows.append(r)
                        (a.out / f"page-{where}-{name}-{k}.json").write_text(json.dumps(r, indent=1))
                    for name, args in COMMANDS.items():
                        state = tmp / f"cmd-{where}-{name}-{k}"
                        first = command(data, state, args)
                        again = command(data, state, args)
                        c = {"where": where, "command": name, "run": k, "first_s": first, "again_s": again}
                        print(json.dumps(c), file=sys.stderr)
                        cmds.append(c)
                        shutil.rmtree(state, ignore_errors=True)
    finished = time.strftime("%H:%M", time.gmtime())
    (a.out / "summary.json").write_text(json.dumps({"pages": rows, "commands": cmds}, indent=1))

    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f}"

    lines = [
        f"The bundled SIMULATED demo ({n_objects} objects, {sum(p.stat().st_size for p in DEMO.rglob('*') if p.is_file()) / 1e6:.1f} MB) "
        f"on disk and on moto's S3 server on 127.0.0.1; {a.runs} repeats, alternating; {started} - {finished} UTC. "
        "Medians (all runs in brackets).",
        "",
        "| page | where | first page on a fresh server (shell) s | cold s | warm s | server CPU in cold render s | peak RSS MB |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for name in DEMO_PAGES:
        for where in ("disk", "s3"):
            rs = [r for r in rows if r["page"] == name and r["where"] == where]
            lines.append(
                f"| {name} | {where} | {med([r['shell_s'] for r in rs])} | {med([r['cold_s'] for r in rs])} "
                f"({_all(rs, 'cold_s')}) | {med([r['warm_s'] for r in rs])} "
                f"({_all(rs, 'warm_s')}) | {med([r['cold_cpu_s'] or 0 for r in rs])} | "
                f"{max(r['vm_hwm_mb'] or 0 for r in rs):.0f} |"
            )
    lines += [
        "",
        "| command | disk s | S3, empty state (index filled) s | S3, index in place s |",
        "|---|--:|--:|--:|",
    ]
    for name in COMMANDS:
        d = [c for c in cmds if c["command"] == name and c["where"] == "disk"]
        s = [c for c in cmds if c["command"] == name and c["where"] == "s3"]
        lines.append(
            f"| `evalcore {' '.join(COMMANDS[name])}` | {med([c['first_s'] for c in d] + [c['again_s'] for c in d])} | "
            f"{med([c['first_s'] for c in s])} | {med([c['again_s'] for c in s])} |"
        )
    errs = [(r["page"], r["where"], e) for r in rows for e in r["errors"]]
    lines += ["", f"Errors on the pages: {errs if errs else 'none'}."]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
