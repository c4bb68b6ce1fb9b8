//===- DistChecks.h - gnnc_dist checks shared by every launcher -*- C++ -*-===//
//
// Part of gnnc's tests. Each check runs collectively on a communicator,
// computes a single-process reference on every rank (the same deterministic
// inputs, evaluated without communication) and compares every distributed
// result with it, returning an error that names the first mismatch. The
// threads suite (gnnc-dist-tests) runs them at 1, 2, 3, 4 and 7 ranks; the
// MPI program (mpi/) runs them over `mpirun -np 4`, on one host and on two
// network-namespace hosts, whose result digests must agree.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_DIST_CHECKS_H
#define GNNC_TESTS_DIST_CHECKS_H

#include "gnnc/dist/Communicator.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gnnc::dist::checks {

/// What a check runs on, and what it leaves for the launcher to compare.
struct CheckContext {
  explicit CheckContext(Communicator &comm, std::string tempDir)
      : Comm(comm), TempDir(std::move(tempDir)) {}
  Communicator &Comm;
  /// A folder every rank can read and write (files of load/store checks);
  /// the same path on every rank.
  std::string TempDir;
  /// FNV-1a over every result a check verified, in a rank-count independent
  /// order (only values that do not depend on the partition are mixed in),
  /// so that launches with different rank counts or hosts can be compared.
  uint64_t Digest = 14695981039346656037ull;
  void mix(const void *data, size_t bytes) {
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < bytes; ++i)
      Digest = (Digest ^ p[i]) * 1099511628211ull;
  }
};

/// Every collective (barrier, broadcast from every root, all-reduce with
/// each op and dtype, all-gather(v), all-to-all(v) with uneven and zero
/// counts, split with colours, keys and a negative colour, splitByNode)
/// against values computed locally.
Status checkCollectives(CheckContext &ctx);

/// Every memory type x every operation (gather with duplicates and empty
/// index lists, scatter, local view, loadNpy/storeNpy, loadDatasetArray,
/// localBytes) on 1-D and 2-D tensors of several dtypes, with block,
/// uneven and zero-row partitions, and the out-of-range index error.
/// Continuous and chunked run on the communicator split by node when the
/// communicator spans nodes (and must refuse the spanning one).
Status checkTensors(CheckContext &ctx);

/// Embeddings: every optimizer against its dense formula applied to the
/// touched rows, over several steps with duplicate indices spread over
/// ranks; gathers through each cache policy return the current table.
Status checkEmbeddings(CheckContext &ctx);

} // namespace gnnc::dist::checks

#endif // GNNC_TESTS_DIST_CHECKS_H
