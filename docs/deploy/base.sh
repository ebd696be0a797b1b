#!/bin/sh
# The base image of the evalcore stack, made from Debian's own packages: no registry image is pulled.
# debootstrap writes a minimal Debian bookworm into a directory, with Python 3.11 (the app's
# interpreter) and the CA certificates; `podman import` (or `docker import`) makes it an image.
# The app, PostgreSQL and nginx images are all built FROM it (the Containerfiles' BASE argument).
#
#   sudo docs/deploy/base.sh [IMAGE]        # default evalcore-base:bookworm
#
# Environment: ENGINE (podman, or docker), MIRROR and SECURITY (Debian's mirrors; default deb.debian.org),
# WORK (the directory debootstrap fills; removed afterwards).
set -eu
IMAGE=${1:-evalcore-base:bookworm}
ENGINE=${ENGINE:-podman}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=${WORK:-$(mktemp -d /tmp/evalcore-base.XXXXXX)}
PACKAGES=python3,python3-venv,ca-certificates

command -v debootstrap >/dev/null || { echo "error: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
command -v "$ENGINE" >/dev/null || { echo "error: $ENGINE is not installed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "error: debootstrap needs root" >&2; exit 2; }

trap 'rm -rf "$WORK"' EXIT
debootstrap --variant=minbase --include="$PACKAGES" bookworm "$WORK" "$MIRROR"
# Debian's security and point-release updates too, applied now and found by the images built on it.
cat > "$WORK/etc/apt/sources.list" <<SOURCES
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${SECURITY:-http://deb.debian.org/debian-security} bookworm-security main
SOURCES
chroot "$WORK" apt-get update
DEBIAN_FRONTEND=noninteractive chroot "$WORK" apt-get -y upgrade
# The image carries no package lists, logs or caches from the bootstrap.
chroot "$WORK" apt-get clean
rm -rf "$WORK"/var/lib/apt/lists/* "$WORK"/var/log/* "$WORK"/var/cache/debconf/*-old
tar -C "$WORK" --numeric-owner -c . | "$ENGINE" import \
  --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$IMAGE"
echo "built $IMAGE"
