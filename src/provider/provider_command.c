/* provider_command.c — the `command` provider: nodes of any cloud, started,
 * stopped and listed through that cloud's own CLI (the AWS CLI, CLAP's
 * clapp), from argv templates in a JSON config file (--provider-config) or
 * a built-in preset ("aws", "clap"). docs/providers.md describes the file.
 * This file holds the operations and the node files; the presets, the config,
 * the templates and the output read back are provider_command_conf.c's
 * (provider_command.h between them).
 *
 * A template is a list of argv entries; each entry has its placeholders
 * {itype} {count} {run} {id} {host} {market} and the config's "vars"
 * ({image}, {key}, ...) replaced, and becomes ONE argv entry whatever the
 * values hold: nothing reaches a shell. An entry "spot?X" is X for a spot
 * start and absent otherwise ("ondemand?X": the reverse). A '{' not followed
 * by a lower-case name and '}' is literal (AWS's Tags=[{Key=..}]).
 *
 * Invariants:
 *  - every node is tagged with the run id (the start template carries
 *    {run}); list finds exactly the run's nodes (the CLI's filter, and a
 *    "tags" field when the output has one);
 *  - STATE_DIR/nodes/ID.node (node_files.c) is written (atomically) as soon as a start
 *    printed the node's id, and removed once the node is stopped, so a
 *    restarted controller knows every node it may have started;
 *  - a start that fails or hangs (killed after start_timeout_s) is retried
 *    at most start_retries times; whatever an attempt created (a node of the
 *    run that no file names) is stopped, and its billed seconds are counted
 *    as waste (p->waste_s, p->waste_usd, the node's waste_s);
 *  - output that cannot be read (not JSON, lines no pattern matches) is an
 *    error naming the command, never a guess;
 *  - a wrap that is a remote shell (an ssh, or "wrap_shell": p->wrap_shell) runs
 *    pitstop's node-exec there, and every signal for the workload, and the
 *    clearing of what the run left on a node, goes through it as
 *    `pitstop node-check` (as the ssh provider's): never to the local client. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/provider_command.h"


static int c_open(struct pit_provider *p, struct pit_err *e) {
  struct cmdp *c = calloc(1, sizeof *c);
  if (!c)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = ctl_cmd_open_config(p, c, e);
  if (rc < 0) {
    ctl_cmd_free(c);
    p->impl = NULL;
  }
  return rc;
}

static void c_close(struct pit_provider *p) {
  if (p->impl)
    ctl_cmd_free(p->impl);
  p->impl = NULL;
}

static int in_states(const char st[][32], int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(st[i], s) == 0)
      return 1;
  return 0;
}

/* ---------------- node files (node_files.c: STATE_DIR/nodes/ID.node) ---------------- */

static int write_node(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  char text[512];
  snprintf(text, sizeof text, "%s %d %.9g %.9g %s %s\n", n->itype, n->spot, n->price_h, n->waste_s,
           n->host[0] ? n->host : "-", n->zone[0] ? n->zone : "-");
  return ctl_node_file_write(p->conf.state_dir, n->id, text, e);
}

static int read_node(struct pit_provider *p, const char *id, struct pit_node *n) {
  char buf[512], host[128] = "", zone[PIT_ZONE_MAX] = "-";
  if (ctl_node_file_read(p->conf.state_dir, id, buf, sizeof buf) < 0)
    return -1;
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", id);
  if (sscanf(buf, "%63s %d %lf %lf %127s %31s", n->itype, &n->spot, &n->price_h, &n->waste_s, host, zone) < 5)
    return -1;
  snprintf(n->host, sizeof n->host, "%s", strcmp(host, "-") ? host : "");
  snprintf(n->zone, sizeof n->zone, "%s", strcmp(zone, "-") ? zone : "");
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->t_start = n->t_ready = n->t_stop = NAN;
  return 0;
}

static void forget_node(struct pit_provider *p, const char *id) {
  struct pit_err e2 = {0};
  ctl_node_file_remove(p->conf.state_dir, id, &e2);
}

/* The ids of the node files, at most cap of them. */
static int known_ids(struct pit_provider *p, char ids[][PIT_NAME_MAX], int cap) {
  struct ctl_node_id *v = NULL;
  int n = 0;
  struct pit_err e2 = {0};
  if (ctl_node_files(p->conf.state_dir, &v, &n, &e2) < 0)
    return 0;
  int k = 0;
  for (; k < n && k < cap; k++)
    snprintf(ids[k], PIT_NAME_MAX, "%s", v[k].id);
  free(v);
  return k;
}

