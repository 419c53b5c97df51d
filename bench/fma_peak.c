/* fma_peak.c — this machine's fp32 FMA peak: AVX-512 fused multiply-adds on
 * independent register chains (enough to cover FMA latency x ports), timed on
 * 1 and on N threads (OpenMP). Prints one line per thread count:
 *   threads=T gflops=G
 * (best of several repetitions; 1 FMA on 16 floats = 32 flops). */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "pitstop/util.h"

#define CHAINS 16

static float run(long iters) {
  __m512 acc[CHAINS];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < CHAINS; c++)
    acc[c] = _mm512_set1_ps((float)c);
  for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
    for (int c = 0; c < CHAINS; c++)
      acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 s = acc[0];
  for (int c = 1; c < CHAINS; c++)
    s = _mm512_add_ps(s, acc[c]);
  return _mm512_reduce_add_ps(s);
}

int main(int argc, char **argv) {
  int maxt = argc > 1 ? atoi(argv[1]) : omp_get_num_procs();
  const long iters = 20000000; /* 20M x 16 chains x 32 flops = 10.24 GFLOP per thread */
  volatile float sink = 0;
  for (int t = 1; t <= maxt; t++) {
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = pit_now();
#pragma omp parallel num_threads(t)
      {
        float r = run(iters);
#pragma omp atomic
        sink += r;
      }
      double dt = pit_now() - t0;
      double g = (double)t * iters * CHAINS * 32 / dt / 1e9;
      if (g > best)
        best = g;
    }
    printf("threads=%d gflops=%.1f\n", t, best);
  }
  return sink == 12345.0f ? 1 : 0;
}
