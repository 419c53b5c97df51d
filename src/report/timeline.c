/* timeline.c — the timeline of an elastic run (pitstop run's timeline.png,
 * report.html's chart): what it draws (pit_timeline_build, report.h: node
 * bars, the generations' spans and whether each failed, from the run's fold,
 * record.h's run log) and the drawing (pit_plot_timeline, through gp.c).
 * The test that compares the report, the replay and the timeline reads
 * pit_timeline_build. Invariants: the events file is read only by
 * pit_runlog_load; every figure drawn is the fold's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/gp_impl.h"

enum { MAX_BARS = 256, MAX_TYPES = 16 };

void pit_timeline_release(struct pit_timeline *tl) {
  PIT_FREE_ALL(tl->bars, tl->gens);
  memset(tl, 0, sizeof *tl);
}

/* 1 when generation g ended by its controller's stop: no end record, a later
 * generation, begun by a controller that took the run over: its node records
 * say "continued" (written since 2026-11-29, also when it adopted no node), or
 * it adopted a node of g (a ready record of generation g + 1; older files). A
 * controller that took over from one that ended in an error writes no
 * "continued": a generation that failed so stays failed. */
static int gen_ctl_stopped(const struct pit_runlog *log, int g) {
  if (log->gens[g].status[0] || g + 1 >= log->ngens)
    return 0;
  if (log->gens[g + 1].continued)
    return 1;
  for (int i = 0; i < log->nnodes; i++)
    if (log->nodes[i].adopted_gen == g + 1)
      return 1;
  return 0;
}

/* 1 when generation g of the fold failed: no end record, a later generation,
 * not a controller's stop, and no decision in it that changed the membership
 * (a resize ends a generation without an end record too; keep, recommend and
 * the batch's shares change nothing). */
