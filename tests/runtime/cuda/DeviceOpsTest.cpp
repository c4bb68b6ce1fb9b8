//===- DeviceOpsTest.cpp - The device runtime against the host's ----------===//
//
// Part of gnnc. Every operation of gnnc/runtime/cuda/DeviceOps.h against
// its namesake of gnnc/runtime/Ops.h on random data and a random power-law
// graph with empty rows, self-loops and multi-edges (long axes too, so that
// the chunked and the device-wide reductions run), and the degree order of
// DeviceGraph::upload. Part of gnnc-cuda-tests: it needs a device and skips
// without one.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "gnnc/runtime/Ops.h"
#include "gnnc/runtime/cuda/DeviceOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

using namespace gnnc;
namespace cu = gnnc::rt::cuda;

namespace {

bool haveDevice() {
  int count = 0;
  return cu::deviceCount(count).ok() && count > 0;
}

#define SKIP_WITHOUT_DEVICE()                                                  \
  do {                                                                         \
    if (!haveDevice())                                                         \
      GTEST_SKIP() << "no CUDA device";                                        \
  } while (0)

std::vector<float> randomVector(size_t n, std::mt19937_64 &rng, float lo = -1,
                                float hi = 1) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// A device copy of `host`.
cu::DeviceTensor up(const std::vector<float> &host) {
  cu::DeviceTensor t;
  EXPECT_TRUE(cu::DeviceTensor::upload(
                  host.data(), {static_cast<int64_t>(host.size())}, nullptr, t)
                  .ok());
  return t;
}

/// `n` floats of the device, all NaN first.
cu::DeviceTensor blank(size_t n) {
  cu::DeviceTensor t;
  EXPECT_TRUE(cu::DeviceTensor::allocate({static_cast<int64_t>(n)}, t).ok());
  if (n) {
    EXPECT_EQ(cudaMemset(t.data(), 0xFF, n * sizeof(float)), cudaSuccess);
  }
  return t;
}

std::vector<float> down(const cu::DeviceTensor &t) {
  std::vector<float> out(static_cast<size_t>(t.numElements()));
  EXPECT_TRUE(t.download(out.data(), nullptr).ok());
  return out;
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                const char *what, float tolerance = 1e-4f) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * std::max(1.0f, std::abs(want[i])))
        << what << " at " << i;
}

rt::Graph randomGraph(std::mt19937_64 &rng, int64_t n, int64_t e) {
  std::vector<int64_t> src, dst;
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t k = 0; k < e; ++k) {
    // Skewed: low ids are hubs; the last tenth of the vertices is empty.
    src.push_back(static_cast<int64_t>(std::pow(u(rng), 3) * (n * 9 / 10)));
    dst.push_back(static_cast<int64_t>(std::pow(u(rng), 2) * (n * 9 / 10)));
  }
  src.push_back(0), dst.push_back(0);
  src.push_back(1), dst.push_back(0);
  src.push_back(1), dst.push_back(0);
  rt::Graph g;
  EXPECT_TRUE(rt::Graph::fromEdgeIndex(src.data(), dst.data(),
                                       static_cast<int64_t>(src.size()), n, n,
                                       g)
                  .ok());
  return g;
}

