//===- HostModule.cpp - The host side every printer shares ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/HostModule.h"

#include "gnnc/Target/PrinterSupport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cctype>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::target;
using gnn::Domain;
using gnn::DomainTensorType;

//===----------------------------------------------------------------------===//
// Module-level information
//===----------------------------------------------------------------------===//

std::string gnnc::target::graphKindEnum(gnn::GraphKind kind) {
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

std::string gnnc::target::graphKindName(gnn::GraphKind kind) {
  return gnn::stringifyGraphKind(kind).str();
}

const std::string &HostABI::graphTypeOf(gnn::GraphKind kind) const {
  switch (kind) {
  case gnn::GraphKind::graph:
  case gnn::GraphKind::block:
    break;
  case gnn::GraphKind::batched:
    return batchedGraphType;
  case gnn::GraphKind::hetero:
    return heteroGraphType;
  }
  return graphType;
}

std::string
gnnc::target::symbolSource(const SizeSymbol &s, const HostFunc &f,
                           const std::function<std::string(unsigned)> &graph,
                           const HostABI &abi) {
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
    return abi.runtime + "::relationOrEmpty(" + g + ", " + cString(s.relation) +
           ").numEdges()";
  case SizeSymbol::Kind::Explicit:
  case SizeSymbol::Kind::Unknown:
    break;
  }
  return "0";
}

const HostTraits &gnnc::target::hostTraitsOf(const HostABI &abi) {
  return abi.printerName == "CUDA" ? cudaHostTraits() : cppHostTraits();
}

std::vector<HostFunc::Part> HostFunc::entryParts() const {
  std::vector<Part> parts;
  for (auto [i, a] : llvm::enumerate(args))
    if (a.kind == Arg::Graph)
      parts.push_back({Part::Graph, static_cast<unsigned>(i)});
  for (int s : shapes->explicitSymbols())
    parts.push_back({Part::Size, static_cast<unsigned>(s)});
  for (auto [i, a] : llvm::enumerate(args)) {
    if (saved && savedBefore == static_cast<int>(i))
      parts.push_back({Part::Saved});
    if (a.kind == Arg::Input)
      parts.push_back({Part::Input, static_cast<unsigned>(i)});
  }
  if (params)
    parts.push_back({Part::Params});
  for (auto [r, res] : llvm::enumerate(results))
    if (res.field.empty() && res.savedField.empty())
      parts.push_back({Part::Output, static_cast<unsigned>(r)});
  if (saved && savedBefore < 0)
    parts.push_back({Part::Saved});
  if (packGrads)
    parts.push_back({Part::Grads});
  return parts;
}

/// Where a result is written: its pointer argument, or a field of the
/// gradient or saved-state struct.
static std::string resultExpr(const HostFunc::Result &r) {
  if (!r.field.empty())
    return "grads." + r.field;
  if (!r.savedField.empty())
    return "saved." + r.savedField;
  return r.name;
}

//===----------------------------------------------------------------------===//
// Host functions
//===----------------------------------------------------------------------===//

HostFunctionPrinter::~HostFunctionPrinter() = default;

HostFunctionPrinter::MatmulOperands
HostFunctionPrinter::matmulOperands(gnn::MatmulOp m) {
  MatmulOperands out;
  Shape a = shapes.shape(m.getLhs());
  Shape w = shapes.shape(m.getRhs());
  out.sizes =
      dims(m.getLhs(), 0, a.size() - 1) + ", " + dim(w[0]) + ", " + dim(w[1]);
  auto read = [&](Value v, bool &trans) {
    Operation *t = v.getDefiningOp();
    trans = t && fusions.absorbedTransposes.count(t);
    return trans ? t->getOperand(0) : v;
  };
  out.a = read(m.getLhs(), out.transA);
  out.w = read(m.getRhs(), out.transW);
  return out;
}

std::string HostFunctionPrinter::dropoutArgs(gnn::DropoutOp d) {
  usesTraining = usesSeed = true;
  return floatLiteral(d.getP().convertToDouble(), false, abi.nonFinite) +
         ", rt::mixSeed(" + std::to_string(d.getSeedAttr().getInt()) +
         ", seed), training";
}

std::string HostFunctionPrinter::graph(Value g) {
  if (auto arg = dyn_cast<BlockArgument>(g)) {
    usedGraphs.insert(arg.getArgNumber());
    return f.args[arg.getArgNumber()].name;
  }
  return "*" + storage[g].name;
}

/// The rt::Graph of a graph value (the union of a batch).
std::string HostFunctionPrinter::kernelGraph(Value g) {
  std::string e = graph(g);
  auto type = cast<gnn::GraphType>(g.getType());
  if (type.getKind() == gnn::GraphKind::batched)
    return "*" + e + ".graph";
  return e;
}

