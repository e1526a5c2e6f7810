#!/usr/bin/env bash
# The Slurm scripts of `trtbuild matrix emit slurm`, submitted as emitted to a real Slurm:
# a single-node cluster from Debian's packages (slurmctld, slurmd and munge on localhost, no
# cgroups: proctrack/linuxproc, task/none, no accounting database), with two fake GPUs as
# GRES backed by plain files. This script starts that cluster in a folder of its own (its own
# munge key and socket, its own ports; nothing of a Slurm or munge already on the machine is
# used or touched), and stops what it started when it ends. It checks:
#   1. the array of a 6-cell matrix (backend: sim in the file), submitted from another folder:
#      every task COMPLETED with exit 0, every cell built, a log per job and task;
#      `trtbuild matrix index` collects the index: 6 built;
#   2. the same script submitted again: every task COMPLETED, every cell from the engine cache;
#   3. the old script after a precision was added to the matrix: every task exits 2 ("emit
#      again"), nothing built;
#   4. scancel of a running task: the task ends as on SIGTERM (exit 143, state CANCELLED), its
#      log ends with the build's result line ("cancelled"), and no engine or temporary file
#      is left.
# States and exit codes are read with scontrol show job. Needs root (slurmd starts the tasks)
# and the packages slurm-wlm and munge (.ci/run installs them); skips with a message without.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/sbin:/sbin"

for tool in slurmctld slurmd sbatch scontrol scancel squeue munged; do
	if ! command -v "$tool" >/dev/null; then
		echo "Slurm is not installed ($tool is missing; apt-get install slurm-wlm munge): skipping the Slurm end-to-end test"
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "not root: skipping the Slurm end-to-end test (slurmd must run as root to start tasks)"
	exit 0
fi

start=$SECONDS
work="$(mktemp -d /tmp/trtbuild-slurm-e2e.XXXXXX)"
chmod 755 "$work"
started=() # pid files of the daemons this script started, in the order to stop them

fail() {
	echo "slurm-e2e: FAIL: $*" >&2
	for log in "$work"/slurm/log/*.log; do
		[ -f "$log" ] && { echo "--- $log (last lines)" >&2; tail -n 20 "$log" >&2; }
	done
	exit 1
}

stop_pid_file() {
	local file=$1 pid
	[ -f "$file" ] || return 0
	pid=$(cat "$file")
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
	local status=$?
	if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
		# Our jobs first, so that no task outlives the daemons.
		[ ${#submitted[@]} = 0 ] || scancel --quiet "${submitted[@]}" 2>/dev/null || true
		for _ in $(seq 100); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	local i
	for ((i = ${#started[@]} - 1; i >= 0; i--)); do
		stop_pid_file "${started[$i]}"
	done
	rm -rf "$work"
	exit "$status"
}
submitted=() # the jobs this script submitted
trap cleanup EXIT

# A free TCP port on localhost: nothing answers a connection to it.
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	fail "no free port found"
}

# ---- the cluster
s="$work/slurm"
mkdir -p "$s/munge" "$s/run" "$s/state" "$s/spool/trtnode" "$s/log" "$s/gpu"
chmod 700 "$s/munge"
chmod 755 "$s/run"
head -c 1024 /dev/urandom >"$s/munge/munge.key"
chmod 400 "$s/munge/munge.key"
touch "$s/gpu/l4-0" "$s/gpu/l4-1" # the fake GPUs: plain files, which gres.conf's File= takes
munged --force --key-file="$s/munge/munge.key" --socket="$s/run/munge.socket" \
	--pid-file="$s/run/munged.pid" --log-file="$s/log/munged.log" --seed-file="$s/munge/munged.seed" ||
	fail "munged did not start"
started+=("$s/run/munged.pid")

ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
cat >"$s/slurm.conf" <<EOF
ClusterName=trtbuild-e2e
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$s/run/munge.socket
CredType=cred/munge
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/run/slurmctld.pid
SlurmdPidFile=$s/run/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
GresTypes=gpu
SlurmdParameters=config_overrides
KillWait=30
MinJobAge=3600
NodeName=trtnode NodeHostname=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname) NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 Gres=gpu:l4:2 State=UNKNOWN
PartitionName=e2e Nodes=trtnode Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$s/gres.conf" <<EOF
NodeName=trtnode Name=gpu Type=l4 File=$s/gpu/l4-[0-1]
EOF
export SLURM_CONF="$s/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
started+=("$s/run/slurmctld.pid")
slurmd -f "$SLURM_CONF" -N trtnode || fail "slurmd did not start"
started+=("$s/run/slurmd.pid")
for _ in $(seq 300); do
	state=$(sinfo -h -n trtnode -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.1
done
[ "$state" = idle ] || fail "the node is not idle: ${state:-no answer}"
echo "Slurm $(sinfo -V | cut -d' ' -f2) up on localhost: node trtnode, $(scontrol show node trtnode | grep -o 'Gres=[^ ]*')"

# ---- trtbuild, at the absolute path every task runs it from
bin="$work/bin/trtbuild"
go build -o "$bin" ./cmd/trtbuild
export HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" # sbatch passes them on to the tasks
mkdir -p "$HOME"

# wait_job JOB: waits until no task of the array is pending or running.
wait_job() {
	for _ in $(seq 900); do
		[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	fail "job $1 did not end"
}

# tasks JOB: one line per task of the array, "TASK STATE EXIT", from scontrol show job.
tasks() {
	scontrol -o show job "$1" | sed -E 's/.*ArrayTaskId=([0-9]+) .*JobState=([A-Z_]+) .*ExitCode=([0-9:]+) .*/\1 \2 \3/' | sort -n
}

