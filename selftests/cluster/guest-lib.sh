# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the commands that run-cluster.sh's tests run in the guests;
# sourced by agent.sh and by every command file.  SHARE, NODE, STATE and
# the CL_* settings of SHARE/config.sh are set.

# shellcheck source=/dev/null
. "$SHARE/config.sh"
# The install test runs what the packages installed, nothing of the tree.
[ "${CL_INSTALL:-0}" = 1 ] || PATH=$BCS_SRC/tools:$BCS_SRC/daemon:$PATH
export PY=/usr/bin/python3

# A FIFO that nobody writes: "read -t" on it sleeps without a fork, and
# forks are dear under TCG.
[ -p "$STATE/nap" ] || mkfifo "$STATE/nap"
exec 8<> "$STATE/nap"
nap()
{
	read -r -t "$1" -u 8 _
	return 0
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_for()
{
	local end=$((EPOCHSECONDS + $1))
	shift
	while ! "$@"; do
		[ "$EPOCHSECONDS" -lt "$end" ] || return 1
		nap 0.2
	done
}

# Step the clock from the harness's server once, then keep it in step.
clock_sync()
{
	mkdir -m 0750 /run/chrony 2>/dev/null
	printf 'server %s iburst\npidfile %s/chrony-q.pid\n' "$CL_NTP" \
		"$STATE" > "$STATE/chrony-q.conf"
	echo "before: $(date +%s.%N)"
	timeout 60 "$CL_CHRONYD" -q -u root -f "$STATE/chrony-q.conf" ||
		echo "chronyd -q failed"
	cat > "$STATE/chrony.conf" <<-CONF
	server $CL_NTP iburst minpoll -2 maxpoll 0
	makestep 0.01 -1
	pidfile $STATE/chronyd.pid
	CONF
	"$CL_CHRONYD" -u root -f "$STATE/chrony.conf" || echo "chronyd failed"
	if timeout 60 "$CL_CHRONYC" -n waitsync 40 0.002 0 1 > /dev/null; then
		echo "synchronised"
	else
		echo "not synchronised within 40 s"
	fi
	"$CL_CHRONYC" -n tracking
	echo "clock: $("$CL_CHRONYC" -n tracking | sed -n 's/^System time *: //p')"
}

kstate()	# kstate KEY: a field of /sys/kernel/debug/bcs/state
{
	sed -n "s/^$1: //p" /sys/kernel/debug/bcs/state
}

alive()		# alive PID: running, not a zombie
{
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

bcsd_pid()
{
	local p
	p=$(cat "$STATE/bcsd.pid" 2>/dev/null) || return 1
	alive "$p" && echo "$p"
}

# start_bcsd [--name=value...]: bcsd with the cluster's settings; fill
# off (tests count a job's slices; test-matrix.sh turns it on to test it).
start_bcsd()
{
	local p
	if bcsd_pid > /dev/null; then
		echo "bcsd already runs"
		return 1
	fi
	: > "$STATE/bcsd.conf"
	rm -f "$STATE/stats.json" /run/bcs/bcsd.sock
	echo "=== $(date +%T.%N) bcsd $*" >> "$BCS_OUT/bcsd.log"
	bcsd -f "$STATE/bcsd.conf" --node_id="$NODE" --cluster="$CL_CLUSTER" \
		--interface=eth0 --key_file="$STATE/cluster.key" \
		--slice_us="$CL_SLICE_US" --lead_us="$CL_LEAD_US" \
		--watchdog_slices="$CL_WATCHDOG" \
		--failover_slices="$CL_FAILOVER" --report_ms="$CL_REPORT_MS" \
		--stats_file="$STATE/stats.json" --jobs_dir="$STATE/jobs" \
		--fill=0 --verbose=1 "$@" \
		>> "$BCS_OUT/bcsd.log" 2>&1 < /dev/null &
	p=$!
	echo "$p" > "$STATE/bcsd.pid"
	if ! wait_for 15 test -S /run/bcs/bcsd.sock || ! alive "$p"; then
		echo "bcsd did not start"
		tail -n 5 "$BCS_OUT/bcsd.log"
		return 1
	fi
	echo "bcsd $p"
}

# kill_bcsd SIGNAL: and wait until it is gone.
kill_bcsd()
{
	local p
	p=$(bcsd_pid) || { echo "bcsd not running"; return 1; }
	kill -"$1" "$p"
	wait_for 15 eval "! alive $p"
}

# bcsd_cpu: the CPU time bcsd has used and the guest's uptime, seconds.
bcsd_cpu()
{
	local p
	p=$(bcsd_pid) || return 1
	# Fields 14 and 15 of /proc/PID/stat: utime and stime, in clock ticks.
	awk -v hz="$(getconf CLK_TCK)" -v up="$(cut -d' ' -f1 /proc/uptime)" \
		'{ printf "%.2f %s\n", ($14 + $15) / hz, up }' "/proc/$p/stat"
}

# bcsd's counters (JSON), written on SIGUSR1.
bcsd_stats()
{
	local p
	p=$(bcsd_pid) || { echo '{}'; return 1; }
	rm -f "$STATE/stats.json"
	kill -USR1 "$p"
	wait_for 10 test -s "$STATE/stats.json" && cat "$STATE/stats.json"
}

# start_burner JOB: a CPU-bound process in cluster job JOB; prints its pid
# once it runs in the job (bcsctl run executes it only after attaching).
start_burner()
{
	local p
	nice -n 10 bcsctl run --job "$1" -- sh -c 'while :; do :; done' \
		< /dev/null >> "$BCS_OUT/burner.log" 2>&1 &
	p=$!
	echo "$1 $p" >> "$STATE/burners"
	if ! wait_for 30 eval "[ \"\$(cat /proc/$p/comm 2>/dev/null)\" = sh ]"; then
		echo "burner for job $1 did not start"
		tail -n 3 "$BCS_OUT/burner.log"
		return 1
	fi
	echo "$p"
}

# snapshot LABEL [RECORDS]: the node's view into SHARE/data/LABEL/.
snapshot()
{
	local d=$SHARE/data/$1 n=${2:-800} f
	mkdir -p "$d"
	f=$d/node$NODE
	bcsstat slices -n "$n" --json > "$f.slices.json"
	bcsstat tasks --json > "$f.tasks.json"
	bcsstat jobs --json > "$f.jobs.json"
	cat /sys/kernel/debug/bcs/state > "$f.state.txt"
	if bcsd_pid > /dev/null; then
		bcsd_stats > "$f.stats.json"
		bcsctl job list > "$f.joblist.txt" 2>&1
		bcsctl status > "$f.status.txt" 2>&1
	fi
	"$CL_CHRONYC" -n tracking > "$f.tracking.txt" 2>&1
	date +%s%N > "$f.time"
}

# Load sch_netem (and what it needs) from the guest kernel's modules.
load_netem()
{
	local m f
	[ -d /sys/module/sch_netem ] && return 0
	f=$(find "$CL_MODDIR/kernel/net/sched" -name 'sch_netem.ko*' | head -n 1)
	[ -n "$f" ] || { echo "sch_netem not found"; return 1; }
	for m in $(modinfo -F depends "$f" | tr , ' ') sch_netem; do
		[ -d "/sys/module/$m" ] && continue
		f=$(find "$CL_MODDIR/kernel" -name "$m.ko*" | head -n 1)
		case $f in
		*.xz)  xz -dc "$f" > "$STATE/$m.ko" ;;
		*.zst) zstd -dcq "$f" > "$STATE/$m.ko" ;;
		*)     cp "$f" "$STATE/$m.ko" ;;
		esac
		insmod "$STATE/$m.ko" || return 1
	done
}