TEST(CudaDeviceOps, Elementwise) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937_64 rng(1);
  const int64_t n = 5000;
  std::vector<float> x = randomVector(n, rng, -3, 3);
  cu::DeviceTensor dx = up(x);
  using Unary = std::function<rt::Status(const float *, float *, int64_t)>;
  struct Case {
    const char *name;
    std::function<void(const float *, float *, int64_t)> host;
    Unary device;
  };
  std::vector<float> pos(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    pos[i] = std::abs(x[i]) + 0.5f;
  cu::DeviceTensor dpos = up(pos);
  const Case cases[] = {
      {"neg", rt::neg,
       [](auto a, auto b, auto c) { return cu::neg(a, b, c, nullptr); }},
      {"exp", rt::exp,
       [](auto a, auto b, auto c) { return cu::exp(a, b, c, nullptr); }},
      {"relu", rt::relu,
       [](auto a, auto b, auto c) { return cu::relu(a, b, c, nullptr); }},
      {"sigmoid", rt::sigmoid,
       [](auto a, auto b, auto c) { return cu::sigmoid(a, b, c, nullptr); }},
      {"tanh", rt::tanh,
       [](auto a, auto b, auto c) { return cu::tanh(a, b, c, nullptr); }},
      {"gelu", rt::gelu,
       [](auto a, auto b, auto c) { return cu::gelu(a, b, c, nullptr); }},
      {"erf", rt::erf,
       [](auto a, auto b, auto c) { return cu::erf(a, b, c, nullptr); }},
      {"sin", rt::sin,
       [](auto a, auto b, auto c) { return cu::sin(a, b, c, nullptr); }},
      {"cos", rt::cos,
       [](auto a, auto b, auto c) { return cu::cos(a, b, c, nullptr); }},
      {"abs", rt::abs,
       [](auto a, auto b, auto c) { return cu::abs(a, b, c, nullptr); }},
  };
  for (const Case &c : cases) {
    std::vector<float> want(n);
    c.host(x.data(), want.data(), n);
    cu::DeviceTensor out = blank(n);
    ASSERT_TRUE(c.device(dx.data(), out.data(), n).ok()) << c.name;
    expectNear(down(out), want, c.name);
  }
  for (auto [name, host, device] :
       {std::make_tuple("log", rt::log, cu::log),
        std::make_tuple("sqrt", rt::sqrt, cu::sqrt),
        std::make_tuple("rsqrt", rt::rsqrt, cu::rsqrt)}) {
    std::vector<float> want(n);
    host(pos.data(), want.data(), n);
    cu::DeviceTensor out = blank(n);
    ASSERT_TRUE(device(dpos.data(), out.data(), n, nullptr).ok()) << name;
    expectNear(down(out), want, name);
  }
  // Broadcasting: [4, 1, 5] with [1, 3, 5] into [4, 3, 5].
  std::vector<float> a = randomVector(20, rng), b = randomVector(15, rng);
  cu::DeviceTensor da = up(a), db = up(b);
  rt::Shape sa{4, 1, 5}, sb{1, 3, 5}, so{4, 3, 5};
  for (auto [name, host, device] :
       {std::make_tuple("add", rt::add, cu::add),
        std::make_tuple("mul", rt::mul, cu::mul),
        std::make_tuple("max", rt::max, cu::max),
        std::make_tuple("gt", rt::gt, cu::gt),
        std::make_tuple("ge", rt::ge, cu::ge),
        std::make_tuple("eq", rt::eq, cu::eq),
        std::make_tuple("ne", rt::ne, cu::ne),
        std::make_tuple("mask", rt::mask, cu::mask)}) {
    std::vector<float> want(60);
    host(a.data(), sa, b.data(), sb, want.data(), so);
    cu::DeviceTensor out = blank(60);
    ASSERT_TRUE(
        device(da.data(), sa, db.data(), sb, out.data(), so, nullptr).ok())
        << name;
    expectNear(down(out), want, name);
  }
  // Dropout: the interpreter's mask for seed 0.
  std::vector<float> want(n);
  rt::dropout(x.data(), want.data(), n, 0.3, 7, true);
  cu::DeviceTensor out = blank(n);
  ASSERT_TRUE(
      cu::dropout(dx.data(), out.data(), n, 0.3, 7, true, nullptr).ok());
  expectNear(down(out), want, "dropout", 1e-6f);
}

