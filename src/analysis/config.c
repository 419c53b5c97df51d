/* config.c — a run's configuration fields from its init record, the canonical
 * configuration key, and the text value of any grouping field.
 * Invariant: absent fields are "" / -1 and print as "-"; the key lists every
 * field in a fixed order so equal configurations have equal keys. */
#include <math.h>
#include <stdio.h>
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

static void put_i(char *buf, size_t n, int64_t v) {
  if (v < 0)
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%lld", (long long)v);
}

void pit_config_key(const struct pit_config *c, char *buf, size_t n) {
  char b[24], r[24], no[24], th[24];
  put_i(b, sizeof b, c->batch);
  put_i(r, sizeof r, c->ranks);
  put_i(no, sizeof no, c->nodes);
  put_i(th, sizeof th, c->threads);
  snprintf(buf, n, "model=%s batch=%s ranks=%s nodes=%s itype=%s threads=%s", c->model[0] ? c->model : "-", b,
           r, no, c->itype[0] ? c->itype : "-", th);
}

void pit_config_field(const struct pit_config *c, const char *config_json, const char *field, char *buf,
                      size_t n) {
  if (strcmp(field, "model") == 0) {
    snprintf(buf, n, "%s", c->model[0] ? c->model : "-");
  } else if (strcmp(field, "itype") == 0 || strcmp(field, "instance_type") == 0) {
    snprintf(buf, n, "%s", c->itype[0] ? c->itype : "-");
  } else if (strcmp(field, "data") == 0) {
    snprintf(buf, n, "%s", c->data[0] ? c->data : "-");
  } else if (strcmp(field, "batch") == 0 || strcmp(field, "batch_size") == 0) {
    put_i(buf, n, c->batch);
  } else if (strcmp(field, "ranks") == 0) {
    put_i(buf, n, c->ranks);
  } else if (strcmp(field, "nodes") == 0) {
    put_i(buf, n, c->nodes);
  } else if (strcmp(field, "threads") == 0) {
    put_i(buf, n, c->threads);
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
