/* parse_dcgan.c — the DCGAN course-run line variants (docs/parse.md):
 *   [epoch: e/N][iteration: i/L][rank: r] Loss_D: d, Loss_G: g, ..., iteration time: Xs
 *   Rank: r, Epoch: e, iteration: i/L, It. time: Xs, Elapsed time: Y s
 *   Rank,r,Epoch,e,Iteration,i,It. time,X,Elapsed time,Y     (also after a tag "[MO833] ")
 *   Rank,r,Epoch,e,Epoch time,X,Elapsed time,Y
 *   Rank: r, Epoch: e, Epoch time: Xs, Elapsed time: Y s
 *   Rank,r,Initialization Time: X        Rank: r, Initialize time: X s
 *   [rank: r] Epoch e took: X seconds    (also "[Rank: r]", "epoch")
 *   Iteration time: X (the precise twin of the line before)
 * and the context lines "Rank: r. World Size: W", "Rank: r, Epoch: e, Training ...",
 * "Namespace(batch_size=B, ...)" (global batch = B * W on later iterations).
 *
 * Invariant: iteration i of epoch e is step e*L+i when L is known for the rank,
 * else the rank's running count; two lines of different variants for the same
 * (rank, epoch, iteration) make one record (pit_pl_put).
 */
#include "record/parse_impl.h"

static int rank_ok(struct pit_parser *p, int64_t r, const char *at, const char *end) {
  return r <= 1000000 ? 0 : pit_pl_bad(p, "rank", at, end);
}

static void set_batch(struct pit_parser *p) {
  if (p->batch_per_rank > 0 && p->world > 0)
    p->cur->batch = p->batch_per_rank * p->world;
}

/* p->cur (an iter record of rank r begun by the caller) gets epoch, iteration,
 * time and global batch; L (iterations per epoch, -1 unknown) is remembered. */
static int put_iter(struct pit_parser *p, int64_t ep, int64_t it, int64_t L, double x,
                    enum pit_pl_kind kind, int dig, struct pit_err *e) {
  if (L > 0) {
    struct pit_pl_rank *rs = pit_pl_rank(p, p->cur->rank);
    if (!rs)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    rs->per_epoch = L;
    p->per_epoch = L;
  }
  p->cur->epoch = ep;
  p->cur->iter = it;
  p->cur->step_s = x;
  set_batch(p);
  return pit_pl_put(p, kind, dig, e);
}

/* Rank r's init record: init_s x (dig digits), the world size seen so far. */
static int put_init(struct pit_parser *p, int64_t r, double x, int dig, struct pit_err *e) {
  pit_pl_new(p, PIT_REC_INIT, (int)r);
  p->cur->init_s = x;
  p->cur->ranks = p->world;
  return pit_pl_put(p, K_OTHER, dig, e);
}

/* An epoch record of rank r (t: its Elapsed time, NaN if the line has none). */
static int put_epoch(struct pit_parser *p, int64_t r, int64_t ep, double x, double t, enum pit_pl_kind kind,
                     int dig, struct pit_err *e) {
  pit_pl_new(p, PIT_REC_EPOCH, (int)r);
  p->cur->t = t;
  p->cur->epoch = ep;
  p->cur->epoch_s = x;
  return pit_pl_put(p, kind, dig, e);
}

/* After a line's time: its optional elapsed time (el: how the variant spells
 * the field, "s" after it allowed) into *y, NaN without one; p->tail past the
 * line's last field. 0, or PL_BAD. */
static int elapsed(struct pit_parser *p, const char **sp, const char *end, const char *el, double *y) {
  const char *s = *sp;
  int dig;
  *y = NAN;
  if (pl_lit(&s, end, el, strlen(el)))
    PL_NEED_TIME(*y, dig, "Elapsed time");
  p->tail = s;
  *sp = s;
  return 0;
}

