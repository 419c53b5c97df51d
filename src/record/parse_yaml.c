/* parse_yaml.c — per-instance-type timing files in YAML (the andrefz DCGAN
 * course run's times.yaml, docs/parse.md "YAML timing files"), read with
 * libyaml's document loader:
 *
 *   - c4.large:              instance type (a mapping key, or a sequence of
 *     - rank_0:              one-key mappings, at each of these two levels)
 *       - it: [1.30, 1.15]   iteration times of the rank, in order (s)
 *       - epoch: [1787.5]    epoch times (s), or one number
 *
 * Each instance type becomes one run "<run>.<type>": an init record (ranks,
 * the type, and the batch only when the caller gave one), then per rank its
 * iteration records (epoch 0, iter = step = position) and epoch records.
 *
 * Invariants: the whole document is checked before the first record is
 * emitted, so a bad file gives one "file:line: reason" error and no record;
 * every rank of a type has as many iteration and epoch times as the others
 * (a shorter one is how a cut-off file shows); times are finite and >= 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "record/parse_impl.h"

/* Skips blank lines, comments and a "---" / "%YAML" header; returns the first
 * other line's start, or NULL. */
static const char *first_line(const char *s, const char *end) {
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *le = nl ? nl : end, *q = s;
    while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
      q++;
    int header = (le - q >= 3 && memcmp(q, "---", 3) == 0) || (q < le && *q == '%');
    if (q < le && *q != '#' && !header)
      return q;
    s = le + (nl != NULL);
  }
  return NULL;
}

int pit_pl_yaml_claims(const char *buf, size_t len) {
  const char *end = buf + len, *s = first_line(buf, end);
  if (!s)
    return 0;
  const char *nl = memchr(s, '\n', (size_t)(end - s));
  const char *le = nl ? nl : end;
  while (le > s && (le[-1] == ' ' || le[-1] == '\t' || le[-1] == '\r'))
    le--;
  if (s < le && *s == '-') { /* "- key:" */
    s++;
    if (s == le || (*s != ' ' && *s != '\t'))
      return 0;
    pl_ws(&s, le);
  }
  /* "key:" with nothing after it: a block mapping whose values follow */
  if (le - s < 2 || le[-1] != ':')
    return 0;
  for (const char *q = s; q < le - 1; q++) {
    char c = *q;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || pl_isdigit(c) || c == '.' || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

/* ---- the document, checked ---- */

struct yrank {
  int rank;
  const char *type;              /* the instance type's name (not owned) */
  const yaml_node_t *it, *epoch; /* sequences or scalars; NULL absent */
  int nit, nep;
};

struct ytype {
  char name[PIT_NAME_MAX];
  struct yrank *ranks;           /* owned */
  int nranks;
};

struct yread {
  struct pit_parser *p;
  yaml_document_t *doc;
  struct ytype *types;           /* owned */
  int ntypes;
  int partial;                   /* the file's last line has no newline */
  struct pit_err *e;
};

static int ybad(struct yread *y, const yaml_node_t *n, const char *fmt, const char *a, const char *b) {
  char what[256];
  snprintf(what, sizeof what, fmt, a, b);
  return pit_err_set(y->e, PIT_EFORMAT, "%s:%lu: %s%s", y->p->file, n ? (unsigned long)n->start_mark.line + 1 : 1UL,
                     what, y->partial ? " (last line has no newline: truncated?)" : "");
}

static const char *scalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The (key, value) entries of n: a mapping, or a sequence of one-key mappings.
 * Calls f for each; stops at its first error. */
typedef int (*entry_fn)(struct yread *y, const yaml_node_t *key, const yaml_node_t *val, void *arg);
static int entries(struct yread *y, const yaml_node_t *n, const char *what, entry_fn f, void *arg) {
  if (n && n->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
      int rc = f(y, yaml_document_get_node(y->doc, pr->key), yaml_document_get_node(y->doc, pr->value), arg);
      if (rc)
        return rc;
    }
    return 0;
  }
  if (n && n->type == YAML_SEQUENCE_NODE) {
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
      const yaml_node_t *m = yaml_document_get_node(y->doc, *it);
      if (!m || m->type != YAML_MAPPING_NODE || m->data.mapping.pairs.top - m->data.mapping.pairs.start != 1)
        return ybad(y, m, "unknown YAML layout: expected '%s: ...' here%s", what, "");
      yaml_node_pair_t *pr = m->data.mapping.pairs.start;
      int rc = f(y, yaml_document_get_node(y->doc, pr->key), yaml_document_get_node(y->doc, pr->value), arg);
      if (rc)
        return rc;
    }
    return 0;
  }
  return ybad(y, n, "unknown YAML layout: expected '%s: ...' entries here%s", what, "");
}

