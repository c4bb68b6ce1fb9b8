#!/usr/bin/env python3
"""Drives gnnc's HTML view (gnnc --emit=html) in headless Chromium.

Compiles an example (dsl-examples/gat.gnn in ctest html.browser) three times:

  * --target=cuda --emit=html           the page under test;
  * --emit=cpp, --target=cuda --emit=cuda
                                        the reference line maps
                                        (<stem>.gnnmap.json, docs/abi.md,
                                        "Line map") and generated files;

loads the page from file:// and checks, against the reference maps:

  1. a click on a .gnn line of the fused aggregation (the .gnn line with the
     most generated lines inside the kernels of <stem>.cpp) highlights in the
     <stem>.cpp and <stem>.cu panes exactly the lines source_to_generated
     gives for it, and no others, and scrolls the active pane (<stem>.cpp,
     scrolled to its end before) up to the first; a click on the .gnn line
     whose first line in <stem>.cpp is the furthest down scrolls the pane,
     scrolled to its top before, down to that line;
  2. after a click on the <stem>.cu tab, a click on one of its kernel lines
     highlights exactly its .gnn line (generated_to_source) in the source
     pane, and the generated lines of that .gnn line;
  3. the text of every cpp/cuda pane is the file gnnc writes, line by line
     (a line's text: its <span class="tx"> where it has one, beside the
     line number, else all of its text);
  4. the browser's console has no error;

and, with --screenshot, saves a 1600x1000 screenshot of the page with a .gnn
line of the aggregation selected and the <stem>.cu pane shown.

Runs with Debian's python3-selenium, chromium and chromium-driver
(tools/install-deps.sh). When any of them is missing, or Chromium does not
start, the test fails (exit status 1) and says so: it never skips.

Usage:
  browser_test.py --gnnc build/bin/gnnc --example dsl-examples/gat.gnn \\
                  --workdir /tmp/html-browser [--screenshot out.png]
"""

import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_support import CheckFailed, check, file_lines, run_gnnc  # noqa: E402

WINDOW = (1600, 1000)
# --disable-dev-shm-usage: containers often mount a small /dev/shm, which
# Chromium would otherwise fill with its shared memory and crash.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--window-size=%d,%d" % WINDOW]

# Everything the checks read from the page in one round trip: the panes, the
# tab buttons, and per pane its generated lines (text, data-line, data-src,
# classes).
READ_PAGE_JS = r"""
const panes = [...document.querySelectorAll('.pane')].map(p => ({
  id: p.id, tab: p.dataset.tab, target: p.dataset.target, file: p.dataset.file,
  active: p.classList.contains('active'),
  shown: p.offsetParent !== null || p.getClientRects().length > 0,
  lines: [...p.querySelectorAll('.gen-line')].map(l => ({
    id: l.id, tab: l.dataset.tab, line: Number(l.dataset.line),
    src: l.hasAttribute('data-src') ? l.dataset.src : null,
    text: (l.querySelector('.tx') || l).textContent,
    hl: l.classList.contains('hl'), sel: l.classList.contains('sel')})),
}));
const buttons = [...document.querySelectorAll('button.tab')].map(b => ({
  tab: b.dataset.tab, active: b.classList.contains('active')}));
const src = [...document.querySelectorAll('.src-line')].map(l => ({
  id: l.id, hl: l.classList.contains('hl'),
  sel: l.classList.contains('sel')}));
const groups = [...document.querySelectorAll('.kernel-group')].map(g => ({
  file: Number(g.dataset.file), first: Number(g.dataset.first),
  last: Number(g.dataset.last), kernels: (g.dataset.kernels || '').split(/\s+/)
    .filter(k => k)}));
return {panes: panes, buttons: buttons, src: src, groups: groups};
"""

