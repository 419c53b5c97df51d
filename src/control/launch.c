/* launch.c — starting one generation of the workload on a set of nodes.
 *
 * Two launchers:
 *  - mpi: one `mpirun` on the head with a hostfile and one app context per
 *    node ("-np SLOTS WRAP CMD : -np SLOTS WRAP CMD ..."), so every rank runs
 *    inside its node (pinned to its CPUs, in its cgroup) while MPI does the
 *    transport (with the provider's mpi_args: ssh hosts are reached by
 *    mpirun's own ssh agent);
 *  - per-node: the command once per node (through the provider's wrap), with
 *    PITSTOP_NODE_RANK, PITSTOP_NUM_NODES, PITSTOP_NODE_IPS,
 *    PITSTOP_MASTER_ADDR, PITSTOP_MASTER_PORT in its environment (through a
 *    remote shell, as ssh runs commands: `env NAME=value... CMD`, each word
 *    quoted for that shell).
 * Every process gets PITSTOP_RUN, PITSTOP_RUN_TAG, PITSTOP_GEN, PITSTOP_CHECKPOINT_DIR,
 * PITSTOP_RESUME, PITSTOP_GRACE_S (and PYTHONUNBUFFERED=1, so a Python script's lines reach the
 * controller as it prints them, not 8 KiB at a time: they are timed by their
 * arrival). Each is started from argv (posix_spawn, own process group),
 * stdout and stderr on pipes the controller reads; both go to the
 * generation's log, each line tagged with its node (ctl_proc_log).
 *
 * Invariant: on failure nothing started is left running (the processes
 * already spawned are killed and reaped before the error returns). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/launch.h"
#include "control/said.h"

static int argv_push(struct ctl_argv *a, const char *s) {
  if (a->n + 2 > CTL_ARGV_MAX)
    return -1;
  char *d = strdup(s);
  if (!d)
    return -1;
  a->v[a->n++] = d;
  a->v[a->n] = NULL;
  return 0;
}

static void argv_free(struct ctl_argv *a) {
  for (int i = 0; i < a->n; i++)
    free(a->v[i]);
  a->n = 0;
  a->v[0] = NULL;
}

/* A Python script's lines reach the controller as it prints them, not 8 KiB at a time: they are
 * timed by their arrival. Through a remote shell it must travel with the command's environment
 * (until 2026-11-30 it did not: a client's steps over ssh read 9 µs, its lines arriving in bursts). */
#define PY_UNBUFFERED "PYTHONUNBUFFERED=1"

static int spawn_one(struct ctl_gen *g, char *const argv[], char *const *add, int nadd, int node,
                     const char *label, struct pit_err *e) {
  if (g->nproc == CTL_PROCS_MAX)
    return pit_err_set(e, PIT_EARG, "more than %d workload processes", CTL_PROCS_MAX);
  char *env[17];
  int ne = 0;
  for (int i = 0; i < nadd && ne < 16; i++)
    env[ne++] = add[i];
  env[ne] = NULL;
  struct ctl_proc *p = &g->proc[g->nproc];
  memset(p, 0, sizeof *p);
  pit_child_init(&p->ch);
  struct pit_child_opts co;
  memset(&co, 0, sizeof co);
  co.argv = argv;
  co.env = env;
  co.in.mode = PIT_CHILD_NULL;
  co.out.mode = PIT_CHILD_PIPE;
  co.err.mode = PIT_CHILD_PIPE;
  p->efd = -1;
  int rc = pit_child_start(&p->ch, &co, e);
  if (rc < 0)
    return rc;
  g->nproc++;
  p->pid = p->ch.pid;
  p->fd = p->ch.out_fd;
  p->efd = p->ch.err_fd;
  p->ch.out_fd = p->ch.err_fd = -1; /* read and closed here */
  p->node = node;
  p->status = -1;
  snprintf(p->label, sizeof p->label, "%s", label);
  if ((rc = pit_follower_open_fd(&p->out, p->fd, 0, "the workload's output", 0, e)) < 0) /* non-blocking */
    return rc;
  return pit_follower_open_fd(&p->err, p->efd, 0, "the workload's stderr", 0, e);
}

