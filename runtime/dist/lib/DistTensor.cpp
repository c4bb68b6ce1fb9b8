//===- DistTensor.cpp - Row-partitioned tensors over ranks ---------------===//
//
// Part of gnnc. What every memory type shares: names, the row partition,
// and loading and storing through files, where each rank reads or writes
// only its own rows and every rank learns whether any rank failed.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/DistTensor.h"

#include "CommInternal.h"
#include "SharedMemory.h"

#include "gnnc/runtime/Dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <unistd.h>

using namespace gnnc::dist;
using gnnc::dist::detail::agreeStatus;
namespace rt = gnnc::rt;

namespace {

/// Rows moved per read or write of a file, so that loading and storing
/// need a bounded buffer whatever the tensor's size.
constexpr size_t kChunkBytes = size_t{16} << 20;

std::string errnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  return text;
}

/// Calls `body(first, count, buffer)` for consecutive runs of this rank's
/// rows that fit in kChunkBytes (at least one row per run).
template <class F>
Status forEachChunk(int64_t rows, size_t rowBytes, F &&body) {
  if (rows == 0)
    return Status::success();
  int64_t perChunk =
      rowBytes == 0
          ? rows
          : std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / rowBytes));
  std::vector<unsigned char> buffer;
  try {
    buffer.resize(static_cast<size_t>(std::min(perChunk, rows)) * rowBytes);
  } catch (const std::bad_alloc &) {
    return Status::error(
        fmt::format("out of memory for a buffer of {} rows", perChunk));
  }
  for (int64_t first = 0; first < rows; first += perChunk)
    GNNC_TRY(body(first, std::min(perChunk, rows - first), buffer.data()));
  return Status::success();
}