std::string HostFunctionPrinter::valueName(Operation *op, Value result,
                                           const SourceLoc &loc, bool last,
                                           unsigned ssa, bool &meaningful) {
  meaningful = false;
  StringRef text = sources.line(loc.file, loc.line);
  // The last op of an assignment's line computes the assigned variable.
  if (loc) {
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

LogicalResult HostFunctionPrinter::plan() {
  // Arguments, results and size symbols.
  if (!abi.extraParamName.empty())
    namer.reserve(abi.extraParamName);
  for (const std::string &s : f.symbolNames)
    if (!s.empty())
      namer.reserve(s);
  if (f.saved)
    namer.reserve("saved");
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    HostFunc::Arg &a = f.args[i];
    Storage s;
    if (a.kind == HostFunc::Arg::Param) {
      s.kind = Storage::Arg;
      s.name = "params." + a.field;
      s.isConst = false;
    } else if (a.kind == HostFunc::Arg::Saved) {
      s.kind = Storage::Arg;
      s.name = "saved." + a.field;
      s.isConst = true;
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

  // The recorded decisions: host fusions and the workspace plan.
  const HostTraits &traits = hostTraitsOf(abi);
  if (traits.constantsInWorkspace != constantsInWorkspace() ||
      traits.optionalInputGrads != abi.optionalInputGrads)
    return func.emitError(abi.printer() + " does not match its host traits");
  if (traits.hostFusions && failed(readHostFusions(func, fusions, traits)))
    return failure();
  FailureOr<std::vector<WorkspaceSlot>> slots = readWorkspace(func, traits);
  if (failed(slots))
    return failure();
  plannedSlots = std::move(*slots);
  // Values: names first, then where they live.
  Block &body = func.getBody().front();
  llvm::SmallBitVector optional(f.results.size());
  for (auto [i, r] : llvm::enumerate(f.results))
    optional[i] = r.optional;
  HostStorage analysis(func, shapes, fusions, optional, [&](StringRef name) {
    llvm::SmallBitVector bits;
    if (auto it = functions.find(name.str()); it != functions.end()) {
      bits.resize(it->second->results.size());
      for (auto [i, r] : llvm::enumerate(it->second->results))
        bits[i] = r.optional;
    }
    return bits;
  });
  live = std::move(analysis.live);
  position = std::move(analysis.position);
  lastUse = std::move(analysis.lastUse);
  // The .gnn location of every op, and whether no later op of the body
  // (before the return) comes from the same line.
  std::vector<SourceLoc> locs;
  std::vector<bool> lastOfLine;
  {
    std::set<std::pair<std::string, unsigned>> later;
    for (Operation &op : llvm::reverse(body)) {
      if (isa<func::ReturnOp>(op)) {
        later.clear();
        locs.emplace_back();
        lastOfLine.push_back(true);
        continue;
      }
      locs.push_back(primaryLoc(op.getLoc()));
      const SourceLoc &loc = locs.back();
      lastOfLine.push_back(later.insert({loc.file, loc.line}).second);
    }
    std::reverse(locs.begin(), locs.end());
    std::reverse(lastOfLine.begin(), lastOfLine.end());
  }
  unsigned ssa = 0;
  DenseMap<Value, std::pair<std::string, bool>> base;
  DenseMap<Value, unsigned> number;
  for (auto [i, op] : llvm::enumerate(body))
    for (Value r : op.getResults()) {
      bool meaningful = false;
      std::string name =
          valueName(&op, r, locs[i], lastOfLine[i], ssa, meaningful);
      base[r] = {name, meaningful};
      number[r] = ssa++;
    }
  // A view whose input has no other user shares its variable; the group
  // takes the view's name when the view has a .gnn name.
  DenseMap<Value, Value> groupOf;
  for (Operation &op : body) {
    for (Value r : op.getResults())
      groupOf[r] = r;
    if (isView(&op) && viewedValue(&op).hasOneUse()) {
      Value in = viewedValue(&op);
      if (groupOf.count(in)) {
        Value root = groupOf[in];
        groupOf[op.getResult(0)] = root;
        auto viewBase = base[op.getResult(0)];
        if (viewBase.second && !base[root].second && !isAbsorbed(fusions, &op))
          base[root] = viewBase;
      }
    }
  }
  // What each value and op contributes to (for optional results), and the
  // values computed directly into a result.
  for (const HostFunc::Result &r : f.results)
    hasOptionalResults = hasOptionalResults || r.optional;
  valueFeeds = std::move(analysis.valueFeeds);
  opFeeds = std::move(analysis.opFeeds);
  DenseMap<Value, unsigned> placed = std::move(analysis.placed);
  copyResult.assign(f.results.size(), true);
  for (auto &entry : placed)
    copyResult[entry.second] = false;
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
        // A copy first: inserting `r` may move the map's entries.
        Storage shared = storage.lookup(root);
        shared.declared = false;
        storage[r] = shared;
        continue;
      }
      if (isView(&op)) {
        Storage &in = storage[viewedValue(&op)];
        s.kind = Storage::Alias;
        s.isConst = in.isConst;
        Value input = viewedValue(&op);
        bool own = base[r].second && !isAbsorbed(fusions, &op) &&
                   (!base.count(input) || base[input].first != base[r].first);
        s.name = own ? namer.unique(base[r].first, std::to_string(number[r]))
                     : in.name;
        s.declared = own;
        storage[r] = s;
        continue;
      }
      // A constant is a `const float[1]`, or else a buffer like any other.
      if (isa<gnn::ConstantOp>(op) && !constantsInWorkspace()) {
        s.kind = Storage::Scalar;
        s.name = namer.unique(base[r].first);
        s.isConst = true;
        storage[r] = s;
        continue;
      }
      if (auto it = placed.find(r); it != placed.end()) {
        s.kind = Storage::Output;
        s.name = resultExpr(f.results[it->second]);
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

void HostFunctionPrinter::kernelArgNames(
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
      if (StringRef(name).starts_with("saved."))
        name = "saved_" + name.substr(6);
      it->second.argNames.push_back(name);
    }
    for (Value v : launch.getResults()) {
      auto s = storage.find(v);
      std::string name = s != storage.end() ? s->second.name : "out";
      if (StringRef(name).starts_with("grads."))
        name = "grad_" + name.substr(6);
      if (StringRef(name).starts_with("saved."))
        name = "saved_" + name.substr(6);
      it->second.argNames.push_back(name);
    }
  });
}

void HostFunctionPrinter::addSlot(std::string name, std::string bytes,
                                  Operation *op, Value value) {
  usesWorkspace = true;
  unsigned at = position.lookup(op);
  WorkspaceSlot::Kind kind = value                   ? WorkspaceSlot::Buffer
                             : isa<func::CallOp>(op) ? WorkspaceSlot::Callee
                                                     : WorkspaceSlot::Scratch;
  unsigned result = value ? cast<OpResult>(value).getResultNumber() : 0;
  size_t next = layout.size();
  unsigned last = value ? std::max(at, lastUse.lookup(value)) : at;
  if (next >= plannedSlots.size() || plannedSlots[next].op != at ||
      plannedSlots[next].kind != kind ||
      (value && plannedSlots[next].result != result) ||
      plannedSlots[next].first > at || plannedSlots[next].last < last) {
    if (!slotMismatch)
      op->emitError("the workspace plan of @")
          << func.getName() << " has no slot " << next
          << " for this op live from " << at << " to " << last;
    slotMismatch = true;
    layout.push_back({std::move(name), std::move(bytes), at, at});
    return;
  }
  const WorkspaceSlot &slot = plannedSlots[next];
  if (slot.reuses >= 0) {
    // In place: over a buffer that the op reads element for element, at the
    // element it writes, and that nothing reads after it.
    Value holder = slotHolders.lookup(slot.reuses);
    if (!value || !holder || lastUse.lookup(holder) > at ||
        layout[slot.reuses].bytes != bytes ||
        !llvm::is_contained(inPlaceOperands(op, shapes, fusions), holder)) {
      op->emitError("the workspace plan of @")
          << func.getName() << " writes slot " << next << " over slot "
          << slot.reuses << ", which this op cannot overwrite in place";
      slotMismatch = true;
    }
  }
  if (value)
    slotHolders[slot.reuses >= 0 ? slot.reuses : next] = value;
  layout.push_back(
      {std::move(name), std::move(bytes), slot.first, slot.last, slot.reuses});
}

/// Declares the variable of a fresh value (a workspace buffer).
void HostFunctionPrinter::declare(Value v, CodeWriter &w) {
  Storage &s = storage[v];
  if (s.kind != Storage::Buffer || !s.declared)
    return;
  addSlot(s.name, "rt::alignUp(4 * (" + numel(v) + "))", v.getDefiningOp(), v);
  w.line("float *" + s.name + " = rt::wsFloats(workspace, layout." + s.name +
         ");");
}

std::string
HostFunctionPrinter::guardFor(const llvm::SmallBitVector &results) const {
  if (!hasOptionalResults || results.none())
    return "";
  std::string condition;
  for (unsigned i : results.set_bits()) {
    if (!f.results[i].optional)
      return "";
    condition += (condition.empty() ? "" : " || ") + f.results[i].name;
  }
  return condition;
}

std::string HostFunctionPrinter::guardOf(Operation *op) const {
  // Views and constants declare variables; they cost nothing.
  auto it = opFeeds.find(op);
  if (isView(op) || isa<gnn::ConstantOp>(op) || it == opFeeds.end())
    return "";
  return guardFor(it->second);
}

std::string HostFunctionPrinter::guardOfValue(Value v) const {
  auto it = valueFeeds.find(v);
  return it == valueFeeds.end() ? "" : guardFor(it->second);
}

std::string HostFunctionPrinter::sideEnum(Domain d) {
  return d == Domain::src ? std::string("rt::Side::Src")
                          : std::string("rt::Side::Dst");
}

std::string HostFunctionPrinter::capitalized(StringRef s) {
  std::string out = s.str();
  out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string HostFunctionPrinter::elementwiseOperand(Value v, Shape aligned,
                                                    size_t rank) {
  // An absorbed broadcast is read as its input, which the op broadcasts
  // itself: the input's shape aligned to the broadcast's.
  Operation *def = v.getDefiningOp();
  if (def && fusions.absorbedBroadcasts.count(def)) {
    aligned = shapes.alignedOperands(def).first;
    v = viewedValue(def);
  }
  aligned.insert(aligned.begin(), rank - std::min(rank, aligned.size()),
                 Dim::constant(1));
  return ptr(v) + ", " + shapeList(aligned);
}

std::string HostFunctionPrinter::binaryOperands(gnn::BinaryOp b, size_t rank) {
  auto [sa, sb] = shapes.alignedOperands(b);
  rank = std::max(rank, shapes.shape(b.getResult()).size());
  return elementwiseOperand(b.getLhs(), sa, rank) + ", " +
         elementwiseOperand(b.getRhs(), sb, rank);
}

std::string HostFunctionPrinter::reduceSplit(Value input, IntegerAttr axis) {
  size_t offset = gnn::tensorOf(input).isVertexOrEdge() ? 1 : 0;
  if (axis)
    return axisSplit(input, axis.getInt() + offset);
  return dims(input, 0, offset) + ", " +
         dims(input, offset, shapes.shape(input).size()) + ", 1";
}

LogicalResult HostFunctionPrinter::printRuntimeOp(Operation *op, CodeWriter &w,
                                                  CodeWriter &decl) {
  using namespace gnn;
  auto out = [&]() { return ptr(op->getResult(0)); };
  auto in = [&](Value v) { return ptr(v); };
  auto call = [&](const std::string &fn, const std::string &args) {
    printRuntimeCall(w, fn, args);
  };
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
        call("gather", edgeEnds(g.getGraph(), src) + ", " +
                           dims(g.getResult(), 0, 1) + ", " + in(g.getInput()) +
                           ", " + rowSize(g.getResult()) + ", " + out());
        return success();
      })
      .Case<ScatterOp>([&](ScatterOp s) -> LogicalResult {
        std::string fn = s.getFn() == ReduceFn::logsumexp
                             ? "LogSumExp"
                             : capitalized(stringifyReduceFn(s.getFn()));
        call("scatter" + fn, kernelGraph(s.getGraph()) + ", " +
                                 sideEnum(tensorOf(s.getResult()).getDomain()) +
                                 ", " + in(s.getInput()) + ", " +
                                 rowSize(s.getInput()) + ", " + out());
        return success();
      })
      .Case<ScatterSelectOp>([&](ScatterSelectOp s) -> LogicalResult {
        call("scatterSelect" + capitalized(stringifyReduceFn(s.getFn())),
             kernelGraph(s.getGraph()) + ", " + sideEnum(s.getBy()) + ", " +
                 in(s.getInput()) + ", " + rowSize(s.getInput()) + ", " +
                 out());
        return success();
      })
      .Case<EdgeSoftmaxOp>([&](EdgeSoftmaxOp s) -> LogicalResult {
        call("edgeSoftmax", kernelGraph(s.getGraph()) + ", " +
                                sideEnum(s.getBy()) + ", " + in(s.getInput()) +
                                ", " + rowSize(s.getInput()) + ", " + out());
        return success();
      })
      .Case<BroadcastGraphsOp>([&](BroadcastGraphsOp b) -> LogicalResult {
        call("broadcastGraphs", graph(b.getGraph()) + ", " + in(b.getInput()) +
                                    ", " + dims(b.getResult(), 0, 1) + ", " +
                                    rowSize(b.getInput()) + ", " + out());
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
                           true, abi.nonFinite);
        call(fn, args);
        return success();
      })
      .Case<BinaryOp>([&](BinaryOp b) -> LogicalResult {
        if (auto m = fusions.addMuls.find(op); m != fusions.addMuls.end()) {
          // x + y * z, the product rounded first, in one pass.
          BinaryOp mul = m->second;
          auto [sa, sb] = shapes.alignedOperands(b);
          bool lhsIsProduct = b.getLhs() == mul.getResult();
          size_t rank = shapes.shape(b.getResult()).size();
          call("addMul",
               elementwiseOperand(lhsIsProduct ? b.getRhs() : b.getLhs(),
                                  lhsIsProduct ? sb : sa, rank) +
                   ", " + binaryOperands(mul, rank) + ", " + out() + ", " +
                   shapeList(shapes.shape(b.getResult())));
          return success();
        }
        call(stringifyBinaryFn(b.getFn()).str(),
             binaryOperands(b) + ", " + out() + ", " +
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
      .Case<SoftmaxOp>([&](SoftmaxOp s) -> LogicalResult {
        size_t offset = tensorOf(s.getInput()).isVertexOrEdge() ? 1 : 0;
        call(s.getLog() ? "logSoftmax" : "softmax",
             in(s.getInput()) + ", " + out() + ", " +
                 axisSplit(s.getInput(), s.getAxisAttr().getInt() + offset));
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
      .Case<DstRowsOp>([&](DstRowsOp r) -> LogicalResult {
        // The destinations are the first sources: a prefix of the rows.
        call("copy",
             in(r.getInput()) + ", " + out() + ", " + numel(r.getResult()));
        return success();
      })
      .Case<PadDstRowsOp>([&](PadDstRowsOp r) -> LogicalResult {
        std::string rows = numel(r.getInput());
        call("copy", in(r.getInput()) + ", " + out() + ", " + rows);
        call("fill", out() + " + " + rows + ", " + numel(r.getResult()) +
                         " - " + rows + ", 0.0f");
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
        call("dropout", in(d.getInput()) + ", " + out() + ", " +
                            numel(d.getResult()) + ", " + dropoutArgs(d));
        return success();
      })
      .Case<TrainingOp>([&](TrainingOp) -> LogicalResult {
        usesTraining = true;
        call("fill", out() + ", 1, training ? 1.0f : 0.0f");
        return success();
      })
      .Case<UpdateBatchStatsOp>([&](UpdateBatchStatsOp u) -> LogicalResult {
        // Writes the buffers through `params` (docs/abi.md, "Buffers").
        usesTraining = true;
        Value x = u.getInput();
        printCheckedRuntimeCall(
            w, "updateBatchStats",
            in(x) + ", " + dims(x, 0, 1) + ", " + dims(x, 1, 2) + ", " +
                ptr(u.getRunningMean()) + ", " + ptr(u.getRunningVar()) + ", " +
                floatLiteral(u.getMomentum().convertToDouble(), false,
                             abi.nonFinite) +
                ", training");
        return success();
      })
      .Case<func::CallOp>([&](func::CallOp c) -> LogicalResult {
        return printCall(c, w, decl);
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitError(abi.printer() + " does not support '")
               << other->getName() << "' in host code";
      });
}

LogicalResult HostFunctionPrinter::printCall(func::CallOp call, CodeWriter &w,
                                             CodeWriter &decl) {
  auto it = functions.find(call.getCallee().str());
  if (it == functions.end())
    return call.emitError(abi.printer() + " cannot call @") << call.getCallee();
  HostFunc &callee = *it->second;
  // An optional result of the callee that nothing reads is not computed.
  auto unread = [&](unsigned r) {
    return callee.results[r].optional && call.getResult(r).use_empty();
  };
  for (auto [r, result] : llvm::enumerate(call.getResults()))
    if (!unread(r))
      declare(result, decl);
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
  // A pointer of a struct (a float *) from an operand or result.
  auto mutablePtr = [&](Value v) {
    return storage[v].isConst ? "const_cast<float *>(" + ptr(v) + ")" : ptr(v);
  };
  std::vector<std::string> paramPtrs, gradPtrs(callee.params->fields.size()),
      savedPtrs(callee.saved ? callee.saved->fields.size() : 0);
  auto savedIndex = [&](const std::string &field) {
    auto &fields = callee.saved->fields;
    return std::find(fields.begin(), fields.end(), field) - fields.begin();
  };
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    const HostFunc::Arg &a = callee.args[i];
    if (a.kind == HostFunc::Arg::Param)
      paramPtrs.push_back(mutablePtr(operand));
    if (a.kind == HostFunc::Arg::Saved)
      savedPtrs[savedIndex(a.field)] = mutablePtr(operand);
  }
  std::string callGuard = guardOf(call);
  std::vector<std::string> resultPtrs(call.getNumResults());
  for (auto [r, result] : llvm::enumerate(call.getResults())) {
    const HostFunc::Result &res = callee.results[r];
    if (!res.field.empty()) {
      for (auto [k, field] : llvm::enumerate(callee.params->fields))
        if (field == res.field)
          gradPtrs[k] = ptr(result);
      continue;
    }
    if (!res.savedField.empty()) {
      savedPtrs[savedIndex(res.savedField)] = ptr(result);
      continue;
    }
    std::string p = unread(r) ? "nullptr" : ptr(result);
    // An optional result the caller only needs for its own optional
    // results: asked for only when one of those is.
    std::string guard = res.optional ? guardOfValue(result) : "";
    if (!unread(r) && !guard.empty() && guard != callGuard &&
        storage[result].kind == Storage::Buffer)
      p = "(" + guard + ") ? " + p + " : nullptr";
    resultPtrs[r] = p;
  }
  std::vector<std::string> args;
  for (const HostFunc::Part &part : callee.entryParts()) {
    switch (part.kind) {
    case HostFunc::Part::Graph:
      args.push_back(graph(call.getOperand(part.index)));
      break;
    case HostFunc::Part::Size:
      args.push_back(dim(calleeSyms[part.index]));
      break;
    case HostFunc::Part::Input:
      args.push_back(ptr(call.getOperand(part.index)));
      break;
    case HostFunc::Part::Params:
      args.push_back(callee.params->name + "{" + llvm::join(paramPtrs, ", ") +
                     "}");
      break;
    case HostFunc::Part::Output:
      args.push_back(resultPtrs[part.index]);
      break;
    case HostFunc::Part::Saved:
      args.push_back(callee.saved->name + "{" + llvm::join(savedPtrs, ", ") +
                     "}");
      break;
    case HostFunc::Part::Grads:
      args.push_back(callee.params->name + "{" + llvm::join(gradPtrs, ", ") +
                     "}");
      break;
    }
  }
  args.push_back("rt::wsBytes(workspace, layout." + wsName + ")");
  args.push_back("training");
  args.push_back("seed");
  usesTraining = usesSeed = true;
  if (!abi.extraParamName.empty()) {
    args.push_back(abi.extraParamName);
    usesExtraParam = true;
  }
  std::string line = "if (rt::Status s = " + callee.symbol + "(";
  for (auto [i, a] : llvm::enumerate(args))
    line += (i ? ", " : "") + a;
  w.line(line + "); !s.ok())");
  w.indent();
  w.line("return s;");
  w.dedent();
  return success();
}

LogicalResult HostFunctionPrinter::print(CodeWriter &w) {
  SourceLoc home = primaryLoc(func.getLoc());
  // The body first (it decides what the prologue declares).
  CodeWriter body;
  Block &block = func.getBody().front();
  SourceLine lastComment;
  // Ops that only optional results need run inside `if (grad_x) { ... }`;
  // consecutive ones under the same condition share a block, and the
  // buffers they write are declared before it.
  std::string openGuard;
  auto closeGuard = [&]() {
    if (openGuard.empty())
      return;
    body.dedent();
    body.line("}");
    openGuard.clear();
  };
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      closeGuard();
      body.setSource(primaryLoc(ret.getLoc()).toLine());
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        if (!copyResult[i])
          continue;
        const HostFunc::Result &r = f.results[i];
        std::string copy = copyStatement(ptr(v), resultExpr(r), numel(v));
        if (r.optional) {
          body.line("if (" + r.name + ")");
          body.indent();
          body.line(copy);
          body.dedent();
        } else {
          body.line(copy);
        }
      }
      body.line("return rt::Status::success();");
      continue;
    }
    if (!live.count(&op) || isa<gnn::RelationOp>(op) ||
        fusions.fusedOps.count(&op))
      continue;
    // Views that share their input's variable print nothing.
    if (isView(&op) && !storage[op.getResult(0)].declared)
      continue;
    SmallVector<SourceLoc, 4> locs = allLocs(op.getLoc());
    SourceLine line = locs.empty() ? SourceLine() : locs.front().toLine();
    std::string guard = guardOf(&op);
    CodeWriter decl, code;
    decl.setSource(line);
    code.setSource(line);
    if (failed(printOp(&op, code, decl)))
      return failure();
    bool comment = line && line != lastComment;
    if (guard != openGuard || (!guard.empty() && (comment || !decl.empty())))
      closeGuard();
    if (comment) {
      body.setSource(line);
      body.blank();
      writeLocationComment(body, sources, locs);
      lastComment = line;
    }
    body.setSource(line);
    body.append(decl);
    if (!guard.empty() && openGuard.empty()) {
      body.line("if (" + guard + ") {");
      body.indent();
      openGuard = guard;
    }
    body.append(code);
  }

  if (slotMismatch)
    return failure();
  if (layout.size() != plannedSlots.size())
    return func.emitError("the workspace plan of @")
           << func.getName() << " has " << plannedSlots.size()
           << " slots, the function needs " << layout.size();

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
  size_t placed =
      llvm::count_if(layout, [](const Slot &slot) { return slot.reuses < 0; });
  if (!layout.empty()) {
    w.line("// Buffers live between two ops of the body (by position) share "
           "bytes");
    w.line("// with those that are not live at the same time.");
    w.line("rt::WorkspacePlan<" + std::to_string(placed) + "> plan;");
  }
  for (const Slot &slot : layout) {
    if (slot.reuses >= 0) {
      w.line(slot.name + " = " + layout[slot.reuses].name +
             "; // written in place over it");
      continue;
    }
    w.line(slot.name + " = plan.place(" + slot.bytes + ", " +
           std::to_string(slot.first) + ", " + std::to_string(slot.last) +
           ");");
  }
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
      pro.line("if (rt::Status s = " + abi.runtime + "::checkBatch(" + a.name +
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
      pro.line("const " + abi.relationType + " *" + name + " = " + abi.runtime +
               "::findRelation(" + g + ", " + cString(rel.getName()) + ");");
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
  // Blocks that share a size must agree on it: `g2: Block[N1, N2]` after
  // `g1: Block[N0, N1]` reads N1 from g1 and checks g2's sources.
  auto sideName = [](SizeSymbol::Kind k) {
    return k == SizeSymbol::Kind::NumSrc   ? "sources"
           : k == SizeSymbol::Kind::NumDst ? "destinations"
                                           : "edges";
  };
  for (const FunctionShapes::SharedSize &s : shapes.sharedSizes()) {
    usedSymbols.insert(s.symbol);
    usedGraphs.insert(s.graphArg);
    SizeSymbol other;
    other.kind = s.kind;
    other.graphArg = s.graphArg;
    const SizeSymbol &first = shapes.symbol(s.symbol);
    std::string source = symbolSource(
        other, f, [&](unsigned i) { return f.args[i].name; }, abi);
    checks.emplace_back("if (" + source + " != " + f.symbolName(s.symbol) + ")",
                        "return rt::Status::error(" +
                            cString(func.getName().str() + ": the " +
                                    sideName(s.kind) + " of block '" +
                                    f.args[s.graphArg].name + "' must be the " +
                                    sideName(first.kind) + " of block '" +
                                    f.args[first.graphArg].name + "' (" +
                                    s.name + "): the blocks do not chain") +
                            ");");
  }
  // The layout needs every size; otherwise declare those the code uses.
  bool needLayout = usesWorkspace;
  std::vector<std::pair<std::string, std::string>> staticChecks;
  for (int s : shapes.liveSymbols()) {
    const SizeSymbol &symbol = shapes.symbol(s);
    if (symbol.kind == SizeSymbol::Kind::Explicit)
      continue;
    if (!needLayout && !usedSymbols.count(s))
      continue;
    usedGraphs.insert(symbol.graphArg);
    std::string source = symbolSource(
        symbol, f, [&](unsigned i) { return f.args[i].name; }, abi);
    // A relation this function looked up already.
    if (symbol.kind == SizeSymbol::Kind::RelationEdges)
      for (Operation &op : block)
        if (auto rel = dyn_cast<gnn::RelationOp>(op))
          if (live.count(&op) && rel.getName() == symbol.relation)
            source = storage[rel.getResult()].name + "->numEdges()";
    auto fixed = f.staticSizes.find(s);
    if (fixed == f.staticSizes.end()) {
      pro.line("const int64_t " + f.symbolName(s) + " = " + source + ";");
      continue;
    }
    // A static shape: the graph must have the size the code was compiled
    // for.
    pro.line("constexpr int64_t " + f.symbolName(s) + " = " +
             std::to_string(fixed->second) + ";");
    const HostFunc::Arg &g = f.args[symbol.graphArg];
    bool homogeneous = g.graphKind != gnn::GraphKind::block;
    std::string what = symbol.kind == SizeSymbol::Kind::NumSrc ? "sources"
                       : symbol.kind == SizeSymbol::Kind::NumDst
                           ? (homogeneous ? "vertices" : "destinations")
                       : symbol.kind == SizeSymbol::Kind::NumEdges ? "edges"
                       : symbol.kind == SizeSymbol::Kind::NumGraphs
                           ? "graphs"
                           : "vertices";
    staticChecks.emplace_back(
        "if (" + source + " != " + f.symbolName(s) + ")",
        "return rt::Status::error(" +
            cString(func.getName().str() + ": graph '" + g.name + "' has ") +
            " + std::to_string(" + source + ") + " +
            cString(" " + what + ", but the code was compiled for " +
                    symbol.name + " = " + std::to_string(fixed->second) +
                    " (static shapes, gnnc -D " + symbol.name + "=" +
                    std::to_string(fixed->second) + ")") +
            ");");
  }
  checks.insert(checks.begin(), staticChecks.begin(), staticChecks.end());
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
    // With every size static the workspace is planned once, on the first
    // call.
    bool allStatic = llvm::all_of(shapes.liveSymbols(), [&](int s) {
      return f.staticSizes.count(s) != 0;
    });
    pro.line(std::string(allStatic ? "static " : "") + "const " + f.symbol +
             "_Layout layout(" + args + ");");
  }

  // The entry point.
  w.setSource(home.toLine());
  writeLocationComment(w, sources, {home});
  std::string signature = "rt::Status " + f.symbol + "(";
  std::vector<std::string> params;
  bool usesParams = false, usesSaved = false;
  for (auto [i, a] : llvm::enumerate(f.args)) {
    bool used = isUsed(func.getArgument(i));
    if (a.kind == HostFunc::Arg::Param)
      usesParams = usesParams || used;
    if (a.kind == HostFunc::Arg::Saved)
      usesSaved = usesSaved || used;
  }
  for (const HostFunc::Result &r : f.results)
    usesSaved = usesSaved || !r.savedField.empty();
  auto unusedIf = [](bool unused) {
    return std::string(unused ? "[[maybe_unused]] " : "");
  };
  for (const HostFunc::Part &part : f.entryParts()) {
    switch (part.kind) {
    case HostFunc::Part::Graph: {
      const HostFunc::Arg &a = f.args[part.index];
      params.push_back(
          abi.graphTypeOf(a.graphKind) +
          (usedGraphs.count(part.index) ? a.name : "/*" + a.name + "*/"));
      break;
    }
    case HostFunc::Part::Size:
      params.push_back("int64_t " + f.symbolName(part.index));
      break;
    case HostFunc::Part::Input:
      params.push_back(unusedIf(!isUsed(func.getArgument(part.index))) +
                       "const float *" + f.args[part.index].name);
      break;
    case HostFunc::Part::Params:
      params.push_back(unusedIf(!usesParams) + "const " + f.params->name +
                       " &params");
      break;
    case HostFunc::Part::Output:
      params.push_back("float *" + f.results[part.index].name);
      break;
    case HostFunc::Part::Saved:
      params.push_back(unusedIf(!usesSaved) + "const " + f.saved->name +
                       " &saved");
      break;
    case HostFunc::Part::Grads:
      params.push_back(unusedIf(f.params->fields.empty()) + "const " +
                       f.params->name + " &grads");
      break;
    }
  }
  params.push_back(std::string(usesWorkspace ? "" : "[[maybe_unused]] ") +
                   "void *workspace");
  params.push_back(std::string(usesTraining ? "" : "[[maybe_unused]] ") +
                   "bool training");
  params.push_back(std::string(usesSeed ? "" : "[[maybe_unused]] ") +
                   "uint64_t seed");
  if (!abi.extraParamName.empty())
    params.push_back(std::string(usesExtraParam ? "" : "[[maybe_unused]] ") +
                     abi.extraParamType + " " + abi.extraParamName);
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
      wsParams.push_back(
          abi.graphTypeOf(a.graphKind) +
          (graphsForSizes.count(i) ? a.name : "/*" + a.name + "*/"));
  for (int s : shapes.explicitSymbols())
    wsParams.push_back("int64_t " + f.symbolName(s));
  for (auto [i, p] : llvm::enumerate(wsParams))
    wsSig += (i ? ", " : "") + p;
  w.line(wsSig + ") {");
  w.indent();
  std::string args;
  for (int s : shapes.liveSymbols()) {
    const SizeSymbol &symbol = shapes.symbol(s);
    args +=
        (args.empty() ? "" : ", ") +
        (symbol.kind == SizeSymbol::Kind::Explicit
             ? f.symbolName(s)
             : symbolSource(
                   symbol, f, [&](unsigned i) { return f.args[i].name; }, abi));
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

static TargetOptions withDefaultNamespace(TargetOptions options) {
  if (!options.cppNamespace.empty())
    return options;
  // The file stem, made a valid namespace: `int.gnn` and `std.gnn` print
  // into `gnn_int` and `gnn_std`.
  std::string name = cIdentifier(options.stem);
  if (!checkCppNamespace(name).empty()) {
    while (name.find("__") != std::string::npos)
      name.replace(name.find("__"), 2, "_");
    name = (name.front() == '_' ? "gnn" : "gnn_") + name;
  }
  options.cppNamespace = name;
  return options;
}

HostModulePrinter::HostModulePrinter(HostABI abi, ModuleOp module,
                                     const TargetOptions &options)
    : abi(std::move(abi)), module(module),
      options(withDefaultNamespace(options)), sources(options.sourceMgr) {}

HostModulePrinter::~HostModulePrinter() = default;

LogicalResult HostModulePrinter::collect() {
  Namer moduleNames;
  moduleNames.reserve("gnnc_module");
  std::vector<func::FuncOp> hostFuncs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      return func.emitError(abi.printer() + " needs function bodies");
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
      return func.emitError(abi.printer() + " cannot print recursive calls");
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
  // shortest function that has it; functions without parameters share an
  // empty one, so that every entry point takes a struct.
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
        return func.emitError(abi.printer() + " supports f32 parameters only");
      if (llvm::any_of(type.getShape(), ShapedType::isDynamic))
        return func.emitError("parameter '")
               << path.getValue() << "' has a run-time size";
      p->paths.push_back(path.getValue().str());
      p->fields.push_back(fields.unique(cIdentifier(path.getValue())));
      p->inits.push_back(init ? init.getValue().str() : "");
      p->shapes.emplace_back(type.getShape().begin(), type.getShape().end());
      p->buffers.push_back(
          static_cast<bool>(func.getArgAttr(i, gnn::kBufferAttrName)));
    }
    structOf[it->second] = p.get();
    structs.push_back(std::move(p));
  }
  for (auto &f : hosts)
    if (auto it = keyOf.find(f.get()); it != keyOf.end())
      f->params = structOf[it->second];
  // Saved-state structs: one per F.train, named after F, with a field per
  // result that F.train saves; F.backward reads the same struct.
  std::map<std::string, SavedStruct *> savedOf; // by F's IR name
  for (auto &f : hosts) {
    auto of = f->func->getAttrOfType<FlatSymbolRefAttr>(gnn::kTrainOfAttrName);
    if (!of)
      continue;
    auto forward = byName.find(of.getValue().str());
    std::string stem = forward != byName.end() ? forward->second->symbol
                                               : cIdentifier(of.getValue());
    auto saved = std::make_unique<SavedStruct>();
    saved->name = moduleNames.unique(stem + "_Saved");
    saved->bytesSymbol = moduleNames.unique(stem + "_saved_bytes");
    saved->layoutSymbol = moduleNames.unique(stem + "_saved_layout");
    saved->train = f.get();
    Namer fields;
    for (StringRef member : {"get", "set", "kNumSaved", "kNames"})
      fields.reserve(member);
    for (unsigned r = 0; r < f->func.getNumResults(); ++r)
      if (auto name =
              f->func.getResultAttrOfType<StringAttr>(r, gnn::kSavedAttrName)) {
        saved->names.push_back(name.getValue().str());
        saved->fields.push_back(fields.unique(name.getValue()));
        saved->results.push_back(r);
      }
    f->saved = saved.get();
    savedOf[of.getValue().str()] = saved.get();
    savedStructs.push_back(std::move(saved));
  }
  for (auto &f : hosts) {
    auto of =
        f->func->getAttrOfType<FlatSymbolRefAttr>(gnn::kBackwardOfAttrName);
    if (!of || !savedOf.count(of.getValue().str()))
      continue;
    f->saved = savedOf[of.getValue().str()];
  }
  for (auto &f : hosts)
    if (failed(planFunction(*f)))
      return failure();
  return success();
}

