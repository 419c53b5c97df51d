/* decision.c — the detail of a `decision` record: struct pit_decision to JSON and
 * back (cJSON), the one encoder and the one decoder its writers (train's batch
 * shares, the controller) and readers (the run log, analysis) share.
 * Invariants: decode(encode(d)) equals d in every field (pit_decision_equal;
 * numbers round-trip through cJSON's shortest exact form, an unbounded interval
 * end through -1); keys absent from the struct are absent from the JSON, in the
 * order listed in record.h, so an encoded batch-shares decision is byte for byte
 * what `pitstop train` wrote before this struct existed, and a controller's what
 * the controller wrote when it added its keys to an encoded decision by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/record.h"

static void alt_init(struct pit_decision_alt *a) {
  memset(a, 0, sizeof *a);
  a->predicted_s = a->cost = a->pit_s = a->pit_lo = a->pit_hi = a->predicted_lo = a->predicted_hi = NAN;
  a->fits = -1;
}

void pit_decision_init(struct pit_decision *d) {
  memset(d, 0, sizeof *d);
  d->step = -1;
  d->predicted_step_s = NAN;
  d->previous_predicted_step_s = NAN;
  d->set_deadline_s = d->set_budget = NAN;
}

void pit_decision_release(struct pit_decision *d) {
  PIT_FREE_ALL(d->reason, d->alts, d->shares, d->previous, d->speed_sps, d->inputs);
  pit_decision_init(d);
}

int pit_decision_set_ranks(struct pit_decision *d, int n, int with_all) {
  free(d->shares);
  free(d->previous);
  free(d->speed_sps);
  d->nshares = n;
  d->shares = calloc((size_t)n ? (size_t)n : 1, sizeof *d->shares);
  d->previous = with_all ? calloc((size_t)n ? (size_t)n : 1, sizeof *d->previous) : NULL;
  d->speed_sps = with_all ? calloc((size_t)n ? (size_t)n : 1, sizeof *d->speed_sps) : NULL;
  if (!d->shares || (with_all && (!d->previous || !d->speed_sps))) {
    free(d->shares);
    free(d->previous);
    free(d->speed_sps);
    d->shares = d->previous = NULL;
    d->speed_sps = NULL;
    d->nshares = 0;
    return PIT_ENOMEM;
  }
  return 0;
}

struct pit_decision_alt *pit_decision_add_alt(struct pit_decision *d, const struct pit_membership *m) {
  if (PIT_GROW(d->alts, d->nalts + 1, d->capalts))
    return NULL;
  struct pit_decision_alt *a = &d->alts[d->nalts++];
  alt_init(a);
  if (m)
    a->m = *m;
  return a;
}

static void add_num(cJSON *o, const char *key, double v) {
  if (!isnan(v))
    cJSON_AddNumberToObject(o, key, v);
}

/* [lo, hi] with an unbounded (or unknown) hi as -1, an unknown lo as null. */
static void add_interval(cJSON *o, const char *key, double lo, double hi) {
  cJSON *iv = cJSON_AddArrayToObject(o, key);
  if (iv) {
    cJSON_AddItemToArray(iv, cJSON_CreateNumber(lo));
    cJSON_AddItemToArray(iv, cJSON_CreateNumber(isfinite(hi) ? hi : -1));
  }
}

