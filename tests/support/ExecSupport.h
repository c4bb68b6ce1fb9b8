//===- ExecSupport.h - Running generated code against the interpreter -*- C++
//-*-===//
//
// Part of gnnc. The harness of the execution suite (tests/Target/Exec),
// whatever backend compiled the modules:
//
//   - Array, a float tensor of the generated code, random arrays and the
//     random arguments of an entry point;
//   - EntryCall<Backend>, one call of an entry point through its reflection
//     table (docs/abi.md) and the runtime's invocation (Invoke.h) on a test
//     graph, with the per-backend parts (where tensors and graphs live, how
//     a call is made and waited for) behind a small backend interface;
//   - the reference: a module's source compiled by the front end and run in
//     the interpreter, in float and in double, and the comparison of
//     results with it;
//   - the suite's test graphs, Cora and the PyG goldens' files (also read
//     by the interpreter's GoldenTest).
//
// A backend is a class with
//
//   using ModuleInfo, EntryInfo;             // the backend's ABI structs
//   using Invocation;                        // rt::Invocation or
//                                            // rt::cuda::Invocation
//   static bool available();                 // whether calls can run
//   struct Graphs {                          // a test graph, as it is passed
//     rt::Status status;
//     Invocation::GraphArgs args;
//   };
//   static std::shared_ptr<const Graphs> prepare(const TestGraph &graph);
//   struct Buffers {                         // the tensors of one call
//     rt::Status input(const Array &a, const float *&data);
//     rt::Status output(const std::vector<int64_t> &shape, float *&data);
//     rt::Status workspace(std::size_t bytes, void *&data);
//     rt::Status run(const Invocation &call, bool training, uint64_t seed);
//     rt::Status result(std::size_t i, Array &out);
//     rt::Status readInput(std::size_t i, Array &out);  // after run()
//   };
//
// where output() and workspace() fill exactly what they are asked for with
// NaN, so that anything the call leaves unwritten, or reads before it
// writes it, shows (and AddressSanitizer catches overruns), and run()
// returns when the call is done.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_SUPPORT_EXECSUPPORT_H
#define GNNC_TESTS_SUPPORT_EXECSUPPORT_H

#include "TestSupport.h"

#include "gnnc/runtime/Invoke.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace gnnc::testing_support {

//===----------------------------------------------------------------------===//
// Tolerances
//===----------------------------------------------------------------------===//

/// The generated code computes in float. Against the interpreter in double
/// (the reference): each element within kTolerance relative, elements
/// smaller than kFloor times the output's largest compared at that scale.
/// Against the interpreter in float, whose own rounding differs (matmuls
/// sum in another order than cblas_sgemm), within kFloatTolerance with the
/// smaller floor kFloatFloor.
inline constexpr double kTolerance = 1e-5;
inline constexpr double kFloor = 1e-1;
inline constexpr double kFloatTolerance = 1e-3;
inline constexpr double kFloatFloor = 1e-2;
/// Differences up to this much count as none (as numpy.allclose's atol): a
/// gradient that is 0 in exact arithmetic (a softmax over identical
/// logits) is a few float ulps in float.
inline constexpr double kAbsolute = 1e-7;
/// Gradients come through twice as many float operations as outputs.
inline constexpr double kGradientTolerance = 1e-4;
/// Rows of a thousand edges (longRowsGraph): the float rounding of a sum
/// grows with its length.
inline constexpr double kLongRowTolerance = 1e-4;

/// The largest error of `got` against `want`, relative to each expected
/// value with a floor of `floor * max(scale, max|want|)`, after subtracting
/// `absolute` from each difference. NaN in either is infinite.
double maxRelativeError(const std::vector<float> &got,
                        const std::vector<double> &want, double floor,
                        double scale = 0, double absolute = kAbsolute);

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

/// A tensor of the generated code: float data and its shape.
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// The number of elements of `shape`.
int64_t numElements(const std::vector<int64_t> &shape);

/// Uniform in [-1, 1].
Array randomArray(const std::vector<int64_t> &shape, std::mt19937_64 &rng);

/// A random value for each of the `numArgs` arguments `args` of the given
/// shapes: uniform in [-1, 1], parameters scaled as glorot initialises them
/// (so activations stay of order 1).
std::vector<Array> randomInputs(const rt::TensorInfo *args, int numArgs,
                                const std::vector<std::vector<int64_t>> &shapes,
                                std::mt19937_64 &rng);

/// A .npy file (float32 or float64) as an Array, or its values in double.
::testing::AssertionResult readArray(const std::string &file, Array &out);
std::vector<double> readDoubles(const std::string &file);

/// The parts joined into a path.
std::string joinPath(std::initializer_list<llvm::StringRef> parts);

