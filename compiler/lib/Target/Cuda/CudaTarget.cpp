//===- CudaTarget.cpp - The CUDA printer of the kernel IR -----------------===//
//
// Part of gnnc. Prints a module of the kernel IR as `<stem>.h` (a host
// header, plain C++) and `<stem>.cu` (docs/abi.md, "CUDA"):
//
//   - every public host function F becomes an entry point `F(graphs, sizes,
//     inputs, params, outputs, workspace, training, seed, stream)` with
//     `F_workspace_bytes(graphs, sizes)`, exactly as the C++ printer's but
//     on device memory: graphs are rt::cuda::DeviceGraph (and the batched
//     and heterogeneous kinds), every pointer is a device pointer, the
//     workspace is device memory, and everything is queued on `stream`.
//     Host ops call the device runtime (gnnc/runtime/cuda/DeviceOps.h):
//     cuBLAS for matmuls, CUB for device-wide reductions, small kernels for
//     the rest;
//   - every kernel of the IR becomes a `__global__` function and a host
//     launcher. The mapping (docs/architecture.md, "The CUDA printer"):
//     one group of kLanes lanes (a power of two sized to the row width,
//     Seastar's feature-adaptive groups) per destination row of the CSR
//     (`by dst`) or source row of the CSC (`by src`), rows taken in
//     descending degree order; the elements of the row's widest common
//     shape spread over the lanes (V consecutive elements per lane and
//     chunk, read with float4 / float2 loads); per-vertex scratch rows in
//     registers where every access is the lane's own element, replicated in
//     registers for scalars, in shared memory otherwise (with __syncwarp
//     between dependent statements); the edge loop uniform over the group,
//     its neighbour and edge ids loaded once per kLanes edges and
//     broadcast with __shfl_sync. Both graph layouts are on the device, so
//     no kernel needs an atomic;
//   - reflection tables (rt::cuda::ModuleInfo) let a program call any entry
//     point generically.
//
// Names come from the .gnn source, as in the C++ printer, and every block
// of code is preceded by `// file.gnn:37: <the line>`.
//
//===----------------------------------------------------------------------===//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/CodeWriter.h"
#include "gnnc/Target/HostShapes.h"
#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::target;
using gnn::Domain;
using gnn::DomainTensorType;

namespace {

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// The shortest decimal form of `value` that reads back exactly, as a C++
/// literal of type float (`isFloat`) or double.
std::string floatLiteral(double value, bool isFloat) {
  // INFINITY and NAN (<cmath>) are float constants on the host and the
  // device alike (std::numeric_limits is not available in device code).
  if (std::isnan(value))
    return isFloat ? "NAN" : "static_cast<double>(NAN)";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") +
           (isFloat ? "INFINITY" : "static_cast<double>(INFINITY)");
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (isFloat ? std::strtof(buffer, nullptr) == static_cast<float>(value)
                : std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + (isFloat ? "f" : "");
}

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

//===----------------------------------------------------------------------===//
// Names from the .gnn source
//===----------------------------------------------------------------------===//

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// The variable a statement assigns: "h = ..." -> "h", "v.h = ..." -> "h"
/// ("" for anything else).
std::string assignedName(StringRef line) {
  line = line.ltrim();
  size_t i = 0;
  std::string last;
  while (i < line.size() && isIdentStart(line[i])) {
    size_t start = i;
    while (i < line.size() && isIdentChar(line[i]))
      ++i;
    last = line.substr(start, i - start).str();
    if (i < line.size() && line[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  if (last.empty())
    return "";
  while (i < line.size() && line[i] == ' ')
    ++i;
  if (i + 1 < line.size() && line[i] == '=' && line[i + 1] != '=')
    return last;
  return "";
}

/// What starts at column `col` (1-based): an attribute read `u.h` gives
/// ("h", true); a call `relu(` or a name gives ("relu", false).
std::pair<std::string, bool> nameAt(StringRef line, unsigned col) {
  if (col == 0 || col > line.size())
    return {"", false};
  size_t i = col - 1;
  if (!isIdentStart(line[i]))
    return {"", false};
  // `u.h` located at its attribute name.
  if (i >= 2 && line[i - 1] == '.' && isIdentChar(line[i - 2])) {
    size_t end = i;
    while (end < line.size() && isIdentChar(line[end]))
      ++end;
    bool call = end < line.size() && line[end] == '(';
    return {line.substr(i, end - i).str(), !call};
  }
  SmallVector<std::string, 2> parts;
  while (i < line.size() && isIdentStart(line[i])) {
    size_t start = i;
    while (i < line.size() && isIdentChar(line[i]))
      ++i;
    parts.push_back(line.substr(start, i - start).str());
    if (i + 1 < line.size() && line[i] == '.' && isIdentStart(line[i + 1])) {
      ++i;
      continue;
    }
    break;
  }
  bool call = i < line.size() && line[i] == '(';
  if (parts.size() == 2 && !call)
    return {parts.back(), true};
  return {parts.back(), false};
}

/// The .gnn comment of a location: one `// file.gnn:N: text` per line.
void writeLocationComment(CodeWriter &w, SourceFiles &sources,
                          ArrayRef<SourceLoc> locs) {
  std::set<std::pair<std::string, unsigned>> seen;
  for (const SourceLoc &loc : locs) {
    if (!seen.insert({loc.file, loc.line}).second)
      continue;
    std::string text = sources.line(loc.file, loc.line).trim().str();
    w.line("// " + baseName(loc.file).str() + ":" + std::to_string(loc.line) +
           (text.empty() ? "" : ": " + text));
  }
}

//===----------------------------------------------------------------------===//
// Module-level information
//===----------------------------------------------------------------------===//

/// The parameter struct shared by functions with the same parameters.
struct ParamStruct {
  std::string name;
  std::vector<std::string> paths, fields, inits;
  std::vector<std::vector<int64_t>> shapes;
};

/// One host function: its C names and ABI.
struct HostFunc {
  func::FuncOp func;
  std::string symbol;
  std::string kind;
  const FunctionShapes *shapes = nullptr;
  /// C names of the size symbols (by symbol id).
  std::vector<std::string> symbolNames;
  struct Arg {
    enum Kind { Graph, Input, Param } kind = Input;
    std::string name;  // the C parameter name (graphs, inputs)
    std::string field; // the struct field (parameters)
    gnn::GraphKind graphKind = gnn::GraphKind::graph;
  };
  std::vector<Arg> args;
  const ParamStruct *params = nullptr;
  struct Result {
    std::string name;  // the C parameter name ("out", "grad_x")
    std::string role;  // output, grad, saved
    std::string field; // grads.<field> when packed
    std::string of;    // grad_of / saved name
  };
  std::vector<Result> results;
  bool packGrads = false;

  std::string symbolName(int s) const { return symbolNames[s]; }
};

/// A kernel and how the host calls it: `symbol` is the host launcher,
/// `symbol_kernel` the __global__ function.
struct KernelInfo {
  func::FuncOp func;
  std::string symbol;
  std::vector<std::string> argNames; // after the graph
  bool usesDropout = false;
  int numOutputs = 0;
  gnnk::Side side = gnnk::Side::dst;
};

std::string graphType(gnn::GraphKind kind) {
  switch (kind) {
  case gnn::GraphKind::graph:
  case gnn::GraphKind::block:
    return "const gnnc::rt::cuda::DeviceGraph &";
  case gnn::GraphKind::batched:
    return "const gnnc::rt::cuda::DeviceBatchedGraph &";
  case gnn::GraphKind::hetero:
    return "const gnnc::rt::cuda::DeviceHeteroGraph &";
  }
  return "";
}

std::string graphKindEnum(gnn::GraphKind kind) {
  switch (kind) {
  case gnn::GraphKind::graph:
    return "rt::GraphKind::Graph";
  case gnn::GraphKind::block:
    return "rt::GraphKind::Block";
  case gnn::GraphKind::batched:
    return "rt::GraphKind::Batched";
  case gnn::GraphKind::hetero:
    return "rt::GraphKind::Hetero";
  }
  return "";
}

std::string graphKindName(gnn::GraphKind kind) {
  return gnn::stringifyGraphKind(kind).str();
}

/// The C++ expression of a size symbol, read from the graph arguments
/// (`graphExpr(i)` is the expression of graph argument i).
std::string symbolSource(const SizeSymbol &s, const HostFunc &f,
                         const std::function<std::string(unsigned)> &graph) {
  std::string g = graph(s.graphArg);
  gnn::GraphKind kind = f.args[s.graphArg].graphKind;
  bool batched = kind == gnn::GraphKind::batched;
  switch (s.kind) {
  case SizeSymbol::Kind::NumDst:
    return batched ? g + ".graph->numDst()" : g + ".numDst()";
  case SizeSymbol::Kind::NumSrc:
    return batched ? g + ".graph->numSrc()" : g + ".numSrc()";
  case SizeSymbol::Kind::NumEdges:
    return batched ? g + ".graph->numEdges()" : g + ".numEdges()";
  case SizeSymbol::Kind::NumGraphs:
    return g + ".numGraphs";
  case SizeSymbol::Kind::NumVertices:
    return g + ".numVertices";
  case SizeSymbol::Kind::RelationEdges:
    return "rt::cuda::relationOrEmpty(" + g + ", " + cString(s.relation) +
           ").numEdges()";
  case SizeSymbol::Kind::Explicit:
  case SizeSymbol::Kind::Unknown:
    break;
  }
  return "0";
}

//===----------------------------------------------------------------------===//
// Kernels: expressions
//===----------------------------------------------------------------------===//

/// A C++ expression and its precedence (0: primary; larger binds looser).
struct Expr {
  std::string text;
  int prec = 0;
};

enum Prec {
  kPrimary = 0,
  kUnary = 3,
  kMul = 5,
  kAdd = 6,
  kRel = 9,
  kEq = 10,
  kAnd = 14,
  kOr = 15,
  kCond = 16,
};

std::string wrap(const Expr &e, int maxPrec) {
  return e.prec > maxPrec ? "(" + e.text + ")" : e.text;
}

std::string cTypeOf(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  return "int64_t";
}

int64_t productOf(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

int64_t pow2Ceil(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

bool isConstantIndex(Value v, int64_t value) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value() == value;
  return false;
}

/// The alloca or kernel argument behind a memref value (through
/// memref.reinterpret_cast views).
Value rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<memref::ReinterpretCastOp>())
    memref = view.getSource();
  return memref;
}

/// The indices of an access without the row of a vertex or edge tensor
/// (the first index of a memref whose first axis is dynamic, returned in
/// `row`) and without axes of size 1, which must be read at 0. False for
/// anything else.
bool normalise(Value memref, ValueRange indices, SmallVectorImpl<Value> &out,
               Value *row = nullptr) {
  ArrayRef<int64_t> shape = cast<MemRefType>(memref.getType()).getShape();
  size_t start = 0;
  if (!shape.empty() && ShapedType::isDynamic(shape[0])) {
    if (row)
      *row = indices[0];
    start = 1;
  }
  for (size_t d = start; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      if (!isConstantIndex(indices[d], 0))
        return false;
      continue;
    }
    out.push_back(indices[d]);
  }
  return true;
}

/// The shape of a row of `type` (without a leading dynamic axis) without
/// axes of size 1.
SmallVector<int64_t, 4> normalShape(MemRefType type) {
  SmallVector<int64_t, 4> out;
  ArrayRef<int64_t> shape = type.getShape();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d == 0 && ShapedType::isDynamic(shape[d]))
      continue;
    if (shape[d] != 1)
      out.push_back(shape[d]);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Kernels: the mapping onto a group of lanes
//===----------------------------------------------------------------------===//
//
// A kernel of the IR is one gnnk.for_vertices whose body holds scratch rows
// (memref.alloca), statements (stores, scalar ops, the edge loop, an
// scf.if of the finalisation) and feature loop nests (scf.for). Each vertex
// runs on a group of kLanes = G lanes. The plan decides, for the whole
// kernel:
//
//   - D, the key shape: the leading loop shape that most of the work's
//     nests share (GAT's [heads, features]); its n = prod(D) elements
//     ("keys") are spread over the lanes in chunks of V consecutive keys
//     (V = 4 or 2 when n allows: float4 / float2 accesses), chunk c of lane
//     l holding keys (c * G + l) * V .. + V - 1, C chunks per lane;
//   - for every nest, how it runs: Expanded (its leading p loops are D's
//     leading p axes: each lane runs the body for the keys it holds, once
//     per chunk when every key of a chunk has the same first p coordinates,
//     else once per key), Flat (parallel, but another shape: its iterations
//     spread over the lanes on their own), LaneZero (not parallel, it
//     writes memory others read: lane 0 runs it) or Redundant (not
//     parallel, it writes only replicated registers: every lane runs it);
//   - for every scratch row, where it lives: Lane (registers, when its
//     shape is a prefix of D and every access is at the accessing unit's
//     own key: one value per chunk or per key of the lane), Replicated
//     (registers, the same in every lane: scalars written outside parallel
//     nests, such as the first-edge flag), or Shared (shared memory, one
//     row per group, for the rest).
//
// A nest may run in parallel to depth d when every store it makes is at the
// indices of its d leading loops (and a value it reads from a buffer it
// writes is the one its own iteration wrote).

enum class ArrayKind { Lane, Replicated, Shared };

struct ArrayPlan {
  ArrayKind kind = ArrayKind::Shared;
  Type elementType;
  SmallVector<int64_t, 4> norm; // shape without axes of size 1
  int64_t numElements = 1;
  bool perChunk = true; // Lane: one value per chunk (else per key)
  int64_t units = 1;    // Lane: values per lane
  bool viewed = false;  // the source of a reinterpret_cast
};

enum class NestMode { Expanded, Flat, LaneZero, Redundant };

struct NestPlan {
  /// The perfectly nested loops of constant trip count from the root.
  SmallVector<scf::ForOp, 4> loops;
  SmallVector<int64_t, 4> trips;
  unsigned depth = 0; // loops that may run in parallel
  NestMode mode = NestMode::LaneZero;
  unsigned p = 0;       // Expanded: loops bound to D's axes
  bool perChunk = true; // Expanded: once per chunk (else per key)
  /// Expanded per key with V > 1: loads read and stores written as vectors
  /// of V keys.
  SmallVector<memref::LoadOp, 2> vectorLoads;
  SmallVector<memref::StoreOp, 2> vectorStores;
};

struct KernelPlan {
  SmallVector<int64_t, 4> keyShape; // D
  int64_t n = 1, vec = 1, lanes = 1, chunks = 1;
  int64_t groups = 1, threads = 1;
  int64_t sharedBytes = 0;
  llvm::MapVector<Value, ArrayPlan> arrays; // by alloca
  DenseMap<Operation *, NestPlan> nests;    // by root scf.for
  /// Kernel arguments accessed as vectors (they must be aligned).
  llvm::SetVector<Value> vectorArgs;
  bool usesShuffles = false;

  bool isPrefixOfKeys(ArrayRef<int64_t> shape) const {
    return shape.size() <= keyShape.size() &&
           std::equal(shape.begin(), shape.end(), keyShape.begin());
  }
  /// Keys per prefix of `p` axes: prod(D[p:]).
  int64_t strideAfter(unsigned p) const {
    return productOf(ArrayRef<int64_t>(keyShape).drop_front(p));
  }
};

/// Registers per lane that scratch rows may take before the largest move to
/// shared memory.
constexpr int64_t kMaxLaneRegisters = 160;
/// Shared memory of one block (the default limit without opt-in).
constexpr int64_t kSharedBytesPerBlock = 48 * 1024;
constexpr int64_t kBlockThreads = 256;

class KernelAnalysis {
public:
  KernelAnalysis(func::FuncOp kernel, KernelPlan &plan)
      : kernel(kernel), plan(plan) {}
  LogicalResult run();

private:
  void collect(Block &block);
  void analyseNest(scf::ForOp root);
  bool decide();
  void finish();

  func::FuncOp kernel;
  KernelPlan &plan;
  SmallVector<Operation *> statements; // stores and loads outside nests
  SmallVector<scf::ForOp> roots;
};

void KernelAnalysis::collect(Block &block) {
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      roots.push_back(loop);
      analyseNest(loop);
      continue;
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      ArrayPlan a;
      a.elementType = alloca.getType().getElementType();
      a.norm = normalShape(alloca.getType());
      a.numElements = productOf(alloca.getType().getShape());
      plan.arrays[alloca.getResult()] = a;
      continue;
    }
    if (isa<memref::LoadOp, memref::StoreOp>(op))
      statements.push_back(&op);
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        collect(inner);
  }
}

/// The perfect nest of `root`, and the depth to which it may run in
/// parallel.
void KernelAnalysis::analyseNest(scf::ForOp root) {
  NestPlan nest;
  for (scf::ForOp loop = root; loop;) {
    auto lower = loop.getLowerBound().getDefiningOp<arith::ConstantIndexOp>();
    auto upper = loop.getUpperBound().getDefiningOp<arith::ConstantIndexOp>();
    if (!lower || !upper || lower.value() != 0 ||
        !isConstantIndex(loop.getStep(), 1) || loop.getNumResults() != 0)
      break;
    nest.loops.push_back(loop);
    nest.trips.push_back(upper.value());
    Block *body = loop.getBody();
    scf::ForOp inner;
    if (body->getOperations().size() == 2)
      inner = dyn_cast<scf::ForOp>(body->front());
    loop = inner;
  }
  // Stores at the indices of the leading loops; reads of written buffers
  // at the indices they are written.
  unsigned depth = nest.loops.size();
  DenseMap<Value, SmallVector<Value, 4>> written; // root -> indices
  bool viewAccess = false;
  root.walk([&](memref::StoreOp store) {
    Value memref = store.getMemRef();
    if (memref != rootOf(memref))
      viewAccess = true;
    SmallVector<Value, 4> idx;
    Value row;
    if (!normalise(memref, store.getIndices(), idx, &row)) {
      depth = 0;
      return;
    }
    if (row && root->isAncestor(row.getParentRegion()->getParentOp()))
      depth = 0;
    unsigned matched = 0;
    while (matched < idx.size() && matched < nest.loops.size() &&
           idx[matched] == nest.loops[matched].getInductionVar())
      ++matched;
    depth = std::min(depth, matched);
    SmallVector<Value, 4> all(store.getIndices());
    auto [it, inserted] = written.try_emplace(rootOf(memref), all);
    if (!inserted && it->second != all)
      depth = 0;
  });
  root.walk([&](memref::LoadOp load) {
    Value memref = load.getMemRef();
    auto it = written.find(rootOf(memref));
    if (it == written.end())
      return;
    if (memref != rootOf(memref) ||
        SmallVector<Value, 4>(load.getIndices()) != it->second)
      depth = 0;
  });
  if (viewAccess)
    depth = 0;
  nest.depth = depth;
  plan.nests[root] = std::move(nest);
}

/// One round of the class and mode decisions; true when something changed.
bool KernelAnalysis::decide() {
  bool changed = false;
  auto arrayOf = [&](Value memref) -> ArrayPlan * {
    auto it = plan.arrays.find(rootOf(memref));
    return it == plan.arrays.end() ? nullptr : &it->second;
  };
  auto demote = [&](ArrayPlan *a) {
    if (a && a->kind != ArrayKind::Shared) {
      a->kind = ArrayKind::Shared;
      changed = true;
    }
  };
  // Outside nests every lane runs the statement: a lane's own elements
  // cannot be read or written there.
  for (Operation *op : statements) {
    Value memref = isa<memref::LoadOp>(op)
                       ? cast<memref::LoadOp>(op).getMemRef()
                       : cast<memref::StoreOp>(op).getMemRef();
    ArrayPlan *a = arrayOf(memref);
    if (a && a->kind == ArrayKind::Lane)
      demote(a);
  }
  for (scf::ForOp root : roots) {
    NestPlan &nest = plan.nests[root];
    bool writesMemory = false, writesLane = false;
    root.walk([&](memref::StoreOp store) {
      ArrayPlan *a = arrayOf(store.getMemRef());
      if (!a || a->kind == ArrayKind::Shared)
        writesMemory = true;
      else if (a->kind == ArrayKind::Lane)
        writesLane = true;
    });
    // How the nest runs.
    unsigned q = std::min<unsigned>(nest.depth, plan.keyShape.size());
    bool compatible =
        q >= 1 && std::equal(nest.trips.begin(), nest.trips.begin() + q,
                             plan.keyShape.begin());
    if (nest.depth == 0)
      nest.mode =
          writesMemory || writesLane ? NestMode::LaneZero : NestMode::Redundant;
    else if (compatible)
      nest.mode = NestMode::Expanded;
    else
      nest.mode = NestMode::Flat;
    nest.p = nest.mode == NestMode::Expanded ? q : 0;
    auto ivsMatch = [&](ArrayRef<Value> idx, size_t count) {
      if (idx.size() != count)
        return false;
      for (size_t i = 0; i < count; ++i)
        if (idx[i] != nest.loops[i].getInductionVar())
          return false;
      return true;
    };
    root.walk([&](Operation *op) {
      Value memref;
      ValueRange indices;
      bool isStore = false;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        memref = load.getMemRef();
        indices = load.getIndices();
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        memref = store.getMemRef();
        indices = store.getIndices();
        isStore = true;
      } else {
        return;
      }
      ArrayPlan *a = arrayOf(memref);
      if (!a)
        return;
      if (a->kind == ArrayKind::Replicated && isStore &&
          nest.mode != NestMode::Redundant)
        demote(a);
      if (a->kind != ArrayKind::Lane)
        return;
      if (nest.mode != NestMode::Expanded) {
        demote(a);
        return;
      }
      SmallVector<Value, 4> idx;
      size_t rank = a->norm.size();
      if (!normalise(memref, indices, idx) || !ivsMatch(idx, rank) ||
          rank > nest.p || (isStore && rank != nest.p))
        demote(a);
    });
  }
  return changed;
}

