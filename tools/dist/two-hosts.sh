#!/usr/bin/env bash
# Two MPI "hosts" on one Linux machine, for testing gnnc_dist across nodes.
#
#   tools/dist/two-hosts.sh setup           create both hosts (idempotent)
#   tools/dist/two-hosts.sh teardown        remove everything setup created
#   tools/dist/two-hosts.sh run [MPIRUN OPTIONS] PROGRAM [ARGS...]
#                                           mpirun -np 4 ... over both
#   tools/dist/two-hosts.sh status          show the hosts, exit 1 if absent
#
# Each host gnnc-h0, gnnc-h1 is a set of namespaces: its own network
# namespace (one end of a veth pair, gnnc-veth0 10.231.0.1/24 and gnnc-veth1
# 10.231.0.2/24, plus its loopback), its own UTS namespace (gethostname()
# returns the host's name) and its own mount namespace (a private tmpfs on
# /dev/shm, so POSIX shared memory is not shared between hosts; /sys shows
# the host's network devices). All other files (/tmp, the build tree) are
# the machine's, as on hosts with a shared file system.
#
# `run` starts one mpirun (in gnnc-h0's network namespace, under the
# machine's own host name, so neither host is local to it) with a hostfile
# of both hosts with 2 slots each; Open MPI starts its daemons through
# tools/dist/netns-agent, which stands in for ssh and runs the daemon
# inside the host's namespaces. Open MPI's TCP (out-of-band and the tcp
# BTL) is restricted to the veth subnet; within a host ranks use vader.
# The variables GNNC_DIST_* and ASAN/LSAN/UBSAN/TSAN_OPTIONS of the caller
# reach the ranks (mpirun -x); pass others with -x NAME among the ARGS.
# When `run` had to create the hosts it removes them again when it ends,
# also on failure or interrupt; hosts made by `setup` stay until
# `teardown`.
#
# Needs root, ip netns, unshare, nsenter (and mpirun for `run`); exits 77
# with a "skipped: ..." line otherwise. Concurrent uses are serialised
# with a lock on /run/lock/gnnc-two-hosts.lock (a caller that already holds
# it sets GNNC_TWO_HOSTS_LOCKED=1). The environment variable
# GNNC_TWO_HOSTS_SUBNET (default 10.231.0) picks the first three octets of
# the veth addresses (the subnet exists only inside the two namespaces),
# GNNC_TWO_HOSTS_SHM_SIZE (default 2g) the size of each host's /dev/shm and
# GNNC_TWO_HOSTS_STATE (default /run/gnnc-hosts) the folder of the
# namespace files and the hostfile.

set -u

HOSTS=(gnnc-h0 gnnc-h1)
VETHS=(gnnc-veth0 gnnc-veth1)
SUBNET=${GNNC_TWO_HOSTS_SUBNET:-10.231.0}
STATE=${GNNC_TWO_HOSTS_STATE:-/run/gnnc-hosts}
LOCK=/run/lock/gnnc-two-hosts.lock
SHM_SIZE=${GNNC_TWO_HOSTS_SHM_SIZE:-2g}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGENT=$HERE/netns-agent

say() { echo "two-hosts: $*" >&2; }
die() {
  say "error: $*"
  exit 1
}
skip() {
  echo "skipped: $*"
  exit 77
}

require() {
  [ "$(id -u)" = 0 ] || skip "two-hosts needs root (network, UTS and mount namespaces)"
  local tool
  for tool in ip unshare nsenter flock mount umount; do
    command -v "$tool" > /dev/null 2>&1 || skip "two-hosts needs '$tool'"
  done
  ip netns list > /dev/null 2>&1 || skip "'ip netns' is not available"
  unshare --net --uts --mount true > /dev/null 2>&1 ||
    skip "cannot create network, UTS and mount namespaces (unshare failed)"
  [ -x "$AGENT" ] || die "$AGENT is missing or not executable"
}

