//===- gnnc_dist_bench.cpp - gnnc-dist-bench: gathers over ranks ----------===//
//
// Part of gnnc's benchmark harness (tools/bench --dist). An MPI program that
// measures, at the world size it is launched with:
//
//   * gather throughput of a row-partitioned float32 table in each host
//     memory type (continuous, chunked, distributed; DistTensor::gather),
//     for rows of several widths and for uniform and power-law (Zipf-like
//     over a randomly permuted id space) index streams;
//   * the same gathers from a plain array in each rank's own memory (the
//     same indices, the same row size): the upper bound;
//   * the STREAM copy and triad kernels, run on every rank at once;
//   * an Embedding on a distributed table read through a SIEVE or LFU row
//     cache against the same table without one: hit rate and speed-up.
//
// Each timed repetition (one or more gathers of a fresh batch each) is
// preceded by a barrier; its time runs from the first rank's start to the
// last rank's end (ranks on one node share the clock), and throughput
// counts the rows every rank received (rows/s) and their bytes (GB/s, 1e9
// bytes/s). Every rank records its process CPU time
// (CLOCK_PROCESS_CPUTIME_ID) beside its wall time, since ranks may
// outnumber cores. Every distributed gather is compared byte for byte with
// the local gather of the same indices. The measurements of one row width
// (the local array and every memory type), and those of the cache
// configurations, run interleaved, so that the changing load of a shared
// machine falls on all of them alike. Rank 0 prints one JSON object (or
// writes it to --out).
//
//   mpirun -np 4 gnnc-dist-bench [--table-mib M] [--widths 64,128,...]
//       [--batch B] [--rep-mib M] [--reps R] [--warmup W]
//       [--types continuous,...] [--dists uniform,powerlaw] [--zipf S]
//       [--stream-elements N] [--stream-reps R] [--cache-fractions 0.01,0.1]
//       [--cache-width W] [--cache-steps S] [--cache-warmup S] [--seed S]
//       [--out FILE]
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Communicator.h"
#include "gnnc/dist/DistTensor.h"
#include "gnnc/dist/Embedding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <vector>

using namespace gnnc;
using namespace gnnc::dist;

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  double TableMiB = 128;
  std::vector<int64_t> Widths = {64, 128, 256, 512};
  int64_t Batch = 4096;
  double RepMiB = 8;
  int Reps = 15;
  int Warmup = 2;
  std::vector<std::string> Types = {"continuous", "chunked", "distributed"};
  std::vector<std::string> Dists = {"uniform", "powerlaw"};
  double Zipf = 1.0;
  int64_t StreamElements = int64_t(1) << 23;
  int StreamReps = 10;
  std::vector<double> CacheFractions = {0.01, 0.1};
  int64_t CacheWidth = 128;
  int CacheSteps = 20;
  int CacheWarmup = 20;
  uint64_t Seed = 42;
  std::string Out;
};

template <class T> bool parseList(const char *text, std::vector<T> &out) {
  out.clear();
  std::string s(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos)
      end = s.size();
    std::string item = s.substr(pos, end - pos);
    if (item.empty())
      return false;
    char *stop = nullptr;
    if constexpr (std::is_same_v<T, std::string>) {
      out.push_back(item);
    } else if constexpr (std::is_floating_point_v<T>) {
      out.push_back(std::strtod(item.c_str(), &stop));
      if (*stop)
        return false;
    } else {
      out.push_back(std::strtoll(item.c_str(), &stop, 10));
      if (*stop)
        return false;
    }
    pos = end + 1;
  }
  return !out.empty();
}

