/* provider.c — the provider registry: one table of the implementations
 * (`local`, `ssh`, `slurm`, `command`; the simulator's fits the same ops), and the
 * words the remote-shell providers (ssh, command with an ssh wrap) run on a node.
 * Invariant: a provider is used only between a successful open and close. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "provider/provider_impl.h"

static const struct pit_provider_ops *const providers[] = {
    &pit_provider_local,
    &pit_provider_ssh,
    &pit_provider_slurm,
    &pit_provider_command,
};

const struct pit_provider_ops *pit_provider_find(const char *name) {
  for (size_t i = 0; i < sizeof providers / sizeof providers[0]; i++)
    if (strcmp(providers[i]->name, name) == 0)
      return providers[i];
  return NULL;
}

const char *pit_provider_names(char *buf, size_t n) {
  size_t at = 0;
  if (n > 0)
    buf[0] = 0;
  for (size_t i = 0; i < sizeof providers / sizeof providers[0] && at < n; i++) {
    int w = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", providers[i]->name);
    at += w > 0 ? (size_t)w : 0;
  }
  return buf;
}

int pit_provider_open(struct pit_provider *p, const char *name, const struct pit_provider_conf *conf,
                      struct pit_err *e) {
  memset(p, 0, sizeof *p);
  const struct pit_provider_ops *ops = pit_provider_find(name);
  if (!ops) {
    pit_err_set(e, PIT_EARG, "unknown provider '%s'", name);
    char names[256];
    pit_err_hint(e, "providers: %s", pit_provider_names(names, sizeof names));
    return PIT_EARG;
  }
  p->ops = ops;
  p->conf = *conf;
  int rc = ops->open(p, e);
  if (rc < 0)
    p->ops = NULL;
  return rc;
}

void ctl_node_orphan(struct pit_node *n, const char *id, const char *itype) {
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", id);
  snprintf(n->itype, sizeof n->itype, "%s", itype && itype[0] ? itype : "?");
  n->state = PIT_NODE_LOST;
  n->t_start = n->t_ready = n->t_stop = NAN;
}

void pit_provider_close(struct pit_provider *p) {
  if (p->ops && p->ops->close)
    p->ops->close(p);
  p->ops = NULL;
}

void ctl_node_exec_words(const struct pit_provider *p, const char *host, struct ctl_node_words *nw) {
  if (!getcwd(nw->cwd, sizeof nw->cwd))
    snprintf(nw->cwd, sizeof nw->cwd, "/");
  const char *w[] = {p->conf.self_exe, "node-exec", "--addr", host, "--cd", nw->cwd, "--"};
  nw->n = 7;
  memcpy(nw->w, w, sizeof w);
}

void ctl_node_check_words(const struct pit_provider *p, int sig, int catchers_only, struct ctl_node_words *nw) {
  pit_run_tag(p->conf.state_dir, nw->tag);
  snprintf(nw->num, sizeof nw->num, "%d", sig);
  const char *w[] = {p->conf.self_exe, "node-check", "--release", p->conf.run, "--run-tag", nw->tag, "--signal",
                     nw->num, "--catchers"};
  nw->n = sig ? (catchers_only ? 9 : 8) : 6;
  memcpy(nw->w, w, sizeof w);
}