/* [epoch: ... or [rank: ... */
static int bracket(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int64_t ep, nep, it, L, r;
  int dig;
  double x;
  if (PL_LIT(&s, end, "[rank: ") || PL_LIT(&s, end, "[Rank: ")) {
    const char *r_at = s;
    PL_NEED_INT(r, "rank");
    if (rank_ok(p, r, r_at, end))
      return PL_BAD;
    if (!PL_LIT(&s, end, "] Epoch "))
      PL_NEED_LIT("] epoch ", "text after rank");
    PL_NEED_INT(ep, "epoch");
    PL_NEED_LIT(" took: ", "text after epoch");
    PL_NEED_TIME(x, dig, "epoch time");
    p->tail = s;
    return put_epoch(p, r, ep, x, NAN, K_DC_TOOK, dig, e);
  }
  if (!PL_LIT(&s, end, "[epoch: "))
    return PL_UNKNOWN;
  PL_NEED_INT(ep, "epoch");
  PL_NEED_LIT("/", "epoch count");
  PL_NEED_INT(nep, "epoch count");
  PL_NEED_LIT("][iteration: ", "iteration");
  PL_NEED_INT(it, "iteration");
  PL_NEED_LIT("/", "iteration count");
  PL_NEED_INT(L, "iteration count");
  PL_NEED_LIT("][rank: ", "rank");
  const char *r_at = s;
  PL_NEED_INT(r, "rank");
  if (rank_ok(p, r, r_at, end))
    return PL_BAD;
  PL_NEED_LIT("]", "rank");
  pit_pl_new(p, PIT_REC_ITER, (int)r);
  pl_ws(&s, end);
  double ld, lg;
  int ldig;
  if (PL_LIT(&s, end, "Loss_D: ") && pit_pl_f64(&s, end, &ld, &ldig) && PL_LIT(&s, end, ", Loss_G: ") &&
      pit_pl_f64(&s, end, &lg, &ldig)) {
    p->cur->nlosses = 2;
    memcpy(p->cur->loss_name[0], "d", 2);
    memcpy(p->cur->loss_name[1], "g", 2);
    p->cur->loss_val[0] = ld;
    p->cur->loss_val[1] = lg;
  }
  const char *t = PL_FIND(s, end, "iteration time: ");
  const char *g = PL_FIND(s, t ? t : end, "[epoch: "); /* another line glued in before the time */
  if (g) {
    p->next = g;
    p->next_glued = 1;
    snprintf(p->reason, sizeof p->reason, "cut: another line is glued into it before its iteration time");
    return PL_CUT;
  }
  if (!t)
    return pit_pl_bad(p, "iteration time", NULL, end);
  s = t + 16;
  PL_NEED_TIME(x, dig, "iteration time");
  p->tail = s;
  if (nep > 0)
    p->epochs = nep;
  return put_iter(p, ep, it, L, x, K_DC_BRACKET, dig, e);
}

/* Rank: r, ... or Rank: r. World Size: W */
static int rank_colon(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int64_t r, v, ep, it, L;
  int dig;
  double x, y;
  const char *r_at = s;
  if (!pl_i64(&s, end, &r))
    return PL_UNKNOWN;
  if (PL_LIT(&s, end, ". World Size: ")) {
    PL_NEED_INT(v, "world size");
    if (v > 1000000)
      return pit_pl_bad(p, "world size", s, end);
    p->world = (int)v;
    return PL_INFO;
  }
  if (PL_LIT(&s, end, ", Initialize time: ")) {
    if (rank_ok(p, r, r_at, end))
      return PL_BAD;
    PL_NEED_TIME(x, dig, "initialize time");
    return put_init(p, r, x, dig, e);
  }
  if (!PL_LIT(&s, end, ", Epoch: "))
    return PL_UNKNOWN;
  PL_NEED_INT(ep, "epoch");
  if (PL_LIT(&s, end, ", Training"))
    return PL_INFO;
  if (PL_LIT(&s, end, ", Epoch time: ")) {
    if (rank_ok(p, r, r_at, end))
      return PL_BAD;
    PL_NEED_TIME(x, dig, "Epoch time");
    PL_LIT(&s, end, "s");
    if (elapsed(p, &s, end, ", Elapsed time: ", &y))
      return PL_BAD;
    return put_epoch(p, r, ep, x, y, K_DC_COLON_EPOCH, dig, e);
  }
  if (!PL_LIT(&s, end, ", iteration: "))
    return PL_UNKNOWN;
  if (rank_ok(p, r, r_at, end))
    return PL_BAD;
  PL_NEED_INT(it, "iteration");
  PL_NEED_LIT("/", "iteration count");
  PL_NEED_INT(L, "iteration count");
  PL_NEED_LIT(", It. time: ", "text after iteration");
  PL_NEED_TIME(x, dig, "It. time");
  PL_LIT(&s, end, "s");
  if (elapsed(p, &s, end, ", Elapsed time: ", &y))
    return PL_BAD;
  pit_pl_new(p, PIT_REC_ITER, (int)r);
  p->cur->t = y;
  return put_iter(p, ep, it, L, x, K_DC_COLON, dig, e);
}