rt::Status parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc)
      return rt::Status::error(fmt::format("option {} needs a value", a));
    const char *v = argv[++i];
    bool ok = true;
    char *stop = nullptr;
    if (a == "--table-mib") {
      o.TableMiB = std::strtod(v, &stop);
      ok = !*stop && o.TableMiB > 0;
    } else if (a == "--widths") {
      ok = parseList(v, o.Widths);
      for (int64_t w : o.Widths)
        ok = ok && w > 0 && w <= (1 << 16);
    } else if (a == "--batch") {
      o.Batch = std::strtoll(v, &stop, 10);
      ok = !*stop && o.Batch > 0;
    } else if (a == "--rep-mib") {
      o.RepMiB = std::strtod(v, &stop);
      ok = !*stop && o.RepMiB > 0;
    } else if (a == "--reps") {
      o.Reps = std::atoi(v);
      ok = o.Reps > 0 && o.Reps <= 100000;
    } else if (a == "--warmup") {
      o.Warmup = std::atoi(v);
      ok = o.Warmup >= 0 && o.Warmup <= 1000;
    } else if (a == "--types") {
      ok = parseList(v, o.Types);
      for (const std::string &t : o.Types) {
        MemoryType mt;
        ok = ok && parseMemoryType(t, mt);
      }
    } else if (a == "--dists") {
      ok = parseList(v, o.Dists);
      for (const std::string &d : o.Dists)
        ok = ok && (d == "uniform" || d == "powerlaw");
    } else if (a == "--zipf") {
      o.Zipf = std::strtod(v, &stop);
      ok = !*stop && o.Zipf > 0;
    } else if (a == "--stream-elements") {
      o.StreamElements = std::strtoll(v, &stop, 10);
      ok = !*stop && o.StreamElements >= 1024;
    } else if (a == "--stream-reps") {
      o.StreamReps = std::atoi(v);
      ok = o.StreamReps > 0 && o.StreamReps <= 1000;
    } else if (a == "--cache-fractions") {
      ok = parseList(v, o.CacheFractions);
      for (double f : o.CacheFractions)
        ok = ok && f > 0 && f <= 1;
    } else if (a == "--cache-width") {
      o.CacheWidth = std::strtoll(v, &stop, 10);
      ok = !*stop && o.CacheWidth > 0;
    } else if (a == "--cache-steps") {
      o.CacheSteps = std::atoi(v);
      ok = o.CacheSteps > 0;
    } else if (a == "--cache-warmup") {
      o.CacheWarmup = std::atoi(v);
      ok = o.CacheWarmup >= 0;
    } else if (a == "--seed") {
      o.Seed = std::strtoull(v, &stop, 10);
      ok = !*stop;
    } else if (a == "--out") {
      o.Out = v;
    } else {
      return rt::Status::error(fmt::format("unknown option {}", a));
    }
    if (!ok)
      return rt::Status::error(
          fmt::format("option {}: invalid value '{}'", a, v));
  }
  return rt::Status::success();
}

//===----------------------------------------------------------------------===//
// Clocks, statistics, JSON
//===----------------------------------------------------------------------===//

double clockSeconds(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}
double wallNow() { return clockSeconds(CLOCK_MONOTONIC); }
double cpuNow() { return clockSeconds(CLOCK_PROCESS_CPUTIME_ID); }

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += {'\\', c};
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out + "\"";
}

std::string jsonNumber(double x) {
  if (!std::isfinite(x))
    return "null";
  return fmt::format("{:.6g}", x);
}

template <class T> std::string jsonArray(const std::vector<T> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      out += ", ";
    if constexpr (std::is_floating_point_v<T>)
      out += jsonNumber(v[i]);
    else
      out += fmt::format("{}", v[i]);
  }
  return out + "]";
}

/// The timings of one measured operation, on one rank: for each timed
/// repetition its start and end (CLOCK_MONOTONIC) and the process CPU
/// seconds in between.
struct Timings {
  std::vector<double> Start, End, Cpu;
};

/// Every rank's timings, summarised. A repetition's time is its span over
/// the ranks, from the first rank's start to the last rank's end, where all
/// ranks share one clock (one node); across nodes, the slowest rank's own
/// time. The span counts a rank that, past the barrier, waits for a core
/// before it starts; each rank's own time does not.
struct Summary {
  bool Span = false;
  std::vector<double> RepWall;           ///< per repetition
  std::vector<double> RankMedianWall;    ///< per rank, its own times
  std::vector<double> RankWall, RankCpu; ///< per rank, totals
};