/* The run's nodes the cloud lists now (gone ones left out unless keep_gone). */
static int cloud_list(struct pit_provider *p, struct item *it, int cap, int *nit, struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct subst s = {.run = p->conf.run, .count = "1"};
  char *out = NULL, argv0[64];
  int st = 0;
  int rc = ctl_cmd_run_tmpl(p, TK_LIST, &s, 0, c->list_timeout_s, &out, &st, argv0, e);
  if (rc < 0)
    return rc;
  char what[128];
  snprintf(what, sizeof what, "the output of %s (list)", argv0);
  if (st != 0) {
    free(out);
    if (st < 0)
      return pit_err_set(e, PIT_ESTATE, "%s (list) did not answer within %.0f s", argv0, c->list_timeout_s);
    pit_err_set(e, PIT_ESTATE, "%s (list) failed with status %d", argv0, st);
    pit_err_hint(e, "its messages are in %s/provider.log", p->conf.state_dir);
    return PIT_ESTATE;
  }
  rc = ctl_cmd_parse_items(&c->fmt_list, out, what, it, cap, nit, e);
  free(out);
  if (rc < 0)
    return rc;
  /* with a tags field, only the run's own */
  char tag[PIT_NAME_MAX + 16];
  snprintf(tag, sizeof tag, "pitstop-run=%s", p->conf.run);
  int k = 0;
  for (int i = 0; i < *nit; i++) {
    int ours = 1;
    if (c->fmt_list.json ? c->fmt_list.path[F_TAGS][0] : c->fmt_list.group[F_TAGS]) {
      const char *at = strstr(it[i].tags, tag);
      ours = at && (at[strlen(tag)] == 0 || at[strlen(tag)] == ' ' || at[strlen(tag)] == ';' ||
                    at[strlen(tag)] == ',');
    }
    if (ours)
      it[k++] = it[i];
  }
  *nit = k;
  return 0;
}

static double billed_usd(struct pit_provider *p, const char *itype, int spot, double secs, double *billed) {
  const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
  *billed = t ? pit_itype_billed_s(t, secs) : secs;
  double price = !t ? 0 : spot && isfinite(t->spot_price_h) ? t->spot_price_h : t->price_h;
  return pit_node_cost(t, price, secs);
}

/* ---------------- ops ---------------- */

static int stop_id(struct pit_provider *p, const char *id, struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct subst s = {.run = p->conf.run, .id = id, .count = "1"};
  int rc = 0;
  for (int attempt = 0; attempt <= c->start_retries; attempt++) {
    char *out = NULL, argv0[64];
    int st = 0;
    rc = ctl_cmd_run_tmpl(p, TK_STOP, &s, 0, c->stop_timeout_s, &out, &st, argv0, e);
    free(out);
    if (rc < 0)
      return rc;
    if (st == 0)
      break;
    /* a node already gone is stopped */
    struct item it[MAX_ITEMS];
    int n = 0, there = 0;
    struct pit_err e2 = {0};
    if (cloud_list(p, it, MAX_ITEMS, &n, &e2) == 0) {
      for (int i = 0; i < n; i++)
        there |= strcmp(it[i].id, id) == 0 && !in_states(c->gone, c->ngone, it[i].state);
      if (!there)
        break;
    }
    rc = pit_err_set(e, PIT_ESTATE, "%s (stop %s) %s", argv0, id,
                     st < 0 ? "did not answer in time" : "failed");
    pit_err_hint(e, "its messages are in %s/provider.log; the node may still be billed", p->conf.state_dir);
  }
  if (rc < 0)
    return rc;
  forget_node(p, id);
  return 0;
}

static int gone(const struct cmdp *c, const char *id) {
  for (int i = 0; i < c->nreported; i++)
    if (strcmp(c->reported[i], id) == 0 && c->reported_kind[i] == PIT_NODE_GONE)
      return 1;
  return 0;
}

/* Through a remote-shell wrap: `WRAP... PITSTOP node-check --release RUN --run-tag TAG [--signal N
 * [--catchers]]` on n, each word of pitstop's quoted for that shell (as the ssh provider's calls):
 * the number it prints (processes signalled or killed), or < 0. */
