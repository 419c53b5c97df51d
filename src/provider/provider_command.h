/* provider_command.h — private to the `command` provider (provider_command.c:
 * its operations and node files; provider_command_conf.c: its presets, the config
 * file, argv templates and the output read back): the config's structs and the
 * functions the two files share. */
#ifndef PIT_PROVIDER_COMMAND_H
#define PIT_PROVIDER_COMMAND_H

#include <regex.h>

#include "provider/provider_impl.h"

#define T_ARGS 64
#define MAX_ITEMS 256
#define MAX_STATES 8

enum tmpl_kind { TK_START, TK_STOP, TK_LIST, TK_NOTICE, TK_TAG, TK_WRAP, TK_N };
static const char *const tk_name[TK_N] = {"start", "stop", "list", "notice", "tag", "wrap"};

/* How a command's output becomes items {id, state, itype, host, tags}. */
enum { F_ID, F_STATE, F_ITYPE, F_HOST, F_TAGS, F_N };
static const char *const f_name[F_N] = {"id", "state", "itype", "host", "tags"};
struct outfmt {
  int json;                     /* 1: JSON paths; 0: a line regex */
  char items[128];              /* json: path to the items ("Reservations[].Instances[]") */
  char path[F_N][64];           /* json: each field's path within an item ("State.Name"); "" absent */
  regex_t re;                   /* lines: one item per matching line */
  int have_re, group[F_N];      /* lines: field → capture group (0: absent) */
  regex_t ignore;               /* lines: lines to skip (headers); have_ignore */
  int have_ignore;
};

struct item {
  char id[PIT_NAME_MAX], state[64], itype[PIT_NAME_MAX], host[128], tags[256];
};

struct cmdp {
  char file[1024];              /* the config file, for messages ("preset NAME" without one) */
  char *t[TK_N][T_ARGS];        /* templates (owned strings), NULL-terminated; t[k][0] NULL: none */
  struct outfmt fmt_start, fmt_list, fmt_notice;
  char *var_name[32], *var_val[32]; /* owned */
  int nvars;
  char spot_types[16][PIT_NAME_MAX];
  int nspot;
  char zones[PIT_ZONES_MAX][PIT_ZONE_MAX]; /* "zones": where nodes may start (the controller picks) */
  int nzones;
  char host[128];               /* "" or the host every node is reached at (tests: localhost) */
  char ready[MAX_STATES][32], gone[MAX_STATES][32], notice[MAX_STATES][32];
  int nready, ngone, nnotice;
  double start_timeout_s, stop_timeout_s, list_timeout_s, boot_timeout_s, poll_s, retry_wait_s, grace_s;
  int start_retries;
  double last_poll;             /* pit_now() of the last poll's list */
  struct pit_err poll_err;      /* the last poll's error (code 0: it answered), repeated until the next */
  char reported[MAX_ITEMS][PIT_NAME_MAX]; /* ids already reported by poll (each once) */
  int reported_kind[MAX_ITEMS], nreported;
  char wrapbuf[T_ARGS][1100];   /* wrap's expanded entries (valid until the next call) */
  int wrap_shell;               /* "wrap_shell": the wrap is a remote shell (ssh); -1 unset: an ssh
                                   wrap is one (provider.h wrap_shell) */
};

/* The values a template's placeholders take. */
struct subst {
  const char *itype, *count, *run, *id, *host, *market, *zone;
};

/* Expands template k into argv (owned strings in out, NULL-terminated). */
int ctl_cmd_expand(const struct cmdp *c, enum tmpl_kind k, const struct subst *s, int spot, char **out,
                   struct pit_err *e);
/* Frees the strings of a NULL-terminated argv from ctl_cmd_expand. */
void ctl_cmd_argv_release(char **v);
/* Runs template k with a time-out: 0 and *status, or < 0 when it could not run (provider_command_conf.c). */
int ctl_cmd_run_tmpl(struct pit_provider *p, enum tmpl_kind k, const struct subst *s, int spot, double timeout_s,
                     char **out, int *status, char *argv0, struct pit_err *e);
/* The same for template k followed by the words more[0..nmore) (a remote shell's command). */
int ctl_cmd_run_tmpl_more(struct pit_provider *p, enum tmpl_kind k, const struct subst *s, int spot,
                          const char *const *more, int nmore, double timeout_s, char **out, int *status,
                          char *argv0, struct pit_err *e);
/* The items a command's output holds, read with fmt (JSON paths or a line regex). */
int ctl_cmd_parse_items(const struct outfmt *f, const char *text, const char *what, struct item *it, int cap,
                        int *nit, struct pit_err *e);
/* Defaults, then the preset the file names, then the file's own keys (--provider-config). */
int ctl_cmd_open_config(struct pit_provider *p, struct cmdp *c, struct pit_err *e);
/* Frees c and everything it owns. */
void ctl_cmd_free(struct cmdp *c);

#endif
