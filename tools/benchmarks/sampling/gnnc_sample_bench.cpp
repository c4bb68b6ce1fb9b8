//===- gnnc_sample_bench.cpp - Mini-batch sampling throughput -------------===//
//
// Part of gnnc's benchmarks (tools/bench --sampling). Times gnnc_sample's
// pipeline (ItemSampler -> NeighborSampler -> optional feature fetch) on a
// graph stored as a CSC by destination in two .npy files, over a fixed list
// of seeds, and prints one JSON object.
//
//   gnnc-sample-bench --indptr G/csc_indptr.npy --indices G/csc_indices.npy
//                     --seeds G/seeds.npy --fanouts 15,10,5 --fanouts 25,10
//                     --batch 1024 --workers 1,2 --fetch 0,1 --dim 128
//                     --reps 5 --warmup 1 [--out result.json]
//
// The seeds are taken in the order of the file and cut into batches of
// --batch (the last one may be shorter): one repetition is one epoch over
// them. For every fanout list, worker count and fetch setting, --warmup
// untimed epochs are followed by --reps timed ones. An epoch's time runs
// from Pipeline::startEpoch to the next() that reports the end; the consumer
// only counts what it receives, then hands the batch back for its storage
// to be reused (Pipeline::recycle), as a training loop does. Sampled edges
// are the edges of all blocks of a batch, summed over the batches of the
// epoch.
//
// Blocks carry no edge ids unless --keep-edge-ids
// (NeighborSamplerOptions::KeepEdgeIds).
//
// With --fetch 1 every batch also gathers the rows of its input vertices
// from a feature matrix of N x --dim float32 values (uniform in [0, 1),
// filled once before any timing) through localFeatures.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/sample/ItemSampler.h"
#include "gnnc/sample/NeighborSampler.h"
#include "gnnc/sample/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

using gnnc::rt::DType;
using gnnc::rt::Status;
namespace gs = gnnc::sample;

namespace {

std::string jsonString(const std::string &text) {
  std::string s = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      s += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      s += ' ';
    else
      s += c;
  }
  return s + "\"";
}

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "gnnc-sample-bench: %s\n", msg.c_str());
  std::printf("{\"ok\": false, \"error\": %s}\n", jsonString(msg).c_str());
  std::exit(1);
}

void check(const Status &st, const std::string &what) {
  if (!st.ok())
    die(what + ": " + st.message());
}

std::vector<int64_t> parseList(const std::string &text, const char *what) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0')
      die(std::string("bad ") + what + " list '" + text + "'");
    out.push_back(v);
  }
  if (out.empty())
    die(std::string("empty ") + what + " list");
  return out;
}

