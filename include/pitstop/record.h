/* pitstop/record.h — the one record type that flows through pitstop.
 *
 * A record is one JSON object per line (JSON Lines), as defined in docs/records.md
 * (from DESIGN.md). Every record has "type", "run", "gen", "t". Fields that a
 * record does not carry are NaN (doubles) or -1 (integers) in the struct and are
 * omitted from the JSON. Per-rank arrays have length nranks (1 for one rank).
 *
 * Invariants: writing a record and reading it back yields an equal record
 * (doubles are written with %.17g, or %.9g for times, which round-trip times to
 * the nanosecond). The reader never crashes on any input: a malformed line is
 * reported with its file:line.
 */
#ifndef PITSTOP_RECORD_H
#define PITSTOP_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "pitstop/util.h"

struct pit_parser; /* parse.h */

enum pit_rec_type {
  PIT_REC_NONE = 0,
  PIT_REC_INIT,
  PIT_REC_ITER,
  PIT_REC_VALIDATION,
  PIT_REC_CHECKPOINT,
  PIT_REC_EPOCH,
  PIT_REC_NODE,
  PIT_REC_DECISION,
  PIT_REC_END,       /* end of a run/generation: total_s, status */
  PIT_REC_NTYPES
};

#define PIT_MAX_LOSSES 6
#define PIT_NAME_MAX 64

/* A node's market (a membership entry's, a node record's): DEFAULT is the
 * provider's own (a bare TYPE; the local provider has no other). */
enum pit_market { PIT_MARKET_DEFAULT = 0, PIT_MARKET_ON_DEMAND, PIT_MARKET_SPOT };

/* A node start record's "catalog": its type's row of the run's catalog (catalog.h's
 * columns of the same names), so a replay prices and bills the run without the file.
 * have 0: absent (files written before it, a type the catalog lacked); when present
 * price_h > 0, billing_s > 0, min_s >= 0, vcpus >= 1 (the reader checks). */
struct pit_rec_itype {
  int have;
  int vcpus, cpus;            /* cpus: -1 absent (the local provider's CPU set) */
  double price_h;             /* on-demand US$/h */
  double spot_price_h;        /* NaN: none */
  double billing_s, min_s;
  double cpu_quota;           /* NaN: none */
};

struct pit_record {
  enum pit_rec_type type;
  char run[PIT_NAME_MAX];   /* run id */
  int gen;                  /* generation, 0-based */
  double t;                 /* seconds since run start (monotonic) */
  int rank;                 /* -1: record covers all ranks; >= 0: one rank's view (foreign logs) */

  /* iter */
  int64_t epoch, iter, step, batch;
  double step_s, data_s;
  int nranks;               /* length of compute_s / wait_s; 0 if absent */
  double *compute_s;        /* (nranks) owned by the record */
  double *wait_s;           /* (nranks) owned by the record */
  double loss;              /* scalar loss, NaN if absent or if named losses are used */
  char samples[20];         /* "samples_digest": digest of the step's global sample indices, 16 hex
                             * digits of Σ pit_sample_mix(i) mod 2^64 (order-free, so an epoch's
                             * digests add up to the whole dataset's); "" if absent */
  int nlosses;              /* named losses (GAN: "d", "g") */
  char loss_name[PIT_MAX_LOSSES][16];
  double loss_val[PIT_MAX_LOSSES];

  /* init */
  double init_s, rdzv_s;
  int ranks, nodes;
  char *config;             /* JSON object text (model, batch, threads, itype, ...), owned; NULL if absent */

  /* validation / checkpoint / epoch / end */
  double val_s, ckpt_s, epoch_s, total_s;
  char status[16];          /* end: "done" (the job is complete), "stopped" (on request, resumable),
                             * or another word a workload chooses; "" if absent. An end record
                             * with the protocol's "stop" key reads as "stopped". */
  double accuracy;
  char *path;               /* checkpoint path, owned; NULL if absent */
  int64_t bytes;

