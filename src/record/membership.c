/* membership.c — a configuration's machines: a list of {instance type, market,
 * nodes, ranks per node} with its text form ("m5.large:2+c5.xlarge@spot:1x4") and
 * JSON form (the init record config's "membership" key). See record.h. The one
 * place a market's text form TYPE@spot is parsed (pit_itype_market_parse) and
 * printed (pit_itype_market_format).
 *
 * Invariants: a struct pit_membership is always canonical — entries sorted by
 * (name TYPE[@MARKET], ranks_per_node) with unknown ranks (-1) first, no two
 * entries with the same (itype, market, ranks_per_node), nodes >= 1 (the order
 * of the names, so a canonical text is what it was when the market was part of
 * the type string) — and its canonical text fits in
 * PIT_MEMBERSHIP_TEXT_MAX - 1 characters. Every function that changes one keeps
 * it so (a failed add leaves it unchanged). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/record.h"

void pit_membership_clear(struct pit_membership *m) { memset(m, 0, sizeof *m); }

static int valid_name(const char *s) {
  if (!*s || strlen(s) >= PIT_NAME_MAX)
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("._/-", *s))
      return 0;
  return 1;
}

const char *pit_market_name(enum pit_market mk) {
  return mk == PIT_MARKET_SPOT ? "spot" : mk == PIT_MARKET_ON_DEMAND ? "on-demand" : "";
}

int pit_market_parse(const char *name, enum pit_market *mk, struct pit_err *e) {
  *mk = PIT_MARKET_DEFAULT;
  if (!name || !*name)
    return 0;
  if (strcmp(name, "spot") == 0)
    *mk = PIT_MARKET_SPOT;
  else if (strcmp(name, "on-demand") == 0)
    *mk = PIT_MARKET_ON_DEMAND;
  else
    return pit_err_set(e, PIT_EFORMAT, "market '%s' is neither spot nor on-demand", name);
  return 0;
}

void pit_itype_market_format(const char *itype, enum pit_market mk, char *buf, size_t n) {
  snprintf(buf, n, "%s%s%s", itype, mk == PIT_MARKET_DEFAULT ? "" : "@", pit_market_name(mk));
}

int pit_itype_market_parse(const char *name, char *itype, size_t n, enum pit_market *mk, struct pit_err *e) {
  const char *at = strchr(name, '@');
  size_t len = at ? (size_t)(at - name) : strlen(name);
  *mk = PIT_MARKET_DEFAULT;
  if (at && strcmp(at, "@spot") == 0)
    *mk = PIT_MARKET_SPOT;
  else if (at && strcmp(at, "@on-demand") == 0)
    *mk = PIT_MARKET_ON_DEMAND;
  else if (at)
    return pit_err_set(e, PIT_EARG, "'%s': a market is TYPE@spot or TYPE@on-demand", name);
  if (len == 0 || len >= n || len >= PIT_NAME_MAX)
    return pit_err_set(e, PIT_EARG, "instance type '%s' is not a name of 1-%d letters, digits and ._/-", name,
                       PIT_NAME_MAX - 1);
  snprintf(itype, n, "%.*s", (int)len, name);
  if (!valid_name(itype))
    return pit_err_set(e, PIT_EARG, "instance type '%s' is not a name of 1-%d letters, digits and ._/-", name,
                       PIT_NAME_MAX - 1);
  return 0;
}

static int cmp_member(const struct pit_member *a, const struct pit_member *b) {
  char x[PIT_NAME_MAX + 16], y[PIT_NAME_MAX + 16];
  pit_itype_market_format(a->itype, a->market, x, sizeof x);
  pit_itype_market_format(b->itype, b->market, y, sizeof y);
  int c = strcmp(x, y);
  return c ? c : (a->ranks_per_node > b->ranks_per_node) - (a->ranks_per_node < b->ranks_per_node);
}

int pit_membership_add(struct pit_membership *m, const char *itype, int nodes, int ranks_per_node,
                       struct pit_err *e) {
  return pit_membership_add_on(m, itype, PIT_MARKET_DEFAULT, nodes, ranks_per_node, e);
}

int pit_membership_add_on(struct pit_membership *m, const char *itype, enum pit_market mk, int nodes,
                          int ranks_per_node, struct pit_err *e) {
  if (!valid_name(itype))
    return pit_err_set(e, PIT_EARG, "instance type '%s' is not a name of 1-%d letters, digits and ._/-", itype,
                       PIT_NAME_MAX - 1);
  if (nodes < 1)
    return pit_err_set(e, PIT_EARG, "%s: node count %d is not positive", itype, nodes);
  if (ranks_per_node < 1 && ranks_per_node != -1)
    return pit_err_set(e, PIT_EARG, "%s: ranks per node %d is not positive", itype, ranks_per_node);
  struct pit_membership t = *m;
  struct pit_member add = {.market = mk, .nodes = nodes, .ranks_per_node = ranks_per_node};
  snprintf(add.itype, sizeof add.itype, "%s", itype);
  int i = 0;
  while (i < t.n && cmp_member(&t.m[i], &add) < 0)
    i++;
  if (i < t.n && cmp_member(&t.m[i], &add) == 0) {
    if (t.m[i].nodes > (1 << 30) - nodes)
      return pit_err_set(e, PIT_EARG, "%s: too many nodes", itype);
    t.m[i].nodes += nodes;
  } else {
    if (t.n == PIT_MEMBERS_MAX)
      return pit_err_set(e, PIT_EARG, "a membership has at most %d entries", PIT_MEMBERS_MAX);
    memmove(&t.m[i + 1], &t.m[i], sizeof t.m[0] * (size_t)(t.n - i));
    t.m[i] = add;
    t.n++;
  }
  char text[PIT_MEMBERSHIP_TEXT_MAX + 1];
  pit_membership_format(&t, text, sizeof text);
  if (strlen(text) >= PIT_MEMBERSHIP_TEXT_MAX)
    return pit_err_set(e, PIT_EARG, "membership text longer than %d characters", PIT_MEMBERSHIP_TEXT_MAX - 1);
  *m = t;
  return 0;
}

/* A positive count: digits only. */
static int count(const char *s, size_t len, int *out) {
  if (len == 0 || len > 9)
    return -1;
  int v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)s[i]))
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return v >= 1 ? 0 : -1;
}

