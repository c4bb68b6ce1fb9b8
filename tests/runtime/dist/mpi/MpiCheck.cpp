//===- MpiCheck.cpp - The gnnc_dist checks over MPI processes -------------===//
//
// Part of gnnc's tests. gnnc-dist-mpi-check runs the checks of DistChecks.h
// on the MPI world (launched by mpirun) and prints, on rank 0, one line per
// check:
//
//   check collectives: ok digest 0123456789abcdef
//
// and exits 0; when a check fails it prints every rank's error and every
// rank exits 1. The digests do not depend on the number of ranks or hosts,
// so launches can be compared by their output.
//
//   usage: gnnc-dist-mpi-check [--only NAME[,NAME...]] TEMPDIR
//
// NAME is collectives, tensors or embeddings (default: all). TEMPDIR is a
// folder every rank can reach under the same path; each check gets a fresh
// subfolder in it.
//
//===----------------------------------------------------------------------===//

#include "DistChecks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

using namespace gnnc;
using namespace gnnc::dist;

namespace {

struct Check {
  const char *Name;
  Status (*Run)(checks::CheckContext &);
};

const Check kChecks[] = {
    {"collectives", checks::checkCollectives},
    {"tensors", checks::checkTensors},
    {"embeddings", checks::checkEmbeddings},
};

int usage(const char *message) {
  std::fprintf(stderr,
               "gnnc-dist-mpi-check: %s\nusage: gnnc-dist-mpi-check [--only "
               "NAME[,NAME...]] TEMPDIR (NAME: collectives, tensors, "
               "embeddings)\n",
               message);
  return 2;
}

/// Gathers every rank's message on every rank (empty: none). False when the
/// communicator cannot (it is broken).
bool gatherMessages(Communicator &comm, const std::string &mine,
                    std::vector<std::string> &all) {
  int64_t length = static_cast<int64_t>(mine.size());
  std::vector<int64_t> lengths(comm.size());
  if (!comm.allGather(&length, lengths.data(), 1, DType::Int64).ok())
    return false;
  std::vector<size_t> counts(comm.size());
  size_t total = 0;
  for (int r = 0; r < comm.size(); ++r)
    total += counts[r] = static_cast<size_t>(lengths[r]);
  std::vector<uint8_t> text(total);
  if (!comm.allGatherV(mine.data(), text.data(), counts.data(), DType::Bool)
           .ok())
    return false;
  all.clear();
  size_t at = 0;
  for (int r = 0; r < comm.size(); ++r) {
    all.emplace_back(reinterpret_cast<const char *>(text.data()) + at,
                     counts[r]);
    at += counts[r];
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> only;
  std::string tempDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) {
      std::string list = argv[++i];
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos)
          comma = list.size();
        only.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else if (tempDir.empty()) {
      tempDir = arg;
    } else {
      return usage("more than one TEMPDIR");
    }
  }
  if (tempDir.empty())
    return usage("no TEMPDIR");
  for (const std::string &name : only) {
    bool known = false;
    for (const Check &check : kChecks)
      known = known || name == check.Name;
    if (!known)
      return usage(("unknown check '" + name + "'").c_str());
  }

  CommOptions options;
  Status status = CommOptions::fromEnvironment(options);
  std::unique_ptr<Communicator> world;
  if (status.ok())
    status = createMpiWorld(world, options);
  if (!status.ok()) {
    std::printf("%s\n", status.message().c_str());
    return 1;
  }
  Communicator &comm = *world;

  bool failed = false;
  for (const Check &check : kChecks) {
    if (!only.empty() &&
        std::find(only.begin(), only.end(), check.Name) == only.end())
      continue;
    // A fresh folder for the check, made by rank 0.
    std::string dir = tempDir + "/" + check.Name;
    if (comm.rank() == 0) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      std::filesystem::create_directories(dir, ec);
    }
    Status result = comm.barrier();
    checks::CheckContext ctx(comm, dir);
    if (result.ok())
      result = check.Run(ctx);

    // Every rank's outcome and digest, on rank 0.
    std::string mine = result.ok() ? "" : result.message();
    std::vector<std::string> messages;
    std::vector<uint64_t> digests(comm.size());
    uint64_t digest = ctx.Digest;
    if (!gatherMessages(comm, mine, messages) ||
        !comm.allGather(&digest, digests.data(), 1, DType::Int64).ok()) {
      // The communicator is broken: each rank reports its own error.
      std::printf("rank %d: check %s: %s\n", comm.rank(), check.Name,
                  mine.empty() ? comm.barrier().message().c_str()
                               : mine.c_str());
      std::fflush(stdout);
      return 1;
    }
    bool anyError = false;
    for (const std::string &m : messages)
      anyError = anyError || !m.empty();
    bool digestsAgree = true;
    for (uint64_t d : digests)
      digestsAgree = digestsAgree && d == digests[0];
    if (comm.rank() == 0) {
      if (anyError) {
        for (int r = 0; r < comm.size(); ++r)
          if (!messages[r].empty())
            std::printf("rank %d: check %s: %s\n", r, check.Name,
                        messages[r].c_str());
      } else if (!digestsAgree) {
        for (int r = 0; r < comm.size(); ++r)
          std::printf("rank %d: check %s: digest %016llx\n", r, check.Name,
                      static_cast<unsigned long long>(digests[r]));
        std::printf("check %s: the ranks' digests differ\n", check.Name);
      } else {
        std::printf("check %s: ok digest %016llx\n", check.Name,
                    static_cast<unsigned long long>(digests[0]));
      }
      std::fflush(stdout);
    }
    failed = failed || anyError || !digestsAgree;
  }
  return failed ? 1 : 0;
}
