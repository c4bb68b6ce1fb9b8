// RUN: rm -rf %t && not %gnnc-cxx %s -o %t/out -- %cxxflags 2>&1 | FileCheck %s
// RUN: ls %t/out | count 0
//
// What gnnc's semantic analysis rejects in a translated layer is reported
// at the C++ location too, in gnnc's words.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

GNNC_LAYER void Widths(nc::Graph &g, nc::Rows<3> x, nc::Weight<4, 2> W,
                       nc::Rows<2> &out) {
// CHECK: errors-sema.cpp:[[@LINE+3]]:9: error: '@' inner dimensions differ: 3 vs 4
// CHECK-NEXT: {{^}}  out = nc::matmul(x, W);
// CHECK-NEXT: {{^}}        ^
  out = nc::matmul(x, W);
}

// A C++ error is Clang's, and nothing is compiled.
// RUN: not %gnnc-cxx %s -o %t/out2 -- %cxxflags -DBROKEN 2>&1 | FileCheck %s --check-prefix=BROKEN
#ifdef BROKEN
// BROKEN: errors-sema.cpp:[[@LINE+1]]:1: error: unknown type name 'not_a_type'
not_a_type y;
#endif

// A layer returns void; a file without layers is an error too.
// RUN: not %gnnc-cxx %s -o %t/out3 -- %cxxflags -DRETURNS 2>&1 | FileCheck %s --check-prefix=RETURNS
#ifdef RETURNS
// RETURNS: errors-sema.cpp:[[@LINE+1]]:12: error: a layer returns void: its result is the Rows<...> & argument it assigns
GNNC_LAYER int Returns(nc::Graph &g, nc::Rows<3> x, nc::Rows<3> &out) {
  out = x;
  return 0;
}
#endif
// RUN: echo "int main() { return 0; }" > %t/none.cpp
// RUN: not %gnnc-cxx %t/none.cpp -o %t/out4 -- %cxxflags 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: {{.*}}none.cpp has no function annotated GNNC_LAYER
// RUN: ls %t/out4 | count 0
