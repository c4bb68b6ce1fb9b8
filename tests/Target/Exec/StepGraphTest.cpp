//===- StepGraphTest.cpp - Training steps captured as CUDA graphs ---------===//
//
// Part of gnnc. A training step of generated CUDA over two chained blocks of
// fixed sizes (Block[N0, N1] then Block[N1, N2]), captured once with
// rt::cuda::StepGraph and replayed for several batches of the same sizes,
// each copied into the same device memory first (DeviceGraph::assign,
// DeviceTensor::assign): the parameters, outputs and gradients after every
// replayed step are bit-identical to those of the same steps run eagerly
// (same kernels, same order). Also: steps queued on two streams at once
// agree bit for bit with each other and with the same steps on one stream
// (each stream has a cuBLAS workspace of its own); DeviceGraph::assign
// against upload, and steps a capture cannot record (an allocation, a
// synchronisation), which fail with the CUDA error.
//
// In gnnc-cuda-emu-tests the host emulation records and replays the
// captured work (tests/Target/Exec/emu); in gnnc-cuda-tests the CUDA
// runtime does, and every test skips without a device.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include "small_gat2_block_GAT2Block/gat2_block.h"
#include "small_sage2_block_GraphSAGE2Block/sage2_block.h"

#include "gnnc/runtime/cuda/DeviceOps.h"
#include "gnnc/runtime/cuda/StepGraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace gnnc;
namespace cu = gnnc::rt::cuda;

namespace {

#define SKIP_WITHOUT_DEVICE()                                                  \
  do {                                                                         \
    if (!testing_support::CudaBackend::available())                            \
      GTEST_SKIP() << "no CUDA device";                                        \
  } while (0)

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    rt::Status s_ = (expr);                                                    \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.message();                     \
  } while (0)

/// The sizes of every batch: N0 sources of block 1, N1 = its destinations
/// = the sources of block 2, N2 seeds; E1 and E2 edges.
constexpr int64_t kN0 = 23, kN1 = 11, kN2 = 5, kE1 = 40, kE2 = 17;

