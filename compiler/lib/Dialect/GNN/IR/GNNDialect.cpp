//===- GNNDialect.cpp - The gnn dialect -----------------------------------===//
//
// Part of gnnc. Types, verifiers and folders of the gnn dialect.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace gnnc::gnn;

#include "gnnc/Dialect/GNN/IR/GNNDialect.cpp.inc"
#include "gnnc/Dialect/GNN/IR/GNNEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/GNN/IR/GNNAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/GNN/IR/GNNTypes.cpp.inc"

void GNNDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnnc/Dialect/GNN/IR/GNNTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnnc/Dialect/GNN/IR/GNNAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "gnnc/Dialect/GNN/IR/GNNOps.cpp.inc"
      >();
}

Operation *GNNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto floatAttr = dyn_cast<FloatAttr>(value);
  auto tensorType = dyn_cast<DomainTensorType>(type);
  if (!floatAttr || !tensorType)
    return nullptr;
  return builder.create<ConstantOp>(
      loc, tensorType, builder.getF64FloatAttr(floatAttr.getValueAsDouble()));
}

//===----------------------------------------------------------------------===//
// DomainTensorType
//===----------------------------------------------------------------------===//

/// `!gnn.tensor<domain, 8x?x16xf32>` or `!gnn.tensor<dst, f32>`.
Type DomainTensorType::parse(AsmParser &parser) {
  std::string keyword;
  SmallVector<int64_t> shape;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeywordOrString(&keyword) ||
      parser.parseComma() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  std::optional<Domain> domain = symbolizeDomain(keyword);
  if (!domain) {
    parser.emitError(loc, "unknown domain '")
        << keyword << "'; expected dense, src, dst or edge";
    return {};
  }
  return parser.getChecked<DomainTensorType>(parser.getContext(), *domain,
                                             shape, elementType);
}

void DomainTensorType::print(AsmPrinter &printer) const {
  printer << "<" << stringifyDomain(getDomain()) << ", ";
  for (int64_t dim : getShape()) {
    if (ShapedType::isDynamic(dim))
      printer << "?";
    else
      printer << dim;
    printer << "x";
  }
  printer << getElementType() << ">";
}

LogicalResult
DomainTensorType::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                         Domain domain, ArrayRef<int64_t> shape,
                         Type elementType) {
  if (!elementType.isIntOrFloat())
    return emitError() << "element type must be an integer or float, got "
                       << elementType;
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim)) {
      if (domain != Domain::dense)
        return emitError() << "the row shape of a " << stringifyDomain(domain)
                           << " tensor must be static";
      continue;
    }
    if (dim <= 0)
      return emitError() << "dimensions must be positive, got " << dim;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Verifier helpers
//===----------------------------------------------------------------------===//

static bool dimsCompatible(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

static bool shapesCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!dimsCompatible(x, y))
      return false;
  return true;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    out += i ? ", " : "";
    out += ShapedType::isDynamic(shape[i]) ? "?" : std::to_string(shape[i]);
  }
  return out + "]";
}

/// The operand and the result have the same element type.
static LogicalResult sameElement(Operation *op, DomainTensorType a,
                                 DomainTensorType b) {
  if (a.getElementType() != b.getElementType())
    return op->emitOpError("element types differ: ")
           << a.getElementType() << " vs " << b.getElementType();
  return success();
}

static LogicalResult expectDomain(Operation *op, DomainTensorType t,
                                  ArrayRef<Domain> allowed, StringRef what) {
  if (llvm::is_contained(allowed, t.getDomain()))
    return success();
  return op->emitOpError() << what << " must be in domain "
                           << llvm::join(
                                  llvm::map_range(allowed,
                                                  [](Domain d) {
                                                    return stringifyDomain(d);
                                                  }),
                                  " or ")
                           << ", got " << stringifyDomain(t.getDomain());
}

static LogicalResult expectFloat(Operation *op, DomainTensorType t) {
  if (isa<FloatType>(t.getElementType()))
    return success();
  return op->emitOpError("needs a floating-point tensor, got ")
         << t.getElementType();
}

