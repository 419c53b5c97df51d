/* fmt_impl.h — the report module's private value printers, shared by the
 * summary (summary_fmt.c) and prediction (predict_fmt.c) printers so that a
 * number, a text cell and an absent value look the same in both.
 * Invariants: absent values (NaN, ±inf, NULL) are JSON null, empty CSV cells
 * and "-" in tables; JSON numbers carry 17 significant digits, CSV 9. */
#ifndef PIT_REPORT_FMT_IMPL_H
#define PIT_REPORT_FMT_IMPL_H

#include <stddef.h>
#include <stdio.h>

/* A JSON string, escaped by the record module (as records are written); NULL: null. */
void pit__jstr(FILE *f, const char *s);
/* A JSON number, or null. */
void pit__jdbl(FILE *f, double v);
/* A CSV cell: quoted, with quotes doubled, when it holds a comma, quote or newline. */
void pit__csv_text(FILE *f, const char *s);
/* A CSV number, or an empty cell. */
void pit__cdbl(FILE *f, double v);
/* The key of a field of a flat table written as one JSON object with nested
 * objects: closes the nested object being written (*open) when obj differs,
 * opens obj (NULL: the top level) when needed, then writes "key": with the
 * comma *first asks for. Start with *open = NULL, *first = 1 after the '{';
 * end with pit__jclose. */
void pit__jkey(FILE *f, const char **open, int *first, const char *obj, const char *key);
/* Closes the nested object still open, then the top-level object. */
void pit__jclose(FILE *f, const char *open);
/* Human-readable seconds with 4 significant digits ("12.35s", "3.1ms"); "-" when absent. */
const char *pit__secs(char *buf, size_t n, double v);

#endif