  /* node */
  char action[16];          /* start|ready|stop|lost */
  char node[PIT_NAME_MAX];
  char itype[PIT_NAME_MAX];  /* the bare type (an old file's TYPE@market is read by the run log) */
  double price_h;
  enum pit_market market;   /* "market": "spot" | "on-demand"; DEFAULT: absent (not known: local nodes) */
  char zone[PIT_NAME_MAX];  /* "zone" the node was started in; "" absent (the provider's default) */
  struct pit_rec_itype row; /* "catalog": its type's catalog row (start records) */
  int continued;            /* "continued": true (1) on the node records a controller writes in the
                             * first generation it begins after taking over a run whose controller
                             * was stopped (killed, or interrupted), not one that ended in an error;
                             * 0 absent */

  /* decision: the whole object is kept as JSON text (controller-defined) */
  char *detail;             /* owned; NULL if absent */
};

/* Sets every field to "absent" (NaN / -1 / NULL), type NONE. */
void pit_record_init(struct pit_record *r);
/* Frees owned arrays/strings and re-initialises. */
void pit_record_release(struct pit_record *r);
/* Allocates compute_s and wait_s of length n (NaN-filled). */
int pit_record_set_ranks(struct pit_record *r, int n);
/* Deep copy. */
int pit_record_copy(struct pit_record *dst, const struct pit_record *src);

const char *pit_rec_type_name(enum pit_rec_type t);
/* The per-sample term of the "samples" digest (a 64-bit finaliser of index i). */
uint64_t pit_sample_mix(uint64_t i);
/* Σ pit_sample_mix(idx[k]) over k < n, as 16 lower-case hex digits into out[17]. */
void pit_samples_digest(const int64_t *idx, int64_t n, char out[17]);
enum pit_rec_type pit_rec_type_parse(const char *name);

/* Formats r as one JSON line (with trailing '\n') into buf; returns bytes written
 * or a negative error. Grows *buf (malloc'd, *cap bytes) as needed. */
int pit_record_format(const struct pit_record *r, char **buf, size_t *cap);
/* Parses one JSON object (no newline needed). Returns 0, or PIT_EFORMAT with a
 * message (without file:line: the caller adds it). r must be initialised. */
int pit_record_parse(struct pit_record *r, const char *line, size_t len, struct pit_err *e);

/* ---- membership: the machines a configuration runs on ----
 *
 * A list of {instance type, market, nodes, ranks per node}: one entry per
 * (type, market, ranks per node), kept canonical (sorted by the entry's name
 * TYPE[@MARKET], then ranks per node; equal entries merged by adding their
 * nodes), so equal memberships have equal structs, equal texts and equal keys.
 * No pointers: copy by assignment.
 *
 * The market is a field of the entry (pitstop run's spot or on-demand nodes;
 * DEFAULT: the provider's, what every membership not from pitstop run has). Its
 * text form TYPE@spot / TYPE@on-demand exists only at the edges: parsed by
 * pit_itype_market_parse and printed by pit_itype_market_format, which the text
 * and JSON forms below, a node record's itype and the command line go through.
 *
 * Text form (`--itype`, store column membership): entries joined by '+', each
 * NAME[:NODES[xRANKS]] with NAME = TYPE[@MARKET] — "m5.large:2+c5.xlarge@spot:1x4";
 * NODES defaults to 1, RANKS (per node) to unknown. Type names are
 * [A-Za-z0-9._/-]. The canonical text is at most PIT_MEMBERSHIP_TEXT_MAX - 1
 * characters (longer is PIT_EARG).
 * JSON form (key "membership" of an init record's config): an array of
 * {"itype": NAME, "nodes": 2, "ranks_per_node": 1} objects
 * (ranks_per_node omitted when unknown), or the text form as a string. */
#define PIT_MEMBERS_MAX 8
#define PIT_MEMBERSHIP_TEXT_MAX 256
struct pit_member {
  char itype[PIT_NAME_MAX];  /* non-empty, without a market */
  enum pit_market market;    /* DEFAULT: the provider's (bare TYPE) */
  int nodes;                 /* >= 1 */
  int ranks_per_node;        /* >= 1, or -1 when unknown */
};
struct pit_membership {
  struct pit_member m[PIT_MEMBERS_MAX];
  int n;                     /* 0: no membership known */
};
/* The edge: NAME = TYPE, TYPE@spot or TYPE@on-demand into its type (n bytes)
 * and market; PIT_EARG (e may be NULL) for another suffix or a bad type name. */
