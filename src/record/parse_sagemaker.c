/* parse_sagemaker.c — seed 004's SageMaker training-log lines (docs/parse.md):
 *   Tempo de inicializacao: T        -> init (init_s)
 *   I step training time: T[s]       -> iter (iter I of the current epoch)
 *   I steps training: T[s]           -> iter (the epoch's last step, I)
 *   Validation time: T[s]            -> validation of the current epoch
 *   Epoch time: T[s]                 -> epoch record; the next epoch begins
 *   Duracao do treinamento:   T      -> end (total_s)
 *   Real time: W[s]                  -> no record: t of later records is W - first W
 * each also in Python 2's tuple form, e.g. ('Tempo de inicializacao: ', 0.2424459457397461).
 *
 * Invariant: epochs count from 0 in log order; steps are the log's running count.
 */
#include "record/parse_impl.h"

static void base(struct pit_parser *p, enum pit_rec_type t) {
  pit_pl_new(p, t, -1);
  if (p->have_rt)
    p->cur->t = p->rt_last - p->rt_first;
}

/* "<name>: <time>" lines and the record each makes (PIT_REC_NONE: Real time). */
#define LABEL(name, t) {name, sizeof(name) - 1, t}
static const struct {
  const char *name;
  size_t len;
  enum pit_rec_type t;
} labels[] = {
    LABEL("Tempo de inicializacao", PIT_REC_INIT), LABEL("Validation time", PIT_REC_VALIDATION),
    LABEL("Epoch time", PIT_REC_EPOCH),           LABEL("Duracao do treinamento", PIT_REC_END),
    LABEL("Real time", PIT_REC_NONE),
};
#undef LABEL

static int label(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  double x;
  int dig;
  size_t k = 0;
  for (const char *q = s; k < sizeof labels / sizeof labels[0]; k++, q = s)
    if (pl_lit(&q, end, labels[k].name, labels[k].len) && q < end && *q == ':') {
      s = q + 1;
      break;
    }
  if (k == sizeof labels / sizeof labels[0])
    return PL_UNKNOWN;
  const enum pit_rec_type t = labels[k].t;
  const char *what = labels[k].name;
  pl_ws(&s, end);
  PL_NEED_TIME(x, dig, what);
  switch (t) {
  case PIT_REC_NONE:
    if (!p->have_rt)
      p->rt_first = x;
    p->have_rt = 1;
    p->rt_last = x;
    return PL_INFO;
  case PIT_REC_INIT:
    base(p, t);
    p->cur->init_s = x;
    break;
  case PIT_REC_VALIDATION:
    base(p, t);
    p->cur->val_s = x;
    p->cur->epoch = p->sm_epoch;
    break;
  case PIT_REC_EPOCH:
    base(p, t);
    p->cur->epoch_s = x;
    p->cur->epoch = p->sm_epoch++;
    break;
  default:
    base(p, t);
    p->cur->total_s = x;
    break;
  }
  return pit_pl_put(p, K_OTHER, dig, e);
}

static int steps(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int64_t i;
  double x;
  int dig;
  if (!pl_i64(&s, end, &i))
    return PL_UNKNOWN;
  if (!PL_LIT(&s, end, " step training time:") && !PL_LIT(&s, end, " steps training:"))
    return PL_UNKNOWN;
  pl_ws(&s, end);
  PL_NEED_TIME(x, dig, "step time");
  base(p, PIT_REC_ITER);
  p->cur->epoch = p->sm_epoch;
  p->cur->iter = i;
  p->cur->step_s = x;
  return pit_pl_put(p, K_OTHER, dig, e);
}

/* ('label', value) / (I, 'step training time:', T): the elements joined by one space. */
static int tuple(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  char buf[256];
  size_t n = 0;
  s++;
  for (int k = 0; k < 8; k++) {
    pl_ws(&s, end);
    if (s >= end)
      return PL_UNKNOWN;
    if (k && n < sizeof buf)
      buf[n++] = ' ';
    if (*s == '\'' || *s == '"') {
      char q = *s++;
      while (s < end && *s != q && n < sizeof buf)
        buf[n++] = *s++;
      if (s >= end || *s != q)
        return PL_UNKNOWN;
      s++;
    } else {
      while (s < end && *s != ',' && *s != ')' && n < sizeof buf)
        buf[n++] = *s++;
    }
    pl_ws(&s, end);
    if (s < end && *s == ')') {
      if (n >= sizeof buf)
        return PL_UNKNOWN;
      const char *b = buf, *bend = buf + n;
      pl_ws(&b, bend);
      if (b == bend)
        return PL_UNKNOWN;
      return pl_isdigit(*b) ? steps(p, b, bend, e) : label(p, b, bend, e);
    }
    if (s >= end || *s != ',')
      return PL_UNKNOWN;
    s++;
  }
  return PL_UNKNOWN;
}

int pit_pl_sagemaker(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  switch (*s) {
  case '(':
    return tuple(p, s, end, e);
  case 'T':
  case 'V':
  case 'E':
  case 'D':
  case 'R':
    return label(p, s, end, e);
  default:
    return pl_isdigit(*s) ? steps(p, s, end, e) : PL_UNKNOWN;
  }
}
