#!/usr/bin/python3
"""fakecloud.py — a fake cloud behind fake `aws` and `clapp` executables, for the
command provider's tests (tests/control/command_*.sh). Nodes are records in
$FAKE_CLOUD/nodes.json; every call is recorded as $FAKE_CLOUD/calls/NNNN.json
(its argv, as a list: what reached the program, so a test sees no shell).

Switches (files in $FAKE_CLOUD, read at each call):
  boot_s          seconds a node stays pending/started before running/reachable (default 1)
  fail_start      N: the next N starts fail (status 255, a message on stderr)
  hang_start      N: the next N starts create the node, then hang
  garbage_list    list prints garbage
  reclaim         present: the first running spot node (aws) / node (clap) gets a notice;
                  it goes after grace_s (default 20) seconds; the file is then removed. Its
                  text may name a zone or a node id: the first running spot node there / that node
  reclaim_dry     present (aws): a reclaim also ends the spot capacity of the node's zone
                  (writes no_spot_ZONE)
  vanish          present: the same node goes at once, without notice; the file is then removed
  no_spot         present (aws): no spot capacity: every spot run-instances fails as AWS's does
  no_spot_ZONE    present (aws): no spot capacity in ZONE (the --placement AvailabilityZone=ZONE
                  of run-instances; a start without one is in zone "default")
  spot_cap_ZONE   N (aws): ZONE runs at most N spot nodes at once; one more fails as no_spot's
  ip_per_node     present (clap): each node listed at its own loopback address, 127.0.0.(2 + its
                  number), and what runs "on" it dies with it: once a node is gone (stopped,
                  vanished, reclaimed after its grace) the sessions tests/control/fake/fake_ssh.py registered
                  for its address ($FAKE_CLOUD/sessions/ADDR/SID) are killed (SIGKILL to each session)
Each aws node has its zone (describe-instances: Placement.AvailabilityZone).
"""
import fcntl, json, os, signal, sys, time

D = os.environ["FAKE_CLOUD"]
os.makedirs(os.path.join(D, "calls"), exist_ok=True)


def sw(name, default=None):
    p = os.path.join(D, name)
    if not os.path.exists(p):
        return default
    t = open(p).read().strip()
    return t if t else "1"


def take(name):  # decrements a counter switch; True when it fired
    p = os.path.join(D, name)
    v = sw(name)
    if v is None or int(v) <= 0:
        return False
    open(p, "w").write(str(int(v) - 1))
    return True


lock = open(os.path.join(D, "lock"), "a")
fcntl.flock(lock, fcntl.LOCK_EX)
seq = len(os.listdir(os.path.join(D, "calls")))
json.dump({"argv": sys.argv, "prog": os.path.basename(sys.argv[0])},
          open(os.path.join(D, "calls", "%04d.json" % seq), "w"))
db_path = os.path.join(D, "nodes.json")
db = json.load(open(db_path)) if os.path.exists(db_path) else {"next": 0, "nodes": []}
now = time.time()
boot = float(sw("boot_s", "1"))
grace = float(sw("grace_s", "20"))


def save():
    json.dump(db, open(db_path + ".tmp", "w"))
    os.replace(db_path + ".tmp", db_path)


def state(n):
    if n.get("gone_at") and now >= n["gone_at"]:
        return "gone"
    if n.get("notice_at"):
        return "notice"
    return "running" if now - n["t"] >= boot else "pending"


def reclaim_check(pred):
    for name in ("reclaim", "vanish"):
        which = sw(name)
        if which is None:
            continue
        for n in db["nodes"]:
            if which not in ("1", n["id"], n.get("zone")):
                continue
            if pred(n) and state(n) == "running":
                if name == "reclaim":
                    n["notice_at"] = now
                    if sw("reclaim_dry") and n.get("zone"):
                        open(os.path.join(D, "no_spot_" + n["zone"]), "w").close()
                n["gone_at"] = now + (grace if name == "reclaim" else 0)
                os.unlink(os.path.join(D, name))
                return


def ip_of(n):
    return "127.0.0.%d" % (2 + db["nodes"].index(n)) if sw("ip_per_node") else "127.0.0.1"


def kill_gone():  # ip_per_node: the sessions of the nodes gone die with them
    if not sw("ip_per_node"):
        return
    for n in db["nodes"]:
        if state(n) != "gone" or n.get("killed"):
            continue
        n["killed"] = True
        d = os.path.join(D, "sessions", ip_of(n))
        for f in os.listdir(d) if os.path.isdir(d) else []:
            sid = int(f)
            try:
                if os.getsid(sid) == sid:
                    os.killpg(sid, signal.SIGKILL)
            except OSError:
                pass


def spot_full(zone):  # no spot capacity left in zone
    if sw("no_spot") or sw("no_spot_" + zone):
        return True
    cap = sw("spot_cap_" + zone)
    held = sum(1 for n in db["nodes"] if n["spot"] and n.get("zone") == zone and state(n) != "gone")
    return cap is not None and held >= int(cap)


def new_node(itype, tags, spot):
    db["next"] += 1
    nid = "i-%08x" % (0xf00 + db["next"])
    n = {"id": nid, "itype": itype, "tags": tags, "spot": spot, "t": now}
    db["nodes"].append(n)
    return n