/// Vertex and edge tensors live on one edge set: a relation of a hetero
/// graph, never the hetero graph itself.
static LogicalResult expectOneEdgeSet(Operation *op, Value graph) {
  if (cast<GraphType>(graph.getType()).getKind() == GraphKind::hetero)
    return op->emitOpError(
        "needs one relation of a hetero graph (gnn.relation), not the "
        "hetero graph");
  return success();
}

//===----------------------------------------------------------------------===//
// Graph facts
//===----------------------------------------------------------------------===//

static LogicalResult verifyDegree(Operation *op, DomainTensorType result) {
  if (result.getDomain() != Domain::dense || result.getRank() != 1 ||
      !isa<FloatType>(result.getElementType()))
    return op->emitOpError("result must be a dense rank-1 float tensor");
  return success();
}

LogicalResult InDegreeOp::verify() {
  if (getGraph().getType().getKind() == GraphKind::hetero)
    return emitOpError("needs one relation of a hetero graph");
  return verifyDegree(*this, tensorOf(getResult()));
}

LogicalResult OutDegreeOp::verify() {
  if (getGraph().getType().getKind() == GraphKind::hetero)
    return emitOpError("needs one relation of a hetero graph");
  return verifyDegree(*this, tensorOf(getResult()));
}

static LogicalResult verifyCount(Operation *op, DomainTensorType result) {
  if (result.getDomain() != Domain::dense || result.getRank() != 0)
    return op->emitOpError("result must be a dense scalar");
  return success();
}

LogicalResult NumVerticesOp::verify() {
  return verifyCount(*this, tensorOf(getResult()));
}

LogicalResult NumEdgesOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  return verifyCount(*this, tensorOf(getResult()));
}

LogicalResult GraphSizesOp::verify() {
  if (getGraph().getType().getKind() != GraphKind::batched)
    return emitOpError("needs a batched graph");
  return verifyDegree(*this, tensorOf(getResult()));
}

LogicalResult RelationOp::verify() {
  if (getGraph().getType().getKind() != GraphKind::hetero)
    return emitOpError("operand must be a hetero graph");
  if (getResult().getType().getKind() != GraphKind::graph)
    return emitOpError("result must be a homogeneous graph");
  return success();
}

//===----------------------------------------------------------------------===//
// Moving between domains
//===----------------------------------------------------------------------===//

LogicalResult AttachOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::dense}, "input")) ||
      failed(expectDomain(*this, out, {Domain::src, Domain::dst, Domain::edge},
                          "result")) ||
      failed(sameElement(*this, in, out)))
    return failure();
  if (in.getRank() < 1 ||
      !shapesCompatible(in.getShape().drop_front(), out.getShape()))
    return emitOpError("result rows ")
           << shapeString(out.getShape()) << " must be the input shape "
           << shapeString(in.getShape()) << " without its leading axis";
  return success();
}

LogicalResult CollectOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::src, Domain::dst, Domain::edge},
                          "input")) ||
      failed(expectDomain(*this, out, {Domain::dense}, "result")) ||
      failed(sameElement(*this, in, out)))
    return failure();
  if (out.getRank() != in.getRank() + 1 ||
      !shapesCompatible(out.getShape().drop_front(), in.getShape()))
    return emitOpError("result shape ")
           << shapeString(out.getShape())
           << " must be a vertex axis followed by the rows "
           << shapeString(in.getShape());
  return success();
}

LogicalResult SplatOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::dense}, "input")) ||
      failed(expectDomain(*this, out, {Domain::src, Domain::dst, Domain::edge},
                          "result")))
    return failure();
  if (in.withDomain(out.getDomain()) != out)
    return emitOpError("result rows must be the input tensor");
  return success();
}

LogicalResult GatherOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::src, Domain::dst}, "input")) ||
      failed(expectDomain(*this, out, {Domain::edge}, "result")))
    return failure();
  if (in.withDomain(Domain::edge) != out)
    return emitOpError("result must have the input's rows and element type");
  return success();
}

LogicalResult ScatterOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::edge}, "input")) ||
      failed(expectDomain(*this, out, {Domain::src, Domain::dst}, "result")))
    return failure();
  if (in.withDomain(out.getDomain()) != out)
    return emitOpError("result must have the input's rows and element type");
  if (getFn() != ReduceFn::sum && failed(expectFloat(*this, in)))
    return failure();
  return success();
}

