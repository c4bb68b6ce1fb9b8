//===- DistTensor.h - Row-partitioned tensors over ranks --------*- C++ -*-===//
//
// Part of gnnc. A 1-D or 2-D tensor whose rows are partitioned across the
// ranks of a communicator (contiguous blocks by default, or explicit
// per-rank counts), in one of WholeGraph's three memory types:
//
//   continuous   every rank addresses all rows in one range
//                host: one POSIX shared-memory segment for all ranks of the
//                node; device: cuMem virtual memory mapped on every GPU
//   chunked      every rank maps every rank's chunk
//                host: one segment per rank, mapped by all; device: CUDA
//                IPC handles
//   distributed  a rank maps only its own rows; remote rows arrive by
//                all-to-all
//                host: private memory; device: device memory and NCCL
//
// Continuous and chunked tensors need every rank of the communicator on one
// node (Communicator::numNodes() == 1); across nodes use distributed, or a
// communicator split by node. Shared-memory segments are unlinked as soon
// as every rank has mapped them, so a killed process leaves none behind.
//
// gather and scatter are collective for every memory type (every rank calls
// them, each with its own indices, possibly none), so code does not change
// with the type: a distributed tensor moves rows by all-to-all inside them,
// continuous and chunked ones read and write the mapped rows directly and
// scatter ends with a barrier, after which every rank sees every write.
// Duplicate indices are allowed in a gather. In a scatter, the last
// occurrence of an index wins on one rank; two ranks writing one row in one
// scatter is a race for the shared types (the distributed type applies the
// writes in rank order). An index out of [0, rows()) is an error that names
// it and its position, on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIST_DISTTENSOR_H
#define GNNC_DIST_DISTTENSOR_H

#include "gnnc/dist/Communicator.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gnnc::dist {

enum class MemoryType { Continuous, Chunked, Distributed };
enum class MemoryLocation { Host, Device };

/// "continuous", "chunked", "distributed".
const char *memoryTypeName(MemoryType type);
/// "host", "device".
const char *memoryLocationName(MemoryLocation location);
/// Parses a name printed by memoryTypeName; false when unknown.
bool parseMemoryType(std::string_view name, MemoryType &out);

/// How a tensor is laid out over the ranks.
struct TensorOptions {
  MemoryType Type = MemoryType::Distributed;
  MemoryLocation Location = MemoryLocation::Host;
  /// Rows per rank, in rank order (sums to the row count). Empty: blocks,
  /// the first rows % size ranks get one row more than the others.
  std::vector<int64_t> RowsPerRank;
  /// Names the tensor in messages ("features: gather: index 9 at position
  /// 2 is out of range [0, 8)").
  std::string Name = "tensor";
};

/// The row partition of a tensor: which rank owns which rows.
class RowPartition {
public:
  RowPartition() = default;
  /// Blocks (counts empty) or explicit counts; an error when the counts do
  /// not match the number of ranks or do not sum to `rows`, or a count is
  /// negative.
  static Status make(int64_t rows, int ranks,
                     const std::vector<int64_t> &counts, RowPartition &out);
  int64_t rows() const { return Offsets.empty() ? 0 : Offsets.back(); }
  int ranks() const { return static_cast<int>(Offsets.size()) - 1; }
  int64_t begin(int rank) const { return Offsets[rank]; }
  int64_t count(int rank) const { return Offsets[rank + 1] - Offsets[rank]; }
  /// The rank that owns `row` (0 <= row < rows()).
  int owner(int64_t row) const;

private:
  std::vector<int64_t> Offsets; ///< ranks() + 1 prefix sums
};

/// A row-partitioned tensor. Created collectively by createTensor (host) or
/// createDeviceTensor (device, gnnc_dist_cuda); destroyed by each rank on
/// its own. Elements start zeroed.
class DistTensor {
public:
  virtual ~DistTensor();

