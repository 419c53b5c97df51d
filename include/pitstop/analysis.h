/* pitstop/analysis.h — statistics over iteration records (docs/analysis.md).
 *
 * Layers, each usable alone:
 *  1. numbers: descriptive statistics with a stated quantile definition,
 *     MSER-m warm-up truncation, batch-means 95% interval, Student t quantiles;
 *  2. configurations: the fields of a run's init record config (model, batch,
 *     ranks, nodes, itype, threads, any other key) used to group runs;
 *  3. runs: struct pit_series collects one or more runs' records (fed one
 *     record at a time, from the store or from JSON Lines), and
 *     pit_series_summarize() turns it into a struct pit_summary: the steady
 *     state (warm-up and non-paramount iterations dropped), the PIT time t_p
 *     with its interval, per-rank imbalance, totals and shares, and the
 *     per-epoch quantities the prediction T = T_start + T_init + N_iter·t_p +
 *     N_epoch·(T_val + T_epoch_end) + N_ckpt·T_ckpt needs.
 *
 * Invariants: functions never print or exit; absent values are NaN (doubles)
 * or -1 (counts that could not be determined); NaN inputs are skipped.
 */
#ifndef PITSTOP_ANALYSIS_H
#define PITSTOP_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "pitstop/record.h"
#include "pitstop/util.h"

/* ---------------- 1. numbers ---------------- */

/* Quantile p in [0,1] of sorted x[0..n-1] (no NaN), Hyndman & Fan type 7 (the
 * default of R and NumPy): h = (n-1)p, q = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
 * NaN if n == 0. */
double pit_quantile_sorted(const double *x, size_t n, double p);

struct pit_stats {
  int64_t n;                 /* values counted (NaN skipped) */
  double sum, mean, median;  /* NaN when n == 0 */
  double sd;                 /* sample standard deviation (n-1 divisor); NaN when n < 2 */
  double min, max, p5, p95;  /* type-7 quantiles */
};
/* Statistics of x (need not be sorted; not modified). PIT_ENOMEM only. */
int pit_stats_compute(struct pit_stats *st, const double *x, size_t n);
void pit_stats_clear(struct pit_stats *st);

/* MSER-m truncation (White 1997; m = 5 is MSER-5): the series is cut into
 * k = n/m batch means Z_j (a trailing partial batch is ignored) and the number
 * of leading batches d in [0, k/2] minimising
 *     MSER(d) = Σ_{j>d} (Z_j − mean(Z_{d+1..k}))² / (k − d)²
 * is chosen (smallest d on ties). *drop: the number of observations to drop,
 * m·d; 0 when k < 4 (too short to tell). NaN values must not be present.
 * Returns 0, or PIT_ENOMEM (then *drop is 0 and must not be used). */
int pit_mser(const double *x, size_t n, size_t m, size_t *drop, struct pit_err *e);
#define PIT_MSER_BATCH 5

/* The warm-up pitstop reports (src/analysis/warmup.c has the rule): leading
 * iterations slower than the steady state's own spread, from medians of
 * batches of PIT_MSER_BATCH values compared with the second half's median
 * and robust spread (MAD). Isolated spikes and slow drift are not warm-up (MSER-5 cuts
 * at them). *drop: a multiple of 5, at most half the series; 0 when n < 20.
 * PIT_ENOMEM only. */
int pit_warmup(const double *x, size_t n, size_t *drop);
/* Slow drift of a (steady) series: least-squares slope of its batch medians
 * (batches of 5) against the iteration index, divided by the mean — the
 * relative change of the step time per iteration (1e-4: +10% per 1,000
 * iterations); *se (if not NULL) its standard error, same unit, widened by
 * t(k−2)/z for its k batches: 2·se is a 95% half-width however few the
 * batches (4 batches, n = 20: 2.2 times the plain standard error; 10: 1.18;
 * 40: 1.03). NaN when n < 20. PIT_ENOMEM only. */
int pit_drift(const double *x, size_t n, double *drift, double *se);

/* Student t quantile: the p-quantile (0 < p < 1) of t with df >= 1 degrees of
 * freedom (inverse of the regularised incomplete beta; accurate to ~1e-10). */
double pit_t_quantile(double p, int df);

