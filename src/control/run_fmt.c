/* run_fmt.c — a finished `pitstop run` as it prints it: the generations
 * (membership, steps, time, cost, how each ended, the switch time of a
 * resize), each resize's and restart's parts, the nodes with their billed
 * cost, the markets, a stop's account and the totals (docs/run.md).
 * Invariants: nothing but f is written; reads only the result. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/control.h"

void pit_run_result_write(FILE *f, const struct pit_run_result *r, const char *run, const char *dir) {
  fprintf(f, "\n%-4s %-28s %14s %9s %9s %9s %9s\n", "gen", "membership", "steps", "time", "cost $", "end",
         "switch");
  for (int i = 0; i < r->ngens; i++) {
    const struct pit_run_gen *g = &r->gens[i];
    char sw[64] = "";
    if (strcmp(g->end, "resized") == 0 && i + 1 < r->ngens) {
      const struct pit_run_gen *h = &r->gens[i + 1];
      double total = h->t_first_iter - (g->t1 - (isfinite(g->exit_s) ? g->exit_s : 0));
      snprintf(sw, sizeof sw, "%.2f s", total);
    }
    char steps[48];
    snprintf(steps, sizeof steps, "%lld-%lld", (long long)g->step0, (long long)g->step1);
    fprintf(f, "%-4d %-28s %14s %8.1fs %9.4f %9s %9s\n", g->gen, g->membership, steps, g->t1 - g->t0, g->cost, g->end,
           sw);
  }
  int nresized = 0;
  for (int i = 0; i + 1 < r->ngens; i++)
    nresized += strcmp(r->gens[i].end, "resized") == 0;
  if (nresized) /* the header only above its rows */
    fprintf(f, "\nresizes: switch = decision to the first iteration of the next generation:\n");
  for (int i = 0; i + 1 < r->ngens; i++) {
    const struct pit_run_gen *g = &r->gens[i], *h = &r->gens[i + 1];
    if (strcmp(g->end, "resized") != 0)
      continue;
    double decided = g->t1 - (isfinite(g->exit_s) ? g->exit_s : 0);
    /* in place: no exit, no launch; the ranks that stay went on (ctl_shrink.c) */
    fprintf(f, "  gen %d → %d%s: checkpoint %.3f s, %s %.3f s, nodes %.3f s, %s %.3f s, total %.3f s", g->gen, h->gen,
           g->in_place ? " in place" : "", isfinite(g->ckpt_s) ? g->ckpt_s : 0,
           g->in_place ? "the leaving ranks gone and the others set up again" : "workload exit",
           isfinite(g->exit_s) ? g->exit_s : 0, isfinite(g->nodes_s) ? g->nodes_s : 0,
           g->in_place ? "first step" : "launch+init", h->t_first_iter - h->t0, h->t_first_iter - decided);
    if (g->idle_s > 0)
      fprintf(f, " (of the nodes' time, %.3f s with no node, waiting for spot capacity)", g->idle_s);
    fprintf(f, "\n");
  }
  for (int i = 0; i + 1 < r->ngens; i++) {
    const struct pit_run_gen *g = &r->gens[i], *h = &r->gens[i + 1];
    if (strcmp(g->end, "failed") == 0)
      fprintf(f, "  restart gen %d → %d: failure to first iteration %.3f s (launch+init %.3f s)\n", g->gen, h->gen,
             h->t_first_iter - g->t1, h->t_first_iter - h->t0);
  }
  if (!r->resizable && r->recommended > 0)
    fprintf(f, "\nThe workload spoke no pitstop protocol (its records were read from its log): it cannot be\n"
           "resized without losing work, so %d decision%s only recommended (see docs/protocol.md).\n",
           r->recommended, r->recommended == 1 ? " was" : "s were");
  else if (!r->resizable)
    fprintf(f, "\nThe workload spoke no pitstop protocol (its records were read from its log): pitstop could\n"
           "not have resized it without losing work (see docs/protocol.md).\n");
  if (r->nnodes) {
    fprintf(f, "\nnodes (cost as billed: the type's granularity and minimum):\n");
    int idw = 24; /* the node column as wide as its longest id */
    for (int i = 0; i < r->nnodes; i++)
      if ((int)strlen(r->nodes[i].id) > idw)
        idw = (int)strlen(r->nodes[i].id);
    fprintf(f, "  %-*s %-14s %-9s %8s %8s %8s %9s %9s  %s\n", idw, "node", "type", "market", "start", "ready", "stop",
           "billed", "cost $", "why started / how it ended");
    for (int i = 0; i < r->nnodes; i++) {
      const struct pit_run_node *n = &r->nodes[i];
      fprintf(f, "  %-*s %-14s %-9s %7.1fs %7.1fs %7.1fs %8.0fs %9.4f  %s; %s%s\n", idw, n->id, n->itype,
             n->spot ? "spot" : "on-demand", n->t_start, n->t_ready, n->t_stop, n->billed_s, n->cost, n->why,
             n->end, n->waste_s > 0 ? " (after failed starts)" : "");
    }
  }
  double on_spot = 0, on_od = 0, all_od = 0;
  int nspot = 0;
  for (int i = 0; i < r->nnodes; i++) {
    const struct pit_run_node *n = &r->nodes[i];
    nspot += n->spot;
    *(n->spot ? &on_spot : &on_od) += n->cost;
    all_od += n->od_cost;
  }
  if (nspot)
    fprintf(f, "markets: $%.4f on %d spot node%s, $%.4f on-demand; the same billed seconds all on-demand: $%.4f\n", on_spot,
           nspot, nspot == 1 ? "" : "s", on_od, all_od);
  if (r->reclaims || r->waste_s > 0)
    fprintf(f, "%d node%s reclaimed or lost; failed or hung starts billed %.0f s ($%.4f, in the cost)\n", r->reclaims,
           r->reclaims == 1 ? "" : "s", r->waste_s, r->waste_usd);
  if (r->interrupted || r->measured) {
    if (r->measured)
      fprintf(f, "\nmeasured after %lld steps, so stopped there (a measurement, not the whole job): ",
              (long long)r->steps);
    else
      fprintf(f, "\nstopped by %s after %lld steps: ",
              r->interrupted == SIGINT ? "SIGINT (Ctrl-C)" : r->interrupted == SIGTERM ? "SIGTERM" : "a signal",
              (long long)r->steps);
    if (!strcmp(r->stop_how, "checkpoint"))
      fprintf(f, "the workload checkpointed at a step its ranks agreed on and exited");
    else if (!strcmp(r->stop_how, "sigterm"))
      fprintf(f, "the workload was sent SIGTERM and exited");
    else if (!strcmp(r->stop_how, "killed"))
      fprintf(f, "the workload was killed (SIGKILL)");
    else
      fprintf(f, "no workload was running");
    fprintf(f, " %.1f s after the %s; every node stopped.\n", r->stop_s, r->measured ? "stop" : "signal");
    if (r->stop_ckpt_step >= 0)
      fprintf(f, "The same command with --run %s --checkpoint-dir %s continues it from its checkpoint at step %lld.\n",
             run, dir, (long long)r->stop_ckpt_step);
    else
      fprintf(f, "No checkpoint: the job starts again from step 0 when run again.\n");
  }
  if (r->by_restart && (nresized > 0 || r->refused > 0)) /* nothing to say of a run no resize was asked of */
    fprintf(f, "\nResized by restart (--resume-by-restart): each resize right after a snapshot, the steps since "
           "it redone;\n%d resize%s refused (the next snapshot not due before the job's end; the reasons are above "
           "and in the decision records).\n",
           r->refused, r->refused == 1 ? "" : "s");
  /* a run continued after a controller stop says so: its steps redone are not all a restart's */
  char continued[64] = "";
  if (r->continued > 0)
    snprintf(continued, sizeof continued, ", continued after %d controller stop%s", r->continued,
             r->continued == 1 ? "" : "s");
  char by_node[64] = "";
  if (r->node_restarts > 0)
    snprintf(by_node, sizeof by_node, " (%d after a node lost)", r->node_restarts);
  fprintf(f, "\n%lld steps in %.1f s, %d restart%s%s%s (%lld steps redone), cost $%.4f\nrecords: %s\n",
         (long long)r->steps, r->total_s, r->restarts, r->restarts == 1 ? "" : "s", by_node, continued,
         (long long)r->lost_steps, r->cost, r->events);
}
