/* inputs.c — a run's records as the inputs of pit_predict (pit_predict_inputs):
 * the time of one iteration with its interval and drift, the iterations per
 * epoch, the global batch, init, validation, epoch-edge terms, and what a run
 * in progress has done.
 *
 * The time of one iteration: when every paramount iteration record carries a
 * clock (`t`, the records pitstop train and the line protocol write), it is the
 * interval between consecutive iteration records of one (run, generation,
 * epoch) — what an epoch's wall time is made of: the step, and whatever runs
 * between steps (data the step did not time, writing records, and on a shared
 * machine the time the process waited for a CPU); the interval right after an
 * epoch-edge iteration belongs to the edge (a log's first iteration is often
 * followed by one-off work: 0.3 s of 1.4 s iterations in a course trace).
 * Without a clock (most course
 * logs) it is the logged step time. Either series goes through
 * pit_steady_check: its warm-up, batch-means t_p interval and drift are the
 * prediction's.
 * Invariants: never prints; s is only read (pit_series_summarize must have
 * marked its iterations); PIT_ESTATE "too few iterations" names the run when
 * fewer than 4 iteration times remain after the warm-up, so t_p would have no
 * interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/predict.h"

/* Half-width of a 95% t interval from statistics (NaN with fewer than 2). */
static double stats_half(const struct pit_stats *s) {
  return s->n >= 2 ? pit_t_quantile(0.975, (int)s->n - 1) * s->sd / sqrt((double)s->n) : NAN;
}

/* A number of the config JSON (top-level key), NaN when absent. */
static double config_num(const struct pit_series *s, const char *key) {
  return s->nruns < 1 ? NAN : pit_config_num(&s->runs[0].cfg, s->runs[0].config, key);
}

enum { NOT_PARAMOUNT = PIT_IT_EPOCH_EDGE | PIT_IT_NEAR_EVENT | PIT_IT_RESUME | PIT_IT_OTHER_RANK };

/* Every paramount iteration of the series' rank carries a clock. */
static int clocked(const struct pit_series *s) {
  int any = 0;
  for (int64_t i = 0; i < s->nit; i++)
    if (!(s->it[i].flags & NOT_PARAMOUNT)) {
      if (!isfinite(s->it[i].t))
        return 0;
      any = 1;
    }
  return any;
}

/* The per-iteration times into x (room for s->nit; at[k]: the series index of
 * x[k]'s iteration): wall intervals between
 * consecutive iterations of one (run, gen, epoch) when wall, else step times;
 * of an elastic run, only the generations on its last configuration (an
 * earlier membership's pace is not the one the rest of the job runs at). */
static size_t iteration_times(const struct pit_series *s, int wall, double *x, int64_t *at) {
  size_t n = 0;
  const struct pit_series_iter *prev = NULL; /* the last iteration of the series' rank */
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if (it->flags & PIT_IT_OTHER_RANK)
      continue;
    if (it->gen < pit_series_member_from(&s->runs[it->run])) /* an earlier membership's pace */
      continue;
    int same = prev && prev->run == it->run && prev->gen == it->gen && prev->epoch == it->epoch;
    if (!(it->flags & NOT_PARAMOUNT)) {
      if (!wall) {
        if (isfinite(it->step_s)) /* an untimed step (its end was never printed) */
          at[n] = i, x[n++] = it->step_s;
      } else if (same && !(prev->flags & PIT_IT_EPOCH_EDGE) && it->t > prev->t)
        at[n] = i, x[n++] = it->t - prev->t;
    }
    prev = it;
  }
  return n;
}

/* The time so far of the generation running after ru's last end record: its
 * clock since that end (t goes on across generations), or without a clock
 * the step times of its iterations. */
static double running_s(const struct pit_series *s, const struct pit_series_run *ru) {
  if (isfinite(ru->last_t) && isfinite(ru->ended_t) && ru->last_t > ru->ended_t)
    return ru->last_t - ru->ended_t;
  double sum = 0;
  for (int64_t i = 0; i < s->nit; i++)
    if (s->it[i].gen > ru->ended_gen && !(s->it[i].flags & PIT_IT_OTHER_RANK) && isfinite(s->it[i].step_s))
      sum += s->it[i].step_s;
  return sum;
}

