//===- PipelineTest.cpp - Tests of feature fetch and the pipeline ---------===//
//
// Part of gnnc. The pipeline's batches against the stages run by hand, the
// same whatever the number of workers; features fetched from a local array
// and from distributed tensors (threads backend) against the rows
// themselves; errors at the step that caused them.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Communicator.h"
#include "gnnc/dist/DistTensor.h"
#include "gnnc/sample/Pipeline.h"

#include <gtest/gtest.h>

#include <random>

using namespace gnnc;
using namespace gnnc::sample;

namespace {
struct Fixture {
  rt::Graph G;
  std::vector<float> X;
  std::vector<int64_t> Y;
  int64_t N = 2000, Dim = 5;
  ItemSampler Items;
  NeighborSampler Sampler;

  Fixture() {
    std::mt19937_64 rng(1);
    std::vector<int64_t> src, dst;
    for (int e = 0; e < 16000; ++e) {
      src.push_back(static_cast<int64_t>(rng() % N));
      dst.push_back(static_cast<int64_t>(rng() % N));
    }
    EXPECT_TRUE(
        rt::Graph::fromEdgeIndex(src.data(), dst.data(), 16000, N, N, G).ok());
    for (int64_t i = 0; i < N * Dim; ++i)
      X.push_back(static_cast<float>(i));
    for (int64_t i = 0; i < N; ++i)
      Y.push_back(i % 7);
    std::vector<int64_t> items;
    for (int64_t i = 0; i < N; i += 3)
      items.push_back(i);
    ItemSamplerOptions io;
    io.BatchSize = 50;
    io.Shuffle = true;
    io.Seed = 2;
    EXPECT_TRUE(ItemSampler::create(items, io, Items).ok());
    NeighborSamplerOptions so;
    so.Fanouts = {6, 4};
    so.Seed = 3;
    EXPECT_TRUE(NeighborSampler::create(GraphView::of(G), so, Sampler).ok());
  }
};

std::vector<PreparedBatch> runEpoch(Pipeline &p, uint64_t epoch) {
  std::vector<PreparedBatch> out;
  EXPECT_TRUE(p.startEpoch(epoch).ok());
  while (true) {
    PreparedBatch b;
    bool done;
    Status st = p.next(b, done);
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok() || done)
      break;
    out.push_back(std::move(b));
  }
  return out;
}

void expectSame(const MiniBatch &a, const MiniBatch &b) {
  EXPECT_EQ(a.Step, b.Step);
  EXPECT_EQ(a.Seeds, b.Seeds);
  ASSERT_EQ(a.Blocks.size(), b.Blocks.size());
  for (size_t h = 0; h < a.Blocks.size(); ++h) {
    EXPECT_EQ(a.Blocks[h].SrcIds, b.Blocks[h].SrcIds);
    EXPECT_EQ(a.Blocks[h].Ptr, b.Blocks[h].Ptr);
    EXPECT_EQ(a.Blocks[h].Src, b.Blocks[h].Src);
    EXPECT_EQ(a.Blocks[h].EdgeId, b.Blocks[h].EdgeId);
  }
  EXPECT_EQ(a.Features, b.Features);
  EXPECT_EQ(a.Labels, b.Labels);
}
} // namespace

