# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compile the C that valac writes for a Vala file against the generated
serio-1.0.vapi with -Werror=discarded-qualifiers, and fail on a warning.

Meson compiles Vala's C with -w, so the build never shows these warnings;
this test does.

    check-c-warnings.py VALA_FILE VAPIDIR INCLUDE_DIR... -- VALAC -- CC...
"""

import subprocess
import sys
import tempfile


def main(argv):
    first, valac, cc = ' '.join(argv).split(' -- ')
    vala_file, vapidir, *includes = first.split()
    with tempfile.TemporaryDirectory(prefix='serio-vala-c-') as tmp:
        subprocess.run(valac.split() + ['-C', '--vapidir', vapidir, '--pkg', 'serio-1.0',
                                        '--pkg', 'gio-2.0', '-d', tmp, vala_file],
                       check=True)
        c_file = '%s/%s' % (tmp, vala_file.rsplit('/', 1)[-1][:-len('.vala')] + '.c')
        cflags = subprocess.run(['pkg-config', '--cflags', 'gio-2.0'], check=True,
                                capture_output=True, text=True).stdout.split()
        result = subprocess.run(cc.split() + ['-fsyntax-only', '-Wall',
                                              '-Werror=discarded-qualifiers']
                                + cflags + ['-I' + d for d in includes] + [c_file],
                                capture_output=True, text=True)
        sys.stderr.write(result.stderr)
        return result.returncode


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
