//===- gnnc_gen_sbm.cpp - gnnc-gen-sbm: planted-partition graphs ----------===//
//
// Part of gnnc. Writes a node-classification dataset drawn from a
// degree-corrected stochastic block model (a planted partition with power-law
// degrees) as a dataset folder that rt::loadDataset reads (docs/runtime.md,
// "Generated graphs: gnnc-gen-sbm"):
//
//   * every vertex v gets a class c_v (uniform, or --class-proportions) and
//     a weight theta_v from a Pareto law, P(theta > t) = t^-(gamma - 1) for
//     t >= 1, so that degrees follow P(d) ~ d^-gamma;
//   * M = round(N * avg_degree / 2) distinct undirected edges, of which
//     round(h * M) join two vertices of the same class and the others two of
//     different classes. A same-class edge takes u with probability
//     theta_u / sum(theta) and v in c_u with probability theta_v /
//     Theta_{c_u} (Theta_c: the weight of class c), v != u; a cross-class
//     edge takes u the same way, a class c' != c_u with probability
//     Theta_c' / (sum(theta) - Theta_{c_u}) and v in c' by theta. Drawn
//     pairs that repeat one already drawn are dropped and drawn again until
//     both counts are reached. Every edge is stored in both directions;
//   * x_v = mu_{c_v} + sigma * z_v with unit-length centroids mu_c and
//     standard normal noise z_v;
//   * disjoint random train / validation / test sets of round(fraction * N)
//     vertices each.
//
// Every random number comes from SplitMix64 seeded per item (a vertex, an
// edge draw, a class), so the output depends on --seed and the sizes alone,
// not on the number of threads.
//
// The files go to temporary names in the output folder and are renamed into
// place once all of them are complete, meta.json last; an error, SIGINT,
// SIGTERM or SIGHUP before that removes them (and the folder, when this run
// created it).
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Flags.h"
#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/Status.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace rt = gnnc::rt;
using rt::Status;

namespace {

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

/// SplitMix64's output function (Steele, Lea and Flood, OOPSLA 2014).
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// SplitMix64, as rt::SplitMix64 (gnnc/runtime/Train.h), inline.
struct Rng {
  uint64_t State;

  uint64_t next() { return mix64(State += kGolden); }
  /// The top 53 bits as a double in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// A number in [0, n) (the high half of next() * n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >>
                                 64);
  }
  /// Two standard normal numbers (Box-Muller, as rt::initParam's normal).
  std::pair<double, double> normals() {
    double u1 = 1.0 - uniform();
    double u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    return {r * std::cos(kTwoPi * u2), r * std::sin(kTwoPi * u2)};
  }
};

/// What a generator draws for; each has its own stream of items.
enum class Stream : uint64_t {
  Class = 1,
  Weight = 2,
  Centroid = 3,
  Feature = 4,
  SameClassEdge = 5,
  CrossClassEdge = 6,
  Split = 7,
};

/// The generator of item `item` (a vertex, a class, an edge draw) of
/// `stream`: SplitMix64 seeded with mix64(mix64(seed ^ stream * golden) +
/// item).
inline Rng itemRng(uint64_t seed, Stream stream, uint64_t item) {
  uint64_t base = mix64(seed ^ (static_cast<uint64_t>(stream) * kGolden));
  return Rng{mix64(base + item)};
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

int threadCount() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  std::string Out;
  int64_t Nodes = 2000000;
  int64_t Classes = 16;
  bool ClassesGiven = false;
  std::vector<double> Proportions; // empty: uniform
  int64_t Features = 64;
  double AvgDegree = 20.0;
  double Exponent = 2.5;
  double Homophily = 0.5;
  double Noise = 1.0;
  double Train = 0.10, Val = 0.05, Test = 0.10;
  uint64_t Seed = 0;
  int Threads = 0; // 0: OpenMP's default
  bool Quiet = false;
};

const char *kUsage =
    "usage: gnnc-gen-sbm --out DIR [--nodes N] [--classes C]\n"
    "                    [--class-proportions P1,...,PC] [--features F]\n"
    "                    [--avg-degree D] [--power-law-exponent G]\n"
    "                    [--homophily H] [--noise S] [--train A] [--val B]\n"
    "                    [--test T] [--seed S] [--threads K] [--quiet]\n"
    "\n"
    "Writes a node-classification dataset drawn from a degree-corrected\n"
    "stochastic block model to the folder DIR (edge_index.npy, x.npy, y.npy,\n"
    "train_mask.npy, val_mask.npy, test_mask.npy, centroids.npy, meta.json),\n"
    "which rt::loadDataset reads. The same flags and seed give the same\n"
    "files, whatever the number of threads.\n"
    "\n"
    "  --out DIR       the output folder (its parent must exist); files of "
    "the\n"
    "                  same names in it are replaced, others are left alone\n"
    "  --nodes N       vertices, 2 to 2147483647 (default 2000000)\n"
    "  --classes C     classes, 2 to 65536 (default 16)\n"
    "  --class-proportions P1,...,PC\n"
    "                  the probability of each class (non-negative, at least\n"
    "                  two positive, normalised to sum 1; sets --classes);\n"
    "                  default: uniform\n"
    "  --features F    feature columns, 1 to 1048576 (default 64)\n"
    "  --avg-degree D  mean in-degree, > 0 and at most (N - 1) / 2: N * D / 2\n"
    "                  undirected edges, each stored in both directions\n"
    "                  (default 20)\n"
    "  --power-law-exponent G\n"
    "                  the degree law P(d) ~ d^-G, G in (2, 100] (default "
    "2.5)\n"
    "  --homophily H   the fraction of edges whose ends share a class, 0 to 1\n"
    "                  (default 0.5)\n"
    "  --noise S       standard deviation of the feature noise around the\n"
    "                  unit-length class centroids, 0 to 1000 (default 1)\n"
    "  --train A, --val B, --test T\n"
    "                  fractions of the vertices in each set, 0 to 1, adding\n"
    "                  up to at most 1 (default 0.10, 0.05, 0.10)\n"
    "  --seed S        0 to 2^64 - 1 (default 0)\n"
    "  --threads K     threads, 1 to 1024 (default: all cores)\n"
    "  --quiet         no summary line\n";

