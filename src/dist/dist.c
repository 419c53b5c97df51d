/* dist.c — MPI start-up, host/node discovery, small collectives (pitstop/dist.h).
 *
 * Invariants: MPI is touched only when launched by mpirun (OMPI_COMM_WORLD_SIZE
 * or PMIX_RANK in the environment) or forced (PIT_DIST_MPI=1 or
 * pit_dist_init_force); otherwise d->impl stays NULL, size 1, and no MPI call is
 * ever made. Errors never abort: both private communicators use
 * MPI_ERRORS_RETURN and every failing call becomes a pit_err naming the call,
 * this rank and its host.
 */
#include "dist/dist_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pit_dist_mpi_err(struct pit_dist *d, int rc, const char *what, struct pit_err *e) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
    snprintf(s, sizeof s, "MPI error %d", rc);
  return pit_err_set(e, PIT_ELIB, "%s failed on rank %d (host %s): %s", what, d->rank,
                     d->host, s);
}

int pit_dist_waitall(const struct pit_dist_impl *im, int n, MPI_Request *req) {
  if (im->sleep_ns <= 0)
    return MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  struct timespec ts = {0, im->sleep_ns};
  for (;;) {
    int done = 0, rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS || done)
      return rc;
    nanosleep(&ts, NULL);
  }
}

static int launched_by_mpirun(void) {
  const char *v = getenv("PIT_DIST_MPI");
  if (v && strcmp(v, "1") == 0)
    return 1;
  return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

static void local_host(struct pit_dist *d) {
  if (gethostname(d->host, sizeof d->host) != 0)
    snprintf(d->host, sizeof d->host, "localhost");
  d->host[sizeof d->host - 1] = '\0';
}

/* Node index = order of first appearance of each host name by rank; local
 * rank/size = position among the ranks with the same host name. */
static int learn_nodes(struct pit_dist *d, struct pit_dist_impl *im, struct pit_err *e) {
  enum { H = sizeof d->host };
  char *all = malloc((size_t)d->size * H);
  int *first = calloc((size_t)d->size, sizeof *first);  /* rank's node index */
  if (!all || !first) {
    free(all);
    free(first);
    return pit_err_set(e, PIT_ENOMEM, "dist: out of memory for %d host names", d->size);
  }
  int rc = MPI_Allgather(d->host, H, MPI_CHAR, all, H, MPI_CHAR, im->ctl);
  if (rc != MPI_SUCCESS) {
    free(all);
    free(first);
    return pit_dist_mpi_err(d, rc, "MPI_Allgather (host names)", e);
  }
  int nodes = 0;
  d->local_rank = 0;
  d->local_size = 0;
  for (int r = 0; r < d->size; r++) {
    const char *h = all + (size_t)r * H;
    first[r] = -1;
    for (int q = 0; q < r; q++)
      if (strncmp(h, all + (size_t)q * H, H) == 0) {
        first[r] = first[q];
        break;
      }
    if (first[r] < 0)
      first[r] = nodes++;
  }
  for (int r = 0; r < d->size; r++)
    if (first[r] == first[d->rank]) {
      if (r < d->rank)
        d->local_rank++;
      d->local_size++;
    }
  d->node = first[d->rank];
  d->nodes = nodes;
  im->hosts = all; /* kept: pit_dist_host_of */
  free(first);
  return 0;
}

static void set_single(struct pit_dist *d) {
  memset(d, 0, sizeof *d);
  d->size = d->local_size = d->nodes = 1;
  local_host(d);
}

int pit_dist_init_force(struct pit_dist *d, int *argc, char ***argv, int force,
                        struct pit_err *e) {
  set_single(d);
  if (!force && !launched_by_mpirun())
    return 0;
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    /* Open MPI aborts (it does not return) if start-up fails. */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      return pit_err_set(e, PIT_ELIB, "dist: MPI_Init_thread failed");
    d->initialized_mpi = 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &d->size);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  if (MPI_Get_processor_name(name, &len) == MPI_SUCCESS && len > 0) {
    snprintf(d->host, sizeof d->host, "%s", name);
  }
  struct pit_dist_impl *im = calloc(1, sizeof *im);
  if (!im) {
    pit_dist_release(d);
    return pit_err_set(e, PIT_ENOMEM, "dist: out of memory");
  }
  im->grad = im->ctl = MPI_COMM_NULL;
  im->bucket_elems = (4u << 20) / sizeof(float);
  const char *mb = getenv("PIT_DIST_BUCKET_MB");
  if (mb) {
    double v = 0;
    if (pit_parse_f64(mb, &v) == 0 && v > 0 && v < 4096)
      im->bucket_elems = (size_t)(v * (1 << 20)) / sizeof(float);
    if (im->bucket_elems == 0)
      im->bucket_elems = 1;
  }
  const char *wait = getenv("PIT_DIST_WAIT");
  if (wait && strcmp(wait, "sleep") == 0)
    im->sleep_ns = 20000; /* 20 µs: short beside a step, long enough to leave the CPU */
  d->impl = im;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &im->grad);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &im->ctl);
  if (rc != MPI_SUCCESS) {
    pit_dist_mpi_err(d, rc, "MPI_Comm_dup", e);
    pit_dist_release(d);
    return PIT_ELIB;
  }
  MPI_Comm_set_errhandler(im->grad, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(im->ctl, MPI_ERRORS_RETURN);
  double t0 = pit_now();
  rc = MPI_Barrier(im->ctl);
  d->init_wait_s = pit_now() - t0;
  if (rc != MPI_SUCCESS) {
    pit_dist_mpi_err(d, rc, "MPI_Barrier (start-up)", e);
    pit_dist_release(d);
    return PIT_ELIB;
  }
  if (learn_nodes(d, im, e) < 0) {
    pit_dist_release(d);
    return e ? e->code : PIT_ELIB;
  }
  return 0;
}

