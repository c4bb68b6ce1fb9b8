//===- Interpreter.h - Reference interpreter of the gnn dialect -*- C++ -*-===//
//
// Part of gnnc. Executes unfused gnn IR with plain loops, in float or double.
// It is the oracle later passes and code generators are tested against, so
// it is written to be obviously right, not fast.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_INTERPRETER_INTERPRETER_H
#define GNNC_INTERPRETER_INTERPRETER_H

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace gnnc::interp {

/// A tensor value. Non-dense tensors store their vertex or edge axis first:
/// `shape` is the full shape, `domain` says what the first axis counts.
template <typename T> struct Tensor {
  gnn::Domain domain = gnn::Domain::dense;
  std::vector<int64_t> shape;
  std::vector<T> data;

  int64_t numElements() const;
  static Tensor dense(std::vector<int64_t> shape, std::vector<T> data) {
    return Tensor{gnn::Domain::dense, std::move(shape), std::move(data)};
  }
};

/// A graph argument. A batched graph also says which graph each vertex
/// belongs to; a heterogeneous graph holds one graph per relation.
struct GraphValue {
  gnn::GraphKind kind = gnn::GraphKind::graph;
  std::shared_ptr<const rt::Graph> graph;
  /// Batched graphs: graph id of every vertex, in [0, numGraphs).
  std::vector<int64_t> graphOf;
  int64_t numGraphs = 0;
  /// Heterogeneous graphs: the relations, by name.
  std::map<std::string, std::shared_ptr<const rt::Graph>> relations;
  int64_t numVertices = 0;
};

template <typename T> using Value = std::variant<GraphValue, Tensor<T>>;

struct RunOptions {
  /// Training mode applies dropout, and batch_norm uses the batch's
  /// statistics and updates its buffers; inference mode makes dropout the
  /// identity and batch_norm use the running statistics.
  bool training = false;
};

/// Runs `function` of `module` on `args` (graphs, inputs and parameters in
/// the function's argument order) and stores its result in `result`; the
/// function must have exactly one result.
/// Arguments are checked against the function type: element counts, static
/// dimensions and vertex counts must agree, or an error names the argument.
template <typename T>
rt::Status run(mlir::ModuleOp module, llvm::StringRef function,
               const std::vector<Value<T>> &args, Tensor<T> &result,
               const RunOptions &options = {});

/// Runs a function with any number of results (a backward function made
/// by gnn-autodiff returns one gradient per tensor argument) and stores
/// them, in order, in `results`.
template <typename T>
rt::Status runAll(mlir::ModuleOp module, llvm::StringRef function,
                  const std::vector<Value<T>> &args,
                  std::vector<Tensor<T>> &results,
                  const RunOptions &options = {});

/// runAll that also returns the buffers (parameters marked gnn.buffer) as
/// the run left them, by parameter path: in training mode a batch_norm
/// blends the batch's statistics into its running ones.
template <typename T>
rt::Status runWithBuffers(mlir::ModuleOp module, llvm::StringRef function,
                          const std::vector<Value<T>> &args,
                          std::vector<Tensor<T>> &results,
                          std::map<std::string, Tensor<T>> &buffers,
                          const RunOptions &options = {});

/// The counter-based dropout mask: whether element `index` of the tensor
/// dropped with `seed` is kept, for probability `p` (rt::dropoutKeeps of
/// gnnc/runtime/Random.h, the mask generated code draws).
bool dropoutKeeps(int64_t seed, uint64_t index, double p);

} // namespace gnnc::interp

#endif // GNNC_INTERPRETER_INTERPRETER_H