LogicalResult KernelAnalysis::run() {
  gnnk::ForVerticesOp vertices;
  for (Operation &op : kernel.getBody().front()) {
    if (auto loop = dyn_cast<gnnk::ForVerticesOp>(op)) {
      if (vertices)
        return loop.emitError("the CUDA printer needs one vertex loop per "
                              "kernel");
      vertices = loop;
      continue;
    }
    if (!isa<arith::ConstantOp, func::ReturnOp>(op))
      return op.emitError("the CUDA printer does not support '")
             << op.getName() << "' outside the vertex loop";
  }
  if (!vertices)
    return kernel.emitError("the CUDA printer needs a vertex loop");
  WalkResult nested = vertices.getBodyBlock()->walk([&](Operation *op) {
    if (isa<gnnk::ForVerticesOp>(op) ||
        (isa<gnnk::ForEdgesOp>(op) && op->getParentOfType<scf::ForOp>()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return kernel.emitError("the CUDA printer needs the edge loop outside "
                            "feature loops");
  collect(*vertices.getBodyBlock());

  // D: the key shape of the parallel nests that covers the most work.
  std::vector<SmallVector<int64_t, 4>> candidates;
  for (scf::ForOp root : roots) {
    const NestPlan &nest = plan.nests[root];
    if (nest.depth > 0)
      candidates.emplace_back(nest.trips.begin(),
                              nest.trips.begin() + nest.depth);
  }
  double best = -1;
  for (const auto &cand : candidates) {
    double score = 0;
    for (scf::ForOp root : roots) {
      const NestPlan &nest = plan.nests[root];
      unsigned q = std::min<unsigned>(nest.depth, cand.size());
      if (q == 0 ||
          !std::equal(nest.trips.begin(), nest.trips.begin() + q, cand.begin()))
        continue;
      score +=
          static_cast<double>(productOf(nest.trips)) *
          static_cast<double>(productOf(ArrayRef<int64_t>(cand).take_front(q)));
    }
    bool better = score > best ||
                  (score == best && productOf(cand) > productOf(plan.keyShape));
    if (better) {
      best = score;
      plan.keyShape = cand;
    }
  }
  plan.n = productOf(plan.keyShape);
  plan.vec = plan.n >= 4 && plan.n % 4 == 0 ? 4 : plan.n % 2 == 0 ? 2 : 1;
  plan.lanes =
      std::min<int64_t>(32, pow2Ceil((plan.n + plan.vec - 1) / plan.vec));
  plan.chunks = (plan.n + plan.lanes * plan.vec - 1) / (plan.lanes * plan.vec);

  // Classes: scalars replicated, prefixes of D in lanes, the rest shared;
  // then demote until every access agrees.
  kernel.walk([&](memref::ReinterpretCastOp view) {
    auto it = plan.arrays.find(rootOf(view.getSource()));
    if (it != plan.arrays.end())
      it->second.viewed = true;
  });
  for (auto &[value, a] : plan.arrays) {
    if (a.viewed)
      a.kind = ArrayKind::Shared;
    else if (a.norm.empty())
      a.kind = ArrayKind::Replicated;
    else if (plan.isPrefixOfKeys(a.norm))
      a.kind = ArrayKind::Lane;
    else
      a.kind = ArrayKind::Shared;
  }
  while (decide()) {
  }
  finish();
  if (plan.groups < 1)
    return kernel.emitError("the scratch rows of this kernel need ")
           << plan.sharedBytes << " bytes of shared memory per vertex; the "
           << "CUDA printer supports at most " << kSharedBytesPerBlock;
  return success();
}

void KernelAnalysis::finish() {
  // Units of the register rows; the largest move to shared memory when
  // they take too many registers.
  auto unitsOf = [&](ArrayPlan &a) {
    a.perChunk = plan.strideAfter(a.norm.size()) % plan.vec == 0;
    a.units = a.perChunk ? plan.chunks : plan.chunks * plan.vec;
  };
  int64_t registers = 0;
  for (auto &[value, a] : plan.arrays)
    if (a.kind == ArrayKind::Lane) {
      unitsOf(a);
      registers += a.units;
    }
  while (registers > kMaxLaneRegisters) {
    ArrayPlan *largest = nullptr;
    for (auto &[value, a] : plan.arrays)
      if (a.kind == ArrayKind::Lane && (!largest || a.units > largest->units))
        largest = &a;
    registers -= largest->units;
    largest->kind = ArrayKind::Shared;
  }
  // A demotion may change how nests that read the row run.
  while (decide()) {
  }
  for (auto &[value, a] : plan.arrays)
    if (a.kind == ArrayKind::Lane)
      unitsOf(a);
  // (Nests in program order, so that the printed code does not depend on
  // where the ops are in memory.)
  for (scf::ForOp root : roots) {
    NestPlan &nest = plan.nests[root];
    if (nest.mode != NestMode::Expanded)
      continue;
    nest.perChunk = plan.strideAfter(nest.p) % plan.vec == 0;
  }
  // Vector loads and stores: global rows at the nest's own keys, in nests
  // that run once per key over all of D.
  for (scf::ForOp root : roots) {
    Operation *rootOp = root;
    NestPlan &nest = plan.nests[root];
    if (nest.mode != NestMode::Expanded || nest.perChunk || plan.vec == 1 ||
        nest.p != plan.keyShape.size())
      continue;
    scf::ForOp innermost = nest.loops[nest.p - 1];
    // Only the perfectly nested part is bound to keys.
    if (nest.loops.size() != nest.p)
      continue;
    DenseMap<Value, int> loads, stores;
    rootOp->walk([&](Operation *op) {
      if (auto l = dyn_cast<memref::LoadOp>(op))
        ++loads[l.getMemRef()];
      if (auto s = dyn_cast<memref::StoreOp>(op))
        ++stores[s.getMemRef()];
    });
    auto eligible = [&](Operation *op, Value memref, ValueRange indices) {
      if (op->getBlock() != innermost.getBody() ||
          plan.arrays.count(rootOf(memref)) || memref != rootOf(memref))
        return false;
      SmallVector<int64_t, 4> rowShape =
          normalShape(cast<MemRefType>(memref.getType()));
      if (ArrayRef<int64_t>(rowShape) != ArrayRef<int64_t>(plan.keyShape))
        return false;
      SmallVector<Value, 4> idx;
      Value row;
      if (!normalise(memref, indices, idx, &row) ||
          idx.size() != nest.loops.size())
        return false;
      for (size_t i = 0; i < idx.size(); ++i)
        if (idx[i] != nest.loops[i].getInductionVar())
          return false;
      return !row || !rootOp->isAncestor(row.getParentRegion()->getParentOp());
    };
    for (Operation &op : *innermost.getBody()) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        if (!stores.count(load.getMemRef()) &&
            eligible(load, load.getMemRef(), load.getIndices())) {
          nest.vectorLoads.push_back(load);
          plan.vectorArgs.insert(load.getMemRef());
        }
      if (auto store = dyn_cast<memref::StoreOp>(op))
        if (!loads.count(store.getMemRef()) && stores[store.getMemRef()] == 1 &&
            eligible(store, store.getMemRef(), store.getIndices())) {
          nest.vectorStores.push_back(store);
          plan.vectorArgs.insert(store.getMemRef());
        }
    }
  }
  // With one lane per vertex nothing is shared: every row is the thread's.
  if (plan.lanes == 1)
    for (auto &[value, a] : plan.arrays)
      if (a.kind == ArrayKind::Shared)
        a.kind = ArrayKind::Replicated;
  // Shared memory: one row of every shared array per group.
  plan.sharedBytes = 0;
  for (auto &[value, a] : plan.arrays)
    if (a.kind == ArrayKind::Shared) {
      int64_t bytes =
          a.elementType.isInteger(1)
              ? 1
              : std::max<int64_t>(1, a.elementType.getIntOrFloatBitWidth() / 8);
      plan.sharedBytes += (a.numElements * bytes + 7) / 8 * 8;
    }
  plan.groups = kBlockThreads / plan.lanes;
  if (plan.sharedBytes > 0)
    plan.groups =
        std::min<int64_t>(plan.groups, kSharedBytesPerBlock / plan.sharedBytes);
  plan.threads = plan.groups * plan.lanes;
}

//===----------------------------------------------------------------------===//
// Kernels: printing
//===----------------------------------------------------------------------===//

class KernelPrinter {
public:
  KernelPrinter(KernelInfo &info, SourceFiles &sources, CodeWriter &w)
      : info(info), kernel(info.func), sources(sources), w(&w) {}

  /// The __global__ function and its host launcher.
  LogicalResult print();

private:
  /// What the body of the nest being printed runs for.
  struct Unit {
    const NestPlan *nest = nullptr;
    bool perKey = false; // inside the loop over the V keys of a chunk
    std::string primary; // the unit that stores shared rows ("" all)
    DenseMap<Operation *, std::string> vectors; // vector load/store -> array
  };

  Expr expr(Value v);
  /// Values whose names the printed code has used.
  DenseSet<Value> referenced;
  FailureOr<Expr> build(Operation *op);
  std::string index(Value memref, ValueRange indices);
  std::string access(Operation *op, Value memref, ValueRange indices);
  std::string chunkIndex() const { return plan.chunks == 1 ? "0" : "c"; }
  std::string keyIndex() const;
  bool inlinable(Operation *op);
  void setSource(Operation *op);
  std::string fresh(StringRef base) { return namer.unique(base); }
  std::string ivName() {
    static const char *const kNames[] = {"i", "j", "k", "l"};
    std::string name =
        loopDepth < 4 ? kNames[loopDepth] : "i" + std::to_string(loopDepth);
    ++loopDepth;
    namer.reserve(name);
    return name;
  }

  LogicalResult printBlock(Block &block);
  LogicalResult printStatement(Operation &op);
  LogicalResult printOp(Operation &op);
  LogicalResult printFor(scf::ForOp loop);
  LogicalResult printNest(scf::ForOp root);
  LogicalResult printExpanded(scf::ForOp root, const NestPlan &nest);
  LogicalResult printLoopsFrom(const NestPlan &nest, unsigned from,
                               Block *&body);
  LogicalResult printEdges(gnnk::ForEdgesOp loop);
  void printAlloca(memref::AllocaOp alloca);

  // Shared-memory hazards between statements.
  void sharedAccesses(Operation *op, DenseSet<Value> &reads,
                      DenseSet<Value> &writes);
  bool touchesShared(Operation *op);
  void syncBefore(Operation *op);
  void sync();

  KernelInfo &info;
  func::FuncOp kernel;
  SourceFiles &sources;
  /// Where lines go (a nest's body is printed before what declares it).
  CodeWriter *w;
  KernelPlan plan;
  Namer namer;
  DenseMap<Value, std::string> names;
  DenseMap<Value, std::string> arrayNames; // alloca -> variable
  DenseMap<Value, std::string> seeds;      // dropout seed value -> variable
  unsigned loopDepth = 0;
  unsigned temps = 0;
  SourceLine lastComment;
  Unit *unit = nullptr;
  DenseSet<Value> pendingReads, pendingWrites;
  bool usesMask = false, usesLane = false, usesTraining = false,
       usesKey0 = false;
};

void KernelPrinter::setSource(Operation *op) {
  SourceLoc loc = primaryLoc(op->getLoc());
  w->setSource(loc.toLine());
  if (loc && loc.toLine() != lastComment) {
    writeLocationComment(*w, sources, {loc});
    lastComment = loc.toLine();
  }
}

/// The flat index of `indices` into `memref` (row-major, static strides
/// behind a leading `?`).
std::string KernelPrinter::index(Value memref, ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  std::string out;
  for (auto [i, idx] : llvm::enumerate(indices)) {
    if (isConstantIndex(idx, 0))
      continue;
    Expr e = expr(idx);
    std::string term = strides[i] == 1
                           ? wrap(e, kAdd)
                           : wrap(e, kMul) + " * " + std::to_string(strides[i]);
    out += (out.empty() ? "" : " + ") + term;
  }
  return out.empty() ? "0" : out;
}

/// The unit index of a per-key register row in the current unit.
std::string KernelPrinter::keyIndex() const {
  if (plan.chunks == 1)
    return "s";
  return "c * " + std::to_string(plan.vec) + " + s";
}

std::string KernelPrinter::access(Operation *op, Value memref,
                                  ValueRange indices) {
  if (unit) {
    auto it = unit->vectors.find(op);
    if (it != unit->vectors.end())
      return it->second + "[s]";
  }
  Value root = rootOf(memref);
  auto it = plan.arrays.find(root);
  std::string base =
      it == plan.arrays.end() ? expr(memref).text : arrayNames.lookup(root);
  if (it == plan.arrays.end())
    return base + "[" + index(memref, indices) + "]";
  const ArrayPlan &a = it->second;
  switch (a.kind) {
  case ArrayKind::Replicated:
    if (a.numElements == 1)
      return base;
    return base + "[" + index(memref, indices) + "]";
  case ArrayKind::Lane:
    if (a.units == 1)
      return base;
    return base + "[" + (a.perChunk ? chunkIndex() : keyIndex()) + "]";
  case ArrayKind::Shared:
    return base + "[" + index(memref, indices) + "]";
  }
  return base;
}

/// Whether `op`'s single result can be written into its user's expression:
/// one use, in the same block, with no write to memory in between.
bool KernelPrinter::inlinable(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return false;
  Operation *user = *op->getResult(0).getUsers().begin();
  if (user->getBlock() != op->getBlock())
    return false;
  for (Operation *it = op->getNextNode(); it && it != user;
       it = it->getNextNode())
    if (isa<memref::StoreOp>(it) || it->getNumRegions() > 0)
      return false;
  return true;
}

Expr KernelPrinter::expr(Value v) {
  auto it = names.find(v);
  if (it != names.end()) {
    referenced.insert(v);
    return {it->second, kPrimary};
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return {"<?>", kPrimary};
  FailureOr<Expr> e = build(def);
  return succeeded(e) ? *e : Expr{"<?>", kPrimary};
}

FailureOr<Expr> KernelPrinter::build(Operation *op) {
  auto binary = [&](Value a, Value b, StringRef sym, int prec) -> Expr {
    return {wrap(expr(a), prec) + " " + sym.str() + " " +
                wrap(expr(b), prec - 1),
            prec};
  };
  // Float maths: the f32 function of the CUDA maths library (expf), the
  // double one for f64.
  auto math = [&](StringRef fn, Operation *o) -> Expr {
    bool f32 = o->getResult(0).getType().isF32();
    std::string text = fn.str() + (f32 ? "f" : "") + "(";
    for (auto [i, a] : llvm::enumerate(o->getOperands()))
      text += (i ? ", " : "") + wrap(expr(a), kCond);
    return {text + ")", kPrimary};
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Expr>>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> FailureOr<Expr> {
        Attribute value = c.getValue();
        if (auto f = dyn_cast<FloatAttr>(value)) {
          std::string text =
              floatLiteral(f.getValueAsDouble(), f.getType().isF32());
          return Expr{text, text[0] == '-' ? kUnary : kPrimary};
        }
        if (auto i = dyn_cast<IntegerAttr>(value)) {
          if (i.getType().isInteger(1))
            return Expr{i.getValue().isZero() ? "false" : "true", kPrimary};
          int64_t v = i.getValue().getSExtValue();
          return Expr{std::to_string(v), v < 0 ? kUnary : kPrimary};
        }
        return op->emitError("the CUDA printer cannot print this constant");
      })
      .Case<arith::AddFOp, arith::AddIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "+", kAdd); })
      .Case<arith::SubFOp, arith::SubIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "-", kAdd); })
      .Case<arith::MulFOp, arith::MulIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "*", kMul); })
      .Case<arith::DivFOp, arith::DivSIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "/", kMul); })
      .Case<arith::RemSIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "%", kMul); })
      .Case<arith::RemFOp>([&](arith::RemFOp o) { return math("fmod", o); })
      .Case<arith::AndIOp>([&](arith::AndIOp o) {
        return o.getType().isInteger(1)
                   ? binary(o.getLhs(), o.getRhs(), "&&", kAnd)
                   : binary(o.getLhs(), o.getRhs(), "&", kAnd);
      })
      .Case<arith::OrIOp>([&](arith::OrIOp o) {
        return o.getType().isInteger(1)
                   ? binary(o.getLhs(), o.getRhs(), "||", kOr)
                   : binary(o.getLhs(), o.getRhs(), "|", kOr);
      })
      .Case<arith::XOrIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "!=", kEq); })
      .Case<arith::NegFOp>([&](arith::NegFOp o) {
        return Expr{"-" + wrap(expr(o.getOperand()), kUnary), kUnary};
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp o) -> FailureOr<Expr> {
        using P = arith::CmpFPredicate;
        Value a = o.getLhs(), b = o.getRhs();
        switch (o.getPredicate()) {
        case P::OGT:
          return binary(a, b, ">", kRel);
        case P::OGE:
          return binary(a, b, ">=", kRel);
        case P::OLT:
          return binary(a, b, "<", kRel);
        case P::OLE:
          return binary(a, b, "<=", kRel);
        case P::OEQ:
          return binary(a, b, "==", kEq);
        case P::UNE:
          return binary(a, b, "!=", kEq);
        case P::UGT:
          return Expr{"!(" + binary(a, b, "<=", kRel).text + ")", kUnary};
        case P::UGE:
          return Expr{"!(" + binary(a, b, "<", kRel).text + ")", kUnary};
        case P::ULT:
          return Expr{"!(" + binary(a, b, ">=", kRel).text + ")", kUnary};
        case P::ULE:
          return Expr{"!(" + binary(a, b, ">", kRel).text + ")", kUnary};
        case P::AlwaysTrue:
          return Expr{"true", kPrimary};
        case P::AlwaysFalse:
          return Expr{"false", kPrimary};
        default:
          return o.emitError("the CUDA printer does not support this "
                             "comparison");
        }
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp o) -> FailureOr<Expr> {
        using P = arith::CmpIPredicate;
        Value a = o.getLhs(), b = o.getRhs();
        switch (o.getPredicate()) {
        case P::eq:
          return binary(a, b, "==", kEq);
        case P::ne:
          return binary(a, b, "!=", kEq);
        case P::slt:
        case P::ult:
          return binary(a, b, "<", kRel);
        case P::sle:
        case P::ule:
          return binary(a, b, "<=", kRel);
        case P::sgt:
        case P::ugt:
          return binary(a, b, ">", kRel);
        case P::sge:
        case P::uge:
          return binary(a, b, ">=", kRel);
        }
        return failure();
      })
      .Case<arith::SelectOp>([&](arith::SelectOp o) {
        return Expr{wrap(expr(o.getCondition()), kOr) + " ? " +
                        wrap(expr(o.getTrueValue()), kCond - 1) + " : " +
                        wrap(expr(o.getFalseValue()), kCond - 1),
                    kCond};
      })
      .Case<arith::IndexCastOp>(
          [&](arith::IndexCastOp o) { return expr(o.getIn()); })
      .Case<arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp, arith::ExtFOp,
            arith::TruncFOp>([&](auto o) {
        return Expr{"static_cast<" + cTypeOf(o.getType()) + ">(" +
                        wrap(expr(o.getIn()), kCond) + ")",
                    kPrimary};
      })
      .Case<math::ExpOp>([&](auto o) { return math("exp", o); })
      .Case<math::LogOp>([&](auto o) { return math("log", o); })
      .Case<math::SqrtOp>([&](auto o) { return math("sqrt", o); })
      .Case<math::RsqrtOp>([&](math::RsqrtOp o) {
        bool f32 = o.getType().isF32();
        return Expr{(f32 ? "1.0f / " : "1.0 / ") + math("sqrt", o).text, kMul};
      })
      .Case<math::AbsFOp>([&](auto o) { return math("fabs", o); })
      .Case<math::TanhOp>([&](auto o) { return math("tanh", o); })
      .Case<math::ErfOp>([&](auto o) { return math("erf", o); })
      .Case<math::PowFOp>([&](auto o) { return math("pow", o); })
      .Case<math::SinOp>([&](auto o) { return math("sin", o); })
      .Case<math::CosOp>([&](auto o) { return math("cos", o); })
      .Case<math::FloorOp>([&](auto o) { return math("floor", o); })
      .Case<math::CeilOp>([&](auto o) { return math("ceil", o); })
      .Case<memref::LoadOp>([&](memref::LoadOp o) {
        return Expr{access(o, o.getMemRef(), o.getIndices()), kPrimary};
      })
      .Case<gnnk::DegreeOp>([&](gnnk::DegreeOp o) {
        std::string v = expr(o.getVertex()).text;
        return Expr{"g.ptr[" + v + " + 1] - g.ptr[" + v + "]", kAdd};
      })
      .Case<gnnk::DropoutKeepOp>([&](gnnk::DropoutKeepOp o) {
        usesTraining = true;
        // keep when the hash's top 53 bits m satisfy m * 2^-53 >= p, that
        // is m >= ceil(p * 2^53); scale 1 / (1 - p) rounded to float.
        double p = o.getPAttr().getValueAsDouble();
        uint64_t threshold = 0;
        if (p >= 1.0)
          threshold = uint64_t(1) << 53;
        else if (p > 0.0)
          threshold = static_cast<uint64_t>(std::ceil(std::ldexp(p, 53)));
        double scale = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
        std::string text =
            "rt::cuda::dropoutKeep(training, " + seeds.lookup(o.getSeed()) +
            ", static_cast<uint64_t>(" + wrap(expr(o.getIndex()), kCond) +
            "), " + std::to_string(threshold) + "ull, " +
            floatLiteral(static_cast<float>(scale), true) + ")";
        if (!o.getType().isF32())
          text = "static_cast<" + cTypeOf(o.getType()) + ">(" + text + ")";
        return Expr{text, kPrimary};
      })
      .Default([&](Operation *other) -> FailureOr<Expr> {
        return other->emitError("the CUDA printer does not support '")
               << other->getName() << "' in a kernel";
      });
}