LogicalResult HostModulePrinter::planFunction(HostFunc &f) {
  func::FuncOp func = f.func;
  Namer names;
  if (f.saved)
    names.reserve("saved");
  auto savedField = [&](StringAttr name) -> std::string {
    const std::vector<std::string> &list = f.saved->names;
    auto it = std::find(list.begin(), list.end(), name.getValue().str());
    return it == list.end() ? "" : f.saved->fields[it - list.begin()];
  };
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
        return func.emitError(abi.printer() + " supports f32 tensors only");
      a.kind = HostFunc::Arg::Input;
      auto saved = func.getArgAttrOfType<StringAttr>(i, gnn::kSavedAttrName);
      if (saved && f.saved) {
        a.kind = HostFunc::Arg::Saved;
        a.field = savedField(saved);
        if (a.field.empty())
          return func.emitError("saved value '")
                 << saved.getValue() << "' is not saved by @"
                 << func::FuncOp(f.saved->train->func).getName();
      } else {
        std::string base = name    ? name.getValue().str()
                           : saved ? "saved_" + saved.getValue().str()
                                   : "arg" + std::to_string(i);
        a.name = names.unique(cIdentifier(base));
        // Which may differ from the C name: `s` becomes `s_1` where the
        // printer names something else `s` first.
        a.source = name ? name.getValue().str() : a.name;
      }
    }
    f.args.push_back(a);
  }
  // F.backward reads the saved-state struct before its cotangent (its last
  // argument); F.train writes it after its outputs.
  if (f.saved && f.saved->train != &f && !f.args.empty())
    f.savedBefore = static_cast<int>(f.args.size()) - 1;
  // Size symbols (the live ones are all a printer uses).
  int maxSymbol = -1;
  for (int s : f.shapes->liveSymbols())
    maxSymbol = std::max(maxSymbol, s);
  f.symbolNames.assign(maxSymbol + 1, "");
  for (int s : f.shapes->liveSymbols())
    f.symbolNames[s] = names.unique(f.shapes->symbol(s).name);
  // Sizes a define fixes (the front end checked they name graph sizes and
  // are positive integers): those read from a graph argument.
  for (const std::string &d : options.defines) {
    auto [name, text] = StringRef(d).split('=');
    StringRef digits = text.trim();
    digits.consume_front("+");
    int64_t value = 0;
    if (digits.getAsInteger(10, value))
      continue;
    for (int s : f.shapes->liveSymbols()) {
      const SizeSymbol &symbol = f.shapes->symbol(s);
      using K = SizeSymbol::Kind;
      if (symbol.name == name.trim() &&
          llvm::is_contained(
              {K::NumDst, K::NumSrc, K::NumEdges, K::NumGraphs, K::NumVertices},
              symbol.kind) &&
          value > 0)
        f.staticSizes[s] = value;
    }
  }
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
      return func.emitError(abi.printer() + " supports f32 results only");
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
      if (f.saved)
        res.savedField = savedField(saved);
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
  // A backward takes a gradient struct even when it has no parameters.
  if (pack && (!gradOfParam.empty() || f.kind == "backward")) {
    f.packGrads = true;
    for (auto [k, path] : llvm::enumerate(f.params->paths))
      f.results[gradOfParam[path]].field = f.params->fields[k];
  }
  if (abi.optionalInputGrads && f.kind == "backward")
    for (HostFunc::Result &res : f.results) {
      if (res.role != "grad" || !res.field.empty())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
        if (f.args[i].kind == HostFunc::Arg::Input && name &&
            name.getValue() == res.of)
          res.optional = true;
      }
    }
  return success();
}

