//===- Interpreter.cpp - Reference interpreter of the gnn dialect ---------===//
//
// Part of gnnc. Each op is evaluated whole, with plain loops over the
// definition in docs/language.md; nothing is fused or clever.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Interpreter/Interpreter.h"

#include "gnnc/runtime/Random.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

using namespace gnnc;
using namespace gnnc::interp;
using gnn::Domain;
using rt::Status;

template <typename T> int64_t Tensor<T>::numElements() const {
  return static_cast<int64_t>(data.size());
}

bool interp::dropoutKeeps(int64_t seed, uint64_t index, double p) {
  return rt::dropoutKeeps(static_cast<uint64_t>(seed), index, p);
}

namespace {

static int64_t product(llvm::ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + (mlir::ShapedType::isDynamic(shape[i])
                                  ? std::string("?")
                                  : std::to_string(shape[i]));
  return out + "]";
}

/// Row-major strides.
static std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

template <typename T> class Evaluator {
public:
  Evaluator(mlir::ModuleOp module, const RunOptions &options)
      : module(module), options(options) {}

  /// Runs `func`; `buffers`, when given, receives every buffer argument
  /// (gnn.buffer) as the run left it, by argument index.
  Status call(mlir::func::FuncOp func, const std::vector<Value<T>> &args,
              std::vector<Tensor<T>> &results,
              std::map<unsigned, Tensor<T>> *buffers = nullptr);

private:
  Status eval(mlir::Operation *op);
  Status error(mlir::Operation *op, const llvm::Twine &message) {
    std::string where;
    if (auto loc = mlir::dyn_cast<mlir::FileLineColLoc>(op->getLoc()))
      where = llvm::formatv("{0}:{1}:{2}: ", loc.getFilename().str(),
                            loc.getLine(), loc.getColumn())
                  .str();
    return Status::error(where + op->getName().getStringRef().str() + ": " +
                         message.str());
  }

  Tensor<T> &tensor(mlir::Value v) { return std::get<Tensor<T>>(values[v]); }
  GraphValue &graph(mlir::Value v) { return std::get<GraphValue>(values[v]); }
  const rt::Graph &edges(mlir::Value v) { return *graph(v).graph; }
  int64_t countOf(const GraphValue &g, Domain d) {
    switch (d) {
    case Domain::src:
      return g.graph->numSrc();
    case Domain::dst:
      return g.graph->numDst();
    case Domain::edge:
      return g.graph->numEdges();
    case Domain::dense:
      break;
    }
    return 0;
  }
  void set(mlir::Value v, Tensor<T> t) { values[v] = std::move(t); }

  Status binary(gnn::BinaryOp op);
  Status scatter(gnn::ScatterOp op);
  Status aggregate(gnn::AggregateOp op);
  Status edgeSoftmax(gnn::EdgeSoftmaxOp op);
  Status reduce(gnn::ReduceOp op);
  Status reduceSelect(gnn::ReduceSelectOp op);
  Status scatterSelect(gnn::ScatterSelectOp op);
  Status broadcastLike(gnn::BroadcastLikeOp op);
  Status updateBatchStats(gnn::UpdateBatchStatsOp op);

  mlir::ModuleOp module;
  const RunOptions &options;
  llvm::DenseMap<mlir::Value, Value<T>> values;
  /// Inside a gnn.aggregate body: the edge being computed, which keys the
  /// dropout mask as the unfused op on the [E, ...] tensor would.
  std::optional<int64_t> currentEdge;
};

/// Checks an argument against the function's declared type.
template <typename T>
Status checkArgument(const Value<T> &value, mlir::Type type, unsigned index) {
  std::string what = "argument " + std::to_string(index + 1);
  if (auto graphType = mlir::dyn_cast<gnn::GraphType>(type)) {
    const GraphValue *g = std::get_if<GraphValue>(&value);
    if (!g || !g->graph)
      return Status::error(what + ": expected a graph");
    if (g->kind != graphType.getKind())
      return Status::error(what + ": expected a graph of kind " +
                           gnn::stringifyGraphKind(graphType.getKind()).str() +
                           ", got " + gnn::stringifyGraphKind(g->kind).str());
    return Status::success();
  }
  auto tensorType = mlir::cast<gnn::DomainTensorType>(type);
  const Tensor<T> *t = std::get_if<Tensor<T>>(&value);
  if (!t)
    return Status::error(what + ": expected a tensor");
  // A vertex or edge tensor (a value a saving forward hands to its
  // backward) holds its vertex or edge axis first.
  llvm::SmallVector<int64_t> want;
  if (tensorType.getDomain() != gnn::Domain::dense)
    want.push_back(mlir::ShapedType::kDynamic);
  want.append(tensorType.getShape().begin(), tensorType.getShape().end());
  if (t->domain != tensorType.getDomain())
    return Status::error(what + ": expected a " +
                         gnn::stringifyDomain(tensorType.getDomain()).str() +
                         " tensor, got " +
                         gnn::stringifyDomain(t->domain).str());
  bool ok = t->shape.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i)
    ok = mlir::ShapedType::isDynamic(want[i]) || want[i] == t->shape[i];
  if (!ok || product(t->shape) != t->numElements())
    return Status::error(what + ": expected shape " + shapeString(want) +
                         " (? is any size), got " + shapeString(t->shape));
  return Status::success();
}