lock() {
  [ "${GNNC_TWO_HOSTS_LOCKED:-0}" = 1 ] && return 0
  mkdir -p "$(dirname "$LOCK")"
  exec 9> "$LOCK" || die "cannot open $LOCK"
  flock -w 150 9 || die "another two-hosts run holds $LOCK for 150 s"
}

# Whether $1 is a bind mount of a namespace file.
is_ns_mount() { [ "$(stat -f -c %T "$1" 2> /dev/null)" = nsfs ]; }

have_netns() { [ -e "/run/netns/$1" ] && ip netns list | grep -qw "^$1"; }

host_ready() {
  local i=$1 host=${HOSTS[$1]}
  have_netns "$host" &&
    ip -n "$host" addr show dev "${VETHS[$i]}" 2> /dev/null |
    grep -q "inet $SUBNET.$((i + 1))/24" &&
    is_ns_mount "$STATE/$host/uts" && is_ns_mount "$STATE/$host/mnt"
}

all_ready() { host_ready 0 && host_ready 1; }

do_setup() {
  local i host
  # A private mount for the persistent UTS and mount namespace files.
  mkdir -p "$STATE" || die "cannot create $STATE"
  if ! mountpoint -q "$STATE"; then
    mount --bind "$STATE" "$STATE" || die "cannot bind-mount $STATE"
  fi
  mount --make-private "$STATE" || die "cannot make $STATE a private mount"

  for i in 0 1; do
    host=${HOSTS[$i]}
    have_netns "$host" || ip netns add "$host" ||
      die "cannot create network namespace $host"
  done
  if ! ip -n "${HOSTS[0]}" link show "${VETHS[0]}" > /dev/null 2>&1; then
    # A stale end in the other namespace would block the name.
    ip -n "${HOSTS[1]}" link del "${VETHS[1]}" > /dev/null 2>&1
    ip link add "${VETHS[0]}" netns "${HOSTS[0]}" type veth \
      peer name "${VETHS[1]}" netns "${HOSTS[1]}" ||
      die "cannot create the veth pair ${VETHS[0]} <-> ${VETHS[1]}"
  fi
  for i in 0 1; do
    host=${HOSTS[$i]}
    ip -n "$host" link set lo up &&
      ip -n "$host" addr replace "$SUBNET.$((i + 1))/24" dev "${VETHS[$i]}" &&
      ip -n "$host" link set "${VETHS[$i]}" up ||
      die "cannot configure ${VETHS[$i]} in $host"

    if is_ns_mount "$STATE/$host/uts" && is_ns_mount "$STATE/$host/mnt"; then
      continue
    fi
    umount "$STATE/$host/uts" "$STATE/$host/mnt" > /dev/null 2>&1
    mkdir -p "$STATE/$host" && touch "$STATE/$host/uts" "$STATE/$host/mnt" ||
      die "cannot create $STATE/$host"
    # Entered through the host's network namespace so that the fresh /sys
    # lists the host's own devices.
    nsenter --net="/run/netns/$host" \
      unshare --uts="$STATE/$host/uts" --mount="$STATE/$host/mnt" \
      --propagation private \
      sh -c "hostname '$host' &&
             mount -t tmpfs -o size=$SHM_SIZE,mode=1777 gnnc-shm-$host /dev/shm &&
             umount -l /sys && mount -t sysfs gnnc-sys-$host /sys" ||
      die "cannot create the UTS and mount namespaces of $host"
  done
  printf '%s slots=2\n%s slots=2\n' "${HOSTS[0]}" "${HOSTS[1]}" \
    > "$STATE/hostfile" || die "cannot write $STATE/hostfile"
  all_ready || die "the hosts are incomplete after setup"
}

# Ends the processes still running inside a host (daemons and ranks of an
# interrupted run), by process id.
kill_host_processes() {
  local host=$1 n
  local -a pids
  have_netns "$host" || return 0
  for n in 1 2 3 4 5 6 7 8 9 10; do
    mapfile -t pids < <(ip netns pids "$host" 2> /dev/null)
    [ "${#pids[@]}" = 0 ] && return 0
    if [ "$n" -lt 6 ]; then
      kill -TERM "${pids[@]}" 2> /dev/null
    else
      kill -KILL "${pids[@]}" 2> /dev/null
    fi
    sleep 0.2
  done
}

