/* members.c — memberships as `pitstop run` takes them on its command line:
 * struct pit_membership (record.h) with counts alone meaning nodes of the
 * default type, a node's market given as TYPE@spot or TYPE@on-demand (read by
 * pit_membership_parse, the one reader of that text; bare: the provider's
 * default); memberships with their markets dropped or set.
 * Invariant: the result is canonical (pit_membership_add_on). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/provider.h"

int pit_run_membership_parse(struct pit_membership *m, const char *text, const char *deftype, struct pit_err *e) {
  pit_membership_clear(m);
  char buf[512];
  if (!text || !*text || strlen(text) >= sizeof buf)
    return pit_err_set(e, PIT_EARG, "an empty or too long membership");
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
    int64_t nodes;
    int rc;
    if (pit_parse_i64(tok, &nodes) == 0) {
      if (!deftype || !*deftype)
        return pit_err_set(e, PIT_EARG, "membership '%s': a count alone needs a default type", text);
      if (nodes < 1 || nodes > 100000)
        return pit_err_set(e, PIT_EARG, "membership '%s': %lld is not a node count", text, (long long)nodes);
      rc = pit_membership_add(m, deftype, (int)nodes, -1, e);
    } else {
      struct pit_membership one;
      if ((rc = pit_membership_parse(&one, tok, e)) < 0)
        return rc;
      for (int i = 0; i < one.n && rc == 0; i++)
        rc = pit_membership_add_on(m, one.m[i].itype, one.m[i].market, one.m[i].nodes, -1, e);
    }
    if (rc < 0)
      return rc;
  }
  if (m->n == 0)
    return pit_err_set(e, PIT_EARG, "an empty membership '%s'", text);
  return 0;
}

void pit_membership_bare(const struct pit_membership *m, struct pit_membership *out) {
  struct pit_membership t;
  pit_membership_clear(&t);
  for (int i = 0; i < m->n; i++) /* cannot fail: the bare entries are no more and no longer than m's */
    pit_membership_add(&t, m->m[i].itype, m->m[i].nodes, m->m[i].ranks_per_node, NULL);
  *out = t;
}

int pit_membership_on_market(const struct pit_membership *bare, enum pit_market mk, const struct pit_catalog *cat,
                             struct pit_membership *out, struct pit_err *e) {
  struct pit_membership t;
  pit_membership_clear(&t);
  for (int i = 0; i < bare->n; i++) {
    const struct pit_itype *it = cat ? pit_catalog_find(cat, bare->m[i].itype) : NULL;
    enum pit_market m = mk == PIT_MARKET_SPOT && cat && !(it && isfinite(it->spot_price_h)) ? PIT_MARKET_ON_DEMAND : mk;
    int rc = pit_membership_add_on(&t, bare->m[i].itype, m, bare->m[i].nodes, bare->m[i].ranks_per_node, e);
    if (rc < 0)
      return rc;
  }
  *out = t;
  return 0;
}

int pit_membership_count(const struct pit_membership *m, const char *itype) {
  int k = 0;
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->m[i].itype, itype) == 0)
      k += m->m[i].nodes;
  return k;
}

int pit_nnodes_parse(const char *text, int *nmin, int *nmax, struct pit_err *e) {
  int a = 0, b = 0;
  char tail;
  if (sscanf(text, "%d:%d%c", &a, &b, &tail) != 2 || a < 1 || b < 1)
    return pit_err_set(e, PIT_EARG, "--nnodes '%s' is not MIN:MAX", text);
  if (a > b)
    return pit_err_set(e, PIT_EARG, "--nnodes %s: MIN %d is above MAX %d", text, a, b);
  *nmin = a;
  *nmax = b;
  return 0;
}