//===--- Shared-memory hazards ---===//

void KernelPrinter::sharedAccesses(Operation *op, DenseSet<Value> &reads,
                                   DenseSet<Value> &writes) {
  auto shared = [&](Value memref) -> Value {
    Value root = rootOf(memref);
    auto it = plan.arrays.find(root);
    if (it == plan.arrays.end() || it->second.kind != ArrayKind::Shared)
      return Value();
    return root;
  };
  op->walk([&](Operation *inner) {
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      if (Value s = shared(load.getMemRef()))
        reads.insert(s);
    if (auto store = dyn_cast<memref::StoreOp>(inner))
      if (Value s = shared(store.getMemRef()))
        writes.insert(s);
  });
}

bool KernelPrinter::touchesShared(Operation *op) {
  DenseSet<Value> reads, writes;
  sharedAccesses(op, reads, writes);
  return !reads.empty() || !writes.empty();
}

void KernelPrinter::sync() {
  usesMask = true;
  w->line("__syncwarp(mask);");
  pendingReads.clear();
  pendingWrites.clear();
}

/// Before a statement: a barrier when it reads a shared row another lane
/// may have written since the last one, or writes one another lane may
/// have read or written. Then the statement's accesses are pending.
void KernelPrinter::syncBefore(Operation *op) {
  DenseSet<Value> reads, writes;
  sharedAccesses(op, reads, writes);
  bool hazard = false;
  for (Value r : reads)
    hazard = hazard || pendingWrites.count(r);
  for (Value x : writes)
    hazard = hazard || pendingWrites.count(x) || pendingReads.count(x);
  if (hazard && plan.lanes > 1)
    sync();
  pendingReads.insert(reads.begin(), reads.end());
  pendingWrites.insert(writes.begin(), writes.end());
}

//===--- Statements ---===//

LogicalResult KernelPrinter::printBlock(Block &block) {
  for (Operation &op : block)
    if (failed(printStatement(op)))
      return failure();
  return success();
}

void KernelPrinter::printAlloca(memref::AllocaOp alloca) {
  const ArrayPlan &a = plan.arrays[alloca.getResult()];
  setSource(alloca);
  std::string base;
  SourceLoc loc = primaryLoc(alloca.getLoc());
  SourceLoc kernelLoc = primaryLoc(kernel.getLoc());
  if (alloca.getType().getRank() == 0 &&
      alloca.getType().getElementType().isInteger(1))
    base = "first";
  else if (loc.line == kernelLoc.line && loc.column == kernelLoc.column)
    base = "acc";
  else
    base = nameAt(sources.line(loc.file, loc.line), loc.column).first;
  if (base.empty())
    base = "row";
  std::string name = fresh(base);
  arrayNames[alloca.getResult()] = name;
  std::string elem = cTypeOf(a.elementType);
  switch (a.kind) {
  case ArrayKind::Replicated:
    if (a.numElements == 1)
      w->line(elem + " " + name + " = " + (elem == "bool" ? "false" : "0") +
              ";");
    else
      w->line(elem + " " + name + "[" + std::to_string(a.numElements) + "];");
    break;
  case ArrayKind::Lane:
    if (a.units == 1)
      w->line(elem + " " + name + ";");
    else
      w->line(elem + " " + name + "[" + std::to_string(a.units) + "];");
    break;
  case ArrayKind::Shared:
    // The group's row of the block's shared array (declared at the top).
    w->line(elem + " *const " + name + " = " + name + "_rows[group];");
    break;
  }
}

LogicalResult KernelPrinter::printStatement(Operation &op) {
  if (isa<gnnk::YieldOp, scf::YieldOp, func::ReturnOp, arith::ConstantOp>(op))
    return success();
  if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
    printAlloca(alloca);
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    syncBefore(loop);
    return printNest(loop);
  }
  if (auto loop = dyn_cast<gnnk::ForEdgesOp>(op))
    return printEdges(loop);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return ifOp.emitError("the CUDA printer does not support scf.if with "
                            "results");
    setSource(ifOp);
    // The condition is the same in every lane of the group (statements
    // compute group-uniform values), so barriers inside are reached by all.
    w->line("if (" + expr(ifOp.getCondition()).text + ") {");
    w->indent();
    DenseSet<Value> beforeReads = pendingReads, beforeWrites = pendingWrites;
    if (failed(printBlock(ifOp.getThenRegion().front())))
      return failure();
    DenseSet<Value> thenReads = pendingReads, thenWrites = pendingWrites;
    w->dedent();
    if (!ifOp.getElseRegion().empty()) {
      w->line("} else {");
      w->indent();
      pendingReads = beforeReads;
      pendingWrites = beforeWrites;
      if (failed(printBlock(ifOp.getElseRegion().front())))
        return failure();
      w->dedent();
    } else {
      pendingReads = beforeReads;
      pendingWrites = beforeWrites;
    }
    pendingReads.insert(thenReads.begin(), thenReads.end());
    pendingWrites.insert(thenWrites.begin(), thenWrites.end());
    w->line("}");
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    syncBefore(store);
    setSource(store);
    Value root = rootOf(store.getMemRef());
    auto it = plan.arrays.find(root);
    bool replicated =
        it != plan.arrays.end() && it->second.kind == ArrayKind::Replicated;
    std::string line = access(store, store.getMemRef(), store.getIndices()) +
                       " = " + expr(store.getValueToStore()).text + ";";
    if (replicated || plan.lanes == 1) {
      w->line(line);
    } else {
      // Memory other lanes read: one lane writes it.
      usesLane = true;
      w->line("if (lane == 0)");
      w->indent();
      w->line(line);
      w->dedent();
    }
    return success();
  }
  if (auto load = dyn_cast<memref::LoadOp>(op))
    syncBefore(load);
  return printOp(op);
}

/// A scalar op: written into its user, or declared here.
LogicalResult KernelPrinter::printOp(Operation &op) {
  if (isa<gnnk::YieldOp, scf::YieldOp, arith::ConstantOp>(op))
    return success();
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return printFor(loop);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return ifOp.emitError("the CUDA printer does not support scf.if with "
                            "results");
    setSource(ifOp);
    w->line("if (" + expr(ifOp.getCondition()).text + ") {");
    w->indent();
    for (Operation &inner : ifOp.getThenRegion().front())
      if (failed(printOp(inner)))
        return failure();
    w->dedent();
    if (!ifOp.getElseRegion().empty()) {
      w->line("} else {");
      w->indent();
      for (Operation &inner : ifOp.getElseRegion().front())
        if (failed(printOp(inner)))
          return failure();
      w->dedent();
    }
    w->line("}");
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    setSource(store);
    std::string line = access(store, store.getMemRef(), store.getIndices()) +
                       " = " + expr(store.getValueToStore()).text + ";";
    // A unit that is not the first of its prefix does not write memory
    // other lanes read (it would write the same values again).
    Value root = rootOf(store.getMemRef());
    auto it = plan.arrays.find(root);
    bool shared =
        it == plan.arrays.end() || it->second.kind == ArrayKind::Shared;
    if (unit && shared && !unit->primary.empty() &&
        !unit->vectors.count(store)) {
      w->line("if (" + unit->primary + ")");
      w->indent();
      w->line(line);
      w->dedent();
    } else {
      w->line(line);
    }
    return success();
  }
  if (isa<memref::AllocaOp, gnnk::ForEdgesOp, gnnk::ForVerticesOp>(op))
    return op.emitError("the CUDA printer does not support '")
           << op.getName() << "' inside a feature loop";
  if (op.getNumResults() != 1 || op.getNumRegions() != 0)
    return op.emitError("the CUDA printer does not support '")
           << op.getName() << "' in a kernel";
  if (op.getResult(0).use_empty())
    return success();
  FailureOr<Expr> e = build(&op);
  if (failed(e))
    return failure();
  if (inlinable(&op))
    return success();
  setSource(&op);
  std::string name = fresh("t" + std::to_string(temps++));
  w->line("const " + cTypeOf(op.getResult(0).getType()) + " " + name + " = " +
          e->text + ";");
  names[op.getResult(0)] = name;
  return success();
}

/// A sequential loop (inside a nest, or a whole nest that one lane or every
/// lane runs).
LogicalResult KernelPrinter::printFor(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("the CUDA printer does not support scf.for with "
                          "results");
  std::string iv = ivName();
  names[loop.getInductionVar()] = iv;
  setSource(loop);
  std::string step = expr(loop.getStep()).text;
  w->line("for (int64_t " + iv + " = " + expr(loop.getLowerBound()).text +
          "; " + iv + " < " + wrap(expr(loop.getUpperBound()), kAdd) + "; " +
          (step == "1" ? "++" + iv : iv + " += " + step) + ") {");
  w->indent();
  for (Operation &op : *loop.getBody())
    if (failed(printOp(op)))
      return failure();
  --loopDepth;
  w->dedent();
  w->line("}");
  return success();
}

/// The loops of `nest` from `from` on, as plain loops; `body` receives the
/// innermost perfect body (the caller closes the braces: one per loop).
LogicalResult KernelPrinter::printLoopsFrom(const NestPlan &nest, unsigned from,
                                            Block *&body) {
  for (unsigned d = from; d < nest.loops.size(); ++d) {
    scf::ForOp loop = nest.loops[d];
    std::string iv = ivName();
    names[loop.getInductionVar()] = iv;
    w->line("for (int " + iv + " = 0; " + iv + " < " +
            std::to_string(nest.trips[d]) + "; ++" + iv + ") {");
    w->indent();
  }
  scf::ForOp last = nest.loops.empty() ? scf::ForOp() : nest.loops.back();
  body = last ? last.getBody() : nullptr;
  return success();
}

