#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-check-abi.sh BUILDDIR: shows that check-abi.sh fails on a removed
# function and passes on the build the baseline was made from and on an
# added one. A removal is simulated by a baseline that names one exported
# function more (serio_reader_get_size as serio_reader_get_size_removed),
# an addition by one that lacks a function (serio_check_version).
set -eu

srcdir=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
check="$srcdir/build-aux/check-abi.sh"
baseline="$srcdir/build-aux/abi/libserio-1.0.abi"
builddir=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$check" "$builddir" >/dev/null

sed "s/'serio_reader_get_size'/'serio_reader_get_size_removed'/g" "$baseline" > "$tmp/removed.abi"
if SERIO_ABI_BASELINE="$tmp/removed.abi" "$check" "$builddir" > "$tmp/removed.log" 2>&1; then
  echo "FAIL: a removed function passed" >&2
  cat "$tmp/removed.log" >&2
  exit 1
fi
grep -q "serio_reader_get_size_removed" "$tmp/removed.log"

# A baseline without serio_check_version: the library adds it.
python3 - "$baseline" "$tmp/added.abi" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r"\s*<elf-symbol name='serio_check_version'[^>]*/>", '', text)
text = re.sub(r"\s*<function-decl name='serio_check_version'.*?</function-decl>", '', text, flags=re.S)
open(sys.argv[2], 'w').write(text)
PY
SERIO_ABI_BASELINE="$tmp/added.abi" "$check" "$builddir" > "$tmp/added.log" 2>&1 || {
  echo "FAIL: an added function failed" >&2
  cat "$tmp/added.log" >&2
  exit 1
}
grep -q "compatible ABI additions" "$tmp/added.log"
echo "ok: check-abi.sh fails on a removed function, passes on the baseline and on an addition"