/* Rank,r,... */
static int rank_csv(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int64_t r, ep, it;
  int dig;
  double x, y;
  const char *r_at = s;
  if (!pl_i64(&s, end, &r) || !PL_LIT(&s, end, ","))
    return PL_UNKNOWN;
  if (PL_LIT(&s, end, "Initialization Time:")) {
    if (rank_ok(p, r, r_at, end))
      return PL_BAD;
    pl_ws(&s, end);
    PL_NEED_TIME(x, dig, "Initialization Time");
    return put_init(p, r, x, dig, e);
  }
  if (!PL_LIT(&s, end, "Epoch,"))
    return PL_UNKNOWN;
  if (rank_ok(p, r, r_at, end))
    return PL_BAD;
  PL_NEED_INT(ep, "epoch");
  PL_NEED_LIT(",", "text after epoch");
  if (PL_LIT(&s, end, "Epoch time,")) {
    PL_NEED_TIME(x, dig, "Epoch time");
    if (elapsed(p, &s, end, ",Elapsed time,", &y))
      return PL_BAD;
    return put_epoch(p, r, ep, x, y, K_DC_CSV_EPOCH, dig, e);
  }
  PL_NEED_LIT("Iteration,", "text after epoch");
  PL_NEED_INT(it, "iteration");
  PL_NEED_LIT(",It. time,", "text after iteration");
  PL_NEED_TIME(x, dig, "It. time");
  if (elapsed(p, &s, end, ",Elapsed time,", &y))
    return PL_BAD;
  pit_pl_new(p, PIT_REC_ITER, (int)r);
  p->cur->t = y;
  return put_iter(p, ep, it, -1, x, K_DC_CSV, dig, e);
}

int pit_pl_dcgan(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int dig;
  double x;
  switch (*s) {
  case '[':
    return bracket(p, s, end, e);
  case 'R':
    if (PL_LIT(&s, end, "Rank: "))
      return rank_colon(p, s, end, e);
    if (PL_LIT(&s, end, "Rank,"))
      return rank_csv(p, s, end, e);
    return PL_UNKNOWN;
  case 'I':
    if (!PL_LIT(&s, end, "Iteration time: "))
      return PL_UNKNOWN;
    PL_NEED_TIME(x, dig, "Iteration time");
    p->tail = s;
    pit_pl_new(p, PIT_REC_ITER, -1);
    p->cur->step_s = x;
    return pit_pl_put(p, K_DC_ITIME, dig, e);
  case 'N': {
    if (!PL_LIT(&s, end, "Namespace("))
      return PL_UNKNOWN;
    const char *b = PL_FIND(s, end, "batch_size=");
    int64_t v;
    if (!b)
      return PL_UNKNOWN;
    s = b + 11;
    PL_NEED_INT(v, "batch_size");
    p->batch_per_rank = v;
    p->batch_logged = 1;
    return PL_INFO;
  }
  default:
    return PL_UNKNOWN;
  }
}
