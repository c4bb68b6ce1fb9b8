//===- DataParallel.cpp - gnnc-train --comm: data-parallel training -------===//
//
// Part of gnnc. Data-parallel mini-batch training of the two-block models
// over the ranks of a gnnc_dist communicator (threads, MPI, or NCCL for
// the gradients), the picture of docs/training.md "Data-parallel training":
//
//   * the graph's CSR by destination lives in two int64 tensors of the
//     continuous type on every node (one copy per node, built by the node's
//     first rank); the features, the labels and the learnable embeddings in
//     tensors of the type --memory chooses (features and labels are
//     read-only, so across nodes a continuous or chunked copy is made per
//     node; embeddings train, so they need one table: distributed);
//   * every step is one global batch: each rank takes its contiguous part of
//     it (DistributedItemSampler, SplitBatches), samples its blocks (keyed
//     by the global step, so the draws are those of one process with the
//     whole batch), fetches the input rows and the labels, and runs the
//     compiled F_train, the loss and F_backward on its part;
//   * the dense gradients, each scaled by the rank's share of the global
//     batch's seeds, are summed by one all-reduce (with the loss and the
//     seed count), so every rank takes the same Adam step on the same
//     parameters; embedding rows get their gradient (grad_x), scaled the
//     same way, through the sparse optimizer of gnnc_dist, on the rows
//     touched only;
//   * evaluation splits the validation and test vertices the same way and
//     sums the hits; checkpoints hold the parameters, Adam's moments and
//     step count, and the embedding table with its optimizer state.
//
// Every collective is called by every rank in the same order from this
// thread. The pipeline's workers only sample, and fetch features when the
// fetch needs no collective (continuous and chunked tensors); a distributed
// feature tensor is fetched inside next(), on this thread.
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include "BlockModels.h"

#include "gnnc/dist/Communicator.h"
#include "gnnc/dist/DistTensor.h"
#include "gnnc/dist/Embedding.h"
#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Loaders.h"
#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/Random.h"
#include "gnnc/runtime/Train.h"
#include "gnnc/sample/Pipeline.h"

#ifdef GNNC_TRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sys/resource.h>
#include <sys/stat.h>

namespace gnnc::train {
namespace {

using rt::Status;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

//===----------------------------------------------------------------------===//
// The dataset in distributed tensors
//===----------------------------------------------------------------------===//

/// Where the dataset lives: --data, or the bundled dataset's file.
Status datasetPath(const MiniBatchArgs &a, std::string &path, bool &bundled) {
  bundled = a.DataPath.empty();
  if (!bundled) {
    path = a.DataPath;
    return Status::success();
  }
  path = rt::dataDir() + "/" + a.Dataset;
  if (std::FILE *f = std::fopen((path + ".gnnd").c_str(), "rb")) {
    std::fclose(f);
    path += ".gnnd";
    return Status::success();
  }
  if (!isDirectory(path))
    return Status::error(fmt::format(
        "dataset '{}': neither {}.gnnd nor the folder {} exists (GNNC_DATA_DIR "
        "names the folder of the bundled datasets)",
        a.Dataset, path, path));
  return Status::success();
}

/// The graph, one copy per node: the CSR by destination in two int64
/// tensors of the continuous type on the node's communicator.
struct NodeGraph {
  std::unique_ptr<dist::Communicator> Node;
  std::unique_ptr<dist::DistTensor> InPtr, InSrc;
  sample::GraphView View;
};

/// The edges of a bundle (or of an OGB dataset already loaded whole) as an
/// rt::Graph, with one self-loop per vertex when `selfLoops`: the CSR by
/// destination, in the order rt::Graph gives (a destination's in-edges in
/// the order of the edge list, its self-loop last).
Status graphOf(const std::string &path, const rt::Dataset *whole,
               int64_t numNodes, bool selfLoops, rt::Graph &out) {
  rt::Dataset loaded;
  if (!whole) {
    GNNC_TRY(rt::loadDataset(path, loaded));
    whole = &loaded;
  }
  rt::Graph g;
  GNNC_TRY(rt::Graph::fromEdgeIndex(whole->EdgeSrc.data(),
                                    whole->EdgeDst.data(), whole->numEdges(),
                                    numNodes, numNodes, g)
               .withPrefix(path));
  if (!selfLoops) {
    out = std::move(g);
    return Status::success();
  }
  return rt::addSelfLoops(g, out);
}

/// The edge list of a .npy dataset folder, read in chunks: never more than
/// the CSR itself and a chunk in memory (a whole rt::Graph of 40M edges
/// holds five arrays of them).
class EdgeFile {
public:
  Status open(const std::string &folder, int64_t numNodes) {
    Path = folder + "/edge_index.npy";
    rt::DType dtype;
    std::vector<int64_t> shape;
    GNNC_TRY(rt::readNpyHeader(Path, dtype, shape));
    if (dtype != rt::DType::Int64 || shape.size() != 2 || shape[0] != 2)
      return Status::error(fmt::format(
          "{}: expected an int64 array of shape [2, E] (sources, then "
          "destinations), got {} with {} dimension(s)",
          Path, rt::dtypeName(dtype), shape.size()));
    NumEdges = shape[1];
    NumNodes = numNodes;
    File.reset(std::fopen(Path.c_str(), "rb"));
    if (!File || std::fseek(File.get(), 0, SEEK_END) != 0)
      return Status::error(fmt::format("{}: cannot open", Path));
    // The data ends the file (the header has checked its size).
    DataOffset = std::ftell(File.get()) - 2 * NumEdges * 8;
    return Status::success();
  }
  int64_t numEdges() const { return NumEdges; }