/* One entry "TYPE[:NODES[xRANKS]]" of len bytes at s (spaces around it ignored). */
static int parse_entry(struct pit_membership *m, const char *s, size_t len, const char *text, struct pit_err *e) {
  while (len && isspace((unsigned char)*s))
    s++, len--;
  while (len && isspace((unsigned char)s[len - 1]))
    len--;
  const char *colon = memchr(s, ':', len);
  size_t tlen = colon ? (size_t)(colon - s) : len;
  char name[PIT_NAME_MAX];
  if (tlen == 0 || tlen >= sizeof name)
    return pit_err_set(e, PIT_EARG, "membership '%s': entry without an instance type (TYPE[:NODES[xRANKS]])", text);
  memcpy(name, s, tlen);
  name[tlen] = '\0';
  int nodes = 1, rpn = -1;
  if (colon) {
    const char *c = colon + 1, *end = s + len;
    const char *x = memchr(c, 'x', (size_t)(end - c));
    if (count(c, (size_t)((x ? x : end) - c), &nodes) || (x && count(x + 1, (size_t)(end - x - 1), &rpn)))
      return pit_err_set(e, PIT_EARG, "membership '%s': '%.*s' is not TYPE:NODES or TYPE:NODESxRANKS (positive counts)",
                         text, (int)len, s);
  }
  struct pit_err sub = {0};
  char itype[PIT_NAME_MAX];
  enum pit_market mk;
  int rc = pit_itype_market_parse(name, itype, sizeof itype, &mk, &sub);
  if (rc == 0)
    rc = pit_membership_add_on(m, itype, mk, nodes, rpn, &sub);
  return rc ? pit_err_set(e, rc, "membership '%s': %s", text, sub.msg) : 0;
}

int pit_membership_parse(struct pit_membership *m, const char *text, struct pit_err *e) {
  struct pit_membership t;
  pit_membership_clear(&t);
  pit_membership_clear(m);
  const char *p = text;
  for (;;) {
    const char *plus = strchr(p, '+');
    size_t len = plus ? (size_t)(plus - p) : strlen(p);
    int rc = parse_entry(&t, p, len, text, e);
    if (rc)
      return rc;
    if (!plus)
      break;
    p = plus + 1;
  }
  *m = t;
  return 0;
}

