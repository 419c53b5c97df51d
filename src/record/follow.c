/* follow.c — reading records while they are written (a growing JSON Lines file, or
 * a child's stdout through a pipe), for a controller that tails a workload.
 * Invariants: every complete line is handed to the parser exactly once, in order;
 * bytes after the last '\n' stay in the buffer until their newline arrives (a
 * half-written line is "not yet", never malformed), except on a closed pipe, where
 * they are the last line; the file offset only moves forward, so the next call
 * resumes where this one stopped. Lines go through pit_parser (format jsonl): the
 * same reading of `{json}` and `PITSTOP {json}` lines as `pitstop parse`;
 * pit_follower_line is the line half alone (the controller's road for its
 * workloads' stdout, into its own parser). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pitstop/parse.h"
#include "pitstop/record.h"

#define FOLLOW_BLOCK 65536
#define FOLLOW_MAX_LINE (1u << 30)

static int on_record(void *ctx, const struct pit_record *r, struct pit_err *e) {
  struct pit_follower *f = ctx;
  pit_record_release(f->out);
  if (pit_record_copy(f->out, r) < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  f->got = 1;
  return 0;
}

static void on_bad(void *ctx, const struct pit_err *e) {
  struct pit_follower *f = ctx;
  f->bad = *e;
}

int pit_follower_open_fd(struct pit_follower *f, int fd, int owns_fd, const char *name, int protocol,
                         struct pit_err *e) {
  memset(f, 0, sizeof *f);
  f->fd = fd;
  f->owns_fd = owns_fd;
  f->protocol = protocol;
  struct stat st;
  if (fstat(fd, &st) != 0)
    return pit_err_errno(e, PIT_EIO, "cannot read '%s'", name);
  f->is_pipe = !S_ISREG(st.st_mode);
  if (f->is_pipe) { /* a pipe or terminal: never block the controller */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
      return pit_err_errno(e, PIT_EIO, "cannot read '%s' without blocking", name);
  }
  f->path = strdup(name);
  f->cap = FOLLOW_BLOCK;
  f->buf = malloc(f->cap);
  if (!f->path || !f->buf) {
    f->owns_fd = 0; /* the caller's fd stays the caller's on failure */
    pit_follower_release(f);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  return 0;
}

int pit_follower_open(struct pit_follower *f, const char *path, int protocol, struct pit_err *e) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open '%s'", path);
  int rc = pit_follower_open_fd(f, fd, 1, path, protocol, e);
  if (rc < 0)
    close(fd);
  return rc;
}

/* One complete line: 1 with a record in r, 0 skipped, negative if malformed. */
static int feed(struct pit_follower *f, const char *line, size_t n, struct pit_record *r, struct pit_err *e) {
  if (f->protocol) { /* a bare {json} in a program's output is its own business */
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
      i++;
    if (i < n && line[i] == '{') {
      pit_parser_line(f->parser, "", 0, e); /* counted, so line numbers stay right */
      return 0;
    }
  }
  f->out = r;
  f->got = 0;
  pit_err_clear(&f->bad);
  int rc = pit_parser_line(f->parser, line, n, e);
  f->out = NULL;
  if (rc < 0)
    return rc;
  if (f->bad.code)
    return pit_err_set(e, PIT_EFORMAT, "%s", f->bad.msg);
  return f->got;
}

int pit_follower_line(struct pit_follower *f, const char **line, size_t *n, struct pit_err *e) {
  for (;;) {
    char *s = f->buf + f->off, *nl = memchr(s, '\n', f->len - f->off);
    if (nl) {
      f->off = (size_t)(nl + 1 - f->buf);
      *line = s;
      *n = (size_t)(nl - s);
      return PIT_FOLLOW_RECORD;
    }
    if (f->closed) {
      if (f->off < f->len) { /* the writer is gone: its last line is complete */
        *line = s;
        *n = f->len - f->off;
        f->off = f->len;
        return PIT_FOLLOW_RECORD;
      }
      return PIT_FOLLOW_CLOSED;
    }
    /* keep the unfinished line at the front, then read after it */
    memmove(f->buf, s, f->len - f->off);
    f->len -= f->off;
    f->off = 0;
    if (f->len == f->cap) {
      if (f->cap >= FOLLOW_MAX_LINE)
        return pit_err_set(e, PIT_EFORMAT, "%s: a line longer than %u bytes", f->path, FOLLOW_MAX_LINE);
      if (PIT_GROW(f->buf, f->cap + 1, f->cap))
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    ssize_t k = read(f->fd, f->buf + f->len, f->cap - f->len);
    if (k > 0) {
      f->len += (size_t)k;
      continue;
    }
    if (k == 0 && f->is_pipe) {
      f->closed = 1;
      continue;
    }
    if (k < 0 && errno == EINTR)
      continue;
    if (k == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
      return f->len ? PIT_FOLLOW_PARTIAL : PIT_FOLLOW_AGAIN;
    return pit_err_errno(e, PIT_EIO, "cannot read '%s'", f->path);
  }
}

void pit_follower_writer_gone(struct pit_follower *f) { f->closed = 1; }

int pit_follower_next(struct pit_follower *f, struct pit_record *r, struct pit_err *e) {
  if (!f->parser) {
    int rc = pit_parser_new(&f->parser, PIT_PARSE_JSONL, NULL, 0, f->path, on_record, on_bad, f, e);
    if (rc < 0)
      return rc;
  }
  for (;;) {
    const char *line;
    size_t n;
    int rc = pit_follower_line(f, &line, &n, e);
    if (rc != PIT_FOLLOW_RECORD)
      return rc;
    if ((rc = feed(f, line, n, r, e)) != 0)
      return rc < 0 ? rc : PIT_FOLLOW_RECORD;
  }
}

void pit_follower_release(struct pit_follower *f) {
  if (f->owns_fd && f->fd >= 0)
    close(f->fd);
  pit_parser_free(f->parser);
  free(f->buf);
  free(f->path);
  memset(f, 0, sizeof *f);
  f->fd = -1;
}
