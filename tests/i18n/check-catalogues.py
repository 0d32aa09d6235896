#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks that po/ keeps up with the sources.

Usage:
  check-catalogues.py SRCROOT potfiles
      po/POTFILES.in is sorted and names exactly the files of libserio/ and
      tools/ that hold marked messages.
  check-catalogues.py SRCROOT catalogue LANG
      po/LANG.po, merged with a template made from the sources now, has every
      message translated, none fuzzy, none obsolete, and passes msgfmt --check
      (placeholders of c-format messages included).

xgettext, msgmerge and msgfmt are found on PATH.
"""

import os
import re
import subprocess
import sys
import tempfile

# The keywords and flags of meson's i18n "glib" preset, which po/meson.build
# uses to make the template.
XGETTEXT_ARGS = [
    '--from-code=UTF-8', '--add-comments',
    '--keyword=_', '--keyword=N_', '--keyword=C_:1c,2', '--keyword=NC_:1c,2',
    '--keyword=g_dcgettext:2', '--keyword=g_dngettext:2,3', '--keyword=g_dpgettext2:2c,3',
    '--flag=N_:1:pass-c-format', '--flag=C_:2:pass-c-format', '--flag=NC_:2:pass-c-format',
    '--flag=g_dngettext:2:pass-c-format', '--flag=g_strdup_printf:1:c-format',
    '--flag=g_string_printf:2:c-format', '--flag=g_string_append_printf:2:c-format',
    '--flag=g_error_new:3:c-format', '--flag=g_set_error:4:c-format',
    '--flag=g_markup_printf_escaped:1:c-format', '--flag=g_log:3:c-format',
    '--flag=g_print:1:c-format', '--flag=g_printerr:1:c-format', '--flag=g_printf:1:c-format',
    '--flag=g_fprintf:2:c-format', '--flag=g_sprintf:2:c-format', '--flag=g_snprintf:3:c-format',
]
SOURCE_DIRS = ['libserio', 'tools']


# The tools' own reports, which are parsed, in English whatever the caller's
# locale.
TOOL_ENV = {k: v for k, v in os.environ.items() if k != 'LANGUAGE'}
TOOL_ENV['LC_ALL'] = 'C.UTF-8'


def run(args, **kwargs):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=TOOL_ENV, **kwargs)


def template(srcroot, files):
    """The template xgettext makes from @files, as text."""
    return run(['xgettext', *XGETTEXT_ARGS, '--output=-', *files], cwd=srcroot).stdout


def read_potfiles(srcroot):
    with open(os.path.join(srcroot, 'po', 'POTFILES.in')) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith('#')]


def check_potfiles(srcroot):
    listed = read_potfiles(srcroot)
    problems = []
    if listed != sorted(set(listed)):
        problems.append('POTFILES.in is not sorted, or repeats a file')
    sources = sorted(os.path.join(d, name)
                     for d in SOURCE_DIRS
                     for name in os.listdir(os.path.join(srcroot, d))
                     if name.endswith(('.c', '.h')))
    marked = [path for path in sources if 'msgid "' in template(srcroot, [path]).split('\n\n', 1)[-1]]
    for path in sorted(set(marked) - set(listed)):
        problems.append('%s has marked messages but is not in POTFILES.in' % path)
    for path in sorted(set(listed) - set(marked)):
        problems.append('%s is in POTFILES.in but has no marked message' % path)
    return problems


def check_catalogue(srcroot, lang):
    listed = read_potfiles(srcroot)
    problems = []
    with tempfile.TemporaryDirectory(prefix='serio-po-') as tmp:
        pot = os.path.join(tmp, 'serio-1.0.pot')
        merged = os.path.join(tmp, lang + '.po')
        with open(pot, 'w') as f:
            f.write(template(srcroot, listed))
        run(['msgmerge', '--quiet', '--no-fuzzy-matching', '--output-file=' + merged,
             os.path.join(srcroot, 'po', lang + '.po'), pot])
        with open(merged, encoding='utf-8') as f:
            obsolete = [line for line in f if line.startswith('#~ msgid')]
        if obsolete:
            problems.append('%s.po has messages the sources no longer have: %s' % (
                lang, ''.join(obsolete).strip()))
        proc = subprocess.run(['msgfmt', '--check', '--statistics', '--output-file=/dev/null', merged],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=TOOL_ENV)
        report = proc.stdout.strip()
        print(report)
        if proc.returncode != 0:
            problems.append('msgfmt --check fails on %s.po' % lang)
        if re.search(r'\b(fuzzy|untranslated)\b', report):
            problems.append('%s.po is not complete: %s' % (lang, report.splitlines()[-1]))
    return problems


def main():
    srcroot, mode = sys.argv[1:3]
    if mode == 'potfiles':
        problems = check_potfiles(srcroot)
    else:
        problems = check_catalogue(srcroot, sys.argv[3])
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
