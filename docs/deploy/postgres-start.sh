#!/bin/sh
# The db container's start: on the first start (an empty PGDATA) make the cluster, the role
# `evalcore` with POSTGRES_PASSWORD and its database `evalcore`; then run the server in the
# foreground. Passwords are checked with SCRAM from every address (the compose network);
# the superuser `postgres` logs in only through the local socket, as the postgres user.
set -eu
: "${PGDATA:?PGDATA is not set}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "error: POSTGRES_PASSWORD is not set (the first start makes the role evalcore with it)" >&2; exit 2; }
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 --pwfile="$pwfile" -E UTF8 --no-locale
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    # The password as an SQL literal: every ' doubled.
    quoted=$(printf '%s' "$POSTGRES_PASSWORD" | sed "s/'/''/g")
    postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE ROLE evalcore LOGIN PASSWORD '$quoted';
CREATE DATABASE evalcore OWNER evalcore;
SQL
    echo "made the cluster in $PGDATA: role evalcore, database evalcore"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c max_connections="${POSTGRES_MAX_CONNECTIONS:-200}"
