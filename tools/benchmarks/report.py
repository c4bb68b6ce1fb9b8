"""Writes docs/benchmarks.md and its plots from the JSON of a tools/bench run.

    /usr/bin/python3 tools/benchmarks/report.py RESULTS.json DOC.md ASSET_DIR

(tools/bench calls write() itself; --report-only reruns it alone.) Every
number in the doc is read from, or computed from, the JSON: nothing is
typed in.
"""
import json
import math
import os
import pathlib
import re
import statistics
import sys

IMPL_TITLES = {"gnnc": "gnnc", "pyg": "PyG", "pyg-sparse": "PyG sparse",
               "dgl": "DGL", "pyg2": "PyG (current)",
               "pyg2-edgeindex": "PyG (current, EdgeIndex)",
               "pyg2-csr": "PyG (current, CSR)",
               "pyg2-compile": "PyG (current, torch.compile)"}
# gnnc and the anchors on Debian's PyTorch 1.13 (PyG 2.3, DGL).
IMPLS = ["gnnc", "pyg", "pyg-sparse", "dgl"]
# PyG on the current PyTorch from PyPI (bench.py's PYG2_IMPLS).
PYG2_IMPLS = ["pyg2", "pyg2-edgeindex", "pyg2-csr", "pyg2-compile"]
PYG2_SHORT = {"pyg2": "edge_index", "pyg2-edgeindex": "EdgeIndex", "pyg2-csr": "CSR",
              "pyg2-compile": "torch.compile"}
MAIN_IMPLS = IMPLS + PYG2_IMPLS
ANCHORS = ["pyg", "pyg-sparse", "dgl"] + PYG2_IMPLS
PYG_ANCHORS = [i for i in ANCHORS if i.startswith("pyg")]
# What the results of earlier runs called two of them.
LEGACY_IMPLS = {"pyg-current": "pyg2", "pyg-compile": "pyg2-compile"}
# The targets' cases (bench.py's TARGETS), for results that predate some.
DEFAULT_TARGETS = {
    "gat": dict(case="rmat-17/gat8/F64/train", quick="rmat-12/gat8/F16/train"),
    "gcn": dict(case="rmat-17/gcn/F64/train", quick="cora/gcn/F16/train"),
    "bandwidth": dict(case="rmat-20/gcn_agg/F64/infer", quick="rmat-12/gcn_agg/F16/infer"),
    "epoch": dict(case="cora/gcn_model/F1433/epoch", quick=None),
    "contention": dict(case="cora/gat_model/F1433/epoch-busy",
                       quick="cora/gcn/F16/train-busy"),
}
MODE_TITLES = {"infer": "inference", "train": "forward + backward",
               "epoch": "training epoch"}
COLORS = {"gnnc": "#1f77b4", "pyg": "#d62728", "pyg-sparse": "#ff7f0e",
          "dgl": "#2ca02c", "pyg2": "#9467bd", "pyg2-edgeindex": "#8c564b",
          "pyg2-csr": "#e377c2", "pyg2-compile": "#17becf"}


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------


def ftime(s):
    if s is None:
        return "–"
    if s >= 0.9995:  # what "%.3g ms" would print as 1e+03 ms
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.3g ms" % (s * 1e3)
    return "%.3g µs" % (s * 1e6)


def fbytes(b):
    if b is None:
        return "–"
    if b >= 2 ** 30:
        return "%.2f GiB" % (b / 2 ** 30)
    if b >= 2 ** 20:
        return "%.0f MiB" % (b / 2 ** 20)
    return "%.0f KiB" % (b / 2 ** 10)


def fratio(x):
    if x is None:
        return "–"
    if x >= 10:
        return "%.0fx" % x
    if x >= 1:
        return "%.1fx" % x
    return "%.2fx" % x


def fcount(n):
    return "{:,}".format(n)


def table(headers, rows, align=None):
    align = align or ["l"] + ["r"] * (len(headers) - 1)
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Access
# --------------------------------------------------------------------------


def legacy_ids(data):
    """Renames, in place, the implementations of results written before
    PyG on the current PyTorch had four configurations (LEGACY_IMPLS);
    returns data."""
    for c in data.get("cases", []):
        new = LEGACY_IMPLS.get(c.get("impl"))
        if new:
            c["impl"] = new
            c["id"] = c["id"].rsplit("/", 1)[0] + "/" + new
    avail = data.get("availability", {})
    for old, new in LEGACY_IMPLS.items():
        if old in avail and new not in avail:
            avail[new] = avail.pop(old)
    return data


class Results:
    def __init__(self, data):
        self.d = legacy_ids(data)
        self.by_id = {c["id"]: c for c in data["cases"]}
        self.stream = data.get("stream", {})
        self.stream_gbs = self.stream.get("best_gbs") if self.stream.get("ok") else None
        self.llc = data["machine"].get("llc_bytes") or 0

    def case(self, base, impl):
        return self.by_id.get(base + "/" + impl)

    def ok(self, base, impl):
        c = self.case(base, impl)
        return c if c and c["status"] == "ok" else None

    def median(self, base, impl):
        c = self.ok(base, impl)
        return c["result"]["median_s"] if c else None

    def peak(self, base, impl):
        """The case's peak resident set while it ran: the high-water mark
        from the reset after loading (`rss_peak_bytes`) or the sampled
        maximum, whichever is larger. Not `ru_maxrss`: Linux carries the
        high-water mark of the harness process that forks a case over into
        it, so ru_maxrss is the harness's size when that is larger."""
        c = self.ok(base, impl)
        if not c:
            return None
        r = c["result"]
        seen = [v for v in (r.get("rss_peak_bytes"), c.get("sampled_max_rss_bytes"))
                if v]
        return max(seen) if seen else r.get("maxrss_process_bytes")

    def delta(self, base, impl):
        c = self.ok(base, impl)
        if not c:
            return None
        r = c["result"]
        return max(0, r.get("rss_peak_bytes", 0) - r.get("rss_baseline_bytes", 0))

    def gbs(self, base, impl):
        c = self.ok(base, impl)
        if not c or not c.get("min_bytes"):
            return None
        return c["min_bytes"] / c["result"]["median_s"] / 1e9

    def cell(self, base, impl):
        """A table cell: the median, or why there is none."""
        c = self.case(base, impl)
        if c is None:
            return "not measured"
        if c["status"] == "ok":
            r = c["result"]
            return ftime(r["median_s"]) + ("" if r.get("finite", True) else " (non-finite!)")
        return short_status(c)

    def impls(self, group, always=IMPLS):
        """The implementations of MAIN_IMPLS, in its order, that are in
        `always` or have a case in `group`."""
        seen = {c["impl"] for c in self.d["cases"] if group in c["groups"]}
        return [i for i in MAIN_IMPLS if i in always or i in seen]

    def bases(self, group):
        seen = []
        for c in self.d["cases"]:
            if group in c["groups"]:
                b = c["id"].rsplit("/", 1)[0]
                if b not in seen:
                    seen.append(b)
        return seen


def short_status(c):
    st = c["status"]
    if st == "memory-cap":
        return "over memory cap"
    if st == "time-cap":
        return "over time cap"
    if st == "unavailable":
        return "n/a"
    if st == "skipped":
        return "skipped"
    if st == "error":
        err = c.get("error", "")
        if "not supported" in err:
            return "unsupported"
        return "error"
    return st


def parse_base(base):
    g, layer, f, mode = base.split("/")
    return g, layer, int(f[1:]), mode


# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------


def fastest(R, base, impls=ANCHORS):
    """(impl, median) of the fastest of `impls` on `base`, or None."""
    best = None
    for impl in impls:
        t = R.median(base, impl)
        if t is not None and (best is None or t < best[1]):
            best = (impl, t)
    return best


def target_base(d, name):
    """The case (without the implementation) of target `name` in this run,
    or None."""
    t = d.get("targets", {}).get(name) or DEFAULT_TARGETS[name]
    return t["quick" if d["kind"] == "quick" else "case"]


def speedup_row(R, row, base, required, anchors=ANCHORS):
    """Fills a target row with gnnc's speed-up on `base` over the fastest of
    `anchors`."""
    t_g = R.median(base, "gnnc") if base else None
    best = fastest(R, base, anchors) if base else None
    if t_g and best:
        sp = best[1] / t_g
        row.update(achieved="%s (gnnc %s, %s %s)" % (
            fratio(sp), ftime(t_g), IMPL_TITLES[best[0]], ftime(best[1])),
            met=sp >= required, value=sp, anchor=best[0])
    elif t_g:
        row["achieved"] = "gnnc %s; no anchor ran" % ftime(t_g)


def where(base):
    """"GCN (F = 64) ... on rmat-17" pieces of a target's name."""
    if not base:
        return "?", "?"
    return base.split("/")[0], base.split("/")[2][1:]


def evaluate_targets(R):
    """The rows of the Targets table, each with its key: gat, gat_memory,
    gcn, bandwidth, epoch, contention, compile. Every ratio compares cases
    of the same run; "the fastest anchor" is the fastest of every anchor
    measured for that case (PyG on Debian's PyTorch, with edge_index and
    with torch.sparse; PyG on the current PyTorch in its four
    configurations; DGL)."""
    d = R.d
    out = []

    # GAT forward + backward, and its memory growth.
    base = target_base(d, "gat")
    g, F = where(base)
    row = dict(key="gat", name="GAT (8 heads, F = %s) forward + backward on %s: speed-up "
               "over the fastest anchor" % (F, g),
               required=">= 20x", achieved="not measured", met=None)
    mem = dict(key="gat_memory", name="... its memory growth during the step "
               "(rss_peak - rss_baseline) against the fastest PyG configuration's",
               required="<= 0.10", achieved="not measured", met=None)
    speedup_row(R, row, base, 20)
    best = fastest(R, base, PYG_ANCHORS) if base else None
    if base and best and R.ok(base, "gnnc"):
        dg, dp = R.delta(base, "gnnc"), R.delta(base, best[0])
        if dp:
            mem.update(achieved="%.2f of it (gnnc %s, %s %s; peak resident set: gnnc "
                       "%s, %s %s)" % (
                           dg / dp, fbytes(dg), IMPL_TITLES[best[0]], fbytes(dp),
                           fbytes(R.peak(base, "gnnc")), IMPL_TITLES[best[0]],
                           fbytes(R.peak(base, best[0]))),
                       met=dg / dp <= 0.10, value=dg / dp, anchor=best[0])
    out += [row, mem]

    # GCN forward + backward.
    base = target_base(d, "gcn")
    g, F = where(base)
    row = dict(key="gcn", name="GCN (F = %s) forward + backward on %s: speed-up over "
               "the fastest anchor" % (F, g),
               required=">= 10x", achieved="not measured", met=None)
    speedup_row(R, row, base, 10)
    out.append(row)

    # GCN aggregation bandwidth.
    base = target_base(d, "bandwidth")
    row = dict(key="bandwidth",
               name="GCN aggregation on %s (F = %s), features beyond the last-level "
               "cache: share of the STREAM triad bandwidth on the minimum byte count"
               % where(base) if base else "GCN aggregation",
               required=">= 50%", achieved="not measured", met=None)
    gb = R.gbs(base, "gnnc") if base else None
    if gb and R.stream_gbs:
        frac = gb / R.stream_gbs
        c = R.ok(base, "gnnc")
        row.update(achieved="%.0f%% (%.1f GB/s of %.1f GB/s; %s in %s)" % (
            100 * frac, gb, R.stream_gbs, fbytes(c["min_bytes"]), ftime(c["result"]["median_s"])),
            met=frac >= 0.5, value=frac)
        if R.llc and c["min_bytes"] <= R.llc:
            row["achieved"] += "; note: this size fits in the last-level cache"
    out.append(row)

    # Cora training epoch.
    base = target_base(d, "epoch")
    row = dict(key="epoch", name="Cora GCN training epoch (PyG's examples/gcn.py): "
               "speed-up over the fastest anchor",
               required=">= 15x", achieved="not measured", met=None)
    speedup_row(R, row, base, 15)
    out.append(row)

    # A busy core: gnnc's slowdown.
    busy = target_base(d, "contention")
    row = dict(key="contention", name="slowdown with one core taken by another process "
               "(%s, busy median over quiet)" % (
                   "GAT Cora epoch" if busy and busy.startswith("cora/gat_model/")
                   else busy.rsplit("/", 1)[0] if busy else "?"),
               required="<= 2.5x", achieved="not measured", met=None)
    if busy:
        quiet = busy[:-len("-busy")] if busy.endswith("-busy") else busy
        tq, tb = R.median(quiet, "gnnc"), R.median(busy, "gnnc")
        if tq and tb:
            row.update(achieved="%s (gnnc %s quiet, %s busy%s)" % (
                fratio(tb / tq), ftime(tq), ftime(tb),
                "" if R.ok(busy, "gnnc").get("busy_process", True)
                else "; no busy process: fewer than 2 cores"),
                met=tb / tq <= 2.5, value=tb / tq)
    out.append(row)

    # Compile time.
    comp = d.get("compile", [])
    row = dict(key="compile", name="gnnc compiles every example (--emit=cpp, with and without "
               "--training)", required="< 1 s each", achieved="not measured", met=None)
    if comp:
        fails = [c for c in comp if not c["ok"]]
        oks = [c for c in comp if c["ok"]]
        worst = max(oks, key=lambda c: c["best_s"]) if oks else None
        txt = ""
        if worst:
            txt = "slowest %s (%s%s)" % (ftime(worst["best_s"]), worst["example"],
                                         ", --training" if worst["training"] else "")
        if fails:
            txt += "; %d of %d compilations fail: %s" % (
                len(fails), len(comp), ", ".join(sorted({
                    c["example"] + (" --training" if c["training"] else "") for c in fails})))
        row.update(achieved=txt, met=bool(worst) and not fails and worst["best_s"] < 1.0,
                   value=worst["best_s"] if worst else None)
    out.append(row)
    return out


# --------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------


def timed_impls(R, bases, value):
    """The implementations (MAIN_IMPLS' order) with a `value` (R.median,
    R.peak, R.gbs) on any of `bases`; at least one, so that bar widths can
    divide by their count."""
    out = [i for i in MAIN_IMPLS if any(value(b, i) for b in bases)]
    return out or ["gnnc"]


