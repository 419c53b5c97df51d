/* emit.c — where a training run's records go (rank 0 only): a JSON Lines sink
 * (--events FILE or - for stdout) and/or the SQLite store (--db), plus the live
 * progress line on stderr.
 * Invariants: every record carries the run id, generation and a time `t` in
 * seconds since the run started (monotonic clock; a resumed generation continues
 * from the checkpoint's time). The progress line is redrawn at most 4 times a
 * second and never goes to stdout. */
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

static void fmt_dur(char *buf, size_t n, double s) {
  if (!(s >= 0) || !isfinite(s))
    snprintf(buf, n, "?");
  else if (s < 60)
    snprintf(buf, n, "%.0fs", s);
  else if (s < 3600)
    snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
  else
    snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
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
  char eta_s[32];
  fmt_dur(eta_s, sizeof eta_s, eta);
  char ep[48];
  if (t->epochs > 0)
    snprintf(ep, sizeof ep, "epoch %lld/%lld", (long long)epoch + 1, (long long)t->epochs);
  else
    snprintf(ep, sizeof ep, "epoch %lld", (long long)epoch + 1);
  fprintf(stderr, "\r\033[K%s  iter %lld/%lld  step %lld  %.0f samples/s  loss %.4f  ETA %s", ep,
          (long long)iter + 1, (long long)t->epoch_iters, (long long)t->step, sps, t->loss_ema,
          final ? "0s" : eta_s);
  if (final)
    fputc('\n', stderr);
  fflush(stderr);
}
