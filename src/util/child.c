/* child.c — child processes started from an argv array (posix_spawnp, never a
 * shell): start, signal, wait with a time-out, kill (TERM, grace, KILL of the
 * whole process group), run-and-wait keeping the tail of stderr, and
 * run-with-a-time-out capturing the head of stdout and the tail of stderr
 * (pit_child_capture: every provider command and gnuplot).
 *
 * Invariants: a started child is the leader of its own process group (unless
 * the caller asked for the caller's group), so signalling c->pid's group
 * reaches every grandchild it started; a child is reaped exactly once (by
 * pit_child_wait or pit_child_kill) and c->pid is 0 afterwards; every
 * descriptor opened here is either closed before returning or owned by the
 * struct pit_child (pipe read ends) and closed by pit_child_release. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pitstop/util.h"

extern char **environ;

void pit_child_init(struct pit_child *c) {
  memset(c, 0, sizeof *c);
  c->out_fd = c->err_fd = -1;
}

void pit_child_release(struct pit_child *c) {
  if (c->out_fd >= 0)
    close(c->out_fd);
  if (c->err_fd >= 0)
    close(c->err_fd);
  c->out_fd = c->err_fd = -1;
}

/* Length of the NAME part of "NAME=value" (the whole string without '='). */
static size_t env_name_len(const char *kv) {
  const char *eq = strchr(kv, '=');
  return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* environ with the additions (each "NAME=value") replacing entries of the same
 * NAME; the array is malloc'd, its strings borrowed. NULL when out of memory. */
static char **env_merge(char *const *add) {
  size_t n = 0, na = 0;
  while (environ && environ[n])
    n++;
  while (add[na])
    na++;
  char **env = malloc((n + na + 1) * sizeof *env);
  if (!env)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = env_name_len(environ[i]);
    int replaced = 0;
    for (size_t j = 0; j < na && !replaced; j++)
      replaced = env_name_len(add[j]) == len && strncmp(add[j], environ[i], len) == 0;
    if (!replaced)
      env[k++] = environ[i];
  }
  for (size_t j = 0; j < na; j++)
    env[k++] = add[j];
  env[k] = NULL;
  return env;
}

/* Adds the file action for descriptor fd (0, 1 or 2) following io; for a
 * pipe, pfd receives both ends (the child gets the write end). */
static int stdio_action(posix_spawn_file_actions_t *fa, int fd, const struct pit_child_io *io, int pfd[2],
                        const char *prog, struct pit_err *e) {
  int wr = fd != 0;
  switch (io->mode) {
  case PIT_CHILD_INHERIT:
    return 0;
  case PIT_CHILD_NULL:
    return posix_spawn_file_actions_addopen(fa, fd, "/dev/null", wr ? O_WRONLY : O_RDONLY, 0)
               ? pit_err_set(e, PIT_ENOMEM, "out of memory")
               : 0;
  case PIT_CHILD_FILE:
    if (!io->path)
      return PIT_BUG(e, "child '%s': file redirection without a path", prog);
    return posix_spawn_file_actions_addopen(fa, fd, io->path,
                                            wr ? O_WRONLY | O_CREAT | (io->append ? O_APPEND : O_TRUNC) : O_RDONLY,
                                            0644)
               ? pit_err_set(e, PIT_ENOMEM, "out of memory")
               : 0;
  case PIT_CHILD_PIPE:
    if (!wr)
      return PIT_BUG(e, "child '%s': stdin cannot be a pipe", prog);
    if (pipe(pfd) != 0)
      return pit_err_errno(e, PIT_EIO, "cannot create a pipe for '%s'", prog);
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
    if (posix_spawn_file_actions_adddup2(fa, pfd[1], fd) || posix_spawn_file_actions_addclose(fa, pfd[1]) ||
        posix_spawn_file_actions_addclose(fa, pfd[0]))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    return 0;
  }
  return PIT_BUG(e, "child '%s': unknown redirection %d", prog, io->mode);
}

