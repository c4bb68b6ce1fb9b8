//===- HostShapes.h - Run-time shapes of host values ------------*- C++ -*-===//
//
// Part of gnnc. The types of the gnn dialect leave vertex and edge counts
// as `?`. A printer must know them at run time (to size the workspace, to
// pass sizes to runtime calls), so this analysis gives every tensor value of
// a host function its full shape (vertex or edge axis first for row tensors)
// as monomials `(num / den) * S` over size symbols S: the vertex and edge
// counts of the graph arguments (N, N_src, N_dst, E, B, E_<relation>), and
// explicit sizes where nothing else determines a `?` (a graph-less layer's N,
// an argument whose size no op ties to a graph).
//
// Shapes follow the reference interpreter's rules op by op. Where an op
// requires two sizes to be equal, an unknown size (an argument without
// `gnn.dims`, such as a backward's cotangent) is bound to the other;
// two different known sizes give a check the printed code makes at run time.
// Calls instantiate the callee's analysis, so functions are analysed
// callee-first.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_HOSTSHAPES_H
#define GNNC_TARGET_HOSTSHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gnnc::target {

/// `(num / den) * symbol`, or `num / den` without a symbol (symbol < 0).
struct Dim {
  int64_t num = 0;
  int64_t den = 1;
  int symbol = -1;

  static Dim constant(int64_t value) { return Dim{value, 1, -1}; }
  static Dim of(int symbol, int64_t factor = 1) {
    return Dim{factor, 1, symbol};
  }
  bool isConstant() const { return symbol < 0; }
  bool isConstant(int64_t value) const {
    return symbol < 0 && num == value * den;
  }
  bool operator==(const Dim &o) const {
    return num == o.num && den == o.den && symbol == o.symbol;
  }
  bool operator!=(const Dim &o) const { return !(*this == o); }
};

using Shape = llvm::SmallVector<Dim, 4>;

/// What a size symbol stands for.
struct SizeSymbol {
  enum class Kind {
    NumDst,        ///< destinations (vertices) of a graph argument
    NumSrc,        ///< sources of a block argument
    NumEdges,      ///< edges of a graph argument
    NumGraphs,     ///< members of a batched graph argument
    NumVertices,   ///< vertices of a heterogeneous graph argument
    RelationEdges, ///< edges of one relation of a heterogeneous argument
    Explicit,      ///< a size the caller passes
    Unknown,       ///< not known yet (bound during the analysis)
  };
  Kind kind = Kind::Unknown;
  /// A C identifier ("N", "E_cites", "N_src", "cotangent_rows").
  std::string name;
  /// The graph argument it is read from (every kind but Explicit/Unknown).
  unsigned graphArg = 0;
  /// RelationEdges: the relation.
  std::string relation;
};

/// The shapes of one host function.
class FunctionShapes {
public:
  /// Analyses `func`; `callees` holds the analyses of the functions it
  /// calls. Reports an error on the op it cannot handle.
  static mlir::FailureOr<FunctionShapes>
  analyse(mlir::func::FuncOp func,
          const llvm::StringMap<FunctionShapes> &callees);

  /// Every symbol but the bound unknowns, in creation order: the sizes an
  /// entry point computes from its graphs (or takes as arguments).
  llvm::ArrayRef<int> liveSymbols() const { return live; }
  /// The explicit sizes, in argument order.
  llvm::ArrayRef<int> explicitSymbols() const { return explicits; }
  const SizeSymbol &symbol(int i) const { return symbols[i]; }

  /// The full shape of a tensor value of the function (resolved).
  Shape shape(mlir::Value v) const;
  /// The full shapes of argument `i` and result `i`.
  Shape argShape(unsigned i) const;
  Shape resultShape(unsigned i) const;
  /// Binary ops and broadcast_like: both operand shapes aligned to the
  /// result's rank (NumPy broadcasting, row tensors lifted as the
  /// interpreter lifts them).
  std::pair<Shape, Shape> alignedOperands(mlir::Operation *op) const;
  /// Sizes that must agree at run time (a, b) and the op that needs it.
  llvm::ArrayRef<std::tuple<Dim, Dim, mlir::Operation *>> checks() const {
    return checkList;
  }
  /// For a func.call of this function: the value of every callee symbol in
  /// this function's symbols (indexed by callee symbol).
  llvm::ArrayRef<Dim> calleeSymbols(mlir::Operation *call) const;
  /// The graph symbols of a graph value: nDst, nSrc, nEdges, nGraphs
  /// (-1 when the kind has none).
  struct GraphSymbols {
    int numDst = -1, numSrc = -1, numEdges = -1, numGraphs = -1;
    /// Relation results: the heterogeneous argument and the relation.
    int heteroArg = -1;
    std::string relation;
  };
  const GraphSymbols *graphSymbols(mlir::Value graph) const;
  /// A size that several block arguments name (`gnn.sizes`, the second
  /// block's sources being the first block's destinations): its symbol,
  /// read from the first of them, and a count of another argument that must
  /// equal it at run time.
  struct SharedSize {
    int symbol = -1;
    unsigned graphArg = 0;
    SizeSymbol::Kind kind = SizeSymbol::Kind::NumSrc;
    std::string name; ///< as written in the source ("N1")
  };
  llvm::ArrayRef<SharedSize> sharedSizes() const { return shared; }

  /// A product of dims, when it is a monomial.
  static mlir::FailureOr<Dim> product(llvm::ArrayRef<Dim> dims);
  Dim resolve(Dim d) const;

private:
  FunctionShapes() = default;
  friend class ShapeAnalysis;

  std::vector<SizeSymbol> symbols;
  std::vector<std::optional<Dim>> bindings;
  llvm::SmallVector<int> live, explicits;
  llvm::DenseMap<mlir::Value, Shape> shapes;
  llvm::DenseMap<mlir::Value, GraphSymbols> graphs;
  llvm::DenseMap<mlir::Operation *, std::pair<Shape, Shape>> aligned;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<Dim>> callSymbols;
  std::vector<std::tuple<Dim, Dim, mlir::Operation *>> checkList;
  std::vector<SharedSize> shared;
  llvm::SmallVector<Shape> argShapes, resultShapes;
};

/// Multiplies dims (nullopt when the result is not a monomial).
std::optional<Dim> multiply(Dim a, Dim b);
/// `a` divided by the constant `c`.
Dim divide(Dim a, int64_t c);

/// The C++ expression of `d`, given the names of the symbols ("16",
/// "N", "8 * N", "N * 3 / 4").
std::string dimExpr(Dim d, const std::function<std::string(int)> &name);
/// The product of `dims` as a C++ expression (a monomial when possible,
/// else the product of the factors).
std::string productExpr(llvm::ArrayRef<Dim> dims,
                        const std::function<std::string(int)> &name);
/// The short form for documentation ("8*N").
std::string dimText(Dim d, const std::function<std::string(int)> &name);

} // namespace gnnc::target

#endif // GNNC_TARGET_HOSTSHAPES_H
