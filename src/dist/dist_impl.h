/* dist_impl.h — private state of struct pit_dist (the `impl` pointer).
 *
 * Invariants: impl is NULL when no MPI is in use (size 1, no launcher); then
 * every collective is a local no-op. With MPI, `grad` carries only the gradient
 * buckets and the timing exchange (started in the same order on every rank:
 * buckets from last to first, the timing buffer last), `ctl` every blocking
 * collective, so the two streams never interleave on one communicator.
 * `wait_acc` is the time blocked in MPI since the last timing send.
 * Waiting: Open MPI completes a blocking call by polling, which costs a whole
 * CPU while a rank waits; with PIT_DIST_WAIT=sleep (sleep_ns > 0: a rank on an
 * emulated node whose CPU quota must pay only for its work, not for waiting
 * on the slowest rank) the gradient reduction, the control allreduce and
 * bcast (what runs every step) complete by a loop of MPI_Testall and
 * nanosleeps (pit_dist_waitall), the blocking ones through their nonblocking
 * forms; start-up and the rare allgather and barrier still poll.
 */
#ifndef PIT_DIST_IMPL_H
#define PIT_DIST_IMPL_H

#include <mpi.h>

#include "pitstop/dist.h"

struct pit_dist_impl {
  MPI_Comm grad;           /* gradient buckets + timings (nonblocking) */
  MPI_Comm ctl;            /* bcast, barrier, small collectives (blocking) */
  size_t bucket_elems;     /* floats per bucket (PIT_DIST_BUCKET_MB, default 4 MiB) */
  char *hosts;             /* size x sizeof host: every rank's host name, by rank */
  /* reduction in flight (between grads_begin and grads_end) */
  int active;
  float *grads;
  size_t n;
  size_t nbuckets;
  size_t *ready;           /* ready floats per bucket */
  MPI_Request *req;        /* nbuckets + 1 (timings) */
  size_t readies;          /* grads_ready calls in this reduction */
  size_t next;             /* buckets >= next have been started (start order: last first) */
  size_t cap, capreq;      /* allocated buckets of ready, and of req */
  double *tbuf;            /* 2*size doubles: [compute_0..compute_{s-1}, wait_0..wait_{s-1}] */
  double wait_acc;         /* blocked in MPI since the previous timing send */
  double wait_prev;        /* this rank's wait of the previous step (sent with the next) */
  double wait_last;        /* this rank's wait of the step that just ended */
  long sleep_ns;           /* 0: MPI's own (polling) waits; > 0: test, then sleep this long (PIT_DIST_WAIT) */
};

/* Completes req[0..n): MPI_Waitall, or the test-and-sleep loop when
 * im->sleep_ns > 0. Returns the MPI code. */
int pit_dist_waitall(const struct pit_dist_impl *im, int n, MPI_Request *req);

/* MPI return code rc of `what` → pit_err (PIT_ELIB) naming the call, rank and host. */
int pit_dist_mpi_err(struct pit_dist *d, int rc, const char *what, struct pit_err *e);

#endif
