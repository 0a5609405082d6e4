#!/usr/bin/env python3
"""Every function at most LIMIT lines (the house rule, docs/ARCHITECTURE.md).

    function_size.py [--limit 80] [--expect FILE] [--waiting FILE] DIR_OR_FILE...

Reads the C and C++ sources (.c .cc .cpp .h .hpp) under each DIR and prints one line per
function whose body spans more than LIMIT lines, as clang-tidy's
readability-function-size counts them with LineThreshold=LIMIT: the line of the body's
closing brace minus that of its opening brace. Exits 1 when there is one, 0 when
there is none, 2 on bad input. With --expect FILE: exits 0 when the lines it prints
are FILE's, 1 (showing both) when not. With --waiting FILE: the functions it names
("PATH NAME" lines, # comments), each still to be split, are reported but do not fail
the run; one of them that is no longer over the limit fails it (take it off the list).

A lexer, not a compiler: comments, string and character literals (raw strings and
digit separators too) and preprocessor lines are skipped, then every brace block
opened at namespace or class scope (or in an initializer there) is classified by the
text before it: a namespace, a class, struct, union or enum, an initializer, or a
function body (the text ends in a parameter list and its qualifiers, a trailing
return type, or a constructor's member initializers). A function's nested blocks and
lambdas count as its lines; a lambda that initializes a variable outside any function
is not a function (clang-tidy does not count it either). It needs no compile database and reads the whole tree in a
second. The test function_size_cases checks it on fixed code
(tests/lib/function_size/cases.cpp, whose counts agree with clang-tidy 14's).
"""
import os
import re
import sys

SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")
QUALIFIERS = {"const", "volatile", "noexcept", "override", "final", "mutable", "&", "&&", "constexpr", "try"}


def strip(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end) or " ")
            i = end
            continue
        m = re.compile(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c == "'" and i > 0 and (text[i - 1].isalnum()) and number_before(text, i):
            i += 1  # a digit separator (1'000)
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def number_before(text, i):
    """Whether the token that ends at i is a number (so a ' there is a digit separator)."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "'._"):
        j -= 1
    return text[j].isdigit()


def depth0(s):
    """s with the insides of every (...), [...] and {...} dropped (the brackets kept)."""
    out, depth = [], 0
    for ch in s:
        if ch in "([{":
            if depth == 0:
                out.append(ch)
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
            if depth == 0:
                out.append(ch)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def classify(head):
    """What a '{' opens, from the text since the last ';', '{' or '}' at its level."""
    words = re.findall(r"operator\s*(?:\(\)|\[\]|[^\s\w(]+)|[A-Za-z_]\w*|->|::|&&|[^\sA-Za-z_0-9]", depth0(head))
    if not words:
        return "other"
    if "namespace" in words or (words[0] == "extern" and "(" not in words):
        return "namespace"
    if any(a == "=" and b == "[" for a, b in zip(words, words[1:])):
        return "other"  # a lambda initializing a variable: not counted (as clang-tidy)
    if ")" in words:
        tail = words[len(words) - words[::-1].index(")"):]
        while tail and tail[0] in QUALIFIERS:
            tail = tail[1:]
        if not tail or tail[0] == "->":
            return "function"  # a parameter list, its qualifiers, a trailing return type
        if tail[0] == ":":
            # A constructor's member initializers: a brace after a member's name is its
            # initializer (`a_{1}`); the body's follows ')' or '}'.
            return "function" if words[-1] in (")", "}") else "init"
    if any(w in ("class", "struct", "union", "enum") for w in words) and "=" not in words:
        return "class"
    return "other"


def long_functions(path, limit):
    text = strip(open(path, encoding="utf-8", errors="replace").read())
    found = []
    stack = []  # (kind, line, head)
    head_start = 0
    line = 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch in ";":
            if not stack or stack[-1][0] != "function":
                head_start = i + 1
        elif ch == "{":
            in_function = any(k == "function" for k, _, _ in stack)
            if in_function:
                stack.append(("block", line, ""))
                continue
            head = text[head_start:i]
            kind = classify(head)
            stack.append((kind, line, head))
            if kind != "init":
                head_start = i + 1
        elif ch == "}":
            if not stack:
                continue
            kind, start, head = stack.pop()
            if kind == "function" and line - start > limit:
                found.append((start, line - start, name_of(head)))
            if kind != "init" and (not stack or stack[-1][0] != "function"):
                head_start = i + 1
    return found


def name_of(head):
    flat = depth0(" ".join(head.split()))
    m = re.findall(r"((?:[A-Za-z_~][\w:<>~]*)|operator\S+)\s*\(", flat)
    return m[0] if m else "(lambda)"


def main(argv):
    limit, expect, waiting_file, args = 80, None, None, argv[1:]
    while args[:1] in (["--limit"], ["--expect"], ["--waiting"]):
        if len(args) < 2 or (args[0] == "--limit" and not args[1].isdigit()):
            print(f"function_size.py: {args[0]} needs a value", file=sys.stderr)
            return 2
        if args[0] == "--limit":
            limit = int(args[1])
        elif args[0] == "--waiting":
            waiting_file = args[1]
        else:
            expect = args[1]
        args = args[2:]
    if not args:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    files = []
    for a in args:
        if os.path.isfile(a):
            files.append(a)
        elif os.path.isdir(a):
            for root, dirs, names in os.walk(a):
                dirs.sort()
                files += [os.path.join(root, f) for f in sorted(names) if f.endswith(SUFFIXES)]
        else:
            print(f"function_size.py: no such file or directory: {a}", file=sys.stderr)
            return 2
    found = [(f, start, lines, name) for f in files for start, lines, name in long_functions(f, limit)]
    if waiting_file is not None:
        waiting = {tuple(line.split()[:2]) for line in open(waiting_file)
                   if line.strip() and not line.startswith("#")}
        for f, start, lines, name in found:
            if (f, name) in waiting:
                print(f"{f}:{start}: function '{name}' is {lines} lines: waiting to be split ({waiting_file})")
        done = waiting - {(f, name) for f, _, _, name in found}
        for f, name in sorted(done):
            print(f"{f}: function '{name}' is no longer over {limit} lines: take it off {waiting_file}")
        found = [x for x in found if (x[0], x[3]) not in waiting]
        if done and not found:
            return 1
    report = [f"{f}:{start}: function '{name}' is {lines} lines (more than {limit})" for f, start, lines, name in found]
    if report:
        print("\n".join(report + [f"{len(report)} function(s) over {limit} lines: split them "
                                   "(test function_size, tests/CMakeLists.txt)"]))
    if expect is not None:
        wanted = open(expect).read().splitlines()
        if report == wanted:
            return 0
        print("function_size.py: expected instead:\n" + "\n".join(wanted), file=sys.stderr)
        return 1
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
