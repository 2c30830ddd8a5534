#!/usr/bin/env bash
# A one-node Kubernetes on this machine for make k8s-e2e, and its teardown.
#
#   cluster.sh up BIN_DIR   start etcd, kube-apiserver, kube-controller-manager,
#                           kube-scheduler, containerd (Debian, with runc and the
#                           CNI bridge and host-local plugins), kubelet and
#                           kube-proxy; wait until the node is Ready
#   cluster.sh import IMAGE...  copy podman images into the node (podman save |
#                           ctr images import)
#   cluster.sh down         stop every process started by up, unmount, remove
#                           the pods' network namespaces, the bridge, the
#                           iptables chains of kube-proxy and the state folder
#   cluster.sh logs         the tail of each component's log
#
# Everything lives under $K8S_STATE (default /var/lib/archivekit-k8s): the
# certificates, the kubeconfig, etcd's data, containerd's root, the kubelet's
# root and each component's log under log/. The node's address is the
# gateway of its bridge (ak8s0, 10.244.0.1/24; the kubelet refuses a
# loopback address), Services take 10.96.0.0/24 (the pods' one route beyond
# their bridge, through the node, where kube-proxy's rules send it on to a
# Service's pods), and the API server listens on 10.244.0.1:16443, so
# nothing of the machine's own network is touched.
# Needs root. The caller holds the lock (tools/k8s/e2e.sh).
set -euo pipefail

STATE=${K8S_STATE:-/var/lib/archivekit-k8s}
BRIDGE=ak8s0
NODE_IP=10.244.0.1
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.96.0.0/24
API_PORT=16443
ETCD_PORT=23790
NODE_NAME=archivekit-node
PAUSE_IMAGE=localhost/archivekit/pause:1
SOCK=$STATE/run/containerd/containerd.sock
here=$(cd "$(dirname "$0")" && pwd)

say() { echo "cluster.sh: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }

ctr_() { ctr --address "$SOCK" -n k8s.io "$@"; }
kc() { "$BIN/kubectl" --kubeconfig "$STATE/kubeconfig" "$@"; }

# start NAME CMD...: runs CMD in the background, its output in log/NAME.log,
# its process id in pid/NAME.
start() {
  local name=$1; shift
  setsid "$@" > "$STATE/log/$name.log" 2>&1 < /dev/null &
  echo $! > "$STATE/pid/$name"
}
alive() { [[ -f $STATE/pid/$1 ]] && kill -0 "$(cat "$STATE/pid/$1")" 2>/dev/null; }

# wait_for WHAT SECONDS COMPONENT CMD...: polls CMD until it succeeds; fails
# naming WHAT with the tail of COMPONENT's log when the time is up or the
# component died.
wait_for() {
  local what=$1 secs=$2 comp=$3; shift 3
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$comp"; then tail -n 30 "$STATE/log/$comp.log" >&2; die "$comp exited while waiting for $what"; fi
    if ((SECONDS > end)); then tail -n 30 "$STATE/log/$comp.log" >&2; die "$what not reached in ${secs}s"; fi
    sleep 0.5
  done
}

certs() {
  local p=$STATE/pki
  mkdir -p "$p"
  key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
  key "$p/ca.key"
  openssl req -x509 -new -key "$p/ca.key" -subj /CN=archivekit-k8s-ca -days 2 -out "$p/ca.crt" 2>/dev/null
  # sign NAME SUBJECT [SAN]: a leaf certificate signed by the cluster's CA.
  sign() {
    key "$p/$1.key"
    openssl req -new -key "$p/$1.key" -subj "$2" -out "$p/$1.csr" 2>/dev/null
    local ext="basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth${3:+
subjectAltName=$3}"
    openssl x509 -req -in "$p/$1.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 2 \
      -extfile <(echo "$ext") -out "$p/$1.crt" 2>/dev/null
  }
  sign apiserver /CN=kube-apiserver \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost,IP:$NODE_IP,IP:10.96.0.1,IP:127.0.0.1"
  # One client identity for the components and the test driver: a member of
  # system:masters (a single-user test cluster; see docs/deployment.md, runbook, for
  # what a real cluster separates).
  sign admin "/O=system:masters/CN=archivekit-admin"
  sign kubelet "/CN=$NODE_NAME" "DNS:$NODE_NAME,IP:$NODE_IP"
  key "$p/sa.key"
  openssl pkey -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  cat > "$STATE/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: archivekit
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority: $p/ca.crt
users:
- name: admin
  user:
    client-certificate: $p/admin.crt
    client-key: $p/admin.key
contexts:
- name: archivekit
  context: {cluster: archivekit, user: admin, namespace: default}
current-context: archivekit
EOF
}

node_config() {
  mkdir -p "$STATE/cni/net.d" "$STATE/etc"
  cat > "$STATE/cni/net.d/10-archivekit.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "archivekit",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "$SVC_CIDR"}]
      }
    }
  ]
}
EOF
  # restrict_oom_score_adj: this machine denies negative OOM scores, which
  # the kubelet asks for its pods' sandboxes.
  cat > "$STATE/etc/containerd.toml" <<EOF