template <typename T>
Status Evaluator<T>::call(mlir::func::FuncOp func,
                          const std::vector<Value<T>> &args,
                          std::vector<Tensor<T>> &results,
                          std::map<unsigned, Tensor<T>> *buffers) {
  mlir::Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments())
    return Status::error(llvm::formatv("@{0} takes {1} arguments, got {2}",
                                       func.getName(), body.getNumArguments(),
                                       args.size())
                             .str());
  for (unsigned i = 0; i < args.size(); ++i) {
    Status s = checkArgument(args[i], body.getArgument(i).getType(), i);
    if (!s.ok()) {
      std::string name;
      if (auto param =
              func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kParamAttrName))
        name = " (parameter " + param.getValue().str() + ")";
      return Status::error("@" + func.getName().str() + name + ": " +
                           s.message());
    }
    values[body.getArgument(i)] = args[i];
  }
  // Sizes that blocks name (gnn.sizes): the first block to name a size
  // gives its value, and every other block that names it must agree (the
  // second block's sources are the first block's destinations).
  auto argName = [&](unsigned i) -> std::string {
    auto name = func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kNameAttrName);
    return name ? name.getValue().str() : "argument " + std::to_string(i + 1);
  };
  std::map<std::string, std::pair<int64_t, std::string>> named;
  for (unsigned i = 0; i < args.size(); ++i) {
    auto sizes = func.getArgAttrOfType<mlir::ArrayAttr>(i, gnn::kSizesAttrName);
    const GraphValue *g = std::get_if<GraphValue>(&args[i]);
    if (!sizes || !g || !g->graph)
      continue;
    const char *roles[] = {"sources", "destinations", "edges"};
    int64_t counts[] = {g->graph->numSrc(), g->graph->numDst(),
                        g->graph->numEdges()};
    for (auto [k, attr] : llvm::enumerate(sizes)) {
      auto nameAttr = mlir::dyn_cast<mlir::StringAttr>(attr);
      if (k >= 3 || !nameAttr)
        break;
      std::string name = nameAttr.getValue().str();
      std::string what =
          "the " + std::string(roles[k]) + " of '" + argName(i) + "'";
      auto [it, inserted] = named.try_emplace(name, counts[k], what);
      if (!inserted && it->second.first != counts[k])
        return Status::error(llvm::formatv(
            "@{0}: {1} must be {2} ({3} = {4}), got {5}: the blocks do not "
            "chain",
            func.getName(), what, it->second.second, name, it->second.first,
            counts[k]));
    }
  }
  // Dimensions written as graph sizes (N, E, ...) must match the graph.
  const GraphValue *graphArg = nullptr;
  for (unsigned i = 0; i < args.size() && !graphArg; ++i)
    graphArg = std::get_if<GraphValue>(&args[i]);
  for (unsigned i = 0; graphArg && i < args.size(); ++i) {
    auto dims = func.getArgAttrOfType<mlir::ArrayAttr>(i, gnn::kDimsAttrName);
    const Tensor<T> *t = std::get_if<Tensor<T>>(&args[i]);
    if (!dims || !t)
      continue;
    const rt::Graph &g = *graphArg->graph;
    for (auto [d, attr] : llvm::enumerate(dims)) {
      llvm::StringRef name = mlir::cast<mlir::StringAttr>(attr).getValue();
      auto byName = named.find(name.str());
      int64_t want = byName != named.end()            ? byName->second.first
                     : name == "N" || name == "N_dst" ? g.numDst()
                     : name == "N_src"                ? g.numSrc()
                     : name == "E"                    ? g.numEdges()
                     : name == "B"                    ? graphArg->numGraphs
                                                      : -1;
      if (want >= 0 && d < t->shape.size() && t->shape[d] != want) {
        auto argName =
            func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kNameAttrName);
        return Status::error(llvm::formatv(
            "@{0}: argument '{1}': dimension {2} is {3} = {4} for this "
            "graph, got {5}",
            func.getName(), argName ? argName.getValue() : "?", d, name, want,
            t->shape[d]));
      }
    }
  }
  for (mlir::Operation &op : body) {
    if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
      results.clear();
      for (mlir::Value v : ret.getOperands())
        results.push_back(tensor(v));
      if (buffers)
        for (unsigned i = 0; i < body.getNumArguments(); ++i)
          if (func.getArgAttr(i, gnn::kBufferAttrName))
            (*buffers)[i] = tensor(body.getArgument(i));
      return Status::success();
    }
    Status s = eval(&op);
    if (!s.ok())
      return s;
  }
  return Status::error("@" + func.getName().str() + " has no return");
}