bool parseArgs(int argc, char **argv, Options &opt, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &out) {
      size_t eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        out = a.substr(eq + 1);
        a = a.substr(0, eq);
        return true;
      }
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    // The whole of `s` as a decimal number in [lo, hi] (`range` says which
    // in the error), or integer (gnnc/runtime/Flags.h).
    auto number = [&](const std::string &s, double lo, double hi,
                      const char *range, double &out) {
      return gnnc::rt::parseFlagNumber(a, s, lo, hi, range, out, error);
    };
    auto integer = [&](const std::string &s, uint64_t lo, uint64_t hi,
                       uint64_t &out) {
      return gnnc::rt::parseFlagInteger(a, s, lo, hi, out, error);
    };
    std::string key = a.substr(0, a.find('='));
    std::string s;
    uint64_t k;
    double d;
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kUsage);
      std::exit(0);
    } else if (a == "--quiet" || a == "-q") {
      opt.Quiet = true;
    } else if (key == "--out") {
      if (!value(opt.Out))
        return false;
      if (opt.Out.empty()) {
        error = "--out: the folder name is empty";
        return false;
      }
    } else if (key == "--nodes") {
      if (!value(s) || !integer(s, 2, 2147483647, k))
        return false;
      opt.Nodes = static_cast<int64_t>(k);
    } else if (key == "--classes") {
      if (!value(s) || !integer(s, 2, 65536, k))
        return false;
      opt.Classes = static_cast<int64_t>(k);
      opt.ClassesGiven = true;
    } else if (key == "--class-proportions") {
      if (!value(s))
        return false;
      opt.Proportions.clear();
      size_t start = 0;
      while (true) {
        size_t comma = s.find(',', start);
        std::string item = s.substr(start, comma - start);
        double p = 0;
        const char *end = item.data() + item.size();
        auto [ptr, ec] = std::from_chars(item.data(), end, p);
        if (item.empty() || ptr != end || ec != std::errc() ||
            !std::isfinite(p) || p < 0) {
          error = fmt::format("{}: '{}' is not a proportion (a finite number "
                              ">= 0)",
                              a, item);
          return false;
        }
        opt.Proportions.push_back(p);
        if (opt.Proportions.size() > 65536) {
          error = fmt::format("{}: more than 65536 classes", a);
          return false;
        }
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
      int positive = 0;
      for (double p : opt.Proportions)
        positive += p > 0;
      if (positive < 2) {
        error = fmt::format("{}: at least two classes need a proportion "
                            "above 0",
                            a);
        return false;
      }
    } else if (key == "--features") {
      if (!value(s) || !integer(s, 1, 1048576, k))
        return false;
      opt.Features = static_cast<int64_t>(k);
    } else if (key == "--avg-degree") {
      if (!value(s) || !number(s, 0.0, std::numeric_limits<double>::max(),
                               "a finite number > 0", d))
        return false;
      if (d == 0) {
        error = fmt::format("{}: {} is out of range (expected a finite number "
                            "> 0)",
                            a, s);
        return false;
      }
      opt.AvgDegree = d;
    } else if (key == "--power-law-exponent") {
      if (!value(s) || !number(s, 2.0, 100.0, "a number in (2, 100]", d))
        return false;
      if (d == 2.0) {
        error = fmt::format("{}: {} is out of range (expected a number in (2, "
                            "100]: the mean degree is infinite at 2 and below)",
                            a, s);
        return false;
      }
      opt.Exponent = d;
    } else if (key == "--homophily") {
      if (!value(s) || !number(s, 0.0, 1.0, "a number in [0, 1]", d))
        return false;
      opt.Homophily = d;
    } else if (key == "--noise") {
      if (!value(s) || !number(s, 0.0, 1000.0, "a number in [0, 1000]", d))
        return false;
      opt.Noise = d;
    } else if (key == "--train" || key == "--val" || key == "--test") {
      if (!value(s) || !number(s, 0.0, 1.0, "a fraction in [0, 1]", d))
        return false;
      (key == "--train" ? opt.Train : key == "--val" ? opt.Val : opt.Test) = d;
    } else if (key == "--seed") {
      if (!value(s) || !integer(s, 0, std::numeric_limits<uint64_t>::max(), k))
        return false;
      opt.Seed = k;
    } else if (key == "--threads") {
      if (!value(s) || !integer(s, 1, 1024, k))
        return false;
      opt.Threads = static_cast<int>(k);
    } else if (a.rfind("-", 0) == 0) {
      error = fmt::format("unknown flag '{}' (see --help)", key);
      return false;
    } else {
      error = fmt::format("unexpected argument '{}' (see --help)", a);
      return false;
    }
  }

  // Checks across flags.
  if (opt.Out.empty()) {
    error = "--out DIR is required (see --help)";
    return false;
  }
  if (!opt.Proportions.empty()) {
    auto count = static_cast<int64_t>(opt.Proportions.size());
    if (opt.ClassesGiven && count != opt.Classes) {
      error = fmt::format("--class-proportions lists {} classes, but "
                          "--classes is {}",
                          count, opt.Classes);
      return false;
    }
    opt.Classes = count;
  }
  double sum = opt.Train + opt.Val + opt.Test;
  if (sum > 1.0 + 1e-9) {
    error = fmt::format("--train {}, --val {} and --test {} add up to {}, "
                        "more than 1",
                        opt.Train, opt.Val, opt.Test, sum);
    return false;
  }
  double maxDegree = static_cast<double>(opt.Nodes - 1) / 2.0;
  if (opt.AvgDegree > maxDegree) {
    error = fmt::format("--avg-degree {} is too large for {} vertices (at "
                        "most (N - 1) / 2 = {}: half of all vertex pairs)",
                        opt.AvgDegree, opt.Nodes, maxDegree);
    return false;
  }
  if (std::llround(static_cast<double>(opt.Nodes) * opt.AvgDegree / 2.0) < 1) {
    error = fmt::format("--avg-degree {} gives no edge on {} vertices",
                        opt.AvgDegree, opt.Nodes);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

/// An uninitialised array of `T` (what std::vector would fill with zeros
/// first); allocation failure is an error, not an exception.
template <class T> class Array {
public:
  Status allocate(int64_t n, const char *what) {
    Data.reset(new (std::nothrow)
                   T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
    Size = n;
    if (!Data)
      return Status::error(fmt::format("out of memory: cannot allocate {} ({} "
                                       "bytes)",
                                       what, n * int64_t(sizeof(T))));
    return Status::success();
  }
  T *data() { return Data.get(); }
  const T *data() const { return Data.get(); }
  T &operator[](int64_t i) { return Data[i]; }
  const T &operator[](int64_t i) const { return Data[i]; }
  int64_t size() const { return Size; }
  void swap(Array &other) {
    std::swap(Data, other.Data);
    std::swap(Size, other.Size);
  }

private:
  std::unique_ptr<T[]> Data;
  int64_t Size = 0;
};

//===----------------------------------------------------------------------===//
// Alias tables (Walker; Vose's construction)
//===----------------------------------------------------------------------===//

/// Fills prob[0..n) and alias[0..n) for weights w[0..n) (not all zero):
/// drawing j uniformly and keeping it with probability prob[j], else taking
/// alias[j], gives i with probability w[i] / sum(w). `stack` has room for n
/// indices.
void buildAlias(const double *w, int64_t n, double *prob, int32_t *alias,
                int32_t *stack) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += w[i];
  // Small entries from the front of `stack`, large ones from the back.
  int64_t small = 0, large = n;
  for (int64_t i = 0; i < n; ++i) {
    prob[i] = w[i] * static_cast<double>(n) / sum;
    alias[i] = static_cast<int32_t>(i);
    if (prob[i] < 1.0)
      stack[small++] = static_cast<int32_t>(i);
    else
      stack[--large] = static_cast<int32_t>(i);
  }
  while (small > 0 && large < n) {
    int32_t s = stack[--small];
    int32_t l = stack[large++];
    alias[s] = l;
    prob[l] = (prob[l] + prob[s]) - 1.0;
    if (prob[l] < 1.0)
      stack[small++] = l;
    else
      stack[--large] = l;
  }
  // What is left is 1 up to rounding.
  while (small > 0)
    prob[stack[--small]] = 1.0;
  while (large < n)
    prob[stack[large++]] = 1.0;
}

inline int64_t drawAlias(Rng &rng, const double *prob, const int32_t *alias,
                         int64_t n) {
  auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
  return rng.uniform() < prob[j] ? j : alias[j];
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// An entry of the alias table over all vertices: entry j keeps vertex j
/// with probability Prob, else gives Other; with the classes of both, so
/// that a draw reads one entry.
struct VertexEntry {
  double Prob;
  int32_t Other;
  uint16_t KeepClass, OtherClass;
};

/// An entry of the alias table of one class: Keep with probability Prob,
/// else Other (vertex ids).
struct MemberEntry {
  double Prob;
  int32_t Keep, Other;
};

/// Classes, weights and the tables that draw edge ends.
struct Model {
  int64_t N = 0, C = 0;
  Array<int32_t> Class;             // [N]
  Array<VertexEntry> Vertices;      // [N], by theta
  Array<MemberEntry> Members;       // [N], class c in [b_c, b_{c+1}), by theta
  std::vector<int64_t> ClassBegin;  // [C + 1], b_c
  std::vector<double> ClassMass;    // [C], Theta_c
  std::vector<double> ClassMassEnd; // [C], Theta_0 + ... + Theta_c
  double TotalMass = 0;
};

Status buildModel(const Options &opt, Model &m) {
  int64_t n = opt.Nodes, c = opt.Classes;
  m.N = n;
  m.C = c;
  Array<double> weight;
  GNNC_TRY(m.Class.allocate(n, "the classes"));
  GNNC_TRY(weight.allocate(n, "the vertex weights"));

  // Classes: uniform, or through an alias table of the proportions.
  std::vector<double> cprob(static_cast<size_t>(c));
  std::vector<int32_t> calias(static_cast<size_t>(c)), cstack(cprob.size());
  if (!opt.Proportions.empty())
    buildAlias(opt.Proportions.data(), c, cprob.data(), calias.data(),
               cstack.data());
  bool uniform = opt.Proportions.empty();
  double inv = -1.0 / (opt.Exponent - 1.0);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    Rng rc = itemRng(opt.Seed, Stream::Class, static_cast<uint64_t>(v));
    m.Class[v] = static_cast<int32_t>(
        uniform ? static_cast<int64_t>(rc.below(static_cast<uint64_t>(c)))
                : drawAlias(rc, cprob.data(), calias.data(), c));
    Rng rw = itemRng(opt.Seed, Stream::Weight, static_cast<uint64_t>(v));
    // Pareto with minimum 1: P(theta > t) = t^-(gamma - 1).
    weight[v] = std::pow(1.0 - rw.uniform(), inv);
  }

  // The vertices of each class, in id order (a counting sort).
  m.ClassBegin.assign(static_cast<size_t>(c + 1), 0);
  m.ClassMass.assign(static_cast<size_t>(c), 0.0);
  for (int64_t v = 0; v < n; ++v) {
    ++m.ClassBegin[static_cast<size_t>(m.Class[v]) + 1];
    m.ClassMass[static_cast<size_t>(m.Class[v])] += weight[v];
  }
  for (int64_t k = 0; k < c; ++k)
    m.ClassBegin[static_cast<size_t>(k + 1)] +=
        m.ClassBegin[static_cast<size_t>(k)];
  Array<int32_t> member;
  GNNC_TRY(member.allocate(n, "the class members"));
  {
    std::vector<int64_t> next(m.ClassBegin.begin(), m.ClassBegin.end() - 1);
    for (int64_t v = 0; v < n; ++v)
      member[next[static_cast<size_t>(m.Class[v])]++] = static_cast<int32_t>(v);
  }
  m.ClassMassEnd.resize(static_cast<size_t>(c));
  double running = 0;
  for (int64_t k = 0; k < c; ++k) {
    running += m.ClassMass[static_cast<size_t>(k)];
    m.ClassMassEnd[static_cast<size_t>(k)] = running;
  }
  m.TotalMass = running;

  // The alias tables: over all vertices, and over each class.
  Array<double> prob, memberWeight;
  Array<int32_t> alias, stack;
  GNNC_TRY(prob.allocate(n, "the alias tables"));
  GNNC_TRY(alias.allocate(n, "the alias tables"));
  GNNC_TRY(stack.allocate(n, "the alias tables"));
  GNNC_TRY(m.Vertices.allocate(n, "the alias tables"));
  GNNC_TRY(m.Members.allocate(n, "the alias tables"));
  buildAlias(weight.data(), n, prob.data(), alias.data(), stack.data());
  for (int64_t j = 0; j < n; ++j)
    m.Vertices[j] = {prob[j], alias[j], static_cast<uint16_t>(m.Class[j]),
                     static_cast<uint16_t>(m.Class[alias[j]])};
  GNNC_TRY(memberWeight.allocate(n, "the alias tables"));
  for (int64_t i = 0; i < n; ++i)
    memberWeight[i] = weight[member[i]];
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t k = 0; k < c; ++k) {
    int64_t b = m.ClassBegin[static_cast<size_t>(k)];
    int64_t e = m.ClassBegin[static_cast<size_t>(k + 1)];
    if (e == b)
      continue;
    buildAlias(memberWeight.data() + b, e - b, prob.data() + b,
               alias.data() + b, stack.data() + b);
    for (int64_t j = b; j < e; ++j)
      m.Members[j] = {prob[j], member[j], member[b + alias[j]]};
  }
  return Status::success();
}