version = 2
root = "$STATE/containerd"
state = "$STATE/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
  # cgroupsPerQOS false and failCgroupV1 false: the cgroup v1 hierarchy of
  # this machine; evictions only at the very edge, so the test never loses a
  # pod to a full disk of another job; oomScoreAdj 0 (for kube-proxy too):
  # negative scores are denied here.
  cat > "$STATE/etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $STATE/pki/kubelet.crt
tlsPrivateKeyFile: $STATE/pki/kubelet.key
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 40
oomScoreAdj: 0
EOF
  cat > "$STATE/etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE_NAME
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$NODE_IP/32"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
oomScoreAdj: 0
EOF
}

# pause_image: a static sandbox binary (tools/k8s/pause) as a one-layer
# image, imported without any registry.
pause_image() {
  local d=$STATE/pause
  mkdir -p "$d/rootfs"
  (cd "$here/pause" && CGO_ENABLED=0 "${GO:-go}" build -trimpath -ldflags '-s -w' -o "$d/rootfs/pause" .)
  tar -C "$d/rootfs" --owner=0 --group=0 --numeric-owner -cf "$d/layer.tar" pause
  local layer cfg
  layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$(go env GOARCH)" "$layer" > "$d/config.json"
  cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
  mkdir -p "$d/archive"
  cp "$d/config.json" "$d/archive/$cfg.json"
  cp "$d/layer.tar" "$d/archive/$layer.tar"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s.tar"]}]' "$cfg" "$PAUSE_IMAGE" "$layer" > "$d/archive/manifest.json"
  tar -C "$d/archive" -cf "$d/pause.tar" .
  ctr_ images import "$d/pause.tar" >/dev/null
}

up() {
  BIN=${1:?usage: cluster.sh up BIN_DIR}
  [[ $(id -u) == 0 ]] || die "needs root (containerd, the kubelet and kube-proxy manage namespaces, mounts and iptables)"
  [[ ! -e $STATE ]] || die "$STATE exists: a cluster is up or was not torn down (cluster.sh down)"
  for t in containerd runc ctr openssl iptables setsid /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback; do
    command -v "$t" >/dev/null || [[ -x $t ]] || die "$t missing (make k8s-e2e installs containerd, runc and containernetworking-plugins)"
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && die "the bridge $BRIDGE exists already (an earlier run not torn down: cluster.sh down)"
  mkdir -p "$STATE"/{log,pid,run}
  echo "$BIN" > "$STATE/bin"
  { iptables-save; ip6tables-save; } 2>/dev/null | grep -c -- '-N KUBE-\|^:KUBE-' > "$STATE/kube-chains-before" || true
  ls /run/netns 2>/dev/null > "$STATE/netns-before" || true

  say "certificates and configuration in $STATE"
  certs
  node_config
  # The bridge first, so the kubelet can bind the node address before the
  # first pod; the CNI bridge plugin takes it over as it is.
  ip link add "$BRIDGE" type bridge
  ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up

  say "etcd"
  start etcd "$BIN/etcd" --name archivekit --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
    --initial-cluster archivekit=http://127.0.0.1:23800 --listen-metrics-urls "" --unsafe-no-fsync --log-level warn
  wait_for "etcd health" 60 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"

  say "kube-apiserver"
  local p=$STATE/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
    --service-cluster-ip-range "$SVC_CIDR" --client-ca-file "$p/ca.crt" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/admin.crt" --kubelet-client-key "$p/admin.key" \
    --kubelet-certificate-authority "$p/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$p/sa.pub" \
    --service-account-signing-key-file "$p/sa.key" --authorization-mode Node,RBAC --profiling=false
  wait_for "the API server's /readyz" 120 kube-apiserver "$BIN/kubectl" --kubeconfig "$STATE/kubeconfig" get --raw /readyz

  say "kube-controller-manager, kube-scheduler"
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$STATE/kubeconfig" \
    --authentication-kubeconfig "$STATE/kubeconfig" --authorization-kubeconfig "$STATE/kubeconfig" \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --leader-elect=false --secure-port 0 --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/kubeconfig" \
    --authentication-kubeconfig "$STATE/kubeconfig" --authorization-kubeconfig "$STATE/kubeconfig" \
    --leader-elect=false --secure-port 0 --profiling=false

  say "containerd ($(containerd --version | awk '{print $3}')), the pause image"
  mkdir -p "$STATE/run/containerd"
  start containerd containerd --config "$STATE/etc/containerd.toml"
  wait_for "containerd's socket" 60 containerd ctr --address "$SOCK" version
  pause_image

  say "kubelet, kube-proxy"
  start kubelet "$BIN/kubelet" --config "$STATE/etc/kubelet.yaml" --kubeconfig "$STATE/kubeconfig" \
    --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" --hostname-override "$NODE_NAME" \
    --node-ip "$NODE_IP" -v 1
  start kube-proxy "$BIN/kube-proxy" --config "$STATE/etc/kube-proxy.yaml"
  wait_for "node $NODE_NAME Ready" 120 kubelet kc wait --for=condition=Ready "node/$NODE_NAME" --timeout 2s
  wait_for "the default service account" 60 kube-controller-manager kc get serviceaccount default
  for c in kube-controller-manager kube-scheduler kube-proxy; do
    alive "$c" || { tail -n 30 "$STATE/log/$c.log" >&2; die "$c exited"; }
  done
  say "node $NODE_NAME Ready ($("$BIN/kubectl" version --kubeconfig "$STATE/kubeconfig" -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1))"
}

