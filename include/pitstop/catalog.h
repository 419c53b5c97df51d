/* pitstop/catalog.h — instance types and their prices (catalogs/NAME.tsv, SkyPilot's
 * vms.csv), and what a membership costs (docs/catalog.md).
 *
 * A catalog file is read by the names in its header line, so columns may come
 * in any order and columns pitstop does not know are ignored:
 *   pitstop TSV (tab or space separated, '#' comment lines, "-" = absent):
 *     required itype vcpus price_h billing_s min_s; optional memory_gib gpus
 *     accelerator spot_price_h boot_s region, and for the local provider cpus
 *     (CPUs of the set a node gets) and cpu_quota (the share of their time it
 *     may use, 0 < q <= 1, or "40%"); egress_usd_gb (US$ per GB out of the
 *     zone, >= 0) and net_gbps (Gbit/s, > 0) price and time a checkpoint's
 *     move between zones in `pitstop simulate`.
 *   A file whose first line is not a header is the old positional format
 *     "itype vcpus price_h billing_s min_s" (catalogs/aws.tsv before 2026-11).
 *   SkyPilot CSV (header starts with InstanceType): InstanceType, vCPUs,
 *     MemoryGiB, AcceleratorName, AcceleratorCount, Price, SpotPrice, Region,
 *     AvailabilityZone; billed per second with a 60 s minimum (not in the file).
 *     Rows without an on-demand Price are skipped; the rows of one type in the
 *     availability zones of a region become one type (the highest spot price).
 * Durations (billing_s, min_s, boot_s) may carry a unit s, min or h; memory_gib
 * MiB, GiB or TiB. Any other unit, a negative or non-numeric price, a missing
 * required column, a duplicate type: PIT_EFORMAT naming file:line.
 *
 * Invariants: a loaded catalog has at least one type, no type twice, every
 * price_h > 0 and finite, billing_s > 0, min_s >= 0; functions never print.
 */
#ifndef PITSTOP_CATALOG_H
#define PITSTOP_CATALOG_H

#include "pitstop/record.h"
#include "pitstop/util.h"

struct pit_itype {
  char name[PIT_NAME_MAX];
  int vcpus;               /* >= 1 (a fractional SkyPilot vCPU count is rounded up) */
  double memory_gib;       /* NaN: unknown */
  int gpus;                /* accelerators per node; 0 none, -1 unknown */
  char accelerator[PIT_NAME_MAX]; /* e.g. "V100"; "" none or unknown */
  double price_h;          /* US$ per hour, on-demand */
  double spot_price_h;     /* US$ per hour, spot; NaN: not offered / unknown */
  double billing_s;        /* billing granularity, seconds */
  double min_s;            /* minimum billed seconds per start */
  double boot_s;           /* seconds from start request to ready; NaN: unknown */
  int cpus;                /* local provider: CPUs in a node's set; -1: not emulable */
  double cpu_quota;        /* local provider: share of those CPUs' time, (0, 1]; NaN: no quota */
  char region[PIT_NAME_MAX]; /* "" when the catalog names none */
  double egress_usd_gb;    /* US$ per GB leaving the node's zone (a checkpoint's move); NaN: unknown */
  double net_gbps;         /* network bandwidth of a node, Gbit/s (a checkpoint's transfer); NaN: unknown */
};

/* types: malloc'd array of n, owned by the catalog (pit_catalog_release). */
struct pit_catalog {
  struct pit_itype *types;
  int n;
};

/* Loads a catalog file (format by its header, see above). Errors name file:line.
 * An empty catalog is an error; so is a catalog of several regions. */
int pit_catalog_load(struct pit_catalog *c, const char *path, struct pit_err *e);
/* Only the rows of region (NULL: as pit_catalog_load). A catalog without a
 * region column, or with no type in region, is an error. */
int pit_catalog_load_region(struct pit_catalog *c, const char *path, const char *region, struct pit_err *e);
const struct pit_itype *pit_catalog_find(const struct pit_catalog *c, const char *name);
void pit_catalog_release(struct pit_catalog *c);
/* Seconds billed for running secs seconds on one node of type t:
 * max(secs, min_s) rounded up to a multiple of billing_s. */
double pit_itype_billed_s(const struct pit_itype *t, double secs);

enum pit_pricing { PIT_ON_DEMAND = 0, PIT_SPOT = 1 };