void pit_membership_format(const struct pit_membership *m, char *buf, size_t n) {
  size_t off = 0;
  if (n)
    buf[0] = '\0';
  for (int i = 0; i < m->n && off < n; i++) {
    const struct pit_member *x = &m->m[i];
    char name[PIT_NAME_MAX + 16];
    pit_itype_market_format(x->itype, x->market, name, sizeof name);
    int w = x->ranks_per_node > 0
                ? snprintf(buf + off, n - off, "%s%s:%dx%d", i ? "+" : "", name, x->nodes, x->ranks_per_node)
                : snprintf(buf + off, n - off, "%s%s:%d", i ? "+" : "", name, x->nodes);
    off += (size_t)w;
  }
}

int pit_membership_equal(const struct pit_membership *a, const struct pit_membership *b) {
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (cmp_member(&a->m[i], &b->m[i]) || a->m[i].nodes != b->m[i].nodes)
      return 0;
  return 1;
}

int pit_membership_nodes(const struct pit_membership *m) {
  int s = 0;
  for (int i = 0; i < m->n; i++)
    s += m->m[i].nodes;
  return s;
}

int pit_membership_ranks(const struct pit_membership *m) {
  int s = 0;
  for (int i = 0; i < m->n; i++) {
    if (m->m[i].ranks_per_node < 1)
      return -1;
    s += m->m[i].nodes * m->m[i].ranks_per_node;
  }
  return m->n ? s : -1;
}

struct cJSON *pit_membership_cjson(const struct pit_membership *m) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < m->n; i++) {
    cJSON *o = cJSON_CreateObject();
    char name[PIT_NAME_MAX + 16];
    pit_itype_market_format(m->m[i].itype, m->m[i].market, name, sizeof name);
    if (!o || !cJSON_AddItemToArray(a, o) || !cJSON_AddStringToObject(o, "itype", name) ||
        !cJSON_AddNumberToObject(o, "nodes", m->m[i].nodes) ||
        (m->m[i].ranks_per_node > 0 && !cJSON_AddNumberToObject(o, "ranks_per_node", m->m[i].ranks_per_node))) {
      cJSON_Delete(a);
      return NULL;
    }
  }
  return a;
}

char *pit_membership_json(const struct pit_membership *m) {
  cJSON *a = pit_membership_cjson(m);
  char *s = a ? pit_json_print(a) : NULL;
  cJSON_Delete(a);
  return s;
}

/* A JSON number that is a whole count >= 1, or -1 when absent (absent_ok). */
static int json_count(const cJSON *v, int absent_ok, int *out) {
  if (!v && absent_ok) {
    *out = -1;
    return 0;
  }
  if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > (1 << 30) || v->valuedouble != (int)v->valuedouble)
    return -1;
  *out = (int)v->valuedouble;
  return 0;
}

static int from_array(struct pit_membership *m, const cJSON *a, struct pit_err *e) {
  const cJSON *o;
  int i = 0;
  cJSON_ArrayForEach(o, a) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "itype");
    int nodes, rpn;
    struct pit_err sub = {0};
    if (!cJSON_IsObject(o) || !cJSON_IsString(t) ||
        json_count(cJSON_GetObjectItemCaseSensitive(o, "nodes"), 0, &nodes) ||
        json_count(cJSON_GetObjectItemCaseSensitive(o, "ranks_per_node"), 1, &rpn))
      return pit_err_set(e, PIT_EFORMAT,
                         "membership entry %d is not {\"itype\": TEXT, \"nodes\": N >= 1[, \"ranks_per_node\": R >= 1]}",
                         i + 1);
    char itype[PIT_NAME_MAX];
    enum pit_market mk;
    if (pit_itype_market_parse(t->valuestring, itype, sizeof itype, &mk, &sub) ||
        pit_membership_add_on(m, itype, mk, nodes, rpn, &sub))
      return pit_err_set(e, PIT_EFORMAT, "membership entry %d: %s", i + 1, sub.msg);
    i++;
  }
  return i ? 0 : pit_err_set(e, PIT_EFORMAT, "membership is an empty list");
}

int pit_membership_from_config(struct pit_membership *m, const char *config_json, struct pit_err *e) {
  pit_membership_clear(m);
  cJSON *o = config_json ? cJSON_Parse(config_json) : NULL;
  const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "membership") : NULL;
  int rc = 0;
  if (cJSON_IsArray(v))
    rc = from_array(m, v, e);
  else if (cJSON_IsString(v))
    rc = pit_membership_parse(m, v->valuestring, e) ? PIT_EFORMAT : 0;
  else if (v)
    rc = pit_err_set(e, PIT_EFORMAT, "membership is neither a list nor a text");
  cJSON_Delete(o);
  if (rc)
    pit_membership_clear(m);
  return rc;
}
