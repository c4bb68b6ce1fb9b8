//===- Topology.cpp - gnnc_dist's node fields against the host names -----===//
//
// Part of gnnc's tests. Run under mpirun: every rank compares what the MPI
// communicator of gnnc_dist reports (nodeName, nodeIndex, numNodes,
// localRank, localSize, splitByNode) with a reference computed from the
// host names gathered with plain MPI, and checks an all-reduce over the
// world and over each node's communicator against locally computed sums.
// Rank 0 prints one line per rank,
//
//   rank R node NAME index I of N local L of S
//
// then `topology ok: R ranks on N nodes` (exit 0) or `topology FAILED`
// (exit 1); each rank's mismatches go to stderr.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Communicator.h"

#include <mpi.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using gnnc::dist::Communicator;
using gnnc::dist::ReduceOp;
using gnnc::rt::DType;
using gnnc::rt::Status;

namespace {

constexpr int kNameBytes = 256;

/// What gnnc_dist reports on one rank, gathered to rank 0 for printing.
struct Reported {
  char Node[kNameBytes];
  int32_t NodeIndex, NumNodes, LocalRank, LocalSize;
};

/// The node fields of one rank computed from every rank's host name: nodes
/// numbered in the order of their lowest rank.
struct Expected {
  int NodeIndex = 0, NumNodes = 0, LocalRank = 0, LocalSize = 0;
};

Expected expectedFor(const std::vector<std::string> &hosts, int rank) {
  Expected e;
  std::vector<std::string> nodes;
  for (const std::string &h : hosts) {
    bool seen = false;
    for (const std::string &n : nodes)
      seen = seen || n == h;
    if (!seen)
      nodes.push_back(h);
  }
  e.NumNodes = static_cast<int>(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n] == hosts[static_cast<size_t>(rank)])
      e.NodeIndex = static_cast<int>(n);
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r)
    if (hosts[static_cast<size_t>(r)] == hosts[static_cast<size_t>(rank)]) {
      if (r < rank)
        ++e.LocalRank;
      ++e.LocalSize;
    }
  return e;
}

/// Every comparison on this rank; the first failure is returned.
Status check(Communicator &comm, int worldRank, int worldSize,
             const std::vector<std::string> &hosts, Reported &reported) {
  const std::string &host = hosts[static_cast<size_t>(worldRank)];
  Expected e = expectedFor(hosts, worldRank);
  std::snprintf(reported.Node, kNameBytes, "%s", comm.nodeName().c_str());
  reported.NodeIndex = comm.nodeIndex();
  reported.NumNodes = comm.numNodes();
  reported.LocalRank = comm.localRank();
  reported.LocalSize = comm.localSize();

  auto expectEq = [&](const char *what, auto got, auto want) {
    if (got == want)
      return Status::success();
    return Status::error(fmt::format("rank {} (host {}): {} is {}, expected {}",
                                     worldRank, host, what, got, want));
  };
  GNNC_TRY(
      expectEq("backend", std::string(comm.backend()), std::string("mpi")));
  GNNC_TRY(expectEq("rank()", comm.rank(), worldRank));
  GNNC_TRY(expectEq("size()", comm.size(), worldSize));
  GNNC_TRY(expectEq("nodeName()", comm.nodeName(), host));
  GNNC_TRY(expectEq("nodeIndex()", comm.nodeIndex(), e.NodeIndex));
  GNNC_TRY(expectEq("numNodes()", comm.numNodes(), e.NumNodes));
  GNNC_TRY(expectEq("localRank()", comm.localRank(), e.LocalRank));
  GNNC_TRY(expectEq("localSize()", comm.localSize(), e.LocalSize));

  // sum over ranks of (rank + 1) * (node index + 1), from the host names.
  int64_t want = 0;
  for (int r = 0; r < worldSize; ++r)
    want += (r + 1) * (expectedFor(hosts, r).NodeIndex + 1);
  int64_t mine = (worldRank + 1) * (e.NodeIndex + 1), got = 0;
  GNNC_TRY(comm.allReduce(&mine, &got, 1, DType::Int64, ReduceOp::Sum));
  GNNC_TRY(expectEq("the world all-reduce", got, want));

  std::unique_ptr<Communicator> node;
  GNNC_TRY(comm.splitByNode(node));
  if (!node)
    return Status::error(
        fmt::format("rank {} (host {}): splitByNode gave no communicator",
                    worldRank, host));
  GNNC_TRY(
      expectEq("the node communicator's size()", node->size(), e.LocalSize));
  GNNC_TRY(
      expectEq("the node communicator's rank()", node->rank(), e.LocalRank));
  GNNC_TRY(expectEq("the node communicator's numNodes()", node->numNodes(), 1));
  // The sum of the world ranks on this host, and their maximum.
  int64_t nodeSum = 0, nodeMax = 0;
  for (int r = 0; r < worldSize; ++r)
    if (hosts[static_cast<size_t>(r)] == host) {
      nodeSum += r;
      nodeMax = r;
    }
  int64_t mineRank = worldRank, gotSum = 0, gotMax = 0;
  GNNC_TRY(node->allReduce(&mineRank, &gotSum, 1, DType::Int64, ReduceOp::Sum));
  GNNC_TRY(node->allReduce(&mineRank, &gotMax, 1, DType::Int64, ReduceOp::Max));
  GNNC_TRY(
      expectEq("the node all-reduce (sum of world ranks)", gotSum, nodeSum));
  GNNC_TRY(
      expectEq("the node all-reduce (max of world ranks)", gotMax, nodeMax));
  return comm.barrier();
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int worldRank = 0, worldSize = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);

  char name[kNameBytes] = {};
  if (gethostname(name, kNameBytes - 1) != 0)
    std::snprintf(name, kNameBytes, "?");
  std::vector<char> names(static_cast<size_t>(kNameBytes) *
                          static_cast<size_t>(worldSize));
  MPI_Allgather(name, kNameBytes, MPI_CHAR, names.data(), kNameBytes, MPI_CHAR,
                MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < worldSize; ++r)
    hosts.emplace_back(names.data() + static_cast<size_t>(r) * kNameBytes);

  Reported reported{};
  Status status = Status::success();
  {
    std::unique_ptr<Communicator> comm;
    status = gnnc::dist::createMpiWorld(comm);
    if (status.ok())
      status = check(*comm, worldRank, worldSize, hosts, reported);
  }
  if (!status.ok())
    std::fprintf(stderr, "topology: %s\n", status.message().c_str());

  int failed = status.ok() ? 0 : 1, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::vector<Reported> all(static_cast<size_t>(worldSize));
  MPI_Gather(&reported, sizeof(Reported), MPI_BYTE, all.data(),
             sizeof(Reported), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (worldRank == 0) {
    for (int r = 0; r < worldSize; ++r) {
      const Reported &p = all[static_cast<size_t>(r)];
      std::printf("rank %d node %s index %d of %d local %d of %d\n", r, p.Node,
                  p.NodeIndex, p.NumNodes, p.LocalRank, p.LocalSize);
    }
    if (anyFailed)
      std::printf("topology FAILED\n");
    else
      std::printf("topology ok: %d ranks on %d nodes\n", worldSize,
                  all[0].NumNodes);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return anyFailed ? 1 : 0;
}