/* 95% interval for the mean of an autocorrelated series by batch means:
 * k = PIT_BM_BATCHES batches of b = floor(n/k) consecutive observations when
 * n >= 2k; otherwise k = floor(n/2) batches of 2; the n − k·b leading
 * observations left over belong to no batch. mean = mean of all n values; the
 * half-width is t_{0.975, k−1} · sd(batch means) / sqrt(k). Fewer than 4
 * observations: lo = hi = NaN, nbatches = 0. */
#define PIT_BM_BATCHES 20
struct pit_interval {
  double mean, lo, hi, half;
  int64_t n;
  int nbatches;
  int64_t batch_size;
};
int pit_batch_means(const double *x, size_t n, struct pit_interval *ci);

/* ---------------- 2. configurations ---------------- */

/* The configuration fields pitstop groups by, from an init record: config JSON
 * keys "model", "batch" (or "batch_size"), "threads", "itype" (or
 * "instance_type"), "data", "membership"; "ranks" and "nodes" from the
 * record's own fields (else from the config, else the membership's totals).
 * Absent: "" / -1.
 * members: the config's "membership" (record.h) when it has a valid one;
 * else one entry {itype, nodes (1 when unknown), ranks / nodes when that
 * divides} when itype is known; else empty. A malformed "membership" is
 * ignored (as any malformed config key is).
 * itype: the one instance type when members has one entry, else the
 * membership's canonical text ("c5.xlarge:1+m5.large:2x1"), so grouping by
 * itype keeps telling memberships apart. */
struct pit_config {
  char model[PIT_NAME_MAX];
  char itype[PIT_MEMBERSHIP_TEXT_MAX];
  struct pit_membership members;
  char data[PIT_NAME_MAX];
  int64_t batch;
  int ranks, nodes, threads;
};
void pit_config_clear(struct pit_config *c);
void pit_config_from_record(struct pit_config *c, const struct pit_record *init);
/* Canonical text "model=cnn batch=64 ranks=2 nodes=1 itype=- threads=1" (the
 * configurations.key of the store). */
void pit_config_key(const struct pit_config *c, char *buf, size_t n);
/* Value of one grouping field as text ("-" if absent): the struct fields above
 * by name, or any other top-level key of the config JSON (numbers printed %g). */
void pit_config_field(const struct pit_config *c, const char *config_json, const char *field, char *buf,
                      size_t n);
/* The same field as a number, exact (not through pit_config_field's %g text:
 * 1234567 samples would read back as 1234570); NaN when absent or not a
 * number. */
double pit_config_num(const struct pit_config *c, const char *config_json, const char *field);

/* The configuration fields, one table (config.c): the key, the default
 * --group-by, chart lines and labels and sweep configurations all read it.
 * A field set is a bit mask, bit f for field f. */
enum pit_config_field_id {
  PIT_CF_MODEL, PIT_CF_BATCH, PIT_CF_RANKS, PIT_CF_NODES, PIT_CF_ITYPE, PIT_CF_THREADS, PIT_CF_DATA,
  PIT_CF_COUNT
};
#define PIT_CF_BIT(f) (1u << (f))
struct pit_config_field_def {
  const char *name;      /* "batch" */
  const char *alias;     /* another accepted name ("batch_size"), or NULL */
  int in_key;            /* part of the canonical key, the default grouping and the chart lines */
  int derived_from;      /* a field this one usually follows (threads = cores / ranks), or -1 */
  const char *label_1;   /* chart label, "%s" = the value: "batch %s", "%s rank" */
  const char *label_n;   /* the same for numbers other than 1 ("%s ranks"), or NULL */
};
/* NULL when f is out of range. */
const struct pit_config_field_def *pit_config_field_def(int f);
/* The field named name (or its alias); -1 if it is not one of the table's. */
int pit_config_field_find(const char *name);
int pit_config_field_equal(const struct pit_config *a, const struct pit_config *b, int f);
/* Equal in every field of the set. */
int pit_config_same(const struct pit_config *a, const struct pit_config *b, unsigned fields);
/* The set of key fields (model, batch, ranks, nodes, itype, threads). */
unsigned pit_config_key_fields(void);
/* The fields of the set that are not equal in all of cfgs[0..n-1]. */
unsigned pit_config_differing(const struct pit_config *const *cfgs, int n, unsigned fields);
/* The fields of the set that the user varied among cfgs[0..n-1]: those that
 * differ, less a derived field that is a function of its source among these
 * configurations (threads that change only with ranks). */