template <typename T> Status Evaluator<T>::eval(mlir::Operation *op) {
  using namespace gnn;
  // Graph facts.
  if (auto d = mlir::dyn_cast<InDegreeOp>(op)) {
    const rt::Graph &g = edges(d.getGraph());
    Tensor<T> out = Tensor<T>::dense({g.numDst()}, {});
    for (int64_t v = 0; v < g.numDst(); ++v)
      out.data.push_back(static_cast<T>(g.inDegree(v)));
    set(d.getResult(), std::move(out));
    return Status::success();
  }
  if (auto d = mlir::dyn_cast<OutDegreeOp>(op)) {
    const rt::Graph &g = edges(d.getGraph());
    Tensor<T> out = Tensor<T>::dense({g.numSrc()}, {});
    for (int64_t u = 0; u < g.numSrc(); ++u)
      out.data.push_back(static_cast<T>(g.outDegree(u)));
    set(d.getResult(), std::move(out));
    return Status::success();
  }
  if (auto n = mlir::dyn_cast<NumVerticesOp>(op)) {
    set(n.getResult(),
        Tensor<T>::dense({}, {static_cast<T>(edges(n.getGraph()).numDst())}));
    return Status::success();
  }
  if (auto n = mlir::dyn_cast<NumEdgesOp>(op)) {
    set(n.getResult(),
        Tensor<T>::dense({}, {static_cast<T>(edges(n.getGraph()).numEdges())}));
    return Status::success();
  }
  if (auto n = mlir::dyn_cast<GraphSizesOp>(op)) {
    const GraphValue &g = graph(n.getGraph());
    Tensor<T> out =
        Tensor<T>::dense({g.numGraphs}, std::vector<T>(g.numGraphs, T(0)));
    for (int64_t b : g.graphOf)
      out.data[b] += T(1);
    set(n.getResult(), std::move(out));
    return Status::success();
  }
  if (auto r = mlir::dyn_cast<RelationOp>(op)) {
    GraphValue &hetero = graph(r.getGraph());
    auto it = hetero.relations.find(r.getName().str());
    if (it == hetero.relations.end())
      return error(op, "the graph has no relation '" + r.getName() + "'");
    GraphValue rel;
    rel.kind = GraphKind::graph;
    rel.graph = it->second;
    rel.numVertices = it->second->numDst();
    values[r.getResult()] = rel;
    return Status::success();
  }

  // Moving between domains.
  if (auto a = mlir::dyn_cast<AttachOp>(op)) {
    Tensor<T> t = tensor(a.getInput());
    auto type = mlir::cast<DomainTensorType>(a.getResult().getType());
    int64_t want = countOf(graph(a.getGraph()), type.getDomain());
    if (t.shape.empty() || t.shape[0] != want)
      return error(op, llvm::formatv("a {0} attribute needs {1} rows, got {2}",
                                     stringifyDomain(type.getDomain()), want,
                                     shapeString(t.shape)));
    t.domain = type.getDomain();
    set(a.getResult(), std::move(t));
    return Status::success();
  }
  if (auto c = mlir::dyn_cast<CollectOp>(op)) {
    Tensor<T> t = tensor(c.getInput());
    t.domain = Domain::dense;
    set(c.getResult(), std::move(t));
    return Status::success();
  }
  if (auto s = mlir::dyn_cast<SplatOp>(op)) {
    const Tensor<T> &row = tensor(s.getInput());
    auto type = mlir::cast<DomainTensorType>(s.getResult().getType());
    int64_t count = countOf(graph(s.getGraph()), type.getDomain());
    Tensor<T> out{type.getDomain(), {count}, {}};
    out.shape.insert(out.shape.end(), row.shape.begin(), row.shape.end());
    for (int64_t i = 0; i < count; ++i)
      out.data.insert(out.data.end(), row.data.begin(), row.data.end());
    set(s.getResult(), std::move(out));
    return Status::success();
  }
  if (auto gth = mlir::dyn_cast<GatherOp>(op)) {
    const rt::Graph &g = edges(gth.getGraph());
    const Tensor<T> &in = tensor(gth.getInput());
    int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
    const std::vector<int64_t> &ends =
        in.domain == Domain::src ? g.edgeSrc() : g.edgeDst();
    Tensor<T> out{Domain::edge, in.shape, {}};
    out.shape[0] = g.numEdges();
    out.data.reserve(g.numEdges() * row);
    for (int64_t e = 0; e < g.numEdges(); ++e)
      out.data.insert(out.data.end(), in.data.begin() + ends[e] * row,
                      in.data.begin() + (ends[e] + 1) * row);
    set(gth.getResult(), std::move(out));
    return Status::success();
  }
  if (auto s = mlir::dyn_cast<ScatterOp>(op))
    return scatter(s);
  if (auto s = mlir::dyn_cast<ScatterSelectOp>(op))
    return scatterSelect(s);
  if (auto s = mlir::dyn_cast<EdgeSoftmaxOp>(op))
    return edgeSoftmax(s);
  if (auto a = mlir::dyn_cast<AggregateOp>(op))
    return aggregate(a);
  if (auto r = mlir::dyn_cast<ReadoutOp>(op)) {
    const GraphValue &g = graph(r.getGraph());
    const Tensor<T> &in = tensor(r.getInput());
    int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
    if (static_cast<int64_t>(g.graphOf.size()) != in.shape[0])
      return error(op, "the batch assigns " + std::to_string(g.graphOf.size()) +
                           " vertices, the tensor has " +
                           std::to_string(in.shape[0]));
    Tensor<T> out = Tensor<T>::dense(in.shape, {});
    out.shape[0] = g.numGraphs;
    out.data.assign(g.numGraphs * row, T(0));
    std::vector<int64_t> count(g.numGraphs, 0);
    for (int64_t v = 0; v < in.shape[0]; ++v) {
      int64_t b = g.graphOf[v];
      for (int64_t j = 0; j < row; ++j) {
        T x = in.data[v * row + j];
        T &acc = out.data[b * row + j];
        if (r.getFn() == ReduceFn::max)
          acc = count[b] == 0 ? x : std::max(acc, x);
        else if (r.getFn() == ReduceFn::min)
          acc = count[b] == 0 ? x : std::min(acc, x);
        else
          acc += x;
      }
      ++count[b];
    }
    if (r.getFn() == ReduceFn::mean)
      for (int64_t b = 0; b < g.numGraphs; ++b)
        for (int64_t j = 0; j < row && count[b]; ++j)
          out.data[b * row + j] /= static_cast<T>(count[b]);
    set(r.getResult(), std::move(out));
    return Status::success();
  }

  if (auto r = mlir::dyn_cast<ReadoutSelectOp>(op)) {
    const GraphValue &g = graph(r.getGraph());
    const Tensor<T> &in = tensor(r.getInput());
    int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
    if (static_cast<int64_t>(g.graphOf.size()) != in.shape[0])
      return error(op, "the batch assigns " + std::to_string(g.graphOf.size()) +
                           " vertices, the tensor has " +
                           std::to_string(in.shape[0]));
    // The vertex each (graph, element) keeps: the first extreme one, as
    // gnn.readout keeps it.
    std::vector<int64_t> chosen(g.numGraphs * row, -1);
    bool max = r.getFn() == ReduceFn::max;
    for (int64_t v = 0; v < in.shape[0]; ++v)
      for (int64_t j = 0; j < row; ++j) {
        int64_t &c = chosen[g.graphOf[v] * row + j];
        T x = in.data[v * row + j];
        if (c < 0 ||
            (max ? x > in.data[c * row + j] : x < in.data[c * row + j]))
          c = v;
      }
    Tensor<T> out = Tensor<T>::dense(in.shape, std::vector<T>(in.data.size()));
    for (int64_t b = 0; b < g.numGraphs; ++b)
      for (int64_t j = 0; j < row; ++j)
        if (int64_t c = chosen[b * row + j]; c >= 0)
          out.data[c * row + j] = T(1);
    set(r.getResult(), std::move(out));
    return Status::success();
  }
  if (auto r = mlir::dyn_cast<BroadcastGraphsOp>(op)) {
    const GraphValue &g = graph(r.getGraph());
    const Tensor<T> &in = tensor(r.getInput());
    int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
    if (in.shape[0] != g.numGraphs)
      return error(op, "the batch has " + std::to_string(g.numGraphs) +
                           " graphs, the tensor has " +
                           std::to_string(in.shape[0]) + " rows");
    int64_t n = static_cast<int64_t>(g.graphOf.size());
    Tensor<T> out = Tensor<T>::dense(in.shape, {});
    out.shape[0] = n;
    out.data.reserve(n * row);
    for (int64_t v = 0; v < n; ++v)
      out.data.insert(out.data.end(), in.data.begin() + g.graphOf[v] * row,
                      in.data.begin() + (g.graphOf[v] + 1) * row);
    set(r.getResult(), std::move(out));
    return Status::success();
  }

  // Elementwise maths.
  if (auto c = mlir::dyn_cast<ConstantOp>(op)) {
    set(c.getResult(),
        Tensor<T>::dense({}, {static_cast<T>(c.getValue().convertToDouble())}));
    return Status::success();
  }
  if (auto t = mlir::dyn_cast<TrainingOp>(op)) {
    set(t.getResult(), Tensor<T>::dense({}, {T(options.training ? 1 : 0)}));
    return Status::success();
  }
  if (auto u = mlir::dyn_cast<UpdateBatchStatsOp>(op))
    return updateBatchStats(u);
  if (auto u = mlir::dyn_cast<UnaryOp>(op)) {
    Tensor<T> t = tensor(u.getInput());
    T alpha =
        static_cast<T>(u.getAlpha() ? u.getAlpha()->convertToDouble() : 0);
    for (T &x : t.data) {
      switch (u.getFn()) {
      case UnaryFn::neg:
        x = -x;
        break;
      case UnaryFn::exp:
        x = std::exp(x);
        break;
      case UnaryFn::log:
        x = std::log(x);
        break;
      case UnaryFn::sqrt:
        x = std::sqrt(x);
        break;
      case UnaryFn::rsqrt:
        x = T(1) / std::sqrt(x);
        break;
      case UnaryFn::abs:
        x = std::abs(x);
        break;
      case UnaryFn::relu: // a NaN is not <= 0 and passes through
        x = x <= T(0) ? T(0) : x;
        break;
      case UnaryFn::sigmoid:
        x = T(1) / (T(1) + std::exp(-x));
        break;
      case UnaryFn::tanh:
        x = std::tanh(x);
        break;
      case UnaryFn::gelu:
        x = T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
        break;
      case UnaryFn::elu: // a NaN takes the second branch and stays a NaN
        x = x > T(0) ? x : alpha * (std::exp(x) - T(1));
        break;
      case UnaryFn::leaky_relu: // as elu
        x = x > T(0) ? x : alpha * x;
        break;
      case UnaryFn::erf:
        x = std::erf(x);
        break;
      case UnaryFn::sin:
        x = std::sin(x);
        break;
      case UnaryFn::cos:
        x = std::cos(x);
        break;
      }
    }
    set(u.getResult(), std::move(t));
    return Status::success();
  }
  if (auto b = mlir::dyn_cast<BinaryOp>(op))
    return binary(b);
  if (auto b = mlir::dyn_cast<BroadcastLikeOp>(op))
    return broadcastLike(b);

  // Dense operations.
  if (auto m = mlir::dyn_cast<MatmulOp>(op)) {
    const Tensor<T> &a = tensor(m.getLhs());
    const Tensor<T> &w = tensor(m.getRhs());
    int64_t k = w.shape[0], n = w.shape[1];
    if (a.shape.back() != k)
      return error(op, "inner dimensions differ: " + shapeString(a.shape) +
                           " x " + shapeString(w.shape));
    int64_t rows =
        product(llvm::ArrayRef<int64_t>(a.shape).drop_back()); // k may be 0
    Tensor<T> out{a.domain, a.shape, std::vector<T>(rows * n, T(0))};
    out.shape.back() = n;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t p = 0; p < k; ++p) {
        T x = a.data[i * k + p];
        for (int64_t j = 0; j < n; ++j)
          out.data[i * n + j] += x * w.data[p * n + j];
      }
    set(m.getResult(), std::move(out));
    return Status::success();
  }
  if (auto r = mlir::dyn_cast<ReshapeOp>(op)) {
    Tensor<T> t = tensor(r.getInput());
    auto type = mlir::cast<DomainTensorType>(r.getResult().getType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    int64_t known = 1, dynamicAt = -1;
    size_t offset = t.domain == Domain::dense ? 0 : 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (mlir::ShapedType::isDynamic(shape[i]))
        dynamicAt = i;
      else
        known *= shape[i];
    }
    int64_t rows = offset ? t.shape[0] : 1;
    int64_t total =
        product(llvm::ArrayRef<int64_t>(t.shape).drop_front(offset));
    if (dynamicAt >= 0)
      shape[dynamicAt] = known ? total / known : 0;
    if (product(shape) != total)
      return error(op, "cannot reshape " + shapeString(t.shape) + " to " +
                           shapeString(shape));
    if (offset)
      shape.insert(shape.begin(), rows);
    t.shape = shape;
    set(r.getResult(), std::move(t));
    return Status::success();
  }
  if (auto r = mlir::dyn_cast<ReduceOp>(op))
    return reduce(r);
  if (auto r = mlir::dyn_cast<ReduceSelectOp>(op))
    return reduceSelect(r);
  if (auto s = mlir::dyn_cast<SoftmaxOp>(op)) {
    Tensor<T> t = tensor(s.getInput());
    size_t axis =
        s.getAxisAttr().getInt() + (t.domain == Domain::dense ? 0 : 1);
    int64_t len = t.shape[axis];
    int64_t inner =
        product(llvm::ArrayRef<int64_t>(t.shape).drop_front(axis + 1));
    int64_t outer = t.numElements() / std::max<int64_t>(len * inner, 1);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) -> T & {
          return t.data[(o * len + j) * inner + i];
        };
        T mx = at(0);
        for (int64_t j = 1; j < len; ++j)
          mx = std::max(mx, at(j));
        T sum = 0;
        for (int64_t j = 0; j < len; ++j)
          sum += std::exp(at(j) - mx);
        for (int64_t j = 0; j < len; ++j)
          at(j) = s.getLog() ? at(j) - mx - std::log(sum)
                             : std::exp(at(j) - mx) / sum;
      }
    set(s.getResult(), std::move(t));
    return Status::success();
  }
  if (auto c = mlir::dyn_cast<ConcatOp>(op)) {
    std::vector<const Tensor<T> *> inputs;
    for (mlir::Value v : c.getInputs())
      inputs.push_back(&tensor(v));
    size_t axis =
        c.getAxisAttr().getInt() + (inputs[0]->domain == Domain::dense ? 0 : 1);
    Tensor<T> out{inputs[0]->domain, inputs[0]->shape, {}};
    out.shape[axis] = 0;
    for (const Tensor<T> *t : inputs)
      out.shape[axis] += t->shape[axis];
    int64_t outer =
        product(llvm::ArrayRef<int64_t>(out.shape).take_front(axis));
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor<T> *t : inputs) {
        int64_t chunk =
            product(llvm::ArrayRef<int64_t>(t->shape).drop_front(axis));
        out.data.insert(out.data.end(), t->data.begin() + o * chunk,
                        t->data.begin() + (o + 1) * chunk);
      }
    set(c.getResult(), std::move(out));
    return Status::success();
  }
  if (mlir::isa<DstRowsOp, PadDstRowsOp>(op)) {
    // The destinations of a block are its first sources.
    bool pad = mlir::isa<PadDstRowsOp>(op);
    const rt::Graph &g = edges(op->getOperand(0));
    const Tensor<T> &in = tensor(op->getOperand(1));
    int64_t from = pad ? g.numDst() : g.numSrc();
    int64_t to = pad ? g.numSrc() : g.numDst();
    if (in.shape.empty() || in.shape[0] != from)
      return error(op, llvm::formatv("expected {0} rows (the {1} of the "
                                     "graph), got {2}",
                                     from, pad ? "destinations" : "sources",
                                     in.shape.empty() ? 0 : in.shape[0]));
    if (to > from && !pad)
      return error(op, llvm::formatv("the graph has {0} destinations but "
                                     "only {1} sources",
                                     to, from));
    int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
    Tensor<T> out{Domain::dense, in.shape, {}};
    out.shape[0] = to;
    out.data.assign(to * row, T(0));
    std::copy(in.data.begin(), in.data.begin() + std::min(from, to) * row,
              out.data.begin());
    set(op->getResult(0), std::move(out));
    return Status::success();
  }
  if (auto sl = mlir::dyn_cast<SliceOp>(op)) {
    const Tensor<T> &in = tensor(sl.getInput());
    size_t axis = sl.getAxis() + (in.domain == Domain::dense ? 0 : 1);
    int64_t start = sl.getStart(), size = sl.getSize();
    if (start + size > in.shape[axis])
      return error(op, llvm::formatv("elements {0} to {1} are outside an "
                                     "axis of size {2}",
                                     start, start + size - 1, in.shape[axis]));
    Tensor<T> out{in.domain, in.shape, {}};
    out.shape[axis] = size;
    int64_t outer = product(llvm::ArrayRef<int64_t>(in.shape).take_front(axis));
    int64_t inner =
        product(llvm::ArrayRef<int64_t>(in.shape).drop_front(axis + 1));
    out.data.reserve(outer * size * inner);
    for (int64_t o = 0; o < outer; ++o) {
      auto from = in.data.begin() + (o * in.shape[axis] + start) * inner;
      out.data.insert(out.data.end(), from, from + size * inner);
    }
    set(sl.getResult(), std::move(out));
    return Status::success();
  }
  if (auto tr = mlir::dyn_cast<TransposeOp>(op)) {
    const Tensor<T> &in = tensor(tr.getInput());
    size_t offset = in.domain == Domain::dense ? 0 : 1;
    int64_t rows = offset ? in.shape[0] : 1;
    int64_t a = in.shape[offset], b = in.shape[offset + 1];
    Tensor<T> out{in.domain, in.shape, std::vector<T>(in.data.size())};
    out.shape[offset] = b;
    out.shape[offset + 1] = a;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < b; ++j)
          out.data[r * a * b + j * a + i] = in.data[r * a * b + i * b + j];
    set(tr.getResult(), std::move(out));
    return Status::success();
  }
  if (auto d = mlir::dyn_cast<DropoutOp>(op)) {
    Tensor<T> t = tensor(d.getInput());
    double p = d.getP().convertToDouble();
    if (options.training && p > 0) {
      T scale = static_cast<T>(1.0 / (1.0 - p));
      uint64_t base = currentEdge ? *currentEdge * t.data.size() : 0;
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] =
            dropoutKeeps(d.getSeed(), base + i, p) ? t.data[i] * scale : T(0);
    }
    set(d.getResult(), std::move(t));
    return Status::success();
  }

  // Calls.
  if (auto c = mlir::dyn_cast<mlir::func::CallOp>(op)) {
    auto callee = module.lookupSymbol<mlir::func::FuncOp>(c.getCallee());
    if (!callee)
      return error(op, "unknown function @" + c.getCallee());
    std::vector<Value<T>> args;
    for (mlir::Value v : c.getOperands())
      args.push_back(values[v]);
    std::vector<Tensor<T>> outs;
    Evaluator<T> inner(module, options);
    std::map<unsigned, Tensor<T>> buffers;
    Status s = inner.call(callee, args, outs, &buffers);
    if (!s.ok())
      return s;
    // The callee's buffers are the caller's: what it updated stays updated.
    for (auto &[i, t] : buffers)
      set(c.getOperand(i), std::move(t));
    if (outs.size() != c.getNumResults())
      return error(op, "@" + c.getCallee() + " returned " +
                           std::to_string(outs.size()) + " values");
    for (auto [result, out] : llvm::zip(c.getResults(), outs))
      set(result, std::move(out));
    return Status::success();
  }
  return error(op, "the interpreter does not know this op");
}

