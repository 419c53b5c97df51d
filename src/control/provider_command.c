/* provider_command.c — the `command` provider: nodes of any cloud, started,
 * stopped and listed through that cloud's own CLI (the AWS CLI, CLAP's
 * clapp), from argv templates in a JSON config file (--provider-config) or
 * a built-in preset ("aws", "clap"). docs/providers.md describes the file.
 *
 * A template is a list of argv entries; each entry has its placeholders
 * {itype} {count} {run} {id} {host} {market} and the config's "vars"
 * ({image}, {key}, ...) replaced, and becomes ONE argv entry whatever the
 * values hold: nothing reaches a shell. An entry "spot?X" is X for a spot
 * start and absent otherwise ("ondemand?X": the reverse). A '{' not followed
 * by a lower-case name and '}' is literal (AWS's Tags=[{Key=..}]).
 *
 * Invariants:
 *  - every node is tagged with the run id (the start template carries
 *    {run}); list finds exactly the run's nodes (the CLI's filter, and a
 *    "tags" field when the output has one);
 *  - STATE_DIR/nodes/ID.node (node_files.c) is written (atomically) as soon as a start
 *    printed the node's id, and removed once the node is stopped, so a
 *    restarted controller knows every node it may have started;
 *  - a start that fails or hangs (killed after start_timeout_s) is retried
 *    at most start_retries times; whatever an attempt created (a node of the
 *    run that no file names) is stopped, and its billed seconds are counted
 *    as waste (p->waste_s, p->waste_usd, the node's waste_s);
 *  - output that cannot be read (not JSON, lines no pattern matches) is an
 *    error naming the command, never a guess. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/control_impl.h"

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
  char host[128];               /* "" or the host every node is reached at (tests: localhost) */
  char ready[MAX_STATES][32], gone[MAX_STATES][32], notice[MAX_STATES][32];
  int nready, ngone, nnotice;
  double start_timeout_s, stop_timeout_s, list_timeout_s, boot_timeout_s, poll_s, retry_wait_s, grace_s;
  int start_retries;
  double last_poll;             /* pit_now() of the last poll's list */
  struct pit_err poll_err;      /* the last poll's error (code 0: it answered), repeated until the next */
  char reported[MAX_ITEMS][PIT_NAME_MAX]; /* ids already reported by poll (each once) */
  int reported_kind[MAX_ITEMS], nreported;
  char wrapbuf[T_ARGS][256];    /* wrap's expanded entries (valid until the next call) */
};

/* ---------------- presets ---------------- */

struct preset {
  const char *name, *json;
};
static const struct preset presets[] = {
    {"aws",
     "{\"start\":[\"aws\",\"ec2\",\"run-instances\",\"--instance-type\",\"{itype}\",\"--count\",\"1\","
     "\"--image-id\",\"{image}\",\"--key-name\",\"{key}\",\"--security-group-ids\",\"{security_group}\","
     "\"spot?--instance-market-options\",\"spot?MarketType=spot\",\"--tag-specifications\","
     "\"ResourceType=instance,Tags=[{Key=pitstop-run,Value={run}}]\","
     "\"spot?ResourceType=spot-instances-request,Tags=[{Key=pitstop-run,Value={run}}]\",\"--output\",\"json\"],"
     "\"stop\":[\"aws\",\"ec2\",\"terminate-instances\",\"--instance-ids\",\"{id}\",\"--output\",\"json\"],"
     "\"list\":[\"aws\",\"ec2\",\"describe-instances\",\"--filters\",\"Name=tag:pitstop-run,Values={run}\","
     "\"--output\",\"json\"],"
     "\"notice\":[\"aws\",\"ec2\",\"describe-spot-instance-requests\",\"--filters\","
     "\"Name=tag:pitstop-run,Values={run}\",\"--output\",\"json\"],"
     "\"start_output\":{\"items\":\"Instances[]\",\"id\":\"InstanceId\",\"state\":\"State.Name\","
     "\"itype\":\"InstanceType\",\"host\":\"PrivateIpAddress\"},"
     "\"list_output\":{\"items\":\"Reservations[].Instances[]\",\"id\":\"InstanceId\",\"state\":\"State.Name\","
     "\"itype\":\"InstanceType\",\"host\":\"PrivateIpAddress\"},"
     "\"notice_output\":{\"items\":\"SpotInstanceRequests[]\",\"id\":\"InstanceId\",\"state\":\"Status.Code\"},"
     "\"ready_states\":[\"running\"],\"gone_states\":[\"shutting-down\",\"terminated\",\"stopping\",\"stopped\"],"
     "\"notice_states\":[\"marked-for-termination\"],\"grace_s\":120}"},
    {"clap",
     "{\"start\":[\"clapp\",\"node\",\"start\",\"{itype}:{count}\"],"
     "\"tag\":[\"clapp\",\"node\",\"add-tag\",\"{id}\",\"--tag\",\"pitstop-run={run}\"],"
     "\"stop\":[\"clapp\",\"node\",\"stop\",\"{id}\"],"
     "\"list\":[\"clapp\",\"node\",\"list\"],"
     "\"start_output\":{\"regex\":\"^\\\\* Node: ([^ ,]+), config: ([^ ,]+),.* status: ([a-z]+), ip: ([^ ,]*)\","
     "\"fields\":[\"id\",\"itype\",\"state\",\"host\"],\"ignore\":\"^(Started|Listing|[0-9]+ nodes?|-+)\"},"
     "\"list_output\":{\"regex\":\"^\\\\* Node: ([^ ,]+), config: ([^ ,]+),.* status: ([a-z]+), ip: ([^ ,]*), "
     "tags: ([^,]*)\",\"fields\":[\"id\",\"itype\",\"state\",\"host\",\"tags\"],"
     "\"ignore\":\"^(Listing|[0-9]+ nodes?|-+)\"},"
     "\"ready_states\":[\"reachable\"],\"gone_states\":[\"stopped\",\"terminated\"],"
     "\"notice_states\":[\"reclaiming\"],\"grace_s\":120}"},
};

/* ---------------- config ---------------- */

