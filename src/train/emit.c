/* emit.c — where a training run's records go (rank 0 only): a JSON Lines sink
 * (--events FILE or - for stdout) and/or the SQLite store (--db), plus the live
 * progress reports handed to the caller's callback (the CLI draws them).
 * Invariants: every record carries the run id, generation and a time `t` in
 * seconds since the run started (monotonic clock; a resumed generation continues
 * from the checkpoint's time). Progress is reported at most 4 times a second
 * (and at every epoch's and the run's end); nothing is printed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/train_impl.h"

double tr_time(const struct trainer *t) { return t->t_off + (pit_now() - t->t_gen0); }

int tr_sinks_open(struct trainer *t, int append, struct pit_err *e) {
  if (t->d->rank != 0)
    return 0;
  const struct pit_train_opts *o = t->o;
  int rc;
  if (o->events) {
    rc = pit_events_open_mode(&t->ev, o->events, append && strcmp(o->events, "-") != 0, e);
    if (rc < 0)
      return rc;
    t->have_ev = 1;
  }
  if (o->db) {
    rc = pit_store_open(&t->store, o->db, e);
    if (rc < 0)
      return rc;
    rc = pit_store_set_source(t->store, "train", e);
    if (rc < 0)
      return rc;
  }
  return 0;
}

int tr_emit(struct trainer *t, struct pit_record *r, struct pit_err *e) {
  if (t->d->rank != 0)
    return 0;
  snprintf(r->run, sizeof r->run, "%s", t->run);
  r->gen = t->gen;
  if (isnan(r->t))
    r->t = tr_time(t);
  int rc;
  if (t->have_ev) {
    if ((rc = pit_events_write(&t->ev, r, e)) < 0)
      return rc;
    /* live consumers (a controller tailing the file) see whole records promptly */
    double now = pit_now();
    if (r->type != PIT_REC_ITER || now - t->last_flush > 0.5) {
      t->last_flush = now;
      if ((rc = pit_events_flush(&t->ev, e)) < 0)
        return rc;
    }
  }
  if (t->store && (rc = pit_store_add(t->store, r, e)) < 0)
    return rc;
  return 0;
}

int tr_sinks_close(struct trainer *t, int ok, struct pit_err *e) {
  int rc = 0;
  if (t->have_ev) {
    if (ok)
      rc = pit_events_flush(&t->ev, e);
    pit_events_release(&t->ev);
    t->have_ev = 0;
  }
  if (t->store) {
    /* records already committed stay; the open transaction is committed too, so a
     * failed run keeps what it measured up to the failure */
    struct pit_err e2;
    int rc2 = pit_store_close(t->store, ok && rc == 0 ? e : &e2);
    t->store = NULL;
    if (rc == 0 && ok)
      rc = rc2;
  }
  return rc;
}

void tr_progress(struct trainer *t, int64_t epoch, int64_t iter, double loss, int final) {
  if (!t->o->progress || t->d->rank != 0)
    return;
  double now = pit_now();
  if (isfinite(loss))
    t->loss_ema = t->loss_ema == 0 ? loss : 0.95 * t->loss_ema + 0.05 * loss;
  if (!final && now - t->last_draw < 0.25)
    return;
  t->last_draw = now;
  double el = now - t->t_first;
  int64_t done = t->step - t->step0;
  double sps = el > 0 ? (double)t->samples / el : 0;
  int64_t total = t->epochs > 0 ? t->epochs * t->epoch_iters : t->o->max_iters;
  if (t->o->max_iters > 0 && t->o->max_iters < total)
    total = t->o->max_iters;
  double eta = done > 0 ? (double)(total - t->step) * el / (double)done : NAN;
  struct pit_train_progress p = {.event = PIT_TRAIN_PROGRESS, .epoch = epoch, .epochs = t->epochs > 0 ? t->epochs : 0,
                                 .iter = iter, .epoch_iters = t->epoch_iters, .step = t->step,
                                 .samples_per_s = sps, .loss_ema = t->loss_ema, .eta_s = final ? 0 : eta,
                                 .final = final, .accuracy = NAN, .epoch_s = NAN};
  t->o->progress(t->o->progress_ctx, &p);
}

void tr_progress_accuracy(struct trainer *t, int64_t epoch, double accuracy, double epoch_s) {
  if (!t->o->progress || t->d->rank != 0)
    return;
  struct pit_train_progress p = {.event = PIT_TRAIN_EPOCH_ACCURACY, .epoch = epoch, .epochs = t->epochs > 0 ? t->epochs : 0,
                                 .epoch_iters = t->epoch_iters, .step = t->step, .final = 1,
                                 .accuracy = accuracy, .epoch_s = epoch_s, .loss_ema = t->loss_ema,
                                 .samples_per_s = NAN, .eta_s = 0};
  t->o->progress(t->o->progress_ctx, &p);
}