/* The epoch edge per epoch (*edge), the one-off excess of a run's first
 * iteration (*once, with *repeat_hi) and, of an epoch in progress, the part of
 * the edge already spent (*done), from the series' rank's iterations, step
 * times against tp.
 *
 * An epoch's first iteration's excess (loader restart) counts per epoch and,
 * for an epoch seen to its end (another epoch follows in its run and
 * generation, or its last iteration is number ipe − 1), its last's (a partial
 * batch: often short). The last iteration seen of an epoch not seen to its end
 * is an ordinary one and counts for nothing. The first iteration of a run (of
 * a generation) also carries one-off costs — a framework's warm-up: pitstop
 * train's cnn takes 31-33 ms in its very first step, 2.6 ms in every later
 * epoch's first, 1.7 ms a step — so it is not taken for the per-epoch cost:
 * the later epochs' first excess is (mean over those seen), the first
 * iteration's excess beyond it is *once (≥ 0, mean over generations). With no
 * later epoch seen, whether every epoch pays the first iteration's excess
 * again is unknown: the per-epoch part is 0 and *repeat_hi = *once lets the
 * upper end allow it (the course logs' DataLoader restarts its workers every
 * epoch; pitstop train does not). edge = per-epoch first + mean last excess
 * (NaN when no epoch was seen); done = of the last epoch, when not over and
 * its first iteration seen, the per-epoch first part: that iteration is over,
 * whatever it cost is in the elapsed time (NaN otherwise). With a clock
 * (tp_wall, the wall t_p; NaN without) a later epoch's first iteration is
 * measured from it: the interval since the previous epoch's last iteration in
 * its generation, against tp_wall — the time between epochs that no step timed
 * is in it (a course log with "Elapsed time", a run's arrival times), and so
 * is the interval after it, less tp_wall (iteration_times gives that interval
 * to the edge: the DCGAN example saves images after printing i = 0, and its
 * predicted epoch was 5.8% short without it). An epoch begun in the warm-up
 * (before steady_from, the series index where the steady iterations begin;
 * -1: no warm-up) gives neither its end's excess nor the next epoch's first
 * (that interval holds the warm-up's tail: the MNIST example's first epoch
 * ran 3x slower on a loaded host and made its epoch 12% long), unless no
 * other epoch gives one. */
