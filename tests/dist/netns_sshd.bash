# netns_sshd.bash — sourced by the multi-host tests (tests/dist/netns_hosts.sh,
# tests/control/run_ssh.sh): two "hosts" on this machine, network namespaces
# $ns1 and $ns2 joined by a veth pair ($net.1 and $net.2), each with its own UTS
# name (h1, h2) and its own sshd (temporary keys in $tmp, no system config).
# Needs root. The caller sets tag, net, tmp and an array pids (sshd pids are
# added to it) and calls netns_sshd_down from its EXIT trap.
# After netns_sshd_up: ns1, ns2, $tmp/userkey, ssh_opts (the options every ssh
# call needs) and ssh_cmd (ssh with them, BatchMode).
netns_sshd_down() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$p" 2> /dev/null || true
  done
  [ -n "${ns1:-}" ] && ip netns del "$ns1" 2> /dev/null || true
  [ -n "${ns2:-}" ] && ip netns del "$ns2" 2> /dev/null || true
}
netns_sshd_up() {
  ns1=$tag-h1 ns2=$tag-h2
  ip netns add "$ns1"
  ip netns add "$ns2"
  ip link add "${tag}a" type veth peer name "${tag}b"
  ip link set "${tag}a" netns "$ns1"
  ip link set "${tag}b" netns "$ns2"
  ip -n "$ns1" addr add "$net.1/24" dev "${tag}a"
  ip -n "$ns2" addr add "$net.2/24" dev "${tag}b"
  ip -n "$ns1" link set lo up
  ip -n "$ns2" link set lo up
  ip -n "$ns1" link set "${tag}a" up
  ip -n "$ns2" link set "${tag}b" up
  ssh-keygen -q -t ed25519 -N '' -f "$tmp/hostkey"
  ssh-keygen -q -t ed25519 -N '' -f "$tmp/userkey"
  cp "$tmp/userkey.pub" "$tmp/authorized_keys"
  mkdir -p /run/sshd
  local ns name addr
  for name in h1 h2; do
    ns=$tag-$name addr=$net.${name#h}
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$name" \
      /usr/sbin/sshd -D -e -f /dev/null -h "$tmp/hostkey" -o ListenAddress="$addr" -o Port=22 \
      -o AuthorizedKeysFile="$tmp/authorized_keys" -o PermitRootLogin=prohibit-password \
      -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o UsePAM=no \
      -o StrictModes=no -o PidFile=none -o "SetEnv=PATH=$PATH" -o AcceptEnv=none \
      2> "$tmp/sshd-$name.log" &
    pids+=($!)
  done
  ssh_opts="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -i $tmp/userkey"
  ssh_cmd="ssh -o BatchMode=yes $ssh_opts"
  for addr in $net.1 $net.2; do
    for _ in $(seq 50); do
      ip netns exec "$ns1" $ssh_cmd "$addr" true 2> /dev/null && continue 2
      sleep 0.1
    done
    cat "$tmp"/sshd-*.log
    echo "FAIL: sshd on $addr not reachable"
    return 1
  done
}