def plots(R, assets):
    """Writes the PNGs; returns {name: relative path} of those written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    made = {}
    rel = assets.name

    def save(fig, name):
        path = assets / name
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made[name] = "%s/%s" % (rel, name)

    # Layers at F = 64 on each graph of the "layers" group.
    layer_bases = R.bases("layers")
    graphs = []
    for b in layer_bases:
        g = b.split("/")[0]
        if g not in graphs:
            graphs.append(g)
    for g in graphs:
        bases = [b for b in layer_bases if b.startswith(g + "/")]
        if not bases:
            continue
        impls = timed_impls(R, bases, R.median)
        fig, ax = plt.subplots(figsize=(max(6, (0.3 + 0.08 * len(impls)) * len(bases) + 2), 4))
        width = 0.8 / len(impls)
        for k, impl in enumerate(impls):
            xs, ys = [], []
            for i, b in enumerate(bases):
                t = R.median(b, impl)
                if t:
                    xs.append(i + (k - (len(impls) - 1) / 2) * width)
                    ys.append(t * 1e3)
            if xs:
                ax.bar(xs, ys, width, label=IMPL_TITLES[impl], color=COLORS[impl])
        ax.set_yscale("log")
        ax.set_ylabel("median time (ms, log)")
        labels = []
        for b in bases:
            _, layer, _, mode = parse_base(b)
            labels.append("%s\n%s" % (layer, "fwd+bwd" if mode == "train" else "infer"))
        ax.set_xticks(range(len(bases)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title("%s, F = %s: median time per call" % (g, parse_base(bases[0])[2]))
        ax.legend(fontsize=7, ncol=2 if len(impls) > 4 else 1)
        save(fig, "layers_%s.png" % g)

    # Scales.
    sb = R.bases("scales")
    if sb:
        keys = []
        for b in sb:
            _, layer, F, mode = parse_base(b)
            if (layer, F, mode) not in keys:
                keys.append((layer, F, mode))
        fig, axes = plt.subplots(1, len(keys), figsize=(5.5 * len(keys), 4), squeeze=False)
        for ax, (layer, F, mode) in zip(axes[0], keys):
            for impl in timed_impls(R, sb, R.median):
                xs, ys = [], []
                for b in sb:
                    g, l2, F2, m2 = parse_base(b)
                    if (l2, F2, m2) != (layer, F, mode):
                        continue
                    t = R.median(b, impl)
                    if t:
                        xs.append(int(g.split("-")[1]))
                        ys.append(t)
                if xs:
                    ax.plot(xs, ys, "o-", label=IMPL_TITLES[impl], color=COLORS[impl])
            ax.set_yscale("log")
            ax.set_xlabel("R-MAT scale (2^scale vertices, 16 edges per vertex)")
            ax.set_ylabel("median time (s, log)")
            ax.set_title("%s, F = %d, %s" % (R.d["layers"][layer]["title"], F,
                                              MODE_TITLES[mode]))
            ax.legend(fontsize=8)
        save(fig, "scales.png")

    # Bandwidth.
    bb = [b for b in R.bases("bandwidth") if parse_base(b)[1] == "gcn_agg"]
    if bb:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        widths = sorted({parse_base(b)[2] for b in bb})
        main_F = 64 if 64 in widths else widths[0]
        for impl in timed_impls(R, bb, R.gbs):
            xs, ys = [], []
            for b in bb:
                g, _, F, _ = parse_base(b)
                if F != main_F or not g.startswith("rmat-"):
                    continue
                v = R.gbs(b, impl)
                if v:
                    xs.append(int(g.split("-")[1]))
                    ys.append(v)
            if xs:
                order = sorted(range(len(xs)), key=lambda i: xs[i])
                ax.plot([xs[i] for i in order], [ys[i] for i in order], "o-",
                        label=IMPL_TITLES[impl], color=COLORS[impl])
        if R.stream_gbs:
            ax.axhline(R.stream_gbs, color="k", ls="--", lw=1, label="STREAM triad")
            ax.axhline(0.5 * R.stream_gbs, color="gray", ls=":", lw=1, label="50% of STREAM")
        # The scale beyond which the kernel's bytes exceed the LLC.
        if R.llc:
            for b in bb:
                g, _, F, _ = parse_base(b)
                c = R.case(b, "gnnc")
                if F == main_F and c and c.get("min_bytes") and c["min_bytes"] > R.llc:
                    ax.axvline(int(g.split("-")[1]) - 0.5, color="purple", lw=0.8, alpha=0.5)
                    ax.text(int(g.split("-")[1]) - 0.45, ax.get_ylim()[1] * 0.9,
                            "beyond LLC →", fontsize=8, color="purple")
                    break
        ax.set_xlabel("R-MAT scale")
        ax.set_ylabel("GB/s on the minimum byte count")
        ax.set_title("GCN aggregation (F = %d): achieved bandwidth" % main_F)
        ax.legend(fontsize=8)
        save(fig, "bandwidth.png")

    # Widths.
    wb = R.bases("widths")
    if wb:
        keys = []
        for b in wb:
            g, layer, F, mode = parse_base(b)
            if (g, layer, mode) not in keys:
                keys.append((g, layer, mode))
        fig, axes = plt.subplots(1, len(keys), figsize=(4.6 * len(keys), 4), squeeze=False)
        for ax, (g, layer, mode) in zip(axes[0], keys):
            for impl in timed_impls(R, wb, R.median):
                xs, ys = [], []
                for b in wb:
                    g2, l2, F, m2 = parse_base(b)
                    if (g2, l2, m2) != (g, layer, mode):
                        continue
                    t = R.median(b, impl)
                    if t:
                        xs.append(F)
                        ys.append(t)
                if xs:
                    ax.plot(xs, ys, "o-", label=IMPL_TITLES[impl], color=COLORS[impl])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("feature width F")
            ax.set_ylabel("median time (s, log)")
            ax.set_title("%s, %s, %s" % (R.d["layers"][layer]["title"], g, MODE_TITLES[mode]),
                         fontsize=10)
            ax.legend(fontsize=8)
        save(fig, "widths.png")

    # Peak memory of forward + backward on the largest "layers" graph.
    if graphs:
        g = graphs[-1]
        bases = [b for b in layer_bases if b.startswith(g + "/") and b.endswith("/train")]
        if bases:
            impls = timed_impls(R, bases, R.peak)
            fig, ax = plt.subplots(figsize=(max(6, (0.3 + 0.08 * len(impls)) * len(bases)
                                                + 2), 4))
            width = 0.8 / len(impls)
            for k, impl in enumerate(impls):
                xs, ys = [], []
                for i, b in enumerate(bases):
                    p = R.peak(b, impl)
                    if p:
                        xs.append(i + (k - (len(impls) - 1) / 2) * width)
                        ys.append(p / 2 ** 20)
                if xs:
                    ax.bar(xs, ys, width, label=IMPL_TITLES[impl], color=COLORS[impl])
            ax.set_yscale("log")
            ax.set_ylabel("peak resident set (MiB, log)")
            ax.set_xticks(range(len(bases)))
            ax.set_xticklabels([parse_base(b)[1] for b in bases], fontsize=8)
            ax.set_title("%s: peak memory of forward + backward (whole process)" % g)
            ax.legend(fontsize=8)
            save(fig, "memory_%s.png" % g)

    # Compile time against program size, log-log, with a line of slope 1
    # (time proportional to size) through each series' smallest size.
    series = scaling_series(R.d)
    if series:
        fig, axes = plt.subplots(1, len(SCALING_PROGRAMS), figsize=(10, 4))
        for ax, (program, (label, _)) in zip(axes, SCALING_PROGRAMS.items()):
            for training, marker in ((False, "o"), (True, "s")):
                pts = series.get((program, training))
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                ys = [p[1] for p in pts]
                title = "training" if training else "inference"
                line, = ax.plot(xs, ys, marker + "-", label=title)
                ax.plot(xs, [ys[0] * x / xs[0] for x in xs], ":",
                        color=line.get_color(), label="%s, proportional" % title)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(label + " (log)")
            ax.set_ylabel("gnnc wall time (s, log)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        save(fig, "compile_scaling.png")
    return made


SCALING_PROGRAMS = {
    "chain": ("statements N of the chain model", "N"),
    "appnp": ("propagation steps K of APPNP", "K"),
}


def scaling_series(d):
    """{(program, training): [(size, median s), ...] by size} of the
    compile-time scaling cases that ran."""
    out = {}
    for c in d.get("compile_scaling", {}).get("cases", []):
        if c["ok"] and c["median_s"]:
            out.setdefault((c["program"], c["training"]), []).append(
                (c["size"], c["median_s"]))
    for pts in out.values():
        pts.sort()
    return out


def scaling_section(d, made):
    """The section on compile time against program size, or ""."""
    cs = d.get("compile_scaling")
    if not cs or not cs.get("cases"):
        return ""
    L = ["## Compile time against program size\n"]
    L.append("`gnnc FILE --emit=cpp -o DIR`, without and with `--training`, on programs "
             "of growing size written by `tools/benchmarks/compile_scaling.py`: the "
             "chain model (`chain N`: a graph convolution, N - 9 perceptron steps "
             "`h = relu(h @ W)` and `h = h + relu(h @ W) * s` with one shared weight, "
             "and a mean aggregation; about three operations per statement) and "
             "`dsl-examples/appnp.gnn` with K propagation steps (`-D k=K`, each a "
             "gather, a scatter and three elementwise operations). Median of %d "
             "run%s, wall time and peak resident set of the process (`%s`), measured "
             "%s on %s (%d cores, load average %s at the start)%s.\n"
             % (cs["reps"], "" if cs["reps"] == 1 else "s", cs["gnnc_binary"],
                cs["date_utc"], cs["cpu"], cs["cores"], " ".join(cs["loadavg_start"]),
                "; `tools/bench --compile-only` measures it alone" if
                cs["date_utc"] != d.get("date_utc") else ""))
    by = {}
    for c in cs["cases"]:
        by.setdefault((c["program"], c["size"]), {})[c["training"]] = c
    rows = []
    for (program, size) in sorted(by, key=lambda k: (list(SCALING_PROGRAMS).index(k[0])
                                                     if k[0] in SCALING_PROGRAMS else 9,
                                                     k[1])):
        r = ["%s %d" % (program, size)]
        for tr in (False, True):
            c = by[(program, size)].get(tr)
            if not c:
                r += ["–", "–"]
            elif c["ok"]:
                r += [ftime(c["median_s"]), fbytes(c["peak_rss_bytes"])
                      if c.get("peak_rss_bytes") else "–"]
            else:
                r += ["fails: %s" % c["error"].replace("|", "\\|")[:120], "–"]
        c = by[(program, size)].get(True) or by[(program, size)].get(False)
        r.append(fbytes(c["generated_bytes"]) if c and c.get("generated_bytes") else "–")
        rows.append(r)
    L.append(table(["program", "--emit=cpp", "peak memory", "--emit=cpp --training",
                    "peak memory", "generated (training)"], rows,
                   ["l", "r", "r", "r", "r", "r"]))
    L.append("")
    # The growth exponent between the two largest sizes: 1 is linear.
    growth = []
    for (program, training), pts in sorted(scaling_series(d).items()):
        if len(pts) < 2 or program not in SCALING_PROGRAMS:
            continue
        (n1, t1), (n2, t2) = pts[-2], pts[-1]
        b = math.log(t2 / t1) / math.log(n2 / n1)
        sym = SCALING_PROGRAMS[program][1]
        growth.append("%s%s from %s = %d to %d: time grows as %s^%.2f" % (
            program, " --training" if training else "", sym, n1, n2, sym, b))
    if growth:
        L.append("Between the two largest sizes of each series (an exponent of 1 is "
                 "linear, 2 quadratic): " + "; ".join(growth) + ".\n")
    if "compile_scaling.png" in made:
        L.append("![compile time against program size](%s)\n"
                 % made["compile_scaling.png"])
    return "\n".join(L)


# --------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------


def classify(symbol):
    """The kind of a profiled symbol, for the summary by kind."""
    import re
    s = symbol
    if s.startswith("[kernel]"):
        return "kernel (page faults, system calls)"
    if "_aggregate" in s:
        return "generated edge loops"
    if re.search(r"expf|logf|__exp|__log", s):
        return "libm exp / log (scalar)"
    if "sparseProductRows" in s or "sparseTransposedRows" in s:
        return "products over sparse input (dropout fused)"
    if any(k in s for k in ("sgemm", "dgemm", "gemm", "openblas", "blas_")):
        return "dense products (OpenBLAS)"
    if "gomp" in s.lower() or "omp_" in s or "GOMP" in s:
        return "OpenMP runtime (barriers, waiting)"
    m = re.search(r"gnnc::rt::(\w+)", s)
    if m:
        return "gnnc_ops: %s" % m.group(1)
    if "Adam" in s or "softmaxCrossEntropy" in s:
        return "training step (loss, Adam)"
    if "memset" in s or "memcpy" in s or "memmove" in s:
        return "memset / memcpy"
    if "fromEdgeIndex" in s or "Npy" in s:
        return "setup (graph loading)"
    return "other"


def profile_section(R, targets):
    prof = R.d.get("profiles", {})
    if not prof:
        return "No profiles were taken (perf missing, `--no-profile`, or the target cases did not run).\n"
    parts = []
    names = {"gat": "GAT forward + backward", "gcn": "GCN forward + backward",
             "bandwidth": "GCN aggregation bandwidth",
             "epoch": "Cora GCN training epoch"}
    tg = {r["key"]: r for r in targets}
    met = {"gat": tg["gat"].get("met") and tg["gat_memory"].get("met"),
           "gcn": tg["gcn"].get("met"), "bandwidth": tg["bandwidth"].get("met"),
           "epoch": tg["epoch"].get("met")}
    for key in ("gat", "gcn", "bandwidth", "epoch"):
        p = prof.get(key)
        if not p:
            continue
        parts.append("### %s (`%s`)%s\n" % (
            names[key], p.get("case", ""),
            "" if met.get(key) else " — target not met"))
        if not p.get("ok"):
            parts.append("perf failed: %s\n" % p.get("error", "")[:300])
            continue
        stat = p.get("stat", {})
        facts = []
        if p.get("ipc"):
            facts.append("%.2f instructions per cycle" % p["ipc"])
        if p.get("cache_miss_ratio") is not None:
            facts.append("%.0f%% of cache references miss (perf's cache-misses / "
                         "cache-references)" % (100 * p["cache_miss_ratio"]))
        if facts:
            parts.append("`perf stat` over the timed part: " + ", ".join(facts) + ".\n")
        top = p.get("top", [])
        if top:
            cats = {}
            for t in top:
                c = classify(t["symbol"])
                cats[c] = cats.get(c, 0.0) + t["percent"]
            parts.append(table(["symbol (perf record, cycles)", "share", "kind"],
                               [("`%s`" % t["symbol"].replace("|", "\\|"),
                                 "%.1f%%" % t["percent"], classify(t["symbol"]))
                                for t in top], ["l", "r", "l"]))
            parts.append("")
            parts.append("By kind (symbols above 1%): " + "; ".join(
                "%s %.0f%%" % (c, v) for c, v in sorted(cats.items(), key=lambda kv: -kv[1]))
                + ".\n")
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------
# The doc
# --------------------------------------------------------------------------


def layer_rows(R, bases, impls, with_bw=True):
    """A row per case of `bases`: the medians of `impls`, the fastest
    anchor's median over gnnc's (and which anchor), the peak memory of gnnc
    and of that anchor, gnnc's bandwidth."""
    rows = []
    for b in bases:
        g, layer, F, mode = parse_base(b)
        t_g = R.median(b, "gnnc")
        row = [R.d["layers"][layer]["title"] if layer in R.d["layers"] else layer,
               MODE_TITLES[mode]]
        for impl in impls:
            row.append(R.cell(b, impl))
        best = fastest(R, b, [i for i in ANCHORS if i in impls])
        row.append("%s (%s)" % (fratio(best[1] / t_g), IMPL_TITLES[best[0]])
                   if best and t_g else "–")
        row.append("%s / %s" % (fbytes(R.peak(b, "gnnc")),
                                fbytes(R.peak(b, best[0]) if best else None)))
        if with_bw:
            gb = R.gbs(b, "gnnc")
            if gb and R.stream_gbs:
                row.append("%.1f (%.0f%%)" % (gb, 100 * gb / R.stream_gbs))
            else:
                row.append("–")
        rows.append(row)
    return rows


def layer_headers(impls):
    return (["layer", "mode"] + [IMPL_TITLES[i] for i in impls] +
            ["fastest anchor / gnnc", "peak memory (gnnc / fastest anchor)",
             "gnnc GB/s (% of STREAM)"])


def sweep_impls(R):
    """"PyG (current, X) for GCN inference, ..." of the configurations on
    the current PyTorch in the R-MAT scales sweep (bench.py's PYG2_SWEEP),
    as the results show them."""
    found = []
    for c in R.d["cases"]:
        if "scales" in c["groups"] and c["impl"] in PYG2_IMPLS:
            title = R.d["layers"].get(c["layer"], {}).get("title", c["layer"])
            what = "%s for %s %s" % (IMPL_TITLES[c["impl"]], title,
                                     MODE_TITLES.get(c["mode"], c["mode"]))
            # Whether it was the fastest of the four on rmat-17 in this run.
            best = fastest(R, "rmat-17/%s/F%d/%s" % (c["layer"], c["width"], c["mode"]),
                           PYG2_IMPLS)
            if best and best[0] != c["impl"]:
                what += " (in this run %s was faster on rmat-17)" % IMPL_TITLES[best[0]]
            if what not in found:
                found.append(what)
    return "; ".join(found) or "none"


def current_rows(data):
    """The rows of "Machine and versions" for PyG on the current PyTorch:
    the environment's versions and each configuration, whether it ran."""
    cur = data.get("probe", {}).get("torch_current")
    avail = data.get("availability", {})
    ran = {c["impl"] for c in data["cases"] if c["status"] == "ok"}
    tried = {c["impl"] for c in data["cases"]}
    if cur is None:
        return [["PyG (current)", "not measured (this run predates the configurations "
                 "on the current PyTorch)"]]
    if cur.get("torch_error") or cur.get("pyg_error"):
        return [["PyG (current)", "not available: %s" % (
            cur.get("torch_error") or cur.get("pyg_error"))[:300]]]
    rows = [["current PyTorch", "%s (PyPI, `build/bench-torch-venv`, CPU; "
             "torch.compile: %s)" % (cur.get("torch", "?"),
                                     "yes" if cur.get("torch_compile") else "no")],
            ["current PyG", "%s (PyPI); extensions: %s; EdgeIndex: %s" % (
                cur.get("torch_geometric", "?"),
                ", ".join(k for k, v in sorted(cur.get("pyg_extensions", {}).items())
                          if v and not k.startswith("WITH_PT")) or "none",
                "yes" if cur.get("pyg_edge_index") is True
                else "not probed" if cur.get("pyg_edge_index") is None
                else "no (%s)" % cur["pyg_edge_index"])]]
    how = {"pyg2": "`conv(x, edge_index)` with an int64 edge_index (gather and "
                   "scatter)",
           "pyg2-edgeindex": "`conv(x, EdgeIndex(edge_index, sparse_size=(N, N))"
                             ".sort_by('col').values)`: CSC segment reductions",
           "pyg2-csr": "`conv(x, adj_t)`, the transposed adjacency as a "
                       "`torch.sparse_csr` tensor",
           "pyg2-compile": "eager's layer under `torch.compile(conv, dynamic=False)` "
                           "(Inductor's C++ backend; the warm-up compiles)"}
    for impl in PYG2_IMPLS:
        ok, why = avail.get(impl, {}).get("ok"), avail.get(impl, {}).get("reason", "")
        state = ("ran" if impl in ran else "did not run (every case failed)"
                 if impl in tried and ok else "unavailable: %s" % why[:200]
                 if ok is False else "not in this run")
        rows.append([IMPL_TITLES[impl], "%s; %s" % (how[impl], state)])
    return rows


