//===- TestSupport.h - Shared helpers of the interpreter tests --*- C++ -*-===//
//
// Part of gnnc. What the unit tests that compile .gnn sources or gnn IR and
// run them in the reference interpreter share: random power-law test graphs
// with their corner cases, compiling (front end and MLIRGen, hand-written
// IR, pass pipelines), random arguments for a function, and the table of
// the layers and models of dsl-examples/*.gnn.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_SUPPORT_TESTSUPPORT_H
#define GNNC_TESTS_SUPPORT_TESTSUPPORT_H

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Interpreter/Interpreter.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

// GCC 12 at -O3 reports std::variant members copied into vectors of
// interp::Value (argument lists) as maybe uninitialised: a known false
// positive, in every test that includes this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace gnnc::testing_support {

using GK = gnn::GraphKind;
using Graph = rt::Graph;
using GraphPtr = std::shared_ptr<const Graph>;
using Tensor = interp::Tensor<double>;
using Args = std::vector<interp::Value<double>>;

/// The root of the source tree (examples, goldens, lit inputs).
inline constexpr llvm::StringLiteral kRoot = GNNC_SOURCE_DIR;

/// dsl-examples/`name` under kRoot.
std::string examplePath(llvm::StringRef name);

/// Every dsl-examples/*.gnn under kRoot, sorted.
std::vector<std::string> exampleFiles();

/// Success when `s` is, else its message.
::testing::AssertionResult isOk(const rt::Status &s);

