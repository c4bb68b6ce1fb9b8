# Checks a <stem>.gnnmap.json against the files it describes: the two
# directions agree, every kernel line is mapped, and each mapped generated
# line is code of the .gnn line it names (the comment of that line, or code
# below such a comment, in the same function). For the C++ and the CUDA
# printer alike (tests/Target/Cpp/line-map.test, tests/Target/Cuda/...):
#
#   check-line-map.py MAP.json OUT_DIR FILE.gnn KERNEL_FILE
#
# KERNEL_FILE is the generated file that must hold kernels (gcn.cpp, gcn.cu).
import json
import sys

map_path, out_dir, gnn_path, kernel_file = sys.argv[1:5]
with open(map_path) as f:
    m = json.load(f)
gnn_lines = open(gnn_path).read().split("\n")

back = m["generated_to_source"]
for source, lines in m["source_to_generated"].items():
    for line, ranges in lines.items():
        for r in ranges:
            first, last = r["lines"]
            for g in range(first, last + 1):
                s = back[r["file"]][str(g)]
                assert s["file"] == source and s["line"] == int(line), (r, g)

assert m["kernels"][kernel_file], "no kernel in " + kernel_file
for name, ranges in m["kernels"].items():
    for first, last in ranges:
        for g in range(first, last + 1):
            s = back[name].get(str(g))
            assert s, "%s:%d in a kernel is not mapped" % (name, g)
            assert 1 <= s["line"] <= len(gnn_lines), s

# Every `// gcn.gnn:N: text` comment is mapped to line N and quotes it.
for name in back:
    text = open(out_dir + "/" + name).read().split("\n")
    for i, line in enumerate(text, 1):
        stripped = line.strip()
        if stripped.startswith("// gcn.gnn:"):
            n = int(stripped.split(":")[1])
            assert back[name][str(i)]["line"] == n, (name, i)
            assert stripped.endswith(gnn_lines[n - 1].strip()), (name, i)
print("ok")
