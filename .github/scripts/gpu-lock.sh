# shellcheck shell=bash
# Sourced (`source .../gpu-lock.sh`) by every workflow step that measures on a GPU host:
# bench-pr.yml, bench-package.yml, nightly.yml and calibrate-package.yml. It takes the host's
# GPU lock on file descriptor 9 and holds it until the step's shell exits or lets go (below),
# so there is one benchmark a GPU host at a time, whichever repository or runner process of
# that host started it (a job's concurrency group holds within one repository only). The
# folder is made by root when the host is provisioned, writable by the runners' group
# (docs/WORKFLOWS.md, setup); without it, or with a link where the lock should be, the step
# fails here rather than measure beside another job or write through a link.
perfbot_gpu_lock=${PERFBOT_GPU_LOCK:-/var/lock/perfbot/gpu.lock}
perfbot_gpu_lock_dir=$(dirname -- "$perfbot_gpu_lock")
if [[ -L "$perfbot_gpu_lock_dir" || ! -d "$perfbot_gpu_lock_dir" ]]; then
  echo "::error::no GPU lock folder $perfbot_gpu_lock_dir: root makes it when provisioning the host (docs/WORKFLOWS.md, setup)"
  exit 1
fi
if [[ -L "$perfbot_gpu_lock" ]]; then
  echo "::error::$perfbot_gpu_lock is a symbolic link, not the GPU lock: refusing to open it"
  exit 1
fi
# Appending opens it without truncating anything; flock needs only the descriptor.
exec 9>>"$perfbot_gpu_lock"
if ! flock -n 9; then
  echo "waiting for the GPU lock $perfbot_gpu_lock (another benchmark holds this host)"
  flock 9
fi
echo "holding the GPU lock $perfbot_gpu_lock"
# A step whose GPU work is done (its last measurement) lets go before what needs no GPU (asv
# storing the last run): perfbot_gpu_release unlocks and closes the descriptor, so the next
# benchmark of the host starts beside that store. A child started in the background while the
# lock is held inherits descriptor 9, so start it with `9>&-`. A Python child inherits it too
# (its own subprocesses do not): PERFBOT_GPU_LOCK_FD and PERFBOT_GPU_LOCK say which descriptor
# and file, so it can let go itself (benchmarks/under_test/pair.py); unlocking through any
# inherited copy releases the step's lock.
export PERFBOT_GPU_LOCK_FD=9 PERFBOT_GPU_LOCK="$perfbot_gpu_lock"
perfbot_gpu_release() {
  [[ -n "${PERFBOT_GPU_LOCK_FD:-}" ]] || return 0
  flock -u 9
  exec 9>&-
  unset PERFBOT_GPU_LOCK_FD
  echo "released the GPU lock $perfbot_gpu_lock"
}