std::vector<int64_t> readInt64(const std::string &path) {
  DType dtype;
  std::vector<int64_t> shape;
  check(gnnc::rt::readNpyHeader(path, dtype, shape), path);
  if (dtype != DType::Int64 || shape.size() != 1)
    die(path + ": expected a 1-D int64 array");
  std::vector<int64_t> out(static_cast<size_t>(shape[0]));
  if (shape[0] > 0)
    check(gnnc::rt::readNpyRows(path, DType::Int64, {-1}, 0, shape[0],
                                out.data()),
          path);
  return out;
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double processCpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string num(double x) {
  if (!std::isfinite(x))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string intList(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string numList(const std::vector<double> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

struct Rep {
  double Seconds = 0, CpuSeconds = 0;
  int64_t Batches = 0, Edges = 0, Inputs = 0, Seeds = 0;
  gs::PipelineReport Report;
};

std::string reportJson(const gs::PipelineReport &r) {
  std::ostringstream o;
  o << "{\"batches\": " << r.Batches << ", \"seeds\": " << r.Seeds
    << ", \"sampled_edges\": " << r.SampledEdges
    << ", \"input_vertices\": " << r.InputVertices
    << ", \"item_s\": " << num(r.ItemSeconds)
    << ", \"sample_s\": " << num(r.SampleSeconds)
    << ", \"fetch_s\": " << num(r.FetchSeconds)
    << ", \"graph_s\": " << num(r.GraphSeconds)
    << ", \"compute_s\": " << num(r.ComputeSeconds)
    << ", \"wait_s\": " << num(r.WaitSeconds)
    << ", \"wall_s\": " << num(r.WallSeconds) << "}";
  return o.str();
}

} // namespace

int main(int argc, char **argv) {
  std::string indptrPath, indicesPath, seedsPath, outPath;
  std::vector<std::vector<int64_t>> fanoutLists;
  std::vector<int64_t> workers{1}, fetches{0};
  int64_t batch = 1024, dim = 128, reps = 5, warmup = 1, prefetch = 4;
  int64_t maxSeeds = -1;
  uint64_t seed = 1;
  bool keepEdgeIds = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc)
        die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--indptr")
      indptrPath = val();
    else if (a == "--indices")
      indicesPath = val();
    else if (a == "--seeds")
      seedsPath = val();
    else if (a == "--num-seeds")
      maxSeeds = std::stoll(val());
    else if (a == "--fanouts")
      fanoutLists.push_back(parseList(val(), "fanout"));
    else if (a == "--workers")
      workers = parseList(val(), "worker");
    else if (a == "--fetch")
      fetches = parseList(val(), "fetch");
    else if (a == "--batch")
      batch = std::stoll(val());
    else if (a == "--dim")
      dim = std::stoll(val());
    else if (a == "--reps")
      reps = std::stoll(val());
    else if (a == "--warmup")
      warmup = std::stoll(val());
    else if (a == "--prefetch")
      prefetch = std::stoll(val());
    else if (a == "--seed")
      seed = std::stoull(val());
    else if (a == "--keep-edge-ids")
      keepEdgeIds = true;
    else if (a == "--out")
      outPath = val();
    else if (a == "-h" || a == "--help") {
      std::printf("usage: gnnc-sample-bench --indptr F --indices F --seeds F "
                  "--fanouts A,B[,C] [--fanouts ...] [--batch 1024] "
                  "[--workers 1,2] [--fetch 0,1] [--dim 128] [--reps 5] "
                  "[--warmup 1] [--prefetch 4] [--num-seeds K] [--seed S] "
                  "[--keep-edge-ids] [--out FILE]\n");
      return 0;
    } else
      die("unknown argument " + a);
  }
  if (indptrPath.empty() || indicesPath.empty() || seedsPath.empty())
    die("--indptr, --indices and --seeds are required");
  if (fanoutLists.empty())
    die("at least one --fanouts is required");
  if (batch <= 0 || dim <= 0 || reps <= 0 || warmup < 0 || prefetch <= 0)
    die("--batch, --dim, --reps and --prefetch must be > 0, --warmup >= 0");

  double t0 = now();
  std::vector<int64_t> indptr = readInt64(indptrPath);
  std::vector<int64_t> indices = readInt64(indicesPath);
  std::vector<int64_t> seeds = readInt64(seedsPath);
  if (maxSeeds >= 0 && maxSeeds < static_cast<int64_t>(seeds.size()))
    seeds.resize(static_cast<size_t>(maxSeeds));
  if (indptr.empty())
    die(indptrPath + ": empty");
  gs::GraphView view;
  view.NumVertices = static_cast<int64_t>(indptr.size()) - 1;
  view.InPtr = indptr.data();
  view.InSrc = indices.data();
  if (view.numEdges() != static_cast<int64_t>(indices.size()))
    die("indptr's last entry does not match the number of indices");
  double loadSeconds = now() - t0;

  // The feature matrix, filled once (splitmix64, uniform in [0, 1)).
  std::vector<float> features;
  std::unique_ptr<gs::FeatureSource> featureSource;
  double fillSeconds = 0;
  if (std::find(fetches.begin(), fetches.end(), 1) != fetches.end()) {
    double f0 = now();
    int64_t n = view.NumVertices * dim;
    features.resize(static_cast<size_t>(n));
    unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < nt; ++t)
      ts.emplace_back([&, t] {
        int64_t b = n * t / nt, e = n * (t + 1) / nt;
        for (int64_t i = b; i < e; ++i) {
          uint64_t z = static_cast<uint64_t>(i) + 0x9e3779b97f4a7c15ULL;
          z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
          z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
          z ^= z >> 31;
          features[static_cast<size_t>(i)] =
              static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
        }
      });
    for (auto &t : ts)
      t.join();
    featureSource = gs::localFeatures(features.data(), view.NumVertices, dim);
    fillSeconds = now() - f0;
  }

  gs::ItemSamplerOptions io;
  io.BatchSize = batch;
  io.Shuffle = false;
  io.DropLast = false;
  gs::ItemSampler items;
  check(gs::ItemSampler::create(seeds, io, items), "ItemSampler::create");
  std::unique_ptr<gs::SeedSource> seedSource = gs::seedsOf(items);

  std::ostringstream runs;
  bool firstRun = true;
  uint64_t epoch = 0;
  for (const auto &fanouts : fanoutLists) {
    gs::NeighborSamplerOptions so;
    so.Kind = gs::SamplerKind::Neighbor;
    so.Fanouts = fanouts;
    so.Replace = false;
    so.Seed = seed;
    so.KeepEdgeIds = keepEdgeIds;
    gs::NeighborSampler sampler;
    check(gs::NeighborSampler::create(view, so, sampler),
          "NeighborSampler::create");
    for (int64_t w : workers) {
      for (int64_t fetch : fetches) {
        gs::PipelineOptions po;
        po.Workers = static_cast<int>(w);
        po.Prefetch = static_cast<int>(prefetch);
        po.Sample = true;
        po.Fetch = fetch != 0;
        po.BuildGraphs = false;
        std::unique_ptr<gs::Pipeline> pipe;
        check(gs::Pipeline::create(*seedSource, &sampler,
                                   fetch ? featureSource.get() : nullptr,
                                   nullptr, po, pipe),
              "Pipeline::create");
        std::vector<Rep> timed;
        std::vector<int64_t> perBatchEdges;
        for (int64_t r = 0; r < warmup + reps; ++r) {
          Rep rep;
          pipe->resetReport();
          std::vector<int64_t> edges;
          double c0 = processCpu();
          double s0 = now();
          check(pipe->startEpoch(epoch++), "startEpoch");
          for (;;) {
            gs::PreparedBatch b;
            bool done = false;
            check(pipe->next(b, done), "next");
            if (done)
              break;
            int64_t e = b.Batch.numSampledEdges();
            rep.Edges += e;
            rep.Inputs += static_cast<int64_t>(b.Batch.inputIds().size());
            rep.Seeds += static_cast<int64_t>(b.Batch.Seeds.size());
            rep.Batches += 1;
            if (r == 0)
              edges.push_back(e);
            if (fetch && static_cast<int64_t>(b.Batch.Features.size()) !=
                             b.Batch.FeatureDim *
                                 static_cast<int64_t>(b.Batch.inputIds().size()))
              die("a fetched batch has the wrong number of feature values");
            // Its storage serves a later batch (Pipeline::recycle).
            pipe->recycle(std::move(b));
          }
          rep.Seconds = now() - s0;
          rep.CpuSeconds = processCpu() - c0;
          pipe->stop();
          rep.Report = pipe->report();
          if (r == 0)
            perBatchEdges = edges;
          if (r >= warmup)
            timed.push_back(rep);
        }
        std::vector<double> secs, cpu, eps, bps;
        for (const Rep &rep : timed) {
          secs.push_back(rep.Seconds);
          cpu.push_back(rep.CpuSeconds);
          eps.push_back(rep.Edges / rep.Seconds);
          bps.push_back(rep.Batches / rep.Seconds);
        }
        // The repetition with the median time, for its stage split.
        size_t mid = 0;
        {
          std::vector<size_t> idx(timed.size());
          for (size_t i = 0; i < idx.size(); ++i)
            idx[i] = i;
          std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
            return timed[a].Seconds < timed[b].Seconds;
          });
          mid = idx[idx.size() / 2];
        }
        const Rep &m = timed[mid];
        if (!firstRun)
          runs << ",\n";
        firstRun = false;
        runs << "  {\"fanouts\": " << intList(fanouts) << ", \"workers\": " << w
             << ", \"fetch\": " << (fetch ? "true" : "false")
             << ", \"batches\": " << m.Batches << ", \"seeds\": " << m.Seeds
             << ", \"sampled_edges\": " << m.Edges
             << ", \"input_vertices\": " << m.Inputs
             << ", \"median_s\": " << num(median(secs))
             << ", \"median_edges_per_s\": " << num(median(eps))
             << ", \"median_batches_per_s\": " << num(median(bps))
             << ", \"median_cpu_s\": " << num(median(cpu))
             << ", \"rep_s\": " << numList(secs)
             << ", \"rep_cpu_s\": " << numList(cpu)
             << ", \"rep_edges\": [";
        for (size_t i = 0; i < timed.size(); ++i)
          runs << (i ? ", " : "") << timed[i].Edges;
        runs << "], \"batch_edges\": " << intList(perBatchEdges)
             << ", \"report\": " << reportJson(m.Report)
             << ", \"report_summary\": " << jsonString(m.Report.summary()) << "}";
        std::fprintf(stderr,
                     "gnnc-sample-bench: fanouts %s workers %lld fetch %lld: "
                     "%.4g s, %.4g edges/s, %.4g batches/s\n",
                     intList(fanouts).c_str(), static_cast<long long>(w),
                     static_cast<long long>(fetch), median(secs),
                     median(eps), median(bps));
      }
    }
  }

  std::ostringstream o;
  o << "{\"ok\": true, \"impl\": \"gnnc\", \"num_vertices\": "
    << view.NumVertices << ", \"num_edges\": " << view.numEdges()
    << ", \"num_seeds\": " << seeds.size() << ", \"batch_size\": " << batch
    << ", \"dim\": " << dim << ", \"reps\": " << reps
    << ", \"warmup\": " << warmup << ", \"prefetch\": " << prefetch
    << ", \"keep_edge_ids\": " << (keepEdgeIds ? "true" : "false")
    << ", \"load_s\": " << num(loadSeconds)
    << ", \"feature_fill_s\": " << num(fillSeconds)
    << ", \"hardware_concurrency\": " << std::thread::hardware_concurrency();
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  o << ", \"maxrss_bytes\": " << static_cast<int64_t>(ru.ru_maxrss) * 1024
    << ",\n \"runs\": [\n"
    << runs.str() << "]}\n";
  if (!outPath.empty()) {
    std::ofstream f(outPath);
    f << o.str();
    if (!f)
      die("cannot write " + outPath);
  }
  std::cout << o.str();
  return 0;
}