/// NumPy broadcasting over full shapes. A dense operand next to a vertex or
/// edge tensor broadcasts over the row shape only.
template <typename T> Status Evaluator<T>::binary(gnn::BinaryOp op) {
  using namespace gnn;
  const Tensor<T> &a = tensor(op.getLhs());
  const Tensor<T> &b = tensor(op.getRhs());
  std::vector<int64_t> sa = a.shape, sb = b.shape;
  Domain domain = a.domain == Domain::dense ? b.domain : a.domain;
  // A dense operand broadcasts against the rows of a vertex or edge tensor:
  // both get the larger row rank (the rows padded behind the leading axis,
  // the dense shape on the left), then the dense one a size-1 leading axis.
  auto lift = [&](std::vector<int64_t> &dense, std::vector<int64_t> &rows) {
    size_t rank = std::max(dense.size(), rows.size() - 1);
    while (rows.size() - 1 < rank)
      rows.insert(rows.begin() + 1, 1);
    while (dense.size() < rank)
      dense.insert(dense.begin(), 1);
    dense.insert(dense.begin(), 1);
  };
  if (a.domain == Domain::dense && b.domain != Domain::dense)
    lift(sa, sb);
  if (b.domain == Domain::dense && a.domain != Domain::dense)
    lift(sb, sa);
  // Two vertex or edge tensors share their first axis; their rows
  // broadcast right-aligned behind it.
  if (a.domain != Domain::dense && b.domain != Domain::dense) {
    while (sa.size() < sb.size())
      sa.insert(sa.begin() + 1, 1);
    while (sb.size() < sa.size())
      sb.insert(sb.begin() + 1, 1);
  }
  size_t rank = std::max(sa.size(), sb.size());
  while (sa.size() < rank)
    sa.insert(sa.begin(), 1);
  while (sb.size() < rank)
    sb.insert(sb.begin(), 1);
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (sa[i] != sb[i] && sa[i] != 1 && sb[i] != 1)
      return error(op, "shapes " + shapeString(a.shape) + " and " +
                           shapeString(b.shape) + " do not broadcast");
    shape[i] = sa[i] == 1 ? sb[i] : sa[i];
  }
  std::vector<int64_t> ta = stridesOf(sa), tb = stridesOf(sb);
  for (size_t i = 0; i < rank; ++i) {
    if (sa[i] == 1)
      ta[i] = 0;
    if (sb[i] == 1)
      tb[i] = 0;
  }
  Tensor<T> out{domain, shape, std::vector<T>(product(shape))};
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < out.numElements(); ++flat) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < rank; ++d) {
      ia += index[d] * ta[d];
      ib += index[d] * tb[d];
    }
    T x = a.data[ia], y = b.data[ib];
    T &z = out.data[flat];
    switch (op.getFn()) {
    case BinaryFn::add:
      z = x + y;
      break;
    case BinaryFn::sub:
      z = x - y;
      break;
    case BinaryFn::mul:
      z = x * y;
      break;
    case BinaryFn::div:
      z = x / y;
      break;
    // torch.maximum / torch.minimum: a NaN on either side gives a NaN,
    // otherwise std::max / std::min (x on a tie).
    case BinaryFn::max:
      z = x < y || std::isnan(y) ? y : x;
      break;
    case BinaryFn::min:
      z = y < x || std::isnan(y) ? y : x;
      break;
    case BinaryFn::pow:
      z = std::pow(x, y);
      break;
    case BinaryFn::gt:
      z = x > y ? T(1) : T(0);
      break;
    case BinaryFn::ge:
      z = x >= y ? T(1) : T(0);
      break;
    case BinaryFn::eq:
      z = x == y ? T(1) : T(0);
      break;
    case BinaryFn::ne:
      z = x != y ? T(1) : T(0);
      break;
    case BinaryFn::mask:
      z = x != T(0) ? y : T(0);
      break;
    }
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  set(op.getResult(), std::move(out));
  return Status::success();
}

