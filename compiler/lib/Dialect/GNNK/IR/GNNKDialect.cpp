//===- GNNKDialect.cpp - The gnnk kernel dialect --------------------------===//
//
// Part of gnnc. Parsers, printers and verifiers of the gnnk dialect.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNNK/IR/GNNK.h"

#include "gnnc/Dialect/GNN/IR/GNN.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace gnnc::gnnk;

#include "gnnc/Dialect/GNNK/IR/GNNKDialect.cpp.inc"
#include "gnnc/Dialect/GNNK/IR/GNNKEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/GNNK/IR/GNNKAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/GNNK/IR/GNNKTypes.cpp.inc"

void GNNKDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnnc/Dialect/GNNK/IR/GNNKTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnnc/Dialect/GNNK/IR/GNNKAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "gnnc/Dialect/GNNK/IR/GNNKOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Type gnnc::gnnk::kernelTypeOf(Type hostType) {
  if (isa<GraphType, MemRefType>(hostType))
    return hostType;
  if (isa<gnn::GraphType>(hostType))
    return GraphType::get(hostType.getContext());
  if (auto tensor = dyn_cast<gnn::DomainTensorType>(hostType)) {
    SmallVector<int64_t> shape;
    if (tensor.isVertexOrEdge())
      shape.push_back(ShapedType::kDynamic);
    shape.append(tensor.getShape().begin(), tensor.getShape().end());
    return MemRefType::get(shape, tensor.getElementType());
  }
  return {};
}

int64_t gnnc::gnnk::getNumKernelOutputs(Operation *func) {
  if (!func)
    return -1;
  auto dict =
      func->getAttrOfType<DictionaryAttr>(GNNKDialect::getKernelAttrName());
  if (!dict)
    return -1;
  auto n = dict.getAs<IntegerAttr>(kNumOutputsName);
  return n ? n.getInt() : -1;
}

/// `gnnk.gpu` on a kernel: a dictionary of exactly the entries gnnk-map-gpu
/// records, each of its kind. Whether the values fit the kernel's body is
/// checked by the CUDA printer, which reads them.
static LogicalResult verifyGpuMapping(Operation *op, Attribute value) {
  if (!op->hasAttr(GNNKDialect::getKernelAttrName()))
    return op->emitError("'")
           << kGpuMappingAttrName << "' belongs on a gnnk.kernel function";
  auto dict = dyn_cast<DictionaryAttr>(value);
  auto expect = [&]() {
    return op->emitError("'")
           << kGpuMappingAttrName
           << "' must be a dictionary {mapping, schedule: strings; keys: "
              "array<i64>; lanes, vector, chunks, rows_per_block, "
              "shared_bytes: integers; scratch, nests: arrays of strings; "
              "optional split_above: integer}";
  };
  bool split = dict && dict.get("split_above");
  if (!dict || dict.size() != (split ? 11u : 10u) ||
      (split && !dict.getAs<IntegerAttr>("split_above")))
    return expect();
  for (StringRef name : {"mapping", "schedule"})
    if (!dict.getAs<StringAttr>(name))
      return expect();
  if (!dict.getAs<DenseI64ArrayAttr>("keys"))
    return expect();
  for (StringRef name :
       {"lanes", "vector", "chunks", "rows_per_block", "shared_bytes"})
    if (!dict.getAs<IntegerAttr>(name))
      return expect();
  for (StringRef name : {"scratch", "nests"}) {
    auto list = dict.getAs<ArrayAttr>(name);
    if (!list || !llvm::all_of(list, llvm::IsaPred<StringAttr>))
      return expect();
  }
  return success();
}

/// `gnnk.kernel = {num_outputs = N}` on a func.func whose arguments are the
/// graph, then memrefs (the last N are outputs), and which returns nothing.
LogicalResult GNNKDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == kGpuMappingAttrName)
    return verifyGpuMapping(op, attr.getValue());
  if (attr.getName() == kFoldAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
    auto reduction =
        dict ? dict.getAs<IntegerAttr>("reduction") : IntegerAttr();
    if (!isa<memref::AllocaOp>(op) || !kind || !reduction || dict.size() != 2 ||
        !foldKindNamed(kind.getValue()))
      return op->emitError("'")
             << kFoldAttrName
             << "' must be {kind = \"sum\" | \"max\" | \"min\" | "
                "\"first\" | \"online_max\" | \"online_sum\" | "
                "\"online_acc\", reduction = N} on a memref.alloca";
    return success();
  }
  if (attr.getName() != getKernelAttrName())
    return op->emitError("unknown gnnk attribute '")
           << attr.getName().getValue() << "'";
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return op->emitError("'") << getKernelAttrName()
                              << "' marks a func.func, not " << op->getName();
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  auto n = dict ? dict.getAs<IntegerAttr>(kNumOutputsName) : IntegerAttr();
  if (!n || dict.size() != 1)
    return op->emitError("'")
           << getKernelAttrName() << "' must be a dictionary {"
           << kNumOutputsName << " = N}";
  FunctionType type = func.getFunctionType();
  if (type.getNumResults() != 0)
    return op->emitError("a kernel returns nothing: its outputs are its last "
                         "memref arguments");
  if (type.getNumInputs() == 0 || !isa<GraphType>(type.getInput(0)))
    return op->emitError("the first argument of a kernel must be !gnnk.graph");
  for (unsigned i = 1; i < type.getNumInputs(); ++i)
    if (!isa<MemRefType>(type.getInput(i)))
      return op->emitError("kernel argument ")
             << i << " must be a memref, got " << type.getInput(i);
  int64_t buffers = type.getNumInputs() - 1;
  if (n.getInt() < 1 || n.getInt() > buffers)
    return op->emitError("a kernel with ")
           << buffers << " memref arguments needs between 1 and " << buffers
           << " outputs, got " << n.getInt();
  return success();
}

