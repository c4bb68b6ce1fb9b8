#!/usr/bin/env python3
"""Regenerates the error catalogue of docs/language.md from Diagnostics.def.

The catalogue sits between the markers
    <!-- BEGIN error catalogue -->  and  <!-- END error catalogue -->
With --check, exits 1 (and says why) when the doc is out of date instead of
rewriting it; the lit suite runs that check.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEF = ROOT / "compiler/include/gnnc/Frontend/Diagnostics.def"
DOC = ROOT / "docs/language.md"
BEGIN = "<!-- BEGIN error catalogue -->"
END = "<!-- END error catalogue -->"

ENTRY = re.compile(r'^DIAG\((\w+),\s*(Error|Note),\s*"((?:[^"\\]|\\.)*)"\)')
SECTION = re.compile(r"^// (.+)\.$")


def render(def_path):
    lines = ["", "Each entry is printed as `file:line:col: error: message`, then the",
             "source line and a caret. `‹n›` stands for a name, type or number",
             "filled in from the program. Notes follow the error they explain.", ""]
    for raw in def_path.read_text().splitlines():
        m = SECTION.match(raw)
        if m and not raw.startswith("//===") and "DIAG(" not in raw:
            lines += ["", f"### {m.group(1)}", "", "| id | kind | message |",
                      "|---|---|---|"]
            continue
        m = ENTRY.match(raw)
        if not m:
            continue
        ident, kind, fmt = m.groups()
        msg = fmt.replace('\\"', '"').replace("{{", "{")
        msg = re.sub(r"\{(\d+)\}", r"‹\1›", msg).replace("|", "\\|")
        lines.append(f"| `{ident}` | {kind.lower()} | {msg} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--def-file", default=str(DEF))
    parser.add_argument("--doc", default=str(DOC))
    args = parser.parse_args()
    doc_path = pathlib.Path(args.doc)
    text = doc_path.read_text()
    if BEGIN not in text or END not in text:
        print(f"{doc_path}: missing the catalogue markers", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + render(pathlib.Path(args.def_file)) + END + tail
    if args.check:
        if new != text:
            print(f"{doc_path}: error catalogue is out of date; run "
                  "tools/gen_error_catalogue.py", file=sys.stderr)
            return 1
        return 0
    doc_path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
