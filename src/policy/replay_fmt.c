/* replay_fmt.c — a replayed run (struct pit_replay, replay.c) as `pitstop
 * simulate --replay` prints it: one JSON object, or the table's head (the
 * run's and the replay's resize decisions side by side, whether they agree,
 * and the two costs; the spot market layer's decisions decided again or
 * followed, with those that differ); the fixed memberships and the decision records that
 * follow the table are the command's (src/cli/run_report.c).
 * Invariants: nothing but f is written; non-finite numbers are JSON null;
 * the cost ratio is the replay's cost over the run's (NaN without a run cost). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pitstop/policy.h"

/* The two sides of a replay: the run's decisions (live) and the replay's (sim). */
static const struct side {
  const char *key, *label;
  int sim;
} sides[2] = {{"live", "live", 0}, {"replay", "replay", 1}};

static int side_n(const struct pit_replay *r, const struct side *s) { return s->sim ? r->nsim : r->nlive; }
static const struct pit_resize *side_dec(const struct pit_replay *r, const struct side *s, int i) {
  return s->sim ? &r->sim[i] : &r->live[i];
}

/* NaN (null) when the replay has no time: an untimed replay has no cost either, not a zero one */
static double ratio_of(const struct pit_replay *r) {
  return r->cost_live > 0 && isfinite(r->time_sim) ? r->cost_sim / r->cost_live : NAN;
}
static double cost_of(double cost, double time_s) { return isfinite(time_s) ? cost : NAN; }

static cJSON *decisions_json(const struct pit_replay *r, const struct side *s) {
  cJSON *d = cJSON_CreateArray();
  for (int i = 0; i < side_n(r, s); i++) {
    const struct pit_resize *q = side_dec(r, s, i);
    char f[PIT_MEMBERSHIP_TEXT_MAX], t[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&q->from, f, sizeof f);
    pit_membership_format(&q->to, t, sizeof t);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "step", (double)q->step);
    cJSON_AddStringToObject(o, "from", f);
    cJSON_AddStringToObject(o, "to", t);
    cJSON_AddItemToArray(d, o);
  }
  return d;
}

int pit_replay_write_json(FILE *f, const char *events, const struct pit_replay *r, struct pit_err *e) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "events", events);
  cJSON_AddNumberToObject(j, "steps", (double)r->steps);
  cJSON_AddNumberToObject(j, "steps_run", (double)r->steps_run);
  cJSON_AddBoolToObject(j, "same_decisions", r->same);
  cJSON_AddBoolToObject(j, "diverged", r->diverged);
  for (int k = 0; k < 2; k++) {
    cJSON *x = cJSON_AddObjectToObject(j, sides[k].key);
    cJSON_AddNumberToObject(x, "cost", k ? cost_of(r->cost_sim, r->time_sim) : r->cost_live);
    cJSON_AddNumberToObject(x, "time_s", k ? r->time_sim : r->time_live);
    cJSON_AddItemToObject(x, "decisions", decisions_json(r, &sides[k]));
  }
  cJSON_AddNumberToObject(j, "cost_ratio", ratio_of(r));
  cJSON_AddNumberToObject(j, "restarts_followed", r->restarts);
  if (r->zone_decisions > 0) { /* a run across zones: its zone decisions decided again */
    cJSON *z = cJSON_AddObjectToObject(j, "zones");
    cJSON_AddNumberToObject(z, "decisions", r->zone_decisions);
    cJSON_AddNumberToObject(z, "same", r->zone_same);
  }
  if (r->spot && r->spot->n > 0) { /* the spot market layer's decisions: decided again, or followed */
    const struct pit_spot_replay *sp = r->spot;
    cJSON *z = cJSON_AddObjectToObject(j, "spot");
    cJSON_AddNumberToObject(z, "decisions", sp->n);
    cJSON_AddNumberToObject(z, "decided_again", sp->again);
    cJSON_AddNumberToObject(z, "same", sp->same);
    cJSON_AddNumberToObject(z, "followed", sp->followed);
    cJSON *df = cJSON_AddArrayToObject(z, "differ"); /* the first PIT_SPOT_DIFF_MAX */
    for (int i = 0; i < sp->ndiff && i < PIT_SPOT_DIFF_MAX; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "step", (double)sp->diff[i].step);
      cJSON_AddNumberToObject(o, "t", sp->diff[i].t);
      cJSON_AddStringToObject(o, "run", pit_spot_mode_name(sp->diff[i].recorded));
      cJSON_AddStringToObject(o, "replay", pit_spot_mode_name(sp->diff[i].again));
      cJSON_AddItemToArray(df, o);
    }
  }
  cJSON *fx = cJSON_AddArrayToObject(j, "fixed"); /* each membership the run ran, alone for the whole job */
  for (int i = 0; i < r->nfixed; i++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&r->fixed[i].m, m, sizeof m);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "membership", m);
    cJSON_AddNumberToObject(o, "cost", cost_of(r->fixed[i].cost, r->fixed[i].time_s));
    cJSON_AddNumberToObject(o, "time_s", r->fixed[i].time_s);
    cJSON_AddBoolToObject(o, "complete", r->fixed[i].complete);
    cJSON_AddBoolToObject(o, "best", i == r->best_fixed);
    cJSON_AddItemToArray(fx, o);
  }
  char *txt = pit_json_print(j);
  int rc = !txt || fprintf(f, "%s\n", txt) < 0 ? pit_err_set(e, PIT_EIO, "cannot write to standard output") : 0;
  free(txt);
  cJSON_Delete(j);
  return rc;
}