/* Time lists: a sequence of numbers, or one number. */
static int ntimes(const yaml_node_t *n) {
  return n->type == YAML_SEQUENCE_NODE ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : 1;
}
static const yaml_node_t *time_node(struct yread *y, const yaml_node_t *n, int i) {
  return n->type == YAML_SEQUENCE_NODE ? yaml_document_get_node(y->doc, n->data.sequence.items.start[i]) : n;
}
/* The time a scalar node holds: 1 and *x, or 0 (not a finite number >= 0). */
static int time_of(const yaml_node_t *v, double *x) {
  if (!v || v->type != YAML_SCALAR_NODE)
    return 0;
  const char *s = (const char *)v->data.scalar.value, *end = s + v->data.scalar.length, *q = s;
  int dig;
  return pit_pl_f64(&q, end, x, &dig) && q == end && *x >= 0;
}

/* Checks the time list n (what of the rank named where); *count its length. */
static int times(struct yread *y, const yaml_node_t *n, const char *what, const char *where, int *count) {
  int k = n ? ntimes(n) : 0;
  double x;
  for (int i = 0; i < k; i++)
    if (!time_of(time_node(y, n, i), &x)) {
      const char *v = scalar(time_node(y, n, i));
      char at[PIT_NAME_MAX + 64], val[40];
      snprintf(at, sizeof at, "%s of %s", what, where);
      snprintf(val, sizeof val, "'%.32s'", v ? v : "(a list or mapping)");
      return ybad(y, time_node(y, n, i), "%s: %s is not a time in seconds (a number >= 0)", at, val);
    }
  if (k == 0)
    return ybad(y, n, "%s of %s: no times", what, where);
  *count = k;
  return 0;
}

static double time_at(struct yread *y, const yaml_node_t *n, int i) {
  double x = NAN;
  time_of(time_node(y, n, i), &x);
  return x;
}

static int rank_entry(struct yread *y, const yaml_node_t *key, const yaml_node_t *val, void *arg) {
  struct yrank *r = arg;
  const char *k = scalar(key);
  char what[PIT_NAME_MAX + 32];
  snprintf(what, sizeof what, "rank_%d of %s", r->rank, r->type);
  if (k && strcmp(k, "it") == 0 && !r->it) {
    r->it = val;
    return times(y, val, "'it'", what, &r->nit);
  }
  if (k && strcmp(k, "epoch") == 0 && !r->epoch) {
    r->epoch = val;
    return times(y, val, "'epoch'", what, &r->nep);
  }
  return ybad(y, key, "unknown YAML layout: '%s' under %s (expected 'it' and 'epoch', once each)", k ? k : "?", what);
}

static int rank_of(const char *k, int *rank) {
  if (!k || strncmp(k, "rank", 4) != 0)
    return 0;
  k += 4;
  if (*k == '_' || *k == ' ')
    k++;
  int64_t v;
  const char *s = k, *end = k + strlen(k);
  if (!pl_i64(&s, end, &v) || s != end || v > 1000000)
    return 0;
  *rank = (int)v;
  return 1;
}

static int type_entry(struct yread *y, const yaml_node_t *key, const yaml_node_t *val, void *arg) {
  struct ytype *t = arg;
  const char *k = scalar(key);
  struct yrank r = {0};
  r.type = t->name;
  if (!rank_of(k, &r.rank))
    return ybad(y, key, "unknown YAML layout: '%s' under %s (expected rank_0, rank_1, ...)", k ? k : "?", t->name);
  for (int i = 0; i < t->nranks; i++)
    if (t->ranks[i].rank == r.rank)
      return ybad(y, key, "%s: %s appears twice", t->name, k);
  int rc = entries(y, val, "it", rank_entry, &r);
  if (rc)
    return rc;
  if (!r.it && !r.epoch)
    return ybad(y, key, "%s of %s has no 'it' or 'epoch' times", k, t->name);
  size_t n = (size_t)t->nranks;
  if (PIT_GROW(t->ranks, t->nranks + 1, n))
    return pit_err_set(y->e, PIT_ENOMEM, "out of memory");
  t->ranks[t->nranks++] = r;
  const struct yrank *f = &t->ranks[0];
  if (r.nit != f->nit || r.nep != f->nep) {
    char a[PIT_NAME_MAX + 32], b[112];
    snprintf(a, sizeof a, "rank_%d of %s", r.rank, t->name);
    snprintf(b, sizeof b, "%d iteration and %d epoch times, rank_%d has %d and %d", r.nit, r.nep, f->rank, f->nit,
             f->nep);
    return ybad(y, key, y->partial ? "%s has %s" : "%s has %s (truncated?)", a, b);
  }
  return 0;
}