const char *pit_dist_host_of(const struct pit_dist *d, int rank) {
  const struct pit_dist_impl *im = d->impl;
  if (rank < 0 || rank >= d->size)
    return NULL;
  if (!im || !im->hosts)
    return d->host;
  return im->hosts + (size_t)rank * sizeof d->host;
}

int pit_dist_init(struct pit_dist *d, int *argc, char ***argv, struct pit_err *e) {
  return pit_dist_init_force(d, argc, argv, 0, e);
}

void pit_dist_release(struct pit_dist *d) {
  struct pit_dist_impl *im = d->impl;
  if (im) {
    if (im->active) {
      /* abandoned reduction: finish it so MPI can shut down cleanly */
      MPI_Waitall((int)(im->nbuckets + 1), im->req, MPI_STATUSES_IGNORE);
    }
    free(im->ready);
    free(im->req);
    free(im->tbuf);
    free(im->hosts);
    if (im->grad != MPI_COMM_NULL)
      MPI_Comm_free(&im->grad);
    if (im->ctl != MPI_COMM_NULL)
      MPI_Comm_free(&im->ctl);
    free(im);
    d->impl = NULL;
  }
  if (d->initialized_mpi && !d->shrunk) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
      MPI_Finalize();
  }
  d->initialized_mpi = 0;
}