/// Gathers every rank's timings (the same number of repetitions on each)
/// into a Summary on every rank. Collective.
rt::Status summarise(Communicator &comm, const Timings &t, Summary &out) {
  size_t reps = t.Start.size();
  size_t n = static_cast<size_t>(comm.size());
  std::vector<double> start(reps * n), end(reps * n), cpu(reps * n);
  GNNC_TRY(comm.allGather(t.Start.data(), start.data(), reps, DType::Float64));
  GNNC_TRY(comm.allGather(t.End.data(), end.data(), reps, DType::Float64));
  GNNC_TRY(comm.allGather(t.Cpu.data(), cpu.data(), reps, DType::Float64));
  Summary s;
  s.Span = comm.numNodes() == 1;
  for (size_t i = 0; i < reps; ++i) {
    double first = start[i], last = end[i], longest = 0;
    for (size_t r = 0; r < n; ++r) {
      first = std::min(first, start[r * reps + i]);
      last = std::max(last, end[r * reps + i]);
      longest = std::max(longest, end[r * reps + i] - start[r * reps + i]);
    }
    s.RepWall.push_back(s.Span ? last - first : longest);
  }
  for (size_t r = 0; r < n; ++r) {
    std::vector<double> mine(reps);
    for (size_t i = 0; i < reps; ++i)
      mine[i] = end[r * reps + i] - start[r * reps + i];
    s.RankMedianWall.push_back(median(mine));
    s.RankWall.push_back(std::accumulate(mine.begin(), mine.end(), 0.0));
    s.RankCpu.push_back(std::accumulate(cpu.begin() + r * reps,
                                        cpu.begin() + (r + 1) * reps, 0.0));
  }
  out = std::move(s);
  return rt::Status::success();
}

