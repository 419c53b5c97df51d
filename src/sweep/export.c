/* export.c — stored runs in seed 002's CSV shape: per configuration (nodes,
 * ranks per node, global batch) "total,t0,...,t<R-1>", one line per run: its
 * total time, then every rank's epoch-0 time.
 *
 * Where the numbers come from: total = the run's end records' total_s summed
 * over generations (else its largest t); t<r> = epoch 0's epoch_s — one value
 * for every rank when the record covers all ranks (what `pitstop train`
 * writes: ranks are synchronous, so they end an epoch together), or each
 * rank's own when records name ranks (foreign logs); a run that stopped
 * before epoch 0 ended (--max-iters) gets the sum of its epoch-0 step times.
 * Invariant: every file is written atomically; nothing is written on error. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pitstop/analysis.h"
#include "pitstop/store.h"
#include "pitstop/sweep.h"

#define MAX_RANKS 4096

struct xrun {
  char name[PIT_NAME_MAX];
  int nodes, ranks;
  int64_t batch;
  double total_end, last_t;
  double *ep0, *steps0;   /* (ranks) epoch-0 epoch_s and Σ step_s; NaN if none */
  int cfg;                /* index of its configuration */
};

static void add_to(double *a, int n, int rank, double v) {
  if (isnan(v))
    return;
  for (int r = 0; r < n; r++)
    if (rank < 0 || r == rank)
      a[r] = isnan(a[r]) ? v : a[r] + v;
}

/* Reads one run's records into x (ranks, nodes, batch from its init). */
static int read_run(struct pit_store *s, const struct pit_store_run *sr, struct xrun *x, struct pit_err *e) {
  memset(x, 0, sizeof *x);
  snprintf(x->name, sizeof x->name, "%s", sr->name);
  x->ranks = sr->ranks;
  x->nodes = sr->nodes;
  x->batch = sr->batch;
  x->total_end = x->last_t = NAN;
  struct pit_store_cursor *cur;
  int rc = pit_store_cursor_open(s, sr->name, &cur, e);
  if (rc)
    return rc;
  struct pit_record r;
  pit_record_init(&r);
  int got;
  while ((got = pit_store_cursor_next(cur, &r, e)) == 1) {
    if (!isnan(r.t) && (isnan(x->last_t) || r.t > x->last_t))
      x->last_t = r.t;
    if (r.type == PIT_REC_INIT && x->ranks < 1) {
      struct pit_config c;
      pit_config_from_record(&c, &r);
      x->ranks = c.ranks;
      x->nodes = c.nodes;
      x->batch = c.batch;
    }
    if (!x->ep0) {
      if (x->ranks < 1)
        x->ranks = r.nranks > 0 ? r.nranks : 1;
      if (x->ranks > MAX_RANKS) {
        got = pit_err_set(e, PIT_EFORMAT, "run '%s': %d ranks", x->name, x->ranks);
        break;
      }
      x->ep0 = malloc(sizeof *x->ep0 * (size_t)x->ranks);
      x->steps0 = malloc(sizeof *x->steps0 * (size_t)x->ranks);
      if (!x->ep0 || !x->steps0) {
        got = pit_err_set(e, PIT_ENOMEM, "out of memory");
        break;
      }
      for (int k = 0; k < x->ranks; k++)
        x->ep0[k] = x->steps0[k] = NAN;
    }
    if (r.type == PIT_REC_END && !isnan(r.total_s))
      x->total_end = isnan(x->total_end) ? r.total_s : x->total_end + r.total_s;
    else if (r.type == PIT_REC_EPOCH && r.epoch == 0)
      add_to(x->ep0, x->ranks, r.rank, r.epoch_s);
    else if (r.type == PIT_REC_ITER && r.epoch == 0)
      add_to(x->steps0, x->ranks, r.rank, r.step_s);
    if (r.type == PIT_REC_ITER && x->batch < 1)
      x->batch = r.batch;
  }
  pit_record_release(&r);
  pit_store_cursor_free(cur);
  if (x->nodes < 1)
    x->nodes = 1;
  if (!x->ep0)
    x->ranks = 0; /* no record at all: not exported */
  return got < 0 ? got : 0;
}

