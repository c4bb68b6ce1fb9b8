//===- CommInternal.h - What the communicator backends share ----*- C++ -*-===//
//
// Part of gnnc. Internal to gnnc_dist: defined in Communicator.cpp, used by
// the threads and MPI backends (and by the NCCL one), so that their sums
// agree bit for bit and their messages read alike.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIST_LIB_COMMINTERNAL_H
#define GNNC_DIST_LIB_COMMINTERNAL_H

#include "gnnc/dist/Communicator.h"

#include <string>
#include <vector>

namespace gnnc::dist::detail {

/// Reduces `inputs` (one buffer of `count` elements per rank, indexed by
/// rank) into `out` element by element, in rank order:
/// ((in[0] op in[1]) op in[2]) ..., so every backend that calls it
/// computes the same bits on every rank. Integer sums wrap around. `out`
/// may be one of the inputs.
void reduceInRankOrder(const std::vector<const void *> &inputs, void *out,
                       size_t count, DType dtype, ReduceOp op);
/// "rank 3" or "ranks 1, 3".
std::string commRankList(const std::vector<int> &ranks);
/// The host name of this process ("localhost" if it has none).
std::string commHostName();

/// Makes a per-rank outcome collective: every rank learns whether any rank
/// failed. Returns success when all succeeded; this rank's own error when
/// it failed; otherwise the error of the lowest failing rank r, with
/// " (on rank r)" appended. A failing collective is returned as it is.
Status agreeStatus(Communicator &comm, const Status &local);

} // namespace gnnc::dist::detail

#endif // GNNC_DIST_LIB_COMMINTERNAL_H