/// `logsumexp` only groups edges (`gnn.scatter`); the dense reductions
/// reject it.
static LogicalResult expectNotLogSumExp(Operation *op, ReduceFn fn) {
  if (fn != ReduceFn::logsumexp)
    return success();
  return op->emitOpError("does not support logsumexp (gnn.scatter does)");
}

static LogicalResult expectMaxOrMin(Operation *op, ReduceFn fn) {
  if (fn == ReduceFn::max || fn == ReduceFn::min)
    return success();
  return op->emitOpError("selects for max or min only, got ")
         << stringifyReduceFn(fn);
}

LogicalResult ScatterSelectOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())) ||
      failed(expectMaxOrMin(*this, getFn())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::edge}, "input")) ||
      failed(expectFloat(*this, in)))
    return failure();
  if (in != out)
    return emitOpError("result type must equal the input type");
  if (getBy() != Domain::src && getBy() != Domain::dst)
    return emitOpError("'by' must be src or dst");
  return success();
}

LogicalResult EdgeSoftmaxOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::edge}, "input")) ||
      failed(expectFloat(*this, in)))
    return failure();
  if (in != out)
    return emitOpError("result type must equal the input type");
  if (getBy() != Domain::src && getBy() != Domain::dst)
    return emitOpError("'by' must be src or dst");
  return success();
}

/// Ops between per-vertex and per-graph rows of a batched graph: dense
/// tensors whose leading axis changes (`what`) and whose rows stay.
static LogicalResult verifyBatchedRows(Operation *op, Value graph, Value input,
                                       Value result, StringRef what) {
  if (cast<GraphType>(graph.getType()).getKind() != GraphKind::batched)
    return op->emitOpError("needs a batched graph");
  DomainTensorType in = tensorOf(input), out = tensorOf(result);
  if (failed(expectDomain(op, in, {Domain::dense}, "input")) ||
      failed(expectDomain(op, out, {Domain::dense}, "result")) ||
      failed(sameElement(op, in, out)))
    return failure();
  if (in.getRank() < 1 || out.getRank() != in.getRank() ||
      !shapesCompatible(in.getShape().drop_front(),
                        out.getShape().drop_front()))
    return op->emitOpError("result must be the input with its ") << what;
  return success();
}

LogicalResult ReadoutOp::verify() {
  if (failed(expectNotLogSumExp(*this, getFn())))
    return failure();
  return verifyBatchedRows(*this, getGraph(), getInput(), getResult(),
                           "vertex axis replaced by a graph axis");
}

LogicalResult BroadcastGraphsOp::verify() {
  return verifyBatchedRows(*this, getGraph(), getInput(), getResult(),
                           "graph axis replaced by a vertex axis");
}

LogicalResult ReadoutSelectOp::verify() {
  if (getGraph().getType().getKind() != GraphKind::batched)
    return emitOpError("needs a batched graph");
  if (failed(expectMaxOrMin(*this, getFn())))
    return failure();
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (failed(expectDomain(*this, in, {Domain::dense}, "input")) ||
      failed(expectFloat(*this, in)))
    return failure();
  if (in.getRank() < 1)
    return emitOpError("input must have a vertex axis");
  if (in != out)
    return emitOpError("result type must equal the input type");
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise maths
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  DomainTensorType t = tensorOf(getResult());
  if (t.getDomain() != Domain::dense || t.getRank() != 0)
    return emitOpError("result must be a dense scalar");
  double value = getValue().convertToDouble();
  if (t.getElementType().isIntOrIndex() && value != std::floor(value))
    return emitOpError("integer constant must be a whole number, got ")
           << value;
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

LogicalResult UnaryOp::verify() {
  bool wantsAlpha = getFn() == UnaryFn::elu || getFn() == UnaryFn::leaky_relu;
  if (wantsAlpha != getAlpha().has_value())
    return emitOpError(wantsAlpha ? "'" : "'")
           << stringifyUnaryFn(getFn())
           << (wantsAlpha ? "' needs an alpha" : "' takes no alpha");
  bool integerOk = getFn() == UnaryFn::neg || getFn() == UnaryFn::abs ||
                   getFn() == UnaryFn::relu;
  if (!integerOk && failed(expectFloat(*this, tensorOf(getInput()))))
    return failure();
  return success();
}

/// NumPy broadcasting of two shapes; nullopt when they do not broadcast.
static std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t r;
    if (x == 1)
      r = y;
    else if (y == 1 || x == y)
      r = x;
    else if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y))
      r = ShapedType::isDynamic(x) ? y : x;
    else
      return std::nullopt;
    out[rank - 1 - i] = r;
  }
  return out;
}