int pit_child_start(struct pit_child *c, const struct pit_child_opts *o, struct pit_err *e) {
  pit_child_init(c);
  const char *prog = o->argv && o->argv[0] ? o->argv[0] : NULL;
  if (!prog)
    return PIT_BUG(e, "child started without a program");
  snprintf(c->name, sizeof c->name, "%s", prog);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  if (posix_spawn_file_actions_init(&fa))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (posix_spawnattr_init(&at)) {
    posix_spawn_file_actions_destroy(&fa);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int outp[2] = {-1, -1}, errp[2] = {-1, -1}, nop[2] = {-1, -1};
  char **env = NULL;
  int rc = stdio_action(&fa, 0, &o->in, nop, prog, e);
  if (!rc)
    rc = stdio_action(&fa, 1, &o->out, outp, prog, e);
  if (!rc)
    rc = stdio_action(&fa, 2, &o->err, errp, prog, e);
  /* The child starts with default dispositions and an empty mask, whatever the caller set. */
  sigset_t def, none;
  sigemptyset(&def);
  sigemptyset(&none);
  const int sigs[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaddset(&def, sigs[i]);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (o->same_group ? 0 : POSIX_SPAWN_SETPGROUP);
  if (!rc && (posix_spawnattr_setsigdefault(&at, &def) || posix_spawnattr_setsigmask(&at, &none) ||
              posix_spawnattr_setpgroup(&at, 0) || posix_spawnattr_setflags(&at, flags)))
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (!rc && o->env && !(env = env_merge(o->env)))
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (!rc) {
    pid_t pid;
    int err = posix_spawnp(&pid, prog, &fa, &at, o->argv, env ? env : environ);
    if (err) {
      errno = err;
      rc = pit_err_errno(e, err == ENOENT || err == EACCES ? PIT_ENOTFOUND : PIT_EIO, "cannot run '%s'", prog);
    } else {
      c->pid = pid;
      c->pgid = o->same_group ? 0 : pid;
    }
  }
  free(env);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  for (int *p = outp; p; p = p == outp ? errp : NULL) {
    if (p[1] >= 0)
      close(p[1]);
    if (rc && p[0] >= 0)
      close(p[0]);
  }
  if (!rc) {
    c->out_fd = outp[0];
    c->err_fd = errp[0];
  }
  return rc;
}

int pit_child_signal(struct pit_child *c, int sig, struct pit_err *e) {
  if (c->pid <= 0)
    return pit_err_set(e, PIT_ESTATE, "'%s' is not running", c->name);
  if (kill(c->pgid ? -c->pgid : c->pid, sig) != 0 && errno != ESRCH)
    return pit_err_errno(e, PIT_EIO, "cannot signal '%s' (pid %d)", c->name, (int)c->pid);
  return 0;
}

/* Decodes a wait status: exit code, or 128 + signal number when killed. */
static int decode_status(int ws) {
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

int pit_child_wait(struct pit_child *c, double timeout_s, int *status, struct pit_err *e) {
  if (c->pid <= 0)
    return pit_err_set(e, PIT_ESTATE, "'%s' is not running", c->name);
  double deadline = timeout_s >= 0 ? pit_now() + timeout_s : 0;
  long nap_ns = 1000000; /* 1 ms, doubling up to 20 ms: short children are seen early */
  for (;;) {
    int ws;
    pid_t r = waitpid(c->pid, &ws, timeout_s < 0 ? 0 : WNOHANG);
    if (r == c->pid) {
      c->pid = 0;
      c->status = decode_status(ws);
      if (status)
        *status = c->status;
      return 0;
    }
    if (r < 0 && errno != EINTR)
      return pit_err_errno(e, PIT_EIO, "cannot wait for '%s'", c->name);
    if (r == 0) {
      double left = deadline - pit_now();
      if (left <= 0)
        return PIT_CHILD_RUNNING;
      if ((double)nap_ns * 1e-9 > left)
        nap_ns = (long)(left * 1e9) + 1;
      struct timespec ts = {0, nap_ns};
      nanosleep(&ts, NULL);
      if (nap_ns < 20000000)
        nap_ns *= 2;
    }
  }
}

int pit_child_kill(struct pit_child *c, double grace_s, int *status, struct pit_err *e) {
  int rc = pit_child_signal(c, SIGTERM, e);
  if (rc)
    return rc;
  rc = pit_child_wait(c, grace_s, status, e);
  if (rc < 0)
    return rc;
  /* KILL the group even when the leader left in time: a grandchild may ignore TERM. */
  if (c->pgid && kill(-c->pgid, SIGKILL) != 0 && errno != ESRCH)
    return pit_err_errno(e, PIT_EIO, "cannot kill '%s'", c->name);
  if (rc == PIT_CHILD_RUNNING) {
    if (!c->pgid && kill(c->pid, SIGKILL) != 0 && errno != ESRCH)
      return pit_err_errno(e, PIT_EIO, "cannot kill '%s'", c->name);
    return pit_child_wait(c, -1, status, e);
  }
  return 0;
}

/* Appends n bytes to the tail buffer (size cap, NUL-terminated), keeping the last ones. */
static void tail_add(char *tail, size_t cap, size_t *len, const char *buf, size_t n) {
  if (cap < 2)
    return;
  size_t keep = cap - 1;
  if (n >= keep) {
    memcpy(tail, buf + n - keep, keep);
    *len = keep;
  } else {
    if (*len + n > keep) {
      size_t drop = *len + n - keep;
      memmove(tail, tail + drop, *len - drop);
      *len -= drop;
    }
    memcpy(tail + *len, buf, n);
    *len += n;
  }
  tail[*len] = '\0';
}

int pit_child_run(char *const argv[], int quiet_stdout, int *status, char *errtail, size_t errtail_n,
                  struct pit_err *e) {
  struct pit_child_opts o = {.argv = argv, .same_group = 1};
  o.in.mode = PIT_CHILD_NULL;
  o.out.mode = quiet_stdout ? PIT_CHILD_NULL : PIT_CHILD_INHERIT;
  o.err.mode = errtail && errtail_n ? PIT_CHILD_PIPE : PIT_CHILD_INHERIT;
  if (errtail && errtail_n)
    errtail[0] = '\0';
  struct pit_child c;
  int rc = pit_child_start(&c, &o, e);
  if (rc)
    return rc;
  if (c.err_fd >= 0) {
    char buf[4096];
    size_t len = 0;
    for (;;) {
      ssize_t n = read(c.err_fd, buf, sizeof buf);
      if (n > 0)
        tail_add(errtail, errtail_n, &len, buf, (size_t)n);
      else if (n == 0 || errno != EINTR)
        break;
    }
  }
  pit_child_release(&c);
  return pit_child_wait(&c, -1, status, e);
}

int pit_child_capture(char *const argv[], double timeout_s, char *out, size_t nout, char *err, size_t nerr,
                      int *status, struct pit_err *e) {
  if (nout)
    out[0] = 0;
  if (nerr)
    err[0] = 0;
  struct pit_child ch;
  pit_child_init(&ch);
  struct pit_child_opts co;
  memset(&co, 0, sizeof co);
  co.argv = argv;
  co.in.mode = PIT_CHILD_NULL;
  co.out.mode = nout ? PIT_CHILD_PIPE : PIT_CHILD_NULL;
  co.err.mode = nerr ? PIT_CHILD_PIPE : PIT_CHILD_NULL;
  int rc = pit_child_start(&ch, &co, e);
  if (rc < 0)
    return rc;
  struct {
    int fd;
    char *buf;
    size_t cap, len;
  } s[2] = {{nout ? ch.out_fd : -1, out, nout, 0}, {nerr ? ch.err_fd : -1, err, nerr, 0}};
  double t0 = pit_now();
  int timed_out = 0;
  while (s[0].fd >= 0 || s[1].fd >= 0) {
    double left = timeout_s - (pit_now() - t0);
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    struct pollfd pf[2];
    int map[2], np = 0;
    for (int i = 0; i < 2; i++)
      if (s[i].fd >= 0) {
        pf[np].fd = s[i].fd;
        pf[np].events = POLLIN;
        map[np++] = i;
      }
    int k = poll(pf, (nfds_t)np, (int)(left * 1000) + 1);
    if (k < 0 && errno != EINTR)
      break;
    for (int j = 0; j < np && k > 0; j++) {
      if (!pf[j].revents)
        continue;
      int i = map[j];
      char tmp[4096];
      ssize_t r = read(s[i].fd, tmp, sizeof tmp);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0) {
        s[i].fd = -1; /* closed by pit_child_release */
        continue;
      }
      /* keep the head of stdout, the tail of stderr */
      for (ssize_t b = 0; b < r && s[i].cap > 1; b++) {
        if (s[i].len + 1 >= s[i].cap) {
          if (i == 0)
            break;
          memmove(s[i].buf, s[i].buf + 1, s[i].len - 1);
          s[i].len--;
        }
        s[i].buf[s[i].len++] = tmp[b];
      }
      if (s[i].cap)
        s[i].buf[s[i].len] = 0;
    }
  }
  int st = -1;
  if (timed_out || pit_child_wait(&ch, timed_out ? 0 : timeout_s - (pit_now() - t0) + 1, &st, NULL) != 0) {
    pit_child_kill(&ch, 0.5, &st, NULL);
    timed_out = 1;
  }
  pit_child_release(&ch);
  if (timed_out)
    return pit_err_set(e, PIT_ESTATE, "'%s' did not finish within %.0f s", argv[0], timeout_s);
  *status = st;
  return 0;
}