/// `get(i)` and `set(i, data)` of a struct of float pointers `fields`
/// (`what` names one in the comment: "Parameter").
static void printPointerAccessors(CodeWriter &w, llvm::StringRef what,
                                  llvm::ArrayRef<std::string> fields) {
  w.line("/// " + what.str() + " `i`, in the order above.");
  w.line("float *get(int i) const {");
  w.indent();
  w.line("switch (i) {");
  for (auto [i, field] : llvm::enumerate(fields))
    w.line("case " + std::to_string(i) + ": return " + field + ";");
  w.line("default: return nullptr;");
  w.line("}");
  w.dedent();
  w.line("}");
  w.line("void set(int i, float *data) {");
  w.indent();
  w.line("switch (i) {");
  for (auto [i, field] : llvm::enumerate(fields))
    w.line("case " + std::to_string(i) + ": " + field + " = data; break;");
  w.line("default: break;");
  w.line("}");
  w.dedent();
  w.line("}");
}

void HostModulePrinter::printParamStruct(CodeWriter &w, const ParamStruct &p) {
  std::string owner = p.name.substr(0, p.name.size() - 7);
  if (p.fields.empty()) {
    // Zero-length arrays are not C++: the tables are null pointers of the
    // types the arrays of a struct with parameters decay to.
    w.line("/// " + owner +
           " has no parameters: an empty struct, so that every entry point "
           "takes one.");
    w.line("struct " + p.name + " {");
    w.indent();
    w.line("static constexpr int kNumParams = 0;");
    w.line("/// No paths, initialisers, ranks, shapes or element counts.");
    w.line("static constexpr const char *const *kPaths = nullptr;");
    w.line("static constexpr const char *const *kInits = nullptr;");
    w.line("static constexpr const int *kRanks = nullptr;");
    w.line("static constexpr const int64_t (*kShapes)[gnnc::rt::kMaxRank] = "
           "nullptr;");
    w.line("static constexpr const int64_t *kNumElements = nullptr;");
    w.line("static constexpr const bool *kIsBuffer = nullptr;");
    w.blank();
    w.line("float *get(int /*i*/) const { return nullptr; }");
    w.line("void set(int /*i*/, float * /*data*/) {}");
    w.dedent();
    w.line("};");
    w.blank();
    return;
  }
  w.line("/// The parameters of " + owner +
         ", one pointer to the float32 row-major data of each, in the "
         "order of the function's arguments.");
  w.line("struct " + p.name + " {");
  w.indent();
  for (size_t i = 0; i < p.fields.size(); ++i) {
    std::string dims;
    for (auto [k, d] : llvm::enumerate(p.shapes[i]))
      dims += (k ? ", " : "") + std::to_string(d);
    w.line("float *" + p.fields[i] + "; ///< " + p.paths[i] + ": f32[" + dims +
           "], init " + (p.inits[i].empty() ? "none" : p.inits[i]) +
           (p.buffers[i] ? "; a buffer, updated by a training forward" : ""));
  }
  w.blank();
  size_t n = p.fields.size();
  w.line("static constexpr int kNumParams = " + std::to_string(n) + ";");
  std::string paths, inits, ranks, shapesText, sizes, buffers;
  for (size_t i = 0; i < n; ++i) {
    paths += (i ? ", " : "") + cString(p.paths[i]);
    buffers += std::string(i ? ", " : "") + (p.buffers[i] ? "true" : "false");
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
  w.line("/// Buffers are state that is not trained: a trainer initialises "
         "them, and its optimiser skips them.");
  w.line("static constexpr bool kIsBuffer[kNumParams] = {" + buffers + "};");
  w.blank();
  printPointerAccessors(w, "Parameter", p.fields);
  w.dedent();
  w.line("};");
  w.blank();
}

void HostModulePrinter::printSavedStruct(CodeWriter &w, const SavedStruct &s) {
  const HostFunc &t = *s.train;
  auto symName = [&](int x) { return t.symbolName(x); };
  std::string owner = s.name.substr(0, s.name.size() - 6);
  std::string backward = owner + "_backward";
  if (s.fields.empty())
    w.line("/// " + t.symbol + " saves nothing for " + backward +
           ": an empty struct, so that every saving forward and backward "
           "takes one.");
  else
    w.line("/// What " + t.symbol + " saves for " + backward +
           ": one pointer to the float32 row-major data of each tensor, in "
           "the order of " +
           t.symbol + "'s results. " + s.layoutSymbol +
           " places them all in one buffer.");
  w.line("struct " + s.name + " {");
  w.indent();
  size_t n = s.fields.size();
  for (size_t i = 0; i < n; ++i) {
    std::string dims;
    for (auto [k, d] : llvm::enumerate(t.shapes->resultShape(s.results[i])))
      dims += (k ? ", " : "") + dimText(d, symName);
    w.line("float *" + s.fields[i] + "; ///< " + s.names[i] + ": f32[" + dims +
           "]");
  }
  if (n)
    w.blank();
  w.line("static constexpr int kNumSaved = " + std::to_string(n) + ";");
  if (n) {
    std::string names;
    for (size_t i = 0; i < n; ++i)
      names += (i ? ", " : "") + cString(s.names[i]);
    w.line("/// The names of the saved values, in the order above.");
    w.line("static constexpr const char *kNames[kNumSaved] = {" + names + "};");
    w.blank();
    printPointerAccessors(w, "Tensor", s.fields);
  } else {
    w.line("/// Nothing is saved: no names.");
    w.line("static constexpr const char *const *kNames = nullptr;");
    w.blank();
    w.line("float *get(int /*i*/) const { return nullptr; }");
    w.line("void set(int /*i*/, float * /*data*/) {}");
  }
  w.dedent();
  w.line("};");
  std::string params = llvm::join(savedSizeParams(s, nullptr), ", ");
  w.line("/// The bytes of one buffer for every tensor of " + s.name +
         " (a multiple of 64).");
  w.line("std::size_t " + s.bytesSymbol + "(" + params + ");");
  w.line("/// The " + s.name + " whose tensors lie in `buffer` (" +
         s.bytesSymbol + "(...) bytes of " + abi.bufferMemory +
         ", 64-byte aligned) at 64-byte aligned offsets.");
  w.line(s.name + " " + s.layoutSymbol + "(void *buffer" +
         (params.empty() ? "" : ", " + params) + ");");
  w.blank();
}

std::vector<std::string>
HostModulePrinter::savedSizeParams(const SavedStruct &s,
                                   const std::set<unsigned> *used) {
  const HostFunc &t = *s.train;
  std::vector<std::string> params;
  for (auto [i, a] : llvm::enumerate(t.args))
    if (a.kind == HostFunc::Arg::Graph)
      params.push_back(
          abi.graphTypeOf(a.graphKind) +
          (!used || used->count(i) ? a.name : "/*" + a.name + "*/"));
  for (int x : t.shapes->explicitSymbols()) {
    const std::string &name = t.symbolName(x);
    bool isUsed = !used || used->count(t.args.size() + x);
    params.push_back("int64_t " + (isUsed ? name : "/*" + name + "*/"));
  }
  return params;
}

void HostModulePrinter::printSavedLayout(CodeWriter &w, const SavedStruct &s) {
  const HostFunc &t = *s.train;
  // The byte count of each tensor, and the sizes they read.
  std::set<int> symbols;
  auto name = [&](int x) {
    symbols.insert(x);
    return t.symbolName(x);
  };
  std::vector<std::string> bytes;
  for (unsigned r : s.results)
    bytes.push_back("rt::alignUp(4 * (" +
                    productExpr(t.shapes->resultShape(r), name) + "))");
  // What is used: graphs by argument, explicit sizes after them.
  std::set<unsigned> used;
  std::vector<std::string> defs;
  for (int x : t.shapes->liveSymbols()) {
    if (!symbols.count(x))
      continue;
    const SizeSymbol &symbol = t.shapes->symbol(x);
    if (symbol.kind == SizeSymbol::Kind::Explicit) {
      used.insert(t.args.size() + x);
      continue;
    }
    used.insert(symbol.graphArg);
    defs.push_back(
        "const int64_t " + t.symbolName(x) + " = " +
        symbolSource(
            symbol, t, [&](unsigned i) { return t.args[i].name; }, abi) +
        ";");
  }
  std::string params = llvm::join(savedSizeParams(s, &used), ", ");
  w.setSource(SourceLine());
  w.line("std::size_t " + s.bytesSymbol + "(" + params + ") {");
  w.indent();
  for (const std::string &d : defs)
    w.line(d);
  if (bytes.empty()) {
    w.line("return 0;");
  } else {
    w.line("std::size_t bytes = 0;");
    for (auto [i, b] : llvm::enumerate(bytes))
      w.line("bytes += " + b + "; // " + s.fields[i]);
    w.line("return bytes;");
  }
  w.dedent();
  w.line("}");
  w.blank();
  w.line(s.name + " " + s.layoutSymbol + "(void *" +
         (bytes.empty() ? " /*buffer*/" : "buffer") +
         (params.empty() ? "" : ", " + params) + ") {");
  w.indent();
  for (const std::string &d : defs)
    w.line(d);
  w.line(s.name + " saved{};");
  if (!bytes.empty()) {
    w.line("std::size_t offset = 0;");
    for (auto [i, b] : llvm::enumerate(bytes)) {
      w.line("saved." + s.fields[i] + " = rt::wsFloats(buffer, offset);");
      w.line("offset += " + b + ";");
    }
  }
  w.line("return saved;");
  w.dedent();
  w.line("}");
  w.blank();
}

/// The tokens of the logical .gnn line that starts at line `line` of
/// `file` (continued while brackets are open or after a `\`), without
/// comments.
static std::vector<std::string>
logicalLineTokens(SourceFiles &sources, StringRef file, unsigned line) {
  static const char *const operators[] = {
      "->", "**", "//", "==", "!=", "<=", ">=", "<<", ">>"};
  std::vector<std::string> tokens;
  int depth = 0;
  unsigned numLines = sources.numLines(file);
  for (unsigned l = line; l <= numLines; ++l) {
    StringRef text = sources.line(file, l);
    bool continued = false;
    for (size_t i = 0; i < text.size();) {
      char c = text[i];
      auto isWord = [&](size_t k) {
        return k < text.size() &&
               (std::isalnum(static_cast<unsigned char>(text[k])) ||
                text[k] == '_');
      };
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '#') {
        break;
      } else if (c == '\\' && text.substr(i + 1).trim().empty()) {
        continued = true;
        break;
      } else if (c == '"' || c == '\'') {
        size_t end = i + 1;
        while (end < text.size() && text[end] != c)
          end += text[end] == '\\' ? 2 : 1;
        end = std::min(end + 1, text.size());
        tokens.push_back(text.slice(i, end).str());
        i = end;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && i + 1 < text.size() &&
                  std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
        // A number, with its fraction and exponent: 1.5e-3.
        size_t end = i;
        while (isWord(end) || (end < text.size() && text[end] == '.') ||
               (end > i && (text[end - 1] == 'e' || text[end - 1] == 'E') &&
                (text[end] == '+' || text[end] == '-')))
          ++end;
        tokens.push_back(text.slice(i, end).str());
        i = end;
      } else if (isWord(i)) {
        size_t end = i;
        while (isWord(end))
          ++end;
        tokens.push_back(text.slice(i, end).str());
        i = end;
      } else {
        std::string op(1, c);
        for (const char *o : operators)
          if (text.substr(i).starts_with(o))
            op = o;
        if (op == "(" || op == "[" || op == "{")
          ++depth;
        if (op == ")" || op == "]" || op == "}")
          depth = std::max(0, depth - 1);
        tokens.push_back(op);
        i += op.size();
      }
    }
    if (depth == 0 && !continued)
      break;
  }
  return tokens;
}

