//===- Communicator.cpp - Checked collectives over any engine -------------===//
//
// Part of gnnc. The backend-independent half of every collective: it numbers
// the call, refuses at once on a broken communicator, validates this rank's
// arguments, exchanges and compares the call headers of every rank (see
// Communicator.h), and only then hands the call to the backend's engine.
//
// Every rank compares all headers in the same order, field by field, so a
// mismatch is found on every rank, in the same field: each rank reports it
// from its own point of view ("count 10 here, but rank 3 passes 12"). A rank
// whose own arguments are invalid still takes part in the exchange with a
// header marked invalid, so the others fail at once instead of waiting for
// it until the timeout.
//
//===----------------------------------------------------------------------===//

#include "CommInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <unistd.h>

using namespace gnnc;
using namespace gnnc::dist;

namespace {

/// The collectives, as CallHeader::Kind. allGather and allToAll have kinds
/// of their own (their engines are the -v ones) so that a rank calling
/// allGather while another calls allGatherV is reported.
enum CallKind : uint32_t {
  KindBarrier = 1,
  KindBroadcast,
  KindAllReduce,
  KindAllGather,
  KindAllGatherV,
  KindAllToAll,
  KindAllToAllV,
  KindSplit,
};

/// Set in CallHeader::Kind by a rank whose own arguments are invalid.
constexpr uint32_t kInvalidBit = 0x80000000u;

const char *kindName(uint32_t kind) {
  switch (kind & ~kInvalidBit) {
  case KindBarrier:
    return "barrier";
  case KindBroadcast:
    return "broadcast";
  case KindAllReduce:
    return "all-reduce";
  case KindAllGather:
    return "all-gather";
  case KindAllGatherV:
    return "all-gather-v";
  case KindAllToAll:
    return "all-to-all";
  case KindAllToAllV:
    return "all-to-all-v";
  case KindSplit:
    return "split";
  default:
    return "an unknown collective";
  }
}

bool validDType(DType dtype) {
  int value = static_cast<int>(dtype);
  return value >= static_cast<int>(DType::Bool) &&
         value <= static_cast<int>(DType::Float64);
}

std::string dtypeText(int32_t dtype) {
  if (dtype >= static_cast<int>(DType::Bool) &&
      dtype <= static_cast<int>(DType::Float64))
    return rt::dtypeName(static_cast<DType>(dtype));
  return fmt::format("dtype {}", dtype);
}

std::string opText(int32_t op) {
  if (op >= static_cast<int>(ReduceOp::Sum) &&
      op <= static_cast<int>(ReduceOp::Min))
    return reduceOpName(static_cast<ReduceOp>(op));
  return fmt::format("op {}", op);
}

/// `a * b` unless it overflows size_t.
bool mulFits(size_t a, size_t b, size_t &out) {
  if (a != 0 && b > std::numeric_limits<size_t>::max() / a)
    return false;
  out = a * b;
  return true;
}

/// The sum of `counts[0..n)` unless it overflows.
bool sumFits(const size_t *counts, int n, size_t &out) {
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] > std::numeric_limits<size_t>::max() - total)
      return false;
    total += counts[i];
  }
  out = total;
  return true;
}

/// The bytes of `count` elements of a valid `dtype`, unless they overflow.
bool bytesFit(size_t count, DType dtype, size_t &out) {
  return mulFits(count, rt::dtypeSize(dtype), out);
}

std::string plural(size_t n, const char *one, const char *many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// The length of a node name record exchanged by initTopology.
constexpr size_t kNodeNameBytes = 256;

} // namespace

const char *gnnc::dist::reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  }
  return "unknown";
}

Status gnnc::dist::createMpiWorld(std::unique_ptr<Communicator> &out) {
  CommOptions options;
  GNNC_TRY(CommOptions::fromEnvironment(options));
  return createMpiWorld(out, options);
}

