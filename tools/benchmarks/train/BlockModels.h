//===- BlockModels.h - The two-block models of gnnc-train -----*- C++ -*-===//
//
// Part of gnnc. The typed entry points of the generated two-block models
// (dsl-examples/sage2_block.gnn, gat2_block.gnn, compiled for Cora) behind
// plain function pointers, their parameters and a growing workspace
// buffer: shared by gnnc-train --minibatch (MiniBatch.cpp) and
// gnnc-fixedsize-bench (tools/benchmarks/fixedsize).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TRAIN_BLOCKMODELS_H
#define GNNC_TRAIN_BLOCKMODELS_H

#include "MiniBatch.h"

#include "gnnc_train_gat2_citeseer/gat2_block.h"
#include "gnnc_train_gat2_cora/gat2_block.h"
#include "gnnc_train_gat2_emb32c7/gat2_block.h"
#include "gnnc_train_gat2_sbm/gat2_block.h"
#include "gnnc_train_sage2_citeseer/sage2_block.h"
#include "gnnc_train_sage2_cora/sage2_block.h"
#include "gnnc_train_sage2_emb32c7/sage2_block.h"
#include "gnnc_train_sage2_sbm/sage2_block.h"

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Invoke.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Train.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::train {

//===----------------------------------------------------------------------===//
// The two-block models
//===----------------------------------------------------------------------===//

/// A model over two chained blocks, through plain function pointers.
struct BlockModel {
  const char *Name, *Dataset, *Entry;
  int NumParams;
  const char *const *Paths;
  const char *const *Inits;
  const int *Ranks;
  const int64_t (*Shapes)[rt::kMaxRank];
  const int64_t *NumElements;
  int64_t InDim, Classes;
  double LearningRate, WeightDecay;
  /// Whether the graph gets one self-loop per vertex (GAT attends to the
  /// vertex itself; SAGE has its own self term).
  bool SelfLoops;
  rt::Status (*Infer)(const rt::Graph &, const rt::Graph &, const float *,
                      float *const *, float *, void *);
  std::size_t (*InferWorkspace)(const rt::Graph &, const rt::Graph &);
  /// F_train(g1, g2, x, params, out, saved, workspace, seed, training).
  rt::Status (*Train)(const rt::Graph &, const rt::Graph &, const float *,
                      float *const *, float *, void *, void *, uint64_t, bool);
  /// F_backward(g1, g2, x, saved, cotangent, params, grad_x (may be null),
  /// grads, workspace, seed, training).
  rt::Status (*Backward)(const rt::Graph &, const rt::Graph &, const float *,
                         void *, const float *, float *const *, float *,
                         float *const *, void *, uint64_t, bool);
  std::size_t (*TrainWorkspace)(const rt::Graph &, const rt::Graph &);
  std::size_t (*BackwardWorkspace)(const rt::Graph &, const rt::Graph &);
  std::size_t (*SavedBytes)(const rt::Graph &, const rt::Graph &);
};

template <typename P> P paramsOf(float *const *data) {
  P p{};
  for (int i = 0; i < P::kNumParams; ++i)
    p.set(i, data[i]);
  return p;
}

/// The typed entry points of one generated model (namespace NS, entry F).
#define GNNC_BLOCK_MODEL(NAME, DATASET, NS, F, IN, CLASSES, LR, WD, LOOPS)     \
  BlockModel {                                                                 \
    NAME, DATASET, #F, NS::F##_Params::kNumParams, NS::F##_Params::kPaths,     \
        NS::F##_Params::kInits, NS::F##_Params::kRanks,                        \
        NS::F##_Params::kShapes, NS::F##_Params::kNumElements, IN, CLASSES,    \
        LR, WD, LOOPS,                                                         \
        [](const rt::Graph &g1, const rt::Graph &g2, const float *x,           \
           float *const *params, float *out, void *ws) {                       \
          return NS::F(g1, g2, x, paramsOf<NS::F##_Params>(params), out, ws,   \
                       /*training=*/false, /*seed=*/0);                        \
        },                                                                     \
        [](const rt::Graph &g1, const rt::Graph &g2) {                         \
          return NS::F##_workspace_bytes(g1, g2);                              \
        },                                                                     \
        [](const rt::Graph &g1, const rt::Graph &g2, const float *x,           \
           float *const *params, float *out, void *saved, void *ws,            \
           uint64_t seed, bool training) {                                     \
          return NS::F##_train(g1, g2, x, paramsOf<NS::F##_Params>(params),    \
                               out, NS::F##_saved_layout(saved, g1, g2), ws,   \
                               training, seed);                                \
        },                                                                     \
        [](const rt::Graph &g1, const rt::Graph &g2, const float *x,           \
           void *saved, const float *cotangent, float *const *params,          \
           float *gradX, float *const *grads, void *ws, uint64_t seed,         \
           bool training) {                                                    \
          return NS::F##_backward(                                             \
              g1, g2, x, NS::F##_saved_layout(saved, g1, g2), cotangent,       \
              paramsOf<NS::F##_Params>(params), gradX,                         \
              paramsOf<NS::F##_Params>(grads), ws, training, seed);            \
        },                                                                     \
        [](const rt::Graph &g1, const rt::Graph &g2) {                         \
          return NS::F##_train_workspace_bytes(g1, g2);                        \
        },                                                                     \
        [](const rt::Graph &g1, const rt::Graph &g2) {                         \
          return NS::F##_backward_workspace_bytes(g1, g2);                     \
        },                                                                     \
        [](const rt::Graph &g1, const rt::Graph &g2) {                         \
          return NS::F##_saved_bytes(g1, g2);                                  \
        },                                                                     \
  }

