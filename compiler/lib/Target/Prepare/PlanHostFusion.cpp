//===- PlanHostFusion.cpp - Fused host calls, decided and recorded --------===//
//
// Part of gnnc.
//
// Marks the host ops that the C++ printer prints as one runtime call with
// another (gnnc/Target/HostPlan.h):
//
//   %t = gnn.transpose %w              {gnn.host_fusion = "transposed_read"}
//   %y = gnn.matmul %x, %t             rt::matmulT(x, false, w, true, ...)
//
//   %a = gnn.gather %x ...             {gnn.fusion_group = 0}
//   %b = gnn.gather %y ...             {gnn.fusion_group = 0}
//   %m = gnn.binary mul %a, %b         {gnn.fusion_group = 0}
//   %s = gnn.reduce sum %m             {gnn.fusion_group = 0,
//                                       gnn.host_fusion = "gather_dot"}
//
//   %d = gnn.dropout %x                {gnn.fusion_group = 1}
//   %y = gnn.matmul %d, %w             {gnn.fusion_group = 1,
//                                       gnn.host_fusion = "dropout_matmul"}
//                                      rt::dropoutMatmul(x, w, y, ...)
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/Passes.h"

#include "gnnc/Target/HostPlan.h"

namespace gnnc::target {
#define GEN_PASS_DEF_GNNKPLANHOSTFUSION
#include "gnnc/Target/Passes.h.inc"
} // namespace gnnc::target

using namespace mlir;
using namespace gnnc;

namespace {

struct PlanHostFusionPass
    : target::impl::GNNKPlanHostFusionBase<PlanHostFusionPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (target::isHostFunction(func))
        target::planHostFusions(func);
  }
};

} // namespace