static int cfg_err(struct cmdp *c, struct pit_err *e, const char *fmt, const char *a, const char *b) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, a, b ? b : "");
  return pit_err_set(e, PIT_EFORMAT, "%s: %s", c->file, msg);
}

static int load_argv(struct cmdp *c, enum tmpl_kind k, const cJSON *a, struct pit_err *e) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) >= T_ARGS)
    return cfg_err(c, e, "\"%s\" must be a list of 1 to 63 argv strings", tk_name[k], NULL);
  for (int i = 0; c->t[k][i]; i++)
    free(c->t[k][i]);
  memset(c->t[k], 0, sizeof c->t[k]);
  int i = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, a) {
    if (!cJSON_IsString(s))
      return cfg_err(c, e, "\"%s\": every argv entry must be a string", tk_name[k], NULL);
    if (!(c->t[k][i++] = strdup(s->valuestring)))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  return 0;
}

static int load_states(struct cmdp *c, const cJSON *a, const char *key, char st[][32], int *n,
                       struct pit_err *e) {
  if (!a)
    return 0;
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > MAX_STATES)
    return cfg_err(c, e, "\"%s\" must be a list of at most 8 state names", key, NULL);
  *n = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, a) {
    if (!cJSON_IsString(s))
      return cfg_err(c, e, "\"%s\": states are strings", key, NULL);
    snprintf(st[(*n)++], 32, "%s", s->valuestring);
  }
  return 0;
}

static void fmt_free(struct outfmt *f) {
  if (f->have_re)
    regfree(&f->re);
  if (f->have_ignore)
    regfree(&f->ignore);
  f->have_re = f->have_ignore = 0;
}

static int load_fmt(struct cmdp *c, struct outfmt *f, const cJSON *o, const char *key, struct pit_err *e) {
  if (!o)
    return 0;
  if (!cJSON_IsObject(o))
    return cfg_err(c, e, "\"%s\" must be an object", key, NULL);
  fmt_free(f);
  memset(f, 0, sizeof *f);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(o, "items");
  const cJSON *re = cJSON_GetObjectItemCaseSensitive(o, "regex");
  if (cJSON_IsString(items)) {
    f->json = 1;
    snprintf(f->items, sizeof f->items, "%s", items->valuestring);
    for (int k = 0; k < F_N; k++) {
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, f_name[k]);
      if (cJSON_IsString(p))
        snprintf(f->path[k], sizeof f->path[k], "%s", p->valuestring);
    }
    if (!f->path[F_ID][0])
      return cfg_err(c, e, "\"%s\": a JSON output needs the path of \"id\"", key, NULL);
    return 0;
  }
  if (!cJSON_IsString(re))
    return cfg_err(c, e, "\"%s\" needs \"items\" (JSON paths) or \"regex\" (one item per line)", key, NULL);
  if (regcomp(&f->re, re->valuestring, REG_EXTENDED) != 0)
    return cfg_err(c, e, "\"%s\": '%s' is not an extended regular expression", key, re->valuestring);
  f->have_re = 1;
  const cJSON *fields = cJSON_GetObjectItemCaseSensitive(o, "fields");
  if (!cJSON_IsArray(fields))
    return cfg_err(c, e, "\"%s\": \"fields\" names each capture group (id, state, itype, host, tags)", key, NULL);
  int g = 1;
  const cJSON *s;
  cJSON_ArrayForEach(s, fields) {
    int k = 0;
    while (k < F_N && !(cJSON_IsString(s) && strcmp(s->valuestring, f_name[k]) == 0))
      k++;
    if (k == F_N)
      return cfg_err(c, e, "\"%s\": unknown field %s (id, state, itype, host, tags)", key,
                     cJSON_IsString(s) ? s->valuestring : "?");
    f->group[k] = g++;
  }
  if (!f->group[F_ID] || (size_t)g - 1 > f->re.re_nsub)
    return cfg_err(c, e, "\"%s\": the fields must name \"id\" and no more groups than the regex has", key, NULL);
  const cJSON *ig = cJSON_GetObjectItemCaseSensitive(o, "ignore");
  if (cJSON_IsString(ig)) {
    if (regcomp(&f->ignore, ig->valuestring, REG_EXTENDED | REG_NOSUB) != 0)
      return cfg_err(c, e, "\"%s\": ignore '%s' is not an extended regular expression", key, ig->valuestring);
    f->have_ignore = 1;
  }
  return 0;
}

static int num(struct cmdp *c, const cJSON *o, const char *key, double *v, double lo, struct pit_err *e) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!x)
    return 0;
  if (!cJSON_IsNumber(x) || !(x->valuedouble >= lo) || !isfinite(x->valuedouble))
    return cfg_err(c, e, "\"%s\" must be a number of seconds (at least %s)", key, lo > 0 ? "a little" : "0");
  *v = x->valuedouble;
  return 0;
}

