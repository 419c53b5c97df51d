/* sampler.c — the sequence of global batches.
 *
 * Shuffle: the permutation of epoch e is a Fisher–Yates shuffle of the identity
 * [0, n): for i = n-1 down to 1, j = uniform integer in [0, i], swap p[i], p[j].
 * The random words come from the counter-based stream of data_impl.h keyed by
 * key(seed, e) = mix64(mix64(seed ^ C) + (e + 16)·golden), word k =
 * mix64(key + (k+1)·golden) (mix64 = the splitmix64 finaliser); a uniform integer
 * in [0, m) is r mod m for the first word r with r ≥ 2^64 mod m (rejection: no
 * modulo bias). So the permutation depends on (seed, e) only — not on the
 * world size, the rank, or what happened before — and a saved state restores by
 * recomputing it.
 *
 * Global batch b of an epoch is perm[b·B, min((b+1)·B, n)); with drop_last the
 * short final batch is skipped. State (epoch, batch) names the NEXT batch; after
 * handing out the last batch of an epoch the state moves to (epoch+1, 0).
 */
#include <stdlib.h>
#include <string.h>

#include "data/data_impl.h"

static void draw_perm(int64_t *p, int64_t n, uint64_t seed, int64_t epoch) {
  uint64_t key = pit__key(seed, (uint64_t)epoch + 16), k = 0;
  for (int64_t i = 0; i < n; i++)
    p[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    uint64_t m = (uint64_t)i + 1, floor = (0 - m) % m, r;
    do
      r = pit__stream(key, k++);
    while (r < floor);
    int64_t j = (int64_t)(r % m), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

int64_t pit_sampler_batches_per_epoch(const struct pit_sampler *s) {
  const struct pit_sampler_state *st = &s->st;
  if (st->global_batch <= 0)
    return 0;
  return st->drop_last ? st->n / st->global_batch
                       : (st->n + st->global_batch - 1) / st->global_batch;
}

static int check_state(const struct pit_sampler_state *st, struct pit_err *e) {
  if (st->n <= 0)
    return pit_err_set(e, PIT_EARG, "sampler over an empty dataset");
  if (st->global_batch <= 0)
    return pit_err_set(e, PIT_EARG, "global batch must be >= 1, not %lld",
                       (long long)st->global_batch);
  if (st->drop_last && st->global_batch > st->n)
    return pit_err_set(e, PIT_EARG, "global batch %lld is larger than the dataset (%lld samples) "
                       "and the short batch is dropped: no batch per epoch",
                       (long long)st->global_batch, (long long)st->n);
  return 0;
}

int pit_sampler_init(struct pit_sampler *s, int64_t n, int64_t global_batch, uint64_t seed,
                     int drop_last, struct pit_err *e) {
  memset(s, 0, sizeof *s);
  struct pit_sampler_state st = {.seed = seed, .global_batch = global_batch, .n = n,
                                 .drop_last = drop_last ? 1 : 0};
  int rc = check_state(&st, e);
  if (rc)
    return rc;
  if ((uint64_t)n > SIZE_MAX / sizeof(int64_t) || !(s->perm = malloc(sizeof(int64_t) * (size_t)n)))
    return pit_err_set(e, PIT_ENOMEM, "out of memory for a permutation of %lld samples",
                       (long long)n);
  s->st = st;
  draw_perm(s->perm, n, seed, 0);
  s->perm_epoch = 0;
  return 0;
}

void pit_sampler_release(struct pit_sampler *s) {
  if (!s)
    return;
  free(s->perm);
  memset(s, 0, sizeof *s);
}

void pit_sampler_next(struct pit_sampler *s, const int64_t **idx, int64_t *count, int64_t *epoch,
                      int64_t *batch) {
  struct pit_sampler_state *st = &s->st;
  int64_t bpe = pit_sampler_batches_per_epoch(s);
  if (!s->perm || bpe <= 0) { /* not initialised: an empty batch */
    *idx = NULL;
    *count = 0;
    if (epoch)
      *epoch = st->epoch;
    if (batch)
      *batch = st->batch;
    return;
  }
  if (st->batch >= bpe) { /* a state that was not normalised (e.g. hand-made) */
    st->epoch++;
    st->batch = 0;
  }
  if (s->perm_epoch != st->epoch) {
    draw_perm(s->perm, st->n, st->seed, st->epoch);
    s->perm_epoch = st->epoch;
  }
  int64_t off = st->batch * st->global_batch, len = st->n - off;
  if (len > st->global_batch)
    len = st->global_batch;
  *idx = s->perm + off;
  *count = len;
  if (epoch)
    *epoch = st->epoch;
  if (batch)
    *batch = st->batch;
  if (++st->batch >= bpe) {
    st->epoch++;
    st->batch = 0;
  }
}

int pit_sampler_restore(struct pit_sampler *s, const struct pit_sampler_state *st,
                        struct pit_err *e) {
  int rc = check_state(st, e);
  if (rc)
    return rc;
  if (s->perm && s->st.n && s->st.n != st->n)
    return pit_err_set(e, PIT_ESTATE, "saved sampler state is over %lld samples but the dataset "
                       "has %lld", (long long)st->n, (long long)s->st.n);
  if (st->epoch < 0 || st->batch < 0)
    return pit_err_set(e, PIT_EARG, "saved sampler state has negative epoch %lld or batch %lld",
                       (long long)st->epoch, (long long)st->batch);
  struct pit_sampler tmp = {.st = *st};
  int64_t bpe = pit_sampler_batches_per_epoch(&tmp);
  if (st->batch > bpe)
    return pit_err_set(e, PIT_EARG, "saved sampler state names batch %lld of an epoch of %lld",
                       (long long)st->batch, (long long)bpe);
  if (!s->perm) {
    if ((uint64_t)st->n > SIZE_MAX / sizeof(int64_t) ||
        !(s->perm = malloc(sizeof(int64_t) * (size_t)st->n)))
      return pit_err_set(e, PIT_ENOMEM, "out of memory for a permutation of %lld samples",
                         (long long)st->n);
  }
  s->st = *st;
  if (s->st.batch == bpe) {
    s->st.epoch++;
    s->st.batch = 0;
  }
  draw_perm(s->perm, s->st.n, s->st.seed, s->st.epoch);
  s->perm_epoch = s->st.epoch;
  return 0;
}