static void edge_terms(const struct pit_series *s, double tp, double tp_wall, double ipe, int64_t steady_from,
                       double *edge, double *done, double *once, double *repeat_hi) {
  double fsum = 0, gsum = 0, lsum = 0, wsum = 0, vsum = 0;
  int64_t nf = 0, ng = 0, nl = 0, nw = 0, nv = 0;
  int64_t prev_first = -1; /* series index of the epoch before's first iteration */
  int last_starts = 0, last_over = 1;
  const struct pit_series_iter *first = NULL, *second = NULL, *last = NULL, *gen_of = NULL, *prev = NULL;
  *edge = *done = NAN; /* *once and *repeat_hi are always set below */
  for (int64_t i = 0; i <= s->nit; i++) {
    const struct pit_series_iter *it = i < s->nit ? &s->it[i] : NULL;
    if (it && (it->flags & PIT_IT_OTHER_RANK))
      continue;
    if (first && (!it || it->run != first->run || it->gen != first->gen || it->epoch != first->epoch)) {
      /* one (run, gen, epoch) ends at last */
      int same_gen = it && it->run == first->run && it->gen == first->gen;
      int over = same_gen || (ipe >= 1 && last->iter >= 0 && (double)last->iter + 1 >= ipe);
      int gen_first = !gen_of || gen_of->run != first->run || gen_of->gen != first->gen;
      gen_of = first;
      /* the epoch's own first iteration (not one after a resume mid-epoch) */
      int starts = first->iter == 0 || (first->iter < 0 && !(first->flags & PIT_IT_RESUME));
      /* with a clock, a later epoch's first iteration is the interval since
       * the last iteration before it: its step and whatever ran between the
       * epochs that no step timed (the loader's start, epoch-end work) */
      double first_s = first->step_s, base = tp;
      if (isfinite(tp_wall) && !gen_first && prev && prev->run == first->run && prev->gen == first->gen &&
          isfinite(prev->t) && isfinite(first->t) && first->t >= prev->t)
        first_s = first->t - prev->t, base = tp_wall;
      /* with a clock, the interval after the first iteration is the edge's too
       * (iteration_times leaves it out of t_p: one-off work often follows an
       * epoch's first line, as the DCGAN example's image save after i = 0) */
      if (isfinite(tp_wall) && second && isfinite(second->t) && isfinite(first->t) && second->t >= first->t)
        first_s += second->t - first->t - tp_wall;
      /* an epoch all of whose iterations carry one t and no step time was
       * recorded at one moment, untimed (the epoch a program exited in, whose
       * end no line marked): it times nothing */
      int untimed = last != first && isfinite(tp_wall) && last->t == first->t && isnan(first->step_s);
      if (untimed)
        starts = 0;
      if (starts && isfinite(first_s)) {
        if (gen_first)
          gsum += first_s - base, ng++;
        else if (prev_first >= 0 && prev_first < steady_from)
          wsum += first_s - base, nw++; /* the epoch before began in the warm-up: its end is not yet steady */
        else
          fsum += first_s - base, nf++;
      }
      prev = last;
      if (over && last != first && isfinite(last->step_s)) {
        if (first - s->it < steady_from) /* an epoch begun in the warm-up */
          vsum += last->step_s - tp, nv++;
        else
          lsum += last->step_s - tp, nl++;
      }
      prev_first = first - s->it;
      last_starts = starts && isfinite(first->step_s);
      last_over = over;
      first = second = NULL;
    }
    if (!it)
      break;
    if (!first)
      first = it;
    else if (!second)
      second = it;
    last = it;
  }
  if (nf == 0 && nw > 0) /* no later epoch's edge but those after the warm-up: theirs */
    fsum = wsum, nf = nw;
  if (nl == 0 && nv > 0)
    lsum = vsum, nl = nv;
  double fmean = nf ? fsum / (double)nf : 0, gmean = ng ? gsum / (double)ng : NAN;
  *once = isfinite(gmean) && gmean > fmean ? gmean - fmean : 0;
  *repeat_hi = nf ? 0 : *once;
  if (nf > 0 || ng > 0 || nl > 0)
    *edge = fmean + (nl ? lsum / (double)nl : 0);
  if (!last_over && last_starts)
    *done = fmean;
}

/* The time per epoch that no step timed: for every epoch record of the
 * series' rank with an epoch time and step times in the same run, epoch_s
 * less the sum of those step times (the data loader's start before the first
 * step, epoch-end work: the step times do not hold it). Written to v (when
 * not NULL, room for s->nev); returns how many, summed into *sum. */
static int64_t untimed_values(const struct pit_series *s, double *v, double *sum) {
  int rank = -2;
  for (int64_t i = 0; i < s->nit && rank == -2; i++)
    if (!(s->it[i].flags & PIT_IT_OTHER_RANK))
      rank = s->it[i].rank;
  int64_t n = 0;
  *sum = 0;
  for (int64_t k = 0; k < s->nev; k++) {
    const struct pit_series_event *ev = &s->ev[k];
    if (ev->type != PIT_REC_EPOCH || !isfinite(ev->v) || ev->epoch < 0 || (ev->rank >= 0 && ev->rank != rank))
      continue;
    double steps = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < s->nit; i++) {
      const struct pit_series_iter *it = &s->it[i];
      if (!(it->flags & PIT_IT_OTHER_RANK) && it->run == ev->run && it->epoch == ev->epoch && isfinite(it->step_s)) {
        steps += it->step_s;
        m++;
      }
    }
    if (m > 0) {
      if (v)
        v[n] = ev->v - steps;
      *sum += ev->v - steps;
      n++;
    }
  }
  return n;
}

