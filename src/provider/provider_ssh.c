/* provider_ssh.c — the `ssh` provider: nodes are hosts of a fixed pool, an
 * Open MPI-style hostfile ("HOST slots=N", optionally "itype=T"; '#'
 * comments). start claims the first free host that serves the type and
 * passes a health check over ssh (reachable within the time-out, pitstop there
 * and able to run on its CPU — a SIGILL or exec failure is "cannot run there" —,
 * the workload's program there, free disk in the run directory); stop kills
 * what the run left on the host (`pitstop node-check --release RUN --run-tag TAG`
 * there: processes tagged PITSTOP_RUN=RUN and PITSTOP_RUN_TAG=TAG, TAG the run
 * directory's, pit_run_tag) and releases it; clear kills the same
 * and keeps the claim (before a restarted controller adopts the host). Ranks reach a host
 * through mpirun over ssh (mpi launcher: plm_rsh_agent) or through
 * `ssh HOST -- env PITSTOP_...=... CMD` (per-node launcher).
 *
 * Every ssh call is argv (BatchMode, a connect time-out, the user's options
 * from conf.ssh_opts or $PITSTOP_SSH_OPTS split at blanks); the words of a
 * remote command are quoted for the remote shell, which ssh always uses.
 * State: a claimed host has a node file (node_files.c) "itype host slots
 * price", written before start returns, removed after stop, so a claimed host
 * is never handed out twice and a restarted controller lists what the run
 * holds. Requires pitstop at the same path on every host (as mpirun does). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/provider_impl.h"

#define SSH_HOSTS_MAX 256
#define SSH_OPTS_MAX 32
#define MIN_FREE_MB 100.0

struct ssh_host {
  char name[128];
  int slots;
  char itype[PIT_NAME_MAX];     /* "" serves any type */
};

struct ssh {
  struct ssh_host host[SSH_HOSTS_MAX];
  int nhost;
  char optbuf[2048];
  char *opt[SSH_OPTS_MAX];      /* into optbuf */
  int nopt;
  char timeout_opt[64];
  char agent[2200];             /* mpirun's plm_rsh_agent */
  char wrap_host[128];
  char wrap_words[7][1100];     /* node-exec's words after ssh's, quoted for the remote shell */
  double timeout_s;
};

static int parse_hostfile(struct ssh *s, const char *path, struct pit_err *e) {
  FILE *f = fopen(path, "r");
  if (!f)
    return pit_err_errno(e, PIT_EIO, "cannot open the hostfile '%s'", path);
  char line[1024];
  int ln = 0, rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    ln++;
    char *hash = strchr(line, '#');
    if (hash)
      *hash = 0;
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok)
      continue;
    if (s->nhost == SSH_HOSTS_MAX) {
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: more than %d hosts", path, ln, SSH_HOSTS_MAX);
      break;
    }
    struct ssh_host *h = &s->host[s->nhost];
    memset(h, 0, sizeof *h);
    if (strlen(tok) >= sizeof h->name) {
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: host name too long", path, ln);
      break;
    }
    snprintf(h->name, sizeof h->name, "%s", tok);
    h->slots = 1;
    while (rc == 0 && (tok = strtok_r(NULL, " \t\r\n", &save))) {
      int64_t v;
      if (strncmp(tok, "slots=", 6) == 0) {
        if (pit_parse_i64(tok + 6, &v) < 0 || v < 1 || v > 4096)
          rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: '%s' is not a slot count", path, ln, tok);
        else
          h->slots = (int)v;
      } else if (strncmp(tok, "itype=", 6) == 0 && tok[6] && strlen(tok + 6) < sizeof h->itype) {
        snprintf(h->itype, sizeof h->itype, "%s", tok + 6);
      } else if (strncmp(tok, "max_slots=", 10) != 0) {
        rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: '%s' is not HOST slots=N [itype=TYPE]", path, ln, tok);
      }
    }
    if (rc == 0)
      s->nhost++;
  }
  fclose(f);
  if (rc == 0 && s->nhost == 0)
    rc = pit_err_set(e, PIT_EFORMAT, "%s: no host in the hostfile", path);
  return rc;
}