static void add_membership(cJSON *o, const char *key, const struct pit_membership *m) {
  char text[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(m, text, sizeof text);
  cJSON_AddStringToObject(o, key, text);
}

static void add_i64s(cJSON *o, const char *key, const int64_t *v, int n) {
  if (!v)
    return;
  cJSON *a = cJSON_AddArrayToObject(o, key);
  for (int i = 0; a && i < n; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
}

int pit_decision_encode(const struct pit_decision *d, char **out, struct pit_err *e) {
  *out = NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (d->kind[0])
    cJSON_AddStringToObject(o, "what", d->kind);
  if (d->step >= 0)
    cJSON_AddNumberToObject(o, "step", (double)d->step);
  if (d->nalts > 0) {
    cJSON *arr = cJSON_AddArrayToObject(o, "alternatives");
    for (int i = 0; arr && i < d->nalts; i++) {
      const struct pit_decision_alt *x = &d->alts[i];
      cJSON *a = cJSON_CreateObject();
      if (!a)
        break;
      add_membership(a, "membership", &x->m);
      add_num(a, "predicted_s", x->predicted_s);
      add_num(a, "cost", x->cost);
      if (x->what[0]) { /* a policy weighed it: its numbers, unknown ones null */
        cJSON_AddStringToObject(a, "what", x->what);
        cJSON_AddStringToObject(a, "model", x->model);
        cJSON_AddNumberToObject(a, "pit_s", x->pit_s);
        add_interval(a, "pit_interval_s", x->pit_lo, x->pit_hi);
        add_interval(a, "predicted_interval_s", x->predicted_lo, x->predicted_hi);
        cJSON_AddBoolToObject(a, "fits", x->fits > 0);
      }
      cJSON_AddItemToArray(arr, a);
    }
  }
  if (d->nshares > 0) {
    add_i64s(o, "shares", d->shares, d->nshares);
    add_i64s(o, "previous", d->previous, d->nshares);
    if (d->speed_sps) {
      cJSON *a = cJSON_AddArrayToObject(o, "speed_sps");
      for (int i = 0; a && i < d->nshares; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(d->speed_sps[i]));
    }
  }
  add_num(o, "predicted_step_s", d->predicted_step_s);
  add_num(o, "previous_predicted_step_s", d->previous_predicted_step_s);
  if (d->reason)
    cJSON_AddStringToObject(o, "why", d->reason);
  if (d->policy[0]) {
    cJSON_AddStringToObject(o, "policy", d->policy);
    cJSON_AddStringToObject(o, "action", d->action);
    add_membership(o, "from", &d->from);
    add_membership(o, "to", &d->to);
    if (d->zone[0])
      cJSON_AddStringToObject(o, "zone", d->zone);
    if (d->spot_mode[0])
      cJSON_AddStringToObject(o, "spot_mode", d->spot_mode);
    if (!isnan(d->set_deadline_s) || !isnan(d->set_budget) || d->set_nmin > 0 || d->set_types[0]) {
      cJSON *st = cJSON_AddObjectToObject(o, "settings");
      if (st) {
        add_num(st, "deadline_s", d->set_deadline_s);
        add_num(st, "budget", d->set_budget);
        if (d->set_nmin > 0) {
          cJSON *nn = cJSON_AddArrayToObject(st, "nnodes");
          if (nn) {
            cJSON_AddItemToArray(nn, cJSON_CreateNumber(d->set_nmin));
            cJSON_AddItemToArray(nn, cJSON_CreateNumber(d->set_nmax));
          }
        }
        if (d->set_types[0])
          cJSON_AddStringToObject(st, "types", d->set_types);
      }
    }
    cJSON *in = d->inputs ? cJSON_Parse(d->inputs) : NULL;
    if (d->inputs && !cJSON_IsObject(in)) {
      cJSON_Delete(in);
      cJSON_Delete(o);
      return pit_err_set(e, PIT_EARG, "decision \"inputs\" is not a JSON object");
    }
    if (in)
      cJSON_AddItemToObject(o, "inputs", in);
  }
  *out = pit_json_print(o);
  cJSON_Delete(o);
  return *out ? 0 : pit_err_set(e, PIT_ENOMEM, "out of memory");
}

/* A number array of length n (n from the first array read; -1: not yet known). */
static int get_nums(const cJSON *o, const char *key, int *n, double **tmp, struct pit_err *e) {
  *tmp = NULL;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key), *x;
  if (!a)
    return 0;
  if (!cJSON_IsArray(a))
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\" is not an array", key);
  int k = cJSON_GetArraySize(a);
  if (*n >= 0 && k != *n)
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\" has %d entries, \"shares\" %d", key, k, *n);
  *n = k;
  *tmp = malloc(sizeof **tmp * (size_t)(k ? k : 1));
  if (!*tmp)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int i = 0;
  cJSON_ArrayForEach(x, a) {
    if (!cJSON_IsNumber(x)) {
      free(*tmp);
      *tmp = NULL;
      return pit_err_set(e, PIT_EFORMAT, "decision \"%s\"[%d] is not a number", key, i);
    }
    (*tmp)[i++] = x->valuedouble;
  }
  return 0;
}

