#!/bin/sh
# The container stack built and brought up on this machine with podman, and checked end to end:
# the app's health check passes, https through the proxy answers, and Chromium logs in through the
# proxy with the local OpenID Connect provider (profile oidc), decides a case on the Review page, and
# the decision is found in PostgreSQL; then `evalcore state backup` while the app runs, restored with
# `state restore` into a fresh stack, gives the same label export byte for byte. Each stage's wall
# time is printed; docs/DEPLOY.md records the last pass. Not in CI (the image builds take minutes);
# tests/test_deploy_files.py checks the files.
#
#   sudo docs/deploy/smoke.sh            # from the repository's top; needs podman, podman-compose,
#                                        # debootstrap, Debian's chromium and .venv (make setup)
#
# It builds the committed tree (HEAD, exported with `git archive` into a temporary directory), so
# what it checks is what a clone gets; SMOKE_TREE=1 builds the working tree instead.
# Environment: SMOKE_FRESH=1 rebuilds the base image even when it exists; SMOKE_KEEP=1 leaves the
# stack up (project evalcore-smoke) instead of removing it and its volumes; COMPOSE (default
# podman-compose); PYTHON (default .venv/bin/python). Everything binds 127.0.0.1 on free ports.
set -eu
cd "$(dirname "$0")/../.."
REPO=$(pwd)
COMPOSE=${COMPOSE:-podman-compose}
PY=${PYTHON:-$REPO/.venv/bin/python}
PROJECT=evalcore-smoke
OUT=$(mktemp -d /tmp/evalcore-smoke.XXXXXX)
if [ "${SMOKE_TREE:-0}" != 1 ]; then
    mkdir "$OUT/src"
    git archive HEAD | tar -x -C "$OUT/src"
    cd "$OUT/src"
    echo "smoke: building $(git -C "$REPO" rev-parse --short HEAD) in $OUT/src"
fi
export BUILDAH_FORMAT=docker   # keep the Containerfiles' HEALTHCHECK (the OCI format drops it)

for tool in podman "$COMPOSE" debootstrap; do
    command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 2; }
done
[ -x "$PY" ] || { echo "error: $PY is missing (make setup)" >&2; exit 2; }

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
secret() { "$PY" -c 'import secrets; print(secrets.token_hex(24))'; }
HTTPS_PORT=$(free_port)
OIDC_PORT=$(free_port)
BASE_URL=https://localhost:$HTTPS_PORT
cat > "$OUT/smoke.env" <<EOF
POSTGRES_PASSWORD=$(secret)
EVALCORE_PUBLISH=127.0.0.1:$HTTPS_PORT
EVALCORE_OIDC_PORT=$OIDC_PORT
EVALCORE_OIDC_METADATA_URL=http://oidc:$OIDC_PORT/.well-known/openid-configuration
EVALCORE_OIDC_CLIENT_ID=evalcore-smoke
EVALCORE_OIDC_CLIENT_SECRET=$(secret)
EVALCORE_OIDC_REDIRECT_URI=$BASE_URL/oauth2callback
EVALCORE_COOKIE_SECRET=$(secret)
EOF
compose() { "$COMPOSE" -p "$PROJECT" --env-file "$OUT/smoke.env" -f docs/deploy/compose.yaml --profile oidc "$@"; }
down() {
    compose logs >"$OUT/logs.txt" 2>&1 || true
    if [ "${SMOKE_KEEP:-0}" = 1 ]; then echo "left up: project $PROJECT, $BASE_URL (env: $OUT/smoke.env)"; return; fi
    compose down -v >"$OUT/down.log" 2>&1 || echo "compose down failed: $OUT/down.log" >&2
    rm -rf "$OUT/src"   # the exported tree and its wheelhouse (about 290 MB); the logs stay
}
trap down EXIT

started=$(date +%s)
stage() { now=$(date +%s); echo "smoke: $1 in $((now - ${last:-$started})) s"; last=$now; }

