/* progress.c — iteration records from the progress lines of a program that
 * prints no times, timed by their arrival at the controller.
 *
 * Three shapes (the PyTorch examples' and the DDP tutorial's). A line of one of
 * them is this file's, not the record parser's (whose generic reader would
 * make an untimed iteration record of it): the controller asks
 * ctl_progress_shape first.
 *  - iterations: "[e/N][i/L] ..." (0-based epoch e of N, iteration i of L),
 *    printed after each iteration;
 *  - samples: "Train Epoch: e [n/N (p%)] ..." (1-based epoch, n samples of
 *    N done), printed every few batches: one record per line, its batch the
 *    samples between two lines, so a "step" is the work between two lines;
 *  - epochs: "[GPUr] Epoch e | Batchsize: b | Steps: L" (rank r's epoch e
 *    begins, L steps): L records of epoch e when the next epoch begins (or
 *    the program ends, or says it saved a snapshot after epoch e), only
 *    rank 0's lines; L stays the first generation's (the tutorial's epoch has
 *    fewer steps per rank on more ranks: a step stays 1/L of an epoch).
 * The time between two progress lines is divided evenly over the steps they
 * span; each record's t is its share of that span, so a log's clock (the
 * records' t) and step times agree. A span is one measurement (span_rest
 * tells the receiver which record ends it). The epoch the program was in
 * when it exited is recorded untimed: its end was never printed. The first line of a generation ends its
 * start: an init record (launch → that line), and its own step has no time.
 *
 * Invariants: pure text and arithmetic, no clock and no I/O (the caller
 * passes the arrival time); steps never go backwards within a generation
 * (a line behind the last one is skipped); a line that is none of the
 * shapes produces nothing. */
#define _GNU_SOURCE
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/progress.h"

enum { SHAPE_ITERS, SHAPE_SAMPLES, SHAPE_EPOCHS, NSHAPES };
static const char *const shape_re[NSHAPES] = {
    "^\\[([0-9]+)/([0-9]+)\\]\\[([0-9]+)/([0-9]+)\\]",
    "^Train Epoch: ([0-9]+) \\[([0-9]+)/([0-9]+) \\(",
    "^\\[[A-Za-z]*([0-9]+)\\] Epoch ([0-9]+) \\| Batchsize: ([0-9]+) \\| Steps: ([0-9]+)",
};

int ctl_progress_init(struct ctl_progress *p) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < NSHAPES; i++)
    if (regcomp(&p->re[i], shape_re[i], REG_EXTENDED) != 0) {
      for (int k = 0; k < i; k++)
        regfree(&p->re[k]);
      return -1;
    }
  p->compiled = 1;
  p->per_epoch = p->epochs = p->batch = p->delta = -1;
  ctl_progress_gen(p, 0);
  return 0;
}

void ctl_progress_release(struct ctl_progress *p) {
  if (p->compiled)
    for (int i = 0; i < NSHAPES; i++)
      regfree(&p->re[i]);
  p->compiled = 0;
}

void ctl_progress_gen(struct ctl_progress *p, double t_launch) {
  p->have = 0;
  p->t_launch = t_launch;
  p->step_last = -1;
  p->open_epoch = -1;
  p->pending = 0;
  p->init_due = 0;
}

static int64_t num(const char *s, const regmatch_t *m) { return strtoll(s + m->rm_so, NULL, 10); }

static int emit_iter(struct ctl_progress *p, int64_t step, double t, double step_s, ctl_progress_emit_fn emit,
                     void *ctx, struct pit_err *e) {
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_ITER;
  r.step = step;
  r.epoch = p->per_epoch > 0 ? step / p->per_epoch : 0;
  r.iter = p->per_epoch > 0 ? step % p->per_epoch : step;
  r.batch = p->batch > 0 ? p->batch : 0;
  r.step_s = step_s;
  r.t = t;
  int rc = emit(ctx, &r, e);
  pit_record_release(&r);
  return rc;
}

/* Records for steps (step_last, step], the span (t_last, t] divided evenly;
 * untimed: all at t with no step time. */
