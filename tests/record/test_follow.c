/* test_follow.c — follow mode: a half-written last line is "not yet" (PARTIAL), not
 * malformed, and is read once complete; the end of what is written is "no more for
 * now" (AGAIN); a writer process appending records in pieces, with pauses, while the
 * reader follows: every record read exactly once, in order, none malformed; the
 * same on a pipe in protocol mode (PITSTOP lines among other output, the last line
 * without newline read when the pipe closes); a malformed complete line is reported
 * with file:line and the follower goes on. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/record.h"

#define NREC 400

/* Record i as a JSON line (malloc'd into *buf). */
static int line_of(int i, char **buf, size_t *cap) {
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_ITER;
  snprintf(r.run, sizeof r.run, "follow");
  r.t = i * 0.01;
  r.step = i;
  r.epoch = 0;
  r.iter = i;
  r.step_s = 0.01 + i * 1e-6;
  pit_record_set_ranks(&r, 2);
  r.compute_s[0] = r.compute_s[1] = 0.005;
  r.wait_s[0] = r.wait_s[1] = 0.001;
  int n = pit_record_format(&r, buf, cap);
  pit_record_release(&r);
  return n;
}

static void put(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t k = write(fd, s, n);
    if (k <= 0)
      _exit(3);
    s += k;
    n -= (size_t)k;
  }
}

static void put_str(int fd, const char *s) { put(fd, s, strlen(s)); }

/* Writes the NREC records to fd, each in 1 to 3 pieces, pausing now and then;
 * protocol: each record as "PITSTOP {json}" among other output lines. */
static void writer(int fd, int protocol) {
  char *buf = NULL;
  size_t cap = 0;
  unsigned seed = 7;
  for (int i = 0; i < NREC; i++) {
    if (protocol && i % 3 == 0)
      put_str(fd, "epoch 0 iteration 12 loss 2.30 {not a record}\n");
    if (protocol && i % 7 == 0)
      put_str(fd, "{\"a bare json\": \"line from the program\"}\n");
    if (protocol)
      put(fd, "PITSTOP ", 8);
    int n = line_of(i, &buf, &cap);
    if (protocol && i == NREC - 1)
      n--; /* the last one without its newline: the pipe's close ends it */
    int cut1 = (int)(rand_r(&seed) % (unsigned)n), cut2 = cut1 + (int)(rand_r(&seed) % (unsigned)(n - cut1));
    put(fd, buf, (size_t)cut1);
    if (i % 16 == 0)
      usleep(2000);
    put(fd, buf + cut1, (size_t)(cut2 - cut1));
    if (i % 5 == 0)
      usleep(300);
    put(fd, buf + cut2, (size_t)(n - cut2));
  }
  free(buf);
}

/* Follows until the writer has exited and everything is read; checks each record once, in order. */
static void follow_all(struct pit_follower *f, pid_t child, const char *what) {
  struct pit_record r;
  pit_record_init(&r);
  struct pit_err e = {0};
  int next = 0, bad = 0, exited = 0, partial = 0, again = 0;
  for (int spins = 0; spins < 2000000; spins++) {
    int rc = pit_follower_next(f, &r, &e);
    if (rc == PIT_FOLLOW_RECORD) {
      if (r.step != next || strcmp(r.run, "follow") != 0 || r.nranks != 2)
        bad++;
      next = (int)r.step + 1;
      continue;
    }
    if (rc < 0) {
      fprintf(stderr, "%s: %s\n", what, e.msg);
      bad++;
      continue;
    }
    if (rc == PIT_FOLLOW_CLOSED)
      break;
    partial += rc == PIT_FOLLOW_PARTIAL;
    again += rc == PIT_FOLLOW_AGAIN;
    if (exited && rc == PIT_FOLLOW_AGAIN && !f->is_pipe)
      break; /* the writer is gone and the file read to its end */
    if (!exited && waitpid(child, NULL, WNOHANG) == child)
      exited = 1; /* read once more: what it wrote last */
    else
      usleep(100);
  }
  if (!exited)
    waitpid(child, NULL, 0);
  printf("%s: %d records, %d 'not yet' and %d 'no more for now' answers on the way\n", what, next, partial, again);
  CHECK(next == NREC && bad == 0, "%s: read %d of %d records in order, %d wrong or malformed", what, next, NREC, bad);
  pit_record_release(&r);
}

int main(void) {
  const char *dir = check_tmpdir();
  char path[512];
  struct pit_err e = {0};
  struct pit_follower f;
  struct pit_record r;
  pit_record_init(&r);
  char *buf = NULL;
  size_t cap = 0;

  /* 1. step by step: partial, complete, end for now, malformed then on */
  snprintf(path, sizeof path, "%s/steps.jsonl", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(pit_follower_open(&f, path, 0, &e) == 0, "%s", e.msg);
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_AGAIN, "empty file: no more for now");
  int n = line_of(0, &buf, &cap);
  put(fd, buf, 10);
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_PARTIAL, "half a line: not yet");
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_PARTIAL, "still not yet");
  put(fd, buf + 10, (size_t)n - 10);
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_RECORD && r.step == 0, "completed: the record");
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_AGAIN, "then no more for now");
  put_str(fd, "\n{\"type\":\"iter\",\"step\":\"x\"}\n");
  n = line_of(1, &buf, &cap);
  put(fd, buf, (size_t)n);
  int rc = pit_follower_next(&f, &r, &e);
  CHECK(rc == PIT_EFORMAT && strstr(e.msg, "steps.jsonl:3:"), "malformed line named: %d %s", rc,
        e.msg);
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_RECORD && r.step == 1, "and the next record after it");
  CHECK(pit_follower_next(&f, &r, &e) == PIT_FOLLOW_AGAIN, "end for now");
  close(fd);
  pit_follower_release(&f);

  /* 2. a writer process appending while the reader follows a file */
  snprintf(path, sizeof path, "%s/grow.jsonl", dir);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  CHECK(pit_follower_open(&f, path, 0, &e) == 0, "%s", e.msg);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    writer(fd, 0);
    _exit(0);
  }
  close(fd);
  follow_all(&f, pid, "file");
  pit_follower_release(&f);

  /* 3. a child's stdout through a pipe, PITSTOP lines among other output */
  int p[2];
  CHECK(pipe(p) == 0, "pipe");
  pid = fork();
  if (pid == 0) {
    close(p[0]);
    writer(p[1], 1);
    _exit(0);
  }
  close(p[1]);
  CHECK(pit_follower_open_fd(&f, p[0], 1, "child stdout", 1, &e) == 0, "%s", e.msg);
  follow_all(&f, pid, "pipe");
  pit_follower_release(&f);

  free(buf);
  pit_record_release(&r);
  return check_done();
}
