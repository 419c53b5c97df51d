/* slim.h — a compact form of the records most log lines give, for handing them
 * between threads (`pitstop parse`'s writer thread): 128 bytes instead of the
 * 520 of a struct pit_record. Internal to pitstop (not installed). */
#ifndef PIT_RECORD_SLIM_H
#define PIT_RECORD_SLIM_H

#include <stdint.h>

#include "pitstop/record.h"

#define PIT_SLIM_NAME 5 /* loss names of up to 4 bytes ("d", "g") */

struct pit_slim {
  double t, step_s, data_s, loss, init_s, epoch_s, val_s, lval[2];
  int64_t epoch, iter, step, batch;
  int32_t gen, rank, ranks;
  unsigned char type, nlosses;
  char lname[2][PIT_SLIM_NAME];
};

/* Whether r's fields other than its run fit a struct pit_slim: every field
 * not in it absent (no per-rank arrays, strings, config, ...), at most two
 * losses with names of at most 4 bytes. */
int pit_slim_fits(const struct pit_record *r);
/* o := r (r fits). */
void pit_slim_put(struct pit_slim *o, const struct pit_record *r);
/* r — as pit_record_init leaves it, or as an earlier pit_slim_get left it —
 * becomes the one o stands for, run run (PIT_NAME_MAX bytes, NUL-terminated):
 * pit_parse_json and pit_record_format print it exactly as the record o was
 * made from. Every field of the slim form is set; losses past o's nlosses may
 * keep older values (neither prints them). */
void pit_slim_get(struct pit_record *r, const struct pit_slim *o, const char *run);

#endif