def write(data, doc, assets):
    doc = pathlib.Path(doc)
    assets = pathlib.Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    R = Results(data)
    made = plots(R, assets)
    m = data["machine"]
    probe = data.get("probe", {})
    targets = evaluate_targets(R)
    L = []
    w = L.append

    w("# Benchmarks\n")
    w("<!-- Written by tools/bench (tools/benchmarks/report.py) from %s; do not edit: "
      "rerun `tools/bench`. -->\n" % (assets.name + "/results.json"))
    kind = data["kind"]
    if kind != "full":
        w("> **This is a %s run** (`%s`), not the full benchmark: it checks that the "
          "harness works, and its figures are not the doc's.\n" % (kind, data["command"]))
    w("gnnc's generated C++ (OpenMP) against PyTorch Geometric and DGL on the CPU, and "
      "against the machine's memory bandwidth. One command regenerates this page, its "
      "plots and the raw results (`%s/results.json`): `tools/bench` (run %s, %.0f "
      "minutes, load average %s at the start and %s at the end)."
      % (assets.name, data["date_utc"], (data.get("wall_s") or 0) / 60,
         " ".join(m.get("loadavg_start", [])), " ".join(m.get("loadavg_end", []))))
    w("")
    notes = []
    if data.get("threads") and m.get("cores") and data["threads"] < m["cores"]:
        notes.append("Every implementation ran on %d thread%s of the machine's %d cores "
                     "(`--threads %d`)." % (data["threads"], "" if data["threads"] == 1 else "s",
                                           m["cores"], data["threads"]))
    try:
        load = float(m.get("loadavg_start", ["0"])[0])
    except ValueError:
        load = 0.0
    if m.get("cores") and load > 0.5 * m["cores"]:
        notes.append("The machine was shared with other work (a 1-minute load average of "
                     "%s on %d cores at the start): every time includes that interference, "
                     "and OpenMP or PyTorch threads that wait for a busy core slow down "
                     "far more than the work they do. Ratios between implementations, "
                     "measured under the same conditions one after the other, are more "
                     "robust than the absolute times." % (m["loadavg_start"][0], m["cores"]))
    if notes:
        w("> " + " ".join(notes) + "\n")

    # Targets.
    w("## Targets\n")
    rows = []
    for t in targets:
        rows.append([t["name"], t["required"], t["achieved"],
                     "**yes**" if t["met"] else ("**no**" if t["met"] is False else "–")])
    w(table(["target", "required", "achieved", "met"], rows, ["l", "l", "l", "l"]))
    w("")
    short = [t for t in targets if t["met"] is False]
    if short:
        w("Where a target is missed, [Profiles](#profiles-what-limits-the-shortfalls) "
          "shows what the time goes to.\n")

    # Machine.
    w("## Machine and versions\n")
    pv = probe
    inst = data.get("install", {}).get("packages", {})
    rows = [
        ["CPU", "%s, %s cores (threads per core: %s), %s%s" % (
            m.get("cpu"), m.get("cores"), m.get("lscpu", {}).get("Thread(s) per core", "?"),
            m.get("lscpu", {}).get("Hypervisor vendor", "bare metal") + " guest"
            if m.get("lscpu", {}).get("Hypervisor vendor") else "",
            # gnnc's runtime and generated code pick AVX-512 clones where the
            # CPU has them: runs on machines with and without differ a lot.
            "" if "avx512" not in m else
            ", AVX-512: %s" % ("yes" if m["avx512"] else "no (AVX2)"))],
        ["caches", "L1d %s, L2 %s, L3 %s (the last-level cache used below: %s)" % (
            m.get("lscpu", {}).get("L1d cache", "?"), m.get("lscpu", {}).get("L2 cache", "?"),
            m.get("lscpu", {}).get("L3 cache", "?"), fbytes(m.get("llc_bytes")))],
        ["memory", "%s (%s available at the start)" % (fbytes(m.get("mem_total_bytes")),
                                                      fbytes(m.get("mem_available_bytes")))],
        ["OS", "%s, Linux %s" % (m.get("os"), m.get("kernel"))],
        ["compilers", "%s; %s; generated code built with `-O3 %s`" % (
            m.get("gcc"), m.get("cmake"), data.get("arch_flags"))],
        ["gnnc", "commit %s%s" % ((m.get("git_commit") or "?")[:12],
                                  " + %d changed files" % m["git_dirty_files"]
                                  if m.get("git_dirty_files") else "")],
        ["OpenBLAS", m.get("openblas") or "?"],
        ["PyTorch (Debian)", "%s (Debian python3-torch %s, CPU)" % (pv.get("torch", "not installed"),
                                                          pv.get("torch_debian", "?"))],
        ["PyG (on Debian's PyTorch)", "%s (PyPI); extensions: %s" % (
            pv.get("torch_geometric", "not installed"),
            ", ".join("%s=%s" % (k, v) for k, v in sorted(pv.get("pyg_extensions", {}).items()))
            or "–")],
        ["DGL", pv.get("dgl", "not available") + (" — " + pv["dgl_note"] if pv.get("dgl_note") else "")
         + (" — " + pv["dgl_error"] if pv.get("dgl_error") else "")],
    ]
    rows += current_rows(data)
    rows += [
        ["threads", "%d for every implementation (OMP_NUM_THREADS, torch.set_num_threads); "
         "gnnc's matmuls call OpenBLAS with OPENBLAS_NUM_THREADS=1 between its OpenMP "
         "loops (its own thread pool would compete with them)"
         % data.get("threads", 0)],
    ]
    w(table(["", ""], rows, ["l", "l"]))
    w("")
    failed_pins = [k for k, v in inst.items() if not v.get("ok")]
    if failed_pins:
        w("PyPI packages that did not install: %s.\n" % ", ".join(failed_pins))
    w("Debian's PyTorch %s has no **torch.compile** (it came with PyTorch 2.0): "
      "PyG's compiled configuration runs on the current PyTorch, in its own "
      "environment (`build/bench-torch-venv`, `tools/benchmarks/requirements-torch.txt`), "
      "which leaves the system's PyTorch, which the goldens use, as it is. PyG's "
      "TorchScript path (`torch.jit.script(conv.jittable())`) on Debian's PyTorch: "
      "%s.\n" % (probe.get("torch", "?"), probe.get("pyg_torchscript", "not tried")))

    # Method.
    w("## Method\n")
    w("- **One process per case**, started afresh: the graph and inputs are loaded, "
      "then the resident-set high-water mark is reset (`/proc/self/clear_refs`), then "
      "the case runs one warm-up call and at least three timed calls (and more, up to "
      "30, until they add up to 1 s; no more once they add up to 10 s). The **median** is reported. Epochs: five "
      "warm-up epochs, then at least twenty.")
    w("- **Peak memory** is the process's peak resident set while the case runs "
      "(its high-water mark from the reset, `rss_peak_bytes`, or the maximum "
      "sampled from outside, whichever is larger), the figure a user sees; for PyG "
      "and DGL it includes the Python interpreter and PyTorch, for gnnc the "
      "runtime's graph (edge list, CSR and CSC, int64). Not the process's "
      "`ru_maxrss` (also in the JSON, `maxrss_process_bytes`): Linux carries the "
      "high-water mark of the harness that starts a case over into it. The JSON also "
      "has the resident set once the graph, inputs and parameters are loaded "
      "(`rss_baseline_bytes`); its difference from `rss_peak_bytes` is the growth "
      "shown in the GAT target's row. gnnc's growth "
      "is its outputs (the forward's result and saved tensors, the gradients) and "
      "one workspace that its forward and backward share, of the larger of their "
      "sizes (the forward's intermediates are dead once it returns), as a training "
      "loop allocates it (docs/abi.md, \"Workspace\").")
    w("- **Caps**: a case whose resident set passes %s or that runs past %d s is "
      "killed; that is its result (\"over memory cap\"), and the same case is not "
      "tried on larger R-MAT scales. %s"
      % (fbytes(data.get("mem_cap_bytes")), data.get("time_cap_s", 0),
         ("Cases other than the targets' are skipped once %g minutes of cases have "
          "run." % data["budget_min"]) if data.get("budget_min") else ""))
    w("- **Layers** (input and output width F): the gnnc layers are the examples "
      "(`dsl-examples/gcn.gnn` GCNConv, `gat.gnn` GATConv with F/H units per head, "
      "`sage_mean.gnn` SAGEConv, `sage_max.gnn` SAGEPoolConv with a pool width of F, "
      "`gin.gnn` GINConv with an MLP width of F), compiled by `gnnc --emit=cpp "
      "--training` with `-D` for the widths, one module per variant. The anchors "
      "compute the same functions: PyG `GCNConv(add_self_loops=False)`, "
      "`GATConv(F, F/H, heads=H, add_self_loops=False)`, `SAGEConv(aggr='mean')`, "
      "`SAGEConv(aggr='max', project=True)`, `GINConv(MLP)` (unweighted; gnnc's GIN "
      "reads an edge weight of 1 per edge and also returns its gradient); DGL "
      "`GraphConv(norm='both')`, `GATConv`, `SAGEConv('mean')`, `SAGEConv('pool')`, "
      "`GINConv(MLP, 'sum')` with edge weights of 1. No dropout. The **GCN "
      "aggregation** is `tools/benchmarks/aggregate.gnn` (out[v] = sum of x[u] over "
      "the in-edges), against PyG's scatter path (`index_select` + `index_add_`), "
      "`torch.sparse.mm` and DGL's `copy_u_sum`.")
    w("- **Modes**: inference (`F(..., training=false)`; PyG/DGL in `eval()` under "
      "`no_grad`) and forward + backward (gnnc: `F_train`, which saves what the "
      "backward reads, then `F_backward` with a random cotangent; PyG/DGL: forward, "
      "then `out.backward(cotangent)` with `x.requires_grad`; both give the gradients "
      "of x and of every parameter).")
    cur = probe.get("torch_current") or {}
    w("- **PyG configurations**, on Debian's PyTorch %s with PyG %s: *PyG* feeds "
      "`edge_index` to the MessagePassing layers (without torch_scatter / torch_sparse, "
      "which PyPI does not ship as wheels, PyG gathers with `index_select` and scatters "
      "with torch's `scatter_reduce_`); *PyG sparse* feeds the transposed adjacency as "
      "a `torch.sparse` CSR tensor (PyG's sparse-matrix path; repeated edges are "
      "coalesced into one entry of weight 2 or more, so on R-MAT graphs it sees fewer, "
      "weighted edges). On the current PyTorch %s with PyG %s from PyPI "
      "(`build/bench-torch-venv`), the anchors a user would pick today: *PyG (current)* "
      "with `edge_index`; *PyG (current, EdgeIndex)* with a `torch_geometric.EdgeIndex` "
      "sorted by destination (`EdgeIndex(edge_index, sparse_size=(N, N))"
      ".sort_by('col')`, built before the timed part), with which MessagePassing "
      "aggregates by segments of the CSC row pointers instead of scattering, and the "
      "aggregation alone is `EdgeIndex.matmul(x, transpose=True)`; *PyG (current, CSR)* "
      "as *PyG sparse*; *PyG (current, torch.compile)*, eager's layer (an epoch: its "
      "forward) under `torch.compile(dynamic=False)`, whose warm-up call compiles and "
      "whose timed calls run the compiled code. A configuration that cannot run a "
      "case (a reduction the sparse path lacks) is listed under Cases without a time. "
      "**The fastest anchor** of a case is the fastest of all of these and DGL."
      % (probe.get("torch", "?"), probe.get("torch_geometric", "?"),
         cur.get("torch", "?"), cur.get("torch_geometric", "?")))
    if not any(c["impl"] in PYG2_IMPLS for c in data["cases"]):
        w("- **The current PyTorch**: this run's results predate PyG on the current "
          "PyTorch in these tables; its columns read \"not measured\".")
    else:
        w("- **Where the current PyTorch runs**%s: all four configurations on rmat-17's "
          "layers (the targets' graph), the Cora GCN epoch and the aggregation on rmat-20 "
          "at F = 64 (the bandwidth target's case); the three eager ones on Cora's "
          "layers (torch.compile's compile of each case takes longer than the case "
          "there); on the R-MAT scales sweep only the fastest of the four for its "
          "case in our runs (%s); none on Citeseer, the Erdős–Rényi graph, "
          "the widths and beside the busy process, whose targets compare gnnc with "
          "itself. That keeps the full run within about 40 minutes."
          % (" in the full run (this %s run has the cases of its tables)" % kind
             if kind != "full" else "", sweep_impls(R)))
    w("- **Minimum byte count** of a case: the CSR as gnnc's runtime stores it (int64 "
      "row offsets and int64 column indices) read once, every input and parameter "
      "read once, every output written once; forward + backward counts the graph in "
      "both directions (CSR and CSC) and x, cotangent, parameters, output, gradient of "
      "x and parameter gradients once each. Achieved GB/s = that count / median time, "
      "compared with the STREAM triad below. Sizes that fit in the last-level cache "
      "(%s) are marked: they can beat DRAM bandwidth." % fbytes(R.llc))
    w("- **Graphs** (`build/bench-data/`, generated once with fixed seeds and reused, "
      "the same `.npy` files for every implementation): Cora and Citeseer (from "
      "`runtime/data`); R-MAT with the Graph500 parameters a = 0.57, b = c = 0.19, 2^scale "
      "vertices and 16 edges per vertex (Graph500's generator: vertices relabelled at "
      "random, self-loops and repeated edges kept); Erdős–Rényi G(n, m) with the same "
      "n and m.")
    w("")
    rows = []
    for name, g in sorted(data.get("graphs", {}).items(), key=lambda kv: (kv[1]["E"], kv[0])):
        rows.append([name, fcount(g["N"]), fcount(g["E"]), fcount(g.get("max_in_degree", 0)),
                     fcount(g.get("isolated_in", 0)), g.get("kind", "")])
    if rows:
        w(table(["graph", "vertices", "edges", "max in-degree", "no in-edges", "kind"], rows))
        w("")

    # STREAM.
    w("## STREAM triad\n")
    s = R.stream
    if s.get("ok"):
        w("`tools/benchmarks/stream.c` (`a[i] = b[i] + s * c[i]`, OpenMP, %d threads, "
          "three arrays of %s each, 24 bytes per element counted): **%.2f GB/s** best "
          "of %d, %.2f GB/s median.\n" % (s["threads"], fbytes(s["array_bytes"]),
                                          s["best_gbs"], s["reps"], s["median_gbs"]))
    else:
        w("STREAM did not run: %s\n" % s.get("error", "?"))

    # Layers.
    def current_note(group):
        here = [IMPL_TITLES[i] for i in R.impls(group, ()) if i in PYG2_IMPLS]
        if not here:
            return " PyG on the current PyTorch does not run here (see Method)."
        return " Of PyG on the current PyTorch, %s ran here (see Method)." % (
            ", ".join(here))
    groups = [
        ("layers", "Layers at F = %s" % "/".join(str(f) for f in sorted(
            {parse_base(b)[2] for b in R.bases("layers")})),
         "Every layer in both modes, every implementation (PyG and PyG sparse on "
         "Debian's PyTorch 1.13, PyG (current, ...) on the current PyTorch, see "
         "Method). \"fastest anchor / gnnc\" is the median time of the fastest "
         "anchor of that row over gnnc's (above 1: gnnc is faster), and names that "
         "anchor; the peak memory is gnnc's and that anchor's."),
        ("er", "Erdős–Rényi", "The same vertex and edge counts as R-MAT scale 17, without "
         "the skew." + current_note("er")),
        ("widths", "Feature widths", "R-MAT scale 15 (32,768 vertices, 524,288 edges)."
         + current_note("widths")),
        ("scales", "R-MAT scales", "Scales 14 to 20 at F = 64; anchors stop where they "
         "pass the memory or time cap." + current_note("scales")),
    ]
    for gname, title, blurb in groups:
        bases = R.bases(gname)
        if not bases:
            continue
        w("## %s\n" % title)
        w(blurb + "\n")
        graphs_here = []
        for b in bases:
            gg = b.split("/")[0]
            if gg not in graphs_here:
                graphs_here.append(gg)
        # The layers' tables have a column for every implementation (an
        # earlier run's results show "not measured" for those it lacks);
        # the sweeps' for those that ran there.
        impls = MAIN_IMPLS if gname == "layers" else R.impls(gname)
        if gname in ("layers", "er"):
            for gg in graphs_here:
                gm = data["graphs"].get(gg, {})
                w("### %s (%s vertices, %s edges)\n" % (gg, fcount(gm.get("N", 0)),
                                                       fcount(gm.get("E", 0))))
                w(table(layer_headers(impls),
                        layer_rows(R, [b for b in bases if b.startswith(gg + "/")],
                                   impls)))
                w("")
                if "layers_%s.png" % gg in made:
                    w("![%s](%s)\n" % (gg, made["layers_%s.png" % gg]))
        else:
            hdr = ["graph", "layer", "F"] + layer_headers(impls)[1:]
            rows = []
            for b in bases:
                g, layer, F, mode = parse_base(b)
                r = layer_rows(R, [b], impls)[0]
                rows.append([g, r[0], F, r[1]] + r[2:])
            w(table(hdr, rows))
            w("")
            png = {"widths": "widths.png", "scales": "scales.png"}[gname]
            if png in made:
                w("![%s](%s)\n" % (gname, made[png]))
        if gname == "layers":
            png = [k for k in made if k.startswith("memory_")]
            for p in png:
                w("![peak memory](%s)\n" % made[p])

    # Bandwidth.
    bb = [b for b in R.bases("bandwidth")]
    if bb:
        w("## Memory bandwidth: the GCN aggregation\n")
        w("`out[v] = sum of x[u] over the in-edges u -> v`, one pass over the CSR. The "
          "minimum byte count is the CSR, x and out; where it fits in the last-level "
          "cache (%s) the figure is cache bandwidth, not DRAM bandwidth, and is "
          "reported separately from the target.\n" % fbytes(R.llc))
        rows = []
        # PyG on the current PyTorch runs on few rows here: one column, its
        # fastest configuration (the others are in the JSON).
        current = [i for i in R.impls("bandwidth", ()) if i in PYG2_IMPLS]
        for b in bb:
            g, layer, F, mode = parse_base(b)
            c = R.case(b, "gnnc")
            mb = c.get("min_bytes") if c else None
            resident = "yes" if (mb and R.llc and mb <= R.llc) else "no"
            cells = [g, F, fbytes(mb), resident]
            for impl in IMPLS:
                v = R.gbs(b, impl)
                cells.append("%s: %s" % (R.cell(b, impl), "%.1f GB/s" % v if v else "–")
                             if R.case(b, impl) else "–")
            if current:
                best = fastest(R, b, current)
                tried = [i for i in current if R.case(b, i)]
                cells.append("%s: %.1f GB/s (%s)" % (
                    ftime(best[1]), R.gbs(b, best[0]) or 0, PYG2_SHORT[best[0]])
                    if best and R.gbs(b, best[0])
                    else "; ".join("%s %s" % (IMPL_TITLES[i], R.cell(b, i)) for i in tried)
                    or "–")
            gb = R.gbs(b, "gnnc")
            cells.append("%.0f%%" % (100 * gb / R.stream_gbs) if gb and R.stream_gbs else "–")
            rows.append(cells)
        w(table(["graph", "F", "minimum bytes", "fits in LLC"] +
                ["%s time: GB/s" % IMPL_TITLES[i] for i in IMPLS] +
                (["PyG (current), fastest configuration: time: GB/s"] if current else []) +
                ["gnnc / STREAM"], rows))
        w("")
        if "bandwidth.png" in made:
            w("![bandwidth](%s)\n" % made["bandwidth.png"])

    # Epoch.
    eb = R.bases("epoch")
    if eb:
        w("## Cora: one GCN training epoch\n")
        w("The two-layer GCN of `dsl-examples/gcn.gnn` (1433 → 16 → 7, ReLU, dropout "
          "0.5) on Cora with one self-loop per vertex and row-normalised features, one "
          "full-batch epoch: forward with dropout, masked softmax cross-entropy over the "
          "140 training vertices, backward, one Adam step (lr 0.01, weight decay 5e-4 on "
          "the first layer). PyG runs its `examples/gcn.py` (GCNConv with `cached=True`, "
          "self-loops added by the layer), on Debian's PyTorch and on the current one "
          "in the configurations of the layers (the graph as an EdgeIndex, with the "
          "self-loops added before it is sorted and none by the layers, or as a CSR "
          "tensor; the forward under torch.compile); DGL the same network with "
          "`GraphConv`.\n")
        rows = []
        for b in eb:
            t_g = R.median(b, "gnnc")
            for impl in MAIN_IMPLS:
                c = R.case(b, impl)
                if not c:
                    continue
                t = R.median(b, impl)
                ok = c["status"] == "ok"
                rows.append([IMPL_TITLES[impl], R.cell(b, impl),
                             fratio(t / t_g) if t and t_g and impl != "gnnc" else "",
                             fbytes(R.peak(b, impl)),
                             "%d" % (c["result"].get("warmup", 0) + len(c["result"]["times_s"]))
                             if ok else "–",
                             "%.4f" % c["result"]["loss"] if ok and
                             c["result"].get("loss") is not None else "–"])
        w(table(["implementation", "median epoch", "vs gnnc", "peak memory",
                 "epochs run", "loss of the last epoch"], rows))
        w("")

    # A busy core.
    busy_bases = [b for b in R.bases("contention") if b.endswith("-busy")]
    if busy_bases:
        w("## Beside a busy process\n")
        w("The same case run alone and while another process keeps one core busy "
          "(a Python loop pinned to the last of the cores the case runs on, which "
          "are as many as its threads, started 0.3 s before the case and stopped "
          "after it), one after the other; every implementation with %d threads. The slowdown is the busy median over the "
          "quiet one. gnnc's loops run on as many threads as there are cores other "
          "processes leave free, measured a few times a second (`rt::teamSize`, "
          "docs/abi.md \"Thread safety\"); PyTorch keeps its threads.\n"
          % data["threads"])
        rows = []
        for b in busy_bases:
            quiet = b[:-len("-busy")]
            g, layer, F, mode = parse_base(quiet)
            for impl in MAIN_IMPLS:
                tq, tb = R.median(quiet, impl), R.median(b, impl)
                if not R.case(b, impl):
                    continue
                title = data.get("layers", {}).get(layer, {}).get("title", layer)
                what = ("%s, %s" % (title, g) if mode == "epoch"
                        else "%s, %s, F = %d" % (title, g, F))
                rows.append(["%s, %s" % (what, MODE_TITLES[mode]),
                             IMPL_TITLES[impl], R.cell(quiet, impl), R.cell(b, impl),
                             fratio(tb / tq) if tb and tq else "–"])
        w(table(["case", "implementation", "quiet median", "busy median",
                 "slowdown"], rows))
        w("")

    # Compile times.
    comp = data.get("compile", [])
    if comp:
        w("## Compile time\n")
        w("`gnnc FILE --emit=cpp -o DIR` without and with `--training`, best of %d runs, "
          "wall time of the process (`%s`, a Release build).\n"
          % (max(len(c["times_s"]) for c in comp), data.get("gnnc_binary", "gnnc")))
        by = {}
        for c in comp:
            by.setdefault(c["example"], {})[c["training"]] = c
        rows = []
        for ex in sorted(by):
            r = [ex]
            for tr in (False, True):
                c = by[ex].get(tr)
                if not c:
                    r.append("–")
                elif c["ok"]:
                    r.append(ftime(c["best_s"]))
                else:
                    r.append("fails: %s" % c["error"].replace("|", "\\|")[:120])
            rows.append(r)
        w(table(["example", "--emit=cpp", "--emit=cpp --training"], rows, ["l", "r", "r"]))
        w("")
    section = scaling_section(data, made)
    if section:
        w(section)

    # Profiles.
    w("## Profiles: what limits the shortfalls\n")
    w("The gnnc case of each target was run again under `perf stat` and `perf record` "
      "(`-D` skips the graph loading; the samples cover the timed calls).\n")
    w(profile_section(R, targets))
    w(analysis(R, targets))

    # Distributed memory (tools/bench --dist), from its own JSON.
    dist = load_dist(assets)
    if dist:
        w(dist_section(dist, dist_plots(dist, assets)))

    # Mini-batch sampling (tools/bench --sampling), from its own JSON.
    samp = load_sampling(assets)
    if samp:
        w(sampling_section(samp, sampling_plots(samp, assets)))

    # From PyTorch (tools/bench --torch), from its own JSON.
    tor = load_torch(assets)
    if tor:
        w(torch_section(tor))

    # Fixed-size batches (tools/bench --fixed-size), from its own JSON.
    fixed = load_fixedsize(assets)
    if fixed:
        w(fixedsize_section(fixed, assets))

    # The GPU (tools/gpu-check.sh, on a machine with one), from its own JSON.
    gpu = load_assets_json(assets, GPU_JSON)
    w(gpu_section(gpu, gpu_plots(gpu, assets) if gpu else {}))

    # Not run.
    bad = [c for c in data["cases"] if c["status"] != "ok"]
    if bad:
        w("## Cases without a time\n")
        rows = []
        for c in bad:
            err = c.get("error", "")
            rows.append([c["id"], short_status(c), err.replace("|", "\\|").replace("\n", " ")[:200]])
        w(table(["case", "result", "why"], rows, ["l", "l", "l"]))
        w("")

    text = "\n".join(L).rstrip() + "\n"
    if doc.exists():
        text = keep_sections(doc.read_text(), text)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text)