/// An undirected edge {a, b}, a < b, as a << 32 | b; kNoEdge marks a draw
/// that found none.
constexpr uint64_t kNoEdge = ~0ull;

inline uint64_t edgeKey(int64_t u, int64_t v) {
  auto a = static_cast<uint64_t>(std::min(u, v));
  auto b = static_cast<uint64_t>(std::max(u, v));
  return a << 32 | b;
}

/// Tries per draw before it gives up (kNoEdge); a draw that gives up is
/// drawn again like a repeated pair.
constexpr int kTries = 64;

/// A vertex drawn by weight, and its class.
inline std::pair<int64_t, int64_t> drawVertex(const Model &m, Rng &rng) {
  auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(m.N)));
  const VertexEntry &e = m.Vertices[j];
  if (rng.uniform() < e.Prob)
    return {j, e.KeepClass};
  return {e.Other, e.OtherClass};
}

/// A vertex of class k drawn by weight.
inline int64_t drawInClass(const Model &m, Rng &rng, int64_t k) {
  int64_t b = m.ClassBegin[static_cast<size_t>(k)];
  int64_t size = m.ClassBegin[static_cast<size_t>(k + 1)] - b;
  auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(size)));
  const MemberEntry &e = m.Members[b + j];
  return rng.uniform() < e.Prob ? e.Keep : e.Other;
}