/// The definition at `home` (`layer GCNConv(in_dim: int, out_dim: int):`),
/// its whole logical line, with one spacing of its own: the same text
/// whatever the comments, line breaks inside brackets and spaces of the
/// .gnn file.
/// A layer written in C++ (gnnc-cxx): its signature, from the line of
/// `home` to the body's `{`, with every run of spaces and line breaks one
/// space.
static std::string cxxSignatureText(SourceFiles &sources,
                                    const SourceLoc &home) {
  std::string out;
  unsigned n = sources.numLines(home.file);
  for (unsigned l = home.line; l <= n && l < home.line + 64; ++l) {
    llvm::StringRef text = sources.line(home.file, l);
    size_t brace = text.find('{');
    llvm::StringRef part = text.substr(0, brace);
    for (char c : part) {
      bool space = std::isspace(static_cast<unsigned char>(c));
      if (space && (out.empty() || out.back() == ' '))
        continue;
      out += space ? ' ' : c;
    }
    if (brace != llvm::StringRef::npos)
      break;
    if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return llvm::StringRef(out).rtrim().str();
}

static std::string definitionText(SourceFiles &sources, const SourceLoc &home) {
  if (!home)
    return "";
  llvm::StringRef ext = llvm::sys::path::extension(home.file);
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".C" ||
      ext == ".h" || ext == ".hpp")
    return cxxSignatureText(sources, home);
  std::vector<std::string> tokens =
      logicalLineTokens(sources, home.file, home.line);
  auto isOperand = [](const std::string &t) {
    return std::isalnum(static_cast<unsigned char>(t[0])) || t[0] == '_' ||
           t[0] == '"' || t[0] == '\'' || (t[0] == '.' && t.size() > 1) ||
           t == ")" || t == "]" || t == "}";
  };
  static const llvm::StringSet<> prefixKeywords = {
      "return", "and", "or", "not", "in", "if", "else"};
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string &t = tokens[i];
    bool space = i > 0;
    if (i > 0) {
      const std::string &p = tokens[i - 1];
      // A sign: `-` or `+` after an operator, a bracket or the start.
      bool prevIsSign = (p == "-" || p == "+" || p == "~") &&
                        (i == 1 || !isOperand(tokens[i - 2]) ||
                         prefixKeywords.contains(tokens[i - 2]));
      if (p == "(" || p == "[" || p == "{" || p == "." || prevIsSign)
        space = false;
      if (t == ")" || t == "]" || t == "}" || t == "," || t == ":" || t == ".")
        space = false;
      if ((t == "(" || t == "[") && isOperand(p) && !prefixKeywords.contains(p))
        space = false;
    }
    out += (space ? " " : "") + t;
  }
  return out;
}

