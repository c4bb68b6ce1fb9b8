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
  }
};
} // namespace