static int emit_init(struct ctl_progress *p, double t, ctl_progress_emit_fn emit, void *ctx, struct pit_err *e);
static int emit_span_as(struct ctl_progress *p, int64_t step, double t, int untimed, ctl_progress_emit_fn emit,
                        void *ctx, struct pit_err *e) {
  if (p->init_due) {
    p->init_due = 0;
    if (emit_init(p, p->t_init, emit, ctx, e) < 0)
      return -1;
  }
  int64_t k = step - p->step_last;
  double dt = t - p->t_last;
  for (int64_t j = 1; j <= k; j++) {
    p->span_rest = k - j;
    int rc = untimed ? emit_iter(p, p->step_last + j, t, NAN, emit, ctx, e)
                     : emit_iter(p, p->step_last + j, p->t_last + dt * (double)j / (double)k, dt / (double)k, emit,
                                 ctx, e);
    if (rc < 0)
      return rc;
  }
  p->span_rest = 0;
  p->step_last = step;
  p->t_last = t;
  return 0;
}

static int emit_span(struct ctl_progress *p, int64_t step, double t, ctl_progress_emit_fn emit, void *ctx,
                     struct pit_err *e) {
  return emit_span_as(p, step, t, 0, emit, ctx, e);
}

/* The generation's first progress line: its init record. */
static int emit_init(struct ctl_progress *p, double t, ctl_progress_emit_fn emit, void *ctx, struct pit_err *e) {
  char cfg[256];
  int at = snprintf(cfg, sizeof cfg, "{\"timed_by\":\"arrival\"");
  if (p->per_epoch > 0)
    at += snprintf(cfg + at, sizeof cfg - (size_t)at, ",\"iters_per_epoch\":%lld", (long long)p->per_epoch);
  if (p->epochs > 0 && p->per_epoch > 0)
    at += snprintf(cfg + at, sizeof cfg - (size_t)at, ",\"planned_iters\":%lld",
                   (long long)(p->epochs * p->per_epoch));
  if (p->batch > 0)
    at += snprintf(cfg + at, sizeof cfg - (size_t)at, ",\"batch\":%lld", (long long)p->batch);
  snprintf(cfg + at, sizeof cfg - (size_t)at, "}");
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_INIT;
  r.init_s = t - p->t_launch;
  r.t = t;
  r.ranks = 1;
  r.config = strdup(cfg);
  int rc = r.config ? emit(ctx, &r, e) : pit_err_set(e, PIT_ENOMEM, "out of memory");
  pit_record_release(&r);
  p->have = 1;
  return rc;
}

/* The shape of line (s: its copy, NUL-ended, at least 4001 bytes) and its
 * fields in m; -1 when none. */
static int match(const struct ctl_progress *p, const char *line, size_t n, char *s, regmatch_t m[5]) {
  if (!p->compiled || n == 0 || n > 4000)
    return -1;
  memcpy(s, line, n);
  s[n] = 0;
  for (int i = 0; i < NSHAPES; i++)
    if (regexec(&p->re[i], s, 5, m, 0) == 0)
      return i;
  return -1;
}

int ctl_progress_shape(const struct ctl_progress *p, const char *line, size_t n) {
  char s[4096];
  regmatch_t m[5];
  return match(p, line, n, s, m) >= 0;
}