Status CommOptions::fromEnvironment(CommOptions &out) {
  CommOptions options;
  if (const char *text = std::getenv("GNNC_DIST_TIMEOUT")) {
    errno = 0;
    char *end = nullptr;
    double seconds = std::strtod(text, &end);
    bool parsed = *text != '\0' && end && *end == '\0' && errno == 0;
    if (!parsed || !std::isfinite(seconds) || seconds <= 0)
      return Status::error(
          fmt::format("GNNC_DIST_TIMEOUT: invalid value '{}' (expected a "
                      "positive number of seconds)",
                      text));
    options.TimeoutSeconds = seconds;
  }
  if (const char *text = std::getenv("GNNC_DIST_CHECK")) {
    if (std::strcmp(text, "0") == 0)
      options.CheckArguments = false;
    else if (std::strcmp(text, "1") == 0)
      options.CheckArguments = true;
    else
      return Status::error(fmt::format(
          "GNNC_DIST_CHECK: invalid value '{}' (expected 0 or 1)", text));
  }
  out = options;
  return Status::success();
}

Communicator::Communicator(int rank, int size, CommOptions options)
    : Rank(rank), Size(size), Options(options) {}

Communicator::~Communicator() = default;

Status Communicator::error(const std::string &message) const {
  return Status::error(fmt::format("gnnc dist ({}, rank {} of {}): {}",
                                   backend(), Rank, Size, message));
}

namespace {

/// Compares the call headers of every rank (`all`, indexed by rank) from the
/// point of view of rank `me`, field by field in a fixed order, and returns
/// the first difference ("" when all agree). Every rank sees the same
/// headers, so every rank finds a difference in the same field. A header
/// marked invalid is reported by the other ranks; `meInvalid` is set when
/// it is this rank's own (its caller reports its own error).
template <class Header>
std::string compareHeaders(const std::vector<Header> &all, int me, int size,
                           bool &meInvalid) {
  meInvalid = false;
  if (static_cast<int>(all.size()) != size)
    return fmt::format("the header exchange returned {} headers for {} ranks",
                       all.size(), size);
  const Header &mine = all[me];
  uint32_t myKind = mine.Kind & ~kInvalidBit;
  for (int r = 0; r < size; ++r)
    if ((all[r].Kind & ~kInvalidBit) != myKind ||
        all[r].Sequence != mine.Sequence)
      return fmt::format("rank {} called {} #{}", r, kindName(all[r].Kind),
                         all[r].Sequence);
  if (mine.Kind & kInvalidBit) {
    meInvalid = true;
    return "";
  }
  for (int r = 0; r < size; ++r)
    if (all[r].Kind & kInvalidBit)
      return fmt::format("rank {} passed invalid arguments (its error says "
                         "which)",
                         r);
  for (int r = 0; r < size; ++r)
    if (all[r].Count != mine.Count)
      return fmt::format("count {} here, but rank {} passes {}", mine.Count, r,
                         all[r].Count);
  for (int r = 0; r < size; ++r)
    if (all[r].DType != mine.DType)
      return fmt::format("dtype {} here, but rank {} passes {}",
                         dtypeText(mine.DType), r, dtypeText(all[r].DType));
  for (int r = 0; r < size; ++r)
    if (all[r].Root != mine.Root)
      return fmt::format("root {} here, but rank {} passes {}", mine.Root, r,
                         all[r].Root);
  for (int r = 0; r < size; ++r)
    if (all[r].Op != mine.Op)
      return fmt::format("reduction {} here, but rank {} passes {}",
                         opText(mine.Op), r, opText(all[r].Op));
  // Per-peer counts: what rank i sends to rank j must be what rank j
  // expects from rank i.
  size_t perPeer = mine.SendCounts.size();
  if (perPeer != 0 && perPeer != static_cast<size_t>(size))
    return fmt::format("the header of rank {} has {} per-rank counts for {} "
                       "ranks",
                       me, perPeer, size);
  for (int r = 0; r < size; ++r)
    if (all[r].SendCounts.size() != perPeer ||
        all[r].RecvCounts.size() != perPeer)
      return fmt::format("the header of rank {} has {} per-rank counts, but "
                         "the header of rank {} has {}",
                         me, perPeer, r, all[r].SendCounts.size());
  if (perPeer == 0)
    return "";
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < size; ++j)
      if (all[i].SendCounts[j] != all[j].RecvCounts[i])
        return fmt::format("rank {} sends {} to rank {}, but rank {} expects "
                           "{} from rank {}",
                           i,
                           plural(all[i].SendCounts[j], "element", "elements"),
                           j, j, all[j].RecvCounts[i], i);
  return "";
}

} // namespace

