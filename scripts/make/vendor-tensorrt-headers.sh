#!/usr/bin/env bash
# make/vendor-tensorrt-headers.sh: copy TensorRT's public headers (include/ of the NVIDIA/TensorRT
# repository, Apache-2.0) at a release tag into third_party/tensorrt/vMAJOR/, with the
# repository's LICENSE and NOTICE, the tag and commit (ORIGIN) and the SHA-256 of every file
# (SHA256SUMS), which the test command checks (internal/cgo, TestVendoredTensorRTHeaders).
#
# Usage: scripts/make/vendor-tensorrt-headers.sh REPO TAG
#
#   REPO  a clone of https://github.com/NVIDIA/TensorRT (a bare one will do)
#   TAG   a release tag, v10.16 or v11.1: its major names the folder (v10, v11); the folder is
#         replaced whole.
set -euo pipefail
die() {
	echo "vendor-tensorrt-headers: $*" >&2
	exit 2
}
[[ $# -eq 2 ]] || die "usage: $0 REPO TAG"
repo=$1 tag=$2
git -C "$repo" rev-parse --verify -q "$tag^{commit}" >/dev/null || die "$repo has no tag $tag; fetch the tags of NVIDIA/TensorRT"
major=${tag#v}
major=${major%%.*}
[[ $major =~ ^[0-9]+$ ]] || die "tag $tag does not start with vMAJOR."
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$root/third_party/tensorrt/v$major
commit=$(git -C "$repo" rev-list -n1 "$tag")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$repo" archive "$tag" include LICENSE NOTICE | tar -x -C "$tmp"
for f in $(find "$tmp/include" -type f); do
	grep -q 'SPDX-License-Identifier: Apache-2.0' "$f" || die "$tag:${f#"$tmp"/} does not say it is Apache-2.0; vendor nothing that is not"
done
rm -rf "$dest"
mkdir -p "$dest"
cp -R "$tmp/include" "$tmp/LICENSE" "$tmp/NOTICE" "$dest/"
cat >"$dest/ORIGIN" <<ORIGIN
repository https://github.com/NVIDIA/TensorRT
tag $tag
commit $commit
files include/ LICENSE NOTICE, as they are at the tag
ORIGIN
# The licence and the origin beside the headers of include/impl too, which a copy of that
# folder alone would otherwise carry without them.
if [[ -d $dest/include/impl ]]; then
	cp "$dest/LICENSE" "$dest/ORIGIN" "$dest/include/impl/"
fi
(cd "$dest" && find include LICENSE NOTICE -type f | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
echo "vendored TensorRT $tag ($commit) into ${dest#"$root"/}: $(wc -l <"$dest/SHA256SUMS") files"
