/* config.c — a run's configuration fields from its init record, and the one
 * table of those fields (name, alias, label, whether a field is derived from
 * another) that the canonical key, --group-by, chart lines and labels and the
 * sweep export's configurations all go through.
 * Invariant: absent fields are "" / -1 and print as "-"; the key lists every
 * key field in the table's order, so equal configurations have equal keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/analysis.h"

void pit_config_clear(struct pit_config *c) {
  memset(c, 0, sizeof *c);
  c->batch = -1;
  c->ranks = c->nodes = c->threads = -1;
}

static const cJSON *get(const cJSON *o, const char *k1, const char *k2) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k1);
  if (!v && k2)
    v = cJSON_GetObjectItemCaseSensitive(o, k2);
  return v;
}

static void get_str(const cJSON *o, const char *k1, const char *k2, char *dst, size_t n) {
  const cJSON *v = get(o, k1, k2);
  if (cJSON_IsString(v) && v->valuestring)
    snprintf(dst, n, "%s", v->valuestring);
}

static int64_t get_int(const cJSON *o, const char *k1, const char *k2) {
  const cJSON *v = get(o, k1, k2);
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9e15)
    return (int64_t)v->valuedouble;
  return -1;
}

/* c->members and, from them, itype and absent node/rank totals (see analysis.h). */
static void config_members(struct pit_config *c, const char *config_json) {
  struct pit_membership *m = &c->members;
  if (pit_membership_from_config(m, config_json, NULL) || m->n == 0) {
    pit_membership_clear(m);
    if (c->itype[0]) {
      int nodes = c->nodes > 0 ? c->nodes : 1;
      int rpn = c->ranks > 0 && c->ranks % nodes == 0 ? c->ranks / nodes : -1;
      if (pit_membership_add(m, c->itype, nodes, rpn, NULL))
        pit_membership_clear(m); /* a label that is no type name: no membership */
    }
    return;
  }
  if (m->n == 1)
    snprintf(c->itype, sizeof c->itype, "%s", m->m[0].itype);
  else
    pit_membership_format(m, c->itype, sizeof c->itype);
  if (c->nodes < 0)
    c->nodes = pit_membership_nodes(m);
  if (c->ranks < 0)
    c->ranks = pit_membership_ranks(m);
}

void pit_config_from_record(struct pit_config *c, const struct pit_record *init) {
  pit_config_clear(c);
  cJSON *o = init->config ? cJSON_Parse(init->config) : NULL;
  if (cJSON_IsObject(o)) {
    get_str(o, "model", NULL, c->model, sizeof c->model);
    get_str(o, "itype", "instance_type", c->itype, sizeof c->itype);
    get_str(o, "data", NULL, c->data, sizeof c->data);
    c->batch = get_int(o, "batch", "batch_size");
    c->threads = (int)get_int(o, "threads", NULL);
    c->ranks = (int)get_int(o, "ranks", NULL);
    c->nodes = (int)get_int(o, "nodes", NULL);
  }
  cJSON_Delete(o);
  if (init->ranks >= 0)
    c->ranks = init->ranks;
  if (init->nodes >= 0)
    c->nodes = init->nodes;
  config_members(c, init->config);
}

/* ---- the one table of configuration fields ----
 * Order: the canonical key's, the default grouping's and the labels' order. */
static const struct pit_config_field_def defs[PIT_CF_COUNT] = {
    [PIT_CF_MODEL] = {"model", NULL, 1, -1, "%s", NULL},
    [PIT_CF_BATCH] = {"batch", "batch_size", 1, -1, "batch %s", NULL},
    [PIT_CF_RANKS] = {"ranks", NULL, 1, -1, "%s rank", "%s ranks"},
    [PIT_CF_NODES] = {"nodes", NULL, 1, -1, "%s node", "%s nodes"},
    [PIT_CF_ITYPE] = {"itype", "instance_type", 1, -1, "%s", NULL},
    /* threads per rank default to cores / ranks: a function of ranks, not a choice */
    [PIT_CF_THREADS] = {"threads", NULL, 1, PIT_CF_RANKS, "%s thread", "%s threads"},
    [PIT_CF_DATA] = {"data", NULL, 0, -1, "%s", NULL},
};

const struct pit_config_field_def *pit_config_field_def(int f) {
  return f >= 0 && f < PIT_CF_COUNT ? &defs[f] : NULL;
}

int pit_config_field_find(const char *name) {
  for (int f = 0; f < PIT_CF_COUNT; f++)
    if (strcmp(name, defs[f].name) == 0 || (defs[f].alias && strcmp(name, defs[f].alias) == 0))
      return f;
  return -1;
}

/* A text field's value (NULL for a number field), or a number field's (-1 absent). */
static const char *str_of(const struct pit_config *c, int f) {
  switch (f) {
  case PIT_CF_MODEL: return c->model;
  case PIT_CF_ITYPE: return c->itype;
  case PIT_CF_DATA: return c->data;
  default: return NULL;
  }
}
static int64_t int_of(const struct pit_config *c, int f) {
  switch (f) {
  case PIT_CF_BATCH: return c->batch;
  case PIT_CF_RANKS: return c->ranks;
  case PIT_CF_NODES: return c->nodes;
  case PIT_CF_THREADS: return c->threads;
  default: return -1;
  }
}