# cut_from ADDR: this node drops every IPv4 datagram from ADDR, and still
# sends to it (a one-way link cut, with no netfilter module to load): a
# policy rule sends what comes from ADDR to a blackhole, ahead of the
# local table, which moves from preference 0 to 20.  uncut_from ADDR
# undoes it.
cut_from()
{
	ip rule add pref 10 from "$1" blackhole &&
		ip rule add pref 20 lookup local &&
		ip rule del pref 0
}

uncut_from()
{
	ip rule add pref 0 lookup local
	ip rule del pref 20
	ip rule del pref 10 from "$1"
	! ip rule show | grep -q "from $1 blackhole"
}

# start_sshd: an SSH server on this node's cluster address, through which
# mpirun on another node starts its remote daemons, as on a real cluster.
# Root logs in with the harness's key (SHARE/mpi/id) only.  The server
# looks for authorized_keys in root's home, so this guest (and no one
# else: the host's root file system is mounted read-only) gets a passwd
# whose root home is a directory under STATE.
start_sshd()
{
	local home=$STATE/home p

	p=$(cat "$STATE/dropbear.pid" 2>/dev/null) && alive "$p" && return 0
	install -d -m 0700 "$home" "$home/.ssh"
	install -m 0600 "$SHARE/mpi/id.pub" "$home/.ssh/authorized_keys"
	install -m 0600 "$SHARE/mpi/id" "$STATE/ssh_id"
	cat > "$STATE/ssh_config" <<-EOF
	Host *
	    User root
	    IdentityFile $STATE/ssh_id
	    IdentitiesOnly yes
	    BatchMode yes
	    StrictHostKeyChecking no
	    UserKnownHostsFile /dev/null
	    LogLevel ERROR
	    ConnectTimeout 30
	EOF
	if ! grep -q "^root:.*:$home:" /etc/passwd; then
		sed "s|^\(root:[^:]*:[^:]*:[^:]*:[^:]*:\)[^:]*:|\1$home:|" \
			/etc/passwd > "$STATE/passwd" &&
		mount --bind "$STATE/passwd" /etc/passwd || return 1
	fi
	# MPI_USER (a uid) logs in too, by the same key: its home and its
	# own copy of the key and of the client settings.
	if [ -n "${MPI_USER:-}" ]; then
		start_sshd_user "$MPI_USER" || return 1
	fi
	[ -s "$STATE/ssh_host_key" ] ||
		dropbearkey -t ed25519 -f "$STATE/ssh_host_key" > /dev/null ||
		return 1
	# -s: keys only; -m: no motd; -F -E: stay here and log to stderr;
	# -P: its pid file under STATE, not in /run.
	dropbear -F -E -s -m -p "$CL_NET.$NODE:22" -r "$STATE/ssh_host_key" \
		-P "$STATE/dropbear.pidfile" >> "$BCS_OUT/dropbear.log" 2>&1 \
		< /dev/null &
	echo "$!" > "$STATE/dropbear.pid"
	if ! wait_for 15 eval "grep -q ':0016 .* 0A ' /proc/net/tcp"; then
		echo "dropbear does not listen"
		tail -n 5 "$BCS_OUT/dropbear.log"
		return 1
	fi
}

