/* test_child.c — child processes: exit status, time-out ("still running"),
 * signalling and killing a whole process group including a grandchild that
 * ignores SIGTERM, environment additions, redirections, the run-and-wait
 * wrapper's stderr tail; and that no child or zombie is left behind.
 * The test process is a child subreaper, so orphaned grandchildren come back
 * to it and can be checked for (and reaped). The programs run are /bin/sh
 * scripts: tests may use a shell; the library never does. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/util.h"

/* Reads one line (up to '\n' or EOF) from fd into buf. */
static void read_line(int fd, char *buf, size_t n) {
  size_t k = 0;
  while (k + 1 < n) {
    ssize_t r = read(fd, buf + k, 1);
    if (r <= 0 || buf[k] == '\n')
      break;
    k++;
  }
  buf[k] = '\0';
}

/* No child of this process remains, zombie or alive. */
static int no_children(void) {
  int ws;
  return waitpid(-1, &ws, WNOHANG) < 0 && errno == ECHILD;
}

static void exit_status(void) {
  char *argv[] = {"sh", "-c", "exit 3", NULL};
  struct pit_child_opts o = {.argv = argv};
  struct pit_child c;
  struct pit_err e = {0};
  CHECK(pit_child_start(&c, &o, &e) == 0, "%s", e.msg);
  CHECK(c.pgid == c.pid && c.pid > 0, "leads its own group");
  CHECK(getpgid(c.pid) == c.pid || getpgid(c.pid) < 0, "group id is its pid");
  int st = -1;
  CHECK(pit_child_wait(&c, -1, &st, &e) == 0 && st == 3, "exit status 3: %d", st);
  CHECK(c.pid == 0, "reaped");
  CHECK(pit_child_wait(&c, 0, &st, &e) == PIT_ESTATE, "a reaped child cannot be waited for again");
  pit_child_release(&c);
  char *missing[] = {"pitstop-no-such-program", NULL};
  o.argv = missing;
  CHECK(pit_child_start(&c, &o, &e) == PIT_ENOTFOUND && strstr(e.msg, "pitstop-no-such-program"),
        "missing program named: %s", e.msg);
  CHECK(no_children(), "nothing left");
}

static void timeout_and_kill(void) {
  char *argv[] = {"sleep", "30", NULL};
  struct pit_child_opts o = {.argv = argv};
  struct pit_child c;
  struct pit_err e = {0};
  CHECK(pit_child_start(&c, &o, &e) == 0, "%s", e.msg);
  int st = -1;
  CHECK(pit_child_wait(&c, 0, &st, &e) == PIT_CHILD_RUNNING, "just looking: still running");
  CHECK(pit_child_wait(&c, 0.05, &st, &e) == PIT_CHILD_RUNNING, "time-out: still running");
  CHECK(c.pid > 0 && st == -1, "not reaped, no status");
  CHECK(pit_child_kill(&c, 5, &st, &e) == 0, "%s", e.msg);
  CHECK(st == 128 + SIGTERM, "ended by TERM: %d", st);
  CHECK(c.pid == 0 && no_children(), "reaped, nothing left");
}

/* Starts `sh -c script` with stdout through a pipe and reads its first line. */
static void start_script(struct pit_child *c, const char *script, char *line, size_t n) {
  char *argv[] = {"sh", "-c", (char *)script, NULL};
  struct pit_child_opts o = {.argv = argv, .out = {.mode = PIT_CHILD_PIPE}};
  struct pit_err e = {0};
  CHECK(pit_child_start(c, &o, &e) == 0, "%s", e.msg);
  read_line(c->out_fd, line, n);
}

/* Starts script (which prints its grandchild's pid first), kills the group
 * with the grace given, and checks the shell's status and that the
 * grandchild died of SIGKILL and nothing is left. */
static void kill_group(const char *script, double grace, int leader_status) {
  struct pit_child c;
  struct pit_err e = {0};
  char line[64];
  start_script(&c, script, line, sizeof line);
  pid_t g = (pid_t)atoi(line);
  CHECK(g > 0 && getpgid(g) == c.pid, "grandchild %d in the child's group (%s)", (int)g, script);
  int st = -1;
  CHECK(pit_child_kill(&c, grace, &st, &e) == 0, "%s", e.msg);
  CHECK(st == leader_status, "the shell's status %d, expected %d (%s)", st, leader_status, script);
  int ws = 0;
  pid_t r = waitpid(g, &ws, 0);
  CHECK(r == g && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL, "grandchild got KILL: %d %d %#x (%s)", (int)r, (int)g,
        ws, script);
  CHECK(no_children(), "no zombie left (%s)", script);
  pit_child_release(&c);
}

