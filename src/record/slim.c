/* slim.c — the compact form of records for the hand-off between `pitstop
 * parse`'s parser and writer threads (slim.h).
 *
 * Why: copying whole 520-byte records into the output ring streamed ~670 MB
 * through memory per 200 MB log (the ring is larger than a core's L2) and made
 * the parser thread ~25% slower than parsing alone; the writer, which has time
 * to spare, rebuilds each record from these 128 bytes.
 *
 * Invariant: for every r with pit_slim_fits(r), putting and getting it back
 * (with r's run) gives a record that formats to the same bytes as r
 * (tests/record/test_parse_fmt.c checks it on random records).
 */
#include <math.h>
#include <string.h>

#include "record/slim.h"

_Static_assert(sizeof(struct pit_slim) <= 128, "struct pit_slim outgrew two cache lines");

int pit_slim_fits(const struct pit_record *r) {
  if (r->nranks || r->compute_s || r->wait_s || r->config || r->path || r->detail || r->nodes >= 0 ||
      r->bytes >= 0 || r->action[0] || r->node[0] || r->itype[0] || !isnan(r->rdzv_s) || !isnan(r->ckpt_s) ||
      !isnan(r->total_s) || !isnan(r->accuracy) || !isnan(r->price_h) || r->nlosses > 2 || r->nlosses < 0 ||
      (unsigned)r->type > 255u)
    return 0;
  for (int i = 0; i < r->nlosses; i++)
    if (!memchr(r->loss_name[i], 0, PIT_SLIM_NAME))
      return 0;
  return 1;
}

/* The scalar fields the slim form carries, named alike in both structs. */
#define SLIM_FIELDS(X)                                                                               \
  X(t) X(step_s) X(data_s) X(loss) X(init_s) X(epoch_s) X(val_s) X(epoch) X(iter) X(step) X(batch) \
  X(gen) X(rank) X(ranks)

void pit_slim_put(struct pit_slim *o, const struct pit_record *r) {
#define PUT(f) o->f = r->f;
  SLIM_FIELDS(PUT)
#undef PUT
  o->type = (unsigned char)r->type;
  o->nlosses = (unsigned char)r->nlosses;
  for (int i = 0; i < r->nlosses; i++) {
    o->lval[i] = r->loss_val[i];
    memcpy(o->lname[i], r->loss_name[i], PIT_SLIM_NAME);
  }
}

void pit_slim_get(struct pit_record *r, const struct pit_slim *o, const char *run) {
  memcpy(r->run, run, PIT_NAME_MAX);
#define GET(f) r->f = o->f;
  SLIM_FIELDS(GET)
#undef GET
  r->type = (enum pit_rec_type)o->type;
  r->nlosses = o->nlosses;
  for (int i = 0; i < o->nlosses; i++) {
    r->loss_val[i] = o->lval[i];
    memcpy(r->loss_name[i], o->lname[i], PIT_SLIM_NAME);
  }
}