static int top_entry(struct yread *y, const yaml_node_t *key, const yaml_node_t *val, void *arg) {
  (void)arg;
  const char *k = scalar(key);
  if (!k || !*k || strlen(k) >= PIT_NAME_MAX || !pl_name_ok(k, strlen(k)))
    return ybad(y, key, "unknown YAML layout: '%s' is no instance type name (letters, digits, '._-')%s", k ? k : "?",
                "");
  for (int i = 0; i < y->ntypes; i++)
    if (strcmp(y->types[i].name, k) == 0)
      return ybad(y, key, "instance type '%s' appears twice%s", k, "");
  size_t n = (size_t)y->ntypes;
  if (PIT_GROW(y->types, y->ntypes + 1, n))
    return pit_err_set(y->e, PIT_ENOMEM, "out of memory");
  struct ytype *t = &y->types[y->ntypes++];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", k);
  if (!val || (val->type == YAML_SCALAR_NODE && !*scalar(val)) ||
      (val->type == YAML_SEQUENCE_NODE && val->data.sequence.items.top == val->data.sequence.items.start) ||
      (val->type == YAML_MAPPING_NODE && val->data.mapping.pairs.top == val->data.mapping.pairs.start))
    return ybad(y, key, "instance type '%s' has no ranks%s", k, "");
  return entries(y, val, "rank_0", type_entry, t);
}

/* ---- records ---- */

static int emit_type(struct yread *y, const struct ytype *t, struct pit_err *e) {
  struct pit_parser *p = y->p;
  struct pit_record r = p->blank;
  char run[PIT_NAME_MAX * 2 + 2];
  snprintf(run, sizeof run, "%s.%s", p->run, t->name);
  pl_copy_name(r.run, sizeof r.run, run, strlen(run));
  /* the job context: ranks and type from the file, the batch only as the caller gave it */
  memcpy(p->itype, t->name, strlen(t->name) + 1);
  p->world = t->nranks;
  p->per_epoch = -1;
  struct pit_record init = r;
  init.type = PIT_REC_INIT;
  init.ranks = t->nranks;
  int rc = pit_pl_emit_init(p, &init, e);
  for (int i = 0; i < t->nranks && !rc; i++) {
    const struct yrank *k = &t->ranks[i];
    for (int j = 0; j < k->nit && !rc; j++) {
      struct pit_record it = r;
      it.type = PIT_REC_ITER;
      it.rank = k->rank;
      it.epoch = 0;
      it.iter = it.step = j;
      if (p->batch_per_rank > 0)
        it.batch = p->batch_per_rank * t->nranks;
      it.step_s = time_at(y, k->it, j);
      rc = pit_pl_emit(p, &it, e);
    }
    for (int j = 0; j < k->nep && !rc; j++) {
      struct pit_record ep = r;
      ep.type = PIT_REC_EPOCH;
      ep.rank = k->rank;
      ep.epoch = j;
      ep.epoch_s = time_at(y, k->epoch, j);
      rc = pit_pl_emit(p, &ep, e);
    }
  }
  return rc;
}

int pit_parser_yaml(struct pit_parser *p, const char *buf, size_t len, struct pit_err *e) {
  for (size_t i = 0; i < len; i++) /* lines, as the line parser counts them */
    p->st.lines += buf[i] == '\n';
  int partial = len && buf[len - 1] != '\n';
  p->st.lines += partial;
  yaml_parser_t yp;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&yp))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
  if (!yaml_parser_load(&yp, &doc)) {
    p->st.malformed = p->st.lines;
    int rc = pit_err_set(e, PIT_EFORMAT, "%s:%lu: not valid YAML: %s%s%s%s", p->file,
                         (unsigned long)yp.problem_mark.line + 1, yp.problem ? yp.problem : "error",
                         yp.context ? " " : "", yp.context ? yp.context : "",
                         partial ? " (last line has no newline: truncated?)" : "");
    yaml_parser_delete(&yp);
    return rc;
  }
  struct yread y = {p, &doc, NULL, 0, partial, e};
  const yaml_node_t *root = yaml_document_get_root_node(&doc);
  int rc = root ? entries(&y, root, "instance type", top_entry, NULL)
                : pit_err_set(e, PIT_EFORMAT, "%s:1: empty YAML document", p->file);
  yaml_document_t next; /* one document only: a second one is not silently dropped */
  if (!rc) {
    if (!yaml_parser_load(&yp, &next))
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%lu: not valid YAML: %s", p->file, (unsigned long)yp.problem_mark.line + 1,
                       yp.problem ? yp.problem : "error");
    else {
      const yaml_node_t *r2 = yaml_document_get_root_node(&next);
      if (r2)
        rc = ybad(&y, r2, "a second YAML document: one document per file%s%s", "", "");
      yaml_document_delete(&next);
    }
  }
  if (!rc && y.ntypes == 0)
    rc = ybad(&y, root, "no instance type in the YAML document%s%s", "", "");
  if (!rc) {
    p->st.known = p->st.lines;
    for (int i = 0; i < y.ntypes && !rc; i++)
      rc = emit_type(&y, &y.types[i], e);
  }
  if (rc && p->st.records == 0) { /* the document is rejected whole */
    p->st.known = 0;
    p->st.malformed = p->st.lines;
  }
  for (int i = 0; i < y.ntypes; i++)
    free(y.types[i].ranks);
  free(y.types);
  yaml_document_delete(&doc);
  yaml_parser_delete(&yp);
  return rc;
}
