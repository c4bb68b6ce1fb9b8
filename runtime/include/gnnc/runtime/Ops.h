//===- Ops.h - Host operations called by generated C++ ----------*- C++ -*-===//
//
// Part of gnnc. The small library of whole-tensor operations that the C++
// printer (`gnnc --emit=cpp`) calls for the host side of a layer: dense maths
// (elementwise functions with NumPy broadcasting, reductions, softmax,
// matmul through OpenBLAS' cblas_sgemm), unfused graph operations (gather,
// scatter, edge softmax, readouts) and the dropout mask. Fused aggregations
// are printed as loops and do not come here.
//
// Every function computes exactly what the reference interpreter
// (compiler/lib/Interpreter) computes for the op of the same name, in the
// same order of floating-point operations wherever the order is observable
// (sums run over edges in CSR/CSC order, over vertices in id order, over
// elements in row-major order; max/min keep the first extreme), except
// matmul, which is cblas_sgemm's.
//
// Tensors are float32, dense and row-major; the caller owns every buffer
// (generated code carves them out of one workspace), and outputs never
// alias inputs. Nothing here allocates or throws; loops over vertices and
// large tensors run in parallel with OpenMP when it is enabled.
//
// The header also holds what generated headers need: the graph argument
// types of batched and heterogeneous graphs, and the reflection tables
// (ModuleInfo, EntryInfo) through which a program can call any generated
// entry point generically (docs/abi.md).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_OPS_H
#define GNNC_RUNTIME_OPS_H

#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/SimdMath.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace gnnc::rt {

/// The version of the ABI of generated code that this runtime implements
/// (docs/abi.md); generated headers define GNNC_ABI_VERSION and check it.
inline constexpr int kAbiVersion = 2;

//===----------------------------------------------------------------------===//
// Graph arguments
//===----------------------------------------------------------------------===//

/// A batch of disjoint graphs (`Graph` arguments of kind `batched`): the
/// union `graph`, and for each of its vertices the member graph it belongs
/// to (`graphOf[v]` in [0, numGraphs)).
struct BatchedGraph {
  const Graph *graph = nullptr;
  const int64_t *graphOf = nullptr;
  int64_t numGraphs = 0;
};

/// One named edge set of a heterogeneous graph.
struct Relation {
  const char *name = nullptr;
  const Graph *graph = nullptr;
};

/// A heterogeneous graph (`HeteroGraph` arguments): `numVertices` vertices
/// and one homogeneous graph over them per relation.
struct HeteroGraph {
  int64_t numVertices = 0;
  const Relation *relations = nullptr;
  int64_t numRelations = 0;
};

/// The relation called `name`, or null when `g` has none or it is not a
/// graph on g.numVertices vertices.
const Graph *findRelation(const HeteroGraph &g, const char *name);
/// The relation called `name`, or an empty graph (for workspace sizing).
const Graph &relationOrEmpty(const HeteroGraph &g, const char *name);

//===----------------------------------------------------------------------===//
// Shapes, seeds, dropout
//===----------------------------------------------------------------------===//

/// Largest rank of a tensor in generated code.
inline constexpr int kMaxRank = 8;

/// Alignment of every buffer generated code carves out of a workspace.
inline constexpr std::size_t kWorkspaceAlign = 64;

/// `bytes` rounded up to kWorkspaceAlign (0 for a negative count).
inline constexpr std::size_t alignUp(int64_t bytes) {
  return bytes <= 0 ? 0
                    : (static_cast<std::size_t>(bytes) + kWorkspaceAlign - 1) /
                          kWorkspaceAlign * kWorkspaceAlign;
}

