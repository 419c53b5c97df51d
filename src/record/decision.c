/* decision.c — the detail of a `decision` record: struct pit_decision to JSON and
 * back (cJSON), the one encoder and the one decoder its writers and readers share.
 * Invariants: decode(encode(d)) equals d for every field present (numbers round-trip
 * through cJSON's shortest exact form); keys absent from the struct are absent from
 * the JSON, in the order listed in record.h, so an encoded batch-shares decision is
 * byte for byte what `pitstop train` wrote before this struct existed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/record.h"

void pit_decision_init(struct pit_decision *d) {
  memset(d, 0, sizeof *d);
  d->step = -1;
  d->predicted_step_s = NAN;
  d->previous_predicted_step_s = NAN;
}

void pit_decision_release(struct pit_decision *d) {
  for (int i = 0; i < d->nalts; i++)
    free(d->alts[i].membership);
  PIT_FREE_ALL(d->reason, d->alts, d->shares, d->previous, d->speed_sps);
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

int pit_decision_add_alt(struct pit_decision *d, const char *membership, double predicted_s, double cost) {
  if (PIT_GROW(d->alts, d->nalts + 1, d->capalts))
    return PIT_ENOMEM;
  struct pit_decision_alt *a = &d->alts[d->nalts];
  a->membership = membership ? strdup(membership) : NULL;
  if (membership && !a->membership)
    return PIT_ENOMEM;
  a->predicted_s = predicted_s;
  a->cost = cost;
  d->nalts++;
  return 0;
}

static void add_num(cJSON *o, const char *key, double v) {
  if (!isnan(v))
    cJSON_AddNumberToObject(o, key, v);
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
      cJSON *a = cJSON_CreateObject();
      if (d->alts[i].membership)
        cJSON_AddStringToObject(a, "membership", d->alts[i].membership);
      add_num(a, "predicted_s", d->alts[i].predicted_s);
      add_num(a, "cost", d->alts[i].cost);
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

static int decode(struct pit_decision *d, const cJSON *o, struct pit_err *e) {
  const char *s;
  double step = -1;
  int rc;
  if ((rc = get_str(o, "what", &s, e)) < 0)
    return rc;
  if (s && strlen(s) >= sizeof d->kind)
    return pit_err_set(e, PIT_EFORMAT, "decision \"what\" is longer than %zu bytes", sizeof d->kind - 1);
  snprintf(d->kind, sizeof d->kind, "%s", s ? s : "");
  if ((rc = get_num(o, "step", &step, e)) < 0)
    return rc;
  d->step = (int64_t)step;
  if ((rc = get_str(o, "why", &s, e)) < 0)
    return rc;
  if (s && !(d->reason = strdup(s)))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  if ((rc = get_num(o, "predicted_step_s", &d->predicted_step_s, e)) < 0 ||
      (rc = get_num(o, "previous_predicted_step_s", &d->previous_predicted_step_s, e)) < 0)
    return rc;
  const cJSON *alts = cJSON_GetObjectItemCaseSensitive(o, "alternatives"), *a;
  if (alts && !cJSON_IsArray(alts))
    return pit_err_set(e, PIT_EFORMAT, "decision \"alternatives\" is not an array");
  cJSON_ArrayForEach(a, alts) {
    double t = NAN, c = NAN;
    if (!cJSON_IsObject(a))
      return pit_err_set(e, PIT_EFORMAT, "decision alternative %d is not an object", d->nalts);
    if ((rc = get_str(a, "membership", &s, e)) < 0 || (rc = get_num(a, "predicted_s", &t, e)) < 0 ||
        (rc = get_num(a, "cost", &c, e)) < 0)
      return rc;
    if (pit_decision_add_alt(d, s, t, c) < 0)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
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