/// Reduces each vertex's edges: in-edges by destination (CSR) or out-edges
/// by source (CSC). Empty groups give 0; max and min keep the first extreme
/// edge in that order.
template <typename T> Status Evaluator<T>::scatter(gnn::ScatterOp op) {
  using namespace gnn;
  const rt::Graph &g = edges(op.getGraph());
  const Tensor<T> &in = tensor(op.getInput());
  auto type = mlir::cast<DomainTensorType>(op.getResult().getType());
  bool byDst = type.getDomain() == Domain::dst;
  int64_t count = byDst ? g.numDst() : g.numSrc();
  const std::vector<int64_t> &ptr = byDst ? g.inPtr() : g.outPtr();
  const std::vector<int64_t> &edgeIds = byDst ? g.inEdge() : g.outEdge();
  int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
  Tensor<T> out{type.getDomain(), in.shape, std::vector<T>(count * row, T(0))};
  out.shape[0] = count;
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    for (int64_t j = 0; j < row; ++j) {
      T acc = 0;
      for (int64_t k = begin; k < end; ++k) {
        T x = in.data[edgeIds[k] * row + j];
        switch (op.getFn()) {
        case ReduceFn::sum:
        case ReduceFn::mean:
          acc += x;
          break;
        case ReduceFn::max:
        case ReduceFn::logsumexp: // the maximum first
          acc = k == begin || x > acc ? x : acc;
          break;
        case ReduceFn::min:
          acc = k == begin || x < acc ? x : acc;
          break;
        }
      }
      if (op.getFn() == ReduceFn::mean && end > begin)
        acc /= static_cast<T>(end - begin);
      // logsumexp of a row of -inf only is -inf (log 0), not the NaN of
      // exp(-inf - -inf).
      if (op.getFn() == ReduceFn::logsumexp && end > begin &&
          acc != -std::numeric_limits<T>::infinity()) {
        T sum = 0;
        for (int64_t k = begin; k < end; ++k)
          sum += std::exp(in.data[edgeIds[k] * row + j] - acc);
        acc += std::log(sum);
      }
      out.data[v * row + j] = acc;
    }
  }
  set(op.getResult(), std::move(out));
  return Status::success();
}

