//===- PlanWorkspace.cpp - Workspace slots, decided and recorded ----------===//
//
// Part of gnnc.
//
// Records, on every host function, the workspace plan of each printer
// (gnnc/Target/HostPlan.h):
//
//   func.func @GCN(...) attributes {gnn.workspace = {cpp = [
//       {bytes = "align64(4 * (N * 16))", kind = "buffer", live = array<i64: 1, 3>, op = 1 : i64,
//        result = 0 : i64}, ...], cuda = [...]}}
//
// A module whose host code the shape analysis cannot handle gets no plan:
// the printer, which plans kernel IR without one itself, reports why.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/Passes.h"

#include "gnnc/Target/HostPlan.h"

#include "mlir/IR/Diagnostics.h"

namespace gnnc::target {
#define GEN_PASS_DEF_GNNKPLANWORKSPACE
#include "gnnc/Target/Passes.h.inc"
} // namespace gnnc::target

using namespace mlir;
using namespace gnnc;

namespace {

struct PlanWorkspacePass
    : target::impl::GNNKPlanWorkspaceBase<PlanWorkspacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The C++ plan reads the recorded host fusions.
    for (auto func : module.getOps<func::FuncOp>())
      if (target::isHostFunction(func) &&
          !func->hasAttr(target::kHostFusionsAttr))
        target::planHostFusions(func);
    bool planned = false;
    {
      // What the analysis cannot handle is the printer's to report.
      ScopedDiagnosticHandler quiet(&getContext(),
                                    [](Diagnostic &) { return success(); });
      planned =
          succeeded(target::planWorkspaces(module, target::cppHostTraits())) &&
          succeeded(target::planWorkspaces(module, target::cudaHostTraits()));
    }
    if (!planned)
      for (auto func : module.getOps<func::FuncOp>())
        func->removeAttr(target::kWorkspaceAttr);
  }
};

} // namespace
