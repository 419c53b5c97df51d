/* dst_prov.c — the simulated provider of the deterministic simulation (dst.c): the
 * ops of struct pit_provider_ops over simulated nodes, which keep their lives (a
 * cloud's bill) in simulated seconds, outlive a killed controller, and fail as the
 * seed's plan says: a start that fails (or hangs 600 s first), a list that fails,
 * a stop that takes long, a node reclaimed with a notice or lost without one.
 *
 * Invariants:
 *  - a node id is never reused; a node lives from its start call to its stop (or
 *    its reclaim): t_start, t_end;
 *  - a start, a stop and a clear are effects (dst_fx): a dead controller's start
 *    fails, its stop is swallowed (the node lives on), its list is empty. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "control/dst_impl.h"

static struct dst *of(struct pit_provider *p) { return p->impl; }

static int p_open(struct pit_provider *p, struct pit_err *e) {
  (void)e;
  return p->impl ? 0 : pit_err_set(e, PIT_EARG, "the simulated provider runs only in its world"); /* impl: the struct dst */
}

static void p_close(struct pit_provider *p) { (void)p; }

static struct dst_node *find(struct dst *d, const char *id) {
  for (int i = 0; i < d->nnodes; i++)
    if (strcmp(d->nodes[i].id, id) == 0)
      return &d->nodes[i];
  return NULL;
}

static int p_start(struct pit_provider *p, const char *itype, enum pit_market mk, struct pit_node *n, struct pit_err *e) {
  (void)mk; /* one market: the simulation has no spot prices */
  struct dst *d = of(p);
  int fx = dst_fx(d, "provider start");
  if (fx != 0)
    return pit_err_set(e, PIT_EIO, "cannot start a node: %s", fx > 0 ? "the controller is gone" : "disk");
  int call = d->nstarts++;
  for (int i = 0; i < d->nstart_fail; i++)
    if (d->start_fail[i] / 2 == call) {
      if (d->start_fail[i] % 2) {
        d->now += 600;
        dst_trace(d, "provider start %d hangs 600 s, then fails", call);
      } else {
        dst_trace(d, "provider start %d fails", call);
      }
      return pit_err_set(e, PIT_EIO, "the provider could not start a node of type '%s' (simulated)", itype);
    }
  if (d->nnodes == DST_MAX_NODES)
    return pit_err_set(e, PIT_EIO, "out of simulated nodes");
  struct dst_node *s = &d->nodes[d->nnodes++];
  memset(s, 0, sizeof *s);
  snprintf(s->id, sizeof s->id, "dst-%d", d->nnodes - 1);
  snprintf(s->itype, sizeof s->itype, "%.63s", itype);
  s->t_start = d->now;
  s->t_end = NAN;
  s->alive = 1;
  s->notice_t = s->gone_t = NAN;
  s->start_fx = d->neff;
  for (int i = 0; i < d->nreclaim; i++)
    if (d->reclaim_start[i] == call) {
      s->gone_t = d->now + d->boot_s + d->reclaim_after[i];
      if (d->reclaim_notice[i])
        s->notice_t = s->gone_t - 30;
    }
  d->now += d->boot_s; /* it boots */
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", s->id);
  snprintf(n->itype, sizeof n->itype, "%s", itype);
  snprintf(n->host, sizeof n->host, "sim");
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->state = PIT_NODE_READY;
  n->price_h = 1.0;
  dst_trace(d, "provider start %d: node %s (%s) up%s", call, s->id, itype,
            isfinite(s->gone_t) ? isfinite(s->notice_t) ? ", to be reclaimed with notice" : ", to be lost" : "");
  return 0;
}

static void node_end(struct dst *d, struct dst_node *s, int gone) {
  if (!s->alive)
    return;
  s->alive = 0;
  s->gone = gone;
  s->t_end = d->now;
  for (int i = 0; !d->wk.exited && i < d->wk.nnodes; i++)
    if (strcmp(d->wk.nodes[i], s->id) == 0) {
      dst_work_die(d, 128 + SIGKILL, "a node of it is gone");
      break;
    }
}