/// For each element of `shape`, the flat index of the element of `from`
/// that NumPy broadcasting reads (right-aligned, size-1 axes repeat).
static std::vector<int64_t> broadcastIndex(llvm::ArrayRef<int64_t> from,
                                           llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> padded(shape.size(), 1);
  std::copy(from.begin(), from.end(),
            padded.begin() + (shape.size() - from.size()));
  std::vector<int64_t> strides = stridesOf(padded);
  std::vector<int64_t> out(product(shape));
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < static_cast<int64_t>(out.size()); ++flat) {
    int64_t at = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      at += (padded[d] == 1 ? 0 : index[d]) * strides[d];
    out[flat] = at;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// What the online softmax subtracts before exp: the running maximum, or 0
/// while every logit so far is -inf (so that exp gives 0, not
/// exp(-inf - -inf) = NaN).
template <typename T> static T onlineReference(T runningMax) {
  return runningMax == -std::numeric_limits<T>::infinity() ? T(0) : runningMax;
}

/// Runs the body once per edge of every vertex, in CSR (or CSC) order,
/// folding the yields as the reductions say. `softmax_sum` keeps a running
/// maximum and rescales, so large logits never overflow.
template <typename T> Status Evaluator<T>::aggregate(gnn::AggregateOp op) {
  using namespace gnn;
  const rt::Graph &g = edges(op.getGraph());
  bool byDst = op.getBy() == Domain::dst;
  int64_t count = byDst ? g.numDst() : g.numSrc();
  const std::vector<int64_t> &ptr = byDst ? g.inPtr() : g.outPtr();
  const std::vector<int64_t> &edgeIds = byDst ? g.inEdge() : g.outEdge();
  mlir::Block &block = op.getBlock();
  auto yield = mlir::cast<YieldOp>(block.getTerminator());

  std::vector<const Tensor<T> *> inputs;
  for (mlir::Value v : op.getInputs())
    inputs.push_back(&tensor(v));

  struct State {
    std::string kind;
    unsigned first; // index of the first yield
    std::vector<int64_t> rowShape;
    int64_t rowSize = 0;
    std::vector<int64_t> logitOf; // softmax_sum: value element -> logit
    int64_t logitSize = 0;
    double dropout = 0;
    int64_t seed = 0;
    Tensor<T> result;
  };
  std::vector<State> states;
  unsigned next = 0;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    State st;
    st.kind = op.getKind(i).str();
    st.first = next;
    auto type = mlir::cast<DomainTensorType>(op.getResult(i).getType());
    st.rowShape.assign(type.getShape().begin(), type.getShape().end());
    st.rowSize = product(st.rowShape);
    if (st.kind == "logsumexp") {
      st.logitSize = st.rowSize;
    } else if (st.kind == "softmax_sum") {
      auto logitType =
          mlir::cast<DomainTensorType>(yield.getValues()[next].getType());
      st.logitSize = product(logitType.getShape());
      st.logitOf = broadcastIndex(logitType.getShape(), st.rowShape);
      auto dict = mlir::cast<mlir::DictionaryAttr>(op.getReductions()[i]);
      if (auto p = dict.getAs<mlir::FloatAttr>("dropout"))
        st.dropout = options.training ? p.getValueAsDouble() : 0.0;
      if (auto seed = dict.getAs<mlir::IntegerAttr>("seed"))
        st.seed = seed.getInt();
    }
    std::vector<int64_t> shape{count};
    shape.insert(shape.end(), st.rowShape.begin(), st.rowShape.end());
    st.result = Tensor<T>{type.getDomain(), shape,
                          std::vector<T>(count * st.rowSize, T(0))};
    next += op.getNumYields(i);
    states.push_back(std::move(st));
  }

  Evaluator<T> body(module, options);
  auto rowOf = [&](const Tensor<T> &t, int64_t r) {
    int64_t size = product(llvm::ArrayRef<int64_t>(t.shape).drop_front());
    Tensor<T> row = Tensor<T>::dense(
        std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()), {});
    row.data.assign(t.data.begin() + r * size, t.data.begin() + (r + 1) * size);
    return row;
  };
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    // Running statistics of softmax_sum, per logit element.
    std::vector<std::vector<T>> runMax(states.size()), runSum(states.size());
    for (size_t i = 0; i < states.size(); ++i) {
      runMax[i].assign(states[i].logitSize, T(0));
      runSum[i].assign(states[i].logitSize, T(0));
    }
    for (int64_t k = begin; k < end; ++k) {
      int64_t e = edgeIds[k];
      for (auto [input, arg] : llvm::zip(inputs, block.getArguments())) {
        switch (input->domain) {
        case Domain::src:
          body.values[arg] = rowOf(*input, g.edgeSrc()[e]);
          break;
        case Domain::dst:
          body.values[arg] = rowOf(*input, g.edgeDst()[e]);
          break;
        case Domain::edge:
          body.values[arg] = rowOf(*input, e);
          break;
        case Domain::dense:
          body.values[arg] = *input;
          break;
        }
      }
      body.currentEdge = e;
      for (mlir::Operation &inner : block.without_terminator()) {
        Status s = body.eval(&inner);
        if (!s.ok())
          return s;
      }
      for (size_t i = 0; i < states.size(); ++i) {
        State &st = states[i];
        T *out = &st.result.data[v * st.rowSize];
        if (st.kind == "logsumexp") {
          // Online, as softmax_sum's normaliser: running maximum, sum
          // rescaled to it.
          const Tensor<T> &x = body.tensor(yield.getValues()[st.first]);
          for (int64_t j = 0; j < st.rowSize; ++j) {
            T l = x.data[j];
            T newMax = k == begin ? l : std::max(runMax[i][j], l);
            T ref = onlineReference(newMax);
            T scale = k == begin ? T(0) : std::exp(runMax[i][j] - ref);
            runSum[i][j] = runSum[i][j] * scale + std::exp(l - ref);
            runMax[i][j] = newMax;
          }
          continue;
        }
        if (st.kind != "softmax_sum") {
          const Tensor<T> &x = body.tensor(yield.getValues()[st.first]);
          for (int64_t j = 0; j < st.rowSize; ++j) {
            T value = x.data[j];
            if (st.kind == "max")
              out[j] = k == begin || value > out[j] ? value : out[j];
            else if (st.kind == "min")
              out[j] = k == begin || value < out[j] ? value : out[j];
            else
              out[j] += value;
          }
          continue;
        }
        const Tensor<T> &logit = body.tensor(yield.getValues()[st.first]);
        const Tensor<T> &value = body.tensor(yield.getValues()[st.first + 1]);
        std::vector<T> scale(st.logitSize), weight(st.logitSize);
        for (int64_t li = 0; li < st.logitSize; ++li) {
          T l = logit.data[li];
          T newMax = k == begin ? l : std::max(runMax[i][li], l);
          T ref = onlineReference(newMax);
          scale[li] = k == begin ? T(0) : std::exp(runMax[i][li] - ref);
          T p = std::exp(l - ref);
          runSum[i][li] = runSum[i][li] * scale[li] + p;
          runMax[i][li] = newMax;
          T keep = T(1);
          if (st.dropout > 0)
            keep = dropoutKeeps(st.seed, e * st.logitSize + li, st.dropout)
                       ? static_cast<T>(1.0 / (1.0 - st.dropout))
                       : T(0);
          weight[li] = p * keep;
        }
        for (int64_t j = 0; j < st.rowSize; ++j) {
          int64_t li = st.logitOf[j];
          out[j] = out[j] * scale[li] + weight[li] * value.data[j];
        }
      }
    }
    for (size_t i = 0; i < states.size(); ++i) {
      State &st = states[i];
      T *out = &st.result.data[v * st.rowSize];
      if (end == begin)
        continue; // an empty neighbourhood gives 0
      if (st.kind == "mean")
        for (int64_t j = 0; j < st.rowSize; ++j)
          out[j] /= static_cast<T>(end - begin);
      if (st.kind == "softmax_sum")
        for (int64_t j = 0; j < st.rowSize; ++j)
          if (T sum = runSum[i][st.logitOf[j]]; sum != T(0))
            out[j] /= sum; // 0: every logit -inf, every weight 0
      if (st.kind == "logsumexp")
        for (int64_t j = 0; j < st.rowSize; ++j)
          out[j] = runMax[i][j] + std::log(runSum[i][j]);
    }
  }
  for (size_t i = 0; i < states.size(); ++i)
    set(op.getResult(i), std::move(states[i].result));
  return Status::success();
}

