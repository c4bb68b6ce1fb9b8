#!/usr/bin/env bash
# dist.two-hosts: gnnc_dist over MPI ranks on two hosts (network, UTS and
# mount namespaces made by tools/dist/two-hosts.sh, 2 ranks each) agrees
# with the same program on one host.
#
#   two-hosts-test.sh --tool two-hosts.sh --hello HELLO --workdir DIR
#                     [--topology TOPOLOGY] [--check CHECK]
#
# 1. HELLO on the two hosts: ranks 0-1 must report host gnnc-h0 and its
#    network namespace, ranks 2-3 gnnc-h1 and its namespace, each pair
#    seeing only its own host's shared memory, the all-reduce must be
#    right, and the bytes must have crossed the veth pair. The same checker
#    must reject HELLO's output on one host (plain mpirun).
# 2. TOPOLOGY (gnnc_dist's node fields against the host names) must pass
#    with 2 nodes on the two hosts and 1 node on one host.
#    The same with the ranks alternating between the hosts (--map-by node:
#    ranks 0, 2 on gnnc-h0 and 1, 3 on gnnc-h1).
# 3. CHECK (gnnc-dist-mpi-check, the shared checks) on the two hosts and on
#    one host: both must pass, print the same check names, and the digests
#    of each check must be equal. With GNNC_TWO_HOSTS_ALTERNATING=1, also
#    on the two hosts with alternating ranks.
# Exits 77 (skipped) where namespaces cannot be made (not root, no ip netns).

set -u

TOOL='' HELLO='' TOPOLOGY='' CHECK='' WORKDIR=''
while [ $# -gt 0 ]; do
  case "$1" in
  --tool) TOOL=$2 ;;
  --hello) HELLO=$2 ;;
  --topology) TOPOLOGY=$2 ;;
  --check) CHECK=$2 ;;
  --workdir) WORKDIR=$2 ;;
  *)
    echo "two-hosts-test: unknown argument '$1'" >&2
    exit 2
    ;;
  esac
  shift 2
done
if [ -z "$TOOL" ] || [ -z "$HELLO" ] || [ -z "$WORKDIR" ]; then
  echo "two-hosts-test: --tool, --hello and --workdir are required" >&2
  exit 2
fi

