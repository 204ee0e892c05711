# shellcheck shell=sh
# Throwaway Slurm cluster on this machine, for make check-cluster.
# Sourced by test/cluster/run.  Everything lives under one temporary
# directory: its own munge key, socket and pid file, its own slurm.conf
# (exported as SLURM_CONF for every client command), state and spool
# directories, free ports.  It never reads or writes /etc/munge or
# /etc/slurm, and it stops only the daemons it started, by the pids it
# recorded.
#
# One node is slurmd on localhost.  Several nodes are each a network
# namespace of their own (rpPID-nI), with an address on a bridge made for
# the run (rpbPID, 10.233.X.0/24, the controller at .1, node I at .10+I)
# and a slurmd of their own started in it; they share the file system
# (the build directory, the munge socket).  Every namespace and link made
# is noted in DIR/net, and cluster_stop removes exactly those.
#
#   cluster_start DIR [NODES]  start munged, slurmctld and slurmd(s) under DIR
#   cluster_stop               cancel every job, stop the daemons, wait for
#                              them, remove the namespaces and links
#   cluster_trap CMD           run CMD (cluster_stop, ...) at exit and on
#                              SIGINT, SIGTERM, SIGHUP, to its end whatever
#                              signals arrive meanwhile
#
# cluster_start sets CLUSTER_DIR, CLUSTER_NODES (the node names) and
# exports SLURM_CONF.

CLUSTER_PIDS=

# cluster_trap CMD: run CMD when this shell exits, whether it ends by
# itself or on SIGINT, SIGTERM or SIGHUP (then with status 128 + the
# signal's number).  From the moment the shell starts to exit, those
# three signals are ignored: a second one (make forwards its own SIGTERM
# to its child; a second ^C) cannot stop CMD half-way and leave daemons
# running.
cluster_trap() {
	_cluster_cleanup=$1
	trap _cluster_exit EXIT
	trap '_cluster_signal 130' INT
	trap '_cluster_signal 143' TERM
	trap '_cluster_signal 129' HUP
}

_cluster_signal() {
	trap '' INT TERM HUP
	exit "$1"
}

_cluster_exit() {
	trap '' INT TERM HUP
	eval "$_cluster_cleanup"
}

# cluster_missing: print what the check needs and lacks; nothing if ready.
cluster_missing() {
	for c in munged mungekey slurmctld slurmd slurmstepd sbatch squeue scontrol scancel parallel python3; do
		command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$c" >/dev/null 2>&1 ||
			printf 'command %s (Debian packages munge, slurm-wlm, parallel: scripts/install-deps --cluster)\n' "$c"
	done
	[ "$(id -u)" = 0 ] || echo 'root: slurmd must run as root to start jobs'
}

# cluster_missing_nodes: the same for a cluster of several nodes.
cluster_missing_nodes() {
	PATH=$PATH:/usr/sbin:/sbin command -v ip >/dev/null 2>&1 ||
		echo 'command ip (Debian package iproute2)'
	command -v nsenter >/dev/null 2>&1 ||
		echo 'command nsenter (Debian package util-linux)'
}

# _net NODES: the bridge, and a namespace with its link for each node.
_net() {
	# a subnet no interface here has (a cluster started inside
	# another's run gets one of its own)
	_x=$(($$ % 250 + 1))
	_t=250
	while ip -o addr show | grep -q "inet 10\.233\.$_x\." && [ $_t -gt 0 ]; do
		_x=$((_x % 250 + 1))
		_t=$((_t - 1))
	done
	_br=rpb$$
	CLUSTER_NET=10.233.$_x
	ip link add "$_br" type bridge || return 1
	echo "link $_br" >>"$CLUSTER_DIR/net"
	ip addr add "$CLUSTER_NET.1/24" dev "$_br" || return 1
	ip link set "$_br" up || return 1
	_i=1
	while [ "$_i" -le "$1" ]; do
		_ns=rp$$-n$_i
		ip netns add "$_ns" || return 1
		echo "netns $_ns" >>"$CLUSTER_DIR/net"
		ip link add "rpv$$-$_i" type veth peer name eth0 netns "$_ns" || return 1
		echo "link rpv$$-$_i" >>"$CLUSTER_DIR/net"
		ip link set "rpv$$-$_i" master "$_br" up || return 1
		ip -n "$_ns" link set lo up || return 1
		ip -n "$_ns" addr add "$CLUSTER_NET.$((10 + _i))/24" dev eth0 || return 1
		ip -n "$_ns" link set eth0 up || return 1
		_i=$((_i + 1))
	done
}