static int s_open(struct pit_provider *p, struct pit_err *e) {
  if (!p->conf.hostfile) {
    pit_err_set(e, PIT_EARG, "the ssh provider needs a hostfile");
    pit_err_hint(e, "--hostfile FILE with lines \"HOST slots=N\"");
    return PIT_EARG;
  }
  struct ssh *s = calloc(1, sizeof *s);
  if (!s)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = parse_hostfile(s, p->conf.hostfile, e);
  const char *opts = p->conf.ssh_opts ? p->conf.ssh_opts : getenv("PITSTOP_SSH_OPTS");
  snprintf(s->optbuf, sizeof s->optbuf, "%s", opts ? opts : "");
  char *save = NULL;
  for (char *t = strtok_r(s->optbuf, " \t", &save); t && rc == 0; t = strtok_r(NULL, " \t", &save)) {
    if (s->nopt == SSH_OPTS_MAX)
      rc = pit_err_set(e, PIT_EARG, "more than %d ssh options", SSH_OPTS_MAX);
    else
      s->opt[s->nopt++] = t;
  }
  s->timeout_s = p->conf.timeout_s > 0 ? p->conf.timeout_s : 20;
  int ct = (int)(s->timeout_s / 2);
  snprintf(s->timeout_opt, sizeof s->timeout_opt, "ConnectTimeout=%d", ct > 0 ? ct : 1);
  /* mpirun splits its agent at blanks itself */
  snprintf(s->agent, sizeof s->agent, "ssh -o BatchMode=yes -o %s%s%s -o ServerAliveInterval=5 -o ServerAliveCountMax=3",
           s->timeout_opt, opts && *opts ? " " : "", opts ? opts : "");
  if (rc < 0) {
    free(s);
    return rc;
  }
  p->impl = s;
  p->wrap_shell = 1;
  return 0;
}

static void s_close(struct pit_provider *p) {
  free(p->impl);
  p->impl = NULL;
}

/* argv of `ssh OPTS HOST -- WORDS...` with each word quoted for the remote shell. */
struct remote {
  char *argv[SSH_OPTS_MAX + 32];
  char words[10][1100];
};

/* `ssh -o BatchMode=yes -o ConnectTimeout=N OPTS HOST --` into argv; entries. */
static int ssh_prefix(struct ssh *s, const char *host, const char **argv) {
  int k = 0;
  argv[k++] = "ssh";
  argv[k++] = "-o";
  argv[k++] = "BatchMode=yes";
  argv[k++] = "-o";
  argv[k++] = s->timeout_opt;
  for (int i = 0; i < s->nopt; i++)
    argv[k++] = s->opt[i];
  /* after the user's options (ssh keeps the first value it is given for an option): a host that
   * goes silent (down, cut off) ends the session within 15 s, exit 255, instead of the workload's
   * session hanging until gloo's own 30-minute time-out (a host's link taken down mid-run,
   * 2026-11-30) */
  argv[k++] = "-o";
  argv[k++] = "ServerAliveInterval=5";
  argv[k++] = "-o";
  argv[k++] = "ServerAliveCountMax=3";
  argv[k++] = host;
  argv[k++] = "--";
  return k;
}

static int remote_argv(struct ssh *s, const char *host, const char *const *words, int nwords, struct remote *r,
                       struct pit_err *e) {
  int k = ssh_prefix(s, host, (const char **)r->argv);
  for (int i = 0; i < nwords && i < 10; i++) {
    if (ctl_shell_quote(words[i], r->words[i], sizeof r->words[i]) < 0)
      return pit_err_set(e, PIT_EARG, "'%s' is too long for a remote command", words[i]);
    r->argv[k++] = r->words[i];
  }
  /* The remote shell would exec a lone command in its own place, and a command
   * killed by a signal (SIGILL: a binary built for another CPU) then ends the
   * ssh session with 255, as an unreachable host does. After `|| exit $?` the
   * shell waits and reports 128 + the signal (host_call reads it). */
  r->argv[k++] = "||";
  r->argv[k++] = "exit";
  r->argv[k++] = "$?";
  r->argv[k] = NULL;
  return 0;
}

/* Runs `pitstop node-check ...` on host; 0 when it says the host is fine (its
 * stdout in out, when not NULL). */
