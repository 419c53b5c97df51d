/* pitstop/report.h — what pitstop shows people: charts drawn by gnuplot from
 * stored (or JSON Lines) runs, the instance-type price catalog they are costed
 * with. gnuplot runs through util's child processes. docs/plot.md describes
 * each chart.
 *
 * Invariants: functions never print or exit; a chart file is written
 * atomically (complete, or not at all); children are started with argv arrays
 * through posix_spawn — no user value is ever pasted into a shell string, and
 * values that reach a gnuplot script are quoted as gnuplot string literals.
 * Statistics (t_p, its interval, warm-up) come from the analysis module.
 */
#ifndef PITSTOP_REPORT_H
#define PITSTOP_REPORT_H

#include <stddef.h>

#include "pitstop/analysis.h"
#include "pitstop/record.h"
#include "pitstop/util.h"

/* ---------------- runs to report on ---------------- */

struct pit_report_run {
  char name[PIT_NAME_MAX];
  struct pit_series series;  /* this run's records */
  struct pit_summary sum;    /* filled by pit_runset_summarize */
  struct pit_config cfg;     /* from its first init record ("" / -1 if none) */
  const char *config;        /* JSON text of its init config; borrowed from series; may be NULL */
};

/* Runs in the order they were first seen. */
struct pit_runset {
  struct pit_report_run *runs;
  int n, cap;
};
void pit_runset_init(struct pit_runset *rs);
void pit_runset_release(struct pit_runset *rs);
/* Reads runs from the store at path (which must exist). only[0..nonly-1]:
 * just these runs (an unknown name is PIT_ENOTFOUND); nonly == 0: all. */
int pit_runset_load_store(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                          struct pit_err *e);
/* Reads runs from a JSON Lines file; a malformed line is an error naming
 * file:line. Repeatable (runs accumulate). */
int pit_runset_load_events(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                           struct pit_err *e);
/* After loading every source: each of only[] must name a loaded run, and at
 * least one run must be there. what names the source in messages. */
int pit_runset_check(const struct pit_runset *rs, char *const *only, int nonly, const char *what,
                     struct pit_err *e);
/* Fills every run's cfg and sum. */
int pit_runset_summarize(struct pit_runset *rs, struct pit_err *e);

/* ---------------- price catalog ---------------- */

/* One instance type: lines of a catalog such as catalogs/aws.tsv, "itype vcpus price_h billing_s min_s"
 * (tab or space separated; '#' starts a comment line). */
struct pit_itype {
  char name[PIT_NAME_MAX];
  int vcpus;
  double price_h;    /* US$ per hour (on-demand) */
  double billing_s;  /* billing granularity, seconds */
  double min_s;      /* minimum billed seconds per start */
};
struct pit_catalog {
  struct pit_itype *types;
  int n;
};
/* Errors name file:line. An empty catalog is an error. */
int pit_catalog_load(struct pit_catalog *c, const char *path, struct pit_err *e);
const struct pit_itype *pit_catalog_find(const struct pit_catalog *c, const char *name);
void pit_catalog_release(struct pit_catalog *c);
/* Seconds billed for running secs seconds on one node of type t. */
double pit_itype_billed_s(const struct pit_itype *t, double secs);

/* ---------------- charts ---------------- */

enum pit_plot_kind {
  PIT_PLOT_STEPS,    /* one run: step time per iteration, one line per epoch, t_p and its interval */
  PIT_PLOT_BATCH,    /* a time against global batch size, one line per configuration, ±sd over repeats */
  PIT_PLOT_SCALING,  /* speedup and parallel efficiency against ranks, from throughput batch/t_p */
  PIT_PLOT_COST      /* samples per dollar per configuration (instance type × nodes), from t_p */
};
/* "steps", "batch", "scaling", "cost"; PIT_EARG otherwise. */
int pit_plot_kind_parse(const char *s, enum pit_plot_kind *k);

enum pit_plot_metric {     /* y of the batch chart */
  PIT_METRIC_TP,           /* t_p, time per iteration */
  PIT_METRIC_SAMPLE,       /* t_p / global batch, time per sample */
  PIT_METRIC_TOTAL         /* the run's total time */
};
int pit_plot_metric_parse(const char *s, enum pit_plot_metric *m);

struct pit_plot_opts {
  enum pit_plot_kind kind;
  const char *out;                 /* FILE.png or FILE.svg */
  const char *title;               /* NULL: a default title per kind */
  const char *gnuplot;             /* program; NULL: $PIT_GNUPLOT, else "gnuplot" from PATH */
  enum pit_plot_metric metric;     /* batch chart */
  const struct pit_catalog *catalog; /* cost chart (required there) */
  const char *itype;               /* cost chart: instance type of runs that name none; NULL: such runs are an error */
  int width, height;               /* pixels; 0: 1000 × 600 */
};
void pit_plot_opts_init(struct pit_plot_opts *o);
/* Draws the chart of the (summarized) runs into o->out. Errors: no suitable
 * run, an instance type missing from the catalog, gnuplot missing or failing
 * (its message is quoted), the output not writable. */
int pit_plot(const struct pit_runset *rs, const struct pit_plot_opts *o, struct pit_err *e);

#endif