int pit_dist_shrink(struct pit_dist *d, int keep, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (!im)
    return keep ? 0 : 1;
  if (im->active)
    return pit_err_set(e, PIT_ESTATE, "dist: the world shrunk during a reduction");
  MPI_Comm sub = MPI_COMM_NULL;
  int rc = MPI_Comm_split(im->ctl, keep ? 0 : MPI_UNDEFINED, d->rank, &sub);
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Comm_split (shrink)", e);
  MPI_Comm_free(&im->grad);
  MPI_Comm_free(&im->ctl);
  im->grad = im->ctl = MPI_COMM_NULL;
  /* the timings' buffer and the buckets' state are sized for the old world */
  free(im->tbuf);
  im->tbuf = NULL;
  free(im->hosts);
  im->hosts = NULL;
  im->wait_acc = im->wait_prev = im->wait_last = 0;
  d->shrunk = 1;
  if (!keep)
    return 1;
  im->grad = sub;
  rc = MPI_Comm_dup(sub, &im->ctl);
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Comm_dup (shrink)", e);
  MPI_Comm_set_errhandler(im->grad, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(im->ctl, MPI_ERRORS_RETURN);
  MPI_Comm_rank(im->ctl, &d->rank);
  MPI_Comm_size(im->ctl, &d->size);
  return learn_nodes(d, im, e);
}

int pit_dist_set_bucket_bytes(struct pit_dist *d, size_t bytes, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (bytes < sizeof(float))
    return pit_err_set(e, PIT_EARG, "dist: bucket size %zu bytes is below one float", bytes);
  if (im && im->active)
    return pit_err_set(e, PIT_ESTATE, "dist: bucket size changed during a reduction");
  if (im)
    im->bucket_elems = bytes / sizeof(float);
  return 0;
}

/* A control collective's end (rc: its start's): a paced one (sleep_ns) waited for by
 * polling, its time counted as waiting, its error named by what. */
static int ctl_end(struct pit_dist *d, int rc, MPI_Request *rq, double t, const char *what, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (rc == MPI_SUCCESS && im->sleep_ns > 0)
    rc = pit_dist_waitall(im, 1, rq);
  im->wait_acc += pit_now() - t;
  return rc != MPI_SUCCESS ? pit_dist_mpi_err(d, rc, what, e) : 0;
}

int pit_dist_bcast(struct pit_dist *d, void *buf, size_t bytes, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (!im || d->size == 1)
    return 0;
  /* chunks below INT_MAX bytes */
  const size_t chunk = (size_t)1 << 30;
  for (size_t off = 0; off < bytes; off += chunk) {
    size_t len = bytes - off < chunk ? bytes - off : chunk;
    double t = pit_now();
    MPI_Request rq;
    int rc = im->sleep_ns > 0 ? MPI_Ibcast((char *)buf + off, (int)len, MPI_BYTE, 0, im->ctl, &rq)
                              : MPI_Bcast((char *)buf + off, (int)len, MPI_BYTE, 0, im->ctl);
    if ((rc = ctl_end(d, rc, &rq, t, "MPI_Bcast", e)) < 0)
      return rc;
  }
  return 0;
}

int pit_dist_allreduce_f64(struct pit_dist *d, double *v, int n, int op_max, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (n < 0)
    return pit_err_set(e, PIT_EARG, "dist: allreduce of %d values", n);
  if (!im || d->size == 1 || n == 0)
    return 0;
  double t = pit_now();
  MPI_Request rq;
  MPI_Op op = op_max ? MPI_MAX : MPI_SUM;
  int rc = im->sleep_ns > 0 ? MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, im->ctl, &rq)
                            : MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, im->ctl);
  return ctl_end(d, rc, &rq, t, "MPI_Allreduce (control)", e);
}

int pit_dist_allgather_f64(struct pit_dist *d, double v, double *all, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (!im || d->size == 1) {
    all[0] = v;
    return 0;
  }
  double t = pit_now();
  int rc = MPI_Allgather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, im->ctl);
  im->wait_acc += pit_now() - t;
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Allgather (control)", e);
  return 0;
}

int pit_dist_barrier(struct pit_dist *d, struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  if (!im || d->size == 1)
    return 0;
  double t = pit_now();
  int rc = MPI_Barrier(im->ctl);
  im->wait_acc += pit_now() - t;
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Barrier", e);
  return 0;
}

int pit_dist_same(struct pit_dist *d, const void *buf, size_t bytes, int *same,
                  struct pit_err *e) {
  struct pit_dist_impl *im = d->impl;
  uint64_t h = pit_hash64(buf, bytes, 0x9e3779b97f4a7c15ull);
  *same = 1;
  if (!im || d->size == 1)
    return 0;
  /* one call: max(h) and max(~h) = ~min(h); all equal iff max == min */
  uint64_t v[2] = {h, ~h};
  double t = pit_now();
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, im->ctl);
  im->wait_acc += pit_now() - t;
  if (rc != MPI_SUCCESS)
    return pit_dist_mpi_err(d, rc, "MPI_Allreduce (checksum)", e);
  *same = v[0] == ~v[1];
  return 0;
}
