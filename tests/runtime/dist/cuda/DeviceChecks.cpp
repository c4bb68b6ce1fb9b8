//===- DeviceChecks.cpp - Device tensor checks on any communicator --------===//
//
// Part of gnnc's tests. See DeviceChecks.h.
//
//===----------------------------------------------------------------------===//

#include "DeviceChecks.h"
#include "DeviceTestUtil.h"

#include "gnnc/runtime/Npy.h"

#include <fmt/format.h>

#include <numeric>

namespace gnnc::dist::devtest {
namespace {

template <class T>
Status checkTyped(Communicator &comm, const DeviceCase &c,
                  const std::string &tempDir) {
  const DType dtype = rt::DTypeOf<T>::value;
  const int64_t rows = c.Rows, width = c.Cols == 0 ? 1 : c.Cols;
  const int me = comm.rank(), size = comm.size();
  const std::string label =
      fmt::format("{} {}x{} {} on {} {} rank(s)", memoryTypeName(c.Type), rows,
                  c.Cols, rt::dtypeName(dtype), size, comm.backend());
  std::string mismatch;
  auto note = [&](const Status &st) {
    if (!st.ok() && mismatch.empty())
      mismatch = st.message();
  };

  TensorOptions options;
  options.Type = c.Type;
  options.Location = MemoryLocation::Device;
  options.RowsPerRank = c.RowsPerRank;
  options.Name = "t";
  std::unique_ptr<DistTensor> t;
  GNNC_TRY(createDeviceTensor(comm, rows, c.Cols, dtype, options, t)
               .withPrefix(label));
  if (t->rows() != rows || t->cols() != width ||
      t->dims() != (c.Cols == 0 ? 1 : 2) ||
      t->location() != MemoryLocation::Device)
    note(Status::error(fmt::format("{}: shape {}x{} ({}-D)", label, t->rows(),
                                   t->cols(), t->dims())));

  std::vector<T> ref(static_cast<size_t>(rows * width), T());
  auto setRef = [&](int64_t row, int version) {
    for (int64_t col = 0; col < width; ++col)
      ref[row * width + col] = referenceValue<T>(row, col, version);
  };
  auto gatherRows = [&](const std::vector<int64_t> &indices,
                        std::vector<T> &out) -> Status {
    DeviceArray<int64_t> dIndices;
    DeviceArray<T> dOut;
    GNNC_TRY(dIndices.upload(indices));
    GNNC_TRY(dOut.allocate(indices.size() * width));
    GNNC_TRY(t->gather(dIndices.get(), indices.size(), dOut.get()));
    return dOut.download(out);
  };
  auto scatterRows = [&](const std::vector<int64_t> &indices,
                         const std::vector<T> &values) -> Status {
    DeviceArray<int64_t> dIndices;
    DeviceArray<T> dValues;
    GNNC_TRY(dIndices.upload(indices));
    GNNC_TRY(dValues.upload(values));
    return t->scatter(dIndices.get(), indices.size(), dValues.get());
  };
  std::vector<int64_t> every(static_cast<size_t>(rows));
  std::iota(every.begin(), every.end(), 0);
  std::vector<T> got;

  // Elements start zeroed.
  GNNC_TRY(gatherRows(every, got));
  note(compareValues(label + ": a new tensor", got, ref));

  // Every rank writes its share of the rows (i % size == rank), in
  // descending order; every rank then reads all of them.
  std::vector<int64_t> mine;
  for (int64_t i = rows - 1; i >= 0; --i)
    if (i % size == me)
      mine.push_back(i);
  for (int64_t i = 0; i < rows; ++i)
    setRef(i, 0);
  GNNC_TRY(scatterRows(mine, pickRows(ref, width, mine)));
  GNNC_TRY(gatherRows(every, got));
  note(compareValues(label + ": after every rank's scatter", got, ref));

  // Duplicates, a different list on every rank, and an empty gather.
  if (rows > 0) {
    const int64_t spread = (me * 7 + 3) % rows;
    std::vector<int64_t> dup = {rows - 1, 0,        spread, 0,
                                rows / 2, rows - 1, spread};
    GNNC_TRY(gatherRows(dup, got));
    note(compareValues(label + ": gather with duplicates", got,
                       pickRows(ref, width, dup)));
  }
  GNNC_TRY(t->gather(nullptr, 0, nullptr).withPrefix(label + ": empty gather"));

  // The local view holds this rank's rows.
  std::vector<T> local(static_cast<size_t>(t->localRows() * width));
  GNNC_TRY(
      DeviceArray<T>::copyToHost(t->localData(), local.size(), local.data()));
  std::vector<int64_t> localRows(static_cast<size_t>(t->localRows()));
  std::iota(localRows.begin(), localRows.end(), t->localRowBegin());
  note(compareValues(label + ": local view", local,
                     pickRows(ref, width, localRows)));

  // Continuous tensors address every row in one range.
  void *global = t->globalData();
  if (c.Type == MemoryType::Continuous && rows > 0) {
    if (!global) {
      note(Status::error(label + ": no global range"));
    } else {
      std::vector<T> whole(ref.size());
      GNNC_TRY(DeviceArray<T>::copyToHost(global, whole.size(), whole.data()));
      note(compareValues(label + ": global range", whole, ref));
    }
  } else if (c.Type != MemoryType::Continuous && global) {
    note(Status::error(label + ": a global range for a non-continuous type"));
  }

  // Bytes held: the own rows, or a share of the continuous range.
  const size_t own = static_cast<size_t>(t->localRows()) * t->rowBytes();
  const size_t held = t->localBytes();
  if (c.Type == MemoryType::Continuous ? held < own : held != own)
    note(Status::error(fmt::format("{}: localBytes {} for {} bytes of rows",
                                   label, held, own)));

  // Scatter with duplicates: the last occurrence wins.
  if (rows >= 10) {
    std::vector<int64_t> idx;
    std::vector<T> values;
    auto add = [&](int64_t row, int version) {
      idx.push_back(row);
      for (int64_t col = 0; col < width; ++col)
        values.push_back(referenceValue<T>(row, col, version));
    };
    if (me == 0) {
      add(2, 1);
      add(5, 1);
      add(2, 2);
    }
    if (me == size - 1)
      add(9, 1);
    setRef(2, 2);
    setRef(5, 1);
    setRef(9, 1);
    GNNC_TRY(scatterRows(idx, values));
    GNNC_TRY(gatherRows(every, got));
    note(compareValues(label + ": after a scatter with duplicates", got, ref));
  }

  // An index out of range fails the call on every rank, before any write.
  {
    std::vector<int64_t> bad;
    if (me == size - 1)
      bad = {rows > 0 ? rows - 1 : 0, rows + 2};
    else if (rows > 0)
      bad = {0};
    const std::string expected = fmt::format(
        "index {} at position 1 is out of range [0, {})", rows + 2, rows);
    std::vector<T> values(bad.size() * width, referenceValue<T>(0, 0, 9));
    DeviceArray<int64_t> dBad;
    DeviceArray<T> dValues, dOut;
    GNNC_TRY(dBad.upload(bad));
    GNNC_TRY(dValues.upload(values));
    GNNC_TRY(dOut.allocate(values.size()));
    Status g = t->gather(dBad.get(), bad.size(), dOut.get());
    Status s = t->scatter(dBad.get(), bad.size(), dValues.get());
    for (const Status *st : {&g, &s})
      if (st->ok() || st->message().find(expected) == std::string::npos)
        note(Status::error(fmt::format("{}: an out-of-range index gives '{}', "
                                       "expected an error with '{}'",
                                       label, st->message(), expected)));
    GNNC_TRY(gatherRows(every, got));
    note(compareValues(label + ": after a failed scatter", got, ref));
  }

  // .npy files: load every row, store them back.
  if (!tempDir.empty()) {
    const std::string tag =
        fmt::format("{}-{}-{}", memoryTypeName(c.Type), rows, c.Cols);
    const std::string in = tempDir + "/in-" + tag + ".npy";
    const std::string out = tempDir + "/out-" + tag + ".npy";
    for (int64_t i = 0; i < rows; ++i)
      setRef(i, 3);
    rt::NpyArray file;
    file.dtype = dtype;
    file.shape = c.Cols == 0 ? std::vector<int64_t>{rows}
                             : std::vector<int64_t>{rows, c.Cols};
    file.bytes.resize(ref.size() * sizeof(T));
    if (!ref.empty())
      std::memcpy(file.bytes.data(), ref.data(), file.bytes.size());
    Status written = me == 0 ? rt::writeNpy(in, file) : Status();
    GNNC_TRY(comm.barrier());
    GNNC_TRY(written);
    GNNC_TRY(t->loadNpy(in));
    GNNC_TRY(gatherRows(every, got));
    note(compareValues(label + ": after loadNpy", got, ref));
    GNNC_TRY(t->storeNpy(out));
    rt::NpyArray back;
    GNNC_TRY(rt::readNpy(out, back));
    if (back.dtype != dtype || back.shape != file.shape)
      note(Status::error(fmt::format("{}: storeNpy wrote {} {}", label,
                                     rt::dtypeName(back.dtype),
                                     rt::formatShape(back.shape))));
    else if (back.bytes != file.bytes)
      note(Status::error(label + ": storeNpy wrote other values"));
    GNNC_TRY(comm.barrier());
  }

  if (!mismatch.empty())
    return Status::error(mismatch);
  return Status();
}

} // namespace

Status checkDeviceTensor(Communicator &comm, const DeviceCase &c,
                         const std::string &tempDir) {
  if (c.Cols == 0)
    return checkTyped<int64_t>(comm, c, tempDir);
  return checkTyped<float>(comm, c, tempDir);
}

Status checkNcclWorldOfOne(Communicator &nccl) {
  if (std::string(nccl.backend()) != "nccl" || !nccl.deviceBuffers() ||
      nccl.rank() != 0 || nccl.size() != 1)
    return Status::error(fmt::format("a {} communicator, rank {} of {}",
                                     nccl.backend(), nccl.rank(), nccl.size()));
  std::string mismatch;
  auto note = [&](const Status &st) {
    if (!st.ok() && mismatch.empty())
      mismatch = st.message();
  };
  GNNC_TRY(nccl.barrier());

  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 8.0f};
  DeviceArray<float> da, db;
  std::vector<float> got;
  GNNC_TRY(da.upload(a));
  GNNC_TRY(db.allocate(a.size()));
  GNNC_TRY(nccl.broadcast(da.get(), a.size(), DType::Float32, 0));
  GNNC_TRY(da.download(got));
  note(compareValues("broadcast", got, a));
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    GNNC_TRY(nccl.allReduce(da.get(), db.get(), a.size(), DType::Float32, op));
    GNNC_TRY(db.download(got));
    note(compareValues(fmt::format("all-reduce {}", reduceOpName(op)), got, a));
  }
  GNNC_TRY(nccl.allReduce(da.get(), da.get(), a.size(), DType::Float32,
                          ReduceOp::Sum));
  GNNC_TRY(da.download(got));
  note(compareValues("all-reduce in place", got, a));

  // Host buffers are staged through the device.
  std::vector<int64_t> hostIn = {5, -6, 7}, hostOut(3, 0);
  GNNC_TRY(nccl.allReduce(hostIn.data(), hostOut.data(), 3, DType::Int64,
                          ReduceOp::Max));
  note(compareValues("all-reduce of host buffers", hostOut, hostIn));

  size_t counts[1] = {a.size()};
  GNNC_TRY(nccl.allGatherV(da.get(), db.get(), counts, DType::Float32));
  GNNC_TRY(db.download(got));
  note(compareValues("all-gather-v", got, a));
  GNNC_TRY(nccl.allGather(da.get(), db.get(), a.size(), DType::Float32));
  GNNC_TRY(db.download(got));
  note(compareValues("all-gather", got, a));
  GNNC_TRY(nccl.allToAllV(da.get(), counts, db.get(), counts, DType::Float32));
  GNNC_TRY(db.download(got));
  note(compareValues("all-to-all-v", got, a));
  GNNC_TRY(nccl.allToAll(da.get(), db.get(), a.size(), DType::Float32));
  GNNC_TRY(db.download(got));
  note(compareValues("all-to-all", got, a));

  std::unique_ptr<Communicator> sub, none;
  GNNC_TRY(nccl.split(3, 0, sub));
  if (!sub || sub->size() != 1 || std::string(sub->backend()) != "nccl") {
    note(Status::error("split: no one-rank NCCL communicator"));
  } else {
    GNNC_TRY(sub->allReduce(da.get(), db.get(), a.size(), DType::Float32,
                            ReduceOp::Sum));
    GNNC_TRY(db.download(got));
    note(compareValues("all-reduce on the split", got, a));
  }
  GNNC_TRY(nccl.split(-1, 0, none));
  if (none)
    note(Status::error("split with a negative colour gives a communicator"));
  if (!mismatch.empty())
    return Status::error(mismatch);
  return Status();
}

} // namespace gnnc::dist::devtest
