/* dst_check.c — the invariants of the deterministic simulation (dst.c), checked
 * after each seed on what the run left: its events file read through the run log
 * (record/runlog.c, the one reader of an elastic run), priced by catalog/cost.c
 * (pit_runlog_cost), and the simulated provider's nodes.
 *
 *  1. every step once: a run that ends done holds steps 0 … total−1, each once; one
 *     that ends with an error holds no step twice;
 *  2. each step's sample digest and loss equal an uninterrupted run's;
 *  3. the held-record rule: an iteration record of a generation is in the events
 *     file only if a checkpoint record of that generation covers it (a larger
 *     step) or that generation ended done;
 *  4. no node started twice (one start record per node id), every node the
 *     provider started is in the run log, none left running at the end, each
 *     node's billed seconds equal to its life (a node reclaimed: at least its life,
 *     the controller learns of it after);
 *  5. every schedule decision names the schedule's membership at its step;
 *  6. the run ends done or with one clear error (said by the harness), never done
 *     with a step missing; no hang.
 * The first invariant broken is said in r->violation.
 * Invariant of this file: it reads, never writes. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/dst_impl.h"
#include "pitstop/catalog.h"
#include "pitstop/record.h"

#define FAIL(...)                                                                                                 \
  do {                                                                                                            \
    snprintf(r->violation, sizeof r->violation, __VA_ARGS__);                                                     \
    goto out;                                                                                                     \
  } while (0)

static const struct pit_runlog_gen *gen_of(const struct pit_runlog *log, int g) {
  return g >= 0 && g < log->ngens ? &log->gens[g] : NULL;
}

void dst_check(struct dst *d, int done, struct pit_dst_result *r) {
  struct pit_runlog log;
  struct pit_runlog_cost cost;
  struct pit_err e = {0};
  char path[1200];
  int *seen = calloc((size_t)d->total + 1, sizeof *seen);
  uint64_t *ref = malloc(((size_t)d->total + 1) * sizeof *ref);
  pit_runlog_init(&log);
  memset(&cost, 0, sizeof cost);
  if (!seen || !ref)
    FAIL("out of memory");
  if (d->hung)
    FAIL("hang: the run had not ended after %.0f simulated seconds", d->t_limit - 1000);
  snprintf(path, sizeof path, "%s/events.jsonl", d->run_dir);
  if (pit_runlog_load(&log, path, &e) < 0)
    FAIL("the run log cannot be read: %s", e.msg);
  r->gens = log.ngens;
  for (int64_t s = 0; s <= d->total; s++) /* the uninterrupted run's state before each step */
    ref[s] = dst_params_after(s);
  /* 1, 2, 3: the steps */
  for (int64_t i = 0; i < log.niters; i++) {
    const struct pit_runlog_iter *it = &log.iters[i];
    if (it->step < 0 || it->step >= d->total)
      FAIL("step %" PRId64 " (gen %d) is outside the job's %" PRId64 " steps", it->step, it->gen, d->total);
    if (seen[it->step]++)
      FAIL("step %" PRId64 " is in the events file twice (again by gen %d)", it->step, it->gen);
    char dig[17];
    dst_samples(it->step, dig);
    if (strcmp(dig, it->samples) != 0)
      FAIL("step %" PRId64 " (gen %d): samples %s, an uninterrupted run's %s", it->step, it->gen, it->samples, dig);
    if (it->loss != dst_loss(ref[it->step]))
      FAIL("step %" PRId64 " (gen %d): loss %.17g, an uninterrupted run's %.17g", it->step, it->gen, it->loss,
           dst_loss(ref[it->step]));
    const struct pit_runlog_gen *g = gen_of(&log, it->gen);
    int covered = g && strcmp(g->status, "done") == 0;
    for (int k = 0; !covered && k < log.nckpt; k++)
      covered = log.ckpt[k].gen == it->gen && log.ckpt[k].step > it->step;
    /* a controller killed between the release of the records a checkpoint covers and
     * that checkpoint's own record: the file is complete, its record never written */
    if (!covered && it->gen >= 0 && it->gen < DST_MAX_GENS && d->gen_killed[it->gen] &&
        d->gen_ckpt[it->gen] > it->step)
      covered = 1;
    if (!covered)
      FAIL("step %" PRId64 " of gen %d is in the events file, but no checkpoint of that generation covers it "
           "(the held-record rule)",
           it->step, it->gen);
  }
  if (done)
    for (int64_t s = 0; s < d->total; s++)
      if (!seen[s])
        FAIL("the run ended done, but step %" PRId64 " is missing from its events file", s);
  if (done && !pit_runlog_job_done(&log))
    FAIL("the controller returned done, but the run log does not say the job is done");
  /* 4: the nodes */
  if (pit_runlog_cost(&log, NULL, NAN, &cost, &e) < 0)
    FAIL("the run log cannot be priced: %s", e.msg);
  for (int i = 0; i < d->nnodes; i++) {
    const struct dst_node *s = &d->nodes[i];
    if (s->alive)
      FAIL("node %s is left running at the end", s->id);
    int k = -1, n = 0;
    for (int j = 0; j < log.nnodes; j++)
      if (strcmp(log.nodes[j].id, s->id) == 0) {
        k = j;
        n++;
      }
    if (n > 1)
      FAIL("node %s has %d start records", s->id, n);
    double life = s->t_end - s->t_start;
    /* what the controller could not record: its records while the disk was full, a
     * node it started just before it was killed (docs/dst.md, "not simulated exactly") */
    if (s->unrecordable) {
      r->unbilled++;
      continue;
    }
    if (k < 0)
      FAIL("node %s (lived %.3f s) is not in the run log: its bill is missing", s->id, life);
    double billed = cost.nodes[k].secs;
    if (s->gone || s->stop_unrecorded ? billed < life - 1e-3 : fabs(billed - life) > 1e-3)
      FAIL("node %s lived %.6f s%s, the run log bills %.6f s", s->id, life, s->gone ? " (reclaimed)" : "", billed);
  }
  /* 5: the schedule's decisions */
  for (int i = 0; d->two_phase && i < log.ndec; i++) {
    const struct pit_runlog_decision *x = &log.dec[i];
    if (strcmp(x->d.policy, "schedule") != 0)
      continue;
    int want = x->d.step >= d->sched_b ? 1 : x->d.step >= d->sched_a ? 2 : 1;
    struct pit_membership mm;
    pit_membership_clear(&mm);
    pit_membership_add(&mm, "sim-1", want, 1, NULL);
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&mm, m, sizeof m);
    char to[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&x->d.to, to, sizeof to);
    if (strcmp(to, m) != 0)
      FAIL("decision at step %" PRId64 " (gen %d) goes to %s; the schedule says %s", x->d.step, x->gen, to, m);
  }
out:
  pit_runlog_cost_release(&cost);
  pit_runlog_release(&log);
  free(seen);
  free(ref);
}