/// A block of `numSrc` sources (its `numDst` destinations first) and
/// `numEdges` random edges in destination order.
rt::Graph randomBlock(std::mt19937_64 &rng, int64_t numSrc, int64_t numDst,
                      int64_t numEdges) {
  std::uniform_int_distribution<int64_t> src(0, numSrc - 1), dst(0, numDst - 1);
  std::vector<int64_t> es(numEdges), ed(numEdges);
  for (int64_t e = 0; e < numEdges; ++e)
    ed[e] = dst(rng);
  std::sort(ed.begin(), ed.end());
  for (int64_t e = 0; e < numEdges; ++e)
    es[e] = src(rng);
  rt::Graph g;
  rt::Status s = rt::Graph::fromEdgeIndex(es.data(), ed.data(), numEdges,
                                          numSrc, numDst, g);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

std::vector<float> randomFloats(std::mt19937_64 &rng, int64_t n, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  return v;
}

/// One mini-batch: the two blocks, the features of block 1's sources and
/// the target of the seeds.
struct Batch {
  rt::Graph g1, g2;
  std::vector<float> x, target;
};

Batch randomBatch(uint64_t seed, int64_t inDim, int64_t classes) {
  std::mt19937_64 rng(seed);
  Batch b;
  b.g1 = randomBlock(rng, kN0, kN1, kE1);
  b.g2 = randomBlock(rng, kN1, kN2, kE2);
  b.x = randomFloats(rng, kN0 * inDim, 1.0f);
  b.target = randomFloats(rng, kN2 * classes, 1.0f);
  return b;
}

std::vector<float> download(const float *device, int64_t n,
                            cudaStream_t stream) {
  std::vector<float> host(n);
  EXPECT_EQ(cudaMemcpyAsync(host.data(), device, n * sizeof(float),
                            cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  return host;
}

template <typename T> std::vector<T> downloadArray(const T *device, int64_t n) {
  std::vector<T> host(n);
  if (n) {
    EXPECT_EQ(
        cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost),
        cudaSuccess);
  }
  return host;
}

/// A stream of the test's own.
struct Stream {
  Stream() { EXPECT_EQ(cudaStreamCreate(&s), cudaSuccess); }
  ~Stream() { (void)cudaStreamDestroy(s); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  cudaStream_t s = nullptr;
};

//===----------------------------------------------------------------------===//
// The training step of a two-block model
//===----------------------------------------------------------------------===//

/// The entry points of a generated two-block model compiled with
/// --training.
template <typename P, typename S> struct Model {
  using Graph = cu::DeviceGraph;
  int64_t inDim, classes;
  rt::Status (*train)(const Graph &, const Graph &, const float *, const P &,
                      float *, const S &, void *, bool, uint64_t, cudaStream_t);
  std::size_t (*trainWorkspace)(const Graph &, const Graph &);
  rt::Status (*backward)(const Graph &, const Graph &, const float *, const S &,
                         const float *, const P &, float *, const P &, void *,
                         bool, uint64_t, cudaStream_t);
  std::size_t (*backwardWorkspace)(const Graph &, const Graph &);
  std::size_t (*savedBytes)(const Graph &, const Graph &);
  S (*savedLayout)(void *, const Graph &, const Graph &);
};

/// Everything a step reads and writes, allocated once for the batch sizes:
/// the device graphs and tensors of a batch, the parameters and their
/// gradients (each in one buffer), the saved values, the workspaces.
template <typename P, typename S> struct Trainer {
  const Model<P, S> &m;
  cudaStream_t stream;
  cu::DeviceGraph g1, g2;
  cu::DeviceTensor x, target, out, cotangent, gradX, rate;
  cu::DeviceBuffer paramBuf, gradBuf, update, saved, wsTrain, wsBackward;
  P params{}, grads{};
  S savedLayout{};
  std::size_t paramFloats = 0;
  /// The dropout seed of every step: host values are those of the capture
  /// in every replay.
  static constexpr uint64_t kSeed = 7;

  Trainer(const Model<P, S> &model, cudaStream_t s) : m(model), stream(s) {}

  static std::size_t alignedFloats(int64_t n) { return (n + 63) / 64 * 64; }

  /// Uploads the first batch and allocates the rest; the parameters start
  /// from `init` (P::kNumParams tensors, in order, concatenated).
  rt::Status setUp(const Batch &first, const std::vector<float> &init) {
    GNNC_TRY(cu::DeviceGraph::upload(first.g1, stream, g1));
    GNNC_TRY(cu::DeviceGraph::upload(first.g2, stream, g2));
    GNNC_TRY(
        cu::DeviceTensor::upload(first.x.data(), {kN0, m.inDim}, stream, x));
    GNNC_TRY(cu::DeviceTensor::upload(first.target.data(), {kN2, m.classes},
                                      stream, target));
    GNNC_TRY(cu::DeviceTensor::allocate({kN2, m.classes}, out));
    GNNC_TRY(cu::DeviceTensor::allocate({kN2, m.classes}, cotangent));
    GNNC_TRY(cu::DeviceTensor::allocate({kN0, m.inDim}, gradX));
    const float lr = 0.125f;
    GNNC_TRY(cu::DeviceTensor::upload(&lr, {1}, stream, rate));
    for (int i = 0; i < P::kNumParams; ++i)
      paramFloats += alignedFloats(P::kNumElements[i]);
    GNNC_TRY(cu::DeviceBuffer::allocate(paramFloats * sizeof(float), paramBuf));
    GNNC_TRY(cu::DeviceBuffer::allocate(paramFloats * sizeof(float), gradBuf));
    GNNC_TRY(cu::DeviceBuffer::allocate(paramFloats * sizeof(float), update));
    std::vector<float> hostParams(paramFloats, 0.0f);
    std::size_t at = 0, from = 0;
    for (int i = 0; i < P::kNumParams; ++i) {
      params.set(i, static_cast<float *>(paramBuf.data()) + at);
      grads.set(i, static_cast<float *>(gradBuf.data()) + at);
      std::copy_n(init.begin() + from, P::kNumElements[i],
                  hostParams.begin() + at);
      from += P::kNumElements[i];
      at += alignedFloats(P::kNumElements[i]);
    }
    GNNC_CUDA_CHECK(cudaMemcpyAsync(paramBuf.data(), hostParams.data(),
                                    paramFloats * sizeof(float),
                                    cudaMemcpyHostToDevice, stream));
    GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
    GNNC_TRY(cu::DeviceBuffer::allocate(m.savedBytes(g1, g2), saved));
    savedLayout = m.savedLayout(saved.data(), g1, g2);
    GNNC_TRY(cu::DeviceBuffer::allocate(m.trainWorkspace(g1, g2), wsTrain));
    GNNC_TRY(
        cu::DeviceBuffer::allocate(m.backwardWorkspace(g1, g2), wsBackward));
    return rt::Status::success();
  }

  /// One step on `s`: the forward that saves, the gradient of
  /// 0.5 * |out - target|^2, the backward, and SGD (params -= rate * grads),
  /// all queued on `s`.
  rt::Status step(cudaStream_t s) {
    GNNC_TRY(m.train(g1, g2, x.data(), params, out.data(), savedLayout,
                     wsTrain.data(), true, kSeed, s));
    rt::Shape shapeOut{kN2, m.classes};
    GNNC_TRY(cu::sub(out.data(), shapeOut, target.data(), shapeOut,
                     cotangent.data(), shapeOut, s));
    GNNC_TRY(m.backward(g1, g2, x.data(), savedLayout, cotangent.data(), params,
                        gradX.data(), grads, wsBackward.data(), true, kSeed,
                        s));
    int64_t n = static_cast<int64_t>(paramFloats);
    float *p = static_cast<float *>(paramBuf.data());
    float *g = static_cast<float *>(gradBuf.data());
    float *u = static_cast<float *>(update.data());
    GNNC_TRY(cu::mul(g, rt::Shape{n}, rate.data(), rt::Shape{1}, u,
                     rt::Shape{n}, s));
    return cu::sub(p, rt::Shape{n}, u, rt::Shape{n}, p, rt::Shape{n}, s);
  }

  /// What a step leaves: parameters, gradients, output and input gradient.
  struct Result {
    std::vector<float> params, grads, out, gradX;
  };
  Result result() {
    Result r;
    r.params = download(static_cast<const float *>(paramBuf.data()),
                        static_cast<int64_t>(paramFloats), stream);
    r.grads = download(static_cast<const float *>(gradBuf.data()),
                       static_cast<int64_t>(paramFloats), stream);
    r.out = download(out.data(), out.numElements(), stream);
    r.gradX = download(gradX.data(), gradX.numElements(), stream);
    return r;
  }
};

/// Zeroes the padding between parameters, which no step writes, so that
/// results compare as whole buffers.
template <typename P, typename S> void zeroPadding(Trainer<P, S> &t) {
  ASSERT_EQ(cudaMemsetAsync(t.gradBuf.data(), 0, t.paramFloats * sizeof(float),
                            t.stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(t.update.data(), 0, t.paramFloats * sizeof(float),
                            t.stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(t.stream), cudaSuccess);
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

/// Runs `batches` eagerly (each uploaded afresh) and as replays of one
/// captured step (each assigned into the memory of the capture), from the
/// same parameters, and compares every step's results bit for bit.
template <typename P, typename S>
void checkReplayMatchesEager(const Model<P, S> &m, int numBatches) {
  std::vector<Batch> batches;
  for (int b = 0; b < numBatches; ++b)
    batches.push_back(randomBatch(100 + b, m.inDim, m.classes));
  int64_t numParams = 0;
  for (int i = 0; i < P::kNumParams; ++i)
    numParams += P::kNumElements[i];
  std::mt19937_64 rng(42);
  std::vector<float> init = randomFloats(rng, numParams, 0.5f);

  // Eagerly: every batch uploaded into new device graphs and tensors.
  Stream eagerStream;
  std::vector<typename Trainer<P, S>::Result> eager;
  {
    // The cuBLAS workspace of a captured stream for the eager steps too, so
    // that cuBLAS chooses as it does for the replays.
    ASSERT_OK(cu::prepareCapture(eagerStream.s));
    Trainer<P, S> t(m, eagerStream.s);
    ASSERT_OK(t.setUp(batches[0], init));
    zeroPadding(t);
    for (const Batch &b : batches) {
      ASSERT_OK(cu::DeviceGraph::upload(b.g1, t.stream, t.g1));
      ASSERT_OK(cu::DeviceGraph::upload(b.g2, t.stream, t.g2));
      ASSERT_OK(
          cu::DeviceTensor::upload(b.x.data(), {kN0, m.inDim}, t.stream, t.x));
      ASSERT_OK(cu::DeviceTensor::upload(b.target.data(), {kN2, m.classes},
                                         t.stream, t.target));
      ASSERT_OK(t.step(t.stream));
      ASSERT_EQ(cudaStreamSynchronize(t.stream), cudaSuccess);
      eager.push_back(t.result());
    }
  }
  // The steps change the parameters, and no two batches give the same
  // output.
  ASSERT_FALSE(sameBits(eager.front().params, eager.back().params));
  ASSERT_FALSE(sameBits(eager[0].out, eager[1].out));

  // Captured once, replayed for every batch.
  Stream replayStream;
  Trainer<P, S> t(m, replayStream.s);
  ASSERT_OK(t.setUp(batches[0], init));
  zeroPadding(t);
  const int64_t *inPtrBefore = t.g1.byDst().ptr;
  cu::StepGraph step;
  EXPECT_FALSE(step.captured());
  ASSERT_OK(step.capture(t.stream, [&](cudaStream_t s) { return t.step(s); }));
  EXPECT_TRUE(step.captured());
  // The capture recorded the step without running it.
  typename Trainer<P, S>::Result before = t.result();
  std::vector<float> initPadded = before.params;
  for (size_t b = 0; b < batches.size(); ++b) {
    SCOPED_TRACE("batch " + std::to_string(b));
    ASSERT_OK(t.g1.assign(batches[b].g1, t.stream));
    ASSERT_OK(t.g2.assign(batches[b].g2, t.stream));
    ASSERT_OK(t.x.assign(batches[b].x.data(), {kN0, m.inDim}, t.stream));
    ASSERT_OK(
        t.target.assign(batches[b].target.data(), {kN2, m.classes}, t.stream));
    ASSERT_OK(step.replay(t.stream));
    ASSERT_EQ(cudaStreamSynchronize(t.stream), cudaSuccess);
    typename Trainer<P, S>::Result r = t.result();
    if (b == 0) {
      EXPECT_FALSE(sameBits(r.params, initPadded));
    }
    EXPECT_TRUE(sameBits(r.params, eager[b].params)) << "parameters";
    EXPECT_TRUE(sameBits(r.grads, eager[b].grads)) << "gradients";
    EXPECT_TRUE(sameBits(r.out, eager[b].out)) << "output";
    EXPECT_TRUE(sameBits(r.gradX, eager[b].gradX)) << "input gradient";
  }
  // assign wrote into the memory of the capture.
  EXPECT_EQ(t.g1.byDst().ptr, inPtrBefore);
}

const Model<small_sage2_block_GraphSAGE2Block::GraphSAGE2Block_Params,
            small_sage2_block_GraphSAGE2Block::GraphSAGE2Block_Saved>
    kSage{5,
          3,
          &small_sage2_block_GraphSAGE2Block::GraphSAGE2Block_train,
          &small_sage2_block_GraphSAGE2Block::
              GraphSAGE2Block_train_workspace_bytes,
          &small_sage2_block_GraphSAGE2Block::GraphSAGE2Block_backward,
          &small_sage2_block_GraphSAGE2Block::
              GraphSAGE2Block_backward_workspace_bytes,
          &small_sage2_block_GraphSAGE2Block::GraphSAGE2Block_saved_bytes,
          &small_sage2_block_GraphSAGE2Block::GraphSAGE2Block_saved_layout};

const Model<small_gat2_block_GAT2Block::GAT2Block_Params,
            small_gat2_block_GAT2Block::GAT2Block_Saved>
    kGat{5,
         4,
         &small_gat2_block_GAT2Block::GAT2Block_train,
         &small_gat2_block_GAT2Block::GAT2Block_train_workspace_bytes,
         &small_gat2_block_GAT2Block::GAT2Block_backward,
         &small_gat2_block_GAT2Block::GAT2Block_backward_workspace_bytes,
         &small_gat2_block_GAT2Block::GAT2Block_saved_bytes,
         &small_gat2_block_GAT2Block::GAT2Block_saved_layout};

TEST(StepGraph, GraphSAGE2BlockReplayMatchesEager) {
  SKIP_WITHOUT_DEVICE();
  checkReplayMatchesEager(kSage, 4);
}

TEST(StepGraph, GAT2BlockReplayMatchesEager) {
  SKIP_WITHOUT_DEVICE();
  checkReplayMatchesEager(kGat, 3);
}

/// Two trainers on two streams, from the same batch and parameters, each
/// queue `steps` steps (forward, backward, SGD) interleaved with the other's
/// and without waiting: their parameters, gradients, outputs and input
/// gradients are bit-identical at the end, and to those of the same steps
/// run one stream at a time. Each stream has a cuBLAS workspace of its own;
/// with a shared one, cuBLAS promises no reproducibility.
template <typename P, typename S>
void checkTwoStreamsAgree(const Model<P, S> &m, int steps) {
  Batch batch = randomBatch(7, m.inDim, m.classes);
  int64_t numParams = 0;
  for (int i = 0; i < P::kNumParams; ++i)
    numParams += P::kNumElements[i];
  std::mt19937_64 rng(43);
  std::vector<float> init = randomFloats(rng, numParams, 0.5f);
  Stream s1, s2, alone;
  Trainer<P, S> t1(m, s1.s), t2(m, s2.s), t3(m, alone.s);
  for (Trainer<P, S> *t : {&t1, &t2, &t3}) {
    ASSERT_OK(t->setUp(batch, init));
    zeroPadding(*t);
  }
  std::vector<float> start = t1.result().params;
  for (int k = 0; k < steps; ++k) {
    ASSERT_OK(t1.step(t1.stream));
    ASSERT_OK(t2.step(t2.stream));
  }
  for (int k = 0; k < steps; ++k) {
    ASSERT_OK(t3.step(t3.stream));
    ASSERT_EQ(cudaStreamSynchronize(t3.stream), cudaSuccess);
  }
  typename Trainer<P, S>::Result r1 = t1.result(), r2 = t2.result(),
                                 r3 = t3.result();
  EXPECT_FALSE(sameBits(r1.params, start)); // the steps trained
  for (const auto *r : {&r2, &r3}) {
    EXPECT_TRUE(sameBits(r1.params, r->params)) << "parameters";
    EXPECT_TRUE(sameBits(r1.grads, r->grads)) << "gradients";
    EXPECT_TRUE(sameBits(r1.out, r->out)) << "output";
    EXPECT_TRUE(sameBits(r1.gradX, r->gradX)) << "input gradient";
  }
}

TEST(StepGraph, GraphSAGE2BlockTwoStreamsAgree) {
  SKIP_WITHOUT_DEVICE();
  checkTwoStreamsAgree(kSage, 50);
}

TEST(StepGraph, GAT2BlockTwoStreamsAgree) {
  SKIP_WITHOUT_DEVICE();
  checkTwoStreamsAgree(kGat, 50);
}

//===----------------------------------------------------------------------===//
// DeviceGraph::assign and DeviceTensor::assign
//===----------------------------------------------------------------------===//

/// The arrays of a device graph, on the host.
struct Arrays {
  std::vector<int64_t> inPtr, outPtr;
  std::vector<int32_t> inNbr, inEid, inOrder, outNbr, outEid, outOrder;
  std::vector<int32_t> edgeSrc, edgeDst;
  bool operator==(const Arrays &o) const {
    return inPtr == o.inPtr && outPtr == o.outPtr && inNbr == o.inNbr &&
           inEid == o.inEid && inOrder == o.inOrder && outNbr == o.outNbr &&
           outEid == o.outEid && outOrder == o.outOrder &&
           edgeSrc == o.edgeSrc && edgeDst == o.edgeDst;
  }
};

Arrays arraysOf(const cu::DeviceGraph &g) {
  Arrays a;
  int64_t e = g.numEdges();
  a.inPtr = downloadArray(g.byDst().ptr, g.numDst() + 1);
  a.outPtr = downloadArray(g.bySrc().ptr, g.numSrc() + 1);
  a.inNbr = downloadArray(g.byDst().nbr, e);
  a.inEid = downloadArray(g.byDst().eid, e);
  a.inOrder = downloadArray(g.byDst().order, g.numDst());
  a.outNbr = downloadArray(g.bySrc().nbr, e);
  a.outEid = downloadArray(g.bySrc().eid, e);
  a.outOrder = downloadArray(g.bySrc().order, g.numSrc());
  a.edgeSrc = downloadArray(g.edgeSrc(), e);
  a.edgeDst = downloadArray(g.edgeDst(), e);
  return a;
}

TEST(StepGraph, AssignMatchesUploadInPlace) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  std::mt19937_64 rng(3);
  rt::Graph a = randomBlock(rng, kN0, kN1, kE1);
  cu::DeviceGraph d, copy;
  ASSERT_OK(cu::DeviceGraph::upload(a, stream.s, d));
  copy = d;
  const int64_t *ptr = d.byDst().ptr;
  const int32_t *order = d.bySrc().order, *edgeSrc = d.edgeSrc();
  for (int i = 0; i < 3; ++i) {
    rt::Graph b = randomBlock(rng, kN0, kN1, kE1);
    ASSERT_OK(d.assign(b, stream.s));
    ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
    cu::DeviceGraph fresh;
    ASSERT_OK(cu::DeviceGraph::upload(b, stream.s, fresh));
    EXPECT_TRUE(arraysOf(d) == arraysOf(fresh)) << "assign " << i;
    // Copies share the memory, which stays where it was.
    EXPECT_TRUE(arraysOf(copy) == arraysOf(fresh));
    EXPECT_EQ(d.byDst().ptr, ptr);
    EXPECT_EQ(d.bySrc().order, order);
    EXPECT_EQ(d.edgeSrc(), edgeSrc);
  }
}

TEST(StepGraph, AssignRejectsOtherSizes) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  std::mt19937_64 rng(4);
  rt::Graph a = randomBlock(rng, kN0, kN1, kE1);
  cu::DeviceGraph d;
  ASSERT_OK(cu::DeviceGraph::upload(a, stream.s, d));
  Arrays before = arraysOf(d);
  rt::Graph moreEdges = randomBlock(rng, kN0, kN1, kE1 + 1);
  rt::Status s = d.assign(moreEdges, stream.s);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("DeviceGraph::assign: the graph has 23 sources, "
                             "11 destinations and 41 edges, the device graph "
                             "23, 11 and 40"),
            std::string::npos)
      << s.message();
  rt::Graph fewerSources = randomBlock(rng, kN0 - 1, kN1, kE1);
  EXPECT_FALSE(d.assign(fewerSources, stream.s).ok());
  EXPECT_TRUE(arraysOf(d) == before);

  cu::DeviceTensor t;
  std::vector<float> host(6, 1.0f);
  ASSERT_OK(cu::DeviceTensor::upload(host.data(), {2, 3}, stream.s, t));
  rt::Status ts = t.assign(host.data(), {3, 2}, stream.s);
  ASSERT_FALSE(ts.ok());
  EXPECT_NE(ts.message().find("a tensor of shape [3, 2] into one of shape "
                              "[2, 3]"),
            std::string::npos)
      << ts.message();
  std::vector<float> other = {1, 2, 3, 4, 5, 6};
  ASSERT_OK(t.assign(other.data(), {2, 3}, stream.s));
  EXPECT_TRUE(sameBits(download(t.data(), 6, stream.s), other));
}

//===----------------------------------------------------------------------===//
// Steps a capture cannot record
//===----------------------------------------------------------------------===//

/// A step that only fills `data` (n floats) with `value`.
rt::Status fillStep(float *data, int64_t n, float value, cudaStream_t s) {
  return cu::fill(data, n, value, s);
}

TEST(StepGraph, CaptureOfAnAllocationFails) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  cu::DeviceTensor t;
  ASSERT_OK(cu::DeviceTensor::allocate({8}, t));
  cu::StepGraph step;
  ASSERT_OK(step.capture(stream.s, [&](cudaStream_t s) {
    return fillStep(t.data(), 8, 1.0f, s);
  }));
  void *leaked = nullptr;
  rt::Status s = step.capture(stream.s, [&](cudaStream_t st) -> rt::Status {
    GNNC_TRY(fillStep(t.data(), 8, 2.0f, st));
    GNNC_CUDA_CHECK(cudaMalloc(&leaked, 1024));
    return rt::Status::success();
  });
  ASSERT_FALSE(s.ok());
  const std::string &msg = s.message();
  EXPECT_NE(msg.find("StepGraph::capture: the step failed: cudaMalloc(&leaked, "
                     "1024): cudaErrorStreamCaptureUnsupported"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("cudaStreamEndCapture: "
                     "cudaErrorStreamCaptureInvalidated"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("allocates nothing"), std::string::npos) << msg;
  if (leaked)
    (void)cudaFree(leaked);
  // The stream is usable again, and the step captured before is kept.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_TRUE(step.captured());
  ASSERT_OK(step.replay(stream.s));
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  EXPECT_TRUE(
      sameBits(download(t.data(), 8, stream.s), std::vector<float>(8, 1.0f)));
}

TEST(StepGraph, CaptureOfAnIgnoredSynchronisationFails) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  cu::DeviceTensor t;
  ASSERT_OK(cu::DeviceTensor::allocate({8}, t));
  cu::StepGraph step;
  // The step ignores the error of its synchronisation: the capture does not.
  rt::Status s = step.capture(stream.s, [&](cudaStream_t st) -> rt::Status {
    GNNC_TRY(fillStep(t.data(), 8, 2.0f, st));
    (void)cudaStreamSynchronize(st);
    return rt::Status::success();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudaStreamEndCapture: "
                             "cudaErrorStreamCaptureInvalidated"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("the step failed"), std::string::npos)
      << s.message();
  EXPECT_FALSE(step.captured());
  EXPECT_FALSE(step.replay(stream.s).ok());
  // A synchronous copy (on the legacy stream) inside the step fails too.
  std::vector<float> host(8, 3.0f);
  s = step.capture(stream.s, [&](cudaStream_t) {
    return rt::cuda::toStatus(cudaMemcpy(t.data(), host.data(),
                                         8 * sizeof(float),
                                         cudaMemcpyHostToDevice),
                              "cudaMemcpy", __FILE__, __LINE__);
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudaMemcpy: cudaErrorStreamCapture"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(StepGraph, MisuseFailsClearly) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  cu::StepGraph step;
  rt::Status s = step.replay(stream.s);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "StepGraph::replay: no step has been captured");
  s = step.capture(nullptr, [](cudaStream_t) { return rt::Status::success(); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the default stream cannot be captured"),
            std::string::npos);
  // assign inside a capture is refused (it is called before a replay).
  std::mt19937_64 rng(5);
  rt::Graph g = randomBlock(rng, kN0, kN1, kE1);
  cu::DeviceGraph d;
  ASSERT_OK(cu::DeviceGraph::upload(g, stream.s, d));
  s = step.capture(stream.s, [&](cudaStream_t st) { return d.assign(g, st); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("DeviceGraph::assign: the stream is capturing"),
            std::string::npos)
      << s.message();
  // So is an upload (it allocates and waits).
  cu::DeviceGraph other;
  s = step.capture(stream.s, [&](cudaStream_t st) {
    return cu::DeviceGraph::upload(g, st, other);
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudaErrorStreamCaptureUnsupported"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("cudaErrorStreamCaptureInvalidated"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(other.numEdges(), 0);
  // A step that fails by itself fails the capture, which still ends.
  s = step.capture(stream.s, [](cudaStream_t) {
    return rt::Status::error("the step's own error");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the step failed: the step's own error"),
            std::string::npos);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(stream.s, &capture), cudaSuccess);
  EXPECT_EQ(capture, cudaStreamCaptureStatusNone);
  // Moves hand the captured step over.
  cu::DeviceTensor t;
  ASSERT_OK(cu::DeviceTensor::allocate({4}, t));
  ASSERT_OK(step.capture(stream.s, [&](cudaStream_t st) {
    return fillStep(t.data(), 4, 5.0f, st);
  }));
  cu::StepGraph moved = std::move(step);
  EXPECT_FALSE(step.captured());
  ASSERT_TRUE(moved.captured());
  ASSERT_OK(moved.replay(stream.s));
  EXPECT_TRUE(
      sameBits(download(t.data(), 4, stream.s), std::vector<float>(4, 5.0f)));
}

} // namespace