fail() {
  echo "FAIL: $*"
  exit 1
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# Skips (exit 77) without root or namespaces.
status_out=$("$TOOL" status 2>&1)
if [ $? = 77 ]; then
  echo "$status_out"
  exit 77
fi
command -v mpirun > /dev/null 2>&1 || {
  echo "skipped: mpirun not found"
  exit 77
}

# One two-host user at a time; the tool's commands below run under this
# lock. Hosts that exist already (made by `two-hosts.sh setup`) are kept.
mkdir -p /run/lock && exec 9> /run/lock/gnnc-two-hosts.lock ||
  fail "cannot open the lock file"
flock -w 100 9 || fail "the two hosts stayed busy for 100 s"
export GNNC_TWO_HOSTS_LOCKED=1
CREATED=1
"$TOOL" status > /dev/null 2>&1 && CREATED=0

TMP=$(mktemp -d "$WORKDIR/two-hosts.XXXXXX") || fail "mktemp in $WORKDIR"
cleanup() {
  local rc=$?
  [ "$CREATED" = 1 ] && "$TOOL" teardown
  rm -rf "$TMP"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start=$(now)
"$TOOL" setup || fail "two-hosts.sh setup"
echo "setup: $(elapsed "$start") s"

netns_of() { ip netns exec "$1" readlink /proc/self/ns/net; }
NET0=$(netns_of gnnc-h0)
NET1=$(netns_of gnnc-h1)
MYNET=$(readlink /proc/self/ns/net)
echo "namespaces: gnnc-h0 $NET0, gnnc-h1 $NET1, this process $MYNET"
[ "$NET0" != "$NET1" ] && [ "$NET0" != "$MYNET" ] ||
  fail "the hosts do not have their own network namespaces"

veth_bytes() {
  ip netns exec gnnc-h0 cat /sys/class/net/gnnc-veth0/statistics/tx_bytes \
    /sys/class/net/gnnc-veth0/statistics/rx_bytes | tr '\n' ' '
}

# Checks HELLO's output ($1) for ranks 0-1 on gnnc-h0 and 2-3 on gnnc-h1;
# prints the first problem and returns 1.
check_hello_two_hosts() {
  local out=$1 r host net uts sees
  local -a hosts nets utss seess
  [ "$(grep -c '^rank ' <<< "$out")" = 4 ] || {
    echo "expected 4 rank lines"
    return 1
  }
  while read -r _ r _ host _ net _ uts _ sees; do
    hosts[$r]=$host nets[$r]=$net utss[$r]=$uts seess[$r]=$sees
  done < <(grep '^rank ' <<< "$out")
  for r in 0 1 2 3; do
    local want_host=gnnc-h$((r / 2)) want_net=$NET0 want_sees=0,1
    [ "$r" -ge 2 ] && want_net=$NET1 want_sees=2,3
    [ "${hosts[$r]:-}" = "$want_host" ] || {
      echo "rank $r runs on host '${hosts[$r]:-}', expected $want_host"
      return 1
    }
    [ "${nets[$r]}" = "$want_net" ] || {
      echo "rank $r is in network namespace ${nets[$r]}, expected $want_net"
      return 1
    }
    [ "${seess[$r]}" = "$want_sees" ] || {
      echo "rank $r sees the shared memory of ranks ${seess[$r]}," \
        "expected $want_sees"
      return 1
    }
  done
  [ "${utss[0]}" = "${utss[1]}" ] && [ "${utss[2]}" = "${utss[3]}" ] &&
    [ "${utss[0]}" != "${utss[2]}" ] || {
    echo "UTS namespaces ${utss[*]} do not pair ranks by host"
    return 1
  }
  grep -qx 'allreduce ok' <<< "$out" || {
    echo "the all-reduce did not report ok"
    return 1
  }
  return 0
}

# --- 1. hello -------------------------------------------------------------
read -r -a before <<< "$(veth_bytes)"
start=$(now)
out=$("$TOOL" run "$HELLO" 2>&1) || {
  echo "$out"
  fail "hello on two hosts exited non-zero"
}
read -r -a after <<< "$(veth_bytes)"
echo "$out"
echo "hello, two hosts: $(elapsed "$start") s"
why=$(check_hello_two_hosts "$out") || fail "hello on two hosts: $why"
sent=$((after[0] - before[0]))
received=$((after[1] - before[1]))
echo "gnnc-veth0: $sent bytes sent, $received bytes received"
[ "$sent" -ge 1048576 ] && [ "$received" -ge 1048576 ] ||
  fail "less than 1 MiB crossed the veth pair each way"

start=$(now)
out=$(mpirun -np 4 --oversubscribe "$HELLO" 2>&1) || {
  echo "$out"
  fail "hello on one host exited non-zero"
}
echo "hello, one host: $(elapsed "$start") s"
why=$(check_hello_two_hosts "$out") &&
  fail "the two-host checker accepted the one-host run of hello"
echo "one-host hello rejected as expected: $why"

# --- 2. topology ----------------------------------------------------------
if [ -n "$TOPOLOGY" ]; then
  start=$(now)
  out=$("$TOOL" run "$TOPOLOGY" 2>&1)
  rc=$?
  echo "$out"
  echo "topology, two hosts: $(elapsed "$start") s"
  [ $rc = 0 ] || fail "topology on two hosts exited with $rc"
  for r in 0 1 2 3; do
    want="rank $r node gnnc-h$((r / 2)) index $((r / 2)) of 2 local $((r % 2)) of 2"
    grep -qx "$want" <<< "$out" || fail "topology: no line '$want'"
  done
  grep -qx 'topology ok: 4 ranks on 2 nodes' <<< "$out" ||
    fail "topology on two hosts did not report 2 nodes"

  # Ranks alternating between the hosts: a node's ranks are not contiguous.
  start=$(now)
  out=$("$TOOL" run --map-by node "$TOPOLOGY" 2>&1)
  rc=$?
  echo "$out"
  echo "topology, two hosts, --map-by node: $(elapsed "$start") s"
  [ $rc = 0 ] || fail "topology on two hosts (--map-by node) exited with $rc"
  for r in 0 1 2 3; do
    want="rank $r node gnnc-h$((r % 2)) index $((r % 2)) of 2 local $((r / 2)) of 2"
    grep -qx "$want" <<< "$out" || fail "topology: no line '$want'"
  done

  start=$(now)
  out=$(mpirun -np 4 --oversubscribe "$TOPOLOGY" 2>&1)
  rc=$?
  echo "topology, one host: $(elapsed "$start") s"
  [ $rc = 0 ] || {
    echo "$out"
    fail "topology on one host exited with $rc"
  }
  grep -qx 'topology ok: 4 ranks on 1 nodes' <<< "$out" || {
    echo "$out"
    fail "topology on one host did not report 1 node"
  }
fi

# --- 3. the shared checks -------------------------------------------------
if [ -n "$CHECK" ]; then
  mkdir -p "$TMP/two" "$TMP/one" "$TMP/alternating"
  start=$(now)
  two=$("$TOOL" run "$CHECK" "$TMP/two" 2>&1)
  rc=$?
  echo "$two"
  echo "checks, two hosts: $(elapsed "$start") s"
  [ $rc = 0 ] || fail "$(basename "$CHECK") on two hosts exited with $rc"

  alternating=
  if [ "${GNNC_TWO_HOSTS_ALTERNATING:-0}" = 1 ]; then
    start=$(now)
    alternating=$("$TOOL" run --map-by node "$CHECK" "$TMP/alternating" 2>&1)
    rc=$?
    echo "$alternating"
    echo "checks, two hosts, --map-by node: $(elapsed "$start") s"
    [ $rc = 0 ] ||
      fail "$(basename "$CHECK") on two hosts (--map-by node) exited with $rc"
  fi

  start=$(now)
  one=$(mpirun -np 4 --oversubscribe "$CHECK" "$TMP/one" 2>&1)
  rc=$?
  echo "$one"
  echo "checks, one host: $(elapsed "$start") s"
  [ $rc = 0 ] || fail "$(basename "$CHECK") on one host exited with $rc"

  digests() {
    grep '^check ' <<< "$1" | sort
  }
  two_lines=$(digests "$two")
  one_lines=$(digests "$one")
  [ -n "$two_lines" ] || fail "no 'check' lines on two hosts"
  bad=$(grep -Ev '^check [^:]+: ok digest [0-9a-f]{16}$' <<< "$two_lines
$one_lines")
  [ -z "$bad" ] || fail "checks not ok: $bad"
  [ "$two_lines" = "$one_lines" ] || {
    diff <(echo "$one_lines") <(echo "$two_lines")
    fail "the digests on two hosts differ from those on one host"
  }
  if [ -n "$alternating" ]; then
    [ "$(digests "$alternating")" = "$one_lines" ] || {
      diff <(echo "$one_lines") <(digests "$alternating")
      fail "the digests on two hosts (--map-by node) differ from those on" \
        "one host"
    }
  fi
  echo "$(wc -l <<< "$two_lines") checks agree on one and two hosts"
fi

echo "PASS"