# expect_tasks JOB N STATE EXIT: all N tasks of JOB ended in STATE with EXIT.
expect_tasks() {
	local job=$1 n=$2 state=$3 exit=$4 got
	got=$(tasks "$job")
	echo "$got" | sed "s/^/  job $job task /"
	[ "$(echo "$got" | grep -c .)" = "$n" ] || fail "job $job has $(echo "$got" | grep -c .) tasks, want $n"
	if echo "$got" | grep -v " $state $exit\$" | grep -q .; then
		fail "job $job: not every task $state with exit $exit"
	fi
}

# submit SCRIPT: sbatch from the root folder, not the matrix folder; sets job to its id.
submit() {
	job=$(cd / && sbatch --parsable "$1") || fail "sbatch $1"
	submitted+=("$job")
}

# ---- 1. the matrix array, as emitted
m="$work/matrix"
mkdir -p "$m/models"
cp testdata/models/{convnet,dynamic_batch,external_data}.onnx testdata/models/external_data.bin "$m/models/"
cat >"$m/matrix.yaml" <<'YAML'
version: 1
models:
  - path: models/convnet.onnx
  - {name: classifier, path: models/dynamic_batch.onnx, profiles: [b8]}
  - path: models/external_data.onnx
precisions: [fp32, fp16]
profiles:
  - {name: b8, min: images:1x3x64x64, opt: images:8x3x64x64, max: images:16x3x64x64}
targets:
  - {name: l4, gpu: NVIDIA-L4, compute_capability: "8.9"}
backend: sim
build_flags: [--sim-speed, "20"]
YAML
(cd "$work" && "$bin" matrix emit slurm matrix/matrix.yaml --trtbuild "$bin" --partition e2e)
script="$m/trtbuild-l4.sbatch"

echo "== 1. sbatch $script (from /)"
submit "$script"
job1=$job
wait_job "$job1"
expect_tasks "$job1" 6 COMPLETED 0:0
for i in 0 1 2 3 4 5; do
	log="$m/logs/trtbuild-l4-${job1}_$i.jsonl"
	grep -q '"type":"result".*"status":"built"' "$log" || fail "task $i: no built result in $log"
done
"$bin" matrix index "$m/matrix.yaml" | tee "$work/index1.txt"
grep -q ': 6 cells, 6 built, 0 from the engine cache, 0 missing' "$work/index1.txt" || fail "index after the first submission"

echo "== 2. the same script again: every cell from the engine cache"
submit "$script"
job2=$job
wait_job "$job2"
expect_tasks "$job2" 6 COMPLETED 0:0
"$bin" matrix index "$m/matrix.yaml" | tee "$work/index2.txt"
grep -q ': 6 cells, 0 built, 6 from the engine cache, 0 missing' "$work/index2.txt" || fail "index after the second submission"
[ "$(ls "$m/logs" | grep -c "^trtbuild-l4-${job1}_.*\.jsonl$")" = 6 ] || fail "the first submission's logs were not kept"

echo "== 3. a precision added to the matrix, the old script submitted: refused, nothing built"
before=$(find "$m/engines" -name '*.engine' | sort)
sed -i 's/precisions: \[fp32, fp16\]/precisions: [fp32, bf16, fp16]/' "$m/matrix.yaml"
submit "$script"
job3=$job
wait_job "$job3"
expect_tasks "$job3" 6 FAILED 2:0
grep -q 'emit again' "$m/logs/trtbuild-l4-${job3}_1.err" || fail "task 1 of the old script does not say to emit again"
sed 's/^/  task 1: /' "$m/logs/trtbuild-l4-${job3}_1.err"
[ "$(find "$m/engines" -name '*.engine' | sort)" = "$before" ] || fail "the old script built something"

echo "== 4. scancel of a running task"
c="$work/cancel"
mkdir -p "$c/models"
cp testdata/models/convnet.onnx "$c/models/"
# 12 s of simulated build at speed 1: at 0.05 it would run for four minutes.
cat >"$c/matrix.yaml" <<'YAML'
version: 1
models:
  - path: models/convnet.onnx
precisions: [fp32]
targets:
  - {name: l4, gpu: NVIDIA-L4}
backend: sim
build_flags: [--sim-speed, "0.05", --no-timing-cache]
YAML
"$bin" matrix emit slurm "$c/matrix.yaml" --trtbuild "$bin" >/dev/null
submit "$c/trtbuild-l4.sbatch"
job4=$job
log="$c/logs/trtbuild-l4-${job4}_0.jsonl"
for _ in $(seq 600); do
	grep -q '"type":"phase_start"' "$log" 2>/dev/null && break
	sleep 0.1
done
grep -q '"type":"phase_start"' "$log" 2>/dev/null || fail "the task to cancel did not start building"
scancel "$job4"
wait_job "$job4"
expect_tasks "$job4" 1 CANCELLED 143:0
tail -n 1 "$log" | grep -q '"type":"result".*"status":"cancelled"' || fail "the cancelled task's log does not end with its result: $(tail -n 1 "$log")"
echo "  last line of its log: $(tail -n 1 "$log" | cut -c1-80)…"
left=$(find "$c/engines" -type f ! -name '*.report.json')
[ -z "$left" ] || fail "the cancelled task left $left"

echo "== Slurm end-to-end test passed in $((SECONDS - start)) s"
