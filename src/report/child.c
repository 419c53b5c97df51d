/* child.c — runs one child process from an argv array (posix_spawnp, never a
 * shell) and waits for it, optionally keeping the tail of its stderr for an
 * error message. Invariant: every descriptor opened here is closed and the
 * child is reaped before returning. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pitstop/report.h"

extern char **environ;

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
  int pfd[2] = {-1, -1};
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = 0;
  if (errtail && errtail_n) {
    errtail[0] = '\0';
    if (pipe(pfd) != 0) {
      posix_spawn_file_actions_destroy(&fa);
      return pit_err_errno(e, PIT_EIO, "cannot create a pipe for '%s'", argv[0]);
    }
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pfd[1]);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
  }
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (quiet_stdout)
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (pfd[1] >= 0)
    close(pfd[1]);
  if (err) {
    if (pfd[0] >= 0)
      close(pfd[0]);
    errno = err;
    return pit_err_errno(e, err == ENOENT || err == EACCES ? PIT_ENOTFOUND : PIT_EIO, "cannot run '%s'", argv[0]);
  }
  if (pfd[0] >= 0) {
    char buf[4096];
    size_t len = 0;
    for (;;) {
      ssize_t n = read(pfd[0], buf, sizeof buf);
      if (n > 0)
        tail_add(errtail, errtail_n, &len, buf, (size_t)n);
      else if (n == 0 || errno != EINTR)
        break;
    }
    close(pfd[0]);
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0) {
    if (errno != EINTR) {
      rc = pit_err_errno(e, PIT_EIO, "cannot wait for '%s'", argv[0]);
      break;
    }
  }
  if (!rc)
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  return rc;
}