int pit_itype_market_parse(const char *name, char *itype, size_t n, enum pit_market *mk, struct pit_err *e);
/* The edge's other way: TYPE, TYPE@spot or TYPE@on-demand into buf (n bytes). */
void pit_itype_market_format(const char *itype, enum pit_market mk, char *buf, size_t n);
/* "spot", "on-demand", or "" (DEFAULT). */
const char *pit_market_name(enum pit_market mk);
/* The other way: "spot", "on-demand" ("" or NULL: DEFAULT); PIT_EFORMAT for another word. */
int pit_market_parse(const char *name, enum pit_market *mk, struct pit_err *e);
void pit_membership_clear(struct pit_membership *m);
/* Adds nodes of itype on market mk (merged into an equal entry), keeping m
 * canonical. PIT_EARG: bad name or counts, more than PIT_MEMBERS_MAX entries,
 * text too long. pit_membership_add: on the DEFAULT market. */
int pit_membership_add_on(struct pit_membership *m, const char *itype, enum pit_market mk, int nodes,
                          int ranks_per_node, struct pit_err *e);
int pit_membership_add(struct pit_membership *m, const char *itype, int nodes, int ranks_per_node,
                       struct pit_err *e);
/* Parses the text form into m (cleared first). PIT_EARG with a message quoting the text. */
int pit_membership_parse(struct pit_membership *m, const char *text, struct pit_err *e);
/* Canonical text (the membership's key); "" when m->n == 0. */
void pit_membership_format(const struct pit_membership *m, char *buf, size_t n);
int pit_membership_equal(const struct pit_membership *a, const struct pit_membership *b);
/* Nodes in all entries; ranks in all entries, -1 if any entry's is unknown. */
int pit_membership_nodes(const struct pit_membership *m);
int pit_membership_ranks(const struct pit_membership *m);
/* JSON array text of m, malloc'd (caller frees); NULL when out of memory. */
char *pit_membership_json(const struct pit_membership *m);
/* The same array as a cJSON item (owned by the caller, who puts it into a
 * config object); NULL when out of memory. The one encoder of the JSON form. */
struct cJSON *pit_membership_cjson(const struct pit_membership *m);
/* From the "membership" key of a config JSON object (array or text form).
 * Absent key: 0 with m->n == 0. Malformed: PIT_EFORMAT (m cleared). */
int pit_membership_from_config(struct pit_membership *m, const char *config_json, struct pit_err *e);

/* ---- record sinks: a JSON Lines file or stdout ("-") ---- */
struct pit_events {
  FILE *fp;
  int owns_fp;
  char *buf;
  size_t cap;
  char *path;
  int64_t dropped;   /* append: bytes of an unfinished last line cut off at open (a writer killed
                        mid-record: stdio had flushed part of it); 0 none */
};
int pit_events_open(struct pit_events *ev, const char *path, struct pit_err *e); /* "-" = stdout */
/* append=1: keep what the file holds and add after it (a resumed run); a last
 * line without its newline (a writer killed mid-record) is cut off first, so
 * the next record does not continue it (ev->dropped says how much). */
int pit_events_open_mode(struct pit_events *ev, const char *path, int append, struct pit_err *e);
int pit_events_write(struct pit_events *ev, const struct pit_record *r, struct pit_err *e);
int pit_events_flush(struct pit_events *ev, struct pit_err *e);
void pit_events_release(struct pit_events *ev);

/* s as a JSON string literal, quotes included, escaped as records are written
 * ('"' and backslash escaped, control characters as \u00XX); owned by the caller
 * (free); NULL when out of memory. */
char *pit_json_quote(const char *s);

/* ---- reading a JSON Lines file record by record ---- */
struct pit_record_reader {
  FILE *fp;
  int owns_fp;
  char *path;
  char *line;
  size_t cap;
  long lineno;
  long skipped;             /* blank or non-record lines skipped */
};
int pit_record_reader_open(struct pit_record_reader *rd, const char *path, struct pit_err *e);
/* Returns 1 with a record, 0 at end, negative on a malformed line ("file:line: ..."). */
int pit_record_reader_next(struct pit_record_reader *rd, struct pit_record *r, struct pit_err *e);
void pit_record_reader_release(struct pit_record_reader *rd);
/* Calls fn on each record of path in order, with its line number (r is released after each call);
 * stops at fn's first negative return, or a malformed line. 0, or the error. */
