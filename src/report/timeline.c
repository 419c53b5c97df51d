/* timeline.c — what the timeline of an elastic run draws (pit_timeline_build,
 * report.h), from the run's fold (record.h, the run log): node bars, the
 * generations' spans and whether each failed. plot.c draws it with gnuplot;
 * the test that compares the report, the replay and the timeline reads it.
 * Invariants: the fold is only read; every figure is the fold's (no events
 * file is read here). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/report.h"

enum { MAX_BARS = 256, MAX_TYPES = 16 };

void pit_timeline_release(struct pit_timeline *tl) {
  PIT_FREE_ALL(tl->bars, tl->gens);
  memset(tl, 0, sizeof *tl);
}

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
    snprintf(s->label, sizeof s->label, "gen %d %.60s%s", k, mem, s->failed ? " failed" : "");
  }
  return 0;
}