static int gen_failed(const struct pit_runlog *log, int g) {
  if (log->gens[g].status[0] || g + 1 >= log->ngens || gen_ctl_stopped(log, g))
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

int pit_timeline_build(const struct pit_runlog *log, struct pit_timeline *tl, struct pit_err *e) {
  memset(tl, 0, sizeof *tl);
  tl->tmax = log->t_last;
  int nn = log->nnodes < MAX_BARS ? log->nnodes : MAX_BARS;
  tl->bars = calloc((size_t)nn + 1, sizeof *tl->bars);
  tl->gens = calloc((size_t)log->ngens + 1, sizeof *tl->gens);
  if (!tl->bars || !tl->gens) {
    pit_timeline_release(tl);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  for (int i = 0; i < nn; i++) {
    const struct pit_runlog_node *n = &log->nodes[i];
    int ty = 0;
    while (ty < tl->ntypes && strcmp(tl->types[ty], n->itype) != 0)
      ty++;
    if (ty == tl->ntypes && tl->ntypes < MAX_TYPES)
      snprintf(tl->types[tl->ntypes++], PIT_NAME_MAX, "%s", n->itype);
    tl->bars[tl->nbars++] =
        (struct pit_timeline_bar){n->t_start, isnan(n->t_stop) ? tl->tmax : n->t_stop, i, ty < MAX_TYPES ? ty : MAX_TYPES - 1};
  }
  for (int k = 0; k < log->ngens; k++) {
    const struct pit_runlog_gen *g = &log->gens[k];
    struct pit_timeline_gen *s = &tl->gens[tl->ngens++];
    s->x0 = gen_launch(g);
    s->x1 = isfinite(g->t_end) ? g->t_end : k + 1 < log->ngens ? log->gens[k + 1].t_first : tl->tmax;
    if (!(s->x1 > s->x0))
      s->x1 = s->x0;
    s->failed = gen_failed(log, k);
    char mem[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&g->m, mem, sizeof mem);
    const char *how = s->failed ? "failed" : gen_ctl_stopped(log, k) ? "(controller stopped)" : "";
    snprintf(s->label, sizeof s->label, "gen %d%s%.60s%s%s", k, mem[0] ? " " : "", mem, how[0] ? " " : "", how);
  }
  return 0;
}

/* ---- the timeline of an elastic run (pitstop run) ---- */

/* Node bars (one row per node, from its start to its stop), a row of
 * generations (each from its launch to its end: its end record, else the next
 * generation's first record, else the last record; labelled with its
 * membership, a failed one marked "failed"), the decisions that act (not "keep") as dashed vertical
 * lines with their target membership, and the steps done over time on the
 * right axis; from the run's events file. */
int pit_plot_timeline(const char *events, const struct pit_plot_opts *o, struct pit_err *e) {
  int svg = 0;
  int rc = pit__gp_out_format(o, &svg, e);
  if (rc)
    return rc;
  struct pit_runlog log; /* the run log's fold: nodes, iterations, decisions */
  struct pit_timeline tl = {0};
  pit_runlog_init(&log);
  if ((rc = pit_runlog_load(&log, events, e)) < 0 || (rc = pit_timeline_build(&log, &tl, e)) < 0) {
    pit_runlog_release(&log);
    return rc;
  }
  if (tl.nbars == 0) {
    pit_timeline_release(&tl);
    pit_runlog_release(&log);
    return pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no node records (is it a pitstop run's events file?)", events);
  }
  struct gp g;
  if ((rc = pit__gp_open(&g, o, svg, "Nodes, decisions and progress over time", e)) < 0) {
    pit_timeline_release(&tl);
    pit_runlog_release(&log);
    pit__gp_cleanup(&g);
    return rc;
  }
  FILE *bars = pit__gp_data(&g, 0, e), *prog = bars ? pit__gp_data(&g, 1, e) : NULL, *dec = prog ? pit__gp_data(&g, 2, e) : NULL;
  FILE *gens = dec ? pit__gp_data(&g, 3, e) : NULL;
  int nn = tl.nbars, ndec = 0, ntypes = tl.ntypes, nfailed = 0;
  const struct pit_runlog_node *nd = log.nodes;
  double tmax = tl.tmax;
  for (int64_t i = 0; gens && i < log.niters; i++)
    fprintf(prog, "%.9g %lld\n", log.iters[i].t, (long long)log.iters[i].step + 1);
  for (int i = 0; gens && i < log.ndec; i++) { /* acting ones only, labelled with the membership chosen */
    const struct pit_runlog_decision *d = &log.dec[i];
    if (strcmp(d->d.action, "keep") == 0 || (!d->d.action[0] && strcmp(d->d.kind, "keep") == 0))
      continue; /* a "keep" changes nothing: dozens of them would hide the few that act */
    char to[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&d->d.to, to, sizeof to);
    fprintf(dec, "%.9g \"%.79s\"\n", d->t, to[0] ? to : "decision");
    ndec++;
  }
  for (int i = 0; gens && i < nn; i++) /* x0 x1 row type */
    fprintf(bars, "%.9g %.9g %d %d\n", tl.bars[i].x0, tl.bars[i].x1, tl.bars[i].row, tl.bars[i].type);
  for (int k = 0; gens && k < tl.ngens; k++) { /* x0 x1 failed "label" */
    nfailed += tl.gens[k].failed;
    /* a label wider than its box (about 7 px a character on a 740 px wide plot) would run over its
     * neighbours and the axis: "gen K" alone then (and "failed"), or nothing */
    double px = tmax > 0 ? (tl.gens[k].x1 - tl.gens[k].x0) / tmax * 740 : 0;
    char shortl[24];
    snprintf(shortl, sizeof shortl, "gen %d%s", k, tl.gens[k].failed ? " failed" : "");
    const char *label = px >= 7.0 * strlen(tl.gens[k].label) ? tl.gens[k].label : px >= 7.0 * strlen(shortl) ? shortl : "";
    fprintf(gens, "%.9g %.9g %d \"%s\"\n", tl.gens[k].x0, tl.gens[k].x1, tl.gens[k].failed, label);
  }
  if (!gens) {
    if (bars) fclose(bars);
    if (prog) fclose(prog);
    if (dec) fclose(dec);
    rc = PIT_EIO;
  } else if ((rc = pit__gp_close_data(bars, &g, e)) | pit__gp_close_data(prog, &g, e) | pit__gp_close_data(dec, &g, e) |
             pit__gp_close_data(gens, &g, e)) {
    rc = rc ? rc : PIT_EIO;
  }
  if (rc) {
    pit_timeline_release(&tl);
    pit_runlog_release(&log);
    pit__gp_cleanup(&g);
    return rc;
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
    pit__gp_str(f, tl.types[t]);
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
  pit_timeline_release(&tl);
  pit_runlog_release(&log);
  rc = pit__gp_run(&g, o, e);
  pit__gp_cleanup(&g);
  return rc;
}