template <typename T> Status Evaluator<T>::edgeSoftmax(gnn::EdgeSoftmaxOp op) {
  const rt::Graph &g = edges(op.getGraph());
  Tensor<T> t = tensor(op.getInput());
  bool byDst = op.getBy() == Domain::dst;
  int64_t count = byDst ? g.numDst() : g.numSrc();
  const std::vector<int64_t> &ptr = byDst ? g.inPtr() : g.outPtr();
  const std::vector<int64_t> &edgeIds = byDst ? g.inEdge() : g.outEdge();
  int64_t row = product(llvm::ArrayRef<int64_t>(t.shape).drop_front());
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    if (begin == end)
      continue;
    for (int64_t j = 0; j < row; ++j) {
      T mx = t.data[edgeIds[begin] * row + j];
      for (int64_t k = begin; k < end; ++k)
        mx = std::max(mx, t.data[edgeIds[k] * row + j]);
      // A column of -inf: every exp is 0 (not NaN), and so is every weight.
      mx = onlineReference(mx);
      T sum = 0;
      for (int64_t k = begin; k < end; ++k)
        sum += std::exp(t.data[edgeIds[k] * row + j] - mx);
      for (int64_t k = begin; k < end; ++k) {
        T &x = t.data[edgeIds[k] * row + j];
        x = sum == T(0) ? T(0) : std::exp(x - mx) / sum;
      }
    }
  }
  set(op.getResult(), std::move(t));
  return Status::success();
}

/// Which axes a reduce (or reduce_select) folds, and where each input
/// element lands: one row axis, or every row axis, never the vertex or edge
/// axis of a row tensor.
struct ReductionLayout {
  std::vector<bool> reduced;
  std::vector<int64_t> kept; ///< the shape with reduced axes of size 1
  int64_t outCount = 0;
  /// Calls `fn(flat, out)` for every input element in row-major order, with
  /// `out` its index in the kept shape.
  template <typename Fn>
  void forEach(llvm::ArrayRef<int64_t> shape, Fn fn) const {
    std::vector<int64_t> strides = stridesOf(kept);
    std::vector<int64_t> index(shape.size(), 0);
    int64_t count = product(shape);
    for (int64_t flat = 0; flat < count; ++flat) {
      int64_t o = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        o += (reduced[d] ? 0 : index[d]) * strides[d];
      fn(flat, o);
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
  }
};

static ReductionLayout reductionLayout(llvm::ArrayRef<int64_t> shape,
                                       gnn::Domain domain,
                                       mlir::IntegerAttr axis) {
  ReductionLayout layout;
  size_t offset = domain == gnn::Domain::dense ? 0 : 1;
  layout.reduced.assign(shape.size(), false);
  if (axis)
    layout.reduced[axis.getInt() + offset] = true;
  else
    for (size_t d = offset; d < shape.size(); ++d)
      layout.reduced[d] = true;
  layout.kept.assign(shape.begin(), shape.end());
  for (size_t d = 0; d < shape.size(); ++d)
    if (layout.reduced[d])
      layout.kept[d] = 1;
  layout.outCount = product(layout.kept);
  return layout;
}

template <typename T> Status Evaluator<T>::reduce(gnn::ReduceOp op) {
  using namespace gnn;
  const Tensor<T> &in = tensor(op.getInput());
  ReductionLayout layout =
      reductionLayout(in.shape, in.domain, op.getAxisAttr());
  std::vector<T> acc(layout.outCount, T(0));
  std::vector<int64_t> seen(layout.outCount, 0);
  layout.forEach(in.shape, [&](int64_t flat, int64_t o) {
    T x = in.data[flat];
    switch (op.getFn()) {
    case ReduceFn::sum:
    case ReduceFn::mean:
      acc[o] += x;
      break;
    case ReduceFn::max:
      acc[o] = seen[o] == 0 || x > acc[o] ? x : acc[o];
      break;
    case ReduceFn::min:
      acc[o] = seen[o] == 0 || x < acc[o] ? x : acc[o];
      break;
    case ReduceFn::logsumexp:
      llvm_unreachable("gnn.reduce rejects logsumexp");
    }
    ++seen[o];
  });
  if (op.getFn() == ReduceFn::mean)
    for (int64_t o = 0; o < layout.outCount; ++o)
      if (seen[o])
        acc[o] /= static_cast<T>(seen[o]);
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (!layout.reduced[d] || op.getKeepdims())
      outShape.push_back(layout.kept[d]);
  set(op.getResult(), Tensor<T>{in.domain, outShape, std::move(acc)});
  return Status::success();
}

/// The mask of the edge each vertex's scatter max/min keeps, element by
/// element: the first extreme edge in CSR (CSC) order, as scatter() keeps.
template <typename T>
Status Evaluator<T>::scatterSelect(gnn::ScatterSelectOp op) {
  using namespace gnn;
  const rt::Graph &g = edges(op.getGraph());
  const Tensor<T> &in = tensor(op.getInput());
  bool byDst = op.getBy() == Domain::dst;
  bool max = op.getFn() == ReduceFn::max;
  int64_t count = byDst ? g.numDst() : g.numSrc();
  const std::vector<int64_t> &ptr = byDst ? g.inPtr() : g.outPtr();
  const std::vector<int64_t> &edgeIds = byDst ? g.inEdge() : g.outEdge();
  int64_t row = product(llvm::ArrayRef<int64_t>(in.shape).drop_front());
  Tensor<T> out{Domain::edge, in.shape, std::vector<T>(in.data.size(), T(0))};
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    if (begin == end)
      continue;
    for (int64_t j = 0; j < row; ++j) {
      int64_t best = edgeIds[begin];
      for (int64_t k = begin + 1; k < end; ++k) {
        T x = in.data[edgeIds[k] * row + j], b = in.data[best * row + j];
        if (max ? x > b : x < b)
          best = edgeIds[k];
      }
      out.data[best * row + j] = T(1);
    }
  }
  set(op.getResult(), std::move(out));
  return Status::success();
}