template <class F>
Status Communicator::run(uint32_t kind, const char *what, F &&body) {
  ++Sequence;
  std::string call = fmt::format("{} #{}", what, Sequence);
  if (broken())
    return error(
        fmt::format("{}: broken communicator: {}", call, BrokenMessage));

  auto execute = [&]() -> Status {
    CallHeader mine;
    mine.Kind = kind;
    mine.Sequence = Sequence;
    std::string local = body.first(mine);
    if (Options.CheckArguments) {
      if (!local.empty())
        mine.Kind |= kInvalidBit;
      std::vector<CallHeader> all;
      GNNC_TRY(exchangeHeaders(call, mine, all));
      bool meInvalid = false;
      std::string mismatch = compareHeaders(all, Rank, Size, meInvalid);
      if (!mismatch.empty())
        return error(fmt::format("{}: {}", call, mismatch));
      if (meInvalid && local.empty())
        return error(fmt::format("{}: the header exchange marked this "
                                 "rank's arguments invalid",
                                 call));
    }
    if (!local.empty())
      return error(fmt::format("{}: {}", call, local));
    return body.second(call);
  };
  Status status = execute();
  if (!status.ok() && BrokenMessage.empty()) {
    // Keep the first error without this communicator's prefix; later
    // refusals repeat it after their own.
    std::string prefix = error("").message();
    const std::string &message = status.message();
    BrokenMessage = message.compare(0, prefix.size(), prefix) == 0
                        ? message.substr(prefix.size())
                        : message;
    if (BrokenMessage.empty())
      BrokenMessage = "unknown error";
    onBroken();
  }
  return status;
}

namespace {

/// Local validation of a buffer: null with a nonzero size is an error.
std::string checkBuffer(const void *data, size_t count, const char *name) {
  if (!data && count != 0)
    return fmt::format("{} is null but holds {}", name,
                       plural(count, "element", "elements"));
  return "";
}

std::string checkDType(DType dtype) {
  if (!validDType(dtype))
    return fmt::format("invalid dtype {}", static_cast<int>(dtype));
  return "";
}

/// Checks `count` elements of `dtype` (times `factor`) fit in size_t bytes.
std::string checkBytes(size_t count, size_t factor, DType dtype,
                       const char *name) {
  size_t elements = 0, bytes = 0;
  if (!mulFits(count, factor, elements) || !bytesFit(elements, dtype, bytes))
    return fmt::format("{} of {} x {} {} elements overflows the address "
                       "space",
                       name, count, factor, rt::dtypeName(dtype));
  return "";
}

/// Checks a per-rank count array: present, with a total whose bytes fit.
std::string checkCounts(const size_t *counts, int size, DType dtype,
                        const char *name, size_t &total) {
  total = 0;
  if (!counts)
    return fmt::format("{} is null", name);
  size_t bytes = 0;
  if (!sumFits(counts, size, total) || !bytesFit(total, dtype, bytes))
    return fmt::format("the total of {} overflows the address space", name);
  return "";
}

/// The first non-empty message.
template <class... T> std::string firstOf(T... messages) {
  std::string result;
  ((result.empty() ? (void)(result = messages) : (void)0), ...);
  return result;
}

} // namespace

Status Communicator::barrier() {
  return run(
      KindBarrier, "barrier",
      std::make_pair([](CallHeader &) { return std::string(); },
                     [&](const std::string &call) { return doBarrier(call); }));
}