/// ../shared/datasets/cora and tests/goldens below kRoot.
const std::string &coraDir();
const std::string &goldensDir();

//===----------------------------------------------------------------------===//
// PyG goldens
//===----------------------------------------------------------------------===//

/// The names of the cases of tests/goldens (the folders with a case.json),
/// sorted.
std::vector<std::string> goldenCaseNames();

/// What a golden case holds besides its tensors.
struct GoldenFiles {
  /// tests/goldens/<name> and its case.json.
  std::string dir;
  llvm::json::Object json;
  /// Its graph: Cora, or its own edge_index.npy, with self-loops added
  /// where case.json asks for them.
  std::shared_ptr<rt::Graph> graph;
  /// Why the case cannot run here (Cora is not there), or empty.
  std::string skip;
};

::testing::AssertionResult loadGoldenFiles(const std::string &name,
                                           GoldenFiles &out);

//===----------------------------------------------------------------------===//
// Modules and their entry points
//===----------------------------------------------------------------------===//

/// The -D definitions ("name=value") of a module.
std::map<std::string, double> parseDefines(int numDefines,
                                           const char *const *defines);

template <typename ModuleInfo>
std::map<std::string, double> definesOf(const ModuleInfo &m) {
  return parseDefines(m.numDefines, m.defines);
}

template <typename ModuleInfo>
auto findEntry(const ModuleInfo &m, llvm::StringRef name)
    -> decltype(m.entries) {
  for (int i = 0; i < m.numEntries; ++i)
    if (name == m.entries[i].name)
      return &m.entries[i];
  return nullptr;
}

GK graphKindOf(rt::GraphKind k);

/// The kind of an entry point's first graph; none for graph-less ones.
template <typename EntryInfo>
std::optional<GK> graphKindOf(const EntryInfo &e) {
  if (e.numGraphs == 0)
    return std::nullopt;
  return graphKindOf(e.graphKinds[0]);
}

//===----------------------------------------------------------------------===//
// The reference interpreter
//===----------------------------------------------------------------------===//

/// What the reference interpreter runs.
enum class Stage {
  Unfused,  ///< MLIRGen's module, as written
  Autodiff, ///< plus gnn-autodiff (unfused backward functions)
  Training, ///< the training pipeline gnnc --training runs before kernels
};

/// The gnn module of `source` (the .gnn file), for `entry` with `defines`,
/// at `stage`.
::testing::AssertionResult
compileReference(const std::string &source, const std::string &entry,
                 const std::map<std::string, double> &defines, Stage stage,
                 mlir::MLIRContext &context,
                 mlir::OwningOpRef<mlir::ModuleOp> &module);

/// The same for what generated module `m` was compiled from.
template <typename ModuleInfo>
::testing::AssertionResult
compileReference(const ModuleInfo &m, Stage stage, mlir::MLIRContext &context,
                 mlir::OwningOpRef<mlir::ModuleOp> &module) {
  return compileReference(m.source, m.entry, definesOf(m), stage, context,
                          module);
}

/// Runs @fn of `module` in the interpreter in precision T (float or
/// double): `graph` for graph arguments, `tensors` in order for the others.
template <typename T>
::testing::AssertionResult
interpret(mlir::ModuleOp module, const std::string &fn, const TestGraph &graph,
          const std::vector<Array> &tensors, bool training,
          std::vector<interp::Tensor<T>> &out,
          std::map<std::string, interp::Tensor<T>> *buffers = nullptr);

/// Expects every output to match the interpreter's result; `results` names
/// them.
template <typename T>
void expectClose(const std::vector<Array> &got,
                 const std::vector<interp::Tensor<T>> &want,
                 const rt::TensorInfo *results, const std::string &what,
                 double tolerance, double floor);

/// Expects `got` (the outputs of an entry point whose results are
/// `results`) to be what @fn of `module` computes in the interpreter, in
/// float and in double.
void expectInterpreter(const std::vector<Array> &got, mlir::ModuleOp module,
                       const std::string &fn, const TestGraph &graph,
                       const std::vector<Array> &inputs, bool training,
                       const rt::TensorInfo *results, const std::string &what,
                       double tolerance = kTolerance);

//===----------------------------------------------------------------------===//
// Test graphs
//===----------------------------------------------------------------------===//

/// The graphs of the execution suite: power-law graphs with empty
/// neighbourhoods, self-loops and multi-edges; blocks, batches and
/// heterogeneous graphs, with their corner cases.
const GraphSuite &execGraphs();

