#!/usr/bin/env python3
"""Checks the structure of gnnc's HTML view (gnnc --emit=html), no browser.

For each example (gat, gcn and sage_mean by default), with and without
--training, for the C++ target and for --target=cuda, compiles the page
twice and checks:

  * the two pages are byte for byte the same (determinism; the same
    command both times, as the page shows it);
  * the page refers to nothing outside itself: no src= or href= attribute
    (but href="#..."), no <link>, <iframe>, <object>, <embed> or <base>, no
    url( or @import in a <style> or style= attribute, no fetch(,
    XMLHttpRequest or import( in a <script>;
  * the source pane shows the .gnn file, line by line, as
    <div class="src-line" id="sF-L" data-file="F" data-line="L">, F the
    index of the file in the line map's "sources" (and gnnc-data's);
  * every tab button has its pane and the reverse; one pane and its button
    are active; the two IR panes (fused-ir, kernel-ir) are there;
  * the cpp/cuda panes are the files that `gnnc --emit=cpp` (and with
    --target=cuda, `gnnc --target=cuda --emit=cuda`) writes, each line the
    file's text; every generated line's data-src is generated_to_source of
    the reference line map (<stem>.gnnmap.json, docs/abi.md "Line map"),
    and a line absent from it has no data-src;
  * every gen-line's data-src names a src-line of the page;
  * the kernel groups lie inside the source file; with --training one of
    them holds a kernel whose name contains ".backward.aggregate";
  * <script type="application/json" id="gnnc-data"> holds JSON;

The text of a line is that of its <span class="tx"> where it has one (beside
it are the line number, <span class="no">, and in the source pane the remat
badges), else all of its text.

and that a .gnn file with a syntax error writes no page (and leaves an
existing one as it was), exits with status 1 and prints
`file:line:col: error:`.

Standard library only. Usage:
  check_page.py --gnnc build/bin/gnnc [--examples-dir dsl-examples]
                [--example gat --example gcn ...] [--workdir DIR]
"""

import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_support import CheckFailed, check, file_lines, run_gnnc  # noqa: E402

DEFAULT_EXAMPLES = ("gat", "gcn", "sage_mean")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input",
             "link", "meta", "source", "track", "wbr"}
FORBIDDEN_TAGS = {"link", "iframe", "object", "embed", "base", "frame",
                  "frameset", "applet"}
# Attributes that load something; href="#..." alone is allowed.
URL_ATTRIBUTES = {"src", "href", "srcset", "action", "formaction", "poster",
                  "data", "background", "xlink:href", "ping"}
STYLE_FORBIDDEN = ("url(", "@import")
SCRIPT_FORBIDDEN = ("fetch(", "XMLHttpRequest", "import(")
ERROR_LINE = re.compile(r"^(.+):(\d+):(\d+): error: ", re.M)



