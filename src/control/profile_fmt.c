/* profile_fmt.c — the ranked memberships as `pitstop profile` prints them: t_p
 * with its 95% half-width, samples/s, samples per dollar, the batch, the
 * job's predicted time and cost with their intervals, '*' on the chosen row
 * (a command's runs, whose batch is unknown: steps/s and steps per dollar)
 * and "(does not fit)" on rows outside the deadline or budget (docs/decide.md).
 * Invariants: nothing but f is written; a missing figure prints "-" (a price:
 * "no price"). */
#include <math.h>
#include <stdio.h>

#include "pitstop/control.h"

static void fmt_iv(char *b, size_t n, double v, double lo, double hi, const char *unit, int dollars) {
  if (!isfinite(v))
    snprintf(b, n, "-");
  else if (dollars)
    snprintf(b, n, "$%.4g [%.4g, %.4g]", v, lo, hi);
  else
    snprintf(b, n, "%.4g%s [%.4g, %.4g]", v, unit, lo, hi);
}

void pit_profile_write(FILE *f, const struct pit_profile_row *r, int n, const struct pit_profile_query *q) {
  int per_step = q->command != NULL; /* a command's runs: no batch, figures per step */
  fprintf(f, "  %-26s %-20s %10s %12s %6s %-28s %-28s\n", "membership", "t_p ± 95%", per_step ? "steps/s" : "samples/s",
          per_step ? "steps/$" : "samples/$", "batch", q->size > 0 ? "job time [95%]" : "job time",
          q->size > 0 ? "job cost [95%]" : "job cost");
  for (int i = 0; i < n; i++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX], tp[48], js[64], jc[64], spd[24];
    pit_membership_format(&r[i].m, m, sizeof m);
    snprintf(tp, sizeof tp, "%.4g ± %.2g s", r[i].tp, r[i].tp_half);
    fmt_iv(js, sizeof js, r[i].job_s, r[i].job_lo, r[i].job_hi, " s", 0);
    fmt_iv(jc, sizeof jc, r[i].cost, r[i].cost_lo, r[i].cost_hi, "", 1);
    double pd = per_step ? r[i].steps_pd : r[i].spd;
    if (isfinite(pd))
      snprintf(spd, sizeof spd, "%.4g", pd);
    else
      snprintf(spd, sizeof spd, "no price");
    char batch[24] = "-";
    if (r[i].batch > 0)
      snprintf(batch, sizeof batch, "%lld", (long long)r[i].batch);
    char other[sizeof r[i].differs + 32] = ""; /* a run of the command with another length, output, seed */
    if (r[i].differs[0])
      snprintf(other, sizeof other, "  (run %s: other %s)", r[i].run, r[i].differs);
    fprintf(f, "%c %-26s %-20s %10.4g %12s %6s %-28s %-28s%s%s\n", r[i].chosen ? '*' : ' ', m, tp,
            per_step ? 1 / r[i].tp : r[i].sps, spd, batch, js, jc, r[i].fits ? "" : "  (does not fit)", other);
  }
}
