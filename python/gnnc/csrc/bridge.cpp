// Part of gnnc. The C interface between gnnc.torch's PyTorch extension
// (torch_glue.cpp) and gnnc's runtime.
//
// The two may be compiled with different C++ standard library ABIs: PyTorch
// wheels before 2.7 use the pre-C++11 std::string
// (-D_GLIBCXX_USE_CXX11_ABI=0), gnnc's runtime and generated code the
// compiler's default. So nothing with a std::string crosses between them:
// this file is compiled like the runtime, into a shared library of its own,
// and speaks plain C (pointers, integers, an error buffer). An rt::Graph it
// builds is passed on, as the ABI's `const void *`, to modules compiled the
// same way.

#include "bridge_util.h"

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Train.h"

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace rt = gnnc::rt;

using gnnc_torch::fail;

extern "C" {

/// Builds a graph from an edge list; null with the message in `err`.
void *gnnc_bridge_graph_new(const int64_t *src, const int64_t *dst,
                            int64_t numEdges, int64_t numSrc, int64_t numDst,
                            char *err, size_t errLen) {
  return gnnc_torch::makeOrFail<rt::Graph>(
      [&](rt::Graph &g) {
        return rt::Graph::fromEdgeIndex(src, dst, numEdges, numSrc, numDst, g);
      },
      err, errLen);
}

void gnnc_bridge_graph_free(void *graph) {
  delete static_cast<rt::Graph *>(graph);
}

/// numSrc, numDst, numEdges.
void gnnc_bridge_graph_counts(const void *graph, int64_t *counts) {
  const auto *g = static_cast<const rt::Graph *>(graph);
  counts[0] = g->numSrc();
  counts[1] = g->numDst();
  counts[2] = g->numEdges();
}

int gnnc_bridge_init_param(const char *init, double arg, const int64_t *shape,
                           size_t rank, float *data, uint64_t seed,
                           const char *path, char *err, size_t errLen) {
  rt::Status st =
      rt::initParam(init, arg, shape, rank, data, rt::paramSeed(seed, path));
  return st.ok() ? 0 : fail(st.message(), err, errLen);
}

/// Calls an entry point of a module compiled like this file.
int gnnc_bridge_call(const rt::EntryInfo *entry, const rt::CallArgs *args,
                     char *err, size_t errLen) {
  rt::Status st = entry->call(*args);
  return st.ok() ? 0 : fail(st.message(), err, errLen);
}

/// Sets the OpenMP threads of the calling thread's later parallel loops
/// (this library's OpenMP runtime, which the modules share).
void gnnc_bridge_set_threads(int n) {
  if (n > 0)
    omp_set_num_threads(n);
}

int gnnc_bridge_abi_version() { return rt::kAbiVersion; }

} // extern "C"
