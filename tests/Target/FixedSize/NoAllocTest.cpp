//===- NoAllocTest.cpp - A fixed-size training step allocates nothing -----===//
//
// Part of gnnc. GraphSAGE2Block compiled for static shapes (-D N0=1153
// ...: batches of 32 Cora seeds with fanouts 5,5, padded to their bound
// capacities) trains for 100 steps on padded batches. Every allocation
// function of the process is counted (operator new in all its forms, and
// malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign, valloc
// interposed over glibc's), across threads, while the steps run. A step is
// what a training loop does once the batch is sampled and its graphs built:
// pad the sampled batch into a recycled one (gnnc_sample's Padder), the
// saving forward, a masked softmax cross-entropy over the real seeds, the
// backward, and an SGD update. The count must be zero after one warm-up
// step (OpenMP's thread pool and OpenBLAS's buffers are made on first use).
// The loss must fall over the steps, so that they do real work.
//
// Under AddressSanitizer (which owns malloc) the test is skipped.
//
//===----------------------------------------------------------------------===//

#include "FixedSizeSupport.h"

#include "gnnc_fs_sage2_static/sage2_block.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <new>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GNNC_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GNNC_ASAN 1
#endif

namespace {
[[maybe_unused]] std::atomic<bool> counting{false};
[[maybe_unused]] std::atomic<int64_t> allocations{0};
[[maybe_unused]] inline void noteAllocation() {
  if (counting.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

#ifndef GNNC_ASAN
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);

void *malloc(size_t n) {
  noteAllocation();
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t size) {
  noteAllocation();
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n) {
  noteAllocation();
  return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
void *memalign(size_t align, size_t n) {
  noteAllocation();
  return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n) {
  noteAllocation();
  return __libc_memalign(align, n);
}
void *valloc(size_t n) {
  noteAllocation();
  return __libc_memalign(4096, n);
}
int posix_memalign(void **out, size_t align, size_t n) {
  noteAllocation();
  void *p = __libc_memalign(align, n);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
}

namespace {
void *allocate(std::size_t n, std::size_t align = 0) {
  noteAllocation();
  void *p = align > alignof(std::max_align_t) ? __libc_memalign(align, n ? n : 1)
                                              : __libc_malloc(n ? n : 1);
  if (!p)
    throw std::bad_alloc();
  return p;
}
} // namespace

void *operator new(std::size_t n) { return allocate(n); }
void *operator new[](std::size_t n) { return allocate(n); }
void *operator new(std::size_t n, std::align_val_t a) {
  return allocate(n, static_cast<std::size_t>(a));
}
void *operator new[](std::size_t n, std::align_val_t a) {
  return allocate(n, static_cast<std::size_t>(a));
}
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
  noteAllocation();
  return __libc_malloc(n ? n : 1);
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept {
  noteAllocation();
  return __libc_malloc(n ? n : 1);
}
void operator delete(void *p) noexcept { __libc_free(p); }
void operator delete[](void *p) noexcept { __libc_free(p); }
void operator delete(void *p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void *p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void *p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept {
  __libc_free(p);
}
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept {
  __libc_free(p);
}
#endif // GNNC_ASAN

using namespace gnnc;
using namespace gnnc::fixedsize_test;

namespace {

using Model = fs_sage2_static::GraphSAGE2Block_Params;
[[maybe_unused]] constexpr int64_t kClasses = 7;

/// Masked softmax cross-entropy of `logits` (rows of kClasses) against
/// `labels` where `mask` is set; writes d(loss)/d(logits) into `cot` (zero
/// on masked-out rows) and returns the mean loss over the real rows.
[[maybe_unused]] double maskedCrossEntropy(const float *logits, const int64_t *labels,
                          const uint8_t *mask, int64_t rows, float *cot) {
  int64_t real = 0;
  for (int64_t i = 0; i < rows; ++i)
    real += mask[i] != 0;
  double loss = 0;
  for (int64_t i = 0; i < rows; ++i) {
    float *g = cot + i * kClasses;
    if (!mask[i]) {
      std::fill(g, g + kClasses, 0.0f);
      continue;
    }
    const float *z = logits + i * kClasses;
    float top = *std::max_element(z, z + kClasses);
    double sum = 0;
    for (int64_t c = 0; c < kClasses; ++c)
      sum += std::exp(static_cast<double>(z[c]) - top);
    loss += std::log(sum) + top - z[labels[i]];
    for (int64_t c = 0; c < kClasses; ++c)
      g[c] = static_cast<float>(
          (std::exp(static_cast<double>(z[c]) - top) / sum -
           (c == labels[i] ? 1.0 : 0.0)) /
          static_cast<double>(real));
  }
  return loss / static_cast<double>(real);
}

TEST(NoAllocation, CounterSeesAllocations) {
#ifdef GNNC_ASAN
  GTEST_SKIP() << "AddressSanitizer owns malloc";
#else
  allocations = 0;
  counting = true;
  auto *v = new std::vector<float>(100);
  void *p = std::malloc(64);
  counting = false;
  std::free(p);
  delete v;
  EXPECT_GE(allocations.load(), 3);
#endif
}

/// 100 training steps after a warm-up one, counting allocations.
[[maybe_unused]] void hundredStaticShapeTrainingSteps() {
  // The capacities the model was compiled for (PaddingTest checks them
  // against boundCapacities).
  sample::Capacities caps;
  caps.Vertices = {1153, 193, 33};
  caps.Edges = {960, 160};
  const rt::Graph &cora = coraGraph(false);

  // Four sampled batches, their padded rt::Graphs built once.
  constexpr int kBatches = 4;
  std::vector<sample::MiniBatch> sampled(kBatches);
  std::vector<std::vector<rt::Graph>> graphs(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    ASSERT_TRUE(sampleBatch(cora, {5, 5}, randomSeeds(32, 900 + b), b,
                            sampled[b]));
    sample::MiniBatch padded = sampled[b];
    sample::PadOutcome outcome;
    ASSERT_TRUE(
        sample::padBatch(padded, caps, sample::Oversize::Error, outcome).ok());
    ASSERT_TRUE(graphsOf(padded, graphs[b]));
  }

  ParamValues<Model> params(3);
  Model p = params.bind();
  ParamValues<Model> grads(0);
  Model g = grads.bind();
  AlignedBuffer saved(fs_sage2_static::GraphSAGE2Block_saved_bytes(
      graphs[0][0], graphs[0][1]));
  fs_sage2_static::GraphSAGE2Block_Saved s =
      fs_sage2_static::GraphSAGE2Block_saved_layout(saved.get(), graphs[0][0],
                                                    graphs[0][1]);
  AlignedBuffer ws(std::max(
      fs_sage2_static::GraphSAGE2Block_train_workspace_bytes(graphs[0][0],
                                                             graphs[0][1]),
      fs_sage2_static::GraphSAGE2Block_backward_workspace_bytes(
          graphs[0][0], graphs[0][1])));
  std::vector<float> out(caps.Vertices.back() * kClasses);
  std::vector<float> cot(out.size());
  sample::Padder padder;
  sample::MiniBatch work = sampled[0]; // recycled every step
  std::vector<double> losses(101);
  sample::PadOutcome outcome; // its vectors are reused too

  auto step = [&](int i) -> rt::Status {
    const int b = i % kBatches;
    // What the sampler writes, into the recycled batch: its vectors keep
    // their storage (the masks too, which padding rewrites).
    const sample::MiniBatch &from = sampled[b];
    work.Epoch = from.Epoch;
    work.Step = from.Step;
    work.Seeds = from.Seeds;
    work.Blocks = from.Blocks;
    work.Features = from.Features;
    work.FeatureDim = from.FeatureDim;
    work.Labels = from.Labels;
    work.Padded = false;
    if (rt::Status st =
            padder.pad(work, caps, sample::Oversize::Error, outcome);
        !st.ok())
      return st;
    const rt::Graph &g1 = graphs[b][0], &g2 = graphs[b][1];
    if (rt::Status st = fs_sage2_static::GraphSAGE2Block_train(
            g1, g2, work.Features.data(), p, out.data(), s, ws.get(), true,
            static_cast<uint64_t>(i));
        !st.ok())
      return st;
    losses[i] = maskedCrossEntropy(out.data(), work.Labels.data(),
                                   work.labelMask().data(),
                                   caps.Vertices.back(), cot.data());
    if (rt::Status st = fs_sage2_static::GraphSAGE2Block_backward(
            g1, g2, work.Features.data(), s, cot.data(), p, nullptr, g,
            ws.get(), true, static_cast<uint64_t>(i));
        !st.ok())
      return st;
    for (size_t k = 0; k < params.Values.size(); ++k)
      for (size_t e = 0; e < params.Values[k].size(); ++e)
        params.Values[k][e] -= 0.5f * grads.Values[k][e];
    return rt::Status::success();
  };

  rt::Status st = step(0); // warm-up
  ASSERT_TRUE(st.ok()) << st.message();
  allocations = 0;
  counting = true;
  for (int i = 1; i <= 100 && st.ok(); ++i)
    st = step(i);
  counting = false;
  ASSERT_TRUE(st.ok()) << st.message();
  std::cout << "[          ] 100 steps: " << allocations.load()
            << " allocations; loss " << losses[1] << " (step 1) -> "
            << losses[100] << " (step 100, same batch)\n";
  EXPECT_EQ(allocations.load(), 0);
  // Steps 1 and 97 train on the same batch.
  EXPECT_LT(losses[97], 0.8 * losses[1]);
}

TEST(NoAllocation, HundredStaticShapeTrainingSteps) {
#ifdef GNNC_ASAN
  GTEST_SKIP() << "AddressSanitizer owns malloc";
#else
  hundredStaticShapeTrainingSteps();
#endif
}

/// On one thread, as while other processes hold every core but one
/// (rt::teamSize): the loops run without a parallel region, for which
/// libgomp would allocate a team every time.
TEST(NoAllocation, HundredStepsOnOneThread) {
#ifdef GNNC_ASAN
  GTEST_SKIP() << "AddressSanitizer owns malloc";
#else
#ifdef _OPENMP
  int before = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  hundredStaticShapeTrainingSteps();
#ifdef _OPENMP
  omp_set_num_threads(before);
#endif
#endif
}

} // namespace