/// Draw `item` of the same-class edges.
uint64_t drawSameClassEdge(const Model &m, uint64_t seed, uint64_t item) {
  Rng rng = itemRng(seed, Stream::SameClassEdge, item);
  for (int t = 0; t < kTries; ++t) {
    auto [u, k] = drawVertex(m, rng);
    if (m.ClassBegin[static_cast<size_t>(k + 1)] -
            m.ClassBegin[static_cast<size_t>(k)] <
        2)
      continue; // no other vertex in u's class
    for (int s = 0; s < kTries; ++s) {
      int64_t v = drawInClass(m, rng, k);
      if (v != u)
        return edgeKey(u, v);
    }
    return kNoEdge;
  }
  return kNoEdge;
}

/// Draw `item` of the cross-class edges.
uint64_t drawCrossClassEdge(const Model &m, uint64_t seed, uint64_t item) {
  Rng rng = itemRng(seed, Stream::CrossClassEdge, item);
  for (int t = 0; t < kTries; ++t) {
    auto [u, uk] = drawVertex(m, rng);
    auto k = static_cast<size_t>(uk);
    double own = m.ClassMass[k];
    double rest = m.TotalMass - own;
    if (!(rest > 0))
      continue; // every other class is empty
    // A class other than k by weight: r in [0, rest), skipping k's interval.
    double r = rng.uniform() * rest;
    double before = k == 0 ? 0.0 : m.ClassMassEnd[k - 1];
    if (r >= before)
      r += own;
    auto it = std::upper_bound(m.ClassMassEnd.begin(), m.ClassMassEnd.end(), r);
    auto other = static_cast<int64_t>(it - m.ClassMassEnd.begin());
    // Rounding may land on k itself or past the end, or on an empty class.
    if (other >= m.C || other == static_cast<int64_t>(k) ||
        m.ClassMass[static_cast<size_t>(other)] <= 0)
      continue;
    int64_t v = drawInClass(m, rng, other);
    return edgeKey(u, v);
  }
  return kNoEdge;
}