/* o's member key in *x (NULL when absent): 0, or an error when it is present
 * but not of the type is_type checks (what: "a number", named in the error). */
static int get_item(const cJSON *o, const char *key, cJSON_bool (*is_type)(const cJSON *), const char *what,
                    const cJSON **x, struct pit_err *e) {
  *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (*x && !is_type(*x))
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\" is not %s", key, what);
  return 0;
}

static int get_num(const cJSON *o, const char *key, double *v, struct pit_err *e) {
  const cJSON *x;
  int rc = get_item(o, key, cJSON_IsNumber, "a number", &x, e);
  if (!rc && x)
    *v = x->valuedouble;
  return rc;
}

static int get_str(const cJSON *o, const char *key, const char **v, struct pit_err *e) {
  const cJSON *x;
  int rc = get_item(o, key, cJSON_IsString, "a string", &x, e);
  *v = !rc && x ? x->valuestring : NULL;
  return rc;
}

/* A number, or null (NaN): a weighed alternative's unknown t_p. */
static int get_num_or_null(const cJSON *o, const char *key, double *v, struct pit_err *e) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNull(x))
    *v = NAN;
  else if (x && !cJSON_IsNumber(x))
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\" is not a number", key);
  else if (x)
    *v = x->valuedouble;
  return 0;
}

/* A string into a fixed buffer of n bytes ("" when absent). */
static int get_text(const cJSON *o, const char *key, char *buf, size_t n, struct pit_err *e) {
  const char *s;
  int rc = get_str(o, key, &s, e);
  if (rc < 0)
    return rc;
  if (s && strlen(s) >= n)
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\" is longer than %zu bytes", key, n - 1);
  snprintf(buf, n, "%s", s ? s : "");
  return 0;
}

/* A membership's text form ("" or absent: no nodes). */
static int get_membership(const cJSON *o, const char *key, struct pit_membership *m, struct pit_err *e) {
  const char *s;
  int rc = get_str(o, key, &s, e);
  pit_membership_clear(m);
  if (rc < 0 || !s || !*s)
    return rc;
  struct pit_err sub = {0};
  if (pit_membership_parse(m, s, &sub) < 0)
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\": %s", key, sub.msg);
  return 0;
}

/* [lo, hi]: numbers or null (NaN); hi -1: unbounded (INFINITY). */
static int get_interval(const cJSON *o, const char *key, double *lo, double *hi, struct pit_err *e) {
  const cJSON *iv = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!iv)
    return 0;
  const cJSON *a = cJSON_GetArrayItem(iv, 0), *b = cJSON_GetArrayItem(iv, 1);
  if (!cJSON_IsArray(iv) || cJSON_GetArraySize(iv) != 2 || !(cJSON_IsNumber(a) || cJSON_IsNull(a)) ||
      !(cJSON_IsNumber(b) || cJSON_IsNull(b)))
    return pit_err_set(e, PIT_EFORMAT, "decision \"%s\" is not [low, high]", key);
  *lo = cJSON_IsNumber(a) ? a->valuedouble : NAN;
  *hi = cJSON_IsNumber(b) ? (b->valuedouble == -1 ? INFINITY : b->valuedouble) : NAN;
  return 0;
}