LogicalResult BinaryOp::verify() {
  DomainTensorType lhs = tensorOf(getLhs()), rhs = tensorOf(getRhs()),
                   out = tensorOf(getResult());
  if (lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != out.getElementType())
    return emitOpError("operands and result must share an element type");
  Domain domain = lhs.getDomain();
  if (domain == Domain::dense)
    domain = rhs.getDomain();
  else if (rhs.getDomain() != Domain::dense && rhs.getDomain() != domain)
    return emitOpError("cannot combine a ")
           << stringifyDomain(lhs.getDomain()) << " tensor with a "
           << stringifyDomain(rhs.getDomain())
           << " tensor; gather or scatter first";
  if (out.getDomain() != domain)
    return emitOpError("result domain must be ") << stringifyDomain(domain);
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (!shape)
    return emitOpError("shapes ")
           << shapeString(lhs.getShape()) << " and "
           << shapeString(rhs.getShape()) << " do not broadcast";
  if (!shapesCompatible(*shape, out.getShape()))
    return emitOpError("result shape must be ") << shapeString(*shape);
  return success();
}

LogicalResult BroadcastLikeOp::verify() {
  DomainTensorType in = tensorOf(getInput()), like = tensorOf(getLike());
  if (failed(sameElement(*this, in, like)))
    return failure();
  if (in.getDomain() != Domain::dense && in.getDomain() != like.getDomain())
    return emitOpError("cannot broadcast a ")
           << stringifyDomain(in.getDomain()) << " tensor to a "
           << stringifyDomain(like.getDomain()) << " tensor";
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(in.getShape(), like.getShape());
  if (!shape || !shapesCompatible(*shape, like.getShape()))
    return emitOpError("shape ")
           << shapeString(in.getShape()) << " does not broadcast to "
           << shapeString(like.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  DomainTensorType lhs = tensorOf(getLhs()), rhs = tensorOf(getRhs()),
                   out = tensorOf(getResult());
  if (rhs.getDomain() != Domain::dense || rhs.getRank() != 2)
    return emitOpError("right operand must be a dense matrix");
  if (lhs.getRank() < 1)
    return emitOpError("left operand must have rank 1 or more");
  if (failed(sameElement(*this, lhs, rhs)) ||
      failed(sameElement(*this, lhs, out)) || failed(expectFloat(*this, lhs)))
    return failure();
  if (!dimsCompatible(lhs.getShape().back(), rhs.getShape()[0]))
    return emitOpError("inner dimensions differ: ")
           << shapeString(lhs.getShape()) << " x "
           << shapeString(rhs.getShape());
  SmallVector<int64_t> shape(lhs.getShape());
  shape.back() = rhs.getShape()[1];
  if (out.getDomain() != lhs.getDomain() ||
      !shapesCompatible(shape, out.getShape()))
    return emitOpError("result must be ")
           << stringifyDomain(lhs.getDomain()) << " " << shapeString(shape);
  return success();
}

/// Product of the static dimensions, and how many are dynamic.
static std::pair<int64_t, int> staticProduct(ArrayRef<int64_t> shape) {
  int64_t product = 1;
  int dynamic = 0;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      ++dynamic;
    else
      product *= d;
  }
  return {product, dynamic};
}

