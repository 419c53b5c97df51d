/* pitstop/report.h — what pitstop shows people: the run set (the one loader of
 * stored or JSON Lines runs behind summary, plot and sweep's export, is the
 * store module's), groups of runs and the summary printers (table, CSV, JSON), and charts drawn by gnuplot,
 * costed with the catalog module's prices (pitstop/catalog.h). gnuplot runs
 * through util's child processes. docs/plot.md describes each chart,
 * docs/analysis.md every summary field.
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
#include <stdio.h>

#include "pitstop/analysis.h"
#include "pitstop/catalog.h" /* the price catalog the cost chart uses */
#include "pitstop/predict.h"
#include "pitstop/record.h"
#include "pitstop/store.h"
#include "pitstop/util.h"

/* The runs reported on come from the store module's run set (pitstop/store.h:
 * struct pit_runset, the one loader of stored or JSON Lines runs). */

/* ---------------- groups of runs (summary --group-by) ---------------- */

#define PIT_GROUP_MAX_FIELDS 8
/* Runs with equal values of the grouping fields (configuration fields of
 * analysis.h's table, or any key of the init config), in order of first
 * appearance; each group's series is its runs' series concatenated. */
struct pit_report_group {
  char name[512];                 /* "field=value field=value" */
  char vals[PIT_GROUP_MAX_FIELDS][PIT_MEMBERSHIP_TEXT_MAX];
  struct pit_config cfg;          /* its first run's */
  struct pit_series series;       /* owned */
  struct pit_summary sum;         /* owned */
};
struct pit_groups {
  const char *fields[PIT_GROUP_MAX_FIELDS]; /* borrowed from the caller */
  int nfields;
  struct pit_report_group *g;     /* owned */
  int n;
};
/* Parses "model,batch" (NULL: the default, every key field of the table) into
 * g->fields, pointing into buf (a copy the caller keeps). PIT_EARG: none, or
 * more than PIT_GROUP_MAX_FIELDS. */
int pit_groups_parse(struct pit_groups *g, const char *spec, char *buf, size_t bufn, struct pit_err *e);
/* Groups the (summarized) runs of rs and summarizes every group. */
int pit_groups_make(struct pit_groups *g, const struct pit_runset *rs, struct pit_err *e);
void pit_groups_release(struct pit_groups *g);

/* ---------------- summary printers (summary_fmt.c) ---------------- */

enum pit_summary_format { PIT_SUMMARY_TABLE, PIT_SUMMARY_CSV, PIT_SUMMARY_JSON };
/* "table", "csv", "json"; PIT_EARG otherwise. */
int pit_summary_format_parse(const char *s, enum pit_summary_format *f);
/* Writes every run of rs then every group of g in format fmt to f. title:
 * the groups' heading in the table ("configurations", "groups by model").
 * Each field is declared once in summary_fmt.c's table, which drives the JSON
 * object and the CSV columns; PIT_EIO if f fails. */
int pit_summary_write(FILE *f, enum pit_summary_format fmt, const struct pit_runset *rs,
                      const struct pit_groups *g, const char *title, struct pit_err *e);
/* The CSV header's columns, in order, one per call: i = 0, 1, ... until NULL;
 * a column made of two names is written into name (n bytes), others point
 * into the field table. */
const char *pit_summary_csv_column(int i, char *name, size_t n);

/* ---------------- prediction printers (predict_fmt.c) ---------------- */

/* One run's prediction as `pitstop predict` shows it (docs/predict.md lists
 * every field). Absent values are NaN / NULL. */
struct pit_predict_report {
  const char *run;             /* borrowed */
  const char *model;           /* borrowed: which scaling / imbalance model ("measured configuration (no scaling)") */
  const char *steady;          /* borrowed: "steady" or "not steady yet: ..." (pit_steady_check's why) */
  const char *time_basis;      /* borrowed: what one iteration's time was taken from */
  const char *untimed_from;    /* borrowed: where in.untimed came from (--history), NULL: not asked */
  int64_t want_iters;          /* further iterations the steadiness check asks for (0: none) */
  int64_t warmup;              /* warm-up iterations left out */
  double tp_lo, tp_hi;         /* t_p's 95% interval */
  double cost, cost_lo, cost_hi; /* US$ of the predicted time and of its interval's ends */
  double rcost, rcost_lo, rcost_hi; /* US$ still to pay: of the whole job less of the time elapsed
                                       (a run in progress), on the same membership */
  double samples_per_dollar;
  const char *unit;            /* borrowed: "epochs", "iters" or "samples" */
  const char *size_from;       /* borrowed: where the job's size came from ("--epochs", "the run's
                                  planned_iters", "default: 1 epoch") */
  const char *itype;           /* borrowed: membership priced ("c5.xlarge:2"), NULL: not costed */
  double price_h;              /* Σ nodes × price_h of that membership */
  int64_t val_samples;         /* samples of one validation pass, -1: unknown */
  struct pit_predict_in in;    /* the inputs of pit_predict (borrowed nothing) */
  struct pit_prediction p;     /* its result */
};
/* Writes n reports in format fmt (enum pit_summary_format: a table of
 * "field  value" lines per run, CSV with a header line, or a JSON object
 * (n == 1) / array). Every field is declared once in predict_fmt.c's table,
 * which drives all three. PIT_EIO if f fails. */