# The sections of benchmarks.md that only their own command writes (from
# JSON that write() does not read): a rewrite of the doc keeps them.
KEPT_SECTIONS = ["## Data-parallel training", "## The layer library against PyG"]


def keep_sections(old, new):
    """`new` (a whole benchmarks.md) with the KEPT_SECTIONS of `old` that it
    lacks, each put where splice_section puts a new section."""
    lines = old.split("\n")
    have = set(new.split("\n"))
    for heading in KEPT_SECTIONS:
        if heading in have or heading not in lines:
            continue
        start = lines.index(heading)
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i].startswith("## ")), len(lines))
        new = splice_section(new, heading, "\n".join(lines[start:end]))
    return new


def share(prof, pred):
    return sum(t["percent"] for t in prof.get("top", []) if pred(t["symbol"]))


# What each kind of hot symbol means, in the code gnnc generates and the
# runtime it calls; printed for a target that is missed, when the kind takes
# at least 10% of its cycles.
EXPLAIN = {
    "libm exp / log (scalar)":
        "Calls to libm's scalar `expf` / `logf`. Generated kernels compute float "
        "exponentials with the vectorisable `rt::simdExp`; what remains here is "
        "the logarithm of the saved logsumexp statistic and the exponentials of "
        "the host operations, one element at a time.",
    "gnnc_ops: transpose":
        "`gnnc::rt::transpose` writes out the transpose of a dense operand that "
        "is read by something other than a matmul (transposes read only by "
        "matmuls are passed to `sgemm` as transposed instead).",
    "gnnc_ops: dropout":
        "`gnnc::rt::dropout` draws a splitmix64 hash per element (compared with "
        "an integer threshold). The epoch applies it to the 1433-wide input "
        "features in the forward and again in the backward, which recomputes the "
        "mask rather than storing it (the backward skips the gradient of the "
        "features itself: the epoch passes null for it).",
    "generated edge loops/gat":
        "The generated aggregation loops: the forward's (attention logits, "
        "online softmax, weighted sum, and the logsumexp statistic it saves) and "
        "the backward's, each of which rebuilds the attention weights of every "
        "edge from the saved statistic and gathers the source rows again (the "
        "`expf` calls they make are counted separately).",
    "generated edge loops":
        "The generated aggregation loops themselves: per edge, one row of the "
        "source's features is gathered from an address given by the column "
        "index, so a graph without locality (R-MAT with Graph500's random "
        "relabelling) makes one or more cache misses per edge; with the few "
        "misses the loop keeps in flight on one or two cores the loop runs at "
        "memory latency rather than bandwidth. A kernel that reads every row "
        "once would have to block the graph by source ranges that fit in the "
        "cache (as DGL's SpMM does) or reorder the vertices.",
    "dense products (OpenBLAS)":
        "Dense products in OpenBLAS (`x @ W` and its gradients).",
    "products over sparse input (dropout fused)/epoch":
        "`rt::dropoutMatmul` (the forward's `dropout(x) @ W`) and "
        "`rt::dropoutTransposeMatmul` (the gradient of W), which drop Cora's "
        "bag-of-words features as they read them and skip their zeros (about "
        "1 element in 80 is not zero): each call reads all of x (2,708 x 1,433 "
        "floats, 15.5 MB) once and hashes the non-zero elements only. With x "
        "passed as a dense tensor, these two reads are the floor of the "
        "epoch; the gradient's reads a block of columns of every row, a row's "
        "length apart.",
    "OpenMP runtime (barriers, waiting)":
        "The OpenMP runtime: threads waiting at the end of parallel loops (load "
        "imbalance of skewed degrees, or a core shared with other work).",
    "kernel (page faults, system calls)":
        "The kernel: page faults on freshly touched workspace and output pages.",
}


def analysis(R, targets):
    """Reading of the profiles of missed targets; the numbers come from the JSON."""
    prof = R.d.get("profiles", {})
    out = []
    tg = {r["key"]: r for r in targets}
    missed = {"gat": tg["gat"].get("met") is False or tg["gat_memory"].get("met") is False,
              "gcn": tg["gcn"].get("met") is False,
              "bandwidth": tg["bandwidth"].get("met") is False,
              "epoch": tg["epoch"].get("met") is False}
    names = {"gat": "GAT forward + backward", "gcn": "GCN forward + backward",
             "bandwidth": "GCN aggregation", "epoch": "Cora training epoch"}
    for key in ("gat", "gcn", "bandwidth", "epoch"):
        p = prof.get(key)
        if not missed[key] or not p or not p.get("ok") or not p.get("top"):
            continue
        cats = {}
        for t in p["top"]:
            c = classify(t["symbol"])
            cats[c] = cats.get(c, 0.0) + t["percent"]
        lines = []
        for c, v in sorted(cats.items(), key=lambda kv: -kv[1]):
            text = EXPLAIN.get("%s/%s" % (c, key), EXPLAIN.get(c))
            if v >= 10 and text:
                lines.append("- *%s* (%.0f%% of the cycles): %s" % (c, v, text))
        if key == "bandwidth":
            c = R.ok(p["case"].rsplit("/", 1)[0], "gnnc")
            if c:
                t, E, N, F = c["result"]["median_s"], c["E"], c["N"], c["width"]
                gathered = 4.0 * E * F
                lines.append(
                    "- Per edge the call takes %.1f ns. The rows it gathers add up to "
                    "%s (%s edges x %d floats), %.1f times the minimum count's single "
                    "read of x; counted that way the loop moves %.1f GB/s." % (
                        1e9 * t / E, fbytes(gathered), fcount(E), F,
                        gathered / (4.0 * N * F), (gathered + c["min_bytes"] - 4.0 * N * F) / t / 1e9))
            dgl = R.ok(p["case"].rsplit("/", 1)[0], "dgl")
            if dgl and c:
                lines.append("- DGL's `copy_u_sum` on the same graph takes %s (%s than gnnc)." % (
                    ftime(dgl["result"]["median_s"]),
                    "%s faster" % fratio(c["result"]["median_s"] / dgl["result"]["median_s"])
                    if dgl["result"]["median_s"] < c["result"]["median_s"] else
                    "%s slower" % fratio(dgl["result"]["median_s"] / c["result"]["median_s"])))
        if lines:
            out.append("**%s** (`%s`):\n\n%s" % (names[key], p["case"], "\n".join(lines)))
    if not out:
        return ""
    return "### What limits the missed targets\n\n" + "\n\n".join(out) + "\n"



# --------------------------------------------------------------------------
# Distributed memory (tools/bench --dist: tools/benchmarks/dist/run.py)
# --------------------------------------------------------------------------

DIST_HEADING = "## Distributed memory: gather throughput"
DIST_JSON = "dist-results.json"
DIST_TYPES = ["local", "continuous", "chunked", "distributed"]
DIST_TYPE_TITLES = {"local": "local array", "continuous": "continuous",
                    "chunked": "chunked", "distributed": "distributed"}
DIST_DISTS = {"uniform": "uniform indices", "powerlaw": "power-law indices"}
DIST_COLORS = {"local": "#7f7f7f", "continuous": "#1f77b4", "chunked": "#2ca02c",
               "distributed": "#d62728"}


def load_assets_json(assets, name):
    """The JSON file `name` beside the assets (a run's own results), or None
    when it is missing or not JSON."""
    path = pathlib.Path(assets) / name
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None


def load_dist(assets):
    """The JSON of the last `tools/bench --dist` beside the assets, or None."""
    return load_assets_json(assets, DIST_JSON)


def dist_runs(d):
    return sorted([r for r in d.get("runs", []) if r.get("world_size")],
                  key=lambda r: r["world_size"])


def dist_gather(run, type_, width, dist):
    for g in run.get("gather", []):
        if g["type"] == type_ and g["width"] == width and g["dist"] == dist:
            return g
    return None


def dist_widths(d):
    return sorted({g["width"] for r in dist_runs(d) for g in r.get("gather", [])})


def dist_dists(d):
    seen = []
    for r in dist_runs(d):
        for g in r.get("gather", []) + r.get("cache", []):
            if g["dist"] not in seen:
                seen.append(g["dist"])
    return sorted(seen, key=lambda x: list(DIST_DISTS).index(x) if x in DIST_DISTS else 9)


def dist_copy_gbs(run):
    s = run.get("stream") or {}
    return (s.get("copy") or {}).get("gbs")