static int decode_alt(struct pit_decision *d, const cJSON *a, struct pit_err *e) {
  if (!cJSON_IsObject(a))
    return pit_err_set(e, PIT_EFORMAT, "decision alternative %d is not an object", d->nalts);
  struct pit_decision_alt *x = pit_decision_add_alt(d, NULL);
  if (!x)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  const cJSON *fits;
  int rc;
  if ((rc = get_membership(a, "membership", &x->m, e)) < 0 || (rc = get_num(a, "predicted_s", &x->predicted_s, e)) < 0 ||
      (rc = get_num(a, "cost", &x->cost, e)) < 0 || (rc = get_text(a, "what", x->what, sizeof x->what, e)) < 0 ||
      (rc = get_text(a, "model", x->model, sizeof x->model, e)) < 0 ||
      (rc = get_num_or_null(a, "pit_s", &x->pit_s, e)) < 0 ||
      (rc = get_interval(a, "pit_interval_s", &x->pit_lo, &x->pit_hi, e)) < 0 ||
      (rc = get_interval(a, "predicted_interval_s", &x->predicted_lo, &x->predicted_hi, e)) < 0 ||
      (rc = get_item(a, "fits", cJSON_IsBool, "true or false", &fits, e)) < 0)
    return rc;
  if (fits)
    x->fits = cJSON_IsTrue(fits);
  return 0;
}

static int decode(struct pit_decision *d, const cJSON *o, struct pit_err *e) {
  double step = -1;
  int rc;
  const char *s;
  if ((rc = get_text(o, "what", d->kind, sizeof d->kind, e)) < 0 || (rc = get_num(o, "step", &step, e)) < 0)
    return rc;
  d->step = (int64_t)step;
  if ((rc = get_str(o, "why", &s, e)) < 0)
    return rc;
  if (s && !(d->reason = strdup(s)))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  if ((rc = get_num(o, "predicted_step_s", &d->predicted_step_s, e)) < 0 ||
      (rc = get_num(o, "previous_predicted_step_s", &d->previous_predicted_step_s, e)) < 0 ||
      (rc = get_text(o, "policy", d->policy, sizeof d->policy, e)) < 0 ||
      (rc = get_text(o, "action", d->action, sizeof d->action, e)) < 0 ||
      (rc = get_membership(o, "from", &d->from, e)) < 0 || (rc = get_membership(o, "to", &d->to, e)) < 0 ||
      (rc = get_text(o, "zone", d->zone, sizeof d->zone, e)) < 0 ||
      (rc = get_text(o, "spot_mode", d->spot_mode, sizeof d->spot_mode, e)) < 0)
    return rc;
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "settings");
  if (st && !cJSON_IsObject(st))
    return pit_err_set(e, PIT_EFORMAT, "decision \"settings\" is not an object");
  if (st) {
    const cJSON *nn = cJSON_GetObjectItemCaseSensitive(st, "nnodes");
    if ((rc = get_num(st, "deadline_s", &d->set_deadline_s, e)) < 0 || (rc = get_num(st, "budget", &d->set_budget, e)) < 0 ||
        (rc = get_text(st, "types", d->set_types, sizeof d->set_types, e)) < 0)
      return rc;
    if (nn && (!cJSON_IsArray(nn) || cJSON_GetArraySize(nn) != 2 || !cJSON_IsNumber(nn->child) ||
               !cJSON_IsNumber(nn->child->next) || nn->child->valuedouble < 1 ||
               nn->child->valuedouble > 1e6 || nn->child->next->valuedouble < 0 || nn->child->next->valuedouble > 1e6))
      return pit_err_set(e, PIT_EFORMAT, "decision \"settings\".\"nnodes\" is not [min >= 1, max >= 0]");
    if (nn) {
      d->set_nmin = (int)nn->child->valuedouble;
      d->set_nmax = (int)nn->child->next->valuedouble;
    }
  }
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "inputs");
  if (in && !cJSON_IsObject(in))
    return pit_err_set(e, PIT_EFORMAT, "decision \"inputs\" is not an object");
  if (in && !(d->inputs = pit_json_print(in)))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  const cJSON *alts = cJSON_GetObjectItemCaseSensitive(o, "alternatives"), *a;
  if (alts && !cJSON_IsArray(alts))
    return pit_err_set(e, PIT_EFORMAT, "decision \"alternatives\" is not an array");
  cJSON_ArrayForEach(a, alts) {
    if ((rc = decode_alt(d, a, e)) < 0)
      return rc;
  }
  int n = -1;
  double *sh = NULL, *pv = NULL, *sp = NULL;
  if ((rc = get_nums(o, "shares", &n, &sh, e)) == 0 && (rc = get_nums(o, "previous", &n, &pv, e)) == 0)
    rc = get_nums(o, "speed_sps", &n, &sp, e);
  if (rc == 0 && n >= 0 && !sh)
    rc = pit_err_set(e, PIT_EFORMAT, "decision has \"previous\" or \"speed_sps\" without \"shares\"");
  if (rc == 0 && sh) {
    if (pit_decision_set_ranks(d, n, 0) < 0 || (pv && !(d->previous = malloc(sizeof *d->previous * (size_t)(n ? n : 1)))) ||
        (sp && !(d->speed_sps = malloc(sizeof *d->speed_sps * (size_t)(n ? n : 1)))))
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
      d->shares[i] = (int64_t)sh[i];
      if (pv)
        d->previous[i] = (int64_t)pv[i];
      if (sp)
        d->speed_sps[i] = sp[i];
    }
  }
  free(sh);
  free(pv);
  free(sp);
  return rc;
}