void pit_replay_write_head(FILE *f, const char *events, const char *policy, const char *types,
                           const struct pit_replay *r) {
  fprintf(f, "replay of %s: %lld steps, policy %s, types %s\n", events, (long long)r->steps, policy, types);
  if (r->steps_run < r->steps)
    fprintf(f, "the run was stopped after %lld of them: every replay stops there too\n", (long long)r->steps_run);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < side_n(r, &sides[k]); i++) {
      const struct pit_resize *q = side_dec(r, &sides[k], i);
      char fr[PIT_MEMBERSHIP_TEXT_MAX], to[PIT_MEMBERSHIP_TEXT_MAX];
      pit_membership_format(&q->from, fr, sizeof fr);
      pit_membership_format(&q->to, to, sizeof to);
      fprintf(f, "%-7s step %6lld  %s -> %s\n", sides[k].label, (long long)q->step, fr, to);
    }
  fprintf(f, "same decisions at the same steps: %s%s\n", r->same ? "yes" : "NO",
          r->diverged ? " (the replay chose a membership the run never ran: stopped there)" : "");
  if (r->spot && r->spot->n > 0) {
    const struct pit_spot_replay *sp = r->spot;
    fprintf(f, "spot market decisions: %d; decided again by the spot policy from their inputs: %d, %d the same; "
               "followed (recorded without inputs): %d\n",
            sp->n, sp->again, sp->same, sp->followed);
    for (int i = 0; i < sp->ndiff && i < PIT_SPOT_DIFF_MAX; i++)
      fprintf(f, "  differs at %.1f s (step %lld): the run chose %s, the replay %s\n", sp->diff[i].t,
              (long long)sp->diff[i].step, pit_spot_mode_name(sp->diff[i].recorded),
              pit_spot_mode_name(sp->diff[i].again));
    if (sp->ndiff > PIT_SPOT_DIFF_MAX)
      fprintf(f, "  and %d more that differ\n", sp->ndiff - PIT_SPOT_DIFF_MAX);
  }
  if (r->restarts > 0)
    fprintf(f, "the run's own restarts (reclaims, markets, zones) followed at the same steps: %d\n", r->restarts);
  fprintf(f, "cost: live $%.6f (node records), replay $%.6f (simulated clock), ratio %.4f; time %.1f s vs %.1f s\n",
          r->cost_live, r->cost_sim, ratio_of(r), r->time_live, r->time_sim);
}