static int p_stop(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct dst *d = of(p);
  (void)e;
  int fx = dst_fx(d, "provider stop");
  if (fx != 0)
    return 0; /* a dead controller's stop never reaches the cloud */
  if (d->slow_stop > 0) {
    d->slow_stop--;
    d->now += 90;
    dst_trace(d, "provider stop of %s takes 90 s", n->id);
  }
  struct dst_node *s = find(d, n->id);
  if (s && s->alive) {
    s->stop_fx = d->neff;
    node_end(d, s, 0);
    dst_trace(d, "provider: node %s stopped, lived %.6f s", s->id, s->t_end - s->t_start);
  }
  return 0;
}

static int p_list(struct pit_provider *p, struct pit_node **out, int *nout, struct pit_err *e) {
  struct dst *d = of(p);
  *out = NULL;
  *nout = 0;
  if (d->dead)
    return 0;
  int call = d->nlists++;
  for (int i = 0; i < d->nlist_fail; i++)
    if (d->list_fail[i] == call) {
      dst_trace(d, "provider list %d fails", call);
      return pit_err_set(e, PIT_EIO, "the provider could not list the run's nodes (simulated)");
    }
  struct pit_node *v = calloc((size_t)(d->nnodes > 0 ? d->nnodes : 1), sizeof *v);
  if (!v)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int k = 0;
  for (int i = 0; i < d->nnodes; i++)
    if (d->nodes[i].alive) {
      struct pit_node *n = &v[k++];
      snprintf(n->id, sizeof n->id, "%s", d->nodes[i].id);
      snprintf(n->itype, sizeof n->itype, "%s", d->nodes[i].itype);
      snprintf(n->host, sizeof n->host, "sim");
      n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
      n->state = PIT_NODE_READY;
      n->price_h = 1.0;
      n->t_start = n->t_ready = n->t_stop = NAN;
    }
  dst_trace(d, "provider list %d: %d node%s", call, k, k == 1 ? "" : "s");
  *out = v;
  *nout = k;
  return 0;
}

static int p_health(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct dst_node *s = find(of(p), n->id);
  if (s && s->alive)
    return 0;
  return pit_err_set(e, PIT_ESTATE, "node %s is gone", n->id);
}

static int p_wrap(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *n_out,
                  struct pit_err *e) {
  (void)p;
  (void)n;
  (void)argv;
  (void)cap;
  (void)e;
  *n_out = 0;
  return 0;
}

static int p_clear(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  (void)n;
  (void)e;
  dst_fx(of(p), "provider clear");
  return 0;
}

static int p_poll(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e) {
  struct dst *d = of(p);
  (void)e;
  *nev = 0;
  for (int i = 0; i < d->nnodes && *nev < cap; i++) {
    struct dst_node *s = &d->nodes[i];
    if (isfinite(s->notice_t) && s->notice_t <= d->now && !s->notice_said && s->alive) {
      s->notice_said = 1;
      struct pit_node_event *x = &ev[(*nev)++];
      snprintf(x->id, sizeof x->id, "%s", s->id);
      x->kind = PIT_NODE_NOTICE;
      x->grace_s = s->gone_t - d->now;
      dst_trace(d, "provider poll: notice for %s", s->id);
    } else if (s->gone && !s->gone_said) {
      s->gone_said = 1;
      struct pit_node_event *x = &ev[(*nev)++];
      snprintf(x->id, sizeof x->id, "%s", s->id);
      x->kind = PIT_NODE_GONE;
      dst_trace(d, "provider poll: %s gone", s->id);
    }
  }
  return 0;
}

void dst_prov_tick(struct dst *d) {
  for (int i = 0; i < d->nnodes; i++) {
    struct dst_node *s = &d->nodes[i];
    if (s->alive && isfinite(s->gone_t) && s->gone_t <= d->now) {
      double now = d->now;
      d->now = s->gone_t; /* its life ends at its reclaim */
      node_end(d, s, 1);
      d->now = now;
      dst_trace(d, "provider: node %s reclaimed, lived %.6f s", s->id, s->t_end - s->t_start);
    }
  }
}

const struct pit_provider_ops dst_provider = {
    .name = "dst",
    .help = "the deterministic simulation's provider (src/control/dst_prov.c)",
    .open = p_open,
    .start = p_start,
    .stop = p_stop,
    .list = p_list,
    .health = p_health,
    .wrap = p_wrap,
    .close = p_close,
    .poll = p_poll,
    .clear = p_clear,
};
