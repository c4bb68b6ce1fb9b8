/*===- hello.c - Where each MPI rank runs, and a cross-host all-reduce ----===*
 *
 * Part of gnnc's tests. Rank 0 prints one line per rank:
 *
 *   rank R host H netns net:[N] uts uts:[U] shm-sees MASK
 *
 * (the rank's host name, network and UTS namespaces, and the set of ranks
 * whose POSIX shared-memory objects it can open: ranks sharing /dev/shm see
 * each other), then `allreduce ok` when an MPI_Allreduce of a 1 MiB
 * buffer per rank equals the sum computed locally, and exits non-zero
 * otherwise. two-hosts-test.sh checks the lines against the expected
 * placement.
 *
 *===----------------------------------------------------------------------===*/

#define _DEFAULT_SOURCE /* gethostname, readlink */

#include <mpi.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { NameLen = 128, Count = 1 << 18 };

struct Where {
  char Host[NameLen];
  char Net[NameLen];
  char Uts[NameLen];
  unsigned SeesShm;
};

static void readNamespace(const char *path, char *out) {
  ssize_t n = readlink(path, out, NameLen - 1);
  if (n < 0)
    n = 0;
  out[n] = '\0';
}

static void shmName(char *out, size_t size, int job, int rank) {
  snprintf(out, size, "/gnnc-hosts-hello-%d-%d", job, rank);
}

/* The value rank r contributes at index i; exact in double. */
static double contribution(int r, int i) { return (double)(r + 1) * (i % 97); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 32) {
    if (rank == 0)
      fprintf(stderr, "hello: at most 32 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  struct Where me;
  memset(&me, 0, sizeof me);
  if (gethostname(me.Host, NameLen - 1) != 0)
    strcpy(me.Host, "?");
  readNamespace("/proc/self/ns/net", me.Net);
  readNamespace("/proc/self/ns/uts", me.Uts);

  /* Shared memory visibility: every rank creates an object under a name
     unique to this job, then tries to open every other rank's. */
  int job = (int)getpid();
  MPI_Bcast(&job, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char name[64];
  shmName(name, sizeof name, job, rank);
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    fprintf(stderr, "hello: rank %d: shm_open(%s) failed\n", rank, name);
    failed = 1;
  } else {
    close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    shmName(name, sizeof name, job, r);
    int other = shm_open(name, O_RDONLY, 0);
    if (other >= 0) {
      me.SeesShm |= 1u << r;
      close(other);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  shmName(name, sizeof name, job, rank);
  shm_unlink(name);

  struct Where *all = malloc(sizeof(struct Where) * (size_t)size);
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0,
             MPI_COMM_WORLD);

  /* An all-reduce large enough to leave the eager path of the TCP BTL. */
  double *send = malloc(sizeof(double) * Count);
  double *recv = malloc(sizeof(double) * Count);
  for (int i = 0; i < Count; ++i)
    send[i] = contribution(rank, i);
  MPI_Allreduce(send, recv, Count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int wrong = 0;
  for (int i = 0; i < Count; ++i) {
    double expect = 0;
    for (int r = 0; r < size; ++r)
      expect += contribution(r, i);
    if (recv[i] != expect) {
      if (!wrong)
        fprintf(stderr, "hello: rank %d: allreduce[%d] = %g, expected %g\n",
                rank, i, recv[i], expect);
      wrong = 1;
    }
  }
  int anyWrong = 0;
  int mine = wrong || failed;
  MPI_Allreduce(&mine, &anyWrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      printf("rank %d host %s netns %s uts %s shm-sees ", r, all[r].Host,
             all[r].Net, all[r].Uts);
      const char *sep = "";
      for (int q = 0; q < size; ++q)
        if (all[r].SeesShm & (1u << q)) {
          printf("%s%d", sep, q);
          sep = ",";
        }
      printf("\n");
    }
    printf("allreduce %s\n", anyWrong ? "FAILED" : "ok");
    fflush(stdout);
  }
  free(send);
  free(recv);
  free(all);
  MPI_Finalize();
  return anyWrong ? 1 : 0;
}