# The nearest ancestor of arguments[0] that scrolls vertically.
SCROLLER_JS = r"""
function scroller(el) {
  for (let e = el.parentElement; e; e = e.parentElement) {
    const oy = getComputedStyle(e).overflowY;
    if ((oy === 'auto' || oy === 'scroll' || oy === 'overlay') &&
        e.scrollHeight > e.clientHeight + 1)
      return e;
  }
  return document.scrollingElement;
}
"""

# Whether arguments[0] is visible: inside the box of its scroll container and
# inside the window.
VISIBLE_JS = SCROLLER_JS + r"""
const el = arguments[0], s = scroller(el);
const r = el.getBoundingClientRect();
const b = s === document.scrollingElement
    ? {top: 0, bottom: window.innerHeight} : s.getBoundingClientRect();
return r.height > 0 && r.bottom > Math.max(b.top, 0) &&
       r.top < Math.min(b.bottom, window.innerHeight);
"""

# Scrolls the scroll container of arguments[0] to its end; returns the
# amount scrolled (0 when nothing scrolls).
SCROLL_TO_END_JS = SCROLLER_JS + r"""
const s = scroller(arguments[0]);
s.scrollTop = s.scrollHeight;
return s.scrollTop;
"""




def load_map(directory, stem):
    with open(os.path.join(directory, stem + ".gnnmap.json"),
              encoding="utf-8") as f:
        return json.load(f)



def source_ref(line_map, path, line):
    """"F:L" for a .gnn file of the map and a line of it."""
    return "%d:%d" % (line_map["sources"].index(path), line)


def generated_lines(line_map, path, line, name):
    """The lines of generated file `name` from .gnn line `line` of `path`."""
    result = set()
    for run in line_map["source_to_generated"].get(path, {}).get(str(line),
                                                                  []):
        if run["file"] == name:
            first, last = run["lines"]
            result.update(range(first, last + 1))
    return result


def in_ranges(line, ranges):
    return any(first <= line <= last for first, last in ranges)


def choose_aggregation_line(cpp_map, cu_map, stem):
    """The (path, line) of the .gnn line with the most lines inside the
    kernels of <stem>.cpp that also has lines inside those of <stem>.cu: the
    first location of the fused aggregation."""
    best = None
    for path, lines in cpp_map["source_to_generated"].items():
        for line in lines:
            n_cpp = sum(1 for g in generated_lines(cpp_map, path, line,
                                                   stem + ".cpp")
                        if in_ranges(g, cpp_map["kernels"][stem + ".cpp"]))
            n_cu = sum(1 for g in generated_lines(cu_map, path, line,
                                                  stem + ".cu")
                       if in_ranges(g, cu_map["kernels"][stem + ".cu"]))
            if n_cpp and n_cu and (best is None or n_cpp > best[0]):
                best = (n_cpp, path, int(line))
    check(best, "no .gnn line maps into the kernels of %s.cpp and %s.cu"
          % (stem, stem))
    return best[1], best[2]


def fmt_lines(lines):
    """A short text of a set of line numbers: 13-42, 46-62, ..."""
    runs = []
    for n in sorted(lines):
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in runs)


