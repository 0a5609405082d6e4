#!/usr/bin/env python3
"""idiom_guard.py PATH...: fails, one line per use, when a test holds inline Python or shell.

Issue 37 ("one test idiom per language"): a shell test's Python check is a subcommand of
tests/lib/checks.py, never a heredoc fed to python3 (directly or through a wrapper
function) nor a `python3 -c` one-liner. A directory PATH is searched for *.sh files (build
directories and .git skipped); a file PATH is read whatever its name (the guard's own
fixture, tests/lib/idiom_guard/planted.txt, is no *.sh so that the tree passes).
In CMake files (CMakeLists.txt, *.cmake) a test's command is a program with its arguments:
no `python3 -c` and no `sh -c` program in a string (tests/lib/expect_output.sh checks an
exit code and output, `--absent PATH` that nothing was written; files a test reads are
written at configure time). A CMake `sh -c` stays only under a comment line holding
"sh -c because" and the reason. A file PATH whose name holds "cmake" is read as CMake.
Exit 0 when none, 1 with "FILE:LINE: why" lines on stderr, 2 on a bad PATH.
"""
import pathlib
import re
import sys

HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
# A line of Python at the start of a heredoc's line: an import, a def, a print call.
PYTHON_LINE = re.compile(r"^\s*(import \w|from [\w.]+ import |def \w+\(|print\()")
# python3 -c, /usr/bin/python3 -c, "$py" -c (a variable naming the interpreter).
ONE_LINER = re.compile(r"(python[0-9.]*|\$\{?py\w*\}?)[\"']?\s+-c\b")
# A shell program in a CMake string: sh -c, bash -c.
SHELL_ONE_LINER = re.compile(r"\b(ba)?sh[\"']?\s+[\"']?-c\b")
ALLOWED = "sh -c because"


def heredoc_uses(lines):
    """(line number, why) of every heredoc whose body has a line of Python."""
    hits, i = [], 0
    while i < len(lines):
        m = HEREDOC.search(lines[i]) if "<<<" not in lines[i] else None
        if not m:
            i += 1
            continue
        end = next((k for k in range(i + 1, len(lines)) if lines[k].strip() == m.group(2)), len(lines))
        if any(PYTHON_LINE.match(line) for line in lines[i + 1:end]):
            hits.append((i + 1, f"an inline Python heredoc (<<{m.group(2)}): make it a tests/lib/checks.py subcommand"))
        i = end + 1
    return hits


def uses(path):
    """Every "FILE:LINE: why" of inline Python in one file."""
    lines = path.read_text(errors="replace").split("\n")
    hits = heredoc_uses(lines)
    for n, line in enumerate(lines, 1):
        if not line.lstrip().startswith("#") and ONE_LINER.search(line):
            hits.append((n, "a `python3 -c` one-liner: make it a tests/lib/checks.py subcommand"))
    if is_cmake(path):
        hits += cmake_shell_uses(lines)
    return [f"{path}:{n}: {why}" for n, why in sorted(hits)]


def is_cmake(path):
    return path.name == "CMakeLists.txt" or path.suffix == ".cmake" or "cmake" in path.name


def cmake_shell_uses(lines):
    """(line number, why) of every `sh -c` in a CMake file whose comment right above has no "sh -c because"."""
    hits = []
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("#") or not SHELL_ONE_LINER.search(line):
            continue
        k, comment = n - 2, ""
        while k >= 0 and lines[k].lstrip().startswith("#"):  # the comment block right above
            comment, k = lines[k] + comment, k - 1
        if ALLOWED not in comment:
            hits.append((n, "an `sh -c` program in CMake: a script, tests/lib/expect_output.sh or a "
                            "checks.py subcommand (or a comment saying \"sh -c because ...\")"))
    return hits


def test_files(root):
    paths = [*root.rglob("*.sh"), *root.rglob("CMakeLists.txt"), *root.rglob("*.cmake")]
    for path in sorted(paths):
        if not any(part.startswith("build") or part == ".git" for part in path.relative_to(root).parts):
            yield path


def main(args):
    if not args:
        sys.exit("usage: idiom_guard.py PATH...")
    found, count = [], 0
    for arg in args:
        root = pathlib.Path(arg)
        if not root.exists():
            print(f"idiom_guard.py: no such file or directory: {arg}", file=sys.stderr)
            return 2
        files = list(test_files(root)) if root.is_dir() else [root]
        count += len(files)
        for path in files:
            found += uses(path)
    for line in found:
        print(line, file=sys.stderr)
    if not found:
        print(f"no inline Python or CMake shell program in {count} test files")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