typedef int (*pit_record_fn)(void *ctx, const struct pit_record *r, long lineno, struct pit_err *e);
int pit_record_each(const char *path, pit_record_fn fn, void *ctx, struct pit_err *e);

/* ---- decision records (decision.c): one struct, one encode/decode pair ----
 * A `decision` record's detail is the JSON object of a struct pit_decision, and
 * the struct holds every key the record holds: its writers (train's batch shares,
 * the controller) fill it and encode it once; its readers (the run log, hence the
 * report, the replay, the timeline, status; analysis, summary) decode it once.
 * Nothing adds keys to an encoded decision or reads one by hand.
 *
 * One word per concept: a *decision* is this record (what was decided, where,
 * why, and what was weighed). A policy's return value in memory is a *choice*
 * (struct pit_choice, control.h: pure data with the policy's own numbers; the
 * controller turns it into a decision with the run's context); a membership
 * change as the replay compares them is a *resize* (struct pit_resize, control.h).
 *
 * Keys, in this order, absent ones left out: "what" (kind), "step",
 * "alternatives" [{"membership", "predicted_s", "cost", then, for an alternative a
 * policy weighed (its "what" set): "what", "model", "pit_s", "pit_interval_s"
 * [lo, hi], "predicted_interval_s" [lo, hi], "fits"}], "shares", "previous",
 * "speed_sps", "predicted_step_s", "previous_predicted_step_s", "why" (reason),
 * then, for a controller's decision (policy set): "policy", "action", "from", "to",
 * and, for a choice of zone (policy "zones"), "zone" and "inputs" (the object the
 * zone policy decided on, src/policy/policy_zones.c); for a choice of the spot
 * market layer, "spot_mode" (what it chose: "spot", "on_demand" or "idle") and,
 * when the spot policy decided it, "inputs" (the state it decided on,
 * src/policy/policy_spot_replay.c).
 * A membership is its text form (TYPE@spot for a node on the spot market); an
 * interval's unbounded high end is written -1; a weighed alternative's unknown
 * t_p or interval end is null (read back as NaN). Unknown keys are ignored by the
 * decoder, so events files and stores written before these keys read as before. */
struct pit_decision_alt {
  struct pit_membership m;    /* the membership weighed (n == 0: no nodes, e.g. idle for spot) */
  double predicted_s;         /* predicted time (controller: the rest of the job), NaN if absent */
  double cost;                /* predicted cost (controller: the rest of the job), NaN if absent */
  char what[16];              /* the policy's kind of move ("keep", "add", "remove", "switch", "spot",
                                 "on-demand"); "" for an alternative no policy weighed */
  char model[48];             /* where its t_p came from ("measured", "USL", ...) */
  double pit_s, pit_lo, pit_hi; /* predicted t_p and its 95% interval (hi INFINITY: unbounded) */
  double predicted_lo, predicted_hi; /* predicted_s's 95% interval (hi INFINITY: unbounded) */
  int fits;                   /* 1 meets the deadline and budget, 0 not, -1 absent */
};
struct pit_decision {
  char kind[32];              /* "what": "batch_shares", "keep", "add", "remove", "resize", "spot", ... */
  int64_t step;               /* step at which it applies, -1 if absent */
  char *reason;               /* why, in words; owned, NULL if absent */
  int nalts;                  /* alternatives weighed (alts owned, nalts entries of capalts); the
                                 controller's: the chosen membership first */
  size_t capalts;
  struct pit_decision_alt *alts;
  int nshares;                /* ranks: length of shares, previous, speed_sps (all owned; 0: absent) */
  int64_t *shares;            /* (nshares) samples of the global batch per rank, chosen */
  int64_t *previous;          /* (nshares) the shares in force before, NULL if absent */
  double *speed_sps;          /* (nshares) measured samples per compute second, NULL if absent */
  double predicted_step_s;    /* NaN if absent */
  double previous_predicted_step_s;
  /* the controller's (all four written when policy is set) */
  char policy[32];            /* the policy that decided ("cost", "spot", "reclaim", ...); "" absent */
  char action[16];            /* keep | resize | recommend | market */
  struct pit_membership from, to; /* the membership before and the one decided (n == 0: none) */
  char zone[32];              /* the zone of "to" ("": none named) */
  char spot_mode[16];         /* the spot market layer's choice ("spot", "on_demand", "idle"; "": none) */
  char *inputs;               /* JSON object text (owned): what a zone or spot decision was decided on;
                                 NULL: absent */
  /* a cost or time decision's settings ("settings": {"deadline_s", "budget", "nnodes": [min, max],
   * "types"}), so a replay weighs as the run did without being told (absent: NaN, 0, "") */
  double set_deadline_s, set_budget;
  int set_nmin, set_nmax;     /* the node bounds (max 0: none) */
  char set_types[256];        /* the types the policy may use, ","-separated */
};
void pit_decision_init(struct pit_decision *d);     /* all absent */
void pit_decision_release(struct pit_decision *d);  /* frees what it owns, re-initialises */
/* Allocates the nshares arrays (shares always; previous and speed_sps if with_all). */
int pit_decision_set_ranks(struct pit_decision *d, int n, int with_all);
/* Appends an alternative on membership m (NULL: no nodes), every other field
 * absent; returns it for the caller to fill, or NULL when out of memory. */