static int node_check(struct pit_provider *p, const struct pit_node *n, int sig, int catchers_only,
                      struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct ctl_node_words nw;
  ctl_node_check_words(p, sig, catchers_only, &nw);
  char q[9][1100];
  const char *more[9];
  for (int i = 0; i < nw.n; i++) {
    if (ctl_shell_quote(nw.w[i], q[i], sizeof q[i]) < 0)
      return pit_err_set(e, PIT_EARG, "'%s' is too long for a remote command", nw.w[i]);
    more[i] = q[i];
  }
  struct subst s = {.run = p->conf.run, .id = n->id, .host = n->host, .itype = n->itype, .count = "1"};
  char *out = NULL, argv0[64];
  int st = 0;
  double tmo = c->list_timeout_s < 20 ? c->list_timeout_s : 20;
  int rc = ctl_cmd_run_tmpl_more(p, TK_WRAP, &s, n->spot, more, nw.n, tmo, &out, &st, argv0, e);
  if (rc < 0)
    return rc;
  int k = 0;
  if (st != 0)
    rc = pit_err_set(e, PIT_ESTATE, "node %s: %s (node-check) %s", n->id, argv0,
                     st < 0 ? "did not answer in time" : st == 255 ? "could not reach it (255)" : "failed");
  else
    rc = sscanf(out, "%d", &k) == 1 ? k : 0;
  free(out);
  return rc;
}

/* A remote-shell wrap's workload runs on the node under that shell: a signal to the local client
 * would only end the session (provider.h signal). */
static int c_signal(struct pit_provider *p, const struct pit_node *n, int sig, int catchers_only, struct pit_err *e) {
  if (gone(p->impl, n->id)) /* not asked: a remote shell to a node the cloud took waits out its time-out */
    return pit_err_set(e, PIT_ESTATE, "node %s is gone", n->id);
  return node_check(p, n, sig, catchers_only, e);
}

/* What the run left running on n (a killed controller's workload), killed there through the
 * remote-shell wrap; nothing to do without one (the ranks ran here). */
static int c_clear(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct cmdp *c = p->impl;
  if (!c->wrap_shell || gone(c, n->id))
    return 0;
  int rc = node_check(p, n, 0, 0, e);
  return rc < 0 ? rc : 0;
}

static int c_stop(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct pit_err e2 = {0};
  c_clear(p, n, &e2); /* best effort: the cloud's stop ends whatever it leaves */
  return stop_id(p, n->id, e);
}

/* Stops the run's listed nodes that no file names (what a failed attempt
 * created); returns how many, and adds their billed waste. */
static int stop_strays(struct pit_provider *p, const char *itype, int spot, double since, double *waste) {
  struct cmdp *c = p->impl;
  struct item it[MAX_ITEMS];
  int n = 0, stopped = 0;
  struct pit_err e2 = {0};
  if (cloud_list(p, it, MAX_ITEMS, &n, &e2) < 0)
    return 0;
  char ids[MAX_ITEMS][PIT_NAME_MAX];
  int nk = known_ids(p, ids, MAX_ITEMS);
  for (int i = 0; i < n; i++) {
    int known = in_states(c->gone, c->ngone, it[i].state);
    for (int j = 0; j < nk && !known; j++)
      known = strcmp(ids[j], it[i].id) == 0;
    if (known)
      continue;
    if (stop_id(p, it[i].id, &e2) == 0)
      stopped++;
    double billed;
    p->waste_usd += billed_usd(p, itype, spot, pit_now() - since, &billed);
    *waste += billed;
  }
  return stopped;
}

static int is_spot(const struct cmdp *c, const char *itype) {
  for (int i = 0; i < c->nspot; i++)
    if (strcmp(c->spot_types[i], itype) == 0)
      return 1;
  return 0;
}

/* One attempt: start, tag, wait until ready. 0 and n filled, or < 0 with e
 * saying why (what the attempt created is the caller's to clean). */
