/* test_zones.c — pitstop run across zones, the policy's side (pit_zone_decide,
 * src/policy/policy_fleet.c; its inputs as JSON, src/policy/policy_zones.c): two
 * zones of c5.large ($0.085/h on-demand, $0.035/h spot), a job on 2 nodes.
 *  - nothing measured: spot in the home zone for both nodes; zone a gave one spot
 *    node: that one kept, the other on-demand (part spot, part on-demand);
 *  - measured, a zone not tried yet beside: the mixed membership is kept while
 *    what the second spot node saves over the span expected does not pay a restart
 *    of both nodes; zone a dry after a reclaim: both nodes move to spot in zone b;
 *    both zones dry: on-demand where the checkpoint is;
 *  - the count within --nnodes 1:2: a reclaim's spot survivor alone rather than
 *    filled with on-demand while the slack pays for half the pace; the job's count at
 *    a tight deadline; t_p measured on another count taken to the job's;
 *  - above the job's count: at a deadline its own count misses, the cheapest count
 *    that meets it (a USL fit: not the cheapest per unit of work, which misses);
 *  - a reclaim is an input (right after one, the survivors need two restarts of
 *    slack: filled with on-demand, or on-demand at less), read as none from
 *    inputs written before it was;
 *  - the inputs written as JSON and read back are the same inputs (a replay
 *    decides on what the run decided on); inputs without the count's keys read as
 *    the job's count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/policy.h"

static struct pit_zone_in base(void) {
  struct pit_zone_in in;
  memset(&in, 0, sizeof in);
  in.deadline_s = 600;
  in.nodes = 2;
  in.nzones = 2;
  in.any_seen = 0.5;
  in.ckpt_zone = -1;
  for (int z = 0; z < 2; z++) {
    snprintf(in.z[z].name, sizeof in.z[z].name, "us-east-1%c", 'a' + z);
    in.z[z].price_h = 0.085;
    in.z[z].spot_price_h = 0.035;
  }
  return in;
}

static int is(struct pit_sim_member r, int pool, int spot, int od) {
  return r.pool == pool && r.spot == spot && r.od == od;
}

int main(void) {
  struct pit_zone_in in = base();
  struct pit_sim_member r = pit_zone_decide(&in);
  CHECK(is(r, 0, 2, 0), "nothing measured: both on spot in zone a, got %d %d %d", r.pool, r.spot, r.od);
  in.z[0].known = 1, in.z[0].cap = 1, in.cur = (struct pit_sim_member){0, 1, 0};
  r = pit_zone_decide(&in);
  CHECK(is(r, 0, 1, 1), "zone a gave one spot node: it and one on-demand, got %d %d %d", r.pool, r.spot, r.od);

  /* measured: 32 s of work left (1600 steps of 20 ms), restart 5 s, 10 s into the run */
  in.measured = 1, in.running = 1, in.t_s = 10, in.tp_s = 0.02, in.total_steps = 2000, in.step = 400;
  in.restart_s = 5, in.tick_s = 1, in.any_seen = 1, in.ckpt_zone = 0;
  in.cur = (struct pit_sim_member){0, 1, 1};
  in.z[0].up_s = 10, in.z[0].nup = 1;
  r = pit_zone_decide(&in);
  CHECK(is(r, 0, 1, 1), "10 s of spot expected in b saves $%.5f, both nodes' restart costs $%.5f: kept, got %d %d %d",
        0.05 * 10 / 3600, 2 * 0.085 * 5 / 3600, r.pool, r.spot, r.od);

  /* 40 s in: the spot node reclaimed, zone a dry; b never refused spot */
  in.t_s = 40, in.running = 0, in.cur = (struct pit_sim_member){0, 0, 1};
  in.z[0].cap = 0, in.z[0].up_s = 40;
  r = pit_zone_decide(&in);
  CHECK(is(r, 1, 2, 0), "zone a dry: both nodes to spot in zone b, got %d %d %d", r.pool, r.spot, r.od);
  char why[1536];
  pit_zone_reason(&in, r, why, sizeof why);
  CHECK(strstr(why, "us-east-1a spot 0 + on-demand 1 → us-east-1b spot 2 + on-demand 0") &&
            strstr(why, "us-east-1a: spot for 0 nodes (seen)") && strstr(why, "us-east-1b: spot not refused yet"),
        "the reason: %s", why);
  in.z[1].known = 1, in.z[1].cap = 0;
  r = pit_zone_decide(&in);
  CHECK(is(r, 0, 0, 2), "both zones dry: on-demand where the checkpoint is, got %d %d %d", r.pool, r.spot, r.od);

  /* the count within --nnodes 1:2 (issue 29 item 5): 10 s in, zone a's spot node of two reclaimed
   * (cap 1 seen), its survivor held; b not tried (10 s of span expected: no move). The job's count
   * fills the survivor with on-demand ($0.12/h per hour of the job's work); one spot node alone runs
   * at half the pace for $0.07/h, and the slack (558 s) pays for it */
  struct pit_zone_in k = base();
  k.measured = 1, k.t_s = 10, k.tp_s = 0.02, k.total_steps = 2000, k.step = 400, k.restart_s = 5, k.tick_s = 1;
  k.any_seen = 1, k.ckpt_zone = 0, k.cur = (struct pit_sim_member){0, 1, 0};
  k.z[0].known = 1, k.z[0].cap = 1, k.z[0].up_s = 10, k.z[0].nup = 1;
  r = pit_zone_decide(&k);
  CHECK(is(r, 0, 1, 1), "the job's count (no range): the survivor and one on-demand, got %d %d %d", r.pool, r.spot,
        r.od);
  k.nmin = 1, k.nmax = 2;
  r = pit_zone_decide(&k);
  CHECK(is(r, 0, 1, 0), "--nnodes 1:2: the spot survivor alone, got %d %d %d", r.pool, r.spot, r.od);
  pit_zone_reason(&k, r, why, sizeof why);
  CHECK(strstr(why, "count 1 of 1..2 (the job's 2, linear scaling): $0.0700/h per hour of the job's work at 0.50 of "
                    "its pace, against $0.1200/h on 2 nodes here (1 spot + 1 on-demand)"),
        "the count's reason: %s", why);
  k.tp_s = 0.04, k.tp_nodes = 1; /* measured on the one node: the same job on 2 (linear) */
  CHECK(is(pit_zone_decide(&k), 0, 1, 0), "t_p measured on 1 node taken to the job's 2");
  k.deadline_s = 60; /* 18 s of slack: half the pace over the span expected there leaves less than the reserve */
  r = pit_zone_decide(&k);
  CHECK(r.spot + r.od == 2, "a tight deadline: the job's 2 nodes, got %d %d %d", r.pool, r.spot, r.od);
  /* the reclaim as an input (the fleet rule the simulator asks at a reclaim's tick): the same survivor,
   * --nnodes 1:2. At a deadline of 80 s (38 s of slack, restart 5 s) the survivor alone is kept when no
   * reclaim came, but right after one the survivors are asked for two restarts of slack over their pace:
   * one on-demand node joins; at 50 s (8 s of slack, below two restarts) spot is not taken again */
  k.deadline_s = 80, k.tp_s = 0.02, k.tp_nodes = 2;
  CHECK(is(pit_zone_decide(&k), 0, 1, 0), "no reclaim, 38 s of slack: the survivor alone");
  k.reclaimed = 1;
  r = pit_zone_decide(&k);
  CHECK(is(r, 0, 1, 1), "right after a reclaim: the survivor and one on-demand, got %d %d %d", r.pool, r.spot, r.od);
  pit_zone_reason(&k, r, why, sizeof why);
  CHECK(strstr(why, "→ us-east-1a spot 1 + on-demand 1 after 1 spot node reclaimed (the survivors held)"),
        "the reason says the reclaim: %s", why);
  k.deadline_s = 50;
  r = pit_zone_decide(&k);
  CHECK(is(r, 0, 0, 2), "a reclaim with 8 s of slack: on-demand, got %d %d %d", r.pool, r.spot, r.od);
  k.reclaimed = 0;
  CHECK(is(pit_zone_decide(&k), 0, 1, 1), "the same without the reclaim: spot kept");
  k.reclaimed = 1; /* read back from JSON, and read as none from inputs written before it was one */
  char rj[3072];
  struct pit_err er = {0};
  struct pit_zone_in kr;
  CHECK(pit_zone_in_json(&k, rj, sizeof rj, &er) == 0 && pit_zone_in_parse(&kr, rj, &er) == 0 && kr.reclaimed == 1,
        "reclaimed through JSON: %s", rj);
  char *rc0 = strstr(rj, ",\"reclaimed\":1");
  CHECK(rc0, "%s", rj);
  memmove(rc0, rc0 + strlen(",\"reclaimed\":1"), strlen(rc0 + strlen(",\"reclaimed\":1")) + 1);
  CHECK(pit_zone_in_parse(&kr, rj, &er) == 0 && kr.reclaimed == 0, "inputs without \"reclaimed\": %s", rj);
  k.reclaimed = 0, k.deadline_s = 60;

  /* growth above the job's count when only it meets the deadline (--nnodes 1:4, a job of 2 nodes, a USL
   * fit of sigma 0.1): 32 s of work left on 2 nodes, 30 s to a deadline of 40 s, a restart 5 s. 2 on-demand
   * nodes (the cheapest per unit of work: more nodes cost more under the fit) miss it; 3 meet it (rate
   * 1.375: 23.3 s + the restart), 4 too but dearer: 3. Linear, 3 and 4 cost alike: the faster, 4 */
  struct pit_zone_in g = base();
  g.measured = 1, g.running = 1, g.t_s = 10, g.tp_s = 0.02, g.total_steps = 2000, g.step = 400, g.restart_s = 5;
  g.tick_s = 1, g.any_seen = 1, g.ckpt_zone = 0, g.cur = (struct pit_sim_member){0, 2, 0}, g.nmin = 1, g.nmax = 4;
  g.tp_nodes = 2, g.z[0].up_s = 10, g.z[0].nup = 1, g.deadline_s = 40, g.sigma = 0.1;
  r = pit_zone_decide(&g);
  CHECK(is(r, 0, 0, 3), "USL 0.1, 2 nodes miss the deadline: 3 on-demand meet it for the least, got %d %d %d", r.pool,
        r.spot, r.od);
  g.sigma = 0;
  r = pit_zone_decide(&g);
  CHECK(is(r, 0, 0, 4), "linear: 3 and 4 cost alike per unit of work: the faster, got %d %d %d", r.pool, r.spot, r.od);

  /* inputs written before the count was chosen: the job's count, linear */
  char old[3072];
  struct pit_err eo = {0};
  k.nmin = k.nmax = k.tp_nodes = 0;
  CHECK(pit_zone_in_json(&k, old, sizeof old, &eo) == 0, "%s", eo.msg);
  char *cut = strstr(old, "\"nmin\""), *end = strstr(old, "\"cur\"");
  CHECK(cut && end, "%s", old);
  memmove(cut, end, strlen(end) + 1);
  struct pit_zone_in ko;
  CHECK(pit_zone_in_parse(&ko, old, &eo) == 0, "%s: %s", old, eo.msg);
  CHECK(ko.nmin == 2 && ko.nmax == 2 && ko.tp_nodes == 2 && ko.sigma == 0 && ko.kappa == 0,
        "old inputs: nmin %d nmax %d tp_nodes %d", ko.nmin, ko.nmax, ko.tp_nodes);

  /* the inputs through JSON: the same inputs, the same decision */
  in.t_s = 0.1 + 0.2, in.restart_s = 1.0 / 3;
  char buf[3072];
  struct pit_err e = {0};
  CHECK(pit_zone_in_json(&in, buf, sizeof buf, &e) == 0, "%s", e.msg);
  struct pit_zone_in back;
  CHECK(pit_zone_in_parse(&back, buf, &e) == 0, "%s", e.msg);
  CHECK(memcmp(&in, &back, sizeof in) == 0, "the inputs read back differ: %s", buf);
  CHECK(pit_zone_in_json(&in, buf, 64, &e) == PIT_EARG, "inputs cut short are refused");
  CHECK(pit_zone_in_parse(&back, "{\"t_s\": 1}", &e) == PIT_EFORMAT && strstr(e.msg, "deadline_s"),
        "a missing key is named: %s", e.msg);
  in.tp_s = NAN;
  CHECK(pit_zone_in_json(&in, buf, sizeof buf, &e) == PIT_EARG, "a NaN is refused");
  return check_done();
}
