/* test_sampler.c — the sampler's permutation (a permutation, deterministic in
 * (seed, epoch), different per epoch and seed), batch boundaries and drop_last,
 * save/restore mid-epoch (also into a fresh sampler, as at another world size),
 * rank slices tiling global batches, and pit_shares_split's properties. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/data.h"

static int is_perm(const int64_t *p, int64_t n) {
  char *seen = calloc((size_t)n, 1);
  int ok = 1;
  for (int64_t i = 0; i < n && ok; i++) {
    if (p[i] < 0 || p[i] >= n || seen[p[i]])
      ok = 0;
    else
      seen[p[i]] = 1;
  }
  free(seen);
  return ok;
}

/* The whole epoch's indices, batch after batch. */
static void epoch_seq(struct pit_sampler *s, int64_t *out, int64_t *nout, int64_t *nbatches) {
  int64_t e0 = s->st.epoch, k = 0, b = 0;
  while (s->st.epoch == e0) {
    const int64_t *idx;
    int64_t cnt, ep, bt;
    pit_sampler_next(s, &idx, &cnt, &ep, &bt);
    CHECK(ep == e0 && bt == b, "batch numbering %lld/%lld", (long long)ep, (long long)bt);
    memcpy(out + k, idx, sizeof(int64_t) * (size_t)cnt);
    k += cnt;
    b++;
  }
  *nout = k;
  *nbatches = b;
}

static void test_perm(void) {
  struct pit_sampler a, b;
  struct pit_err e;
  int64_t n = 1003, B = 64;
  CHECK(pit_sampler_init(&a, n, B, 42, 0, &e) == 0, "init: %s", e.msg);
  CHECK(pit_sampler_init(&b, n, B, 42, 0, &e) == 0, "init: %s", e.msg);
  CHECK(pit_sampler_batches_per_epoch(&a) == 16, "batches %lld",
        (long long)pit_sampler_batches_per_epoch(&a));
  int64_t *s0 = malloc(sizeof(int64_t) * n), *s1 = malloc(sizeof(int64_t) * n),
          *t0 = malloc(sizeof(int64_t) * n), k, nb;
  epoch_seq(&a, s0, &k, &nb);
  CHECK(k == n && nb == 16 && is_perm(s0, n), "epoch 0 is a permutation of all samples");
  int64_t fixed = 0;
  for (int64_t i = 0; i < n; i++)
    fixed += s0[i] == i;
  CHECK(fixed < 10, "epoch 0 is shuffled (%lld fixed points)", (long long)fixed);
  CHECK(a.st.epoch == 1 && a.st.batch == 0, "after the last batch the state is (1, 0)");
  epoch_seq(&a, s1, &k, &nb);
  CHECK(is_perm(s1, n) && memcmp(s0, s1, sizeof(int64_t) * n) != 0, "epoch 1 differs");
  epoch_seq(&b, t0, &k, &nb);
  CHECK(memcmp(s0, t0, sizeof(int64_t) * n) == 0, "same seed, same epoch 0");
  pit_sampler_release(&b);
  CHECK(pit_sampler_init(&b, n, B, 43, 0, &e) == 0, "init");
  epoch_seq(&b, t0, &k, &nb);
  CHECK(memcmp(s0, t0, sizeof(int64_t) * n) != 0, "other seed, other order");
  pit_sampler_release(&b);
  /* the permutation depends on the batch size only through the cut into batches */
  CHECK(pit_sampler_init(&b, n, 100, 42, 0, &e) == 0, "init");
  epoch_seq(&b, t0, &k, &nb);
  CHECK(nb == 11 && memcmp(s0, t0, sizeof(int64_t) * n) == 0, "same order with B = 100");
  pit_sampler_release(&b);
  /* drop_last */
  CHECK(pit_sampler_init(&b, n, B, 42, 1, &e) == 0, "init");
  CHECK(pit_sampler_batches_per_epoch(&b) == 15, "drop_last batches");
  epoch_seq(&b, t0, &k, &nb);
  CHECK(k == 15 * 64 && nb == 15 && memcmp(s0, t0, sizeof(int64_t) * k) == 0,
        "drop_last drops only the short batch");
  pit_sampler_release(&b);
  /* exact multiple */
  CHECK(pit_sampler_init(&b, 128, 64, 1, 0, &e) == 0 && pit_sampler_batches_per_epoch(&b) == 2,
        "exact multiple");
  pit_sampler_release(&b);
  pit_sampler_release(&a);
  free(s0);
  free(s1);
  free(t0);
}

