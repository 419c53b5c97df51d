/* pitstop/dist.h — data parallelism over MPI (Open MPI): pitstop never moves
 * bytes itself.
 *
 * One struct pit_dist per process. With no MPI launcher (or world size 1) every
 * call is a cheap local no-op, so `pitstop train` runs the same code alone.
 * Gradient reduction is a SUM: each rank scales its local loss gradient by
 * 1/global_batch (see pit_loss_* denom), so the sum is the global-mean gradient
 * whatever the shares. Per-rank timings ride on the reduction (no extra round
 * trip): every rank learns every rank's compute_s and wait_s of the step.
 */
#ifndef PITSTOP_DIST_H
#define PITSTOP_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "pitstop/util.h"

struct pit_dist {
  int rank, size;            /* world */
  int local_rank, local_size;/* on this node */
  int node, nodes;           /* node index of this rank, number of distinct nodes */
  char host[256];            /* this rank's host name */
  int initialized_mpi;       /* we called MPI_Init (and must finalize) */
  int shrunk;                /* the world shrank in place (pit_dist_shrink): no MPI_Finalize at the end */
  double init_wait_s;        /* time spent in the start-up barrier (rendezvous) */
  void *impl;                /* private (buckets, requests, scratch) */
};

/* Initialises MPI if launched under mpirun (or always if force), measures the
 * rendezvous wait, learns hosts and node indexes. */
int pit_dist_init(struct pit_dist *d, int *argc, char ***argv, struct pit_err *e);
void pit_dist_release(struct pit_dist *d);   /* finalizes MPI if we initialised it */

/* Rank 0's buffer to every rank (initial parameters, optimizer state on resume). */
int pit_dist_bcast(struct pit_dist *d, void *buf, size_t bytes, struct pit_err *e);

/* Sum-allreduces grads (n floats) in place, in buckets, and exchanges timings:
 * compute_s is this rank's compute time of the step; on return all_compute[r]
 * and all_wait[r] (size entries each) hold every rank's compute and wait time
 * (wait = time this rank spent blocked in the reduction). */
int pit_dist_allreduce_grads(struct pit_dist *d, float *grads, size_t n, double compute_s,
                             double *all_compute, double *all_wait, struct pit_err *e);

/* Overlap with the backward pass: after pit_dist_grads_begin, the trainer calls
 * pit_dist_grads_ready(d, off, len) as each contiguous range of the gradient
 * array becomes final (backward runs last layer first), and pit_dist_grads_end
 * to complete every reduction and exchange timings as above. A backend that
 * does not overlap may reduce everything in _end. */
int pit_dist_grads_begin(struct pit_dist *d, float *grads, size_t n, struct pit_err *e);
int pit_dist_grads_ready(struct pit_dist *d, size_t off, size_t len, struct pit_err *e);
int pit_dist_grads_end(struct pit_dist *d, double compute_s, double *all_compute,
                       double *all_wait, struct pit_err *e);

/* Small collectives for control decisions (all ranks call). */
int pit_dist_allreduce_f64(struct pit_dist *d, double *v, int n, int op_max, struct pit_err *e);
int pit_dist_allgather_f64(struct pit_dist *d, double v, double *all, struct pit_err *e);
int pit_dist_barrier(struct pit_dist *d, struct pit_err *e);
/* 64-bit checksum of buf on every rank; returns 1 if all ranks agree. */
int pit_dist_same(struct pit_dist *d, const void *buf, size_t bytes, int *same, struct pit_err *e);

/* Additions (same module). pit_dist_init with force=1: initialise MPI even
 * without a launcher (an MPI singleton); pit_dist_init also honours PIT_DIST_MPI=1. */
int pit_dist_init_force(struct pit_dist *d, int *argc, char ***argv, int force,
                        struct pit_err *e);
/* Gradient bucket size in bytes (default 4 MiB, or PIT_DIST_BUCKET_MB from the
 * environment); every rank must use the same. Not during a reduction. */
/* Host name of a rank (learned at start-up), NULL if rank is out of range. */
const char *pit_dist_host_of(const struct pit_dist *d, int rank);
int pit_dist_set_bucket_bytes(struct pit_dist *d, size_t bytes, struct pit_err *e);
/* all_wait[r] returned by gradient reduction k (pit_dist_grads_end or
 * pit_dist_allreduce_grads) is rank r's wait of reduction k-1 of this struct
 * (0 for the first): a reduction's wait is only known once it has completed
 * (docs/mpi.md). This rank's own wait of the reduction that just ended: */
double pit_dist_last_wait(const struct pit_dist *d);

/* The world shrunk in place (every rank calls it, between steps): the ranks
 * with keep != 0 go on as a smaller world, in their old order (rank, size,
 * nodes and the communicators renewed; no reduction may be in flight); 0.
 * They too end without MPI_Finalize (d->shrunk): its fence counts the ranks
 * that left without one, and Open MPI 4.1.4 hung there about once in ten
 * runs of tests/train/shrink.sh.
 * A rank with keep == 0 has left: its communicators are freed and it returns
 * 1, and must then exit without MPI_Finalize (which would wait for the ranks
 * that go on), under an mpirun told to allow it (Open MPI's
 * orte_allowed_exit_without_sync; docs/run.md). A world of one process
 * without MPI keeps itself (0). */
int pit_dist_shrink(struct pit_dist *d, int keep, struct pit_err *e);
/* Every rank's wait of the reduction that just ended (one extra collective,
 * e.g. after the last step). */
int pit_dist_allgather_last_wait(struct pit_dist *d, double *all_wait, struct pit_err *e);

#endif