static int write_csv(const char *path, const struct xrun *runs, int n, int cfg, struct pit_err *e) {
  struct pit_atomic_file af;
  int rc = pit_atomic_open(&af, path, e);
  if (rc)
    return rc;
  const struct xrun *first = NULL;
  for (int i = 0; i < n && !first; i++)
    if (runs[i].cfg == cfg)
      first = &runs[i];
  fputs("total", af.fp);
  for (int r = 0; r < first->ranks; r++)
    fprintf(af.fp, ",t%d", r);
  fputc('\n', af.fp);
  for (int i = 0; i < n; i++) {
    const struct xrun *x = &runs[i];
    if (x->cfg != cfg)
      continue;
    double total = isnan(x->total_end) ? x->last_t : x->total_end;
    if (!isnan(total))
      fprintf(af.fp, "%.9g", total);
    for (int r = 0; r < x->ranks; r++) {
      double v = isnan(x->ep0[r]) ? x->steps0[r] : x->ep0[r];
      fputc(',', af.fp);
      if (!isnan(v))
        fprintf(af.fp, "%.9g", v);
    }
    fputc('\n', af.fp);
  }
  if (ferror(af.fp)) {
    pit_atomic_abort(&af);
    return pit_err_set(e, PIT_EIO, "cannot write '%s'", path);
  }
  return pit_atomic_commit(&af, e);
}

int pit_sweep_export_seed002(const char *db, const char *prefix, const char *out, int *nfiles,
                             struct pit_err *e) {
  *nfiles = 0;
  struct pit_store *s;
  int rc = pit_store_open_existing(&s, db, e);
  if (rc)
    return rc;
  struct pit_store_run *sr = NULL;
  int nsr = 0;
  rc = pit_store_runs(s, &sr, &nsr, e);
  struct xrun *runs = rc ? NULL : calloc((size_t)(nsr ? nsr : 1), sizeof *runs);
  if (!rc && !runs)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  int n = 0;
  size_t plen = prefix ? strlen(prefix) : 0;
  for (int i = 0; i < nsr && !rc; i++) {
    if (plen && (strncmp(sr[i].name, prefix, plen) != 0 || sr[i].name[plen] != '-'))
      continue;
    rc = read_run(s, &sr[i], &runs[n], e);
    n++;
    if (!rc && runs[n - 1].ranks < 1)
      n--; /* a run with no record at all */
  }
  pit_store_runs_free(sr, nsr);
  pit_store_close(s, NULL);
  if (!rc && n == 0)
    rc = plen ? pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no run of sweep '%s'", db, prefix)
              : pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no runs", db);
  /* configurations, in order of first appearance */
  int ncfg = 0;
  for (int i = 0; i < n && !rc; i++) {
    runs[i].cfg = -1;
    for (int k = 0; k < i && runs[i].cfg < 0; k++)
      if (runs[k].nodes == runs[i].nodes && runs[k].ranks == runs[i].ranks && runs[k].batch == runs[i].batch)
        runs[i].cfg = runs[k].cfg;
    if (runs[i].cfg < 0)
      runs[i].cfg = ncfg++;
  }
  struct stat st;
  int isdir = !rc && stat(out, &st) == 0 && S_ISDIR(st.st_mode);
  if (!rc && ncfg > 1 && !isdir) {
    rc = pit_err_set(e, PIT_EARG, "the runs hold %d configurations and '%s' is not a directory", ncfg, out);
    pit_err_hint(e, "give --out DIR (an existing directory) for one CSV per configuration, as seed 002 had");
  }
  for (int c = 0; c < ncfg && !rc; c++) {
    char path[4096];
    const struct xrun *x = NULL;
    for (int i = 0; i < n && !x; i++)
      if (runs[i].cfg == c)
        x = &runs[i];
    if (isdir)
      snprintf(path, sizeof path, "%s/nnode-%d_nproc-%d_batch_size-%lld.csv", out, x->nodes,
               x->ranks / x->nodes, (long long)x->batch);
    else
      snprintf(path, sizeof path, "%s", out);
    rc = write_csv(path, runs, n, c, e);
    if (!rc)
      ++*nfiles;
  }
  for (int i = 0; runs && i < nsr; i++) { /* calloc'd: unused entries are NULL */
    free(runs[i].ep0);
    free(runs[i].steps0);
  }
  free(runs);
  return rc;
}