LogicalResult ReshapeOp::verify() {
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getDomain() != out.getDomain() || failed(sameElement(*this, in, out)))
    return emitOpError("reshape keeps the domain and element type");
  auto [inProduct, inDynamic] = staticProduct(in.getShape());
  auto [outProduct, outDynamic] = staticProduct(out.getShape());
  // A `?` on each side need not be the same size ([N, 2, 2] -> [4 N]), so
  // only fully static shapes can be compared here; the front end checks the
  // symbolic counts.
  if (inDynamic == 0 && outDynamic == 0 && inProduct != outProduct)
    return emitOpError("element counts differ: ")
           << shapeString(in.getShape()) << " -> "
           << shapeString(out.getShape());
  if ((inDynamic == 0) != (outDynamic == 0))
    return emitOpError("a run-time size cannot appear or vanish");
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  // reshape(reshape(x)) is one reshape of x.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

LogicalResult ReduceOp::verify() {
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getDomain() != out.getDomain() || failed(sameElement(*this, in, out)))
    return emitOpError("reduce keeps the domain and element type");
  if (failed(expectNotLogSumExp(*this, getFn())))
    return failure();
  if (getFn() == ReduceFn::mean && failed(expectFloat(*this, in)))
    return failure();
  SmallVector<int64_t> shape;
  if (getAxisAttr()) {
    int64_t axis = getAxisAttr().getInt();
    if (axis < 0 || axis >= in.getRank())
      return emitOpError("axis ") << axis << " is out of range";
    shape.assign(in.getShape().begin(), in.getShape().end());
    if (getKeepdims())
      shape[axis] = 1;
    else
      shape.erase(shape.begin() + axis);
  } else if (getKeepdims()) {
    shape.assign(in.getRank(), 1);
  }
  if (!shapesCompatible(shape, out.getShape()))
    return emitOpError("result shape must be ") << shapeString(shape);
  return success();
}

LogicalResult ReduceSelectOp::verify() {
  DomainTensorType in = tensorOf(getInput());
  if (failed(expectMaxOrMin(*this, getFn())) || failed(expectFloat(*this, in)))
    return failure();
  if (getAxisAttr()) {
    int64_t axis = getAxisAttr().getInt();
    if (axis < 0 || axis >= in.getRank())
      return emitOpError("axis ") << axis << " is out of range";
  }
  return success();
}

LogicalResult SoftmaxOp::verify() {
  DomainTensorType t = tensorOf(getInput());
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= t.getRank())
    return emitOpError("axis ") << axis << " is out of range";
  return expectFloat(*this, t);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  DomainTensorType first = tensorOf(getInputs()[0]),
                   out = tensorOf(getResult());
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= first.getRank())
    return emitOpError("axis ") << axis << " is out of range";
  SmallVector<int64_t> shape(first.getShape());
  for (Value input : getInputs().drop_front()) {
    DomainTensorType t = tensorOf(input);
    if (t.getDomain() != first.getDomain() ||
        t.getElementType() != first.getElementType() ||
        t.getRank() != first.getRank())
      return emitOpError("operands must share domain, element type and rank");
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (d == axis) {
        shape[d] = ShapedType::isDynamic(shape[d]) ||
                           ShapedType::isDynamic(t.getShape()[d])
                       ? ShapedType::kDynamic
                       : shape[d] + t.getShape()[d];
      } else if (!dimsCompatible(shape[d], t.getShape()[d])) {
        return emitOpError("operands differ outside the axis");
      }
    }
  }
  if (out.getDomain() != first.getDomain() ||
      out.getElementType() != first.getElementType() ||
      !shapesCompatible(shape, out.getShape()))
    return emitOpError("result must be ")
           << stringifyDomain(first.getDomain()) << " " << shapeString(shape)
           << " of " << first.getElementType();
  return success();
}

/// gnn.dst_rows and gnn.pad_dst_rows: dense tensors whose first axis is a
/// vertex count of the graph (known at run time), the rest the same.
static LogicalResult verifyRowPrefix(Operation *op, Value input, Value result) {
  DomainTensorType in = tensorOf(input), out = tensorOf(result);
  if (in.getDomain() != Domain::dense || out.getDomain() != Domain::dense)
    return op->emitOpError("needs dense tensors");
  if (failed(sameElement(op, in, out)))
    return failure();
  if (in.getRank() < 1 || in.getRank() != out.getRank())
    return op->emitOpError("needs tensors of the same rank, at least 1");
  if (!ShapedType::isDynamic(in.getShape()[0]) ||
      !ShapedType::isDynamic(out.getShape()[0]))
    return op->emitOpError("needs a first axis of vertices ('?')");
  if (in.getShape().drop_front() != out.getShape().drop_front())
    return op->emitOpError("keeps every axis but the first");
  return success();
}

