//===- HtmlView.h - The compilation as one HTML page ------------*- C++ -*-===//
//
// Part of gnnc. `gnnc FILE.gnn --emit=html -o PAGE.html` shows the .gnn
// source beside every stage the compiler printed (the fused gnn IR, the
// kernel IR, the generated C++ and CUDA files), linked line to line both
// ways, with the compiler's decisions drawn where they apply: each fused
// gather-compute-scatter kernel over its source lines, each
// rematerialisation decision on its line. The page needs nothing but
// itself (no network, no external file). docs/html-view.md describes it.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_HTMLVIEW_H
#define GNNC_TARGET_HTMLVIEW_H

#include "gnnc/Target/LineMap.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::target {

class SourceFiles;

/// One tab of the page: a printed text and the .gnn line of each of its
/// lines (none for lines from no op: boilerplate, closing braces).
struct HtmlTab {
  /// The element id (letters, digits and '-').
  std::string id;
  /// What the tab button says.
  std::string title;
  /// "ir", "cpp" or "cuda".
  std::string target;
  /// The generated file's name, or "fused-ir" / "kernel-ir".
  std::string file;
  /// The highlighting: "mlir" or "cpp".
  std::string language;
  std::string text;
  std::vector<SourceLine> lines;
};

/// `module` as MLIR prints it, each line mapped to the .gnn line of the op
/// that starts on it.
HtmlTab printIRTab(mlir::ModuleOp module, llvm::StringRef id,
                   llvm::StringRef title, llvm::StringRef file);

/// A fused gather-compute-scatter kernel: one gnn.aggregate of the fused IR.
struct FusedKernel {
  /// The kernel function's name in the kernel IR (`@F.aggregateK`).
  std::string name;
  /// Whether it belongs to a backward function (`@F.backward`).
  bool backward = false;
  /// The .gnn lines of its ops and of the gathers feeding it, sorted.
  std::vector<SourceLine> lines;
  /// What it fused: the rows it gathers ("src 8x8xf32"), the per-edge ops
  /// of its body ("binary add"), its reductions ("softmax_sum by dst").
  std::vector<std::string> gathers, elementwise, scatters;
  /// Bytes per edge of the edge tensors the unfused ops would write and
  /// read back (the gathered rows and every per-edge value of the body).
  int64_t bytesPerEdge = 0;
};

/// Every gnn.aggregate of the fused module, in the order of its functions
/// and, within one, of the kernels' numbering (GNNToGNNK's).
std::vector<FusedKernel> collectFusedKernels(mlir::ModuleOp fused);

/// A line of `--emit=remat-report`: a value of the forward that the
/// backward reads, kept or recomputed.
struct RematDecision {
  SourceLine line;
  /// The function ("@GAT.conv1").
  std::string function;
  /// "store" or "recompute".
  std::string decision;
  /// The rest of the report line: shape, size, op and the reason.
  std::string detail;
};

/// The decisions of a remat report. `sources` are the .gnn files the page
/// shows; the report names them by their base name.
std::vector<RematDecision>
parseRematReport(llvm::StringRef report,
                 const std::vector<std::string> &sources);

/// Everything the page shows.
struct HtmlPage {
  /// The command line, shown in the header.
  std::string command;
  /// The .gnn files, the input first.
  std::vector<std::string> sources;
  std::vector<HtmlTab> tabs;
  std::vector<FusedKernel> kernels;
  std::vector<RematDecision> remat;
  /// The graph size the byte counts assume.
  int64_t vertices = 0, edges = 0;
  bool training = false;
};

/// Writes the page. Deterministic: the same page gives the same bytes.
void printHtmlPage(const HtmlPage &page, SourceFiles &sourceFiles,
                   llvm::raw_ostream &os);

} // namespace gnnc::target

#endif // GNNC_TARGET_HTMLVIEW_H