def dist_plots(d, assets):
    """The PNGs of the section; {name: path relative to the doc}."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    assets = pathlib.Path(assets)
    made = {}
    runs = dist_runs(d)
    dists = dist_dists(d)
    widths = dist_widths(d)
    if not runs or not widths:
        return made

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(assets / name, dpi=110)
        plt.close(fig)
        made[name] = "%s/%s" % (assets.name, name)

    fig, axes = plt.subplots(len(dists), len(runs), squeeze=False,
                             figsize=(3.6 * len(runs) + 1, 3.2 * len(dists)),
                             sharey=True)
    for i, dist in enumerate(dists):
        for j, run in enumerate(runs):
            ax = axes[i][j]
            for t in DIST_TYPES:
                pts = [(w, dist_gather(run, t, w, dist)) for w in widths]
                pts = [(w, g["gbs"]) for w, g in pts if g and g.get("gbs")]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            "o-" if t != "local" else "s--", color=DIST_COLORS[t],
                            label=DIST_TYPE_TITLES[t])
            copy = dist_copy_gbs(run)
            if copy:
                ax.axhline(copy / 2, color="k", ls=":", lw=1,
                           label="STREAM copy / 2")
            ax.set_xscale("log", base=2)
            ax.set_xticks(widths)
            ax.set_xticklabels([str(w) for w in widths])
            ax.set_title("%d rank%s, %s" % (run["world_size"],
                                            "" if run["world_size"] == 1 else "s",
                                            DIST_DISTS.get(dist, dist)), fontsize=9)
            ax.set_xlabel("row width (floats)")
            if j == 0:
                ax.set_ylabel("GB/s of rows delivered")
            ax.grid(True, alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=7)
    save(fig, "dist_gather.png")

    cruns = [r for r in runs if r["world_size"] > 1 and r.get("cache")]
    if cruns:
        fig, axes = plt.subplots(1, len(cruns), squeeze=False,
                                 figsize=(4.5 * len(cruns) + 1, 3.4))
        for j, run in enumerate(cruns):
            ax = axes[0][j]
            cfgs = []
            for c in run["cache"]:
                if c["policy"] != "none" and (c["policy"], c["capacity_fraction"]) not in cfgs:
                    cfgs.append((c["policy"], c["capacity_fraction"]))
            bw = 0.8 / max(1, len(dists))
            for k, dist in enumerate(dists):
                xs, ys, hr = [], [], []
                for x, (pol, frac) in enumerate(cfgs):
                    sp = dist_cache_speedup(run, pol, frac, dist)
                    c = dist_cache(run, pol, frac, dist)
                    if sp is None or not c:
                        continue
                    xs.append(x + (k - (len(dists) - 1) / 2) * bw)
                    ys.append(sp)
                    hr.append(c.get("hit_rate"))
                ax.bar(xs, ys, bw, label=DIST_DISTS.get(dist, dist),
                       color="#1f77b4" if dist == "powerlaw" else "#ff7f0e")
                for x, y, h in zip(xs, ys, hr):
                    if h is not None:
                        ax.text(x, y, "%.0f%%" % (100 * h), ha="center", va="bottom",
                                fontsize=7)
            ax.axhline(1, color="k", lw=1)
            ax.set_xticks(range(len(cfgs)))
            ax.set_xticklabels(["%s %g%%" % (p.upper(), 100 * f) for p, f in cfgs],
                               fontsize=8)
            ax.set_ylabel("speed-up over no cache")
            ax.set_title("%d ranks (labels: hit rate)" % run["world_size"], fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
        save(fig, "dist_cache.png")
    return made


def dist_cache(run, policy, fraction, dist):
    for c in run.get("cache", []):
        if c["policy"] == policy and c["dist"] == dist and (
                policy == "none" or c["capacity_fraction"] == fraction):
            return c
    return None


def dist_cache_speedup(run, policy, fraction, dist):
    c = dist_cache(run, policy, fraction, dist)
    base = dist_cache(run, "none", 0, dist)
    if not c or not base or not c.get("median_s"):
        return None
    return base["median_s"] / c["median_s"]


def fgbs(x):
    return "–" if x is None else "%.2f" % x


def frows(x):
    return "–" if x is None else "%.2f M" % (x / 1e6)


def fpct(x):
    return "–" if x is None else "%.0f%%" % (100 * x)


def dist_section(d, made):
    """The section "Distributed memory: gather throughput" (markdown, ending
    with one newline) from the JSON of tools/bench --dist."""
    L = []
    w = L.append
    runs = dist_runs(d)
    m = d.get("machine", {})
    cores = m.get("cores") or 0
    w(DIST_HEADING + "\n")
    w("<!-- Written by tools/bench --dist (tools/benchmarks/dist/run.py, "
      "tools/benchmarks/report.py) from benchmarks/%s; rerun `tools/bench --dist`. -->\n"
      % DIST_JSON)
    if d.get("kind") != "full":
        w("> **This is a %s run** (`%s`): it checks that the harness works; its "
          "figures are not the doc's.\n" % (d.get("kind"), d.get("command")))
    launches = ", ".join("`%s`" % r["launch"]["command"] for r in d.get("runs", [])
                         if r.get("launch"))
    w("gnnc_dist's `DistTensor::gather` in the three host memory types, and an "
      "`Embedding` read through its row cache, over Open MPI ranks on this machine "
      "(%s, %d cores, %s): `tools/benchmarks/dist/gnnc_dist_bench.cpp`, built against "
      "the %s and launched as %s. One command regenerates this section, its plots and "
      "the raw results (`benchmarks/%s`): `tools/bench --dist` (run %s, %.1f minutes "
      "with the build; load average %s at the start and %s at the end)."
      % (m.get("cpu", "?"), cores, fbytes(m.get("mem_total_bytes")),
         d.get("linked_against", "?"), launches, DIST_JSON, d.get("date_utc", "?"),
         (d.get("wall_s") or 0) / 60, " ".join(m.get("loadavg_start", [])),
         " ".join(m.get("loadavg_end", []))))
    w("")
    bad = [r for r in d.get("runs", []) if not r.get("ok")]
    for r in bad:
        w("> **The %s-rank run failed**: %s\n" % (
            r.get("launch", {}).get("np", "?"),
            str(r.get("error", "?")).replace("\n", " ")[:400]))
    if not runs:
        return "\n".join(L).rstrip() + "\n"

    # The oversubscription note, from the measured CPU and wall times.
    over = [r for r in runs if cores and r["world_size"] > cores]
    util = {r["world_size"]: dist_cpu_share(r) for r in runs}
    if over:
        r4 = over[-1]
        n = r4["world_size"]
        w("> **%d ranks on %d cores.** The machine has %d cores, shared with other "
          "work, so at %d ranks the ranks take turns on the cores (`--oversubscribe`; "
          "gnnc_dist's MPI backend waits for a collective by polling it, yielding "
      "the core and then sleeping briefly between polls, so a waiting rank leaves "
      "the core to the rank it waits for, at the price of some latency). A "
          "%d-rank figure measures time-slicing, not %d-way parallelism: during the "
          "timed calls each rank had the CPU for %s of the wall time on average "
          "(against %s at 1 rank, where only the machine's other work competes), "
          "a collective cannot finish before its slowest, "
          "possibly descheduled, rank has arrived, and the aggregate throughput can "
          "exceed the 2-rank figure only where the 2-rank run left the cores idle "
          "or, with other work on the machine, because the scheduler gives four "
          "processes a larger share of the cores than two. "
          "Compare memory types at 1 and 2 ranks; the %d-rank rows show that every "
          "path works oversubscribed and what that costs, not how gnnc_dist scales.\n"
          % (n, cores, cores, n, n, n, fpct(util.get(n)),
             fpct(util.get(runs[0]["world_size"])), n))

    try:
        load = float(m.get("loadavg_start", ["0"])[0])
    except ValueError:
        load = 0.0
    one = util.get(runs[0]["world_size"]) if runs[0]["world_size"] == 1 else None
    if (cores and load > 0.5 * cores) or (one is not None and one < 0.9):
        w("> **A shared machine.** The run started at a 1-minute load average of %s "
          "on %d cores%s. Every figure includes that interference, and repetitions "
          "taken minutes apart see different load: absolute GB/s vary from run to "
          "run by more than the differences between neighbouring cells. The "
          "measurements of one table width (the local array and every memory type) "
          "and of the cache configurations run interleaved, round by round, so "
          "their ratios are more robust than the absolute figures; STREAM runs "
          "before them, so the ratios against it are the least robust.\n"
          % (m.get("loadavg_start", ["?"])[0], cores,
             (", and the 1-rank benchmark had the CPU for only %s of its timed wall "
              "time" % fpct(one)) if one is not None and one < 0.9 else ""))

    summary = dist_summary(d)
    if summary:
        w("**In short** (geometric means over the row widths of the ratios below):\n")
        for line in summary:
            w("- " + line)
        w("")

    cfg = runs[0].get("config", {})
    g0 = (runs[0].get("gather") or [{}])[0]
    glast = (runs[0].get("gather") or [{}])[-1]
    st0 = runs[0].get("stream") or {}
    w("### Method\n")
    w("- **Tables**: float32, rows of %s floats, %s MiB per table whatever the width "
      "(%s rows at %d floats), partitioned over the ranks in contiguous blocks; every "
      "rank fills its own rows. The *local array* is the same table in each rank's "
      "private memory, gathered with one `memcpy` per row: the upper bound, measured "
      "on every rank at once like the others."
      % ("/".join(str(x) for x in cfg.get("widths", [])), jsonnum(cfg.get("table_mib")),
         fcount(g0.get("rows", 0)), g0.get("width", 0)))
    timing = g0.get("timing", "span")
    w("- **Repetitions**: each rank gathers %s rows per call, a fresh batch of "
      "indices per call, and as many calls per repetition as make about %s MiB of "
      "rows per rank (%s calls at %d floats, %s at %d); a barrier precedes each "
      "repetition. %s **rows/s** = the rows all ranks received / that time; "
      "**GB/s** = those rows' bytes / that time (bytes of rows delivered, 1 GB = "
      "10^9 bytes). The median of %s repetitions after %s warm-up repetition(s)."
      % (fcount(cfg.get("batch_per_rank", 0)), jsonnum(cfg.get("rep_mib")),
         g0.get("calls_per_rep", "?"), g0.get("width", 0),
         glast.get("calls_per_rep", "?"), glast.get("width", 0),
         "A repetition's time runs from the first rank's start to the last rank's "
         "end (the ranks share one node's clock), so a rank that leaves the barrier "
         "but waits for a core counts." if timing == "span" else
         "A repetition's time is the slowest rank's.",
         cfg.get("reps"), cfg.get("warmup")))
    w("- **Indices**: *uniform* over all rows, or *power-law*: the k-th most frequent "
      "row has weight k^-%s (Zipf), its id drawn from a random permutation of the "
      "rows that is the same on every rank, so the hot rows are spread over the "
      "partition. Each rank draws its own stream. Distinct rows per %s-row stream "
      "(1 rank, %d floats): %s uniform, %s power-law."
      % (jsonnum(cfg.get("zipf_exponent")), fcount((cfg.get("reps", 0) + cfg.get("warmup", 0))
                                                  * cfg.get("batch_per_rank", 0)
                                                  * g0.get("calls_per_rep", 1)),
         g0.get("width", 0),
         fpct((dist_gather(runs[0], "local", g0.get("width"), "uniform") or {}).get("distinct_fraction")),
         fpct((dist_gather(runs[0], "local", g0.get("width"), "powerlaw") or {}).get("distinct_fraction"))))
    w("- **Interleaved**: for each row width and index distribution, the local "
      "array and every memory type run in rounds, one repetition each per round in "
      "an order rotated from round to round; the cache configurations likewise.")
    w("- **Checked**: the first batch of every table is compared byte for byte with "
      "the local gather of the same indices, and the last cached embedding step with "
      "a gather from the table itself; a mismatch fails the run. Collectives run "
      "with gnnc_dist's argument check on (`GNNC_DIST_CHECK`), as users get them.")
    w("- **STREAM**: copy (`c[i] = a[i]`, 16 bytes per element) and triad (`a[i] = "
      "b[i] + s * c[i]`, 24 bytes) over three arrays of %s per rank, one thread per "
      "rank, all ranks at once, timed like the gathers (median of %s); the figure is "
      "the bytes of all ranks over that time. **vs copy** = 2 × the "
      "gather's GB/s / copy's GB/s: a gather reads every delivered byte once and "
      "writes it once, the traffic copy counts (the index reads, and the staging "
      "copies of the distributed type's all-to-all, are not credited)."
      % (fbytes(st0.get("array_bytes")), st0.get("reps")))
    w("")

    w("### STREAM, every rank at once\n")
    rows = []
    for r in runs:
        s = r.get("stream") or {}
        rows.append([r["world_size"], fgbs((s.get("copy") or {}).get("gbs")),
                     fgbs((s.get("copy") or {}).get("best_gbs")),
                     fgbs((s.get("triad") or {}).get("gbs")),
                     fgbs((s.get("triad") or {}).get("best_gbs"))])
    w(table(["ranks", "copy GB/s (median)", "copy (best)", "triad GB/s (median)",
             "triad (best)"], rows))
    w("")

    widths = dist_widths(d)
    types = [t for t in DIST_TYPES if any(dist_gather(r, t, wd, ds)
                                          for r in runs for wd in widths
                                          for ds in dist_dists(d))]
    for dist in dist_dists(d):
        if not any(dist_gather(r, "local", wd, dist) for r in runs for wd in widths):
            continue
        w("### Gather throughput, %s\n" % DIST_DISTS.get(dist, dist))
        w("Median GB/s of rows delivered (and rows/s), all ranks together.\n")
        rows = []
        for r in runs:
            for wd in widths:
                cells = [r["world_size"], wd]
                for t in types:
                    g = dist_gather(r, t, wd, dist)
                    cells.append("%s (%s/s)" % (fgbs(g["gbs"]), frows(g["rows_per_s"]))
                                 if g else "–")
                rows.append(cells)
        w(table(["ranks", "floats per row"] + ["%s GB/s" % DIST_TYPE_TITLES[t]
                                               for t in types], rows))
        w("")
        over_copy = any(dist_copy_gbs(r) and 2 * g["gbs"] > dist_copy_gbs(r)
                        for r in runs for g in r.get("gather", []) if g["dist"] == dist)
        solo = next((r for r in runs if r["world_size"] == 1), None)
        solo_ratio = geomean([(dist_gather(solo, "distributed", wd, dist) or {}).get("gbs", 0) /
                              (dist_gather(solo, "local", wd, dist) or {}).get("gbs", 1)
                              for wd in widths]) if solo else None
        w("Ratios of the medians: each memory type against the local array, and "
          "every gather against STREAM copy at the same number of ranks.%s%s\n"
          % ((" At 1 rank every row is local, so the distributed type's gap to the "
              "local array there (%s, geometric mean) is the cost of its all-to-all "
              "path alone (routing, staging copies, checked collectives), not of "
              "moving rows between ranks." % fratio(solo_ratio)) if solo_ratio else "",
             (" Above 100%% of copy, the gather beat the copy measured before it: "
              "rows that stay in the caches (the hot rows of a power-law stream; %s "
              "of last-level cache against a %s table) cost less than DRAM traffic, "
              "and the load changed between the two measurements."
              % (fbytes(m.get("llc_bytes")), fbytes((runs[0].get("gather") or [{}])[0]
                                                    .get("table_bytes"))))
             if over_copy else ""))
        rows = []
        for r in runs:
            copy = dist_copy_gbs(r)
            for wd in widths:
                loc = dist_gather(r, "local", wd, dist)
                cells = [r["world_size"], wd]
                for t in types[1:]:
                    g = dist_gather(r, t, wd, dist)
                    cells.append(fratio(g["gbs"] / loc["gbs"]) if g and loc else "–")
                for t in types:
                    g = dist_gather(r, t, wd, dist)
                    cells.append(fpct(2 * g["gbs"] / copy) if g and copy else "–")
                rows.append(cells)
        w(table(["ranks", "floats per row"] +
                ["%s / local" % DIST_TYPE_TITLES[t] for t in types[1:]] +
                ["%s vs copy" % DIST_TYPE_TITLES[t] for t in types], rows))
        w("")
    if "dist_gather.png" in made:
        w("![gather throughput](%s)\n" % made["dist_gather.png"])

    # The cache.
    cruns = [r for r in runs if r.get("cache")]
    if cruns:
        c0 = cruns[0]["cache"][0]
        w("### Embedding row cache\n")
        w("An `Embedding` of %s × %d floats in the distributed memory type (SGD, no "
          "training), read by `Embedding::gather` with %s rows per rank per step: "
          "%d warm-up steps fill the cache, then %d timed steps, each after a "
          "barrier and timed like the gathers. The cache holds the given fraction of the table's rows on each "
          "rank and only rows the rank does not own. **Hit rate** = hits / lookups "
          "of remote rows over the timed steps, all ranks together; **speed-up** = "
          "the median step without a cache / with it, on the same index stream. At "
          "1 rank every row is local: nothing is looked up.\n"
          % (fcount(c0["rows"]), c0["width"], fcount(c0["batch_per_rank"]),
             c0["warmup_steps"], c0["steps"]))
        rows = []
        for r in cruns:
            for dist in dist_dists(d):
                base = dist_cache(r, "none", 0, dist)
                if not base:
                    continue
                rows.append([r["world_size"], DIST_DISTS.get(dist, dist), "none", "–",
                             "–", ftime(base["median_s"]), fgbs(base["gbs"]), "1.0x"])
                for c in r["cache"]:
                    if c["dist"] != dist or c["policy"] == "none":
                        continue
                    sp = dist_cache_speedup(r, c["policy"], c["capacity_fraction"], dist)
                    rows.append([r["world_size"], DIST_DISTS.get(dist, dist),
                                 c["policy"].upper(),
                                 "%s (%g%%)" % (fcount(c["capacity_rows"]),
                                                100 * c["capacity_fraction"]),
                                 fpct(c.get("hit_rate")) if c.get("lookups") else
                                 "– (no remote rows)",
                                 ftime(c["median_s"]), fgbs(c["gbs"]), fratio(sp)])
        w(table(["ranks", "indices", "cache", "capacity per rank", "hit rate",
                 "median step", "GB/s", "speed-up"], rows,
                ["r", "l", "l", "r", "r", "r", "r", "r"]))
        w("")
        solo = [dist_cache_speedup(r, c["policy"], c["capacity_fraction"], c["dist"])
                for r in cruns if r["world_size"] == 1
                for c in r["cache"] if c["policy"] != "none"]
        solo = [x for x in solo if x]
        notes = []
        if solo:
            notes.append("At 1 rank the cache is never consulted (every row is local), "
                         "so the spread of its \"speed-ups\" there, %s to %s, is what "
                         "this measurement's noise alone produces on this machine."
                         % (fratio(min(solo)), fratio(max(solo))))
        slower = [c for r in cruns if r["world_size"] > 1 for c in r["cache"]
                  if c["policy"] != "none" and (dist_cache_speedup(
                      r, c["policy"], c["capacity_fraction"], c["dist"]) or 1) < 1]
        if slower:
            notes.append("Below 1, the cache's lookups and inserts cost more than the "
                         "remote rows it saves, which on one node arrive by a "
                         "shared-memory copy.")
        if notes:
            w(" ".join(notes) + "\n")
        if "dist_cache.png" in made:
            w("![cache speed-up](%s)\n" % made["dist_cache.png"])

    # CPU against wall time.
    w("### CPU time against wall time, per rank\n")
    w("Each rank's process CPU time (`CLOCK_PROCESS_CPUTIME_ID`) over the wall time "
      "of its timed calls, summed over every gather and cache measurement (STREAM "
      "excluded); and over the whole process (`getrusage`: user + system time / "
      "wall time from start to exit, including MPI's start-up, table set-up and "
      "the untimed warm-ups). Below 100%: the rank waited without the CPU "
      "(descheduled, or asleep between polls of a collective).\n")
    rows = []
    for r in runs:
        shares = dist_rank_shares(r)
        for rk in r.get("ranks", []):
            i = rk["rank"]
            cw, cc = shares[i] if i < len(shares) else (None, None)
            rows.append([r["world_size"], i, ftime(cw) if cw else "–",
                         ftime(cc) if cc is not None else "–",
                         fpct(cc / cw) if cw else "–",
                         "%.1f s" % rk["wall_s"],
                         "%.1f s" % (rk["user_s"] + rk["system_s"]),
                         fpct((rk["user_s"] + rk["system_s"]) / rk["wall_s"])
                         if rk["wall_s"] else "–",
                         fcount(int(rk["involuntary_switches"]))])
    w(table(["ranks", "rank", "timed wall", "timed CPU", "CPU / wall",
             "process wall", "process CPU", "CPU / wall", "involuntary switches"],
            rows))
    w("")
    return "\n".join(L).rstrip() + "\n"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def dist_summary(d):
    """Markdown lines: per world size, each memory type against the local
    array (geometric mean over widths, per index distribution), and the best
    cache speed-up with its hit rate."""
    out = []
    widths = dist_widths(d)
    for r in dist_runs(d):
        parts = []
        for t in DIST_TYPES[1:]:
            per = []
            for dist in dist_dists(d):
                g = geomean([(dist_gather(r, t, wd, dist) or {}).get("gbs", 0) /
                             (dist_gather(r, "local", wd, dist) or {}).get("gbs", 1)
                             for wd in widths if dist_gather(r, t, wd, dist) and
                             dist_gather(r, "local", wd, dist)])
                if g:
                    per.append("%s %s" % (fratio(g), dist.replace("powerlaw", "power-law")))
            if per:
                parts.append("%s %s" % (DIST_TYPE_TITLES[t], " / ".join(per)))
        if not parts:
            continue
        line = ("%d rank%s: against the local array, %s." % (
            r["world_size"], "" if r["world_size"] == 1 else "s", "; ".join(parts)))
        best = None
        for c in r.get("cache", []):
            if c["policy"] == "none" or not c.get("lookups"):
                continue
            sp = dist_cache_speedup(r, c["policy"], c["capacity_fraction"], c["dist"])
            if sp and (best is None or sp > best[0]):
                best = (sp, c)
        if best:
            sp, c = best
            line += (" Best cache: %s with %g%% of the rows, %s indices, hit rate %s, "
                     "%s the speed of no cache." % (
                         c["policy"].upper(), 100 * c["capacity_fraction"],
                         c["dist"].replace("powerlaw", "power-law"),
                         fpct(c.get("hit_rate")), fratio(sp)))
        out.append(line)
    return out


def jsonnum(x):
    if x is None:
        return "?"
    return ("%g" % x) if isinstance(x, float) else str(x)


def dist_rank_shares(run):
    """Per rank: (wall, CPU) seconds summed over the timed calls of every
    gather and cache measurement."""
    recs = run.get("gather", []) + run.get("cache", [])
    n = run.get("world_size", 0)
    out = []
    for i in range(n):
        wall = sum(g["rank_wall_s"][i] for g in recs if i < len(g.get("rank_wall_s", [])))
        cpu = sum(g["rank_cpu_s"][i] for g in recs if i < len(g.get("rank_cpu_s", [])))
        out.append((wall, cpu))
    return out


def dist_cpu_share(run):
    """CPU time / wall time of the timed calls, all ranks together."""
    shares = dist_rank_shares(run)
    wall = sum(s[0] for s in shares)
    return sum(s[1] for s in shares) / wall if wall else None


def splice_dist(text, section):
    """`text` (a whole benchmarks.md) with its distributed-memory section
    replaced by `section`, or `section` inserted where write() puts it
    (before "## GPU", else at the end)."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l == DIST_HEADING), None)
    sec = section.rstrip("\n").split("\n") + [""]
    if start is not None:
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i].startswith("## ")), len(lines))
        body = lines[:start] + sec + lines[end:]
    else:
        at = next((i for i, l in enumerate(lines) if l == "## GPU"), None)
        if at is None:
            body = [l for l in lines] + ([""] if lines and lines[-1] else []) + sec
        else:
            body = lines[:at] + sec + lines[at:]
    return "\n".join(body).rstrip("\n") + "\n"


def update_dist(d, doc, assets):
    """Writes the plots of `d` (the JSON of tools/bench --dist) and puts its
    section into `doc`, leaving every other section as it is."""
    doc = pathlib.Path(doc)
    assets = pathlib.Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    section = dist_section(d, dist_plots(d, assets))
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(splice_dist(text, section))


# --------------------------------------------------------------------------
# Fixed-size batches (tools/bench --fixed-size: tools/benchmarks/fixedsize/run.py)
# --------------------------------------------------------------------------

FIXEDSIZE_JSON = "fixedsize-results.json"


def load_fixedsize(assets):
    """The JSON of the last `tools/bench --fixed-size` beside the assets, or None."""
    return load_assets_json(assets, FIXEDSIZE_JSON)


def fixedsize_section(d, assets):
    """The section and plot of tools/benchmarks/fixedsize/run.py, which owns them."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "gnnc_fixedsize_run",
        pathlib.Path(__file__).resolve().parent / "fixedsize" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.section(d, module.plot(d, assets))


# --------------------------------------------------------------------------
# Mini-batch sampling (tools/bench --sampling: tools/benchmarks/sampling/run.py)
# --------------------------------------------------------------------------

SAMPLING_HEADING = "## Mini-batch sampling throughput"
SAMPLING_JSON = "sampling-results.json"
SAMPLING_IMPLS = ["gnnc", "graphbolt", "pyg"]
SAMPLING_TITLES = {"gnnc": "gnnc", "graphbolt": "GraphBolt", "pyg": "PyG"}
SAMPLING_COLORS = {"gnnc": "#1f77b4", "graphbolt": "#2ca02c", "pyg": "#d62728"}
# gnnc's sampled edges per second against GraphBolt's (sampling only).
SAMPLING_TARGET = 3.0


def load_sampling(assets):
    """The JSON of the last `tools/bench --sampling` beside the assets, or None."""
    return load_assets_json(assets, SAMPLING_JSON)


def sampling_run(graph_result, impl, fanouts, threads, fetch):
    """One configuration's record (None when it did not run)."""
    r = graph_result.get("impls", {}).get(impl) or {}
    if not r.get("ok"):
        return None
    for run in r.get("runs", []):
        if (run["fanouts"] == list(fanouts) and bool(run["fetch"]) == bool(fetch)
                and run.get("workers", run.get("threads")) == threads):
            return run
    return None


def fmeps(x):
    """Edges (or rows) per second in millions."""
    if x is None:
        return "–"
    return "%.3g M" % (x / 1e6)


def fbps(x):
    if x is None:
        return "–"
    return "%.3g" % x if x < 1000 else "{:,.0f}".format(x)


def sampling_ratio(a, b, key):
    if not a or not b or not b.get(key):
        return None
    return a[key] / b[key]


