/* members.c — a membership as the controller speaks of it: instance types and
 * node counts, in the text form "local-1:2+local-0.4:1".
 * Invariants: every member has nodes >= 1 and a type given once; n <= PIT_MEMBERS_MAX. */
#include <stdio.h>
#include <string.h>

#include "pitstop/control.h"

static int add(struct pit_members *m, const char *type, int64_t nodes, const char *text, struct pit_err *e) {
  if (nodes < 1 || nodes > 100000)
    return pit_err_set(e, PIT_EARG, "membership '%s': a node count must be between 1 and 100000", text);
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->m[i].itype, type) == 0)
      return pit_err_set(e, PIT_EARG, "membership '%s' names type '%s' twice", text, type);
  if (m->n == PIT_MEMBERS_MAX)
    return pit_err_set(e, PIT_EARG, "membership '%s' has more than %d types", text, PIT_MEMBERS_MAX);
  if (!*type || strlen(type) >= PIT_NAME_MAX)
    return pit_err_set(e, PIT_EARG, "membership '%s': an empty or too long type name", text);
  snprintf(m->m[m->n].itype, PIT_NAME_MAX, "%s", type);
  m->m[m->n].nodes = (int)nodes;
  m->n++;
  return 0;
}

int pit_members_parse(struct pit_members *m, const char *text, const char *deftype, struct pit_err *e) {
  memset(m, 0, sizeof *m);
  char buf[512];
  if (!text || !*text || strlen(text) >= sizeof buf)
    return pit_err_set(e, PIT_EARG, "an empty or too long membership");
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *tok = strtok_r(buf, "+,", &save); tok; tok = strtok_r(NULL, "+,", &save)) {
    char *colon = strrchr(tok, ':');
    int64_t nodes;
    int rc;
    if (!colon) {
      if (pit_parse_i64(tok, &nodes) < 0)
        return pit_err_set(e, PIT_EARG, "membership '%s': '%s' is neither TYPE:N nor a node count", text, tok);
      if (!deftype || !*deftype)
        return pit_err_set(e, PIT_EARG, "membership '%s': a count alone needs a default type", text);
      rc = add(m, deftype, nodes, text, e);
    } else {
      *colon = 0;
      if (pit_parse_i64(colon + 1, &nodes) < 0)
        return pit_err_set(e, PIT_EARG, "membership '%s': '%s' is not a node count", text, colon + 1);
      rc = add(m, tok, nodes, text, e);
    }
    if (rc < 0)
      return rc;
  }
  if (m->n == 0)
    return pit_err_set(e, PIT_EARG, "an empty membership '%s'", text);
  return 0;
}

void pit_members_format(const struct pit_members *m, char *buf, size_t n) {
  size_t at = 0;
  if (n)
    buf[0] = 0;
  for (int i = 0; i < m->n && at < n; i++) {
    int w = snprintf(buf + at, n - at, "%s%s:%d", i ? "+" : "", m->m[i].itype, m->m[i].nodes);
    if (w < 0)
      break;
    at += (size_t)w;
  }
}

int pit_members_nodes(const struct pit_members *m) {
  int k = 0;
  for (int i = 0; i < m->n; i++)
    k += m->m[i].nodes;
  return k;
}

int pit_members_count(const struct pit_members *m, const char *itype) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->m[i].itype, itype) == 0)
      return m->m[i].nodes;
  return 0;
}

int pit_members_equal(const struct pit_members *a, const struct pit_members *b) {
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (pit_members_count(b, a->m[i].itype) != a->m[i].nodes)
      return 0;
  return 1;
}
