//===- Modules.h - The modules the execution suite runs ---------*- C++ -*-===//
//
// Part of gnnc. tests/Target/Exec/CMakeLists.txt compiles the examples of
// its table with gnnc at build time, for the suite's backend, and writes
// Modules.cpp (from Modules.cpp.in), the table of them.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_TARGET_EXEC_MODULES_H
#define GNNC_TESTS_TARGET_EXEC_MODULES_H

#include "Backend.h"

#include <cstddef>

struct CompiledModule {
  /// The module's id and namespace ("small_gcn_GCNConv").
  const char *id;
  /// The directory of <stem>.h, <stem>.cpp or <stem>.cu, and
  /// <stem>.gnnmap.json.
  const char *dir;
  const char *stem;
  const gnnc::testing_support::Backend::ModuleInfo *info;
};

extern const CompiledModule kCompiledModules[];
extern const size_t kNumCompiledModules;

#endif // GNNC_TESTS_TARGET_EXEC_MODULES_H