Status Communicator::broadcast(void *data, size_t count, DType dtype,
                               int root) {
  return run(KindBroadcast, "broadcast",
             std::make_pair(
                 [&](CallHeader &h) {
                   h.Count = count;
                   h.DType = static_cast<int32_t>(dtype);
                   h.Root = root;
                   if (root < 0 || root >= Size)
                     return fmt::format("root {} is out of range [0, {})", root,
                                        Size);
                   std::string msg = checkDType(dtype);
                   if (msg.empty())
                     msg = firstOf(checkBytes(count, 1, dtype, "the buffer"),
                                   checkBuffer(data, count, "the buffer"));
                   return msg;
                 },
                 [&](const std::string &call) {
                   return doBroadcast(call, data, count, dtype, root);
                 }));
}

Status Communicator::allReduce(const void *send, void *recv, size_t count,
                               DType dtype, ReduceOp op) {
  return run(
      KindAllReduce, "all-reduce",
      std::make_pair(
          [&](CallHeader &h) {
            h.Count = count;
            h.DType = static_cast<int32_t>(dtype);
            h.Op = static_cast<int32_t>(op);
            std::string msg = checkDType(dtype);
            if (!msg.empty())
              return msg;
            if (dtype == DType::Bool)
              return std::string("all-reduce of bool is not supported (use "
                                 "int32)");
            int opValue = static_cast<int>(op);
            if (opValue < static_cast<int>(ReduceOp::Sum) ||
                opValue > static_cast<int>(ReduceOp::Min))
              return fmt::format("invalid reduction {}", opValue);
            return firstOf(checkBytes(count, 1, dtype, "the buffer"),
                           checkBuffer(send, count, "the send buffer"),
                           checkBuffer(recv, count, "the receive buffer"));
          },
          [&](const std::string &call) {
            return doAllReduce(call, send, recv, count, dtype, op);
          }));
}

Status Communicator::allGather(const void *send, void *recv, size_t count,
                               DType dtype) {
  std::vector<size_t> counts;
  return run(KindAllGather, "all-gather",
             std::make_pair(
                 [&](CallHeader &h) {
                   h.Count = count;
                   h.DType = static_cast<int32_t>(dtype);
                   std::string msg = checkDType(dtype);
                   if (!msg.empty())
                     return msg;
                   msg = checkBytes(count, static_cast<size_t>(Size), dtype,
                                    "the receive buffer");
                   if (!msg.empty())
                     return msg;
                   counts.assign(static_cast<size_t>(Size), count);
                   return firstOf(
                       checkBuffer(send, count, "the send buffer"),
                       checkBuffer(recv, count * Size, "the receive buffer"));
                 },
                 [&](const std::string &call) {
                   return doAllGatherV(call, send, recv, counts.data(), dtype);
                 }));
}

Status Communicator::allGatherV(const void *send, void *recv,
                                const size_t *recvCounts, DType dtype) {
  return run(
      KindAllGatherV, "all-gather-v",
      std::make_pair(
          [&](CallHeader &h) {
            h.DType = static_cast<int32_t>(dtype);
            std::string msg = checkDType(dtype);
            if (!msg.empty())
              return msg;
            size_t total = 0;
            msg = checkCounts(recvCounts, Size, dtype, "recvCounts", total);
            if (!msg.empty())
              return msg;
            h.SendCounts.assign(static_cast<size_t>(Size), recvCounts[Rank]);
            h.RecvCounts.assign(recvCounts, recvCounts + Size);
            return firstOf(
                checkBuffer(send, recvCounts[Rank], "the send buffer"),
                checkBuffer(recv, total, "the receive buffer"));
          },
          [&](const std::string &call) {
            return doAllGatherV(call, send, recv, recvCounts, dtype);
          }));
}

