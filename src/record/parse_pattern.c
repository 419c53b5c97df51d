/* parse_pattern.c — `pitstop parse --pattern 'TEMPLATE'`: a user's template for
 * lines no reader knows, e.g. 'it {iter}/{iters} took {step_ms}ms on {rank}'.
 * A template is literal text and named fields: {rank} {epoch} {epochs} {iter}
 * {iters} {step} {step_s} {step_ms} {epoch_s} {batch} {loss} {elapsed}, and {*}
 * for any text. A run of blanks in the template matches any run of blanks in the
 * line (or none); other literal bytes match exactly. The match may start anywhere
 * in the line; text after it is ignored. What matched goes through the key/value
 * reader's record builder (pit_pl_kv_put), so a template line becomes exactly the
 * records the same facts in key/value form would.
 *
 * Invariants: compiled once (pit_parser_set_pattern), matched without allocation;
 * {*} backtracks over the places its next literal occurs, nothing else does, so a
 * line costs at most (line length)^(wildcards+1) compares (templates are short).
 */
#include <stdio.h>
#include <stdlib.h>

#include "record/parse_impl.h"

enum pf { P_LIT = 0, P_BLANK, P_ANY, P_RANK, P_EPOCH, P_EPOCHS, P_ITER, P_ITERS, P_STEP, P_STEP_S, P_STEP_MS,
          P_EPOCH_S, P_BATCH, P_LOSS, P_ELAPSED };

static const char *const field_names[] = {NULL,    NULL,     "*",      "rank",  "epoch",  "epochs",
                                          "iter",  "iters",  "step",   "step_s", "step_ms", "epoch_s",
                                          "batch", "loss",   "elapsed"};

struct item {
  enum pf kind;
  const char *lit; /* P_LIT: into the template copy */
  size_t n;
};

struct pit_pattern {
  char *text;
  struct item *it;
  int n;
};

void pit_pattern_free(struct pit_pattern *t) {
  if (!t)
    return;
  free(t->text);
  free(t->it);
  free(t);
}

int pit_parser_set_pattern(struct pit_parser *p, const char *tmpl, struct pit_err *e) {
  size_t len = strlen(tmpl);
  struct pit_pattern *t = calloc(1, sizeof *t);
  if (!t || !(t->text = strdup(tmpl)) || !(t->it = calloc(len + 1, sizeof *t->it))) {
    pit_pattern_free(t);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  const char *s = t->text, *end = t->text + len;
  int fields = 0;
  while (s < end) {
    struct item *it = &t->it[t->n];
    if (*s == ' ' || *s == '\t') {
      while (s < end && (*s == ' ' || *s == '\t'))
        s++;
      it->kind = P_BLANK;
    } else if (*s == '{') {
      const char *c = memchr(s, '}', (size_t)(end - s));
      if (!c) {
        long at = (long)(s - t->text) + 1;
        pit_pattern_free(t);
        return pit_err_set(e, PIT_EARG, "pattern '%s': '{' at byte %ld is not closed", tmpl, at);
      }
      size_t n = (size_t)(c - s - 1);
      int k = 2;
      for (; k < (int)(sizeof field_names / sizeof *field_names); k++)
        if (strlen(field_names[k]) == n && memcmp(field_names[k], s + 1, n) == 0)
          break;
      const char *name = tmpl + (s + 1 - t->text); /* the caller's copy: t is freed below */
      if (k == (int)(sizeof field_names / sizeof *field_names)) {
        pit_pattern_free(t);
        return pit_err_set(e, PIT_EARG,
                           "pattern '%s': unknown field {%.*s} (rank, epoch, epochs, iter, iters, step, step_s, "
                           "step_ms, epoch_s, batch, loss, elapsed, *)",
                           tmpl, (int)n, name);
      }
      if (t->n > 0 && t->it[t->n - 1].kind >= P_ANY) {
        pit_pattern_free(t);
        return pit_err_set(e, PIT_EARG, "pattern '%s': {%.*s} follows another field with nothing between them",
                           tmpl, (int)n, name);
      }
      it->kind = (enum pf)k;
      fields += k != P_ANY;
      s = c + 1;
    } else {
      it->kind = P_LIT;
      it->lit = s;
      while (s < end && *s != ' ' && *s != '\t' && *s != '{')
        s++;
      it->n = (size_t)(s - it->lit);
    }
    t->n++;
  }
  if (fields == 0) {
    pit_pattern_free(t);
    return pit_err_set(e, PIT_EARG, "pattern '%s' names no field ({iter}, {step_s}, ...)", tmpl);
  }
  pit_pattern_free(p->pattern);
  p->pattern = t;
  return 0;
}

/* Matches items [i, n) at s; fills kv. 1 on a match. */
static int match(const struct pit_pattern *t, int i, const char *s, const char *end, struct pit_kv *kv) {
  for (; i < t->n; i++) {
    const struct item *it = &t->it[i];
    switch (it->kind) {
    case P_LIT:
      if ((size_t)(end - s) < it->n || memcmp(s, it->lit, it->n) != 0)
        return 0;
      s += it->n;
      break;
    case P_BLANK:
      pl_ws(&s, end);
      break;
    case P_ANY:
      if (i + 1 == t->n)
        return 1;
      for (const char *q = s; q <= end; q++) /* every place the rest may start */
        if (match(t, i + 1, q, end, kv))
          return 1;
      return 0;
    default: {
      double v;
      int dig;
      const char *a = s;
      if (!pit_pl_f64(&s, end, &v, &dig))
        return 0;
      int integral = v >= 0 && v == floor(v) && !memchr(a, '.', (size_t)(s - a)) && v < 1e15;
      switch (it->kind) {
      case P_RANK:
        if (!integral || v > 1000000)
          return 0;
        kv->rank = (int)v;
        break;
      case P_EPOCH:
      case P_EPOCHS:
      case P_ITER:
      case P_ITERS:
      case P_STEP:
      case P_BATCH: {
        if (!integral)
          return 0;
        int64_t *dst = it->kind == P_EPOCH ? &kv->epoch : it->kind == P_EPOCHS ? &kv->epochs
                     : it->kind == P_ITER  ? &kv->iter  : it->kind == P_ITERS  ? &kv->iters
                     : it->kind == P_STEP  ? &kv->step  : &kv->batch;
        *dst = (int64_t)v;
        break;
      }
      case P_LOSS:
        kv->loss = v;
        break;
      default: /* times */
        if (v < 0)
          return 0;
        if (it->kind == P_STEP_S)
          kv->step_s = v;
        else if (it->kind == P_STEP_MS)
          kv->step_s = v / 1000;
        else if (it->kind == P_EPOCH_S)
          kv->epoch_s = v;
        else
          kv->t = v;
      }
      kv->nnums++;
      kv->nkeys++;
    }
    }
  }
  return 1;
}

int pit_pl_pattern(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  const struct pit_pattern *t = p->pattern;
  struct pit_kv kv;
  for (const char *q = s; q < end; q++) {
    if (t->it[0].kind == P_LIT && *q != t->it[0].lit[0])
      continue;
    pit_kv_clear(&kv);
    if (match(t, 0, q, end, &kv)) {
      p->st.pattern++;
      int v = pit_pl_kv_put(p, &kv, e);
      if (v == PL_UNKNOWN)
        p->st.pattern--;
      return v;
    }
  }
  return PL_UNKNOWN;
}
