"""The work of tests/test_real_model.py (its command lines, not the test) against one model.

    .venv/bin/python bench/compare_models.py NAME GGUF OUT      -> OUT/result.json, OUT/llm-requests.jsonl, OUT/data, OUT/state

Serves GGUF with tests/llm_server/server.mjs (nice -n 10, 127.0.0.1, free port, no default grammar: as the
test's fixture), then: generate 5 (--max-tokens 160), judge single 10 (240), judge split 10 (120),
judge-pairs 5 pairs both orders (160), every command with --structured auto and the test's CALL flags.
Per step: calls parsed / errored (the journal), requests, tokens in/out and finish reasons (the server log),
wall seconds, client CPU seconds (getrusage of children) and server CPU seconds (/proc/PID/stat).
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EV = str(REPO / ".venv/bin/evalcore")
NAME, GGUF, OUT = sys.argv[1], sys.argv[2], Path(sys.argv[3])
MODEL = f"openai/{NAME}"
TWO = (REPO / "tests/test_real_model.py").read_text().split('TWO = """', 1)[1].split('"""', 1)[0]
CALL = ["--concurrency", "1", "--timeout", "300", "--backoff", "0.1", "--max-retries", "2", "--allow-polluted",
        "--seed", "1", "--structured", "auto"]
TICK = os.sysconf("SC_CLK_TCK")


def server_cpu(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime + stime, all threads


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    data, state = OUT / "data", OUT / "state"
    shutil.copytree(REPO / "data/demo", data)
    (OUT / "two.toml").write_text(TWO)
    log, out = OUT / "llm-requests.jsonl", OUT / "llm-server.out"
    t0 = time.monotonic()
    srv = subprocess.Popen(
        ["nice", "-n", "10", "node", str(REPO / "tests/llm_server/server.mjs"), "--model", GGUF, "--name", NAME,
         "--port", "0", "--ctx", "2048", "--log", str(log)],
        stdout=open(out, "wb"), stderr=subprocess.STDOUT, cwd=REPO / "tests/llm_server")
    url = None
    while url is None and srv.poll() is None and time.monotonic() - t0 < 300:
        for line in out.read_text(errors="replace").splitlines():
            if line.startswith("listening "):
                url = line.split()[1]
        time.sleep(0.1)
    if url is None:
        srv.kill()
        sys.exit(f"server did not start: {out.read_text()}")
    res = {"model": NAME, "gguf": GGUF, "load_s": round(time.monotonic() - t0, 1), "steps": {}}
    base = [EV, "--data", str(data), "--state", str(state)]
    steps = [
        ("generate", "generations", "g", ["generate", "--suite", "support", "--limit", "5", "--gen-id", "g",
                                          "--max-tokens", "160"]),
        ("single", "runs", "single", ["judge", "--gen", "support-g1", "--rubric", str(OUT / "two.toml"), "--mode",
                                      "single", "--limit", "10", "--run-id", "single", "--max-tokens", "240"]),
        ("split", "runs", "split", ["judge", "--gen", "support-g1", "--rubric", str(OUT / "two.toml"), "--mode",
                                    "split", "--limit", "10", "--run-id", "split", "--max-tokens", "120"]),
        ("pairs", "runs", "pairs", ["judge-pairs", "--session", "accounts-ab", "--limit", "5", "--run-id", "pairs",
                                    "--max-tokens", "160"]),
    ]
    try:
        only = os.environ.get("STEPS", "").split(",")
        for label, kind, id_, args in [s for s in steps if s[0] in only or only == [""]]:
            since = len(log.read_text().splitlines()) if log.exists() else 0
            ru0, s0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), server_cpu(srv.pid), time.monotonic()
            p = subprocess.run([*base, *args, "--model", MODEL, "--api-base", url,
                                *[c for c in CALL if not (label == "pairs" and c == "--allow-polluted")]], capture_output=True,
                               text=True)
            w1, s1, ru1 = time.monotonic(), server_cpu(srv.pid), resource.getrusage(resource.RUSAGE_CHILDREN)
            reqs = [json.loads(x) for x in log.read_text().splitlines()[since:]]
            jpath = state / f"{kind}-done" / id_ / "journal.jsonl"
            recs = [json.loads(x) for x in jpath.read_text().splitlines()] if jpath.exists() else []
            calls = Counter("parsed" if r["ok"] else "errored" for r in recs if r["type"] == "call")
            res["steps"][label] = {
                "exit": p.returncode, "stderr_tail": p.stderr[-400:], "calls": dict(calls),
                "requests": len(reqs), "finish": dict(Counter(str(r.get("finish_reason")) for r in reqs)),
                "response_format": dict(Counter(str(r.get("response_format")) for r in reqs)),
                "tokens_in": sum(r.get("tokens_in") or 0 for r in reqs),
                "tokens_out": sum(r.get("tokens_out") or 0 for r in reqs),
                "wall_s": round(w1 - w0, 1), "server_cpu_s": round(s1 - s0, 1),
                "client_cpu_s": round(ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime, 1),
            }
            print(label, json.dumps(res["steps"][label]), flush=True)
    finally:
        res["server_cpu_total_s"] = round(server_cpu(srv.pid), 1)
        srv.terminate()
        srv.wait(20)
        res["wall_total_s"] = round(time.monotonic() - t0, 1)
        (OUT / "result.json").write_text(json.dumps(res, indent=1))


main()