static void test_restore(void) {
  struct pit_sampler a, b;
  struct pit_err e;
  int64_t n = 517, B = 50;
  CHECK(pit_sampler_init(&a, n, B, 7, 0, &e) == 0, "init");
  const int64_t *idx;
  int64_t cnt, ep, bt;
  for (int i = 0; i < 23; i++) /* 2 epochs of 11 batches + 1 */
    pit_sampler_next(&a, &idx, &cnt, &ep, &bt);
  struct pit_sampler_state saved = a.st;
  CHECK(saved.epoch == 2 && saved.batch == 1, "state %lld/%lld", (long long)saved.epoch,
        (long long)saved.batch);
  /* b: a fresh sampler (as another world size would build), restored */
  CHECK(pit_sampler_init(&b, n, 999, 1, 0, &e) == 0, "init b");
  CHECK(pit_sampler_restore(&b, &saved, &e) == 0, "restore: %s", e.msg);
  struct pit_sampler c = {0}; /* never initialised */
  CHECK(pit_sampler_restore(&c, &saved, &e) == 0, "restore into a zeroed sampler: %s", e.msg);
  int same = 1;
  for (int i = 0; i < 40; i++) {
    const int64_t *ia, *ib, *ic;
    int64_t ca, cb, cc, ea, eb, ec, ba, bb, bc;
    pit_sampler_next(&a, &ia, &ca, &ea, &ba);
    pit_sampler_next(&b, &ib, &cb, &eb, &bb);
    pit_sampler_next(&c, &ic, &cc, &ec, &bc);
    if (ca != cb || ca != cc || ea != eb || ea != ec || ba != bb || ba != bc ||
        memcmp(ia, ib, sizeof(int64_t) * ca) || memcmp(ia, ic, sizeof(int64_t) * ca))
      same = 0;
  }
  CHECK(same, "restored samplers continue with the identical sequence of global batches");
  /* the state after the last batch of an epoch, and bad states */
  struct pit_sampler_state st = saved;
  st.batch = 11; /* == batches per epoch: next epoch */
  CHECK(pit_sampler_restore(&b, &st, &e) == 0 && b.st.epoch == 3 && b.st.batch == 0,
        "batch == batches per epoch normalises to the next epoch");
  st.batch = 12;
  CHECK(pit_sampler_restore(&b, &st, &e) == PIT_EARG, "batch beyond the epoch");
  st = saved;
  st.n = 600;
  CHECK(pit_sampler_restore(&b, &st, &e) == PIT_ESTATE && strstr(e.msg, "600"),
        "dataset size changed: %s", e.msg);
  st = saved;
  st.global_batch = 0;
  CHECK(pit_sampler_restore(&b, &st, &e) == PIT_EARG, "zero batch");
  st = saved;
  st.epoch = -1;
  CHECK(pit_sampler_restore(&b, &st, &e) == PIT_EARG, "negative epoch");
  pit_sampler_release(&a);
  pit_sampler_release(&b);
  pit_sampler_release(&c);
  CHECK(pit_sampler_init(&a, 0, 4, 1, 0, &e) == PIT_EARG, "empty dataset");
  CHECK(pit_sampler_init(&a, 10, 0, 1, 0, &e) == PIT_EARG, "zero batch");
  CHECK(pit_sampler_init(&a, 10, 11, 1, 1, &e) == PIT_EARG, "drop_last with B > n");
  CHECK(pit_sampler_init(&a, 10, 11, 1, 0, &e) == 0 && pit_sampler_batches_per_epoch(&a) == 1,
        "B > n without drop_last: one short batch");
  pit_sampler_release(&a);
}

