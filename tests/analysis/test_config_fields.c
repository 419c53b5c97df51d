/* test_config_fields.c — the one table of configuration fields (src/analysis/config.c):
 * names and aliases, labels, the canonical key, and which fields the user varied
 * (a derived field — threads = cores / ranks — that only follows its source is not). */
#include <string.h>

#include "check.h"
#include "pitstop/analysis.h"

static struct pit_config cfg(int64_t batch, int ranks, int threads) {
  struct pit_config c;
  pit_config_clear(&c);
  snprintf(c.model, sizeof c.model, "cnn");
  c.batch = batch;
  c.ranks = ranks;
  c.nodes = 1;
  c.threads = threads;
  return c;
}

int main(void) {
  CHECK(pit_config_field_find("batch_size") == PIT_CF_BATCH, "alias batch_size");
  CHECK(pit_config_field_find("instance_type") == PIT_CF_ITYPE, "alias instance_type");
  CHECK(pit_config_field_find("lr") == -1, "not a table field");
  CHECK(pit_config_field_def(PIT_CF_THREADS)->derived_from == PIT_CF_RANKS, "threads follow ranks");

  struct pit_config a = cfg(64, 2, 1);
  char buf[200];
  pit_config_key(&a, buf, sizeof buf);
  CHECK(strcmp(buf, "model=cnn batch=64 ranks=2 nodes=1 itype=- threads=1") == 0, "key: %s", buf);
  CHECK(pit_config_field_label(&a, PIT_CF_RANKS, buf, sizeof buf) && strcmp(buf, "2 ranks") == 0, "%s", buf);
  CHECK(pit_config_field_label(&a, PIT_CF_NODES, buf, sizeof buf) && strcmp(buf, "1 node") == 0, "%s", buf);
  CHECK(pit_config_field_label(&a, PIT_CF_BATCH, buf, sizeof buf) && strcmp(buf, "batch 64") == 0, "%s", buf);
  CHECK(!pit_config_field_label(&a, PIT_CF_ITYPE, buf, sizeof buf) && !buf[0], "absent itype: no label");

  unsigned key = pit_config_key_fields();
  CHECK(key == (PIT_CF_BIT(PIT_CF_MODEL) | PIT_CF_BIT(PIT_CF_BATCH) | PIT_CF_BIT(PIT_CF_RANKS) |
                PIT_CF_BIT(PIT_CF_NODES) | PIT_CF_BIT(PIT_CF_ITYPE) | PIT_CF_BIT(PIT_CF_THREADS)),
        "key fields: %x", key);
  /* a sweep --ranks 1,2 --batch-size 16,64 on 2 cores: threads 2 with 1 rank, 1 with 2 */
  struct pit_config s[4] = {cfg(16, 1, 2), cfg(64, 1, 2), cfg(16, 2, 1), cfg(64, 2, 1)};
  const struct pit_config *ps[4] = {&s[0], &s[1], &s[2], &s[3]};
  unsigned v = pit_config_varied(ps, 4, key);
  CHECK(v == (PIT_CF_BIT(PIT_CF_BATCH) | PIT_CF_BIT(PIT_CF_RANKS)), "varied: batch and ranks, not threads: %x", v);
  CHECK(pit_config_differing(ps, 4, key) == (v | PIT_CF_BIT(PIT_CF_THREADS)), "threads do differ");
  /* without ranks (the scaling chart's x): lines split by batch only */
  v = pit_config_varied(ps, 4, key & ~PIT_CF_BIT(PIT_CF_RANKS));
  CHECK(v == PIT_CF_BIT(PIT_CF_BATCH), "scaling lines by batch: %x", v);
  CHECK(pit_config_same(&s[0], &s[2], v) && !pit_config_same(&s[0], &s[1], v), "same line: 16 at 1 and 2 ranks");
  /* threads chosen apart from ranks: 2 ranks with 1 and with 2 threads */
  struct pit_config t[2] = {cfg(16, 2, 1), cfg(16, 2, 2)};
  const struct pit_config *pt[2] = {&t[0], &t[1]};
  CHECK(pit_config_varied(pt, 2, key) == PIT_CF_BIT(PIT_CF_THREADS), "threads varied by the user");
  return check_done();
}