static int start_once(struct pit_provider *p, const char *itype, int spot, struct pit_node *n, double t0,
                      struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct subst s = {.run = p->conf.run, .itype = itype, .count = "1", .market = spot ? "spot" : "on-demand",
                    .zone = p->zone};
  char *out = NULL, argv0[64];
  int st = 0;
  int rc = ctl_cmd_run_tmpl(p, TK_START, &s, spot, c->start_timeout_s, &out, &st, argv0, e);
  if (rc < 0)
    return rc;
  if (st != 0) {
    free(out);
    if (st < 0)
      return pit_err_set(e, PIT_ESTATE, "%s (start %s) did not answer within %.0f s", argv0, itype,
                         c->start_timeout_s);
    return pit_err_set(e, PIT_ESTATE, "%s (start %s) failed with status %d (its messages: %s/provider.log)", argv0,
                       itype, st, p->conf.state_dir);
  }
  struct item it[8];
  int nit = 0;
  char what[128];
  snprintf(what, sizeof what, "the output of %s (start)", argv0);
  const struct outfmt *fs = c->fmt_start.json || c->fmt_start.have_re ? &c->fmt_start : &c->fmt_list;
  rc = ctl_cmd_parse_items(fs, out, what, it, 8, &nit, e);
  free(out);
  if (rc < 0)
    return rc;
  if (nit < 1)
    return pit_err_set(e, PIT_EFORMAT, "%s printed no node id", what);
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", it[0].id);
  snprintf(n->itype, sizeof n->itype, "%s", itype);
  snprintf(n->zone, sizeof n->zone, "%s", p->zone);
  n->spot = spot;
  const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
  n->price_h = !t ? 0 : spot && isfinite(t->spot_price_h) ? t->spot_price_h : t->price_h;
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->t_start = n->t_ready = n->t_stop = NAN;
  if ((rc = write_node(p, n, e)) < 0)
    return rc;
  if (c->t[TK_TAG][0]) {
    s.id = n->id;
    rc = ctl_cmd_run_tmpl(p, TK_TAG, &s, spot, c->stop_timeout_s, &out, &st, argv0, e);
    free(out);
    if (rc < 0)
      return rc;
    if (st != 0)
      return pit_err_set(e, PIT_ESTATE, "%s (tag %s with the run id) failed", argv0, n->id);
  }
  /* boot: until the cloud lists it in a ready state. A node listed, then missing from two lists
   * in a row, went away while it booted (a list that drops gone nodes, as clapp's does): before,
   * the attempt waited out boot_timeout_s (600 s; fault soak --cloud, 2026-11-30) */
  for (int seen = 0, missing = 0;;) {
    struct item L[MAX_ITEMS];
    int nl = 0, found = 0;
    if ((rc = cloud_list(p, L, MAX_ITEMS, &nl, e)) < 0)
      return rc;
    for (int i = 0; i < nl; i++)
      found |= strcmp(L[i].id, n->id) == 0;
    seen |= found;
    missing = found ? 0 : missing + seen;
    if (missing >= 2)
      return pit_err_set(e, PIT_ESTATE, "node %s was listed, then no longer, while it booted (gone)", n->id);
    for (int i = 0; i < nl; i++) {
      if (strcmp(L[i].id, n->id) != 0)
        continue;
      if (in_states(c->gone, c->ngone, L[i].state))
        return pit_err_set(e, PIT_ESTATE, "node %s went %s while it booted", n->id, L[i].state);
      if (in_states(c->ready, c->nready, L[i].state)) {
        snprintf(n->host, sizeof n->host, "%s", c->host[0] ? c->host : L[i].host[0] ? L[i].host : n->id);
        n->state = PIT_NODE_READY;
        return write_node(p, n, e);
      }
    }
    if (pit_now() - t0 > c->boot_timeout_s)
      return pit_err_set(e, PIT_ESTATE, "node %s was not ready within %.0f s", n->id, c->boot_timeout_s);
    usleep((useconds_t)(fmin(c->poll_s, 1.0) * 1e6 / 2));
  }
}

/* A node of itype on market (DEFAULT: spot when the config's "spot" list
 * names the type, else on-demand). */
static int c_start(struct pit_provider *p, const char *itype, enum pit_market market, struct pit_node *n,
                   struct pit_err *e) {
  struct cmdp *c = p->impl;
  if (p->conf.catalog && !pit_catalog_find(p->conf.catalog, itype))
    return pit_err_set(e, PIT_ENOTFOUND, "instance type '%s' is not in the catalog", itype);
  int spot = market == PIT_MARKET_DEFAULT ? is_spot(c, itype) : market == PIT_MARKET_SPOT;
  double waste = 0;
  int rc = 0;
  char last[512] = "";
  for (int attempt = 0; attempt <= c->start_retries; attempt++) {
    if (attempt)
      usleep((useconds_t)(c->retry_wait_s * 1e6));
    double t0 = pit_now();
    memset(n, 0, sizeof *n);
    rc = start_once(p, itype, spot, n, t0, e);
    if (rc == 0) {
      n->waste_s = waste;
      p->waste_s += waste;
      return write_node(p, n, e);
    }
    if (rc == PIT_EARG || rc == PIT_ENOMEM)
      return rc;
    snprintf(last, sizeof last, "%s", e->msg);
    /* what the attempt created: the node it printed, and any stray of the run */
    if (n->id[0]) {
      double billed;
      p->waste_usd += billed_usd(p, itype, spot, pit_now() - t0, &billed);
      waste += billed;
      struct pit_err e2 = {0};
      stop_id(p, n->id, &e2);
      n->id[0] = 0;
    }
    stop_strays(p, itype, spot, t0, &waste);
    if (p->conf.warn && attempt < c->start_retries) {
      struct pit_err w = {0};
      pit_err_set(&w, PIT_ESTATE, "start of a %s node failed (attempt %d of %d): %s", itype, attempt + 1,
                  c->start_retries + 1, last);
      p->conf.warn(p->conf.warn_ctx, &w);
    }
  }
  p->waste_s += waste;
  pit_err_set(e, PIT_ESTATE, "cannot start a %s%s node: %d attempts failed; the last: %s", itype,
              spot ? " spot" : "", c->start_retries + 1, last);
  pit_err_hint(e, "%.0f billed seconds were wasted on them; the CLI's messages are in %s/provider.log", waste,
               p->conf.state_dir);
  return PIT_ESTATE;
}

