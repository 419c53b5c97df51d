/* test_said.c — ctl_failure_said (src/control/said.c) on generation logs shaped as
 * the controller writes them ("[NODE err] " tags): torchrun's failure report of a
 * rank killed by a signal (its root cause, not "error_file: <N/A>", which has "rror"
 * in it and was quoted before), a script's own exception under torchrun's --tee
 * ("[default0]:"), two nodes where one rank was killed and the other lost its peer (the
 * signal is the root cause, in either order), a "pitstop: " line first of all, mpirun's plain error lines,
 * JSON lines skipped, a traceback's frames never quoted (a SIGKILLed torchrun's survivor), srun's line
 * restating a task's exit skipped for the exception before it, and nothing to say. The torchrun report is the one Debian's
 * torch 1.13 printed in a fault trial (2026-11-29: SIGKILL of one rank). */
#include <string.h>

#include "check.h"
#include "control/said.h"

static const char *said(const char *log) {
  static char out[700];
  ctl_failure_said(log, strlen(log), out, sizeof out);
  return out;
}

#define REPORT(code, tb)                                                              \
  "[r.1 err] torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" \
  "[r.1 err] ======================================================\n"            \
  "[r.1 err] /work/ddp_snapshot.py FAILED\n"                                     \
  "[r.1 err] ------------------------------------------------------\n"          \
  "[r.1 err] Failures:\n"                                                        \
  "[r.1 err]   <NO_OTHER_FAILURES>\n"                                            \
  "[r.1 err] Root Cause (first observed failure):\n"                             \
  "[r.1 err] [0]:\n"                                                             \
  "[r.1 err]   time      : 2026-11-29_22:27:20\n"                                \
  "[r.1 err]   host      : localhost\n"                                          \
  "[r.1 err]   rank      : 1 (local_rank: 0)\n"                                  \
  "[r.1 err]   exitcode  : " code " (pid: 29509)\n"                                    \
  "[r.1 err]   error_file: <N/A>\n"                                              \
  "[r.1 err]   traceback : " tb "\n"                                             \
  "[r.1 err] ======================================================\n"

