//===- ModelSmokeTest.cpp - gnnc_add_model(... BACKEND cuda) --------------===//
//
// Part of gnnc. tests/Target/Exec/CMakeLists.txt compiles dsl-examples/gcn.gnn
// with gnnc_add_model(... BACKEND cuda TRAINING), the way a project using
// the installed package would; this program links the library and, when a
// device is present, runs the typed entry points of a training step on a
// small graph (GTEST_SKIP without one).
//
//===----------------------------------------------------------------------===//

#include "gnnc_cuda_model_smoke/gcn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace gnnc;

namespace {

TEST(CudaModel, TrainingStepRuns) {
  // The module is there whether or not a device is.
  EXPECT_EQ(cuda_model_smoke::gnnc_module.abiVersion, rt::kAbiVersion);
  EXPECT_TRUE(cuda_model_smoke::gnnc_module.training);
  int devices = 0;
  ASSERT_TRUE(rt::cuda::deviceCount(devices).ok());
  if (devices == 0)
    GTEST_SKIP() << "no CUDA device";

  using P = cuda_model_smoke::GCN_Params;
  // A ring of 6 vertices with self-loops, 5 features, 3 classes.
  std::vector<int64_t> src, dst;
  for (int64_t v = 0; v < 6; ++v) {
    src.insert(src.end(), {v, (v + 1) % 6, v});
    dst.insert(dst.end(), {(v + 1) % 6, v, v});
  }
  rt::Graph host;
  ASSERT_TRUE(rt::Graph::fromEdgeIndex(src.data(), dst.data(),
                                       static_cast<int64_t>(src.size()), 6, 6,
                                       host)
                  .ok());
  rt::cuda::DeviceGraph g;
  ASSERT_TRUE(rt::cuda::DeviceGraph::upload(host, nullptr, g).ok());
  std::vector<float> xs(6 * 5, 0.5f);
  rt::cuda::DeviceTensor x, out;
  ASSERT_TRUE(
      rt::cuda::DeviceTensor::upload(xs.data(), {6, 5}, nullptr, x).ok());
  ASSERT_TRUE(rt::cuda::DeviceTensor::allocate({6, 3}, out).ok());
  std::vector<rt::cuda::DeviceTensor> p(P::kNumParams);
  P params{};
  for (int i = 0; i < P::kNumParams; ++i) {
    std::vector<float> data(P::kNumElements[i], 0.1f);
    ASSERT_TRUE(
        rt::cuda::DeviceTensor::upload(
            data.data(),
            std::vector<int64_t>(P::kShapes[i], P::kShapes[i] + P::kRanks[i]),
            nullptr, p[i])
            .ok());
    params.set(i, p[i].data());
  }
  rt::cuda::DeviceBuffer ws;
  ASSERT_TRUE(rt::cuda::DeviceBuffer::allocate(
                  cuda_model_smoke::GCN_workspace_bytes(g), ws)
                  .ok());
  rt::Status s = cuda_model_smoke::GCN(g, x.data(), params, out.data(),
                                       ws.data(), false, 0, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<float> got(6 * 3);
  ASSERT_TRUE(out.download(got.data(), nullptr).ok());
  for (float v : got)
    EXPECT_TRUE(std::isfinite(v));

  // The saving forward and the backward, with what the forward keeps in
  // one buffer of device memory.
  rt::cuda::DeviceBuffer keep;
  ASSERT_TRUE(rt::cuda::DeviceBuffer::allocate(
                  cuda_model_smoke::GCN_saved_bytes(g), keep)
                  .ok());
  cuda_model_smoke::GCN_Saved saved =
      cuda_model_smoke::GCN_saved_layout(keep.data(), g);
  std::vector<rt::cuda::DeviceTensor> dp(P::kNumParams);
  P grads{};
  for (int i = 0; i < P::kNumParams; ++i) {
    ASSERT_TRUE(
        rt::cuda::DeviceTensor::allocate(
            std::vector<int64_t>(P::kShapes[i], P::kShapes[i] + P::kRanks[i]),
            dp[i])
            .ok());
    grads.set(i, dp[i].data());
  }
  std::vector<float> ones(6 * 3, 1.0f);
  rt::cuda::DeviceTensor cotangent, gradX;
  ASSERT_TRUE(
      rt::cuda::DeviceTensor::upload(ones.data(), {6, 3}, nullptr, cotangent)
          .ok());
  ASSERT_TRUE(rt::cuda::DeviceTensor::allocate({6, 5}, gradX).ok());
  rt::cuda::DeviceBuffer trainWs;
  ASSERT_TRUE(rt::cuda::DeviceBuffer::allocate(
                  std::max(cuda_model_smoke::GCN_train_workspace_bytes(g),
                           cuda_model_smoke::GCN_backward_workspace_bytes(g)),
                  trainWs)
                  .ok());
  s = cuda_model_smoke::GCN_train(g, x.data(), params, out.data(), saved,
                                  trainWs.data(), true, 1, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  s = cuda_model_smoke::GCN_backward(g, x.data(), saved, cotangent.data(),
                                     params, gradX.data(), grads,
                                     trainWs.data(), true, 1, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<float> gradW(P::kNumElements[0]);
  ASSERT_TRUE(dp[0].download(gradW.data(), nullptr).ok());
  for (float v : gradW)
    EXPECT_TRUE(std::isfinite(v));
}

} // namespace