// batch_norm's running-statistics update: one block per column, in double,
// against the host's, on more rows than a block has threads.
TEST(CudaDeviceOps, BatchStatsMatchTheHost) {
  SKIP_WITHOUT_DEVICE();
  const int64_t rows = 1000, cols = 5;
  std::vector<float> x(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    x[i] = static_cast<float>((i * 37) % 101) / 7.0f - 3.0f;
  std::vector<float> mean = {0.5f, -1, 2, 0, 1}, var = {1, 2, 0.5f, 1, 3};
  cu::DeviceTensor dx = up(x), dm = up(mean), dv = up(var);
  ASSERT_TRUE(cu::updateBatchStats(dx.data(), rows, cols, dm.data(), dv.data(),
                                   0.1, true, nullptr)
                  .ok());
  ASSERT_TRUE(rt::updateBatchStats(x.data(), rows, cols, mean.data(),
                                   var.data(), 0.1, true)
                  .ok());
  expectNear(down(dm), mean, "running mean", 1e-6f);
  expectNear(down(dv), var, "running var", 1e-6f);
  EXPECT_FALSE(cu::updateBatchStats(dx.data(), 1, cols, dm.data(), dv.data(),
                                    0.1, true, nullptr)
                   .ok());
}

// NaN goes through every elementwise function as in PyTorch (and the host
// ops): relu(nan), leaky_relu(nan), elu(nan), max and min with a NaN on
// either side are NaN. The outputs start as 7, not as NaN.
TEST(CudaDeviceOps, NaNPropagates) {
  SKIP_WITHOUT_DEVICE();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  cu::DeviceTensor dx = up({nan, -2.0f, 3.0f, 0.0f});
  cu::DeviceTensor dy = up({1.0f, nan, nan, -1.0f});
  cu::DeviceTensor out = up(std::vector<float>(4, 7.0f));
  auto expect = [&](const char *what, std::vector<float> want) {
    std::vector<float> got = down(out);
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i;
      else
        EXPECT_EQ(got[i], want[i]) << what << " element " << i;
    }
  };
  ASSERT_TRUE(cu::relu(dx.data(), out.data(), 4, nullptr).ok());
  expect("relu", {nan, 0.0f, 3.0f, 0.0f});
  ASSERT_TRUE(cu::leakyRelu(dx.data(), out.data(), 4, 0.5f, nullptr).ok());
  expect("leaky_relu", {nan, -1.0f, 3.0f, 0.0f});
  ASSERT_TRUE(cu::elu(dx.data(), out.data(), 4, 1.0f, nullptr).ok());
  std::vector<float> got = down(out);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_NEAR(got[1], std::exp(-2.0f) - 1.0f, 1e-6f);
  rt::Shape s{4};
  ASSERT_TRUE(cu::max(dx.data(), s, dy.data(), s, out.data(), s, nullptr).ok());
  expect("max", {nan, nan, nan, 0.0f});
  ASSERT_TRUE(cu::min(dy.data(), s, dx.data(), s, out.data(), s, nullptr).ok());
  expect("min", {nan, nan, nan, -1.0f});
}

// Matmuls queued on two streams at once, each 50 times, give the same bits
// every time: each stream has a cuBLAS workspace of its own (cuBLAS is
// reproducible only while one stream uses a workspace). The shape has a
// long inner axis and a small output, where cuBLAS splits the inner axis
// and reduces the parts in its workspace.
TEST(CudaDeviceOps, MatmulOnTwoStreamsIsBitReproducible) {
  SKIP_WITHOUT_DEVICE();
  constexpr int64_t kRows = 64, kInner = 1 << 16, kCols = 32, kReps = 50;
  std::mt19937_64 rng(11);
  cu::DeviceTensor a = up(randomVector(kRows * kInner, rng)),
                   w = up(randomVector(kInner * kCols, rng));
  cudaStream_t streams[2];
  for (cudaStream_t &s : streams)
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
              cudaSuccess);
  std::vector<cu::DeviceTensor> outs;
  for (int64_t r = 0; r < 2 * kReps; ++r)
    outs.push_back(blank(kRows * kCols));
  // Interleaved, without waiting: the two streams' matmuls overlap.
  for (int64_t r = 0; r < kReps; ++r)
    for (int s = 0; s < 2; ++s)
      ASSERT_TRUE(cu::matmul(a.data(), w.data(), outs[2 * r + s].data(), kRows,
                             kInner, kCols, streams[s])
                      .ok());
  for (cudaStream_t s : streams) {
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  }
  std::vector<float> first = down(outs[0]);
  ASSERT_TRUE(std::all_of(first.begin(), first.end(),
                          [](float x) { return std::isfinite(x); }));
  for (int64_t r = 1; r < 2 * kReps; ++r) {
    std::vector<float> got = down(outs[r]);
    ASSERT_EQ(std::memcmp(got.data(), first.data(), first.size() * 4), 0)
        << "matmul " << r / 2 << " on stream " << r % 2;
  }
}

