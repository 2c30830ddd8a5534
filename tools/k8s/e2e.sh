#!/usr/bin/env bash
# make k8s-e2e: the orchestrator acceptance of page-classification spec 9 on
# a one-node Kubernetes started here (docs/deployment.md, runbook).
#
#   1. the components, built once per version (tools/k8s/build.sh) into
#      $K8S_BIN;
#   2. the project's images (make images, a prerequisite of make k8s-e2e, so
#      they are this tree's);
#   3. the cluster (tools/k8s/cluster.sh up) and the images imported into
#      its node;
#   4. the driver (test/k8se2e): rollout, healthcheck, restart under load,
#      configuration, the agent skills, Indexed Jobs, and a job of the
#      replicated translator (PostgreSQL) whose pod is killed mid-job;
#      figures in build/k8s-e2e/report.json.
#
# The cluster is torn down on every exit (success, failure, interrupt),
# and a lock keeps two runs on one machine apart (they would share the
# bridge, the ports and the state folder). On failure the step is named, and
# the pods' logs (from the driver) and the tail of each component's log
# (kubelet, containerd, API server, ...) are printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${K8S_BIN:?set by make k8s-e2e}" "${SHARED:?set by make k8s-e2e}" "${IMAGE_TAG:?set by make k8s-e2e}"
GO=${GO:-go}
PODMAN=${PODMAN:-podman}
export K8S_STATE=${K8S_STATE:-/var/lib/archivekit-k8s}
out=$repo/build/k8s-e2e
images=(localhost/archivekit/pageclass-api:"$IMAGE_TAG" localhost/archivekit/translate-api:"$IMAGE_TAG"
  localhost/archivekit/pageclass:"$IMAGE_TAG" localhost/archivekit/translate:"$IMAGE_TAG"
  localhost/archivekit/jobs-postgres:"$IMAGE_TAG")

phase=start
fail() { echo "k8s-e2e: FAILED in $phase: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || fail "needs root: the node's containerd, kubelet and kube-proxy manage mounts, network namespaces and iptables"

# Disk: the kubelet taints its node with disk-pressure when the disk holding
# its state runs short (evictionHard in cluster.sh), and pods then stay
# Pending; the images imported into the node take several GB. Refuse to
# start rather than fail 10 minutes later in the rollout.
phase="disk check"
min_free_gb=${K8S_MIN_FREE_GB:-12}
state_parent=$(dirname "$K8S_STATE")
free_gb=$(df -P -BG "$state_parent" | awk 'NR == 2 { sub("G", "", $4); print $4 }')
if [[ -n $free_gb && $free_gb -lt $min_free_gb ]]; then
  fail "$free_gb GB free on the disk of $state_parent ($(df -P "$state_parent" | awk 'NR == 2 { print $5 }') used), want at least $min_free_gb GB (K8S_MIN_FREE_GB): the node would be tainted with disk-pressure and its pods left Pending; free space first (old images: podman image prune; Go's build cache: go clean -cache)"
fi

lock=/run/lock/archivekit-k8s-e2e.lock
exec 9>"$lock"
if ! flock -n 9; then
  echo "k8s-e2e: another run holds $lock; waiting (up to 60 min)" >&2
  flock -w 3600 9 || fail "the lock $lock was not released within 60 min"
fi

t0=$SECONDS
phase="component build"
"$here/build.sh" "$K8S_BIN"
build_s=$((SECONDS - t0))

phase="images"
for img in "${images[@]}"; do
  "$PODMAN" image exists "$img" || fail "$img missing (make k8s-e2e builds it first with make images)"
done

phase="driver build"
mkdir -p "$out"
(cd "$repo" && "$GO" build -o "$out/k8se2e" ./test/k8se2e)
# pageclass-client for the skill step (orchestrator acceptance item 5).
mkdir -p "$out/bin"
(cd "$repo" && "$GO" build -o "$out/bin/" ./cmd/pageclass-client)

# A run killed before its teardown (the lock is free again) left its
# cluster: remove it first.
if [[ -e $K8S_STATE ]]; then
  echo "k8s-e2e: $K8S_STATE is left from an interrupted run; tearing it down" >&2
  "$here/cluster.sh" down
fi

status=1
rm -f "$out/failure.txt"
teardown() {
  status=$?
  trap - EXIT INT TERM
  if [[ $status != 0 && -d $K8S_STATE ]]; then
    echo "k8s-e2e: FAILED in $phase; the components' logs follow" >&2
    LINES_PER_LOG=40 "$here/cluster.sh" logs >&2 || true
  fi
  echo "k8s-e2e: teardown" >&2
  "$here/cluster.sh" down || echo "k8s-e2e: teardown reported an error (see above)" >&2
  # The failure again, last: the logs above are long, and a CI log is
  # often read from its end.
  if [[ $status != 0 ]]; then
    if [[ -s $out/failure.txt ]]; then
      echo "k8s-e2e: FAILED in $phase: $(cat "$out/failure.txt")" >&2
    else
      echo "k8s-e2e: FAILED in $phase (exit $status)" >&2
    fi
  fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

phase="cluster bring-up"
t1=$SECONDS
"$here/cluster.sh" up "$K8S_BIN/bin"
up_s=$((SECONDS - t1))
phase="image import"
t2=$SECONDS
"$here/cluster.sh" import "${images[@]}"
import_s=$((SECONDS - t2))
echo "k8s-e2e: components ${build_s}s (cached: $(tr '\n' ' ' < "$K8S_BIN/VERSIONS")), cluster up ${up_s}s, images imported ${import_s}s" >&2

phase="acceptance (test/k8se2e)"
# K8SE2E_STEPS (comma-separated step names) runs only those steps (a partial
# run, when working on one step; make k8s-e2e and .ci/run run them all).
"$out/k8se2e" -kubectl "$K8S_BIN/bin/kubectl" -kubeconfig "$K8S_STATE/kubeconfig" -repo "$repo" \
  -shared "$SHARED" -volumes "$K8S_STATE/volumes" -bin "$out/bin" -report "$out/report.json.tmp" -failure "$out/failure.txt" \
  ${K8SE2E_STEPS:+-steps "$K8SE2E_STEPS"}
python3 - "$out/report.json.tmp" "$build_s" "$up_s" "$import_s" > "$out/report.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["components_build_s"], r["cluster_up_s"], r["image_import_s"] = map(int, sys.argv[2:5])
json.dump(r, sys.stdout, indent=2, sort_keys=True)
print()
EOF
rm -f "$out/report.json.tmp"
echo "k8s-e2e: passed; figures in $out/report.json" >&2
