#!/bin/sh
# The proxy container's start: fill in docs/deploy/nginx.conf's placeholders from the environment,
# make a self-signed certificate when /etc/evalcore-tls holds none (a try-out: a team mounts its own
# fullchain.pem and privkey.pem there), check the configuration, and run nginx in the foreground.
#
#   EVALCORE_SERVER_NAME  the name people type (default localhost)
#   EVALCORE_APP_SERVERS  one `server HOST:PORT;` per app server (default "server app:8501;")
set -eu
export EVALCORE_SERVER_NAME="${EVALCORE_SERVER_NAME:-localhost}"
export EVALCORE_APP_SERVERS="${EVALCORE_APP_SERVERS:-server app:8501;}"
export EVALCORE_LISTEN=8443
export EVALCORE_CERT=/etc/evalcore-tls/fullchain.pem
export EVALCORE_KEY=/etc/evalcore-tls/privkey.pem
export EVALCORE_CACHE=/var/lib/nginx/evalcore-static  # the front end's files (www-data owns /var/lib/nginx)
if [ ! -s "$EVALCORE_CERT" ] || [ ! -s "$EVALCORE_KEY" ]; then
    echo "no certificate in /etc/evalcore-tls: making a self-signed one for $EVALCORE_SERVER_NAME (browsers will warn)"
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$EVALCORE_SERVER_NAME" \
        -addext "subjectAltName=DNS:$EVALCORE_SERVER_NAME" -keyout "$EVALCORE_KEY" -out "$EVALCORE_CERT" 2>/dev/null
    chmod 0600 "$EVALCORE_KEY"
fi
envsubst '${EVALCORE_SERVER_NAME} ${EVALCORE_LISTEN} ${EVALCORE_CERT} ${EVALCORE_KEY} ${EVALCORE_APP_SERVERS} ${EVALCORE_CACHE}' \
    < /etc/nginx/evalcore-site.template > /etc/nginx/sites-enabled/evalcore
nginx -t -q
exec nginx -g 'daemon off;'