/// Sorts a[0..n) with the help of tmp[0..n) (LSD radix sort, one pass per
/// byte in which the keys differ). Returns the array that holds the result.
uint64_t *radixSort(uint64_t *a, uint64_t *tmp, int64_t n) {
  uint64_t anyOne = 0, allOne = ~0ull;
  for (int64_t i = 0; i < n; ++i) {
    anyOne |= a[i];
    allOne &= a[i];
  }
  uint64_t varying = anyOne ^ allOne;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xFF) == 0)
      continue;
    int64_t count[257] = {};
    for (int64_t i = 0; i < n; ++i)
      ++count[((a[i] >> shift) & 0xFF) + 1];
    for (int d = 0; d < 256; ++d)
      count[d + 1] += count[d];
    for (int64_t i = 0; i < n; ++i)
      tmp[count[(a[i] >> shift) & 0xFF]++] = a[i];
    std::swap(a, tmp);
  }
  return a;
}

/// Draws the `target` distinct edges of one kind into keys[0..target),
/// sorted: draws the missing ones, drops repeats and failed draws, and goes
/// again until none is missing. `tmp` has room for `target` keys.
template <class Draw>
Status drawDistinct(int64_t target, uint64_t *keys, uint64_t *tmp, Draw draw,
                    const char *kind, int &rounds) {
  int64_t have = 0;
  uint64_t drawn = 0;
  constexpr int kMaxRounds = 100;
  for (rounds = 0; have < target; ++rounds) {
    if (rounds == kMaxRounds)
      return Status::error(fmt::format(
          "found only {} of the {} distinct {} edges after {} rounds of "
          "draws: the graph is too dense for its classes and degrees (lower "
          "--avg-degree, or change --homophily)",
          have, target, kind, kMaxRounds));
    int64_t missing = target - have;
    uint64_t *fresh = keys + have;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < missing; ++i)
      fresh[i] = draw(drawn + static_cast<uint64_t>(i));
    drawn += static_cast<uint64_t>(missing);
    // Sort the new draws, merge them with the distinct ones, drop repeats.
    uint64_t *sorted = radixSort(fresh, tmp, missing);
    if (sorted != fresh)
      std::copy(sorted, sorted + missing, fresh);
    uint64_t *end = std::merge(keys, keys + have, fresh, fresh + missing, tmp);
    end = std::unique(tmp, end);
    if (end != tmp && end[-1] == kNoEdge)
      --end;
    have = end - tmp;
    std::copy(tmp, end, keys);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Output files
//===----------------------------------------------------------------------===//

std::string errnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty())
    text[0] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

/// What the signal handler removes: the temporary files and the folder this
/// run created. Each is registered (as a C string) before it exists and
/// while signals wait.
constexpr int kMaxTemps = 16;
char *gTempPaths[kMaxTemps];
volatile sig_atomic_t gNumTemps = 0;
char *gCreatedDir = nullptr;
volatile sig_atomic_t gRemoveDir = 0;
/// Set while the files are renamed into place: a signal then waits.
volatile sig_atomic_t gCommitting = 0;
volatile sig_atomic_t gPendingSignal = 0;

void removeTemps() {
  for (int i = 0; i < gNumTemps; ++i)
    ::unlink(gTempPaths[i]);
  if (gRemoveDir)
    ::rmdir(gCreatedDir);
}

void onSignal(int sig) {
  if (gCommitting) {
    gPendingSignal = sig;
    return;
  }
  removeTemps();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread while it lives.
class SignalBlock {
public:
  SignalBlock() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
      sigaddset(&set, sig);
    ::pthread_sigmask(SIG_BLOCK, &set, &Old);
  }
  ~SignalBlock() { ::pthread_sigmask(SIG_SETMASK, &Old, nullptr); }
  SignalBlock(const SignalBlock &) = delete;
  SignalBlock &operator=(const SignalBlock &) = delete;

private:
  sigset_t Old;
};

/// One output file, written to `<name>.tmp.<pid>` in the output folder.
class OutFile {
public:
  Status open(const std::string &dir, const std::string &name) {
    Final = dir + "/" + name;
    Temp = Final + ".tmp." + std::to_string(::getpid());
    if (gNumTemps == kMaxTemps)
      return Status::error("too many output files");
    // Registered before it exists, so that a signal never misses it.
    gTempPaths[gNumTemps] = ::strdup(Temp.c_str());
    if (!gTempPaths[gNumTemps])
      return Status::error("out of memory");
    gNumTemps = gNumTemps + 1;
    Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (Fd < 0)
      return Status::error(
          fmt::format("{}: cannot create file: {}", Temp, errnoText(errno)));
    return Status::success();
  }

  Status write(const void *data, size_t size) {
    const char *p = static_cast<const char *>(data);
    while (size > 0) {
      ssize_t n = ::write(Fd, p, std::min<size_t>(size, 1 << 30));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return Status::error(
            fmt::format("{}: write error: {}", Temp,
                        n < 0 ? errnoText(errno) : "nothing written"));
      p += n;
      size -= static_cast<size_t>(n);
    }
    return Status::success();
  }