int pit_predict_untimed_prior(const struct pit_series *const *runs, int n, struct pit_term *out, int64_t *m_out,
                              struct pit_err *e) {
  int64_t cap = 0;
  for (int k = 0; k < n; k++)
    cap += runs[k]->nev;
  double *v = malloc(sizeof *v * (size_t)(cap > 0 ? cap : 1)), sum = 0, part;
  if (!v)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int64_t m = 0;
  for (int k = 0; k < n; k++)
    m += untimed_values(runs[k], v + m, &part), sum += part;
  *m_out = m;
  *out = (struct pit_term){NAN, NAN};
  if (m == 0) {
    free(v);
    pit_err_set(e, PIT_ESTATE, "no epoch with an epoch time and step times in the %d earlier run%s to learn the "
                               "untimed time from", n, n == 1 ? "" : "s");
    pit_err_hint(e, "give runs whose logs record an epoch's time (e.g. \"Epoch e took: X seconds\")");
    return PIT_ESTATE;
  }
  double mean = sum / (double)m, ss = 0;
  for (int64_t i = 0; i < m; i++)
    ss += (v[i] - mean) * (v[i] - mean);
  free(v);
  double half = m >= 2 ? pit_t_quantile(0.975, (int)m - 1) * sqrt(ss / (double)(m - 1)) * sqrt(1 + 1 / (double)m)
                       : fabs(mean);
  *out = (struct pit_term){mean, half};
  return 0;
}

int pit_predict_use_prior(struct pit_predict_in *in, const struct pit_predict_basis *b,
                          const struct pit_term *prior) {
  if (b->wall || b->untimed_epochs > 0 || !isfinite(prior->mean))
    return 0;
  in->untimed = *prior;
  return 1;
}