int pit_predict_write(FILE *f, enum pit_summary_format fmt, const struct pit_predict_report *r, int n,
                      struct pit_err *e);

/* A prediction's report set up from a run (src/report/predict_job.c). */
/* No job size given: the job run r planned, as its config states it
 * (planned_iters: whole epochs when a multiple of in's iterations per epoch; a
 * log's epoch count), else the epochs it reached, else 1 epoch; from says which. */
void pit_predict_own_job(const struct pit_report_run *r, const struct pit_predict_in *in, enum pit_job_unit *unit,
                         double *size, char *from, size_t cap);
/* A job no larger than what series s did: in's done iterations and elapsed
 * time become the job's own (nothing remains); from (cap bytes) says so. */
void pit_predict_job_done_in_run(const struct pit_series *s, char *from, size_t cap, struct pit_predict_in *in);
/* The membership priced into m: itype (a type, with nodes > 0 its count, or a
 * membership), else r's last generation's, else r's; every type must be in
 * cat (loaded from catalog, named in errors). */
int pit_predict_priced_membership(const struct pit_catalog *cat, const char *catalog, const char *itype,
                                  double nodes, const struct pit_report_run *r, struct pit_membership *m,
                                  struct pit_err *e);
/* rep's costs on mem (billed, catalog/cost.c): of the predicted time and its
 * interval, samples per dollar, what is still to pay, the price per hour. */
int pit_predict_report_cost(struct pit_predict_report *rep, const struct pit_catalog *cat,
                            const struct pit_membership *mem, struct pit_err *e);
/* rep's steadiness line (into steady), the iterations it still wants, warm-up,
 * t_p's interval, validation samples and time basis, from basis; scale_to
 * finite: t_p is a scaling fit's, measured at no such count. */
void pit_predict_report_steady(struct pit_predict_report *rep, const struct pit_predict_basis *basis, double scale_to,
                               char *steady, size_t cap);

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
  const char *itype;               /* cost chart: instance type (or membership text, record.h) of runs that name none;
                                      NULL: such runs are an error */
  double job_s;                    /* cost chart: length of the job priced (billed seconds); <= 0: 3600 */
  int width, height;               /* pixels; 0: 1000 × 600 */
};
void pit_plot_opts_init(struct pit_plot_opts *o);
/* Draws the chart of the (summarized) runs into o->out. Errors: no suitable
 * run, an instance type missing from the catalog, gnuplot missing or failing
 * (its message is quoted), the output not writable. */
int pit_plot(const struct pit_runset *rs, const struct pit_plot_opts *o, struct pit_err *e);

/* The timeline of an elastic run from its events file (pitstop run): a bar per
 * node from its start to its stop (coloured by instance type), each decision as
 * a dashed line labelled with the membership chosen, and the steps done over
 * time. PIT_ENOTFOUND when the file holds no node record. */
int pit_plot_timeline(const char *events, const struct pit_plot_opts *o, struct pit_err *e);
/* What the timeline draws, from the run's fold (timeline.c): a bar per node
 * (log->nodes order, at most 256) from its start to its stop (an open one: to
 * the last record), its row and its type's index (types in first-seen order,
 * at most 16; later ones share the last colour); a span per generation from
 * its launch (init record's t less init_s, else its first record) to its end
 * (its end record, else the next generation's first record, else the last
 * record), labelled "gen K MEMBERSHIP" (the fold's: without an init or
 * iteration record, the nodes its node records left up), a failed one (no end
 * record, a later generation, no decision of its own that changed the
 * membership) marked and labelled "failed", unless its controller was stopped
 * and a restarted one continued the run (the next generation "continued", or
 * an adoption of a node of it): "(controller stopped)", not marked. */
struct pit_timeline {
  double tmax;                       /* the last record's t */
  int nbars;
  struct pit_timeline_bar { double x0, x1; int row, type; } *bars;      /* owned */
  int ntypes;
  char types[16][PIT_NAME_MAX];
  int ngens;
  struct pit_timeline_gen { double x0, x1; int failed; char label[128]; } *gens; /* owned */
};
int pit_timeline_build(const struct pit_runlog *log, struct pit_timeline *tl, struct pit_err *e);
void pit_timeline_release(struct pit_timeline *tl);

