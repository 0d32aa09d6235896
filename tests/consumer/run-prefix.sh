#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-prefix.sh PREFIX: the installed-consumer test for an install under a
# prefix other than /usr (such as /opt/serio), done the way
# docs/installing.md tells a user: in an environment that knows nothing of
# the prefix, `. PREFIX/share/serio-1.0/env.sh`, then build and run the C,
# Python, GJS and Vala consumers and the serio tool. Each consumer checks
# that the files it used came from under PREFIX. Prints one line per
# consumer; exits 1 if any failed.
#
# The build must have been configured with --prefix=PREFIX and installed
# (meson install) before.

set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi

prefix=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
env_sh=$prefix/share/serio-1.0/env.sh
if [[ ! -f $env_sh ]]; then
  echo "run-prefix.sh: $env_sh is not installed" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/serio-prefix.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# A shell with only what a login gives, then the page's one line.
in_env () {
  env -i HOME="$tmp" PATH=/usr/bin:/bin LANG=C.UTF-8 TMPDIR="$tmp" \
    SERIO_CONSUMER_ROOT="$prefix" CC="${CC:-cc}" \
    bash -c ". '$env_sh' && $1"
}

consumer_tool () {
  in_env "serio --help >/dev/null && command -v serio"
}

consumer_c () {
  in_env "\$CC -Wall -Wextra -Werror -o '$tmp/consumer-c' '$here/consumer.c' \$(pkg-config --cflags --libs serio-1.0) &&
          ldd '$tmp/consumer-c' | grep -q ' $prefix/.*libserio-1\.0\.so' &&
          '$tmp/consumer-c'"
}

consumer_python () {
  in_env "/usr/bin/python3 -B '$here/consumer.py'"
}

consumer_gjs () {
  in_env "gjs -m '$here/consumer.js'"
}

consumer_vala () {
  in_env "valac --pkg serio-1.0 -d '$tmp/vala' -o '$tmp/consumer-vala' '$here/consumer.vala' &&
          '$tmp/consumer-vala'"
}

failed=0
for consumer in tool c python gjs vala; do
  set +e
  "consumer_$consumer" >"$tmp/$consumer.log" 2>&1
  status=$?
  set -e
  if [[ $status -eq 0 ]]; then
    printf '%-6s ok    %s\n' "$consumer" "$(tail -n 1 "$tmp/$consumer.log")"
  else
    printf '%-6s FAIL  (exit %d)\n' "$consumer" "$status"
    sed 's/^/        /' "$tmp/$consumer.log"
    failed=1
  fi
done
exit "$failed"
