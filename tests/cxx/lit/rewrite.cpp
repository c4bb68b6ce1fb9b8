// RUN: rm -rf %t && mkdir -p %t
// RUN: %gnnc-cxx %s -o %t/out -- %cxxflags
// RUN: FileCheck %s --input-file=%t/out/rewrite.cpp
// The copy keeps every line where it was: two lines in front (the kernels'
// header and a #line back to this file), and each body on as many lines.
// RUN: wc -l < %s > %t/lines.txt
// RUN: tail -n +3 %t/out/rewrite.cpp | wc -l | diff - %t/lines.txt
// Outside the bodies, byte for byte.
// RUN: tail -n +3 %t/out/rewrite.cpp | sed -e '30,35d' -e '41d' > %t/rest.txt
// RUN: sed -e '30,35d' -e '41d' %s | diff - %t/rest.txt
// The kernels, and the line map, which maps their lines to this file's.
// RUN: FileCheck %s --check-prefix=HEADER --input-file=%t/out/rewrite_gnnc.h
// RUN: FileCheck %s --check-prefix=KERNELS --input-file=%t/out/rewrite_gnnc.cpp
// RUN: FileCheck %s --check-prefix=MAP --input-file=%t/out/rewrite_gnnc.gnnmap.json
// The same with the flags from a compile_commands.json (-p).
// RUN: mkdir -p %t/db && cp %s %t/db/rewrite.cpp
// RUN: printf '[{"directory": "%t/db", "file": "%t/db/rewrite.cpp", "arguments": ["c++", %cxxjson, "-c", "rewrite.cpp"]}]' > %t/db/compile_commands.json
// RUN: %gnnc-cxx -p %t/db %t/db/rewrite.cpp -o %t/out2
// RUN: diff %t/out/rewrite_gnnc.h %t/out2/rewrite_gnnc.h

#include "gnnc/cxx/NodeCentric.h"

#include <cstdio>

namespace nc = gnnc::cxx;

// A comment before the layers.
static int counter = 0;

GNNC_LAYER void Mean(nc::Graph &g, nc::Rows<3> x, nc::Rows<3> &out) {
  g.set_vertex_attr("h", x);
  for (nc::Vertex v : g.dst_vertices())
    v.set("m", g.mean(v.in_neighbors(), [](nc::Vertex u) { return u.get("h"); }));
  out = g.dst_attr("m");
}

int between(int a) {
  return a + counter; // untouched
}

GNNC_LAYER void Sum(nc::Graph &g, nc::Rows<3> x, nc::Weight<3, 2> W, nc::Rows<2> &out) { g.set_vertex_attr("h", nc::matmul(x, W)); for (nc::Vertex v : g.dst_vertices()) v.set("s", g.sum(v.in_neighbors(), [](nc::Vertex u) { return u.get("h"); })); out = g.dst_attr("s"); }

int main() { std::printf("%d\n", between(1)); }

// CHECK: #include "rewrite_gnnc.h"
// CHECK-NEXT: #line 1 "{{.*}}rewrite.cpp"
// CHECK: GNNC_LAYER void Mean(nc::Graph &g, nc::Rows<3> x, nc::Rows<3> &out) { /* gnnc-cxx: compiled into rewrite_gnnc::Mean (rewrite_gnnc.h) */ gnnc::cxx::detail::expectRows(x, g.num_vertices(), "x"); gnnc::cxx::detail::check(::rewrite_gnnc::Mean(g.graph(), x.data(), ::rewrite_gnnc::Mean_Params{}, out.prepare(g.num_vertices()), g.workspace(::rewrite_gnnc::Mean_workspace_bytes(g.graph())), false, 0)); }
// CHECK-EMPTY:
// CHECK-EMPTY:
// CHECK-EMPTY:
// CHECK-EMPTY:
// CHECK-EMPTY:
// CHECK-EMPTY:
// CHECK-NEXT: int between(int a) {
// CHECK: GNNC_LAYER void Sum({{.*}}) { /* gnnc-cxx: compiled into rewrite_gnnc::Sum (rewrite_gnnc.h) */ {{.*}}::rewrite_gnnc::Sum_Params{const_cast<float *>(W.data())}{{.*}} }
// CHECK-EMPTY:
// CHECK-NEXT: int main() { std::printf("%d\n", between(1)); }

// HEADER: namespace rewrite_gnnc {
// HEADER: /// @Mean (layer, rewrite.cpp: GNNC_LAYER void Mean(nc::Graph &g, nc::Rows<3> x, nc::Rows<3> &out))
// HEADER: gnnc::rt::Status Mean(const gnnc::rt::Graph &g, const float *x, const Mean_Params &params, float *out, void *workspace, bool training, uint64_t seed);
// HEADER: gnnc::rt::Status Mean_backward(
// HEADER: gnnc::rt::Status Sum(const gnnc::rt::Graph &g, const float *x, const Sum_Params &params, float *out, void *workspace, bool training, uint64_t seed);

// KERNELS: // rewrite.cpp:33: v.set("m", g.mean(v.in_neighbors(), [](nc::Vertex u) { return u.get("h"); }));

// MAP: "generated_to_source": {
// MAP-NEXT: "rewrite_gnnc.cpp": {
// MAP: "file": "{{.*}}rewrite.cpp",
// MAP-NEXT: "line": 33
