//===- TestSupport.cpp - Shared helpers of the interpreter tests ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace gnnc::testing_support {

std::string examplePath(llvm::StringRef name) {
  llvm::SmallString<256> out(kRoot);
  llvm::sys::path::append(out, "dsl-examples", name);
  return std::string(out);
}

std::vector<std::string> exampleFiles() {
  std::vector<std::string> out;
  std::error_code ec;
  llvm::SmallString<256> dir(kRoot);
  llvm::sys::path::append(dir, "dsl-examples");
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".gnn")
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

::testing::AssertionResult isOk(const rt::Status &s) {
  if (!s.ok())
    return ::testing::AssertionFailure() << s.message();
  return ::testing::AssertionSuccess();
}

std::string testName(llvm::StringRef name) {
  std::string out = name.str();
  for (char &ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return out;
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

GraphPtr makeGraph(const Edges &edges, int64_t numSrc, int64_t numDst) {
  std::vector<int64_t> src, dst;
  for (auto [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  return makeGraph(src, dst, numSrc, numDst);
}

GraphPtr makeGraph(const std::vector<int64_t> &src,
                   const std::vector<int64_t> &dst, int64_t numSrc,
                   int64_t numDst) {
  auto g = std::make_shared<Graph>();
  rt::Status s = Graph::fromEdgeIndex(src.data(), dst.data(),
                                      static_cast<int64_t>(src.size()), numSrc,
                                      numDst, *g);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

void addLoopsAndDuplicates(Edges &edges, int64_t n, int loops, int dups,
                           std::mt19937_64 &rng) {
  for (int i = 0; i < loops; ++i) {
    int64_t v = static_cast<int64_t>(rng() % n);
    edges.insert(edges.begin() + rng() % (edges.size() + 1), {v, v});
  }
  for (int i = 0; i < dups && !edges.empty(); ++i) {
    auto e = edges[rng() % edges.size()];
    edges.insert(edges.begin() + rng() % (edges.size() + 1), e);
  }
}

Edges rmatEdges(int scale, int64_t numEdges, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double a = 0.57, b = 0.19, c = 0.19;
  Edges edges;
  for (int64_t e = 0; e < numEdges; ++e) {
    int64_t u = 0, v = 0;
    for (int bit = 0; bit < scale; ++bit) {
      double r = unit(rng);
      int qu = 0, qv = 0;
      if (r < a) {
      } else if (r < a + b) {
        qv = 1;
      } else if (r < a + b + c) {
        qu = 1;
      } else {
        qu = qv = 1;
      }
      u = 2 * u + qu;
      v = 2 * v + qv;
    }
    edges.push_back({u, v});
  }
  return edges;
}

Edges preferentialEdges(int64_t n, int m, int64_t isolated,
                        std::mt19937_64 &rng) {
  Edges edges;
  std::vector<int64_t> ends; // one entry per edge end: degree-biased pool
  for (int64_t v = 0; v < m; ++v)
    ends.push_back(v);
  for (int64_t v = m; v < n - isolated; ++v) {
    for (int k = 0; k < m; ++k) {
      int64_t t = ends[rng() % ends.size()];
      if (rng() % 2)
        edges.push_back({v, t});
      else
        edges.push_back({t, v});
      ends.push_back(t);
      ends.push_back(v);
    }
  }
  return edges;
}

Edges reversed(const Edges &edges) {
  Edges out;
  for (auto [u, v] : edges)
    out.push_back({v, u});
  return out;
}

interp::GraphValue TestGraph::value(size_t k) const {
  interp::GraphValue v;
  v.kind = kind;
  v.graph = k < blocks.size() ? blocks[k] : graph;
  v.graphOf = graphOf;
  v.numGraphs = numGraphs;
  v.relations = relations;
  v.numVertices = graph ? graph->numDst() : numVertices;
  return v;
}

Edges RmatSpec::draw(std::mt19937_64 &rng) const {
  Edges e = rmatEdges(scale, edges, rng);
  addLoopsAndDuplicates(e, vertices(), loops, dups, rng);
  return e;
}

Edges PreferentialSpec::draw(std::mt19937_64 &rng) const {
  Edges e = preferentialEdges(vertices, links, isolated, rng);
  addLoopsAndDuplicates(e, vertices - isolated, loops, dups, rng);
  return e;
}

TestGraph named(std::string name, GK kind, GraphPtr graph) {
  TestGraph t;
  t.name = std::move(name);
  t.kind = kind;
  t.graph = std::move(graph);
  return t;
}

interp::GraphValue graphValue(GraphPtr g, GK kind) {
  return named("g", kind, std::move(g)).value();
}

std::vector<TestGraph> GraphSuite::homogeneousGraphs() const {
  std::vector<TestGraph> out;
  std::mt19937_64 rng(homogeneousSeed);
  {
    int64_t n = rmat.vertices();
    out.push_back(named("rmat" + std::to_string(n), GK::graph,
                        makeGraph(rmat.draw(rng), n, n)));
  }
  {
    int64_t n = preferential.vertices;
    out.push_back(named("preferential" + std::to_string(n), GK::graph,
                        makeGraph(preferential.draw(rng), n, n)));
  }
  out.push_back(named("no_edges" + std::to_string(noEdges), GK::graph,
                      makeGraph({}, noEdges, noEdges)));
  if (moreCornerCases)
    out.push_back(named("one_vertex", GK::graph, makeGraph({}, 1, 1)));
  out.push_back(named("one_vertex_two_loops", GK::graph,
                      makeGraph({{0, 0}, {0, 0}}, 1, 1)));
  return out;
}

std::vector<TestGraph> GraphSuite::batchedGraphs() const {
  std::vector<TestGraph> out;
  std::mt19937_64 rng(batchedSeed);
  Edges edges;
  std::vector<int64_t> graphOf;
  int64_t offset = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    const BatchMember &m = batch[b];
    int64_t n = m.vertices;
    Edges local;
    if (m.rmatEdges > 0)
      local = rmatEdges(static_cast<int>(llvm::Log2_64(n)), m.rmatEdges, rng);
    else if (m.links > 0)
      local = preferentialEdges(n, m.links, m.isolated, rng);
    if (n > 0)
      addLoopsAndDuplicates(local, n, 1, 2, rng);
    for (auto [u, v] : local)
      edges.push_back({u + offset, v + offset});
    for (int64_t i = 0; i < n; ++i)
      graphOf.push_back(static_cast<int64_t>(b));
    offset += n;
  }
  TestGraph t = named("batched" + std::to_string(batch.size()), GK::batched,
                      makeGraph(edges, offset, offset));
  t.graphOf = graphOf;
  t.numGraphs = static_cast<int64_t>(batch.size());
  out.push_back(t);
  if (moreCornerCases) {
    TestGraph lone =
        named("batched_no_edges", GK::batched, makeGraph({}, 3, 3));
    lone.graphOf = {0, 0, 1};
    lone.numGraphs = 2;
    out.push_back(lone);
  }
  return out;
}

/// The edges of a BlockSpec block of `numSrc` sources and `numDst`
/// destinations.
static Edges drawBlock(const BlockSpec &block, int64_t numSrc, int64_t numDst,
                       std::mt19937_64 &rng) {
  Edges edges;
  for (int64_t v = 0; v < numDst; ++v) {
    if (v % 4 == 3)
      continue; // no in-edges
    int64_t degree = 1 + static_cast<int64_t>(block.degreeScale / (1 + v));
    for (int64_t k = 0; k < degree; ++k) {
      // Repeated sources are multi-edges.
      int64_t u = static_cast<int64_t>(
          numSrc *
          std::pow(static_cast<double>(rng() % 1000) / 1000.0, block.skew));
      edges.push_back({u, v});
    }
    edges.push_back({v, v});
  }
  if (block.extraMultiEdge)
    edges.push_back(edges.front());
  std::shuffle(edges.begin(), edges.end(), rng);
  return edges;
}

std::vector<TestGraph> GraphSuite::blockGraphs() const {
  std::vector<TestGraph> out;
  std::mt19937_64 rng(blockSeed);
  const int64_t numSrc = block.numSrc, numDst = block.numDst;
  Edges edges = drawBlock(block, numSrc, numDst, rng);
  out.push_back(
      named("block" + std::to_string(numSrc) + "x" + std::to_string(numDst),
            GK::block, makeGraph(edges, numSrc, numDst)));
  if (moreCornerCases)
    out.push_back(named("block_no_edges", GK::block, makeGraph({}, 4, 2)));
  return out;
}

std::vector<TestGraph> GraphSuite::heteroGraphs() const {
  std::vector<TestGraph> out;
  std::mt19937_64 rng(heteroSeed);
  {
    int64_t n = hetero.vertices();
    Edges cites = hetero.draw(rng);
    TestGraph t = named("hetero" + std::to_string(n), GK::hetero);
    t.relations["cites"] = makeGraph(cites, n, n);
    t.relations["cited_by"] = makeGraph(reversed(cites), n, n);
    t.graph = t.relations["cites"];
    out.push_back(t);
  }
  {
    TestGraph t = named("hetero_sparse", GK::hetero);
    t.relations["cites"] = makeGraph({}, 5, 5);
    t.relations["cited_by"] = makeGraph({{3, 1}, {3, 1}}, 5, 5);
    t.graph = t.relations["cites"];
    out.push_back(t);
  }
  return out;
}

std::vector<TestGraph> GraphSuite::chainedBlocks(size_t n) const {
  std::mt19937_64 rng(blockSeed);
  TestGraph t = named("chain", GK::block);
  int64_t numSrc = block.numSrc, numDst = block.numDst;
  for (size_t k = 0; k < n; ++k) {
    t.blocks.push_back(
        makeGraph(drawBlock(block, numSrc, numDst, rng), numSrc, numDst));
    t.name += "_" + std::to_string(numSrc) + "x" + std::to_string(numDst);
    numSrc = numDst;
    numDst = std::max<int64_t>(1, numDst / 2);
  }
  t.graph = t.blocks.front();
  return {t};
}

std::vector<TestGraph> GraphSuite::forEntry(mlir::ModuleOp module,
                                            const std::string &entry) const {
  size_t n = graphCountOf(module, entry);
  if (n > 1)
    return chainedBlocks(n);
  return ofKind(graphKindOf(module, entry));
}

std::vector<TestGraph> GraphSuite::ofKind(std::optional<GK> kind) const {
  if (!kind) {
    TestGraph t = named("no_graph", GK::graph);
    t.numVertices = noGraphVertices;
    return {t};
  }
  switch (*kind) {
  case GK::graph:
    return homogeneousGraphs();
  case GK::batched:
    return batchedGraphs();
  case GK::block:
    return blockGraphs();
  case GK::hetero:
    return heteroGraphs();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

namespace {

/// Prints MLIR's diagnostics, with their notes, to `os` while it lives.
class CaptureDiagnostics {
public:
  CaptureDiagnostics(mlir::MLIRContext &context, llvm::raw_ostream &os)
      : handler(&context, [&os](mlir::Diagnostic &d) {
          os << d.getLocation() << ": " << d << "\n";
          for (mlir::Diagnostic &note : d.getNotes())
            os << "  note: " << note << "\n";
          return mlir::success();
        }) {}

private:
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace

::testing::AssertionResult readText(const std::string &path,
                                    std::string &text) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return ::testing::AssertionFailure() << "cannot read " << path;
  text = (*buffer)->getBuffer().str();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult
lowerGNN(mlir::MLIRContext &context, llvm::StringRef source,
         llvm::StringRef bufferName, const std::string &entry,
         const std::map<std::string, double> &defines,
         mlir::OwningOpRef<mlir::ModuleOp> &module) {
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  std::string diagText;
  llvm::raw_string_ostream diagOS(diagText);
  DiagnosticEngine diags(sourceMgr, diagOS);
  FrontendResult frontend = runFrontend(id, diags);
  if (!frontend.success)
    return ::testing::AssertionFailure() << diagOS.str();
  MLIRGenOptions options;
  options.entry = entry;
  for (const auto &[name, value] : defines)
    options.defines.emplace(name, DefineValue(value));
  // Verifier failures come through MLIR's diagnostics, not the front end's.
  CaptureDiagnostics capture(context, diagOS);
  module = mlirGen(context, *frontend.module, diags, options);
  if (!module)
    return ::testing::AssertionFailure() << diagOS.str();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult
lowerExample(mlir::MLIRContext &context, const std::string &file,
             const std::string &entry,
             const std::map<std::string, double> &defines,
             mlir::OwningOpRef<mlir::ModuleOp> &module) {
  std::string source;
  if (auto ok = readText(examplePath(file), source); !ok)
    return ok;
  return lowerGNN(context, source, file, entry, defines, module);
}

::testing::AssertionResult
parseModule(mlir::MLIRContext &context, llvm::StringRef ir,
            mlir::OwningOpRef<mlir::ModuleOp> &module) {
  loadGNNDialects(context);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  CaptureDiagnostics capture(context, os);
  module = mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
  if (!module)
    return ::testing::AssertionFailure() << "cannot parse the IR:\n"
                                         << os.str();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult
runPipeline(mlir::MLIRContext &context, mlir::ModuleOp module,
            const std::function<void(mlir::PassManager &)> &build) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  CaptureDiagnostics capture(context, os);
  mlir::PassManager pm(&context);
  build(pm);
  if (mlir::failed(pm.run(module)))
    return ::testing::AssertionFailure() << "the passes failed:\n" << os.str();
  if (mlir::failed(mlir::verify(module)))
    return ::testing::AssertionFailure() << "the IR does not verify:\n"
                                         << os.str();
  return ::testing::AssertionSuccess();
}

int64_t countOps(mlir::Operation *root, llvm::StringRef name) {
  int64_t n = 0;
  root->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == name)
      ++n;
  });
  return n;
}

std::optional<GK> graphKindOf(mlir::ModuleOp module, const std::string &entry) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  for (mlir::Type t : func.getArgumentTypes())
    if (auto g = mlir::dyn_cast<gnn::GraphType>(t))
      return g.getKind();
  return std::nullopt;
}

size_t graphCountOf(mlir::ModuleOp module, const std::string &entry) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  return llvm::count_if(func.getArgumentTypes(), [](mlir::Type t) {
    return mlir::isa<gnn::GraphType>(t);
  });
}

//===----------------------------------------------------------------------===//
// Arguments and running
//===----------------------------------------------------------------------===//

std::string argName(mlir::func::FuncOp func, unsigned i) {
  if (auto p = func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kParamAttrName))
    return p.getValue().str();
  if (auto n = func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kNameAttrName))
    return n.getValue().str();
  return "arg" + std::to_string(i);
}

Tensor randomTensor(std::vector<int64_t> shape, std::mt19937_64 &rng,
                    bool positive, double factor) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::uniform_real_distribution<double> unit(positive ? 0.5 : -1.0,
                                              positive ? 2.0 : 1.0);
  std::vector<double> data(n);
  for (double &x : data)
    x = factor * unit(rng);
  return Tensor::dense(std::move(shape), std::move(data));
}

::testing::AssertionResult makeArgs(mlir::func::FuncOp func,
                                    const TestGraph &graph, const ArgSpec &spec,
                                    uint64_t seed, Args &args) {
  std::mt19937_64 rng(seed);
  args.clear();
  size_t graphs = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    mlir::Type type = func.getArgument(i).getType();
    if (mlir::isa<gnn::GraphType>(type)) {
      args.push_back(graph.value(graphs++));
      continue;
    }
    std::string name = argName(func, i);
    Count count = Count::Dst;
    if (auto it = spec.dynamic.find(name); it != spec.dynamic.end())
      count = it->second;
    std::vector<int64_t> shape;
    for (int64_t d : mlir::cast<gnn::DomainTensorType>(type).getShape())
      shape.push_back(!mlir::ShapedType::isDynamic(d) ? d
                      : count == Count::Src           ? graph.numSrc()
                      : count == Count::Dst           ? graph.numDst()
                      : count == Count::Graphs        ? graph.numGraphs
                                                      : graph.numEdges());
    double factor = 1.0;
    if (auto it = spec.scale.find(name); it != spec.scale.end())
      factor = it->second;
    args.push_back(randomTensor(std::move(shape), rng,
                                spec.positive.count(name) > 0, factor));
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult makeArgs(mlir::ModuleOp module,
                                    const std::string &entry,
                                    const TestGraph &graph, const ArgSpec &spec,
                                    uint64_t seed, Args &args) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  if (!func)
    return ::testing::AssertionFailure() << "no @" << entry;
  return makeArgs(func, graph, spec, seed, args);
}

::testing::AssertionResult run(mlir::ModuleOp module, const std::string &fn,
                               const Args &args, Tensor &out, bool training) {
  interp::RunOptions options;
  options.training = training;
  return isOk(interp::run<double>(module, fn, args, out, options));
}

::testing::AssertionResult run(mlir::ModuleOp module, const std::string &fn,
                               const Args &args, std::vector<Tensor> &out,
                               bool training) {
  interp::RunOptions options;
  options.training = training;
  return isOk(interp::runAll<double>(module, fn, args, out, options));
}

//===----------------------------------------------------------------------===//
// The layers and models of the examples
//===----------------------------------------------------------------------===//

void PrintTo(const ExampleCase &c, std::ostream *os) {
  *os << c.file << " " << c.entry;
}

std::vector<ExampleCase> exampleCases(ExampleSizes sizes) {
  const ArgSpec plain;
  ArgSpec block;
  block.dynamic["x_src"] = Count::Src;
  ArgSpec gin;
  gin.dynamic["w"] = Count::Edges;
  // One block's sources, or the first block's of a chain.
  ArgSpec blockX;
  blockX.dynamic["x"] = Count::Src;
  struct Row {
    const char *file, *entry;
    ArgSpec spec;
    bool hasDropout;
    std::map<std::string, double> differential, finiteDifferences;
  };
  // clang-format off
  const Row rows[] = {
      {"appnp.gnn", "MLP", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"out_dim", 3}, {"drop", 0.5}},
       {{"in_dim", 4}, {"hidden", 3}, {"out_dim", 2}, {"drop", 0.5}}},
      {"appnp.gnn", "APPNPProp", plain, false,
       {{"dim", 3}, {"k", 4}},
       {{"dim", 3}, {"k", 3}}},
      {"appnp.gnn", "APPNP", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}, {"k", 4}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}, {"k", 3}}},
      {"gat.gnn", "GATConv", plain, true,
       {{"in_dim", 5}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}},
       {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}},
      {"gat.gnn", "GATConvMean", plain, true,
       {{"in_dim", 5}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}},
       {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}},
      {"gat.gnn", "GAT", plain, true,
       {{"in_dim", 5}, {"hidden", 3}, {"heads", 2}, {"classes", 4}},
       {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}},
      {"gat2_block.gnn", "GATBlockConv", blockX, true,
       {{"in_dim", 5}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}},
       {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}},
      {"gat2_block.gnn", "GAT2Block", blockX, true,
       {{"in_dim", 5}, {"hidden", 3}, {"heads", 2}, {"classes", 4}},
       {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}},
      {"gat_msgl.gnn", "GATConv", plain, true,
       {{"in_dim", 5}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}},
       {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}},
      {"gat_msgl.gnn", "GAT", plain, true,
       {{"in_dim", 5}, {"hidden", 3}, {"heads", 2}, {"classes", 4}},
       {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}},
      {"gatv2.gnn", "GATv2Conv", plain, true,
       {{"in_dim", 5}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}},
       {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}},
      {"gatv2.gnn", "GATv2", plain, true,
       {{"in_dim", 5}, {"hidden", 3}, {"heads", 2}, {"classes", 4}},
       {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}},
      {"gcn.gnn", "GCNConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"gcn.gnn", "GCN", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
      {"gin.gnn", "GINConv", gin, false,
       {{"in_dim", 5}, {"out_dim", 3}, {"mlp_dim", 4}, {"eps", 0.1}},
       {{"in_dim", 4}, {"out_dim", 2}, {"mlp_dim", 3}, {"eps", 0.1}}},
      {"gin.gnn", "GIN", gin, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}, {"eps", 0.1}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}, {"eps", 0.1}}},
      {"out_gcn.gnn", "DirGCNConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}, {"alpha", 0.3}},
       {{"in_dim", 4}, {"out_dim", 3}, {"alpha", 0.3}}},
      {"out_gcn.gnn", "DirGCN", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
      {"readout.gnn", "BatchGCNConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"readout.gnn", "GCNGraphClassifier", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
      {"rgcn.gnn", "RelConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"rgcn.gnn", "RGCNConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"rgcn.gnn", "RGCN", plain, false,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
      {"sage2_block.gnn", "SAGEBlockConv", blockX, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"sage2_block.gnn", "GraphSAGE2Block", blockX, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
      {"sage_block.gnn", "SAGEBlockConv", block, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"sage_block.gnn", "SAGEBlockNet", block, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
      {"sage_max.gnn", "SAGEPoolConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}, {"pool_dim", 6}},
       {{"in_dim", 4}, {"out_dim", 3}, {"pool_dim", 5}}},
      {"sage_max.gnn", "GraphSAGEPool", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}, {"pool", 6}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}, {"pool", 5}}},
      {"sage_mean.gnn", "SAGEConv", plain, false,
       {{"in_dim", 5}, {"out_dim", 4}},
       {{"in_dim", 4}, {"out_dim", 3}}},
      {"sage_mean.gnn", "GraphSAGE", plain, true,
       {{"in_dim", 5}, {"hidden", 4}, {"classes", 3}},
       {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}},
  };
  // clang-format on
  std::vector<ExampleCase> out;
  for (const Row &r : rows)
    out.push_back({r.file, r.entry,
                   sizes == ExampleSizes::Differential ? r.differential
                                                       : r.finiteDifferences,
                   r.spec, r.hasDropout});
  return out;
}

