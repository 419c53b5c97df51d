/* schema.c — the store's schema as an ordered list of migrations.
 *
 * Invariants: migration k brings a database from user_version k-1 to k; pending
 * migrations run in order inside ONE transaction that also records each in the
 * `migrations` table and sets PRAGMA user_version, so a database is always at a
 * version some build wrote, never in between. A database whose user_version is
 * larger than PIT_STORE_SCHEMA_VERSION is refused before anything is written.
 * Never edit a migration that has shipped: append a new one.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store/store_impl.h"

struct migration {
  int version;
  const char *description;
  const char *sql;
};

/* SQL expression: element k.rank of BLOB column i.<col> (big-endian IEEE-754
 * float64s) as a REAL, exactly; NULL for NaN/absent. Byte j is found by its
 * position in the 256-byte BLOB 00..FF (instr on BLOBs compares bytes); the
 * exponent is the 11 bits after the sign, the mantissa the last 52 bits. */
#define BYTES256                                                                                 \
  "X'"\
  "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F"\
  "303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F"\
  "606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F"\
  "909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF"\
  "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEF"\
  "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF" "'"
#define BYTE(col, j) "(instr(" BYTES256 ", substr(i." col ", 8*k.rank+" #j ", 1))-1)"
#define EXPO(col) "((" BYTE(col, 1) " % 128)*16 + " BYTE(col, 2) "/16)"
#define MANT(col)                                                                                \
  "((" BYTE(col, 2) " % 16)*281474976710656 + " BYTE(col, 3) "*1099511627776 + " BYTE(col, 4)      \
  "*4294967296 + " BYTE(col, 5) "*16777216 + " BYTE(col, 6) "*65536 + " BYTE(col, 7) "*256 + "     \
  BYTE(col, 8) ")"
#define DECODE_F64(col)                                                                          \
  "(CASE WHEN length(substr(i." col ", 8*k.rank+1, 8)) < 8 OR " EXPO(col) " = 2047 THEN NULL"    \
  " ELSE (CASE WHEN " BYTE(col, 1) " >= 128 THEN -1.0 ELSE 1.0 END) * pow(2, max(" EXPO(col)      \
  ", 1) - 1075) * (" MANT(col) " + CASE WHEN " EXPO(col) " = 0 THEN 0 ELSE 4503599627370496 END) END)"

/* Every record table carries `seq` (the store-wide order in which records were
 * added: it is the rowid, so reading a run back in order is a merge on seq),
 * run_id, gen, t and rank (NULL unless the record is one rank's view).
 * Iterations carry their per-rank times as two BLOBs of nranks big-endian
 * float64 (NaN = absent): one row per iteration instead of 1 + nranks rows,
 * measured 2x faster to insert (docs/store.md); the view iteration_ranks gives
 * them back as rows. Iterations have no (run_id, seq) index (it cost a third of
 * the insert time): runs.first_seq/last_seq bound a run's rows instead. */