static int c_list(struct pit_provider *p, struct pit_node **out, int *nout, struct pit_err *e) {
  struct cmdp *c = p->impl;
  *out = NULL;
  *nout = 0;
  struct item *it = malloc(MAX_ITEMS * sizeof *it);
  if (!it)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int n = 0;
  int rc = cloud_list(p, it, MAX_ITEMS, &n, e);
  struct pit_node *v = rc == 0 ? calloc((size_t)n + 1, sizeof *v) : NULL;
  if (rc == 0 && !v)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  int k = 0;
  for (int i = 0; rc == 0 && i < n; i++) {
    if (in_states(c->gone, c->ngone, it[i].state)) { /* gone: forget it */
      forget_node(p, it[i].id);
      continue;
    }
    struct pit_node *x = &v[k++];
    if (read_node(p, it[i].id, x) < 0) { /* a crash left it before its file, or another run of this name */
      ctl_node_orphan(x, it[i].id, it[i].itype);
      x->name_only = 1;
      continue;
    }
    x->state = in_states(c->ready, c->nready, it[i].state) ? PIT_NODE_READY : PIT_NODE_LOST;
    if (!x->host[0])
      snprintf(x->host, sizeof x->host, "%s", c->host[0] ? c->host : it[i].host);
  }
  /* files of nodes the cloud no longer lists */
  if (rc == 0) {
    char ids[MAX_ITEMS][PIT_NAME_MAX];
    int nk = known_ids(p, ids, MAX_ITEMS);
    for (int j = 0; j < nk; j++) {
      int listed = 0;
      for (int i = 0; i < n; i++)
        listed |= strcmp(it[i].id, ids[j]) == 0 && !in_states(c->gone, c->ngone, it[i].state);
      if (!listed)
        forget_node(p, ids[j]);
    }
  }
  free(it);
  if (rc < 0) {
    free(v);
    return rc;
  }
  *out = v;
  *nout = k;
  return 0;
}

static int reported(struct cmdp *c, const char *id, int kind) {
  for (int i = 0; i < c->nreported; i++)
    if (strcmp(c->reported[i], id) == 0 && c->reported_kind[i] == kind)
      return 1;
  if (c->nreported < MAX_ITEMS) {
    snprintf(c->reported[c->nreported], PIT_NAME_MAX, "%.*s", PIT_NAME_MAX - 1, id);
    c->reported_kind[c->nreported++] = kind;
  }
  return 0;
}

static int poll_cloud(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e);

/* ops->poll: asks the cloud at most every poll_s; between, repeats the last answer's error. */
static int c_poll(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e) {
  struct cmdp *c = p->impl;
  *nev = 0;
  if (pit_now() - c->last_poll >= c->poll_s) {
    c->last_poll = pit_now();
    pit_err_clear(&c->poll_err);
    poll_cloud(p, ev, cap, nev, &c->poll_err);
  }
  if (c->poll_err.code && e) /* between asks, the last answer's error stands */
    *e = c->poll_err;
  return c->poll_err.code;
}

