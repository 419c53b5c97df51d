/* pitstop/sweep.h — a grid of training runs (ranks × global batch × repeats),
 * each launched as `mpirun -np R pitstop train ... --db PATH --run ID` (train's
 * options given back as argv by trainopts' table), and
 * exports of the stored runs in the shapes earlier experiments used
 * (docs/sweep.md).
 *
 * Invariants: commands are argv arrays (never a shell string); run ids are
 * "<sweep id>-r<R>-b<B>-<repeat>", so a sweep's runs are found in the store by
 * their prefix; the library never prints — the caller reports each cell;
 * export files are written atomically.
 */
#ifndef PITSTOP_SWEEP_H
#define PITSTOP_SWEEP_H

#include <stdint.h>

#include "pitstop/trainopts.h"
#include "pitstop/util.h"

#define PIT_SWEEP_MAX_VALUES 32
#define PIT_SWEEP_MAX_EXTRA 64

struct pit_sweep_spec {
  char id[64];                            /* sweep id: prefix of every run id */
  int ranks[PIT_SWEEP_MAX_VALUES];
  int nranks;
  int64_t batch[PIT_SWEEP_MAX_VALUES];    /* global batch sizes */
  int nbatch;
  int repeat;                             /* runs per cell (>= 1) */
  struct pit_train_opts train;            /* every cell's train options (model and data required;
                                             exactly one of epochs, max_iters > 0); batch, db and
                                             run are set per cell; strings borrowed */
  const char *hostfile;                   /* mpirun --hostfile; may be NULL */
  const char *db;                         /* store every run goes to */
  const char *mpirun;                     /* launcher program (default "mpirun") */
  const char *train_cmd;                  /* the pitstop program that runs `train` */
  const char *mpirun_args[PIT_SWEEP_MAX_EXTRA]; /* extra launcher arguments, before the program */
  int nmpirun_args;
  const char *train_args[PIT_SWEEP_MAX_EXTRA];  /* extra train arguments, appended */
  int ntrain_args;
};
void pit_sweep_spec_init(struct pit_sweep_spec *s);
/* Parses "1,2,4" into values (each > 0, at most PIT_SWEEP_MAX_VALUES, no repeats). */
int pit_sweep_parse_list(const char *s, int64_t *values, int *n, const char *what, struct pit_err *e);
/* Checks the spec (lists non-empty, epochs xor max_iters, ...). */
int pit_sweep_check(const struct pit_sweep_spec *s, struct pit_err *e);

/* One run of the grid, with its command. */
struct pit_sweep_cell {
  char run[128];
  int ranks;
  int64_t batch;
  int rep;
  char **argv;        /* NULL-terminated; owned */
  int argc;
  int stored;         /* set by pit_sweep_stored: PIT_SWEEP_ABSENT, _COMPLETE or _PARTIAL */
};
enum { PIT_SWEEP_ABSENT = 0, PIT_SWEEP_COMPLETE = 1, PIT_SWEEP_PARTIAL = 2 };
/* The cells in the order they run: repeat-major (every configuration once,
 * then again), so slow drift of the machine affects all configurations alike. */
int pit_sweep_plan(const struct pit_sweep_spec *s, struct pit_sweep_cell **cells, int *n, struct pit_err *e);
void pit_sweep_cells_free(struct pit_sweep_cell *cells, int n);
/* Runs one cell and waits: *status is the launcher's exit status (128 + signal
 * if killed); 0 when it ran at all, PIT_ENOTFOUND when the launcher cannot be started. */
int pit_sweep_cell_run(const struct pit_sweep_cell *c, int *status, struct pit_err *e);
/* Marks each cell by what the store db already holds of its run: nothing, a
 * complete run (it has an end record), or a partial one (records but no end:
 * an interrupted attempt). A missing store holds nothing. */
int pit_sweep_stored(const char *db, struct pit_sweep_cell *cells, int n, struct pit_err *e);

/* ---- exports ---- */

/* Seed 002's CSV: per configuration (nodes, ranks per node, global batch) a
 * file with the header "total,t0,...,t<R-1>" and one line per run: the run's
 * total time, then each rank's epoch-0 time. Runs: those whose name starts
 * with prefix (NULL or "": all runs of the store). out: a file when the runs
 * hold one configuration; an existing directory receives one file per
 * configuration, "nnode-N_nproc-P_batch_size-B.csv" (P = ranks per node).
 * *nfiles: files written. */
int pit_sweep_export_seed002(const char *db, const char *prefix, const char *out, int *nfiles,
                             struct pit_err *e);

#endif