/// The JSON fields of a summary: median and best repetition, rows/s and
/// GB/s at the median (`rowsPerRep` rows of `rowBytes`, all ranks
/// together), per-rank figures.
std::string summaryJson(const Summary &s, double rowsPerRep, double rowBytes) {
  double med = median(s.RepWall);
  double best = *std::min_element(s.RepWall.begin(), s.RepWall.end());
  return fmt::format(
      "\"timing\": {}, \"median_s\": {}, \"best_s\": {}, "
      "\"rows_per_s\": {}, \"gbs\": {}, \"best_gbs\": {}, \"rep_s\": {}, "
      "\"rank_median_s\": {}, \"rank_wall_s\": {}, \"rank_cpu_s\": {}",
      s.Span ? "\"span\"" : "\"slowest rank\"", jsonNumber(med),
      jsonNumber(best), jsonNumber(rowsPerRep / med),
      jsonNumber(rowsPerRep * rowBytes / med / 1e9),
      jsonNumber(rowsPerRep * rowBytes / best / 1e9), jsonArray(s.RepWall),
      jsonArray(s.RankMedianWall), jsonArray(s.RankWall), jsonArray(s.RankCpu));
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// The value of element (row, col) of every table: an integer below 2^24,
/// so exact in float32, that differs between neighbouring rows and columns.
float tableValue(int64_t row, int64_t col) {
  uint64_t h = static_cast<uint64_t>(row) * 2654435761ull +
               static_cast<uint64_t>(col) * 40503ull + 12345ull;
  h ^= h >> 17;
  return static_cast<float>(h & 0xFFFFFFull);
}

/// Index streams over [0, rows): uniform, or power-law: rank k (from 1) has
/// weight k^-s, and ranks map to ids through a random permutation that every
/// process draws alike from `seed`, so the hot rows are spread over the
/// partition and are the same on every rank.
class IndexSource {
public:
  IndexSource(int64_t rows, double exponent, uint64_t seed)
      : Rows(rows), Perm(rows), Cdf(rows) {
    std::iota(Perm.begin(), Perm.end(), int64_t(0));
    std::mt19937_64 g(seed);
    std::shuffle(Perm.begin(), Perm.end(), g);
    double sum = 0;
    for (int64_t k = 0; k < rows; ++k) {
      sum += std::pow(static_cast<double>(k + 1), -exponent);
      Cdf[k] = sum;
    }
    for (double &c : Cdf)
      c /= sum;
  }

  std::vector<int64_t> draw(const std::string &dist, size_t n,
                            uint64_t seed) const {
    std::vector<int64_t> out(n);
    std::mt19937_64 g(seed);
    if (dist == "uniform") {
      std::uniform_int_distribution<int64_t> u(0, Rows - 1);
      for (int64_t &x : out)
        x = u(g);
    } else {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (int64_t &x : out) {
        auto it = std::lower_bound(Cdf.begin(), Cdf.end(), u(g));
        int64_t k = std::min<int64_t>(it - Cdf.begin(), Rows - 1);
        x = Perm[k];
      }
    }
    return out;
  }

private:
  int64_t Rows;
  std::vector<int64_t> Perm;
  std::vector<double> Cdf;
};

uint64_t streamSeed(uint64_t seed, int rank, int64_t width, int dist) {
  return seed * 1000003ull + static_cast<uint64_t>(rank) * 7919ull +
         static_cast<uint64_t>(width) * 131ull + static_cast<uint64_t>(dist);
}

//===----------------------------------------------------------------------===//
// The measurements
//===----------------------------------------------------------------------===//

/// One timed operation: repetition i (negative: a warm-up).
using Body = std::function<rt::Status(int)>;

class Bench {
public:
  Bench(Communicator &comm, const Options &o) : Comm(comm), O(o) {}

  rt::Status run();
  /// The JSON object of everything measured so far.
  std::string json(const std::string &error) const;

private:
  rt::Status stream();
  rt::Status gathers(int64_t width);
  rt::Status cache();
  rt::Status verify(const std::string &what, const void *got, const void *want,
                    size_t bytes);

  /// Times `reps` rounds after `warmup` untimed ones. In round i (from
  /// -warmup) every body runs once as body(i), each after a barrier, in an
  /// order rotated by one from round to round, so that the changing load of
  /// a shared machine falls on every body alike. out[b]: body b's timings.
  rt::Status timeRounds(int warmup, int reps, const std::vector<Body> &bodies,
                        std::vector<Timings> &out);

  Communicator &Comm;
  const Options &O;
  std::string StreamJson;
  std::vector<std::string> GatherJson, CacheJson;
};

rt::Status Bench::timeRounds(int warmup, int reps,
                             const std::vector<Body> &bodies,
                             std::vector<Timings> &out) {
  size_t nb = bodies.size();
  out.assign(nb, Timings{});
  for (int i = -warmup; i < reps; ++i) {
    for (size_t j = 0; j < nb; ++j) {
      size_t b = (j + static_cast<size_t>(i + warmup)) % nb;
      GNNC_TRY(Comm.barrier());
      double w0 = wallNow(), c0 = cpuNow();
      GNNC_TRY(bodies[b](i));
      double w1 = wallNow(), c1 = cpuNow();
      if (i >= 0) {
        out[b].Start.push_back(w0);
        out[b].End.push_back(w1);
        out[b].Cpu.push_back(c1 - c0);
      }
    }
  }
  return rt::Status::success();
}

rt::Status Bench::verify(const std::string &what, const void *got,
                         const void *want, size_t bytes) {
  int64_t bad = std::memcmp(got, want, bytes) != 0 ? 1 : 0;
  int64_t anyBad = 0;
  GNNC_TRY(Comm.allReduce(&bad, &anyBad, 1, DType::Int64, ReduceOp::Sum));
  if (anyBad)
    return rt::Status::error(fmt::format(
        "{}: the gathered rows differ from the local gather on {} rank(s)",
        what, anyBad));
  return rt::Status::success();
}

rt::Status Bench::stream() {
  // Each rank runs the kernels on its own three arrays, all ranks at once;
  // the bytes are every rank's.
  size_t n = static_cast<size_t>(O.StreamElements);
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 0.5);
  const double scalar = 3.0;
  std::vector<Timings> t;
  GNNC_TRY(timeRounds(1, O.StreamReps,
                      {[&](int) {
                         double *__restrict dst = c.data();
                         const double *__restrict src = a.data();
                         for (size_t i = 0; i < n; ++i)
                           dst[i] = src[i];
                         return rt::Status::success();
                       },
                       [&](int) {
                         double *__restrict dst = a.data();
                         const double *__restrict x = b.data();
                         const double *__restrict y = c.data();
                         for (size_t i = 0; i < n; ++i)
                           dst[i] = x[i] + scalar * y[i];
                         return rt::Status::success();
                       }},
                      t));
  double check = 0;
  for (size_t i = 0; i < n; i += 4099)
    check += a[i] + c[i];
  Summary sc, st;
  GNNC_TRY(summarise(Comm, t[0], sc));
  GNNC_TRY(summarise(Comm, t[1], st));
  // summaryJson counts "rows": one element per rank per repetition here.
  double elems = static_cast<double>(n) * Comm.size();
  StreamJson = fmt::format(
      "{{\"elements_per_rank\": {}, \"array_bytes\": {}, \"reps\": {}, "
      "\"check\": {}, \"copy\": {{\"bytes_per_element\": 16, {}}}, "
      "\"triad\": {{\"bytes_per_element\": 24, {}}}}}",
      n, 8 * n, O.StreamReps, jsonNumber(check), summaryJson(sc, elems, 16),
      summaryJson(st, elems, 24));
  return rt::Status::success();
}

