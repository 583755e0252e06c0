#!/bin/sh
# Installs the Debian packages named on the command line when any is missing.
# Idempotent: does nothing when all are installed. As root it runs apt-get
# (updating the package lists first on a fresh machine); otherwise it prints
# the exact command to run and fails.
missing=""
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "missing packages:$missing"
  echo "run: sudo apt-get install -y$missing"
  exit 1
fi
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
  apt-get update -q || exit 1
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -q$missing || {
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q$missing
}
