/* said.h — private to src/control/: what a failed generation's log says of the
 * failure (said.c), read by the controller for its error message. */
#ifndef PIT_CONTROL_SAID_H
#define PIT_CONTROL_SAID_H

#include <stddef.h>

/* The line of log[0..len) (gen-N.log: "[NODE out|err] " tags on each line) that
 * says best why the workload failed, into out ("" when none):
 *  1. the last "pitstop: " line (node-exec's own errors; not its warnings);
 *  2. torchrun's root cause where a signal ended a rank (its ChildFailedError
 *     report: rank, exit code < 0, the traceback field): the other ranks' errors
 *     follow from it ("Connection closed by peer");
 *  3. the last error line the script's processes printed (torchrun's
 *     "[defaultN]:" prefix: "RuntimeError: ...", "...Error: ...");
 *  4. torchrun's last root cause (the traceback field unless it is only
 *     torchrun's advice);
 *  5. the last other line with "rror" in it, torchrun's report, a JSON
 *     line and Slurm's after-effects aside (srun restating a task's exit,
 *     slurmstepd's "*** STEP N.M ON NODE CANCELLED AT T ***" without a reason).
 * A traceback's frame lines ("File \"...\", line N") are never quoted. Returns
 * which of the above it found (CTL_SAID_NONE: nothing, out ""). Pure: no I/O. */
enum ctl_said { CTL_SAID_NONE, CTL_SAID_PITSTOP, CTL_SAID_SIGNAL, CTL_SAID_SCRIPT, CTL_SAID_TORCHRUN, CTL_SAID_OTHER };
int ctl_failure_said(const char *log, size_t len, char *out, size_t n);

/* 1 when line is torchrun's report that a worker of its node failed ("failed
 * (exitcode: 1) local_rank: 0 (pid: N) of binary: ..."). A torchrun left no
 * restarts then stops its workers and waits at its exit barrier (300 s) for
 * the other nodes' agents, whose workers may hang (a collective that never
 * completes) instead of failing: the controller fails the generation itself. */
int ctl_said_worker_failed(const char *line, size_t len);
/* The restarts argv gives torchrun (--max_restarts / --max-restarts, 0 when
 * not given); -1 when argv runs no torchrun (torchrun, python -m
 * torch.distributed.run or .launch). */
int ctl_said_torchrun_restarts(char *const *argv);

#endif