rt::Status Bench::gathers(int64_t width) {
  size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
  int64_t rows = std::max<int64_t>(
      static_cast<int64_t>(O.TableMiB * 1048576.0 / rowBytes), Comm.size());
  size_t batch = static_cast<size_t>(O.Batch);
  // Each repetition makes `perRep` calls, about RepMiB of rows per rank, so
  // that narrow rows are not timed one short call at a time.
  int perRep = static_cast<int>(std::max<double>(
      1.0, std::round(O.RepMiB * 1048576.0 / (double(batch) * rowBytes))));
  size_t calls = static_cast<size_t>(O.Warmup + O.Reps) * perRep;

  // The local table: every row, in this rank's own memory.
  std::vector<float> local(static_cast<size_t>(rows * width));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      local[r * width + c] = tableValue(r, c);
  std::vector<float> out(batch * width), want(batch * width);

  // The tables of every memory type, each rank filling its own rows.
  std::vector<std::unique_ptr<DistTensor>> tensors;
  for (const std::string &typeName : O.Types) {
    TensorOptions to;
    parseMemoryType(typeName, to.Type);
    to.Name = fmt::format("{} table", typeName);
    std::unique_ptr<DistTensor> tensor;
    GNNC_TRY(createTensor(Comm, rows, width, DType::Float32, to, tensor));
    auto *mine = static_cast<float *>(tensor->localData());
    int64_t first = tensor->localRowBegin();
    for (int64_t r = 0; r < tensor->localRows(); ++r)
      for (int64_t c = 0; c < width; ++c)
        mine[r * width + c] = tableValue(first + r, c);
    tensors.push_back(std::move(tensor));
  }
  GNNC_TRY(Comm.barrier());

  IndexSource source(rows, O.Zipf, O.Seed);
  for (size_t d = 0; d < O.Dists.size(); ++d) {
    const std::string &dist = O.Dists[d];
    // Every call gathers a fresh batch; the local and distributed gathers
    // read the same batches.
    std::vector<int64_t> idx = source.draw(
        dist, batch * calls, streamSeed(O.Seed, Comm.rank(), width, int(d)));
    // Call k of repetition i (i < 0: a warm-up).
    auto batchOf = [&](int i, int k) {
      return idx.data() +
             (static_cast<size_t>(i + O.Warmup) * perRep + k) * batch;
    };
    auto localGather = [&](const int64_t *ix, float *dst) {
      for (size_t k = 0; k < batch; ++k)
        std::memcpy(dst + k * width, local.data() + ix[k] * width, rowBytes);
    };
    // Distinct rows of the stream, a property of the index distribution.
    std::vector<int64_t> sorted(idx.begin(), idx.end());
    std::sort(sorted.begin(), sorted.end());
    int64_t distinct =
        std::unique(sorted.begin(), sorted.end()) - sorted.begin();

    // The first batch of every table, checked against the local gather.
    localGather(batchOf(-O.Warmup, 0), want.data());
    for (size_t t = 0; t < tensors.size(); ++t) {
      GNNC_TRY(tensors[t]->gather(batchOf(-O.Warmup, 0), batch, out.data()));
      GNNC_TRY(verify(fmt::format("{} table, width {}, {} indices", O.Types[t],
                                  width, dist),
                      out.data(), want.data(), batch * rowBytes));
    }

    std::vector<Body> bodies = {[&](int i) {
      for (int k = 0; k < perRep; ++k)
        localGather(batchOf(i, k), out.data());
      return rt::Status::success();
    }};
    for (auto &tensor : tensors)
      bodies.push_back([&](int i) {
        for (int k = 0; k < perRep; ++k)
          GNNC_TRY(tensor->gather(batchOf(i, k), batch, out.data()));
        return rt::Status::success();
      });
    std::vector<Timings> times;
    GNNC_TRY(timeRounds(O.Warmup, O.Reps, bodies, times));

    for (size_t b = 0; b < bodies.size(); ++b) {
      Summary s;
      GNNC_TRY(summarise(Comm, times[b], s));
      std::string type = b == 0 ? "local" : O.Types[b - 1];
      double localBytes =
          b == 0 ? static_cast<double>(rows) * rowBytes
                 : static_cast<double>(tensors[b - 1]->localBytes());
      double rowsPerRep = static_cast<double>(batch) * perRep * Comm.size();
      GatherJson.push_back(fmt::format(
          "{{\"type\": {}, \"width\": {}, \"dist\": {}, \"rows\": {}, "
          "\"row_bytes\": {}, \"table_bytes\": {}, \"batch_per_rank\": {}, "
          "\"calls_per_rep\": {}, \"reps\": {}, \"warmup\": {}, "
          "\"distinct_fraction\": {}, \"local_bytes_rank0\": {}, "
          "\"verified\": true, {}}}",
          jsonString(type), width, jsonString(dist), rows, rowBytes,
          static_cast<double>(rows) * rowBytes, batch, perRep, O.Reps, O.Warmup,
          jsonNumber(static_cast<double>(distinct) / idx.size()),
          jsonNumber(localBytes), summaryJson(s, rowsPerRep, rowBytes)));
    }
  }
  return rt::Status::success();
}