/// Places the buffers of one workspace: each buffer is live between two
/// ops (positions in the function's body), and takes the lowest offset
/// where it overlaps no buffer placed before it that is live at the same
/// time (first fit, in the order of placement). Generated layouts run it
/// in their constructor, so the sizes may depend on the graph.
template <int Capacity> class WorkspacePlan {
public:
  /// The offset of a buffer of `bytes` (a multiple of kWorkspaceAlign) live
  /// from op `first` to op `last`.
  std::size_t place(std::size_t bytes, unsigned first, unsigned last) {
    std::size_t at = 0;
    // Candidates: 0 and the end of every buffer live at the same time, in
    // increasing order; the first that collides with nothing wins.
    for (bool moved = true; moved;) {
      moved = false;
      for (int i = 0; i < count; ++i) {
        bool sameTime = First[i] <= last && first <= Last[i];
        bool overlap = at < Offset[i] + Size[i] && Offset[i] < at + bytes;
        if (sameTime && overlap && bytes > 0 && Size[i] > 0) {
          at = Offset[i] + Size[i];
          moved = true;
        }
      }
    }
    if (count < Capacity) {
      Offset[count] = at;
      Size[count] = bytes;
      First[count] = first;
      Last[count] = last;
      ++count;
    }
    if (at + bytes > Total)
      Total = at + bytes;
    return at;
  }
  /// The bytes the workspace needs.
  std::size_t total() const { return Total; }

private:
  std::size_t Offset[Capacity] = {}, Size[Capacity] = {};
  unsigned First[Capacity] = {}, Last[Capacity] = {};
  int count = 0;
  std::size_t Total = 0;
};

/// The buffer at byte `offset` of `workspace`.
inline void *wsBytes(void *workspace, std::size_t offset) {
  return static_cast<char *>(workspace) + offset;
}
inline float *wsFloats(void *workspace, std::size_t offset) {
  return static_cast<float *>(wsBytes(workspace, offset));
}
inline int64_t *wsInt64s(void *workspace, std::size_t offset) {
  return static_cast<int64_t *>(wsBytes(workspace, offset));
}

/// A full tensor shape (vertex or edge axis first for row tensors), passed by
/// value to the broadcasting operations.
struct Shape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};

  Shape() = default;
  Shape(std::initializer_list<int64_t> list) {
    for (int64_t d : list)
      if (rank < kMaxRank)
        dims[rank++] = d;
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= dims[i];
    return n;
  }
};

/// The seed a dropout op with seed `opSeed` in the IR uses when the entry
/// point is called with `stepSeed`: opSeed itself for stepSeed 0 (the mask of
/// the reference interpreter), else opSeed XOR fmix64(stepSeed), MurmurHash3's
/// 64-bit finaliser (a bijection with fmix64(0) = 0), so that every training
/// step draws new masks and different ops keep different masks.
inline constexpr uint64_t mixSeed(int64_t opSeed, uint64_t stepSeed) {
  uint64_t k = stepSeed;
  k ^= k >> 33;
  k *= 0xFF51AFD7ED558CCDull;
  k ^= k >> 33;
  k *= 0xC4CEB9FE1A85EC53ull;
  k ^= k >> 33;
  return static_cast<uint64_t>(opSeed) ^ k;
}

/// The top 53 bits of splitmix64(seed * 0x9E3779B97F4A7C15 + index): the
/// random number behind element `index` of a dropout mask, u = bits * 2^-53
/// in [0, 1).
inline constexpr uint64_t dropoutBits(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z >> 11;
}

/// The integer form of the test u >= p: an element is kept exactly when
/// dropoutBits(seed, index) >= dropoutThreshold(p), ceil(p * 2^53) (0 for
/// p <= 0: always kept; 2^53 for p >= 1 or NaN: never kept). u and p * 2^53
/// are exact in double and the bits are an integer, so the two tests agree
/// for every p.
inline constexpr uint64_t dropoutThreshold(double p) {
  if (p <= 0)
    return 0;
  if (!(p < 1))
    return uint64_t{1} << 53;
  double scaled = p * 0x1.0p53;
  uint64_t floor = static_cast<uint64_t>(scaled);
  return static_cast<double>(floor) < scaled ? floor + 1 : floor;
}