/// The mask of the element reduce max/min keeps: the first extreme one in
/// row-major order, as reduce() keeps it.
template <typename T>
Status Evaluator<T>::reduceSelect(gnn::ReduceSelectOp op) {
  using namespace gnn;
  const Tensor<T> &in = tensor(op.getInput());
  const std::vector<int64_t> &shape = in.shape;
  ReductionLayout layout = reductionLayout(shape, in.domain, op.getAxisAttr());
  std::vector<int64_t> best(layout.outCount, -1);
  bool max = op.getFn() == ReduceFn::max;
  layout.forEach(shape, [&](int64_t flat, int64_t o) {
    T x = in.data[flat];
    if (best[o] < 0 || (max ? x > in.data[best[o]] : x < in.data[best[o]]))
      best[o] = flat;
  });
  Tensor<T> out{in.domain, shape, std::vector<T>(in.data.size(), T(0))};
  for (int64_t b : best)
    if (b >= 0)
      out.data[b] = T(1);
  set(op.getResult(), std::move(out));
  return Status::success();
}

/// `input` broadcast to the run-time shape of `like`, as binary() aligns a
/// dense operand against rows or two row tensors behind their first axis.
template <typename T>
Status Evaluator<T>::broadcastLike(gnn::BroadcastLikeOp op) {
  using namespace gnn;
  const Tensor<T> &a = tensor(op.getInput());
  const Tensor<T> &like = tensor(op.getLike());
  std::vector<int64_t> sa = a.shape;
  const std::vector<int64_t> &shape = like.shape;
  if (like.domain != Domain::dense) {
    if (a.domain == Domain::dense) {
      while (sa.size() < shape.size() - 1)
        sa.insert(sa.begin(), 1);
      sa.insert(sa.begin(), 1);
    } else {
      while (sa.size() < shape.size())
        sa.insert(sa.begin() + 1, 1);
    }
  }
  while (sa.size() < shape.size())
    sa.insert(sa.begin(), 1);
  if (sa.size() != shape.size())
    return error(op, "cannot broadcast " + shapeString(a.shape) + " to " +
                         shapeString(shape));
  for (size_t i = 0; i < shape.size(); ++i)
    if (sa[i] != shape[i] && sa[i] != 1)
      return error(op, "cannot broadcast " + shapeString(a.shape) + " to " +
                           shapeString(shape));
  std::vector<int64_t> from = broadcastIndex(sa, shape);
  Tensor<T> out{like.domain, shape, std::vector<T>(from.size())};
  for (size_t i = 0; i < from.size(); ++i)
    out.data[i] = a.data[from[i]];
  set(op.getResult(), std::move(out));
  return Status::success();
}

/// torch's running-statistics update: the column mean and the unbiased
/// column variance of the input, blended in with the momentum, in double.
template <typename T>
Status Evaluator<T>::updateBatchStats(gnn::UpdateBatchStatsOp op) {
  if (!options.training)
    return Status::success();
  const Tensor<T> &x = tensor(op.getInput());
  int64_t rows = x.shape[0], cols = x.shape[1];
  if (rows < 2)
    return error(op, "batch_norm needs at least 2 rows in training, to "
                     "estimate the variance; got " +
                         std::to_string(rows));
  double m = op.getMomentum().convertToDouble();
  Tensor<T> &mean = tensor(op.getRunningMean());
  Tensor<T> &var = tensor(op.getRunningVar());
  for (int64_t j = 0; j < cols; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < rows; ++i)
      sum += static_cast<double>(x.data[i * cols + j]);
    double mu = sum / static_cast<double>(rows);
    double squares = 0;
    for (int64_t i = 0; i < rows; ++i) {
      double d = static_cast<double>(x.data[i * cols + j]) - mu;
      squares += d * d;
    }
    double unbiased = squares / static_cast<double>(rows - 1);
    mean.data[j] = static_cast<T>((1 - m) * mean.data[j] + m * mu);
    var.data[j] = static_cast<T>((1 - m) * var.data[j] + m * unbiased);
  }
  return Status::success();
}

} // namespace

template <typename T>
Status interp::runAll(mlir::ModuleOp module, llvm::StringRef function,
                      const std::vector<Value<T>> &args,
                      std::vector<Tensor<T>> &results,
                      const RunOptions &options) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(function);
  if (!func)
    return Status::error("no function @" + function.str() + " in the module");
  Evaluator<T> evaluator(module, options);
  return evaluator.call(func, args, results);
}

template <typename T>
Status interp::runWithBuffers(mlir::ModuleOp module, llvm::StringRef function,
                              const std::vector<Value<T>> &args,
                              std::vector<Tensor<T>> &results,
                              std::map<std::string, Tensor<T>> &buffers,
                              const RunOptions &options) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(function);
  if (!func)
    return Status::error("no function @" + function.str() + " in the module");
  Evaluator<T> evaluator(module, options);
  std::map<unsigned, Tensor<T>> byIndex;
  Status s = evaluator.call(func, args, results, &byIndex);
  for (auto &[i, t] : byIndex)
    if (auto path =
            func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kParamAttrName))
      buffers[path.getValue().str()] = std::move(t);
  return s;
}

template <typename T>
Status interp::run(mlir::ModuleOp module, llvm::StringRef function,
                   const std::vector<Value<T>> &args, Tensor<T> &result,
                   const RunOptions &options) {
  std::vector<Tensor<T>> results;
  Status s = runAll(module, function, args, results, options);
  if (!s.ok())
    return s;
  if (results.size() != 1)
    return Status::error("@" + function.str() + " returns " +
                         std::to_string(results.size()) +
                         " values; use runAll");
  result = std::move(results.front());
  return Status::success();
}

namespace gnnc::interp {
template struct Tensor<float>;
template struct Tensor<double>;
template Status run<float>(mlir::ModuleOp, llvm::StringRef,
                           const std::vector<Value<float>> &, Tensor<float> &,
                           const RunOptions &);
template Status run<double>(mlir::ModuleOp, llvm::StringRef,
                            const std::vector<Value<double>> &,
                            Tensor<double> &, const RunOptions &);
template Status runAll<float>(mlir::ModuleOp, llvm::StringRef,
                              const std::vector<Value<float>> &,
                              std::vector<Tensor<float>> &, const RunOptions &);
template Status runAll<double>(mlir::ModuleOp, llvm::StringRef,
                               const std::vector<Value<double>> &,
                               std::vector<Tensor<double>> &,
                               const RunOptions &);
template Status runWithBuffers<float>(mlir::ModuleOp, llvm::StringRef,
                                      const std::vector<Value<float>> &,
                                      std::vector<Tensor<float>> &,
                                      std::map<std::string, Tensor<float>> &,
                                      const RunOptions &);
template Status runWithBuffers<double>(mlir::ModuleOp, llvm::StringRef,
                                       const std::vector<Value<double>> &,
                                       std::vector<Tensor<double>> &,
                                       std::map<std::string, Tensor<double>> &,
                                       const RunOptions &);
} // namespace gnnc::interp
