/* plot_timeline.c — the timeline chart of an elastic run (pitstop run): node
 * bars, the generations, the decisions and the steps over time, from the run
 * log's fold of the run's events file. docs/run.md.
 * Invariants: it reads the run only through the fold (pit_runlog); texts reach
 * the script only through pit__gp_str; the picture is complete or absent. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/record.h"
#include "report/plot_impl.h"

/* ---- the timeline of an elastic run (pitstop run) ---- */

/* 1 when generation g of the fold failed: no end record, a later generation,
 * and no decision in it that changed the membership (a resize ends a
 * generation without an end record too; keep, recommend and the batch's
 * shares change nothing). */
static int gen_failed(const struct pit_runlog *log, int g) {
  if (log->gens[g].status[0] || g + 1 >= log->ngens)
    return 0;
  for (int i = 0; i < log->ndec; i++) {
    const char *k = log->dec[i].d.kind;
    if (log->dec[i].gen == g && k[0] && strcmp(k, "keep") != 0 && strcmp(k, "recommend") != 0 &&
        strcmp(k, "batch_shares") != 0 && strcmp(k, "rebalance") != 0)
      return 0;
  }
  return 1;
}

/* Where generation g began: its launch (init record's t less init_s), else its first record. */
static double gen_launch(const struct pit_runlog_gen *g) {
  return isfinite(g->t_init) && isfinite(g->init_s) && g->init_s <= g->t_init ? g->t_init - g->init_s : g->t_first;
}

/* Node bars (one row per node, from its start to its stop), a row of
 * generations (each from its launch to its end: its end record, else the next
 * generation's first record, else the last record; labelled with its
 * membership, a failed one marked "failed"), the decisions as dashed vertical
 * lines with their target membership, and the steps done over time on the
 * right axis; from the run's events file. */