/* US$ for one node that ran secs seconds at price_h per hour (the price its
 * node record carries: on-demand or spot), billed as its type t bills
 * (pit_itype_billed_s); t NULL (a type the catalog lacks): raw seconds. 0 for
 * secs <= 0 or NaN, NaN for a price that is not a number. */
double pit_node_cost(const struct pit_itype *t, double price_h, double secs);

/* An elastic run's fold (record.h, the run log) priced on billed seconds: the
 * one accounting of a run, behind the run's report, the replay's "this run",
 * pitstop status and report.html. Each node bills from its start record to its
 * stop (or lost) record, an open one to until (NaN: the fold's last record),
 * at its node record's price (the market it ran on; NaN: the catalog's
 * on-demand price) and as its base type bills (pit_node_cost; a type the
 * catalog lacks, or cat NULL: raw seconds). A generation's cost is its share
 * of its nodes' bills: each node's billed cost split by the raw seconds it
 * spent in each generation's span, the spans cutting the run at each
 * generation's first record; so the generations add up to the total. */
struct pit_runlog_cost {
  double total;               /* Σ nodes' cost, US$ */
  int nnodes;                 /* == log->nnodes */
  struct pit_runlog_node_cost {
    double secs, billed_s;    /* raw and billed seconds */
    double cost;              /* at its record's price */
    double od_cost;           /* the same billed seconds at the catalog's on-demand price (cost if none) */
  } *nodes;                   /* owned */
  int ngens;                  /* == log->ngens */
  double *gen_cost;           /* owned */
};
int pit_runlog_cost(const struct pit_runlog *log, const struct pit_catalog *cat, double until,
                    struct pit_runlog_cost *c, struct pit_err *e);
void pit_runlog_cost_release(struct pit_runlog_cost *c);
/* The catalog a run was priced by, from its node start records' "catalog" rows
 * (record.h): one type per base type the run started, from its first node's row.
 * PIT_ENOTFOUND (c empty) when the fold has no node, or a node without a row
 * (files written before the rows, a type its catalog lacked): give the catalog then. */
int pit_catalog_from_runlog(struct pit_catalog *c, const struct pit_runlog *log, struct pit_err *e);

/* US$ for running membership m for secs seconds (every node started once):
 *   Σ over entries of nodes × price_h / 3600 × pit_itype_billed_s(type, secs).
 * Example: m5.large (0.096 $/h, per second, 60 s minimum) ×2 + c5.xlarge (0.17 $/h)
 * ×1 for 30 s: 2 × 0.096/3600 × 60 + 0.17/3600 × 60 = 0.00603 $.
 * Errors: an empty membership, a type not in the catalog (PIT_ENOTFOUND), no
 * spot price for PIT_SPOT, secs < 0 or not finite. */
int pit_catalog_cost(const struct pit_catalog *c, const struct pit_membership *m, double secs, double *usd,
                     struct pit_err *e);
int pit_catalog_cost_priced(const struct pit_catalog *c, const struct pit_membership *m, double secs,
                            enum pit_pricing pricing, double *usd, struct pit_err *e);
/* Samples per US$ of a job of job_s seconds at t_p seconds per iteration of
 * batch samples (global): (job_s / t_p) × batch / pit_catalog_cost(m, job_s).
 * With per-second billing and job_s >= min_s this is DESIGN.md's
 * 3600 × batch / (t_p × Σ nodes × price_h). Errors: t_p or job_s <= 0, batch < 1,
 * and those of pit_catalog_cost. */
int pit_catalog_samples_per_dollar(const struct pit_catalog *c, const struct pit_membership *m, double t_p,
                                   double batch, double job_s, double *spd, struct pit_err *e);

/* The default catalog file name ("local.tsv": the local provider's types, for run,
 * profile and simulate --replay; "aws.tsv": plot and parse) for the program at exe,
 * its resolved path (the CLI passes /proc/self/exe; NULL or "": only the fixed places).
 * The first readable of:
 *   EXEDIR/../share/pitstop/catalogs/NAME  an installed prefix, wherever it was moved
 *   EXEDIR/../catalogs/NAME                a build directory inside the source tree
 *   SOURCE/catalogs/NAME                   the source tree it was built from (out-of-tree build)
 *   DATADIR/pitstop/catalogs/NAME          the install prefix given to CMake
 * The working directory plays no part. Writes the path to out (cap bytes) and
 * returns 0; PIT_ENOTFOUND naming the places tried (out = ""). */
int pit_catalog_default_path(const char *exe, const char *name, char *out, size_t cap, struct pit_err *e);

#endif