int pit_config_field_equal(const struct pit_config *a, const struct pit_config *b, int f) {
  const char *sa = str_of(a, f);
  return sa ? strcmp(sa, str_of(b, f)) == 0 : int_of(a, f) == int_of(b, f);
}

int pit_config_same(const struct pit_config *a, const struct pit_config *b, unsigned fields) {
  for (int f = 0; f < PIT_CF_COUNT; f++)
    if ((fields & (1u << f)) && !pit_config_field_equal(a, b, f))
      return 0;
  return 1;
}

unsigned pit_config_key_fields(void) {
  unsigned m = 0;
  for (int f = 0; f < PIT_CF_COUNT; f++)
    m |= defs[f].in_key ? 1u << f : 0;
  return m;
}

unsigned pit_config_differing(const struct pit_config *const *cfgs, int n, unsigned fields) {
  unsigned differ = 0;
  for (int f = 0; f < PIT_CF_COUNT; f++)
    for (int i = 1; i < n && (fields & (1u << f)) && !(differ & (1u << f)); i++)
      if (!pit_config_field_equal(cfgs[0], cfgs[i], f))
        differ |= 1u << f;
  return differ;
}

unsigned pit_config_varied(const struct pit_config *const *cfgs, int n, unsigned fields) {
  unsigned varied = pit_config_differing(cfgs, n, fields);
  /* a derived field that is a function of its source among these runs follows
   * the source: it was not varied by the user */
  for (int f = 0; f < PIT_CF_COUNT; f++) {
    int src = defs[f].derived_from;
    if (src < 0 || !(varied & (1u << f)))
      continue;
    int follows = 1;
    for (int i = 0; i < n && follows; i++)
      for (int k = i + 1; k < n && follows; k++)
        if (pit_config_field_equal(cfgs[i], cfgs[k], src) && !pit_config_field_equal(cfgs[i], cfgs[k], f))
          follows = 0;
    if (follows)
      varied &= ~(1u << f);
  }
  return varied;
}

static void put_i(char *buf, size_t n, int64_t v) {
  if (v < 0)
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%lld", (long long)v);
}

/* The value as text; "-" when absent. */
static void value_of(const struct pit_config *c, int f, char *buf, size_t n) {
  const char *s = str_of(c, f);
  if (s)
    snprintf(buf, n, "%s", s[0] ? s : "-");
  else
    put_i(buf, n, int_of(c, f));
}

void pit_config_key(const struct pit_config *c, char *buf, size_t n) {
  size_t off = 0;
  buf[0] = '\0';
  for (int f = 0; f < PIT_CF_COUNT && off < n; f++) {
    if (!defs[f].in_key)
      continue;
    char v[PIT_MEMBERSHIP_TEXT_MAX];
    value_of(c, f, v, sizeof v);
    off += (size_t)snprintf(buf + off, n - off, "%s%s=%s", off ? " " : "", defs[f].name, v);
  }
}

int pit_config_field_label(const struct pit_config *c, int f, char *buf, size_t n) {
  const char *s = str_of(c, f);
  int64_t v = int_of(c, f);
  buf[0] = '\0';
  if (s ? !s[0] : v <= 0)
    return 0;
  char val[PIT_MEMBERSHIP_TEXT_MAX];
  value_of(c, f, val, sizeof val);
  const char *fmt = !s && v != 1 && defs[f].label_n ? defs[f].label_n : defs[f].label_1;
  snprintf(buf, n, fmt, val);
  return 1;
}

double pit_config_num(const struct pit_config *c, const char *config_json, const char *field) {
  int f = pit_config_field_find(field);
  if (f >= 0) {
    const char *s = str_of(c, f);
    if (!s) {
      int64_t v = int_of(c, f);
      return v >= 0 ? (double)v : NAN;
    }
    char *end;
    double v = strtod(s, &end);
    return end != s && *end == 0 ? v : NAN;
  }
  cJSON *o = config_json ? cJSON_Parse(config_json) : NULL;
  const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, field) : NULL;
  double x = NAN;
  if (cJSON_IsNumber(v)) {
    x = v->valuedouble;
  } else if (cJSON_IsString(v) && v->valuestring) {
    char *end;
    double d = strtod(v->valuestring, &end);
    if (end != v->valuestring && *end == 0)
      x = d;
  }
  cJSON_Delete(o);
  return x;
}

void pit_config_field(const struct pit_config *c, const char *config_json, const char *field, char *buf,
                      size_t n) {
  int f = pit_config_field_find(field);
  if (f >= 0) {
    value_of(c, f, buf, n);
  } else {
    snprintf(buf, n, "-");
    cJSON *o = config_json ? cJSON_Parse(config_json) : NULL;
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, field) : NULL;
    if (cJSON_IsString(v) && v->valuestring)
      snprintf(buf, n, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
      snprintf(buf, n, "%g", v->valuedouble);
    else if (cJSON_IsBool(v))
      snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    cJSON_Delete(o);
  }
}
