//===- Inference.cpp - Specialise a gnn module for inference --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/Transforms/Passes.h"

namespace gnnc::gnn {
#define GEN_PASS_DEF_GNNINFERENCE
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnnc::gnn

using namespace mlir;
using namespace gnnc::gnn;

namespace {
struct InferencePass : public gnnc::gnn::impl::GNNInferenceBase<InferencePass> {
  void runOnOperation() override {
    getOperation().walk([](DropoutOp op) {
      op.getResult().replaceAllUsesWith(op.getInput());
      op.erase();
    });
    // batch_norm uses its running statistics and leaves them alone.
    getOperation().walk([](UpdateBatchStatsOp op) { op.erase(); });
    getOperation().walk([](TrainingOp op) {
      OpBuilder b(op);
      op.getResult().replaceAllUsesWith(
          b.create<ConstantOp>(op.getLoc(), op.getType(), b.getF64FloatAttr(0))
              .getResult());
      op.erase();
    });
  }
};
} // namespace