/* Applies one JSON object (a preset, then the user's file) over c. */
static int apply(struct cmdp *c, const cJSON *o, struct pit_err *e) {
  int rc = 0;
  for (int k = 0; k < TK_N && rc == 0; k++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, tk_name[k]);
    if (a)
      rc = load_argv(c, k, a, e);
  }
  if (rc == 0)
    rc = load_fmt(c, &c->fmt_start, cJSON_GetObjectItemCaseSensitive(o, "start_output"), "start_output", e);
  if (rc == 0)
    rc = load_fmt(c, &c->fmt_list, cJSON_GetObjectItemCaseSensitive(o, "list_output"), "list_output", e);
  if (rc == 0)
    rc = load_fmt(c, &c->fmt_notice, cJSON_GetObjectItemCaseSensitive(o, "notice_output"), "notice_output", e);
  if (rc == 0)
    rc = load_states(c, cJSON_GetObjectItemCaseSensitive(o, "ready_states"), "ready_states", c->ready, &c->nready, e);
  if (rc == 0)
    rc = load_states(c, cJSON_GetObjectItemCaseSensitive(o, "gone_states"), "gone_states", c->gone, &c->ngone, e);
  if (rc == 0)
    rc = load_states(c, cJSON_GetObjectItemCaseSensitive(o, "notice_states"), "notice_states", c->notice,
                     &c->nnotice, e);
  const char *nums[] = {"start_timeout_s", "stop_timeout_s", "list_timeout_s", "boot_timeout_s",
                        "poll_s",          "retry_wait_s",   "grace_s"};
  double *dst[] = {&c->start_timeout_s, &c->stop_timeout_s, &c->list_timeout_s, &c->boot_timeout_s,
                   &c->poll_s,          &c->retry_wait_s,   &c->grace_s};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0] && rc == 0; i++)
    rc = num(c, o, nums[i], dst[i], strstr(nums[i], "timeout") ? 0.1 : 0, e);
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "start_retries");
  if (rc == 0 && r) {
    if (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble > 20)
      return cfg_err(c, e, "\"%s\" must be a count from 0 to 20", "start_retries", NULL);
    c->start_retries = (int)r->valuedouble;
  }
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "host");
  if (rc == 0 && h) {
    if (!cJSON_IsString(h))
      return cfg_err(c, e, "\"%s\" must be a host name", "host", NULL);
    snprintf(c->host, sizeof c->host, "%s", h->valuestring);
  }
  const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "spot");
  if (rc == 0 && sp) {
    if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) > 16)
      return cfg_err(c, e, "\"%s\" must be a list of instance types started on the spot market", "spot", NULL);
    const cJSON *s;
    c->nspot = 0;
    cJSON_ArrayForEach(s, sp) if (cJSON_IsString(s)) snprintf(c->spot_types[c->nspot++], PIT_NAME_MAX, "%s",
                                                            s->valuestring);
  }
  const cJSON *vars = cJSON_GetObjectItemCaseSensitive(o, "vars");
  if (rc == 0 && vars) {
    if (!cJSON_IsObject(vars))
      return cfg_err(c, e, "\"%s\" must be an object of strings (image, key, ...)", "vars", NULL);
    const cJSON *v;
    cJSON_ArrayForEach(v, vars) {
      if (!cJSON_IsString(v) || c->nvars == 32)
        return cfg_err(c, e, "vars.%s must be a string (at most 32 vars)", v->string, NULL);
      c->var_name[c->nvars] = strdup(v->string);
      c->var_val[c->nvars] = strdup(v->valuestring);
      if (!c->var_name[c->nvars] || !c->var_val[c->nvars])
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
      c->nvars++;
    }
  }
  return rc;
}

static void cmd_free(struct cmdp *c) {
  for (int k = 0; k < TK_N; k++)
    for (int i = 0; c->t[k][i]; i++)
      free(c->t[k][i]);
  for (int i = 0; i < c->nvars; i++) {
    free(c->var_name[i]);
    free(c->var_val[i]);
  }
  fmt_free(&c->fmt_start);
  fmt_free(&c->fmt_list);
  fmt_free(&c->fmt_notice);
  free(c);
}

