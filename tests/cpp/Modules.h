//===- Modules.h - The modules gnnc compiled to C++ for the tests -*- C++
//-*-===//
//
// Part of gnnc. tests/cpp/CMakeLists.txt compiles the examples to C++ at
// build time and writes Modules.cpp, the table of them.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_CPP_MODULES_H
#define GNNC_TESTS_CPP_MODULES_H

#include "gnnc/runtime/Ops.h"

#include <cstddef>

struct CompiledModule {
  /// The module's id and namespace ("small_gcn_GCNConv").
  const char *id;
  /// The directory of <stem>.h, <stem>.cpp and <stem>.gnnmap.json.
  const char *dir;
  const char *stem;
  const gnnc::rt::ModuleInfo *info;
};

extern const CompiledModule kCompiledModules[];
extern const size_t kNumCompiledModules;

#endif // GNNC_TESTS_CPP_MODULES_H
