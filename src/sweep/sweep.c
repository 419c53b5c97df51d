/* sweep.c — the grid of a sweep: which runs (ranks × batch × repeat), their
 * run ids, and the launcher command of each, as an argv array:
 *   mpirun -np R [--hostfile F] [launcher args] pitstop train <the train options,
 *     from pit_train_opts_argv: --model M --data D ... --batch-size B
 *     (--epochs N | --max-iters N) ... --db PATH --run <id>-r<R>-b<B>-<rep>> --quiet [train args]
 * Invariant: no value is ever interpreted by a shell; cells come repeat-major. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pitstop/store.h"
#include "pitstop/util.h"
#include "pitstop/sweep.h"

void pit_sweep_spec_init(struct pit_sweep_spec *s) {
  memset(s, 0, sizeof *s);
  s->repeat = 1;
  pit_train_opts_init(&s->train);
  s->train.model = s->train.data = NULL; /* required */
  s->train.epochs = 0;                   /* exactly one of epochs, max_iters */
  s->mpirun = "mpirun";
  s->train_cmd = "pitstop";
}

int pit_sweep_parse_list(const char *s, int64_t *values, int *n, const char *what, struct pit_err *e) {
  *n = 0;
  char buf[512];
  if (strlen(s) >= sizeof buf)
    return pit_err_set(e, PIT_EARG, "%s: list too long", what);
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int64_t v;
    if (pit_parse_i64(tok, &v) || v < 1 || v > 1000000000)
      return pit_err_set(e, PIT_EARG, "%s: '%s' is not a positive integer", what, tok);
    for (int i = 0; i < *n; i++)
      if (values[i] == v)
        return pit_err_set(e, PIT_EARG, "%s: %lld listed twice", what, (long long)v);
    if (*n == PIT_SWEEP_MAX_VALUES)
      return pit_err_set(e, PIT_EARG, "%s: at most %d values", what, PIT_SWEEP_MAX_VALUES);
    values[(*n)++] = v;
  }
  if (*n == 0)
    return pit_err_set(e, PIT_EARG, "%s: no value given", what);
  return 0;
}

int pit_sweep_check(const struct pit_sweep_spec *s, struct pit_err *e) {
  if (!s->id[0])
    return pit_err_set(e, PIT_EARG, "the sweep has no id");
  for (const char *p = s->id; *p; p++)
    if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
          (*p >= 'A' && *p <= 'Z')))
      return pit_err_set(e, PIT_EARG, "sweep id '%s': use letters, digits, '-', '_' and '.' only", s->id);
  if (s->nranks < 1)
    return pit_err_set(e, PIT_EARG, "no rank counts given (--ranks)");
  if (s->nbatch < 1)
    return pit_err_set(e, PIT_EARG, "no batch sizes given (--batch-size)");
  if (s->repeat < 1 || s->repeat > 10000)
    return pit_err_set(e, PIT_EARG, "--repeat must be 1..10000");
  if ((s->train.epochs > 0) == (s->train.max_iters > 0))
    return pit_err_set(e, PIT_EARG, "give exactly one of --epochs N and --max-iters N");
  if (!s->train.model || !s->train.data)
    return pit_err_set(e, PIT_EARG, "--model and --data are required");
  int rc = pit_train_check(&s->train, e);
  if (rc)
    return rc;
  if (!s->db)
    return pit_err_set(e, PIT_EARG, "no store given");
  for (int i = 0; i < s->nbatch; i++)
    for (int k = 0; k < s->nranks; k++)
      if (s->batch[i] < s->ranks[k])
        return pit_err_set(e, PIT_EARG, "global batch %lld is smaller than %d ranks", (long long)s->batch[i],
                           s->ranks[k]);
  return 0;
}

/* Appends a formatted argument (copied) to argv. */
static int arg(char **argv, int *argc, int cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int arg(char **argv, int *argc, int cap, const char *fmt, ...) {
  if (*argc >= cap - 1)
    return PIT_EARG;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!s)
    return PIT_ENOMEM;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  argv[(*argc)++] = s;
  argv[*argc] = NULL;
  return 0;
}

