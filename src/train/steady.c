/* steady.c — `pitstop train --until-steady P`: the run stops once its paramount
 * iteration times are steady (pit_steady_check) or a cap is reached, every rank
 * at the same iteration (rank 0 decides and broadcasts). Invariants: the series
 * is the one pitstop predict takes t_p from (inputs.c), so what stops the run is
 * what predict will find; the end record's detail says why it stopped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/predict.h"
#include "train/train_impl.h"

/* --until-steady P: rank 0 applies pit_steady_check to the paramount
 * iteration times so far at check points; its verdict is broadcast so every
 * rank stops at the same iteration. The times are what pitstop predict takes
 * t_p from in records with a clock (inputs.c): the interval between
 * consecutive iteration records — the step and whatever runs between steps —
 * of an epoch's iterations 2 .. L−2 (its first and last are the epoch's edge,
 * and so is the interval right after the first), none right after a
 * checkpoint or a sample grid, and not the current iteration's: if the run
 * stops there, it is the last iteration its epoch shows, an edge to predict.
 * Step times alone said "steady" on a cnn at batch 8 (0.26 ms steps) whose
 * records predict then found at 3.7%.
 * Check points: every 10 iterations while steps are short; once the floor is
 * near, as often as every iteration when steps are long — about every 20 ms of
 * steps (a check and its broadcast cost microseconds; an iteration not needed
 * costs a whole step: a dcgan-32 profile at 0.12 s a step stopped at 60
 * instead of 51), and never past the step where the floor is reached. Rank 0
 * chooses the next check point and broadcasts it with the verdict, so the
 * ranks' collective calls match. Steady or capped (at max_iters, else the
 * planned iterations): *stop is set and the end record will say why. */
#define STEADY_FLOOR 50
static int64_t next_check(const struct trainer *t, double step_s) {
  int64_t every = step_s > 0 ? (int64_t)(0.02 / step_s) : 10;
  every = every < 1 ? 1 : every > 10 ? 10 : every;
  int64_t to_floor = STEADY_FLOOR - t->steady_n; /* step times still missing for the floor */
  if (to_floor > 0 && to_floor < every)
    every = to_floor;
  return t->step + every;
}

int tr_steady_check(struct trainer *t, int64_t it, double step_s, int event, int64_t planned, int *stop,
                    struct pit_train_result *res, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  /* the previous iteration's interval joins the series now: the current one
   * may be the last the run records, which predict counts as an edge */
  if (t->steady_pend > 0) {
    if (PIT_GROW(t->steady_x, t->steady_n + 1, t->steady_cap))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    t->steady_x[t->steady_n++] = t->steady_pend;
  }
  int paramount = it > 1 && it != t->epoch_iters - 1 && !t->steady_skip && t->iter_t_prev > 0;
  t->steady_pend = paramount && t->iter_t > t->iter_t_prev ? t->iter_t - t->iter_t_prev : 0;
  t->steady_skip = event;
  int cap_hit = planned > 0 && t->step >= planned;
  if (t->step < (t->steady_next > 0 ? t->steady_next : 10) && !cap_hit)
    return 0;
  int64_t verdict[3] = {0, 0, 0}; /* stop, capped, next check point */
  struct pit_steady st;
  memset(&st, 0, sizeof st);
  if (t->d->rank == 0) {
    struct pit_steady_opts so = {.precision = o->until_steady, .min_iters = STEADY_FLOOR, .max_iters = planned};
    int rc = pit_steady_check(t->steady_x, (size_t)t->steady_n, &so, &st, e);
    if (rc < 0)
      return rc;
    verdict[0] = st.state != PIT_STEADY_MORE || cap_hit;
    verdict[1] = st.state != PIT_STEADY_OK;
    verdict[2] = next_check(t, step_s);
  }
  int rc = pit_dist_bcast(t->d, verdict, sizeof verdict, e);
  if (rc < 0)
    return rc;
  t->steady_next = verdict[2];
  if (!verdict[0])
    return 0;
  *stop = 2;
  snprintf(res->stop_why, sizeof res->stop_why, "%s: %s", verdict[1] ? "cap" : "steady",
           st.why[0] ? st.why : "cap reached");
  if (t->d->rank == 0) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "reason", verdict[1] ? "cap" : "steady");
    cJSON_AddStringToObject(j, "why", st.why[0] ? st.why : "cap reached");
    cJSON_AddNumberToObject(j, "precision", o->until_steady);
    if (isfinite(st.tp.mean))
      cJSON_AddNumberToObject(j, "tp", st.tp.mean);
    if (isfinite(st.tp.half))
      cJSON_AddNumberToObject(j, "tp_half", st.tp.half);
    cJSON_AddNumberToObject(j, "warmup", (double)st.warmup);
    free(t->end_detail);
    t->end_detail = pit_json_print(j);
    cJSON_Delete(j);
    if (!t->end_detail)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  return 0;
}