void ctl_proc_log(struct ctl_gen *g, const struct ctl_proc *p, const char *line, size_t n, int is_err) {
  if (g->logfd < 0)
    return;
  char head[PIT_NAME_MAX + 16];
  int h = snprintf(head, sizeof head, "[%s %s] ", p->label, is_err ? "err" : "out");
  struct iovec v[3] = {{head, (size_t)h}, {(void *)line, n}, {"\n", 1}};
  ssize_t w = writev(g->logfd, v, 3); /* O_APPEND: one write per line */
  (void)w;
}

int ctl_proc_drain(struct pit_follower *f, int *fd, int final, ctl_line_fn on_line, void *ctx, struct pit_err *e) {
  for (;;) {
    const char *s;
    size_t n;
    int rc = pit_follower_line(f, &s, &n, e);
    if (rc == PIT_FOLLOW_RECORD) {
      if ((rc = on_line(ctx, s, n, e)) < 0)
        return rc;
      continue;
    }
    if (rc == PIT_FOLLOW_CLOSED) {
      if (*fd >= 0)
        close(*fd);
      *fd = -1;
      return 0;
    }
    if (rc < 0 || !final)
      return rc < 0 ? rc : 0;
    pit_follower_writer_gone(f);
  }
}

struct err_line {
  struct ctl_gen *g;
  struct ctl_proc *p;
};

static int log_err_line(void *ctx, const char *s, size_t n, struct pit_err *e) {
  const struct err_line *x = ctx;
  (void)e;
  ctl_proc_log(x->g, x->p, s, n, 1);
  if (ctl_said_worker_failed(s, n))
    x->p->worker_failed = 1;
  return 0;
}

int ctl_proc_drain_err(struct ctl_gen *g, struct ctl_proc *p, int final, struct pit_err *e) {
  if (p->efd < 0)
    return 0;
  struct err_line x = {g, p};
  return ctl_proc_drain(&p->err, &p->efd, final, log_err_line, &x, e);
}

/* Reaps p if it exited (0: still running). */
int ctl_proc_poll(struct ctl_proc *p) {
  if (p->exited)
    return 1;
  int st;
  if (pit_child_wait(&p->ch, 0, &st, NULL) == 0) {
    p->exited = 1;
    p->status = st;
    return 1;
  }
  return 0;
}

int ctl_proc_signal(struct ctl_proc *p, int sig, int catchers_only) {
  if (p->remote && p->remote->ops->signal) {
    struct pit_err e = {0};
    int n = p->remote->ops->signal(p->remote, &p->rnode, sig, catchers_only, &e);
    if (n >= 0)
      return catchers_only ? n : n > 0;
    /* the host did not answer (ssh's time-out each call): not asked again, nor cleared at a kill;
     * its stop clears it, or says it cannot */
    p->remote = NULL;
    if (catchers_only) /* nothing else would take a checkpoint request */
      return 0;
  }
  if (catchers_only)
    return ctl_signal_catchers(p->pid, sig);
  return kill(-p->pid, sig) == 0;
}

void ctl_gen_kill(struct ctl_gen *g, double grace_s) {
  int was_running[CTL_PROCS_MAX];
  for (int i = 0; i < g->nproc; i++) {
    was_running[i] = !g->proc[i].exited;
    if (!g->proc[i].exited)
      ctl_proc_signal(&g->proc[i], SIGTERM, 0);
  }
  for (double w = 0; w < grace_s; w += 0.02) {
    int alive = 0;
    for (int i = 0; i < g->nproc; i++)
      alive |= !ctl_proc_poll(&g->proc[i]);
    if (!alive)
      break;
    usleep(20000);
  }
  for (int i = 0; i < g->nproc; i++) {
    struct ctl_proc *p = &g->proc[i];
    int st;
    /* what is left of the group (ranks of a dead launcher too), and the child reaped */
    if (pit_child_kill(&p->ch, 0, &st, NULL) == 0 && !p->exited)
      p->status = st;
    p->exited = 1;
    struct pit_err e = {0};
    if (was_running[i] && p->remote && p->remote->ops->clear)
      p->remote->ops->clear(p->remote, &p->rnode, &e); /* best effort: a host that does not answer is cleared at its stop */
  }
}