std::string caseName(const ExampleCase &c) {
  return testName(llvm::sys::path::stem(c.file).str() + "_" + c.entry);
}

void expectEveryDefinitionCovered(const std::vector<ExampleCase> &cases) {
  std::set<std::pair<std::string, std::string>> covered;
  for (const ExampleCase &c : cases)
    covered.insert({c.file, c.entry});
  int files = 0;
  for (const std::string &path : exampleFiles()) {
    ++files;
    std::string file = llvm::sys::path::filename(path).str();
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    ASSERT_TRUE(bool(buffer)) << file;
    llvm::SourceMgr sourceMgr;
    unsigned id =
        sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    std::string diagText;
    llvm::raw_string_ostream diagOS(diagText);
    DiagnosticEngine diags(sourceMgr, diagOS);
    FrontendResult frontend = runFrontend(id, diags);
    ASSERT_TRUE(frontend.success) << diagText;
    for (const auto &def : frontend.module->definitions)
      EXPECT_TRUE(covered.count({file, def->name.name}))
          << file << ": " << def->name.name << " is not tested";
  }
  EXPECT_EQ(files, 14);
}

const char *const kExtraLayers = R"(
# Multi-head attention over a bipartite block.
layer BlockAttn(d: int = 3, heads: int = 2, attn_drop: float = 0.4):
    param a_src: f32[heads, d] = glorot
    param a_dst: f32[heads, d] = glorot

    def forward(g: Block, x_src: f32[N_src, heads, d],
                x_dst: f32[N_dst, heads, d]) -> f32[N_dst, heads, d]:
        g.set_src_attr({"h": x_src, "es": sum(x_src * a_src, -1, keepdims=True)})
        g.set_dst_attr({"ed": sum(x_dst * a_dst, -1, keepdims=True)})
        for v in g.dst_vertex:
            a = dropout(g.softmax([leaky_relu(u.es + v.ed, 0.2) for u in v.innbs]), attn_drop)
            v.o = g.sum(a * [u.h for u in v.innbs])
        return [v.o for v in g.dst_vertex]

