/* rng.c — deterministic random numbers: splitmix64 seeds xoshiro256**.
 * Same seed, same sequence, on every machine and thread count. */
#include <math.h>

#include "pitstop/nn.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void pit_rng_seed(struct pit_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t pit_rng_next(struct pit_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double pit_rng_uniform(struct pit_rng *r) { return (double)(pit_rng_next(r) >> 11) * 0x1.0p-53; }

double pit_rng_normal(struct pit_rng *r) {
  double u1 = pit_rng_uniform(r), u2 = pit_rng_uniform(r);
  if (u1 < 1e-300)
    u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
