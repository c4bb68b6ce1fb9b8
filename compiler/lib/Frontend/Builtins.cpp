//===- Builtins.cpp - Builtin functions and graph methods -----------------===//
//
// Part of gnnc. The tables of Builtins.h, one entry per line of Builtins.def.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Builtins.h"

#include "llvm/ADT/STLExtras.h"

using namespace gnnc;

static const BuiltinInfo builtinTable[] = {
#define BUILTIN(Name, Kind) {#Name, BuiltinKind::Kind, "", 0.0, false, false},
#define UNARY_WITH_PARAM(Name, Fn, Param, Default)                             \
  {#Name, BuiltinKind::Unary, #Param, Default, false, false},
#define REDUCTION(Name, Fn, FloatOnly)                                         \
  {#Name, BuiltinKind::Reduction, "", 0.0, FloatOnly, false},
#define SOFTMAX(Name, Log) {#Name, BuiltinKind::Softmax, "", 0.0, false, Log},
#include "gnnc/Frontend/Builtins.def"
};

const BuiltinInfo *gnnc::lookupBuiltin(llvm::StringRef name) {
  auto it = llvm::find_if(
      builtinTable, [&](const BuiltinInfo &info) { return info.name == name; });
  return it == std::end(builtinTable) ? nullptr : it;
}

static const GraphMethodInfo graphMethodTable[] = {
#define GRAPH_METHOD(Name, Kind) {#Name, GraphMethodKind::Kind, false},
#define AGGREGATION(Name, Fn, FloatOnly)                                       \
  {#Name, GraphMethodKind::Aggregation, FloatOnly},
#define READOUT(Name, Fn, FloatOnly)                                           \
  {#Name, GraphMethodKind::Readout, FloatOnly},
#include "gnnc/Frontend/Builtins.def"
};

const GraphMethodInfo *gnnc::lookupGraphMethod(llvm::StringRef name) {
  auto it = llvm::find_if(graphMethodTable, [&](const GraphMethodInfo &info) {
    return info.name == name;
  });
  return it == std::end(graphMethodTable) ? nullptr : it;
}
