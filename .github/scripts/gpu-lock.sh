# shellcheck shell=bash
# Sourced (`source .../gpu-lock.sh`) by every workflow step that measures on a GPU host:
# bench-pr.yml, bench-package.yml, nightly.yml and calibrate-package.yml. It takes the host's
# GPU lock on file descriptor 9 and holds it until the step's shell exits, so there is one
# benchmark a GPU host at a time, whichever repository or runner process of that host started
# it (a job's concurrency group holds within one repository only). The folder is made by root
# when the host is provisioned, writable by the runners' group (docs/WORKFLOWS.md, setup);
# without it, or with a link where the lock should be, the step fails here rather than measure
# beside another job or write through a link.
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