def start_chromium(chromium, chromedriver):
    """A headless Chromium session; raises CheckFailed when it cannot start."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        raise CheckFailed(
            "cannot import selenium (%s) with %s: install Debian's "
            "python3-selenium (tools/install-deps.sh) and run this script "
            "with /usr/bin/python3" % (e, sys.executable))
    for what, path, package in (("Chromium", chromium, "chromium"),
                                ("chromedriver", chromedriver,
                                 "chromium-driver")):
        check(path and os.access(path, os.X_OK),
              "%s not found (%s): install Debian's %s (tools/install-deps.sh)"
              % (what, path or "not on PATH", package))
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        service = Service(executable_path=chromedriver)
        driver = webdriver.Chrome(service=service, options=options)
    except Exception as e:  # WebDriverException, OSError, ...
        # The message without chromedriver's stack trace.
        message = getattr(e, "msg", None) or str(e)
        raise CheckFailed("Chromium (%s) with chromedriver (%s) did not "
                          "start: %s" % (chromium, chromedriver,
                                         message.strip().split("\n")[0]))
    # The window's inside (what a screenshot shows) WINDOW large.
    driver.set_window_size(*WINDOW)
    inner = driver.execute_script(
        "return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(2 * WINDOW[0] - inner[0], 2 * WINDOW[1] - inner[1])
    return driver


class Page:
    """The page in the browser, read through READ_PAGE_JS."""

    def __init__(self, driver):
        self.driver = driver
        self.state = None
        self.read()

    def read(self):
        self.state = self.driver.execute_script(READ_PAGE_JS)
        return self.state

    def pane(self, target, name):
        found = [p for p in self.state["panes"]
                 if p["target"] == target and p["file"] == name]
        check(len(found) == 1, "%d panes with data-target=%r data-file=%r "
              "(panes: %s)" % (len(found), target, name,
                               ", ".join("%s:%s" % (p["target"], p["file"])
                                         for p in self.state["panes"])))
        return found[0]

    def element(self, element_id):
        from selenium.webdriver.common.by import By
        from selenium.common.exceptions import NoSuchElementException
        try:
            return self.driver.find_element(By.ID, element_id)
        except NoSuchElementException:
            raise CheckFailed("no element with id %r" % element_id)

    def click(self, element):
        self.driver.execute_script(
            "arguments[0].scrollIntoView({block: 'center'});", element)
        element.click()
        self.read()

    def activate(self, pane):
        from selenium.webdriver.common.by import By
        buttons = self.driver.find_elements(
            By.CSS_SELECTOR, 'button.tab[data-tab="%s"]' % pane["tab"])
        check(len(buttons) == 1, "%d tab buttons with data-tab=%r"
              % (len(buttons), pane["tab"]))
        self.click(buttons[0])
        self.check_active(pane["tab"])

    def check_active(self, tab):
        """Exactly the pane and button of `tab` are active, and only that
        pane is shown."""
        active = [p["tab"] for p in self.state["panes"] if p["active"]]
        shown = [p["tab"] for p in self.state["panes"] if p["shown"]]
        buttons = [b["tab"] for b in self.state["buttons"] if b["active"]]
        check(active == [tab], "active panes %s, expected [%r]"
              % (active, tab))
        check(shown == [tab], "panes shown %s, expected [%r]" % (shown, tab))
        check(buttons == [tab], "active tab buttons %s, expected [%r]"
              % (buttons, tab))

    def highlighted(self, pane):
        """The data-line numbers of the .gen-line.hl of a pane."""
        for p in self.state["panes"]:
            if p["tab"] == pane["tab"]:
                return {l["line"] for l in p["lines"] if l["hl"]}
        raise CheckFailed("pane %r is gone" % pane["tab"])

    def check_generated_highlight(self, ref):
        """Every pane highlights exactly its lines with data-src == ref."""
        for p in self.state["panes"]:
            hl = {l["line"] for l in p["lines"] if l["hl"]}
            want = {l["line"] for l in p["lines"] if l["src"] == ref}
            check(hl == want, "pane %s (%s): highlighted lines [%s], but its "
                  "lines with data-src=%s are [%s]" % (
                      p["tab"], p["file"], fmt_lines(hl), ref,
                      fmt_lines(want)))

    def wait_visible(self, element, seconds=3.0):
        """Whether element becomes visible in its scroll container within
        `seconds` (smooth scrolling takes a while)."""
        deadline = time.monotonic() + seconds
        while True:
            if self.driver.execute_script(VISIBLE_JS, element):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def check_source_click(page, maps, stem, path, line):
    """Check 1: a click on .gnn line `line` of `path`."""
    cpp_map, cu_map = maps["cpp"], maps["cuda"]
    ref = source_ref(cpp_map, path, line)
    check(ref == source_ref(cu_map, path, line),
          "the C++ and CUDA maps number %s differently" % path)
    f, l = ref.split(":")
    cpp_pane = page.pane("cpp", stem + ".cpp")
    cu_pane = page.pane("cuda", stem + ".cu")

    groups = [g for g in page.state["groups"]
              if g["file"] == int(f) and g["first"] <= line <= g["last"]]
    check(groups, "no .kernel-group holds source line %s" % ref)
    print("ok: source line %s (%s:%d) is in kernel group(s) %s" % (
        ref, path, line, "; ".join("%d-%d [%s]" % (
            g["first"], g["last"], " ".join(g["kernels"])) for g in groups)))

    # Start from the end of the C++ pane, so that the click must scroll it.
    page.activate(cpp_pane)
    first_cpp = page.element("%s-1" % cpp_pane["tab"])
    scrolled = page.driver.execute_script(SCROLL_TO_END_JS, first_cpp)
    print("ok: %s pane active and shown (scrolled to its end: %d px)" % (
        stem + ".cpp", scrolled))

    page.click(page.element("s%s-%s" % (f, l)))
    sel = [s["id"] for s in page.state["src"] if s["sel"]]
    check(sel == ["s%s-%s" % (f, l)], "selected source lines %s, expected "
          "['s%s-%s']" % (sel, f, l))

    for pane, line_map, name in ((cpp_pane, cpp_map, stem + ".cpp"),
                                 (cu_pane, cu_map, stem + ".cu")):
        want = generated_lines(line_map, path, line, name)
        got = page.highlighted(pane)
        check(want, "the reference map gives no line of %s for %s:%d"
              % (name, path, line))
        check(got == want, "%s pane: highlighted lines [%s], the map gives "
              "[%s] (only highlighted: [%s]; missing: [%s])" % (
                  name, fmt_lines(got), fmt_lines(want),
                  fmt_lines(got - want), fmt_lines(want - got)))
        print("ok: click on source line %s highlights %d lines of %s, as the "
              "map: %s" % (ref, len(got), name, fmt_lines(got)))
    page.check_generated_highlight(ref)
    total = sum(len(page.highlighted(p)) for p in page.state["panes"])
    print("ok: %d generated lines highlighted in %d panes, each pane exactly "
          "its lines with data-src=%s" % (total, len(page.state["panes"]),
                                          ref))

    first = min(page.highlighted(cpp_pane))
    element = page.element("%s-%d" % (cpp_pane["tab"], first))
    check(page.wait_visible(element), "the active pane (%s) did not scroll to "
          "its first highlighted line, %d" % (stem + ".cpp", first))
    print("ok: the active pane (%s) scrolled to its first highlighted line, "
          "%d" % (stem + ".cpp", first))


def check_scroll_down(page, maps, stem):
    """Check 1, continued: from the top of the active <stem>.cpp pane, a
    click on the .gnn line whose first line there is the furthest down
    scrolls the pane to that line."""
    cpp_map = maps["cpp"]
    name = stem + ".cpp"
    pane = page.pane("cpp", name)
    check(pane["active"], "the %s pane is no longer active" % name)
    firsts = [(min(lines), path, int(line))
              for path, by_line in cpp_map["source_to_generated"].items()
              for line in by_line
              for lines in [generated_lines(cpp_map, path, line, name)]
              if lines]
    first, path, line = max(firsts)
    ref = source_ref(cpp_map, path, line)
    top = page.element("%s-1" % pane["tab"])
    page.driver.execute_script(SCROLLER_JS + "scroller(arguments[0])"
                               ".scrollTop = 0;", top)
    check(page.driver.execute_script(VISIBLE_JS, top), "line 1 of the %s "
          "pane not visible at the top" % name)
    page.click(page.element("s%s-%s" % tuple(ref.split(":"))))
    want = generated_lines(cpp_map, path, line, name)
    check(page.highlighted(pane) == want, "%s pane: highlighted lines [%s], "
          "the map gives [%s] for %s" % (name, fmt_lines(
              page.highlighted(pane)), fmt_lines(want), ref))
    check(page.wait_visible(page.element("%s-%d" % (pane["tab"], first))),
          "a click on source line %s did not scroll the %s pane down to its "
          "line %d" % (ref, name, first))
    print("ok: from the top of the %s pane, a click on source line %s "
          "scrolls it down to its first line, %d (of %d lines highlighted)"
          % (name, ref, first, len(want)))


def check_generated_click(page, maps, stem, avoid_line):
    """Check 2: the .cu tab, then a click on one of its kernel lines."""
    cu_map = maps["cuda"]
    name = stem + ".cu"
    cu_pane = page.pane("cuda", name)
    page.activate(cu_pane)
    print("ok: click on tab %r: its pane and button alone active, the pane "
          "alone shown" % cu_pane["tab"])

    back = cu_map["generated_to_source"][name]
    candidates = [n for first, last in cu_map["kernels"][name]
                  for n in range(first, last + 1) if str(n) in back]
    check(candidates, "no mapped kernel line in %s" % name)
    # A line of another .gnn line than the one selected before, so that the
    # click must move the highlight.
    other = [n for n in candidates if back[str(n)]["line"] != avoid_line]
    n = (other or candidates)[0]
    src = back[str(n)]
    ref = source_ref(cu_map, src["file"], src["line"])
    f, l = ref.split(":")

    page.click(page.element("%s-%d" % (cu_pane["tab"], n)))
    clicked = [x for x in page.pane("cuda", name)["lines"] if x["line"] == n]
    check(clicked and clicked[0]["sel"], "%s line %d has no class sel after "
          "the click" % (name, n))
    hl = sorted(s["id"] for s in page.state["src"] if s["hl"])
    check(hl == ["s%s-%s" % (f, l)], "after a click on %s:%d the highlighted "
          "source lines are %s; generated_to_source gives %s:%d (s%s-%s)"
          % (name, n, hl, src["file"], src["line"], f, l))
    print("ok: click on %s line %d highlights exactly source line %s "
          "(%s:%d)" % (name, n, ref, src["file"], src["line"]))
    want = generated_lines(cu_map, src["file"], src["line"], name)
    got = page.highlighted(cu_pane)
    check(got == want, "%s pane: highlighted lines [%s], the map gives [%s] "
          "for %s" % (name, fmt_lines(got), fmt_lines(want), ref))
    page.check_generated_highlight(ref)
    print("ok: and the %d lines of %s from it: %s" % (len(got), name,
                                                      fmt_lines(got)))


def check_text(page, dirs, stem):
    """Check 3: every cpp/cuda pane shows its file, line by line."""
    expected = set()
    for target, directory in dirs.items():
        for name in sorted(os.listdir(directory)):
            if not name.endswith(".gnnmap.json"):
                expected.add((target, name))
    panes = {(p["target"], p["file"]) for p in page.state["panes"]
             if p["target"] in ("cpp", "cuda")}
    check(panes == expected, "cpp/cuda panes %s, gnnc writes %s"
          % (sorted(panes), sorted(expected)))
    for target, name in sorted(expected):
        pane = page.pane(target, name)
        want = file_lines(os.path.join(dirs[target], name))
        got = [l["text"] for l in pane["lines"]]
        numbers = [l["line"] for l in pane["lines"]]
        check(numbers == list(range(1, len(got) + 1)),
              "%s pane %s: data-line is not 1..%d" % (target, name, len(got)))
        for i, (a, b) in enumerate(zip(got, want), 1):
            check(a == b, "%s pane %s line %d: page %r, file %r"
                  % (target, name, i, a, b))
        check(len(got) == len(want), "%s pane %s: %d lines, the file %d"
              % (target, name, len(got), len(want)))
        print("ok: %s pane %s: %d lines, equal to the file" % (
            target, name, len(got)))


def check_console(driver):
    """Check 4: no error in the browser's console."""
    try:
        log = driver.get_log("browser")
    except Exception as e:  # a driver without the log endpoint
        print("note: browser console not readable: %s" % e)
        return
    errors = [e["message"] for e in log if e.get("level") == "SEVERE"]
    check(not errors, "errors in the browser console:\n  "
          + "\n  ".join(errors))
    print("ok: no error in the browser console (%d messages)" % len(log))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gnnc", required=True, help="the gnnc binary")
    parser.add_argument("--example", required=True,
                        help="the .gnn file (dsl-examples/gat.gnn)")
    parser.add_argument("--workdir", required=True,
                        help="folder for the page and the reference files")
    parser.add_argument("--screenshot",
                        help="write a %dx%d PNG of the page here" % WINDOW)
    parser.add_argument("--chromium", default=shutil.which("chromium"),
                        help="the browser (default: chromium on PATH)")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver"),
                        help="the driver (default: chromedriver on PATH)")
    args = parser.parse_args()

    # The paths as given: the page shows gnnc's command line.
    example = args.example
    stem = os.path.splitext(os.path.basename(example))[0]
    page_path = os.path.join(args.workdir, stem + ".html")
    dirs = {"cpp": os.path.join(args.workdir, "ref-cpp"),
            "cuda": os.path.join(args.workdir, "ref-cuda")}
    driver = None
    try:
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        if os.path.exists(page_path):
            os.remove(page_path)
        run_gnnc(args.gnnc, [example, "--target=cuda", "--emit=html",
                             "-o", page_path])
        run_gnnc(args.gnnc, [example, "--emit=cpp", "-o", dirs["cpp"]])
        run_gnnc(args.gnnc, [example, "--target=cuda", "--emit=cuda",
                             "-o", dirs["cuda"]])
        maps = {t: load_map(d, stem) for t, d in dirs.items()}
        print("compiled %s: page %s (%d bytes), reference files in %s, %s" % (
            example, page_path, os.path.getsize(page_path), dirs["cpp"],
            dirs["cuda"]))

        driver = start_chromium(args.chromium, args.chromedriver)
        print("started Chromium %s" % driver.capabilities.get(
            "browserVersion", "(version unknown)"))
        driver.get("file://" + os.path.abspath(page_path))
        page = Page(driver)
        data = driver.execute_script(
            "const e = document.getElementById('gnnc-data');"
            "return e && e.type === 'application/json' ? e.textContent "
            ": null;")
        check(data is not None,
              'no <script type="application/json" id="gnnc-data">')
        json.loads(data)
        print("ok: page loaded: %d source lines, %d panes, %d kernel groups, "
              "gnnc-data is JSON (%d bytes)" % (
                  len(page.state["src"]), len(page.state["panes"]),
                  len(page.state["groups"]), len(data)))

        path, line = choose_aggregation_line(maps["cpp"], maps["cuda"], stem)
        check_source_click(page, maps, stem, path, line)
        check_scroll_down(page, maps, stem)
        check_generated_click(page, maps, stem, line)
        check_text(page, dirs, stem)

        if args.screenshot:
            # The aggregation's .gnn line selected, the .cu pane shown.
            ref = source_ref(maps["cuda"], path, line)
            page.click(page.element("s%s-%s" % tuple(ref.split(":"))))
            cu_pane = page.pane("cuda", stem + ".cu")
            first = min(page.highlighted(cu_pane))
            check(page.wait_visible(page.element(
                "%s-%d" % (cu_pane["tab"], first))),
                "the %s pane did not scroll to line %d"
                % (stem + ".cu", first))
            os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)),
                        exist_ok=True)
            check(driver.save_screenshot(args.screenshot),
                  "could not write the screenshot %s" % args.screenshot)
            print("wrote %s (%s)" % (args.screenshot, "x".join(
                str(v) for v in driver.execute_script(
                    "return [window.innerWidth, window.innerHeight];"))))
        check_console(driver)
    except CheckFailed as e:
        print("html.browser: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        if driver is not None:
            driver.quit()
    print("html.browser: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