/// `dst` or `src`.
static ParseResult parseSide(OpAsmParser &parser, Side &side) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<Side> parsed = symbolizeSide(keyword);
  if (!parsed)
    return parser.emitError(loc, "expected 'dst' or 'src'");
  side = *parsed;
  return success();
}

static ParseResult parseSide(OpAsmParser &parser, SideAttr &side) {
  Side value;
  if (parseSide(parser, value))
    return failure();
  side = SideAttr::get(parser.getContext(), value);
  return success();
}

static void printSide(OpAsmPrinter &printer, Operation *, SideAttr side) {
  printer << stringifySide(side.getValue());
}

/// Body of a gnnk loop: index arguments, an implicit terminator.
static LogicalResult verifyLoopBody(Operation *op, Region &body,
                                    unsigned numArgs, StringRef what) {
  Block &block = body.front();
  if (block.getNumArguments() != numArgs ||
      !llvm::all_of(block.getArgumentTypes(),
                    [](Type t) { return t.isIndex(); }))
    return op->emitOpError("body must take ")
           << numArgs << " index argument" << (numArgs == 1 ? "" : "s") << " ("
           << what << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// ForVerticesOp
//===----------------------------------------------------------------------===//

void ForVerticesOp::build(OpBuilder &builder, OperationState &state,
                          Value graph, Side by) {
  state.addOperands(graph);
  state.addAttribute(getByAttrName(state.name),
                     SideAttr::get(builder.getContext(), by));
  Region *region = state.addRegion();
  auto *block = new Block();
  block->addArgument(builder.getIndexType(), state.location);
  region->push_back(block);
  ensureTerminator(*region, builder, state.location);
}

/// `gnnk.for_vertices %v in %g by dst attributes {...} { ... }`
ParseResult ForVerticesOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument vertex;
  OpAsmParser::UnresolvedOperand graph;
  Side by;
  if (parser.parseArgument(vertex) || parser.parseKeyword("in") ||
      parser.parseOperand(graph) || parser.parseKeyword("by") ||
      parseSide(parser, by) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Builder &builder = parser.getBuilder();
  vertex.type = builder.getIndexType();
  if (parser.resolveOperand(graph, GraphType::get(builder.getContext()),
                            result.operands))
    return failure();
  result.addAttribute(getByAttrName(result.name),
                      SideAttr::get(builder.getContext(), by));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {vertex}))
    return failure();
  ensureTerminator(*body, builder, result.location);
  return success();
}