/* ---------------- a run's status (status.c): pitstop status ----------------
 * What an elastic run (pitstop run) is doing, or did, read from its directory
 * by any process while it runs: the run log's fold (record.h) of its events
 * file, priced on billed seconds (catalog.h: pit_node_cost), its t_p and the
 * finish and cost predicted with 95% intervals (pit_predict_inputs and
 * pit_predict over the same records, as pitstop predict does). The run is
 * "running" while a controller holds DIR/lock (its pid alive), "finished" when
 * its last generation ended done and every node stopped, else "stopped" (a
 * controller that died or was stopped: pitstop run --run ID resumes it). */
struct pit_status {
  char dir[1024], events[1100]; /* the run directory ("" when given an events file) and its events file */
  struct pit_runlog log;        /* the fold; owned */
  const char *state;            /* "running", "finished", "stopped" (static strings) */
  int controller_pid;           /* the live controller's pid; 0 when none */
  struct pit_membership membership; /* the current generation's; before its first iteration, the nodes up */
  int64_t steps_done;           /* steps done (the last step + 1); 0 before any */
  int64_t steps_total;          /* the job's steps (its planned_iters); -1 unknown */
  double t;                     /* run time of the last record */
  double tp, tp_half;           /* PIT time of the run's last configuration, 95% half-width; NaN unknown */
  double spend;                 /* US$ billed so far: every node, up ones until t */
  double finish_s, finish_lo, finish_hi; /* run time at the job's end, predicted (finished: t) */
  double cost, cost_lo, cost_hi;/* the run's whole cost, predicted: spend + the nodes up now until the end */
  char note[512];               /* why there is no prediction ("" when there is one) */
  double *node_billed_s, *node_cost; /* (log.nnodes) billed seconds and US$ of each node; owned */
  int unpriced;                 /* nodes whose type the catalog lacks (billed on raw seconds) */
  const char *priced_from;      /* "records": the run's own catalog, from its node records' rows;
                                   "catalog": the one given; NULL: none (raw seconds) */
  struct pit_catalog own;       /* the run's own catalog when priced_from is "records"; owned */
};
/* RUN|DIR|FILE → the run's directory and events file: a directory holding
 * events.jsonl, an events file, or a run id under runs/ (where pitstop run puts
 * a run without --checkpoint-dir); NULL: the newest run under runs/.
 * PIT_ENOTFOUND naming what was tried. */
int pit_status_find(const char *arg, char *dir, size_t ndir, char *events, size_t nevents, struct pit_err *e);
/* Loads the status of arg (as pit_status_find); cat prices the nodes; NULL: the
 * run's own catalog, rebuilt from its node start records' rows
 * (pit_catalog_from_runlog) when every node carries one, else fallback (NULL:
 * raw seconds at each node record's price). Errors name the file (and line). */
int pit_status_load(struct pit_status *s, const char *arg, const struct pit_catalog *cat,
                    const struct pit_catalog *fallback, struct pit_err *e);
void pit_status_release(struct pit_status *s);
/* As a terminal table or one JSON object (PIT_SUMMARY_CSV: PIT_EARG), with the
 * last ndec decisions (keeps included; -1: all). Field names in docs/run.md. */
int pit_status_write(FILE *f, const struct pit_status *s, enum pit_summary_format fmt, int ndec, struct pit_err *e);
/* The run against fixed memberships, for report.html: the caller's replay of
 * each membership the run ran as a fixed one for the whole job (the policy
 * module's pit_replay_log, billed through the catalog), as rows. */
struct pit_html_fixed_row {
  struct pit_membership m;
  double cost, time_s; /* US$ billed, s */
  int complete;        /* 0: its replay stopped early */
};
struct pit_html_fixed {
  double run_cost, run_time_s; /* the run itself: its node records billed, first start to last stop */
  int n, best;                 /* rows; the best fixed one's index (-1: none meets the deadline or budget) */
  const struct pit_html_fixed_row *rows;
  int64_t steps_run, steps;    /* the steps the run made, of the job's: fewer when it was stopped (the
                                  replays stop there too) */
};
/* report.html (html.c): one self-contained page, no network: the run in a few
 * lines, the timeline chart png (a PNG file, e.g. from pit_plot_timeline;
 * NULL: none) embedded as a base64 data URI, the run's cost against the best
 * fixed membership (fixed; NULL: none weighed, said so), the generations, the
 * nodes with their billed cost and every decision with its alternatives and
 * reason. Written atomically to path; errors name the file. */
int pit_status_html(const struct pit_status *s, const char *png, const struct pit_html_fixed *fixed,
                    const char *path, struct pit_err *e);

#endif