TEST(Pipeline, BatchesAreTheStagesRunByHand) {
  Fixture f;
  auto features = localFeatures(f.X.data(), f.N, f.Dim);
  auto seeds = seedsOf(f.Items);
  std::unique_ptr<Pipeline> p;
  PipelineOptions o;
  o.Workers = 2;
  o.BuildGraphs = true;
  ASSERT_TRUE(
      Pipeline::create(*seeds, &f.Sampler, features.get(), f.Y.data(), o, p)
          .ok());
  std::vector<PreparedBatch> got = runEpoch(*p, 4);
  ASSERT_EQ(static_cast<int64_t>(got.size()), f.Items.numBatches());
  SamplerScratch scratch;
  int64_t edges = 0;
  for (int64_t step = 0; step < f.Items.numBatches(); ++step) {
    std::vector<int64_t> s;
    ASSERT_TRUE(f.Items.batch(4, step, s).ok());
    MiniBatch ref;
    ASSERT_TRUE(f.Sampler.sample(s, 4, step, scratch, ref).ok());
    const MiniBatch &b = got[step].Batch;
    EXPECT_EQ(b.Seeds, s);
    // Features: the rows of the input vertices; labels: the seeds'.
    ASSERT_EQ(b.FeatureDim, f.Dim);
    const std::vector<int64_t> &ids = ref.inputIds();
    ASSERT_EQ(b.Features.size(), ids.size() * f.Dim);
    for (size_t i = 0; i < ids.size(); ++i)
      for (int64_t c = 0; c < f.Dim; ++c)
        ASSERT_EQ(b.Features[i * f.Dim + c], f.X[ids[i] * f.Dim + c]);
    for (size_t i = 0; i < s.size(); ++i)
      EXPECT_EQ(b.Labels[i], s[i] % 7);
    ref.Features = b.Features;
    ref.Labels = b.Labels;
    expectSame(b, ref);
    // The runtime graphs of the blocks.
    ASSERT_EQ(got[step].Graphs.size(), 2u);
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(got[step].Graphs[h].inPtr(), ref.Blocks[h].Ptr);
      EXPECT_EQ(got[step].Graphs[h].numSrc(), ref.Blocks[h].NumSrc);
    }
    edges += ref.numSampledEdges();
  }
  PipelineReport r = p->report();
  EXPECT_EQ(r.Batches, f.Items.numBatches());
  EXPECT_EQ(r.SampledEdges, edges);
  EXPECT_EQ(r.Seeds, f.Items.numItems());
  EXPECT_GT(r.SampleSeconds, 0);
  EXPECT_GT(r.FetchSeconds, 0);
  EXPECT_GE(r.WallSeconds, r.WaitSeconds);
  EXPECT_NE(r.summary().find("batches/s"), std::string::npos);
}

TEST(Pipeline, SameBatchesWhateverTheWorkers) {
  Fixture f;
  auto features = localFeatures(f.X.data(), f.N, f.Dim);
  auto seeds = seedsOf(f.Items);
  std::vector<std::vector<PreparedBatch>> runs;
  for (int workers : {0, 1, 2, 5}) {
    for (int prefetch : {1, 3}) {
      PipelineOptions o;
      o.Workers = workers;
      o.Prefetch = prefetch;
      std::unique_ptr<Pipeline> p;
      ASSERT_TRUE(Pipeline::create(*seeds, &f.Sampler, features.get(),
                                   f.Y.data(), o, p)
                      .ok());
      runs.push_back(runEpoch(*p, 1));
      // A second epoch on the same pipeline differs from the first.
      std::vector<PreparedBatch> again = runEpoch(*p, 2);
      EXPECT_NE(again[0].Batch.Seeds, runs.back()[0].Batch.Seeds);
    }
  }
  for (size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (size_t i = 0; i < runs[0].size(); ++i)
      expectSame(runs[r][i].Batch, runs[0][i].Batch);
  }
}

TEST(Pipeline, StagesCanBeTurnedOff) {
  Fixture f;
  auto features = localFeatures(f.X.data(), f.N, f.Dim);
  auto seeds = seedsOf(f.Items);
  PipelineOptions o;
  o.Sample = false;
  std::unique_ptr<Pipeline> p;
  ASSERT_TRUE(
      Pipeline::create(*seeds, &f.Sampler, features.get(), f.Y.data(), o, p)
          .ok());
  std::vector<PreparedBatch> got = runEpoch(*p, 0);
  EXPECT_TRUE(got[0].Batch.Blocks.empty());
  // Without blocks the inputs are the seeds themselves.
  EXPECT_EQ(got[0].Batch.Features.size(), got[0].Batch.Seeds.size() * f.Dim);
  EXPECT_EQ(p->report().SampledEdges, 0);

  o.Sample = true;
  o.Fetch = false;
  ASSERT_TRUE(
      Pipeline::create(*seeds, &f.Sampler, features.get(), f.Y.data(), o, p)
          .ok());
  got = runEpoch(*p, 0);
  EXPECT_FALSE(got[0].Batch.Blocks.empty());
  EXPECT_TRUE(got[0].Batch.Features.empty());
  EXPECT_TRUE(got[0].Batch.Labels.empty());
  EXPECT_EQ(p->report().FetchSeconds, 0);
}

