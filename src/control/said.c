/* said.c — what a failed generation's log says of the failure: the one line (or,
 * for torchrun, the root cause its failure report gives) worth quoting in the
 * controller's error message. A user's script under torchrun fails with the
 * script's own exception on a "[defaultN]:" line, then torchrun's traceback and
 * its "ChildFailedError" report; the report's "error_file: <N/A>" has "rror" in
 * it and was what the message quoted (fault trial 2026-11-29: a rank SIGKILLed
 * read "the workload said: error_file: <N/A>").
 * Also: torchrun's line saying one of its workers failed, and the restarts a
 * command line gives torchrun (the controller stops waiting for a torchrun that
 * has given up: ctl_loop.c).
 * Invariant: pure over the bytes given; out always NUL-terminated. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/said.h"

struct span {
  const char *p;
  size_t n;
};

static int starts(struct span s, const char *w) {
  size_t l = strlen(w);
  return s.n >= l && memcmp(s.p, w, l) == 0;
}

static int has(struct span s, const char *w) { return memmem(s.p, s.n, w, strlen(w)) != NULL; }

static struct span trim(struct span s) {
  while (s.n && (*s.p == ' ' || *s.p == '\t'))
    s.p++, s.n--;
  while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\r'))
    s.n--;
  return s;
}

/* past a leading "[...] " tag (gen-N.log's node and stream), or "[...]:" (torchrun's --tee) */
static struct span untag(struct span s, char sep, int *found) {
  *found = 0;
  if (s.n && s.p[0] == '[') {
    const char *c = memchr(s.p, ']', s.n);
    if (c && c + 1 < s.p + s.n && c[1] == sep) {
      size_t k = (size_t)(c + 2 - s.p);
      s.p += k, s.n -= k;
      *found = 1;
    }
  }
  return s;
}

/* torchrun's report field "NAME : VALUE" (spaces before the colon), its value */
static int field(struct span s, const char *name, struct span *v) {
  if (!starts(s, name))
    return 0;
  struct span r = {s.p + strlen(name), s.n - strlen(name)};
  r = trim(r);
  if (!r.n || *r.p != ':')
    return 0;
  r.p++, r.n--;
  *v = trim(r);
  return 1;
}

/* torchrun's root cause: rank, exit code, traceback field */
struct cause {
  struct span rank, code, tb;
};

static void cause_say(const struct cause *c, char *out, size_t n) {
  struct span tb = c->tb;
  int show_tb = tb.n && !starts(tb, "To enable traceback") && !starts(tb, "<N/A>");
  char who[100];
  if (c->rank.n)
    snprintf(who, sizeof who, "rank %.*s", (int)(c->rank.n < 80 ? c->rank.n : 80), c->rank.p);
  else
    snprintf(who, sizeof who, "a rank");
  snprintf(out, n, "torchrun: %s exited with code %.*s%s%.*s", who, (int)(c->code.n < 80 ? c->code.n : 80), c->code.p,
           show_tb ? ": " : "", show_tb ? (int)(tb.n < 400 ? tb.n : 400) : 0, show_tb ? tb.p : "");
}

/* the line s into out (at most 600 characters); returns kind */
static int quote(struct span s, int kind, char *out, size_t n) {
  snprintf(out, n, "%.*s", (int)(s.n < 600 ? s.n : 600), s.p);
  return kind;
}

int ctl_failure_said(const char *log, size_t len, char *out, size_t n) {
  struct span pit = {0}, worker = {0}, other = {0}, rank = {0}, v;
  struct cause last = {0}, sig = {0}, *cur = NULL; /* the last report; the first whose rank a signal ended */
  out[0] = 0;
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && log[j] != '\n')
      j++;
    int tagged, w;
    struct span s = untag((struct span){log + i, j - i}, ' ', &tagged);
    s = untag(s, ':', &w); /* torchrun --tee: "[default0]:" */
    struct span t = trim(s);
    if (starts(s, "pitstop: warning: "))
      ; /* node-exec's note, of what the workload may not need (GLOO_SOCKET_IFNAME) */
    else if (starts(s, "pitstop: "))
      pit = s;
    else if (w && has(t, "rror"))
      worker = t;
    else if (field(t, "rank", &v))
      rank = v;
    else if (field(t, "exitcode", &v)) {
      cur = !sig.code.n && v.n && *v.p == '-' ? &sig : &last;
      *cur = (struct cause){rank, v, {0}};
      if (cur == &sig)
        last = sig;
    } else if (field(t, "traceback", &v)) {
      if (cur)
        cur->tb = v;
      if (cur == &sig)
        last.tb = v;
      cur = NULL;
    } else if (t.n && *t.p != '{' && has(t, "rror") && !starts(t, "error_file") && !has(t, "ChildFailedError") &&
               !starts(t, "File \"") && /* a traceback's frame names a file, not the error */
               !(starts(t, "srun: error: ") && has(t, ": task ")) && /* srun restating a task's exit */
               /* slurmstepd's record of a step cancelled without a reason (its node's allocation
                * cancelled, or its srun ended by pitstop's stop): pitstop names the cause */
               !(starts(t, "slurmstepd") && has(t, "*** STEP ") && has(t, " CANCELLED AT ") && !has(t, " DUE TO ")))
      other = t;
    i = j + 1;
  }
  /* a pitstop line first; then a rank a signal ended (the others' errors follow from it: "Connection
   * closed by peer"); then the script's own error; then torchrun's last root cause; then any error line */
  if (pit.n)
    return quote(pit, CTL_SAID_PITSTOP, out, n);
  if (sig.code.n) {
    cause_say(&sig, out, n);
    return CTL_SAID_SIGNAL;
  }
  if (worker.n)
    return quote(worker, CTL_SAID_SCRIPT, out, n);
  if (last.code.n) {
    cause_say(&last, out, n);
    return CTL_SAID_TORCHRUN;
  }
  if (other.n)
    return quote(other, CTL_SAID_OTHER, out, n);
  return CTL_SAID_NONE;
}

int ctl_said_worker_failed(const char *line, size_t len) {
  struct span s = {line, len};
  return has(s, "failed (exitcode: ") && has(s, " local_rank: ");
}

int ctl_said_torchrun_restarts(char *const *argv) {
  int at = -1;
  for (int i = 0; argv && argv[i] && at < 0; i++) {
    const char *base = strrchr(argv[i], '/');
    base = base ? base + 1 : argv[i];
    if (!strcmp(base, "torchrun") || !strcmp(argv[i], "torch.distributed.run") ||
        !strcmp(argv[i], "torch.distributed.launch"))
      at = i + 1;
  }
  if (at < 0)
    return -1;
  int restarts = 0;
  for (int i = at; argv[i]; i++) {
    const char *a = argv[i], *prev = argv[i - 1];
    size_t l = strlen(a);
    /* torchrun's options end at the script: a name ending in .py, or a word that is no option's value */
    if ((l > 3 && !strcmp(a + l - 3, ".py")) || (a[0] != '-' && (i == at || prev[0] != '-' || strchr(prev, '='))))
      break;
    if (!strncmp(a, "--max_restarts", 14) || !strncmp(a, "--max-restarts", 14)) {
      const char *v = a[14] == '=' ? a + 15 : a[14] == 0 ? argv[i + 1] : NULL;
      if (v)
        restarts = atoi(v);
    }
  }
  return restarts;
}