/// execGraphs() of `kind`, and for homogeneous graphs a hub: vertex 0 with
/// 100 in-edges and 70 out-edges (more edges than a warp has lanes, so a
/// group loads its edge ids several times and the last load is partial),
/// multi-edges and a self-loop on it, isolated vertices.
std::vector<TestGraph> execGraphsOfKind(std::optional<GK> kind);

/// A homogeneous graph of long rows: vertex 0 with 1101 in-edges and 701
/// out-edges (more than the 512 above which CUDA kernels of 256 threads
/// split a row over a block), vertices 1 and 2 with 513 and 512 in-edges
/// (just above and at that threshold), multi-edges, a self-loop on vertex
/// 0, isolated vertices.
TestGraph longRowsGraph();

//===----------------------------------------------------------------------===//
// Calling an entry point
//===----------------------------------------------------------------------===//

/// One call of entry point `entry` on `graph` through the runtime's
/// invocation (gnnc/runtime/Invoke.h), with a Backend's buffers (see the
/// top of this file).
template <typename Backend> class EntryCall {
public:
  using EntryInfo = typename Backend::EntryInfo;

  EntryCall(const EntryInfo &entry, const TestGraph &graph)
      : entry(entry), device(Backend::prepare(graph)) {
    // Explicit sizes: the vertex count (graph-less layers' N).
    bound =
        invocation.bind(entry, device->args,
                        std::vector<int64_t>(entry.numSizes, graph.numDst()));
    if (bound.ok()) {
      argShapes = invocation.argShapes();
      resultShapes = invocation.resultShapes();
    } else {
      argShapes.resize(entry.numArgs);
      resultShapes.resize(entry.numResults);
    }
  }

  /// Random arguments of this call's shapes (randomInputs).
  std::vector<Array> randomInputs(std::mt19937_64 &rng) const {
    return testing_support::randomInputs(entry.args, entry.numArgs, argShapes,
                                         rng);
  }

  /// Runs the entry point on `inputs` (every tensor argument, in order);
  /// the results marked in `null` get a null pointer. `inputsAfter`, when
  /// given, receives the arguments as the call left them (a training
  /// forward updates its buffers).
  ::testing::AssertionResult run(const std::vector<Array> &inputs,
                                 bool training, uint64_t seed,
                                 std::vector<Array> &outputs,
                                 const std::vector<bool> &null = {},
                                 std::vector<Array> *inputsAfter = nullptr) {
    if (auto ok = isOk(device->status); !ok)
      return ok << " (preparing the graph)";
    if (auto ok = isOk(bound); !ok)
      return ok;
    if (inputs.size() != static_cast<size_t>(entry.numArgs))
      return ::testing::AssertionFailure()
             << entry.name << " takes " << entry.numArgs << " tensors";
    typename Backend::Buffers buffers;
    for (auto [i, a] : llvm::enumerate(inputs)) {
      if (a.shape != argShapes[i])
        return ::testing::AssertionFailure()
               << entry.name << ": argument " << entry.args[i].name
               << " has another shape than the ABI says";
      const float *data = nullptr;
      if (auto ok = isOk(buffers.input(a, data)); !ok)
        return ok;
      invocation.setInput(static_cast<int>(i), data);
    }
    for (auto [i, shape] : llvm::enumerate(resultShapes)) {
      float *data = nullptr;
      if (auto ok = isOk(buffers.output(shape, data)); !ok)
        return ok;
      invocation.setOutput(static_cast<int>(i),
                           i < null.size() && null[i] ? nullptr : data);
    }
    void *workspace = nullptr;
    if (auto ok =
            isOk(buffers.workspace(invocation.workspaceBytes(), workspace));
        !ok)
      return ok;
    invocation.setWorkspace(workspace);
    if (auto ok = isOk(buffers.run(invocation, training, seed)); !ok)
      return ok;
    outputs.assign(resultShapes.size(), Array());
    for (auto [i, a] : llvm::enumerate(outputs)) {
      a.shape = resultShapes[i];
      if (auto ok = isOk(buffers.result(i, a)); !ok)
        return ok;
    }
    if (inputsAfter) {
      inputsAfter->assign(inputs.size(), Array());
      for (auto [i, a] : llvm::enumerate(*inputsAfter)) {
        a.shape = inputs[i].shape;
        if (auto ok = isOk(buffers.readInput(i, a)); !ok)
          return ok;
      }
    }
    return ::testing::AssertionSuccess();
  }

  const EntryInfo &entry;
  std::vector<std::vector<int64_t>> argShapes, resultShapes;

private:
  std::shared_ptr<const typename Backend::Graphs> device;
  typename Backend::Invocation invocation;
  rt::Status bound;
};

} // namespace gnnc::testing_support

#endif // GNNC_TESTS_SUPPORT_EXECSUPPORT_H