/// Every compiled block model. The input width and the classes are
/// compile-time sizes, so there is one module per (model, width, classes):
/// Cora's and Citeseer's features, the generated planted-partition graphs'
/// (gnnc-gen-sbm's defaults: 64 features, 16 classes) and 32-wide
/// learnable embeddings (--embeddings 32) for 7 classes.
inline std::vector<BlockModel> blockModels() {
  return {
      GNNC_BLOCK_MODEL("sage", "cora", sage2_cora, GraphSAGE2Block, 1433, 7,
                       0.01, 5e-4, false),
      GNNC_BLOCK_MODEL("gat", "cora", gat2_cora, GAT2Block, 1433, 7, 0.005,
                       5e-4, true),
      GNNC_BLOCK_MODEL("sage", "citeseer", sage2_citeseer, GraphSAGE2Block,
                       3703, 6, 0.01, 5e-4, false),
      GNNC_BLOCK_MODEL("gat", "citeseer", gat2_citeseer, GAT2Block, 3703, 6,
                       0.005, 5e-4, true),
      GNNC_BLOCK_MODEL("sage", "sbm", sage2_sbm, GraphSAGE2Block, 64, 16, 0.01,
                       5e-4, false),
      GNNC_BLOCK_MODEL("gat", "sbm", gat2_sbm, GAT2Block, 64, 16, 0.005, 5e-4,
                       true),
      GNNC_BLOCK_MODEL("sage", "embeddings", sage2_emb32c7, GraphSAGE2Block, 32,
                       7, 0.01, 5e-4, false),
      GNNC_BLOCK_MODEL("gat", "embeddings", gat2_emb32c7, GAT2Block, 32, 7,
                       0.005, 5e-4, true),
  };
}

/// A 64-byte aligned buffer that grows to the largest size asked for.
class GrowBuffer {
public:
  rt::Status reserve(std::size_t bytes) {
    if (bytes <= Buffer.size() && Buffer.data())
      return rt::Status::success();
    return rt::HostBuffer::allocate(std::max<std::size_t>(bytes, 64), Buffer);
  }
  void *data() const { return Buffer.data(); }
  float *floats() const { return static_cast<float *>(Buffer.data()); }

private:
  rt::HostBuffer Buffer;
};

/// The model's parameters and their gradients, initialised from `seed` as
/// the .gnn declares them.
struct Params {
  std::vector<std::vector<float>> Data, Grads;
  std::vector<float *> Ptrs, GradPtrs;

  rt::Status init(const BlockModel &m, uint64_t seed) {
    Data.assign(m.NumParams, {});
    Grads.assign(m.NumParams, {});
    Ptrs.assign(m.NumParams, nullptr);
    GradPtrs.assign(m.NumParams, nullptr);
    for (int i = 0; i < m.NumParams; ++i) {
      Data[i].assign(m.NumElements[i], 0.0f);
      Grads[i].assign(m.NumElements[i], 0.0f);
      Ptrs[i] = Data[i].data();
      GradPtrs[i] = Grads[i].data();
      std::string init;
      double arg;
      splitInit(m.Inits[i], init, arg);
      GNNC_TRY(rt::initParam(init, arg, m.Shapes[i],
                             static_cast<size_t>(m.Ranks[i]), Ptrs[i],
                             rt::paramSeed(seed, m.Paths[i]))
                   .withPrefix(std::string("initialising ") + m.Paths[i]));
    }
    return rt::Status::success();
  }
};

} // namespace gnnc::train

#endif // GNNC_TRAIN_BLOCKMODELS_H
