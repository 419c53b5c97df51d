/* progress.h — private to src/control/: iteration records from progress
 * lines timed by their arrival (progress.c). */
#ifndef PIT_CONTROL_PROGRESS_H
#define PIT_CONTROL_PROGRESS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "pitstop/record.h"

typedef int (*ctl_progress_emit_fn)(void *ctx, const struct pit_record *r, struct pit_err *e);

struct ctl_progress {
  regex_t re[3];
  int compiled;
  /* this generation */
  int have;                   /* a progress line seen */
  double t_launch;            /* run seconds the generation was launched */
  double t_last;              /* arrival of the last progress line */
  int64_t step_last;          /* the last step it completed (-1: none) */
  int64_t open_epoch;         /* epochs shape: the epoch begun, its steps not yet recorded (-1) */
  int pending;                /* samples shape: the first line seen at t_pending, its spacing not yet known */
  int init_due;               /* epochs shape: the init record (of the first line, at t_init) goes out
                                 with the first steps, so that a protocol record printed after that
                                 line is the generation's first (the controller then ignores these) */
  double t_init;
  double t_pending;
  int64_t span_rest;          /* while a span's records go out: how many follow the one being emitted
                                 (0: it is the span's last); a span is one measurement, its records
                                 share its time */
  /* learned from the lines (kept across generations) */
  int64_t per_epoch;          /* steps per epoch (-1: unknown) */
  int64_t epochs;             /* N of "e/N" (-1) */
  int64_t batch;              /* samples per step (-1) */
  int64_t samples;            /* samples per epoch (samples shape) */
  int64_t delta;              /* samples shape: samples between two lines (-1) */
  int64_t last_samples, last_samples_epoch;
};

/* -1 when the patterns cannot be compiled (nothing else fails). */
int ctl_progress_init(struct ctl_progress *p);
void ctl_progress_release(struct ctl_progress *p);
/* A generation was launched at run seconds t_launch. */
void ctl_progress_gen(struct ctl_progress *p, double t_launch);
/* Whether line is one of the shapes above (rank 0's or not, behind or not):
 * such a line is progress.c's, not the record parser's. */
int ctl_progress_shape(const struct ctl_progress *p, const char *line, size_t n);
/* One line of the workload's output that arrived at run seconds t: 1 when it
 * was a progress line (records emitted, t in run seconds), 0 when not, < 0
 * when emit failed. */
int ctl_progress_line(struct ctl_progress *p, const char *line, size_t n, double t, ctl_progress_emit_fn emit,
                      void *ctx, struct pit_err *e);
/* The generation's program ended cleanly at t: the steps of the epoch it had
 * begun (epochs shape) are recorded as done at t, untimed (step_s NaN): no
 * line marked that epoch's end, and the time up to t holds the program's
 * exit (process-group teardown, interpreter exit), not only its steps. */
int ctl_progress_end(struct ctl_progress *p, double t, ctl_progress_emit_fn emit, void *ctx, struct pit_err *e);
/* Epoch `epoch` ended at t (a snapshot saved after it): recorded now if it is
 * the epoch begun (epochs shape). */
int ctl_progress_close(struct ctl_progress *p, int64_t epoch, double t, ctl_progress_emit_fn emit, void *ctx,
                       struct pit_err *e);
/* The job's steps: epochs (--epochs) × steps per epoch, else samples
 * (--samples) / batch, else the log's N × L; -1 while unknown. */
int64_t ctl_progress_total(const struct ctl_progress *p, int64_t epochs, int64_t samples);

#endif
