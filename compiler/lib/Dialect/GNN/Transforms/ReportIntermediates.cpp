//===- ReportIntermediates.cpp - Bytes of intermediate tensors ------------===//
//
// Part of gnnc. Measures what fusion saves: the bytes of every tensor a
// function computes on the way to its result, for given vertex and edge
// counts (on kernel IR, after the host fusions of its host plan).
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace gnnc::gnn {
#define GEN_PASS_DEF_GNNREPORTINTERMEDIATES
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnnc::gnn

using namespace mlir;
using namespace gnnc::gnn;

namespace {
struct ReportPass
    : public gnnc::gnn::impl::GNNReportIntermediatesBase<ReportPass> {
  using GNNReportIntermediatesBase::GNNReportIntermediatesBase;

  /// Bytes of one tensor value for the configured graph size.
  int64_t bytesOf(DomainTensorType t) {
    int64_t elements = 1;
    for (int64_t d : t.getShape())
      elements *= ShapedType::isDynamic(d) ? vertices.getValue() : d;
    switch (t.getDomain()) {
    case Domain::src:
    case Domain::dst:
      elements *= vertices;
      break;
    case Domain::edge:
      elements *= edges;
      break;
    case Domain::dense:
      break;
    }
    return elements * ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  }

  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      int64_t total = 0;
      std::map<std::string, int64_t> byDomain;
      for (Operation &op : func.getBody().front()) {
        // Views do not allocate: attach, collect and reshape reuse storage.
        if (isa<AttachOp, CollectOp, ReshapeOp>(op))
          continue;
        // Nor do the ops a host fusion absorbs, on kernel IR with the host
        // plan: those of a fusion group other than its root, and the
        // transposes and broadcasts read in place.
        auto fusion = op.getAttrOfType<StringAttr>(kHostFusionAttrName);
        if ((!fusion && op.hasAttr(kFusionGroupAttrName)) ||
            (fusion && (fusion.getValue() == "transposed_read" ||
                        fusion.getValue() == "broadcast_read")))
          continue;
        for (Value result : op.getResults()) {
          auto t = dyn_cast<DomainTensorType>(result.getType());
          if (!t)
            continue;
          int64_t bytes = bytesOf(t);
          total += bytes;
          byDomain[stringifyDomain(t.getDomain()).str()] += bytes;
        }
      }
      os << llvm::formatv("@{0}: {1} bytes of intermediates (N={2}, E={3})",
                          func.getName(), total, vertices.getValue(),
                          edges.getValue());
      for (auto &[domain, bytes] : byDomain)
        os << llvm::formatv("; {0} {1}", domain, bytes);
      os << "\n";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