do_teardown() {
  local i host
  for i in 0 1; do
    host=${HOSTS[$i]}
    kill_host_processes "$host"
    umount "$STATE/$host/uts" > /dev/null 2>&1
    umount "$STATE/$host/mnt" > /dev/null 2>&1
    rm -rf "${STATE:?}/$host"
    # Deleting the namespace deletes its veth end, and with it the pair.
    have_netns "$host" && { ip netns del "$host" || say "cannot delete $host"; }
  done
  rm -f "$STATE/hostfile"
  if mountpoint -q "$STATE" 2> /dev/null; then
    umount "$STATE" || say "cannot unmount $STATE"
  fi
  [ -d "$STATE" ] && rmdir "$STATE" 2> /dev/null
  return 0
}

do_status() {
  local i host rc=0
  for i in 0 1; do
    host=${HOSTS[$i]}
    if host_ready "$i"; then
      echo "$host: ready: netns $(ip netns exec "$host" readlink /proc/self/ns/net)," \
        "uts $(nsenter --uts="$STATE/$host/uts" hostname)," \
        "${VETHS[$i]} $SUBNET.$((i + 1))/24"
    else
      echo "$host: absent or incomplete"
      rc=1
    fi
  done
  return $rc
}

MPIRUN_PID=
CREATED=0
on_exit() {
  local rc=$?
  if [ -n "$MPIRUN_PID" ] && kill -0 "$MPIRUN_PID" 2> /dev/null; then
    kill -TERM "$MPIRUN_PID" 2> /dev/null
    local n
    for n in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$MPIRUN_PID" 2> /dev/null || break
      sleep 0.3
    done
    kill -KILL "$MPIRUN_PID" 2> /dev/null
  fi
  if [ "$CREATED" = 1 ]; then
    do_teardown
  fi
  exit $rc
}

do_run() {
  command -v mpirun > /dev/null 2>&1 || skip "two-hosts run needs mpirun"
  [ $# -gt 0 ] || die "usage: two-hosts.sh run [MPIRUN OPTIONS] PROGRAM [ARGS...]"
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  if ! all_ready; then
    CREATED=1
    do_setup
  fi
  # The hosts start from a fresh environment (as over ssh); these variables
  # of the caller's are passed on to the ranks, like a site's SendEnv.
  local name
  local -a forward=()
  for name in $(compgen -e); do
    case "$name" in
    GNNC_DIST_* | ASAN_OPTIONS | LSAN_OPTIONS | UBSAN_OPTIONS | TSAN_OPTIONS)
      forward+=(-x "$name")
      ;;
    esac
  done
  # In the background, so that the traps run at once on a signal; the lock
  # descriptor is not passed on.
  nsenter --net="/run/netns/${HOSTS[0]}" \
    mpirun -np 4 --hostfile "$STATE/hostfile" \
    --mca plm rsh --mca plm_rsh_agent "$AGENT" \
    --mca plm_rsh_no_tree_spawn 1 \
    --mca pml ob1 --mca btl self,vader,tcp --mca osc ^ucx \
    --mca btl_tcp_if_include "$SUBNET.0/24" \
    --mca oob_tcp_if_include "$SUBNET.0/24" \
    "${forward[@]}" "$@" 9>&- < /dev/null &
  MPIRUN_PID=$!
  wait "$MPIRUN_PID"
  local rc=$?
  MPIRUN_PID=
  return $rc
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
setup)
  require
  lock
  do_setup
  do_status
  ;;
teardown)
  require
  lock
  do_teardown
  ;;
status)
  require
  do_status
  ;;
run)
  require
  lock
  do_run "$@"
  ;;
*)
  echo "usage: $0 setup | teardown | status |" \
    "run [MPIRUN OPTIONS] PROGRAM [ARGS...]" >&2
  exit 2
  ;;
esac