  /// Calls body(first, src, dst, n) for consecutive chunks of the edges,
  /// each index checked against the vertex count.
  template <typename Body> Status forEachChunk(Body body) {
    constexpr int64_t kChunk = 1 << 20;
    std::vector<int64_t> src(std::min(kChunk, NumEdges)),
        dst(std::min(kChunk, NumEdges));
    for (int64_t first = 0; first < NumEdges; first += kChunk) {
      int64_t n = std::min(kChunk, NumEdges - first);
      GNNC_TRY(read(first, n, src.data()));
      GNNC_TRY(read(NumEdges + first, n, dst.data()));
      for (int64_t i = 0; i < n; ++i)
        if (src[i] < 0 || src[i] >= NumNodes || dst[i] < 0 ||
            dst[i] >= NumNodes)
          return Status::error(fmt::format(
              "{}: edge {}: {} {} is outside [0, {})", Path, first + i,
              src[i] < 0 || src[i] >= NumNodes ? "source" : "destination",
              src[i] < 0 || src[i] >= NumNodes ? src[i] : dst[i], NumNodes));
      body(first, src.data(), dst.data(), n);
    }
    return Status::success();
  }

private:
  Status read(int64_t element, int64_t n, int64_t *out) {
    if (std::fseek(File.get(), DataOffset + element * 8, SEEK_SET) != 0 ||
        std::fread(out, 8, static_cast<size_t>(n), File.get()) !=
            static_cast<size_t>(n))
      return Status::error(fmt::format("{}: read failed", Path));
    return Status::success();
  }
  struct Closer {
    void operator()(std::FILE *f) const { std::fclose(f); }
  };
  std::string Path;
  std::unique_ptr<std::FILE, Closer> File;
  int64_t NumEdges = 0, NumNodes = 0;
  long DataOffset = 0;
};

/// Fills the CSR by destination of `edges` (plus one self-loop per vertex
/// at the end of its row when `selfLoops`) into inPtr (V + 1) and inSrc:
/// a stable counting sort by destination in two passes over the file, the
/// order rt::Graph and rt::addSelfLoops give.
Status fillCsr(EdgeFile &edges, int64_t numNodes, bool selfLoops,
               int64_t *inPtr, int64_t *inSrc) {
  std::fill(inPtr, inPtr + numNodes + 1, 0);
  GNNC_TRY(edges.forEachChunk(
      [&](int64_t, const int64_t *, const int64_t *dst, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          ++inPtr[dst[i] + 1];
      }));
  for (int64_t v = 0; v < numNodes; ++v)
    inPtr[v + 1] += inPtr[v] + (selfLoops ? 1 : 0);
  std::vector<int64_t> cursor(inPtr, inPtr + numNodes);
  GNNC_TRY(edges.forEachChunk(
      [&](int64_t, const int64_t *src, const int64_t *dst, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          inSrc[cursor[dst[i]]++] = src[i];
      }));
  if (selfLoops)
    for (int64_t v = 0; v < numNodes; ++v)
      inSrc[cursor[v]] = v;
  return Status::success();
}

/// Fills out.InPtr, out.InSrc and out.View; out.Node is the node's
/// communicator. The node's first rank builds the CSR, the others learn its
/// size, and whether it failed (every rank then fails).
Status loadGraph(const std::string &path, const rt::Dataset *whole,
                 int64_t numNodes, bool selfLoops, NodeGraph &out) {
  dist::Communicator &node = *out.Node;
  bool streamed = !whole && isDirectory(path);
  EdgeFile edges;
  rt::Graph g;
  int64_t header[2] = {0, 0}; // ok, CSR entries
  Status st;
  if (node.rank() == 0) {
    if (streamed) {
      st = edges.open(path, numNodes);
      header[1] = edges.numEdges() + (selfLoops ? numNodes : 0);
    } else {
      st = graphOf(path, whole, numNodes, selfLoops, g);
      header[1] = static_cast<int64_t>(g.inSrc().size());
    }
    header[0] = st.ok();
  }
  auto agree = [&](const char *what) -> Status {
    GNNC_TRY(node.broadcast(header, 2, rt::DType::Int64, 0));
    if (header[0])
      return Status::success();
    if (node.rank() == 0)
      return st;
    return Status::error(
        fmt::format("{}: {} failed on rank 0 of this node (its message says "
                    "why)",
                    path, what));
  };
  GNNC_TRY(agree("reading the graph"));
  dist::TensorOptions to;
  to.Type = dist::MemoryType::Continuous;
  to.Name = "graph.in_ptr";
  GNNC_TRY(dist::createTensor(node, numNodes + 1, 0, rt::DType::Int64, to,
                              out.InPtr));
  to.Name = "graph.in_src";
  GNNC_TRY(dist::createTensor(node, std::max<int64_t>(header[1], 1), 0,
                              rt::DType::Int64, to, out.InSrc));
  if (node.rank() == 0) {
    auto *inPtr = static_cast<int64_t *>(out.InPtr->globalData());
    auto *inSrc = static_cast<int64_t *>(out.InSrc->globalData());
    if (streamed) {
      st = fillCsr(edges, numNodes, selfLoops, inPtr, inSrc);
    } else {
      std::copy(g.inPtr().begin(), g.inPtr().end(), inPtr);
      std::copy(g.inSrc().begin(), g.inSrc().end(), inSrc);
    }
    header[0] = st.ok();
  }
  GNNC_TRY(agree("building the graph"));
  return sample::distGraphView(*out.InPtr, *out.InSrc, out.View);
}

//===----------------------------------------------------------------------===//
// Checkpoints and parameter files
//===----------------------------------------------------------------------===//

Status writeFloats(const std::string &path, const float *data, int64_t n) {
  rt::NpyArray a;
  a.dtype = rt::DType::Float32;
  a.shape = {n};
  a.bytes.resize(static_cast<size_t>(n) * sizeof(float));
  std::memcpy(a.bytes.data(), data, a.bytes.size());
  return rt::writeNpy(path, a);
}

Status readFloats(const std::string &path, float *data, int64_t n) {
  rt::NpyArray a;
  GNNC_TRY(rt::readNpyExpect(path, rt::DType::Float32, {n}, a));
  std::memcpy(data, a.bytes.data(), static_cast<size_t>(n) * sizeof(float));
  return Status::success();
}

/// A parameter path as a file name: "conv1.W_self" -> "conv1.W_self".
std::string fileName(const char *path) {
  std::string s(path);
  for (char &c : s)
    if (c == '/' || c == ' ')
      c = '_';
  return s;
}

/// What a checkpoint says about where training stopped.
struct CheckpointMeta {
  int Epoch = 0;          ///< the last finished epoch
  int64_t GlobalStep = 0; ///< steps taken
  uint64_t Seed = 0;
  std::string Model;
  int64_t BatchSize = 0, Embeddings = 0;
  int Ranks = 0;
};

std::string metaText(const CheckpointMeta &m) {
  return fmt::format("gnnc-train checkpoint 1\nepoch {}\nglobal_step {}\n"
                     "seed {}\nmodel {}\nbatch_size {}\nembeddings {}\n"
                     "ranks {}\n",
                     m.Epoch, m.GlobalStep, m.Seed, m.Model, m.BatchSize,
                     m.Embeddings, m.Ranks);
}

Status readMeta(const std::string &dir, CheckpointMeta &m) {
  std::ifstream in(dir + "/meta.txt");
  if (!in)
    return Status::error(
        fmt::format("--resume: no checkpoint in {} (no meta.txt)", dir));
  std::string magic;
  std::getline(in, magic);
  if (magic != "gnnc-train checkpoint 1")
    return Status::error(fmt::format(
        "--resume: {}/meta.txt is not a gnnc-train checkpoint", dir));
  std::string key;
  while (in >> key) {
    if (key == "epoch")
      in >> m.Epoch;
    else if (key == "global_step")
      in >> m.GlobalStep;
    else if (key == "seed")
      in >> m.Seed;
    else if (key == "model")
      in >> m.Model;
    else if (key == "batch_size")
      in >> m.BatchSize;
    else if (key == "embeddings")
      in >> m.Embeddings;
    else if (key == "ranks")
      in >> m.Ranks;
    else
      return Status::error(
          fmt::format("--resume: {}/meta.txt: unknown entry '{}'", dir, key));
    if (!in)
      return Status::error(
          fmt::format("--resume: {}/meta.txt: bad value of '{}'", dir, key));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// One rank's training
//===----------------------------------------------------------------------===//

/// Seconds per stage, summed over an epoch's steps on one rank.
struct StageTimes {
  double Sample = 0;  ///< item and neighbour sampling, padding, graphs
  double Fetch = 0;   ///< features, labels, embedding rows
  double Compute = 0; ///< F_train, the loss, F_backward
  double Comm = 0;    ///< the gradient all-reduce, embedding updates
  double Optim = 0;   ///< the Adam step
  double Wait = 0;    ///< waiting for the pipeline
  double Epoch = 0;   ///< the epoch's wall time (training only)
  double Eval = 0;    ///< the evaluation after it
  static constexpr int kCount = 8;
  double *data() { return &Sample; }
};
static_assert(sizeof(StageTimes) == StageTimes::kCount * sizeof(double));

/// One rank's data-parallel training run.
class Trainer {
public:
  Trainer(const MiniBatchArgs &a, dist::Communicator &world,
          dist::Communicator *gradComm)
      : A(a), D(a.Dist), World(world), GradComm(gradComm ? *gradComm : world) {}
  ~Trainer() {
#ifdef GNNC_TRAIN_HAVE_NCCL
    if (DeviceFlat)
      cudaFree(DeviceFlat);
#endif
  }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;
  Status run();

private:
  Status load();
  Status loadOgb();
  Status loadRows(dist::DistTensor &t, const std::string &array);
  Status makeLoader(std::vector<int64_t> items, int64_t batchSize, bool shuffle,
                    std::vector<int64_t> fanouts, uint64_t seed, bool fixedSize,
                    sample::DistributedItemSampler &itemsOut,
                    sample::NeighborSampler &samplerOut,
                    std::unique_ptr<sample::SeedSource> &seedsOut,
                    std::unique_ptr<sample::Pipeline> &pipeOut);
  Status inputRows(const sample::MiniBatch &b, const float *&x);
  Status labelsOf(const sample::MiniBatch &b, std::vector<int64_t> &out);
  void countRemote(const sample::MiniBatch &b);
  Status reportTotals();
  Status step(sample::PreparedBatch &pb, uint64_t stepSeed, double &lossSum,
              double &count, int64_t &hits);
  Status allReduceSum(float *data, size_t n);
  Status evaluate(double &val, double &test);
  Status saveCheckpoint(int epoch);
  Status restoreCheckpoint(CheckpointMeta &meta);
  Status saveParams(const std::string &dir);
  bool root() const { return World.rank() == 0; }

  const MiniBatchArgs &A;
  const DataParallelArgs &D;
  dist::Communicator &World;
  dist::Communicator &GradComm;

  std::string Path;
  bool Bundled = false;
  /// An OGB dataset folder, loaded whole by every rank (rank 0 first, which
  /// writes the loader's binary cache) and dropped once each rank has
  /// copied its rows; null for bundles and .npy folders, which each rank
  /// reads its own rows of.
  std::unique_ptr<rt::Dataset> Whole;
  int64_t NumNodes = 0, NumFeatures = 0, NumClasses = 0;
  const BlockModel *M = nullptr;
  NodeGraph Graph;
  dist::MemoryType Memory = dist::MemoryType::Distributed;
  /// The communicator of the read-only tensors: the world, or the node's
  /// ranks when a shared memory type spans several nodes.
  dist::Communicator *DataComm = nullptr;
  std::unique_ptr<dist::DistTensor> Features, Labels;
  std::unique_ptr<sample::FeatureSource> FeatureRows;
  std::unique_ptr<dist::Embedding> Emb;
  std::vector<uint8_t> TrainMask, ValMask, TestMask;

  Params P;
  std::unique_ptr<rt::Adam> Opt;
  std::vector<const float *> GradPtrs;
  int64_t NumParamElements = 0;
  std::vector<float> Flat; ///< gradients, then loss and seed count

  sample::DistributedItemSampler TrainItems, EvalItems;
  sample::NeighborSampler TrainSampler, EvalSampler;
  std::unique_ptr<sample::SeedSource> TrainSeeds, EvalSeeds;
  std::unique_ptr<sample::Pipeline> TrainPipe, EvalPipe;
  std::optional<sample::FixedSizeOptions> Fixed;

  /// Rows this rank read from other ranks' memory over the run: the
  /// features and labels of a distributed tensor, the embedding rows of a
  /// distributed table (gathered, and sent back as gradients); steps taken.
  int64_t RemoteFeatureRows = 0, RemoteLabelRows = 0, RemoteEmbRows = 0;
  int64_t Steps = 0;
  /// The largest proportional set size seen (KiB), sampled after loading
  /// and after every epoch's training (before its evaluation, whose blocks
  /// of full neighbourhoods can be much larger than a training batch's).
  int64_t PeakPssKiB = 0;
  void samplePss();
  GrowBuffer Ws, Saved, Logits, GradLogits, GradX, EmbRows;
  std::vector<int64_t> Ids, BatchLabels;
  std::vector<uint8_t> AllRows;
  StageTimes T;
  std::FILE *Trace = nullptr;
#ifdef GNNC_TRAIN_HAVE_NCCL
  float *DeviceFlat = nullptr;
#endif
};

Status Trainer::load() {
  GNNC_TRY(datasetPath(A, Path, Bundled));
  if (!dist::parseMemoryType(D.Memory, Memory))
    return Status::error(fmt::format(
        "--memory: expected continuous, chunked or distributed, got '{}'",
        D.Memory));
  if (isDirectory(Path) && !fs::exists(Path + "/x.npy") &&
      fs::exists(Path + "/raw")) {
    GNNC_TRY(loadOgb());
    NumNodes = Whole->NumNodes;
    NumFeatures = Whole->NumFeatures;
  } else {
    rt::DatasetArrayInfo info;
    GNNC_TRY(rt::datasetArrayInfo(Path, "features", info));
    NumNodes = info.Shape.at(0);
    NumFeatures = info.Shape.size() > 1 ? info.Shape[1] : 1;
  }
  if (NumFeatures == 0 && D.Embeddings == 0)
    return Status::error(fmt::format(
        "{}: the dataset has no features; learn embeddings (--embeddings D)",
        Path));

  // Read-only tensors: one copy per node when a shared type spans nodes.
  GNNC_TRY(World.splitByNode(Graph.Node));
  DataComm = Memory != dist::MemoryType::Distributed && World.numNodes() > 1
                 ? Graph.Node.get()
                 : &World;
  if (D.Embeddings > 0 && Memory != dist::MemoryType::Distributed &&
      World.numNodes() > 1)
    return Status::error(fmt::format(
        "--embeddings with --memory {}: the ranks span {} nodes, and a "
        "trained table must be one table (use --memory distributed)",
        D.Memory, World.numNodes()));

  // Labels first: they give the class count, which picks the model.
  // (The graph needs the model, GAT adds self-loops; the model needs the
  // class count.)
  dist::TensorOptions to;
  to.Type = Memory;
  to.Name = "labels";
  GNNC_TRY(
      dist::createTensor(*DataComm, NumNodes, 0, rt::DType::Int64, to, Labels));
  GNNC_TRY(loadRows(*Labels, "labels"));
  // (OGB's unlabelled vertices have label -1; no split holds them.)
  int64_t maxLabel = -1;
  const int64_t *lab = static_cast<const int64_t *>(Labels->localData());
  for (int64_t i = 0; i < Labels->localRows(); ++i)
    maxLabel = std::max(maxLabel, lab[i]);
  GNNC_TRY(World.allReduce(&maxLabel, &maxLabel, 1, rt::DType::Int64,
                           dist::ReduceOp::Max));
  NumClasses = maxLabel + 1;

  int64_t inDim = D.Embeddings > 0 ? D.Embeddings : NumFeatures;
  static const std::vector<BlockModel> models = blockModels();
  std::string known;
  for (const BlockModel &c : models) {
    if (c.Name == A.Model)
      known +=
          fmt::format("{}{}x{}", known.empty() ? "" : ", ", c.InDim, c.Classes);
    if (c.Name == A.Model && c.InDim == inDim && c.Classes == NumClasses)
      M = &c;
  }
  if (!M)
    return Status::error(fmt::format(
        "{}: no {} block model compiled for {} {} and {} classes (compiled: "
        "{} input columns x classes: {})",
        Path, A.Model, inDim,
        D.Embeddings > 0 ? "embedding columns" : "features", NumClasses,
        A.Model, known));

  GNNC_TRY(loadGraph(Path, Whole.get(), NumNodes, M->SelfLoops, Graph));

  if (D.Embeddings == 0) {
    to.Name = "features";
    GNNC_TRY(dist::createTensor(*DataComm, NumNodes, NumFeatures,
                                rt::DType::Float32, to, Features));
    GNNC_TRY(loadRows(*Features, "features"));
    // Row normalisation (PyG's NormalizeFeatures): by default for the
    // bundled Planetoid datasets only, whose features are 0/1 words.
    bool normalize = A.NormalizeGiven ? A.Normalize : Bundled;
    if (normalize)
      GNNC_TRY(rt::normalizeRows(static_cast<float *>(Features->localData()),
                                 Features->localRows(), NumFeatures));
    GNNC_TRY(DataComm->barrier());
    sample::FeatureCacheOptions cache;
    cache.Capacity = D.FeatureCache;
    GNNC_TRY(sample::distFeatures(*Features, cache, FeatureRows));
  } else {
    dist::OptimizerOptions oo;
    if (!dist::parseOptimizer(D.EmbOptimizer, oo.Kind))
      return Status::error(fmt::format(
          "--emb-optimizer: expected sgd, adam, adagrad or rmsprop, got '{}'",
          D.EmbOptimizer));
    oo.LearningRate = static_cast<float>(D.EmbLearningRate);
    to.Name = "embeddings";
    GNNC_TRY(dist::Embedding::create(World, NumNodes, D.Embeddings, to, oo,
                                     dist::CacheOptions{}, Emb));
    GNNC_TRY(Emb->initUniform(-0.1f, 0.1f, A.FirstSeed ^ 0xE3BEDull));
  }

  for (auto [name, mask] : {std::pair<const char *, std::vector<uint8_t> *>{
                                "train_mask", &TrainMask},
                            {"val_mask", &ValMask},
                            {"test_mask", &TestMask}}) {
    mask->assign(NumNodes, 0);
    if (Whole) {
      const std::vector<uint8_t> &from =
          std::string(name) == "train_mask" ? Whole->TrainMask
          : std::string(name) == "val_mask" ? Whole->ValMask
                                            : Whole->TestMask;
      *mask = from;
    } else {
      GNNC_TRY(rt::readDatasetRows(Path, name, 0, NumNodes, mask->data()));
    }
  }
  Whole.reset();
  return Status::success();
}

Status Trainer::loadOgb() {
  rt::OgbOptions oo;
  oo.AllowUnlabeled = true;
  oo.AddInverseEdges = D.OgbInverseEdges;
  oo.AllowNonFinite = A.AllowNonFinite;
  // Rank 0 first: it parses the files once and writes the loader's cache,
  // which the other ranks then read.
  Status st;
  Whole = std::make_unique<rt::Dataset>();
  if (root())
    st = rt::loadOgbNodeDataset(Path, *Whole, oo);
  int64_t ok = st.ok();
  GNNC_TRY(World.broadcast(&ok, 1, rt::DType::Int64, 0));
  if (!ok)
    return root() ? st
                  : Status::error(fmt::format(
                        "rank 0 could not load the OGB dataset {}", Path));
  if (!root())
    GNNC_TRY(rt::loadOgbNodeDataset(Path, *Whole, oo));
  return Status::success();
}

/// This rank's rows of `array` into `t`: from the file, or from the whole
/// dataset.
Status Trainer::loadRows(dist::DistTensor &t, const std::string &array) {
  if (!Whole)
    return t.loadDatasetArray(Path, array);
  size_t rowBytes = t.rowBytes();
  const char *from = array == "features"
                         ? reinterpret_cast<const char *>(Whole->X.data())
                         : reinterpret_cast<const char *>(Whole->Y.data());
  std::memcpy(t.localData(), from + t.localRowBegin() * rowBytes,
              static_cast<size_t>(t.localRows()) * rowBytes);
  return t.comm().barrier();
}

Status Trainer::makeLoader(std::vector<int64_t> items, int64_t batchSize,
                           bool shuffle, std::vector<int64_t> fanouts,
                           uint64_t seed, bool fixedSize,
                           sample::DistributedItemSampler &itemsOut,
                           sample::NeighborSampler &samplerOut,
                           std::unique_ptr<sample::SeedSource> &seedsOut,
                           std::unique_ptr<sample::Pipeline> &pipeOut) {
  sample::DistributedItemSamplerOptions io;
  io.BatchSize = batchSize;
  io.Shuffle = shuffle;
  io.Seed = seed;
  io.Split = sample::ItemSplit::SplitBatches;
  GNNC_TRY(sample::DistributedItemSampler::create(
      std::move(items), io, World.rank(), World.size(), itemsOut));
  sample::NeighborSamplerOptions so;
  so.Fanouts = std::move(fanouts);
  so.Kind = samplerKind(A.Sampler);
  so.Seed = seed;
  so.KeepEdgeIds = false;
  GNNC_TRY(sample::NeighborSampler::create(Graph.View, so, samplerOut));
  seedsOut = sample::seedsOf(itemsOut);
  sample::PipelineOptions po;
  // Workers must not call collectives beside this thread's: they sample,
  // and fetch only what needs no collective.
  bool collective = FeatureRows && FeatureRows->collective();
  po.Workers = collective ? 0 : A.Workers;
  po.Prefetch = A.Prefetch;
  po.BuildGraphs = true;
  if (fixedSize) {
    sample::FixedSizeOptions fso;
    fso.Policy = oversizeOf(A);
    if (A.FixedSize == "bound") {
      GNNC_TRY(sample::boundCapacities(samplerOut.options(), samplerOut.graph(),
                                       batchSize, fso.Caps));
    } else if (A.FixedSize == "fit") {
      sample::FitOptions fo;
      fo.FirstEpoch = 1;
      GNNC_TRY(sample::fitCapacities(samplerOut, *seedsOut, batchSize, fo,
                                     fso.Caps));
    } else {
      fso.Caps.Vertices = A.CapVertices;
      fso.Caps.Edges = A.CapEdges;
    }
    po.FixedSize = fso;
    Fixed = fso;
  }
  return sample::Pipeline::create(*seedsOut, &samplerOut, FeatureRows.get(),
                                  /*labels=*/nullptr, po, pipeOut);
}

/// The input rows of `b`: the fetched features, or the embedding rows of
/// its input vertices (zero rows for padding). Collective with embeddings.
Status Trainer::inputRows(const sample::MiniBatch &b, const float *&x) {
  if (!Emb) {
    x = b.Features.data();
    return Status::success();
  }
  const std::vector<int64_t> &inputs = b.inputIds();
  Ids.clear();
  for (int64_t v : inputs)
    if (v >= 0)
      Ids.push_back(v);
  int64_t dim = D.Embeddings;
  GNNC_TRY(EmbRows.reserve(inputs.size() * dim * sizeof(float) + 64));
  float *rows = EmbRows.floats();
  GNNC_TRY(Emb->gather(Ids.data(), Ids.size(), rows));
  if (Ids.size() != inputs.size()) {
    // Padded: spread the real rows to their positions, from the back.
    int64_t real = static_cast<int64_t>(Ids.size());
    for (int64_t i = static_cast<int64_t>(inputs.size()) - 1; i >= 0; --i) {
      float *dst = rows + i * dim;
      if (inputs[i] >= 0)
        std::memmove(dst, rows + --real * dim, dim * sizeof(float));
      else
        std::fill(dst, dst + dim, 0.0f);
    }
  }
  x = rows;
  return Status::success();
}

/// Counts the rows of `b` that come from other ranks' memory.
void Trainer::countRemote(const sample::MiniBatch &b) {
  ++Steps;
  auto remote = [&](const dist::DistTensor &t,
                    const std::vector<int64_t> &ids) {
    if (t.type() != dist::MemoryType::Distributed)
      return int64_t{0}; // mapped shared memory, on this node
    int64_t n = 0;
    for (int64_t v : ids)
      n += v >= 0 && t.partition().owner(v) != t.comm().rank();
    return n;
  };
  RemoteLabelRows += remote(*Labels, b.Seeds);
  if (Features)
    RemoteFeatureRows += remote(*Features, b.inputIds());
  if (Emb)
    RemoteEmbRows += remote(Emb->table(), b.inputIds());
}

/// The labels of `b`'s seeds (-1 for padding seeds). Collective.
Status Trainer::labelsOf(const sample::MiniBatch &b,
                         std::vector<int64_t> &out) {
  out.resize(b.Seeds.size());
  GNNC_TRY(Labels->gather(b.Seeds.data(), b.Seeds.size(), out.data()));
  if (b.Padded)
    out.resize(b.Blocks.back().NumDst, -1);
  return Status::success();
}

Status Trainer::allReduceSum(float *data, size_t n) {
#ifdef GNNC_TRAIN_HAVE_NCCL
  if (GradComm.deviceBuffers()) {
    auto check = [](cudaError_t e, const char *what) {
      return e == cudaSuccess
                 ? Status::success()
                 : Status::error(fmt::format("--comm nccl: {}: {}", what,
                                             cudaGetErrorString(e)));
    };
    if (!DeviceFlat)
      GNNC_TRY(check(
          cudaMalloc(reinterpret_cast<void **>(&DeviceFlat), n * sizeof(float)),
          "cudaMalloc"));
    GNNC_TRY(check(
        cudaMemcpy(DeviceFlat, data, n * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy"));
    GNNC_TRY(GradComm.allReduce(DeviceFlat, DeviceFlat, n, rt::DType::Float32,
                                dist::ReduceOp::Sum));
    return check(
        cudaMemcpy(data, DeviceFlat, n * sizeof(float), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  }
#endif
  return GradComm.allReduce(data, data, n, rt::DType::Float32,
                            dist::ReduceOp::Sum);
}

/// One training step on this rank's part of a global batch: forward, loss
/// and backward on its seeds, the all-reduce, Adam and the embedding
/// update. `lossSum` and `count` get the global batch's loss sum and seeds.
Status Trainer::step(sample::PreparedBatch &pb, uint64_t stepSeed,
                     double &lossSum, double &count, int64_t &hits) {
  const sample::MiniBatch &b = pb.Batch;
  auto t = Clock::now();
  const float *x = nullptr;
  GNNC_TRY(inputRows(b, x));
  GNNC_TRY(labelsOf(b, BatchLabels));
  T.Fetch += since(t);
  countRemote(b);

  t = Clock::now();
  int64_t real = static_cast<int64_t>(b.Seeds.size());
  double loss = 0;
  bool training = !D.NoDropout;
  if (real == 0) // nothing to learn here; F_backward writes them otherwise
    for (std::vector<float> &g : P.Grads)
      std::fill(g.begin(), g.end(), 0.0f);
  if (real > 0) {
    const rt::Graph &g1 = pb.Graphs[0], &g2 = pb.Graphs[1];
    int64_t n = g2.numDst();
    GNNC_TRY(Ws.reserve(
        std::max(M->TrainWorkspace(g1, g2), M->BackwardWorkspace(g1, g2))));
    GNNC_TRY(Saved.reserve(M->SavedBytes(g1, g2)));
    GNNC_TRY(Logits.reserve(n * M->Classes * sizeof(float)));
    GNNC_TRY(GradLogits.reserve(n * M->Classes * sizeof(float)));
    GNNC_TRY(M->Train(g1, g2, x, P.Ptrs.data(), Logits.floats(), Saved.data(),
                      Ws.data(), stepSeed, training)
                 .withPrefix(M->Entry));
    const uint8_t *mask = b.labelMask().data();
    if (!b.Padded) {
      AllRows.assign(n, 1);
      mask = AllRows.data();
    }
    GNNC_TRY(rt::softmaxCrossEntropy(Logits.floats(), n, M->Classes,
                                     BatchLabels.data(), mask, loss,
                                     GradLogits.floats())
                 .withPrefix("loss"));
    for (int64_t i = 0; i < n; ++i)
      if (mask[i] && argmax(Logits.floats() + i * M->Classes, M->Classes) ==
                         BatchLabels[i])
        ++hits;
    float *gradX = nullptr;
    if (Emb) {
      GNNC_TRY(GradX.reserve(g1.numSrc() * D.Embeddings * sizeof(float)));
      gradX = GradX.floats();
    }
    GNNC_TRY(M->Backward(g1, g2, x, Saved.data(), GradLogits.floats(),
                         P.Ptrs.data(), gradX, P.GradPtrs.data(), Ws.data(),
                         stepSeed, training)
                 .withPrefix(M->Entry));
  }
  T.Compute += since(t);

  // The loss is a mean over this rank's seeds: its gradient, times the
  // rank's seed count, summed over the ranks and divided by the global
  // count, is the gradient of the mean over the global batch.
  t = Clock::now();
  float *flat = Flat.data();
  for (int i = 0; i < M->NumParams; ++i) {
    const std::vector<float> &g = P.Grads[i];
    for (size_t j = 0; j < g.size(); ++j)
      *flat++ = g[j] * static_cast<float>(real);
  }
  flat[0] = static_cast<float>(loss * real);
  flat[1] = static_cast<float>(real);
  GNNC_TRY(allReduceSum(Flat.data(), Flat.size()));
  lossSum = flat[0];
  count = flat[1];
  T.Comm += since(t);
  if (count <= 0)
    return Status::success(); // an empty global batch: nothing to learn

  t = Clock::now();
  float inv = static_cast<float>(1.0 / count);
  flat = Flat.data();
  for (int i = 0; i < M->NumParams; ++i) {
    std::vector<float> &g = P.Grads[i];
    for (size_t j = 0; j < g.size(); ++j)
      g[j] = *flat++ * inv;
  }
  GNNC_TRY(Opt->step(GradPtrs).withPrefix("adam"));
  T.Optim += since(t);

  if (Emb) {
    // The rows of the input vertices, scaled like the dense gradients; the
    // sparse optimizer sums duplicates over ranks.
    t = Clock::now();
    const std::vector<int64_t> &inputs = b.inputIds();
    float scale = static_cast<float>(real / count);
    float *g = GradX.floats();
    int64_t dim = D.Embeddings, out = 0;
    for (size_t i = 0; i < inputs.size() && real > 0; ++i) {
      if (inputs[i] < 0)
        continue;
      float *dst = g + out * dim;
      const float *src = g + static_cast<int64_t>(i) * dim;
      for (int64_t c = 0; c < dim; ++c)
        dst[c] = src[c] * scale;
      ++out;
    }
    GNNC_TRY(Emb->applyGradients(Ids.data(), real > 0 ? Ids.size() : 0, g));
    T.Comm += since(t);
  }
  return Status::success();
}

Status Trainer::evaluate(double &val, double &test) {
  // Hits and counts: val, test.
  int64_t c[4] = {0, 0, 0, 0};
  GNNC_TRY(EvalPipe->startEpoch(0));
  while (true) {
    sample::PreparedBatch pb;
    bool done;
    GNNC_TRY(EvalPipe->next(pb, done));
    if (done)
      break;
    const sample::MiniBatch &b = pb.Batch;
    const float *x = nullptr;
    GNNC_TRY(inputRows(b, x));
    GNNC_TRY(labelsOf(b, BatchLabels));
    if (!b.Seeds.empty()) {
      const rt::Graph &g1 = pb.Graphs[0], &g2 = pb.Graphs[1];
      GNNC_TRY(Ws.reserve(M->InferWorkspace(g1, g2)));
      GNNC_TRY(Logits.reserve(g2.numDst() * M->Classes * sizeof(float)));
      GNNC_TRY(M->Infer(g1, g2, x, P.Ptrs.data(), Logits.floats(), Ws.data())
                   .withPrefix(M->Entry));
      for (size_t i = 0; i < b.Seeds.size(); ++i) {
        int64_t v = b.Seeds[i];
        bool hit = argmax(Logits.floats() + i * M->Classes, M->Classes) ==
                   BatchLabels[i];
        if (ValMask[v]) {
          c[0] += hit;
          ++c[1];
        }
        if (TestMask[v]) {
          c[2] += hit;
          ++c[3];
        }
      }
    }
    EvalPipe->recycle(std::move(pb));
  }
  GNNC_TRY(World.allReduce(c, c, 4, rt::DType::Int64, dist::ReduceOp::Sum));
  val = static_cast<double>(c[0]) / std::max<int64_t>(c[1], 1);
  test = static_cast<double>(c[2]) / std::max<int64_t>(c[3], 1);
  return Status::success();
}

Status Trainer::saveParams(const std::string &dir) {
  Status st;
  if (root()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      st = Status::error(fmt::format("{}: {}", dir, ec.message()));
    for (int i = 0; i < M->NumParams && st.ok(); ++i)
      st = writeFloats(dir + "/" + fileName(M->Paths[i]) + ".npy", P.Ptrs[i],
                       M->NumElements[i]);
  }
  // Every rank learns whether rank 0 succeeded before the collectives.
  int64_t ok = st.ok();
  GNNC_TRY(World.broadcast(&ok, 1, rt::DType::Int64, 0));
  if (!ok)
    return root() ? st : Status::error("rank 0 could not write the parameters");
  if (Emb) {
    GNNC_TRY(Emb->table().storeNpy(dir + "/embeddings.npy"));
    for (int i = 0; i < Emb->numStates(); ++i)
      GNNC_TRY(Emb->state(i).storeNpy(
          fmt::format("{}/embeddings.state{}.npy", dir, i)));
  }
  return World.barrier();
}

/// Writes the checkpoint of the state after `epoch` into D.Checkpoint: a
/// fresh folder next to it, renamed over it when complete, so a run killed
/// while saving leaves the previous checkpoint whole.
Status Trainer::saveCheckpoint(int epoch) {
  std::string dir = D.Checkpoint, tmp = D.Checkpoint + ".tmp";
  if (root()) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
  }
  GNNC_TRY(World.barrier());
  GNNC_TRY(saveParams(tmp));
  Status st;
  if (root()) {
    for (int i = 0; i < M->NumParams && st.ok(); ++i) {
      std::string base = tmp + "/" + fileName(M->Paths[i]);
      st = writeFloats(base + ".adam_m.npy", Opt->firstMoment(i).data(),
                       M->NumElements[i]);
      if (st.ok())
        st = writeFloats(base + ".adam_v.npy", Opt->secondMoment(i).data(),
                         M->NumElements[i]);
    }
    CheckpointMeta m;
    m.Epoch = epoch;
    m.GlobalStep = Opt->numSteps();
    m.Seed = A.FirstSeed;
    m.Model = M->Entry;
    m.BatchSize = A.BatchSize;
    m.Embeddings = D.Embeddings;
    m.Ranks = World.size();
    if (st.ok()) {
      std::ofstream out(tmp + "/meta.txt");
      out << metaText(m);
      if (!out)
        st = Status::error(fmt::format("{}/meta.txt: cannot write", tmp));
    }
    if (st.ok()) {
      std::error_code ec;
      fs::remove_all(dir + ".old", ec);
      if (fs::exists(dir))
        fs::rename(dir, dir + ".old", ec);
      if (!ec)
        fs::rename(tmp, dir, ec);
      if (!ec)
        fs::remove_all(dir + ".old", ec);
      if (ec)
        st = Status::error(fmt::format("checkpoint {}: {}", dir, ec.message()));
    }
  }
  int64_t ok = st.ok();
  GNNC_TRY(World.broadcast(&ok, 1, rt::DType::Int64, 0));
  if (!ok)
    return root() ? st : Status::error("rank 0 could not write a checkpoint");
  return Status::success();
}

Status Trainer::restoreCheckpoint(CheckpointMeta &meta) {
  const std::string &dir = D.Checkpoint;
  GNNC_TRY(readMeta(dir, meta));
  if (meta.Model != M->Entry || meta.Embeddings != D.Embeddings)
    return Status::error(fmt::format(
        "--resume: {} holds {} with embeddings {}, but this run trains {} "
        "with embeddings {}",
        dir, meta.Model, meta.Embeddings, M->Entry, D.Embeddings));
  if (meta.Seed != A.FirstSeed ||
      meta.BatchSize * meta.Ranks != A.BatchSize * World.size())
    return Status::error(fmt::format(
        "--resume: {} was trained with seed {} and global batch size {}; this "
        "run has seed {} and global batch size {}: the batches would differ",
        dir, meta.Seed, meta.BatchSize * meta.Ranks, A.FirstSeed,
        A.BatchSize * World.size()));
  std::vector<std::vector<float>> m(M->NumParams), v(M->NumParams);
  std::vector<const float *> mp, vp;
  for (int i = 0; i < M->NumParams; ++i) {
    std::string base = dir + "/" + fileName(M->Paths[i]);
    m[i].resize(M->NumElements[i]);
    v[i].resize(M->NumElements[i]);
    GNNC_TRY(readFloats(base + ".npy", P.Ptrs[i], M->NumElements[i]));
    GNNC_TRY(readFloats(base + ".adam_m.npy", m[i].data(), M->NumElements[i]));
    GNNC_TRY(readFloats(base + ".adam_v.npy", v[i].data(), M->NumElements[i]));
    mp.push_back(m[i].data());
    vp.push_back(v[i].data());
  }
  GNNC_TRY(Opt->restore(mp, vp, meta.GlobalStep));
  if (Emb) {
    GNNC_TRY(Emb->table().loadNpy(dir + "/embeddings.npy"));
    for (int i = 0; i < Emb->numStates(); ++i)
      GNNC_TRY(Emb->state(i).loadNpy(
          fmt::format("{}/embeddings.state{}.npy", dir, i)));
  }
  return Status::success();
}

/// This process' proportional set size in KiB (/proc/self/smaps_rollup):
/// its private pages plus its share of each shared page, so that the sum
/// over the processes of a node is the memory they use together (the
/// resident set counts a shared page in full in every process that maps
/// it). 0 where the kernel does not say.
int64_t proportionalSetKiB() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string key;
  int64_t kib = 0;
  while (in >> key) {
    if (key == "Pss:") {
      in >> kib;
      return kib;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

void Trainer::samplePss() {
  PeakPssKiB = std::max(PeakPssKiB, proportionalSetKiB());
}

/// Rank 0 prints the bytes communicated per step and the peak memory of
/// the ranks.
Status Trainer::reportTotals() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  // Summed over ranks: remote feature, label and embedding rows, steps;
  // then the peak resident memory (KiB) of each rank.
  std::vector<int64_t> sums = {RemoteFeatureRows, RemoteLabelRows,
                               RemoteEmbRows, Steps};
  GNNC_TRY(World.allReduce(sums.data(), sums.data(), sums.size(),
                           rt::DType::Int64, dist::ReduceOp::Sum));
  std::vector<int64_t> peaks(World.size()), pss(World.size());
  int64_t mine = static_cast<int64_t>(ru.ru_maxrss);
  GNNC_TRY(World.allGather(&mine, peaks.data(), 1, rt::DType::Int64));
  GNNC_TRY(World.allGather(&PeakPssKiB, pss.data(), 1, rt::DType::Int64));
  if (!root())
    return Status::success();
  double steps = static_cast<double>(std::max<int64_t>(sums[3], 1));
  double featureBytes = sums[0] * (NumFeatures * 4.0 + 8.0) / steps;
  double labelBytes = sums[1] * 16.0 / steps;
  double embBytes = sums[2] * (D.Embeddings * 8.0 + 16.0) / steps;
  double payload = (NumParamElements + 2) * 4.0;
  int p = World.size();
  double ring = p > 1 ? 2.0 * (p - 1) / p * payload : 0.0;
  fmt::print("== communication per step and rank (mean): features {:.0f} B "
             "({:.1f} remote rows), labels {:.0f} B, embeddings {:.0f} B, "
             "gradient all-reduce {:.0f} B payload ({:.0f} B sent by a ring "
             "all-reduce); {:.0f} B in all\n",
             featureBytes, sums[0] / steps, labelBytes, embBytes, payload, ring,
             featureBytes + labelBytes + embBytes + ring);
  std::string text;
  int64_t total = 0;
  for (int64_t kib : peaks) {
    text += fmt::format("{}{:.0f}", text.empty() ? "" : ", ", kib / 1024.0);
    total += kib;
  }
  fmt::print("== peak resident memory per rank: {} MiB ({:.0f} MiB in all)\n",
             text, total / 1024.0);
  // Thread ranks share one process: its memory once.
  bool threads = std::string(World.backend()) == "threads";
  text.clear();
  total = 0;
  for (int64_t kib : pss) {
    text += fmt::format("{}{:.0f}", text.empty() ? "" : ", ", kib / 1024.0);
    total += kib;
  }
  if (threads)
    total = pss.empty() ? 0 : pss[0];
  fmt::print("== proportional set size per rank, largest after loading and "
             "after each epoch's training: {} MiB ({:.0f} MiB {})\n",
             text, total / 1024.0,
             threads ? "for the process" : "in all: the ranks' memory");
  std::fflush(stdout);
  return Status::success();
}

/// The seed of global step `step` of `epoch`: a function of the run's seed
/// and the step, so a resumed run draws what the uninterrupted one drew.
uint64_t stepSeedOf(uint64_t seed, uint64_t epoch, int64_t step) {
  rt::SplitMix64 g(rt::fmix64(seed ^ 0x5EEDF00DCAFEull) ^
                   (epoch * 0x9E3779B97F4A7C15ull) ^
                   rt::fmix64(static_cast<uint64_t>(step) + 1));
  return g.next() | 1;
}

Status Trainer::run() {
  auto t0 = Clock::now();
  GNNC_TRY(load());
  double loadSeconds = since(t0);
  samplePss();
  GNNC_TRY(P.init(*M, A.FirstSeed));
  rt::AdamOptions ao;
  ao.LearningRate = A.LearningRate >= 0 ? A.LearningRate : M->LearningRate;
  ao.WeightDecay = A.WeightDecay >= 0 ? A.WeightDecay : M->WeightDecay;
  Opt = std::make_unique<rt::Adam>(ao);
  for (int i = 0; i < M->NumParams; ++i) {
    GNNC_TRY(Opt->addParam(P.Ptrs[i], M->NumElements[i]));
    GradPtrs.push_back(P.GradPtrs[i]);
    NumParamElements += M->NumElements[i];
  }
  Flat.assign(NumParamElements + 2, 0.0f);

  GNNC_TRY(makeLoader(sample::ItemSampler::itemsOfMask(TrainMask), A.BatchSize,
                      /*shuffle=*/true, A.Fanouts, A.FirstSeed,
                      !A.FixedSize.empty(), TrainItems, TrainSampler,
                      TrainSeeds, TrainPipe));
  std::vector<int64_t> evalItems;
  for (int64_t v = 0; v < NumNodes; ++v)
    if (ValMask[v] || TestMask[v])
      evalItems.push_back(v);
  GNNC_TRY(makeLoader(std::move(evalItems), A.EvalBatchSize,
                      /*shuffle=*/false, evalFanouts(A), A.FirstSeed + 1,
                      /*fixedSize=*/false, EvalItems, EvalSampler, EvalSeeds,
                      EvalPipe));

  int firstEpoch = 1;
  int64_t globalStep = 0;
  if (D.Resume) {
    CheckpointMeta meta;
    GNNC_TRY(restoreCheckpoint(meta));
    firstEpoch = meta.Epoch + 1;
    globalStep = meta.GlobalStep;
  }

  if (root()) {
    fmt::print(
        "== {} data-parallel on {}: {} ranks ({}, {} node(s)), {} nodes, {} "
        "edges{}, {} {}, {} classes; features, labels{} in {} tensors; "
        "batch size {} per rank ({} global), fanouts {}, {} steps per epoch; "
        "{} parameters all-reduced per step ({} bytes); loaded in {:.2f} s\n",
        M->Entry, Path, World.size(), World.backend(), World.numNodes(),
        NumNodes, Graph.View.numEdges(), M->SelfLoops ? " with self-loops" : "",
        D.Embeddings > 0 ? D.Embeddings : NumFeatures,
        D.Embeddings > 0 ? "embedding columns" : "features", NumClasses,
        D.Embeddings > 0 ? ", embeddings" : "", D.Memory, A.BatchSize,
        A.BatchSize * World.size(), joinFanouts(A.Fanouts),
        TrainItems.numBatches(), NumParamElements,
        (NumParamElements + 2) * sizeof(float), loadSeconds);
    if (Fixed)
      fmt::print("== fixed-size training batches (rank 0's capacities): {}\n",
                 fixedSizeText(*Fixed));
    if (D.Resume)
      fmt::print("== resumed from {} after epoch {} ({} steps)\n", D.Checkpoint,
                 firstEpoch - 1, globalStep);
    std::fflush(stdout);
  }
  if (root() && !D.Trace.empty()) {
    Trace = std::fopen(D.Trace.c_str(), D.Resume ? "a" : "w");
    if (!Trace)
      return Status::error(fmt::format("--trace: cannot open {}: {}", D.Trace,
                                       std::strerror(errno)));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> traceCloser(
      Trace, [](std::FILE *f) { return f ? std::fclose(f) : 0; });

  int killRank = -1, killEpoch = -1;
  int64_t killStep = -1;
  if (!D.KillAt.empty() && std::sscanf(D.KillAt.c_str(), "%d:%d:%" SCNd64,
                                       &killRank, &killEpoch, &killStep) != 3)
    return Status::error(
        fmt::format("--kill-at: expected RANK:EPOCH:STEP, got '{}'", D.KillAt));

  double firstLoss = -1, lastLoss = 0, val = 0, test = 0;
  double bestVal = -1, testAtBestVal = 0;
  int bestEpoch = 0;
  bool stop = false;
  for (int epoch = firstEpoch; epoch <= A.Epochs && !stop; ++epoch) {
    T = StageTimes{};
    auto te = Clock::now();
    TrainPipe->resetReport();
    GNNC_TRY(TrainPipe->startEpoch(static_cast<uint64_t>(epoch)));
    double epochLoss = 0, epochCount = 0;
    int64_t hits = 0, steps = 0;
    for (int64_t s = 0;; ++s) {
      if (D.MaxSteps > 0 && globalStep >= D.MaxSteps) {
        stop = true;
        break;
      }
      if (World.rank() == killRank && epoch == killEpoch && s == killStep) {
        fmt::print(stderr,
                   "gnnc-train: rank {} kills itself before step {} "
                   "of epoch {} (--kill-at)\n",
                   World.rank(), s, epoch);
        std::fflush(stderr);
        std::raise(SIGKILL);
      }
      auto tw = Clock::now();
      sample::PreparedBatch pb;
      bool done;
      GNNC_TRY(TrainPipe->next(pb, done));
      T.Wait += since(tw);
      if (done)
        break;
      double lossSum = 0, count = 0;
      GNNC_TRY(
          step(pb, stepSeedOf(A.FirstSeed, epoch, s), lossSum, count, hits));
      TrainPipe->recycle(std::move(pb));
      ++globalStep;
      ++steps;
      epochLoss += lossSum;
      epochCount += count;
      double loss = count > 0 ? lossSum / count : 0.0;
      if (!std::isfinite(loss))
        return Status::error(
            fmt::format("epoch {} step {}: the loss is not finite", epoch, s));
      if (Trace)
        fmt::print(Trace, "{} {} {} {:.9e}\n", epoch, s, globalStep, loss);
    }
    T.Epoch = since(te);
    samplePss(); // before stop(): the pipeline's batches are still held
    TrainPipe->stop();
    sample::PipelineReport r = TrainPipe->report();
    T.Sample = r.ItemSeconds + r.SampleSeconds + r.PadSeconds + r.GraphSeconds;
    T.Fetch += r.FetchSeconds;
    double loss = epochCount > 0 ? epochLoss / epochCount : 0.0;
    if (firstLoss < 0)
      firstLoss = loss;
    lastLoss = loss;
    int64_t trainHits = hits;
    GNNC_TRY(World.allReduce(&trainHits, &trainHits, 1, rt::DType::Int64,
                             dist::ReduceOp::Sum));
    bool lastEpoch = stop || epoch == A.Epochs;
    if (!D.NoEval &&
        ((D.EvalEvery > 0 && epoch % D.EvalEvery == 0) || lastEpoch)) {
      auto tv = Clock::now();
      GNNC_TRY(evaluate(val, test));
      T.Eval = since(tv);
      if (val > bestVal) {
        bestVal = val;
        testAtBestVal = test;
        bestEpoch = epoch;
      }
    }
    // The slowest rank's times.
    StageTimes worst = T;
    GNNC_TRY(World.allReduce(worst.data(), worst.data(), StageTimes::kCount,
                             rt::DType::Float64, dist::ReduceOp::Max));
    if (root() && !A.Quiet) {
      fmt::print(
          "  epoch {:3}  steps {:4}  loss {:.4f}  train {:.4f}  val "
          "{:.4f}  test {:.4f}  {:.0f} seeds/s  {:.2f} s (sample {:.2f}, "
          "fetch {:.2f}, compute {:.2f}, comm {:.2f}, optimizer {:.2f}, "
          "waiting {:.2f}; eval {:.2f})\n",
          epoch, steps, loss,
          static_cast<double>(trainHits) / std::max(epochCount, 1.0), val, test,
          epochCount / std::max(worst.Epoch, 1e-9), worst.Epoch, worst.Sample,
          worst.Fetch, worst.Compute, worst.Comm, worst.Optim, worst.Wait,
          worst.Eval);
      std::fflush(stdout);
    }
    if (root() && !A.Quiet && A.LogEvery > 0 && epoch % A.LogEvery == 0)
      fmt::print("    rank 0's pipeline: {} sampled edges, {} input vertices; "
                 "{}\n",
                 r.SampledEdges, r.InputVertices, r.summary());
    if (Trace)
      std::fflush(Trace);
    if (!D.Checkpoint.empty() && !stop)
      GNNC_TRY(saveCheckpoint(epoch));
  }
  if (!D.SaveParams.empty())
    GNNC_TRY(saveParams(D.SaveParams));
  GNNC_TRY(reportTotals());
  if (root()) {
    fmt::print("== done: {} global steps, loss {:.4f} -> {:.4f}, val {:.4f}, "
               "test {:.4f}; test {:.4f} at the best val {:.4f} (epoch {})\n",
               globalStep, firstLoss, lastLoss, val, test, testAtBestVal,
               bestVal, bestEpoch);
    if (A.CheckMinTestAcc >= 0 &&
        (!(lastLoss < firstLoss) || test < A.CheckMinTestAcc))
      return Status::error(fmt::format(
          "check failed: loss {:.4f} -> {:.4f}, test accuracy {:.4f} "
          "(minimum {:.4f})",
          firstLoss, lastLoss, test, A.CheckMinTestAcc));
    if (A.CheckMinTestAcc >= 0)
      fmt::print("check passed: loss fell, test accuracy {:.4f} >= {:.4f}\n",
                 test, A.CheckMinTestAcc);
  }
  return Status::success();
}

} // namespace

int runDataParallel(const MiniBatchArgs &a) {
  const DataParallelArgs &d = a.Dist;
  auto fail = [](const Status &st) {
    fmt::print(stderr, "gnnc-train: error: {}\n", st.message());
    std::fflush(stderr);
    return 1;
  };
  if (a.Fanouts.size() != 2 ||
      (!a.EvalFanouts.empty() && a.EvalFanouts.size() != 2))
    return fail(Status::error(
        "--comm: the block models have two layers, so --fanouts (and "
        "--eval-fanouts) need two values"));
  if (!a.FixedSize.empty() && oversizeOf(a) == sample::Oversize::Skip)
    return fail(Status::error(
        "--oversize skip with --comm: a rank would skip a step that its peers "
        "take; use trim or error"));
  if (!d.KillAt.empty() && d.Comm == "threads")
    return fail(Status::error("--kill-at needs --comm mpi or nccl (it kills "
                              "the process, which holds every thread rank)"));
  if (d.Resume && d.Checkpoint.empty())
    return fail(Status::error("--resume needs --checkpoint DIR"));

  if (d.Comm == "threads") {
    dist::CommOptions co;
    Status cs = dist::CommOptions::fromEnvironment(co);
    if (!cs.ok())
      return fail(cs);
    Status st = dist::runThreads(
        d.Ranks,
        [&](dist::Communicator &world) {
          Status s = Trainer(a, world, nullptr).run();
          if (!s.ok())
            return Status::error(
                fmt::format("rank {}: {}", world.rank(), s.message()));
          return s;
        },
        co);
    return st.ok() ? 0 : fail(st);
  }
  if (!dist::haveMpi())
    return fail(Status::error(fmt::format(
        "--comm {}: gnnc_dist was built without MPI (install libopenmpi-dev "
        "and rebuild)",
        d.Comm)));
  std::unique_ptr<dist::Communicator> world, nccl;
  Status st = dist::createMpiWorld(world);
  if (!st.ok())
    return fail(st);
  if (d.Comm == "nccl") {
#ifdef GNNC_TRAIN_HAVE_NCCL
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
      return fail(Status::error("--comm nccl: no CUDA device"));
    if (cudaSetDevice(world->localRank() % devices) != cudaSuccess)
      return fail(Status::error("--comm nccl: cudaSetDevice failed"));
    st = dist::createNccl(*world, nccl);
    if (!st.ok())
      return fail(st);
#else
    return fail(Status::error("--comm nccl: gnnc-train was built without "
                              "NCCL (gnnc::dist_cuda)"));
#endif
  }
  st = Trainer(a, *world, nccl.get()).run();
  if (!st.ok())
    return fail(
        Status::error(fmt::format("rank {}: {}", world->rank(), st.message())));
  return 0;
}

} // namespace gnnc::train