/* The whole of a file, NUL-terminated (malloc'd); NULL when it cannot be read. */
static char *read_whole(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  size_t cap = 1 << 14, n = 0;
  char *text = malloc(cap);
  while (text) {
    n += fread(text + n, 1, cap - n - 1, f);
    if (n + 1 < cap || ferror(f))
      break;
    char *g = realloc(text, cap * 2);
    if (!g)
      free(text);
    text = g;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (text && bad) {
    free(text);
    return NULL;
  }
  if (text)
    text[n] = 0;
  return text;
}

static int parse_json_at(struct cmdp *c, const char *text, const char *what, cJSON **out, struct pit_err *e) {
  const char *end = NULL;
  *out = cJSON_ParseWithOpts(text, &end, 1);
  if (*out)
    return 0;
  int line = 1;
  while (end && end > text && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
    end--; /* an error at the end of the file: the last line that holds something */
  for (const char *p = text; end && p < end; p++)
    line += *p == '\n';
  (void)c;
  return pit_err_set(e, PIT_EFORMAT, "%s:%d: not valid JSON", what, line);
}

static int open_config(struct pit_provider *p, struct cmdp *c, struct pit_err *e);

static int c_open(struct pit_provider *p, struct pit_err *e) {
  struct cmdp *c = calloc(1, sizeof *c);
  if (!c)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = open_config(p, c, e);
  if (rc < 0) {
    cmd_free(c);
    p->impl = NULL;
  }
  return rc;
}

/* Defaults, then the preset the file names, then the file's own keys. */
static int open_config(struct pit_provider *p, struct cmdp *c, struct pit_err *e) {
  c->start_timeout_s = 120;
  c->stop_timeout_s = 60;
  c->list_timeout_s = 60;
  c->boot_timeout_s = 600;
  c->poll_s = 5;
  c->retry_wait_s = 5;
  c->start_retries = 2;
  c->grace_s = 120;
  c->last_poll = -1e9;
  p->impl = c;
  if (!p->conf.config) {
    pit_err_set(e, PIT_EARG, "the command provider needs --provider-config FILE");
    pit_err_hint(e, "a JSON file: {\"preset\": \"aws\", \"vars\": {...}} or your own start/stop/list templates "
                    "(docs/providers.md)");
    return PIT_EARG;
  }
  snprintf(c->file, sizeof c->file, "%s", p->conf.config);
  char *text = read_whole(c->file);
  if (!text)
    return pit_err_errno(e, PIT_EIO, "cannot read '%s'", c->file);
  cJSON *user = NULL;
  int rc = parse_json_at(c, text, c->file, &user, e);
  free(text);
  if (rc < 0)
    return rc;
  if (!cJSON_IsObject(user)) {
    cJSON_Delete(user);
    return cfg_err(c, e, "the config must be a JSON object%s%s", "", NULL);
  }
  const cJSON *pre = cJSON_GetObjectItemCaseSensitive(user, "preset");
  if (pre) {
    size_t i = 0;
    while (i < sizeof presets / sizeof presets[0] &&
           !(cJSON_IsString(pre) && strcmp(presets[i].name, pre->valuestring) == 0))
      i++;
    if (i == sizeof presets / sizeof presets[0]) {
      rc = cfg_err(c, e, "unknown preset '%s' (aws, clap)", cJSON_IsString(pre) ? pre->valuestring : "?", NULL);
      cJSON_Delete(user);
      return rc;
    }
    cJSON *po = cJSON_Parse(presets[i].json);
    rc = po ? apply(c, po, e) : PIT_BUG(e, "preset %s is not JSON", presets[i].name);
    cJSON_Delete(po);
  }
  if (rc == 0)
    rc = apply(c, user, e);
  cJSON_Delete(user);
  if (rc < 0)
    return rc;
  const char *need[] = {"start", "stop", "list"};
  for (int k = 0; k < 3; k++)
    if (!c->t[k][0])
      return cfg_err(c, e, "no \"%s\" template (give one, or a \"preset\")", need[k], NULL);
  if (!c->fmt_list.json && !c->fmt_list.have_re)
    return cfg_err(c, e, "no \"%s\" (how to read the list command's output)", "list_output", NULL);
  if (c->nready == 0)
    return cfg_err(c, e, "no \"%s\" (the states of a node ready to run ranks)", "ready_states", NULL);
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/cloud", p->conf.state_dir);
  return pit_mkdir_p(dir, e);
}

static void c_close(struct pit_provider *p) {
  if (p->impl)
    cmd_free(p->impl);
  p->impl = NULL;
}

/* ---------------- templates ---------------- */

struct subst {
  const char *itype, *count, *run, *id, *host, *market;
};

static const char *lookup(const struct cmdp *c, const struct subst *s, const char *name, size_t n) {
  const char *names[] = {"itype", "count", "run", "id", "host", "market"};
  const char *vals[] = {s->itype, s->count, s->run, s->id, s->host, s->market};
  for (int i = 0; i < 6; i++)
    if (strlen(names[i]) == n && strncmp(names[i], name, n) == 0)
      return vals[i] ? vals[i] : "";
  for (int i = 0; i < c->nvars; i++)
    if (strlen(c->var_name[i]) == n && strncmp(c->var_name[i], name, n) == 0)
      return c->var_val[i];
  return NULL;
}

/* Expands template k into argv (owned strings in out, NULL-terminated). */
static int expand(const struct cmdp *c, enum tmpl_kind k, const struct subst *s, int spot, char **out,
                  struct pit_err *e) {
  int n = 0;
  for (int i = 0; c->t[k][i]; i++) {
    const char *src = c->t[k][i];
    if (strncmp(src, "spot?", 5) == 0 || strncmp(src, "ondemand?", 9) == 0) {
      int want_spot = src[0] == 's';
      if (want_spot != spot)
        continue;
      src = strchr(src, '?') + 1;
    }
    char buf[2048];
    size_t at = 0;
    for (const char *q = src; *q && at + 1 < sizeof buf;) {
      size_t len = 0;
      if (*q == '{') {
        while ((q[1 + len] >= 'a' && q[1 + len] <= 'z') || q[1 + len] == '_' || (q[1 + len] >= '0' && q[1 + len] <= '9'))
          len++;
      }
      if (*q == '{' && len > 0 && q[1 + len] == '}') {
        const char *v = lookup(c, s, q + 1, len);
        if (!v) {
          for (int j = 0; j < n; j++)
            free(out[j]);
          pit_err_set(e, PIT_EARG, "%s: the %s template names {%.*s}, which has no value", c->file, tk_name[k],
                      (int)len, q + 1);
          pit_err_hint(e, "give it in \"vars\": {\"%.*s\": \"...\"}", (int)len, q + 1);
          return PIT_EARG;
        }
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s", v);
        q += len + 2;
        continue;
      }
      buf[at++] = *q++;
    }
    buf[at < sizeof buf ? at : sizeof buf - 1] = 0;
    if (n + 1 >= T_ARGS || !(out[n] = strdup(buf))) {
      for (int j = 0; j < n; j++)
        free(out[j]);
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    n++;
  }
  out[n] = NULL;
  return 0;
}

static void argv_release(char **v) {
  for (int i = 0; v[i]; i++)
    free(v[i]);
  v[0] = NULL;
}

/* Runs template k (expanded) with a time-out; its stdout into *out (malloc'd),
 * stderr appended to STATE_DIR/provider.log. Returns 0 and *status (exit
 * code, 128+signal, or -1 when it hung and was killed), or < 0 when it could
 * not run at all. */
static int run_tmpl(struct pit_provider *p, enum tmpl_kind k, const struct subst *s, int spot, double timeout_s,
                    char **out, int *status, char *argv0, struct pit_err *e) {
  struct cmdp *c = p->impl;
  char *argv[T_ARGS];
  *out = NULL;
  int rc = expand(c, k, s, spot, argv, e);
  if (rc < 0)
    return rc;
  snprintf(argv0, 64, "%s", argv[0]);
  char outp[1100], logp[1100];
  snprintf(outp, sizeof outp, "%s/cloud/%s.out", p->conf.state_dir, tk_name[k]);
  snprintf(logp, sizeof logp, "%s/provider.log", p->conf.state_dir);
  FILE *lf = fopen(logp, "a");
  if (lf) {
    fprintf(lf, "--- %s:", tk_name[k]);
    for (int i = 0; argv[i]; i++)
      fprintf(lf, " [%s]", argv[i]);
    fputc('\n', lf);
    fclose(lf);
  }
  /* stdout kept whole (up to 4 MiB) and saved beside the log; stderr's tail into the log */
  size_t cap = (size_t)4 << 20;
  char *text = malloc(cap), err[4096];
  if (!text) {
    argv_release(argv);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int st = 0;
  struct pit_err e2 = {0};
  rc = pit_child_capture(argv, timeout_s, text, cap, err, sizeof err, &st, &e2);
  argv_release(argv);
  if (rc == PIT_ENOTFOUND || rc == PIT_ENOMEM || rc == PIT_EIO) {
    free(text);
    *e = e2;
    return rc;
  }
  if (rc < 0) { /* it hung: killed */
    st = -1;
    text[0] = 0;
    snprintf(err, sizeof err, "%s\n", e2.msg);
  }
  *status = st;
  if ((lf = fopen(logp, "a"))) {
    fprintf(lf, "%s%sstatus %d\n", err, err[0] && err[strlen(err) - 1] != '\n' ? "\n" : "", st);
    fclose(lf);
  }
  pit_file_write_atomic(outp, text, strlen(text), &e2);
  *out = text;
  return 0;
}

/* ---------------- output → items ---------------- */

/* Follows path ("A[].B.C[]") from node, appending the leaves to v. */
static void json_walk(const cJSON *node, const char *path, const cJSON **v, int *n, int cap) {
  if (!node || *n >= cap)
    return;
  if (!*path) {
    v[(*n)++] = node;
    return;
  }
  const char *dot = strchr(path, '.');
  size_t len = dot ? (size_t)(dot - path) : strlen(path);
  const char *rest = dot ? dot + 1 : "";
  int iter = len >= 2 && path[len - 2] == '[' && path[len - 1] == ']';
  char key[64];
  snprintf(key, sizeof key, "%.*s", (int)(iter ? len - 2 : len), path);
  const cJSON *x = key[0] ? cJSON_GetObjectItemCaseSensitive(node, key) : node;
  if (!iter) {
    json_walk(x, rest, v, n, cap);
    return;
  }
  if (!cJSON_IsArray(x))
    return;
  const cJSON *el;
  cJSON_ArrayForEach(el, x) json_walk(el, rest, v, n, cap);
}

static int parse_items(const struct outfmt *f, const char *text, const char *what, struct item *it, int cap,
                       int *nit, struct pit_err *e) {
  *nit = 0;
  if (f->json) {
    cJSON *root = NULL;
    int rc = parse_json_at(NULL, text, what, &root, e);
    if (rc < 0) {
      pit_err_hint(e, "its output is kept in the run directory's cloud/*.out");
      return rc;
    }
    const cJSON *v[MAX_ITEMS];
    int n = 0;
    json_walk(root, f->items, v, &n, MAX_ITEMS);
    for (int i = 0; i < n && *nit < cap; i++) {
      struct item *x = &it[*nit];
      memset(x, 0, sizeof *x);
      for (int k = 0; k < F_N; k++) {
        if (!f->path[k][0])
          continue;
        const cJSON *leaf[1];
        int nl = 0;
        json_walk(v[i], f->path[k], leaf, &nl, 1);
        char *dst[] = {x->id, x->state, x->itype, x->host, x->tags};
        size_t sz[] = {sizeof x->id, sizeof x->state, sizeof x->itype, sizeof x->host, sizeof x->tags};
        if (nl && cJSON_IsString(leaf[0]))
          snprintf(dst[k], sz[k], "%s", leaf[0]->valuestring);
      }
      if (x->id[0])
        (*nit)++;
    }
    cJSON_Delete(root);
    return 0;
  }
  int line = 0;
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    p += len + (nl ? 1 : 0);
    line++;
    size_t bl = strlen(buf);
    while (bl && (buf[bl - 1] == '\r' || buf[bl - 1] == ' '))
      buf[--bl] = 0;
    if (!bl || (f->have_ignore && regexec(&f->ignore, buf, 0, NULL, 0) == 0))
      continue;
    regmatch_t m[F_N + 4];
    if (regexec(&f->re, buf, F_N + 4, m, 0) != 0) {
      pit_err_set(e, PIT_EFORMAT, "%s:%d: a line this provider cannot read: '%.80s'", what, line, buf);
      pit_err_hint(e, "the config's regex (list_output/start_output) says what a node's line looks like");
      return PIT_EFORMAT;
    }
    if (*nit >= cap)
      continue;
    struct item *x = &it[*nit];
    memset(x, 0, sizeof *x);
    char *dst[] = {x->id, x->state, x->itype, x->host, x->tags};
    size_t sz[] = {sizeof x->id, sizeof x->state, sizeof x->itype, sizeof x->host, sizeof x->tags};
    for (int k = 0; k < F_N; k++) {
      int g = f->group[k];
      if (g && m[g].rm_so >= 0)
        snprintf(dst[k], sz[k], "%.*s", (int)(m[g].rm_eo - m[g].rm_so), buf + m[g].rm_so);
    }
    if (x->id[0])
      (*nit)++;
  }
  return 0;
}

static int in_states(const char st[][32], int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(st[i], s) == 0)
      return 1;
  return 0;
}

/* ---------------- node files (node_files.c: STATE_DIR/nodes/ID.node) ---------------- */

static int write_node(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  char text[512];
  snprintf(text, sizeof text, "%s %d %.9g %.9g %s\n", n->itype, n->spot, n->price_h, n->waste_s,
           n->host[0] ? n->host : "-");
  return ctl_node_file_write(p->conf.state_dir, n->id, text, e);
}

static int read_node(struct pit_provider *p, const char *id, struct pit_node *n) {
  char buf[512], host[128] = "";
  if (ctl_node_file_read(p->conf.state_dir, id, buf, sizeof buf) < 0)
    return -1;
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", id);
  if (sscanf(buf, "%63s %d %lf %lf %127s", n->itype, &n->spot, &n->price_h, &n->waste_s, host) != 5)
    return -1;
  snprintf(n->host, sizeof n->host, "%s", strcmp(host, "-") ? host : "");
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->t_start = n->t_ready = n->t_stop = NAN;
  return 0;
}

static void forget_node(struct pit_provider *p, const char *id) {
  struct pit_err e2 = {0};
  ctl_node_file_remove(p->conf.state_dir, id, &e2);
}

/* The ids of the node files, at most cap of them. */
static int known_ids(struct pit_provider *p, char ids[][PIT_NAME_MAX], int cap) {
  struct ctl_node_id *v = NULL;
  int n = 0;
  struct pit_err e2 = {0};
  if (ctl_node_files(p->conf.state_dir, &v, &n, &e2) < 0)
    return 0;
  int k = 0;
  for (; k < n && k < cap; k++)
    snprintf(ids[k], PIT_NAME_MAX, "%s", v[k].id);
  free(v);
  return k;
}

/* The run's nodes the cloud lists now (gone ones left out unless keep_gone). */
static int cloud_list(struct pit_provider *p, struct item *it, int cap, int *nit, struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct subst s = {.run = p->conf.run, .count = "1"};
  char *out = NULL, argv0[64];
  int st = 0;
  int rc = run_tmpl(p, TK_LIST, &s, 0, c->list_timeout_s, &out, &st, argv0, e);
  if (rc < 0)
    return rc;
  char what[128];
  snprintf(what, sizeof what, "the output of %s (list)", argv0);
  if (st != 0) {
    free(out);
    if (st < 0)
      return pit_err_set(e, PIT_ESTATE, "%s (list) did not answer within %.0f s", argv0, c->list_timeout_s);
    pit_err_set(e, PIT_ESTATE, "%s (list) failed with status %d", argv0, st);
    pit_err_hint(e, "its messages are in %s/provider.log", p->conf.state_dir);
    return PIT_ESTATE;
  }
  rc = parse_items(&c->fmt_list, out, what, it, cap, nit, e);
  free(out);
  if (rc < 0)
    return rc;
  /* with a tags field, only the run's own */
  char tag[PIT_NAME_MAX + 16];
  snprintf(tag, sizeof tag, "pitstop-run=%s", p->conf.run);
  int k = 0;
  for (int i = 0; i < *nit; i++) {
    int ours = 1;
    if (c->fmt_list.json ? c->fmt_list.path[F_TAGS][0] : c->fmt_list.group[F_TAGS]) {
      const char *at = strstr(it[i].tags, tag);
      ours = at && (at[strlen(tag)] == 0 || at[strlen(tag)] == ' ' || at[strlen(tag)] == ';' ||
                    at[strlen(tag)] == ',');
    }
    if (ours)
      it[k++] = it[i];
  }
  *nit = k;
  return 0;
}

static double billed_usd(struct pit_provider *p, const char *itype, int spot, double secs, double *billed) {
  const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
  *billed = t ? pit_itype_billed_s(t, secs) : secs;
  double price = !t ? 0 : spot && isfinite(t->spot_price_h) ? t->spot_price_h : t->price_h;
  return pit_node_cost(t, price, secs);
}

/* ---------------- ops ---------------- */

static int stop_id(struct pit_provider *p, const char *id, struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct subst s = {.run = p->conf.run, .id = id, .count = "1"};
  int rc = 0;
  for (int attempt = 0; attempt <= c->start_retries; attempt++) {
    char *out = NULL, argv0[64];
    int st = 0;
    rc = run_tmpl(p, TK_STOP, &s, 0, c->stop_timeout_s, &out, &st, argv0, e);
    free(out);
    if (rc < 0)
      return rc;
    if (st == 0)
      break;
    /* a node already gone is stopped */
    struct item it[MAX_ITEMS];
    int n = 0, there = 0;
    struct pit_err e2 = {0};
    if (cloud_list(p, it, MAX_ITEMS, &n, &e2) == 0) {
      for (int i = 0; i < n; i++)
        there |= strcmp(it[i].id, id) == 0 && !in_states(c->gone, c->ngone, it[i].state);
      if (!there)
        break;
    }
    rc = pit_err_set(e, PIT_ESTATE, "%s (stop %s) %s", argv0, id,
                     st < 0 ? "did not answer in time" : "failed");
    pit_err_hint(e, "its messages are in %s/provider.log; the node may still be billed", p->conf.state_dir);
  }
  if (rc < 0)
    return rc;
  forget_node(p, id);
  return 0;
}

static int c_stop(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  return stop_id(p, n->id, e);
}

/* Stops the run's listed nodes that no file names (what a failed attempt
 * created); returns how many, and adds their billed waste. */
static int stop_strays(struct pit_provider *p, const char *itype, int spot, double since, double *waste) {
  struct cmdp *c = p->impl;
  struct item it[MAX_ITEMS];
  int n = 0, stopped = 0;
  struct pit_err e2 = {0};
  if (cloud_list(p, it, MAX_ITEMS, &n, &e2) < 0)
    return 0;
  char ids[MAX_ITEMS][PIT_NAME_MAX];
  int nk = known_ids(p, ids, MAX_ITEMS);
  for (int i = 0; i < n; i++) {
    int known = in_states(c->gone, c->ngone, it[i].state);
    for (int j = 0; j < nk && !known; j++)
      known = strcmp(ids[j], it[i].id) == 0;
    if (known)
      continue;
    if (stop_id(p, it[i].id, &e2) == 0)
      stopped++;
    double billed;
    p->waste_usd += billed_usd(p, itype, spot, pit_now() - since, &billed);
    *waste += billed;
  }
  return stopped;
}

static int is_spot(const struct cmdp *c, const char *itype) {
  for (int i = 0; i < c->nspot; i++)
    if (strcmp(c->spot_types[i], itype) == 0)
      return 1;
  return 0;
}

/* One attempt: start, tag, wait until ready. 0 and n filled, or < 0 with e
 * saying why (what the attempt created is the caller's to clean). */
static int start_once(struct pit_provider *p, const char *itype, int spot, struct pit_node *n, double t0,
                      struct pit_err *e) {
  struct cmdp *c = p->impl;
  struct subst s = {.run = p->conf.run, .itype = itype, .count = "1", .market = spot ? "spot" : "on-demand"};
  char *out = NULL, argv0[64];
  int st = 0;
  int rc = run_tmpl(p, TK_START, &s, spot, c->start_timeout_s, &out, &st, argv0, e);
  if (rc < 0)
    return rc;
  if (st != 0) {
    free(out);
    if (st < 0)
      return pit_err_set(e, PIT_ESTATE, "%s (start %s) did not answer within %.0f s", argv0, itype,
                         c->start_timeout_s);
    return pit_err_set(e, PIT_ESTATE, "%s (start %s) failed with status %d (its messages: %s/provider.log)", argv0,
                       itype, st, p->conf.state_dir);
  }
  struct item it[8];
  int nit = 0;
  char what[128];
  snprintf(what, sizeof what, "the output of %s (start)", argv0);
  const struct outfmt *fs = c->fmt_start.json || c->fmt_start.have_re ? &c->fmt_start : &c->fmt_list;
  rc = parse_items(fs, out, what, it, 8, &nit, e);
  free(out);
  if (rc < 0)
    return rc;
  if (nit < 1)
    return pit_err_set(e, PIT_EFORMAT, "%s printed no node id", what);
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", it[0].id);
  snprintf(n->itype, sizeof n->itype, "%s", itype);
  n->spot = spot;
  const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
  n->price_h = !t ? 0 : spot && isfinite(t->spot_price_h) ? t->spot_price_h : t->price_h;
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->t_start = n->t_ready = n->t_stop = NAN;
  if ((rc = write_node(p, n, e)) < 0)
    return rc;
  if (c->t[TK_TAG][0]) {
    s.id = n->id;
    rc = run_tmpl(p, TK_TAG, &s, spot, c->stop_timeout_s, &out, &st, argv0, e);
    free(out);
    if (rc < 0)
      return rc;
    if (st != 0)
      return pit_err_set(e, PIT_ESTATE, "%s (tag %s with the run id) failed", argv0, n->id);
  }
  /* boot: until the cloud lists it in a ready state */
  for (;;) {
    struct item L[MAX_ITEMS];
    int nl = 0;
    if ((rc = cloud_list(p, L, MAX_ITEMS, &nl, e)) < 0)
      return rc;
    for (int i = 0; i < nl; i++) {
      if (strcmp(L[i].id, n->id) != 0)
        continue;
      if (in_states(c->gone, c->ngone, L[i].state))
        return pit_err_set(e, PIT_ESTATE, "node %s went %s while it booted", n->id, L[i].state);
      if (in_states(c->ready, c->nready, L[i].state)) {
        snprintf(n->host, sizeof n->host, "%s", c->host[0] ? c->host : L[i].host[0] ? L[i].host : n->id);
        n->state = PIT_NODE_READY;
        return write_node(p, n, e);
      }
    }
    if (pit_now() - t0 > c->boot_timeout_s)
      return pit_err_set(e, PIT_ESTATE, "node %s was not ready within %.0f s", n->id, c->boot_timeout_s);
    usleep((useconds_t)(fmin(c->poll_s, 1.0) * 1e6 / 2));
  }
}

/* name: TYPE, TYPE@spot or TYPE@on-demand (control.h); a bare TYPE is spot
 * when the config's "spot" list names it. */
static int c_start(struct pit_provider *p, const char *name, struct pit_node *n, struct pit_err *e) {
  struct cmdp *c = p->impl;
  char itype[PIT_NAME_MAX];
  int market = pit_itype_market(name, itype, sizeof itype, e);
  if (market < 0)
    return market;
  if (p->conf.catalog && !pit_catalog_find(p->conf.catalog, itype))
    return pit_err_set(e, PIT_ENOTFOUND, "instance type '%s' is not in the catalog", itype);
  int spot = market == PIT_MARKET_DEFAULT ? is_spot(c, itype) : market == PIT_MARKET_SPOT;
  double waste = 0;
  int rc = 0;
  char last[512] = "";
  for (int attempt = 0; attempt <= c->start_retries; attempt++) {
    if (attempt)
      usleep((useconds_t)(c->retry_wait_s * 1e6));
    double t0 = pit_now();
    memset(n, 0, sizeof *n);
    rc = start_once(p, itype, spot, n, t0, e);
    if (rc == 0) {
      n->waste_s = waste;
      p->waste_s += waste;
      return write_node(p, n, e);
    }
    if (rc == PIT_EARG || rc == PIT_ENOMEM)
      return rc;
    snprintf(last, sizeof last, "%s", e->msg);
    /* what the attempt created: the node it printed, and any stray of the run */
    if (n->id[0]) {
      double billed;
      p->waste_usd += billed_usd(p, itype, spot, pit_now() - t0, &billed);
      waste += billed;
      struct pit_err e2 = {0};
      stop_id(p, n->id, &e2);
      n->id[0] = 0;
    }
    stop_strays(p, itype, spot, t0, &waste);
    if (p->conf.warn && attempt < c->start_retries) {
      struct pit_err w = {0};
      pit_err_set(&w, PIT_ESTATE, "start of a %s node failed (attempt %d of %d): %s", itype, attempt + 1,
                  c->start_retries + 1, last);
      p->conf.warn(p->conf.warn_ctx, &w);
    }
  }
  p->waste_s += waste;
  pit_err_set(e, PIT_ESTATE, "cannot start a %s%s node: %d attempts failed; the last: %s", itype,
              spot ? " spot" : "", c->start_retries + 1, last);
  pit_err_hint(e, "%.0f billed seconds were wasted on them; the CLI's messages are in %s/provider.log", waste,
               p->conf.state_dir);
  return PIT_ESTATE;
}

static int c_list(struct pit_provider *p, struct pit_node **out, int *nout, struct pit_err *e) {
  struct cmdp *c = p->impl;
  *out = NULL;
  *nout = 0;
  struct item *it = malloc(MAX_ITEMS * sizeof *it);
  if (!it)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int n = 0;
  int rc = cloud_list(p, it, MAX_ITEMS, &n, e);
  struct pit_node *v = rc == 0 ? calloc((size_t)n + 1, sizeof *v) : NULL;
  if (rc == 0 && !v)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  int k = 0;
  for (int i = 0; rc == 0 && i < n; i++) {
    if (in_states(c->gone, c->ngone, it[i].state)) { /* gone: forget it */
      forget_node(p, it[i].id);
      continue;
    }
    struct pit_node *x = &v[k++];
    if (read_node(p, it[i].id, x) < 0) { /* one a crash left before its file: to stop */
      ctl_node_orphan(x, it[i].id, it[i].itype);
      continue;
    }
    x->state = in_states(c->ready, c->nready, it[i].state) ? PIT_NODE_READY : PIT_NODE_LOST;
    if (!x->host[0])
      snprintf(x->host, sizeof x->host, "%s", c->host[0] ? c->host : it[i].host);
  }
  /* files of nodes the cloud no longer lists */
  if (rc == 0) {
    char ids[MAX_ITEMS][PIT_NAME_MAX];
    int nk = known_ids(p, ids, MAX_ITEMS);
    for (int j = 0; j < nk; j++) {
      int listed = 0;
      for (int i = 0; i < n; i++)
        listed |= strcmp(it[i].id, ids[j]) == 0 && !in_states(c->gone, c->ngone, it[i].state);
      if (!listed)
        forget_node(p, ids[j]);
    }
  }
  free(it);
  if (rc < 0) {
    free(v);
    return rc;
  }
  *out = v;
  *nout = k;
  return 0;
}

static int reported(struct cmdp *c, const char *id, int kind) {
  for (int i = 0; i < c->nreported; i++)
    if (strcmp(c->reported[i], id) == 0 && c->reported_kind[i] == kind)
      return 1;
  if (c->nreported < MAX_ITEMS) {
    snprintf(c->reported[c->nreported], PIT_NAME_MAX, "%.*s", PIT_NAME_MAX - 1, id);
    c->reported_kind[c->nreported++] = kind;
  }
  return 0;
}

static int poll_cloud(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e);

/* ops->poll: asks the cloud at most every poll_s; between, repeats the last answer's error. */
static int c_poll(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e) {
  struct cmdp *c = p->impl;
  *nev = 0;
  if (pit_now() - c->last_poll >= c->poll_s) {
    c->last_poll = pit_now();
    pit_err_clear(&c->poll_err);
    poll_cloud(p, ev, cap, nev, &c->poll_err);
  }
  if (c->poll_err.code && e) /* between asks, the last answer's error stands */
    *e = c->poll_err;
  return c->poll_err.code;
}

static int poll_cloud(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e) {
  struct cmdp *c = p->impl;
  char ids[MAX_ITEMS][PIT_NAME_MAX];
  int nk = known_ids(p, ids, MAX_ITEMS);
  if (nk == 0)
    return 0;
  struct item *it = malloc(MAX_ITEMS * sizeof *it);
  if (!it)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int n = 0;
  int rc = cloud_list(p, it, MAX_ITEMS, &n, e);
  for (int j = 0; rc == 0 && j < nk && *nev < cap; j++) {
    const struct item *x = NULL;
    for (int i = 0; i < n && !x; i++)
      if (strcmp(it[i].id, ids[j]) == 0)
        x = &it[i];
    int kind = !x || in_states(c->gone, c->ngone, x->state) ? PIT_NODE_GONE
               : in_states(c->notice, c->nnotice, x->state) ? PIT_NODE_NOTICE
                                                            : 0;
    if (kind && !reported(c, ids[j], kind)) {
      snprintf(ev[*nev].id, sizeof ev[*nev].id, "%.*s", PIT_NAME_MAX - 1, ids[j]);
      ev[*nev].kind = kind;
      ev[(*nev)++].grace_s = c->grace_s;
    }
  }
  /* the cloud's own notices (AWS: spot requests marked for termination) */
  if (rc == 0 && c->t[TK_NOTICE][0] && (c->fmt_notice.json || c->fmt_notice.have_re)) {
    struct subst s = {.run = p->conf.run, .count = "1"};
    char *out = NULL, argv0[64], what[128];
    int st = 0;
    rc = run_tmpl(p, TK_NOTICE, &s, 0, c->list_timeout_s, &out, &st, argv0, e);
    snprintf(what, sizeof what, "the output of %s (notice)", argv0);
    if (rc == 0 && st != 0)
      rc = pit_err_set(e, PIT_ESTATE, "%s (notice) %s", argv0, st < 0 ? "did not answer in time" : "failed");
    if (rc == 0)
      rc = parse_items(&c->fmt_notice, out, what, it, MAX_ITEMS, &n, e);
    free(out);
    for (int i = 0; rc == 0 && i < n && *nev < cap; i++) {
      int ours = 0;
      for (int j = 0; j < nk; j++)
        ours |= strcmp(ids[j], it[i].id) == 0;
      if (ours && in_states(c->notice, c->nnotice, it[i].state) && !reported(c, it[i].id, PIT_NODE_NOTICE)) {
        snprintf(ev[*nev].id, sizeof ev[*nev].id, "%s", it[i].id);
        ev[*nev].kind = PIT_NODE_NOTICE;
        ev[(*nev)++].grace_s = c->grace_s;
      }
    }
  }
  free(it);
  return rc;
}

static int c_health(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct cmdp *c = p->impl;
  for (int i = 0; i < c->nreported; i++)
    if (strcmp(c->reported[i], n->id) == 0 && c->reported_kind[i] == PIT_NODE_GONE)
      return pit_err_set(e, PIT_ESTATE, "node %s is gone (the cloud no longer lists it running)", n->id);
  return 0;
}

static int c_wrap(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *nout,
                  struct pit_err *e) {
  struct cmdp *c = p->impl;
  *nout = 0;
  if (!c->t[TK_WRAP][0])
    return 0;
  struct subst s = {.run = p->conf.run, .id = n->id, .host = n->host, .itype = n->itype, .count = "1"};
  char *v[T_ARGS];
  int rc = expand(c, TK_WRAP, &s, n->spot, v, e);
  if (rc < 0)
    return rc;
  int k = 0;
  for (; v[k] && k < cap && k < T_ARGS; k++) {
    snprintf(c->wrapbuf[k], sizeof c->wrapbuf[k], "%s", v[k]);
    argv[k] = c->wrapbuf[k];
  }
  argv_release(v);
  *nout = k;
  return 0;
}

const struct pit_provider_ops pit_provider_command = {
    PIT_PROVIDER_OPS(c, "command",
                     "any cloud through its CLI: start/stop/list argv templates (presets aws, clap)"),
    .poll = c_poll,
    .spot_market = 1,
};