int pit_decision_decode(struct pit_decision *d, const char *json, struct pit_err *e) {
  pit_decision_release(d);
  cJSON *o = cJSON_Parse(json ? json : "");
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return pit_err_set(e, PIT_EFORMAT, "decision detail is not a JSON object");
  }
  int rc = decode(d, o, e);
  cJSON_Delete(o);
  if (rc < 0)
    pit_decision_release(d);
  return rc;
}

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int same_alt(const struct pit_decision_alt *a, const struct pit_decision_alt *b) {
  return pit_membership_equal(&a->m, &b->m) && same(a->predicted_s, b->predicted_s) && same(a->cost, b->cost) &&
         strcmp(a->what, b->what) == 0 && strcmp(a->model, b->model) == 0 && same(a->pit_s, b->pit_s) &&
         same(a->pit_lo, b->pit_lo) && same(a->pit_hi, b->pit_hi) && same(a->predicted_lo, b->predicted_lo) &&
         same(a->predicted_hi, b->predicted_hi) && a->fits == b->fits;
}

int pit_decision_equal(const struct pit_decision *a, const struct pit_decision *b) {
  if (strcmp(a->kind, b->kind) || a->step != b->step || !a->reason != !b->reason ||
      (a->reason && strcmp(a->reason, b->reason)) || a->nalts != b->nalts || a->nshares != b->nshares ||
      !a->previous != !b->previous || !a->speed_sps != !b->speed_sps ||
      !same(a->predicted_step_s, b->predicted_step_s) ||
      !same(a->previous_predicted_step_s, b->previous_predicted_step_s) || strcmp(a->policy, b->policy) ||
      strcmp(a->action, b->action) || !pit_membership_equal(&a->from, &b->from) ||
      !pit_membership_equal(&a->to, &b->to) || strcmp(a->zone, b->zone) ||
      strcmp(a->spot_mode, b->spot_mode) || !a->inputs != !b->inputs ||
      (a->inputs && strcmp(a->inputs, b->inputs)) || !same(a->set_deadline_s, b->set_deadline_s) ||
      !same(a->set_budget, b->set_budget) || a->set_nmin != b->set_nmin || a->set_nmax != b->set_nmax ||
      strcmp(a->set_types, b->set_types))
    return 0;
  for (int i = 0; i < a->nalts; i++)
    if (!same_alt(&a->alts[i], &b->alts[i]))
      return 0;
  for (int i = 0; i < a->nshares; i++)
    if (a->shares[i] != b->shares[i] || (a->previous && a->previous[i] != b->previous[i]) ||
        (a->speed_sps && !same(a->speed_sps[i], b->speed_sps[i])))
      return 0;
  return 1;
}
