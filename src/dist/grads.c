/* grads.c — bucketed sum-allreduce of the gradient with the per-rank timing
 * exchange riding on it (pitstop/dist.h).
 *
 * The gradient array (n floats) is cut into fixed buckets of bucket_elems
 * floats. Buckets are started (MPI_Iallreduce, in place) strictly from the last
 * to the first, as soon as the bucket and every later one are fully ready, so
 * every rank issues the same collectives in the same order whatever its
 * grads_ready pattern. grads_end starts whatever is left, then the timing
 * buffer (2*size doubles, this rank's slots filled, zeros elsewhere, summed),
 * and completes everything with one MPI_Waitall: no extra round trip.
 * When grads_ready was not called at all in a reduction (no overlap wanted),
 * grads_end instead starts the timing buffer first and reduces the whole array
 * with blocking MPI_Allreduce (Open MPI's tuned algorithms beat the nonblocking
 * ones), then waits for the timings — except with PIT_DIST_WAIT=sleep, where
 * nothing may block polling (dist_impl.h): the buckets are started then. So
 * in one reduction either every rank calls grads_ready or none does (same code
 * on every rank guarantees it).
 *
 * Timings: wait of a reduction = time this rank spent blocked in MPI between
 * grads_begin and the return of grads_end (MPI_Testall in grads_ready, any
 * blocking pit_dist_* call in between, the final MPI_Waitall). It is known only
 * after the exchange completes, so all_wait[r] returned by reduction k is rank
 * r's wait of reduction k-1 of this struct pit_dist (0 for the first);
 * pit_dist_last_wait gives this rank's own wait of reduction k and
 * pit_dist_allgather_last_wait every rank's (one extra call).
 */
#include "dist/dist_impl.h"

#include <stdlib.h>
#include <string.h>

static size_t bucket_len(const struct pit_dist_impl *im, size_t b) {
  size_t lo = b * im->bucket_elems;
  size_t hi = lo + im->bucket_elems < im->n ? lo + im->bucket_elems : im->n;
  return hi - lo;
}

static int trivial(const struct pit_dist *d) { return d->impl == NULL || d->size == 1; }

int pit_dist_grads_begin(struct pit_dist *d, float *grads, size_t n, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (trivial(d))
    return 0;
  if (im->active)
    return pit_err_set(e, PIT_ESTATE, "dist: grads_begin while a reduction is in flight");
  size_t nb = (n + im->bucket_elems - 1) / im->bucket_elems;
  if (PIT_GROW(im->ready, nb + 1, im->cap) || PIT_GROW(im->req, nb + 1, im->capreq))
    return pit_err_set(e, PIT_ENOMEM, "dist: out of memory for %zu buckets", nb);
  if (!im->tbuf) {
    im->tbuf = malloc(2 * (size_t)d->size * sizeof *im->tbuf);
    if (!im->tbuf)
      return pit_err_set(e, PIT_ENOMEM, "dist: out of memory for the timing buffer");
  }
  for (size_t b = 0; b <= nb; b++) {
    im->ready[b] = 0;
    im->req[b] = MPI_REQUEST_NULL;
  }
  im->grads = grads;
  im->n = n;
  im->nbuckets = nb;
  im->next = nb;
  im->readies = 0;
  im->wait_acc = 0;
  im->active = 1;
  return 0;
}

/* Starts bucket next-1 (the highest not yet started). */
static int start_bucket(struct pit_dist *d, struct pit_dist_impl *im, struct pit_err *e) {
  size_t b = --im->next;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, im->grads + b * im->bucket_elems, (int)bucket_len(im, b),
                          MPI_FLOAT, MPI_SUM, im->grad, &im->req[b]);
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Iallreduce (gradient bucket)", e);
  return 0;
}