def sampling_configs(d):
    """(graph result, fanouts, threads) in the order of the tables."""
    out = []
    for g in d.get("results", []):
        for f in d.get("fanouts", []):
            fl = [int(x) for x in f.split(",")]
            for t in d.get("threads", []):
                out.append((g, fl, t))
    return out


def sampling_versions(d):
    p = d.get("probe", {})
    parts = []
    if p.get("dgl"):
        parts.append("DGL %s (GraphBolt; torchdata %s)" % (p["dgl"], p.get("torchdata", "?")))
    if p.get("pyg"):
        parts.append("PyG %s with %s" % (p["pyg"], p.get("pyg_backend") or "no sampler"))
    if p.get("torch"):
        parts.append("PyTorch %s" % p["torch"])
    if p.get("numpy"):
        parts.append("NumPy %s" % p["numpy"])
    if p.get("python"):
        parts.append("Python %s" % p["python"])
    return parts


def sampling_max_load(d):
    """The highest 1-minute load average seen at the start or end of any
    benchmark process of the run."""
    loads = []
    for g in d.get("results", []) + d.get("check_runs", []):
        for r in g.get("impls", {}).values():
            la = r.get("launch") or {}
            for key in ("loadavg_start", "loadavg_end"):
                if la.get(key):
                    loads.append(float(la[key][0]))
    m = d.get("machine", {})
    for key in ("loadavg_start", "loadavg_end"):
        if m.get(key):
            loads.append(float(m[key][0]))
    return max(loads) if loads else None


# Below this share of its threads' cores (process CPU time / (wall time x
# threads)), a multi-threaded gnnc or GraphBolt run lacked a core: both keep
# their threads busy while there is work (GraphBolt's OpenMP threads spin), so
# the figure measures the machine's other load. PyG's sampler is sequential:
# its share says nothing of the kind.
SAMPLING_MIN_SHARE = 0.75


def sampling_load_bound(run, impl, threads):
    if not run or threads <= 1 or impl == "pyg":
        return False
    if not run.get("median_s") or run.get("median_cpu_s") is None:
        return False
    return run["median_cpu_s"] / run["median_s"] / threads < SAMPLING_MIN_SHARE


def sampling_pairs(d, impl, fetch=False, key="median_edges_per_s"):
    """[(ratio, graph, fanouts, threads, load-bound)] of gnnc against `impl`."""
    out = []
    for g, fl, t in sampling_configs(d):
        a = sampling_run(g, "gnnc", fl, t, fetch)
        b = sampling_run(g, impl, fl, t, fetch)
        r = sampling_ratio(a, b, key)
        if r:
            out.append((r, g["graph"], fl, t, sampling_load_bound(a, "gnnc", t) or
                        sampling_load_bound(b, impl, t)))
    return out


def sampling_summary(d):
    """Lines: gnnc against each anchor (sampled edges/s, sampling only), over
    the configurations where no multi-threaded run lacked its cores, and
    the target."""
    out = []
    for impl in SAMPLING_IMPLS[1:]:
        pairs = sampling_pairs(d, impl)
        rs = [p for p in pairs if not p[4]]
        dropped = len(pairs) - len(rs)
        if not rs:
            out.append("gnnc / %s: no pair measured%s" % (
                SAMPLING_TITLES[impl], " without a load-bound run" if pairs else ""))
            continue
        lo, hi = min(rs), max(rs)
        line = ("gnnc / %s, sampled edges/s (sampling only): geometric mean %s over %d "
                "configurations, from %s (%s %s, %d thread%s) to %s (%s %s, %d thread%s)"
                % (SAMPLING_TITLES[impl], fratio(geomean([r[0] for r in rs])), len(rs),
                   fratio(lo[0]), lo[1], ",".join(map(str, lo[2])), lo[3],
                   "" if lo[3] == 1 else "s",
                   fratio(hi[0]), hi[1], ",".join(map(str, hi[2])), hi[3],
                   "" if hi[3] == 1 else "s"))
        if impl == "graphbolt":
            met = sum(1 for r in rs if r[0] >= SAMPLING_TARGET)
            line += "; >= %gx in %d of %d" % (SAMPLING_TARGET, met, len(rs))
        if dropped:
            line += ("; %d more configuration%s left out, where a 2-thread run had less "
                     "than %d%% of its cores (marked † below)"
                     % (dropped, "" if dropped == 1 else "s", 100 * SAMPLING_MIN_SHARE))
        out.append(line)
    return out


def sampling_plots(d, assets):
    """The PNG of the section; {name: path relative to the doc}."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    assets = pathlib.Path(assets)
    configs = [(g, fl) for g in d.get("results", []) for fl in
               [[int(x) for x in f.split(",")] for f in d.get("fanouts", [])]]
    threads = d.get("threads", [])
    if not configs or not threads:
        return {}
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6), squeeze=False)
    series = [(impl, t) for impl in SAMPLING_IMPLS for t in threads]
    bw = 0.8 / len(series)
    for k, (fetch, title) in enumerate(((False, "sampling only"),
                                        (True, "sampling + feature fetch (%d floats)"
                                         % d.get("dim", 0)))):
        ax = axes[0][k]
        any_bar = False
        for j, (impl, t) in enumerate(series):
            xs, ys = [], []
            for i, (g, fl) in enumerate(configs):
                r = sampling_run(g, impl, fl, t, fetch)
                if r and r.get("median_edges_per_s"):
                    xs.append(i + (j - (len(series) - 1) / 2) * bw)
                    ys.append(r["median_edges_per_s"] / 1e6)
            if xs:
                any_bar = True
                ax.bar(xs, ys, bw, color=SAMPLING_COLORS[impl],
                       alpha=1.0 if t == threads[0] else 0.55,
                       hatch=None if t == threads[0] else "//",
                       label="%s, %d thread%s" % (SAMPLING_TITLES[impl], t,
                                                  "" if t == 1 else "s"))
        ax.set_xticks(range(len(configs)))
        ax.set_xticklabels(["%s\n%s" % (g["graph"], ",".join(map(str, fl)))
                            for g, fl in configs], fontsize=8)
        ax.set_ylabel("sampled edges/s (millions, median)")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3, which="both")
        if any_bar:
            ax.legend(fontsize=7, ncol=2)
    fig.suptitle("Neighbour sampling, batch %d, uniform without replacement"
                 % d.get("batch_size", 0), fontsize=11)
    fig.tight_layout()
    assets.mkdir(parents=True, exist_ok=True)
    fig.savefig(assets / "sampling.png", dpi=110)
    plt.close(fig)
    return {"sampling.png": "%s/sampling.png" % assets.name}


def sampling_table(d, fetch, key, fmt):
    rows = []
    for g, fl, t in sampling_configs(d):
        runs = {i: sampling_run(g, i, fl, t, fetch) for i in SAMPLING_IMPLS}
        if not any(runs.values()):
            continue
        bound = {i: sampling_load_bound(runs[i], i, t) for i in SAMPLING_IMPLS}
        row = [g["graph"], ",".join(map(str, fl)), t]
        for i in SAMPLING_IMPLS:
            row.append((fmt(runs[i][key]) + (" †" if bound[i] else ""))
                       if runs[i] else sampling_missing(g, i))
        for i in SAMPLING_IMPLS[1:]:
            r = sampling_ratio(runs["gnnc"], runs[i], key)
            row.append(fratio(r) + (" †" if r and (bound["gnnc"] or bound[i]) else ""))
        rows.append(row)
    return table(["graph", "fanouts", "threads"] +
                 [SAMPLING_TITLES[i] for i in SAMPLING_IMPLS] +
                 ["gnnc / %s" % SAMPLING_TITLES[i] for i in SAMPLING_IMPLS[1:]],
                 rows, ["l", "l", "r"] + ["r"] * (2 * len(SAMPLING_IMPLS) - 1))


def sampling_missing(g, impl):
    r = g.get("impls", {}).get(impl) or {}
    if r.get("unavailable"):
        return "not run"
    if not r.get("ok"):
        return "failed"
    return "–"


def sampling_section(d, made):
    """The section "Mini-batch sampling throughput" (markdown, ending with one
    newline) from the JSON of tools/bench --sampling."""
    L = []
    w = L.append
    m = d.get("machine", {})
    cores = m.get("cores") or 0
    w(SAMPLING_HEADING + "\n")
    w("<!-- Written by tools/bench --sampling (tools/benchmarks/sampling/run.py, "
      "tools/benchmarks/report.py) from benchmarks/%s; rerun `tools/bench --sampling`. -->\n"
      % SAMPLING_JSON)
    if d.get("kind") != "full":
        w("> **This is a %s run** (`%s`): it checks that the harness works; its "
          "figures are not the doc's.\n" % (d.get("kind"), d.get("command")))
    w("gnnc_sample's mini-batch pipeline (`ItemSampler` → `NeighborSampler` → "
      "optional feature fetch, `gnnc/sample/Pipeline.h`) against DGL GraphBolt's "
      "and PyG's CPU neighbour samplers on this machine (%s, %d cores, %s): "
      "`tools/benchmarks/sampling/gnnc_sample_bench.cpp`, built against the %s%s, and "
      "`tools/benchmarks/sampling/anchors.py` in a virtual environment of PyPI "
      "packages (%s). One command regenerates this section, its plot and the raw "
      "results (`benchmarks/%s`): `tools/bench --sampling` (run %s, %.1f minutes "
      "with the build; load average %s at the start and %s at the end)."
      % (m.get("cpu", "?"), cores, fbytes(m.get("mem_total_bytes")),
         d.get("linked_against", "?"),
         (" at commit %s%s" % (m["git_commit"][:12],
                               " + %d changed files" % m["git_dirty_files"]
                               if m.get("git_dirty_files") else ""))
         if m.get("git_commit") else "",
         "; ".join(sampling_versions(d)) or "none",
         SAMPLING_JSON, d.get("date_utc", "?"), (d.get("wall_s") or 0) / 60,
         " ".join(m.get("loadavg_start", [])), " ".join(m.get("loadavg_end", []))))
    w("")
    for impl, a in d.get("availability", {}).items():
        if not a.get("ok"):
            w("> **%s did not run**: %s\n" % (SAMPLING_TITLES.get(impl, impl),
                                             a.get("reason", "?").replace("\n", " ")[:400]))
    for g in d.get("results", []):
        for impl, r in g.get("impls", {}).items():
            if not r.get("ok") and not r.get("unavailable"):
                w("> **%s failed on %s**: %s\n" % (
                    SAMPLING_TITLES.get(impl, impl), g["graph"],
                    str(r.get("error", "?")).replace("\n", " ")[:400]))
    load = sampling_max_load(d)
    if load is not None and cores and load > 0.5 * cores:
        w("> **A shared machine.** The 1-minute load average reached %.2f on %d cores "
          "during the run (read at the start and end of every benchmark process): "
          "every figure includes that interference, and a second thread that waits "
          "for a busy core gains little. The implementations run one after the "
          "other on each graph, so their ratios are more robust than the absolute "
          "rates.\n" % (load, cores))

    # The target and the summary.
    w("**In short** (sampled edges per second, medians; ratios measured in the "
      "same run):\n")
    for line in sampling_summary(d):
        w("- " + line + ".")
    w("")
    pairs = sampling_pairs(d, "graphbolt")
    clean = [p for p in pairs if not p[4]]
    if clean:
        met = all(p[0] >= SAMPLING_TARGET for p in clean)
        one = [p for p in clean if p[3] == 1]
        w("Target: at least %gx GraphBolt's sampled edges per second. **%s** in this "
          "run: the ratio is %s to %s over the %d graph × fanout × thread "
          "configurations (sampling only) where no 2-thread run lacked its cores%s%s.\n"
          % (SAMPLING_TARGET, "Met" if met else "Not met", fratio(min(clean)[0]),
             fratio(max(clean)[0]), len(clean),
             ("; at 1 thread, %s to %s" % (fratio(min(one)[0]), fratio(max(one)[0])))
             if one else "",
             ("; below %gx: %s" % (SAMPLING_TARGET, ", ".join(
                 "%s %s at %d thread%s (%s)" % (p[1], ",".join(map(str, p[2])), p[3],
                                                "" if p[3] == 1 else "s", fratio(p[0]))
                 for p in clean if p[0] < SAMPLING_TARGET))) if not met else ""))
    if clean:
        # The spread of the lowest ratio over the repetitions of its two runs.
        lo = min(clean)
        g = next(x for x in d.get("results", []) if x["graph"] == lo[1])
        a = sampling_run(g, "gnnc", lo[2], lo[3], False)
        b = sampling_run(g, "graphbolt", lo[2], lo[3], False)
        ra = [e / t for e, t in zip(a.get("rep_edges", []), a.get("rep_s", [])) if t]
        rb = [e / t for e, t in zip(b.get("rep_edges", []), b.get("rep_s", [])) if t]
        if ra and rb:
            w("The lowest ratio's own spread: gnnc's repetitions ran at %s to %s "
              "sampled edges/s and GraphBolt's at %s to %s, so the ratio of single "
              "repetitions lies between %s and %s (%s %s, %d thread%s): %s.\n" % (
                  fmeps(min(ra)), fmeps(max(ra)), fmeps(min(rb)), fmeps(max(rb)),
                  fratio(min(ra) / max(rb)), fratio(max(ra) / min(rb)), lo[1],
                  ",".join(map(str, lo[2])), lo[3], "" if lo[3] == 1 else "s",
                  "the target is within that noise there, so another run may miss it"
                  if min(ra) / max(rb) < SAMPLING_TARGET <= max(ra) / min(rb) else
                  "the target lies outside that range"))
    bound = [p for p in pairs if p[4]]
    if bound:
        w("> **† Load-bound rows.** %d 2-thread configuration%s ran while other work "
          "held a core: the gnnc or GraphBolt process had less than %d%% of its "
          "2 cores (process CPU time / (wall time × 2); see [CPU time against wall "
          "time](#cpu-time-against-wall-time)). Both keep their threads busy while "
          "there is work (GraphBolt's OpenMP threads spin while they wait), so those "
          "rows measure the machine's other load, not 2-thread scaling: GraphBolt "
          "in particular slows down far more than its work when one of its two "
          "OpenMP threads waits for a core. Their ratios are shown, marked †, and "
          "left out of the summary and the target.\n"
          % (len(bound), "" if len(bound) == 1 else "s", 100 * SAMPLING_MIN_SHARE))

    # Method.
    w("### Method\n")
    gm = d.get("graphs", {})
    gdesc = []
    for g in d.get("results", []):
        meta = gm.get(g["graph"], {})
        if meta.get("kind") == "rmat":
            gdesc.append("%s (R-MAT, 2^%d = %s vertices, %s edges, edge factor %d, "
                         "Graph500 parameters, the main harness' generator; %s vertices "
                         "without in-edges)" % (g["graph"], meta["scale"], fcount(meta["N"]),
                                                fcount(meta["E"]), meta["edge_factor"],
                                                fcount(meta.get("zero_in_degree", 0))))
        else:
            gdesc.append("%s (%s vertices, %s edges, from `%s`)" % (
                g["graph"], fcount(meta.get("N", 0)), fcount(meta.get("E", 0)),
                meta.get("source", "?")))
    w("- **Graphs**: %s; each stored once as a CSC by destination (int64 offsets "
      "and sources, `build/bench-sampling-data/`), which every implementation "
      "loads: gnnc as a `GraphView`, GraphBolt as `fused_csc_sampling_graph`, PyG "
      "as `Data(edge_index)` sorted by destination. Self-loops and repeated edges "
      "of R-MAT are kept: each is an edge to draw." % "; ".join(gdesc))
    w("- **Seeds**: a fixed random permutation of the vertices; a run takes its "
      "first P vertices (P the largest multiple of the batch size not above N) and "
      "repeats them up to the run's length (%s; batches of %d seeds), the same file "
      "for every implementation, batches taken in order." % (
          ", ".join("%s %d batches" % (g["graph"], g["batches_per_rep"])
                    for g in d.get("results", [])),
          d.get("batch_size", 0)))
    w("- **Sampling**: fanouts %s in DGL's order (outermost hop first: the seeds "
      "get the last entry; PyG's `num_neighbors` starts at the seeds, so it gets "
      "the list reversed), uniform, without replacement, batch size %d. gnnc: "
      "`NeighborSampler` (`SamplerKind::Neighbor`) in a `Pipeline` with "
      "`Workers` = the thread count, `Prefetch` 4, `Fetch` off for sampling only, "
      "`KeepEdgeIds` %s. "
      "GraphBolt: `ItemSampler(shuffle=False)` → `sample_neighbor` (→ "
      "`fetch_feature`) through `gb.DataLoader(num_workers=0)`, "
      "`torch.set_num_threads(threads)`. PyG: `NeighborLoader(shuffle=False, "
      "num_workers=0)`, `torch.set_num_threads(threads)`."
      % (" and ".join(d.get("fanouts", [])), d.get("batch_size", 0),
         "on (blocks carry edge ids; GraphBolt's sampled subgraphs do not)"
         if any((g["impls"].get("gnnc") or {}).get("keep_edge_ids")
                for g in d.get("results", []))
         else "off (GraphBolt's sampled subgraphs carry no edge ids either)"))
    w("- **End to end**: the same, plus each batch's input vertices' rows of an "
      "N × %d float32 feature matrix (uniform random, made before timing; %s for "
      "the largest graph): gnnc through `localFeatures`, GraphBolt through "
      "`TorchBasedFeature` in a `BasicFeatureStore`, PyG through `Data.x` "
      "(NeighborLoader indexes it)." % (
          d.get("dim", 0),
          fbytes(max([gm.get(g["graph"], {}).get("N", 0) for g in d.get("results", [])]
                     or [0]) * 4 * d.get("dim", 0))))
    w("- **Timing**: one repetition is one pass over the run's seeds, from "
      "creating the iterator (gnnc: `startEpoch`) to its end; the consumer only "
      "counts the edges. Each implementation runs in its own process, one after "
      "the other on each graph, with %d untimed warm-up pass(es) and %d timed ones "
      "per configuration; the tables give the median. **Sampled edges** = the "
      "edges of all blocks (subgraphs) of a batch, summed over the batches: gnnc "
      "`MiniBatch::numSampledEdges`, GraphBolt the indices of every "
      "`sampled_subgraphs[i].sampled_csc`, PyG the columns of the batch's "
      "`edge_index`. edges/s and batches/s = those counts over the median "
      "repetition's time." % (d.get("warmup", 0), d.get("reps", 0)))
    loads = []
    for g in d.get("results", []):
        parts = []
        for impl in SAMPLING_IMPLS:
            la = ((g.get("impls", {}).get(impl) or {}).get("launch") or {})
            if la.get("loadavg_start"):
                parts.append("%s %s → %s" % (SAMPLING_TITLES[impl], la["loadavg_start"][0],
                                             (la.get("loadavg_end") or ["?"])[0]))
        if parts:
            loads.append("%s: %s" % (g["graph"], ", ".join(parts)))
    if loads:
        w("- **Load**: the 1-minute load average at the start and end of each "
          "process (%s cores): %s." % (cores, "; ".join(loads)))
    w("- **Threads**: the machine has %d cores; gnnc's pipeline also has the "
      "consumer's thread, which only waits. PyG's torch-sparse sampler is "
      "sequential, so its 2-thread rows differ from its 1-thread rows only by "
      "noise and PyTorch's own parallel ops." % cores)
    w("")

    # The equal-work check.
    check = d.get("check", [])
    if check:
        w("### Equal work: sampled edges per batch\n")
        w("Mean sampled edges per batch in the first pass over each graph's seeds "
          "(1 thread, sampling only; %s run for this check alone), against gnnc's. "
          "gnnc and GraphBolt "
          "build the same blocks: each hop samples the in-edges of *every* "
          "destination of the hop, the previous hop's sources included. PyG's "
          "sampler expands each vertex only once, at the first hop that reaches it, "
          "so its batches hold fewer edges for the same seeds and fanouts; its "
          "edges/s counts the edges it does sample, and its batches/s is for "
          "smaller batches.\n" % (" and ".join(
              "%s (%d batches)" % (g["graph"], g["batches_per_rep"])
              for g in d.get("check_runs", [])) or "no graph"))
        rows = []
        for r in check:
            row = [r["graph"], ",".join(map(str, r["fanouts"])),
                   "%.0f" % r["gnnc"] if r.get("gnnc") is not None else "–"]
            for impl in SAMPLING_IMPLS[1:]:
                if r.get(impl) is None:
                    row.append("–")
                else:
                    ratio = r[impl + "_ratio"]
                    row.append("%.0f (%+.1f%%%s)" % (
                        r[impl], 100 * (ratio - 1),
                        "" if abs(ratio - 1) <= 0.05 else ", beyond 5%"))
            rows.append(row)
        w(table(["graph", "fanouts", "gnnc"] +
                [SAMPLING_TITLES[i] for i in SAMPLING_IMPLS[1:]], rows,
                ["l", "l", "r", "r", "r"]))
        w("")

    # The tables.
    w("### Sampling only: sampled edges per second\n")
    w(sampling_table(d, False, "median_edges_per_s", fmeps))
    w("")
    w("### Sampling only: batches per second\n")
    w(sampling_table(d, False, "median_batches_per_s", fbps))
    w("")
    if any(sampling_run(g, "gnnc", fl, t, True) or sampling_run(g, "graphbolt", fl, t, True)
           for g, fl, t in sampling_configs(d)):
        w("### End to end (sampling + %d-float feature fetch): sampled edges per "
          "second\n" % d.get("dim", 0))
        w(sampling_table(d, True, "median_edges_per_s", fmeps))
        w("")
        w("### End to end: batches per second\n")
        w(sampling_table(d, True, "median_batches_per_s", fbps))
        w("")
    if "sampling.png" in made:
        w("![sampling throughput](%s)\n" % made["sampling.png"])
        if any(p[4] for p in sampling_pairs(d, "graphbolt") + sampling_pairs(d, "pyg")):
            w("The plot shows every median, the load-bound (†) 2-thread rows "
              "included.\n")

    # Whether each process had the cores it asked for.
    rows = []
    for g, fl, t in sampling_configs(d):
        cells = [g["graph"], ",".join(map(str, fl)), t]
        seen = False
        for fetch in (False, True):
            for impl in SAMPLING_IMPLS:
                r = sampling_run(g, impl, fl, t, fetch)
                if r and r.get("median_s") and r.get("median_cpu_s") is not None:
                    cells.append(fpct(r["median_cpu_s"] / r["median_s"] / t))
                    seen = True
                else:
                    cells.append("–")
        if seen:
            rows.append(cells)
    if rows:
        w("### CPU time against wall time\n")
        w("Process CPU time over wall time of the median repetition, divided by the "
          "thread count: 100% means every thread had a core all the time. Below "
          "it, threads waited: for a core taken by other work on the machine (see "
          "the load above), for each other, or (PyG's sequential sampler at 2 "
          "threads: at most about 50%) for nothing to do. A 2-thread figure well "
          "below 100% where 1 thread reached 100% measures the machine's other "
          "load more than the implementation.\n")
        w(table(["graph", "fanouts", "threads"] +
                ["%s" % SAMPLING_TITLES[i] for i in SAMPLING_IMPLS] +
                ["%s, fetch" % SAMPLING_TITLES[i] for i in SAMPLING_IMPLS], rows,
                ["l", "l", "r"] + ["r"] * (2 * len(SAMPLING_IMPLS))))
        w("")

    # Mean edges per batch in the runs themselves, and gnnc's stage split.
    w("### Per batch, and where gnnc's time goes\n")
    w("Mean sampled edges and input vertices per batch in the timed runs "
      "(sampling only, 1 thread), and gnnc's `PipelineReport` for its median "
      "repetition: seconds summed over the threads that ran each stage, and the "
      "consumer's wait inside `next()`.\n")
    rows = []
    t0 = (d.get("threads") or [1])[0]
    for g in d.get("results", []):
        for f in d.get("fanouts", []):
            fl = [int(x) for x in f.split(",")]
            cells = [g["graph"], f]
            for impl in SAMPLING_IMPLS:
                r = sampling_run(g, impl, fl, t0, False)
                cells.append("%s / %s" % (fcount(round(r["sampled_edges"] / r["batches"])),
                                          fcount(round(r["input_vertices"] / r["batches"])))
                             if r and r.get("batches") else "–")
            rows.append(cells)
    w(table(["graph", "fanouts"] + ["%s edges / inputs" % SAMPLING_TITLES[i]
                                    for i in SAMPLING_IMPLS], rows,
            ["l", "l", "r", "r", "r"]))
    w("")
    rows = []
    for g, fl, t in sampling_configs(d):
        for fetch in (False, True):
            r = sampling_run(g, "gnnc", fl, t, fetch)
            if not r or not r.get("report"):
                continue
            p = r["report"]
            rows.append([g["graph"], ",".join(map(str, fl)), t,
                         "yes" if fetch else "no", ftime(r["median_s"]),
                         ftime(p.get("sample_s")), ftime(p.get("fetch_s")),
                         ftime(p.get("item_s")), ftime(p.get("wait_s")),
                         fpct(r["median_cpu_s"] / r["median_s"] / max(1, t))
                         if r.get("median_s") else "–"])
    if rows:
        w(table(["graph", "fanouts", "workers", "fetch", "epoch (median)", "sample",
                 "fetch", "item", "consumer wait", "CPU / (wall × workers)"], rows,
                ["l", "l", "r", "l", "r", "r", "r", "r", "r", "r"]))
        w("")
    return "\n".join(L).rstrip() + "\n"


def splice_section(text, heading, section):
    """`text` (a whole benchmarks.md) with the section under `heading`
    replaced by `section`, or `section` inserted before "## GPU" (else at the
    end)."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l == heading), None)
    sec = section.rstrip("\n").split("\n") + [""]
    if start is not None:
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i].startswith("## ")), len(lines))
        body = lines[:start] + sec + lines[end:]
    else:
        at = next((i for i, l in enumerate(lines) if l == "## GPU"), None)
        if at is None:
            body = [l for l in lines] + ([""] if lines and lines[-1] else []) + sec
        else:
            body = lines[:at] + sec + lines[at:]
    return "\n".join(body).rstrip("\n") + "\n"


