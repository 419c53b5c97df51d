/* html.c — report.html of an elastic run (report.h, pit_status_html): one
 * self-contained page with no network, from a run's status (status.c): the
 * timeline chart as a base64 data URI (OpenSSL's EVP_EncodeBlock), the run in
 * a few lines, its cost against each fixed membership it ran (the best one
 * marked, with the ratio), its generations, its nodes with their billed cost
 * and its decisions with their alternatives and reasons.
 * Invariants: every text from the records is HTML-escaped; the file is
 * written atomically (complete or not at all); the page's only script marks
 * its own load (a script error or an image that fails to load is written into
 * the page, as "pit-error"; a page that loaded clean says data-check="ok"), so
 * a headless browser's DOM dump tells a broken page from a good one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "pitstop/report.h"

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

static void num(FILE *f, const char *fmt, double v) {
  if (isnan(v) || isinf(v))
    fputs("–", f);
  else
    fprintf(f, fmt, v);
}

/* One right-aligned table cell holding v in fmt. */
static void cell(FILE *f, const char *fmt, double v) {
  fputs("<td class=\"n\">", f);
  num(f, fmt, v);
  fputs("</td>", f);
}

/* "m [lo, hi]", each in fmt */
static void interval(FILE *f, const char *fmt, double m, double lo, double hi) {
  num(f, fmt, m);
  fputs(" [", f);
  num(f, fmt, lo);
  fputs(", ", f);
  num(f, fmt, hi);
  fputs("]", f);
}

/* The PNG at path as base64 into f; 0, or an error naming the file. */
static int png_b64(FILE *f, const char *path, struct pit_err *e) {
  FILE *in = fopen(path, "rb");
  if (!in)
    return pit_err_errno(e, PIT_EIO, "cannot read '%s'", path);
  unsigned char raw[3 * 1024], out[4 * 1024 + 1];
  size_t n;
  while ((n = fread(raw, 1, sizeof raw, in)) > 0) { /* whole 3-byte groups until the last read */
    int k = EVP_EncodeBlock(out, raw, (int)n);
    fwrite(out, 1, (size_t)k, f);
    if (n < sizeof raw)
      break;
  }
  int bad = ferror(in);
  fclose(in);
  return bad ? pit_err_errno(e, PIT_EIO, "cannot read '%s'", path) : 0;
}

