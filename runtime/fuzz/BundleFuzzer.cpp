//===- BundleFuzzer.cpp - libFuzzer harness for .gnnd dataset bundles -----===//
//
// Part of gnnc. The input is one mode byte and a .gnnd bundle. A mutated
// bundle almost never has a valid checksum, so the harness repairs the
// framing first, as the mode byte says:
//
//   bit 0: the payload size field (offset 40) is set to what the file holds;
//   bit 1: the FNV-1a 64 checksum at the end is recomputed;
//
// so that mutations reach the section decoder. loadDataset must return an
// error or a dataset that satisfies every invariant of rt::Dataset.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "gnnc/runtime/Dataset.h"

#include <cstring>
#include <vector>

using namespace gnnc::rt;
using gnnc::rt::fuzz::require;

namespace {

constexpr size_t kHeaderSize = 48, kChecksumSize = 8;

uint64_t fnv1a64(const uint8_t *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ data[i]) * 0x100000001b3ull;
  return hash;
}

void checkDataset(const Dataset &ds, size_t fileSize) {
  int64_t n = ds.NumNodes, f = ds.NumFeatures, c = ds.NumClasses;
  require(n >= 0 && f >= 0 && c >= 0 && c <= 256, "sizes out of range");
  require(c > 0 || n == 0, "no classes for some nodes");
  require(ds.X.size() == static_cast<size_t>(n * f), "feature count");
  require(ds.X.size() * sizeof(float) <= (uint64_t{1} << 16) * fileSize,
          "features larger than the file allows");
  for (float x : ds.X)
    require(x == 0.0f || x == 1.0f, "a feature other than 0 and 1");
  require(ds.EdgeSrc.size() == ds.EdgeDst.size(), "edge arrays differ");
  for (const std::vector<int64_t> *ends : {&ds.EdgeSrc, &ds.EdgeDst})
    for (int64_t v : *ends)
      require(v >= 0 && v < n, "edge end out of range");
  require(ds.Y.size() == static_cast<size_t>(n), "label count");
  for (int64_t y : ds.Y)
    require(y >= 0 && y < c, "label out of range");
  for (const std::vector<uint8_t> *mask :
       {&ds.TrainMask, &ds.ValMask, &ds.TestMask}) {
    require(mask->size() == static_cast<size_t>(n), "mask size");
    for (uint8_t m : *mask)
      require(m <= 1, "mask value above 1");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  unsigned mode = data[0];
  std::vector<uint8_t> file(data + 1, data + size);
  if (file.size() >= kHeaderSize + kChecksumSize) {
    if (mode & 1) {
      uint64_t payload = file.size() - kHeaderSize - kChecksumSize;
      std::memcpy(&file[40], &payload, sizeof(payload));
    }
    if (mode & 2) {
      size_t covered = file.size() - kChecksumSize;
      uint64_t sum = fnv1a64(file.data(), covered);
      std::memcpy(&file[covered], &sum, sizeof(sum));
    }
  }
  std::string path = fuzz::tempPath("input.gnnd");
  fuzz::writeBytes(path, file.data(), file.size());

  Dataset ds;
  Status s = loadDataset(path, ds);
  if (!s.ok()) {
    require(s.message().rfind(path + ": ", 0) == 0,
            "an error that does not name the file: " + s.message());
    require(ds.NumNodes == 0 && ds.X.empty(), "output written on error");
    return 0;
  }
  checkDataset(ds, file.size());
  return 0;
}