static int poll_cloud(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e) {
  struct cmdp *c = p->impl;
  char ids[MAX_ITEMS][PIT_NAME_MAX];
  int nk = known_ids(p, ids, MAX_ITEMS);
  if (nk == 0)
    return 0;
  struct item *it = malloc(MAX_ITEMS * sizeof *it);
  if (!it)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int n = 0;
  int rc = cloud_list(p, it, MAX_ITEMS, &n, e);
  for (int j = 0; rc == 0 && j < nk && *nev < cap; j++) {
    const struct item *x = NULL;
    for (int i = 0; i < n && !x; i++)
      if (strcmp(it[i].id, ids[j]) == 0)
        x = &it[i];
    int kind = !x || in_states(c->gone, c->ngone, x->state) ? PIT_NODE_GONE
               : in_states(c->notice, c->nnotice, x->state) ? PIT_NODE_NOTICE
                                                            : 0;
    if (kind && !reported(c, ids[j], kind)) {
      snprintf(ev[*nev].id, sizeof ev[*nev].id, "%.*s", PIT_NAME_MAX - 1, ids[j]);
      ev[*nev].kind = kind;
      ev[(*nev)++].grace_s = c->grace_s;
    }
  }
  /* the cloud's own notices (AWS: spot requests marked for termination) */
  if (rc == 0 && c->t[TK_NOTICE][0] && (c->fmt_notice.json || c->fmt_notice.have_re)) {
    struct subst s = {.run = p->conf.run, .count = "1"};
    char *out = NULL, argv0[64], what[128];
    int st = 0;
    rc = ctl_cmd_run_tmpl(p, TK_NOTICE, &s, 0, c->list_timeout_s, &out, &st, argv0, e);
    snprintf(what, sizeof what, "the output of %s (notice)", argv0);
    if (rc == 0 && st != 0)
      rc = pit_err_set(e, PIT_ESTATE, "%s (notice) %s", argv0, st < 0 ? "did not answer in time" : "failed");
    if (rc == 0)
      rc = ctl_cmd_parse_items(&c->fmt_notice, out, what, it, MAX_ITEMS, &n, e);
    free(out);
    for (int i = 0; rc == 0 && i < n && *nev < cap; i++) {
      int ours = 0;
      for (int j = 0; j < nk; j++)
        ours |= strcmp(ids[j], it[i].id) == 0;
      if (ours && in_states(c->notice, c->nnotice, it[i].state) && !reported(c, it[i].id, PIT_NODE_NOTICE)) {
        snprintf(ev[*nev].id, sizeof ev[*nev].id, "%s", it[i].id);
        ev[*nev].kind = PIT_NODE_NOTICE;
        ev[(*nev)++].grace_s = c->grace_s;
      }
    }
  }
  free(it);
  return rc;
}

static int c_health(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  if (gone(p->impl, n->id))
    return pit_err_set(e, PIT_ESTATE, "node %s is gone (the cloud no longer lists it running)", n->id);
  return 0;
}

static int c_wrap(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *nout,
                  struct pit_err *e) {
  struct cmdp *c = p->impl;
  *nout = 0;
  if (!c->t[TK_WRAP][0])
    return 0;
  struct subst s = {.run = p->conf.run, .id = n->id, .host = n->host, .itype = n->itype, .count = "1"};
  char *v[T_ARGS];
  int rc = ctl_cmd_expand(c, TK_WRAP, &s, n->spot, v, e);
  if (rc < 0)
    return rc;
  int k = 0;
  for (; v[k] && k < cap && k < T_ARGS; k++) {
    snprintf(c->wrapbuf[k], sizeof c->wrapbuf[k], "%s", v[k]);
    argv[k] = c->wrapbuf[k];
  }
  ctl_cmd_argv_release(v);
  if (c->wrap_shell) { /* as the ssh provider's: node-exec there (GLOO_SOCKET_IFNAME, this directory) */
    struct ctl_node_words nw;
    ctl_node_exec_words(p, n->host, &nw);
    if (k + nw.n > cap || k + nw.n > T_ARGS)
      return pit_err_set(e, PIT_EARG, "the wrap template is too long (at most %d words)", T_ARGS - nw.n);
    for (int i = 0; i < nw.n; i++, k++) {
      if (ctl_shell_quote(nw.w[i], c->wrapbuf[k], sizeof c->wrapbuf[k]) < 0)
        return pit_err_set(e, PIT_EARG, "'%s' is too long for a remote command", nw.w[i]);
      argv[k] = c->wrapbuf[k];
    }
  }
  *nout = k;
  return 0;
}

const struct pit_provider_ops pit_provider_command = {
    PIT_PROVIDER_OPS(c, "command",
                     "any cloud through its CLI: start/stop/list argv templates (presets aws, clap)"),
    .poll = c_poll,
    .clear = c_clear,
    .signal = c_signal,
    .spot_market = 1,
};