rt::Status Bench::cache() {
  int64_t width = O.CacheWidth;
  size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
  int64_t rows = std::max<int64_t>(
      static_cast<int64_t>(O.TableMiB * 1048576.0 / rowBytes), Comm.size());
  size_t batch = static_cast<size_t>(O.Batch);
  int steps = O.CacheWarmup + O.CacheSteps;
  IndexSource source(rows, O.Zipf, O.Seed + 1);

  struct Config {
    CachePolicy Policy;
    double Fraction; // 0: no cache
  };
  std::vector<Config> configs = {{CachePolicy::Sieve, 0}};
  for (double f : O.CacheFractions)
    for (CachePolicy p : {CachePolicy::Sieve, CachePolicy::Lfu})
      configs.push_back({p, f});

  for (size_t d = 0; d < O.Dists.size(); ++d) {
    const std::string &dist = O.Dists[d];
    std::vector<int64_t> idx =
        source.draw(dist, batch * steps,
                    streamSeed(O.Seed + 1, Comm.rank(), width, int(d)));
    std::vector<float> reference(batch * width);
    std::vector<std::vector<float>> outs(configs.size(),
                                         std::vector<float>(batch * width));
    std::vector<std::unique_ptr<Embedding>> embs;
    for (const Config &cfg : configs) {
      TensorOptions to;
      to.Type = MemoryType::Distributed;
      to.Name = "embedding";
      CacheOptions co;
      co.CapacityRows = static_cast<int64_t>(cfg.Fraction * rows);
      if (cfg.Fraction > 0)
        co.CapacityRows = std::max<int64_t>(co.CapacityRows, 1);
      co.Policy = cfg.Policy;
      std::unique_ptr<Embedding> emb;
      GNNC_TRY(Embedding::create(Comm, rows, width, to, OptimizerOptions{}, co,
                                 emb));
      GNNC_TRY(emb->initUniform(-1.0f, 1.0f, O.Seed));
      embs.push_back(std::move(emb));
    }
    // Warm-up steps fill the caches; the hit rates and times are those of
    // the steps after them. Every configuration reads the same steps,
    // interleaved.
    std::vector<Body> bodies;
    for (size_t c = 0; c < embs.size(); ++c)
      bodies.push_back([&, c](int i) {
        return embs[c]->gather(idx.data() + (O.CacheWarmup + i) * batch, batch,
                               outs[c].data());
      });
    std::vector<Timings> times;
    GNNC_TRY(timeRounds(O.CacheWarmup, 0, bodies, times));
    for (auto &emb : embs)
      if (emb->cache())
        emb->cache()->resetStats();
    GNNC_TRY(timeRounds(0, O.CacheSteps, bodies, times));

    // The last step's rows, through each cache, against the table itself.
    const int64_t *lastIdx = idx.data() + (steps - 1) * batch;
    GNNC_TRY(embs[0]->table().gather(lastIdx, batch, reference.data()));
    for (size_t c = 0; c < embs.size(); ++c) {
      const Config &cfg = configs[c];
      int64_t capacity = embs[c]->cache() ? embs[c]->cache()->capacity() : 0;
      GNNC_TRY(verify(fmt::format("embedding ({} cache of {} rows), {} "
                                  "indices",
                                  cachePolicyName(cfg.Policy), capacity, dist),
                      outs[c].data(), reference.data(), batch * rowBytes));
      Summary s;
      GNNC_TRY(summarise(Comm, times[c], s));
      CacheStats st;
      if (embs[c]->cache())
        st = embs[c]->cache()->stats();
      int64_t mine[5] = {int64_t(st.Lookups), int64_t(st.Hits),
                         int64_t(st.Inserts), int64_t(st.Evictions),
                         int64_t(st.Invalidations)};
      std::vector<int64_t> all(5 * Comm.size());
      GNNC_TRY(Comm.allGather(mine, all.data(), 5, DType::Int64));
      std::vector<int64_t> lookups, hits, evictions;
      int64_t sumLookups = 0, sumHits = 0;
      for (int r = 0; r < Comm.size(); ++r) {
        lookups.push_back(all[5 * r]);
        hits.push_back(all[5 * r + 1]);
        evictions.push_back(all[5 * r + 3]);
        sumLookups += all[5 * r];
        sumHits += all[5 * r + 1];
      }
      double rowsPerStep = static_cast<double>(batch) * Comm.size();
      CacheJson.push_back(fmt::format(
          "{{\"policy\": {}, \"capacity_fraction\": {}, \"capacity_rows\": {}, "
          "\"width\": {}, \"dist\": {}, \"rows\": {}, \"batch_per_rank\": {}, "
          "\"steps\": {}, \"warmup_steps\": {}, \"lookups\": {}, "
          "\"hits\": {}, \"hit_rate\": {}, \"rank_lookups\": {}, "
          "\"rank_hits\": {}, \"rank_evictions\": {}, \"verified\": true, "
          "{}}}",
          jsonString(cfg.Fraction > 0 ? cachePolicyName(cfg.Policy) : "none"),
          jsonNumber(cfg.Fraction), capacity, width, jsonString(dist), rows,
          batch, O.CacheSteps, O.CacheWarmup, sumLookups, sumHits,
          sumLookups ? jsonNumber(double(sumHits) / double(sumLookups))
                     : std::string("null"),
          jsonArray(lookups), jsonArray(hits), jsonArray(evictions),
          summaryJson(s, rowsPerStep, static_cast<double>(rowBytes))));
    }
  }
  return rt::Status::success();
}

