#!/usr/bin/env python3
"""BENCHMARKS.md keeps its promises, checked:
- every table of its "Current results" section has the columns date, commit and command and one
  whose name holds "floor", and every row fills them: a date YYYY-MM-DD, at least one commit id
  (7-40 hex digits, one of them a digit) that is an ancestor of HEAD (`git merge-base
  --is-ancestor`: a rebased branch's commit stays in the checkout that measured it, not in a
  clone), a command in backticks, a floor that is not empty;
- every image the page shows exists, and the line after it names the scripts/bench/ script that
  draws it (which exists too);
- every relative link of BENCHMARKS.md, docs/*.md and the READMEs leads to a file that exists,
  and where it names a section of a Markdown file (#anchor), to a heading of that file.

    check_benchmarks.py SOURCE_DIR

Commits are checked only in a git checkout with its whole history: in a shallow clone (or an
exported tree) they are skipped, with a note; everything else is checked everywhere.
"""
import os
import re
import subprocess
import sys
import unicodedata

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
PAGE = "BENCHMARKS.md"
failures = []


def fail(where, what):
    failures.append(f"{where}: {what}")


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    out = []
    for ch in text:
        if ch == " ":
            out.append("-")
        elif ch in "-_" or unicodedata.category(ch)[0] in "LN":
            out.append(ch)
    return "".join(out)


def anchors(rel):
    seen, result = {}, set()
    in_code = False
    for line in read(rel).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            result.add(s if n == 0 else f"{s}-{n}")
    return result


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)


def commit_checker():
    top = git("rev-parse", "--show-toplevel")
    if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(ROOT):
        print("note: not a git checkout of its own: commits not checked")
        return None
    shallow = git("rev-parse", "--is-shallow-repository")
    if shallow.stdout.strip() == "true":
        print("note: a shallow clone: commits not checked (git fetch --unshallow checks them)")
        return None
    # An ancestor of HEAD, not merely an object here: a commit of a branch that was rebased stays
    # in the checkout that measured it, but a clone of main does not have it.
    return lambda c: (git("cat-file", "-e", f"{c}^{{commit}}").returncode == 0
                      and git("merge-base", "--is-ancestor", c, "HEAD").returncode == 0)


def section(text, title_prefix):
    """The lines of the '## ' section whose title starts with title_prefix, with their numbers."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("## " + title_prefix)), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [(i + 1, lines[i]) for i in range(start + 1, end)]


def cells(line):
    # A table row: split on | outside code spans.
    parts, cur, code = [], "", False
    for ch in line.strip()[1:]:
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts


def check_current_results(text, has_commit):
    body = section(text, "Current results")
    if not body:
        fail(PAGE, 'no "## Current results" section')
        return
    tables, cur = [], []
    for n, line in body:
        if line.startswith("|"):
            cur.append((n, line))
        elif cur:
            tables.append(cur)
            cur = []
    if cur:
        tables.append(cur)
    if not tables:
        fail(PAGE, '"Current results" holds no table')
    rows_checked = 0
    for table in tables:
        n0, header = table[0]
        names = [c.lower() for c in cells(header)]
        col = {}
        for key in ("date", "commit", "command"):
            idx = [i for i, c in enumerate(names) if c == key]
            if not idx:
                fail(f"{PAGE}:{n0}", f'a current-results table without a "{key}" column')
            else:
                col[key] = idx[0]
        floors = [i for i, c in enumerate(names) if "floor" in c]
        if not floors:
            fail(f"{PAGE}:{n0}", 'a current-results table without a column naming its "floor"')
        if len(table) < 3:
            fail(f"{PAGE}:{n0}", "a current-results table without rows")
        for n, line in table[2:]:
            row = cells(line)
            where = f"{PAGE}:{n}"
            if len(row) != len(names):
                fail(where, f"{len(row)} cells under {len(names)} columns")
                continue
            rows_checked += 1
            if "date" in col and not re.search(r"\b20\d\d-[01]\d-[0-3]\d\b", row[col["date"]]):
                fail(where, f"no date YYYY-MM-DD in {row[col['date']]!r}")
            if "commit" in col:
                ids = [t for t in re.findall(r"\b[0-9a-f]{7,40}\b", row[col["commit"]]) if re.search(r"\d", t)]
                if not ids:
                    fail(where, f"no commit id in {row[col['commit']]!r}")
                elif has_commit:
                    for c in ids:
                        if not has_commit(c):
                            fail(where, f"commit {c} is not in this repository's history (HEAD's ancestors)")
            if "command" in col and not re.search(r"`[^`]+`", row[col["command"]]):
                fail(where, f"no command in backticks in {row[col['command']]!r}")
            for i in floors:
                if not row[i].strip(" -–—"):
                    fail(where, f'empty floor under "{names[i]}"')
    print(f"current results: {len(tables)} tables, {rows_checked} rows")


def check_images(text):
    lines = text.splitlines()
    shown = 0
    for i, line in enumerate(lines):
        for alt, target in re.findall(r"!\[([^\]]*)\]\(([^)\s]+)\)", line):
            shown += 1
            where = f"{PAGE}:{i + 1}"
            if not os.path.isfile(os.path.join(ROOT, target)):
                fail(where, f"image {target} does not exist")
            rest = [l for l in lines[i + 1:i + 4] if l.strip() and not l.startswith("![")]
            scripts = re.findall(r"scripts/bench/[\w./-]+\.(?:py|sh)", rest[0]) if rest else []
            if not scripts:
                fail(where, f"the line after image {target} names no scripts/bench/ script that draws it")
            for s in scripts:
                if not os.path.isfile(os.path.join(ROOT, s)):
                    fail(where, f"{s} (which draws {target}) does not exist")
    print(f"images: {shown}")


def check_links(rel):
    text = read(rel)
    base = os.path.dirname(rel)
    in_code = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"^[a-z]+:", target):
                continue  # a URL
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(base, path)) if path else rel
            if not os.path.exists(os.path.join(ROOT, dest)):
                fail(f"{rel}:{n}", f"link to {target}: {dest} does not exist")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                fail(f"{rel}:{n}", f"link to {target}: {dest} has no heading with that anchor")


def main():
    text = read(PAGE)
    check_current_results(text, commit_checker())
    check_images(text)
    docs = [PAGE]
    for d, _, files in os.walk(ROOT):
        reld = os.path.relpath(d, ROOT)
        if reld.split(os.sep)[0] in (".git", "build") or reld.startswith("build-"):
            continue
        for f in files:
            r = os.path.normpath(os.path.join(reld, f))
            if f == "README.md" or (reld == "docs" and f.endswith(".md")):
                docs.append(r)
    for rel in sorted(set(docs)):
        check_links(rel)
    print(f"links: checked in {len(set(docs))} files")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"{len(failures)} problem(s) in BENCHMARKS.md and the pages that link to it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