TEST(Pipeline, ErrorsArriveAtTheirStep) {
  Fixture f;
  // Seeds 0..8 in batches of 3, and a seed out of the graph in batch 2.
  ItemSampler items;
  ItemSamplerOptions io;
  io.BatchSize = 3;
  ASSERT_TRUE(
      ItemSampler::create({0, 1, 2, 3, 4, 5, 6, 2000, 8}, io, items).ok());
  auto seeds = seedsOf(items);
  for (int workers : {0, 2}) {
    PipelineOptions o;
    o.Workers = workers;
    std::unique_ptr<Pipeline> p;
    ASSERT_TRUE(Pipeline::create(*seeds, &f.Sampler, nullptr, nullptr, o, p)
                    .ok());
    ASSERT_TRUE(p->startEpoch(0).ok());
    PreparedBatch b;
    bool done;
    EXPECT_TRUE(p->next(b, done).ok());
    EXPECT_TRUE(p->next(b, done).ok());
    EXPECT_EQ(p->next(b, done).message(),
              "neighbour sampler: seed 2000 at position 1 is outside [0, "
              "2000)");
  }
  std::unique_ptr<Pipeline> p;
  auto few = localFeatures(f.X.data(), 10, f.Dim);
  EXPECT_EQ(Pipeline::create(*seeds, &f.Sampler, few.get(), nullptr, {}, p)
                .message(),
            "pipeline: the features have 10 rows but the graph has 2000 "
            "vertices");
  PipelineOptions bad;
  bad.Prefetch = 0;
  EXPECT_FALSE(Pipeline::create(*seeds, &f.Sampler, nullptr, nullptr, bad, p)
                   .ok());
  float row[5];
  int64_t id = -1;
  EXPECT_EQ(few->gather(&id, 1, row).message(),
            "feature fetch: vertex -1 at position 0 is outside [0, 10)");
}

TEST(Pipeline, DistributedFeaturesMatchTheRows) {
  // Features in a distributed tensor over 3 threads ranks, fetched with and
  // without a cache, by the pipeline's collective fetch thread: every rank's
  // batches hold exactly the rows of the local array.
  Fixture f;
  for (const char *type : {"distributed", "continuous", "chunked"})
    for (int64_t cache : {0, 300}) {
      Status st = dist::runThreads(3, [&](dist::Communicator &comm) {
        dist::TensorOptions to;
        EXPECT_TRUE(dist::parseMemoryType(type, to.Type));
        to.Name = "features";
        std::unique_ptr<dist::DistTensor> t;
        GNNC_TRY(dist::createTensor(comm, f.N, f.Dim, rt::DType::Float32, to,
                                    t));
        // Each rank writes its own rows.
        int64_t first = t->localRowBegin();
        std::vector<int64_t> mine(t->localRows());
        for (int64_t i = 0; i < t->localRows(); ++i)
          mine[i] = first + i;
        GNNC_TRY(t->scatter(mine.data(), mine.size(),
                            f.X.data() + first * f.Dim));
        std::unique_ptr<FeatureSource> src;
        FeatureCacheOptions co;
        co.Capacity = cache;
        GNNC_TRY(distFeatures(*t, co, src));
        DistributedItemSamplerOptions io;
        io.BatchSize = 40;
        io.Shuffle = true;
        io.DropUnevenInputs = true;
        DistributedItemSampler items;
        GNNC_TRY(DistributedItemSampler::create(
            ItemSampler::itemsOfMask(std::vector<uint8_t>(f.N, 1)), io,
            comm.rank(), comm.size(), items));
        auto seeds = seedsOf(items);
        PipelineOptions o;
        o.Workers = 2;
        std::unique_ptr<Pipeline> p;
        GNNC_TRY(Pipeline::create(*seeds, &f.Sampler, src.get(), f.Y.data(),
                                  o, p));
        for (uint64_t epoch = 0; epoch < 2; ++epoch) {
          std::vector<PreparedBatch> got = runEpoch(*p, epoch);
          EXPECT_EQ(static_cast<int64_t>(got.size()), items.numBatches());
          for (const PreparedBatch &pb : got) {
            const std::vector<int64_t> &ids = pb.Batch.inputIds();
            for (size_t i = 0; i < ids.size(); ++i)
              for (int64_t c = 0; c < f.Dim; ++c)
                if (pb.Batch.Features[i * f.Dim + c] !=
                    f.X[ids[i] * f.Dim + c])
                  return Status::error("wrong feature row");
          }
        }
        PipelineReport r = p->report();
        if (cache > 0 && std::string(type) == "distributed" &&
            !(r.CacheLookups > 0 && r.CacheHits > 0))
          return Status::error("the cache was not used");
        return Status::success();
      });
      EXPECT_TRUE(st.ok()) << type << " cache " << cache << ": "
                           << st.message();
    }
}