# start_sshd_user UID: UID (an existing user, "nobody" say) gets a home
# under STATE with the key mpirun logs in with, a shell, and its own
# ssh_config and key; /etc/passwd bound over as for root.
start_sshd_user()
{
	local uid=$1 home=$STATE/home-$1 name
	name=$(getent passwd "$uid" | cut -d: -f1) || return 1
	install -d -m 0700 -o "$uid" -g "$uid" "$home" "$home/.ssh"
	install -m 0600 -o "$uid" -g "$uid" "$SHARE/mpi/id.pub" \
		"$home/.ssh/authorized_keys"
	install -m 0600 -o "$uid" -g "$uid" "$SHARE/mpi/id" "$STATE/ssh_id-$uid"
	sed "s|^    User root$|    User $name|; s|$STATE/ssh_id\$|$STATE/ssh_id-$uid|" \
		"$STATE/ssh_config" > "$STATE/ssh_config-$uid"
	chmod 0644 "$STATE/ssh_config-$uid"
	if ! grep -q "^$name:[^:]*:$uid:[^:]*:[^:]*:$home:/bin/sh\$" /etc/passwd; then
		sed "s|^\($name:[^:]*:$uid:[^:]*:[^:]*:\)[^:]*:[^:]*\$|\1$home:/bin/sh|" \
			/etc/passwd > "$STATE/passwd-$uid" &&
		cat "$STATE/passwd-$uid" > "$STATE/passwd" &&
		{ mountpoint -q /etc/passwd ||
		  mount --bind "$STATE/passwd" /etc/passwd; } || return 1
	fi
}