/* A signal reaches the group: the shell's trap runs (its wait is interrupted
 * by a trapped signal) and its background grandchild is gone. */
static void signal_group(void) {
  struct pit_child c;
  struct pit_err e = {0};
  char line[64];
  start_script(&c, "trap 'exit 7' USR1; sleep 30 & echo $!; wait", line, sizeof line);
  pid_t g = (pid_t)atoi(line);
  CHECK(g > 0, "grandchild pid read: '%s'", line);
  CHECK(pit_child_signal(&c, SIGUSR1, &e) == 0, "%s", e.msg);
  int st = -1;
  CHECK(pit_child_wait(&c, 30, &st, &e) == 0 && st == 7, "trap ran: %d", st);
  /* the grandchild is gone (reaped by the shell, or by this subreaper); how it
   * ended depends on when the shell's fork saw the signal, so only its
   * absence is checked here (the kill tests check KILL reaching it) */
  int ws = 0;
  waitpid(g, &ws, 0);
  CHECK(kill(g, 0) < 0 && errno == ESRCH, "grandchild gone");
  if (c.pid)
    pit_child_kill(&c, 0, &st, &e);
  CHECK(no_children(), "no zombie left");
  pit_child_release(&c);
}

static void env_and_files(void) {
  const char *dir = check_tmpdir();
  char out[512], in[512];
  snprintf(out, sizeof out, "%s/child.out", dir);
  snprintf(in, sizeof in, "%s/child.in", dir);
  FILE *f = fopen(in, "w");
  fputs("from-file", f);
  fclose(f);
  setenv("PIT_CHILD_OLD", "old", 1);
  setenv("PIT_CHILD_KEEP", "kept", 1);
  char *env[] = {"PIT_CHILD_NEW=new", "PIT_CHILD_OLD=replaced", NULL};
  char *argv[] = {"sh", "-c", "read x; printf '%s %s %s %s' \"$x\" \"$PIT_CHILD_NEW\" \"$PIT_CHILD_OLD\" \"$PIT_CHILD_KEEP\"; "
                  "echo to-null >&2", NULL};
  struct pit_child_opts o = {.argv = argv, .env = env, .in = {.mode = PIT_CHILD_FILE, .path = in},
                             .out = {.mode = PIT_CHILD_FILE, .path = out}, .err = {.mode = PIT_CHILD_NULL}};
  struct pit_child c;
  struct pit_err e = {0};
  CHECK(pit_child_start(&c, &o, &e) == 0, "%s", e.msg);
  int st = -1;
  CHECK(pit_child_wait(&c, -1, &st, &e) == 0 && st == 0, "ran: %d", st);
  char buf[128] = {0};
  f = fopen(out, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  CHECK(strcmp(buf, "from-file new replaced kept") == 0, "stdin from file, env added/replaced/kept: '%s'", buf);
  CHECK(strcmp(getenv("PIT_CHILD_OLD"), "old") == 0, "the caller's environment is unchanged");
  CHECK(no_children(), "nothing left");
}

static void run_wrapper(void) {
  char *argv[] = {"sh", "-c", "echo first >&2; echo 'last words' >&2; exit 2", NULL};
  char tail[8];
  int st = -1;
  struct pit_err e = {0};
  CHECK(pit_child_run(argv, 1, &st, tail, sizeof tail, &e) == 0 && st == 2, "status 2: %d", st);
  CHECK(strcmp(tail, " words\n") == 0, "the last 7 bytes of stderr kept: '%s'", tail);
  char *cat[] = {"cat", NULL};
  CHECK(pit_child_run(cat, 1, &st, NULL, 0, &e) == 0 && st == 0, "stdin is /dev/null: cat ends at once");
  CHECK(no_children(), "nothing left");
}

int main(void) {
  CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "subreaper");
  exit_status();
  timeout_and_kill();
  /* the shell and its grandchild both ignore TERM: KILL after the grace ends both */
  kill_group("trap '' TERM; sleep 30 & echo $!; wait", 0.2, 128 + SIGKILL);
  /* the shell leaves on TERM; its grandchild (which prints its pid once it
   * ignores TERM) still dies */
  kill_group("sh -c 'trap \"\" TERM; echo $$; exec sleep 30' & wait", 5, 128 + SIGTERM);
  signal_group();
  env_and_files();
  run_wrapper();
  return check_done();
}