void HostModulePrinter::printDeclaration(CodeWriter &w, const HostFunc &f) {
  func::FuncOp func = f.func;
  auto symName = [&](int s) { return f.symbolName(s); };
  SourceLoc home = primaryLoc(func.getLoc());
  w.setSource(SourceLine());
  // The definition without its place: the header does not change when
  // only comments, blank lines or spaces of the .gnn file do.
  std::string what = f.kind.empty() ? "function" : f.kind;
  std::string text = definitionText(sources, home);
  w.line("/// @" + func.getName().str() + " (" + what +
         (home ? ", " + baseName(home.file).str() : "") +
         (text.empty() ? "" : ": " + text) + ")");
  for (auto [i, a] : llvm::enumerate(f.args)) {
    if (a.kind == HostFunc::Arg::Graph) {
      // A block that names its sizes: which of them it is.
      std::string sizes;
      if (auto named =
              func.getArgAttrOfType<ArrayAttr>(i, gnn::kSizesAttrName)) {
        const char *roles[] = {" sources", " destinations", " edges"};
        for (auto [k, n] : llvm::enumerate(named))
          if (auto s = dyn_cast<StringAttr>(n); s && k < 3)
            sizes += (k ? ", " : " (") + s.getValue().str() + roles[k];
        if (!sizes.empty())
          sizes += ")";
      }
      w.line("///   " + a.name + ": " + graphKindName(a.graphKind) + sizes);
      continue;
    }
    Shape s = f.shapes->argShape(i);
    std::string dims;
    for (auto [k, d] : llvm::enumerate(s))
      dims += (k ? ", " : "") + dimText(d, symName);
    std::string name = a.kind == HostFunc::Arg::Param   ? "params." + a.field
                       : a.kind == HostFunc::Arg::Saved ? "saved." + a.field
                                                        : a.name;
    std::string role = a.kind == HostFunc::Arg::Param   ? "parameter"
                       : a.kind == HostFunc::Arg::Saved ? "saved"
                                                        : "input";
    w.line("///   " + name + ": f32[" + dims + "] (" + role + ")");
  }
  for (auto [r, res] : llvm::enumerate(f.results)) {
    Shape s = f.shapes->resultShape(r);
    std::string dims;
    for (auto [k, d] : llvm::enumerate(s))
      dims += (k ? ", " : "") + dimText(d, symName);
    bool inStruct = !res.savedField.empty();
    w.line("///   " + resultExpr(res) + ": f32[" + dims + "] (" + res.role +
           (res.of.empty() || inStruct ? "" : " of " + res.of) +
           (res.optional ? "; may be null: not computed" : "") + ")");
  }
  std::string sizes;
  for (int s : f.shapes->explicitSymbols())
    sizes += (sizes.empty() ? "" : ", ") + f.symbolName(s);
  if (!sizes.empty())
    w.line("/// Explicit sizes: " + sizes + ".");
  w.line(memoryNote(f));
  std::string sig = "gnnc::rt::Status " + f.symbol + "(";
  std::vector<std::string> params;
  for (const HostFunc::Part &part : f.entryParts()) {
    switch (part.kind) {
    case HostFunc::Part::Graph:
      params.push_back(abi.graphTypeOf(f.args[part.index].graphKind) +
                       f.args[part.index].name);
      break;
    case HostFunc::Part::Size:
      params.push_back("int64_t " + f.symbolName(part.index));
      break;
    case HostFunc::Part::Input:
      params.push_back("const float *" + f.args[part.index].name);
      break;
    case HostFunc::Part::Params:
      params.push_back("const " + f.params->name + " &params");
      break;
    case HostFunc::Part::Output:
      params.push_back("float *" + f.results[part.index].name);
      break;
    case HostFunc::Part::Saved:
      params.push_back("const " + f.saved->name + " &saved");
      break;
    case HostFunc::Part::Grads:
      params.push_back("const " + f.params->name + " &grads");
      break;
    }
  }
  params.push_back("void *workspace");
  params.push_back("bool training");
  params.push_back("uint64_t seed");
  if (!abi.extraParamName.empty())
    params.push_back(abi.extraParamType + " " + abi.extraParamName);
  for (auto [i, p] : llvm::enumerate(params))
    sig += (i ? ", " : "") + p;
  w.line(sig + ");");
  std::string wsSig = "std::size_t " + f.symbol + "_workspace_bytes(";
  std::vector<std::string> wsParams;
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Graph)
      wsParams.push_back(abi.graphTypeOf(a.graphKind) + a.name);
  for (int s : f.shapes->explicitSymbols())
    wsParams.push_back("int64_t " + f.symbolName(s));
  for (auto [i, p] : llvm::enumerate(wsParams))
    wsSig += (i ? ", " : "") + p;
  w.line(wsSig + ");");
  w.setSource(SourceLine());
  w.blank();
}

