/* test_catchers.c — ctl_signal_catchers (src/provider/procs.c) signals the
 * top-most catchers of a process group only: a catcher below another gets the
 * signal from it (mpirun forwards to its ranks), so a rank must not get it a
 * second time; a launcher that does not catch (a torchrun agent: SIGUSR1
 * ignored) is skipped and its catching workers each get it.
 * Each process of a tree built here writes its letter to a pipe when SIGUSR1
 * reaches it; the letters that arrive are compared with the expected set. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "provider/procs.h"

static int out_fd = -1;
static char me;

static void on_usr1(int sig) {
  (void)sig;
  (void)!write(out_fd, &me, 1);
}

/* Becomes process `name`: catches SIGUSR1 (letter) or ignores it ('-' in
 * spec), says ready, then starts its children and waits for ever. spec is the
 * tree: "A(B(c(D))e(F))" — a capital letter catches, a small one ignores. */
static const char *grow(const char *spec, int ready_fd);

static const char *child(const char *spec, int ready_fd) {
  pid_t p = fork();
  if (p == 0) {
    grow(spec, ready_fd);
    for (;;)
      pause();
  }
  /* skip spec's subtree */
  int depth = 0;
  const char *s = spec + 1;
  if (*s == '(') {
    for (; *s; s++) {
      depth += *s == '(';
      depth -= *s == ')';
      if (depth == 0) {
        s++;
        break;
      }
    }
  }
  return s;
}

static const char *grow(const char *spec, int ready_fd) {
  me = spec[0];
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = me >= 'A' && me <= 'Z' ? on_usr1 : SIG_IGN;
  sigaction(SIGUSR1, &sa, NULL);
  (void)!write(ready_fd, "r", 1);
  const char *s = spec + 1;
  if (*s == '(') {
    s++;
    while (*s && *s != ')')
      s = child(s, ready_fd);
  }
  return s;
}

/* Builds spec in a new process group, signals it, returns the letters that arrived (sorted). */
static void run(const char *spec, int nproc, int want_n, const char *want) {
  int out[2], ready[2];
  if (pipe(out) || pipe(ready)) {
    CHECK(0, "pipe: %s", strerror(errno));
    return;
  }
  pid_t top = fork();
  if (top == 0) {
    setpgid(0, 0);
    close(out[0]);
    close(ready[0]);
    out_fd = out[1];
    grow(spec, ready[1]);
    for (;;)
      pause();
  }
  close(out[1]);
  close(ready[1]);
  setpgid(top, top); /* (either side may run first) */
  char buf[64];
  int got = 0;
  while (got < nproc) {
    ssize_t k = read(ready[0], buf, sizeof buf);
    if (k <= 0)
      break;
    got += (int)k;
  }
  CHECK(got == nproc, "%s: %d of %d processes ready", spec, got, nproc);
  int n = ctl_signal_catchers(top, SIGUSR1);
  char letters[32] = "";
  int nl = 0;
  struct pollfd pf = {out[0], POLLIN, 0};
  while (nl < (int)sizeof letters - 1 && poll(&pf, 1, 500) > 0) {
    ssize_t k = read(out[0], letters + nl, sizeof letters - 1 - (size_t)nl);
    if (k <= 0)
      break;
    nl += (int)k;
  }
  letters[nl] = 0;
  for (int i = 0; i < nl; i++) /* sort */
    for (int j = i + 1; j < nl; j++)
      if (letters[j] < letters[i]) {
        char t = letters[i];
        letters[i] = letters[j];
        letters[j] = t;
      }
  CHECK(n == want_n, "%s: %d signalled, want %d", spec, n, want_n);
  CHECK(strcmp(letters, want) == 0, "%s: reached '%s', want '%s'", spec, letters, want);
  kill(-top, SIGKILL);
  while (waitpid(-top, NULL, 0) > 0 || errno == EINTR)
    ;
  close(out[0]);
  close(ready[0]);
}

int main(void) {
  /* mpirun-like: A catches and forwards; its ranks B, C (and C's data worker D) are below it */
  run("A(BC(D))", 4, 1, "A");
  /* torchrun-like: the agent a ignores SIGUSR1; its workers B and C catch, C's forked worker D is below C */
  run("a(BC(D))", 4, 2, "BC");
  /* a catcher below a non-catcher below a catcher is still below one */
  run("A(b(C))", 3, 1, "A");
  /* nobody catches */
  run("a(bc)", 3, 0, "");
  return check_done();
}
