#!/usr/bin/env python3
"""Checks the folder table of docs/architecture.md against the tree.

The table is the first Markdown table after the "## Folders" heading. The
check fails (exit status 1) when

  * a path in backticks in a row's first column does not exist (a path that
    ends in "/" must be a folder);
  * a folder under compiler/, runtime/, tests/, tools/, dsl-examples/ or python/ is not
    covered by the table. A folder is covered when it or one of its parents
    has a row, or when it only groups folders that have rows (it holds no file
    other than CMakeLists.txt and is a parent of a row's folder). Test inputs
    (corpus/, Inputs/, testdata/, the contents of goldens/) and __pycache__/
    are not checked;
  * a file or path in backticks in a row's second column does not exist. A
    name with a "/" is looked up from the repository root, from the row's
    folders and from their parents; a bare file name anywhere below the row's
    folders (or its parent folders). Names with placeholders (<stem>.h, *.gnn)
    are skipped.

Usage: check-folder-table.py [REPO_ROOT]   (default: the parent of tools/)
"""

import os
import re
import sys

TOP_FOLDERS = ("compiler", "runtime", "tests", "tools", "dsl-examples", "python")
SKIPPED_NAMES = ("corpus", "Inputs", "testdata", "__pycache__")
FILE_NAME = re.compile(
    r"^[A-Za-z0-9_.+-]+\.(h|hpp|cpp|cuh|cu|c|td|def|py|sh|in|txt|md|json|gnn|mlir|test|cmake)$"
)
REPO_PATH = re.compile(r"^(compiler|runtime|tests|tools|dsl-examples|docs|cmake)/")


def read_table(doc):
    """Returns [(line number, first-column paths, second-column text)]."""
    rows = []
    in_section = False
    in_table = False
    with open(doc, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("## "):
                if in_table:
                    break
                in_section = line.strip() == "## Folders"
                continue
            if not in_section:
                continue
            if not line.startswith("|"):
                if in_table:
                    break
                continue
            in_table = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2 or set(cells[0]) <= set("-: "):
                continue
            paths = re.findall(r"`([^`]+)`", cells[0])
            if not paths:
                continue  # the header row
            rows.append((number, paths, "|".join(cells[1:])))
    return rows


def skipped(rel):
    parts = rel.split("/")
    if any(p in SKIPPED_NAMES for p in parts):
        return True
    # The contents of goldens/ are data, the folder itself is checked.
    return "goldens" in parts[:-1]


def tree_folders(root):
    for top in TOP_FOLDERS:
        for dirpath, dirnames, _ in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            if skipped(rel):
                dirnames[:] = []
                continue
            dirnames.sort()
            yield rel


def is_under(path, folder):
    return path == folder or path.startswith(folder + "/")


def main():
    root = os.path.abspath(
        sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    )
    doc = os.path.join(root, "docs", "architecture.md")
    rows = read_table(doc)
    errors = []
    if not rows:
        errors.append(f"{doc}: no table after '## Folders'")

    listed = []
    for number, paths, contents in rows:
        folders = []
        for p in paths:
            full = os.path.join(root, p)
            if p.endswith("/") and not os.path.isdir(full):
                errors.append(f"architecture.md:{number}: folder `{p}` does not exist")
            elif not os.path.exists(full):
                errors.append(f"architecture.md:{number}: `{p}` does not exist")
            if os.path.isdir(full):
                folders.append(p.rstrip("/"))
        listed.extend(folders)

        # Names in the contents column.
        bases = set(folders)
        for f in folders:
            parent = os.path.dirname(f)
            while parent:
                bases.add(parent)
                parent = os.path.dirname(parent)
        for name in re.findall(r"`([^`]+)`", contents):
            if any(c in name for c in "<>* ()=,;:$"):
                continue
            if "/" in name:
                candidates = [name] + [os.path.join(b, name) for b in bases]
                if not REPO_PATH.match(name) and not FILE_NAME.match(
                    os.path.basename(name.rstrip("/"))
                ) and not name.endswith("/"):
                    continue
                if not any(os.path.exists(os.path.join(root, c)) for c in candidates):
                    errors.append(f"architecture.md:{number}: `{name}` does not exist")
            elif FILE_NAME.match(name):
                found = os.path.exists(os.path.join(root, name))
                for b in sorted(bases):
                    if found:
                        break
                    for _, _, files in os.walk(os.path.join(root, b)):
                        if name in files:
                            found = True
                            break
                if not found:
                    errors.append(
                        f"architecture.md:{number}: `{name}` is not in "
                        + ", ".join(f"`{f}/`" for f in folders)
                    )

    checked = 0
    for folder in tree_folders(root):
        checked += 1
        if any(is_under(folder, f) for f in listed):
            continue
        groups = any(is_under(f, folder) for f in listed)
        files = [
            n
            for n in os.listdir(os.path.join(root, folder))
            if os.path.isfile(os.path.join(root, folder, n)) and n != "CMakeLists.txt"
        ]
        if groups and not files:
            continue
        errors.append(f"folder `{folder}/` has no row in the folder table of docs/architecture.md")

    for e in errors:
        print(e)
    if errors:
        print(f"check-folder-table: {len(errors)} mismatch(es)")
        return 1
    print(f"check-folder-table: {len(rows)} rows, {checked} folders, all covered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
