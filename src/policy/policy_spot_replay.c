/* policy_spot_replay.c — `pitstop run`'s spot market layer, the policy's side
 * apart from the rule itself (pit_spot_decide, policy_spot.c): what the layer
 * asks (pit_spot_in_decide), the state it decided on as a JSON object (written
 * in the decision record's "inputs", read back), and the replay of a run's spot
 * decisions (pitstop simulate --replay).
 *
 * Invariants: pure; pit_spot_in_parse(pit_spot_in_json(in)) gives in back
 * exactly (numbers printed with 17 significant digits, NaN as null), so a replay
 * decides on the very state the live run decided on; the parser requires every
 * key and names the one it rejects; a decision recorded without inputs is
 * followed (counted), never decided again on a guess. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/policy.h"

enum pit_spot_mode pit_spot_in_decide(const struct pit_spot_in *in) {
  enum pit_spot_mode to = pit_spot_decide(in->policy, &in->s);
  return in->running && to == PIT_SPOT_IDLE ? PIT_SPOT_OD : to; /* never idle a running job */
}

/* The state's numbers, in the order written; NaN is written null and read back NaN. */
#define NUMS(X)                                                                                                        \
  X(t_h) X(done_h) X(job_h) X(deadline_h) X(restart_h) X(tick_h) X(overhead_left_h) X(price_h) X(spot_price_h)         \
      X(avail_seen) X(run_seen_h) X(spot_share) X(avail_for_h)

int pit_spot_in_json(const struct pit_spot_in *in, char *buf, size_t n, struct pit_err *e) {
  size_t at = 0;
  int finite = 1;
#define PUT(...) at += (size_t)snprintf(at < n ? buf + at : NULL, at < n ? n - at : 0, __VA_ARGS__)
  PUT("{\"policy\":\"%s\",\"running\":%d,\"spot_avail\":%d,\"mode\":\"%s\"", pit_spot_policy_name(in->policy),
      in->running, in->s.spot_avail, pit_spot_mode_name(in->s.mode));
#define NUM(k)                                                                                                         \
  if (isnan(in->s.k))                                                                                                  \
    PUT(",\"" #k "\":null");                                                                                           \
  else                                                                                                                 \
    PUT(",\"" #k "\":%.17g", in->s.k);                                                                                 \
  finite &= !isinf(in->s.k);
  NUMS(NUM)
#undef NUM
  PUT("}");
#undef PUT
  if (at >= n)
    return pit_err_set(e, PIT_EARG, "a spot decision's inputs do not fit in %zu bytes", n);
  if (!finite) /* infinities are not JSON */
    return pit_err_set(e, PIT_EARG, "a spot decision's inputs hold an infinite number: %s", buf);
  return 0;
}

/* A number, or null read as NaN; PIT_EFORMAT naming the key when absent or neither. */
static int num(const cJSON *o, const char *key, double *v, struct pit_err *e) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  *v = NAN;
  if (cJSON_IsNull(x))
    return 0;
  if (!cJSON_IsNumber(x))
    return pit_err_set(e, PIT_EFORMAT, "spot decision inputs: \"%s\" is %s", key,
                       x ? "not a number or null" : "missing");
  *v = x->valuedouble;
  return 0;
}

/* 0 or 1; PIT_EFORMAT naming the key otherwise. */
static int flag(const cJSON *o, const char *key, int *v, struct pit_err *e) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  *v = 0;
  if (!cJSON_IsNumber(x) || (x->valuedouble != 0 && x->valuedouble != 1))
    return pit_err_set(e, PIT_EFORMAT, "spot decision inputs: \"%s\" is %s", key, x ? "not 0 or 1" : "missing");
  *v = (int)x->valuedouble;
  return 0;
}

/* A name of names[0..count) into *v; PIT_EFORMAT naming the key otherwise. */
static int name(const cJSON *o, const char *key, const char *(*name_of)(int), int count, int *v,
                struct pit_err *e) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
  for (int i = 0; s && i < count; i++)
    if (strcmp(s, name_of(i)) == 0) {
      *v = i;
      return 0;
    }
  return pit_err_set(e, PIT_EFORMAT, "spot decision inputs: \"%s\" is %s%s%s", key, s ? "'" : "", s ? s : "missing",
                     s ? "', not one of its names" : "");
}

static const char *mode_name(int m) { return pit_spot_mode_name((enum pit_spot_mode)m); }
static const char *policy_name(int p) { return pit_spot_policy_name((enum pit_spot_policy)p); }

int pit_spot_in_parse(struct pit_spot_in *in, const char *json, struct pit_err *e) {
  memset(in, 0, sizeof *in);
  cJSON *o = cJSON_Parse(json ? json : "");
  int rc = cJSON_IsObject(o) ? 0 : pit_err_set(e, PIT_EFORMAT, "spot decision inputs are not a JSON object");
  int pol = 0, mode = 0;
  if (rc == 0)
    (void)((rc = name(o, "policy", policy_name, PIT_SPOT_NPOLICIES, &pol, e)) < 0 ||
           (rc = flag(o, "running", &in->running, e)) < 0 || (rc = flag(o, "spot_avail", &in->s.spot_avail, e)) < 0 ||
           (rc = name(o, "mode", mode_name, PIT_SPOT_OD + 1, &mode, e)) < 0);
  in->policy = (enum pit_spot_policy)pol;
  in->s.mode = (enum pit_spot_mode)mode;
#define NUM(k)                                                                                                         \
  if (rc == 0)                                                                                                         \
    rc = num(o, #k, &in->s.k, e);
  NUMS(NUM)
#undef NUM
  cJSON_Delete(o);
  return rc;
}

/* The mode a spot_mode names (-1: none of them). */
static int mode_of(const char *text) {
  for (int m = PIT_SPOT_IDLE; m <= PIT_SPOT_OD; m++)
    if (strcmp(text, pit_spot_mode_name((enum pit_spot_mode)m)) == 0)
      return m;
  return -1;
}

int pit_replay_spot(const struct pit_runlog *log, const char *events, struct pit_spot_replay *r, struct pit_err *e) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < log->ndec; i++) {
    const struct pit_decision *d = &log->dec[i].d;
    if (strcmp(d->policy, "spot") != 0 && !d->spot_mode[0])
      continue;
    r->n++;
    if (!d->spot_mode[0] || !d->inputs) { /* recorded before the inputs were, or not the policy's */
      r->followed++;
      continue;
    }
    int rec = mode_of(d->spot_mode);
    if (rec < 0)
      return pit_err_set(e, PIT_EFORMAT, "%s: the spot decision at step %lld: \"spot_mode\" is '%s', not spot, "
                         "on_demand or idle", events, (long long)d->step, d->spot_mode);
    struct pit_spot_in in;
    struct pit_err sub = {0};
    if (pit_spot_in_parse(&in, d->inputs, &sub) < 0)
      return pit_err_set(e, PIT_EFORMAT, "%s: the spot decision at step %lld: %s", events, (long long)d->step, sub.msg);
    enum pit_spot_mode again = pit_spot_in_decide(&in);
    r->again++;
    if ((int)again == rec) {
      r->same++;
      continue;
    }
    if (r->ndiff < PIT_SPOT_DIFF_MAX)
      r->diff[r->ndiff] = (struct pit_spot_diff){d->step, log->dec[i].t, (enum pit_spot_mode)rec, again};
    r->ndiff++;
  }
  return 0;
}
