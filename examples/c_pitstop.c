/* c_pitstop.c — a toy training loop instrumented with libpitstop (docs/api.md).
 * Build against an installed pitstop:
 *   cc c_pitstop.c $(pkg-config --cflags --libs pitstop) -o c_pitstop
 * Run: ./c_pitstop | pitstop parse -          (records on stdout as "PITSTOP {json}" lines)
 *      PITSTOP_EVENTS=toy.jsonl ./c_pitstop   (records in a JSON Lines file instead)
 * Every API call returns 0 or a negative PITSTOP_E* code; pit_last_error() says why. */
#include <stdio.h>

#include <pitstop/pitstop.h>

int main(void) {
  if (pit_init("c-toy", "{\"model\":\"toy\",\"batch\":16,\"ranks\":1,\"nodes\":1}") != PITSTOP_OK) {
    fprintf(stderr, "%s\n", pit_last_error());
    return 1;
  }
  volatile double w = 1.0;
  for (int epoch = 0; epoch < 3; epoch++) {
    for (int i = 0; i < 25; i++) {
      pit_iter_begin();
      for (int k = 0; k < 20000; k++) /* "load" the batch */
        w = w * 0.9999999 + 1e-9;
      pit_iter_data();
      for (int k = 0; k < 200000; k++) /* "forward, backward, step" */
        w = w * 0.9999999 + 1e-9;
      pit_iter_end(1.0 / (1 + epoch * 25 + i));
    }
    pit_validation(0.5 + 0.1 * epoch, 0.001);
    pit_epoch_end();
    printf("epoch %d done (the program's own output mixes with the records)\n", epoch);
  }
  if (pit_finish() != PITSTOP_OK) {
    fprintf(stderr, "%s\n", pit_last_error());
    return 1;
  }
  return 0;
}