Status Communicator::allToAll(const void *send, void *recv, size_t countPerRank,
                              DType dtype) {
  std::vector<size_t> counts;
  return run(
      KindAllToAll, "all-to-all",
      std::make_pair(
          [&](CallHeader &h) {
            h.Count = countPerRank;
            h.DType = static_cast<int32_t>(dtype);
            std::string msg = checkDType(dtype);
            if (!msg.empty())
              return msg;
            msg = checkBytes(countPerRank, static_cast<size_t>(Size), dtype,
                             "a buffer");
            if (!msg.empty())
              return msg;
            counts.assign(static_cast<size_t>(Size), countPerRank);
            return firstOf(
                checkBuffer(send, countPerRank * Size, "the send buffer"),
                checkBuffer(recv, countPerRank * Size, "the receive buffer"));
          },
          [&](const std::string &call) {
            return doAllToAllV(call, send, counts.data(), recv, counts.data(),
                               dtype);
          }));
}

Status Communicator::allToAllV(const void *send, const size_t *sendCounts,
                               void *recv, const size_t *recvCounts,
                               DType dtype) {
  return run(
      KindAllToAllV, "all-to-all-v",
      std::make_pair(
          [&](CallHeader &h) {
            h.DType = static_cast<int32_t>(dtype);
            std::string msg = checkDType(dtype);
            if (!msg.empty())
              return msg;
            size_t sendTotal = 0, recvTotal = 0;
            msg = firstOf(
                checkCounts(sendCounts, Size, dtype, "sendCounts", sendTotal),
                checkCounts(recvCounts, Size, dtype, "recvCounts", recvTotal));
            if (!msg.empty())
              return msg;
            h.SendCounts.assign(sendCounts, sendCounts + Size);
            h.RecvCounts.assign(recvCounts, recvCounts + Size);
            return firstOf(checkBuffer(send, sendTotal, "the send buffer"),
                           checkBuffer(recv, recvTotal, "the receive buffer"));
          },
          [&](const std::string &call) {
            return doAllToAllV(call, send, sendCounts, recv, recvCounts, dtype);
          }));
}

Status Communicator::split(int color, int key,
                           std::unique_ptr<Communicator> &out) {
  std::unique_ptr<Communicator> result;
  GNNC_TRY(run(KindSplit, "split",
               std::make_pair([](CallHeader &) { return std::string(); },
                              [&](const std::string &call) {
                                return doSplit(call, color, key, result);
                              })));
  out = std::move(result);
  return Status::success();
}

Status Communicator::splitByNode(std::unique_ptr<Communicator> &out) {
  return split(NodeIndex, Rank, out);
}