std::string HostModulePrinter::tensorInfo(const std::string &name,
                                          const std::string &role,
                                          const std::string &init,
                                          const Shape &shape,
                                          const HostFunc &f) {
  std::string dims;
  for (auto [k, d] : llvm::enumerate(shape))
    dims += (k ? ", " : "") +
            cString(dimText(d, [&](int s) { return f.symbolName(s); }));
  return "{" + cString(name) + ", " + cString(role) + ", " + cString(init) +
         ", " + std::to_string(shape.size()) + ", {" + dims + "}}";
}

void HostModulePrinter::printReflection(CodeWriter &w) {
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
      std::string type = abi.graphTypeOf(f.args[argIndex].graphKind);
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
    // The saved-state struct from the saved tensors among the inputs
    // (F.backward) or results (F.train).
    w.line("rt::Status " + sym + "_call(const " + abi.runtime +
           "::CallArgs &a) {");
    w.indent();
    unsigned tensor = 0;
    std::vector<std::string> inputPtrs(f.args.size()), paramPtrs,
        grads(f.params->fields.size()),
        saved(f.saved ? f.saved->fields.size() : 0);
    auto savedIndex = [&](const std::string &field) {
      const std::vector<std::string> &fields = f.saved->fields;
      return std::find(fields.begin(), fields.end(), field) - fields.begin();
    };
    for (auto [i, a] : llvm::enumerate(f.args)) {
      if (a.kind == HostFunc::Arg::Graph)
        continue;
      std::string p = "a.inputs[" + std::to_string(tensor++) + "]";
      if (a.kind == HostFunc::Arg::Input)
        inputPtrs[i] = p;
      else if (a.kind == HostFunc::Arg::Saved)
        saved[savedIndex(a.field)] = "const_cast<float *>(" + p + ")";
      else
        paramPtrs.push_back("const_cast<float *>(" + p + ")");
    }
    for (auto [r, res] : llvm::enumerate(f.results)) {
      std::string p = "a.outputs[" + std::to_string(r) + "]";
      if (!res.savedField.empty())
        saved[savedIndex(res.savedField)] = p;
      for (auto [k, field] : llvm::enumerate(f.params->fields))
        if (!res.field.empty() && field == res.field)
          grads[k] = p;
    }
    std::vector<std::string> args;
    unsigned graphIndex = 0, sizeIndex = 0;
    for (const HostFunc::Part &part : f.entryParts()) {
      switch (part.kind) {
      case HostFunc::Part::Graph:
        args.push_back(graphArgs[graphIndex++]);
        break;
      case HostFunc::Part::Size:
        args.push_back(sizeArgs[sizeIndex++]);
        break;
      case HostFunc::Part::Input:
        args.push_back(inputPtrs[part.index]);
        break;
      case HostFunc::Part::Params:
        args.push_back(f.params->name + "{" + llvm::join(paramPtrs, ", ") +
                       "}");
        break;
      case HostFunc::Part::Output:
        args.push_back("a.outputs[" + std::to_string(part.index) + "]");
        break;
      case HostFunc::Part::Saved:
        args.push_back(f.saved->name + "{" + llvm::join(saved, ", ") + "}");
        break;
      case HostFunc::Part::Grads:
        args.push_back(f.params->name + "{" + llvm::join(grads, ", ") + "}");
        break;
      }
    }
    args.push_back("a.workspace");
    args.push_back("a.training");
    args.push_back("a.seed");
    if (!abi.extraParamName.empty())
      args.push_back("a." + abi.extraParamName);
    w.line("return " + sym + "(" + llvm::join(args, ", ") + ");");
    w.dedent();
    w.line("}");
    // workspace
    std::vector<std::string> wsArgs = graphArgs;
    wsArgs.insert(wsArgs.end(), sizeArgs.begin(), sizeArgs.end());
    bool usesA = !wsArgs.empty();
    w.line("std::size_t " + sym + "_call_workspace(const " + abi.runtime +
           "::CallArgs &" + (usesA ? "a" : "/*a*/") + ") {");
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
        source = symbolSource(symbol, f, graphArgExpr, abi);
      }
      symbolLines.push_back("const int64_t " + f.symbolName(s) + " = " +
                            source + ";");
    }
    w.line("void " + sym + "_call_shapes(const " + abi.runtime +
           "::CallArgs &" + (readsA ? "a" : "/*a*/") + ", int64_t *" +
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
      std::string nameText = a.source.empty() ? a.name : a.source, init;
      std::string role = a.kind != HostFunc::Arg::Param               ? "input"
                         : f.func.getArgAttr(i, gnn::kBufferAttrName) ? "buffer"
                                                                      : "param";
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
  w.line("const " + abi.runtime + "::EntryInfo kEntries[] = {");
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
  w.line("const " + abi.runtime +
         "::ModuleInfo gnnc_module = {GNNC_ABI_VERSION, " +
         cString(options.source) + ", " + cString(options.entry) + ", " +
         std::to_string(defines.size()) + ", " + definesName + ", " +
         (options.training ? "true" : "false") + ", " +
         std::to_string(entries.size()) + ", kEntries};");
}