# _net_down: remove what _net noted, namespaces first (their ends of
# the links go with them), and nothing else.
_net_down() {
	[ -f "$CLUSTER_DIR/net" ] || return 0
	grep '^netns ' "$CLUSTER_DIR/net" | while read -r _k _n; do
		ip netns del "$_n" 2>/dev/null
	done
	grep '^link ' "$CLUSTER_DIR/net" | while read -r _k _n; do
		ip link del "$_n" 2>/dev/null
	done
	rm -f "$CLUSTER_DIR/net"
}

# free_ports N: N distinct TCP ports free on localhost right now.
free_ports() {
	python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# _daemon NAME CMD...: start CMD in the background, in the foreground mode
# of the daemon, and record its pid.
_daemon() {
	_name=$1
	shift
	"$@" >"$CLUSTER_DIR/log/$_name.out" 2>&1 &
	echo $! >"$CLUSTER_DIR/$_name.pid"
	CLUSTER_PIDS="$CLUSTER_PIDS $!"
}

# _wait_for SECONDS WHAT CMD...: retry CMD until it succeeds.
_wait_for() {
	_t=$(($1 * 10))
	_what=$2
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		_t=$((_t - 1))
		if [ $_t -le 0 ]; then
			echo "cluster: $_what did not come up; its log:" >&2
			tail -n 20 "$CLUSTER_DIR"/log/* >&2 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
}

cluster_start() {
	CLUSTER_DIR=$1
	_nodes=${2:-1}
	PATH=$PATH:/usr/sbin:/sbin
	_d=$CLUSTER_DIR
	mkdir -p "$_d/munge" "$_d/state" "$_d/spool" "$_d/log"
	chmod 700 "$_d" "$_d/munge"
	_host=$(hostname -s)
	_ctladdr=127.0.0.1
	if [ "$_nodes" -gt 1 ]; then
		_net "$_nodes" || return 1
		_ctladdr=$CLUSTER_NET.1
	fi
	# shellcheck disable=SC2046
	set -- $(free_ports 2)
	ctld_port=$1
	slurmd_port=$2

	# munge: a fresh key, socket and pid file of our own.
	mungekey --create --keyfile="$_d/munge/munge.key" || return 1
	chmod 600 "$_d/munge/munge.key"
	_daemon munged munged --foreground --force \
		--key-file="$_d/munge/munge.key" --socket="$_d/munge/munge.socket" \
		--pid-file="$_d/munge/munged.pid" --seed-file="$_d/munge/munged.seed" \
		--log-file="$_d/log/munged.log"
	_wait_for 10 munged sh -c "munge -n -S '$_d/munge/munge.socket' | unmunge -S '$_d/munge/munge.socket'" || return 1

	: >"$_d/plugstack.conf"
	cat >"$_d/slurm.conf" <<CONF
# Generated by test/cluster/lib.sh for one check run; removed after it.
ClusterName=recpipe-check
SlurmctldHost=$_host($_ctladdr)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$_d/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$_d/state
SlurmdSpoolDir=$_d/spool/%n
SlurmctldPidFile=$_d/slurmctld.pidfile
SlurmdPidFile=$_d/slurmd-%n.pidfile
SlurmctldLogFile=$_d/log/slurmctld.log
SlurmdLogFile=$_d/log/slurmd-%n.log
PlugStackConfig=$_d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
# the least loaded node first: the parts of a stage spread over the nodes
SelectTypeParameters=CR_Core,CR_LLN
# the nodes as declared below, whatever this machine has: a stage may
# ask for more CPUs and memory a task (slurm-build -c, --mem) than a
# share of the test machine has
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
# start dependent jobs at once, not a few seconds later
SchedulerParameters=batch_sched_delay=0
SwitchType=switch/none
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
KillWait=2
CONF
	if [ "$_nodes" -gt 1 ]; then
		# the cores shared out, but 4 at least (the recipes' threaded
		# stages ask for 4 a task)
		_cpus=$(($(nproc) / _nodes))
		[ "$_cpus" -ge 4 ] || _cpus=4
		CLUSTER_NODES=
		_i=1
		while [ "$_i" -le "$_nodes" ]; do
			echo "NodeName=node$_i NodeAddr=$CLUSTER_NET.$((10 + _i)) CPUs=$_cpus RealMemory=16384 State=UNKNOWN"
			CLUSTER_NODES="$CLUSTER_NODES node$_i"
			_i=$((_i + 1))
		done >>"$_d/slurm.conf"
		echo "PartitionName=check Nodes=node[1-$_nodes] Default=YES MaxTime=INFINITE State=UP" >>"$_d/slurm.conf"
	else
		CLUSTER_NODES=$_host
		_cpus=$(nproc)
		[ "$_cpus" -ge 4 ] || _cpus=4
		echo "NodeName=$_host NodeAddr=127.0.0.1 CPUs=$_cpus RealMemory=16384 State=UNKNOWN" >>"$_d/slurm.conf"
		echo "PartitionName=check Nodes=$_host Default=YES MaxTime=INFINITE State=UP" >>"$_d/slurm.conf"
	fi
	SLURM_CONF=$_d/slurm.conf
	export SLURM_CONF
	_daemon slurmctld slurmctld -D -i -f "$_d/slurm.conf"
	_wait_for 30 slurmctld scontrol ping || return 1
	if [ "$_nodes" -gt 1 ]; then
		_i=1
		for _n in $CLUSTER_NODES; do
			# into the node's network namespace only: the file
			# systems (/sys, the build directory) stay shared
			mkdir -p "$_d/spool/$_n"
			_daemon "slurmd-$_n" nsenter --net="/run/netns/rp$$-n$_i" \
				slurmd -D -f "$_d/slurm.conf" -N "$_n"
			_i=$((_i + 1))
		done
	else
		_daemon "slurmd-$_host" slurmd -D -f "$_d/slurm.conf" -N "$_host"
	fi
	for _n in $CLUSTER_NODES; do
		_wait_for 30 "slurmd (node $_n idle)" sh -c \
			"sinfo -h -n '$_n' -o %t | grep -q '^idle'" || return 1
	done
}

# _strays: pids of processes outside our session that hold a file under
# the cluster directory open or work in it: a slurmstepd, or a job step,
# left by a slurmd that had to be killed.
_strays() {
	mysid=$(ps -o sid= -p $$ | tr -d ' ')
	find /proc/[0-9]*/cwd /proc/[0-9]*/fd -maxdepth 1 \
	    \( -lname "$CLUSTER_DIR" -o -lname "$CLUSTER_DIR/*" \) 2>/dev/null |
	cut -d/ -f3 | sort -u | while read -r pid; do
		sid=$(ps -o sid= -p "$pid" | tr -d ' ')
		[ -n "$sid" ] && [ "$sid" != "$mysid" ] && echo "$pid"
	done
}

cluster_stop() {
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	# only ever our own controller: SLURM_CONF named explicitly
	if [ -f "$CLUSTER_DIR/slurmctld.pid" ] && [ -f "$CLUSTER_DIR/slurm.conf" ]; then
		SLURM_CONF=$CLUSTER_DIR/slurm.conf scancel --quiet --full \
			--user="$(id -un)" >/dev/null 2>&1
		# give slurmd a moment to end the jobs it runs
		_t=50
		while [ $_t -gt 0 ] && [ -n "$(SLURM_CONF=$CLUSTER_DIR/slurm.conf \
		    squeue -h -o %i 2>/dev/null)" ]; do
			sleep 0.1
			_t=$((_t - 1))
		done
	fi
	# the reverse of the order they were started in
	for f in "$CLUSTER_DIR"/slurmd-*.pid "$CLUSTER_DIR/slurmctld.pid" \
	    "$CLUSTER_DIR/munged.pid"; do
		[ -f "$f" ] || continue
		_pid=$(cat "$f")
		kill -TERM "$_pid" 2>/dev/null
		_t=100
		while kill -0 "$_pid" 2>/dev/null && [ $_t -gt 0 ]; do
			sleep 0.1
			_t=$((_t - 1))
		done
		kill -KILL "$_pid" 2>/dev/null
		wait "$_pid" 2>/dev/null
		# stopped: never signal this pid again, it may be reused
		rm -f "$f"
	done
	for _p in $(_strays); do
		kill -KILL "$_p" 2>/dev/null
	done
	_net_down
	CLUSTER_PIDS=
}
