//===- gnnc_bench.cpp - gnnc-bench: times gnnc-generated entry points -----===//
//
// Part of gnnc's benchmark harness (tools/bench). Every layer variant the
// harness benchmarks is compiled by gnnc (gnnc_add_model, one module per
// layer, width and head count) into this program; registry.cpp, written by
// tools/benchmarks/bench.py, lists the modules. The program calls the entry
// points generically through each module's reflection table
// (gnnc/runtime/Abi.h: ModuleInfo / EntryInfo) with rt::Invocation
// (gnnc/runtime/Invoke.h), so it does not depend on a layer's argument list
// or on which values its forward saves for the backward.
//
//   gnnc-bench --list
//   gnnc-bench --module M --entry F --graph DIR --nodes N
//              --mode infer|train|epoch [--warmup W] [--min-reps R]
//              [--max-reps R] [--min-time S] [--max-time S] [--seed S]
//
// One case per process, so that the peak resident set is the case's own.
// Modes:
//   infer   F(g, x, params, out, ...) with training = false;
//   train   F_train (the forward that saves what the backward reads) and
//           F_backward with a random cotangent: forward + backward;
//   epoch   one full-batch training epoch of a model on a dataset folder
//           (x.npy, y.npy, train_mask.npy): F_train with dropout, the masked
//           softmax cross-entropy, F_backward, one Adam step (lr 0.01,
//           weight decay 5e-4 on conv1.*), as PyG's examples/gcn.py; the
//           graph gets one self-loop per vertex and the features are
//           row-normalised, as there. The gradient of the features is not
//           asked for (a null pointer), as there.
//
// Prints one JSON object on stdout: the time of every timed repetition, the
// median, the process's CPU time of each repetition and its median (what a
// busy machine changes least), the resident set before the timed part (graph,
// inputs and parameters loaded) and its peak during it (VmHWM, reset through
// /proc/self/clear_refs just before the outputs and workspaces are
// allocated), the bytes of the workspaces and tensors, and a checksum.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Invoke.h"
#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Train.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <sys/resource.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace rt = gnnc::rt;

struct RegisteredModule {
  const char *name;
  const rt::ModuleInfo *module;
};
extern const RegisteredModule kBenchModules[];
extern const int kNumBenchModules;

namespace {

[[noreturn]] void fail(const std::string &msg) {
  std::string escaped;
  for (char c : msg) {
    if (c == '"' || c == '\\')
      escaped += {'\\', c};
    else if (c == '\n')
      escaped += "\\n";
    else if (static_cast<unsigned char>(c) >= 0x20)
      escaped += c;
  }
  fmt::print("{{\"ok\": false, \"impl\": \"gnnc\", \"error\": \"{}\"}}\n",
             escaped);
  std::fflush(stdout);
  std::exit(1);
}

void check(const rt::Status &st, const std::string &what) {
  if (!st.ok())
    fail(fmt::format("{}: {}", what, st.message()));
}

/// Resident set figures of this process from /proc/self/status, in bytes.
int64_t procStatus(const char *key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  size_t klen = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, klen, key) == 0 && line.size() > klen &&
        line[klen] == ':')
      return std::atoll(line.c_str() + klen + 1) * 1024;
  return -1;
}

/// Resets VmHWM to the current resident set (Linux >= 4.0).
bool resetPeak() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out)
    return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

/// A 64-byte aligned, zero-filled float buffer whose pages are touched.
struct Buffer {
  rt::HostBuffer memory;
  float *data = nullptr;
  int64_t count = 0;
  void allocate(int64_t floats) {
    count = floats;
    size_t bytes = rt::alignUp(std::max<int64_t>(floats, 1) * 4);
    if (!rt::HostBuffer::allocate(bytes, memory).ok())
      fail(fmt::format("out of memory allocating {} bytes", bytes));
    data = static_cast<float *>(memory.data());
  }
};

void fillUniform(float *p, int64_t n, float scale, uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    uint64_t s = seed * 0x100000001B3ull + static_cast<uint64_t>(i);
    double u =
        static_cast<double>(rt::splitMix64Mix(s + rt::kSplitMixGamma) >> 11) *
        0x1.0p-53;
    p[i] = static_cast<float>((2.0 * u - 1.0) * scale);
  }
}

/// One entry point bound to the graph, its tensors and a workspace.
struct Call {
  const rt::EntryInfo *info = nullptr;
  rt::Invocation invocation;

