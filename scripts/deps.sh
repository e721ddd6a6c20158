#!/usr/bin/env bash
# Installs what the tests need from Debian's packages, and nothing that is already there.
#   scripts/deps.sh zookeeper          ZooKeeper 3.8 (the servers zktest starts)
#   scripts/deps.sh zookeeper curator  plus Apache Curator 5.4 (interop tests, benchmarks)
#   scripts/deps.sh kazoo              kazoo 2.8 for Debian's python3 (the partition benchmarks)
#   scripts/deps.sh chromium prometheus  headless Chromium (zkr ui's browser tests), promtool (the rules' tests)
set -euo pipefail

# A file each component's package installs: the component is there if it is.
declare -A file=(
  [zookeeper]=/usr/share/java/zookeeper.jar
  [curator]=/usr/share/java/curator-recipes.jar
  [curator-discovery]=/usr/share/java/curator-x-discovery.jar
  [kazoo]=/usr/lib/python3/dist-packages/kazoo/recipe/partitioner.py
  [chromium]=/usr/bin/chromium
  [prometheus]=/usr/bin/promtool
)
declare -A pkg=(
  [zookeeper]=zookeeper
  [curator]=libcurator-recipes-java
  [curator-discovery]=libcurator-discovery-java
  [kazoo]=python3-kazoo
  [chromium]=chromium
  [prometheus]=prometheus
)

missing=()
for want in "$@"; do
  [[ -n "${file[$want]:-}" ]] || { echo "deps: unknown component '$want'" >&2; exit 2; }
  [[ -f "${file[$want]}" ]] || missing+=("${pkg[$want]}")
done
command -v java >/dev/null || missing+=(default-jre-headless)
# The Curator peer is compiled here, so Curator comes with a compiler.
if [[ " $* " == *" curator "* ]] && ! command -v javac >/dev/null; then
  missing+=(default-jdk-headless)
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run as root: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