LogicalResult KernelPrinter::printNest(scf::ForOp root) {
  const NestPlan &nest = plan.nests[root];
  setSource(root);
  unsigned savedDepth = loopDepth;
  LogicalResult result = success();
  switch (nest.mode) {
  case NestMode::Expanded:
    result = printExpanded(root, nest);
    break;
  case NestMode::Flat: {
    // Its own iteration space, spread over the lanes.
    usesLane = true;
    int64_t count =
        productOf(ArrayRef<int64_t>(nest.trips).take_front(nest.depth));
    std::string idx = fresh("it");
    SmallVector<std::string, 4> ivs;
    for (unsigned d = 0; d < nest.depth; ++d) {
      ivs.push_back(ivName());
      names[scf::ForOp(nest.loops[d]).getInductionVar()] = ivs.back();
    }
    CodeWriter *outer = w;
    CodeWriter body;
    w = &body;
    Block *block = nullptr;
    if (failed(printLoopsFrom(nest, nest.depth, block)))
      return failure();
    for (Operation &op : *block)
      if (failed(printOp(op)))
        return failure();
    for (unsigned d = nest.depth; d < nest.loops.size(); ++d) {
      w->dedent();
      w->line("}");
    }
    w = outer;
    w->line("for (int " + idx + " = lane; " + idx + " < " +
            std::to_string(count) + "; " + idx + " += kLanes) {");
    w->indent();
    std::string coords;
    for (unsigned d = 0; d < nest.depth; ++d) {
      if (!referenced.count(scf::ForOp(nest.loops[d]).getInductionVar()))
        continue;
      int64_t stride = productOf(ArrayRef<int64_t>(nest.trips)
                                     .take_front(nest.depth)
                                     .drop_front(d + 1));
      std::string value = idx;
      if (stride != 1)
        value += " / " + std::to_string(stride);
      if (d > 0)
        value = (stride != 1 ? "(" + value + ")" : value) + " % " +
                std::to_string(nest.trips[d]);
      coords += (coords.empty() ? "" : ", ") + ivs[d] + " = " + value;
    }
    if (!coords.empty())
      w->line("const int " + coords + ";");
    w->append(body);
    w->dedent();
    w->line("}");
    break;
  }
  case NestMode::LaneZero:
    if (plan.lanes > 1) {
      usesLane = true;
      w->line("if (lane == 0) {");
      w->indent();
      result = printFor(root);
      w->dedent();
      w->line("}");
    } else {
      result = printFor(root);
    }
    break;
  case NestMode::Redundant:
    result = printFor(root);
    break;
  }
  loopDepth = savedDepth;
  return result;
}

/// A nest whose leading p loops are D's leading axes: the lane runs the
/// body for its chunks (once per chunk, or once per key of the chunk).
LogicalResult KernelPrinter::printExpanded(scf::ForOp root,
                                           const NestPlan &nest) {
  int64_t V = plan.vec;
  unsigned p = nest.p;
  bool chunkLoop = plan.chunks > 1;
  bool perKey = !nest.perChunk;
  bool guard = plan.chunks * plan.lanes * V != plan.n;
  bool oneAxis = plan.keyShape.size() == 1;
  // Stores to memory other lanes read come from one unit of each prefix
  // (the others would write the same values again).
  bool needPrimary = false;
  if (p < plan.keyShape.size())
    root.walk([&](memref::StoreOp store) {
      auto it = plan.arrays.find(rootOf(store.getMemRef()));
      if (it == plan.arrays.end() || it->second.kind == ArrayKind::Shared)
        needPrimary = true;
    });
  bool vectors =
      perKey && (!nest.vectorLoads.empty() || !nest.vectorStores.empty());

  // Names: the coordinates of the unit's key (the nest's leading loops),
  // the key, the vector rows.
  SmallVector<Value, 4> coordValues;
  SmallVector<std::string, 4> coordNames;
  for (unsigned d = 0; d < p; ++d) {
    Value iv = scf::ForOp(nest.loops[d]).getInductionVar();
    coordValues.push_back(iv);
    coordNames.push_back(ivName());
    names[iv] = coordNames.back();
  }
  std::string key =
      oneAxis ? (perKey ? coordNames[0] : "k0") : (perKey ? "key" : "k0");
  Unit u;
  u.nest = &nest;
  u.perKey = perKey;
  if (needPrimary)
    u.primary = key + " % " + std::to_string(plan.strideAfter(p)) + " == 0";
  std::vector<std::pair<memref::LoadOp, std::string>> loads;
  std::vector<std::pair<memref::StoreOp, std::string>> stores;
  if (perKey) {
    for (memref::LoadOp load : nest.vectorLoads) {
      loads.emplace_back(load, fresh(expr(load.getMemRef()).text + "_v"));
      u.vectors[load] = loads.back().second;
    }
    for (memref::StoreOp store : nest.vectorStores) {
      stores.emplace_back(store, fresh(expr(store.getMemRef()).text + "_v"));
      u.vectors[store] = stores.back().second;
    }
  }

  // The body first, to know which coordinates it reads.
  CodeWriter *outer = w;
  CodeWriter body;
  w = &body;
  unit = &u;
  Block *block = nullptr;
  if (failed(printLoopsFrom(nest, p, block)))
    return failure();
  for (Operation &op : *block)
    if (failed(printOp(op)))
      return failure();
  for (unsigned d = p; d < nest.loops.size(); ++d) {
    w->dedent();
    w->line("}");
  }
  unit = nullptr;
  w = outer;
  SmallVector<bool, 4> coordUsed;
  bool anyCoord = false;
  for (Value iv : coordValues) {
    coordUsed.push_back(referenced.count(iv) > 0);
    anyCoord = anyCoord || coordUsed.back();
  }
  bool needKey = !oneAxis && perKey && (anyCoord || needPrimary);
  bool needK0 = guard || anyCoord || needPrimary || vectors;

  if (chunkLoop) {
    w->directive("#pragma unroll");
    w->line("for (int c = 0; c < " + std::to_string(plan.chunks) + "; ++c) {");
    w->indent();
  }
  // The chunk's first key: per chunk, or once per kernel (the prologue's
  // k0) when a lane has one chunk.
  if (needK0) {
    usesLane = true;
    if (chunkLoop)
      w->line("const int k0 = (c * kLanes + lane)" +
              (V > 1 ? " * " + std::to_string(V) : std::string()) + ";");
    else
      usesKey0 = true;
  }
  // A scope for the unit's coordinates, unless a loop or the guard opens
  // one.
  bool bare = !chunkLoop && !guard && !perKey && anyCoord;
  if (guard) {
    w->line("if (k0 < " + std::to_string(plan.n) + ") {");
    w->indent();
  } else if (bare) {
    w->line("{");
    w->indent();
  }
  auto vectorBase = [&](Value memref, ValueRange indices) {
    Value row;
    SmallVector<Value, 4> idx;
    normalise(memref, indices, idx, &row);
    std::string base = expr(memref).text + " + ";
    if (row)
      base += wrap(expr(row), kMul) + " * " + std::to_string(plan.n) + " + ";
    return base + "k0";
  };
  if (perKey) {
    // Vector accesses of the chunk: loaded before its keys, stored after.
    for (auto &[load, name] : loads) {
      setSource(load);
      w->line("float " + name + "[" + std::to_string(V) + "];");
      w->line("rt::cuda::load" + std::to_string(V) + "(" + name + ", " +
              vectorBase(load.getMemRef(), load.getIndices()) + ");");
    }
    for (auto &[store, name] : stores)
      w->line("float " + name + "[" + std::to_string(V) + "];");
    w->directive("#pragma unroll");
    w->line("for (int s = 0; s < " + std::to_string(V) + "; ++s) {");
    w->indent();
  }
  if (oneAxis) {
    if (coordUsed[0])
      w->line("const int " + coordNames[0] + " = " +
              (perKey ? "k0 + s" : "k0") + ";");
  } else {
    if (needKey)
      w->line("const int key = k0 + s;");
    std::string coords;
    for (unsigned d = 0; d < p; ++d) {
      if (!coordUsed[d])
        continue;
      int64_t stride = plan.strideAfter(d + 1);
      std::string value = key;
      if (stride != 1)
        value += " / " + std::to_string(stride);
      if (d > 0)
        value = (stride != 1 ? "(" + value + ")" : value) + " % " +
                std::to_string(plan.keyShape[d]);
      coords += (coords.empty() ? "" : ", ") + coordNames[d] + " = " + value;
    }
    if (!coords.empty())
      w->line("const int " + coords + ";");
  }
  w->append(body);
  if (perKey) {
    w->dedent();
    w->line("}");
    for (auto &[store, name] : stores) {
      setSource(store);
      w->line("rt::cuda::store" + std::to_string(V) + "(" +
              vectorBase(store.getMemRef(), store.getIndices()) + ", " + name +
              ");");
    }
  }
  if (guard || bare) {
    w->dedent();
    w->line("}");
  }
  if (chunkLoop) {
    w->dedent();
    w->line("}");
  }
  return success();
}

/// The edge loop, uniform over the group: the lanes load kLanes neighbour
/// and edge ids at once and broadcast them one edge after the other, so
/// every lane sees the edges in CSR (CSC) order.
LogicalResult KernelPrinter::printEdges(gnnk::ForEdgesOp loop) {
  // Shared rows touched before the loop and in it: the first iteration
  // must see them, and each iteration the previous one's.
  bool shared = touchesShared(loop);
  if (shared && (!pendingReads.empty() || !pendingWrites.empty()) &&
      plan.lanes > 1)
    sync();
  DenseSet<Value> beforeReads = pendingReads, beforeWrites = pendingWrites;
  setSource(loop);
  std::string v = expr(loop.getVertex()).text;
  bool needU = !loop.getNeighbour().use_empty();
  bool needE = !loop.getEdge().use_empty();
  w->line("const int64_t begin = g.ptr[" + v + "], end = g.ptr[" + v +
          " + 1];");
  if (plan.lanes == 1) {
    w->line("for (int64_t at = begin; at < end; ++at) {");
    w->indent();
    if (needE)
      w->line("const int64_t e = g.eid[at];");
    if (needU)
      w->line("const int64_t u = g.nbr[at];");
  } else {
    usesLane = usesMask = true;
    plan.usesShuffles = true;
    w->line("for (int64_t base = begin; base < end; base += kLanes) {");
    w->indent();
    w->line("const int64_t mine = base + lane;");
    if (needE)
      w->line("const int lane_e = mine < end ? g.eid[mine] : 0;");
    if (needU)
      w->line("const int lane_u = mine < end ? g.nbr[mine] : 0;");
    w->line("const int count = end - base < kLanes ? static_cast<int>(end - "
            "base) : kLanes;");
    w->line("for (int t = 0; t < count; ++t) {");
    w->indent();
    if (needE)
      w->line("const int64_t e = __shfl_sync(mask, lane_e, t, kLanes);");
    if (needU)
      w->line("const int64_t u = __shfl_sync(mask, lane_u, t, kLanes);");
  }
  names[loop.getEdge()] = "e";
  names[loop.getNeighbour()] = "u";
  pendingReads.clear();
  pendingWrites.clear();
  if (failed(printBlock(*loop.getBodyBlock())))
    return failure();
  if (shared && plan.lanes > 1 &&
      (!pendingReads.empty() || !pendingWrites.empty()))
    sync();
  if (plan.lanes > 1) {
    w->dedent();
    w->line("}");
  }
  w->dedent();
  w->setSource(primaryLoc(loop.getLoc()).toLine());
  w->line("}");
  pendingReads = beforeReads;
  pendingWrites = beforeWrites;
  if (shared) {
    pendingReads.clear();
    pendingWrites.clear();
  }
  return success();
}

LogicalResult KernelPrinter::print() {
  KernelAnalysis analysis(kernel, plan);
  if (failed(analysis.run()))
    return failure();
  Block &entry = kernel.getBody().front();
  gnnk::ForVerticesOp vertices;
  for (Operation &op : entry)
    if (auto loop = dyn_cast<gnnk::ForVerticesOp>(op))
      vertices = loop;
  info.side = vertices.getBy();
  names[entry.getArgument(0)] = "g";
  for (StringRef reserved :
       {"g",        "v",         "lane",     "group",    "row",     "mask",
        "c",        "s",         "key",      "begin",    "end",     "base",
        "mine",     "lane_u",    "lane_e",   "count",    "t",       "at",
        "u",        "k0",        "e",        "training", "seed",    "kLanes",
        "kGroups",  "i",         "j",        "k",        "l",       "rt",
        "stream",   "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
        "INFINITY", "NAN",       "exp",      "expf",     "log",     "logf",
        "sqrt",     "sqrtf",     "fabs",     "fabsf",    "tanh",    "tanhf",
        "erf",      "erff",      "pow",      "powf",     "sin",     "sinf",
        "cos",      "cosf",      "floor",    "floorf",   "ceil",    "ceilf",
        "fmod",     "fmodf",     "min",      "max"})
    namer.reserve(reserved);
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    std::string base = i - 1 < info.argNames.size() ? info.argNames[i - 1]
                                                    : "arg" + std::to_string(i);
    names[entry.getArgument(i)] = fresh(base);
  }
  names[vertices.getVertex()] = "v";
  // The dropout seeds, mixed with the step's seed once per thread.
  std::vector<std::pair<std::string, int64_t>> seedLines;
  kernel.walk([&](gnnk::DropoutKeepOp keep) {
    Value seed = keep.getSeed();
    if (seeds.count(seed))
      return;
    IntegerAttr attr;
    if (auto c = seed.getDefiningOp<arith::ConstantOp>())
      attr = dyn_cast<IntegerAttr>(c.getValue());
    int64_t value = attr ? attr.getInt() : 0;
    std::string name = fresh("seed" + std::to_string(value));
    seeds[seed] = name;
    seedLines.emplace_back(name, value);
  });

  // The body first: it decides what the prologue declares.
  CodeWriter body;
  KernelPrinter inner(info, sources, body);
  inner.plan = std::move(plan);
  inner.names = names;
  inner.namer = namer;
  inner.seeds = seeds;
  SmallVector<SourceLoc, 4> locs = allLocs(kernel.getLoc());
  SourceLine home = primaryLoc(kernel.getLoc()).toLine();
  inner.lastComment = home;
  body.setSource(home);
  if (failed(inner.printBlock(*vertices.getBodyBlock())))
    return failure();
  plan = std::move(inner.plan);
  const KernelPlan &kp = plan;

  std::string kernelName = info.symbol + "_kernel";
  int numInputs =
      static_cast<int>(entry.getNumArguments()) - 1 - info.numOutputs;
  std::vector<std::string> params{"const rt::cuda::KernelGraph g"};
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    bool output = static_cast<int>(i) - 1 >= numInputs;
    params.push_back(std::string(output ? "float *" : "const float *") +
                     "__restrict__ " + names[entry.getArgument(i)]);
  }
  if (info.usesDropout) {
    params.push_back("bool training");
    params.push_back("uint64_t seed");
  }

  w->setSource(home);
  w->beginKernel();
  writeLocationComment(*w, sources, locs);
  // What the kernel maps where, for the reader.
  w->line(std::string("// ") +
          (info.side == gnnk::Side::dst ? "Destination rows of the CSR"
                                        : "Source rows of the CSC") +
          " in descending degree order, " +
          (kp.lanes == 1
               ? std::string("one thread")
               : "a group of " + std::to_string(kp.lanes) + " lanes") +
          " per row, " + std::to_string(kp.groups) + " rows per block.");
  if (!kp.keyShape.empty()) {
    std::string shapeText;
    for (auto [i, d] : llvm::enumerate(kp.keyShape))
      shapeText += (i ? "x" : "") + std::to_string(d);
    std::string stride = std::to_string(kp.lanes * kp.vec);
    std::string held;
    if (kp.vec == 1)
      held = kp.lanes == 1 ? "every element" : "element l";
    else
      held = "elements " +
             (kp.lanes == 1 ? std::string("0") : std::to_string(kp.vec) + "l") +
             " .. " + (kp.lanes == 1 ? "" : std::to_string(kp.vec) + "l + ") +
             std::to_string(kp.vec - 1);
    if (kp.chunks > 1)
      held += " + " + stride + "c for c < " + std::to_string(kp.chunks);
    w->line("// Lane l holds " + held + " of the " + shapeText + " elements" +
            (kp.vec == 4   ? " (float4 accesses)"
             : kp.vec == 2 ? " (float2 accesses)"
                           : "") +
            ".");
  }
  w->line("__global__ void __launch_bounds__(" + std::to_string(kp.threads) +
          ") " + kernelName + "(");
  w->indent();
  w->indent();
  for (auto [i, p] : llvm::enumerate(params))
    w->line(p + (i + 1 == params.size() ? ") {" : ","));
  w->dedent();
  w->line("constexpr int kLanes = " + std::to_string(kp.lanes) + ";");
  w->line("constexpr int kGroups = " + std::to_string(kp.groups) + ";");
  for (auto &[value, a] : kp.arrays)
    if (a.kind == ArrayKind::Shared) {
      w->line("__shared__ " + cTypeOf(a.elementType) + " " +
              inner.arrayNames.lookup(value) + "_rows[kGroups][" +
              std::to_string(a.numElements) + "];");
    }
  w->line("const int group = static_cast<int>(threadIdx.x) / kLanes;");
  if (inner.usesLane)
    w->line("const int lane = static_cast<int>(threadIdx.x) % kLanes;");
  w->line("const int64_t row = static_cast<int64_t>(blockIdx.x) * kGroups + "
          "group;");
  w->line("if (row >= g.count)");
  w->indent();
  w->line("return;");
  w->dedent();
  w->line("const int64_t v = g.order[row];");
  if (inner.usesMask)
    w->line("const unsigned mask = rt::cuda::groupMask(kLanes);");
  if (inner.usesKey0)
    w->line("const int k0 = lane" +
            (kp.vec > 1 ? " * " + std::to_string(kp.vec) : std::string()) +
            "; // the first of the lane's elements");
  for (auto &[name, value] : seedLines)
    w->line("const uint64_t " + name + " = rt::cuda::mixSeed(" +
            std::to_string(value) + ", seed);");
  w->append(body);
  w->dedent();
  w->setSource(home);
  w->line("}");
  w->endKernel();
  w->blank();

  // The launcher.
  w->setSource(home);
  std::vector<std::string> launchParams{"const rt::cuda::KernelGraph &g"};
  std::vector<std::string> args{"g"};
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    bool output = static_cast<int>(i) - 1 >= numInputs;
    launchParams.push_back(std::string(output ? "float *" : "const float *") +
                           names[entry.getArgument(i)]);
    args.push_back(names[entry.getArgument(i)]);
  }
  if (info.usesDropout) {
    launchParams.push_back("bool training");
    launchParams.push_back("uint64_t seed");
    args.push_back("training");
    args.push_back("seed");
  }
  launchParams.push_back("cudaStream_t stream");
  w->line("/// Launches " + kernelName + " on `stream`.");
  w->line("rt::Status " + info.symbol + "(" + llvm::join(launchParams, ", ") +
          ") {");
  w->indent();
  if (!kp.vectorArgs.empty()) {
    std::vector<std::string> pointers;
    for (Value arg : kp.vectorArgs)
      pointers.push_back(names[arg]);
    w->line("GNNC_TRY(rt::cuda::checkAligned(" + cString(info.symbol) + ", " +
            std::to_string(4 * kp.vec) + ", {" + llvm::join(pointers, ", ") +
            "}));");
  }
  w->line("return rt::cuda::launch(" + cString(info.symbol) + ", " +
          kernelName + ", rt::cuda::blocksFor(g.count, " +
          std::to_string(kp.groups) + "), " + std::to_string(kp.threads) +
          ", stream, " + llvm::join(args, ", ") + ");");
  w->dedent();
  w->line("}");
  return success();
}