class PageParser(html.parser.HTMLParser):
    """Collects what the checks need from a page: the source lines, tab
    buttons, panes, generated lines (with their text), kernel groups, the
    contents of <script> and <style>, ids, and external references."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.src_lines = []     # dicts: id, file, line, text
        self.buttons = []       # dicts: tab, active
        self.panes = []         # dicts: id, tab, target, file, active, lines
        self.groups = []        # dicts: file, first, last, kernels
        self.scripts = []       # (attrs, text)
        self.styles = []        # text of <style> and style= attributes
        self.ids = {}           # id -> count
        self.external = []      # descriptions of external references
        self._stack = []        # (tag, role): role "line", "tx", "pane"
        self._line = None       # the open src-line or gen-line
        self._raw = None        # [tag, attrs, text] of an open script/style

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._check_external(tag, a)
        if "id" in a:
            self.ids[a["id"]] = self.ids.get(a["id"], 0) + 1
        classes = (a.get("class") or "").split()
        role = None
        if tag in ("script", "style"):
            self._raw = [tag, a, ""]
        elif "src-line" in classes:
            role = "line"
            self._line = {"id": a.get("id"), "file": a.get("data-file"),
                          "line": a.get("data-line"), "all": "", "tx": None}
            self.src_lines.append(self._line)
        elif "gen-line" in classes:
            role = "line"
            self._line = {"id": a.get("id"), "tab": a.get("data-tab"),
                          "line": a.get("data-line"), "src": a.get("data-src"),
                          "all": "", "tx": None}
            check(self.panes and self._in("pane"),
                  "gen-line %s outside a pane" % a.get("id"))
            self.panes[-1]["lines"].append(self._line)
        elif "tx" in classes and self._in("line"):
            role = "tx"
            if self._line["tx"] is None:
                self._line["tx"] = ""
        elif "pane" in classes:
            role = "pane"
            self.panes.append({"id": a.get("id"), "tab": a.get("data-tab"),
                               "target": a.get("data-target"),
                               "file": a.get("data-file"),
                               "active": "active" in classes, "lines": []})
        elif tag == "button" and "tab" in classes:
            self.buttons.append({"tab": a.get("data-tab"),
                                 "active": "active" in classes})
        elif "kernel-group" in classes:
            self.groups.append({
                "file": a.get("data-file"), "first": a.get("data-first"),
                "last": a.get("data-last"),
                "kernels": (a.get("data-kernels") or "").split()})
        if "style" in a:
            self.styles.append(a["style"] or "")
        if tag not in VOID_TAGS:
            self._stack.append((tag, role))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._raw is not None:
            if tag == "script":
                self.scripts.append((self._raw[1], self._raw[2]))
            else:
                self.styles.append(self._raw[2])
            self._raw = None
        # Close up to the matching open tag (tolerates omitted end tags).
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                del self._stack[i:]
                break
        if not self._in("line"):
            self._line = None

    def handle_data(self, data):
        if self._raw is not None:
            self._raw[2] += data
        elif self._line is not None and self._in("line"):
            self._line["all"] += data
            if self._in("tx"):
                self._line["tx"] += data

    def close(self):
        super().close()
        # A line's text: its <span class="tx"> when it has one (the line
        # number and the remat badges beside it are not text of the line),
        # else all its text.
        for line in self.src_lines + [l for p in self.panes
                                      for l in p["lines"]]:
            line["text"] = line["all"] if line["tx"] is None else line["tx"]

    def _in(self, role):
        return any(r == role for _, r in self._stack)

    def _check_external(self, tag, a):
        if tag in FORBIDDEN_TAGS:
            self.external.append("<%s>" % tag)
        for name, value in a.items():
            if name in URL_ATTRIBUTES and not (
                    name == "href" and (value or "").startswith("#")):
                self.external.append("<%s %s=%r>" % (tag, name, value))


def parse_page(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parser = PageParser()
    parser.feed(text)
    parser.close()
    return parser




def to_int(value, what):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise CheckFailed("%s is %r, not a number" % (what, value))


def check_self_contained(page, label):
    check(not page.external, "%s: external references: %s"
          % (label, ", ".join(page.external)))
    for style in page.styles:
        for bad in STYLE_FORBIDDEN:
            check(bad not in style, "%s: %r in a style" % (label, bad))
    for attrs, text in page.scripts:
        for bad in SCRIPT_FORBIDDEN:
            check(bad not in text, "%s: %r in a <script%s>" % (
                label, bad, "".join(' %s="%s"' % kv for kv in attrs.items())))


def check_ids(page, label):
    dup = sorted(i for i, n in page.ids.items() if n > 1)
    check(not dup, "%s: duplicate ids: %s" % (label, ", ".join(dup[:10])))


def check_data(page, label):
    data = [t for a, t in page.scripts if a.get("id") == "gnnc-data"]
    check(len(data) == 1, '%s: %d <script id="gnnc-data">'
          % (label, len(data)))
    types = [a.get("type") for a, _ in page.scripts
             if a.get("id") == "gnnc-data"]
    check(types == ["application/json"], "%s: gnnc-data has type %r"
          % (label, types[0]))
    try:
        value = json.loads(data[0])
    except ValueError as e:
        raise CheckFailed("%s: gnnc-data is not JSON: %s" % (label, e))
    return value, len(data[0])


def check_sources(page, label, example, sources):
    """The src-lines: ids match data-file/data-line; file 0 is the example,
    line by line. Returns the set of src-line ids."""
    by_file = {}
    for s in page.src_lines:
        f = to_int(s["file"], "%s: data-file of %s" % (label, s["id"]))
        l = to_int(s["line"], "%s: data-line of %s" % (label, s["id"]))
        check(s["id"] == "s%d-%d" % (f, l), "%s: src-line id %r with "
              "data-file=%d data-line=%d" % (label, s["id"], f, l))
        by_file.setdefault(f, []).append((l, s["text"]))
    check(0 in by_file, "%s: no src-line of file 0" % label)
    for f, lines in by_file.items():
        check([l for l, _ in lines] == list(range(1, len(lines) + 1)),
              "%s: the src-lines of file %d are not lines 1..%d in order"
              % (label, f, len(lines)))
    want = file_lines(example)
    got = [t for _, t in by_file[0]]
    for i, (a, b) in enumerate(zip(got, want), 1):
        check(a == b, "%s: source line %d: page %r, file %r"
              % (label, i, a, b))
    check(len(got) == len(want), "%s: %d source lines, %s has %d"
          % (label, len(got), example, len(want)))
    # The map's sources are the files F of the page.
    for i, path in enumerate(sources):
        check(i in by_file and len(by_file[i]) == len(file_lines(path)),
              "%s: source file %d (%s) not shown line by line"
              % (label, i, path))
    return {s["id"] for s in page.src_lines}, by_file


def check_tabs(page, label):
    tabs = [p["tab"] for p in page.panes]
    check(len(set(tabs)) == len(tabs), "%s: panes share a data-tab" % label)
    check(sorted(tabs) == sorted(b["tab"] for b in page.buttons),
          "%s: tabs of the buttons %s, of the panes %s" % (
              label, sorted(b["tab"] for b in page.buttons), sorted(tabs)))
    for p in page.panes:
        check(p["id"] == "pane-%s" % p["tab"], "%s: pane id %r, data-tab %r"
              % (label, p["id"], p["tab"]))
        check(p["target"] in ("ir", "cpp", "cuda"), "%s: pane %s has "
              "data-target=%r" % (label, p["id"], p["target"]))
    active = [p["tab"] for p in page.panes if p["active"]]
    buttons = [b["tab"] for b in page.buttons if b["active"]]
    check(len(active) == 1 and active == buttons, "%s: active panes %s, "
          "active buttons %s" % (label, active, buttons))
    ir = sorted(p["file"] for p in page.panes if p["target"] == "ir")
    check(ir == ["fused-ir", "kernel-ir"], "%s: IR panes %s" % (label, ir))
    for p in page.panes:
        for n, line in enumerate(p["lines"], 1):
            check(line["tab"] == p["tab"] and line["id"] == "%s-%d" % (
                p["tab"], n) and line["line"] == str(n),
                "%s: line %d of pane %s is id=%r data-tab=%r data-line=%r"
                % (label, n, p["tab"], line["id"], line["tab"], line["line"]))
        if p["target"] == "ir":
            check(p["lines"], "%s: pane %s is empty" % (label, p["file"]))


def check_generated(page, label, refs):
    """refs: target -> (folder, line map). Returns the number of lines."""
    expected = {(t, n) for t, (d, _) in refs.items() for n in os.listdir(d)
                if not n.endswith(".gnnmap.json")}
    got = {(p["target"], p["file"]) for p in page.panes
           if p["target"] in ("cpp", "cuda")}
    check(got == expected, "%s: cpp/cuda panes %s, gnnc writes %s"
          % (label, sorted(got), sorted(expected)))
    total = 0
    for p in page.panes:
        if p["target"] not in refs:
            continue
        folder, line_map = refs[p["target"]]
        name = p["file"]
        want = file_lines(os.path.join(folder, name))
        text = [l["text"] for l in p["lines"]]
        for i, (a, b) in enumerate(zip(text, want), 1):
            check(a == b, "%s: %s pane %s line %d: page %r, file %r"
                  % (label, p["target"], name, i, a, b))
        check(len(text) == len(want), "%s: %s pane %s has %d lines, the "
              "file %d" % (label, p["target"], name, len(text), len(want)))
        back = line_map["generated_to_source"].get(name, {})
        for n, line in enumerate(p["lines"], 1):
            s = back.get(str(n))
            ref = ("%d:%d" % (line_map["sources"].index(s["file"]), s["line"])
                   if s else None)
            check(line["src"] == ref, "%s: %s pane %s line %d: data-src=%r, "
                  "the line map gives %r" % (label, p["target"], name, n,
                                             line["src"], ref))
        total += len(p["lines"])
    return total


def check_links(page, label, src_ids):
    n = 0
    for p in page.panes:
        for line in p["lines"]:
            if line["src"] is None:
                continue
            m = re.fullmatch(r"(\d+):(\d+)", line["src"])
            check(m, "%s: %s has data-src=%r" % (label, line["id"],
                                                  line["src"]))
            check("s%s-%s" % m.groups() in src_ids, "%s: %s has data-src=%r, "
                  "no such source line" % (label, line["id"], line["src"]))
            n += 1
    return n


def check_groups(page, label, by_file, training):
    check(page.groups, "%s: no kernel group" % label)
    for g in page.groups:
        f = to_int(g["file"], "%s: kernel group data-file" % label)
        first = to_int(g["first"], "%s: kernel group data-first" % label)
        last = to_int(g["last"], "%s: kernel group data-last" % label)
        check(f in by_file and 1 <= first <= last <= len(by_file[f]),
              "%s: kernel group %d:%d-%d outside the source" % (
                  label, f, first, last))
        check(g["kernels"], "%s: kernel group %d:%d-%d names no kernel"
              % (label, f, first, last))
    names = [k for g in page.groups for k in g["kernels"]]
    backward = [k for k in names if ".backward.aggregate" in k]
    if training:
        check(backward, "%s: no kernel group with a .backward.aggregate "
              "kernel (kernels: %s)" % (label, " ".join(names)))
    else:
        check(not [k for k in names if ".backward." in k], "%s: backward "
              "kernels without --training: %s" % (label, " ".join(names)))
    return len(page.groups), len(names), len(backward)


def check_example(gnnc, example, training, target, work):
    """All checks of one page; prints one line of numbers."""
    stem = os.path.splitext(os.path.basename(example))[0]
    flags = (["--training"] if training else []) + (
        ["--target=cuda"] if target == "cuda" else [])
    label = "%s %s" % (stem, " ".join(flags) or "(cpp)")
    tag = "%s%s-%s" % (stem, "-training" if training else "", target)
    # The same command twice (the page shows its command line, -o PATH
    # included); the first page is moved aside in between.
    d = os.path.join(work, tag)
    os.makedirs(d, exist_ok=True)
    page_path = os.path.join(d, stem + ".html")
    first_path = os.path.join(d, stem + ".first.html")
    pages = []
    for path in (first_path, page_path):
        if os.path.exists(page_path):
            os.remove(page_path)
        run_gnnc(gnnc, [example, "--emit=html", "-o", page_path] + flags)
        if path != page_path:
            os.replace(page_path, path)
        with open(path, "rb") as f:
            pages.append(f.read())
    first = pages[0]
    check(pages[0] == pages[1], "%s: two compiles give different pages "
          "(%s, %s)" % (label, first_path, page_path))

    refs = {}
    train = ["--training"] if training else []
    for t, emit in (("cpp", ["--emit=cpp"]),
                    ("cuda", ["--target=cuda", "--emit=cuda"])):
        if t == "cuda" and target != "cuda":
            continue
        d = os.path.join(work, tag, "ref-" + t)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        run_gnnc(gnnc, [example] + emit + train + ["-o", d])
        with open(os.path.join(d, stem + ".gnnmap.json"),
                  encoding="utf-8") as f:
            refs[t] = (d, json.load(f))
    sources = refs["cpp"][1]["sources"]
    for t, (_, m) in refs.items():
        check(m["sources"] == sources, "%s: the maps list different sources"
              % label)

    page = parse_page(page_path)
    check_self_contained(page, label)
    check_ids(page, label)
    data, data_bytes = check_data(page, label)
    if isinstance(data, dict) and "sources" in data:
        check(data["sources"] == sources, "%s: gnnc-data's sources %s, the "
              "line map's %s" % (label, data["sources"], sources))
    src_ids, by_file = check_sources(page, label, example, sources)
    check_tabs(page, label)
    n_gen = check_generated(page, label, refs)
    n_links = check_links(page, label, src_ids)
    n_groups, n_kernels, n_backward = check_groups(page, label, by_file,
                                                   training)
    print("ok: %-32s %7d bytes, identical twice; %d source lines; %d panes "
          "(%s); %d cpp/cuda lines equal to the files and map; %d data-src "
          "links to existing lines; %d kernel groups, %d kernels (%d "
          ".backward.aggregate); gnnc-data %d bytes of JSON" % (
              label, len(first), len(page.src_lines), len(page.panes),
              " ".join(p["file"] for p in page.panes), n_gen, n_links,
              n_groups, n_kernels, n_backward, data_bytes))


def check_error(gnnc, work):
    """A .gnn file with a syntax error: status 1, `file:line:col: error:` on
    stderr, no page written, and an existing page left as it was."""
    bad = os.path.join(work, "syntax_error.gnn")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("layer Broken(in_dim: int):\n"
                "    def forward(g: Graph, x: f32[N, in_dim]) -> "
                "f32[N, in_dim]:\n"
                "        return x @@ x\n")
    page = os.path.join(work, "syntax_error.html")
    old = "<!-- an earlier page -->\n"
    for flags, existing in (([], False), (["--target=cuda"], False),
                            (["--training"], True)):
        if os.path.exists(page):
            os.remove(page)
        if existing:
            with open(page, "w", encoding="utf-8") as f:
                f.write(old)
        proc = subprocess.run([gnnc, bad, "--emit=html", "-o", page] + flags,
                              capture_output=True, text=True)
        label = "syntax error %s%s" % (" ".join(flags) or "(cpp)",
                                       ", over an existing page" if existing
                                       else "")
        check(proc.returncode == 1, "%s: exit status %d, expected 1; "
              "stderr:\n%s" % (label, proc.returncode, proc.stderr))
        m = ERROR_LINE.search(proc.stderr)
        check(m and os.path.basename(m.group(1)) == "syntax_error.gnn",
              "%s: no `syntax_error.gnn:line:col: error:` on stderr:\n%s"
              % (label, proc.stderr))
        if existing:
            with open(page, encoding="utf-8") as f:
                check(f.read() == old, "%s: the existing page %s changed"
                      % (label, page))
        else:
            check(not os.path.exists(page), "%s: wrote %s" % (label, page))
        leftovers = sorted(n for n in os.listdir(work)
                           if n.startswith("syntax_error.html"))
        check(leftovers == (["syntax_error.html"] if existing else []),
              "%s: files left beside the page: %s" % (label, leftovers))
        print("ok: %s: exit status 1, %s, stderr %r" % (
            label, "page unchanged" if existing else "no page",
            m.group(0) + "..."))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gnnc", required=True, help="the gnnc binary")
    parser.add_argument("--examples-dir",
                        default=os.path.join(REPO, "dsl-examples"),
                        help="folder of the examples (default: %(default)s)")
    parser.add_argument("--example", action="append", dest="examples",
                        help="an example's stem (repeatable; default: %s)"
                        % " ".join(DEFAULT_EXAMPLES))
    parser.add_argument("--workdir", help="folder for the pages (default: a "
                        "temporary folder, removed at the end)")
    args = parser.parse_args()

    work = args.workdir or tempfile.mkdtemp(prefix="gnnc-html-")
    os.makedirs(work, exist_ok=True)
    work = os.path.abspath(work)
    gnnc = os.path.abspath(args.gnnc)
    try:
        for stem in args.examples or DEFAULT_EXAMPLES:
            example = os.path.join(os.path.abspath(args.examples_dir),
                                   stem + ".gnn")
            for training in (False, True):
                for target in ("cpp", "cuda"):
                    check_example(gnnc, example, training, target, work)
        check_error(gnnc, work)
    except CheckFailed as e:
        print("html.structure: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print("html.structure: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