# mpi_env: Open MPI's settings for mpirun on the cluster: remote nodes over
# SSH (start_sshd), TCP on the cluster network, ranks that yield the CPU
# while they wait (they share each guest's one CPU with others).
mpi_env()
{
	export OMPI_MCA_plm_rsh_agent="ssh -F $STATE/ssh_config"
	export OMPI_MCA_plm_rsh_no_tree_spawn=1
	export OMPI_MCA_btl=self,vader,tcp
	export OMPI_MCA_btl_tcp_if_include=$CL_NET.0/24
	export OMPI_MCA_oob_tcp_if_include=$CL_NET.0/24
	export OMPI_MCA_mpi_yield_when_idle=1
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# mpi_start LABEL NP JOB ARGS...: Open MPI's mpirun, in the background,
# starts NP ranks over the cluster's nodes, one node after the other
# (--map-by node), each as "bcsctl run --job JOB -- mpi_barrier ARGS": the
# way a site wraps its MPI jobs.  Remote nodes are reached over SSH
# (start_sshd) and MPI talks TCP on the cluster network.  Output in
# SHARE/out/mpi-LABEL.out, mpirun's exit status in SHARE/out/mpi-LABEL.rc.
# With MPI_USER=UID, mpirun and every rank run as that user (start_sshd
# with MPI_USER set first).
# With MPI_STATS=1 in the environment, "bcsctl run --job JOB --mpi-stats":
# libbcsmpi preloaded, each rank's statistics in its node's /run/bcs/mpi.
mpi_start()
{
	local label=$1 np=$2 job=$3 out=$SHARE/out/mpi-$1 n stats=()
	shift 3
	[ "${MPI_STATS:-0}" = 1 ] && stats=(--mpi-stats)

	mkdir -p "$SHARE/out"
	rm -f "$out.out" "$out.rc"
	: > "$STATE/hostfile"
	for n in $CL_NODES; do
		echo "$CL_NET.$n slots=2" >> "$STATE/hostfile"
	done
	(
		mpi_env
		if [ -n "${MPI_USER:-}" ]; then
			# mpirun, its daemons and the ranks all the user's;
			# the output goes through a pipe to a file of root's.
			export OMPI_MCA_plm_rsh_agent="ssh -F $STATE/ssh_config-$MPI_USER"
			export HOME=$STATE/home-$MPI_USER
			unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
			setpriv --reuid="$MPI_USER" --regid="$MPI_USER" \
				--clear-groups \
				mpirun -np "$np" --hostfile "$STATE/hostfile" \
				--map-by node \
				"$BCS_SRC/tools/bcsctl" run --job "$job" \
				"${stats[@]}" -- \
				"$BUILD/bench/mpi_barrier" "$@" < /dev/null 2>&1 |
				cat > "$out.out"
			echo "${PIPESTATUS[0]}" > "$out.rc"
		else
			mpirun -np "$np" --hostfile "$STATE/hostfile" \
				--map-by node \
				"$BCS_SRC/tools/bcsctl" run --job "$job" \
				"${stats[@]}" -- \
				"$BUILD/bench/mpi_barrier" "$@" > "$out.out" \
				2>&1 < /dev/null
			echo $? > "$out.rc"
		fi
	) &
	echo "$!" > "$STATE/mpirun-$label.pid"
}

# proc_threads FILE: {"tgid": threads} from /proc for every process that
# has a task in bcs, as JSON, to compare with what bcs attached.
proc_threads()
{
	bcsstat tasks --json | "$PY" -c '
import json, os, sys
out = {}
for t in json.load(sys.stdin):
    try:
        out[t["tgid"]] = len(os.listdir("/proc/%d/task" % t["tgid"]))
    except OSError:
        pass
with open(sys.argv[1], "w") as f:
    json.dump(out, f)' "$1"
}

# --- Slurm (test-slurm.sh) ---------------------------------------------------
# Its configuration is in SHARE/slurm (slurm.conf, plugstack.conf, the
# munge key); everything the daemons write goes under STATE/slurm (the
# guest's tmpfs; the host's file system is read-only here), their logs
# into BCS_OUT through the link STATE/slurm/log.
# The install test's Slurm reads /etc/slurm, as everywhere.
[ "${CL_INSTALL:-0}" = 1 ] || export SLURM_CONF=$SHARE/slurm/slurm.conf

slurm_dirs()
{
	local n
	mkdir -p "$STATE/slurm/ctld" "$STATE/slurm/spool" /run/munge
	ln -sfn "$BCS_OUT" "$STATE/slurm/log"
	# The nodes' names, for whatever part of Slurm or MPI looks them up
	# (the host's /etc/hosts, read-only here, does not know them).
	if ! grep -q " node$NODE\$" /etc/hosts; then
		{
			cat /etc/hosts
			for n in $CL_NODES; do
				echo "$CL_NET.$n node$n"
			done
		} > "$STATE/hosts" && mount --bind "$STATE/hosts" /etc/hosts
	fi
}

# start_munge: munged with the cluster's key, on the default socket.
start_munge()
{
	local p
	p=$(cat /run/munge/munged.pid 2>/dev/null) && alive "$p" && return 0
	slurm_dirs
	install -m 0600 "$SHARE/slurm/munge.key" "$STATE/slurm/munge.key"
	# -f: as root, with the key under a directory that root does not own
	# alone (tmpfs /tmp).
	munged -f --key-file="$STATE/slurm/munge.key" \
		--log-file="$BCS_OUT/munged.log" \
		--seed-file="$STATE/slurm/munged.seed" --num-threads=2 ||
		return 1
	wait_for 15 test -S /run/munge/munge.socket.2 &&
		munge -n | unmunge > /dev/null
}

# start_slurm DAEMON...: slurmctld, slurmd, in the background (-D), their
# pids in STATE/slurm/DAEMON.pid.
start_slurm()
{
	local d p
	slurm_dirs
	for d in "$@"; do
		p=$(cat "$STATE/slurm/$d.pid" 2>/dev/null) && alive "$p" && continue
		"$d" -D -f "$SLURM_CONF" >> "$BCS_OUT/$d.out" 2>&1 < /dev/null &
		echo "$!" > "$STATE/slurm/$d.pid"
		nap 1
		alive "$!" || { tail -n 5 "$BCS_OUT/$d.out" "$BCS_OUT/$d.log"; return 1; }
	done
}

# slurm_start LABEL CMD ARGS...: srun or sbatch --wait in the background,
# its output in SHARE/out/slurm-LABEL.out, its exit status in
# SHARE/out/slurm-LABEL.rc, with the environment Open MPI needs here.
slurm_start()
{
	local label=$1 out=$SHARE/out/slurm-$1
	shift
	mkdir -p "$SHARE/out"
	rm -f "$out.out" "$out.rc"
	(
		export OMPI_MCA_btl=self,vader,tcp
		export OMPI_MCA_btl_tcp_if_include=$CL_NET.0/24
		export OMPI_MCA_oob_tcp_if_include=$CL_NET.0/24
		export OMPI_MCA_mpi_yield_when_idle=1
		export PMIX_MCA_gds=hash
		"$@" > "$out.out" 2>&1 < /dev/null
		echo $? > "$out.rc"
	) &
	echo "$!" > "$STATE/slurm/srun-$label.pid"
}

# slurm_alloc_srun NAME NODES SRUN-ARGS...: an allocation of its own
# (salloc --no-shell -N NODES -n NODES -J NAME, given up after 300 s),
# then its step, srun --jobid -I3 SRUN-ARGS, tried again while srun
# cannot create it (at most 200 times), the allocation cancelled after;
# srun's exit status, its stderr once it is done.  For Slurm's gang
# scheduler (PreemptMode=GANG): slurmctld suspends a new job at once
# when it shares nodes with a running one, refuses to create a step of a
# suspended job (ESLURM_DISABLED) and does not tell srun when the job is
# resumed, so that a plain srun asks again only after min(300,
# SlurmctldTimeout) seconds, each time with even odds of finding its job
# suspended again.  -I3 makes srun give up after about 3 s instead.
slurm_alloc_srun()
{
	local name=$1 nodes=$2 a jid i rc=1 err=$STATE/slurm/alloc-$1.err
	shift 2
	slurm_dirs
	a=$(salloc --no-shell -I300 -N "$nodes" -n "$nodes" -J "$name" 2>&1)
	jid=$(echo "$a" | sed -n 's/.*Granted job allocation \([0-9][0-9]*\).*/\1/p')
	[ -n "$jid" ] || { echo "slurm_alloc_srun: no allocation: $a" >&2; return 1; }
	for i in $(seq 1 200); do
		srun --jobid="$jid" -I3 "$@" 2> "$err"
		rc=$?
		grep -q 'Unable to create step' "$err" || break
	done
	[ "$i" = 1 ] || echo "slurm_alloc_srun: job $jid: srun run $i times" >&2
	cat "$err" >&2
	scancel "$jid"
	return $rc
}

stop_slurm()
{
	local d p
	for d in srun-* slurmd slurmctld; do
		for p in "$STATE"/slurm/$d.pid; do
			[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
		done
	done
	p=$(cat /run/munge/munged.pid 2>/dev/null) && kill "$p" 2>/dev/null
	return 0
}

# stop_burners: end the burners start_burner started.
stop_burners()
{
	local p
	if [ -f "$STATE/burners" ]; then
		while read -r _ p; do
			kill "$p" 2>/dev/null
		done < "$STATE/burners"
		rm -f "$STATE/burners"
	fi
}

stop_all()
{
	local p
	if bcsd_pid > /dev/null; then
		kill_bcsd TERM
	fi
	stop_burners
	for p in "$STATE"/mpirun-*.pid "$STATE/dropbear.pid"; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	p=$(cat "$STATE/chronyd.pid" 2>/dev/null) && kill "$p" 2>/dev/null
	stop_slurm
	return 0
}