static int64_t sum(const int64_t *v, int n) {
  int64_t s = 0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

static void test_shares(void) {
  int64_t sh[64];
  double w[64];
  /* equal weights */
  for (int r = 0; r < 3; r++)
    w[r] = 1;
  pit_shares_split(10, w, 3, sh);
  CHECK(sh[0] == 4 && sh[1] == 3 && sh[2] == 3, "10/3: %lld %lld %lld (ties to lower rank)",
        (long long)sh[0], (long long)sh[1], (long long)sh[2]);
  /* proportional, largest remainder: 100 · (1, 2, 3.5)/6.5 = 15.38, 30.77, 53.85 → 15 31 54 */
  w[0] = 1, w[1] = 2, w[2] = 3.5;
  pit_shares_split(100, w, 3, sh);
  CHECK(sh[0] == 15 && sh[1] == 31 && sh[2] == 54, "largest remainder: %lld %lld %lld",
        (long long)sh[0], (long long)sh[1], (long long)sh[2]);
  /* a zero weight still gets one sample when count ≥ nranks */
  w[0] = 0, w[1] = 1, w[2] = 1;
  pit_shares_split(8, w, 3, sh);
  CHECK(sh[0] == 1 && sh[1] + sh[2] == 7 && sh[1] >= 3, "zero weight: %lld %lld %lld",
        (long long)sh[0], (long long)sh[1], (long long)sh[2]);
  /* count < nranks: some get 0, the sum holds */
  pit_shares_split(2, w, 3, sh);
  CHECK(sum(sh, 3) == 2, "count < nranks sum");
  /* bad weights: equal split */
  w[0] = -1, w[1] = NAN, w[2] = 1;
  pit_shares_split(9, w, 3, sh);
  CHECK(sh[0] == 3 && sh[1] == 3 && sh[2] == 3, "bad weights → equal");
  w[0] = w[1] = w[2] = 0;
  pit_shares_split(9, w, 3, sh);
  CHECK(sh[0] == 3 && sh[1] == 3 && sh[2] == 3, "all-zero weights → equal");
  /* random properties */
  uint64_t x = 12345;
  int bad_sum = 0, bad_min = 0, bad_prop = 0;
  for (int t = 0; t < 3000; t++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int nr = 1 + (int)(x >> 59) % 33;
    int64_t count = (int64_t)((x >> 20) % 600);
    double tot = 0;
    for (int r = 0; r < nr; r++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      w[r] = (x >> 40) % 7 == 0 ? 0.0 : (double)((x >> 33) % 1000) / 100.0;
      tot += w[r];
    }
    if (tot == 0)
      w[0] = tot = 1;
    pit_shares_split(count, w, nr, sh);
    if (sum(sh, nr) != count)
      bad_sum++;
    for (int r = 0; r < nr; r++) {
      if (sh[r] < 0 || (count >= nr && sh[r] < 1))
        bad_min++;
      /* within one sample of the ideal share, except where the floor of 1 moved samples */
      double q = count * w[r] / tot;
      if (count >= 4 * nr && fabs(sh[r] - q) >= 1.0 + nr)
        bad_prop++;
    }
  }
  CHECK(bad_sum == 0, "%d splits do not sum to count", bad_sum);
  CHECK(bad_min == 0, "%d shares below the minimum", bad_min);
  CHECK(bad_prop == 0, "%d shares far from proportional", bad_prop);
  /* deterministic */
  int64_t s2[64];
  w[0] = 0.3, w[1] = 0.3, w[2] = 0.4;
  pit_shares_split(7, w, 3, sh);
  pit_shares_split(7, w, 3, s2);
  CHECK(!memcmp(sh, s2, 3 * sizeof(int64_t)), "deterministic");
}

/* Rank slices of each global batch, concatenated in rank order, are the batch,
 * for several world sizes and uneven weights. */
static void test_slices(void) {
  struct pit_sampler s;
  struct pit_err e;
  CHECK(pit_sampler_init(&s, 1000, 96, 3, 0, &e) == 0, "init");
  int worlds[] = {1, 2, 3, 5, 8, 96, 97};
  int ok = 1;
  for (int b = 0; b < 12; b++) {
    const int64_t *idx;
    int64_t cnt, ep, bt, cat[128];
    pit_sampler_next(&s, &idx, &cnt, &ep, &bt);
    for (size_t wi = 0; wi < sizeof worlds / sizeof worlds[0]; wi++) {
      int nr = worlds[wi];
      double w[128];
      int64_t sh[128], k = 0;
      for (int r = 0; r < nr; r++)
        w[r] = 1.0 + (r * 37 % 11);
      pit_shares_split(cnt, w, nr, sh);
      for (int r = 0; r < nr; r++) {
        int64_t off, len;
        pit_shares_slice(sh, nr, r, &off, &len);
        if (off != k)
          ok = 0;
        memcpy(cat + k, idx + off, sizeof(int64_t) * (size_t)len);
        k += len;
      }
      if (k != cnt || memcmp(cat, idx, sizeof(int64_t) * (size_t)cnt))
        ok = 0;
    }
  }
  CHECK(ok, "slices tile every global batch");
  pit_sampler_release(&s);
}

int main(void) {
  test_perm();
  test_restore();
  test_shares();
  test_slices();
  return check_done();
}