LogicalResult DstRowsOp::verify() {
  return verifyRowPrefix(*this, getInput(), getResult());
}

LogicalResult PadDstRowsOp::verify() {
  return verifyRowPrefix(*this, getInput(), getResult());
}

LogicalResult SliceOp::verify() {
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getDomain() != out.getDomain() || failed(sameElement(*this, in, out)))
    return emitOpError("slice keeps the domain and element type");
  int64_t axis = getAxis(), start = getStart(), size = getSize();
  if (axis < 0 || axis >= in.getRank())
    return emitOpError("axis ") << axis << " is out of range";
  if (start < 0 || size < 1)
    return emitOpError("needs start >= 0 and size >= 1, got start ")
           << start << " and size " << size;
  int64_t dim = in.getShape()[axis];
  if (!ShapedType::isDynamic(dim) && start + size > dim)
    return emitOpError("elements ")
           << start << " to " << start + size - 1 << " are outside axis "
           << axis << " of size " << dim;
  SmallVector<int64_t> shape(in.getShape());
  shape[axis] = size;
  if (!shapesCompatible(shape, out.getShape()) ||
      ShapedType::isDynamic(out.getShape()[axis]))
    return emitOpError("result shape must be ") << shapeString(shape);
  return success();
}

LogicalResult TransposeOp::verify() {
  DomainTensorType in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getRank() != 2)
    return emitOpError("needs a matrix");
  SmallVector<int64_t> shape{in.getShape()[1], in.getShape()[0]};
  if (out != in.withShape(shape))
    return emitOpError("result must be the transposed input");
  return success();
}

LogicalResult TrainingOp::verify() {
  DomainTensorType t = tensorOf(getResult());
  if (t.getDomain() != Domain::dense || t.getRank() != 0)
    return emitOpError("result must be a dense scalar, got ") << t;
  return expectFloat(*this, t);
}

LogicalResult UpdateBatchStatsOp::verify() {
  DomainTensorType x = tensorOf(getInput());
  if (x.getDomain() != Domain::dense || x.getRank() != 2)
    return emitOpError("input must be a dense [rows, features] tensor, got ")
           << x;
  if (failed(expectFloat(*this, x)))
    return failure();
  double m = getMomentum().convertToDouble();
  if (!(m >= 0.0 && m <= 1.0))
    return emitOpError("momentum must be in [0, 1], got ") << m;
  for (Value buffer : {getRunningMean(), getRunningVar()}) {
    DomainTensorType b = tensorOf(buffer);
    if (b.getDomain() != Domain::dense || b.getRank() != 1 ||
        b.getShape()[0] != x.getShape()[1] ||
        b.getElementType() != x.getElementType())
      return emitOpError("running statistics must be dense [")
             << x.getShape()[1] << "] tensors of the input's element type, got "
             << b;
    auto arg = dyn_cast<BlockArgument>(buffer);
    auto func =
        arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
            : FunctionOpInterface();
    if (!func || !func.getArgAttr(arg.getArgNumber(), kBufferAttrName))
      return emitOpError("running statistics must be buffer arguments of the "
                         "function (gnn.buffer)");
  }
  return success();
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError("probability must be in [0, 1), got ") << p;
  return expectFloat(*this, tensorOf(getInput()));
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getP().isZero())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Fused aggregation
//===----------------------------------------------------------------------===//

std::string gnnc::gnn::describeType(DomainTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << stringifyDomain(type.getDomain()) << " ";
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
    os << "x";
  }
  os << type.getElementType();
  return text;
}

llvm::StringRef AggregateOp::getKind(unsigned i) {
  auto dict = dyn_cast<DictionaryAttr>(getReductions()[i]);
  auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
  return kind ? kind.getValue() : "";
}

