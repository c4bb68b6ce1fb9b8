//===- TensorChecks.cpp - Checks of distributed tensors ---------*- C++ -*-===//
//
// Part of gnnc's tests. Every memory type and operation of DistTensor
// against a reference built on every rank without communication: element
// (row, col) of a tensor holds a value computed from (row, col) alone, so
// every rank knows the whole expected tensor whatever the partition.
//
//===----------------------------------------------------------------------===//

#include "DistChecks.h"

#include "gnnc/dist/DistTensor.h"
#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Npy.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace gnnc::dist;
using namespace gnnc::dist::checks;
namespace rt = gnnc::rt;

namespace {

//===----------------------------------------------------------------------===//
// Deterministic values
//===----------------------------------------------------------------------===//

/// The seed of element (row, col) in version `variant` of a tensor.
int64_t seedOf(int64_t row, int64_t col, int variant) {
  return row * 7919 + col * 104729 + variant * 613 + 1;
}

/// Writes the element of `dtype` that seed `seed` stands for.
void encodeValue(DType dtype, int64_t seed, unsigned char *out) {
  switch (dtype) {
  case DType::Bool:
    *out = static_cast<unsigned char>(seed & 1);
    return;
  case DType::Int32: {
    int32_t v = static_cast<int32_t>(seed % 2000000011) - 1000000000;
    std::memcpy(out, &v, sizeof(v));
    return;
  }
  case DType::Int64: {
    int64_t v = seed * 1000003 - (int64_t{1} << 40);
    std::memcpy(out, &v, sizeof(v));
    return;
  }
  case DType::Float32: {
    float v = static_cast<float>(seed % 100003) * 0.5f - 7.25f;
    std::memcpy(out, &v, sizeof(v));
    return;
  }
  case DType::Float64: {
    double v = static_cast<double>(seed) * 0.125 - 3.0;
    std::memcpy(out, &v, sizeof(v));
    return;
  }
  }
}

std::string showValue(DType dtype, const unsigned char *p) {
  switch (dtype) {
  case DType::Bool:
    return std::to_string(static_cast<int>(*p));
  case DType::Int32: {
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    return std::to_string(v);
  }
  case DType::Int64: {
    int64_t v;
    std::memcpy(&v, p, sizeof(v));
    return std::to_string(v);
  }
  case DType::Float32: {
    float v;
    std::memcpy(&v, p, sizeof(v));
    return fmt::format("{}", v);
  }
  case DType::Float64: {
    double v;
    std::memcpy(&v, p, sizeof(v));
    return fmt::format("{}", v);
  }
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

enum class Layout { Block, Uneven, ZeroRows };

const char *layoutName(Layout layout) {
  switch (layout) {
  case Layout::Block:
    return "block";
  case Layout::Uneven:
    return "uneven";
  case Layout::ZeroRows:
    return "zero-row";
  }
  return "?";
}

struct Case {
  int64_t Rows, Cols; ///< Cols == 0: 1-D
  DType Dtype;
  Layout Part;
};

const Case kCases[] = {
    {37, 5, DType::Float32, Layout::Block},
    {37, 5, DType::Float32, Layout::Uneven},
    {29, 0, DType::Int64, Layout::ZeroRows},
    {23, 3, DType::Int64, Layout::Block},
    {11, 0, DType::Float32, Layout::Uneven},
    {13, 2, DType::Float64, Layout::ZeroRows},
    {9, 4, DType::Int32, Layout::Uneven},
    {2, 0, DType::Int64, Layout::Block},
    {0, 4, DType::Float32, Layout::Block},
};

/// Rows per rank of a layout: empty for blocks; uneven weights 1, 3, 2, 1,
/// 3, 2, ... (the rest to the last rank); no rows on even ranks (when there
/// are several ranks).
std::vector<int64_t> rowsPerRank(Layout layout, int64_t rows, int ranks) {
  std::vector<int64_t> counts;
  if (layout == Layout::Block)
    return counts;
  counts.assign(static_cast<size_t>(ranks), 0);
  if (layout == Layout::Uneven) {
    int64_t weights = 0;
    for (int r = 0; r < ranks; ++r)
      weights += 1 + (r * 2) % 3;
    int64_t given = 0;
    for (int r = 0; r + 1 < ranks; ++r) {
      counts[static_cast<size_t>(r)] = rows * (1 + (r * 2) % 3) / weights;
      given += counts[static_cast<size_t>(r)];
    }
    counts.back() = rows - given;
    return counts;
  }
  std::vector<int> holders;
  for (int r = 0; r < ranks; ++r)
    if (ranks == 1 || r % 2 == 1)
      holders.push_back(r);
  int64_t base = rows / static_cast<int64_t>(holders.size());
  int64_t extra = rows % static_cast<int64_t>(holders.size());
  for (size_t h = 0; h < holders.size(); ++h)
    counts[static_cast<size_t>(holders[h])] =
        base + (static_cast<int64_t>(h) < extra ? 1 : 0);
  return counts;
}

std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

/// Runs one case on one memory type.
class TensorCase {
public:
  TensorCase(CheckContext &ctx, Communicator &comm, MemoryType type,
             const Case &c, size_t index)
      : Ctx(ctx), Comm(comm), Type(type), C(c), Index(index) {
    Width = C.Cols == 0 ? 1 : C.Cols;
    RowBytes = static_cast<size_t>(Width) * rt::dtypeSize(C.Dtype);
    Label =
        fmt::format("checkTensors: {} {} {}x{} {} (rank {} of {})",
                    memoryTypeName(Type), layoutName(C.Part), C.Rows, C.Cols,
                    rt::dtypeName(C.Dtype), Comm.rank(), Comm.size());
  }

  Status run() {
    TensorOptions options;
    options.Type = Type;
    options.RowsPerRank = rowsPerRank(C.Part, C.Rows, Comm.size());
    options.Name = fmt::format("t{}", Index);
    std::unique_ptr<DistTensor> t;
    GNNC_TRY(createTensor(Comm, C.Rows, C.Cols, C.Dtype, options, t));
    GNNC_TRY(checkShape(*t, options.RowsPerRank));
    GNNC_TRY(checkLocalBytes(*t));

    // Elements start zeroed.
    std::vector<unsigned char> zeros(static_cast<size_t>(C.Rows) * RowBytes, 0);
    GNNC_TRY(checkAllRows(*t, zeros, "initial zeros"));
    // Writes through the local view are not collective: every rank has
    // read before any writes.
    GNNC_TRY(Comm.barrier());

    // Fill through the local view; after a barrier every rank sees it.
    Expected = reference(0);
    auto *local = static_cast<unsigned char *>(t->localData());
    if (t->localRows() > 0)
      std::memcpy(local,
                  Expected.data() +
                      static_cast<size_t>(t->localRowBegin()) * RowBytes,
                  static_cast<size_t>(t->localRows()) * RowBytes);
    GNNC_TRY(Comm.barrier());
    if (Type == MemoryType::Continuous) {
      if (!t->globalData())
        return fail("global view", "a continuous tensor has no global data");
      GNNC_TRY(compareRows("global view", nullptr, Expected.size() / RowBytes,
                           static_cast<unsigned char *>(t->globalData())));
    } else if (t->globalData()) {
      return fail("global view", "only a continuous tensor has a global view");
    }
    GNNC_TRY(checkGathers(*t, true));

    // Scatter: rank r writes the rows i with i % size == r, each first with
    // a wrong value and then with the final one (the last occurrence wins).
    Expected = reference(1);
    {
      std::vector<int64_t> indices;
      std::vector<unsigned char> rows;
      for (int64_t i = Comm.rank(); i < C.Rows; i += Comm.size()) {
        for (int variant : {2, 1}) {
          indices.push_back(i);
          rows.resize(rows.size() + RowBytes);
          fillRow(i, variant, rows.data() + rows.size() - RowBytes);
        }
      }
      // Every other rank scatters its rows in reverse order.
      if (Comm.rank() % 2 == 1) {
        std::vector<int64_t> rIdx(indices.rbegin(), indices.rend());
        std::vector<unsigned char> rRows(rows.size());
        for (size_t k = 0; k < indices.size(); k += 2) {
          // Keep the wrong value before the right one for each row.
          size_t from = indices.size() - 2 - k;
          rIdx[k] = indices[from];
          rIdx[k + 1] = indices[from + 1];
          std::memcpy(rRows.data() + k * RowBytes,
                      rows.data() + from * RowBytes, 2 * RowBytes);
        }
        indices.swap(rIdx);
        rows.swap(rRows);
      }
      GNNC_TRY(t->scatter(indices.empty() ? nullptr : indices.data(),
                          indices.size(),
                          rows.empty() ? nullptr : rows.data()));
    }
    GNNC_TRY(checkAllRows(*t, Expected, "after scatter"));
    GNNC_TRY(checkGathers(*t, true));
    GNNC_TRY(checkLocalView(*t));

    // The distributed type applies one scatter's writes in rank order.
    if (Type == MemoryType::Distributed && C.Rows > 0) {
      int64_t row = C.Rows - 1;
      std::vector<unsigned char> mine(RowBytes);
      fillRow(row, 10 + Comm.rank(), mine.data());
      GNNC_TRY(t->scatter(&row, 1, mine.data()));
      fillRow(row, 10 + Comm.size() - 1,
              Expected.data() + static_cast<size_t>(row) * RowBytes);
      GNNC_TRY(checkAllRows(*t, Expected, "after a scatter from every rank"));
      fillRow(row, 1, Expected.data() + static_cast<size_t>(row) * RowBytes);
      GNNC_TRY(
          t->scatter(&row, Comm.rank() == 0 ? 1 : 0,
                     Expected.data() + static_cast<size_t>(row) * RowBytes));
    }

    GNNC_TRY(checkFiles(*t, options));
    return Status::success();
  }

private:
  Status fail(const std::string &what, const std::string &message) const {
    return Status::error(fmt::format("{}: {}: {}", Label, what, message));
  }

  void fillRow(int64_t row, int variant, unsigned char *out) const {
    size_t elem = rt::dtypeSize(C.Dtype);
    for (int64_t col = 0; col < Width; ++col)
      encodeValue(C.Dtype, seedOf(row, col, variant),
                  out + static_cast<size_t>(col) * elem);
  }

  std::vector<unsigned char> reference(int variant) const {
    std::vector<unsigned char> out(static_cast<size_t>(C.Rows) * RowBytes);
    for (int64_t row = 0; row < C.Rows; ++row)
      fillRow(row, variant, out.data() + static_cast<size_t>(row) * RowBytes);
    return out;
  }

  Status checkShape(const DistTensor &t,
                    const std::vector<int64_t> &counts) const {
    if (t.rows() != C.Rows || t.cols() != Width ||
        t.dims() != (C.Cols == 0 ? 1 : 2) || t.dtype() != C.Dtype ||
        t.type() != Type || t.location() != MemoryLocation::Host ||
        t.rowBytes() != RowBytes)
      return fail("shape", fmt::format("rows {} cols {} dims {} dtype {} "
                                       "row bytes {}",
                                       t.rows(), t.cols(), t.dims(),
                                       rt::dtypeName(t.dtype()), t.rowBytes()));
    RowPartition expected;
    GNNC_TRY(RowPartition::make(C.Rows, Comm.size(), counts, expected));
    for (int r = 0; r < Comm.size(); ++r)
      if (t.partition().begin(r) != expected.begin(r) ||
          t.partition().count(r) != expected.count(r))
        return fail("partition",
                    fmt::format("rank {} has rows [{}, +{}), expected [{}, "
                                "+{})",
                                r, t.partition().begin(r),
                                t.partition().count(r), expected.begin(r),
                                expected.count(r)));
    if (t.localRowBegin() != expected.begin(Comm.rank()) ||
        t.localRows() != expected.count(Comm.rank()))
      return fail("partition", "local rows differ from the partition");
    return Status::success();
  }

  Status checkLocalBytes(const DistTensor &t) {
    int64_t mine = static_cast<int64_t>(t.localBytes()), sum = 0;
    if (mine != t.localRows() * static_cast<int64_t>(RowBytes))
      return fail("localBytes", fmt::format("{} bytes for {} rows of {} bytes",
                                            mine, t.localRows(), RowBytes));
    GNNC_TRY(Comm.allReduce(&mine, &sum, 1, DType::Int64, ReduceOp::Sum));
    if (sum != C.Rows * static_cast<int64_t>(RowBytes))
      return fail("localBytes", fmt::format("the ranks hold {} bytes in all, "
                                            "expected {}",
                                            sum, C.Rows * RowBytes));
    return Status::success();
  }

  /// Compares `n` gathered rows (of `indices`, or rows 0..n-1) with
  /// Expected.
  Status compareRows(const std::string &what, const int64_t *indices, size_t n,
                     const unsigned char *got) const {
    return compareWith(what, indices, n, got, Expected);
  }

  Status compareWith(const std::string &what, const int64_t *indices, size_t n,
                     const unsigned char *got,
                     const std::vector<unsigned char> &expected) const {
    size_t elem = rt::dtypeSize(C.Dtype);
    for (size_t i = 0; i < n; ++i) {
      int64_t row = indices ? indices[i] : static_cast<int64_t>(i);
      const unsigned char *want =
          expected.data() + static_cast<size_t>(row) * RowBytes;
      const unsigned char *have = got + i * RowBytes;
      if (std::memcmp(want, have, RowBytes) == 0)
        continue;
      for (int64_t col = 0; col < Width; ++col) {
        size_t at = static_cast<size_t>(col) * elem;
        if (std::memcmp(want + at, have + at, elem) != 0)
          return fail(what,
                      fmt::format("position {} (row {}) column {}: got "
                                  "{}, expected {}",
                                  i, row, col, showValue(C.Dtype, have + at),
                                  showValue(C.Dtype, want + at)));
      }
    }
    return Status::success();
  }

  Status checkAllRows(DistTensor &t, const std::vector<unsigned char> &expected,
                      const std::string &what) {
    std::vector<int64_t> all(static_cast<size_t>(C.Rows));
    for (int64_t i = 0; i < C.Rows; ++i)
      all[static_cast<size_t>(i)] = i;
    std::vector<unsigned char> got(expected.size());
    GNNC_TRY(t.gather(all.empty() ? nullptr : all.data(), all.size(),
                      got.empty() ? nullptr : got.data()));
    return compareWith(what, all.data(), all.size(), got.data(), expected);
  }

  /// A fixed list with duplicates (mixed into the digest), a random list
  /// per rank and an empty one on every third rank.
  Status checkGathers(DistTensor &t, bool mix) {
    if (C.Rows == 0) {
      GNNC_TRY(t.gather(nullptr, 0, nullptr));
      return Status::success();
    }
    std::vector<int64_t> fixed;
    for (int64_t k = 0; k < 3 * C.Rows + 5; ++k)
      fixed.push_back((k * 11 + 3) % C.Rows);
    fixed.push_back(0);
    fixed.push_back(C.Rows - 1);
    fixed.push_back(0);
    std::vector<unsigned char> got(fixed.size() * RowBytes);
    GNNC_TRY(t.gather(fixed.data(), fixed.size(), got.data()));
    GNNC_TRY(compareRows("gather of a fixed list", fixed.data(), fixed.size(),
                         got.data()));
    if (mix)
      Ctx.mix(got.data(), got.size());

    std::mt19937_64 random(static_cast<uint64_t>(Comm.rank()) * 977 +
                           Index * 31 + 5);
    size_t n = Comm.rank() % 3 == 2 ? 0 : 1 + random() % 40;
    std::vector<int64_t> picks(n);
    for (int64_t &p : picks)
      p = static_cast<int64_t>(random() % static_cast<uint64_t>(C.Rows));
    got.assign(n * RowBytes, 0xee);
    GNNC_TRY(t.gather(n ? picks.data() : nullptr, n, n ? got.data() : nullptr));
    return compareRows("gather of a random list", picks.data(), n, got.data());
  }

  Status checkLocalView(DistTensor &t) {
    const auto *local = static_cast<const unsigned char *>(
        static_cast<const DistTensor &>(t).localData());
    std::vector<int64_t> mine;
    for (int64_t i = 0; i < t.localRows(); ++i)
      mine.push_back(t.localRowBegin() + i);
    if (mine.empty())
      return Status::success();
    return compareRows("local view", mine.data(), mine.size(), local);
  }

  /// storeNpy against rt::writeNpy of the reference, byte for byte, and
  /// loadNpy of the stored file into a tensor of another partition.
  Status checkFiles(DistTensor &t, const TensorOptions &options) {
    // The tensors of a communicator split by node write one file per node
    // (the folder is shared by every node); the reference file is per world
    // rank.
    std::string node =
        &Comm == &Ctx.Comm ? "" : fmt::format("-node{}", Ctx.Comm.nodeIndex());
    std::string path = fmt::format("{}/tensor-{}-{}{}.npy", Ctx.TempDir,
                                   memoryTypeName(Type), Index, node);
    std::string refPath =
        fmt::format("{}/reference-{}-{}-rank{}.npy", Ctx.TempDir,
                    memoryTypeName(Type), Index, Ctx.Comm.rank());
    GNNC_TRY(t.storeNpy(path));
    rt::NpyArray ref;
    ref.dtype = C.Dtype;
    ref.shape = C.Cols == 0 ? std::vector<int64_t>{C.Rows}
                            : std::vector<int64_t>{C.Rows, C.Cols};
    ref.bytes = Expected;
    GNNC_TRY(rt::writeNpy(refPath, ref));
    std::string stored = readWholeFile(path);
    std::string expected = readWholeFile(refPath);
    std::remove(refPath.c_str());
    if (stored != expected)
      return fail("storeNpy",
                  fmt::format("{} holds {} bytes that differ from "
                              "writeNpy's {} bytes",
                              path, stored.size(), expected.size()));
    Ctx.mix(stored.data(), stored.size());

    TensorOptions other = options;
    other.RowsPerRank =
        rowsPerRank(C.Part == Layout::Block ? Layout::ZeroRows : Layout::Block,
                    C.Rows, Comm.size());
    std::unique_ptr<DistTensor> loaded;
    GNNC_TRY(createTensor(Comm, C.Rows, C.Cols, C.Dtype, other, loaded));
    GNNC_TRY(loaded->loadNpy(path));
    GNNC_TRY(checkAllRows(*loaded, Expected, "after loadNpy"));
    GNNC_TRY(checkLocalView(*loaded));
    GNNC_TRY(Comm.barrier());
    if (Comm.rank() == 0)
      std::remove(path.c_str());
    return Status::success();
  }

  CheckContext &Ctx;
  Communicator &Comm;
  MemoryType Type;
  Case C;
  size_t Index;
  int64_t Width;
  size_t RowBytes;
  std::string Label;
  std::vector<unsigned char> Expected;
};

/// Out-of-range indices: the rank that passes one names it and its
/// position, every other rank names that rank.
Status checkOutOfRange(Communicator &comm, MemoryType type) {
  std::string label =
      fmt::format("checkTensors: {} out of range (rank {} of "
                  "{})",
                  memoryTypeName(type), comm.rank(), comm.size());
  TensorOptions options;
  options.Type = type;
  options.Name = "features";
  std::unique_ptr<DistTensor> t;
  GNNC_TRY(createTensor(comm, 8, 2, DType::Float32, options, t));
  int culprit = comm.size() - 1;
  for (int64_t bad : {int64_t{8}, int64_t{-1}}) {
    for (bool scatter : {false, true}) {
      std::vector<int64_t> indices = {1, 0, 3};
      if (comm.rank() == culprit)
        indices[1] = bad;
      std::vector<float> rows(indices.size() * 2, 1.0f);
      Status s = scatter
                     ? t->scatter(indices.data(), indices.size(), rows.data())
                     : t->gather(indices.data(), indices.size(), rows.data());
      std::string expected = fmt::format("features: {}: index {} at position "
                                         "1 is out of range [0, 8)",
                                         scatter ? "scatter" : "gather", bad);
      if (comm.rank() != culprit)
        expected += fmt::format(" (on rank {})", culprit);
      if (s.ok())
        return Status::error(
            fmt::format("{}: no error for index {}", label, bad));
      if (s.message() != expected)
        return Status::error(fmt::format("{}: error '{}', expected '{}'", label,
                                         s.message(), expected));
    }
  }
  // The tensor still works after the errors.
  std::vector<int64_t> indices = {7, 0};
  std::vector<float> rows(4, -1.0f);
  GNNC_TRY(t->gather(indices.data(), 2, rows.data()));
  for (float v : rows)
    if (v != 0.0f)
      return Status::error(label + ": a failed scatter wrote rows");
  return Status::success();
}

/// loadDatasetArray of Cora's features and labels against rt::loadDataset.
Status checkDataset(CheckContext &ctx, Communicator &comm, MemoryType type,
                    const rt::Dataset &ds) {
  std::string path = std::string(GNNC_SOURCE_DIR) + "/runtime/data/cora.gnnd";
  std::string label =
      fmt::format("checkTensors: {} loadDatasetArray (rank {} "
                  "of {})",
                  memoryTypeName(type), comm.rank(), comm.size());
  TensorOptions options;
  options.Type = type;
  options.Name = "cora";
  std::unique_ptr<DistTensor> x, y;
  GNNC_TRY(createTensor(comm, ds.NumNodes, ds.NumFeatures, DType::Float32,
                        options, x));
  GNNC_TRY(x->loadDatasetArray(path, "features"));
  options.RowsPerRank = rowsPerRank(Layout::Uneven, ds.NumNodes, comm.size());
  GNNC_TRY(createTensor(comm, ds.NumNodes, 0, DType::Int64, options, y));
  GNNC_TRY(y->loadDatasetArray(path, "labels"));

  // Rank r gathers the rows v with v % size == r, so that the ranks check
  // every row together, and a fixed list that goes into the digest.
  std::vector<int64_t> rows;
  for (int64_t v = comm.rank(); v < ds.NumNodes; v += comm.size())
    rows.push_back(v);
  std::vector<int64_t> fixed = {0, 1, 2707, 1000, 5, 1000};
  rows.insert(rows.end(), fixed.begin(), fixed.end());
  size_t f = static_cast<size_t>(ds.NumFeatures);
  std::vector<float> features(rows.size() * f);
  std::vector<int64_t> labels(rows.size());
  GNNC_TRY(x->gather(rows.data(), rows.size(), features.data()));
  GNNC_TRY(y->gather(rows.data(), rows.size(), labels.data()));
  for (size_t i = 0; i < rows.size(); ++i) {
    size_t v = static_cast<size_t>(rows[i]);
    if (labels[i] != ds.Y[v])
      return Status::error(fmt::format("{}: node {}: label {}, expected {}",
                                       label, v, labels[i], ds.Y[v]));
    if (std::memcmp(features.data() + i * f, ds.X.data() + v * f,
                    f * sizeof(float)) != 0)
      return Status::error(
          fmt::format("{}: node {}: the features differ", label, v));
  }
  size_t first = rows.size() - fixed.size();
  ctx.mix(features.data() + first * f, fixed.size() * f * sizeof(float));
  ctx.mix(labels.data() + first, fixed.size() * sizeof(int64_t));

  // A dtype or shape that does not match is an error on every rank.
  std::unique_ptr<DistTensor> wrong;
  GNNC_TRY(createTensor(comm, ds.NumNodes, 0, DType::Int32, options, wrong));
  Status s = wrong->loadDatasetArray(path, "labels");
  std::string expected = path + ": labels: dtype int64, but the tensor holds "
                                "int32";
  if (s.ok() || s.message().find(expected) == std::string::npos)
    return Status::error(fmt::format("{}: error '{}', expected one with '{}'",
                                     label, s.message(), expected));
  return Status::success();
}

} // namespace

Status gnnc::dist::checks::checkTensors(CheckContext &ctx) {
  Communicator &world = ctx.Comm;
  std::unique_ptr<Communicator> node;
  if (world.numNodes() > 1) {
    GNNC_TRY(world.splitByNode(node));
    if (!node)
      return Status::error("checkTensors: splitByNode gave no communicator");
    // The spanning communicator is refused for the shared types.
    for (MemoryType type : {MemoryType::Continuous, MemoryType::Chunked}) {
      TensorOptions options;
      options.Type = type;
      std::unique_ptr<DistTensor> t;
      Status s = createTensor(world, 10, 2, DType::Float32, options, t);
      if (s.ok() || s.message().find("splitByNode") == std::string::npos)
        return Status::error(fmt::format(
            "checkTensors: a {} tensor over {} nodes: '{}', expected a "
            "refusal naming splitByNode",
            memoryTypeName(type), world.numNodes(), s.message()));
    }
  }
  Communicator &shared = node ? *node : world;

  rt::Dataset cora;
  GNNC_TRY(rt::loadDataset(
      std::string(GNNC_SOURCE_DIR) + "/runtime/data/cora.gnnd", cora));
  for (MemoryType type :
       {MemoryType::Continuous, MemoryType::Chunked, MemoryType::Distributed}) {
    Communicator &comm = type == MemoryType::Distributed ? world : shared;
    for (size_t i = 0; i < std::size(kCases); ++i)
      GNNC_TRY(TensorCase(ctx, comm, type, kCases[i], i).run());
    GNNC_TRY(checkOutOfRange(comm, type));
    GNNC_TRY(checkDataset(ctx, comm, type, cora));
  }
  return Status::success();
}