static int build_argv(const struct pit_sweep_spec *s, struct pit_sweep_cell *c) {
  struct pit_train_opts t = s->train;
  t.batch = c->batch;
  t.db = s->db;
  t.run = c->run;
  char **targv = NULL;
  int targc = 0;
  if (pit_train_opts_argv(&t, &targv, &targc, NULL))
    return PIT_ENOMEM;
  int cap = 16 + targc + s->nmpirun_args + s->ntrain_args;
  c->argv = calloc((size_t)cap, sizeof *c->argv);
  if (!c->argv) {
    pit_train_argv_free(targv);
    return PIT_ENOMEM;
  }
  char np[16];
  snprintf(np, sizeof np, "%d", c->ranks);
  /* option/value pairs in order; a NULL value leaves the pair out, "" marks a lone word */
  const char *head[][2] = {{s->mpirun, ""}, {"-np", np}, {"--hostfile", s->hostfile}};
  int rc = 0;
  for (size_t i = 0; i < sizeof head / sizeof head[0] && !rc; i++)
    if (head[i][1])
      rc = arg(c->argv, &c->argc, cap, "%s", head[i][0]) || (*head[i][1] && arg(c->argv, &c->argc, cap, "%s", head[i][1]));
  for (int i = 0; i < s->nmpirun_args && !rc; i++)
    rc = arg(c->argv, &c->argc, cap, "%s", s->mpirun_args[i]);
  rc = rc || arg(c->argv, &c->argc, cap, "%s", s->train_cmd) || arg(c->argv, &c->argc, cap, "train");
  for (int i = 0; i < targc && !rc; i++)
    rc = arg(c->argv, &c->argc, cap, "%s", targv[i]);
  rc = rc || arg(c->argv, &c->argc, cap, "--quiet");
  for (int i = 0; i < s->ntrain_args && !rc; i++)
    rc = arg(c->argv, &c->argc, cap, "%s", s->train_args[i]);
  pit_train_argv_free(targv);
  return rc ? PIT_ENOMEM : 0;
}

int pit_sweep_plan(const struct pit_sweep_spec *s, struct pit_sweep_cell **cells, int *n, struct pit_err *e) {
  *cells = NULL;
  *n = 0;
  int rc = pit_sweep_check(s, e);
  if (rc)
    return rc;
  int total = s->repeat * s->nranks * s->nbatch;
  struct pit_sweep_cell *c = calloc((size_t)total, sizeof *c);
  if (!c)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int k = 0;
  for (int rep = 0; rep < s->repeat && !rc; rep++)
    for (int r = 0; r < s->nranks && !rc; r++)
      for (int b = 0; b < s->nbatch && !rc; b++, k++) {
        c[k].ranks = s->ranks[r];
        c[k].batch = s->batch[b];
        c[k].rep = rep;
        snprintf(c[k].run, sizeof c[k].run, "%s-r%d-b%lld-%d", s->id, c[k].ranks, (long long)c[k].batch, rep);
        if (strlen(c[k].run) >= 64)
          rc = pit_err_set(e, PIT_EARG, "run id '%s' is longer than 63 characters: shorten the sweep id", c[k].run);
        else if (build_argv(s, &c[k]))
          rc = pit_err_set(e, PIT_ENOMEM, "out of memory (or too many extra arguments)");
      }
  if (rc) {
    pit_sweep_cells_free(c, total);
    return rc;
  }
  *cells = c;
  *n = total;
  return 0;
}

void pit_sweep_cells_free(struct pit_sweep_cell *cells, int n) {
  for (int i = 0; cells && i < n; i++) {
    for (int k = 0; cells[i].argv && cells[i].argv[k]; k++)
      free(cells[i].argv[k]);
    free(cells[i].argv);
  }
  free(cells);
}

int pit_sweep_cell_run(const struct pit_sweep_cell *c, int *status, struct pit_err *e) {
  int rc = pit_child_run(c->argv, 0, status, NULL, 0, e);
  if (rc == PIT_ENOTFOUND)
    pit_err_hint(e, "the launcher is '%s' (change it with --mpirun PATH)", c->argv[0]);
  return rc;
}

int pit_sweep_stored(const char *db, struct pit_sweep_cell *cells, int n, struct pit_err *e) {
  for (int i = 0; i < n; i++)
    cells[i].stored = PIT_SWEEP_ABSENT;
  if (access(db, F_OK) != 0)
    return errno == ENOENT ? 0 : pit_err_errno(e, PIT_EIO, "cannot open '%s'", db);
  struct pit_runset rs; /* the runs of this sweep, by the one loader */
  pit_runset_init(&rs);
  char prefix[sizeof cells->run];
  snprintf(prefix, sizeof prefix, "%s", n > 0 ? cells[0].run : "");
  char *dash = strrchr(prefix, '-'); /* "<id>-r<R>-b<B>-<rep>" → "<id>" */
  for (int k = 0; k < 3 && dash; k++, dash = strrchr(prefix, '-'))
    *dash = '\0';
  rs.prefix = prefix;
  int rc = n > 0 ? pit_runset_load_store(&rs, db, NULL, 0, e) : 0;
  for (int i = 0; i < n && !rc; i++) {
    const struct pit_report_run *run = pit_runset_find(&rs, cells[i].run);
    if (run)
      cells[i].stored = run->series.runs[0].ends > 0 ? PIT_SWEEP_COMPLETE : PIT_SWEEP_PARTIAL;
  }
  pit_runset_release(&rs);
  return rc;
}