//===----------------------------------------------------------------------===//
// Host functions
//===----------------------------------------------------------------------===//

/// How a host value is stored.
struct Storage {
  enum Kind { Arg, Alias, Buffer, Output, Scalar, Graph } kind = Buffer;
  std::string name;      // variable or expression of its pointer
  bool isConst = false;  // a const float *
  bool declared = false; // has its own variable (Buffer, Alias)
};

class HostPrinter {
public:
  HostPrinter(HostFunc &f, SourceFiles &sources,
              const std::map<std::string, HostFunc *> &functions,
              const std::map<std::string, KernelInfo> &kernels)
      : f(f), func(f.func), shapes(*f.shapes), sources(sources),
        functions(functions), kernels(kernels) {}

  /// Names every value and decides where it lives.
  LogicalResult plan();
  /// The C names of the operands of each launch of a kernel.
  void kernelArgNames(std::map<std::string, KernelInfo> &kernels) const;
  /// Prints the Layout struct, the entry point and its workspace size.
  LogicalResult print(CodeWriter &w);

private:
  std::string sym(int s) {
    usedSymbols.insert(s);
    return f.symbolName(s);
  }
  std::string dim(Dim d) {
    return dimExpr(d, [&](int s) { return sym(s); });
  }
  std::string numel(const Shape &s) {
    return productExpr(s, [&](int x) { return sym(x); });
  }
  std::string numel(Value v) { return numel(shapes.shape(v)); }
  std::string shapeList(const Shape &s) {
    std::string out = "{";
    for (auto [i, d] : llvm::enumerate(s))
      out += (i ? ", " : "") + dim(d);
    return out + "}";
  }
  std::string ptr(Value v) { return storage[v].name; }
  std::string graph(Value g);
  std::string kernelGraph(Value g);
  /// `member` of the DeviceGraph expression `g` ("*p" is a pointer).
  static std::string member(const std::string &g, const std::string &member) {
    return g[0] == '*' ? g.substr(1) + "->" + member : g + "." + member;
  }
  /// The product of dims [from, to) of v's shape.
  std::string dims(Value v, size_t from, size_t to) {
    Shape s = shapes.shape(v);
    to = std::min(to, s.size());
    return numel(Shape(s.begin() + std::min(from, to), s.begin() + to));
  }
  std::string rowSize(Value v) {
    Shape s = shapes.shape(v);
    return dims(v, 1, s.size());
  }
  LogicalResult printOp(Operation *op, CodeWriter &w);
  LogicalResult printCall(func::CallOp call, CodeWriter &w);
  void declare(Value v, CodeWriter &w);
  std::string valueName(Operation *op, Value result, unsigned ssa,
                        bool &meaningful);

  HostFunc &f;
  func::FuncOp func;
  const FunctionShapes &shapes;
  SourceFiles &sources;
  const std::map<std::string, HostFunc *> &functions;
  const std::map<std::string, KernelInfo> &kernels;
  Namer namer;
  DenseMap<Value, Storage> storage;
  /// A buffer of the workspace: its name, its byte count (an expression)
  /// and the ops (by position in the body) between which it is live.
  struct Slot {
    std::string name, bytes;
    unsigned first = 0, last = 0;
  };
  std::vector<Slot> layout;
  /// The position of every op of the body, and for every value whose
  /// buffer is its own, the position of the last op that reads it (through
  /// views too).
  DenseMap<Operation *, unsigned> position;
  DenseMap<Value, unsigned> lastUse;
  void addSlot(std::string name, std::string bytes, Operation *op,
               Value value = Value()) {
    unsigned first = position.lookup(op);
    unsigned last = value ? std::max(first, lastUse.lookup(value)) : first;
    layout.push_back({std::move(name), std::move(bytes), first, last});
    usesWorkspace = true;
  }
  DenseMap<Operation *, std::string> callWorkspace, scratch;
  std::set<int> usedSymbols;
  bool usesTraining = false, usesSeed = false, usesWorkspace = false,
       usesStream = false;
  std::set<unsigned> usedGraphs;
  /// Result i copied from a value at the end.
  std::vector<bool> copyResult;
  /// Ops whose results reach the return (the others are not printed).
  DenseSet<Operation *> live;
  /// Whether a printed op reads `v`'s data (broadcast_like reads only the
  /// shape of its second operand, which is known without it).
  bool isUsed(Value v) const {
    return llvm::any_of(v.getUses(), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (isa<gnn::BroadcastLikeOp>(user) && use.getOperandNumber() == 1)
        return false;
      return live.count(user) > 0;
    });
  }
};

std::string HostPrinter::graph(Value g) {
  if (auto arg = dyn_cast<BlockArgument>(g)) {
    usedGraphs.insert(arg.getArgNumber());
    return f.args[arg.getArgNumber()].name;
  }
  return "*" + storage[g].name;
}

/// The rt::Graph of a graph value (the union of a batch).
std::string HostPrinter::kernelGraph(Value g) {
  std::string e = graph(g);
  auto type = cast<gnn::GraphType>(g.getType());
  if (type.getKind() == gnn::GraphKind::batched)
    return "*" + e + ".graph";
  return e;
}

std::string HostPrinter::valueName(Operation *op, Value result, unsigned ssa,
                                   bool &meaningful) {
  meaningful = false;
  SourceLoc loc = primaryLoc(op->getLoc());
  StringRef text = sources.line(loc.file, loc.line);
  // The last op of an assignment's line computes the assigned variable.
  if (loc) {
    bool last = true;
    for (Operation *next = op->getNextNode(); next && last;
         next = next->getNextNode()) {
      if (isa<func::ReturnOp>(next))
        break;
      if (primaryLoc(next->getLoc()).line == loc.line &&
          primaryLoc(next->getLoc()).file == loc.file)
        last = false;
    }
    auto [name, isAttribute] = nameAt(text, loc.column);
    if (isAttribute) {
      meaningful = true;
      return name;
    }
    std::string assigned = last ? assignedName(text) : "";
    if (!assigned.empty() && op->getNumResults() == 1) {
      meaningful = true;
      return assigned;
    }
  }
  std::string kind =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case<gnn::UnaryOp>(
              [](auto o) { return gnn::stringifyUnaryFn(o.getFn()).str(); })
          .Case<gnn::BinaryOp>(
              [](auto o) { return gnn::stringifyBinaryFn(o.getFn()).str(); })
          .Case<gnn::ScatterOp, gnn::ReduceOp>(
              [](auto o) { return gnn::stringifyReduceFn(o.getFn()).str(); })
          .Case<gnn::ReadoutOp>([](auto o) {
            return "readout_" + gnn::stringifyReduceFn(o.getFn()).str();
          })
          .Case<func::CallOp>([](func::CallOp c) {
            StringRef callee = c.getCallee();
            StringRef last = callee.rsplit('.').second;
            return (last.empty() ? callee : last).str();
          })
          .Case<gnnk::LaunchOp>([](auto) { return std::string("aggregated"); })
          .Default([](Operation *o) {
            StringRef name = o->getName().stripDialect();
            return name.str();
          });
  if (op->getNumResults() > 1)
    kind += "_" + std::to_string(cast<OpResult>(result).getResultNumber());
  return kind + "_" + std::to_string(ssa);
}

LogicalResult HostPrinter::plan() {
  // Arguments, results and size symbols.
  namer.reserve("stream");
  for (const std::string &s : f.symbolNames)
    if (!s.empty())
      namer.reserve(s);
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    HostFunc::Arg &a = f.args[i];
    Storage s;
    if (a.kind == HostFunc::Arg::Param) {
      s.kind = Storage::Arg;
      s.name = "params." + a.field;
      s.isConst = false;
    } else if (a.kind == HostFunc::Arg::Graph) {
      s.kind = Storage::Graph;
      s.name = a.name;
      namer.reserve(a.name);
    } else {
      s.kind = Storage::Arg;
      s.name = a.name;
      s.isConst = true;
      namer.reserve(a.name);
    }
    storage[arg] = s;
  }
  for (const HostFunc::Result &r : f.results)
    if (r.field.empty())
      namer.reserve(r.name);

  // Values: names first, then where they live.
  Block &body = func.getBody().front();
  for (Operation &op : llvm::reverse(body))
    if (isa<func::ReturnOp>(op) ||
        llvm::any_of(op.getResults(), [&](Value r) { return isUsed(r); }))
      live.insert(&op);
  // Lifetimes: a read through a view reads the viewed buffer.
  unsigned index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  for (Operation &op : body) {
    if (!live.count(&op))
      continue;
    for (Value operand : op.getOperands()) {
      Value root = operand;
      while (Operation *def = root.getDefiningOp()) {
        if (!isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(def))
          break;
        root = def->getOperand(def->getNumOperands() - 1);
      }
      unsigned &last = lastUse[root];
      last = std::max(last, position[&op]);
    }
  }
  auto isView = [](Operation *op) {
    return isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(op);
  };
  unsigned ssa = 0;
  DenseMap<Value, std::pair<std::string, bool>> base;
  DenseMap<Value, unsigned> number;
  for (Operation &op : body)
    for (Value r : op.getResults()) {
      bool meaningful = false;
      std::string name = valueName(&op, r, ssa, meaningful);
      base[r] = {name, meaningful};
      number[r] = ssa++;
    }
  // A view whose input has no other user shares its variable; the group
  // takes the view's name when the view has a .gnn name.
  DenseMap<Value, Value> groupOf;
  for (Operation &op : body) {
    for (Value r : op.getResults())
      groupOf[r] = r;
    if (isView(&op) && op.getOperand(op.getNumOperands() - 1).hasOneUse()) {
      Value in = op.getOperand(op.getNumOperands() - 1);
      if (groupOf.count(in)) {
        Value root = groupOf[in];
        groupOf[op.getResult(0)] = root;
        if (base[op.getResult(0)].second && !base[root].second)
          base[root] = base[op.getResult(0)];
      }
    }
  }
  // Output placement: the buffer a result is a view of is the output.
  copyResult.assign(f.results.size(), true);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  DenseMap<Value, unsigned> placed;
  auto bufferRoot = [&](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isView(def))
        break;
      v = def->getOperand(def->getNumOperands() - 1);
    }
    return v;
  };
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value root = bufferRoot(v);
    Operation *def = root.getDefiningOp();
    if (!def || isa<gnn::ConstantOp>(def) || placed.count(root))
      continue;
    placed[root] = i;
    copyResult[i] = false;
  }
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    for (Value r : op.getResults()) {
      Storage s;
      if (isa<gnn::GraphType>(r.getType())) {
        s.kind = Storage::Graph;
        s.name = namer.unique(cIdentifier(cast<gnn::RelationOp>(op).getName()));
        storage[r] = s;
        continue;
      }
      Value root = groupOf[r];
      if (root != r) {
        storage[r] = storage[root];
        storage[r].declared = false;
        continue;
      }
      if (isView(&op)) {
        Storage &in = storage[op.getOperand(op.getNumOperands() - 1)];
        s.kind = Storage::Alias;
        s.isConst = in.isConst;
        Value input = op.getOperand(op.getNumOperands() - 1);
        bool own = base[r].second &&
                   (!base.count(input) || base[input].first != base[r].first);
        s.name = own ? namer.unique(base[r].first, std::to_string(number[r]))
                     : in.name;
        s.declared = own;
        storage[r] = s;
        continue;
      }
      if (isa<gnn::ConstantOp>(op)) {
        // A constant lives in the workspace (device memory), filled first.
        s.kind = Storage::Buffer;
        s.name = namer.unique(base[r].first, std::to_string(number[r]));
        s.declared = true;
        storage[r] = s;
        continue;
      }
      if (auto it = placed.find(r); it != placed.end()) {
        s.kind = Storage::Output;
        const HostFunc::Result &res = f.results[it->second];
        s.name = res.field.empty() ? res.name : "grads." + res.field;
        storage[r] = s;
        continue;
      }
      s.kind = Storage::Buffer;
      s.name = namer.unique(base[r].first, std::to_string(number[r]));
      s.declared = true;
      storage[r] = s;
    }
  }
  // Names of views that share a variable follow their group.
  for (Operation &op : body)
    for (Value r : op.getResults())
      if (groupOf.count(r) && groupOf[r] != r)
        storage[r].name = storage[groupOf[r]].name;
  return success();
}

void HostPrinter::kernelArgNames(
    std::map<std::string, KernelInfo> &kernels) const {
  func::FuncOp fn = func;
  fn.walk([&](gnnk::LaunchOp launch) {
    auto it = kernels.find(launch.getKernel().str());
    if (it == kernels.end() || !it->second.argNames.empty())
      return;
    for (Value v : launch.getArgs()) {
      if (isa<gnn::GraphType>(v.getType()))
        continue;
      auto s = storage.find(v);
      std::string name = s != storage.end() ? s->second.name : "in";
      if (StringRef(name).starts_with("params."))
        name = name.substr(7);
      if (StringRef(name).starts_with("grads."))
        name = "grad_" + name.substr(6);
      it->second.argNames.push_back(name);
    }
    for (Value v : launch.getResults()) {
      auto s = storage.find(v);
      std::string name = s != storage.end() ? s->second.name : "out";
      if (StringRef(name).starts_with("grads."))
        name = "grad_" + name.substr(6);
      it->second.argNames.push_back(name);
    }
  });
}

/// Declares the variable of a fresh value (a workspace buffer).
void HostPrinter::declare(Value v, CodeWriter &w) {
  Storage &s = storage[v];
  if (s.kind != Storage::Buffer || !s.declared)
    return;
  addSlot(s.name, "rt::alignUp(4 * (" + numel(v) + "))", v.getDefiningOp(), v);
  w.line("float *" + s.name + " = rt::wsFloats(workspace, layout." + s.name +
         ");");
}

LogicalResult HostPrinter::printCall(func::CallOp call, CodeWriter &w) {
  auto it = functions.find(call.getCallee().str());
  if (it == functions.end())
    return call.emitError("the CUDA printer cannot call @") << call.getCallee();
  HostFunc &callee = *it->second;
  for (Value r : call.getResults())
    declare(r, w);
  ArrayRef<Dim> calleeSyms = shapes.calleeSymbols(call);
  // The callee's workspace follows its layout.
  StringRef calleeName = call.getCallee();
  StringRef shortName = calleeName.rsplit('.').second;
  std::string wsName = namer.unique(
      cIdentifier(shortName.empty() ? calleeName : shortName) + "_ws");
  std::string layoutArgs;
  for (int s : callee.shapes->liveSymbols())
    layoutArgs += (layoutArgs.empty() ? "" : ", ") + dim(calleeSyms[s]);
  addSlot(wsName, callee.symbol + "_Layout(" + layoutArgs + ").total", call);
  std::vector<std::string> args;
  for (auto [i, operand] : llvm::enumerate(call.getOperands()))
    if (callee.args[i].kind == HostFunc::Arg::Graph)
      args.push_back(graph(operand));
  for (int s : callee.shapes->explicitSymbols())
    args.push_back(dim(calleeSyms[s]));
  std::vector<std::string> paramPtrs;
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    const HostFunc::Arg &a = callee.args[i];
    if (a.kind == HostFunc::Arg::Input)
      args.push_back(ptr(operand));
    if (a.kind == HostFunc::Arg::Param)
      paramPtrs.push_back(storage[operand].isConst
                              ? "const_cast<float *>(" + ptr(operand) + ")"
                              : ptr(operand));
  }
  if (callee.params) {
    std::string list = "{";
    for (auto [i, p] : llvm::enumerate(paramPtrs))
      list += (i ? ", " : "") + p;
    args.push_back(callee.params->name + list + "}");
  }
  std::vector<std::string> gradPtrs(callee.params ? callee.params->fields.size()
                                                  : 0);
  for (auto [r, result] : llvm::enumerate(call.getResults())) {
    const HostFunc::Result &res = callee.results[r];
    if (!res.field.empty()) {
      for (auto [k, field] : llvm::enumerate(callee.params->fields))
        if (field == res.field)
          gradPtrs[k] = ptr(result);
      continue;
    }
    args.push_back(ptr(result));
  }
  if (callee.packGrads) {
    std::string list = "{";
    for (auto [i, p] : llvm::enumerate(gradPtrs))
      list += (i ? ", " : "") + p;
    args.push_back(callee.params->name + list + "}");
  }
  args.push_back("rt::wsBytes(workspace, layout." + wsName + ")");
  args.push_back("training");
  args.push_back("seed");
  args.push_back("stream");
  usesTraining = usesSeed = usesStream = true;
  std::string line = "if (rt::Status s = " + callee.symbol + "(";
  for (auto [i, a] : llvm::enumerate(args))
    line += (i ? ", " : "") + a;
  w.line(line + "); !s.ok())");
  w.indent();
  w.line("return s;");
  w.dedent();
  return success();
}

