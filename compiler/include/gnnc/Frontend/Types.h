//===- Types.h - Dimensions, domains and value types ------------*- C++ -*-===//
//
// Part of gnnc. Shapes are lists of dimensions; a dimension is an integer
// polynomial over symbols (int hyper-parameters and the graph sizes N, N_src,
// N_dst, E, B), so `heads * out_dim` and `out_dim * heads` are one dimension.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_TYPES_H
#define GNNC_FRONTEND_TYPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gnnc {

/// An integer polynomial with int64 coefficients. Arithmetic that overflows
/// or grows past the size limits returns std::nullopt.
class Dim {
public:
  using Monomial = std::vector<std::string>; // sorted symbol names
  Dim() = default;
  static Dim constant(int64_t value);
  static Dim symbol(llvm::StringRef name);

  std::optional<Dim> add(const Dim &other) const;
  std::optional<Dim> sub(const Dim &other) const;
  std::optional<Dim> mul(const Dim &other) const;
  /// Exact division by a single monomial; nullopt when not exact.
  std::optional<Dim> divExact(const Dim &other) const;
  /// Replaces symbols by polynomials.
  std::optional<Dim> substitute(const std::map<std::string, Dim> &map) const;

  bool isConstant() const;
  std::optional<int64_t> getConstant() const;
  bool mentions(llvm::StringRef symbol) const;
  /// True when every coefficient is negative: the dimension is negative
  /// for every positive value of its symbols.
  bool isNegativeDefinite() const;
  bool operator==(const Dim &other) const { return terms == other.terms; }
  bool operator!=(const Dim &other) const { return !(*this == other); }
  std::string str() const;

  static constexpr size_t maxTerms = 64;
  static constexpr size_t maxDegree = 8;

private:
  std::map<Monomial, int64_t> terms; // no zero coefficients
};

enum class ElemType { F32, F64, I32, I64, Bool, WeakFloat, WeakInt };
llvm::StringRef getElemTypeName(ElemType t);
inline bool isFloatElem(ElemType t) {
  return t == ElemType::F32 || t == ElemType::F64 || t == ElemType::WeakFloat;
}

/// Where a value lives: a whole tensor, one value per source vertex, per
/// destination vertex, or per edge of the current vertex's neighbourhood.
enum class Domain { Dense, Src, Dst, Edge };
llvm::StringRef getDomainName(Domain d);

enum class GraphKind { Graph, Block, BatchedGraph, HeteroGraph };
llvm::StringRef getGraphKindName(GraphKind k);

/// Neighbourhood direction of an edge-domain value.
enum class Direction { In, Out };

/// The type of any expression after semantic analysis.
struct ValueType {
  enum class Kind {
    Error,      ///< already diagnosed; suppresses follow-on errors
    Tensor,     ///< tensors and scalars, in any domain
    Graph,      ///< a graph argument or relation
    VertexSet,  ///< g.dst_vertex / g.src_vertex
    Vertex,     ///< a vertex variable (loop or comprehension)
    EdgeVar,    ///< `e` in `for u, e in v.inedges`
    Neighbours, ///< v.innbs / v.inedges / v.outnbs / v.outedges
    Layer,      ///< an instance of a layer
    String,
    List,
    Dict,
    Function, ///< a builtin or graph method, before it is called
  };
  Kind kind = Kind::Error;

  // Tensor.
  ElemType elem = ElemType::F32;
  std::vector<Dim> shape;
  Domain domain = Domain::Dense;
  Direction direction = Direction::In;
  /// Known compile-time value of an integer scalar.
  std::optional<Dim> intValue;
  /// Known compile-time value of a float scalar.
  std::optional<double> floatValue;
  /// A float scalar that is a compile-time constant (a literal or float
  /// hyper-parameter) even when its value is not known yet.
  bool isConstant = false;

  // Graph / VertexSet / Vertex / Neighbours.
  GraphKind graphKind = GraphKind::Graph;
  Domain side = Domain::Dst; ///< VertexSet, Vertex: which side
  bool withEdges = false;    ///< Neighbours: inedges/outedges
  /// Graph / VertexSet / Vertex / Neighbours: the size symbols of the
  /// graph's sources, destinations and edges. Empty means the defaults of
  /// the kind (N_src, N_dst and E on a Block; N and E otherwise); a
  /// `Block[N0, N1]` argument names its own.
  std::string srcSize, dstSize, edgeSize;

  /// Layer: the definition's name. Function: the builtin's name.
  std::string name;

  static ValueType error() { return ValueType(); }
  static ValueType tensor(ElemType elem, std::vector<Dim> shape,
                          Domain domain = Domain::Dense);
  static ValueType intConstant(Dim value);
  static ValueType floatConstant(std::optional<double> value);
  static ValueType ofKind(Kind kind);

  bool isError() const { return kind == Kind::Error; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isScalar() const { return isTensor() && shape.empty(); }
  /// An integer known at compile time (a literal, a hyper-parameter, N...).
  bool isIntConstant() const { return isTensor() && intValue.has_value(); }
  /// Renders the type for messages and dumps, e.g. `f32[N, 8] (per-edge)`.
  std::string str() const;
  /// Renders only element type and shape: `f32[N, heads*out_dim]`.
  std::string shapeStr() const;
};

/// Symbols for graph sizes.
namespace sym {
constexpr const char *N = "N";
constexpr const char *NSrc = "N_src";
constexpr const char *NDst = "N_dst";
constexpr const char *E = "E";
constexpr const char *B = "B";
} // namespace sym

/// The shortest decimal spelling of `value` that reads back exactly.
std::string formatNumber(double value);

/// True when a dimension depends on a vertex, edge or graph count: one of
/// the symbols above, or one of `named` (the sizes a Block argument names).
bool mentionsGraphSize(const Dim &dim,
                       llvm::ArrayRef<std::string> named = std::nullopt);

/// The size symbols of a graph value: its sources, destinations and edges
/// (the defaults of its kind unless the type names them).
struct GraphSizeNames {
  std::string src, dst, edge;
};
GraphSizeNames graphSizeNames(const ValueType &graph);

/// Copies what identifies a graph (kind, key, size symbols) from `from` to
/// `to`, a graph, vertex set, vertex or neighbour list of it.
void copyGraphIdentity(ValueType &to, const ValueType &from);

} // namespace gnnc

#endif // GNNC_FRONTEND_TYPES_H
