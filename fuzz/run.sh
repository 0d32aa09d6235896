#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: fuzz/run.sh SECONDS [BUILDDIR]
#
# Configures and builds the libFuzzer targets with clang under ASan and
# UBSan (the library instrumented for coverage too), then runs every target
# for SECONDS seconds, one process each, as many at once as there are
# processors. Exits nonzero if any target finds a crash, a leak, undefined
# behaviour, an input that takes over 25 s (a generous limit, for busy
# shared machines) or over 2 GB of memory.
#
# BUILDDIR defaults to build-fuzz in the source tree; the work corpus
# (BUILDDIR/fuzz-corpus/TARGET) and crash reproducers
# (BUILDDIR/fuzz-artifacts/) live there and grow from run to run, while the
# seeds in fuzz/corpus/ are only read. CC picks the compiler (clang-14 by
# default).

set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 SECONDS [BUILDDIR]" >&2
  exit 2
fi

seconds=$1
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${2:-$srcdir/build-fuzz}

export CC="${CC:-clang-14}"

if [ -f "$builddir/build.ninja" ]; then
  setup_mode=--reconfigure
else
  setup_mode=
fi

meson setup $setup_mode "$builddir" "$srcdir" \
  -Dwerror=true \
  -Dfuzzing=true \
  -Db_sanitize=address,undefined \
  -Db_lundef=false \
  -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all' \
  -Dtests=disabled \
  -Dintrospection=disabled \
  -Dvapi=disabled \
  -Ddocs=disabled
meson compile -C "$builddir" fuzz/fuzz-parse fuzz/fuzz-roundtrip fuzz/fuzz-npy fuzz/fuzz-npz \
  fuzz/fuzz-safetensors

export ASAN_OPTIONS='detect_leaks=1:abort_on_error=1'
export UBSAN_OPTIONS='halt_on_error=1:print_stacktrace=1'
export G_SLICE=always-malloc

# Runs target $1 for $seconds seconds, its output in $builddir/fuzz-$1.log
# and its exit status in $builddir/fuzz-$1.status.
run_target () {
  target=$1
  work="$builddir/fuzz-corpus/$target"
  artifacts="$builddir/fuzz-artifacts"
  mkdir -p "$work" "$artifacts"

  case $target in
    parse) dict="-dict=$srcdir/fuzz/serio.dict" ;;
    npy|npz) dict="-dict=$srcdir/fuzz/numpy.dict" ;;
    *) dict= ;;
  esac

  rc=0
  "$builddir/fuzz/fuzz-$target" \
    -max_total_time="$seconds" \
    -timeout=25 \
    -rss_limit_mb=2048 \
    -max_len=8192 \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/$target-" \
    $dict \
    "$work" "$srcdir/fuzz/corpus/$target" >"$builddir/fuzz-$target.log" 2>&1 || rc=$?
  echo "$rc" >"$builddir/fuzz-$target.status"
}

# One target a processor at a time (each libFuzzer process is one thread),
# in waves; the logs are printed in order once a wave is done.
targets="parse roundtrip npy npz safetensors"
parallel=$(nproc 2>/dev/null || echo 1)
status=0
set -- $targets
while [ $# -gt 0 ]; do
  wave=
  while [ $# -gt 0 ] && [ "$(echo $wave | wc -w)" -lt "$parallel" ]; do
    wave="$wave $1"
    shift
  done
  for target in $wave; do
    echo "== fuzz-$target: $seconds s"
    # no status left from an earlier run: a target that writes none failed
    rm -f "$builddir/fuzz-$target.status"
    run_target "$target" &
  done
  wait
  for target in $wave; do
    echo "== fuzz-$target: output"
    cat "$builddir/fuzz-$target.log"
    if [ "$(cat "$builddir/fuzz-$target.status")" != 0 ]; then
      echo "fuzz-$target FAILED; reproducers in $builddir/fuzz-artifacts" >&2
      status=1
    fi
  done
done

exit $status