  Status writeNpyHeader(rt::DType dtype, const std::vector<int64_t> &shape) {
    std::string header = rt::npyHeader(dtype, shape);
    return write(header.data(), header.size());
  }

  Status close() {
    int fd = Fd;
    Fd = -1;
    if (fd >= 0 && ::close(fd) != 0)
      return Status::error(
          fmt::format("{}: write error: {}", Temp, errnoText(errno)));
    return Status::success();
  }

  const std::string &finalPath() const { return Final; }
  const std::string &tempPath() const { return Temp; }

  ~OutFile() {
    if (Fd >= 0)
      ::close(Fd);
  }

private:
  std::string Final, Temp;
  int Fd = -1;
};

/// The output folder: created when missing (its parent must exist), or an
/// existing folder.
Status prepareFolder(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return Status::error(
          fmt::format("--out: '{}' exists and is not a folder", dir));
    return Status::success();
  }
  // Registered before it exists, so that a signal never misses it.
  gCreatedDir = ::strdup(dir.c_str());
  if (!gCreatedDir)
    return Status::error("out of memory");
  gRemoveDir = 1;
  if (::mkdir(dir.c_str(), 0777) != 0) {
    int err = errno;
    gRemoveDir = 0;
    return Status::error(fmt::format("--out: cannot create folder '{}': {}",
                                     dir, errnoText(err)));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

struct Summary {
  int64_t Edges = 0;          // directed
  int64_t SameClassEdges = 0; // directed
  int64_t MaxInDegree = 0;
  int64_t MinInDegree = 0;
  int64_t IsolatedVertices = 0;
  int64_t Train = 0, Val = 0, Test = 0;
  int Rounds = 0;
};

enum FileId {
  EdgeIndexFile,
  XFile,
  YFile,
  TrainMaskFile,
  ValMaskFile,
  TestMaskFile,
  CentroidsFile,
  MetaFile,
  NumFiles
};

const char *const kFileNames[NumFiles] = {
    "edge_index.npy", "x.npy",         "y.npy",         "train_mask.npy",
    "val_mask.npy",   "test_mask.npy", "centroids.npy", "meta.json"};

/// Writes the edges keys[0..m) both ways: edge 2i is a -> b and 2i + 1 is
/// b -> a for key i = {a, b}.
Status writeEdges(OutFile &f, const uint64_t *keys, int64_t m) {
  GNNC_TRY(f.writeNpyHeader(rt::DType::Int64, {2, 2 * m}));
  constexpr int64_t kChunk = 1 << 20; // keys per write
  std::vector<int64_t> buf(static_cast<size_t>(2 * std::min(kChunk, m)));
  for (int row = 0; row < 2; ++row) {
    for (int64_t begin = 0; begin < m; begin += kChunk) {
      int64_t count = std::min(kChunk, m - begin);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < count; ++i) {
        uint64_t key = keys[begin + i];
        auto a = static_cast<int64_t>(key >> 32);
        auto b = static_cast<int64_t>(key & 0xFFFFFFFFu);
        buf[static_cast<size_t>(2 * i)] = row == 0 ? a : b;
        buf[static_cast<size_t>(2 * i + 1)] = row == 0 ? b : a;
      }
      GNNC_TRY(f.write(buf.data(), static_cast<size_t>(2 * count) * 8));
    }
  }
  return Status::success();
}

/// The class centroids: standard normal vectors scaled to length 1.
std::vector<double> makeCentroids(const Options &opt) {
  auto c = static_cast<size_t>(opt.Classes);
  auto f = static_cast<size_t>(opt.Features);
  std::vector<double> mu(c * f);
  for (size_t k = 0; k < c; ++k) {
    Rng rng = itemRng(opt.Seed, Stream::Centroid, k);
    double norm2 = 0;
    for (size_t j = 0; j < f; j += 2) {
      auto [z0, z1] = rng.normals();
      mu[k * f + j] = z0;
      norm2 += z0 * z0;
      if (j + 1 < f) {
        mu[k * f + j + 1] = z1;
        norm2 += z1 * z1;
      }
    }
    double scale = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (size_t j = 0; j < f; ++j)
      mu[k * f + j] *= scale;
  }
  return mu;
}

/// x_v = mu_{c_v} + sigma * z_v, row by row.
Status writeFeatures(OutFile &f, const Options &opt, const Model &m,
                     const std::vector<double> &mu) {
  int64_t n = opt.Nodes, cols = opt.Features;
  GNNC_TRY(f.writeNpyHeader(rt::DType::Float32, {n, cols}));
  int64_t rows = std::max<int64_t>(1, (int64_t(1) << 22) / cols);
  std::vector<float> buf(static_cast<size_t>(std::min(rows, n) * cols));
  double sigma = opt.Noise;
  for (int64_t begin = 0; begin < n; begin += rows) {
    int64_t count = std::min(rows, n - begin);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = begin + i;
      Rng rng = itemRng(opt.Seed, Stream::Feature, static_cast<uint64_t>(v));
      const double *centre = mu.data() + m.Class[v] * cols;
      float *row = buf.data() + i * cols;
      for (int64_t j = 0; j < cols; j += 2) {
        auto [z0, z1] = rng.normals();
        row[j] = static_cast<float>(centre[j] + sigma * z0);
        if (j + 1 < cols)
          row[j + 1] = static_cast<float>(centre[j + 1] + sigma * z1);
      }
    }
    GNNC_TRY(f.write(buf.data(), static_cast<size_t>(count * cols) * 4));
  }
  return Status::success();
}