TEST(CudaDeviceOps, DenseOps) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937_64 rng(2);
  // matmul
  std::vector<float> a = randomVector(37 * 19, rng),
                     w = randomVector(19 * 23, rng);
  std::vector<float> want(37 * 23);
  rt::matmul(a.data(), w.data(), want.data(), 37, 19, 23);
  cu::DeviceTensor da = up(a), dw = up(w), out = blank(37 * 23);
  ASSERT_TRUE(
      cu::matmul(da.data(), dw.data(), out.data(), 37, 19, 23, nullptr).ok());
  expectNear(down(out), want, "matmul");
  // matmulT: each operand as stored, or transposed and read in place.
  for (bool transA : {false, true})
    for (bool transW : {false, true}) {
      std::vector<float> at = randomVector(37 * 19, rng),
                         wt = randomVector(19 * 23, rng);
      std::vector<float> wantT(37 * 23);
      rt::matmulT(at.data(), transA, wt.data(), transW, wantT.data(), 37, 19,
                  23);
      cu::DeviceTensor dat = up(at), dwt = up(wt), outT = blank(37 * 23);
      ASSERT_TRUE(cu::matmulT(dat.data(), transA, dwt.data(), transW,
                              outT.data(), 37, 19, 23, nullptr)
                      .ok());
      expectNear(down(outT), wantT,
                 transA ? (transW ? "matmulT (a^T, w^T)" : "matmulT (a^T)")
                        : (transW ? "matmulT (w^T)" : "matmulT"));
    }
  // Reductions: short, long (chunked) and whole-tensor (CUB) axes.
  struct Shape3 {
    int64_t outer, len, inner;
  };
  for (Shape3 s : {Shape3{3, 7, 5}, Shape3{2, 3000, 3}, Shape3{1, 10000, 1},
                   Shape3{4, 1, 6}}) {
    int64_t n = s.outer * s.len * s.inner;
    std::vector<float> x = randomVector(n, rng);
    x[n / 2] = x[n / 3]; // a tie
    cu::DeviceTensor dx = up(x);
    cu::DeviceBuffer scratch;
    ASSERT_TRUE(cu::DeviceBuffer::allocate(
                    cu::reduceScratchBytes(s.outer, s.len, s.inner), scratch)
                    .ok());
    using HostFn = void (*)(const float *, float *, int64_t, int64_t, int64_t);
    using DeviceFn = rt::Status (*)(const float *, float *, int64_t, int64_t,
                                    int64_t, void *, cudaStream_t);
    for (auto [name, host, device, select] :
         {std::make_tuple("reduceSum", HostFn(rt::reduceSum),
                          DeviceFn(cu::reduceSum), false),
          std::make_tuple("reduceMean", HostFn(rt::reduceMean),
                          DeviceFn(cu::reduceMean), false),
          std::make_tuple("reduceMax", HostFn(rt::reduceMax),
                          DeviceFn(cu::reduceMax), false),
          std::make_tuple("reduceMin", HostFn(rt::reduceMin),
                          DeviceFn(cu::reduceMin), false),
          std::make_tuple("reduceSelectMax", HostFn(rt::reduceSelectMax),
                          DeviceFn(cu::reduceSelectMax), true),
          std::make_tuple("reduceSelectMin", HostFn(rt::reduceSelectMin),
                          DeviceFn(cu::reduceSelectMin), true)}) {
      size_t m = select ? n : s.outer * s.inner;
      std::vector<float> want(m);
      host(x.data(), want.data(), s.outer, s.len, s.inner);
      cu::DeviceTensor r = blank(m);
      ASSERT_TRUE(device(dx.data(), r.data(), s.outer, s.len, s.inner,
                         scratch.data(), nullptr)
                      .ok())
          << name;
      expectNear(down(r), want, name, 1e-3f);
    }
    std::vector<float> sm(n);
    rt::softmax(x.data(), sm.data(), s.outer, s.len, s.inner);
    cu::DeviceTensor dsm = blank(n);
    ASSERT_TRUE(
        cu::softmax(dx.data(), dsm.data(), s.outer, s.len, s.inner, nullptr)
            .ok());
    expectNear(down(dsm), sm, "softmax", 1e-3f);
  }
  // mulReduceSum: row dots, column sums, a chunked axis and a whole-tensor
  // (CUB) sum, against the host's.
  struct MulReduce {
    rt::Shape sa, sb, so;
    int64_t outer, len, inner;
  };
  for (const MulReduce &m :
       {MulReduce{{50, 8, 8}, {1, 8, 8}, {50, 8, 8}, 400, 8, 1},
        MulReduce{{900, 8, 1}, {900, 8, 8}, {900, 8, 8}, 1, 900, 64},
        MulReduce{{3, 5, 7}, {3, 1, 7}, {3, 5, 7}, 3, 5, 7},
        MulReduce{{10000}, {10000}, {10000}, 1, 10000, 1}}) {
    std::vector<float> ma = randomVector(m.sa.numElements(), rng),
                       mb = randomVector(m.sb.numElements(), rng);
    std::vector<float> want(m.outer * m.inner);
    rt::mulReduceSum(ma.data(), m.sa, mb.data(), m.sb, m.so, want.data(),
                     m.outer, m.len, m.inner);
    cu::DeviceTensor dma = up(ma), dmb = up(mb), got = blank(want.size());
    cu::DeviceBuffer scratch;
    ASSERT_TRUE(cu::DeviceBuffer::allocate(
                    cu::mulReduceScratchBytes(m.outer, m.len, m.inner), scratch)
                    .ok());
    ASSERT_TRUE(cu::mulReduceSum(dma.data(), m.sa, dmb.data(), m.sb, m.so,
                                 got.data(), m.outer, m.len, m.inner,
                                 scratch.data(), nullptr)
                    .ok());
    expectNear(down(got), want, "mulReduceSum", 1e-3f);
  }
  // addMul against the host's.
  {
    rt::Shape sx{300, 8, 8}, sy{300, 8, 1}, sz{1, 8, 8};
    std::vector<float> x = randomVector(300 * 64, rng),
                       y = randomVector(300 * 8, rng),
                       z = randomVector(64, rng);
    std::vector<float> want(300 * 64);
    rt::addMul(x.data(), sx, y.data(), sy, z.data(), sz, want.data(), sx);
    cu::DeviceTensor dx = up(x), dy = up(y), dz = up(z), got = blank(300 * 64);
    ASSERT_TRUE(cu::addMul(dx.data(), sx, dy.data(), sy, dz.data(), sz,
                           got.data(), sx, nullptr)
                    .ok());
    expectNear(down(got), want, "addMul");
    // In place, over x (generated code writes a result over an operand of
    // its shape that dies there).
    ASSERT_TRUE(cu::addMul(dx.data(), sx, dy.data(), sy, dz.data(), sz,
                           dx.data(), sx, nullptr)
                    .ok());
    expectNear(down(dx), want, "addMul in place");
  }
  // transpose and copyRows
  std::vector<float> t = randomVector(2 * 3 * 4, rng), tw(24);
  rt::transpose(t.data(), tw.data(), 2, 3, 4);
  cu::DeviceTensor dt = up(t), dto = blank(24);
  ASSERT_TRUE(cu::transpose(dt.data(), dto.data(), 2, 3, 4, nullptr).ok());
  expectNear(down(dto), tw, "transpose");
  std::vector<float> rows(24, 0.0f);
  rt::copyRows(t.data(), 4, rows.data(), 6, 4, 3);
  cu::DeviceTensor drows = up(std::vector<float>(24, 0.0f));
  ASSERT_TRUE(cu::copyRows(dt.data(), 4, drows.data(), 6, 4, 3, nullptr).ok());
  expectNear(down(drows), rows, "copyRows");
}