if [ "${SMOKE_FRESH:-0}" = 1 ] || ! podman image exists evalcore-base:bookworm; then
    sh docs/deploy/base.sh >"$OUT/base.log" 2>&1 || { tail -20 "$OUT/base.log" >&2; exit 1; }
    stage "base image (debootstrap + import)"
fi
sh docs/deploy/wheelhouse.sh >"$OUT/wheelhouse.log" 2>&1 || { tail -20 "$OUT/wheelhouse.log" >&2; exit 1; }
stage "wheelhouse"
compose build >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log" >&2; exit 1; }
stage "images built (app, db, proxy, oidc)"
compose up -d >"$OUT/up.log" 2>&1 || { tail -40 "$OUT/up.log" >&2; exit 1; }

# Ready means each service's own health check passes (podman 4.3 runs them on request, not on a timer).
healthy() { podman healthcheck run "${PROJECT}_$1_1" >/dev/null 2>&1; }
wait_healthy() {
    for service in db app proxy; do
        tries=0
        until healthy "$service"; do
            tries=$((tries + 1))
            [ "$tries" -le 180 ] || { echo "error: $service never became healthy" >&2; exit 1; }
            sleep 1
        done
    done
}
wait_healthy
stage "stack up: db, app and proxy healthy"

health=$("$PY" -c 'import ssl, sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "/_stcore/health", context=ssl._create_unverified_context(), timeout=10).read().decode())' "$BASE_URL")
[ "$health" = ok ] || { echo "error: https through the proxy said $health" >&2; exit 1; }
echo "smoke: $BASE_URL/_stcore/health through nginx with TLS: $health"

podman exec "${PROJECT}_app_1" evalcore queue build support-g1 --by ada@example.org --json >"$OUT/queue.json"
decided=$(SMOKE_SHOT="$OUT/browser.png" "$PY" docs/deploy/smoke_browser.py "$BASE_URL" ann ann@example.org support-g1)
stage "logged in through the proxy, decided a case: $decided"

row=$(printf '%s' "$decided" | "$PY" -c 'import json, sys; d = json.load(sys.stdin); print("|".join(str(d[k]) for k in ("reviewer", "item_id", "gen_round", "criterion", "value")))')
found=$(podman exec -u postgres "${PROJECT}_db_1" psql -d evalcore -Atc \
    "SELECT reviewer, item_id, gen_round, criterion, value FROM edits WHERE outcome = 'decided' AND gen_id = 'support-g1'")
[ "$found" = "$row" ] || { echo "error: PostgreSQL holds [$found], the browser decided [$row]" >&2; exit 1; }
echo "smoke: PostgreSQL's edits table holds the decision: $found"

# A backup taken while the app runs, restored into a fresh stack (new volumes, a new database),
# gives the same label export byte for byte.
APP=${PROJECT}_app_1
podman exec "$APP" evalcore labels export --history >"$OUT/export-before.csv"
grep -q ann@example.org "$OUT/export-before.csv" || { echo "error: the label export does not hold Ann's decision" >&2; exit 1; }
podman exec "$APP" evalcore state backup /tmp/smoke-backup.tar >"$OUT/backup.txt"
podman cp "$APP:/tmp/smoke-backup.tar" "$OUT/backup.tar"
compose down -v >"$OUT/down-first.log" 2>&1
compose up -d >"$OUT/up-again.log" 2>&1
wait_healthy
podman cp "$OUT/backup.tar" "$APP:/tmp/smoke-backup.tar"
podman exec "$APP" evalcore state restore /tmp/smoke-backup.tar >"$OUT/restore.txt"
podman exec "$APP" evalcore labels export --history >"$OUT/export-after.csv"
cmp "$OUT/export-before.csv" "$OUT/export-after.csv" || { echo "error: the restored stack's label export differs" >&2; exit 1; }
stage "backup, a fresh stack, restore: the same label export ($(wc -c <"$OUT/export-after.csv") bytes)"
echo "smoke: passed in $(($(date +%s) - started)) s (logs in $OUT)"