# Attention over each source's out-edges (softmax_sum by src).
layer OutAttn(d: int = 3, attn_drop: float = 0.4):
    def forward(g: Graph, s: f32[N, 1], x: f32[N, d]) -> f32[N, d]:
        g.set_vertex_attr({"s": s, "x": x})
        for v in g.src_vertex:
            a = dropout(g.softmax([w.s * v.s for w in v.outnbs]), attn_drop)
            v.o = g.sum(a * [w.x for w in v.outnbs])
        return [v.o for v in g.src_vertex]

# The same in MSGL's spelling.
layer OutAttnMSGL(d: int = 3, attn_drop: float = 0.4):
    def forward(g: Graph, s: f32[N, 1], x: f32[N, d]) -> f32[N, d]:
        g.set_vertex_attr({"s": s, "x": x})
        for v in g.src_vertex:
            edge = [exp(w.s * v.s) for w in v.outnbs]
            attn = dropout([c / g.sum(edge) for c in edge], attn_drop)
            v.o = g.sum(attn * [w.x for w in v.outnbs])
        return [v.o for v in g.src_vertex]

# Row-local ops of every kind in the bodies of three merged reductions:
# matmul, reshape, feature softmax and log-softmax, row reductions, concat,
# power, and an f32[E, 2] edge attribute.
layer RowOps(d: int = 4):
    param W: f32[d, 6] = glorot
    param V: f32[3, 2] = glorot

    def forward(g: Graph, x: f32[N, d], w: f32[E, 2]) -> f32[N, 4]:
        g.set_vertex_attr({"h": x})
        g.set_edge_attr({"w": w})
        for v in g.dst_vertex:
            v.o = g.sum([(softmax(reshape(u.h @ W, [2, 3]), -1) @ V) * reshape(e.w, [2, 1]) for u, e in v.inedges])
            v.c = g.min([concat([tanh(u.h), abs(v.h - u.h) ** 2.0], 0) for u in v.innbs])
            v.q = g.avg([max(elu(u.h), axis=0, keepdims=True) + log_softmax(v.h, -1) for u in v.innbs])
        o = reshape([v.o for v in g.dst_vertex], [N, 4])
        c = sum([v.c for v in g.dst_vertex], -1, keepdims=True)
        q = mean([v.q for v in g.dst_vertex], -1, keepdims=True)
        return o + c - q
)";

} // namespace gnnc::testing_support