Status Communicator::initTopology(const std::string &nodeName) {
  // One fixed-size record per rank: the name, zero-padded (host names are
  // at most 255 bytes).
  std::vector<char> mine(kNodeNameBytes, '\0');
  std::memcpy(mine.data(), nodeName.data(),
              std::min(nodeName.size(), kNodeNameBytes - 1));
  std::vector<char> all(kNodeNameBytes * static_cast<size_t>(Size), '\0');
  std::vector<size_t> counts(static_cast<size_t>(Size), kNodeNameBytes);
  Status status = run(KindAllGather, "all-gather of node names",
                      std::make_pair(
                          [&](CallHeader &h) {
                            h.Count = kNodeNameBytes;
                            h.DType = static_cast<int32_t>(DType::Bool);
                            return std::string();
                          },
                          [&](const std::string &call) {
                            return doAllGatherV(call, mine.data(), all.data(),
                                                counts.data(), DType::Bool);
                          }));
  // The user's calls are numbered from 1.
  Sequence = 0;
  GNNC_TRY(status);

  std::vector<std::string> names(static_cast<size_t>(Size));
  for (int r = 0; r < Size; ++r) {
    const char *record = all.data() + kNodeNameBytes * static_cast<size_t>(r);
    names[r].assign(record, strnlen(record, kNodeNameBytes));
  }
  // Nodes are numbered in the order of their lowest rank.
  std::vector<int> nodeOf(static_cast<size_t>(Size), -1);
  std::unordered_map<std::string, int> nodeIndex;
  for (int r = 0; r < Size; ++r)
    nodeOf[r] = nodeIndex.emplace(names[r], static_cast<int>(nodeIndex.size()))
                    .first->second;
  int nodes = static_cast<int>(nodeIndex.size());
  int localRank = 0, localSize = 0;
  for (int r = 0; r < Size; ++r) {
    if (nodeOf[r] != nodeOf[Rank])
      continue;
    if (r < Rank)
      ++localRank;
    ++localSize;
  }
  NodeName = names[Rank];
  LocalRank = localRank;
  LocalSize = localSize;
  NodeIndex = nodeOf[Rank];
  NumNodes = nodes;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// What the backends share
//===----------------------------------------------------------------------===//

namespace {

template <class T> T addWrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class T>
void reduceTyped(const std::vector<const void *> &inputs, T *out, size_t count,
                 ReduceOp op) {
  size_t n = inputs.size();
  std::vector<const T *> in(n);
  for (size_t q = 0; q < n; ++q)
    in[q] = static_cast<const T *>(inputs[q]);
  for (size_t i = 0; i < count; ++i) {
    T acc = in[0][i];
    for (size_t q = 1; q < n; ++q) {
      T v = in[q][i];
      switch (op) {
      case ReduceOp::Sum:
        acc = addWrapping(acc, v);
        break;
      case ReduceOp::Max:
        acc = v > acc ? v : acc;
        break;
      case ReduceOp::Min:
        acc = v < acc ? v : acc;
        break;
      }
    }
    out[i] = acc;
  }
}

} // namespace

void gnnc::dist::detail::reduceInRankOrder(
    const std::vector<const void *> &inputs, void *out, size_t count,
    DType dtype, ReduceOp op) {
  if (inputs.empty() || count == 0)
    return;
  switch (dtype) {
  case DType::Bool:
    reduceTyped(inputs, static_cast<uint8_t *>(out), count, op);
    return;
  case DType::Int32:
    reduceTyped(inputs, static_cast<int32_t *>(out), count, op);
    return;
  case DType::Int64:
    reduceTyped(inputs, static_cast<int64_t *>(out), count, op);
    return;
  case DType::Float32:
    reduceTyped(inputs, static_cast<float *>(out), count, op);
    return;
  case DType::Float64:
    reduceTyped(inputs, static_cast<double *>(out), count, op);
    return;
  }
}

std::string gnnc::dist::detail::commRankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += fmt::format("{}{}", i ? ", " : "", ranks[i]);
  return text;
}

std::string gnnc::dist::detail::commHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0')
    return "localhost";
  return name;
}

Status gnnc::dist::detail::agreeStatus(Communicator &comm,
                                       const Status &local) {
  int64_t mine = local.ok() ? -1 : static_cast<int64_t>(local.message().size());
  std::vector<int64_t> lengths(static_cast<size_t>(comm.size()));
  GNNC_TRY(comm.allGather(&mine, lengths.data(), 1, DType::Int64));
  int culprit = -1;
  for (int r = 0; r < comm.size() && culprit < 0; ++r)
    if (lengths[static_cast<size_t>(r)] >= 0)
      culprit = r;
  if (culprit < 0)
    return Status::success();
  // The lowest failing rank sends its message to every rank (packed into
  // int64 words).
  size_t length = static_cast<size_t>(lengths[static_cast<size_t>(culprit)]);
  std::vector<int64_t> words((length + 7) / 8, 0);
  if (comm.rank() == culprit && length > 0)
    std::memcpy(words.data(), local.message().data(), length);
  if (!words.empty())
    GNNC_TRY(comm.broadcast(words.data(), words.size(), DType::Int64, culprit));
  if (!local.ok())
    return local;
  std::string message(reinterpret_cast<const char *>(words.data()), length);
  return Status::error(fmt::format("{} (on rank {})", message, culprit));
}
