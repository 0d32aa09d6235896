#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's Quick start, for a fresh Debian 12 machine (run as root):
#   bash build-aux/quickstart.sh demo   install build dependencies, build, run the demo
#   bash build-aux/quickstart.sh test   install test dependencies, build, run every suite
#
# Build directories: build/ for the demo, build-test/ for the tests.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

build_packages=(
  gcc
  gettext
  gobject-introspection
  libgirepository1.0-dev
  libglib2.0-dev
  libxxhash-dev
  meson
  ninja-build
  pkg-config
  valac
  zlib1g-dev
)
demo_packages=(
  python3-gi
  python3-numpy
)
test_packages=(
  gi-docgen
  gjs
  libjson-glib-dev
  locales
  python3-gi
  python3-numpy
  python3-sklearn
  python3-torch
  python3-xxhash
  shared-mime-info
  strace
  valgrind
)
test_locales=(de_DE.UTF-8 fr_FR.UTF-8 ar_EG.UTF-8)

usage () {
  echo "usage: $0 demo|test" >&2
  exit 2
}

install_packages () {
  local missing=()
  local pkg

  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "quickstart: needs root to install: ${missing[*]} (run it with sudo)" >&2
      exit 1
    fi
    # An index that fails to download (a mirror in sync, a foreign
    # architecture) need not stop the install: apt uses the lists it has.
    apt-get update -qq || echo "quickstart: apt-get update reported errors; trying the install anyway" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# The locale tests must run, not skip, so the locales they need are generated.
generate_locales () {
  local loc missing=0

  for loc in "${test_locales[@]}"; do
    locale -a 2>/dev/null | grep -qix "${loc/UTF-8/utf8}" && continue
    sed -i "s/^# *\(${loc} UTF-8\)/\1/" /etc/locale.gen
    missing=1
  done
  if [ "$missing" -eq 1 ]; then
    locale-gen >/dev/null
  fi
}

setup () {
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@"
  fi
  meson compile -C "$dir"
}

[ $# -eq 1 ] || usage

case "$1" in
  demo)
    install_packages "${build_packages[@]}" "${demo_packages[@]}"
    setup build
    meson compile -C build demo
    ;;
  test)
    install_packages "${build_packages[@]}" "${test_packages[@]}"
    generate_locales
    setup build-test -Dwerror=true -Ddocs=enabled -Dtests=enabled -Dintrospection=enabled -Dvapi=enabled
    meson test -C build-test --print-errorlogs
    ;;
  *)
    usage
    ;;
esac