static void membership(FILE *f, const struct pit_membership *m) {
  char t[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(m, t, sizeof t);
  esc(f, t[0] ? t : "–");
}

static void page(FILE *f, const struct pit_status *s) {
  const struct pit_runlog *l = &s->log;
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>pitstop run ", f);
  esc(f, l->run);
  fputs("</title>\n<style>body{font-family:sans-serif;margin:1.5em;max-width:1100px}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .5em;"
        "text-align:left;font-size:90%}th{background:#f2f2f2}td.n{text-align:right}img{max-width:100%}"
        ".pit-error{color:#b00;font-weight:bold}</style>\n"
        "<script>\nfunction pitErr(what){var p=document.createElement('p');p.className='pit-error';"
        "p.textContent='pit-error: '+what;document.body.insertBefore(p,document.body.firstChild);"
        "document.body.setAttribute('data-check','error');}\n"
        "window.addEventListener('error',function(ev){pitErr('script: '+ev.message);});\n"
        "window.addEventListener('load',function(){var im=document.images;for(var i=0;i<im.length;i++)"
        "if(!im[i].complete||im[i].naturalWidth===0)pitErr('image '+(im[i].alt||i));"
        "if(document.body.getAttribute('data-check')!=='error')document.body.setAttribute('data-check','ok');});\n"
        "</script></head>\n<body data-check=\"pending\">\n<h1>Run ",
        f);
  esc(f, l->run);
  fputs("</h1>\n<p>", f);
  esc(f, s->state);
  fprintf(f, ", generation %d on ", l->ngens - 1);
  membership(f, &s->membership);
  fprintf(f, "; %lld steps", (long long)s->steps_done);
  if (s->steps_total > 0)
    fprintf(f, " of %lld", (long long)s->steps_total);
  fputs(" in ", f);
  num(f, "%.1f s", s->t);
  fputs(". t<sub>p</sub> ", f);
  num(f, "%.4g s", s->tp);
  fputs(" ± ", f);
  num(f, "%.2g s", s->tp_half);
  fputs(" (95%). Spend so far ", f);
  num(f, "$%.6f", s->spend);
  fputs(" (billed). Finish ", f);
  interval(f, "%.1f", s->finish_s, s->finish_lo, s->finish_hi);
  fputs(" s, cost $", f);
  interval(f, "%.6f", s->cost, s->cost_lo, s->cost_hi);
  if (s->note[0]) {
    fputs(" (", f);
    esc(f, s->note);
    fputs(")", f);
  }
  fputs(".</p>\n", f);
}

static void tables(FILE *f, const struct pit_status *s) {
  const struct pit_runlog *l = &s->log;
  fputs("<h2>Generations</h2>\n<table><tr><th>gen</th><th>membership</th><th>ranks</th><th>steps</th>"
        "<th>first record [s]</th><th>first iteration [s]</th><th>end [s]</th><th>end</th></tr>\n",
        f);
  for (int i = 0; i < l->ngens; i++) {
    const struct pit_runlog_gen *g = &l->gens[i];
    fprintf(f, "<tr><td class=\"n\">%d</td><td>", g->gen);
    membership(f, &g->m);
    fprintf(f, "</td><td class=\"n\">%d</td><td class=\"n\">%lld–%lld</td>", g->ranks, (long long)g->step_first,
            (long long)g->step_last);
    cell(f, "%.2f", g->t_first);
    cell(f, "%.2f", g->t_first_iter);
    cell(f, "%.2f", g->t_end);
    fputs("<td>", f);
    esc(f, g->status[0] ? g->status : "–");
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n<h2>Nodes</h2>\n<table><tr><th>node</th><th>type</th><th>market</th><th>$/h</th><th>gen</th>"
        "<th>start [s]</th><th>ready [s]</th><th>stop [s]</th><th>end</th><th>billed [s]</th><th>cost $</th></tr>\n",
        f);
  for (int i = 0; i < l->nnodes; i++) {
    const struct pit_runlog_node *n = &l->nodes[i];
    fputs("<tr><td>", f);
    esc(f, n->id);
    fputs("</td><td>", f);
    esc(f, n->base);
    fputs("</td><td>", f);
    esc(f, n->market != PIT_MARKET_DEFAULT ? pit_market_name(n->market) : "–");
    fputs("</td>", f);
    cell(f, "%.4g", n->price_h);
    fprintf(f, "<td class=\"n\">%d</td>", n->gen);
    cell(f, "%.2f", n->t_start);
    cell(f, "%.2f", n->t_ready);
    cell(f, "%.2f", n->t_stop);
    fprintf(f, "<td>%s</td><td class=\"n\">%.0f</td><td class=\"n\">%.6f</td></tr>\n",
            n->lost ? "lost" : isnan(n->t_stop) ? "up" : "stopped", s->node_billed_s[i], s->node_cost[i]);
  }
  fprintf(f, "<tr><th colspan=\"10\">spend (billed)</th><td class=\"n\">%.6f</td></tr></table>\n", s->spend);
  fputs("<h2>Decisions</h2>\n<table><tr><th>t [s]</th><th>gen</th><th>step</th><th>what</th><th>policy</th>"
        "<th>from → to</th><th>why</th><th>alternatives weighed (predicted time, cost)</th></tr>\n",
        f);
  for (int i = 0; i < l->ndec; i++) {
    const struct pit_runlog_decision *d = &l->dec[i];
    fprintf(f, "<tr><td class=\"n\">%.2f</td><td class=\"n\">%d</td><td class=\"n\">%lld</td><td>", d->t, d->gen,
            (long long)d->d.step);
    esc(f, d->d.kind);
    fputs("</td><td>", f);
    esc(f, d->d.policy);
    fputs("</td><td>", f);
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    if (d->d.from.n || d->d.to.n) {
      pit_membership_format(&d->d.from, m, sizeof m);
      esc(f, m);
      fputs(" → ", f);
      pit_membership_format(&d->d.to, m, sizeof m);
      esc(f, m);
    }
    fputs("</td><td>", f);
    esc(f, d->d.reason ? d->d.reason : "(no reason recorded)");
    fputs("</td><td>", f);
    for (int k = 0; k < d->d.nalts; k++) {
      fputs(k ? "<br>" : "", f);
      pit_membership_format(&d->d.alts[k].m, m, sizeof m);
      esc(f, m);
      fputs(" (", f);
      num(f, "%.1f s", d->d.alts[k].predicted_s);
      fputs(", ", f);
      num(f, "$%.6f", d->d.alts[k].cost);
      fputs(")", f);
    }
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
}

/* The run against each fixed membership it ran, the best one marked, and the ratios. */
static void fixed_table(FILE *f, const struct pit_html_fixed *x) {
  fputs("<h2>Against fixed memberships</h2>\n", f);
  if (!x) {
    fputs("<p>Not weighed: the run's policy did not weigh cost or time (a fixed or scheduled run), or its "
          "replay failed.</p>\n",
          f);
    return;
  }
  const struct pit_html_fixed_row *b = x->best >= 0 && x->best < x->n ? &x->rows[x->best] : NULL;
  fputs("<p id=\"vs-best-fixed\">", f);
  if (b && b->cost > 0 && b->time_s > 0) {
    fputs("This run against the best fixed membership (", f);
    membership(f, &b->m);
    fputs("): cost ", f);
    num(f, "%.3f×", x->run_cost / b->cost);
    fputs(", time ", f);
    num(f, "%.3f×", x->run_time_s / b->time_s);
    fputs(".", f);
  } else {
    fputs("None of the fixed memberships meets the deadline (or budget).", f);
  }
  if (x->steps_run < x->steps)
    fprintf(f, " The run was stopped after %lld of the job's %lld steps: each membership the run ran is replayed as a "
               "fixed one over those %lld steps",
            (long long)x->steps_run, (long long)x->steps, (long long)x->steps_run);
  else
    fputs(" Each membership the run ran is replayed as a fixed one for the whole job", f);
  fputs(" over the run's own records (memberships it never ran have no records and are not priced).</p>\n"
        "<table><tr><th>membership</th><th>cost $</th><th>time [s]</th><th></th></tr>\n<tr><td>this run (node "
        "records)</td>",
        f);
  cell(f, "%.6f", x->run_cost);
  cell(f, "%.1f", x->run_time_s);
  fputs("<td></td></tr>\n", f);
  for (int i = 0; i < x->n; i++) {
    fputs("<tr><td>fixed ", f);
    membership(f, &x->rows[i].m);
    fputs("</td>", f);
    cell(f, "%.6f", x->rows[i].cost);
    cell(f, "%.1f", x->rows[i].time_s);
    fprintf(f, "<td>%s%s</td></tr>\n", i == x->best ? "best fixed" : "",
            x->rows[i].complete ? "" : " (replay incomplete)");
  }
  fputs("</table>\n", f);
}

int pit_status_html(const struct pit_status *s, const char *png, const struct pit_html_fixed *fixed,
                    const char *path, struct pit_err *e) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  page(f, s);
  int rc = 0;
  if (png) {
    fputs("<h2>Timeline</h2>\n<img alt=\"timeline\" onerror=\"pitErr('image timeline')\" src=\"data:image/png;base64,", f);
    rc = png_b64(f, png, e);
    fputs("\">\n", f);
  } else {
    fputs("<p>No timeline chart (gnuplot missing or no node record).</p>\n", f);
  }
  fixed_table(f, fixed);
  tables(f, s);
  fputs("</body></html>\n", f);
  if (fclose(f) != 0 && rc == 0)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (rc == 0)
    rc = pit_file_write_atomic(path, buf, n, e);
  free(buf);
  return rc;
}
