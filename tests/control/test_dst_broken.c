/* test_dst_broken.c — the deterministic simulation can fail: with the controller's
 * held-record rule dropped on purpose (the test-only switch of world.h: iteration
 * records written before a checkpoint covers them), the invariants catch it within
 * 1,000 seeds; the failing seed is printed with its replay command, and the same
 * seed holds every invariant with the rule in place.
 * Invariant: the test passes only when a violation is found. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "control/dst.h"

int main(void) {
  char dir[1024], state[1100];
  pit_dst_scratch(dir, sizeof dir);
  snprintf(state, sizeof state, "%s/state-home", dir);
  setenv("XDG_STATE_HOME", state, 1);
  uint64_t caught = 0;
  struct pit_dst_result r;
  for (uint64_t s = 1; s <= 1000 && !caught; s++) {
    struct pit_dst_opts o = {s, dir, 1, 1, NULL};
    struct pit_err e = {0};
    CHECK(pit_dst_run(&o, &r, &e) == 0, "seed %" PRIu64 ": %s", s, e.msg);
    if (!r.ok)
      caught = s;
  }
  CHECK(caught > 0, "the held-record rule dropped, and 1,000 seeds found nothing");
  if (caught) {
    printf("seed %" PRIu64 " catches the broken held-record rule: %s\n  replay: build/dst --seed %" PRIu64
           " --broken-held --trace -\n",
           caught, r.violation, caught);
    CHECK(strstr(r.violation, "held-record") || strstr(r.violation, "twice") || strstr(r.violation, "samples"),
          "caught by another invariant: %s", r.violation);
    struct pit_dst_opts o = {caught, dir, 1, 0, NULL};
    struct pit_err e = {0};
    CHECK(pit_dst_run(&o, &r, &e) == 0 && r.ok, "seed %" PRIu64 " with the rule in place: %s", caught, r.violation);
  }
  pit_dst_remove(dir);
  return check_done();
}