static int host_call_out(struct pit_provider *p, const char *host, const char *const *words, int nwords,
                         char *out, size_t nout, struct pit_err *e) {
  struct ssh *s = p->impl;
  struct remote r;
  int rc = remote_argv(s, host, words, nwords, &r, e);
  if (rc < 0)
    return rc;
  char own[512], err[1024];
  if (!out)
    out = own, nout = sizeof own;
  int st = 0;
  if ((rc = pit_child_capture(r.argv, s->timeout_s, out, nout, err, sizeof err, &st, e)) < 0) {
    pit_err_set(e, PIT_ESTATE, "host %s: no answer over ssh within %.0f s", host, s->timeout_s);
    return PIT_ESTATE;
  }
  if (st == 0)
    return 0;
  size_t len = strlen(err);
  while (len && (err[len - 1] == '\n' || err[len - 1] == '\r'))
    err[--len] = 0;
  char *last = strrchr(err, '\n');
  const char *why = last ? last + 1 : err;
  if (strncmp(why, "pitstop: ", 9) == 0)
    why += 9;
  if (st == 255)
    return pit_err_set(e, PIT_ESTATE, "host %s: unreachable over ssh (%s)", host, *why ? why : "exit 255");
  if (st == 127)
    return pit_err_set(e, PIT_ENOTFOUND, "host %s: pitstop is not at %s there", host, p->conf.self_exe);
  if (st == 126) /* found, not executable: another architecture, no permission */
    return pit_err_set(e, PIT_ESTATE, "host %s: pitstop cannot run there: %s", host, *why ? why : "exit 126");
  if (st > 128 && st < 255) /* the remote shell's status of a program killed by signal st - 128 */
    return pit_err_set(e, PIT_ESTATE, "host %s: pitstop cannot run there: %s killed by signal %d (%s)%s", host,
                       p->conf.self_exe, st - 128, strsignal(st - 128),
                       st - 128 == SIGILL ? ": an instruction this CPU lacks (a -march=native build, PIT_NATIVE=ON, "
                                            "from another CPU? -DPIT_NATIVE=OFF runs on every x86-64 node)"
                                          : "");
  return pit_err_set(e, PIT_ESTATE, "%s", *why ? why : "the host check failed");
}

static int host_call(struct pit_provider *p, const char *host, const char *const *words, int nwords,
                     struct pit_err *e) {
  return host_call_out(p, host, words, nwords, NULL, 0, e);
}

static int check_host(struct pit_provider *p, const char *host, struct pit_err *e) {
  char mb[32];
  snprintf(mb, sizeof mb, "%.0f", MIN_FREE_MB);
  const char *w[] = {p->conf.self_exe, "node-check", "--dir", p->conf.state_dir, "--exe",
                     p->conf.exe ? p->conf.exe : p->conf.self_exe, "--min-free-mb", mb};
  return host_call(p, host, w, 8, e);
}

static int read_node(struct pit_provider *p, const char *id, struct pit_node *n) {
  char buf[512];
  if (ctl_node_file_read(p->conf.state_dir, id, buf, sizeof buf) < 0)
    return -1;
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", id);
  if (sscanf(buf, "%63s %127s %d %lf", n->itype, n->host, &n->slots, &n->price_h) != 4)
    return -1;
  n->state = PIT_NODE_READY;
  n->t_start = n->t_ready = n->t_stop = NAN;
  return 0;
}