int ctl_progress_line(struct ctl_progress *p, const char *line, size_t n, double t, ctl_progress_emit_fn emit,
                      void *ctx, struct pit_err *e) {
  char s[4096];
  regmatch_t m[5];
  int shape = match(p, line, n, s, m);
  if (shape < 0)
    return 0;
  int64_t step, a = num(s, &m[1]), b = num(s, &m[2]), c = num(s, &m[3]);
  int rc;
  if (shape == SHAPE_ITERS) { /* [e/N][i/L] */
    int64_t L = num(s, &m[4]);
    if (L <= 0 || b <= 0)
      return 0;
    p->per_epoch = L;
    p->epochs = b;
    step = a * L + c;
  } else if (shape == SHAPE_SAMPLES) { /* Train Epoch: e [n/N (p%)] */
    int64_t epoch = a > 0 ? a - 1 : 0;
    if (c <= 0)
      return 0;
    p->samples = c;
    if (p->delta <= 0 && b > 0 && p->last_samples_epoch == epoch && p->last_samples == 0)
      p->delta = b; /* the second line of an epoch: the samples between two lines */
    p->last_samples_epoch = epoch;
    p->last_samples = b;
    if (p->delta <= 0) { /* the very first line: kept until the second says the spacing */
      if (b != 0 || p->have || epoch != 0)
        return 0;
      p->pending = 1;
      p->t_pending = t;
      return 1;
    }
    p->per_epoch = (c + p->delta - 1) / p->delta;
    p->batch = p->delta;
    step = epoch * p->per_epoch + b / p->delta;
    if (p->pending && !p->have) { /* the first line, now that the spacing is known: step 0 */
      p->pending = 0;
      if ((rc = emit_init(p, p->t_pending, emit, ctx, e)) < 0)
        return rc;
      p->step_last = 0;
      p->t_last = p->t_pending;
      if ((rc = emit_iter(p, 0, p->t_pending, NAN, emit, ctx, e)) < 0)
        return rc;
    }
  } else { /* [GPUr] Epoch e | Batchsize: b | Steps: L — epoch e begins */
    int64_t L = num(s, &m[4]);
    if (a != 0 || L <= 0)
      return 0; /* rank 0's lines only */
    if (p->per_epoch <= 0) /* the first membership's: a step stays 1/L of an epoch when the ranks change */
      p->per_epoch = L;
    if (p->batch <= 0)
      p->batch = c;
    L = p->per_epoch;
    step = b * L - 1; /* the last step before epoch b */
    if (!p->have) {
      p->step_last = step;
      p->t_last = t;
      p->open_epoch = b;
      p->have = p->init_due = 1;
      p->t_init = t;
      return 1;
    }
    if (step < p->step_last)
      return 0;
    rc = step > p->step_last ? emit_span(p, step, t, emit, ctx, e) : 0; /* equal: closed by a save line */
    p->open_epoch = b;
    return rc < 0 ? rc : 1;
  }
  if (!p->have) {
    if ((rc = emit_init(p, t, emit, ctx, e)) < 0)
      return rc;
    p->step_last = step;
    p->t_last = t;
    return emit_iter(p, step, t, NAN, emit, ctx, e) < 0 ? -1 : 1;
  }
  if (step <= p->step_last)
    return 0;
  rc = emit_span(p, step, t, emit, ctx, e);
  return rc < 0 ? rc : 1;
}

/* The epoch begun, recorded up to t (untimed: see ctl_progress_end). */
static int close_open(struct ctl_progress *p, double t, int untimed, ctl_progress_emit_fn emit, void *ctx,
                      struct pit_err *e) {
  if (!p->have || p->open_epoch < 0 || p->per_epoch <= 0)
    return 0;
  int64_t step = (p->open_epoch + 1) * p->per_epoch - 1;
  p->open_epoch = -1;
  return step > p->step_last ? emit_span_as(p, step, t, untimed, emit, ctx, e) : 0;
}

int ctl_progress_end(struct ctl_progress *p, double t, ctl_progress_emit_fn emit, void *ctx, struct pit_err *e) {
  return close_open(p, t, 1, emit, ctx, e);
}

int ctl_progress_close(struct ctl_progress *p, int64_t epoch, double t, ctl_progress_emit_fn emit, void *ctx,
                       struct pit_err *e) {
  if (p->open_epoch != epoch)
    return 0;
  return close_open(p, t, 0, emit, ctx, e);
}

int64_t ctl_progress_total(const struct ctl_progress *p, int64_t epochs, int64_t samples) {
  if (p->per_epoch <= 0)
    return -1;
  if (epochs > 0)
    return epochs * p->per_epoch;
  if (samples > 0 && p->batch > 0)
    return (samples + p->batch - 1) / p->batch;
  if (p->epochs > 0)
    return p->epochs * p->per_epoch;
  return -1;
}