int pit_predict_inputs(const struct pit_series *s, const struct pit_summary *sm, const char *name,
                       double precision, struct pit_predict_in *in, struct pit_predict_basis *b,
                       struct pit_err *e) {
  pit_predict_in_init(in);
  memset(b, 0, sizeof *b);
  b->val_samples = -1;
  double *x = malloc(sizeof *x * (size_t)(s->nit > 0 ? s->nit : 1));
  int64_t *at = malloc(sizeof *at * (size_t)(s->nit > 0 ? s->nit : 1));
  if (!x || !at) {
    free(x);
    free(at);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  b->wall = clocked(s);
  size_t n = iteration_times(s, b->wall, x, at);
  if (b->wall && n < 4) { /* clocks, but too few iterations in a row: the step times */
    b->wall = 0;
    n = iteration_times(s, 0, x, at);
  }
  struct pit_steady_opts so = {precision > 0 ? precision : 0.02, 0, 0};
  int rc = pit_steady_check(x, n, &so, &b->steady, e);
  double se = NAN;
  if (!rc && pit_drift(x + b->steady.warmup, n - b->steady.warmup, &in->drift, &se))
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  free(x);
  /* the series index where the steady iterations begin (none dropped as warm-up: -1) */
  int64_t steady_from = !rc && b->steady.warmup > 0 && b->steady.warmup < n ? at[b->steady.warmup] : -1;
  free(at);
  if (rc)
    return rc;
  const struct pit_interval *tp = &b->steady.tp;
  if (!(tp->mean > 0) || !isfinite(tp->half)) {
    pit_err_set(e, PIT_ESTATE,
                "run '%s': too few iterations to predict: %zu paramount iteration times (%lld iteration records, "
                "%zu of warm-up); t_p needs at least 4 after the warm-up for an interval",
                name, n, (long long)sm->iters, b->steady.warmup);
    if (s->nruns > 0 && pit_series_member_from(&s->runs[0]) > 0)
      pit_err_hint(e, "the run changed configuration at generation %d: only the iterations since count; "
                      "let it run longer on it", pit_series_member_from(&s->runs[0]));
    else
      pit_err_hint(e, "let the run go on longer (pitstop train --until-steady 0.02 stops when enough is measured)");
    return PIT_ESTATE;
  }
  in->tp = tp->mean;
  in->tp_half = tp->half;
  in->drift_se = se;
  in->measured = tp->n;
  /* iterations per epoch: the config's (pitstop train, pitstop parse's L of
   * "i/L"), else its samples / batch (a partial run has not seen its epoch's
   * end), else the largest seen */
  double ipe = config_num(s, "iters_per_epoch"), samples = config_num(s, "samples");
  /* the global batch of the configuration t_p is from (an elastic run's last) */
  const struct pit_series_seg *now = s->nruns > 0 ? pit_series_last_seg(&s->runs[0]) : NULL;
  int64_t batch = now && now->cfg.batch > 0 ? now->cfg.batch : s->nruns > 0 ? s->runs[0].cfg.batch : -1;
  in->iters_per_epoch = ipe > 0                     ? ipe
                        : samples > 0 && batch > 0 ? ceil(samples / (double)batch)
                                                   : sm->iters_per_epoch;
  in->batch = batch;
  double vs = config_num(s, "val_samples");
  b->val_samples = vs >= 0 ? (int64_t)vs : -1;
  in->init = (struct pit_term){sm->init.mean, stats_half(&sm->init)};
  in->val = (struct pit_term){sm->validation.mean, stats_half(&sm->validation)};
  in->val_every_epoch = sm->validation.n > 0;
  double edge, done, once, repeat_hi;
  /* an epoch is seen to its end by the length the run states, never by the
   * largest iteration seen (a partial epoch would look complete) */
  edge_terms(s, sm->tp.mean, b->wall ? tp->mean : NAN,
             ipe > 0 ? ipe : samples > 0 && batch > 0 ? ceil(samples / (double)batch) : NAN, steady_from, &edge,
             &done, &once, &repeat_hi);
  in->first_iter = (struct pit_term){once, NAN};
  in->edge_repeat_hi = repeat_hi;
  double untimed = 0;
  if (!b->wall) {
    b->untimed_epochs = untimed_values(s, NULL, &untimed);
    if (b->untimed_epochs > 0)
      edge = (isfinite(edge) ? edge : 0) + untimed / (double)b->untimed_epochs;
  }
  in->epoch_edge = (struct pit_term){edge, NAN};
  /* in progress (not over: no end record, a generation running after an
   * earlier one ended, or stopped to be resumed): what is done is timed, not
   * predicted */
  const struct pit_series_run *ru = s->nruns > 0 ? &s->runs[0] : NULL;
  if (ru && !ru->over && ru->ended_gen >= 0 && sm->iters > 0) {
    in->done_iters = sm->iters;
    in->edge_done = done;
    in->resume = ru->ended_gen >= ru->gen_last; /* nothing runs: the next generation starts again */
    in->elapsed_s = ru->end_total_s + (in->resume ? 0 : running_s(s, ru));
  } else if (ru && ru->over && ru->ended_ctl && sm->iters > 0) {
    /* finished, its end the controller's (a script that exited 0 and wrote none): the job was
     * what it did, all of it done, elapsed its run time at that end (t goes on across
     * generations; a failed generation wrote no end record to sum) */
    in->done_iters = sm->iters;
    in->edge_done = done;
    in->elapsed_s = isfinite(ru->ended_t) ? ru->ended_t : ru->end_total_s;
  } else if (ru && isnan(ru->end_total_s) && sm->iters > 0) {
    in->done_iters = sm->iters;
    in->edge_done = done;
    in->elapsed_s = isfinite(sm->total_s) ? sm->total_s : sm->step.sum + sm->init_total_s;
    if (!(in->elapsed_s > 0))
      in->elapsed_s = sm->step.sum;
    if (!isfinite(sm->total_s))
      in->elapsed_s += untimed; /* the epochs done, as recorded */
    /* without a clock only step times are known: the time between iterations
     * is allowed up to the drift allowance of what was timed */
    if (!isfinite(sm->total_s))
      in->elapsed_untimed = PIT_PREDICT_DRIFT_ALLOW * in->elapsed_s;
  }
  return 0;
}
