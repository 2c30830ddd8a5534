#!/usr/bin/env bash
# Rehearses steps 1 and 4 of the release gate (spec page-classification 9)
# for real against a local registry on loopback (Debian's docker-registry):
#   1. push the image tagged sha-<short> only, make its SBOM (syft), sign the
#      digest and attest the SBOM with a key pair (cosign), verify both;
#   4. apply the version tag and latest to the same digest (crane) and check
#      that all three tags name one digest and the signature still verifies.
# Steps 2 and 3 (vulnerability scans) need databases from the network and run
# only on the code host. The tags come from cmd/release-tags for the tag
# v<VERSION> on HEAD, as in .github/workflows/release.yml.
#
# There is no Docker engine here, so the image is a stand-in built with crane:
# one layer holding the statically linked healthcheck command.
#
# Usage: test/release/rehearse.sh TOOLS_DIR   (crane, cosign, syft in it)
set -euo pipefail
tools=$(cd "$1" && pwd)
export PATH="$tools:$PATH"
cd "$(dirname "$0")/../.."
for t in crane cosign syft docker-registry; do command -v "$t" >/dev/null || { echo "rehearse: $t not found" >&2; exit 1; }; done

work=$(mktemp -d)
reg_pid=""
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
reg="127.0.0.1:$port"
cat >"$work/registry.yml" <<CONF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $work/storage
http:
  addr: $reg
CONF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 50); do curl -fsS "http://$reg/v2/" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://$reg/v2/" >/dev/null
echo "registry: docker-registry $(docker-registry --version 2>/dev/null | awk '{print $NF}') on $reg"

version=$(cat VERSION)
plan=$(go run ./cmd/release-tags --event push --ref "refs/tags/v$version" --sha "$(git rev-parse HEAD)" --image "$reg/archivekit/translate")
get() { printf '%s\n' "$plan" | sed -n "s/^$1=//p"; }
build_ref=$(get build_ref)
promote_tags=$(get promote_tags)
image="$reg/archivekit/translate"
echo "plan: $(get reason); step 1 pushes $build_ref; step 4 applies: $promote_tags"

# Step 1: the image, tagged sha-<short> only.
mkdir -p "$work/layer/usr/local/bin"
CGO_ENABLED=0 go build -trimpath -o "$work/layer/usr/local/bin/healthcheck" ./cmd/healthcheck
tar -C "$work/layer" -cf "$work/layer.tar" usr
crane append --insecure --platform linux/amd64 -f "$work/layer.tar" -t "$build_ref" >/dev/null 2>&1
digest=$(crane digest --insecure "$build_ref")
echo "step 1: pushed $build_ref = $digest"
echo "step 1: tags now: $(crane ls --insecure "$image" | tr '\n' ' ')"

SYFT_REGISTRY_INSECURE_USE_HTTP=true SYFT_CHECK_FOR_APP_UPDATE=false \
  syft scan -q "registry:$image@$digest" -o "spdx-json=$work/sbom.spdx.json"
echo "step 1: SBOM by syft $(go version -m "$(command -v syft)" | awk '$1 == "mod" {print $3}'): $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d.get("packages", [])), "packages,", d["spdxVersion"])' "$work/sbom.spdx.json")"

export COSIGN_PASSWORD=rehearsal COSIGN_YES=true
(cd "$work" && cosign generate-key-pair >/dev/null 2>&1)
cosign sign -y --key "$work/cosign.key" --allow-http-registry --tlog-upload=false "$image@$digest" >/dev/null 2>&1
cosign attest -y --key "$work/cosign.key" --allow-http-registry --tlog-upload=false --type spdxjson \
  --predicate "$work/sbom.spdx.json" "$image@$digest" >/dev/null 2>&1
cosign verify --key "$work/cosign.pub" --allow-http-registry --insecure-ignore-tlog=true "$image@$digest" >/dev/null 2>&1
echo "step 1: signature verified ($(cosign version 2>/dev/null | sed -n 's/^GitVersion: *//p'))"
cosign verify-attestation --key "$work/cosign.pub" --allow-http-registry --insecure-ignore-tlog=true --type spdxjson "$image@$digest" >/dev/null 2>&1
echo "step 1: SBOM attestation verified"
if crane digest --insecure "$image:latest" >/dev/null 2>&1; then
  echo "rehearse: latest exists before the gate" >&2; exit 1
fi

# Steps 2 and 3 run on the code host only.
# Step 4: the release tags on the same digest.
for tag in $promote_tags; do
  crane tag --insecure "$image@$digest" "$tag" 2>/dev/null
done
for tag in "${build_ref##*:}" $promote_tags; do
  got=$(crane digest --insecure "$image:$tag")
  [ "$got" = "$digest" ] || { echo "rehearse: $tag is $got, not $digest" >&2; exit 1; }
done
echo "step 4: tags now: $(crane ls --insecure "$image" | grep -v '^sha256-' | tr '\n' ' ')- all $digest"
cosign verify --key "$work/cosign.pub" --allow-http-registry --insecure-ignore-tlog=true "$image:latest" >/dev/null 2>&1
echo "step 4: latest verifies with the same signature"
echo "rehearsal passed"
