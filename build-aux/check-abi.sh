#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-abi.sh: holds a build's libserio to the committed ABI baseline.
#
#   build-aux/check-abi.sh BUILDDIR            compare (exit 0: compatible)
#   build-aux/check-abi.sh --update BUILDDIR   write the baseline anew
#
# Builds nothing: BUILDDIR is a meson build directory in which libserio
# was built with debug information (-g, as meson's default buildtype and
# debugoptimized do). Only the types of the public headers count (those
# serio.h includes, and the generated serio-enums.h and serio-version.h),
# so that a change in a private structure is not an ABI change.
#
# abidiff's verdict: an added function or type is compatible and passes
# (it is reported); a removed or changed function, a changed public type
# or enum value fails, as does any error of the tools. Needs libabigail's
# abidw and abidiff (Debian: abigail-tools).
set -eu

srcdir=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
# SERIO_ABI_BASELINE overrides the baseline (for testing this script).
baseline="${SERIO_ABI_BASELINE:-$srcdir/build-aux/abi/libserio-1.0.abi}"

update=no
if [ "${1:-}" = "--update" ]; then
  update=yes
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: $0 [--update] BUILDDIR" >&2
  exit 2
fi
builddir=$1
lib="$builddir/libserio/libserio-1.0.so"
if [ ! -e "$lib" ]; then
  echo "$0: $lib not found: build libserio in $builddir first" >&2
  exit 2
fi
for tool in abidw abidiff; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$0: $tool not found (install libabigail's tools: abigail-tools)" >&2
    exit 2
  fi
done

# The public headers, as options of abidw/abidiff (one --hf/--hf2 each).
headers=$(sed -n 's/^#include "\(serio-[a-z0-9-]*\.h\)"$/\1/p' "$srcdir/libserio/serio.h")
set --
for h in $headers; do
  if [ -e "$srcdir/libserio/$h" ]; then
    set -- "$@" "$srcdir/libserio/$h"
  elif [ -e "$builddir/libserio/$h" ]; then
    set -- "$@" "$builddir/libserio/$h"
  else
    echo "$0: public header $h not found" >&2
    exit 2
  fi
done
set -- "$@" "$srcdir/libserio/serio.h"

if [ "$update" = yes ]; then
  opts=
  for h in "$@"; do opts="$opts --hf $h"; done
  mkdir -p "$(dirname "$baseline")"
  # shellcheck disable=SC2086
  abidw --no-corpus-path --no-comp-dir-path --drop-private-types $opts \
    --out-file "$baseline" "$lib"
  echo "wrote $baseline"
  exit 0
fi

opts=
for h in "$@"; do opts="$opts --hf2 $h"; done
status=0
# shellcheck disable=SC2086
abidiff --drop-private-types $opts "$baseline" "$lib" || status=$?

# abidiff's status is a bit field: 1 error, 2 usage error, 4 an ABI change,
# 8 an incompatible one.
if [ $((status & 3)) -ne 0 ]; then
  echo "$0: abidiff failed (status $status)" >&2
  exit 1
fi
if [ $((status & 8)) -ne 0 ]; then
  echo "$0: INCOMPATIBLE ABI change against $baseline" >&2
  exit 1
fi
if [ $((status & 4)) -ne 0 ]; then
  echo "$0: compatible ABI additions against $baseline (see above)"
else
  echo "$0: the ABI matches $baseline"
fi
exit 0
