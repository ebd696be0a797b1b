#!/bin/sh
# The wheels the images install, built on this host from the repository and PyPI (through this
# host's own pip configuration: its index, proxy and certificates), so the image builds themselves
# need no network: the Containerfiles install with `pip install --no-index` from this directory.
#
#   docs/deploy/wheelhouse.sh            # from the repository's top; writes build/deploy/wheelhouse
#
# The wheels are for the base image's Python (Debian bookworm's 3.11), so the host's PYTHON must be
# a 3.11 too (compiled wheels are tagged cp311). Versions are the ones CI passed with (constraints.txt).
# evalcore with its s3 extra (EVALCORE_DATA=s3://...) and Authlib, Streamlit's st.login client, go
# into the app image; oidc-provider-mock, the optional local OpenID Connect provider of the compose
# file's `oidc` profile, into its own.
set -eu
PYTHON=${PYTHON:-python3}
OUT=build/deploy/wheelhouse
[ -f pyproject.toml ] && [ -f constraints.txt ] || { echo "error: run from the repository's top (no pyproject.toml here)" >&2; exit 2; }
version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$version" = 3.11 ] || { echo "error: $PYTHON is Python $version; the images run Debian bookworm's Python 3.11, so build the wheels with a 3.11 (PYTHON=...)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"
"$PYTHON" -m pip wheel --quiet --wheel-dir "$OUT" -c constraints.txt ".[s3]" Authlib oidc-provider-mock
echo "$(ls "$OUT" | wc -l) wheels in $OUT"