  Communicator &comm() const { return *Comm; }
  const std::string &name() const { return Options.Name; }
  MemoryType type() const { return Options.Type; }
  MemoryLocation location() const { return Options.Location; }
  DType dtype() const { return ElemType; }
  /// 1 or 2.
  int dims() const { return Dims; }
  int64_t rows() const { return Partition.rows(); }
  /// Columns of a 2-D tensor, 1 for a 1-D one.
  int64_t cols() const { return Cols; }
  size_t rowBytes() const;
  const RowPartition &partition() const { return Partition; }

  /// This rank's rows: the first global row, how many, and where they are
  /// (device memory for a device tensor).
  int64_t localRowBegin() const { return Partition.begin(Comm->rank()); }
  int64_t localRows() const { return Partition.count(Comm->rank()); }
  virtual void *localData() = 0;
  const void *localData() const {
    return const_cast<DistTensor *>(this)->localData();
  }
  /// Continuous tensors: every row, in one range; otherwise null.
  virtual void *globalData() { return nullptr; }

  /// Bytes of memory this rank holds for the tensor: its own rows' share
  /// (a continuous segment is charged to the ranks in proportion to their
  /// rows), not what it merely maps.
  virtual size_t localBytes() const = 0;

  /// Copies rows `indices[0..n)` into `out` (n * rowBytes(), packed).
  /// Collective. Device tensors take device pointers.
  virtual Status gather(const int64_t *indices, size_t n, void *out) = 0;
  /// Writes rows: `rows` holds n * rowBytes() bytes. Collective.
  virtual Status scatter(const int64_t *indices, size_t n,
                         const void *rows) = 0;

  /// Loads the whole tensor from a .npy file of the same dtype and shape,
  /// each rank reading only its own rows (from a file every rank can read).
  /// Collective.
  Status loadNpy(const std::string &path);
  /// Stores the tensor to a .npy file: rank 0 writes the header, each rank
  /// its own rows, into a temporary file renamed over `path` when all are
  /// done. Collective.
  Status storeNpy(const std::string &path);
  /// Loads the array `array` ("features", "labels", ...) of a dataset
  /// bundle (.gnnd) or .npy dataset folder, each rank reading only its
  /// rows. Collective.
  Status loadDatasetArray(const std::string &path, const std::string &array);

protected:
  DistTensor(Communicator &comm, int dims, int64_t cols, DType dtype,
             RowPartition partition, TensorOptions options);

  /// gather() without its index check, which makes every rank agree on
  /// the indices (a collective of its own): for a caller that has already
  /// checked every index on every rank (Embedding). Still collective.
  virtual Status gatherChecked(const int64_t *indices, size_t n, void *out) {
    return gather(indices, n, out);
  }
  friend class Embedding;

  /// Copies this rank's rows from / to host memory (count rows starting at
  /// local row `first`); device tensors copy across.
  virtual Status writeLocalRows(int64_t first, int64_t count,
                                const void *host) = 0;
  virtual Status readLocalRows(int64_t first, int64_t count, void *host) = 0;

  /// The message prefix "<name>: <what>: ".
  Status error(const std::string &what, const std::string &message) const;

  Communicator *Comm;
  int Dims;
  int64_t Cols;
  DType ElemType;
  RowPartition Partition;
  TensorOptions Options;
};

/// Creates a host tensor of `rows` x `cols` (cols == 0: a 1-D tensor of
/// `rows` elements). Collective: every rank passes the same arguments.
Status createTensor(Communicator &comm, int64_t rows, int64_t cols, DType dtype,
                    const TensorOptions &options,
                    std::unique_ptr<DistTensor> &out);

/// As createTensor for MemoryLocation::Device (gnnc_dist_cuda; the CUDA
/// device current on each rank). Without gnnc_dist_cuda linked, use
/// createTensor, which refuses device tensors with an error.
Status createDeviceTensor(Communicator &comm, int64_t rows, int64_t cols,
                          DType dtype, const TensorOptions &options,
                          std::unique_ptr<DistTensor> &out);

} // namespace gnnc::dist

#endif // GNNC_DIST_DISTTENSOR_H