/// The split: a random permutation (Fisher-Yates), cut after round(train *
/// N), round((train + val) * N) and round((train + val + test) * N) vertices.
Status writeSplit(OutFile &train, OutFile &val, OutFile &test,
                  const Options &opt, Summary &sum) {
  int64_t n = opt.Nodes;
  Array<int32_t> perm;
  GNNC_TRY(perm.allocate(n, "the split"));
  for (int64_t i = 0; i < n; ++i)
    perm[i] = static_cast<int32_t>(i);
  Rng rng = itemRng(opt.Seed, Stream::Split, 0);
  for (int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i + 1)));
    std::swap(perm[i], perm[j]);
  }
  auto cut = [&](double fraction) {
    return std::min<int64_t>(n,
                             std::llround(fraction * static_cast<double>(n)));
  };
  int64_t c1 = cut(opt.Train), c2 = std::max(c1, cut(opt.Train + opt.Val)),
          c3 = std::max(c2, cut(opt.Train + opt.Val + opt.Test));
  sum.Train = c1;
  sum.Val = c2 - c1;
  sum.Test = c3 - c2;
  std::vector<uint8_t> mask(static_cast<size_t>(n));
  OutFile *files[3] = {&train, &val, &test};
  int64_t bounds[4] = {0, c1, c2, c3};
  for (int s = 0; s < 3; ++s) {
    std::fill(mask.begin(), mask.end(), 0);
    for (int64_t i = bounds[s]; i < bounds[s + 1]; ++i)
      mask[static_cast<size_t>(perm[i])] = 1;
    GNNC_TRY(files[s]->writeNpyHeader(rt::DType::Bool, {n}));
    GNNC_TRY(files[s]->write(mask.data(), mask.size()));
  }
  return Status::success();
}

/// Quotes a string for JSON.
std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += fmt::format("\\{}", ch);
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(ch));
    else
      out += ch;
  }
  return out + "\"";
}

std::string metaJson(const Options &opt, const Summary &sum, double seconds) {
  std::string props = "null";
  if (!opt.Proportions.empty()) {
    props = "[";
    for (size_t i = 0; i < opt.Proportions.size(); ++i)
      props += fmt::format("{}{}", i ? ", " : "", opt.Proportions[i]);
    props += "]";
  }
  double homophily =
      sum.Edges ? static_cast<double>(sum.SameClassEdges) / sum.Edges : 0.0;
  return fmt::format(
      "{{\n"
      "  \"generator\": \"gnnc-gen-sbm\",\n"
      "  \"version\": {},\n"
      "  \"model\": \"degree-corrected stochastic block model\",\n"
      "  \"nodes\": {},\n"
      "  \"classes\": {},\n"
      "  \"class_proportions\": {},\n"
      "  \"features\": {},\n"
      "  \"avg_degree\": {},\n"
      "  \"power_law_exponent\": {},\n"
      "  \"homophily\": {},\n"
      "  \"noise\": {},\n"
      "  \"train_fraction\": {},\n"
      "  \"val_fraction\": {},\n"
      "  \"test_fraction\": {},\n"
      "  \"seed\": {},\n"
      "  \"edges\": {},\n"
      "  \"edge_homophily\": {:.6f},\n"
      "  \"max_in_degree\": {},\n"
      "  \"min_in_degree\": {},\n"
      "  \"isolated_vertices\": {},\n"
      "  \"train\": {},\n"
      "  \"val\": {},\n"
      "  \"test\": {},\n"
      "  \"draw_rounds\": {},\n"
      "  \"seconds\": {:.2f}\n"
      "}}\n",
      jsonString(GNNC_VERSION), opt.Nodes, opt.Classes, props, opt.Features,
      opt.AvgDegree, opt.Exponent, opt.Homophily, opt.Noise, opt.Train, opt.Val,
      opt.Test, opt.Seed, sum.Edges, homophily, sum.MaxInDegree,
      sum.MinInDegree, sum.IsolatedVertices, sum.Train, sum.Val, sum.Test,
      sum.Rounds, seconds);
}