int main(void) {
  const char *frames = "[r.1 err] Traceback (most recent call last):\n"
                       "[r.1 err]   File \"/usr/lib/python3/dist-packages/torch/distributed/launcher/api.py\", "
                       "line 246, in launch_agent\n"
                       "[r.1 err]     raise ChildFailedError(\n";
  char log[4096];
  snprintf(log, sizeof log, "[r.0 out] [CPU0] Epoch 11 | Batchsize: 32 | Steps: 16\n%s%s", frames,
           REPORT("-9", "Signal 9 (SIGKILL) received by PID 29509"));
  const char *s = said(log);
  CHECK(strcmp(s, "torchrun: rank 1 (local_rank: 0) exited with code -9 (pid: 29509): Signal 9 (SIGKILL) received "
                  "by PID 29509") == 0,
        "a killed rank: %s", s);

  /* the script's own exception, then torchrun's report with its advice as the traceback */
  snprintf(log, sizeof log,
           "[r.0 err] [default0]:Traceback (most recent call last):\n"
           "[r.0 err] [default0]:  File \"/work/train.py\", line 3, in <module>\n"
           "[r.0 err] [default0]:RuntimeError: CUDA error: out of memory\n%s%s",
           frames, REPORT("1", "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"));
  s = said(log);
  CHECK(strcmp(s, "RuntimeError: CUDA error: out of memory") == 0, "the script's exception: %s", s);

  /* the same report without the script's line: the root cause, torchrun's advice left out */
  snprintf(log, sizeof log, "%s",
           REPORT("1", "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"));
  s = said(log);
  CHECK(strcmp(s, "torchrun: rank 1 (local_rank: 0) exited with code 1 (pid: 29509)") == 0, "advice only: %s", s);

  /* two nodes: the survivor's worker lost its peer and its torchrun reported exit code 1; the
   * killed rank's torchrun reported SIGKILL: the signal is the root cause, whatever the order */
  char rep0[2048];
  snprintf(rep0, sizeof rep0, "%s", REPORT("1", "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"));
  for (char *q = strstr(rep0, "rank      : 1"); q; q = NULL)
    q[12] = '0';
  const char *peer = "[r.0 err] [default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by "
                     "peer [127.0.0.1]:45254\n";
  snprintf(log, sizeof log, "%s%s%s", peer, rep0, REPORT("-9", "Signal 9 (SIGKILL) received by PID 29509"));
  s = said(log);
  CHECK(strcmp(s, "torchrun: rank 1 (local_rank: 0) exited with code -9 (pid: 29509): Signal 9 (SIGKILL) received "
                  "by PID 29509") == 0,
        "survivor first: %s", s);
  snprintf(log, sizeof log, "%s%s%s", REPORT("-9", "Signal 9 (SIGKILL) received by PID 29509"), peer, rep0);
  s = said(log);
  CHECK(strncmp(s, "torchrun: rank 1 (local_rank: 0) exited with code -9", 52) == 0, "killed rank first: %s", s);
  snprintf(log, sizeof log, "%s%s", peer, rep0);
  s = said(log);
  CHECK(strncmp(s, "RuntimeError: [./gloo", 21) == 0, "no signal: the script's error: %s", s);

  /* a pitstop line wins over everything */
  snprintf(log, sizeof log, "[r.0 err] pitstop: node-exec: cannot run '/nonexistent/train.py'\n%s",
           REPORT("-9", "Signal 9 (SIGKILL) received by PID 1"));
  s = said(log);
  CHECK(strcmp(s, "pitstop: node-exec: cannot run '/nonexistent/train.py'") == 0, "pitstop line: %s", s);

  /* node-exec's warning (no interface for GLOO_SOCKET_IFNAME) is not the failure: the script's error is */
  s = said("[r.0 err] pitstop: warning: node-exec: GLOO_SOCKET_IFNAME not set: no network interface of this host "
           "other than loopback holds 'h1'\n[r.0 err] [default0]:ValueError: bad shape\n");
  CHECK(strcmp(s, "ValueError: bad shape") == 0, "a warning is not the cause: %s", s);

  /* mpirun's plain error lines (no torchrun): the last line with "rror"; a JSON line is not quoted */
  s = said("[r.0 out] {\"type\":\"iter\",\"error\":0}\n[r.0 err] ValueError: bad shape\n"
           "[r.0 err] {\"type\":\"end\",\"error\":\"x\"}\n");
  CHECK(strcmp(s, "ValueError: bad shape") == 0, "plain error: %s", s);

  /* the survivor of a torchrun SIGKILLed on the other node, stopped by pitstop: a traceback whose
   * frames name torch's errors/ package, and no error of its own: nothing to quote */
  char out[700];
  const char *agent = "[r.0 err] WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, "
                      "shutting down workers\n"
                      "[r.0 err] Traceback (most recent call last):\n"
                      "[r.0 err]   File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/"
                      "errors/__init__.py\", line 346, in wrapper\n"
                      "[r.0 err]     return f(*args, **kwargs)\n"
                      "[r.0 err] torch.distributed.elastic.multiprocessing.api.SignalException: Process 32104 got "
                      "signal: 15\n";
  int kind = ctl_failure_said(agent, strlen(agent), out, sizeof out);
  CHECK(kind == CTL_SAID_NONE && out[0] == 0, "a traceback's frame quoted: %d %s", kind, out);
  kind = ctl_failure_said(log, strlen(log), out, sizeof out);
  CHECK(kind == CTL_SAID_PITSTOP, "the pitstop line's kind: %d", kind);

  /* srun's line restating a task's exit (the slurm provider's per-node step) is not the cause: the
   * exception before it is (torchrun's own failure under Debian's torch 1.13 on Python 3.11) */
  s = said("[r.j1 err]     map[i] = val_or_map.get(i, Std.NONE)\n"
           "[r.j1 err] AttributeError: 'NoneType' object has no attribute 'get'\n"
           "[r.j1 err] srun: error: n1: task 0: Exited with exit code 1\n");
  CHECK(strcmp(s, "AttributeError: 'NoneType' object has no attribute 'get'") == 0, "srun's exit line: %s", s);
  s = said("[r.j1 err] srun: error: Unable to create step for job 7: Job/step already completing or completed\n");
  CHECK(strncmp(s, "srun: error: Unable to create step", 34) == 0, "srun's own error: %s", s);
  /* slurmstepd's record of a step cancelled (the other node's step, ended by pitstop's own stop after
   * the node was lost) is an after-effect: srun's word on the lost node is the cause (own-slurm.sh
   * seed 102 read "the workload said: slurmstepd-n1: error: *** STEP 1.0 ON n1 CANCELLED AT ...",
   * the node that went DOWN being n2) */
  s = said("[r.j2 err] srun: error: Node failure on n2\n"
           "[r.j1 err] slurmstepd-n1: error: *** STEP 1.0 ON n1 CANCELLED AT 2026-11-30T07:05:37 ***\n"
           "[r.j1 err] srun: error: n1: task 0: Terminated\n");
  CHECK(strcmp(s, "srun: error: Node failure on n2") == 0, "slurmstepd's cancel record quoted: %s", s);
  /* but a cancel with its reason is a cause */
  s = said("[r.j1 err] slurmstepd-n1: error: *** JOB 7 ON n1 CANCELLED AT 2026-11-30T07:05:37 DUE TO TIME LIMIT ***\n");
  CHECK(strstr(s, "DUE TO TIME LIMIT") != NULL, "a time limit not quoted: %s", s);

  s = said("[r.0 out] step 1\n[r.0 out] step 2\n");
  CHECK(s[0] == 0, "nothing to say: %s", s);
  s = said("");
  CHECK(s[0] == 0, "empty log: %s", s);
  /* a log cut in the middle of a line (the last 16 KiB) */
  s = said("ror: half\n[r.0 err] OSError: [Errno 28] No space left on device");
  CHECK(strcmp(s, "OSError: [Errno 28] No space left on device") == 0, "unterminated last line: %s", s);

  /* torchrun's line that a worker failed (torch 1.13's logging, and a later torch's glog-style prefix) */
  const char *wf = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: "
                   "29015) of binary: /usr/bin/python3";
  CHECK(ctl_said_worker_failed(wf, strlen(wf)), "torchrun's worker failure not seen");
  const char *wf2 = "E1130 00:23:09.123 29015 torch/distributed/elastic/multiprocessing/api.py:826] failed "
                    "(exitcode: -9) local_rank: 1 (pid: 7) of binary: /usr/bin/python3";
  CHECK(ctl_said_worker_failed(wf2, strlen(wf2)), "a later torch's worker failure not seen");
  const char *nf = "[default0]:RuntimeError: the job failed (exitcode: see above)";
  CHECK(!ctl_said_worker_failed(nf, strlen(nf)), "a script's own error taken for torchrun's report");
  CHECK(!ctl_said_worker_failed(wf, 40), "a line cut before its local_rank taken for the report");

  /* the restarts a command gives torchrun (its options before the script); -1 without torchrun */
  char *c1[] = {"torchrun", "--nnodes=2", "train.py", NULL};
  char *c2[] = {"/usr/bin/python3", "-m", "torch.distributed.run", "--max_restarts=3", "train.py", NULL};
  char *c3[] = {"/usr/local/bin/torchrun", "--max-restarts", "2", "train.py", NULL};
  char *c4[] = {"python3", "train.py", "--max-restarts=5", NULL};
  char *c5[] = {"torchrun", "--nnodes", "2", "train.py", "--max_restarts=3", NULL}; /* the script's option */
  CHECK(ctl_said_torchrun_restarts(c1) == 0, "torchrun without restarts: %d", ctl_said_torchrun_restarts(c1));
  CHECK(ctl_said_torchrun_restarts(c2) == 3, "python -m torch.distributed.run --max_restarts=3: %d",
        ctl_said_torchrun_restarts(c2));
  CHECK(ctl_said_torchrun_restarts(c3) == 2, "--max-restarts 2: %d", ctl_said_torchrun_restarts(c3));
  CHECK(ctl_said_torchrun_restarts(c4) == -1, "no torchrun: %d", ctl_said_torchrun_restarts(c4));
  CHECK(ctl_said_torchrun_restarts(c5) == 0, "the script's own --max_restarts: %d", ctl_said_torchrun_restarts(c5));
  return check_done();
}