struct pit_decision_alt *pit_decision_add_alt(struct pit_decision *d, const struct pit_membership *m);
/* JSON text (malloc'd, one line, caller frees) into *out. */
int pit_decision_encode(const struct pit_decision *d, char **out, struct pit_err *e);
/* d initialised; on error d is released and e says why (no file:line: the caller adds it). */
int pit_decision_decode(struct pit_decision *d, const char *json, struct pit_err *e);
/* 1 when a and b hold the same values in every field (NaN equals NaN). */
int pit_decision_equal(const struct pit_decision *a, const struct pit_decision *b);

/* ---- following a growing JSON Lines file, or a child's output (follow.c) ----
 * Reads records as they are written: a complete line ('\n'-ended) is a record (or
 * skipped, or malformed); a last line without its newline yet is "not yet", read
 * again on the next call; the end of what is written is "no more for now". Works
 * on a file (its writer appends) and on a pipe (a child's stdout, made
 * non-blocking; when the writer closes it, a last line without newline counts).
 * In protocol mode only `PITSTOP {json}` lines are records (the line protocol,
 * through the same parser as `pitstop parse`); other output is skipped.
 * The lower half, pit_follower_line, hands out the complete lines themselves: the
 * controller reads its workloads' stdout through it into its own parser. */
enum pit_follow_status {
  PIT_FOLLOW_AGAIN = 0,       /* nothing new now: call again later */
  PIT_FOLLOW_RECORD = 1,      /* a record in r */
  PIT_FOLLOW_PARTIAL = 2,     /* a line begun and not finished: not yet */
  PIT_FOLLOW_CLOSED = 3       /* pipe: the writer closed it and every line was returned */
};
struct pit_follower {
  int fd;                     /* read from; closed by release if owns_fd */
  int owns_fd;
  int is_pipe;                /* not a regular file: read 0 means closed */
  int closed;
  int protocol;               /* 1: only PITSTOP {json} lines */
  char *path;                 /* name in messages, owned */
  char *buf;                  /* bytes read, not yet consumed: [off, len); owned */
  size_t cap, len, off;
  struct pit_parser *parser;  /* owned; made by the first pit_follower_next */
  struct pit_record *out;     /* during a call: the caller's r (borrowed), where the parser's record goes */
  int got;                    /* during a call: a record was emitted */
  struct pit_err bad;         /* during a call: a malformed line's message */
};
/* path: a JSON Lines file (it may not hold anything yet) */
int pit_follower_open(struct pit_follower *f, const char *path, int protocol, struct pit_err *e);
/* fd: a pipe or file the caller opened (name: in messages); owns_fd: close on release */
int pit_follower_open_fd(struct pit_follower *f, int fd, int owns_fd, const char *name, int protocol,
                         struct pit_err *e);
/* One of enum pit_follow_status; negative: a malformed complete line ("file:line:
 * reason", the follower has moved past it and can go on) or a read error. */
