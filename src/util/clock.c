/* clock.c — the monotonic clock every duration in pitstop is read from. */
#include "pitstop/util.h"

#include <time.h>

double pit_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
