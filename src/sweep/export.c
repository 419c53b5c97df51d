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
  const char *name;       /* borrowed from the run set */
  struct pit_config cfg;  /* ranks, nodes, batch (the fields a seed-002 file is per) */
  double total;           /* end records' total_s, else the largest t; NaN if neither */
  double *ep0, *steps0;   /* (ranks) epoch-0 epoch_s and Σ step_s; NaN if none */
  int cfgi;               /* index of its configuration */
};

static void add_to(double *a, int n, int rank, double v) {
  if (isnan(v))
    return;
  for (int r = 0; r < n; r++)
    if (rank < 0 || r == rank)
      a[r] = isnan(a[r]) ? v : a[r] + v;
}

/* One loaded run's export figures; x->cfg.ranks 0 when it holds no record. */
static int read_run(const struct pit_report_run *run, struct xrun *x, struct pit_err *e) {
  const struct pit_series *s = &run->series;
  const struct pit_series_run *sr = &s->runs[0];
  memset(x, 0, sizeof *x);
  x->name = run->name;
  x->cfg = sr->cfg;
  x->total = isnan(sr->end_total_s) ? sr->last_t : sr->end_total_s;
  for (int64_t i = 0; i < s->nit && x->cfg.batch < 1; i++)
    x->cfg.batch = s->it[i].batch;
  if (x->cfg.ranks < 1)
    x->cfg.ranks = s->nit > 0 && s->it[0].nranks > 0 ? s->it[0].nranks : 1;
  if (x->cfg.ranks > MAX_RANKS)
    return pit_err_set(e, PIT_EFORMAT, "run '%s': %d ranks", x->name, x->cfg.ranks);
  if (x->cfg.nodes < 1)
    x->cfg.nodes = 1;
  x->ep0 = malloc(sizeof *x->ep0 * (size_t)x->cfg.ranks);
  x->steps0 = malloc(sizeof *x->steps0 * (size_t)x->cfg.ranks);
  if (!x->ep0 || !x->steps0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int k = 0; k < x->cfg.ranks; k++)
    x->ep0[k] = x->steps0[k] = NAN;
  for (int64_t i = 0; i < s->nev; i++)
    if (s->ev[i].type == PIT_REC_EPOCH && s->ev[i].epoch == 0)
      add_to(x->ep0, x->cfg.ranks, s->ev[i].rank, s->ev[i].v);
  for (int64_t i = 0; i < s->nit; i++)
    if (s->it[i].epoch == 0)
      add_to(x->steps0, x->cfg.ranks, s->it[i].rank, s->it[i].step_s);
  return 0;
}

static int write_csv(const char *path, const struct xrun *runs, int n, int cfg, struct pit_err *e) {
  struct pit_atomic_file af;
  int rc = pit_atomic_open(&af, path, e);
  if (rc)
    return rc;
  const struct xrun *first = NULL;
  for (int i = 0; i < n && !first; i++)
    if (runs[i].cfgi == cfg)
      first = &runs[i];
  fputs("total", af.fp);
  for (int r = 0; r < first->cfg.ranks; r++)
    fprintf(af.fp, ",t%d", r);
  fputc('\n', af.fp);
  for (int i = 0; i < n; i++) {
    const struct xrun *x = &runs[i];
    if (x->cfgi != cfg)
      continue;
    if (!isnan(x->total))
      fprintf(af.fp, "%.9g", x->total);
    for (int r = 0; r < x->cfg.ranks; r++) {
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
  struct pit_runset rs;
  pit_runset_init(&rs);
  rs.prefix = prefix;
  int rc = pit_runset_load_store(&rs, db, NULL, 0, e);
  struct xrun *runs = rc ? NULL : calloc((size_t)(rs.n ? rs.n : 1), sizeof *runs);
  if (!rc && !runs)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  int n = 0;
  for (int i = 0; i < rs.n && !rc; i++)
    rc = read_run(&rs.runs[i], &runs[n++], e);
  if (!rc && n == 0)
    rc = prefix && *prefix ? pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no run of sweep '%s'", db, prefix)
                           : pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no runs", db);
  /* configurations (nodes, ranks, batch: the analysis module's fields), in order of first appearance */
  const unsigned fields = PIT_CF_BIT(PIT_CF_NODES) | PIT_CF_BIT(PIT_CF_RANKS) | PIT_CF_BIT(PIT_CF_BATCH);
  int ncfg = 0;
  for (int i = 0; i < n && !rc; i++) {
    runs[i].cfgi = -1;
    for (int k = 0; k < i && runs[i].cfgi < 0; k++)
      if (pit_config_same(&runs[k].cfg, &runs[i].cfg, fields))
        runs[i].cfgi = runs[k].cfgi;
    if (runs[i].cfgi < 0)
      runs[i].cfgi = ncfg++;
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
      if (runs[i].cfgi == c)
        x = &runs[i];
    if (isdir)
      snprintf(path, sizeof path, "%s/nnode-%d_nproc-%d_batch_size-%lld.csv", out, x->cfg.nodes,
               x->cfg.ranks / x->cfg.nodes, (long long)x->cfg.batch);
    else
      snprintf(path, sizeof path, "%s", out);
    rc = write_csv(path, runs, n, c, e);
    if (!rc)
      ++*nfiles;
  }
  for (int i = 0; runs && i < n; i++) {
    free(runs[i].ep0);
    free(runs[i].steps0);
  }
  free(runs);
  pit_runset_release(&rs);
  return rc;
}