TORCH_HEADING = "## From PyTorch"
TORCH_JSON = "torch-results.json"
TORCH_TITLES = {"gnnc": "gnnc native", "gnnc-torch": "gnnc from PyTorch",
                "pyg": "PyG (PyTorch 1.13)", "pyg2": "PyG (current)",
                "pyg2-compile": "PyG (current, torch.compile)"}
TORCH_COLUMNS = ["gnnc", "gnnc-torch", "pyg", "pyg2", "pyg2-compile"]
# The most that calling gnnc from PyTorch may add to gnnc native's time.
TORCH_OVERHEAD_TARGET = 1.10


def load_torch(assets):
    """The JSON of the last `tools/bench --torch` beside the assets, or None."""
    return load_assets_json(assets, TORCH_JSON)


def torch_versions(d):
    """A line per anchor's software, from the probes and the results."""
    probe = d.get("probe", {})
    cur = probe.get("torch_current", {})
    out = []
    if probe.get("torch"):
        out.append("PyG (PyTorch 1.13): PyG %s on Debian's PyTorch %s (`/usr/bin/python3`, "
                   "PyG from `build/bench-pydeps`)" % (probe.get("torch_geometric", "?"),
                                                      probe.get("torch_debian") or probe["torch"]))
    if cur.get("torch"):
        out.append("PyG (current): PyG %s on PyTorch %s from PyPI (`build/bench-torch-venv`, "
                   "`tools/benchmarks/requirements-torch.txt`), eager: `conv(x, edge_index)` "
                   "with an int64 edge_index, PyG's MessagePassing without torch_scatter"
                   % (cur.get("torch_geometric", "?"), cur["torch"]))
        out.append("PyG (current, torch.compile): the same layer under "
                   "`torch.compile(conv, dynamic=False)` (Inductor's C++ backend on the "
                   "CPU); the warm-up call compiles, the timed calls do not")
    for c in d["cases"]:
        if c["impl"] == "gnnc-torch" and c["status"] == "ok":
            v = c["result"].get("versions", {})
            out.append("gnnc from PyTorch: `gnnc.torch.load(...)` (python/, "
                       "docs/python.md) on Debian's PyTorch %s, the module built with "
                       "`GNNC_TORCH_CXXFLAGS=%s` as native is with `--arch-flags`; "
                       "`conv(x, edge_index)` as PyG's" % (v.get("torch_debian") or
                                                           v.get("torch", "?"),
                                                           d.get("arch_flags", "")))
            break
    return out


def torch_section(d):
    """The section of tools/bench --torch: one row per layer and mode."""
    R = Results(d)
    L = [TORCH_HEADING + "\n"]
    w = L.append
    m = d.get("machine", {})
    w("gnnc's layers called from a PyTorch script through `gnnc.torch` "
      "(docs/python.md), beside the same layers in gnnc's own benchmark program "
      "(gnnc native: the kernels linked into C++, `gnnc_add_model`), PyG on "
      "Debian's PyTorch 1.13 (the other tables' anchor) and PyG on the current "
      "PyTorch from PyPI, eager and under `torch.compile`. rmat-17 (%s vertices, "
      "%s edges), F = 64, %d threads; train is one forward and backward "
      "(`out.backward(cotangent)`, the gradients of x and of every parameter). "
      "Medians of every implementation in the same run (`%s`, %s, load average %s "
      "at the start and %s at the end); gnnc native and gnnc from PyTorch ran in "
      "three rounds, the two of a row one after the other, and each shows the "
      "round of its middle median (all three are in the JSON, "
      "`round_medians_s`), so that a busy moment of the machine does not decide "
      "their ratio." % (
          fcount(d["graphs"]["rmat-17"]["N"]) if "rmat-17" in d.get("graphs", {}) else "?",
          fcount(d["graphs"]["rmat-17"]["E"]) if "rmat-17" in d.get("graphs", {}) else "?",
          d.get("threads", 0), d.get("command", "tools/bench --torch"),
          d.get("date_utc", "?"), " ".join(m.get("loadavg_start", [])),
          " ".join(m.get("loadavg_end", []))))
    w("")
    rows = []
    overheads = []
    for base in R.bases("torch"):
        g, layer, F, mode = parse_base(base)
        title = d["layers"].get(layer, {}).get("title", layer)
        native, mine = R.median(base, "gnnc"), R.median(base, "gnnc-torch")
        anchors = [(i, R.median(base, i)) for i in ("pyg", "pyg2", "pyg2-compile")
                   if R.median(base, i) is not None]
        best = min(anchors, key=lambda a: a[1]) if anchors else None
        over = mine / native if mine and native else None
        if over:
            overheads.append(over)
        rows.append([title, "inference" if mode == "infer" else "train"] +
                    [R.cell(base, i) for i in TORCH_COLUMNS] +
                    ["%.2f" % over if over else "–",
                     ("%s (%s)" % (fratio(best[1] / mine), TORCH_TITLES[best[0]]))
                     if best and mine else "–"])
    w(table(["layer", "mode"] + [TORCH_TITLES[i] for i in TORCH_COLUMNS] +
            ["from PyTorch / native", "fastest PyG / gnnc from PyTorch"], rows,
            ["l", "l"] + ["r"] * (len(TORCH_COLUMNS) + 1) + ["l"]))
    w("")
    if overheads:
        worst = max(overheads)
        w("Called from PyTorch, a layer takes %.2f to %.2f times its native time "
          "here (the target is at most %.2f: %s). What the PyTorch path adds: the checks of "
          "shapes, dtypes and devices, the autograd function, and new result "
          "tensors each call; results of 1 MiB and more come from gnnc.torch's "
          "buffer cache, so a step reuses the memory of the last step's dead "
          "results instead of faulting in fresh pages.\n" % (
              min(overheads), worst, TORCH_OVERHEAD_TARGET,
              "met" if worst <= TORCH_OVERHEAD_TARGET else "**not met**"))
    vers = torch_versions(d)
    if vers:
        w("Versions and configuration:\n")
        for v in vers:
            w("- " + v)
        w("")
    bad = [c for c in d["cases"] if c["status"] != "ok"]
    if bad:
        w("Cases without a time:\n")
        w(table(["case", "result", "why"],
                [[c["id"], short_status(c),
                  c.get("error", "").replace("|", "\\|").replace("\n", " ")[:200]]
                 for c in bad], ["l", "l", "l"]))
        w("")
    return "\n".join(L).rstrip() + "\n"


def put_section(doc, heading, section):
    """Puts `section` under `heading` into `doc`, leaving every other section
    as it is."""
    doc = pathlib.Path(doc)
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(splice_section(text, heading, section))


def update_torch(d, doc, assets):
    """Puts the section of `d` (the JSON of tools/bench --torch) into `doc`."""
    put_section(doc, TORCH_HEADING, torch_section(d))


def update_sampling(d, doc, assets):
    """Writes the plot of `d` (the JSON of tools/bench --sampling) and puts its
    section into `doc`, leaving every other section as it is."""
    assets = pathlib.Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    put_section(doc, SAMPLING_HEADING, sampling_section(d, sampling_plots(d, assets)))


GPU_HEADING = "## GPU"
GPU_JSON = "gpu-results.json"
GPU_IMPLS = ["gnnc-torch", "pyg"]
GPU_TITLES = {"gnnc-torch": "gnnc (CUDA, from PyTorch)", "pyg": "PyG (CUDA)"}


def gpu_results(folder):
    """The JSON of one run of tools/gpu-check.sh, from its output folder:
    summary.txt (the checks), env.txt (the machine) and gpu-bench.jsonl (a
    line of tools/benchmarks/anchor.py --device cuda per case)."""
    folder = pathlib.Path(folder)
    checks, runs = [], []
    for line in (folder / "summary.txt").read_text().splitlines():
        m = re.match(r"(PASSED|FAILED|SKIPPED)\s+(.*)", line)
        b = re.match(r"SKIPPED\s+bench (\S+) (\S+) (\S+) (\S+)", line)
        if b:
            runs.append({"graph": b.group(1), "layer": b.group(2),
                         "mode": b.group(3), "impl": b.group(4), "ok": False,
                         "error": "not run: the time budget was spent"})
        elif m and not m.group(2).startswith("graph "):
            checks.append({"result": m.group(1), "what": m.group(2)})
    env = (folder / "env.txt").read_text() if (folder / "env.txt").exists() else ""
    machine = []
    for what, pattern in (("driver", r"Driver Version: (\S+)"),
                          ("CUDA", r"Cuda compilation tools, release (\S+),"),
                          ("compute-sanitizer", r"^Version (\S+) \(build"),
                          ("PyTorch", r"^torch (\S+)"),
                          ("PyG", r"^torch_geometric (\S+)")):
        m = re.search(pattern, env, re.M)
        if m:
            machine.append("%s %s" % (what, m.group(1)))
    bench = folder / "gpu-bench.jsonl"
    for line in (bench.read_text().splitlines() if bench.exists() else []):
        r = json.loads(line)
        run = {k: r.get(k) for k in ("graph", "layer", "mode", "impl", "ok", "N",
                                     "E", "device_name", "times_s", "error",
                                     "cuda_peak_allocated_bytes")}
        if r.get("ok"):
            run["median_s"] = statistics.median(r["times_s"])
        runs.append(run)
    note, reading = folder / "note.md", folder / "reading.md"
    profile = []
    prof = folder / "profile.jsonl"
    for line in (prof.read_text().splitlines() if prof.exists() else []):
        r = json.loads(line)
        keep = {k: r.get(k) for k in ("graph", "layer", "mode", "impl", "ok", "N",
                                      "E", "nnz", "device_name", "error",
                                      "kernels", "variant")}
        keep["kernels"] = (keep.get("kernels") or [])[:12]
        if r.get("ok"):
            keep["median_s"] = statistics.median(r["times_s"])
        profile.append(keep)
    copy = folder / "copy.json"
    ncu = {}
    for f in sorted(folder.glob("ncu-*.csv")):
        ncu[f.stem[len("ncu-"):]] = ncu_rows(f)
    profile_note = folder / "profile.md"
    return {"note": note.read_text().strip() if note.exists() else "",
            "reading": reading.read_text().strip() if reading.exists() else "",
            "profile_note": (profile_note.read_text().strip()
                             if profile_note.exists() else ""),
            "date_utc": (env.splitlines() or ["?"])[0],
            "machine": machine,
            "device": next((r["device_name"] for r in runs + profile
                            if r.get("device_name")), None),
            "checks": checks, "runs": runs, "profile": profile,
            "copy": json.loads(copy.read_text()) if copy.exists() else None,
            "ncu": ncu}


NCU_METRICS = {
    "gpu__time_duration.sum": "time_ns",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy_pct",
    "launch__registers_per_thread": "registers",
    "lts__t_sector_hit_rate.pct": "l2_hit_pct",
    "dram__bytes_read.sum": "dram_read_bytes",
    "launch__grid_size": "grid",
    "launch__block_size": "block",
}


def ncu_rows(path):
    """The kernels of an Nsight Compute --csv --page raw log: name and the
    metrics of NCU_METRICS, in launch order."""
    import csv
    lines = [l for l in path.read_text().splitlines() if l.startswith('"')]
    rows = list(csv.reader(lines))
    if len(rows) < 3:
        return []
    col = {h: i for i, h in enumerate(rows[0])}
    out = []
    for r in rows[2:]:
        k = {"name": r[col["Kernel Name"]]}
        for metric, key in NCU_METRICS.items():
            if metric in col:
                try:
                    k[key] = float(r[col[metric]].replace(",", ""))
                except ValueError:
                    k[key] = None
        out.append(k)
    return out


def short_kernel(name):
    """A kernel's name without namespaces and template arguments."""
    name = re.sub(r"\(anonymous namespace\)::|<unnamed>::", "", name)
    name = re.sub(r"\(.*", "", name)
    name = re.sub(r"^void ", "", name)
    name = re.sub(r"<.*", "", name)
    name = name.split("::")[-1]
    return name if len(name) <= 40 else name[:37] + "..."


