//===- HostTensor.cpp - Host memory types of DistTensor ------------------===//
//
// Part of gnnc. The three memory types in host memory:
//
//   continuous   one POSIX shared-memory segment holding every row, created
//                by rank 0 and mapped by every rank of the (one) node;
//   chunked      one segment per rank holding its rows, mapped by all;
//   distributed  private memory; gather and scatter move indices and rows
//                through the communicator's all-to-all(v).
//
// Creation is collective and checked: every rank all-gathers its arguments
// and compares them, and a failure on any rank (bad arguments, no shared
// memory left) is an error on every rank. Segments are unlinked right after
// every rank has mapped them.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/DistTensor.h"

#include "CommInternal.h"
#include "SharedMemory.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <new>

using namespace gnnc::dist;
using namespace gnnc::dist::detail;
namespace rt = gnnc::rt;

namespace {

/// Segment names travel through collectives as this many int64 words.
constexpr size_t kNameWords = (kMaxSegmentName + 1 + 7) / 8;

void packName(const std::string &name, int64_t *words) {
  std::memset(words, 0, kNameWords * sizeof(int64_t));
  std::memcpy(words, name.data(), std::min(name.size(), kMaxSegmentName));
}

std::string unpackName(const int64_t *words) {
  const char *text = reinterpret_cast<const char *>(words);
  return std::string(text, strnlen(text, kNameWords * sizeof(int64_t)));
}

/// What every host tensor shares: local rows in host memory and index
/// checks.
class HostTensor : public DistTensor {
public:
  HostTensor(Communicator &comm, int dims, int64_t cols, DType dtype,
             RowPartition partition, TensorOptions options)
      : DistTensor(comm, dims, cols, dtype, std::move(partition),
                   std::move(options)) {}

  size_t localBytes() const override {
    return static_cast<size_t>(localRows()) * rowBytes();
  }

protected:
  Status writeLocalRows(int64_t first, int64_t count,
                        const void *host) override {
    GNNC_TRY(checkLocalRange("write", first, count));
    if (count > 0)
      std::memcpy(static_cast<unsigned char *>(localData()) +
                      static_cast<size_t>(first) * rowBytes(),
                  host, static_cast<size_t>(count) * rowBytes());
    return Status::success();
  }

  Status readLocalRows(int64_t first, int64_t count, void *host) override {
    GNNC_TRY(checkLocalRange("read", first, count));
    if (count > 0)
      std::memcpy(host,
                  static_cast<const unsigned char *>(localData()) +
                      static_cast<size_t>(first) * rowBytes(),
                  static_cast<size_t>(count) * rowBytes());
    return Status::success();
  }