int pit_dist_grads_ready(struct pit_dist *d, size_t off, size_t len, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (trivial(d))
    return 0;
  if (!im->active)
    return pit_err_set(e, PIT_ESTATE, "dist: grads_ready outside grads_begin/grads_end");
  if (off > im->n || len > im->n - off)
    return pit_err_set(e, PIT_EARG, "dist: ready range [%zu, %zu) outside the %zu gradients",
                       off, off + len, im->n);
  im->readies++;
  size_t end = off + len;
  while (off < end) {
    size_t b = off / im->bucket_elems;
    size_t bend = (b + 1) * im->bucket_elems < end ? (b + 1) * im->bucket_elems : end;
    im->ready[b] += bend - off;
    off = bend;
  }
  while (im->next > 0 && im->ready[im->next - 1] >= bucket_len(im, im->next - 1))
    if (start_bucket(d, im, e) < 0)
      return PIT_ELIB;
  if (im->next < im->nbuckets) {
    /* drive Open MPI's progress engine for the buckets in flight */
    int done = 0;
    double t = pit_now();
    int rc = MPI_Testall((int)(im->nbuckets - im->next), im->req + im->next, &done,
                         MPI_STATUSES_IGNORE);
    im->wait_acc += pit_now() - t;
    if (rc != MPI_SUCCESS)
      return pit_dist_mpi_err(d, rc, "MPI_Testall (gradient buckets)", e);
  }
  return 0;
}

int pit_dist_grads_end(struct pit_dist *d, double compute_s, double *all_compute,
                       double *all_wait, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (trivial(d)) {
    all_compute[0] = compute_s;
    all_wait[0] = 0;
    return 0;
  }
  if (!im->active)
    return pit_err_set(e, PIT_ESTATE, "dist: grads_end without grads_begin");
  int s = d->size, rc = 0;
  memset(im->tbuf, 0, 2 * (size_t)s * sizeof *im->tbuf);
  im->tbuf[d->rank] = compute_s;
  im->tbuf[s + d->rank] = im->wait_prev;
  double t = pit_now();
  if (im->readies == 0 && im->sleep_ns <= 0) {
    /* no overlap: timings in flight while the whole array is reduced blocking */
    rc = MPI_Iallreduce(MPI_IN_PLACE, im->tbuf, 2 * s, MPI_DOUBLE, MPI_SUM, im->grad,
                        &im->req[im->nbuckets]);
    if (rc != MPI_SUCCESS)
      rc = pit_dist_mpi_err(d, rc, "MPI_Iallreduce (timings)", e);
    const size_t chunk = (size_t)1 << 30;
    for (size_t off = 0; off < im->n && rc == 0; off += chunk) {
      size_t len = im->n - off < chunk ? im->n - off : chunk;
      rc = MPI_Allreduce(MPI_IN_PLACE, im->grads + off, (int)len, MPI_FLOAT, MPI_SUM, im->grad);
      if (rc != MPI_SUCCESS)
        rc = pit_dist_mpi_err(d, rc, "MPI_Allreduce (gradients)", e);
    }
  } else {
    while (im->next > 0 && rc == 0)
      rc = start_bucket(d, im, e);
    if (rc == 0) {
      rc = MPI_Iallreduce(MPI_IN_PLACE, im->tbuf, 2 * s, MPI_DOUBLE, MPI_SUM, im->grad,
                          &im->req[im->nbuckets]);
      if (rc != MPI_SUCCESS)
        rc = pit_dist_mpi_err(d, rc, "MPI_Iallreduce (timings)", e);
    }
  }
  int wrc = pit_dist_waitall(im, (int)(im->nbuckets + 1), im->req);
  im->wait_acc += pit_now() - t;
  im->active = 0;
  if (rc < 0)
    return rc;
  if (wrc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, wrc, "MPI_Waitall (gradient reduction)", e);
  memcpy(all_compute, im->tbuf, (size_t)d->size * sizeof *all_compute);
  memcpy(all_wait, im->tbuf + d->size, (size_t)d->size * sizeof *all_wait);
  im->wait_last = im->wait_prev = im->wait_acc;
  return 0;
}

int pit_dist_allreduce_grads(struct pit_dist *d, float *grads, size_t n, double compute_s,
                             double *all_compute, double *all_wait, struct pit_err *e) {
  int rc = pit_dist_grads_begin(d, grads, n, e);
  if (rc < 0)
    return rc;
  return pit_dist_grads_end(d, compute_s, all_compute, all_wait, e);
}

double pit_dist_last_wait(const struct pit_dist *d) {
  const struct pit_dist_impl *im = d->impl;
  return trivial(d) ? 0 : im->wait_last;
}

int pit_dist_allgather_last_wait(struct pit_dist *d, double *all_wait, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (trivial(d)) {
    all_wait[0] = 0;
    return 0;
  }
  int rc = MPI_Allgather(&im->wait_last, 1, MPI_DOUBLE, all_wait, 1, MPI_DOUBLE, im->ctl);
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Allgather (waits)", e);
  return 0;
}
