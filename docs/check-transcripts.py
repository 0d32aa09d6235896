# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run the shell transcripts and Python sessions of content pages.

A fenced block marked `console` is a shell session: a line that starts with
"$ " is a command, and the lines up to the next command are what it prints,
standard output and standard error together. All the console blocks of a
page run in page order in one bash process, in an empty temporary directory
that is also $HOME, under the C.UTF-8 locale, with the serio tool given by
--serio first on PATH (and python3 the interpreter running this script), so
a file one command makes is there for the next, and `echo $?` shows the exit
status of the command before it.

A fenced block marked `pycon` is a Python session, checked with doctest. All
the pycon blocks of a page share one namespace.

Exits 77 (skipped) when a page uses NumPy and NumPy cannot be imported,
or runs git and git is not installed.
"""

import argparse
import difflib
import doctest
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE_RE = re.compile(r"^```(?P<info>\S*)\s*$")
PROMPT = "$ "
# Printed after every command, so that the output can be split per command.
MARK = "@@check-transcripts: command done@@"
EXIT_SKIP = 77


def blocks(page_path, language):
    """Yield (line number of the first line, lines) per block of language."""
    with open(page_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        match = FENCE_RE.match(lines[i])
        i += 1
        if match is None:
            continue
        start = i
        while i < len(lines) and not FENCE_RE.match(lines[i]):
            i += 1
        if i == len(lines):
            raise ValueError(f"{page_path}:{start}: unterminated code block")
        if match["info"] == language:
            yield start + 1, lines[start:i]
        i += 1


def commands(page_path):
    """Return [(line number, command, expected output lines)] of a page."""
    result = []
    for first_line, lines in blocks(page_path, "console"):
        for offset, line in enumerate(lines):
            if line.startswith(PROMPT):
                result.append((first_line + offset, line[len(PROMPT):], []))
            elif result and result[-1][0] >= first_line:
                result[-1][2].append(line)
            else:
                raise ValueError(f"{page_path}:{first_line + offset}: a "
                                 "console block must start with a command")
    return result


def shell_env(serio, bin_dir, home):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("LC_", "LANG", "GIT_", "BASH_ENV"))}
    env.update({
        "PATH": os.pathsep.join([os.path.dirname(os.path.abspath(serio)),
                                 bin_dir, env.get("PATH", os.defpath)]),
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        # git: no system or user configuration, a fixed identity, and the
        # default branch set so that `git init` gives no hint.
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Docs",
        "GIT_AUTHOR_EMAIL": "docs@example.org",
        "GIT_COMMITTER_NAME": "Docs",
        "GIT_COMMITTER_EMAIL": "docs@example.org",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "init.defaultBranch",
        "GIT_CONFIG_VALUE_0": "main",
    })
    return env


def check_console(page_path, serio):
    """Run the console blocks of a page; return a list of error texts."""
    session = commands(page_path)
    if not session:
        return []
    if serio is None:
        return [f"{page_path}: has console blocks, but --serio is not given"]

    with tempfile.TemporaryDirectory(prefix="serio-docs-") as tmp:
        work = os.path.join(tmp, "work")
        bin_dir = os.path.join(tmp, "bin")
        os.mkdir(work)
        os.mkdir(bin_dir)
        os.symlink(sys.executable, os.path.join(bin_dir, "python3"))

        script = "".join(f"{command}\n__status=$?; printf '%s\\n' '{MARK}'; "
                         "(exit $__status)\n"
                         for _, command, _ in session)
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script],
            cwd=work, env=shell_env(serio, bin_dir, work),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, encoding="utf-8",
            errors="backslashreplace", check=False)

    outputs = result.stdout.split(MARK + "\n")
    errors = []
    for (line, command, expected), actual in zip(session, outputs):
        expected_text = "".join(e + "\n" for e in expected)
        if actual != expected_text:
            diff = difflib.unified_diff(expected_text.splitlines(True),
                                        actual.splitlines(True),
                                        "documented", "actual")
            errors.append(f"{page_path}:{line}: the output of `{command}` "
                          "differs:\n" + "".join(diff))
    if len(outputs) != len(session) + 1:
        errors.append(f"{page_path}: the session stopped early:\n"
                      + result.stdout)
    if not errors:
        print(f"{page_path}: the output of {len(session)} commands is as "
              "shown")
    return errors


def check_pycon(page_path):
    """Run the pycon blocks of a page with doctest; return error texts."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(verbose=False)
    globs = {"__name__": "__main__"}
    for first_line, lines in blocks(page_path, "pycon"):
        test = parser.get_doctest("\n".join(lines) + "\n", globs,
                                  os.path.basename(page_path), page_path,
                                  first_line - 1)
        runner.run(test, clear_globs=False)
        # A DocTest runs in a copy of the namespace it is given.
        globs = test.globs
    failed, attempted = runner.summarize(verbose=False)
    if attempted:
        print(f"{page_path}: {attempted - failed} of {attempted} Python "
              "examples pass")
    return [f"{page_path}: {failed} Python examples fail"] if failed else []


def missing_requirement(page_path):
    """Return what the page needs and this system lacks, or None."""
    with open(page_path, encoding="utf-8") as f:
        if "numpy" in f.read():
            try:
                import numpy  # noqa: F401
            except ImportError:
                return "NumPy"
    if (shutil.which("git") is None
            and any(command.startswith("git ")
                    for _, command, _ in commands(page_path))):
        return "git"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serio", help="the serio tool the console "
                        "blocks run")
    parser.add_argument("pages", nargs="+")
    args = parser.parse_args()

    errors = []
    for page in args.pages:
        try:
            missing = missing_requirement(page)
            if missing is not None:
                print(f"{page} needs {missing}, which is missing: skipped")
                return EXIT_SKIP
            errors += check_console(page, args.serio) + check_pycon(page)
        except (OSError, ValueError) as error:
            errors.append(str(error))
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