LogicalResult HostPrinter::printOp(Operation *op, CodeWriter &w) {
  using namespace gnn;
  auto out = [&]() { return ptr(op->getResult(0)); };
  auto in = [&](Value v) { return ptr(v); };
  auto side = [](Domain d) {
    return d == Domain::src ? std::string("rt::Side::Src")
                            : std::string("rt::Side::Dst");
  };
  auto fnName = [](StringRef s) {
    std::string out = s.str();
    out[0] =
        static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
  };
  /// (outer, len, inner) of axis `axis` of v's full shape.
  auto split = [&](Value v, size_t axis) {
    Shape s = shapes.shape(v);
    return dims(v, 0, axis) + ", " + dims(v, axis, axis + 1) + ", " +
           dims(v, axis + 1, s.size());
  };
  /// A call of the device runtime, queued on the stream.
  auto call = [&](const std::string &fn, const std::string &args) {
    usesStream = true;
    w.line("GNNC_TRY(rt::cuda::" + fn + "(" + args + ", stream));");
  };
  for (Value r : op->getResults())
    if (isa<DomainTensorType>(r.getType()) &&
        !isa<AttachOp, CollectOp, ReshapeOp>(op) && !isa<func::CallOp>(op))
      declare(r, w);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<InDegreeOp>([&](InDegreeOp d) -> LogicalResult {
        call("inDegree", kernelGraph(d.getGraph()) + ", " + out());
        return success();
      })
      .Case<OutDegreeOp>([&](OutDegreeOp d) -> LogicalResult {
        call("outDegree", kernelGraph(d.getGraph()) + ", " + out());
        return success();
      })
      .Case<GraphSizesOp>([&](GraphSizesOp d) -> LogicalResult {
        call("graphSizes", graph(d.getGraph()) + ", " + out());
        return success();
      })
      .Case<NumVerticesOp, NumEdgesOp>([&](auto n) -> LogicalResult {
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(n.getGraph());
        int s = !g ? -1 : isa<NumVerticesOp>(op) ? g->numDst : g->numEdges;
        if (s < 0)
          return op->emitError("the CUDA printer cannot tell this count");
        call("fill", out() + ", 1, static_cast<float>(" + sym(s) + ")");
        return success();
      })
      .Case<RelationOp>([&](RelationOp) -> LogicalResult { return success(); })
      .Case<AttachOp, CollectOp, ReshapeOp>(
          [&](Operation *view) -> LogicalResult {
            Storage &s = storage[view->getResult(0)];
            if (s.declared)
              w.line(std::string(s.isConst ? "const float *" : "float *") +
                     s.name + " = " +
                     in(view->getOperand(view->getNumOperands() - 1)) + ";");
            return success();
          })
      .Case<SplatOp>([&](SplatOp s) -> LogicalResult {
        call("splat", in(s.getInput()) + ", " + numel(s.getInput()) + ", " +
                          dims(s.getResult(), 0, 1) + ", " + out());
        return success();
      })
      .Case<GatherOp>([&](GatherOp g) -> LogicalResult {
        bool src = tensorOf(g.getInput()).getDomain() == Domain::src;
        std::string ends = src ? "edgeSrc()" : "edgeDst()";
        call("gather", member(kernelGraph(g.getGraph()), ends) + ", " +
                           dims(g.getResult(), 0, 1) + ", " + in(g.getInput()) +
                           ", " + rowSize(g.getResult()) + ", " + out());
        return success();
      })
      .Case<ScatterOp>([&](ScatterOp s) -> LogicalResult {
        std::string fn = s.getFn() == ReduceFn::logsumexp
                             ? "LogSumExp"
                             : fnName(stringifyReduceFn(s.getFn()));
        call("scatter" + fn, kernelGraph(s.getGraph()) + ", " +
                                 side(tensorOf(s.getResult()).getDomain()) +
                                 ", " + in(s.getInput()) + ", " +
                                 rowSize(s.getInput()) + ", " + out());
        return success();
      })
      .Case<ScatterSelectOp>([&](ScatterSelectOp s) -> LogicalResult {
        call("scatterSelect" + fnName(stringifyReduceFn(s.getFn())),
             kernelGraph(s.getGraph()) + ", " + side(s.getBy()) + ", " +
                 in(s.getInput()) + ", " + rowSize(s.getInput()) + ", " +
                 out());
        return success();
      })
      .Case<EdgeSoftmaxOp>([&](EdgeSoftmaxOp s) -> LogicalResult {
        call("edgeSoftmax", kernelGraph(s.getGraph()) + ", " + side(s.getBy()) +
                                ", " + in(s.getInput()) + ", " +
                                rowSize(s.getInput()) + ", " + out());
        return success();
      })
      .Case<ReadoutOp, ReadoutSelectOp>([&](auto r) -> LogicalResult {
        bool select = isa<ReadoutSelectOp>(op);
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(r.getGraph());
        if (!g || g->numGraphs < 0)
          return op->emitError("the CUDA printer needs a batched graph");
        call(std::string("readout") + (select ? "Select" : "") +
                 fnName(stringifyReduceFn(r.getFn())),
             graph(r.getGraph()) + ", " + in(r.getInput()) + ", " +
                 dims(r.getInput(), 0, 1) + ", " + rowSize(r.getInput()) +
                 ", " + out());
        return success();
      })
      .Case<BroadcastGraphsOp>([&](BroadcastGraphsOp b) -> LogicalResult {
        call("broadcastGraphs", graph(b.getGraph()) + ", " + in(b.getInput()) +
                                    ", " + dims(b.getResult(), 0, 1) + ", " +
                                    rowSize(b.getInput()) + ", " + out());
        return success();
      })
      .Case<ConstantOp>([&](ConstantOp c) -> LogicalResult {
        bool f32 = tensorOf(c.getResult()).getElementType().isF32();
        call("fill", out() + ", 1, " +
                         floatLiteral(c.getValue().convertToDouble(), f32));
        return success();
      })
      .Case<UnaryOp>([&](UnaryOp u) -> LogicalResult {
        std::string fn = stringifyUnaryFn(u.getFn()).str();
        if (u.getFn() == UnaryFn::leaky_relu)
          fn = "leakyRelu";
        std::string args =
            in(u.getInput()) + ", " + out() + ", " + numel(u.getResult());
        if (u.getFn() == UnaryFn::elu || u.getFn() == UnaryFn::leaky_relu)
          args +=
              ", " +
              floatLiteral(u.getAlpha() ? u.getAlpha()->convertToDouble() : 0.0,
                           true);
        call(fn, args);
        return success();
      })
      .Case<BinaryOp>([&](BinaryOp b) -> LogicalResult {
        auto [sa, sb] = shapes.alignedOperands(op);
        call(stringifyBinaryFn(b.getFn()).str(),
             in(b.getLhs()) + ", " + shapeList(sa) + ", " + in(b.getRhs()) +
                 ", " + shapeList(sb) + ", " + out() + ", " +
                 shapeList(shapes.shape(b.getResult())));
        return success();
      })
      .Case<BroadcastLikeOp>([&](BroadcastLikeOp b) -> LogicalResult {
        auto [sa, sb] = shapes.alignedOperands(op);
        call("broadcastTo", in(b.getInput()) + ", " + shapeList(sa) + ", " +
                                out() + ", " +
                                shapeList(shapes.shape(b.getResult())));
        return success();
      })
      .Case<MatmulOp>([&](MatmulOp m) -> LogicalResult {
        Shape a = shapes.shape(m.getLhs());
        Shape wgt = shapes.shape(m.getRhs());
        call("matmul", in(m.getLhs()) + ", " + in(m.getRhs()) + ", " + out() +
                           ", " + dims(m.getLhs(), 0, a.size() - 1) + ", " +
                           dim(wgt[0]) + ", " + dim(wgt[1]));
        return success();
      })
      .Case<ReduceOp, ReduceSelectOp>([&](auto r) -> LogicalResult {
        Value input = r.getInput();
        Shape s = shapes.shape(input);
        size_t offset = tensorOf(input).isVertexOrEdge() ? 1 : 0;
        std::string parts;
        if (auto axis = r.getAxisAttr())
          parts = split(input, axis.getInt() + offset);
        else
          parts = dims(input, 0, offset) + ", " +
                  dims(input, offset, s.size()) + ", 1";
        // Scratch for the partial results of long reductions.
        std::string scratchName = namer.unique(out() + "_scratch");
        addSlot(
            scratchName,
            "rt::alignUp(static_cast<int64_t>(rt::cuda::reduceScratchBytes(" +
                parts + ")))",
            op);
        std::string fn = fnName(stringifyReduceFn(r.getFn()));
        call(std::string("reduce") + (isa<ReduceSelectOp>(op) ? "Select" : "") +
                 fn,
             in(input) + ", " + out() + ", " + parts +
                 ", rt::wsBytes(workspace, layout." + scratchName + ")");
        return success();
      })
      .Case<SoftmaxOp>([&](SoftmaxOp s) -> LogicalResult {
        size_t offset = tensorOf(s.getInput()).isVertexOrEdge() ? 1 : 0;
        call(s.getLog() ? "logSoftmax" : "softmax",
             in(s.getInput()) + ", " + out() + ", " +
                 split(s.getInput(), s.getAxisAttr().getInt() + offset));
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) -> LogicalResult {
        size_t offset = tensorOf(c.getResult()).isVertexOrEdge() ? 1 : 0;
        size_t axis = c.getAxisAttr().getInt() + offset;
        Shape so = shapes.shape(c.getResult());
        std::string outer = dims(c.getResult(), 0, axis);
        std::string outChunk = dims(c.getResult(), axis, so.size());
        std::string at = "";
        for (Value input : c.getInputs()) {
          Shape si = shapes.shape(input);
          std::string chunk = dims(input, axis, si.size());
          call("copyRows", in(input) + ", " + chunk + ", " + out() +
                               (at.empty() ? "" : " + " + at) + ", " +
                               outChunk + ", " + outer + ", " + chunk);
          at += (at.empty() ? "" : " + ") + chunk;
        }
        return success();
      })
      .Case<SliceOp>([&](SliceOp s) -> LogicalResult {
        size_t offset = tensorOf(s.getInput()).isVertexOrEdge() ? 1 : 0;
        size_t axis = s.getAxisAttr().getInt() + offset;
        Shape si = shapes.shape(s.getInput());
        std::string inner = dims(s.getInput(), axis + 1, si.size());
        std::string outer = dims(s.getInput(), 0, axis);
        int64_t start = s.getStartAttr().getInt(),
                size = s.getSizeAttr().getInt();
        std::string from = in(s.getInput());
        if (start)
          from += " + " + std::to_string(start) + " * " + inner;
        call("copyRows", from + ", " + dims(s.getInput(), axis, si.size()) +
                             ", " + out() + ", " + std::to_string(size) +
                             " * " + inner + ", " + outer + ", " +
                             std::to_string(size) + " * " + inner);
        return success();
      })
      .Case<TransposeOp>([&](TransposeOp t) -> LogicalResult {
        size_t offset = tensorOf(t.getInput()).isVertexOrEdge() ? 1 : 0;
        Shape s = shapes.shape(t.getInput());
        call("transpose", in(t.getInput()) + ", " + out() + ", " +
                              dims(t.getInput(), 0, offset) + ", " +
                              dim(s[offset]) + ", " + dim(s[offset + 1]));
        return success();
      })
      .Case<DropoutOp>([&](DropoutOp d) -> LogicalResult {
        usesTraining = usesSeed = true;
        call("dropout",
             in(d.getInput()) + ", " + out() + ", " + numel(d.getResult()) +
                 ", " + floatLiteral(d.getP().convertToDouble(), false) +
                 ", rt::mixSeed(" + std::to_string(d.getSeedAttr().getInt()) +
                 ", seed), training");
        return success();
      })
      .Case<func::CallOp>(
          [&](func::CallOp c) -> LogicalResult { return printCall(c, w); })
      .Case<gnnk::LaunchOp>([&](gnnk::LaunchOp l) -> LogicalResult {
        auto it = kernels.find(l.getKernel().str());
        if (it == kernels.end())
          return l.emitError("the CUDA printer cannot find kernel @")
                 << l.getKernel();
        const KernelInfo &k = it->second;
        std::string layout = k.side == gnnk::Side::dst ? "byDst()" : "bySrc()";
        std::vector<std::string> args;
        for (Value v : l.getArgs())
          args.push_back(isa<gnn::GraphType>(v.getType())
                             ? member(kernelGraph(v), layout)
                             : in(v));
        for (Value r : l.getResults())
          args.push_back(ptr(r));
        if (k.usesDropout) {
          args.push_back("training");
          args.push_back("seed");
          usesTraining = usesSeed = true;
        }
        args.push_back("stream");
        usesStream = true;
        w.line("GNNC_TRY(" + k.symbol + "(" + llvm::join(args, ", ") + "));");
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitError("the CUDA printer does not support '")
               << other->getName() << "' in host code";
      });
}

