#!/bin/sh
# build-test-image.sh: build the offline test image for the docker scheme.
#
# No registry is reachable in tests, so the image is assembled from Debian packages with
# debootstrap (Debian's apt mirror is reachable) and imported into the local engine.
# Idempotent: does nothing when the image already exists. Needs root (debootstrap), a running
# engine (docker CLI here is fine: this is a build script, not product code) and about 1-4 minutes.
#
#   scripts/build-test-image.sh            # builds mcpsandbox-test:bookworm
#   MCPSANDBOX_TEST_IMAGE=name:tag scripts/build-test-image.sh
#   MIRROR=http://deb.debian.org/debian scripts/build-test-image.sh
set -eu

IMAGE=${MCPSANDBOX_TEST_IMAGE:-mcpsandbox-test:bookworm}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
	echo "build-test-image: $IMAGE already present, nothing to do" >&2
	exit 0
fi
command -v debootstrap >/dev/null 2>&1 || {
	echo "build-test-image: debootstrap not found: apt-get install -y debootstrap" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || {
	echo "build-test-image: debootstrap needs root: run this script as root (or with sudo)" >&2
	exit 1
}

DIR=$(mktemp -d "${TMPDIR:-/tmp}/mcpsandbox-rootfs.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

echo "build-test-image: debootstrap $SUITE into $DIR from $MIRROR" >&2
debootstrap --variant=minbase --include=python3-minimal "$SUITE" "$DIR" "$MIRROR" >&2

# python3-minimal normally ships the /usr/bin/python3 link; make sure of it whatever the suite.
if [ ! -e "$DIR/usr/bin/python3" ]; then
	py=$(cd "$DIR/usr/bin" && ls python3.* 2>/dev/null | grep -E '^python3\.[0-9]+$' | sort -V | tail -n1)
	[ -n "$py" ] || { echo "build-test-image: no python3.N interpreter in the rootfs" >&2; exit 1; }
	ln -s "$py" "$DIR/usr/bin/python3"
fi
chroot "$DIR" /usr/bin/python3 -c 'import sys; print("python", sys.version.split()[0])' >&2

# Keep the image small: apt caches and docs are not needed to run code.
rm -rf "$DIR"/var/cache/apt/archives/*.deb "$DIR"/var/lib/apt/lists/* "$DIR"/usr/share/doc/* "$DIR"/usr/share/man/*

tar -C "$DIR" -c . | docker import \
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'CMD ["/bin/sh"]' - "$IMAGE" >&2
echo "build-test-image: built $IMAGE" >&2