def gpu_cases(d):
    """[(graph, layer, mode)] in the order of the run."""
    seen = []
    for r in d.get("runs", []):
        key = (r["graph"], r["layer"], r["mode"])
        if key not in seen:
            seen.append(key)
    return seen


def gpu_median(d, case, impl):
    for r in d.get("runs", []):
        if (r["graph"], r["layer"], r["mode"]) == case and r["impl"] == impl:
            return r.get("median_s")
    return None


def gpu_plots(d, assets):
    """The bar chart of the section (PyG's time over gnnc's); {name: path}."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    cases = [c for c in gpu_cases(d)
             if gpu_median(d, c, "gnnc-torch") and gpu_median(d, c, "pyg")]
    if not cases:
        return {}
    ratios = [gpu_median(d, c, "pyg") / gpu_median(d, c, "gnnc-torch") for c in cases]
    fig, ax = plt.subplots(figsize=(11, 4.2))
    ax.bar(range(len(cases)), ratios,
           color=["#1f77b4" if r >= 1 else "#d62728" for r in ratios])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(["%s\n%s\n%s" % c for c in cases], fontsize=7)
    ax.set_ylabel("PyG time / gnnc time (above 1: gnnc faster)")
    ax.set_title("%s: gnnc's CUDA layers from PyTorch against PyG, medians"
                 % (d.get("device") or "GPU"), fontsize=10)
    ax.grid(axis="y", alpha=0.3, which="both")
    fig.tight_layout()
    assets = pathlib.Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    fig.savefig(assets / "gpu.png", dpi=110)
    plt.close(fig)
    return {"gpu.png": "%s/gpu.png" % assets.name}


def gpu_section(d, made):
    """The section "GPU": the last run of tools/gpu-check.sh, or what is
    missing without one."""
    L = [GPU_HEADING + "\n"]
    w = L.append
    if not d:
        w("No run on a GPU is recorded beside this page. `tools/gpu-kit.sh` "
          "packs the CUDA test programs and `tools/gpu-check.sh` runs them, "
          "compute-sanitizer and the timings of this section on a machine with "
          "one; `report.py --gpu OUTDIR` puts its results here. Without a GPU, "
          "the CUDA backend is tested by nvcc builds for sm_80 and sm_90 and a "
          "host emulation that runs every generated kernel against the "
          "interpreter (`tests/Target/Exec`).\n")
        return "\n".join(L)
    w("One run of `tools/gpu-check.sh` on an %s (%s; %s).\n" % (
        d.get("device") or "a GPU", d.get("date_utc", "?"),
        ", ".join(d.get("machine", [])) or "?"))
    if d.get("note"):
        w(d["note"] + "\n")
    w("### Tests and compute-sanitizer\n")
    w(table(["check", "result"],
            [[c["what"], c["result"]] for c in d.get("checks", [])], ["l", "l"]))
    w("")
    cases = gpu_cases(d)
    if cases:
        w("### gnnc from PyTorch against PyG, on the GPU\n")
        if d.get("runs_from"):
            w("These timings are of an earlier run (%s), before the checks "
              "above.\n" % d["runs_from"])
        w("`tools/benchmarks/anchor.py --device cuda`: the layers of the "
          "section \"From PyTorch\" (dsl-examples' GCN, GAT with 8 heads and "
          "GraphSAGE-mean through `gnnc.torch`; PyG's GCNConv, GATConv and "
          "SAGEConv), F = 64, float32, on R-MAT graphs. A time ends at "
          "`torch.cuda.synchronize()`; train is one forward and backward "
          "(`out.backward(cotangent)`). Medians of at least 20 repetitions after "
          "3 warm-ups, both implementations in the same run. Peak memory is "
          "PyTorch's allocator (`torch.cuda.max_memory_allocated`): gnnc.torch "
          "takes its outputs, saved tensors and workspace from it, but not the "
          "graph's CSR/CSC on the device (for rmat-20, 2 x (N + 1 + E) x 4 bytes "
          "= 136 MB more); PyG's edge_index is counted.\n")
        rows = []
        for c in cases:
            a, b = gpu_median(d, c, "gnnc-torch"), gpu_median(d, c, "pyg")
            peak = {r["impl"]: r.get("cuda_peak_allocated_bytes")
                    for r in d["runs"] if (r["graph"], r["layer"], r["mode"]) == c}
            rows.append([c[0], layer_title(c[1]),
                         MODE_TITLES.get(c[2], c[2]),
                         ftime(a) if a else "-", ftime(b) if b else "-",
                         fratio(b / a) if a and b else "-",
                         fbytes(peak.get("gnnc-torch")) if peak.get("gnnc-torch") else "-",
                         fbytes(peak.get("pyg")) if peak.get("pyg") else "-"])
        w(table(["graph", "layer", "mode", GPU_TITLES["gnnc-torch"],
                 GPU_TITLES["pyg"], "PyG / gnnc", "peak, gnnc", "peak, PyG"],
                rows, ["l", "l", "l", "r", "r", "r", "r", "r"]))
        w("")
        if "gpu.png" in made:
            w("![PyG's time over gnnc's on the GPU](%s)\n" % made["gpu.png"])
        if d.get("reading"):
            w(d["reading"] + "\n")
        missing = [r for r in d["runs"] if not r.get("ok")]
        if missing:
            w("Cases without a time: %s.\n" % ", ".join(
                "%s %s %s %s (%s)" % (r["graph"], r["layer"], r["mode"], r["impl"],
                                      (r.get("error") or "not run")[:80])
                for r in missing))
    if d.get("profile"):
        gpu_profile_section(d, w)
    return "\n".join(L)


def profile_impl(r):
    """The implementation of a profiled case, with its variant."""
    name = {"gnnc-torch": "gnnc", "pyg-sparse": "cuSPARSE", "pyg": "PyG"}.get(
        r["impl"], r["impl"])
    if r.get("variant") == "unroll-1":
        return name + ", one edge at a time"
    return name + (", " + r["variant"] if r.get("variant") else "")


def gpu_profile_section(d, w):
    """Where the GPU time goes: tools/gpu-check.sh --profile."""
    prof = [r for r in d["profile"] if r.get("ok")]
    w("### Where the time goes\n")
    w("`tools/gpu-check.sh --profile` on the %s. Device times per kernel come "
      "from `torch.profiler` over 3 steps after the timed ones "
      "(`anchor.py --kernels 3`)%s.\n" % (
          prof[0].get("device_name") if prof else "GPU",
          "; the counters, from Nsight Compute over one step"
          if d.get("ncu") else ""))
    if d.get("profile_note"):
        w(d["profile_note"] + "\n")
    copy = d.get("copy")
    agg = [r for r in prof if r["layer"] == "gcn_agg"]
    if agg:
        w("**The aggregation alone** (`out[v] = sum of x[u]` over the in-edges, "
          "F = 64, float32): gnnc's kernel of `tools/benchmarks/aggregate.gnn` "
          "through gnnc.torch against cuSPARSE's SpMM (`torch.sparse.mm` of a "
          "CSR tensor; cuSPARSE's CSR has the repeated edges of R-MAT merged, "
          "`nnz` below `E`). The kernel column is the device time of the "
          "aggregation's kernels alone. The minimum bytes are the CSR read "
          "once (int64 offsets, int32 columns as gnnc's device graph holds "
          "them), `x` read once and `out` written once; the fraction is of "
          "the device's copy bandwidth%s.\n" % (
              " (%.0f GB/s: `torch`'s `copy_` of 1 GiB, read plus write)"
              % copy["GBps"] if copy else ""))
        rows = []
        for r in agg:
            kern = sum(k["us"] for k in r.get("kernels") or []) * 1e-6
            N, E = r["N"], r["E"]
            minimum = 8 * (N + 1) + 4 * E + 2 * 4 * N * 64
            bw = minimum / kern if kern else None
            rows.append([r["graph"], profile_impl(r),
                         "%d" % (r.get("nnz") or E), ftime(r["median_s"]),
                         ftime(kern) if kern else "-",
                         "%.0f GB/s" % (bw / 1e9) if bw else "-",
                         "%.0f %%" % (100 * bw / (copy["GBps"] * 1e9))
                         if bw and copy else "-"])
        w(table(["graph", "implementation", "edges", "median, call",
                 "kernels", "minimum bytes / kernel time", "of copy bandwidth"],
                rows, ["l", "l", "r", "r", "r", "r", "r"]))
        w("")
    steps = [r for r in prof if r["layer"] != "gcn_agg"]
    if steps:
        w("**Training steps** (forward and backward, F = 64): the kernels that "
          "take 90 % of the device time, per step.\n")
        rows = []
        for r in steps:
            ks = r.get("kernels") or []
            total = sum(k["us"] for k in ks)
            acc = 0.0
            shown = []
            for k in ks:
                if acc >= 0.9 * total or len(shown) >= 6:
                    break
                acc += k["us"]
                shown.append("%s %s%s" % (short_kernel(k["name"]),
                                          ftime(k["us"] * 1e-6),
                                          " (x%g)" % k["count"] if k["count"] != 1
                                          else ""))
            rows.append([r["graph"], layer_title(r["layer"]),
                         profile_impl(r), ftime(r["median_s"]),
                         ftime(total * 1e-6), "; ".join(shown)])
        w(table(["graph", "layer", "implementation", "median, step",
                 "device time", "largest kernels"],
                rows, ["l", "l", "l", "r", "r", "l"]))
        w("")
    for layer, kernels in (d.get("ncu") or {}).items():
        own = [k for k in kernels if "aggregate" in k["name"]]
        if not own:
            continue
        w("**Nsight Compute, gnnc's aggregation kernels of one %s training "
          "step** on rmat-17:\n" % layer_title(layer))
        rows = [[short_kernel(k["name"]), ftime((k.get("time_ns") or 0) * 1e-9),
                 "%.2f %%" % k["dram_pct"] if k.get("dram_pct") is not None else "-",
                 "%.2f %%" % k["sm_pct"] if k.get("sm_pct") is not None else "-",
                 "%.0f %%" % k["occupancy_pct"]
                 if k.get("occupancy_pct") is not None else "-",
                 "%.0f %%" % k["l2_hit_pct"] if k.get("l2_hit_pct") is not None else "-",
                 "%d" % k["registers"] if k.get("registers") else "-"]
                for k in own]
        w(table(["kernel", "time", "DRAM throughput (of peak)",
                 "SM throughput (of peak)", "warps active (of peak)", "L2 hit rate",
                 "registers per thread"],
                rows, ["l", "r", "r", "r", "r", "r", "r"]))
        w("")


def layer_title(layer):
    """A layer's title, from bench.py's LAYERS (imported here: bench.py
    imports this module when it writes the doc)."""
    from bench import LAYERS
    return LAYERS[layer]["title"] if layer in LAYERS else layer


def update_gpu(folder, doc, assets):
    """Reads the output folder of tools/gpu-check.sh, keeps it as
    ASSETS/gpu-results.json, writes its plot and puts the section "GPU" into
    `doc`, leaving every other section as it is."""
    d = gpu_results(folder)
    assets = pathlib.Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    # A run without timings (--no-bench) keeps the timings of the run before
    # it, which the section dates.
    old = assets / GPU_JSON
    if not d["runs"] and old.exists():
        prev = json.loads(old.read_text())
        d["runs"] = prev.get("runs", [])
        d["runs_from"] = prev.get("runs_from") or "%s, %s" % (
            prev.get("device") or "GPU", prev.get("date_utc", "?"))
        if not d.get("reading"):
            d["reading"] = prev.get("reading", "")
    (assets / GPU_JSON).write_text(json.dumps(d, indent=1) + "\n")
    doc = pathlib.Path(doc)
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    doc.write_text(splice_section(text, GPU_HEADING,
                                  gpu_section(d, gpu_plots(d, assets))))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--gpu":
        update_gpu(sys.argv[2], sys.argv[3], sys.argv[4])
        sys.exit(0)
    if len(sys.argv) != 4:
        sys.exit("usage: report.py RESULTS.json DOC.md ASSET_DIR\n"
                 "       report.py --gpu GPU_CHECK_OUTDIR DOC.md ASSET_DIR")
    write(json.loads(pathlib.Path(sys.argv[1]).read_text()), sys.argv[2], sys.argv[3])


LIBRARY_HEADING = "## The layer library against PyG"
LIBRARY_JSON = "library-results.json"


LIBRARY_ANCHORS = ["pyg", "pyg2"]
# Why gnnc is slower than PyG, or did not finish, where it is (read from the
# generated code of that layer and mode).
LIBRARY_EXPLAIN = {
    ("lib_generalconv", "train"):
        "the saving forward (`GeneralConv.train`) runs unfused: the gathered "
        "rows, the per-edge message `u.m + e.m` and its product with `att` "
        "are each a [heads, out_dim] tensor per edge in the workspace (E x 256 "
        "floats, 2 GiB each on rmat-17), with the edge features' map `e.m`; "
        "inference fuses them into the edge kernel",
}


def library_rows(d):
    """Per layer of `d` (the JSON of tools/bench --library), in the run's
    order: (layer, width, {mode: {impl: (median_s or None, case)}})."""
    found = {}
    order = []
    for c in legacy_ids(d).get("cases", []):
        key = (c["layer"], c["width"])
        if key not in found:
            found[key] = {}
            order.append(key)
        med = c.get("result", {}).get("median_s") if c["status"] == "ok" else None
        found[key].setdefault(c["mode"], {})[c["impl"]] = (med, c)
    return [(k[0], k[1], found[k]) for k in order]


def library_speedup(modes, mode):
    """The fastest PyG's median over gnnc's, and which PyG that was."""
    m = modes.get(mode, {})
    g = m.get("gnnc", (None,))[0]
    timed = [(m[i][0], i) for i in LIBRARY_ANCHORS if m.get(i, (None,))[0]]
    if not g or not timed:
        return None, None
    best, impl = min(timed)
    return best / g, impl


def library_plot(d, assets):
    """The speed-up per layer over the fastest PyG, both modes."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    rows = library_rows(d)
    titles = [d["layers"].get(layer, {}).get("title", layer) for layer, _, _ in rows]
    if not titles:
        return {}
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(titles) + 1.4))
    ys = list(range(len(titles)))
    for off, mode, color in ((-0.2, "infer", "#1f77b4"), (0.2, "train", "#ff7f0e")):
        ax.barh([y + off for y in ys],
                [library_speedup(modes, mode)[0] or 0.0 for _, _, modes in rows],
                0.4, color=color, label=MODE_TITLES[mode])
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels(titles, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("speed-up of gnnc over the fastest PyG (median time ratio)")
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    assets = pathlib.Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    fig.savefig(assets / "library.png", dpi=110)
    plt.close(fig)
    return {"library.png": "%s/library.png" % assets.name}


def library_section(d, made):
    rows = library_rows(d)
    g = d.get("graphs", {}).get("rmat-17", {})
    probe = d.get("probe", {})
    cur = probe.get("torch_current", {})
    out = [LIBRARY_HEADING, ""]
    out.append(
        "Every layer of the library (`gnn/`, and the examples' layers with a PyG "
        "counterpart) on rmat-17 (N = %s, E = %s) at F = 64: gnnc's generated C++ "
        "against the PyG layer configured to compute the same function "
        "(`tools/benchmarks/library.py` names both), on PyG %s with Debian's PyTorch "
        "%s (\"1.13\") and on PyG %s with PyTorch %s from PyPI (\"current\"), "
        "%d threads each. Medians of the timed repetitions, every implementation in "
        "the same run (`tools/bench --library`, %s); the speed-up is the faster "
        "PyG's median over gnnc's. Forward + backward is one forward and "
        "`backward` of a random cotangent: the gradients of every input and "
        "parameter."
        % (fcount(g.get("N", 0)), fcount(g.get("E", 0)),
           probe.get("torch_geometric", "?"),
           probe.get("torch_debian") or probe.get("torch", "?"),
           cur.get("torch_geometric", "?"), cur.get("torch", "?"),
           d.get("threads", 0), d.get("date_utc", "?")))
    out.append("")
    body, slower, unfinished = [], [], []
    ratios = {"infer": [], "train": []}

    def cell(m, impl):
        med, case = m.get(impl, (None, None))
        return ftime(med) if med else short_status(case) if case else "–"
    for layer, width, modes in rows:
        title = d["layers"].get(layer, {}).get("title", layer)
        cells = [title + ("" if width == 64 else " (F = %d)" % width)]
        for mode in ("infer", "train"):
            m = modes.get(mode, {})
            r, _ = library_speedup(modes, mode)
            gcase = m.get("gnnc", (None, None))[1]
            if gcase and gcase["status"] != "ok":
                unfinished.append((layer, title, mode, short_status(gcase)))
            if r:
                ratios[mode].append(r)
                if r < 1:
                    slower.append((title, mode, r))
            cells += [cell(m, "gnnc")] + [cell(m, i) for i in LIBRARY_ANCHORS]
            cells.append(fratio(r))
        body.append(cells)
    heads = ["layer"]
    for mode in ("inference", "fwd + bwd"):
        heads += ["gnnc, " + mode, "PyG 1.13", "PyG current", "speed-up"]
    out.append(table(heads, body))
    out.append("")
    for mode in ("infer", "train"):
        if ratios[mode]:
            out.append("Geometric mean of the speed-ups, %s: %s over %d layers "
                       "(least %s, most %s)." % (
                           MODE_TITLES[mode], fratio(geomean(ratios[mode])),
                           len(ratios[mode]), fratio(min(ratios[mode])),
                           fratio(max(ratios[mode]))))
    out.append("")
    if "library.png" in made:
        out.append("![speed-up per layer](%s)" % made["library.png"])
        out.append("")
    notes = [(d["layers"][k].get("title", k), d["layers"][k]["note"])
             for k, _, _ in rows if d["layers"].get(k, {}).get("note")]
    if notes:
        out.append("Where the two differ:")
        out.append("")
        out += ["- %s: %s." % n for n in notes]
        out.append("")
    if unfinished:
        out.append("Where gnnc did not finish:")
        out.append("")
        out += ["- %s, %s: %s%s." % (t, MODE_TITLES[m], st,
                                    "; " + LIBRARY_EXPLAIN[(k, m)]
                                    if (k, m) in LIBRARY_EXPLAIN else "")
                for k, t, m, st in unfinished]
        out.append("")
    if slower:
        out.append("Layers where gnnc is slower than PyG:")
        out.append("")
        out += ["- %s, %s: %s." % (t, MODE_TITLES[m], fratio(r)) for t, m, r in slower]
    else:
        out.append("Where both finished, gnnc is faster than both PyGs on every "
                   "layer, in both modes.")
    out.append("")
    return "\n".join(out)


def update_library(d, doc, assets):
    """Writes the plot of `d` (the JSON of tools/bench --library) and puts its
    section into `doc`."""
    put_section(doc, LIBRARY_HEADING, library_section(d, library_plot(d, assets)))
