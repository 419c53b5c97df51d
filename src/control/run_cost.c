/* run_cost.c — a finished `pitstop run`'s report priced from its records:
 * the events file's fold (record.h, the run log) through the one accounting
 * (pit_runlog_cost, catalog.h), so the report's generations, nodes, markets
 * and total, the replay's "this run" and pitstop status agree to the cent.
 * Invariants: the events file is only read; the result changes only when
 * the whole fold was priced. */
#include <math.h>
#include <string.h>

#include "pitstop/control.h"

int pit_run_result_price(struct pit_run_result *r, const struct pit_catalog *cat, struct pit_err *e) {
  struct pit_runlog log;
  struct pit_runlog_cost bill = {0};
  pit_runlog_init(&log);
  int rc = pit_runlog_load(&log, r->events, e);
  if (rc == 0)
    rc = pit_runlog_cost(&log, cat, NAN, &bill, e);
  if (rc == 0) {
    double total = 0;
    for (int i = 0; i < r->nnodes; i++) { /* its node in the records: the last one of its id */
      struct pit_run_node *n = &r->nodes[i];
      int k = log.nnodes - 1;
      while (k >= 0 && strcmp(log.nodes[k].id, n->id) != 0)
        k--;
      if (k < 0)
        continue;
      n->billed_s = bill.nodes[k].billed_s;
      n->cost = bill.nodes[k].cost;
      n->od_cost = bill.nodes[k].od_cost;
      total += n->cost;
    }
    for (int i = 0; i < r->ngens; i++)
      if (r->gens[i].gen >= 0 && r->gens[i].gen < bill.ngens)
        r->gens[i].cost = bill.gen_cost[r->gens[i].gen];
    r->cost = total;
  }
  pit_runlog_cost_release(&bill);
  pit_runlog_release(&log);
  return rc;
}
