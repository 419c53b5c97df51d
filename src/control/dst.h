/* dst.h — private to src/control/ and its tests: the deterministic simulation of
 * the controller (dst.c, docs/dst.md). One seed is one run of the real pit_run
 * (controller.c, ctl_*.c) against a simulated clock, provider and workload, all
 * drawn from one PRNG seeded by the seed, with faults (provider failures and
 * hangs, reclaims with and without notice, nodes lost, workloads that crash,
 * hang or exit anywhere, the controller killed at any effect and run again,
 * disk full at any write, clock jumps), then checked against the invariants.
 *
 * Invariants of the simulation itself:
 *  - a seed alone decides everything (same seed: same trace, same digest); no
 *    real process, no sleeping, no wall clock is read;
 *  - every file it makes is under opts.dir, which it empties first. */
#ifndef PIT_CONTROL_DST_H
#define PIT_CONTROL_DST_H

#include <stdint.h>
#include <stdio.h>

#include "pitstop/util.h"

struct pit_dst_opts {
  uint64_t seed;
  const char *dir;          /* this seed's scratch directory (made, emptied, left for a look) */
  int faults;               /* 0: an uninterrupted run (no fault at all); 1: the seed's faults */
  int broken_held;          /* test only: the controller's held-record rule dropped */
  FILE *trace;              /* every event of the seed, one line each (NULL: none) */
};

struct pit_dst_result {
  uint64_t digest;          /* FNV-1a of the seed's whole trace: same seed, same digest */
  int ok;                   /* 1: every invariant holds */
  char violation[1024];     /* the first invariant broken ("" when ok) */
  int controllers;          /* pit_run calls (a killed controller is run again) */
  int kills, faults;        /* controllers killed; faults injected in all */
  int64_t steps;            /* the job's steps */
  int gens;                 /* generations in the run log */
  int ended_error;          /* the run ended with an error (said: its message below) */
  char error[512];
  double sim_s;             /* simulated seconds */
  int unbilled;             /* nodes exempt from the exact bill (not recordable: docs/dst.md) */
};

/* Runs one seed: 0 (the result says whether the invariants hold), or < 0 when
 * the simulation itself could not run (its scratch directory). */
int pit_dst_run(const struct pit_dst_opts *o, struct pit_dst_result *r, struct pit_err *e);
/* A scratch directory for seeds: under /dev/shm where it can be written (no disk
 * in the loop), else $TMPDIR or /tmp; named for the process. */
void pit_dst_scratch(char *buf, size_t n);
/* Removes a scratch directory and everything under it. */
void pit_dst_remove(const char *dir);

#endif