def arg(flag, default=None):
    a = sys.argv
    return a[a.index(flag) + 1] if flag in a else default


def fail(msg, code=255):
    sys.stderr.write(msg + "\n")
    save()
    sys.exit(code)


def hang():
    save()
    lock.close()
    time.sleep(1000)


prog = os.path.basename(sys.argv[0])
a = sys.argv[1:]
if prog == "aws":
    AWS = {"pending": "pending", "running": "running", "notice": "running", "gone": "terminated"}
    if len(a) < 2 or a[0] != "ec2":
        fail("aws: unknown service")
    op = a[1]
    if op == "run-instances":
        if take("fail_start"):
            fail("An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation")
        tags = {}
        i = a.index("--tag-specifications") + 1
        while i < len(a) and not a[i].startswith("--"):
            spec = a[i]
            if spec.startswith("ResourceType=instance,Tags=[{Key=pitstop-run,Value="):
                tags["pitstop-run"] = spec.split("Value=")[1].rstrip("}]")
            i += 1
        spot = arg("--instance-market-options") == "MarketType=spot"
        place = arg("--placement", "")
        zone = place.split("AvailabilityZone=")[1] if place.startswith("AvailabilityZone=") else "default"
        if spot and spot_full(zone):
            fail("An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation: "
                 "There is no Spot capacity available that matches your request.")
        n = new_node(arg("--instance-type"), tags, spot)
        n["zone"] = zone
        if take("hang_start"):
            hang()
        print(json.dumps({"Instances": [{"InstanceId": n["id"], "InstanceType": n["itype"],
                                         "State": {"Name": "pending"}}]}))
    elif op == "describe-instances":
        if sw("garbage_list"):
            save()
            print("<html>502 Bad Gateway</html>")
            sys.exit(0)
        f = arg("--filters", "")
        assert f.startswith("Name=tag:pitstop-run,Values="), f
        run = f.split("Values=")[1]
        reclaim_check(lambda n: n["spot"])
        inst = [{"InstanceId": n["id"], "InstanceType": n["itype"], "State": {"Name": AWS[state(n)]},
                 "PrivateIpAddress": "10.0.0.%d" % (i + 1), "Placement": {"AvailabilityZone": n.get("zone", "default")},
                 "Tags": [{"Key": k, "Value": v} for k, v in n["tags"].items()]}
                for i, n in enumerate(db["nodes"]) if n["tags"].get("pitstop-run") == run]
        print(json.dumps({"Reservations": [{"Instances": inst}] if inst else []}))
    elif op == "describe-spot-instance-requests":
        f = arg("--filters", "")
        run = f.split("Values=")[1]
        reclaim_check(lambda n: n["spot"])
        req = [{"InstanceId": n["id"], "Status": {"Code": "marked-for-termination" if state(n) == "notice"
                                                  else "fulfilled"}}
               for n in db["nodes"] if n["spot"] and n["tags"].get("pitstop-run") == run and state(n) != "gone"]
        print(json.dumps({"SpotInstanceRequests": req}))
    elif op == "terminate-instances":
        nid = arg("--instance-ids")
        for n in db["nodes"]:
            if n["id"] == nid and not (n.get("gone_at") and now >= n["gone_at"]):
                n["gone_at"] = now
        print(json.dumps({"TerminatingInstances": [{"InstanceId": nid}]}))
    else:
        fail("aws ec2: unknown operation " + op)
elif prog == "clapp":
    CL = {"pending": "started", "running": "reachable", "notice": "reclaiming", "gone": None}

    def line(n):
        tags = ",".join("%s=%s" % kv for kv in n["tags"].items())
        return "* Node: %s, config: %s, nickname: n%s, status: %s, ip: %s, tags: %s" % (
            n["id"], n["itype"], n["id"][-2:], CL[state(n)], ip_of(n), tags.replace(",", ";"))
    if a[:2] == ["node", "start"]:
        if take("fail_start"):
            fail("[ERROR] Error starting nodes: capacity", 1)
        itype, count = a[2].split(":")
        ns = [new_node(itype, {}, False) for _ in range(int(count))]
        if take("hang_start"):
            hang()
        print("Started %d nodes" % len(ns))
        for n in ns:
            print(line(n))
    elif a[:2] == ["node", "add-tag"]:
        nid, tag = a[2], a[a.index("--tag") + 1]
        k, v = tag.split("=", 1)
        for n in db["nodes"]:
            if n["id"] == nid:
                n["tags"][k] = v
    elif a[:2] == ["node", "list"]:
        if sw("garbage_list"):
            save()
            print("Traceback (most recent call last):\n  KeyError: 'provider'")
            sys.exit(0)
        reclaim_check(lambda n: True)
        live = [n for n in db["nodes"] if state(n) != "gone"]
        print("Listing %d nodes" % len(live))
        for n in live:
            print(line(n))
    elif a[:2] == ["node", "stop"]:
        for n in db["nodes"]:
            if n["id"] == a[2]:
                n["gone_at"] = now
        print("Stopped 1 node")
    else:
        fail("clapp: unknown command " + " ".join(a), 2)
now = time.time()
kill_gone()
save()