static const struct migration migrations[] = {
    {1, "initial schema: runs, configurations, records by type, per-rank times",
     "CREATE TABLE migrations(version INTEGER PRIMARY KEY, applied TEXT NOT NULL,"
     "  description TEXT NOT NULL);"
     "CREATE TABLE configurations(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
     "  model TEXT, batch INTEGER, ranks INTEGER, nodes INTEGER, itype TEXT, threads INTEGER);"
     "CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created TEXT NOT NULL,"
     "  source TEXT, config TEXT, configuration_id INTEGER REFERENCES configurations(id),"
     "  first_seq INTEGER, last_seq INTEGER,"
     "  model TEXT, batch INTEGER, ranks INTEGER, nodes INTEGER, itype TEXT, threads INTEGER);"
     "CREATE TABLE inits(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, init_s REAL CHECK(init_s >= 0), rdzv_s REAL,"
     "  ranks INTEGER, nodes INTEGER, config TEXT);"
     "CREATE TABLE iterations(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, epoch INTEGER, iter INTEGER, step INTEGER,"
     "  batch INTEGER, step_s REAL, data_s REAL, nranks INTEGER NOT NULL, loss REAL, losses TEXT,"
     "  compute_s BLOB, wait_s BLOB);"
     "CREATE TABLE epochs(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, epoch INTEGER, epoch_s REAL);"
     "CREATE TABLE validations(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, epoch INTEGER, step INTEGER, val_s REAL,"
     "  accuracy REAL);"
     "CREATE TABLE checkpoints(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, epoch INTEGER, step INTEGER, ckpt_s REAL,"
     "  path TEXT, bytes INTEGER);"
     "CREATE TABLE nodes(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, action TEXT, node TEXT, itype TEXT,"
     "  price_h REAL);"
     "CREATE TABLE decisions(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, detail TEXT);"
     "CREATE TABLE ends(seq INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
     "  gen INTEGER NOT NULL, t REAL, rank INTEGER, total_s REAL);"
     "CREATE INDEX inits_run ON inits(run_id, seq);"
     "CREATE INDEX epochs_run ON epochs(run_id, seq);"
     "CREATE INDEX validations_run ON validations(run_id, seq);"
     "CREATE INDEX checkpoints_run ON checkpoints(run_id, seq);"
     "CREATE INDEX nodes_run ON nodes(run_id, seq);"
     "CREATE INDEX decisions_run ON decisions(run_id, seq);"
     "CREATE INDEX ends_run ON ends(run_id, seq);"
     /* iteration_ranks: the per-rank times as rows (run, step, rank,
      * compute_s, wait_s), decoded from the big-endian float64 BLOBs in plain
      * SQL (exact; any SQLite >= 3.35 with math functions, e.g. sqlite3 CLI). */
     "CREATE VIEW iteration_ranks AS WITH RECURSIVE k(rank) AS (SELECT 0 UNION ALL SELECT rank + 1"
     "  FROM k WHERE rank + 1 < (SELECT max(nranks) FROM iterations))"
     "  SELECT i.seq AS seq, r.name AS run, i.gen AS gen, i.step AS step, k.rank AS rank, "
     DECODE_F64("compute_s") " AS compute_s, " DECODE_F64("wait_s") " AS wait_s"
     "  FROM iterations i JOIN runs r ON r.id = i.run_id JOIN k ON k.rank < i.nranks;"},
    /* A configuration's machines (record.h, struct pit_membership): its
     * canonical text in configurations.membership and runs.membership, and one
     * members row per {itype, nodes, ranks_per_node} entry (NULL ranks: unknown).
     * Rows written by version 1 named at most one type: they get the membership
     * pit_config_from_record() gives such a run — {itype, nodes (1 if unknown),
     * ranks / nodes when that divides}. */
    {2, "membership: configurations.membership, runs.membership, members rows per instance type",
     "ALTER TABLE configurations ADD COLUMN membership TEXT;"
     "ALTER TABLE runs ADD COLUMN membership TEXT;"
     "CREATE TABLE members(configuration_id INTEGER NOT NULL REFERENCES configurations(id),"
     "  itype TEXT NOT NULL, nodes INTEGER NOT NULL CHECK(nodes >= 1),"
     "  ranks_per_node INTEGER CHECK(ranks_per_node >= 1), UNIQUE(configuration_id, itype, ranks_per_node));"
     "CREATE INDEX members_itype ON members(itype);"
     "INSERT INTO members(configuration_id, itype, nodes, ranks_per_node)"
     "  SELECT id, itype, n, CASE WHEN ranks >= 1 AND ranks % n = 0 THEN ranks / n END"
     "  FROM (SELECT id, itype, ranks, CASE WHEN nodes >= 1 THEN nodes ELSE 1 END AS n FROM configurations"
     "        WHERE itype IS NOT NULL AND itype <> '');"
     "UPDATE configurations SET membership = (SELECT m.itype || ':' || m.nodes"
     "  || coalesce('x' || m.ranks_per_node, '') FROM members m WHERE m.configuration_id = configurations.id);"
     "UPDATE runs SET membership = (SELECT c.membership FROM configurations c WHERE c.id = runs.configuration_id);"},
    /* An end record's status ("done", "stopped") and detail (a --until-steady stop's reason, the
     * controller's end of a workload that wrote none): without them every stored end read back as
     * a run over, and a finished foreign script's end the same as pitstop train's (docs/store.md).
     * Rows written before have NULL: read back as before (no status). */
    {3, "ends.status, ends.detail",
     "ALTER TABLE ends ADD COLUMN status TEXT;"
     "ALTER TABLE ends ADD COLUMN detail TEXT;"},
};
#define NMIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