unsigned pit_config_varied(const struct pit_config *const *cfgs, int n, unsigned fields);
/* The field as a label ("batch 64", "2 ranks", "cnn"); returns 0 and writes
 * "" when the field is absent. */
int pit_config_field_label(const struct pit_config *c, int f, char *buf, size_t n);

/* ---------------- 3. runs ---------------- */

/* Flags of one iteration (why it is not paramount). */
enum {
  PIT_IT_EPOCH_EDGE = 1,   /* first or last iteration seen in its (gen, epoch) */
  PIT_IT_NEAR_EVENT = 2,   /* next to a validation or checkpoint record */
  PIT_IT_RESUME = 4,       /* first iteration of a generation > 0 (after a resume) */
  PIT_IT_WARMUP = 8,       /* dropped as warm-up (pit_warmup) */
  PIT_IT_OTHER_RANK = 16   /* one rank's view of a rank other than the series' rank */
};

struct pit_series_iter {
  int64_t step, epoch, iter, batch;
  int gen, rank, run;      /* run: index into pit_series.runs */
  int flags;
  double step_s, data_s, t;
  int nranks;
  int64_t ranks_off;       /* offset into pit_series.compute_s / wait_s */
};

/* A run's generations on one configuration: an elastic run has one per change
 * of membership, in order (1, 2, then 1 node: three); a run on one
 * configuration, one; a run with no init record's config, none. */
struct pit_series_seg {
  int gen_from;            /* its first generation (the next segment's gen_from ends it) */
  char key[160];           /* pit_config_key of its config */
  char *config;            /* JSON text of its first init record; owned */
  struct pit_config cfg;   /* that config, parsed */
  double end_total_s;      /* its end records' total_s summed (NaN if none) */
  double t_from;           /* t of the last end record before it (NaN: it is the run's first) */
  double last_t;           /* largest t seen in it (NaN if none) */
  int ends;                /* its end records */
};

struct pit_series_run {
  char name[PIT_NAME_MAX];
  char *config;            /* JSON text of the first init record; owned; may be NULL */
  struct pit_config cfg;
  double end_total_s;      /* sum of end records' total_s (NaN if none) */
  double last_t;           /* largest t seen (NaN if none) */
  int rebalances;          /* batch_shares decision records (--batch-shares auto) */
  char shares[96];         /* the last one's shares, "49/15"; "" if none */
  int ends;                /* end records (a run that ended has one per generation) */
  struct pit_series_seg *segs; /* owned, nsegs of them: the last is the configuration the run
                              runs on now (an elastic run's current membership) */
  int nsegs;
  size_t capseg;
  int over;                /* 1 when the run's latest generation ended and the run with it: its end
                              record says "done" (or has no status: a parsed log's total), or
                              is a --until-steady stop (a profile); 0 while a generation runs,
                              between an elastic run's generations, or after a resumable stop */
  int ended_ctl;           /* 1 when that end is the controller's "done" for a workload that wrote
                              none (detail "by": "controller": a script that exited 0): the job
                              was what the run did (pit_predict_inputs, pit_predict_own_job) */
  int gen_last;            /* the highest generation of any record */
  int ended_gen;           /* the generation of the last end record (-1 if none): the latest
                              generation has ended when ended_gen >= gen_last */
  double ended_t;          /* t of the last end record (NaN if none or no clock) */
};

/* A duration from a non-iteration record. */
struct pit_series_event {
  enum pit_rec_type type;  /* PIT_REC_INIT, _VALIDATION, _CHECKPOINT or _EPOCH */
  int run, rank;
  double v;                /* init_s, val_s, ckpt_s or epoch_s (NaN if absent) */
  double rdzv_s;           /* init only */
  int64_t epoch;           /* the record's epoch (-1 if none) */
  int gen;                 /* the record's generation */
};

/* One or more runs' records, kept in arrival order. Feed every record of a
 * run before the next run's (the store and the CLI's per-run reading do);
 * pit_series_append() concatenates whole series (runs into a group). */
