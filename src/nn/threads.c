/* threads.c — one thread count for every kernel library the nn module uses:
 * OpenMP (oneDNN's runtime and our own loops). (OpenBLAS is not linked: oneDNN's own
 * GEMMs serve the linear layers, and OpenBLAS's thread pool spun at start-up of every
 * pitstop command, parse and summary included.)
 * It also sets flush-to-zero / denormals-are-zero in every OpenMP thread (as
 * torch.set_flush_denormal(True)): momentum and Adam buffers of parameters whose
 * gradient is zero (dead units) decay geometrically into denormals, and on this
 * CPU each denormal operation costs a microcode assist — measured: the SGD step of
 * the tutorial CNN grew from a few percent to 37-54% of a batch-4 iteration after
 * ~1000 iterations. Only values below 1.2e-38 are affected. */
#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "pitstop/nn.h"

static void flush_denormals(void) {
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15) | DAZ (bit 6) */
#endif
}

void pit_nn_set_threads(int threads) {
  if (threads < 1)
    threads = 1;
  omp_set_num_threads(threads);
  flush_denormals(); /* threads created later inherit it */
#pragma omp parallel num_threads(threads)
  flush_denormals();
}