rt::Status Bench::run() {
  GNNC_TRY(stream());
  for (int64_t w : O.Widths)
    GNNC_TRY(gathers(w));
  GNNC_TRY(cache());
  return rt::Status::success();
}

std::string joinObjects(const std::vector<std::string> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ",\n  " : "\n  ") + v[i];
  return out + (v.empty() ? "]" : "\n ]");
}

std::string Bench::json(const std::string &error) const {
  return fmt::format("\"stream\": {},\n \"gather\": {},\n \"cache\": {}",
                     StreamJson.empty() ? std::string("null") : StreamJson,
                     joinObjects(GatherJson), joinObjects(CacheJson)) +
         (error.empty() ? "" : ",\n \"error\": " + jsonString(error));
}

/// This process' resource use: CPU seconds (user, system), context switches
/// (voluntary, involuntary) and peak resident set.
std::vector<double> resourceUse() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval &t) {
    return static_cast<double>(t.tv_sec) +
           1e-6 * static_cast<double>(t.tv_usec);
  };
  return {sec(ru.ru_utime), sec(ru.ru_stime), static_cast<double>(ru.ru_nvcsw),
          static_cast<double>(ru.ru_nivcsw),
          static_cast<double>(ru.ru_maxrss) * 1024.0};
}

int fail(const std::string &message) {
  std::printf("{\"ok\": false, \"error\": %s}\n", jsonString(message).c_str());
  std::fflush(stdout);
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  double wall0 = wallNow();
  Options o;
  rt::Status st = parseOptions(argc, argv, o);
  if (!st.ok())
    return fail("gnnc-dist-bench: " + st.message());
  std::unique_ptr<Communicator> comm;
  st = createMpiWorld(comm);
  if (!st.ok())
    return fail("gnnc-dist-bench: " + st.message());

  Bench bench(*comm, o);
  rt::Status result = bench.run();

  // Per-rank resource use, gathered when the communicator still works.
  std::vector<double> ru = resourceUse();
  ru.push_back(wallNow() - wall0);
  std::vector<double> all(ru.size() * comm->size());
  bool haveAll =
      !comm->broken() &&
      comm->allGather(ru.data(), all.data(), ru.size(), DType::Float64).ok();
  if (comm->rank() != 0)
    return result.ok() ? 0 : 1;

  std::string ranks = "[";
  if (haveAll)
    for (int r = 0; r < comm->size(); ++r) {
      const double *x = all.data() + r * ru.size();
      ranks += fmt::format(
          "{}{{\"rank\": {}, \"user_s\": {}, \"system_s\": {}, "
          "\"voluntary_switches\": {}, \"involuntary_switches\": {}, "
          "\"max_rss_bytes\": {}, \"wall_s\": {}}}",
          r ? ", " : "", r, jsonNumber(x[0]), jsonNumber(x[1]),
          jsonNumber(x[2]), jsonNumber(x[3]), jsonNumber(x[4]),
          jsonNumber(x[5]));
    }
  ranks += "]";
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  std::string text = fmt::format(
      "{{\"ok\": {}, \"world_size\": {}, \"backend\": {}, \"nodes\": {}, "
      "\"host\": {}, \"online_cores\": {}, \"check_arguments\": {},\n "
      "\"config\": {{\"table_mib\": {}, \"widths\": {}, \"batch_per_rank\": "
      "{}, \"rep_mib\": {}, \"reps\": {}, \"warmup\": {}, \"types\": {}, "
      "\"dists\": {}, "
      "\"zipf_exponent\": {}, \"cache_fractions\": {}, \"cache_width\": {}, "
      "\"cache_steps\": {}, \"cache_warmup\": {}, \"seed\": {}}},\n "
      "\"ranks\": {},\n {}}}\n",
      result.ok() ? "true" : "false", comm->size(), jsonString(comm->backend()),
      comm->numNodes(), jsonString(host), cores,
      comm->options().CheckArguments ? "true" : "false", jsonNumber(o.TableMiB),
      jsonArray(o.Widths), o.Batch, jsonNumber(o.RepMiB), o.Reps, o.Warmup,
      [&] {
        std::string s = "[";
        for (size_t i = 0; i < o.Types.size(); ++i)
          s += (i ? ", " : "") + jsonString(o.Types[i]);
        return s + "]";
      }(),
      [&] {
        std::string s = "[";
        for (size_t i = 0; i < o.Dists.size(); ++i)
          s += (i ? ", " : "") + jsonString(o.Dists[i]);
        return s + "]";
      }(),
      jsonNumber(o.Zipf), jsonArray(o.CacheFractions), o.CacheWidth,
      o.CacheSteps, o.CacheWarmup, o.Seed, ranks,
      bench.json(result.ok() ? "" : result.message()));
  if (o.Out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    FILE *f = std::fopen(o.Out.c_str(), "w");
    if (!f)
      return fail(fmt::format("gnnc-dist-bench: cannot write {}", o.Out));
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return result.ok() ? 0 : 1;
}