LogicalResult HostPrinter::print(CodeWriter &w) {
  SourceLoc home = primaryLoc(func.getLoc());
  // The body first (it decides what the prologue declares).
  CodeWriter body;
  Block &block = func.getBody().front();
  SourceLine lastComment;
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      body.setSource(primaryLoc(ret.getLoc()).toLine());
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        if (!copyResult[i])
          continue;
        const HostFunc::Result &r = f.results[i];
        usesStream = true;
        body.line("GNNC_TRY(rt::cuda::copy(" + ptr(v) + ", " +
                  (r.field.empty() ? r.name : "grads." + r.field) + ", " +
                  numel(v) + ", stream));");
      }
      body.line("return rt::Status::success();");
      continue;
    }
    if (!live.count(&op) || isa<gnn::RelationOp>(op))
      continue;
    // Views that share their input's variable print nothing.
    if (isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(op) &&
        !storage[op.getResult(0)].declared)
      continue;
    SmallVector<SourceLoc, 4> locs = allLocs(op.getLoc());
    SourceLine line = locs.empty() ? SourceLine() : locs.front().toLine();
    if (line && line != lastComment) {
      body.setSource(line);
      body.blank();
      writeLocationComment(body, sources, locs);
      lastComment = line;
    }
    body.setSource(line);
    if (failed(printOp(&op, body)))
      return failure();
  }

  // The Layout struct: byte offsets of the workspace buffers (boilerplate,
  // of no .gnn line).
  w.setSource(SourceLine());
  w.line("namespace {");
  w.line("/// Byte offsets of the intermediates of @" + func.getName().str() +
         " in its workspace.");
  w.line("struct " + f.symbol + "_Layout {");
  w.indent();
  for (const Slot &slot : layout)
    w.line("std::size_t " + slot.name + " = 0;");
  w.line("std::size_t total = 0;");
  w.blank();
  std::string ctor = "explicit " + f.symbol + "_Layout(";
  bool firstParam = true;
  for (int s : shapes.liveSymbols()) {
    ctor += (firstParam ? "" : ", ") +
            std::string("[[maybe_unused]] int64_t ") + f.symbolName(s);
    firstParam = false;
  }
  w.line(ctor + ") {");
  w.indent();
  if (!layout.empty()) {
    w.line("// Buffers live between two ops of the body (by position) share "
           "bytes");
    w.line("// with those that are not live at the same time.");
    w.line("rt::WorkspacePlan<" + std::to_string(layout.size()) + "> plan;");
  }
  for (const Slot &slot : layout)
    w.line(slot.name + " = plan.place(" + slot.bytes + ", " +
           std::to_string(slot.first) + ", " + std::to_string(slot.last) +
           ");");
  w.line(layout.empty() ? "total = 0;" : "total = plan.total();");
  w.dedent();
  w.line("}");
  w.dedent();
  w.line("};");
  w.line("} // namespace");
  w.blank();

  // The prologue: checks of the graphs, relations, sizes, size checks.
  CodeWriter pro;
  pro.setSource(home.toLine());
  std::string fname = cString(func.getName());
  for (auto [i, a] : llvm::enumerate(f.args)) {
    if (a.kind != HostFunc::Arg::Graph)
      continue;
    if (a.graphKind == gnn::GraphKind::graph) {
      usedGraphs.insert(i);
      pro.line("if (" + a.name + ".numSrc() != " + a.name + ".numDst())");
      pro.indent();
      pro.line("return rt::Status::error(" +
               cString(func.getName().str() + ": graph '" + a.name +
                       "' must have as many sources as destinations") +
               ");");
      pro.dedent();
    } else if (a.graphKind == gnn::GraphKind::batched) {
      usedGraphs.insert(i);
      pro.line("if (rt::Status s = rt::cuda::checkBatch(" + a.name +
               "); !s.ok())");
      pro.indent();
      pro.line("return s.withPrefix(" + fname + ");");
      pro.dedent();
    }
  }
  for (Operation &op : block)
    if (auto rel = dyn_cast<gnn::RelationOp>(op)) {
      if (!live.count(&op))
        continue;
      std::string g = graph(rel.getGraph());
      std::string name = storage[rel.getResult()].name;
      pro.line("const rt::cuda::DeviceGraph *" + name +
               " = rt::cuda::findRelation(" + g + ", " +
               cString(rel.getName()) + ");");
      pro.line("if (!" + name + ")");
      pro.indent();
      pro.line("return rt::Status::error(" +
               cString(func.getName().str() + ": graph '" + g +
                       "' has no relation '" + rel.getName().str() +
                       "' on its vertices") +
               ");");
      pro.dedent();
    }
  std::vector<std::pair<std::string, std::string>> checks;
  for (auto &[a, b, op] : shapes.checks()) {
    std::string x = dim(a), y = dim(b);
    SourceLoc loc = primaryLoc(op->getLoc());
    checks.emplace_back(
        "if (" + x + " != " + y + ")",
        "return rt::Status::error(" +
            cString(func.getName().str() + ": sizes " + x + " and " + y +
                    " differ" +
                    (loc ? " (" + baseName(loc.file).str() + ":" +
                               std::to_string(loc.line) + ")"
                         : std::string())) +
            ");");
  }
  // The layout needs every size; otherwise declare those the code uses.
  bool needLayout = usesWorkspace;
  for (int s : shapes.liveSymbols()) {
    const SizeSymbol &symbol = shapes.symbol(s);
    if (symbol.kind == SizeSymbol::Kind::Explicit)
      continue;
    if (!needLayout && !usedSymbols.count(s))
      continue;
    usedGraphs.insert(symbol.graphArg);
    std::string source =
        symbolSource(symbol, f, [&](unsigned i) { return f.args[i].name; });
    // A relation this function looked up already.
    if (symbol.kind == SizeSymbol::Kind::RelationEdges)
      for (Operation &op : block)
        if (auto rel = dyn_cast<gnn::RelationOp>(op))
          if (live.count(&op) && rel.getName() == symbol.relation)
            source = storage[rel.getResult()].name + "->numEdges()";
    pro.line("const int64_t " + f.symbolName(s) + " = " + source + ";");
  }
  for (auto &[condition, action] : checks) {
    pro.line(condition);
    pro.indent();
    pro.line(action);
    pro.dedent();
  }
  if (needLayout) {
    std::string args;
    for (int s : shapes.liveSymbols())
      args += (args.empty() ? "" : ", ") + f.symbolName(s);
    pro.line("const " + f.symbol + "_Layout layout(" + args + ");");
  }

  // The entry point.
  w.setSource(home.toLine());
  writeLocationComment(w, sources, {home});
  std::string signature = "rt::Status " + f.symbol + "(";
  std::vector<std::string> params;
  for (auto [i, a] : llvm::enumerate(f.args))
    if (a.kind == HostFunc::Arg::Graph)
      params.push_back(graphType(a.graphKind) +
                       (usedGraphs.count(i) ? a.name : "/*" + a.name + "*/"));
  for (int s : shapes.explicitSymbols())
    params.push_back("int64_t " + f.symbolName(s));
  bool usesParams = false;
  for (auto [i, a] : llvm::enumerate(f.args)) {
    bool used = isUsed(func.getArgument(i));
    if (a.kind == HostFunc::Arg::Input)
      params.push_back(std::string(used ? "" : "[[maybe_unused]] ") +
                       "const float *" + a.name);
    if (a.kind == HostFunc::Arg::Param)
      usesParams = usesParams || used;
  }
  if (f.params)
    params.push_back(std::string(usesParams ? "" : "[[maybe_unused]] ") +
                     "const " + f.params->name + " &params");
  for (const HostFunc::Result &r : f.results)
    if (r.field.empty())
      params.push_back("float *" + r.name);
  if (f.packGrads)
    params.push_back("const " + f.params->name + " &grads");
  params.push_back(std::string(usesWorkspace ? "" : "[[maybe_unused]] ") +
                   "void *workspace");
  params.push_back(std::string(usesTraining ? "" : "[[maybe_unused]] ") +
                   "bool training");
  params.push_back(std::string(usesSeed ? "" : "[[maybe_unused]] ") +
                   "uint64_t seed");
  params.push_back(std::string(usesStream ? "" : "[[maybe_unused]] ") +
                   "cudaStream_t stream");
  for (auto [i, p] : llvm::enumerate(params))
    signature += (i ? ", " : "") + p;
  w.line(signature + ") {");
  w.indent();
  w.append(pro);
  w.append(body);
  w.dedent();
  w.setSource(home.toLine());
  w.line("}");
  w.blank();

  // Its workspace size.
  std::string wsSig = "std::size_t " + f.symbol + "_workspace_bytes(";
  std::vector<std::string> wsParams;
  std::set<unsigned> graphsForSizes;
  for (int s : shapes.liveSymbols())
    if (shapes.symbol(s).kind != SizeSymbol::Kind::Explicit)
      graphsForSizes.insert(shapes.symbol(s).graphArg);
  for (auto [i, a] : llvm::enumerate(f.args))
    if (a.kind == HostFunc::Arg::Graph)
      wsParams.push_back(graphType(a.graphKind) + (graphsForSizes.count(i)
                                                       ? a.name
                                                       : "/*" + a.name + "*/"));
  for (int s : shapes.explicitSymbols())
    wsParams.push_back("int64_t " + f.symbolName(s));
  for (auto [i, p] : llvm::enumerate(wsParams))
    wsSig += (i ? ", " : "") + p;
  w.line(wsSig + ") {");
  w.indent();
  std::string args;
  for (int s : shapes.liveSymbols()) {
    const SizeSymbol &symbol = shapes.symbol(s);
    args += (args.empty() ? "" : ", ") +
            (symbol.kind == SizeSymbol::Kind::Explicit
                 ? f.symbolName(s)
                 : symbolSource(symbol, f,
                                [&](unsigned i) { return f.args[i].name; }));
  }
  w.line("return " + f.symbol + "_Layout(" + args + ").total;");
  w.dedent();
  w.line("}");
  w.blank();
  return success();
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

class ModulePrinter {
public:
  ModulePrinter(ModuleOp module, const TargetOptions &options)
      : module(module), options(options), sources(options.sourceMgr) {}

  LogicalResult print(std::vector<GeneratedFile> &files);

private:
  LogicalResult collect();
  LogicalResult planFunction(HostFunc &f);
  void printHeader(CodeWriter &w);
  void printParamStruct(CodeWriter &w, const ParamStruct &p);
  void printDeclaration(CodeWriter &w, const HostFunc &f);
  void printReflection(CodeWriter &w);
  std::string tensorInfo(const std::string &name, const std::string &role,
                         const std::string &init, const Shape &shape,
                         const HostFunc &f);

  ModuleOp module;
  const TargetOptions &options;
  SourceFiles sources;
  std::vector<std::unique_ptr<HostFunc>> hosts; // callee-first
  std::map<std::string, HostFunc *> byName;
  std::map<std::string, KernelInfo> kernels;
  std::vector<std::string> kernelOrder;
  llvm::StringMap<FunctionShapes> analyses;
  std::vector<std::unique_ptr<ParamStruct>> structs;
  std::vector<std::unique_ptr<HostPrinter>> printers;
};

LogicalResult ModulePrinter::collect() {
  Namer moduleNames;
  moduleNames.reserve("gnnc_module");
  std::vector<func::FuncOp> hostFuncs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      return func.emitError("the CUDA printer needs function bodies");
    if (gnnk::getNumKernelOutputs(func) >= 0) {
      KernelInfo k;
      k.func = func;
      k.symbol = moduleNames.unique(cIdentifier(func.getName()));
      k.numOutputs = static_cast<int>(gnnk::getNumKernelOutputs(func));
      func.walk([&](gnnk::DropoutKeepOp) { k.usesDropout = true; });
      kernelOrder.push_back(func.getName().str());
      kernels[func.getName().str()] = std::move(k);
      continue;
    }
    hostFuncs.push_back(func);
  }
  // Callee-first order.
  std::set<std::string> done, visiting;
  std::vector<func::FuncOp> order;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp func) -> LogicalResult {
    std::string name = func.getName().str();
    if (done.count(name))
      return success();
    if (!visiting.insert(name).second)
      return func.emitError("the CUDA printer cannot print recursive calls");
    WalkResult r = func.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || gnnk::getNumKernelOutputs(callee) >= 0 ||
          failed(visit(callee)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    done.insert(name);
    order.push_back(func);
    return success();
  };
  for (func::FuncOp func : hostFuncs)
    if (failed(visit(func)))
      return failure();

  for (func::FuncOp func : order) {
    FailureOr<FunctionShapes> shapes = FunctionShapes::analyse(func, analyses);
    if (failed(shapes))
      return failure();
    analyses.try_emplace(func.getName(), std::move(*shapes));
    auto f = std::make_unique<HostFunc>();
    f->func = func;
    f->symbol = moduleNames.unique(cIdentifier(func.getName()));
    f->shapes = &analyses.find(func.getName())->second;
    if (auto kind = func->getAttrOfType<StringAttr>(gnn::kKindAttrName))
      f->kind = kind.getValue().str();
    if (func->hasAttr(gnn::kBackwardOfAttrName))
      f->kind = "backward";
    if (func->hasAttr(gnn::kTrainOfAttrName))
      f->kind = "train";
    byName[func.getName().str()] = f.get();
    hosts.push_back(std::move(f));
  }
  // Parameter structs: one per distinct parameter list, named after the
  // shortest function that has it.
  std::map<std::string, std::vector<HostFunc *>> byParams;
  std::map<HostFunc *, std::string> keyOf;
  for (auto &f : hosts) {
    std::string key;
    for (unsigned i = 0; i < f->func.getNumArguments(); ++i)
      if (auto p =
              f->func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName)) {
        auto init = f->func.getArgAttrOfType<StringAttr>(i, gnn::kInitAttrName);
        llvm::raw_string_ostream os(key);
        os << p.getValue() << ":" << f->func.getArgument(i).getType() << ":"
           << (init ? init.getValue() : "") << ";";
      }
    if (key.empty())
      continue;
    keyOf[f.get()] = key;
    byParams[key].push_back(f.get());
  }
  std::map<std::string, ParamStruct *> structOf;
  for (auto &f : hosts) {
    auto it = keyOf.find(f.get());
    if (it == keyOf.end() || structOf.count(it->second))
      continue;
    HostFunc *owner = f.get();
    for (HostFunc *other : byParams[it->second])
      if (other->symbol.size() < owner->symbol.size())
        owner = other;
    auto p = std::make_unique<ParamStruct>();
    p->name = moduleNames.unique(owner->symbol + "_Params");
    Namer fields;
    func::FuncOp func = owner->func;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto path = func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName);
      if (!path)
        continue;
      auto init = func.getArgAttrOfType<StringAttr>(i, gnn::kInitAttrName);
      auto type = cast<DomainTensorType>(func.getArgument(i).getType());
      if (!type.getElementType().isF32())
        return func.emitError("the CUDA printer supports f32 parameters only");
      if (llvm::any_of(type.getShape(), ShapedType::isDynamic))
        return func.emitError("parameter '")
               << path.getValue() << "' has a run-time size";
      p->paths.push_back(path.getValue().str());
      p->fields.push_back(fields.unique(cIdentifier(path.getValue())));
      p->inits.push_back(init ? init.getValue().str() : "");
      p->shapes.emplace_back(type.getShape().begin(), type.getShape().end());
    }
    structOf[it->second] = p.get();
    structs.push_back(std::move(p));
  }
  for (auto &f : hosts)
    if (auto it = keyOf.find(f.get()); it != keyOf.end())
      f->params = structOf[it->second];
  for (auto &f : hosts)
    if (failed(planFunction(*f)))
      return failure();
  return success();
}

LogicalResult ModulePrinter::planFunction(HostFunc &f) {
  func::FuncOp func = f.func;
  Namer names;
  // Arguments.
  unsigned paramIndex = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    HostFunc::Arg a;
    Type type = func.getArgument(i).getType();
    auto name = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
    if (auto g = dyn_cast<gnn::GraphType>(type)) {
      a.kind = HostFunc::Arg::Graph;
      a.graphKind = g.getKind();
      a.name = names.unique(name ? name.getValue() : "g");
    } else if (func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName)) {
      a.kind = HostFunc::Arg::Param;
      a.field = f.params->fields[paramIndex++];
    } else {
      auto t = cast<DomainTensorType>(type);
      if (!t.getElementType().isF32())
        return func.emitError("the CUDA printer supports f32 tensors only");
      a.kind = HostFunc::Arg::Input;
      auto saved = func.getArgAttrOfType<StringAttr>(i, gnn::kSavedAttrName);
      std::string base = name    ? name.getValue().str()
                         : saved ? "saved_" + saved.getValue().str()
                                 : "arg" + std::to_string(i);
      a.name = names.unique(cIdentifier(base));
    }
    f.args.push_back(a);
  }
  // Size symbols (the live ones are all a printer uses).
  int maxSymbol = -1;
  for (int s : f.shapes->liveSymbols())
    maxSymbol = std::max(maxSymbol, s);
  f.symbolNames.assign(maxSymbol + 1, "");
  for (int s : f.shapes->liveSymbols())
    f.symbolNames[s] = names.unique(f.shapes->symbol(s).name);
  // Results.
  unsigned numResults = func.getNumResults();
  std::map<std::string, int> gradOfParam;
  if (f.params)
    for (auto [k, path] : llvm::enumerate(f.params->paths))
      gradOfParam[path] = -1;
  bool pack = f.params != nullptr;
  unsigned numOutputs = 0;
  for (unsigned r = 0; r < numResults; ++r)
    numOutputs += !func.getResultAttr(r, gnn::kGradOfAttrName) &&
                  !func.getResultAttr(r, gnn::kSavedAttrName);
  for (unsigned r = 0; r < numResults; ++r) {
    auto type = dyn_cast<DomainTensorType>(func.getResultTypes()[r]);
    if (!type || !type.getElementType().isF32())
      return func.emitError("the CUDA printer supports f32 results only");
    HostFunc::Result res;
    auto gradOf = func.getResultAttrOfType<StringAttr>(r, gnn::kGradOfAttrName);
    auto saved = func.getResultAttrOfType<StringAttr>(r, gnn::kSavedAttrName);
    auto name = func.getResultAttrOfType<StringAttr>(r, gnn::kNameAttrName);
    if (gradOf) {
      res.role = "grad";
      res.of = gradOf.getValue().str();
      res.name = "grad_" + cIdentifier(gradOf.getValue());
      auto it = gradOfParam.find(res.of);
      if (it != gradOfParam.end()) {
        if (it->second >= 0)
          pack = false;
        it->second = r;
      }
    } else if (saved) {
      res.role = "saved";
      res.of = saved.getValue().str();
      res.name = "saved_" + cIdentifier(saved.getValue());
    } else {
      res.role = "output";
      res.name = name ? cIdentifier(name.getValue())
                      : (numOutputs == 1 ? "out" : "out" + std::to_string(r));
    }
    res.name = names.unique(res.name);
    f.results.push_back(res);
  }
  for (auto &[path, r] : gradOfParam)
    if (r < 0)
      pack = false;
  if (pack && !gradOfParam.empty()) {
    f.packGrads = true;
    for (auto [k, path] : llvm::enumerate(f.params->paths))
      f.results[gradOfParam[path]].field = f.params->fields[k];
  }
  return success();
}

void ModulePrinter::printParamStruct(CodeWriter &w, const ParamStruct &p) {
  w.line("/// The parameters of " + p.name.substr(0, p.name.size() - 7) +
         ", one pointer to the float32 row-major data of each, in the "
         "order of the function's arguments.");
  w.line("struct " + p.name + " {");
  w.indent();
  for (size_t i = 0; i < p.fields.size(); ++i) {
    std::string dims;
    for (auto [k, d] : llvm::enumerate(p.shapes[i]))
      dims += (k ? ", " : "") + std::to_string(d);
    w.line("float *" + p.fields[i] + "; ///< " + p.paths[i] + ": f32[" + dims +
           "], init " + (p.inits[i].empty() ? "none" : p.inits[i]));
  }
  w.blank();
  size_t n = p.fields.size();
  w.line("static constexpr int kNumParams = " + std::to_string(n) + ";");
  std::string paths, inits, ranks, shapesText, sizes;
  for (size_t i = 0; i < n; ++i) {
    paths += (i ? ", " : "") + cString(p.paths[i]);
    inits += (i ? ", " : "") + cString(p.inits[i]);
    ranks += (i ? ", " : "") + std::to_string(p.shapes[i].size());
    std::string dims;
    int64_t count = 1;
    for (auto [k, d] : llvm::enumerate(p.shapes[i])) {
      dims += (k ? ", " : "") + std::to_string(d);
      count *= d;
    }
    shapesText += std::string(i ? ", " : "") + "{" + dims + "}";
    sizes += (i ? ", " : "") + std::to_string(count);
  }
  w.line("/// Paths (\"conv1.W\"), initialisers, ranks, shapes and element "
         "counts.");
  w.line("static constexpr const char *kPaths[kNumParams] = {" + paths + "};");
  w.line("static constexpr const char *kInits[kNumParams] = {" + inits + "};");
  w.line("static constexpr int kRanks[kNumParams] = {" + ranks + "};");
  w.line("static constexpr int64_t kShapes[kNumParams][gnnc::rt::kMaxRank] = "
         "{" +
         shapesText + "};");
  w.line("static constexpr int64_t kNumElements[kNumParams] = {" + sizes +
         "};");
  w.blank();
  w.line("/// Parameter `i`, in the order above.");
  w.line("float *get(int i) const {");
  w.indent();
  w.line("switch (i) {");
  for (size_t i = 0; i < n; ++i)
    w.line("case " + std::to_string(i) + ": return " + p.fields[i] + ";");
  w.line("default: return nullptr;");
  w.line("}");
  w.dedent();
  w.line("}");
  w.line("void set(int i, float *data) {");
  w.indent();
  w.line("switch (i) {");
  for (size_t i = 0; i < n; ++i)
    w.line("case " + std::to_string(i) + ": " + p.fields[i] +
           " = data; break;");
  w.line("default: break;");
  w.line("}");
  w.dedent();
  w.line("}");
  w.dedent();
  w.line("};");
  w.blank();
}

