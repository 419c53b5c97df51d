/* threads.c — one thread count for every kernel library the nn module uses:
 * OpenMP (oneDNN's runtime and our own loops) and OpenBLAS's own pool. */
#include <omp.h>

#include "pitstop/nn.h"

void openblas_set_num_threads(int num_threads); /* from libopenblas (cblas.h not needed) */

void pit_nn_set_threads(int threads) {
  if (threads < 1)
    threads = 1;
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}
