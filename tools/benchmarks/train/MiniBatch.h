//===- MiniBatch.h - gnnc-train --minibatch -------------------------------===//
//
// Part of gnnc. Mini-batch training of the two-block examples
// (dsl-examples/sage2_block.gnn, gat2_block.gnn) through gnnc_sample's
// pipeline: seeds from the training vertices, one sampled Block per layer,
// the features of the input vertices, then the compiled F_train /
// F_backward on the blocks and an Adam step per batch. Evaluation runs the
// inference entry point on full-neighbourhood blocks of the validation and
// test vertices (or sampled ones, --eval-fanouts). With --fixed-size or
// --capacities, every training batch is padded to fixed capacities and the
// loss runs over its real seeds only.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TRAIN_MINIBATCH_H
#define GNNC_TRAIN_MINIBATCH_H

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/sample/Pipeline.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace gnnc::train {

/// A full-graph model's inference entry point and parameter table: the
/// reference that --check-blocks compares the block model with.
struct FullModel {
  int NumParams = 0;
  const char *const *Paths = nullptr;
  const int64_t *NumElements = nullptr;
  rt::Status (*Forward)(const rt::Graph &g, const float *x,
                        float *const *params, float *out,
                        void *workspace) = nullptr;
  std::size_t (*Workspace)(const rt::Graph &g) = nullptr;
};

/// The settings of data-parallel training (--comm, DataParallel.h).
struct DataParallelArgs {
  /// "" (one process, runMiniBatch), "threads", "mpi" or "nccl".
  std::string Comm;
  /// Ranks of --comm threads.
  int Ranks = 2;
  /// Memory type of the features, labels and embeddings: "continuous",
  /// "chunked" or "distributed" (gnnc/dist/DistTensor.h).
  std::string Memory = "distributed";
  /// Rows of other ranks cached per rank by the feature fetch (0: none).
  int64_t FeatureCache = 0;
  /// Learnable node embeddings of this width instead of the features
  /// (0: the dataset's features).
  int64_t Embeddings = 0;
  std::string EmbOptimizer = "adam";
  double EmbLearningRate = 0.01;
  /// An OGB dataset (--data): add the reverse of every edge, as the ogb
  /// package does for datasets whose add_inverse_edge is True.
  bool OgbInverseEdges = false;
  /// Stop after this many global steps (0: train every epoch).
  int64_t MaxSteps = 0;
  /// Dropout off in training (F_train and F_backward with training =
  /// false): its masks are keyed by positions in a batch, which differ
  /// between a batch split over ranks and the same batch on one rank.
  bool NoDropout = false;
  /// Evaluate every this many epochs (0: only after the last); NoEval:
  /// never.
  int EvalEvery = 1;
  bool NoEval = false;
  /// Rank 0 appends one line per global step: epoch, step, loss.
  std::string Trace;
  /// The final parameters (and the embedding table) as .npy files here.
  std::string SaveParams;
  /// Checkpoints after every epoch into this folder; --resume starts from
  /// the one there.
  std::string Checkpoint;
  bool Resume = false;
  /// Fault injection: "RANK:EPOCH:STEP" kills that rank (SIGKILL) before
  /// the step.
  std::string KillAt;
};

struct MiniBatchArgs {
  std::string Model = "sage", Dataset = "cora", DataPath;
  std::vector<int64_t> Fanouts = {25, 10};
  /// Fanouts of evaluation; empty: every neighbour (-1 per layer).
  std::vector<int64_t> EvalFanouts;
  std::string Sampler = "neighbor"; // or "labor"
  int64_t BatchSize = 256, EvalBatchSize = 1024;
  int Workers = 1, Prefetch = 4;
  int Epochs = 200, Seeds = 1, LogEvery = 1;
  uint64_t FirstSeed = 0;
  bool Quiet = false, Normalize = true, AllowNonFinite = false;
  double LearningRate = -1, WeightDecay = -1; // < 0: the model's default
  double CheckMinTestAcc = -1;
  /// Instead of training: compare the block model on full-neighbourhood
  /// blocks with the full-graph model on the seeds, with the same
  /// parameters, and fail above this relative difference.
  bool CheckBlocks = false;
  double CheckTolerance = 1e-4;
  /// Fixed-size training batches (gnnc/sample/FixedSize.h): "" (off),
  /// "bound" (boundCapacities), "fit" (fitCapacities) or "explicit"
  /// (CapVertices and CapEdges, from --capacities).
  std::string FixedSize;
  std::vector<int64_t> CapVertices, CapEdges;
  /// "error", "skip" or "trim"; empty: error for bound and explicit
  /// capacities, trim for fit.
  std::string Oversize;
  /// Whether --normalize or --no-normalize was given (data-parallel
  /// training normalises the bundled datasets only, unless told).
  bool NormalizeGiven = false;
  /// Data-parallel training (DataParallel.cpp): set when --comm is given.
  DataParallelArgs Dist;
};

/// The initialiser name and its argument of a parameter's `kInits` entry:
/// "glorot" -> ("glorot", 0), "normal(0.1)" or "normal(std=0.1)" ->
/// ("normal", 0.1).
inline void splitInit(std::string_view text, std::string &name, double &arg) {
  arg = 0.0;
  size_t open = text.find('(');
  name = std::string(text.substr(0, open));
  if (open == std::string_view::npos)
    return;
  std::string inside(text.substr(open + 1));
  size_t eq = inside.find('=');
  if (eq != std::string::npos)
    inside = inside.substr(eq + 1);
  arg = std::strtod(inside.c_str(), nullptr);
}

/// The mean of the last (up to) five losses: dropout makes single epochs
/// noisy.
inline double recentLoss(const std::vector<double> &losses) {
  size_t tail = losses.size() < 5 ? losses.size() : 5;
  double sum = 0.0;
  for (size_t i = losses.size() - tail; i < losses.size(); ++i)
    sum += losses[i];
  return tail ? sum / static_cast<double>(tail) : 0.0;
}

/// Mean and (population) standard deviation of `xs` (not empty).
inline void meanStd(const std::vector<double> &xs, double &mean, double &sd) {
  mean = 0.0;
  for (double x : xs)
    mean += x;
  mean /= static_cast<double>(xs.size());
  double var = 0.0;
  for (double x : xs)
    var += (x - mean) * (x - mean);
  sd = std::sqrt(var / static_cast<double>(xs.size()));
}

/// Runs --minibatch; the process's exit status. `full` is the full-graph
/// model of the same architecture and dataset (for --check-blocks), or
/// null.
int runMiniBatch(const MiniBatchArgs &args, const FullModel *full);

/// Runs data-parallel mini-batch training (--comm, DataParallel.cpp); the
/// process's exit status.
int runDataParallel(const MiniBatchArgs &args);

/// Shared by runMiniBatch and runDataParallel.
sample::SamplerKind samplerKind(const std::string &name);
/// The oversize policy of `a` (its default depends on the capacities).
sample::Oversize oversizeOf(const MiniBatchArgs &a);
const char *oversizeName(sample::Oversize o);
/// "vertices [...], edges [...], oversize P".
std::string fixedSizeText(const sample::FixedSizeOptions &fs);
/// The padding statistics of a report of fixed-size batches.
std::string paddingText(const sample::PipelineReport &r);
/// "25,10".
std::string joinFanouts(const std::vector<int64_t> &f);
/// The fanouts of evaluation: --eval-fanouts, or -1 per layer.
std::vector<int64_t> evalFanouts(const MiniBatchArgs &a);
/// The index of the largest of row[0..n).
int64_t argmax(const float *row, int64_t n);

/// The names runMiniBatch knows ("sage", "gat") for the usage text.
const char *miniBatchModels();

} // namespace gnnc::train

#endif // GNNC_TRAIN_MINIBATCH_H