  void bind(const rt::EntryInfo *e, const rt::Graph &g) {
    info = e;
    if (e->numGraphs != 1 || e->graphKinds[0] != rt::GraphKind::Graph)
      fail(fmt::format("{}: expected exactly one Graph argument", e->name));
    if (e->numSizes != 0)
      fail(fmt::format("{}: explicit sizes are not supported", e->name));
    rt::GraphArgs graphs;
    graphs.graph = &g;
    check(invocation.bind(*e, graphs), e->name);
  }
  int64_t argElements(int i) const { return invocation.argElements(i); }
  int64_t resultElements(int i) const { return invocation.resultElements(i); }
  const std::vector<int64_t> &argDims(int i) const {
    return invocation.argShapes()[i];
  }
  size_t workspaceBytes() const { return invocation.workspaceBytes(); }

  void run(bool training, uint64_t seed) const {
    rt::Status st = invocation.call(training, seed);
    if (!st.ok())
      fail(fmt::format("{}: {}", info->name, st.message()));
  }
};

struct Options {
  std::string module, entry, graph, mode = "infer";
  int64_t nodes = -1;
  int warmup = 1, minReps = 5, maxReps = 50;
  double minTime = 1.0, maxTime = 30.0;
  uint64_t seed = 1;
  bool list = false;
};

const char *kUsage =
    "usage: gnnc-bench --list\n"
    "       gnnc-bench --module M --entry F --graph DIR [--nodes N]\n"
    "                  [--mode infer|train|epoch] [--warmup W]\n"
    "                  [--min-reps R] [--max-reps R] [--min-time S]\n"
    "                  [--max-time S] [--seed S]\n";

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "gnnc-bench: {} needs a value\n{}", a, kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--list")
      o.list = true;
    else if (a == "--module")
      o.module = next();
    else if (a == "--entry")
      o.entry = next();
    else if (a == "--graph")
      o.graph = next();
    else if (a == "--nodes")
      o.nodes = std::atoll(next().c_str());
    else if (a == "--mode")
      o.mode = next();
    else if (a == "--warmup")
      o.warmup = std::atoi(next().c_str());
    else if (a == "--min-reps")
      o.minReps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--max-reps")
      o.maxReps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--min-time")
      o.minTime = std::atof(next().c_str());
    else if (a == "--max-time")
      o.maxTime = std::atof(next().c_str());
    else if (a == "--seed")
      o.seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      fmt::print(stderr, "gnnc-bench: unknown argument {}\n{}", a, kUsage);
      std::exit(2);
    }
  }
  return o;
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// CPU time of the whole process (all its threads), in seconds: on a
/// machine shared with other work it leaves out the time the process waits
/// for a core.
double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// CPU time of each timed repetition (cpuSeconds), as timeIt measures it.
std::vector<double> cpuTimes;

/// Times `body` (warm-up, then at least minReps repetitions and minTime
/// seconds, at most maxReps repetitions, stopping after maxTime seconds).
template <typename F> std::vector<double> timeIt(const Options &o, F &&body) {
  for (int i = 0; i < o.warmup; ++i)
    body(i);
  std::vector<double> times;
  double total = 0.0;
  cpuTimes.clear();
  for (int i = 0; i < o.maxReps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpuSeconds();
    body(o.warmup + i);
    double t = seconds(t0);
    cpuTimes.push_back(cpuSeconds() - c0);
    times.push_back(t);
    total += t;
    if (static_cast<int>(times.size()) >= o.minReps && total >= o.minTime)
      break;
    if (total >= o.maxTime)
      break;
  }
  return times;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string jsonList(const std::vector<double> &v) {
  return fmt::format("[{:.9g}]", fmt::join(v, ", "));
}

double checksum(const float *p, int64_t n, bool &finite) {
  double s = 0.0;
  finite = true;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(p[i]))
      finite = false;
    s += p[i];
  }
  return s;
}

