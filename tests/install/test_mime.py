# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""The MIME type that libserio installs (data/libserio.xml): with it in a
MIME database, GIO (as file managers and xdg-open use it) calls a file
application/x-serio by its *.serio name, and by its first bytes "v1|"
when the name says nothing; without it, it does not (so the test can
fail)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

GUESS = r'''
import sys
from gi.repository import Gio
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        data = f.read(4096)
    name = path if path.endswith('.serio') else None
    kind, _ = Gio.content_type_guess(name, data)
    print(kind)
'''


class MimeTest(unittest.TestCase):

    def guess(self, paths, with_type):
        """The content types GIO guesses for paths in a MIME database of
        freedesktop.org.xml, plus libserio.xml when with_type."""
        home = tempfile.mkdtemp(prefix='serio-mime-')
        self.addCleanup(shutil.rmtree, home)
        packages = os.path.join(home, 'mime', 'packages')
        os.makedirs(packages)
        shutil.copy('/usr/share/mime/packages/freedesktop.org.xml', packages)
        if with_type:
            shutil.copy(os.environ['SERIO_MIME_XML'], packages)
        # Without fsync (shared-mime-info's own switch): a scratch database.
        env = dict(os.environ, XDG_DATA_HOME=home, XDG_DATA_DIRS=home,
                   PKGSYSTEM_ENABLE_FSYNC='0')
        subprocess.run(['update-mime-database', os.path.join(home, 'mime')], check=True,
                       env=env)
        result = subprocess.run([sys.executable, '-c', GUESS] + paths, env=env,
                                check=True, capture_output=True, text=True)
        return result.stdout.split()

    def test_glob_and_magic(self):
        scratch = tempfile.mkdtemp(prefix='serio-mime-files-')
        self.addCleanup(shutil.rmtree, scratch)
        named = os.path.join(scratch, 'model.serio')
        unnamed = os.path.join(scratch, 'weights')
        for path in (named, unnamed):
            with open(path, 'w') as f:
                f.write('v1|serio.sealed|1|1\nv1|w[2]|2|1p-1,3\n')
        self.assertEqual(self.guess([named, unnamed], True),
                         ['application/x-serio', 'application/x-serio'])
        self.assertNotIn('application/x-serio', self.guess([named, unnamed], False))


if __name__ == '__main__':
    if shutil.which('update-mime-database') is None or \
            not os.path.exists('/usr/share/mime/packages/freedesktop.org.xml'):
        print('shared-mime-info is not installed')
        sys.exit(77)
    unittest.main()