int pit_follower_next(struct pit_follower *f, struct pit_record *r, struct pit_err *e);
/* The next complete line instead of its record: PIT_FOLLOW_RECORD with *line (n
 * bytes, no '\n'; valid until the next call) set, or AGAIN, PARTIAL, CLOSED as
 * above; negative: a read error or a line longer than 1 GiB. (Not to be mixed
 * with pit_follower_next on one follower: lines taken here are not parsed.) */
int pit_follower_line(struct pit_follower *f, const char **line, size_t *n, struct pit_err *e);
/* The writer is gone (the caller killed or reaped it): nothing more is read, an
 * unfinished last line counts as complete, then CLOSED. */
void pit_follower_writer_gone(struct pit_follower *f);
void pit_follower_release(struct pit_follower *f);

/* ---- the run log (runlog.c): one fold of an elastic run's records ----
 * An elastic run (pitstop run) is one stream of records; pit_runlog_add folds
 * each, in file order, into the run as every reader sees it: its generations
 * (membership, steps, times, how each ended), its nodes (start, ready, stop or
 * lost, market, price), its decisions and its checkpoints. pit_runlog_load does
 * the same from an events file, live or finished: a last line still being
 * written (no newline yet) is left for a later load, never an error.
 * Invariants: the fold depends only on the records and their order; node
 * intervals are open (t_stop NaN) until a stop or lost record; a generation's
 * membership is the nodes up at its first init or iteration record (as the
 * controller held them), else its init record's config "membership"; before
 * either (none may come: a kill, a failure before the first iteration, a cut
 * file), the nodes its node records leave up (m_nodes); nothing is priced
 * here (catalog/cost.c prices a fold's nodes on billed seconds). */