void ModulePrinter::printDeclaration(CodeWriter &w, const HostFunc &f) {
  func::FuncOp func = f.func;
  auto symName = [&](int s) { return f.symbolName(s); };
  SourceLoc home = primaryLoc(func.getLoc());
  w.setSource(SourceLine());
  std::string what = f.kind.empty() ? "function" : f.kind;
  std::string text = sources.line(home.file, home.line).trim().str();
  w.line(
      "/// @" + func.getName().str() + " (" + what +
      (home ? ", " + baseName(home.file).str() + ":" + std::to_string(home.line)
            : "") +
      (text.empty() ? "" : ": " + text) + ")");
  for (auto [i, a] : llvm::enumerate(f.args)) {
    if (a.kind == HostFunc::Arg::Graph) {
      w.line("///   " + a.name + ": " + graphKindName(a.graphKind));
      continue;
    }
    Shape s = f.shapes->argShape(i);
    std::string dims;
    for (auto [k, d] : llvm::enumerate(s))
      dims += (k ? ", " : "") + dimText(d, symName);
    w.line("///   " +
           (a.kind == HostFunc::Arg::Param ? "params." + a.field : a.name) +
           ": f32[" + dims + "]" +
           (a.kind == HostFunc::Arg::Param ? " (parameter)" : " (input)"));
  }
  for (auto [r, res] : llvm::enumerate(f.results)) {
    Shape s = f.shapes->resultShape(r);
    std::string dims;
    for (auto [k, d] : llvm::enumerate(s))
      dims += (k ? ", " : "") + dimText(d, symName);
    w.line("///   " + (res.field.empty() ? res.name : "grads." + res.field) +
           ": f32[" + dims + "] (" + res.role +
           (res.of.empty() ? "" : " of " + res.of) + ")");
  }
  std::string sizes;
  for (int s : f.shapes->explicitSymbols())
    sizes += (sizes.empty() ? "" : ", ") + f.symbolName(s);
  if (!sizes.empty())
    w.line("/// Explicit sizes: " + sizes + ".");
  w.line("/// Device pointers; `workspace` holds " + f.symbol +
         "_workspace_bytes(...) bytes of device memory, 64-byte aligned. "
         "Queued on `stream`.");
  std::string sig = "gnnc::rt::Status " + f.symbol + "(";
  std::vector<std::string> params;
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Graph)
      params.push_back(graphType(a.graphKind) + a.name);
  for (int s : f.shapes->explicitSymbols())
    params.push_back("int64_t " + f.symbolName(s));
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Input)
      params.push_back("const float *" + a.name);
  if (f.params)
    params.push_back("const " + f.params->name + " &params");
  for (const HostFunc::Result &r : f.results)
    if (r.field.empty())
      params.push_back("float *" + r.name);
  if (f.packGrads)
    params.push_back("const " + f.params->name + " &grads");
  params.push_back("void *workspace");
  params.push_back("bool training");
  params.push_back("uint64_t seed");
  params.push_back("cudaStream_t stream");
  for (auto [i, p] : llvm::enumerate(params))
    sig += (i ? ", " : "") + p;
  w.line(sig + ");");
  std::string wsSig = "std::size_t " + f.symbol + "_workspace_bytes(";
  std::vector<std::string> wsParams;
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Graph)
      wsParams.push_back(graphType(a.graphKind) + a.name);
  for (int s : f.shapes->explicitSymbols())
    wsParams.push_back("int64_t " + f.symbolName(s));
  for (auto [i, p] : llvm::enumerate(wsParams))
    wsSig += (i ? ", " : "") + p;
  w.line(wsSig + ");");
  w.setSource(SourceLine());
  w.blank();
}

std::string ModulePrinter::tensorInfo(const std::string &name,
                                      const std::string &role,
                                      const std::string &init,
                                      const Shape &shape, const HostFunc &f) {
  std::string dims;
  for (auto [k, d] : llvm::enumerate(shape))
    dims += (k ? ", " : "") +
            cString(dimText(d, [&](int s) { return f.symbolName(s); }));
  return "{" + cString(name) + ", " + cString(role) + ", " + cString(init) +
         ", " + std::to_string(shape.size()) + ", {" + dims + "}}";
}

void ModulePrinter::printReflection(CodeWriter &w) {
  w.setSource(SourceLine());
  w.line("//===--- Reflection: generic calls (docs/abi.md) ---===//");
  w.blank();
  w.line("namespace {");
  w.blank();
  std::vector<std::string> entries;
  for (auto &fp : hosts) {
    HostFunc &f = *fp;
    if (f.func.isPrivate())
      continue;
    std::string sym = f.symbol;
    // Graph and size arguments from CallArgs.
    auto graphArgExpr = [&](unsigned argIndex) {
      unsigned k = 0;
      for (unsigned i = 0; i < argIndex; ++i)
        k += f.args[i].kind == HostFunc::Arg::Graph;
      std::string type = graphType(f.args[argIndex].graphKind);
      type = type.substr(6, type.size() - 8); // strip "const " and " &"
      return "(*static_cast<const " + type + " *>(a.graphs[" +
             std::to_string(k) + "]))";
    };
    std::vector<std::string> graphArgs, sizeArgs;
    for (unsigned i = 0; i < f.args.size(); ++i)
      if (f.args[i].kind == HostFunc::Arg::Graph)
        graphArgs.push_back(graphArgExpr(i));
    for (size_t k = 0; k < f.shapes->explicitSymbols().size(); ++k)
      sizeArgs.push_back("a.sizes[" + std::to_string(k) + "]");
    // call
    w.line("rt::Status " + sym + "_call(const rt::cuda::CallArgs &a) {");
    w.indent();
    std::vector<std::string> args = graphArgs;
    args.insert(args.end(), sizeArgs.begin(), sizeArgs.end());
    unsigned tensor = 0;
    std::vector<std::string> paramPtrs;
    for (const HostFunc::Arg &a : f.args) {
      if (a.kind == HostFunc::Arg::Graph)
        continue;
      std::string p = "a.inputs[" + std::to_string(tensor++) + "]";
      if (a.kind == HostFunc::Arg::Input)
        args.push_back(p);
      else
        paramPtrs.push_back("const_cast<float *>(" + p + ")");
    }
    if (f.params)
      args.push_back(f.params->name + "{" + llvm::join(paramPtrs, ", ") + "}");
    std::vector<std::string> grads(f.params ? f.params->fields.size() : 0);
    for (auto [r, res] : llvm::enumerate(f.results)) {
      std::string p = "a.outputs[" + std::to_string(r) + "]";
      if (res.field.empty()) {
        args.push_back(p);
        continue;
      }
      for (auto [k, field] : llvm::enumerate(f.params->fields))
        if (field == res.field)
          grads[k] = p;
    }
    if (f.packGrads)
      args.push_back(f.params->name + "{" + llvm::join(grads, ", ") + "}");
    args.push_back("a.workspace");
    args.push_back("a.training");
    args.push_back("a.seed");
    args.push_back("a.stream");
    w.line("return " + sym + "(" + llvm::join(args, ", ") + ");");
    w.dedent();
    w.line("}");
    // workspace
    std::vector<std::string> wsArgs = graphArgs;
    wsArgs.insert(wsArgs.end(), sizeArgs.begin(), sizeArgs.end());
    bool usesA = !wsArgs.empty();
    w.line("std::size_t " + sym + "_call_workspace(const rt::cuda::CallArgs &" +
           (usesA ? "a" : "/*a*/") + ") {");
    w.indent();
    w.line("return " + sym + "_workspace_bytes(" + llvm::join(wsArgs, ", ") +
           ");");
    w.dedent();
    w.line("}");
    // shapes
    std::vector<std::string> dimsOut;
    std::set<int> used;
    auto name = [&](int s) {
      used.insert(s);
      return f.symbolName(s);
    };
    for (unsigned i = 0; i < f.args.size(); ++i)
      if (f.args[i].kind != HostFunc::Arg::Graph)
        for (Dim d : f.shapes->argShape(i))
          dimsOut.push_back(dimExpr(d, name));
    for (unsigned r = 0; r < f.results.size(); ++r)
      for (Dim d : f.shapes->resultShape(r))
        dimsOut.push_back(dimExpr(d, name));
    bool readsA = false;
    std::vector<std::string> symbolLines;
    for (int s : f.shapes->liveSymbols()) {
      if (!used.count(s))
        continue;
      readsA = true;
      const SizeSymbol &symbol = f.shapes->symbol(s);
      std::string source;
      if (symbol.kind == SizeSymbol::Kind::Explicit) {
        auto ex = f.shapes->explicitSymbols();
        size_t k = std::find(ex.begin(), ex.end(), s) - ex.begin();
        source = "a.sizes[" + std::to_string(k) + "]";
      } else {
        source = symbolSource(symbol, f, graphArgExpr);
      }
      symbolLines.push_back("const int64_t " + f.symbolName(s) + " = " +
                            source + ";");
    }
    w.line("void " + sym + "_call_shapes(const rt::cuda::CallArgs &" +
           (readsA ? "a" : "/*a*/") + ", int64_t *" +
           (dimsOut.empty() ? "/*dims*/" : "dims") + ") {");
    w.indent();
    for (const std::string &l : symbolLines)
      w.line(l);
    for (auto [k, d] : llvm::enumerate(dimsOut))
      w.line("dims[" + std::to_string(k) + "] = " + d + ";");
    w.dedent();
    w.line("}");
    // tables
    std::vector<std::string> kinds, tensors, results;
    for (const HostFunc::Arg &a : f.args)
      if (a.kind == HostFunc::Arg::Graph)
        kinds.push_back(graphKindEnum(a.graphKind));
    for (auto [i, a] : llvm::enumerate(f.args)) {
      if (a.kind == HostFunc::Arg::Graph)
        continue;
      std::string nameText = a.name, init;
      std::string role = a.kind == HostFunc::Arg::Param ? "param" : "input";
      if (auto saved =
              f.func.getArgAttrOfType<StringAttr>(i, gnn::kSavedAttrName)) {
        nameText = saved.getValue().str();
        role = "saved";
      }
      if (a.kind == HostFunc::Arg::Param) {
        auto path = f.func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName);
        auto in = f.func.getArgAttrOfType<StringAttr>(i, gnn::kInitAttrName);
        nameText = path.getValue().str();
        init = in ? in.getValue().str() : "";
      }
      tensors.push_back(
          tensorInfo(nameText, role, init, f.shapes->argShape(i), f));
    }
    for (auto [r, res] : llvm::enumerate(f.results))
      results.push_back(tensorInfo(res.of.empty() ? res.name : res.of, res.role,
                                   "", f.shapes->resultShape(r), f));
    std::string sizeNames;
    for (int s : f.shapes->explicitSymbols())
      sizeNames += (sizeNames.empty() ? "" : ", ") + cString(f.symbolName(s));
    auto table = [&](const std::string &type, const std::string &name,
                     const std::vector<std::string> &items) {
      if (items.empty())
        return std::string("nullptr");
      w.line("const " + type + " " + name + "[] = {");
      w.indent();
      for (const std::string &item : items)
        w.line(item + ",");
      w.dedent();
      w.line("};");
      return name;
    };
    std::string graphsName =
        table("rt::GraphKind", sym + "_graph_kinds", kinds);
    std::string sizesName =
        sizeNames.empty()
            ? "nullptr"
            : table("char *const", sym + "_size_names", {sizeNames});
    std::string argsName = table("rt::TensorInfo", sym + "_args", tensors);
    std::string resultsName =
        table("rt::TensorInfo", sym + "_results", results);
    w.blank();
    entries.push_back("{" + cString(f.func.getName()) + ", " + cString(sym) +
                      ", " + cString(f.kind) + ", " +
                      std::to_string(kinds.size()) + ", " + graphsName + ", " +
                      std::to_string(f.shapes->explicitSymbols().size()) +
                      ", " + sizesName + ", " + std::to_string(tensors.size()) +
                      ", " + argsName + ", " + std::to_string(results.size()) +
                      ", " + resultsName + ", " + sym + "_call, " + sym +
                      "_call_workspace, " + sym + "_call_shapes}");
  }
  w.line("const rt::cuda::EntryInfo kEntries[] = {");
  w.indent();
  for (const std::string &e : entries)
    w.line(e + ",");
  w.dedent();
  w.line("};");
  std::vector<std::string> defines;
  for (const std::string &d : options.defines)
    defines.push_back(cString(d));
  std::string definesName = "nullptr";
  if (!defines.empty()) {
    w.line("const char *const kDefines[] = {" + llvm::join(defines, ", ") +
           "};");
    definesName = "kDefines";
  }
  w.blank();
  w.line("} // namespace");
  w.blank();
  w.line("const rt::cuda::ModuleInfo gnnc_module = {GNNC_ABI_VERSION, " +
         cString(options.source) + ", " + cString(options.entry) + ", " +
         std::to_string(defines.size()) + ", " + definesName + ", " +
         (options.training ? "true" : "false") + ", " +
         std::to_string(entries.size()) + ", kEntries};");
}

void ModulePrinter::printHeader(CodeWriter &w) {
  std::string guard = "GNNC_GENERATED_CUDA_" +
                      cIdentifier(options.cppNamespace) + "_" +
                      cIdentifier(options.stem) + "_H";
  for (char &c : guard)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  w.line("// Generated by gnnc " GNNC_VERSION " from " +
         baseName(options.source).str() + "; do not edit.");
  w.line("// The ABI of this header is described in gnnc's docs/abi.md "
         "(\"CUDA\"); plain C++,");
  w.line("// the kernels are in " + options.stem + ".cu.");
  w.line("#ifndef " + guard);
  w.line("#define " + guard);
  w.blank();
  w.line("#include \"gnnc/runtime/cuda/DeviceOps.h\"");
  w.blank();
  w.line("#include <cstddef>");
  w.line("#include <cstdint>");
  w.blank();
  w.line("/// The version of the ABI of generated code (docs/abi.md).");
  w.line("#define GNNC_ABI_VERSION 1");
  w.line("static_assert(GNNC_ABI_VERSION == gnnc::rt::kAbiVersion,");
  w.line(
      "              \"generated code and gnnc/runtime/Ops.h disagree on the "
      "ABI version\");");
  w.blank();
  w.line("namespace " + options.cppNamespace + " {");
  w.blank();
  for (auto &p : structs)
    printParamStruct(w, *p);
  for (auto &f : hosts)
    if (!f->func.isPrivate())
      printDeclaration(w, *f);
  w.line("/// What this module was compiled from, and its entry points.");
  w.line("extern const gnnc::rt::cuda::ModuleInfo gnnc_module;");
  w.blank();
  w.line("} // namespace " + options.cppNamespace);
  w.blank();
  w.line("#endif // " + guard);
}

LogicalResult ModulePrinter::print(std::vector<GeneratedFile> &files) {
  if (failed(collect()))
    return failure();
  for (auto &f : hosts) {
    auto printer = std::make_unique<HostPrinter>(*f, sources, byName, kernels);
    if (failed(printer->plan()))
      return failure();
    printer->kernelArgNames(kernels);
    printers.push_back(std::move(printer));
  }

  CodeWriter header;
  printHeader(header);

  CodeWriter source;
  source.line("// Generated by gnnc " GNNC_VERSION " from " +
              baseName(options.source).str() + "; do not edit.");
  source.line("#include \"" + options.stem + ".h\"");
  source.blank();
  source.line("#include \"gnnc/runtime/cuda/Kernel.cuh\"");
  source.blank();
  source.line("#include <cmath>");
  source.blank();
  source.line("namespace " + options.cppNamespace + " {");
  source.line("namespace rt = ::gnnc::rt;");
  source.blank();
  source.line("namespace {");
  source.blank();
  std::set<std::string> launched;
  module.walk([&](gnnk::LaunchOp l) { launched.insert(l.getKernel().str()); });
  for (const std::string &name : kernelOrder) {
    if (!launched.count(name))
      continue;
    KernelInfo &k = kernels[name];
    KernelPrinter printer(k, sources, source);
    if (failed(printer.print()))
      return failure();
    source.setSource(SourceLine());
    source.blank();
  }
  source.line("} // namespace");
  source.blank();
  for (auto &printer : printers) {
    if (failed(printer->print(source)))
      return failure();
    source.setSource(SourceLine());
  }
  printReflection(source);
  source.blank();
  source.line("} // namespace " + options.cppNamespace);

  files.push_back(header.render(options.stem + ".h", options.lineDirectives));
  files.push_back(source.render(options.stem + ".cu", options.lineDirectives));
  return success();
}

class CudaTarget : public KernelTarget {
public:
  StringRef getName() const override { return "cuda"; }
  LogicalResult printModule(ModuleOp module, const TargetOptions &options,
                            std::vector<GeneratedFile> &files) override {
    TargetOptions opts = options;
    if (opts.cppNamespace.empty())
      opts.cppNamespace = cIdentifier(opts.stem);
    ModulePrinter printer(module, opts);
    return printer.print(files);
  }
};

} // namespace

std::unique_ptr<KernelTarget> gnnc::target::createCudaTarget() {
  return std::make_unique<CudaTarget>();
}