/// The multiplier of element `index` of a tensor dropped with probability
/// `p` and (mixed) seed `seed`: in training 1 / (1 - p) (computed in double,
/// rounded to float) when the element is kept and 0 when it is dropped; 1
/// in inference. Kept means the top 53 bits of splitmix64(seed *
/// 0x9E3779B97F4A7C15 + index), as a double in [0, 1), are >= p: the mask of
/// gnn.dropout, gnnk.dropout_keep and interp::dropoutKeeps. Everything but
/// the hash depends on `p` only, so a loop with a constant `p` computes the
/// threshold and the scale once, and vectorises (the hash is 64-bit integer
/// arithmetic).
inline float dropoutKeep(bool training, uint64_t seed, uint64_t index,
                         double p) {
  if (!training)
    return 1.0f;
  // Both below are at most 2^53: the signed compare is the unsigned one, and
  // vectorises on targets without unsigned 64-bit compares.
  bool keep = static_cast<int64_t>(dropoutBits(seed, index)) >=
              static_cast<int64_t>(dropoutThreshold(p));
  return keep ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
}

/// Asks for the cache lines of `row` (`Floats` floats) to be loaded: generated
/// edge loops call it for the rows a later edge gathers. A hint only: the
/// address need not be valid.
template <int64_t Floats> inline void prefetchRow(const float *row) {
#if defined(__GNUC__) || defined(__clang__)
  for (int64_t i = 0; i < Floats; i += 64 / sizeof(float))
    __builtin_prefetch(row + i);
#else
  (void)row;
#endif
}

/// `out = in * mask` for dropout with probability `p` (the identity when not
/// training or p <= 0); element i of the mask is dropoutKeep(training,
/// seed, i, p).
void dropout(const float *in, float *out, int64_t n, double p, uint64_t seed,
             bool training);

//===----------------------------------------------------------------------===//
// Graph facts
//===----------------------------------------------------------------------===//

/// In-degree of every destination ([N_dst]), out-degree of every source
/// ([N_src]), as floats.
void inDegree(const Graph &g, float *out);
void outDegree(const Graph &g, float *out);
/// Vertices of each member graph ([B]), as floats.
void graphSizes(const BatchedGraph &g, float *out);

//===----------------------------------------------------------------------===//
// Elementwise maths
//===----------------------------------------------------------------------===//

void fill(float *out, int64_t n, float value);
void copy(const float *in, float *out, int64_t n);

/// `y = fn(x)` elementwise. As in PyTorch, a NaN stays a NaN in every one of
/// them (relu, leaky_relu and elu included).
void neg(const float *x, float *y, int64_t n);
void exp(const float *x, float *y, int64_t n);
void log(const float *x, float *y, int64_t n);
void sqrt(const float *x, float *y, int64_t n);
void rsqrt(const float *x, float *y, int64_t n);
void abs(const float *x, float *y, int64_t n);
void relu(const float *x, float *y, int64_t n);
void sigmoid(const float *x, float *y, int64_t n);
void tanh(const float *x, float *y, int64_t n);
void gelu(const float *x, float *y, int64_t n);
void erf(const float *x, float *y, int64_t n);
void elu(const float *x, float *y, int64_t n, float alpha);
void leakyRelu(const float *x, float *y, int64_t n, float alpha);