int pit_plot_timeline(const char *events, const struct pit_plot_opts *o, struct pit_err *e) {
  int svg = 0;
  int rc = pit__out_format(o, &svg, e);
  if (rc)
    return rc;
  struct pit_runlog log; /* the run log's fold: nodes, iterations, decisions */
  pit_runlog_init(&log);
  if ((rc = pit_runlog_load(&log, events, e)) < 0) {
    pit_runlog_release(&log);
    return rc;
  }
  struct gp g;
  if ((rc = pit__gp_open(&g, o, svg, "Nodes, decisions and progress over time", e)) < 0) {
    pit_runlog_release(&log);
    pit__gp_cleanup(&g);
    return rc;
  }
  FILE *bars = pit__gp_data(&g, 0, e), *prog = bars ? pit__gp_data(&g, 1, e) : NULL, *dec = prog ? pit__gp_data(&g, 2, e) : NULL;
  FILE *gens = dec ? pit__gp_data(&g, 3, e) : NULL;
  enum { MAXN = 256 };
  int nn = log.nnodes < MAXN ? log.nnodes : MAXN, ndec = 0, ntypes = 0;
  const struct pit_runlog_node *nd = log.nodes;
  char types[16][PIT_NAME_MAX];
  double tmax = log.t_last;
  for (int64_t i = 0; dec && i < log.niters; i++)
    fprintf(prog, "%.9g %lld\n", log.iters[i].t, (long long)log.iters[i].step + 1);
  for (int i = 0; dec && i < log.ndec; i++, ndec++) { /* labelled with the chosen membership: the first alternative */
    const struct pit_decision *d = &log.dec[i].d;
    const char *to = d->nalts > 0 && d->alts[0].membership ? d->alts[0].membership : "";
    fprintf(dec, "%.9g \"%.79s\"\n", log.dec[i].t, to[0] ? to : "decision");
  }
  if (!gens) {
    if (bars) fclose(bars);
    if (prog) fclose(prog);
    if (dec) fclose(dec);
    pit_runlog_release(&log);
    pit__gp_cleanup(&g);
    return PIT_EIO;
  }
  if (nn == 0) {
    fclose(bars);
    fclose(prog);
    fclose(dec);
    fclose(gens);
    pit_runlog_release(&log);
    pit__gp_cleanup(&g);
    return pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no node records (is it a pitstop run's events file?)", events);
  }
  for (int i = 0; i < nn; i++) {
    int ty = 0;
    while (ty < ntypes && strcmp(types[ty], nd[i].itype) != 0)
      ty++;
    if (ty == ntypes && ntypes < 16)
      snprintf(types[ntypes++], PIT_NAME_MAX, "%s", nd[i].itype);
    /* x0 x1 row type */
    fprintf(bars, "%.9g %.9g %d %d\n", nd[i].t_start, isnan(nd[i].t_stop) ? tmax : nd[i].t_stop, i, ty < 16 ? ty : 15);
  }
  int nfailed = 0;
  for (int k = 0; k < log.ngens; k++) { /* x0 x1 failed "label" */
    const struct pit_runlog_gen *ge = &log.gens[k];
    double x0 = gen_launch(ge);
    double x1 = isfinite(ge->t_end) ? ge->t_end : k + 1 < log.ngens ? log.gens[k + 1].t_first : tmax;
    int failed = gen_failed(&log, k);
    char mem[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&ge->m, mem, sizeof mem);
    nfailed += failed;
    fprintf(gens, "%.9g %.9g %d \"gen %d %.60s%s\"\n", x0, x1 > x0 ? x1 : x0, failed, k, mem,
            failed ? " failed" : "");
  }
  if ((rc = pit__gp_close_data(bars, &g, e)) | pit__gp_close_data(prog, &g, e) | pit__gp_close_data(dec, &g, e) |
      pit__gp_close_data(gens, &g, e)) {
    pit_runlog_release(&log);
    pit__gp_cleanup(&g);
    return rc ? rc : PIT_EIO;
  }
  FILE *f = g.f;
  fprintf(f, "set xlabel 'run time [s]'\nset ylabel 'node'\nset y2label 'steps done'\n");
  fprintf(f, "set yrange [-0.8:%d.8]\nset ytics (", nn);
  for (int i = 0; i < nn; i++) {
    fprintf(f, "%s", i ? ", " : "");
    pit__gp_str(f, nd[i].id);
    fprintf(f, " %d", i);
  }
  fprintf(f, ", 'generations' %d", nn);
  fprintf(f, ")\nset y2tics\nset y2range [0:*]\nset xrange [0:%.9g]\nset key outside bottom center horizontal\n",
          tmax > 0 ? tmax * 1.02 : 1);
  fputs("plot ", f);
  for (int t = 0; t < ntypes; t++) {
    pit__gp_dataref(&g, 0); /* this type's rows only (column 4) */
    fprintf(f, " using ($4==%d?($1+$2)/2:NaN):3:(($2-$1)/2):(0.3) with boxxyerror fs solid 0.6 lc %d title ", t,
            t + 1);
    pit__gp_str(f, types[t]);
    fputs(", ", f);
  }
  pit__gp_dataref(&g, 3); /* the generations' row: grey, a failed one red, each labelled */
  fprintf(f, " using ($3==0?($1+$2)/2:NaN):(%d):(($2-$1)/2):(0.3) with boxxyerror fs solid 0.3 lc rgb '#808080' "
          "title 'generation', ", nn);
  if (nfailed > 0) {
    pit__gp_dataref(&g, 3);
    fprintf(f, " using ($3==1?($1+$2)/2:NaN):(%d):(($2-$1)/2):(0.3) with boxxyerror fs pattern 2 lc rgb '#d62728' "
            "title 'failed generation', ", nn);
  }
  pit__gp_dataref(&g, 3);
  fprintf(f, " using (($1+$2)/2):(%d):4 with labels font ',9' notitle, ", nn);
  pit__gp_dataref(&g, 1);
  fputs(" using 1:2 axes x1y2 with lines lw 2 lc rgb '#404040' title 'steps done'", f);
  if (ndec > 0) {
    fputs(", ", f);
    pit__gp_dataref(&g, 2);
    fprintf(f, " using 1:(%d.6):2 with labels rotate by 90 left offset 0.3,0 font ',9' notitle, ", nn - 1);
    pit__gp_dataref(&g, 2);
    fprintf(f, " using 1:(-0.8):(0):(%d.4) with vectors nohead dt 2 lc rgb '#d62728' title 'decision'", nn + 1);
  }
  fputs("\n", f);
  pit_runlog_release(&log);
  rc = pit__gp_run(&g, o, e);
  pit__gp_cleanup(&g);
  return rc;
}