void ctl_gen_release(struct ctl_gen *g) {
  for (int i = 0; i < g->nproc; i++) {
    if (g->proc[i].fd >= 0)
      close(g->proc[i].fd);
    if (g->proc[i].efd >= 0)
      close(g->proc[i].efd);
    pit_follower_release(&g->proc[i].out);
    pit_follower_release(&g->proc[i].err);
    pit_child_release(&g->proc[i].ch);
  }
  if (g->logfd > 0)
    close(g->logfd);
  memset(g, 0, sizeof *g);
  g->logfd = -1;
}

/* s with $PITSTOP_NAME and ${PITSTOP_NAME} replaced by the values in env
 * ("NAME=value" entries): the command runs from argv, no shell expands them. */
static int push_expanded(struct ctl_argv *a, const char *s, char *const *env, int nenv) {
  char out[4096];
  size_t k = 0;
  for (const char *p = s; *p && k + 1 < sizeof out;) {
    int brace = p[0] == '$' && p[1] == '{';
    const char *name = p + (brace ? 2 : 1);
    if (p[0] == '$' && strncmp(name, "PITSTOP_", 8) == 0) {
      size_t n = 0;
      while ((name[n] >= 'A' && name[n] <= 'Z') || name[n] == '_')
        n++;
      const char *val = NULL;
      for (int i = 0; i < nenv && !val; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
          val = env[i] + n + 1;
      if (val && (!brace || name[n] == '}')) {
        k += (size_t)snprintf(out + k, sizeof out - k, "%s", val);
        if (k >= sizeof out)
          return -1;
        p = name + n + (brace ? 1 : 0);
        continue;
      }
    }
    out[k++] = *p++;
  }
  out[k] = 0;
  return argv_push(a, out);
}

/* The workload's own argv: the user's command, or pitstop train with the run's options. */
static int workload_argv(const struct ctl_launch *L, const struct pit_node *n, struct ctl_argv *a,
                         char *const *env, int nenv) {
  const struct pit_run_opts *o = L->o;
  if (o->cmd) {
    for (int i = 0; o->cmd[i]; i++)
      if (push_expanded(a, o->cmd[i], env, nenv) < 0)
        return -1;
    return 0;
  }
  int has_threads = 0, has_ckpt = 0;
  if (argv_push(a, o->self_exe) < 0 || argv_push(a, "train") < 0)
    return -1;
  for (int i = 0; o->train_argv && o->train_argv[i]; i++) {
    has_threads |= strcmp(o->train_argv[i], "--threads") == 0;
    has_ckpt |= strcmp(o->train_argv[i], "--checkpoint-every") == 0;
    if (argv_push(a, o->train_argv[i]) < 0)
      return -1;
  }
  char buf[64];
  if (!has_threads) {
    int cpus = 1;
    for (const char *c = n->cpus; *c; c++)
      cpus += *c == ',';
    int per = cpus / (n->slots > 0 ? n->slots : 1);
    snprintf(buf, sizeof buf, "%d", per > 0 ? per : 1);
    if (argv_push(a, "--threads") < 0 || argv_push(a, buf) < 0)
      return -1;
  }
  if (!has_ckpt && (argv_push(a, "--checkpoint-every") < 0 || argv_push(a, "500") < 0))
    return -1;
  if (argv_push(a, "--run") < 0 || argv_push(a, o->run) < 0 || argv_push(a, "--events") < 0 ||
      argv_push(a, "-") < 0 || argv_push(a, "--out") < 0 || argv_push(a, L->ckpt_dir) < 0 ||
      argv_push(a, "--quiet") < 0)
    return -1;
  if (L->resume[0] && (argv_push(a, "--resume") < 0 || argv_push(a, L->resume) < 0))
    return -1;
  return 0;
}

/* A wrap through a remote shell (ssh): the words from a->v[at] on become
 * `env NAME=value... CMD ARGS...`, each quoted for that shell, so the
 * command gets its environment and exactly its arguments there. */
static int remote_words(struct ctl_argv *a, int at, char *const *env, int nenv) {
  struct ctl_argv cmd = {0};
  int rc = 0;
  for (int i = at; i < a->n; i++) {
    cmd.v[cmd.n++] = a->v[i];
    a->v[i] = NULL;
  }
  a->n = at;
  a->v[at] = NULL;
  char q[4200];
  rc = argv_push(a, "env");
  for (int i = 0; i < nenv && rc == 0; i++)
    rc = ctl_shell_quote(env[i], q, sizeof q) < 0 ? -1 : argv_push(a, q);
  for (int i = 0; i < cmd.n && rc == 0; i++)
    rc = ctl_shell_quote(cmd.v[i], q, sizeof q) < 0 ? -1 : argv_push(a, q);
  /* the remote shell would exec a lone command in its own place; one killed by a signal then ends
   * the session with ssh's 255, read here as "killed by signal 127" (fault soak over ssh,
   * 2026-11-30). After `|| exit $?` the shell waits and exits 128 + the signal, as it does for
   * node-check (provider_ssh.c) */
  const char *tail[] = {"||", "exit", "$?"};
  for (int i = 0; i < 3 && rc == 0; i++)
    rc = argv_push(a, tail[i]);
  argv_free(&cmd);
  return rc;
}

static int push_wrap(const struct ctl_launch *L, const struct pit_node *n, struct ctl_argv *a,
                     struct pit_err *e) {
  const char *w[PIT_WRAP_MAX];
  int nw = 0;
  int rc = L->prov->ops->wrap(L->prov, n, w, PIT_WRAP_MAX, &nw, e);
  if (rc < 0)
    return rc;
  for (int i = 0; i < nw; i++)
    if (argv_push(a, w[i]) < 0)
      return pit_err_set(e, PIT_ENOMEM, "the workload's command line is too long");
  return 0;
}

/* The rendezvous port (PITSTOP_MASTER_PORT): one free on node 0's host, where torchrun's store
 * listens. A node on another machine is asked through its own wrap (`WRAP... PITSTOP node-check
 * --free-port`: over ssh, as a Slurm job step, through a cloud's remote shell), a local one here; a
 * node that cannot be asked (no pitstop there, no answer in 15 s) gets one free here, said in the
 * generation's log. A port taken between this choice and the store's bind fails the generation
 * before its first step: the controller starts it again with another (controller.c, port_taken). */
static int node0_port(const struct ctl_launch *L, struct ctl_gen *g) {
  const struct pit_node *n = &L->nodes[0];
  int port = 0;
  struct pit_err e = {0};
  if (strcmp(n->host, "localhost") != 0) { /* (a loopback address is asked too: a test's emulated node) */
    struct ctl_argv a = {0};
    const char *w[] = {L->o->self_exe, "node-check", "--free-port"};
    char q[1100], out[64] = "", err[1024] = "";
    int rc = push_wrap(L, n, &a, &e), st = -1;
    for (int i = 0; i < 3 && rc == 0; i++)
      rc = L->prov->wrap_shell ? (ctl_shell_quote(w[i], q, sizeof q) < 0 ? -1 : argv_push(&a, q)) : argv_push(&a, w[i]);
    if (rc == 0 && pit_child_capture(a.v, 15, out, sizeof out, err, sizeof err, &st, &e) == 0 && st == 0 &&
        sscanf(out, "%d", &port) == 1 && port > 0 && port < 65536) {
      argv_free(&a);
      return port;
    }
    argv_free(&a);
    port = 0;
    char line[1400];
    size_t k = strlen(err);
    while (k && (err[k - 1] == '\n' || err[k - 1] == '\r'))
      err[--k] = 0;
    const char *last = strrchr(err, '\n'); /* its last line: the one that says why */
    last = last ? last + 1 : err;
    int m = snprintf(line, sizeof line, "[pitstop] node %s was not asked for a free port (%s): one free on the "
                     "controller's machine is used\n", n->id,
                     last[0] ? last : e.msg[0] ? e.msg : st > 0 ? "node-check failed" : "no answer in 15 s");
    if (g->logfd >= 0 && m > 0)
      (void)!write(g->logfd, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
  }
  if (pit_node_free_port(&port, &e) < 0)
    port = 29500;
  return port;
}

int ctl_launch_shrinkable(const struct pit_run_opts *o, const struct pit_provider *p) {
  return o->launcher == PIT_LAUNCH_MPI && !o->cmd && !o->world && p->ops->busy;
}

int ctl_launch(const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e) {
  const struct pit_run_opts *o = L->o;
  if (g->logfd < 0 && (g->logfd = open(g->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
    return pit_err_errno(e, PIT_EIO, "cannot create the generation's log '%s'", g->log);
  char env_run[PIT_NAME_MAX + 16], env_gen[32], env_dir[1100], env_resume[1100], env_tag[32], tag[9];
  snprintf(env_run, sizeof env_run, "PITSTOP_RUN=%s", o->run);
  pit_run_tag(L->state_dir, tag); /* the run directory's: a release on a host takes this run's processes only */
  snprintf(env_tag, sizeof env_tag, "PITSTOP_RUN_TAG=%s", tag);
  snprintf(env_gen, sizeof env_gen, "PITSTOP_GEN=%d", L->gen);
  snprintf(env_dir, sizeof env_dir, "PITSTOP_CHECKPOINT_DIR=%s", L->ckpt_dir);
  snprintf(env_resume, sizeof env_resume, "PITSTOP_RESUME=%s", L->resume);
  char env_grace[64]; /* the grace after SIGTERM (--grace; docs/protocol.md) */
  snprintf(env_grace, sizeof env_grace, "PITSTOP_GRACE_S=%g", o->grace_s > 0 ? o->grace_s : 30);
  char env_shrink[1100]; /* where an in-place shrink is asked for (ctl_shrink.c), when it can be */
  snprintf(env_shrink, sizeof env_shrink, "PITSTOP_SHRINK=%s/shrink", L->state_dir);
  int shrinkable = ctl_launch_shrinkable(o, L->prov);
  char *base[] = {env_run, env_tag, env_gen, env_dir, env_resume, env_grace, PY_UNBUFFERED, env_shrink};
  int nbase = shrinkable ? 8 : 7;
  struct ctl_argv a = {0};
  int rc = 0;
  if (o->launcher == PIT_LAUNCH_MPI) {
    /* hostfile: one line per host with the slots of its nodes */
    char hostfile[1100];
    snprintf(hostfile, sizeof hostfile, "%s/hostfile.%d", L->state_dir, L->gen);
    char text[8192] = "";
    for (int i = 0; i < L->nnodes; i++) {
      int seen = 0, slots = 0;
      for (int j = 0; j < i; j++)
        seen |= strcmp(L->nodes[j].host, L->nodes[i].host) == 0;
      if (seen)
        continue;
      for (int j = i; j < L->nnodes; j++)
        if (strcmp(L->nodes[j].host, L->nodes[i].host) == 0)
          slots += L->nodes[j].slots;
      size_t at = strlen(text);
      snprintf(text + at, sizeof text - at, "%s slots=%d\n", L->nodes[i].host, slots);
    }
    if ((rc = pit_file_write_atomic(hostfile, text, strlen(text), e)) < 0)
      return rc;
    const char *head[] = {"mpirun", "--hostfile", hostfile, "--bind-to", "none", "--mca",
                          "btl_vader_single_copy_mechanism", "none", "-x", "PITSTOP_RUN", "-x", "PITSTOP_RUN_TAG",
                          "-x", "PITSTOP_GEN", "-x", "PITSTOP_CHECKPOINT_DIR", "-x", "PITSTOP_RESUME", "-x",
                          "PITSTOP_GRACE_S", "-x", "PYTHONUNBUFFERED"};
    for (size_t i = 0; i < sizeof head / sizeof head[0] && rc == 0; i++)
      rc = argv_push(&a, head[i]);
    if (rc == 0 && geteuid() == 0)
      rc = argv_push(&a, "--allow-run-as-root");
    /* a rank that leaves an in-place shrink exits without MPI_Finalize (which would wait for
     * the ranks that go on): mpirun is told that ends no job */
    const char *sh[] = {"-x", "PITSTOP_SHRINK", "--mca", "orte_allowed_exit_without_sync", "1"};
    for (size_t i = 0; shrinkable && i < sizeof sh / sizeof sh[0] && rc == 0; i++)
      rc = argv_push(&a, sh[i]);
    if (rc == 0 && L->prov->ops->mpi_args) {
      const char *m[16];
      int nm = 0;
      if ((rc = L->prov->ops->mpi_args(L->prov, m, 16, &nm, e)) < 0) {
        argv_free(&a);
        return rc;
      }
      for (int i = 0; i < nm && rc == 0; i++)
        rc = argv_push(&a, m[i]);
    }
    for (int i = 0; i < L->nnodes && rc == 0; i++) {
      char np[16], host[160];
      int host_slots = 0;
      for (int j = 0; j < L->nnodes; j++)
        if (strcmp(L->nodes[j].host, L->nodes[i].host) == 0)
          host_slots += L->nodes[j].slots;
      snprintf(np, sizeof np, "%d", L->nodes[i].slots);
      snprintf(host, sizeof host, "%s:%d", L->nodes[i].host, host_slots);
      if ((i && argv_push(&a, ":") < 0) || argv_push(&a, "-np") < 0 || argv_push(&a, np) < 0 ||
          argv_push(&a, "--host") < 0 || argv_push(&a, host) < 0) {
        rc = -1;
        break;
      }
      if ((rc = push_wrap(L, &L->nodes[i], &a, e)) < 0)
        break;
      rc = workload_argv(L, &L->nodes[i], &a, base, nbase);
    }
    if (rc == -1)
      rc = pit_err_set(e, PIT_ENOMEM, "the workload's command line is too long");
    if (rc == 0)
      rc = spawn_one(g, a.v, base, nbase, -1, "mpirun", e);
    argv_free(&a);
    return rc;
  }
  /* per-node */
  char ips[4096] = "";
  for (int i = 0; i < L->nnodes; i++) {
    size_t at = strlen(ips);
    snprintf(ips + at, sizeof ips - at, "%s%s", i ? "," : "", L->nodes[i].host);
  }
  char env_nn[64], env_ips[4200], env_maddr[200], env_mport[64];
  snprintf(env_nn, sizeof env_nn, "PITSTOP_NUM_NODES=%d", L->nnodes);
  snprintf(env_ips, sizeof env_ips, "PITSTOP_NODE_IPS=%s", ips);
  snprintf(env_maddr, sizeof env_maddr, "PITSTOP_MASTER_ADDR=%s",
           strcmp(L->nodes[0].host, "localhost") == 0 ? "127.0.0.1" : L->nodes[0].host);
  g->port = node0_port(L, g);
  snprintf(env_mport, sizeof env_mport, "PITSTOP_MASTER_PORT=%d", g->port);
  for (int i = 0; i < L->nnodes && rc == 0; i++) {
    char env_rank[64];
    snprintf(env_rank, sizeof env_rank, "PITSTOP_NODE_RANK=%d", i);
    char *add[] = {env_run, env_tag, env_gen, env_dir, env_resume, env_grace, env_nn, env_ips, env_maddr, env_mport,
                   env_rank, PY_UNBUFFERED};
    int nadd = (int)(sizeof add / sizeof add[0]);
    if ((rc = push_wrap(L, &L->nodes[i], &a, e)) < 0)
      break;
    int at = a.n;
    if (workload_argv(L, &L->nodes[i], &a, add, nadd) < 0 ||
        (L->prov->wrap_shell && remote_words(&a, at, add, nadd) < 0)) {
      rc = pit_err_set(e, PIT_ENOMEM, "the workload's command line is too long");
      break;
    }
    rc = spawn_one(g, a.v, add, nadd, i, L->nodes[i].id, e);
    if (rc == 0 && L->prov->wrap_shell && L->prov->ops->signal) {
      /* its workload runs on the host under the remote shell: signals go there (ctl_proc_signal) */
      g->proc[g->nproc - 1].remote = L->prov;
      g->proc[g->nproc - 1].rnode = L->nodes[i];
    }
    argv_free(&a);
  }
  argv_free(&a);
  if (rc < 0)
    ctl_gen_kill(g, 1.0);
  return rc;
}
