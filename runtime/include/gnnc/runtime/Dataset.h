//===- Dataset.h - Node-classification datasets -----------------*- C++ -*-===//
//
// Part of gnnc. A Dataset is one graph with node features, one class label
// per node and the train / validation / test split, as in the Planetoid
// benchmarks (Cora, Citeseer). It loads from either
//
//   * a bundle: one compact, checksummed `.gnnd` file (Cora and Citeseer ship
//     in runtime/data/; the format is specified in docs/runtime.md and
//     written by tools/pack_datasets.py), or
//   * a directory in the layout of shared/datasets: edge_index.npy (int64
//     [2, E]), x.npy (float32 or float64 [N, F], read with
//     readNpyAsFloat32), y.npy (int64 [N]) and train_mask.npy,
//     val_mask.npy, test_mask.npy (bool [N]).
//
// Everything is validated while loading (sizes, dtypes, index ranges,
// labels, NaN and infinite features, the bundle's checksum and that its
// sizes fit the file); a bad file gives an error naming the file and the
// problem, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_DATASET_H
#define GNNC_RUNTIME_DATASET_H

#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gnnc::rt {

/// A node-classification dataset held in memory.
struct Dataset {
  int64_t NumNodes = 0;
  int64_t NumFeatures = 0;
  /// Number of classes; every label lies in [0, NumClasses).
  int64_t NumClasses = 0;
  /// Edge e goes from EdgeSrc[e] to EdgeDst[e] (both in [0, NumNodes)), in
  /// the order of the file. Pass them to Graph::fromEdgeIndex.
  std::vector<int64_t> EdgeSrc, EdgeDst;
  /// Node features, dense and row-major: NumNodes * NumFeatures floats.
  std::vector<float> X;
  /// Class of each node (NumNodes entries).
  std::vector<int64_t> Y;
  /// The split: 1 where the node belongs to the set, else 0 (NumNodes
  /// entries each).
  std::vector<uint8_t> TrainMask, ValMask, TestMask;

  int64_t numEdges() const { return static_cast<int64_t>(EdgeSrc.size()); }
};

/// How loadDataset and findDataset treat what they read.
struct DatasetOptions {
  /// Accept NaN and infinite features (in a directory's x.npy; a bundle
  /// holds only 0 and 1). By default the first one is an error naming it.
  bool AllowNonFinite = false;
};

/// Loads `path`, a `.gnnd` bundle file or a directory of .npy files (see
/// the file comment). For a directory, NumClasses is 1 + the largest label
/// (0 when there are no nodes). `out` is only written on success.
Status loadDataset(const std::string &path, Dataset &out,
                   const DatasetOptions &options = {});

/// The folder searched by findDataset: the environment variable
/// GNNC_DATA_DIR when it is set and not empty, else the folder compiled into
/// the runtime (defaultDataDir()).
std::string dataDir();

/// The folder compiled into the runtime: the CMake cache variable
/// GNNC_DATA_DIR, by default the source tree's runtime/data.
std::string defaultDataDir();

/// Loads the dataset called `name` ("cora", "citeseer") from dataDir():
/// the bundle `<dir>/<name>.gnnd` if it exists, else the .npy directory
/// `<dir>/<name>/`. A name holds letters, digits, '_', '-' and '.' only and
/// does not start with '.'.
Status findDataset(std::string_view name, Dataset &out,
                   const DatasetOptions &options = {});

//===----------------------------------------------------------------------===//
// Reading parts of a dataset
//===----------------------------------------------------------------------===//

/// The element type and shape of one array of a dataset. The arrays are
/// "features" (float32 [N, F]), "labels" (int64 [N]) and "train_mask",
/// "val_mask", "test_mask" (bool [N]), the members of Dataset.
struct DatasetArrayInfo {
  DType Dtype = DType::Float32;
  std::vector<int64_t> Shape;
};

/// Finds the dtype and shape of array `array` of the bundle or .npy folder
/// `path` from the bundle header or the .npy headers alone (nothing else is
/// read). An unknown array name is an error listing the names.
Status datasetArrayInfo(const std::string &path, const std::string &array,
                        DatasetArrayInfo &out);

/// Reads rows [rowBegin, rowBegin + rowCount) of array `array` (as
/// datasetArrayInfo describes it) into `out`: rowCount * F floats for
/// "features", rowCount int64 labels or rowCount bool bytes. Only what the
/// slice needs is read:
///
///   * a bundle: its header is checked as loadDataset checks it (magic,
///     version, flags, the exact file size, that the sections fit), but not
///     its checksum, which covers the whole file; the feature section is
///     decoded from its start up to the end of the slice, with every check
///     of loadDataset (column counts and ranges), as are the slice's labels
///     (below C) and mask bits (and a mask's padding bits when the slice
///     holds the last node). Edges are not read.
///   * a folder: the .npy headers are validated as readNpyRows does, x.npy
///     (float32 or float64, converted as readNpyAsFloat32 converts) sets N,
///     the other arrays must have N rows; the slice's features must be
///     finite (unless options.AllowNonFinite) and its labels non-negative.
///
/// `out` may be partly written on error.
Status readDatasetRows(const std::string &path, const std::string &array,
                       int64_t rowBegin, int64_t rowCount, void *out,
                       const DatasetOptions &options = {});

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_DATASET_H