/// Writes all of `data` at `offset` of `fd`.
bool pwriteAll(int fd, const unsigned char *data, size_t size, int64_t offset) {
  while (size > 0) {
    ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    offset += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Names and partitions
//===----------------------------------------------------------------------===//

const char *gnnc::dist::memoryTypeName(MemoryType type) {
  switch (type) {
  case MemoryType::Continuous:
    return "continuous";
  case MemoryType::Chunked:
    return "chunked";
  case MemoryType::Distributed:
    return "distributed";
  }
  return "unknown";
}

const char *gnnc::dist::memoryLocationName(MemoryLocation location) {
  switch (location) {
  case MemoryLocation::Host:
    return "host";
  case MemoryLocation::Device:
    return "device";
  }
  return "unknown";
}

bool gnnc::dist::parseMemoryType(std::string_view name, MemoryType &out) {
  for (MemoryType type :
       {MemoryType::Continuous, MemoryType::Chunked, MemoryType::Distributed}) {
    if (name == memoryTypeName(type)) {
      out = type;
      return true;
    }
  }
  return false;
}

Status RowPartition::make(int64_t rows, int ranks,
                          const std::vector<int64_t> &counts,
                          RowPartition &out) {
  if (ranks <= 0)
    return Status::error(
        fmt::format("row partition: {} ranks (expected at least 1)", ranks));
  if (rows < 0)
    return Status::error(
        fmt::format("row partition: negative row count {}", rows));
  std::vector<int64_t> offsets(static_cast<size_t>(ranks) + 1, 0);
  if (counts.empty()) {
    int64_t base = rows / ranks, extra = rows % ranks;
    for (int r = 0; r < ranks; ++r)
      offsets[static_cast<size_t>(r) + 1] =
          offsets[static_cast<size_t>(r)] + base + (r < extra ? 1 : 0);
  } else {
    if (counts.size() != static_cast<size_t>(ranks))
      return Status::error(fmt::format("row partition: {} row counts for {} "
                                       "ranks",
                                       counts.size(), ranks));
    for (int r = 0; r < ranks; ++r)
      if (counts[static_cast<size_t>(r)] < 0)
        return Status::error(
            fmt::format("row partition: rank {} has a negative row count {}", r,
                        counts[static_cast<size_t>(r)]));
    bool overflow = false;
    for (int r = 0; r < ranks; ++r)
      overflow |= __builtin_add_overflow(offsets[static_cast<size_t>(r)],
                                         counts[static_cast<size_t>(r)],
                                         &offsets[static_cast<size_t>(r) + 1]);
    if (overflow || offsets.back() != rows)
      return Status::error(
          fmt::format("row partition: the row counts sum to {}, not {}",
                      overflow ? std::string("more than 2^63")
                               : std::to_string(offsets.back()),
                      rows));
  }
  out.Offsets = std::move(offsets);
  return Status::success();
}

int RowPartition::owner(int64_t row) const {
  // The last rank whose first row is at most `row`; ranks without rows share
  // their first row with the next rank and are skipped by upper_bound.
  auto it = std::upper_bound(Offsets.begin(), Offsets.end() - 1, row);
  return static_cast<int>(it - Offsets.begin()) - 1;
}

//===----------------------------------------------------------------------===//
// DistTensor
//===----------------------------------------------------------------------===//

DistTensor::DistTensor(Communicator &comm, int dims, int64_t cols, DType dtype,
                       RowPartition partition, TensorOptions options)
    : Comm(&comm), Dims(dims), Cols(cols), ElemType(dtype),
      Partition(std::move(partition)), Options(std::move(options)) {}

DistTensor::~DistTensor() = default;

size_t DistTensor::rowBytes() const {
  return static_cast<size_t>(Cols) * rt::dtypeSize(ElemType);
}

Status DistTensor::error(const std::string &what,
                         const std::string &message) const {
  return Status::error(fmt::format("{}: {}: {}", Options.Name, what, message));
}

/// The shape of a tensor as a .npy file or dataset array holds it.
static std::vector<int64_t> tensorShape(const DistTensor &t) {
  if (t.dims() == 1)
    return {t.rows()};
  return {t.rows(), t.cols()};
}

Status DistTensor::loadNpy(const std::string &path) {
  std::vector<int64_t> shape = tensorShape(*this);
  size_t bytes = rowBytes();
  Status local = forEachChunk(
      localRows(), bytes, [&](int64_t first, int64_t count, void *buffer) {
        GNNC_TRY(rt::readNpyRows(path, ElemType, shape, localRowBegin() + first,
                                 count, buffer));
        return writeLocalRows(first, count, buffer);
      });
  if (!local.ok())
    local = error("loadNpy", local.message());
  return agreeStatus(*Comm, local);
}

Status DistTensor::loadDatasetArray(const std::string &path,
                                    const std::string &array) {
  // Every rank checks the header itself (the same file gives every rank the
  // same answer), then reads only its rows (rt::readDatasetRows). What a
  // slice read verifies: a bundle's framing (magic, version, flags, the
  // exact file size, that the sections fit) and every value it decodes (the
  // feature section from its start to the slice's end, the slice's labels
  // and mask bits), but not the checksum, which covers the whole file and
  // so would make every rank read all of it; a folder's .npy headers and
  // sizes and the slice's values (finite features, non-negative labels,
  // 0/1 masks).
  std::string what = fmt::format("loadDatasetArray({})", array);
  Status local = [&]() -> Status {
    rt::DatasetArrayInfo info;
    GNNC_TRY(rt::datasetArrayInfo(path, array, info));
    std::vector<int64_t> shape = tensorShape(*this);
    if (info.Dtype != ElemType)
      return Status::error(fmt::format("{}: {}: dtype {}, but the tensor holds "
                                       "{}",
                                       path, array, rt::dtypeName(info.Dtype),
                                       rt::dtypeName(ElemType)));
    if (info.Shape != shape)
      return Status::error(fmt::format("{}: {}: shape {}, but the tensor is {}",
                                       path, array, rt::formatShape(info.Shape),
                                       rt::formatShape(shape)));
    return forEachChunk(localRows(), rowBytes(),
                        [&](int64_t first, int64_t count, void *buffer) {
                          GNNC_TRY(rt::readDatasetRows(path, array,
                                                       localRowBegin() + first,
                                                       count, buffer));
                          return writeLocalRows(first, count, buffer);
                        });
  }();
  if (!local.ok())
    local = error(what, local.message());
  return agreeStatus(*Comm, local);
}

Status DistTensor::storeNpy(const std::string &path) {
  std::string header = rt::npyHeader(ElemType, tensorShape(*this));
  int64_t dataBytes = rows() * static_cast<int64_t>(rowBytes());

  // Rank 0 creates the temporary file, holding the header and sized for
  // the data, beside `path`; its name goes to every rank.
  static std::atomic<unsigned> counter{0};
  int64_t tmpId[2] = {static_cast<int64_t>(::getpid()),
                      static_cast<int64_t>(counter.fetch_add(1))};
  Status created;
  if (Comm->rank() == 0) {
    std::string tmp = fmt::format("{}.tmp.{}.{}", path, tmpId[0], tmpId[1]);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      created = error("storeNpy", fmt::format("{}: cannot create temporary "
                                              "file {}: {}",
                                              path, tmp, errnoText(errno)));
    } else {
      if (!pwriteAll(fd, reinterpret_cast<const unsigned char *>(header.data()),
                     header.size(), 0) ||
          ::ftruncate(fd, static_cast<off_t>(header.size()) + dataBytes) != 0)
        created = error("storeNpy", fmt::format("{}: write error: {}", path,
                                                errnoText(errno)));
      if (::close(fd) != 0 && created.ok())
        created = error("storeNpy", fmt::format("{}: write error: {}", path,
                                                errnoText(errno)));
      if (!created.ok())
        ::unlink(tmp.c_str());
    }
  }
  GNNC_TRY(agreeStatus(*Comm, created));
  GNNC_TRY(Comm->broadcast(tmpId, 2, DType::Int64, 0));
  std::string tmp = fmt::format("{}.tmp.{}.{}", path, tmpId[0], tmpId[1]);

  // Every rank writes its rows.
  Status written = [&]() -> Status {
    if (localRows() == 0)
      return Status::success();
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return error("storeNpy", fmt::format("{}: cannot open temporary file "
                                           "{}: {}",
                                           path, tmp, errnoText(errno)));
    int64_t base = static_cast<int64_t>(header.size()) +
                   localRowBegin() * static_cast<int64_t>(rowBytes());
    Status s = forEachChunk(
        localRows(), rowBytes(),
        [&](int64_t first, int64_t count, void *buffer) -> Status {
          GNNC_TRY(readLocalRows(first, count, buffer));
          size_t bytes = static_cast<size_t>(count) * rowBytes();
          if (!pwriteAll(fd, static_cast<const unsigned char *>(buffer), bytes,
                         base + first * static_cast<int64_t>(rowBytes())))
            return error("storeNpy", fmt::format("{}: write error: {}", path,
                                                 errnoText(errno)));
          return Status::success();
        });
    if (::close(fd) != 0 && s.ok())
      s = error("storeNpy",
                fmt::format("{}: write error: {}", path, errnoText(errno)));
    return s;
  }();
  Status agreed = agreeStatus(*Comm, written);
  if (Comm->rank() == 0 && !agreed.ok())
    ::unlink(tmp.c_str());
  GNNC_TRY(agreed);

  // Rank 0 moves the complete file into place.
  Status renamed;
  if (Comm->rank() == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) {
    renamed = error("storeNpy", fmt::format("{}: cannot rename temporary file "
                                            "into place: {}",
                                            path, errnoText(errno)));
    ::unlink(tmp.c_str());
  }
  return agreeStatus(*Comm, renamed);
}