  /// Checks this rank's indices and agrees with every rank on the outcome:
  /// the rank that passed a bad index names it and its position, the others
  /// name that rank.
  Status checkIndices(const char *what, const int64_t *indices, size_t n,
                      const void *data) {
    Status local;
    if (n > 0 && (!indices || !data))
      local = error(what, fmt::format("{} indices but a null {}", n,
                                      indices ? "row buffer" : "index list"));
    for (size_t i = 0; local.ok() && i < n; ++i)
      if (indices[i] < 0 || indices[i] >= rows())
        local = error(what, fmt::format("index {} at position {} is out of "
                                        "range [0, {})",
                                        indices[i], i, rows()));
    return agreeStatus(comm(), local);
  }

private:
  Status checkLocalRange(const char *what, int64_t first, int64_t count) {
    if (first < 0 || count < 0 || first > localRows() ||
        count > localRows() - first)
      return error(what, fmt::format("local rows [{}, {}) are outside [0, {})",
                                     first, first + count, localRows()));
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// Continuous and chunked
//===----------------------------------------------------------------------===//

/// A tensor in shared memory: every rank maps every row.
class SharedTensor : public HostTensor {
public:
  using HostTensor::HostTensor;

  /// Creates (collectively) the segment of a continuous tensor or the
  /// chunks of a chunked one and maps them.
  Status map() {
    return type() == MemoryType::Continuous ? mapContinuous() : mapChunked();
  }

  void *localData() override { return Bases[static_cast<size_t>(rankIndex())]; }
  void *globalData() override {
    return type() == MemoryType::Continuous ? Bases[0] : nullptr;
  }

  Status gather(const int64_t *indices, size_t n, void *out) override {
    GNNC_TRY(checkIndices("gather", indices, n, out));
    return gatherChecked(indices, n, out);
  }

  Status gatherChecked(const int64_t *indices, size_t n, void *out) override {
    auto *dst = static_cast<unsigned char *>(out);
    size_t bytes = rowBytes();
    for (size_t i = 0; i < n; ++i)
      std::memcpy(dst + i * bytes, row(indices[i]), bytes);
    return Status::success();
  }

  Status scatter(const int64_t *indices, size_t n, const void *rows) override {
    GNNC_TRY(checkIndices("scatter", indices, n, rows));
    const auto *src = static_cast<const unsigned char *>(rows);
    size_t bytes = rowBytes();
    for (size_t i = 0; i < n; ++i)
      std::memcpy(row(indices[i]), src + i * bytes, bytes);
    return comm().barrier();
  }

private:
  int rankIndex() const { return comm().rank(); }

  unsigned char *row(int64_t index) {
    if (type() == MemoryType::Continuous)
      return Bases[0] + static_cast<size_t>(index) * rowBytes();
    int owner = Partition.owner(index);
    return Bases[static_cast<size_t>(owner)] +
           static_cast<size_t>(index - Partition.begin(owner)) * rowBytes();
  }

  Status mapContinuous() {
    Communicator &c = comm();
    size_t total = static_cast<size_t>(rows()) * rowBytes();
    Maps.resize(1);
    std::string name;
    Status made;
    if (c.rank() == 0) {
      made = createSegment(total, name, Maps[0]);
      if (made.ok())
        segmentCreated(name);
      else
        made = error("create", made.message());
    }
    GNNC_TRY(agreeStatus(c, made));
    int64_t words[kNameWords];
    if (c.rank() == 0)
      packName(name, words);
    Status sent = c.broadcast(words, kNameWords, DType::Int64, 0);
    Status opened = sent;
    if (sent.ok() && c.rank() != 0) {
      name = unpackName(words);
      opened = openSegment(name, total, Maps[0]);
      if (!opened.ok())
        opened = error("create", opened.message());
    }
    // Every rank has mapped the segment (or failed) once this returns.
    Status agreed = sent.ok() ? agreeStatus(c, opened) : sent;
    if (c.rank() == 0)
      (void)unlinkSegment(name);
    GNNC_TRY(agreed);
    auto *base = static_cast<unsigned char *>(Maps[0].data());
    Bases.resize(static_cast<size_t>(c.size()));
    for (int r = 0; r < c.size(); ++r)
      Bases[static_cast<size_t>(r)] =
          base + static_cast<size_t>(Partition.begin(r)) * rowBytes();
    return Status::success();
  }

  Status mapChunked() {
    Communicator &c = comm();
    size_t ranks = static_cast<size_t>(c.size());
    size_t me = static_cast<size_t>(c.rank());
    Maps.resize(ranks);
    std::string name;
    Status made = createSegment(static_cast<size_t>(localRows()) * rowBytes(),
                                name, Maps[me]);
    if (made.ok())
      segmentCreated(name);
    else
      made = error("create", made.message());
    Status agreed = agreeStatus(c, made);
    if (!agreed.ok()) {
      if (made.ok())
        (void)unlinkSegment(name);
      return agreed;
    }
    std::vector<int64_t> mine(kNameWords), all(kNameWords * ranks);
    packName(name, mine.data());
    Status opened =
        c.allGather(mine.data(), all.data(), kNameWords, DType::Int64);
    bool collectiveOk = opened.ok();
    for (size_t r = 0; opened.ok() && r < ranks; ++r) {
      if (r == me)
        continue;
      std::string peer = unpackName(all.data() + r * kNameWords);
      size_t bytes = static_cast<size_t>(Partition.count(static_cast<int>(r))) *
                     rowBytes();
      opened = openSegment(peer, bytes, Maps[r]);
      if (!opened.ok())
        opened = error("create", opened.message());
    }
    agreed = collectiveOk ? agreeStatus(c, opened) : opened;
    (void)unlinkSegment(name);
    GNNC_TRY(agreed);
    Bases.resize(ranks);
    for (size_t r = 0; r < ranks; ++r)
      Bases[r] = static_cast<unsigned char *>(Maps[r].data());
    return Status::success();
  }

  std::vector<ShmMapping> Maps;
  /// The first row of each rank.
  std::vector<unsigned char *> Bases;
};

//===----------------------------------------------------------------------===//
// Distributed
//===----------------------------------------------------------------------===//

/// A tensor in private memory; remote rows move by all-to-all.
class PrivateTensor : public HostTensor {
public:
  using HostTensor::HostTensor;
  ~PrivateTensor() override { std::free(Data); }

  Status allocate() {
    size_t bytes = static_cast<size_t>(localRows()) * rowBytes();
    Status local;
    if (bytes > 0) {
      constexpr size_t kAlign = 64;
      size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
      Data = static_cast<unsigned char *>(std::aligned_alloc(kAlign, rounded));
      if (!Data)
        local = error("create", fmt::format("out of memory for {} rows ({} "
                                            "bytes)",
                                            localRows(), bytes));
      else
        std::memset(Data, 0, rounded);
    }
    return agreeStatus(comm(), local);
  }

  void *localData() override { return Data; }

  Status gather(const int64_t *indices, size_t n, void *out) override {
    GNNC_TRY(checkIndices("gather", indices, n, out));
    return gatherChecked(indices, n, out);
  }

  Status gatherChecked(const int64_t *indices, size_t n, void *out) override {
    try {
      return gatherRows(indices, n, out);
    } catch (const std::bad_alloc &) {
      return error("gather", fmt::format("out of memory moving {} rows", n));
    }
  }

  Status scatter(const int64_t *indices, size_t n, const void *rows) override {
    GNNC_TRY(checkIndices("scatter", indices, n, rows));
    try {
      return scatterRows(indices, n, rows);
    } catch (const std::bad_alloc &) {
      return error("scatter", fmt::format("out of memory moving {} rows", n));
    }
  }

private:
  Status gatherRows(const int64_t *indices, size_t n, void *out) {
    Routing route;
    GNNC_TRY(routeIndices(indices, n, route));
    size_t bytes = rowBytes();
    auto *dst = static_cast<unsigned char *>(out);
    // This rank's own rows are copied directly.
    for (size_t i = 0; i < n; ++i)
      if (route.Slot[i] == Routing::Own)
        std::memcpy(dst + i * bytes, localRow(indices[i]), bytes);
    // Owners copy the requested rows, in the order they were asked for.
    std::vector<unsigned char> replies(route.RecvIndices.size() * bytes);
    for (size_t j = 0; j < route.RecvIndices.size(); ++j)
      std::memcpy(replies.data() + j * bytes, localRow(route.RecvIndices[j]),
                  bytes);
    std::vector<unsigned char> arrived(route.Sent * bytes);
    std::vector<size_t> replyCounts = scaled(route.RecvCounts);
    std::vector<size_t> arriveCounts = scaled(route.SendCounts);
    GNNC_TRY(comm().allToAllV(replies.data(), replyCounts.data(),
                              arrived.data(), arriveCounts.data(), dtype()));
    for (size_t i = 0; i < n; ++i)
      if (route.Slot[i] != Routing::Own)
        std::memcpy(dst + i * bytes, arrived.data() + route.Slot[i] * bytes,
                    bytes);
    return Status::success();
  }

  Status scatterRows(const int64_t *indices, size_t n, const void *rows) {
    Routing route;
    GNNC_TRY(routeIndices(indices, n, route));
    size_t bytes = rowBytes();
    std::vector<unsigned char> outgoing(route.Sent * bytes);
    const auto *src = static_cast<const unsigned char *>(rows);
    for (size_t i = 0; i < n; ++i)
      if (route.Slot[i] != Routing::Own)
        std::memcpy(outgoing.data() + route.Slot[i] * bytes, src + i * bytes,
                    bytes);
    std::vector<unsigned char> incoming(route.RecvIndices.size() * bytes);
    std::vector<size_t> sendCounts = scaled(route.SendCounts);
    std::vector<size_t> recvCounts = scaled(route.RecvCounts);
    GNNC_TRY(comm().allToAllV(outgoing.data(), sendCounts.data(),
                              incoming.data(), recvCounts.data(), dtype()));
    // Writes apply in rank order, each rank's in its order, so later writes
    // (higher ranks, later positions) win: first the rows of lower ranks,
    // then this rank's own, then those of higher ranks.
    size_t lower = 0;
    for (int r = 0; r < comm().rank(); ++r)
      lower += route.RecvCounts[static_cast<size_t>(r)];
    auto applyIncoming = [&](size_t begin, size_t end) {
      for (size_t j = begin; j < end; ++j)
        std::memcpy(localRow(route.RecvIndices[j]), incoming.data() + j * bytes,
                    bytes);
    };
    applyIncoming(0, lower);
    for (size_t i = 0; i < n; ++i)
      if (route.Slot[i] == Routing::Own)
        std::memcpy(localRow(indices[i]), src + i * bytes, bytes);
    applyIncoming(lower, route.RecvIndices.size());
    return Status::success();
  }

  /// Where each index of a gather or scatter goes.
  struct Routing {
    /// Indices sent to / received from each rank.
    std::vector<size_t> SendCounts, RecvCounts;
    /// Position of index i in the packed send order, or Own for a row of
    /// this rank (never sent).
    std::vector<size_t> Slot;
    static constexpr size_t Own = ~size_t(0);
    /// Indices sent to other ranks.
    size_t Sent = 0;
    /// The indices this rank owns that the others asked for, packed by
    /// source rank.
    std::vector<int64_t> RecvIndices;
  };

  /// The bytes of global row `index`, one of this rank's.
  unsigned char *localRow(int64_t index) {
    return Data + static_cast<size_t>(index - localRowBegin()) * rowBytes();
  }

  /// Buckets the indices by owner (stable) and sends each other owner its
  /// indices; this rank's own rows stay here (Routing::Own).
  Status routeIndices(const int64_t *indices, size_t n, Routing &route) {
    size_t ranks = static_cast<size_t>(comm().size());
    int self = comm().rank();
    std::vector<int> owners(n);
    std::vector<int64_t> sendCounts(ranks, 0), recvCounts(ranks, 0);
    for (size_t i = 0; i < n; ++i) {
      owners[i] = Partition.owner(indices[i]);
      if (owners[i] != self)
        ++sendCounts[static_cast<size_t>(owners[i])];
    }
    std::vector<size_t> next(ranks, 0);
    for (size_t r = 1; r < ranks; ++r)
      next[r] = next[r - 1] + static_cast<size_t>(sendCounts[r - 1]);
    route.Sent = next[ranks - 1] + static_cast<size_t>(sendCounts[ranks - 1]);
    route.Slot.resize(n);
    std::vector<int64_t> packed(route.Sent);
    for (size_t i = 0; i < n; ++i) {
      if (owners[i] == self) {
        route.Slot[i] = Routing::Own;
        continue;
      }
      size_t slot = next[static_cast<size_t>(owners[i])]++;
      route.Slot[i] = slot;
      packed[slot] = indices[i];
    }
    GNNC_TRY(
        comm().allToAll(sendCounts.data(), recvCounts.data(), 1, DType::Int64));
    route.SendCounts.assign(sendCounts.begin(), sendCounts.end());
    route.RecvCounts.assign(recvCounts.begin(), recvCounts.end());
    size_t total = 0;
    for (size_t c : route.RecvCounts)
      total += c;
    route.RecvIndices.resize(total);
    GNNC_TRY(comm().allToAllV(packed.data(), route.SendCounts.data(),
                              route.RecvIndices.data(), route.RecvCounts.data(),
                              DType::Int64));
    // Owners trust nothing they receive.
    for (int64_t index : route.RecvIndices)
      if (index < localRowBegin() || index >= localRowBegin() + localRows())
        return error("route", fmt::format("received index {} outside this "
                                          "rank's rows [{}, {})",
                                          index, localRowBegin(),
                                          localRowBegin() + localRows()));
    return Status::success();
  }

  /// Row counts as element counts.
  std::vector<size_t> scaled(const std::vector<size_t> &counts) const {
    std::vector<size_t> out(counts.size());
    for (size_t r = 0; r < counts.size(); ++r)
      out[r] = counts[r] * static_cast<size_t>(cols());
    return out;
  }

  unsigned char *Data = nullptr;
};

/// The arguments every rank must agree on, as all-gathered.
struct Arguments {
  int64_t Rows, Cols, Dtype, Type, Location, NumCounts, CountsHash;
};
constexpr size_t kArgumentWords = sizeof(Arguments) / sizeof(int64_t);

int64_t hashCounts(const std::vector<int64_t> &counts) {
  uint64_t hash = 14695981039346656037ull;
  for (int64_t c : counts) {
    uint64_t v = static_cast<uint64_t>(c);
    for (int b = 0; b < 8; ++b)
      hash = (hash ^ ((v >> (8 * b)) & 0xff)) * 1099511628211ull;
  }
  return static_cast<int64_t>(hash);
}

/// The first difference between this rank's arguments and another rank's,
/// or an empty string.
std::string compareArguments(const Arguments &mine, const Arguments &other,
                             int rank) {
  auto dtypeText = [](int64_t d) {
    return d >= 0 && d <= static_cast<int64_t>(DType::Float64)
               ? std::string(rt::dtypeName(static_cast<DType>(d)))
               : fmt::format("dtype #{}", d);
  };
  auto typeText = [](int64_t t) {
    return t >= 0 && t <= static_cast<int64_t>(MemoryType::Distributed)
               ? std::string(memoryTypeName(static_cast<MemoryType>(t)))
               : fmt::format("memory type #{}", t);
  };
  auto locationText = [](int64_t l) {
    return l >= 0 && l <= static_cast<int64_t>(MemoryLocation::Device)
               ? std::string(memoryLocationName(static_cast<MemoryLocation>(l)))
               : fmt::format("location #{}", l);
  };
  if (mine.Rows != other.Rows)
    return fmt::format("rows {} here, but rank {} passes {}", mine.Rows, rank,
                       other.Rows);
  if (mine.Cols != other.Cols)
    return fmt::format("cols {} here, but rank {} passes {}", mine.Cols, rank,
                       other.Cols);
  if (mine.Dtype != other.Dtype)
    return fmt::format("dtype {} here, but rank {} passes {}",
                       dtypeText(mine.Dtype), rank, dtypeText(other.Dtype));
  if (mine.Type != other.Type)
    return fmt::format("memory type {} here, but rank {} passes {}",
                       typeText(mine.Type), rank, typeText(other.Type));
  if (mine.Location != other.Location)
    return fmt::format("location {} here, but rank {} passes {}",
                       locationText(mine.Location), rank,
                       locationText(other.Location));
  if (mine.NumCounts != other.NumCounts || mine.CountsHash != other.CountsHash)
    return fmt::format("the rows per rank differ from rank {}'s", rank);
  return {};
}

} // namespace

Status gnnc::dist::createTensor(Communicator &comm, int64_t rows, int64_t cols,
                                DType dtype, const TensorOptions &options,
                                std::unique_ptr<DistTensor> &out) {
  auto fail = [&](const std::string &message) {
    return Status::error(fmt::format("{}: create: {}", options.Name, message));
  };
  if (comm.deviceBuffers())
    return fail(fmt::format("host tensors need a communicator with host "
                            "buffers ({} passes device pointers)",
                            comm.backend()));

  // Every rank compares every rank's arguments before anything else, so
  // that a rank with different arguments fails every rank.
  Arguments mine{rows,
                 cols,
                 static_cast<int64_t>(dtype),
                 static_cast<int64_t>(options.Type),
                 static_cast<int64_t>(options.Location),
                 static_cast<int64_t>(options.RowsPerRank.size()),
                 hashCounts(options.RowsPerRank)};
  std::vector<Arguments> all(static_cast<size_t>(comm.size()));
  GNNC_TRY(comm.allGather(&mine, all.data(), kArgumentWords, DType::Int64));
  for (int r = 0; r < comm.size(); ++r) {
    std::string difference =
        compareArguments(mine, all[static_cast<size_t>(r)], r);
    if (!difference.empty())
      return fail(difference);
  }

  // The arguments agree, so every check below has the same outcome on
  // every rank.
  if (options.Location == MemoryLocation::Device)
    return fail("device tensors need gnnc_dist_cuda (createDeviceTensor)");
  if (options.Location != MemoryLocation::Host)
    return fail("invalid memory location");
  if (rows < 0)
    return fail(fmt::format("negative row count {}", rows));
  if (cols < 0)
    return fail(fmt::format("negative column count {}", cols));
  if (rt::dtypeSize(dtype) == 0)
    return fail("invalid dtype");
  if (options.Type != MemoryType::Continuous &&
      options.Type != MemoryType::Chunked &&
      options.Type != MemoryType::Distributed)
    return fail("invalid memory type");
  RowPartition partition;
  if (Status s =
          RowPartition::make(rows, comm.size(), options.RowsPerRank, partition);
      !s.ok())
    return fail(s.message());
  int64_t width = cols == 0 ? 1 : cols;
  int64_t totalBytes;
  if (__builtin_mul_overflow(rows, width, &totalBytes) ||
      __builtin_mul_overflow(
          totalBytes, static_cast<int64_t>(rt::dtypeSize(dtype)), &totalBytes))
    return fail(fmt::format("{}x{} {} elements overflow 64 bits", rows, cols,
                            rt::dtypeName(dtype)));
  if (options.Type != MemoryType::Distributed && comm.numNodes() > 1)
    return fail(fmt::format(
        "a {} tensor needs every rank on one node, but the communicator spans "
        "{} nodes; use the distributed type, or a communicator split by node "
        "(splitByNode)",
        memoryTypeName(options.Type), comm.numNodes()));

  int dims = cols == 0 ? 1 : 2;
  if (options.Type == MemoryType::Distributed) {
    auto tensor = std::unique_ptr<PrivateTensor>(new PrivateTensor(
        comm, dims, width, dtype, std::move(partition), options));
    GNNC_TRY(tensor->allocate());
    out = std::move(tensor);
    return Status::success();
  }
  auto tensor = std::unique_ptr<SharedTensor>(new SharedTensor(
      comm, dims, width, dtype, std::move(partition), options));
  GNNC_TRY(tensor->map());
  out = std::move(tensor);
  return Status::success();
}
