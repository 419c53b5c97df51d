/* shrink.c — the controller's request to shrink a stopped generation in place
 * (pitstop run, docs/protocol.md "In-place shrink"): which ranks go on.
 *
 * The request is a file the controller names in PITSTOP_SHRINK and writes
 * (atomically) before it asks for the stop: one line
 *   size=N keep=R,R,...
 * N the world it is for, the kept ranks in increasing order, at least one, each
 * below N. Rank 0 reads it and broadcasts the verdict, so every rank takes the
 * same one (the split that follows is collective).
 *
 * Invariants: a request for another world size, an absent file or an unset
 * PITSTOP_SHRINK is no request (the generation ends as before: the controller
 * relaunches); a malformed file is an error naming it and its fault. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_impl.h"

/* The request's text parsed for a world of size ranks into keep[] (0/1 per
 * rank): 1, or < 0 with e set. */
static int parse(const char *path, const char *s, int size, int *keep, struct pit_err *e) {
  long n = 0;
  int at = 0;
  if (sscanf(s, "size=%ld keep=%n", &n, &at) != 1 || at == 0 || n < 1)
    return pit_err_set(e, PIT_EARG, "%s: not a shrink request (want 'size=N keep=R,R,...')", path);
  if (n != size)
    return 0;
  const char *p = s + at;
  long prev = -1;
  int kept = 0;
  for (;;) {
    char *end;
    errno = 0;
    long r = strtol(p, &end, 10);
    if (end == p || errno || r <= prev || r >= n)
      return pit_err_set(e, PIT_EARG, "%s: bad rank list '%.60s' (increasing ranks below %ld)", path, s + at, n);
    keep[r] = 1;
    kept++;
    prev = r;
    if (*end != ',') {
      p = end;
      break;
    }
    p = end + 1;
  }
  if (*p)
    return pit_err_set(e, PIT_EARG, "%s: unexpected text after the rank list", path);
  return kept > 0 ? 1 : pit_err_set(e, PIT_EARG, "%s: no rank kept", path);
}

int pit_train_shrink_request(const char *path, struct pit_dist *d, const struct pit_train_result *res, int *keep,
                             char *resume, size_t nresume, struct pit_err *e) {
  *keep = 1;
  if (!path || !path[0] || d->size <= 1)
    return 0;
  /* [0]: 1 request, 0 none, -1 error; [1 + r]: rank r kept; then rank 0's checkpoint (the only
   * rank that writes one), which every rank that goes on resumes from */
  size_t nv = (size_t)d->size + 1, bytes = nv * sizeof(int) + sizeof res->checkpoint;
  int *v = calloc(1, bytes);
  if (!v)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  char *ckpt = (char *)(v + nv);
  int rc = 0;
  struct pit_err e0 = {0};
  if (d->rank == 0) {
    FILE *f = fopen(path, "r");
    char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (!f && errno != ENOENT) {
      v[0] = -1;
      pit_err_errno(&e0, PIT_EIO, "cannot open the shrink request '%s'", path);
    } else if (f && ferror(f)) {
      v[0] = -1;
      pit_err_errno(&e0, PIT_EIO, "cannot read the shrink request '%s'", path);
    } else if (f) {
      while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) /* the line's end */
        buf[--n] = 0;
      v[0] = parse(path, buf, d->size, v + 1, &e0);
    }
    if (f)
      fclose(f);
    if (v[0] == 1 && !res->checkpoint[0])
      v[0] = 0; /* nothing to go on from (no --out): the generation ends */
    snprintf(ckpt, sizeof res->checkpoint, "%s", res->checkpoint);
  }
  if ((rc = pit_dist_bcast(d, v, bytes, e)) == 0) {
    if (v[0] < 0)
      rc = d->rank == 0 ? (*e = e0, e->code) : pit_err_set(e, PIT_EARG, "rank 0 could not read the shrink request");
    else if (v[0] == 1) {
      *keep = v[1 + d->rank];
      snprintf(resume, nresume, "%s", ckpt);
      rc = 1;
    }
  }
  free(v);
  return rc;
}