TEST(Pipeline, GraphInContinuousTensorsSamplesAsTheGraph) {
  // The CSR in continuous tensors over 2 threads ranks: each rank's blocks
  // equal those sampled from the rt::Graph itself.
  Fixture f;
  Status st = dist::runThreads(2, [&](dist::Communicator &comm) {
    dist::TensorOptions to;
    to.Type = dist::MemoryType::Continuous;
    to.Name = "in_ptr";
    std::unique_ptr<dist::DistTensor> ptr, src;
    GNNC_TRY(dist::createTensor(comm, f.N + 1, 0, rt::DType::Int64, to, ptr));
    to.Name = "in_src";
    GNNC_TRY(dist::createTensor(comm, f.G.numEdges(), 0, rt::DType::Int64, to,
                                src));
    if (comm.rank() == 0) {
      std::copy(f.G.inPtr().begin(), f.G.inPtr().end(),
                static_cast<int64_t *>(ptr->globalData()));
      std::copy(f.G.inSrc().begin(), f.G.inSrc().end(),
                static_cast<int64_t *>(src->globalData()));
    }
    GNNC_TRY(comm.barrier());
    GraphView view;
    GNNC_TRY(distGraphView(*ptr, *src, view));
    NeighborSampler s;
    NeighborSamplerOptions so = f.Sampler.options();
    so.KeepEdgeIds = false;
    GNNC_TRY(NeighborSampler::create(view, so, s));
    SamplerScratch scratch;
    MiniBatch mine, ref;
    std::vector<int64_t> seeds = {comm.rank(), 100 + comm.rank(), 1999};
    GNNC_TRY(s.sample(seeds, 3, 4, scratch, mine));
    GNNC_TRY(f.Sampler.sample(seeds, 3, 4, scratch, ref));
    for (int h = 0; h < 2; ++h)
      if (mine.Blocks[h].SrcIds != ref.Blocks[h].SrcIds ||
          mine.Blocks[h].Src != ref.Blocks[h].Src)
        return Status::error("different blocks");
    // A distributed (not continuous) tensor is refused with a reason.
    to.Type = dist::MemoryType::Distributed;
    to.Name = "private";
    std::unique_ptr<dist::DistTensor> priv;
    GNNC_TRY(dist::createTensor(comm, f.N + 1, 0, rt::DType::Int64, to, priv));
    Status refused = distGraphView(*priv, *src, view);
    if (refused.message() !=
        "sampling graph: private: needs the continuous memory type on the "
        "host, so that every rank reads every row (it is distributed on the "
        "host)")
      return Status::error("unexpected: " + refused.message());
    return Status::success();
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(Pipeline, RecycledBatchesHoldTheSameContent) {
  // A consumer that hands every batch back sees the same batches as one
  // that keeps them (the storage of earlier batches is reused, never their
  // content), at 0 and 2 workers.
  Fixture f;
  auto features = localFeatures(f.X.data(), f.N, f.Dim);
  auto seeds = seedsOf(f.Items);
  PipelineOptions o;
  std::unique_ptr<Pipeline> p;
  ASSERT_TRUE(
      Pipeline::create(*seeds, &f.Sampler, features.get(), f.Y.data(), o, p)
          .ok());
  std::vector<PreparedBatch> kept = runEpoch(*p, 7);
  for (int workers : {0, 2}) {
    o.Workers = workers;
    ASSERT_TRUE(
        Pipeline::create(*seeds, &f.Sampler, features.get(), f.Y.data(), o, p)
            .ok());
    for (uint64_t epoch : {uint64_t{3}, uint64_t{7}}) {
      ASSERT_TRUE(p->startEpoch(epoch).ok());
      for (size_t i = 0;; ++i) {
        PreparedBatch b;
        bool done;
        ASSERT_TRUE(p->next(b, done).ok());
        if (done)
          break;
        if (epoch == 7) {
          ASSERT_LT(i, kept.size());
          expectSame(b.Batch, kept[i].Batch);
        }
        p->recycle(std::move(b));
      }
    }
  }
}