float paramScale(const rt::TensorInfo &t, const std::vector<int64_t> &d) {
  if (t.rank >= 2) {
    double fanIn = static_cast<double>(d[t.rank - 2]);
    double fanOut = static_cast<double>(d[t.rank - 1]);
    return static_cast<float>(std::sqrt(6.0 / (fanIn + fanOut)));
  }
  return 0.1f;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  if (o.list) {
    for (int i = 0; i < kNumBenchModules; ++i) {
      const rt::ModuleInfo &m = *kBenchModules[i].module;
      fmt::print("{} {}", kBenchModules[i].name, m.source);
      for (int k = 0; k < m.numDefines; ++k)
        fmt::print(" -D {}", m.defines[k]);
      fmt::print(":");
      for (int k = 0; k < m.numEntries; ++k)
        fmt::print(" {}", m.entries[k].name);
      fmt::print("\n");
    }
    return 0;
  }
  if (o.module.empty() || o.entry.empty() || o.graph.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const rt::ModuleInfo *mod = nullptr;
  for (int i = 0; i < kNumBenchModules; ++i)
    if (o.module == kBenchModules[i].name)
      mod = kBenchModules[i].module;
  if (!mod)
    fail(fmt::format("no module {} (gnnc-bench --list)", o.module));

  auto tSetup = std::chrono::steady_clock::now();
  bool epoch = o.mode == "epoch";
  bool train = o.mode == "train" || epoch;
  if (!train && o.mode != "infer")
    fail(fmt::format("unknown mode {}", o.mode));

  // The graph and, for an epoch, the dataset.
  rt::Graph g;
  rt::Dataset ds;
  if (epoch) {
    check(rt::loadDataset(o.graph, ds), o.graph);
    rt::Graph raw;
    check(rt::Graph::fromEdgeIndex(ds.EdgeSrc.data(), ds.EdgeDst.data(),
                                   ds.numEdges(), ds.NumNodes, ds.NumNodes,
                                   raw),
          o.graph);
    check(rt::addSelfLoops(raw, g), "self-loops");
    check(rt::normalizeRows(ds.X.data(), ds.NumNodes, ds.NumFeatures),
          "normalising");
  } else {
    check(rt::loadGraphDir(o.graph, g, o.nodes), o.graph);
  }
  const int64_t N = g.numDst(), E = g.numEdges();

  const rt::EntryInfo *fwdInfo =
      rt::lookupEntry(*mod, train ? o.entry + ".train" : o.entry);
  const rt::EntryInfo *bwdInfo =
      train ? rt::lookupEntry(*mod, o.entry + ".backward") : nullptr;
  if (!fwdInfo || (train && !bwdInfo))
    fail(fmt::format("module {} has no entry {}{}", o.module, o.entry,
                     train ? ".train / .backward" : ""));

  Call fwd, bwd;
  fwd.bind(fwdInfo, g);
  if (train)
    bwd.bind(bwdInfo, g);

  // Inputs and parameters (the baseline), named as in the module.
  std::vector<std::unique_ptr<Buffer>> owned;
  auto newBuffer = [&](int64_t n) {
    owned.push_back(std::make_unique<Buffer>());
    owned.back()->allocate(n);
    return owned.back()->data;
  };
  struct Named {
    std::string name;
    float *data;
    int64_t count;
  };
  std::vector<Named> params, buffers, xs;
  uint64_t seed = o.seed;
  int64_t inputBytes = 0, paramBytes = 0;
  for (int i = 0; i < fwdInfo->numArgs; ++i) {
    const rt::TensorInfo &t = fwdInfo->args[i];
    int64_t n = fwd.argElements(i);
    float *p = nullptr;
    if (std::strcmp(t.role, "param") == 0) {
      p = newBuffer(n);
      fillUniform(p, n, paramScale(t, fwd.argDims(i)), seed + 1000 + i);
      params.push_back({t.name, p, n});
      paramBytes += 4 * n;
    } else if (std::strcmp(t.role, "buffer") == 0) {
      // Running statistics: a mean of 1 and a variance of 1 are valid ones;
      // no optimiser step touches them.
      p = newBuffer(n);
      std::fill(p, p + n, 1.0f);
      buffers.push_back({t.name, p, n});
      paramBytes += 4 * n;
    } else if (epoch && std::strcmp(t.name, "x") == 0) {
      if (n != ds.NumNodes * ds.NumFeatures)
        fail("the model's x does not have the dataset's shape");
      p = ds.X.data();
      xs.push_back({t.name, p, n});
      inputBytes += 4 * n;
    } else {
      p = newBuffer(n);
      // Edge weights (GIN's w: f32[E]) are 1: the unweighted graph.
      if (t.rank == 1 && std::strcmp(t.dims[0], "E") == 0)
        std::fill(p, p + n, 1.0f);
      else
        fillUniform(p, n, 1.0f, seed + 2000 + i);
      xs.push_back({t.name, p, n});
      inputBytes += 4 * n;
    }
    fwd.invocation.setInput(i, p);
  }
  auto lookup = [](std::vector<Named> &v, const char *name) -> Named * {
    for (Named &x : v)
      if (x.name == name)
        return &x;
    return nullptr;
  };
  // The cotangent of the backward is an input too.
  float *cotangent = nullptr;
  int outIndex = -1;
  for (int i = 0; i < fwdInfo->numResults; ++i)
    if (std::strcmp(fwdInfo->results[i].role, "output") == 0) {
      outIndex = i;
      break;
    }
  if (outIndex < 0)
    fail(fmt::format("{} has no output", fwdInfo->name));
  const int64_t outCount = fwd.resultElements(outIndex);
  if (train && !epoch) {
    cotangent = newBuffer(outCount);
    fillUniform(cotangent, outCount, 1.0f, seed + 3000);
    inputBytes += 4 * outCount;
  }

  // Everything the timed part allocates comes after this point.
  int64_t rssBaseline = procStatus("VmRSS");
  bool peakReset = resetPeak();
  double setupSeconds = seconds(tSetup);

  int64_t outputBytes = 0;
  std::vector<std::unique_ptr<Buffer>> results;
  auto newResult = [&](int64_t n) {
    results.push_back(std::make_unique<Buffer>());
    results.back()->allocate(n);
    outputBytes += 4 * n;
    return results.back()->data;
  };
  std::vector<float *> saved(fwdInfo->numResults, nullptr);
  for (int i = 0; i < fwdInfo->numResults; ++i) {
    float *p = newResult(fwd.resultElements(i));
    fwd.invocation.setOutput(i, p);
    saved[i] = p;
  }
  std::vector<Named> grads;
  if (train) {
    for (int i = 0; i < bwdInfo->numArgs; ++i) {
      const rt::TensorInfo &t = bwdInfo->args[i];
      const float *p = nullptr;
      if (std::strcmp(t.role, "param") == 0 ||
          std::strcmp(t.role, "buffer") == 0) {
        bool isParam = std::strcmp(t.role, "param") == 0;
        Named *q = lookup(isParam ? params : buffers, t.name);
        p = q ? q->data : nullptr;
      } else if (std::strcmp(t.role, "saved") == 0) {
        for (int j = 0; j < fwdInfo->numResults; ++j)
          if (std::strcmp(fwdInfo->results[j].role, "saved") == 0 &&
              std::strcmp(fwdInfo->results[j].name, t.name) == 0 &&
              fwd.resultElements(j) == bwd.argElements(i))
            p = saved[j];
      } else if (std::strcmp(t.name, "cotangent") == 0) {
        p = cotangent; // epoch: bound below to the loss gradient
      } else {
        Named *q = lookup(xs, t.name);
        p = q ? q->data : nullptr;
      }
      if (!p && !(epoch && std::strcmp(t.name, "cotangent") == 0))
        fail(fmt::format("{}: cannot bind argument {}", bwdInfo->name, t.name));
      bwd.invocation.setInput(i, p);
    }
    for (int i = 0; i < bwdInfo->numResults; ++i) {
      // An epoch does not read the gradient of an input (the features): its
      // pointer is null, so the backward skips the work only it needs
      // (docs/abi.md), as PyG's training skips it (x does not require a
      // gradient).
      bool inputGrad = false;
      if (std::strcmp(bwdInfo->results[i].role, "grad") == 0)
        for (int k = 0; k < bwdInfo->numArgs; ++k)
          inputGrad =
              inputGrad || (std::strcmp(bwdInfo->args[k].role, "input") == 0 &&
                            std::strcmp(bwdInfo->args[k].name,
                                        bwdInfo->results[i].name) == 0);
      if (epoch && inputGrad) {
        bwd.invocation.setOutput(i, nullptr);
        continue;
      }
      float *p = newResult(bwd.resultElements(i));
      bwd.invocation.setOutput(i, p);
      if (std::strcmp(bwdInfo->results[i].role, "grad") == 0)
        grads.push_back({bwdInfo->results[i].name, p, bwd.resultElements(i)});
    }
  }
  // One workspace: the forward's intermediates are dead once it returns
  // (what the backward reads, it saved into outputs), so the backward
  // reuses the same bytes, as a training loop does (docs/abi.md,
  // "Workspace").
  size_t workspaceBytes = fwd.workspaceBytes();
  if (train)
    workspaceBytes = std::max(workspaceBytes, bwd.workspaceBytes());
  rt::HostBuffer workspace;
  check(rt::HostBuffer::allocate(workspaceBytes, workspace), "workspace");
  fwd.invocation.setWorkspace(workspace.data());
  if (train)
    bwd.invocation.setWorkspace(workspace.data());

  std::vector<double> times;
  double loss = 0.0;
  if (!train) {
    times = timeIt(o, [&](int) { fwd.run(false, 0); });
  } else if (!epoch) {
    times = timeIt(o, [&](int) {
      fwd.run(true, 0);
      bwd.run(true, 0);
    });
  } else {
    // PyG's examples/gcn.py: Adam(lr 0.01), weight decay 5e-4 on conv1.
    int64_t classes = ds.NumClasses;
    if (outCount != N * classes)
      fail("the model's output is not [N, classes]");
    float *gradLogits = newResult(outCount);
    for (int i = 0; i < bwdInfo->numArgs; ++i)
      if (std::strcmp(bwdInfo->args[i].name, "cotangent") == 0)
        bwd.invocation.setInput(i, gradLogits);
    rt::AdamOptions decayed, plain;
    decayed.LearningRate = plain.LearningRate = 0.01;
    decayed.WeightDecay = 5e-4;
    auto adamDecayed = std::make_unique<rt::Adam>(decayed);
    auto adamPlain = std::make_unique<rt::Adam>(plain);
    std::vector<const float *> gDecayed, gPlain;
    for (Named &p : params) {
      Named *gp = lookup(grads, p.name.c_str());
      if (!gp)
        fail(fmt::format("no gradient for parameter {}", p.name));
      bool decay = p.name.rfind("conv1.", 0) == 0;
      check((decay ? *adamDecayed : *adamPlain).addParam(p.data, p.count),
            "adam");
      (decay ? gDecayed : gPlain).push_back(gp->data);
    }
    times = timeIt(o, [&](int epochIndex) {
      uint64_t s = o.seed * 1000003ull + static_cast<uint64_t>(epochIndex) + 1;
      fwd.run(true, s);
      check(rt::softmaxCrossEntropy(fwd.invocation.output(outIndex), N, classes,
                                    ds.Y.data(), ds.TrainMask.data(), loss,
                                    gradLogits),
            "loss");
      bwd.run(true, s);
      check(adamDecayed->step(gDecayed), "adam");
      if (adamPlain->numParams())
        check(adamPlain->step(gPlain), "adam");
    });
  }

  int64_t rssPeak = procStatus("VmHWM");
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  bool finite = true;
  double sum = checksum(fwd.invocation.output(outIndex), outCount, finite);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif

  fmt::print("{{\"ok\": true, \"impl\": \"gnnc\", \"module\": \"{}\", "
             "\"entry\": \"{}\", \"mode\": \"{}\", \"N\": {}, \"E\": {}, "
             "\"threads\": {}, \"warmup\": {}, \"times_s\": {}, "
             "\"median_s\": {:.9g}, \"min_s\": {:.9g}, "
             "\"cpu_times_s\": {}, \"cpu_median_s\": {:.9g}, "
             "\"rss_baseline_bytes\": {}, \"rss_peak_bytes\": {}, "
             "\"peak_reset\": {}, \"maxrss_process_bytes\": {}, "
             "\"workspace_bytes\": {}, \"output_bytes\": {}, "
             "\"input_bytes\": {}, \"param_bytes\": {}, "
             "\"setup_s\": {:.6g}, \"checksum\": {:.9g}, \"finite\": {}{}}}\n",
             o.module, o.entry, o.mode, N, E, threads, o.warmup,
             jsonList(times), median(times),
             *std::min_element(times.begin(), times.end()), jsonList(cpuTimes),
             median(cpuTimes), rssBaseline, rssPeak, peakReset,
             static_cast<int64_t>(ru.ru_maxrss) * 1024, workspaceBytes,
             outputBytes, inputBytes, paramBytes, setupSeconds, sum, finite,
             epoch ? fmt::format(", \"loss\": {:f}", loss) : std::string());
  return 0;
}