/// `name` with every character but letters and digits replaced by '_', as
/// GoogleTest wants parameterised test names.
std::string testName(llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

using Edges = std::vector<std::pair<int64_t, int64_t>>;

GraphPtr makeGraph(const Edges &edges, int64_t numSrc, int64_t numDst);
/// The edges src[i] -> dst[i].
GraphPtr makeGraph(const std::vector<int64_t> &src,
                   const std::vector<int64_t> &dst, int64_t numSrc,
                   int64_t numDst);

/// Adds `loops` self-loops on vertices below `n` and `dups` copies of
/// existing edges (multi-edges) at random positions of the edge list, so
/// that they are interleaved with the other edges in CSR order.
void addLoopsAndDuplicates(Edges &edges, int64_t n, int loops, int dups,
                           std::mt19937_64 &rng);

/// R-MAT: each edge picks a quadrant of the adjacency matrix recursively
/// with probabilities a, b, c, d. The degrees follow a power law; many
/// high-numbered vertices end up without edges.
Edges rmatEdges(int scale, int64_t numEdges, std::mt19937_64 &rng);

/// Preferential attachment (Barabasi-Albert, directed at random): each new
/// vertex links to `m` earlier vertices chosen with probability growing
/// with their degree. The last `isolated` vertices get no edges.
Edges preferentialEdges(int64_t n, int m, int64_t isolated,
                        std::mt19937_64 &rng);

Edges reversed(const Edges &edges);

/// One graph argument, in whatever kind a function wants.
struct TestGraph {
  std::string name;
  GK kind = GK::graph;
  GraphPtr graph;
  std::vector<int64_t> graphOf;              // batched
  int64_t numGraphs = 0;                     // batched
  std::map<std::string, GraphPtr> relations; // hetero
  /// Vertex count for graph-less functions.
  int64_t numVertices = 0;
  /// Blocks that chain (each one's destinations are the next one's
  /// sources), one per graph argument of a function that takes several
  /// (`forward(g1: Block[N0, N1], g2: Block[N1, N2], ...)`); `graph` is
  /// the first. Sources count those of the first, destinations those of
  /// the last.
  std::vector<GraphPtr> blocks;

  /// The value of graph argument `k` (of the k-th block of a chain).
  interp::GraphValue value(size_t k = 0) const;
  int64_t numSrc() const { return graph ? graph->numSrc() : numVertices; }
  int64_t numDst() const {
    if (!blocks.empty())
      return blocks.back()->numDst();
    return graph ? graph->numDst() : numVertices;
  }
  int64_t numEdges() const { return graph ? graph->numEdges() : 0; }
};

TestGraph named(std::string name, GK kind, GraphPtr graph = nullptr);

/// The interpreter's value of graph `g` of kind `kind`.
interp::GraphValue graphValue(GraphPtr g, GK kind = GK::graph);

/// R-MAT edges on 2^scale vertices, then `loops` self-loops and `dups`
/// multi-edges.
struct RmatSpec {
  int scale = 0;
  int64_t edges = 0;
  int loops = 0, dups = 0;

  int64_t vertices() const { return int64_t{1} << scale; }
  Edges draw(std::mt19937_64 &rng) const;
};

/// Preferential attachment, then `loops` self-loops (on the vertices that
/// are not isolated) and `dups` multi-edges.
struct PreferentialSpec {
  int64_t vertices = 0;
  int links = 0;
  int64_t isolated = 0;
  int loops = 0, dups = 0;

  Edges draw(std::mt19937_64 &rng) const;
};

/// One member graph of a batch: R-MAT edges (`vertices` a power of two)
/// when `rmatEdges` > 0, else preferential attachment with `links` per
/// vertex when that is > 0, else no edges; then one self-loop and two
/// multi-edges when it has vertices.
struct BatchMember {
  int64_t vertices = 0;
  int64_t rmatEdges = 0;
  int links = 0;
  int64_t isolated = 0;
};

/// A bipartite block: destination v is source v too; it has an edge from
/// itself and 1 + floor(degreeScale / (1 + v)) more from sources drawn with
/// a skew (`skew` > 1) towards low ids (repeats are multi-edges), except
/// every fourth destination, which has no in-edges.
struct BlockSpec {
  int64_t numSrc = 0, numDst = 0;
  double degreeScale = 0;
  double skew = 1;
  /// Whether to add a copy of the first edge (multi-edges then do not
  /// depend on the sources drawn).
  bool extraMultiEdge = false;
};

/// The random graphs, of every kind, that one test file runs functions on
/// (see ofKind): each file picks sizes and seeds, large for differential
/// tests, small where every run counts (finite differences).
struct GraphSuite {
  /// homogeneousGraphs(): an R-MAT and a preferential-attachment graph,
  /// a graph of `noEdges` vertices without edges and one vertex with two
  /// self-loops.
  uint64_t homogeneousSeed = 0;
  RmatSpec rmat;
  PreferentialSpec preferential;
  int64_t noEdges = 0;
  /// batchedGraphs(): one batch of these members; no edge crosses members.
  uint64_t batchedSeed = 0;
  std::vector<BatchMember> batch;
  /// blockGraphs()
  uint64_t blockSeed = 0;
  BlockSpec block;
  /// heteroGraphs(): relations "cites" (R-MAT) and "cited_by" (its reverse),
  /// and a sparse pair of relations on 5 vertices.
  uint64_t heteroSeed = 0;
  RmatSpec hetero;
  /// The vertex count of graph-less functions.
  int64_t noGraphVertices = 0;
  /// Whether to add the graphs of one vertex without edges, a batch
  /// without edges and a block without edges.
  bool moreCornerCases = false;

  std::vector<TestGraph> homogeneousGraphs() const;
  std::vector<TestGraph> batchedGraphs() const;
  std::vector<TestGraph> blockGraphs() const;
  std::vector<TestGraph> heteroGraphs() const;
  /// chainedBlocks(n): `n` blocks that chain, the first drawn as
  /// blockGraphs()'s, each next one with the previous one's destinations as
  /// sources and about half as many destinations.
  std::vector<TestGraph> chainedBlocks(size_t n) const;
  /// The graphs of `kind`; without a kind (a graph-less function), one
  /// placeholder with noGraphVertices vertices.
  std::vector<TestGraph> ofKind(std::optional<GK> kind) const;
  /// The graphs @entry runs on: ofKind(its graph kind), or chained blocks
  /// when it takes several graphs.
  std::vector<TestGraph> forEntry(mlir::ModuleOp module,
                                  const std::string &entry) const;
};

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// Reads the text file at `path`.
::testing::AssertionResult readText(const std::string &path, std::string &text);

/// Runs the front end and MLIRGen on `source` (named `bufferName` in
/// diagnostics) for `entry` (every definition when empty) with `defines`.
/// The front end's and MLIR's diagnostics go to the failure message.
::testing::AssertionResult
lowerGNN(mlir::MLIRContext &context, llvm::StringRef source,
         llvm::StringRef bufferName, const std::string &entry,
         const std::map<std::string, double> &defines,
         mlir::OwningOpRef<mlir::ModuleOp> &module);

/// lowerGNN on dsl-examples/`file`.
::testing::AssertionResult
lowerExample(mlir::MLIRContext &context, const std::string &file,
             const std::string &entry,
             const std::map<std::string, double> &defines,
             mlir::OwningOpRef<mlir::ModuleOp> &module);

/// Parses gnn IR written by hand.
::testing::AssertionResult
parseModule(mlir::MLIRContext &context, llvm::StringRef ir,
            mlir::OwningOpRef<mlir::ModuleOp> &module);

/// Runs the passes `build` adds on `module` and verifies the result.
::testing::AssertionResult
runPipeline(mlir::MLIRContext &context, mlir::ModuleOp module,
            const std::function<void(mlir::PassManager &)> &build);

/// How many ops named `name` `root` holds, bodies included.
int64_t countOps(mlir::Operation *root, llvm::StringRef name);

/// The kind of @entry's graph argument, if it has one.
std::optional<GK> graphKindOf(mlir::ModuleOp module, const std::string &entry);
/// How many graph arguments @entry takes.
size_t graphCountOf(mlir::ModuleOp module, const std::string &entry);

//===----------------------------------------------------------------------===//
// Arguments and running
//===----------------------------------------------------------------------===//

enum class Count { Dst, Src, Edges, Graphs };

/// How to make the arguments of one function.
struct ArgSpec {
  /// What a `?` dimension of a named argument counts; vertices (the
  /// destinations) by default.
  std::map<std::string, Count> dynamic;
  /// Arguments to multiply by a factor after drawing them.
  std::map<std::string, double> scale;
  /// Arguments drawn from [0.5, 2] instead of [-1, 1] (log, sqrt, pow).
  std::set<std::string> positive;
};

/// The parameter path or source name of argument `i`, else "arg<i>".
std::string argName(mlir::func::FuncOp func, unsigned i);

/// A dense tensor of `shape` drawn uniformly from [-1, 1] (or [0.5, 2]
/// when `positive`), times `factor`.
Tensor randomTensor(std::vector<int64_t> shape, std::mt19937_64 &rng,
                    bool positive = false, double factor = 1.0);

/// `graph` for graph arguments (the k-th block of a chain for the k-th
/// graph argument) and random tensors, sized after `graph`, for the others.
::testing::AssertionResult makeArgs(mlir::func::FuncOp func,
                                    const TestGraph &graph, const ArgSpec &spec,
                                    uint64_t seed, Args &args);
::testing::AssertionResult makeArgs(mlir::ModuleOp module,
                                    const std::string &entry,
                                    const TestGraph &graph, const ArgSpec &spec,
                                    uint64_t seed, Args &args);

/// Runs @fn, which returns one tensor.
::testing::AssertionResult run(mlir::ModuleOp module, const std::string &fn,
                               const Args &args, Tensor &out, bool training);
/// Runs @fn, which returns any number of tensors.
::testing::AssertionResult run(mlir::ModuleOp module, const std::string &fn,
                               const Args &args, std::vector<Tensor> &out,
                               bool training);

//===----------------------------------------------------------------------===//
// The layers and models of the examples
//===----------------------------------------------------------------------===//

/// One definition of dsl-examples/`file` with small hyper-parameters.
struct ExampleCase {
  std::string file;
  std::string entry;
  std::map<std::string, double> defines;
  ArgSpec spec;
  /// Whether training mode differs from inference (the layer has dropout).
  bool hasDropout = false;
};

void PrintTo(const ExampleCase &c, std::ostream *os);

/// Which hyper-parameters exampleCases gives the definitions.
enum class ExampleSizes {
  /// A few more units, for comparing two computations of the same layer
  /// (FusionDifferentialTest.cpp).
  Differential,
  /// Fewer, for finite differences, where every gradient element costs two
  /// runs (AutodiffTest.cpp).
  FiniteDifferences,
};

/// Every layer and model of every example, in `sizes`.
std::vector<ExampleCase> exampleCases(ExampleSizes sizes);

/// "<file stem>_<entry>", fit for a test name.
std::string caseName(const ExampleCase &c);

/// Expects `cases` to list every layer and model of every example.
void expectEveryDefinitionCovered(const std::vector<ExampleCase> &cases);

/// Layers beyond the examples: multi-head attention over a bipartite block
/// (BlockAttn), attention over each source's out-edges (OutAttn, and
/// OutAttnMSGL in MSGL's spelling), and row-local ops of every kind in
/// merged reductions (RowOps).
extern const char *const kExtraLayers;

} // namespace gnnc::testing_support

#endif // GNNC_TESTS_SUPPORT_TESTSUPPORT_H