int pit_store_query_i64(struct pit_store *s, const char *sql, const char *context, int64_t *out,
                        struct pit_err *e) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return pit_store_dberr(s, e, context);
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    return pit_store_dberr(s, e, context);
  }
  *out = sqlite3_column_int64(st, 0); /* NULL → 0 */
  sqlite3_finalize(st);
  return 0;
}

static int read_version(struct pit_store *s, int *v, struct pit_err *e) {
  int64_t u;
  int rc = pit_store_query_i64(s, "PRAGMA user_version", "reading schema version", &u, e);
  if (!rc)
    *v = (int)u;
  return rc;
}

static int newer(struct pit_store *s, int v, struct pit_err *e) {
  pit_err_set(e, PIT_ESTATE, "'%s': schema version %d is newer than this pitstop (%d)", s->path, v,
              PIT_STORE_SCHEMA_VERSION);
  pit_err_hint(e, "use a newer pitstop for this database, or another --db file");
  return PIT_ESTATE;
}

int pit_store_migrate(struct pit_store *s, struct pit_err *e) {
  int v, rc;
  if ((rc = read_version(s, &v, e)))
    return rc;
  if (v > PIT_STORE_SCHEMA_VERSION)
    return newer(s, v, e);
  if (v == PIT_STORE_SCHEMA_VERSION) {
    s->version = v;
    return 0;
  }
  /* A new database gets 16 KiB pages (measured 2-6% faster bulk inserts than
   * the 4 KiB default, interleaved A/B; docs/store.md). No effect once the file has pages. */
  if (v == 0 && (rc = pit_store_exec(s, "PRAGMA page_size=16384", e)))
    return rc;
  /* IMMEDIATE: take the write lock first, then re-read (another process may
   * have migrated meanwhile). */
  if ((rc = pit_store_exec(s, "BEGIN IMMEDIATE", e)))
    return rc;
  if ((rc = read_version(s, &v, e)))
    goto fail;
  if (v > PIT_STORE_SCHEMA_VERSION) {
    rc = newer(s, v, e);
    goto fail;
  }
  char now[32];
  time_t tt = time(NULL);
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
  for (int i = 0; i < NMIGRATIONS; i++) {
    const struct migration *m = &migrations[i];
    if (m->version <= v)
      continue;
    char ctx[64];
    snprintf(ctx, sizeof ctx, "migration %d", m->version);
    if (sqlite3_exec(s->db, m->sql, NULL, NULL, NULL) != SQLITE_OK) {
      rc = pit_store_dberr(s, e, ctx);
      goto fail;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO migrations(version, applied, description) VALUES(?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
      rc = pit_store_dberr(s, e, ctx);
      goto fail;
    }
    sqlite3_bind_int(st, 1, m->version);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, m->description, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) {
      rc = pit_store_dberr(s, e, ctx);
      goto fail;
    }
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", m->version);
    if ((rc = pit_store_exec(s, pragma, e)))
      goto fail;
  }
  if ((rc = pit_store_exec(s, "COMMIT", e)))
    goto fail;
  s->version = PIT_STORE_SCHEMA_VERSION;
  return 0;
fail:
  sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

int pit_store_max_seq(struct pit_store *s, int64_t *out, struct pit_err *e) {
  static const char *sql =
      "SELECT max(m) FROM (SELECT max(seq) AS m FROM inits UNION ALL SELECT max(seq) FROM iterations"
      " UNION ALL SELECT max(seq) FROM epochs UNION ALL SELECT max(seq) FROM validations"
      " UNION ALL SELECT max(seq) FROM checkpoints UNION ALL SELECT max(seq) FROM nodes"
      " UNION ALL SELECT max(seq) FROM decisions UNION ALL SELECT max(seq) FROM ends)";
  return pit_store_query_i64(s, sql, "reading sequence", out, e);
}
