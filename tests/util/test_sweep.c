/* test_sweep.c — pit_atomic_sweep removes the temp files "<name>.tmp.<pid>" of dead
 * processes and never those of a live process (nor this one's), nor other files. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/util.h"

static void touch(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  fputs("x", f);
  fclose(f);
}

static int exists(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return access(p, F_OK) == 0;
}

int main(void) {
  const char *dir = check_tmpdir();
  pid_t dead = fork(); /* a process that has ended: its pid is free */
  if (dead == 0)
    _exit(0);
  waitpid(dead, NULL, 0);
  pid_t live = fork(); /* a live process other than this one */
  if (live == 0) {
    pause();
    _exit(0);
  }
  char n_dead[64], n_live[64], n_self[64];
  snprintf(n_dead, sizeof n_dead, "checkpoint-000000000040.pit.tmp.%ld", (long)dead);
  snprintf(n_live, sizeof n_live, "checkpoint.latest.tmp.%ld", (long)live);
  snprintf(n_self, sizeof n_self, "checkpoint.pit.tmp.%ld", (long)getpid());
  touch(dir, n_dead);
  touch(dir, n_live);
  touch(dir, n_self);
  touch(dir, "notes.tmp.txt");
  touch(dir, "checkpoint.pit");
  int removed = -1;
  struct pit_err e = {0};
  CHECK(pit_atomic_sweep(dir, &removed, &e) == 0, "%s", e.msg);
  CHECK(removed == 1 && !exists(dir, n_dead), "the dead process's temp file is removed (%d removed)", removed);
  CHECK(exists(dir, n_live), "a live process's temp file is kept");
  CHECK(exists(dir, n_self), "this process's temp file is kept");
  CHECK(exists(dir, "notes.tmp.txt") && exists(dir, "checkpoint.pit"), "other files are kept");
  kill(live, SIGKILL);
  waitpid(live, NULL, 0);
  CHECK(pit_atomic_sweep(dir, &removed, &e) == 0 && removed == 1 && !exists(dir, n_live),
        "once that process is gone, its temp file goes too");
  CHECK(pit_atomic_sweep("/nonexistent-dir", &removed, &e) == PIT_EIO && strstr(e.msg, "/nonexistent-dir"),
        "error names the directory: %s", e.msg);
  return check_done();
}