static int s_list(struct pit_provider *p, struct pit_node **out, int *nout, struct pit_err *e) {
  *out = NULL;
  *nout = 0;
  struct ctl_node_id *ids;
  int nid;
  int rc = ctl_node_files(p->conf.state_dir, &ids, &nid, e);
  if (rc < 0)
    return rc;
  struct pit_node *v = calloc((size_t)(nid ? nid : 1), sizeof *v);
  if (!v) {
    free(ids);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int n = 0;
  for (int i = 0; i < nid; i++)
    if (read_node(p, ids[i].id, &v[n]) == 0)
      n++;
  free(ids);
  *out = v;
  *nout = n;
  return 0;
}

static int s_start(struct pit_provider *p, const char *itype, enum pit_market mk, struct pit_node *n,
                    struct pit_err *e) {
  (void)mk; /* no spot market: only DEFAULT is asked for */
  struct ssh *s = p->impl;
  struct pit_node *live;
  int nlive;
  int rc = s_list(p, &live, &nlive, e);
  if (rc < 0)
    return rc;
  int want = p->conf.slots > 0 ? p->conf.slots : 1;
  char why[1024] = "";
  int tried = 0;
  for (int i = 0; i < s->nhost; i++) {
    struct ssh_host *h = &s->host[i];
    int claimed = 0;
    for (int j = 0; j < nlive; j++)
      claimed |= strcmp(live[j].host, h->name) == 0;
    if (claimed || (h->itype[0] && strcmp(h->itype, itype) != 0) || h->slots < want)
      continue;
    tried++;
    struct pit_err e2 = {0};
    if (check_host(p, h->name, &e2) < 0) {
      size_t at = strlen(why);
      snprintf(why + at, sizeof why - at, "%s%s", at ? "; " : "", e2.msg);
      if (p->conf.warn)
        p->conf.warn(p->conf.warn_ctx, &e2);
      continue;
    }
    memset(n, 0, sizeof *n);
    snprintf(n->id, sizeof n->id, "%.40s.h%d", p->conf.run, i);
    snprintf(n->itype, sizeof n->itype, "%s", itype);
    snprintf(n->host, sizeof n->host, "%s", h->name);
    n->slots = want;
    const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
    n->price_h = t ? t->price_h : 0;
    n->state = PIT_NODE_READY;
    char text[512];
    snprintf(text, sizeof text, "%s %s %d %.9g\n", n->itype, n->host, n->slots, n->price_h);
    free(live);
    return ctl_node_file_write(p->conf.state_dir, n->id, text, e);
  }
  /* the hosts this run holds (its node files), named: one set aside whose stop could not reach it
   * is among them, its claim kept */
  char held[600] = "";
  for (int j = 0; j < nlive; j++) {
    size_t at = strlen(held);
    if (at + 2 < sizeof held)
      snprintf(held + at, sizeof held - at, "%s%s (node %s)", at ? ", " : "", live[j].host, live[j].id);
  }
  free(live);
  if (tried)
    pit_err_set(e, PIT_ESTATE, "the ssh provider cannot start a node of type %s: no host of '%s' passed its check: %s",
                itype, p->conf.hostfile, why);
  else
    pit_err_set(e, PIT_ESTATE,
                "the ssh provider cannot start a node of type %s: every host of '%s' that serves it (with %d slot%s) "
                "is held by this run already%s%s",
                itype, p->conf.hostfile, want, want == 1 ? "" : "s", held[0] ? ": " : "", held);
  pit_err_hint(e, "fewer nodes, or more hosts in the hostfile; a host set aside that could not be reached stays held "
                  "until `pitstop run --cleanup` stops it");
  return PIT_ESTATE;
}

/* Kills the run's processes on n's host (node-check --release RUN --run-tag TAG there: this run
 * directory's only, not those of another run given the same name); the claim stays. */
static int s_clear(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct ctl_node_words nw;
  ctl_node_check_words(p, 0, 0, &nw);
  return host_call(p, n->host, nw.w, nw.n, e);
}

/* sig to the run's processes on n's host (catchers_only: the top-most that catch it): the per-node
 * launcher's workload runs there under a remote shell, and a signal to the local ssh client would
 * only end the session, the workload not told and its last lines lost. Returns how many. */
static int s_signal(struct pit_provider *p, const struct pit_node *n, int sig, int catchers_only, struct pit_err *e) {
  char out[512];
  struct ctl_node_words nw;
  ctl_node_check_words(p, sig, catchers_only, &nw);
  int rc = host_call_out(p, n->host, nw.w, nw.n, out, sizeof out, e);
  if (rc < 0)
    return rc;
  int k = 0;
  return sscanf(out, "%d", &k) == 1 ? k : 0;
}

static int s_stop(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  int rc = s_clear(p, n, e);
  if (rc < 0)
    return rc; /* the node file stays: a later stop or `pitstop run --cleanup` tries again */
  return ctl_node_file_remove(p->conf.state_dir, n->id, e);
}

static int s_health(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  return check_host(p, n->host, e);
}

static int s_wrap(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *nout,
                  struct pit_err *e) {
  struct ssh *s = p->impl;
  *nout = 0;
  if (p->conf.launcher == PIT_LAUNCH_MPI)
    return 0; /* mpirun reaches the host itself (mpi_args) */
  if (cap < s->nopt + 18)
    return pit_err_set(e, PIT_EARG, "%s:%d: wrap needs %d slots", __FILE__, __LINE__, s->nopt + 18);
  snprintf(s->wrap_host, sizeof s->wrap_host, "%s", n->host);
  int k = ssh_prefix(s, s->wrap_host, argv);
  /* per node: node-exec on the host sets GLOO_SOCKET_IFNAME (gloo would bind to what the host's own
   * name resolves to, a loopback address on a stock Debian host) and enters this directory */
  struct ctl_node_words nw;
  ctl_node_exec_words(p, n->host, &nw);
  for (int i = 0; i < nw.n; i++, k++) {
    if (ctl_shell_quote(nw.w[i], s->wrap_words[i], sizeof s->wrap_words[i]) < 0)
      return pit_err_set(e, PIT_EARG, "'%s' is too long for a remote command", nw.w[i]);
    argv[k] = s->wrap_words[i];
  }
  *nout = k;
  return 0;
}

static int s_mpi_args(struct pit_provider *p, const char **argv, int cap, int *nout, struct pit_err *e) {
  struct ssh *s = p->impl;
  if (cap < 3)
    return pit_err_set(e, PIT_EARG, "%s:%d: mpi_args needs 3 slots", __FILE__, __LINE__);
  argv[0] = "--mca";
  argv[1] = "plm_rsh_agent";
  argv[2] = s->agent;
  *nout = 3;
  return 0;
}

const struct pit_provider_ops pit_provider_ssh = {
    PIT_PROVIDER_OPS(s, "ssh",
                     "nodes are hosts of a hostfile, reached over ssh"),
    .mpi_args = s_mpi_args,
    .clear = s_clear,
    .signal = s_signal,
};