struct pit_runlog_gen {
  int gen;
  struct pit_membership m;    /* have_m: its first init or iteration's; else (m_nodes) the nodes up
                                 after each of its records until its first lost record, which
                                 settles it (a node set aside after a failure, and its replacement,
                                 serve the next generation; a lost record that is its first: the
                                 nodes up before it); n == 0 while neither */
  int have_m;
  int m_nodes;                /* m is taken from node records alone: 1 still taken, 2 settled by a lost
                                 record of it; 0 none (or have_m) */
  int continued;              /* a node record of it says "continued": a controller that took the run
                                 over after its controller stopped began it */
  int64_t step_first, step_last; /* its iteration records' first and last steps; -1: none yet */
  int64_t niters;             /* its iteration records */
  int ranks;                  /* from its init record; -1 unknown */
  double t_first;             /* its first record's run time */
  double t_init;              /* its init record's t (NaN: none) */
  double init_s;              /* its init record's init_s (NaN: none) */
  double t_first_iter, t_last_iter; /* NaN: no iteration */
  double t_end;               /* its end record's t; NaN: no end (running, or it failed) */
  double total_s;             /* its end record's total_s */
  char status[16];            /* its end record's status ("done", "stopped", ...); "" none */
  char end_reason[16];        /* its end record's detail "reason" ("steady", "cap": it measured
                                 enough); "" none */
  int64_t iter0;              /* its first iteration in log->iters; -1: none (its iterations follow
                                 one another there unless a later generation's came between) */
  int nnodes;                 /* the nodes up when its membership was taken, in the controller's
                                 (rank) order: log->gen_nodes[node0 .. node0+nnodes) index log->nodes */
  int64_t node0;
  int in_place;               /* it began in place (its init record's config "in_place": the ranks that
                                 stayed after a shrink, no launch of its own; docs/run.md 5b) */
};
struct pit_runlog_node {
  char id[PIT_NAME_MAX];
  char itype[PIT_NAME_MAX];   /* as the node record names it (TYPE, or TYPE@market) */
  char base[PIT_NAME_MAX];    /* the type without its market */
  enum pit_market market;     /* its market (the record's "market", or an old file's TYPE@market;
                                 DEFAULT: neither) */
  char zone[PIT_NAME_MAX];    /* the record's "zone" ("": none named) */
  double price_h;             /* the record's price per hour (NaN: absent) */
  struct pit_rec_itype row;   /* its start record's "catalog" (have 0: absent) */
  int gen;                    /* the generation that started it */
  int adopted_gen;            /* the generation a restarted controller adopted it in (a second "ready"
                                 record, of a later generation than its first's); -1: none */
  double t_start, t_ready, t_stop; /* NaN: not (yet) */
  int lost;                   /* 1: it ended with a "lost" record (reclaimed, failed) */
};
struct pit_runlog_decision {
  int gen;
  double t;
  struct pit_decision d;      /* decoded detail (owned); all absent for a record without one; d.to
                                 falls back to the first alternative's membership */
};
struct pit_runlog_ckpt {
  int gen;
  double t, ckpt_s;
  int64_t step, bytes;
  char path[1024];            /* "" absent */
};
struct pit_runlog_iter {      /* one iteration record, compact: the progress over time */
  int gen;
  double t, step_s;
  int64_t step, batch;
  int nranks;                 /* its per-rank split: compute_s at log->rank_s[rank0 .. rank0+nranks),
                                 wait_s right after (NaN where absent); 0: none recorded */
  int64_t rank0;
  char samples[20];           /* its samples_digest ("" absent): the samples checked step by step (docs/dst.md) */
  double loss;                /* its scalar loss (NaN absent) */
};
struct pit_runlog {
  char run[PIT_NAME_MAX];     /* the first record's run id */
  int64_t planned_iters;      /* from an init record's config "planned_iters"; -1 unknown */
  double t_last;              /* the largest t seen; 0 before any record */
  long nrecords;
  int truncated;              /* pit_runlog_load: the file ended inside a line (still being written) */
  int ngens;  struct pit_runlog_gen *gens;         /* gens[g].gen == g; owned */
  size_t capgens;
  int nnodes; struct pit_runlog_node *nodes;       /* in start order; owned */
  size_t capnodes;
  int ndec;   struct pit_runlog_decision *dec;     /* in record order; owned */
  size_t capdec;
  int nckpt;  struct pit_runlog_ckpt *ckpt;        /* owned */
  size_t capckpt;
  int64_t niters; struct pit_runlog_iter *iters;   /* owned */
  size_t capiters;
  double *rank_s; size_t nrank_s, caprank_s;       /* the iterations' per-rank splits; owned */
  int *gen_nodes; size_t ngen_nodes, capgen_nodes; /* the generations' nodes; owned */
  double t_last_stop;         /* the last node stop or lost record's t (billing ends there); 0: none */
  /* between records: the nodes up now, in the controller's order (indexes into nodes) */
  int nup; int *up;
  size_t capup;
};
void pit_runlog_init(struct pit_runlog *log);
void pit_runlog_release(struct pit_runlog *log);
/* Folds one record in. PIT_EFORMAT for a generation < 0 or one more than 4096
 * past the last (messages without file:line: the caller adds it); PIT_ENOMEM.
 * Records of other types (validation, epoch) are counted and otherwise skipped. */
int pit_runlog_add(struct pit_runlog *log, const struct pit_record *r, struct pit_err *e);
/* Folds every complete line of an events file into log (initialised; it may hold
 * records already). Errors name file:line. */
int pit_runlog_load(struct pit_runlog *log, const char *path, struct pit_err *e);
/* The same, handing each record to fn (lineno: its line) after it is folded, so
 * that another view of the run (a predictor's series) is built from the one
 * reading; fn's error ends the load (named file:line). fn NULL: pit_runlog_load. */
int pit_runlog_load_each(struct pit_runlog *log, const char *path, pit_record_fn fn, void *ctx, struct pit_err *e);
/* The generation the run is in: the last one; NULL before any record. */
const struct pit_runlog_gen *pit_runlog_current(const struct pit_runlog *log);
/* 1 when the run's last generation ended "done" and no node is up. */
int pit_runlog_finished(const struct pit_runlog *log);
/* The last step done (the largest iteration step), -1 before any. */
int64_t pit_runlog_step(const struct pit_runlog *log);
/* 1 when the job is done by the records: the last generation that has an
 * init, iteration or end record ended with nothing after its end, and "done",
 * no status, or "stopped" because it measured enough (end_reason "steady" or
 * "cap"). A restarted controller's test of a run finished before. */
int pit_runlog_job_done(const struct pit_runlog *log);
/* The checkpoint record with the largest step that names a path; NULL if none. */
const struct pit_runlog_ckpt *pit_runlog_last_ckpt(const struct pit_runlog *log);

#endif
