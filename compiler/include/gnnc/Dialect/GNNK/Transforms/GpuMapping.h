//===- GpuMapping.h - How a kernel maps onto a GPU's lanes ------*- C++ -*-===//
//
// Part of gnnc. The decisions of `gnnk-map-gpu` (docs/architecture.md,
// "Stage 6: kernel IR" and "The CUDA printer"): for every kernel, the group
// of lanes that runs one row of its vertex loop, the key shape spread over
// them, where each scratch row lives and how each feature loop nest runs.
// The pass decides them (planKernel) and records them as the kernel's
// `gnnk.gpu` attribute (recordPlan); the CUDA printer reads them back
// (readPlan) together with what follows from them mechanically.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_TRANSFORMS_GPUMAPPING_H
#define GNNC_DIALECT_GNNK_TRANSFORMS_GPUMAPPING_H

#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <string>

namespace gnnc::gnnk::gpu {

//===----------------------------------------------------------------------===//
// Shapes and accesses
//===----------------------------------------------------------------------===//

int64_t productOf(llvm::ArrayRef<int64_t> dims);

bool isConstantIndex(mlir::Value v, int64_t value);

/// The alloca or kernel argument behind a memref value (through
/// memref.reinterpret_cast views).
mlir::Value rootOf(mlir::Value memref);

/// The indices of an access without the row of a vertex or edge tensor
/// (the first index of a memref whose first axis is dynamic, returned in
/// `row`) and without axes of size 1, which must be read at 0. False for
/// anything else.
bool normalise(mlir::Value memref, mlir::ValueRange indices,
               llvm::SmallVectorImpl<mlir::Value> &out,
               mlir::Value *row = nullptr);

/// The shape of a row of `type` (without a leading dynamic axis) without
/// axes of size 1.
llvm::SmallVector<int64_t, 4> normalShape(mlir::MemRefType type);

//===----------------------------------------------------------------------===//
// The plan of one kernel
//===----------------------------------------------------------------------===//

/// Where a scratch row (a memref.alloca of the vertex loop) lives: Lane
/// (registers, one value per chunk or per key of the lane), Replicated
/// (registers, the same value in every lane) or Shared (shared memory, one
/// row per group of lanes).
enum class ArrayKind { Lane, Replicated, Shared };

struct ArrayPlan {
  ArrayKind kind = ArrayKind::Shared;
  mlir::Type elementType;
  llvm::SmallVector<int64_t, 4> norm; // shape without axes of size 1
  int64_t numElements = 1;
  bool perChunk = true; // Lane: one value per chunk (else per key)
  int64_t units = 1;    // Lane: values per lane
  bool viewed = false;  // the source of a reinterpret_cast
};

/// How a feature loop nest (an scf.for directly in the vertex loop's body
/// or in a region of a statement there) runs on the group: Expanded (each
/// lane runs the body for the keys it holds), Flat (parallel over its own
/// iteration space), LaneZero (lane 0 runs it) or Redundant (every lane
/// runs it).
enum class NestMode { Expanded, Flat, LaneZero, Redundant };

struct NestPlan {
  /// The perfectly nested loops of constant trip count from the root.
  llvm::SmallVector<mlir::scf::ForOp, 4> loops;
  llvm::SmallVector<int64_t, 4> trips;
  unsigned depth = 0; // loops that may run in parallel
  NestMode mode = NestMode::LaneZero;
  unsigned p = 0;       // Expanded: loops bound to D's axes
  bool perChunk = true; // Expanded: once per chunk (else per key)
  /// Expanded per key with V > 1: loads read and stores written as vectors
  /// of V keys.
  llvm::SmallVector<mlir::memref::LoadOp, 2> vectorLoads;
  llvm::SmallVector<mlir::memref::StoreOp, 2> vectorStores;
};

struct KernelPlan {
  llvm::SmallVector<int64_t, 4> keyShape; // D
  int64_t n = 1, vec = 1, lanes = 1, chunks = 1;
  int64_t groups = 1, threads = 1;
  int64_t sharedBytes = 0;
  llvm::MapVector<mlir::Value, ArrayPlan> arrays;    // by alloca
  llvm::DenseMap<mlir::Operation *, NestPlan> nests; // by root scf.for
  /// Kernel arguments accessed as vectors (they must be aligned).
  llvm::SetVector<mlir::Value> vectorArgs;
  bool usesShuffles = false;
  /// Rows with more than `splitAbove` edges (a power of two; 0: none) run
  /// on a whole block: each group folds an equal share of the edges into
  /// its own reduction state, which group 0 merges in group order before it
  /// finishes the row. `splitState` is that state: register rows tagged
  /// `gnnk.fold` (sums, maxima, minima, the first-edge flag, the running
  /// maximum, sum and accumulator of an online softmax), in the order of
  /// `arrays`.
  struct SplitPart {
    mlir::Value array;
    FoldKind kind = FoldKind::Sum;
    int64_t reduction = -1;
    /// OnlineAcc: the OnlineMax and OnlineSum parts of its reduction.
    int maxPart = -1, sumPart = -1;
    /// Values per lane (the array's units, or its elements when replicated)
    /// and the first float of the part in a group's exchange row: value u
    /// of lane l at offset + u * lanes + l.
    int64_t units = 1, offset = 0;
  };
  int64_t splitAbove = 0;
  llvm::SmallVector<SplitPart, 4> splitState;
  /// Floats of one group's state in the block's exchange row.
  int64_t splitFloats() const {
    return splitState.empty()
               ? 0
               : splitState.back().offset + splitState.back().units * lanes;
  }

  bool isPrefixOfKeys(llvm::ArrayRef<int64_t> shape) const {
    return shape.size() <= keyShape.size() &&
           std::equal(shape.begin(), shape.end(), keyShape.begin());
  }
  /// Keys per prefix of `p` axes: prod(D[p:]).
  int64_t strideAfter(unsigned p) const {
    return productOf(llvm::ArrayRef<int64_t>(keyShape).drop_front(p));
  }
};

/// Registers per lane that scratch rows may take before the largest move to
/// shared memory.
constexpr int64_t kMaxLaneRegisters = 160;
/// Shared memory of one block (the default limit without opt-in).
constexpr int64_t kSharedBytesPerBlock = 48 * 1024;
constexpr int64_t kBlockThreads = 256;

/// Rows longer than this many threads of the block (times the block's
/// threads, rounded up to a power of two) are split over the block.
constexpr int64_t kSplitEdgesPerThread = 2;

/// The only row order the CUDA printer implements: rows in descending
/// degree order.
constexpr llvm::StringLiteral kDescendingDegree = "descending-degree";

/// Decides the mapping of `kernel` (a `gnnk.kernel` function). Errors on an
/// op of the kernel when it cannot run on a GPU group.
mlir::LogicalResult planKernel(mlir::func::FuncOp kernel, KernelPlan &plan);

/// Records the decisions of `plan` as the kernel's `gnnk.gpu` attribute.
void recordPlan(mlir::func::FuncOp kernel, const KernelPlan &plan);

/// Reads the kernel's `gnnk.gpu` attribute back into `plan` and derives
/// what follows from it. Errors on the kernel when the attribute does not
/// fit the kernel.
mlir::LogicalResult readPlan(mlir::func::FuncOp kernel, KernelPlan &plan);

} // namespace gnnc::gnnk::gpu

#endif // GNNC_DIALECT_GNNK_TRANSFORMS_GPUMAPPING_H
