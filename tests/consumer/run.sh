#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run.sh BUILD_DIR: the installed-consumer test.
#
# Installs BUILD_DIR into a temporary DESTDIR and uses only what landed there,
# as a distribution or a user would: an out-of-tree C program built with
# `pkg-config --cflags --libs serio-1.0`, a PyGObject snippet (with the
# installed Serio override), a GJS snippet, and a Vala program built with
# `valac --pkg serio-1.0`. Each checks a bit-exact round trip and an error
# code, and checks that the files it used came from the DESTDIR.
# Prints one line per consumer; exits 1 if any failed.
#
# Needs: meson, pkg-config (pkgconf), a C compiler ($CC, default cc),
# /usr/bin/python3 with PyGObject (python3-gi; $SERIO_CONSUMER_PYTHON
# overrides the interpreter), gjs with the GIRepository typelib
# (gir1.2-glib-2.0), valac.

# The consumer_* functions are called by name, through "consumer_$consumer".
# shellcheck disable=SC2317

set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi

build_dir=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
python=${SERIO_CONSUMER_PYTHON:-/usr/bin/python3}

# Nothing may reach the build tree, or a libserio found by the caller's
# environment. The caller's PKG_CONFIG_PATH stays, behind the DESTDIR, for
# the dependencies.
unset LD_LIBRARY_PATH GI_TYPELIB_PATH PYTHONPATH PKG_CONFIG_SYSROOT_DIR

tmp=$(mktemp -d "${TMPDIR:-/tmp}/serio-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
destdir=$tmp/destdir
cd "$tmp"

if ! meson install -C "$build_dir" --destdir "$destdir" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  echo "run.sh: meson install failed" >&2
  exit 1
fi

# The one installed file called $1.
installed () {
  local found
  mapfile -t found < <(find "$destdir" -name "$1" \( -type f -o -type l \))
  if [[ ${#found[@]} -ne 1 ]]; then
    echo "run.sh: expected one installed $1, found ${#found[@]}: ${found[*]}" >&2
    return 1
  fi
  printf '%s\n' "${found[0]}"
}

# $1 must exist and lie in the DESTDIR.
in_destdir () {
  if [[ $(realpath -e "$1") != "$destdir"/* ]]; then
    echo "run.sh: '$1' is missing or not in the DESTDIR $destdir" >&2
    return 1
  fi
}

# The .pc file names the real prefix. pkgconf's --define-prefix guesses it
# wrongly under a multiarch libdir (lib/x86_64-linux-gnu), and both it and
# PKG_CONFIG_SYSROOT_DIR rewrite the paths of glib-2.0 too; a copy with the
# DESTDIR put in front of its prefix changes nothing else.
pc=$(installed serio-1.0.pc)
prefix=$(sed -n 's/^prefix=//p' "$pc")
mkdir "$tmp/pkgconfig"
sed "s|^prefix=.*|prefix=$destdir$prefix|" "$pc" >"$tmp/pkgconfig/serio-1.0.pc"
export PKG_CONFIG_PATH=$tmp/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
libdir=$(pkg-config --variable=libdir serio-1.0)
in_destdir "$libdir"
in_destdir "$libdir/libserio-1.0.so"
typelib=$(installed Serio-1.0.typelib)
typelib_dir=$(dirname "$typelib")
vapi=$(installed serio-1.0.vapi)
vapi_dir=$(dirname "$vapi")
override=$(installed Serio.py)
if [[ $override != */gi/overrides/Serio.py ]]; then
  echo "run.sh: the override $override is not in a gi/overrides directory" >&2
  exit 1
fi
python_dir=${override%/gi/overrides/Serio.py}

# Runs the program $1 with the installed library, once ldd has shown that
# the dynamic linker picks that one.
run_installed () {
  export LD_LIBRARY_PATH=$libdir
  in_destdir "$(ldd "$1" | awk '$1 ~ /^libserio-1\.0\.so/ { print $3 }')"
  "$1"
}

consumer_c () {
  local flags
  read -ra flags <<<"$(pkg-config --cflags --libs serio-1.0)"
  "${CC:-cc}" -Wall -Wextra -Werror -MD -MF "$tmp/consumer-c.d" \
    -o "$tmp/consumer-c" "$here/consumer.c" "${flags[@]}"
  in_destdir "$(grep -o '[^ ]*/serio\.h' "$tmp/consumer-c.d")"
  run_installed "$tmp/consumer-c"
}

consumer_python () {
  SERIO_CONSUMER_ROOT=$destdir GI_TYPELIB_PATH=$typelib_dir \
    LD_LIBRARY_PATH=$libdir PYTHONPATH=$python_dir \
    "$python" -B "$here/consumer.py"
}

consumer_gjs () {
  SERIO_CONSUMER_ROOT=$destdir GI_TYPELIB_PATH=$typelib_dir \
    LD_LIBRARY_PATH=$libdir gjs -m "$here/consumer.js"
}

consumer_vala () {
  # valac looks the C flags up with pkg-config itself.
  valac --verbose --vapidir "$vapi_dir" --pkg serio-1.0 \
    -d "$tmp/vala" -o "$tmp/consumer-vala" "$here/consumer.vala" | tee "$tmp/valac.log"
  in_destdir "$(sed -n "s/^Loaded package \`\(.*\/serio-1\.0\.vapi\)'$/\1/p" "$tmp/valac.log")"
  run_installed "$tmp/consumer-vala"
}

failed=0
for consumer in c python gjs vala; do
  # The subshell runs outside any condition, so that set -e holds in it.
  set +e
  (set -e; "consumer_$consumer") >"$tmp/$consumer.log" 2>&1
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