LogicalResult AggregateOp::verify() {
  if (failed(expectOneEdgeSet(*this, getGraph())))
    return failure();
  if (getBy() != Domain::src && getBy() != Domain::dst)
    return emitOpError("'by' must be src or dst");
  if (getReductions().size() != getNumResults())
    return emitOpError("needs one reduction per result, got ")
           << getReductions().size() << " for " << getNumResults();
  for (unsigned i = 0; i < getNumResults(); ++i) {
    auto dict = dyn_cast<DictionaryAttr>(getReductions()[i]);
    if (!dict)
      return emitOpError("reduction ") << i << " must be a dictionary";
    StringRef kind = getKind(i);
    if (kind != "sum" && kind != "mean" && kind != "max" && kind != "min" &&
        kind != "logsumexp" && kind != "softmax_sum")
      return emitOpError("reduction ")
             << i << " has unknown kind '" << kind
             << "'; expected sum, mean, max, min, logsumexp or softmax_sum";
    for (NamedAttribute entry : dict) {
      StringRef key = entry.getName().getValue();
      if (key == "kind")
        continue;
      if (kind != "softmax_sum" || (key != "dropout" && key != "seed"))
        return emitOpError("reduction ")
               << i << " has unexpected entry '" << key << "'";
    }
    if (auto p = dict.getAs<FloatAttr>("dropout")) {
      double prob = p.getValueAsDouble();
      if (!(prob >= 0.0 && prob < 1.0) || !dict.getAs<IntegerAttr>("seed"))
        return emitOpError("reduction ")
               << i << ": dropout needs a probability in [0, 1) and a seed";
    }
    DomainTensorType t = tensorOf(getResult(i));
    if (t.getDomain() != getBy())
      return emitOpError("results must be in domain ")
             << stringifyDomain(getBy());
  }
  for (Value input : getInputs()) {
    if (tensorOf(input).getDomain() == Domain::dense)
      for (int64_t d : tensorOf(input).getShape())
        if (ShapedType::isDynamic(d))
          return emitOpError("dense inputs must not have a vertex axis");
  }
  return success();
}

LogicalResult AggregateOp::verifyRegions() {
  Block &block = getBlock();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("body takes one argument per input");
  for (auto [input, arg] : llvm::zip(getInputs(), block.getArguments())) {
    DomainTensorType in = tensorOf(input);
    DomainTensorType row = in.withDomain(Domain::dense);
    if (arg.getType() != row)
      return emitOpError("body argument ") << arg.getArgNumber() << " must be "
                                           << row << ", the row of " << in;
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("body must end with gnn.yield");
  unsigned want = 0;
  for (unsigned i = 0; i < getNumResults(); ++i)
    want += getNumYields(i);
  if (yield.getValues().size() != want)
    return emitOpError("body yields ")
           << yield.getValues().size() << " values, reductions need " << want;
  unsigned next = 0;
  for (unsigned i = 0; i < getNumResults(); ++i) {
    DomainTensorType result = tensorOf(getResult(i));
    Value value = yield.getValues()[next + getNumYields(i) - 1];
    if (tensorOf(value).withDomain(result.getDomain()) != result)
      return emitOpError("result ")
             << i << " must have the rows of its yielded value";
    next += getNumYields(i);
  }
  for (Operation &op : block.without_terminator())
    for (Value v : op.getResults())
      if (auto t = dyn_cast<DomainTensorType>(v.getType());
          t && t.getDomain() != Domain::dense)
        return op.emitOpError("inside gnn.aggregate computes rows: its "
                              "results must be dense");
  return success();
}

/// `dst` or `src`: which end of the edges groups them.
static ParseResult parseSide(OpAsmParser &parser, DomainAttr &side) {
  std::string keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeywordOrString(&keyword))
    return failure();
  std::optional<Domain> domain = symbolizeDomain(keyword);
  if (!domain || (*domain != Domain::src && *domain != Domain::dst))
    return parser.emitError(loc, "expected 'src' or 'dst'");
  side = DomainAttr::get(parser.getContext(), *domain);
  return success();
}

static void printSide(OpAsmPrinter &printer, Operation *, DomainAttr side) {
  printer << stringifyDomain(side.getValue());
}

#define GET_OP_CLASSES
#include "gnnc/Dialect/GNN/IR/GNNOps.cpp.inc"
