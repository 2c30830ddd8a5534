#!/usr/bin/env bash
# Builds the one-node cluster's components of make k8s-e2e from the Go module
# proxy: etcd (tools/k8s/etcd) and kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy and kubectl (tools/k8s/kube, a wrapper
# module that requires k8s.io/kubernetes and points each staging module at its
# published version). The binaries land in $1 (a directory keyed by the
# wrapper modules and the Go version, see the Makefile); a complete directory
# is reused as it is, an incomplete one is rebuilt, so an interrupted build
# never leaves a half set behind.
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-go}

kube_version=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/kube/go.mod")
etcd_version=$(sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 \(v[0-9.]*\).*$/\1/p' "$here/etcd/go.mod")
[[ -n $kube_version && -n $etcd_version ]] || { echo "build.sh: cannot read the versions from $here/*/go.mod" >&2; exit 1; }

if [[ -f $out/.complete ]]; then
  exit 0
fi
tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/bin"
trap 'rm -rf "$tmp"' EXIT

start=$SECONDS
minor=${kube_version#v1.}; minor=${minor%%.*}
kube_ld="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ld+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  kube_ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
echo "build.sh: Kubernetes $kube_version and etcd $etcd_version into $out (cold: 10-20 minutes)" >&2
(cd "$here/kube" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$kube_ld" -o "$tmp/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl)
# The kubelet links cgo-free too (cadvisor's optional libpfm is off by default).
(cd "$here/kube" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$kube_ld" -o "$tmp/bin/kubelet" k8s.io/kubernetes/cmd/kubelet)
(cd "$here/etcd" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$tmp/bin/etcd" go.etcd.io/etcd/server/v3)
printf 'kubernetes %s\netcd %s\ngo %s\nbuild_seconds %d\n' "$kube_version" "$etcd_version" \
  "$("$GO" env GOVERSION)" $((SECONDS - start)) > "$tmp/VERSIONS"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "build.sh: built in $((SECONDS - start)) s" >&2
