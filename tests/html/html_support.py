"""What the HTML view's tests share (check_page.py, browser_test.py):
the failure they raise, running gnnc, and reading generated files."""

import subprocess


class CheckFailed(Exception):
    """A check of the page failed; the message says which and how."""


def check(cond, message):
    if not cond:
        raise CheckFailed(message)


def run_gnnc(gnnc, args):
    """Runs gnnc with args; raises CheckFailed with its stderr on failure."""
    try:
        proc = subprocess.run([gnnc] + args, capture_output=True, text=True)
    except OSError as e:
        raise CheckFailed("cannot run %s: %s" % (gnnc, e))
    if proc.returncode != 0:
        raise CheckFailed("`%s %s` failed (exit status %d):\n%s" % (
            gnnc, " ".join(args), proc.returncode, proc.stderr))


def file_lines(path):
    """The lines of a text file, as the page shows them (no final empty
    line for a file that ends in a newline)."""
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
