/* pitstop.h — instrument any training loop with pitstop (libpitstop, docs/api.md).
 *
 *   pit_init("run-1", "{\"model\":\"resnet\",\"batch\":64}");
 *   for (epoch...) {
 *     for (batch...) {
 *       pit_iter_begin();
 *       ... load the batch ...   pit_iter_data();      (optional: marks the data time)
 *       ... forward, backward, step ...
 *       pit_iter_end(loss);
 *     }
 *     pit_validation(accuracy, val_seconds);            (optional)
 *     pit_epoch_end();
 *   }
 *   pit_finish();
 *
 * Every call appends one iteration record (docs/records.md) to the destination:
 * by default lines "PITSTOP {json}" on standard output (the line protocol:
 * `pitstop parse` reads them out of any log), or JSON Lines in the file named
 * by $PITSTOP_EVENTS, or what pit_init_to() names. Times come from the
 * monotonic clock; "t" counts from pit_init.
 *
 * Contract: functions never exit or abort and never print anything but
 * records; they return 0 or a negative PITSTOP_E* code, and pit_last_error()
 * says why. One session per process; the calls may come from any thread but
 * are meant for one training thread (a mutex keeps records whole). A call out
 * of order (pit_iter_end without pit_iter_begin, anything before pit_init)
 * returns PITSTOP_ESTATE and writes nothing.
 */
#ifndef PITSTOP_PITSTOP_H
#define PITSTOP_PITSTOP_H

#ifdef __cplusplus
extern "C" {
#endif

#define PITSTOP_API_VERSION 1

enum {
  PITSTOP_OK = 0,
  PITSTOP_EIO = -1,     /* the destination could not be opened or written */
  PITSTOP_EARG = -3,    /* bad argument (run name, config JSON, NaN time, ...) */
  PITSTOP_ENOMEM = -4,
  PITSTOP_ESTATE = -6   /* call out of order */
};

/* Starts the session. run: the run id (1..63 characters, no control
 * characters). config_json: a JSON object describing the configuration (model,
 * batch, ranks, nodes, threads, itype, ...) or NULL; its "batch" becomes the
 * iterations' global batch. Destination: $PITSTOP_EVENTS (a JSON Lines file,
 * appended to) if set, else "PITSTOP {json}" lines on standard output. */
int pit_init(const char *run, const char *config_json);
/* Same, with the destination named: NULL (as pit_init), "stdout" or "stderr"
 * (prefixed lines), or a file path (JSON Lines, appended). */
int pit_init_to(const char *run, const char *config_json, const char *dest);

/* Records from now on are this rank's own view ("rank": r) — for programs
 * where every process reports. Default: taken from the launcher's environment
 * when the job has several processes ($PITSTOP_RANK, or Open MPI's
 * OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/PMI_SIZE, torchrun's RANK/WORLD_SIZE);
 * otherwise -1, records cover the whole job. -1 restores that. */
int pit_set_rank(int rank);
/* Overrides the global batch of the following iterations (samples per step). */
int pit_set_batch(long long batch);

/* Marks the start of an iteration. The first call also writes the init record
 * (init_s = time from pit_init to here). */
int pit_iter_begin(void);
/* Optional, between begin and end: the batch is loaded (data_s). */
int pit_iter_data(void);
/* Ends the iteration and writes it: step_s, data_s, epoch, iter (within the
 * epoch), step (global), batch, loss (NaN: no loss). */
int pit_iter_end(double loss);
/* Ends the epoch: writes its epoch_s (time since the previous epoch end, or the
 * first iteration) and starts the next one. */
int pit_epoch_end(void);
/* A validation pass of secs seconds (secs < 0: unknown) reaching accuracy
 * (NaN or < 0: unknown) in the current epoch. */
int pit_validation(double accuracy, double secs);
/* A checkpoint written to path (may be NULL), bytes long (< 0: unknown), in secs. */
int pit_checkpoint(const char *path, long long bytes, double secs);
/* Writes the end record (total_s since pit_init), flushes and closes the
 * destination. The session can then be started again with pit_init. */
int pit_finish(void);

/* Why the last failing call failed ("" if none). Valid until the next call. */
const char *pit_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