struct pit_series {
  struct pit_series_run *runs;
  int nruns;
  size_t caprun;           /* capacities (elements) of the arrays, grown by PIT_GROW */
  struct pit_series_iter *it;
  int64_t nit;
  size_t capit;
  double *compute_s, *wait_s;  /* per-rank times of all iterations, concatenated */
  int64_t nrank_vals;
  size_t caprank, capwait;     /* of compute_s and of wait_s */
  struct pit_series_event *ev;
  int64_t nev;
  size_t capev;
  int pending_event;       /* a validation/checkpoint arrived after the last iteration */
};
void pit_series_init(struct pit_series *s);
void pit_series_release(struct pit_series *s);
int pit_series_add(struct pit_series *s, const struct pit_record *r, struct pit_err *e);
/* Appends a copy of every run of src to dst. */
int pit_series_append(struct pit_series *dst, const struct pit_series *src, struct pit_err *e);
/* The parts s is split into by configuration: when s holds one run that
 * changed configuration (an elastic run's resize), its segments; else one,
 * all of s. pit_series_part: part k's segment (NULL when the part is all of s).
 * pit_series_append_part: appends part k to dst — a segment as one run with
 * its generations' iterations and events, its config, end records' total and
 * time (last_t counted from its t_from); all of s as pit_series_append. */
int pit_series_parts(const struct pit_series *s);
const struct pit_series_seg *pit_series_part(const struct pit_series *s, int k);
int pit_series_append_part(struct pit_series *dst, const struct pit_series *src, int k, struct pit_err *e);
/* The run's last segment (its current configuration), NULL if it has none. */
const struct pit_series_seg *pit_series_last_seg(const struct pit_series_run *r);
/* The first generation of the run's current configuration when it changed
 * configuration (an elastic run's resize: its last segment's gen_from), else 0. */
int pit_series_member_from(const struct pit_series_run *r);

struct pit_summary {
  int nruns;
  int64_t iters;                 /* iteration records (of the series' rank) */
  struct pit_stats step, data, epoch, validation, init, rdzv, checkpoint;
  /* steady state */
  int64_t non_paramount;         /* epoch edges, near validation/checkpoint, after resume */
  int64_t warmup;                /* dropped by pit_warmup (summed over runs and generations) */
  double drift;                  /* pit_drift of the retained step times, per iteration: the
                                    segments' (run, gen) drifts weighted by their sizes; NaN if
                                    no segment has 20 retained values */
  double drift_se;               /* its standard error (the segments' in quadrature, same weights) */
  struct pit_interval tp;        /* PIT time t_p: mean of the remaining step_s, 95% batch-means interval */
  /* prediction inputs (per-epoch and per-event costs) */
  double iters_per_epoch;        /* largest iter+1 seen in an epoch, or the iters_per_epoch an init
                                    record's config states (pitstop parse: L of "i/L") if larger; NaN if neither */
  double epoch_edge_extra_s;     /* mean step_s of epoch-edge iterations − t_p (NaN if none) */
  /* per-rank imbalance (from compute_s/wait_s arrays, or from one-rank records) */
  int nranks;
  int slow_rank;                 /* rank with the largest mean compute_s; -1 if unknown */
  double slow_compute_s;         /* its mean compute_s */
  double median_rank_compute_s;  /* median over ranks of mean compute_s */
  double slow_excess;            /* slow_compute_s / fastest rank's mean − 1 (0.25 = 25% slower) */
  double wait_share;             /* Σ wait_s / Σ (compute_s + wait_s) over ranks and iterations */
  int rebalances;                /* batch_shares decisions, summed over the runs */
  char shares[96];               /* the last run's last shares ("49/15"), "" if none */
  double *rank_compute_s, *rank_wait_s; /* (nranks) means; owned */
  /* totals and shares (of total_s); the sums count records of rank -1 or 0
   * only, so one-line-per-rank foreign logs are not counted once per rank */
  double total_s;                /* Σ over runs of the end record's total_s, else of the last t */
  double init_total_s, epoch_total_s, validation_total_s, checkpoint_total_s;
  double init_share, epoch_share, validation_share, checkpoint_share;
};
void pit_summary_release(struct pit_summary *sm);
/* Computes the summary of everything fed to s. The series' flags are updated
 * (warm-up and paramount marks). PIT_ENOTFOUND if s holds no record at all. */
int pit_series_summarize(struct pit_series *s, struct pit_summary *sm, struct pit_err *e);

#endif