void HostModulePrinter::printHeader(CodeWriter &w) {
  std::string guard = abi.guardPrefix + cIdentifier(options.cppNamespace) +
                      "_" + cIdentifier(options.stem) + "_H";
  for (char &c : guard)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  w.line("// Generated by gnnc " GNNC_VERSION " from " +
         baseName(options.source).str() + "; do not edit.");
  printHeaderAbout(w);
  w.line("#ifndef " + guard);
  w.line("#define " + guard);
  w.blank();
  w.line("#include \"" + abi.runtimeHeader + "\"");
  w.blank();
  w.line("#include <cstddef>");
  w.line("#include <cstdint>");
  w.blank();
  w.line("/// The version of the ABI of generated code (docs/abi.md).");
  w.line("#define GNNC_ABI_VERSION 2");
  w.line("static_assert(GNNC_ABI_VERSION == gnnc::rt::kAbiVersion,");
  w.line(
      "              \"generated code and gnnc/runtime/Ops.h disagree on the "
      "ABI version\");");
  w.blank();
  w.line("namespace " + options.cppNamespace + " {");
  w.blank();
  for (auto &p : structs)
    printParamStruct(w, *p);
  // A saved-state struct comes before the first function that takes it.
  std::set<const SavedStruct *> printed;
  for (auto &f : hosts) {
    if (f->saved && printed.insert(f->saved).second)
      printSavedStruct(w, *f->saved);
    if (!f->func.isPrivate())
      printDeclaration(w, *f);
  }
  w.line("/// What this module was compiled from, and its entry points.");
  w.line("extern const gnnc::" + abi.runtime + "::ModuleInfo gnnc_module;");
  w.blank();
  w.line("} // namespace " + options.cppNamespace);
  w.blank();
  w.line("#endif // " + guard);
}

LogicalResult HostModulePrinter::print(std::vector<GeneratedFile> &files) {
  if (failed(collect()))
    return failure();
  // Kernel IR without a host plan (written by hand, or from a pipeline
  // without gnnk-plan-host-fusion and gnnk-plan-workspace) gets it here.
  if (failed(ensureHostPlan(module, hostTraitsOf(abi))))
    return failure();
  for (auto &f : hosts) {
    std::unique_ptr<HostFunctionPrinter> printer = createHostPrinter(*f);
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
  printSourceIncludes(source);
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
    if (failed(printKernel(k, source)))
      return failure();
    source.setSource(SourceLine());
    source.blank();
  }
  source.line("} // namespace");
  source.blank();
  for (auto [f, printer] : llvm::zip(hosts, printers)) {
    if (failed(printer->print(source)))
      return failure();
    source.setSource(SourceLine());
    // The saved-state layout after F.train.
    if (f->saved && f->saved->train == f.get())
      printSavedLayout(source, *f->saved);
  }
  printReflection(source);
  source.blank();
  source.line("} // namespace " + options.cppNamespace);

  files.push_back(header.render(options.stem + ".h", options.lineDirectives));
  files.push_back(source.render(options.stem + abi.sourceExtension,
                                options.lineDirectives));
  return success();
}