import_images() {
  local img
  for img in "$@"; do
    "${PODMAN:-podman}" image exists "$img" || die "image $img missing (make images)"
  done
  # One archive for all, so the layers they share go over once.
  "${PODMAN:-podman}" save --multi-image-archive "$@" | ctr_ images import - >/dev/null || die "importing $* into the node"
}

# stop NAME: TERM, then KILL after 15 s.
stop() {
  local f=$STATE/pid/$1 pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  # Best effort to the end: one step failing must not leave the rest.
  set +e +o pipefail
  [[ -d $STATE ]] || { ip link del "$BRIDGE" 2>/dev/null || true; return 0; }
  BIN=${BIN:-$(cat "$STATE/bin" 2>/dev/null || true)}
  # The pods first, while the kubelet runs, so their sandboxes' network
  # namespaces and mounts go through the runtime.
  if alive kube-apiserver && alive kubelet && [[ -x ${BIN:-}/kubectl ]]; then
    kc delete namespace archivekit-e2e --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kc delete pods --all-namespaces --all --grace-period 1 --wait=false >/dev/null 2>&1 || true
    local end=$((SECONDS + 60))
    while ((SECONDS < end)); do
      [[ -z $(ctr_ tasks ls -q 2>/dev/null) ]] && break
      sleep 1
    done
  fi
  stop kube-proxy
  if [[ -x ${BIN:-}/kube-proxy ]]; then
    "$BIN/kube-proxy" --cleanup > "$STATE/log/kube-proxy-cleanup.log" 2>&1 || true
  fi
  stop kubelet
  # What is left of the containers: killed through containerd, then the
  # shims that served them (found by this cluster's socket, never by name).
  if alive containerd; then
    local t
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$t" >/dev/null 2>&1 || true; done
    sleep 1
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks rm -f "$t" >/dev/null 2>&1 || true; done
  fi
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  stop containerd
  local f pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    [[ $(tr '\0' ' ' 2>/dev/null < "$f") == *containerd-shim*"-address $SOCK "* ]] || continue
    kill -KILL "$pid" 2>/dev/null || true
  done
  # Mounts under the state folder, deepest first.
  local m
  awk -v s="$STATE/" 'index($2, s) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  # The pods' network namespaces created since up.
  local ns
  for ns in /run/netns/cni-*; do
    [[ -e $ns ]] || continue
    ns=${ns##*/}
    grep -qx "$ns" "$STATE/netns-before" 2>/dev/null && continue
    ip netns delete "$ns" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  # The cgroups runc made for the pods (cgroupfs, cgroupsPerQOS off: under
  # k8s.io/ of each hierarchy), now empty.
  find /sys/fs/cgroup/*/k8s.io -depth -type d -exec rmdir {} + 2>/dev/null || true
  # The kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY,
  # KUBE-IPTABLES-HINT), which kube-proxy --cleanup leaves: removed when
  # there was no KUBE- chain on this machine before up.
  if [[ $(cat "$STATE/kube-chains-before" 2>/dev/null || echo 1) == 0 ]]; then
    local ipt t rule c
    for ipt in iptables ip6tables; do
      for t in filter nat mangle; do
        { "$ipt" -t "$t" -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j KUBE-' || true; } | sed 's/^-A/-D/' | while read -r rule; do
          eval "$ipt -t $t $rule" 2>/dev/null || true
        done
        for c in $("$ipt" -t "$t" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}'); do "$ipt" -t "$t" -F "$c" 2>/dev/null || true; done
        for c in $("$ipt" -t "$t" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}'); do "$ipt" -t "$t" -X "$c" 2>/dev/null || true; done
      done
    done
  fi
  # Never across a mount that is still there (a pod's bind mount of a host
  # folder): what is under it is not the cluster's to remove.
  rm -rf --one-file-system "$STATE" || say "warning: $STATE not removed whole (a mount under it still busy?); cluster.sh down again removes it"
  local left
  left=$({ iptables-save; ip6tables-save; } 2>/dev/null | grep -c 'KUBE-' || true)
  [[ $left == 0 ]] || say "warning: $left iptables lines with KUBE- remain"
  say "torn down"
}

logs() {
  local f
  for f in "$STATE"/log/*.log; do
    [[ -f $f ]] || continue
    echo "----- $(basename "$f") (last ${LINES_PER_LOG:-25} lines)"
    tail -n "${LINES_PER_LOG:-25}" "$f"
  done
}

cmd=${1:-}
shift || true
case $cmd in
up) up "$@" ;;
import) import_images "$@" ;;
down) down ;;
logs) logs ;;
*) echo "usage: cluster.sh up BIN_DIR | import IMAGE... | down | logs" >&2; exit 2 ;;
esac