/// `out = a (op) b` with NumPy broadcasting: the three shapes have one rank,
/// and each axis of `a` and `b` is 1 or the axis of `out`. max and min return
/// `a` on a tie (std::max, std::min) and a NaN when either operand is one
/// (torch.maximum, torch.minimum); gt is 1 or 0 (0 when either is a NaN).
void add(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void sub(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void mul(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void div(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void max(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void min(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void pow(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void gt(const float *a, const Shape &sa, const float *b, const Shape &sb,
        float *out, const Shape &so);
/// `in` broadcast to `so` (same rank, axes of `si` are 1 or those of `so`).
void broadcastTo(const float *in, const Shape &si, float *out, const Shape &so);

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

/// `out[rows, n] = a[rows, k] @ w[k, n]` (cblas_sgemm; zeros when k is 0).
void matmul(const float *a, const float *w, float *out, int64_t rows, int64_t k,
            int64_t n);
/// `out[rows, n] = op(a) @ op(w)`, where op(a) is a[rows, k] or, with
/// `transA`, the transpose of a stored as [k, rows], and op(w) is w[k, n] or,
/// with `transW`, the transpose of w stored as [n, k]: a matmul of a
/// transposed operand without copying it (cblas_sgemm's CblasTrans).
void matmulT(const float *a, bool transA, const float *w, bool transW,
             float *out, int64_t rows, int64_t k, int64_t n);

/// Reductions of the middle axis of `in` seen as [outer, len, inner] into
/// `out` [outer, inner]: sums from 0 in index order, mean divides by len,
/// max and min keep the first extreme; an empty axis gives 0.
void reduceSum(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner);
void reduceMean(const float *in, float *out, int64_t outer, int64_t len,
                int64_t inner);
void reduceMax(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner);
void reduceMin(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner);
/// The mask of the element reduceMax / reduceMin keeps: 1 at the first
/// extreme of each [outer, :, inner] lane, 0 elsewhere (shape of `in`).
void reduceSelectMax(const float *in, float *out, int64_t outer, int64_t len,
                     int64_t inner);
void reduceSelectMin(const float *in, float *out, int64_t outer, int64_t len,
                     int64_t inner);
/// Softmax (log-softmax) of the middle axis of [outer, len, inner].
void softmax(const float *in, float *out, int64_t outer, int64_t len,
             int64_t inner);
void logSoftmax(const float *in, float *out, int64_t outer, int64_t len,
                int64_t inner);
/// `out[r * outStride + j] = in[r * inStride + j]` for r < rows, j < width:
/// a block of a concatenation or a slice.
void copyRows(const float *in, int64_t inStride, float *out, int64_t outStride,
              int64_t rows, int64_t width);
/// Transposes each of `batch` [a, b] matrices of `in` into [b, a].
void transpose(const float *in, float *out, int64_t batch, int64_t a,
               int64_t b);

//===----------------------------------------------------------------------===//
// Graph operations (unfused)
//===----------------------------------------------------------------------===//

/// Which end groups the edges: destinations (CSR, in-edges) or sources
/// (CSC, out-edges).
enum class Side { Dst, Src };

/// Row `index[e]` of `in` for each of `count` edges (`index` is
/// g.edgeSrc() or g.edgeDst()).
void gather(const int64_t *index, int64_t count, const float *in, int64_t row,
            float *out);
/// `out[e] = sum over j of x[xIndex[e] * row + j] * y[yIndex[e] * row + j]`
/// for each of `count` edges, summed from 0 in j order: the sum over the
/// row of the product of two gathers (the gradient of an edge weight)
/// without the [count, row] gathered rows.
void gatherDot(const int64_t *xIndex, const float *x, const int64_t *yIndex,
               const float *y, int64_t count, int64_t row, float *out);
/// `row` broadcast to `count` rows.
void splat(const float *row, int64_t rowSize, int64_t count, float *out);

/// Reduces the edge rows `in` ([E, row]) of each vertex's edges into `out`
/// ([count, row]); an empty group gives 0.
void scatterSum(const Graph &g, Side by, const float *in, int64_t row,
                float *out);
void scatterMean(const Graph &g, Side by, const float *in, int64_t row,
                 float *out);
void scatterMax(const Graph &g, Side by, const float *in, int64_t row,
                float *out);
void scatterMin(const Graph &g, Side by, const float *in, int64_t row,
                float *out);
void scatterLogSumExp(const Graph &g, Side by, const float *in, int64_t row,
                      float *out);
/// The edge mask of scatterMax / scatterMin (ties: the first edge).
void scatterSelectMax(const Graph &g, Side by, const float *in, int64_t row,
                      float *out);
void scatterSelectMin(const Graph &g, Side by, const float *in, int64_t row,
                      float *out);
/// Softmax of the edge rows over each vertex's edges.
void edgeSoftmax(const Graph &g, Side by, const float *in, int64_t row,
                 float *out);

/// Per-graph reductions of `in` ([n, row], n = vertices of the batch) into
/// `out` ([B, row]); `scratch` holds B int64 (the counts).
void readoutSum(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                float *out, int64_t *scratch);
void readoutMean(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                 float *out, int64_t *scratch);
void readoutMax(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                float *out, int64_t *scratch);
void readoutMin(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                float *out, int64_t *scratch);
/// The vertex mask of readoutMax / readoutMin ([n, row]); `scratch` holds
/// B * row int64.
void readoutSelectMax(const BatchedGraph &g, const float *in, int64_t n,
                      int64_t row, float *out, int64_t *scratch);
void readoutSelectMin(const BatchedGraph &g, const float *in, int64_t n,
                      int64_t row, float *out, int64_t *scratch);
/// Row graphOf[v] of `in` ([B, row]) for each of the n vertices.
void broadcastGraphs(const BatchedGraph &g, const float *in, int64_t n,
                     int64_t row, float *out);

/// Checks a batched graph argument: graphOf set for every vertex and in
/// [0, numGraphs).
Status checkBatch(const BatchedGraph &g);

//===----------------------------------------------------------------------===//
// Reflection (docs/abi.md)
//===----------------------------------------------------------------------===//

/// The kind of a function's graph arguments.
enum class GraphKind { Graph, Block, Batched, Hetero };

/// A tensor argument or result of an entry point.
struct TensorInfo {
  /// The argument's name or parameter path ("conv1.W"); for results, the
  /// result's name ("out"), or for a gradient the name or path of the
  /// argument it is the gradient of (gnn.grad_of), for a saved value its
  /// name (gnn.saved).
  const char *name;
  /// "input", "param", "output", "grad" or "saved".
  const char *role;
  /// The initialiser of a parameter ("glorot", ...); "" otherwise.
  const char *init;
  int rank;
  /// The dimensions: a number, or a size symbol (N, N_src, N_dst, E, B,
  /// E_<relation>, an explicit size), possibly times a number ("8*N").
  const char *dims[kMaxRank];
};

/// Arguments of a generic call: `graphs[i]` points to a Graph,
/// BatchedGraph or HeteroGraph (EntryInfo::graphKinds[i]); `sizes` are the
/// explicit sizes (EntryInfo::sizeNames); `inputs` every tensor argument
/// (inputs and parameters) in argument order; `outputs` every result.
struct CallArgs {
  const void *const *graphs;
  const int64_t *sizes;
  const float *const *inputs;
  float *const *outputs;
  void *workspace;
  bool training;
  uint64_t seed;
};

/// One entry point of a generated module.
struct EntryInfo {
  /// The function's name in the IR ("GCN.conv1") and in C++ ("GCN_conv1").
  const char *name;
  const char *symbol;
  /// "layer", "model", "backward", "train" or "".
  const char *kind;
  int numGraphs;
  const GraphKind *graphKinds;
  int numSizes;
  const char *const *sizeNames;
  int numArgs;
  const TensorInfo *args;
  int numResults;
  const TensorInfo *results;
  /// Calls the entry point.
  Status (*call)(const CallArgs &args);
  /// Its workspace size (reads graphs and sizes only).
  std::size_t (*workspaceBytes)(const CallArgs &args);
  /// The dimensions of every argument, then of every result, one after the
  /// other (reads graphs and sizes only).
  void (*shapes)(const CallArgs &args, int64_t *dims);
};

/// A generated module: what it was compiled from, and its entry points.
struct ModuleInfo {
  int abiVersion;
  /// The .gnn file, the --entry (or ""), the -D definitions ("name=value"),
  /// and whether it was compiled with --training.
  const char *source;
  const char *entry;
  int numDefines;
  const char *const *defines;
  bool training;
  int numEntries;
  const EntryInfo *entries;
};

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_OPS_H