Status generate(const Options &opt, Summary &sum,
                std::chrono::steady_clock::time_point start) {
  // Creating every file first finds an unwritable folder before the work.
  // Signals wait meanwhile, so that the handler sees every file (no other
  // thread exists yet).
  OutFile files[NumFiles];
  {
    SignalBlock block;
    GNNC_TRY(prepareFolder(opt.Out));
    for (int i = 0; i < NumFiles; ++i)
      GNNC_TRY(files[i].open(opt.Out, kFileNames[i]));
  }

  Model m;
  GNNC_TRY(buildModel(opt, m));

  // Feasibility: the pairs each kind of edge can use.
  int64_t total =
      std::llround(static_cast<double>(opt.Nodes) * opt.AvgDegree / 2.0);
  int64_t same = std::llround(opt.Homophily * static_cast<double>(total));
  int64_t cross = total - same;
  // (N < 2^31, so N (N - 1) / 2 fits.)
  int64_t samePairs = 0, allPairs = opt.Nodes * (opt.Nodes - 1) / 2;
  for (int64_t k = 0; k < m.C; ++k) {
    int64_t size = m.ClassBegin[static_cast<size_t>(k + 1)] -
                   m.ClassBegin[static_cast<size_t>(k)];
    samePairs += size * (size - 1) / 2;
  }
  int64_t crossPairs = allPairs - samePairs;
  if (same > samePairs || cross > crossPairs)
    return Status::error(fmt::format(
        "{} same-class and {} cross-class edges do not fit: the classes "
        "hold {} same-class and {} cross-class vertex pairs (lower "
        "--avg-degree, or change --homophily or the classes)",
        same, cross, samePairs, crossPairs));

  // The edges: same-class ones in keys[0, same), cross-class ones after.
  Array<uint64_t> keys, tmp;
  GNNC_TRY(keys.allocate(total, "the edges"));
  GNNC_TRY(tmp.allocate(total, "the edges"));
  int roundsSame = 0, roundsCross = 0;
  uint64_t seed = opt.Seed;
  GNNC_TRY(drawDistinct(
      same, keys.data(), tmp.data(),
      [&](uint64_t item) { return drawSameClassEdge(m, seed, item); },
      "same-class", roundsSame));
  GNNC_TRY(drawDistinct(
      cross, keys.data() + same, tmp.data(),
      [&](uint64_t item) { return drawCrossClassEdge(m, seed, item); },
      "cross-class", roundsCross));
  sum.Rounds = std::max(roundsSame, roundsCross);
  // One sorted list (the two kinds never share a pair).
  std::merge(keys.data(), keys.data() + same, keys.data() + same,
             keys.data() + total, tmp.data());
  keys.swap(tmp);
  tmp = Array<uint64_t>();

  // Statistics, from the edges as written.
  {
    std::vector<int64_t> degree(static_cast<size_t>(opt.Nodes), 0);
    int64_t sameCount = 0;
    for (int64_t i = 0; i < total; ++i) {
      auto a = static_cast<int64_t>(keys[i] >> 32);
      auto b = static_cast<int64_t>(keys[i] & 0xFFFFFFFFu);
      ++degree[static_cast<size_t>(a)];
      ++degree[static_cast<size_t>(b)];
      sameCount += m.Class[a] == m.Class[b];
    }
    sum.Edges = 2 * total;
    sum.SameClassEdges = 2 * sameCount;
    auto [lo, hi] = std::minmax_element(degree.begin(), degree.end());
    sum.MinInDegree = *lo;
    sum.MaxInDegree = *hi;
    sum.IsolatedVertices = std::count(degree.begin(), degree.end(), 0);
  }

  GNNC_TRY(writeEdges(files[EdgeIndexFile], keys.data(), total));
  keys = Array<uint64_t>();

  std::vector<double> mu = makeCentroids(opt);
  GNNC_TRY(writeFeatures(files[XFile], opt, m, mu));
  {
    std::vector<float> muF(mu.begin(), mu.end());
    GNNC_TRY(files[CentroidsFile].writeNpyHeader(rt::DType::Float32,
                                                 {opt.Classes, opt.Features}));
    GNNC_TRY(files[CentroidsFile].write(muF.data(), muF.size() * 4));
  }
  {
    std::vector<int64_t> y(static_cast<size_t>(opt.Nodes));
    for (int64_t v = 0; v < opt.Nodes; ++v)
      y[static_cast<size_t>(v)] = m.Class[v];
    GNNC_TRY(files[YFile].writeNpyHeader(rt::DType::Int64, {opt.Nodes}));
    GNNC_TRY(files[YFile].write(y.data(), y.size() * 8));
  }
  GNNC_TRY(writeSplit(files[TrainMaskFile], files[ValMaskFile],
                      files[TestMaskFile], opt, sum));

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string meta = metaJson(opt, sum, seconds);
  GNNC_TRY(files[MetaFile].write(meta.data(), meta.size()));
  for (OutFile &f : files)
    GNNC_TRY(f.close());

  // Into place: the old marker goes first and the new one comes last, so a
  // folder with meta.json always holds a whole dataset. Signals wait.
  gCommitting = 1;
  std::string marker = opt.Out + "/" + kFileNames[MetaFile];
  if (::unlink(marker.c_str()) != 0 && errno != ENOENT) {
    gCommitting = 0;
    return Status::error(
        fmt::format("{}: cannot remove: {}", marker, errnoText(errno)));
  }
  for (OutFile &f : files) {
    if (::rename(f.tempPath().c_str(), f.finalPath().c_str()) != 0) {
      int err = errno;
      gCommitting = 0;
      return Status::error(fmt::format("{}: cannot rename into place: {}",
                                       f.finalPath(), errnoText(err)));
    }
  }
  // Nothing is left to remove.
  gNumTemps = 0;
  gRemoveDir = 0;
  gCommitting = 0;
  return Status::success();
}

} // namespace

int main(int argc, char **argv) {
  auto start = std::chrono::steady_clock::now();
  Options opt;
  std::string error;
  if (!parseArgs(argc, argv, opt, error)) {
    fmt::print(stderr, "gnnc-gen-sbm: error: {}\n", error);
    return 1;
  }
#ifdef _OPENMP
  if (opt.Threads > 0)
    omp_set_num_threads(opt.Threads);
#endif

  // A file over the size limit is a write error, not a signal.
  ::signal(SIGXFSZ, SIG_IGN);
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);

  Summary sum;
  Status st = generate(opt, sum, start);
  if (!st.ok()) {
    // A signal now waits until the files are gone (the handler would
    // remove them too).
    SignalBlock block;
    removeTemps();
    gNumTemps = 0;
    gRemoveDir = 0;
    fmt::print(stderr, "gnnc-gen-sbm: error: {}\n", st.message());
    return 1;
  }
  if (gPendingSignal) {
    int sig = gPendingSignal;
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!opt.Quiet)
    fmt::print("gnnc-gen-sbm: {}: N={} E={} classes={} features={} "
               "edge-homophily={:.4f} in-degree max={} mean={:.2f} "
               "threads={} {:.2f} s\n",
               opt.Out, opt.Nodes, sum.Edges, opt.Classes, opt.Features,
               sum.Edges ? static_cast<double>(sum.SameClassEdges) /
                               static_cast<double>(sum.Edges)
                         : 0.0,
               sum.MaxInDegree,
               static_cast<double>(sum.Edges) / static_cast<double>(opt.Nodes),
               threadCount(), seconds);
  return 0;
}
