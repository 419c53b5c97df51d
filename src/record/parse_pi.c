/* parse_pi.c — `[PI-INFO] ...` lines of the Paramount Iterations C library
 * (docs/parse.md); s starts after "[PI-INFO] ":
 *   Init time,r,X                      -> init (rank r, init_s X)
 *   Paramount Iteration,r,i,T,X        -> iter (rank r, step = iter = i, t = T, step_s = X)
 *   Paramount Iteration: Rank=r<TAB>Current Iteration=i<TAB>Time of iteration=X<TAB>Accumulated time=A
 *                                      -> iter (the library's other version; A is a sum of X, not t)
 *   PI avg,r,A,n / Beta,r,B            -> no record (derived from the iterations), checked
 *   Total time,X                       -> end (total_s)
 */
#include "record/parse_impl.h"

/* The rank field (then, sep: its separator ","; NULL: none): 0, or PL_BAD. */
static int need_rank(struct pit_parser *p, const char **sp, const char *end, int64_t *r, const char *sep) {
  const char *s = *sp;
  PL_NEED_INT(*r, "rank");
  if (*r > 1000000)
    return pit_pl_bad(p, "rank", *sp, end);
  if (sep && !pl_lit(&s, end, sep, strlen(sep)))
    return pit_pl_bad(p, "separator", s, end);
  *sp = s;
  return 0;
}

int pit_pl_pi(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int64_t r = 0, i = 0; /* set before use; zeroed for GCC -O3 -Wmaybe-uninitialized */
  double x, t;
  int dig, d2;
  if (PL_LIT(&s, end, "Init time,")) {
    if (need_rank(p, &s, end, &r, ","))
      return PL_BAD;
    PL_NEED_TIME(x, dig, "init time");
    pit_pl_new(p, PIT_REC_INIT, (int)r);
    p->cur->init_s = x;
    return pit_pl_put(p, K_OTHER, dig, e);
  }
  if (PL_LIT(&s, end, "Paramount Iteration,")) {
    if (need_rank(p, &s, end, &r, ","))
      return PL_BAD;
    PL_NEED_INT(i, "iteration");
    PL_NEED_LIT(",", "separator");
    PL_NEED_TIME(t, d2, "time since init");
    PL_NEED_LIT(",", "separator");
    PL_NEED_TIME(x, dig, "iteration time");
    pit_pl_new(p, PIT_REC_ITER, (int)r);
    p->cur->iter = p->cur->step = i;
    p->cur->t = t;
    p->cur->step_s = x;
    return pit_pl_put(p, K_OTHER, dig, e);
  }
  if (PL_LIT(&s, end, "Paramount Iteration: Rank=")) {
    if (need_rank(p, &s, end, &r, NULL))
      return PL_BAD;
    pl_ws(&s, end);
    PL_NEED_LIT("Current Iteration=", "text after rank");
    PL_NEED_INT(i, "iteration");
    pl_ws(&s, end);
    PL_NEED_LIT("Time of iteration=", "text after iteration");
    PL_NEED_TIME(x, dig, "Time of iteration");
    pit_pl_new(p, PIT_REC_ITER, (int)r);
    p->cur->iter = p->cur->step = i;
    p->cur->step_s = x;
    return pit_pl_put(p, K_OTHER, dig, e);
  }
  if (PL_LIT(&s, end, "PI avg,")) {
    if (need_rank(p, &s, end, &r, ","))
      return PL_BAD;
    PL_NEED_TIME(x, dig, "PI avg");
    PL_NEED_LIT(",", "separator");
    PL_NEED_INT(i, "iteration count");
    return PL_INFO;
  }
  if (PL_LIT(&s, end, "Beta,")) {
    if (need_rank(p, &s, end, &r, ","))
      return PL_BAD;
    if (!pit_pl_f64(&s, end, &x, &dig))
      return pit_pl_bad(p, "beta", s, end);
    return PL_INFO;
  }
  if (PL_LIT(&s, end, "Total time,")) {
    PL_NEED_TIME(x, dig, "total time");
    pit_pl_new(p, PIT_REC_END, -1);
    p->cur->total_s = x;
    return pit_pl_put(p, K_OTHER, dig, e);
  }
  return PL_UNKNOWN;
}
