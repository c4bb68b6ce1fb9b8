#!/usr/bin/env bash
# Regenerates docs/images/gat-html-view.png, the picture of docs/html-view.md:
# the HTML view of dsl-examples/gat.gnn --target=cuda (gnnc --emit=html) in
# headless Chromium, 1600x1000, with the .gnn line of the fused aggregation
# selected and the gat.cu tab open.
#
# It runs the browser test itself (tests/html/browser_test.py, ctest
# html.browser), so the picture is only replaced when every check of the
# page passes. Needs Debian's chromium, chromium-driver and python3-selenium
# (tools/install-deps.sh) and a built gnnc.
#
#   tools/html-screenshot.sh [BUILD_DIR]   (default: build)
#
# The page shows gnnc's command line; it is run from the repository root
# with relative paths (-o BUILD_DIR/html-screenshot/gat.html), so that the
# picture does not depend on where the checkout is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${1:-build}
gnnc=$build/bin/gnnc
python=${PYTHON:-/usr/bin/python3}
out=docs/images/gat-html-view.png

if [[ ! -x $gnnc ]]; then
  echo "html-screenshot: no $gnnc: build gnnc first (tools/build.sh)" >&2
  exit 1
fi

work=$build/html-screenshot
rm -rf "$work"
mkdir -p "$work" "$(dirname "$out")"
"$python" tests/html/browser_test.py --gnnc "$gnnc" \
  --example dsl-examples/gat.gnn --workdir "$work" \
  --screenshot "$work/gat-html-view.png"
mv "$work/gat-html-view.png" "$out"
echo "html-screenshot: wrote $out"
