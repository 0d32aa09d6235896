# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check that the guides quote the example programs verbatim.

In a content page, a fenced code block right after the comment
`<!-- quote: examples/c/example.c -->` quotes that file. The quotes of one
file, taken in page order, must be the whole file cut at blank lines: the
page then shows exactly the program that `meson test --suite docs` builds
and runs, with prose between its pieces.
`--expect PAGE=FILE` makes quoting FILE mandatory for PAGE. Every page must
also start with a `Title:` line, as gi-docgen expects.
"""

import argparse
import os
import re
import sys

MARKER_RE = re.compile(r"^<!-- quote: (?P<path>\S+) -->$")
FENCE_RE = re.compile(r"^```")


def quotes(page_path):
    """Yield (line number, quoted path, block text) for each quote."""
    with open(page_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        match = MARKER_RE.match(lines[i])
        i += 1
        if match is None:
            continue
        start = i
        while i < len(lines) and lines[i] == "":
            i += 1
        if i == len(lines) or not FENCE_RE.match(lines[i]):
            raise ValueError(f"{page_path}:{start}: the quote marker is not "
                             "followed by a fenced code block")
        end = i + 1
        while end < len(lines) and not FENCE_RE.match(lines[end]):
            end += 1
        if end == len(lines):
            raise ValueError(f"{page_path}:{i + 1}: unterminated code block")
        yield start, match["path"], "".join(line + "\n" for line in lines[i + 1:end])
        i = end + 1


def check_page(page_path, source_root):
    errors = []
    with open(page_path, encoding="utf-8") as f:
        if not f.readline().startswith("Title: "):
            errors.append(f"{page_path}:1: the page does not start with 'Title: '")

    quoted = {}
    for line, path, text in quotes(page_path):
        quoted.setdefault(path, []).append((line, text))

    for path, parts in quoted.items():
        with open(os.path.join(source_root, path), encoding="utf-8") as f:
            expected = f.read()
        offset = 0
        for line, text in parts:
            if offset > 0:
                while expected.startswith("\n", offset):
                    offset += 1
            if not expected.startswith(text, offset):
                errors.append(f"{page_path}:{line}: this quote of {path} "
                              "differs from the file at that point")
                break
            offset += len(text)
        else:
            if offset != len(expected):
                errors.append(f"{page_path}: the quotes of {path} stop before "
                              f"the end of the file (at character {offset} "
                              f"of {len(expected)})")
    return errors, sorted(quoted)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-root", required=True)
    parser.add_argument("--expect", metavar="PAGE=FILE", action="append",
                        default=[], help="PAGE must quote FILE")
    parser.add_argument("pages", nargs="+")
    args = parser.parse_args()
    expected = set(tuple(e.split("=", 1)) for e in args.expect)

    all_errors = []
    for page in args.pages:
        try:
            errors, paths = check_page(page, args.source_root)
        except (OSError, ValueError) as error:
            errors, paths = [str(error)], []
        all_errors += errors
        for path in paths:
            print(f"{os.path.basename(page)} quotes {path}")
            expected.discard((os.path.basename(page), path))
    all_errors += [f"{page} does not quote {path}" for page, path in sorted(expected)]
    for error in all_errors:
        print(error, file=sys.stderr)
    return 1 if all_errors else 0


if __name__ == "__main__":
    sys.exit(main())