void ForVerticesOp::print(OpAsmPrinter &p) {
  p << " " << getVertex() << " in " << getGraph() << " by "
    << stringifySide(getBy());
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getByAttrName().getValue()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult ForVerticesOp::verifyRegions() {
  if (failed(verifyLoopBody(*this, getBody(), 1, "the vertex")))
    return failure();
  // Parallel iterations: no edge loop of another grouping inside.
  WalkResult nested = getBody().walk([&](ForVerticesOp inner) {
    inner.emitOpError("cannot be nested in another gnnk.for_vertices");
    return WalkResult::interrupt();
  });
  return failure(nested.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// ForEdgesOp
//===----------------------------------------------------------------------===//

void ForEdgesOp::build(OpBuilder &builder, OperationState &state, Value graph,
                       Value vertex, Side by) {
  state.addOperands({graph, vertex});
  state.addAttribute(getByAttrName(state.name),
                     SideAttr::get(builder.getContext(), by));
  Region *region = state.addRegion();
  auto *block = new Block();
  block->addArgument(builder.getIndexType(), state.location);
  block->addArgument(builder.getIndexType(), state.location);
  region->push_back(block);
  ensureTerminator(*region, builder, state.location);
}

/// `gnnk.for_edges %e, %u in %g of %v by dst attributes {...} { ... }`
ParseResult ForEdgesOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument edge, neighbour;
  OpAsmParser::UnresolvedOperand graph, vertex;
  Side by;
  if (parser.parseArgument(edge) || parser.parseComma() ||
      parser.parseArgument(neighbour) || parser.parseKeyword("in") ||
      parser.parseOperand(graph) || parser.parseKeyword("of") ||
      parser.parseOperand(vertex) || parser.parseKeyword("by") ||
      parseSide(parser, by) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Builder &builder = parser.getBuilder();
  edge.type = builder.getIndexType();
  neighbour.type = builder.getIndexType();
  if (parser.resolveOperand(graph, GraphType::get(builder.getContext()),
                            result.operands) ||
      parser.resolveOperand(vertex, builder.getIndexType(), result.operands))
    return failure();
  result.addAttribute(getByAttrName(result.name),
                      SideAttr::get(builder.getContext(), by));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {edge, neighbour}))
    return failure();
  ensureTerminator(*body, builder, result.location);
  return success();
}

void ForEdgesOp::print(OpAsmPrinter &p) {
  p << " " << getEdge() << ", " << getNeighbour() << " in " << getGraph()
    << " of " << getVertex() << " by " << stringifySide(getBy());
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getByAttrName().getValue()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult ForEdgesOp::verifyRegions() {
  if (failed(verifyLoopBody(*this, getBody(), 2, "the edge, the neighbour")))
    return failure();
  auto parent = (*this)->getParentOfType<ForVerticesOp>();
  if (!parent)
    return emitOpError("must be inside gnnk.for_vertices");
  if (getVertex() != parent.getVertex())
    return emitOpError("must run over the edges of the vertex of the "
                       "enclosing gnnk.for_vertices");
  if (getGraph() != parent.getGraph() || getBy() != parent.getBy())
    return emitOpError("must use the graph and side of the enclosing "
                       "gnnk.for_vertices");
  WalkResult nested = getBody().walk([&](Operation *op) {
    if (isa<ForEdgesOp>(op)) {
      op->emitOpError("cannot be nested in another gnnk.for_edges");
      return WalkResult::interrupt();
    }
    if (hasEffect<MemoryEffects::Allocate>(op)) {
      op->emitOpError("cannot allocate inside gnnk.for_edges: scratch "
                      "buffers belong to the enclosing gnnk.for_vertices");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(nested.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// DropoutKeepOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutKeepOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError("probability must be in [0, 1), got ") << p;
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verify() {
  if (getArgs().empty() ||
      !isa<GraphType, gnn::GraphType>(getArgs().front().getType()))
    return emitOpError("the first operand must be the graph");
  if (auto graph = dyn_cast<gnn::GraphType>(getArgs().front().getType());
      graph && graph.getKind() == gnn::GraphKind::hetero)
    return emitOpError("needs one edge set: launch on a gnn.relation of a "
                       "heterogeneous graph");
  for (auto [i, arg] : llvm::enumerate(getArgs().drop_front()))
    if (!kernelTypeOf(arg.getType()) ||
        isa<GraphType>(kernelTypeOf(arg.getType())))
      return emitOpError("operand ")
             << i + 1 << " must be a gnn tensor or a memref, got "
             << arg.getType();
  if (getNumResults() == 0)
    return emitOpError("must have at least one result");
  for (auto [i, type] : llvm::enumerate(getResultTypes()))
    if (!kernelTypeOf(type) || isa<GraphType>(kernelTypeOf(type)))
      return emitOpError("result ")
             << i << " must be a gnn tensor or a memref, got " << type;
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("'@") << getKernel() << "' does not name a function";
  int64_t outputs = getNumKernelOutputs(kernel);
  if (outputs < 0)
    return emitOpError("'@") << getKernel() << "' is not a gnnk.kernel";
  FunctionType type = kernel.getFunctionType();
  unsigned numArgs = getArgs().size();
  if (type.getNumInputs() != numArgs + getNumResults() ||
      outputs != static_cast<int64_t>(getNumResults()))
    return emitOpError("'@")
           << getKernel() << "' takes " << type.getNumInputs() - outputs
           << " operands and has " << outputs << " outputs; the launch has "
           << numArgs << " operands and " << getNumResults() << " results";
  for (auto [i, arg] : llvm::enumerate(getArgs()))
    if (kernelTypeOf(arg.getType()) != type.getInput(i))
      return emitOpError("operand ")
             << i << " of type " << arg.getType()
             << " does not match kernel argument " << type.getInput(i);
  for (auto [i, result] : llvm::enumerate(getResultTypes()))
    if (kernelTypeOf(result) != type.getInput(numArgs + i))
      return emitOpError("result ")
             << i << " of type " << result << " does not match kernel output "
             << type.getInput(numArgs + i);
  return success();
}

#define GET_OP_CLASSES
#include "gnnc/Dialect/GNNK/IR/GNNKOps.cpp.inc"