TEST(CudaDeviceOps, GraphOps) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937_64 rng(3);
  rt::Graph g = randomGraph(rng, 300, 2000);
  cu::DeviceGraph dg;
  ASSERT_TRUE(cu::DeviceGraph::upload(g, nullptr, dg).ok());
  // The degree order sorted on the device is the host's.
  std::vector<int32_t> order(g.numDst());
  ASSERT_EQ(cudaMemcpy(order.data(), dg.byDst().order,
                       order.size() * sizeof(int32_t), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(order, rt::cuda::detail::degreeOrder(g.inPtr()));
  // The long rows the launchers read, counted here from the degrees.
  for (int k = 0; k < 12; ++k) {
    int64_t in = 0, out = 0;
    for (int64_t v = 0; v < g.numDst(); ++v)
      in += g.inPtr()[v + 1] - g.inPtr()[v] > (int64_t{1} << k);
    for (int64_t u = 0; u < g.numSrc(); ++u)
      out += g.outPtr()[u + 1] - g.outPtr()[u] > (int64_t{1} << k);
    EXPECT_EQ(dg.byDst().rowsLongerThan(k), in) << "k = " << k;
    EXPECT_EQ(dg.bySrc().rowsLongerThan(k), out) << "k = " << k;
  }
  EXPECT_GT(dg.byDst().rowsLongerThan(0), 0);
  const int64_t row = 5, e = g.numEdges();
  std::vector<float> edges = randomVector(e * row, rng);
  std::vector<float> verts = randomVector(g.numDst() * row, rng);
  cu::DeviceTensor de = up(edges), dv = up(verts);
  for (rt::Side by : {rt::Side::Dst, rt::Side::Src}) {
    int64_t count = by == rt::Side::Dst ? g.numDst() : g.numSrc();
    using HostFn =
        void (*)(const rt::Graph &, rt::Side, const float *, int64_t, float *);
    using DeviceFn =
        rt::Status (*)(const cu::DeviceGraph &, rt::Side, const float *,
                       int64_t, float *, cudaStream_t);
    for (auto [name, host, device, perEdge] :
         {std::make_tuple("scatterSum", HostFn(rt::scatterSum),
                          DeviceFn(cu::scatterSum), false),
          std::make_tuple("scatterMean", HostFn(rt::scatterMean),
                          DeviceFn(cu::scatterMean), false),
          std::make_tuple("scatterMax", HostFn(rt::scatterMax),
                          DeviceFn(cu::scatterMax), false),
          std::make_tuple("scatterMin", HostFn(rt::scatterMin),
                          DeviceFn(cu::scatterMin), false),
          std::make_tuple("scatterLogSumExp", HostFn(rt::scatterLogSumExp),
                          DeviceFn(cu::scatterLogSumExp), false),
          std::make_tuple("scatterSelectMax", HostFn(rt::scatterSelectMax),
                          DeviceFn(cu::scatterSelectMax), true),
          std::make_tuple("edgeSoftmax", HostFn(rt::edgeSoftmax),
                          DeviceFn(cu::edgeSoftmax), true)}) {
      size_t m = (perEdge ? e : count) * row;
      std::vector<float> want(m);
      host(g, by, edges.data(), row, want.data());
      cu::DeviceTensor out = blank(m);
      ASSERT_TRUE(device(dg, by, de.data(), row, out.data(), nullptr).ok())
          << name;
      expectNear(down(out), want, name, 1e-3f);
    }
  }
  std::vector<float> gathered(e * row);
  std::vector<int64_t> index(g.edgeSrc().begin(), g.edgeSrc().end());
  rt::gather(index.data(), e, verts.data(), row, gathered.data());
  cu::DeviceTensor dgath = blank(e * row);
  ASSERT_TRUE(
      cu::gather(dg.edgeSrc(), e, dv.data(), row, dgath.data(), nullptr).ok());
  expectNear(down(dgath), gathered, "gather");
  std::vector<float> deg(g.numDst());
  rt::inDegree(g, deg.data());
  cu::DeviceTensor ddeg = blank(g.numDst());
  ASSERT_TRUE(cu::inDegree(dg, ddeg.data(), nullptr).ok());
  expectNear(down(ddeg), deg, "inDegree");

  // Readouts over a batch whose members interleave.
  std::vector<int64_t> graphOf(g.numDst());
  for (int64_t v = 0; v < g.numDst(); ++v)
    graphOf[v] = (v * 7) % 5;
  rt::BatchedGraph batch{&g, graphOf.data(), 6}; // member 5 is empty
  cu::DeviceBatchedGraph db;
  ASSERT_TRUE(cu::DeviceBatchedGraph::upload(batch, dg, nullptr, db).ok());
  using HostRead = void (*)(const rt::BatchedGraph &, const float *, int64_t,
                            int64_t, float *, int64_t *);
  using DeviceRead =
      rt::Status (*)(const cu::DeviceBatchedGraph &, const float *, int64_t,
                     int64_t, float *, cudaStream_t);
  std::vector<int64_t> scratch(6 * row);
  for (auto [name, host, device, perVertex] :
       {std::make_tuple("readoutSum", HostRead(rt::readoutSum),
                        DeviceRead(cu::readoutSum), false),
        std::make_tuple("readoutMean", HostRead(rt::readoutMean),
                        DeviceRead(cu::readoutMean), false),
        std::make_tuple("readoutMax", HostRead(rt::readoutMax),
                        DeviceRead(cu::readoutMax), false),
        std::make_tuple("readoutSelectMin", HostRead(rt::readoutSelectMin),
                        DeviceRead(cu::readoutSelectMin), true)}) {
    size_t m = (perVertex ? g.numDst() : 6) * row;
    std::vector<float> want(m);
    host(batch, verts.data(), g.numDst(), row, want.data(), scratch.data());
    cu::DeviceTensor out = blank(m);
    ASSERT_TRUE(
        device(db, dv.data(), g.numDst(), row, out.data(), nullptr).ok())
        << name;
    expectNear(down(out), want, name, 1e-3f);
  }
}

} // namespace
