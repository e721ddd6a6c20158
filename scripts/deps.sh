#!/usr/bin/env bash
# Installs what the tests need from Debian's packages, and nothing that is already there.
#   scripts/deps.sh zookeeper          ZooKeeper 3.8 (bookworm's, in /usr/share/java)
#   scripts/deps.sh zookeeper curator curator-discovery  plus Apache Curator 5.4 and its discovery (interop
#                                      tests, benchmarks) and a Java compiler
#   scripts/deps.sh kazoo              kazoo 2.8 for Debian's python3 (the partition benchmarks)
#   scripts/deps.sh chromium prometheus  headless Chromium (zkr ui's browser tests), promtool (the rules' tests)
#   scripts/deps.sh trixie             ZooKeeper 3.9 and Curator 5.7 from Debian trixie,
#                                      unpacked (not installed) into build/deps/trixie
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
trixie=no
for want in "$@"; do
  if [[ $want == trixie ]]; then trixie=yes; continue; fi
  [[ -n "${file[$want]:-}" ]] || { echo "deps: unknown component '$want'" >&2; exit 2; }
  [[ -f "${file[$want]}" ]] && continue
  read -ra more <<<"${pkg[$want]}"
  missing+=("${more[@]}")
done
command -v java >/dev/null || missing+=(default-jre-headless)
# The Curator peer is compiled here, so Curator comes with a compiler.
if [[ " $* " == *" curator "* ]] && ! command -v javac >/dev/null; then
  missing+=(default-jdk-headless)
fi

if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: run as root: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[[ $trixie == yes ]] || exit 0

# ZooKeeper 3.9 and Curator 5.7 are trixie's; this machine is bookworm, whose Java runs
# their jars. They are fetched through an apt configuration of our own (sources, lists
# and cache under $work), so /etc/apt and the system's packages are left as they are, and
# unpacked with dpkg -x. Everything appears at once: the directory is built beside its
# final place and renamed, and the stamp is written last, so an interrupted run is never
# taken for a finished one.
root_dir=$(cd "$(dirname "$0")/.." && pwd)
deps_dir=${ZKTEST_DEPS:-$root_dir/build/deps}
dest=$deps_dir/trixie
packages=(libzookeeper-java libcurator-client-java libcurator-framework-java
  libcurator-recipes-java libcurator-discovery-java)
[[ -f $dest/stamp ]] && exit 0

fail() { echo "deps: trixie: $*" >&2; exit 1; }
command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
  fail "apt-get and dpkg are needed (a Debian machine) to fetch ${packages[*]}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -f $keyring ]] || fail "$keyring is missing (apt-get install debian-archive-keyring)"

# The Debian mirror this machine already uses: the URI that serves its own release's
# main suite, from a deb822 .sources file or a one-line sources.list. DEBIAN_MIRROR
# overrides it.
mirror=${DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v want="$codename" '
    /^[[:space:]]*$/ { if (uri != "" && hit) { print uri; exit } uri = ""; hit = 0; next }
    /^URIs:/ { uri = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want) hit = 1 }
    END { if (uri != "" && hit) print uri }' | head -n1)
  if [[ -z $mirror ]]; then
    mirror=$(sed -E 's/\[[^]]*\]//' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk -v want="$codename" '$1 == "deb" && $3 == want { print $2; exit }')
  fi
fi
[[ -n $mirror ]] || fail "no Debian mirror found in /etc/apt; set DEBIAN_MIRROR=http://<mirror>/debian"

work=$dest.partial
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/debs" "$work/root"
echo "deb [signed-by=$keyring] $mirror trixie main" >"$work/apt/sources.list"
apt_opts=(-q -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
  -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
  -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
  -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
# apt drops root to its _apt user for downloads, which may not enter this directory.
[[ $(id -u) -ne 0 ]] || apt_opts+=(-o APT::Sandbox::User=root)

echo "deps: fetching ${packages[*]} from $mirror trixie into $dest"
apt-get "${apt_opts[@]}" --error-on=any update >"$work/apt.log" 2>&1 ||
  fail "apt-get update of $mirror trixie failed:$(echo; tail -n5 "$work/apt.log")"
(cd "$work/debs" && apt-get "${apt_opts[@]}" download "${packages[@]/%//trixie}") >>"$work/apt.log" 2>&1 ||
  fail "apt-get download failed:$(echo; tail -n5 "$work/apt.log")"
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
jars=$work/root/usr/share/java
compgen -G "$jars/zookeeper-3.9.*.jar" >/dev/null && compgen -G "$jars/curator-recipes-5.*.jar" >/dev/null ||
  fail "the packages hold no zookeeper-3.9 or curator-recipes jar (trixie moved on?)"

rm -rf "$dest"
mkdir -p "$dest"
mv "$work/root" "$dest/root"
(cd "$work/debs" && ls *.deb) >"$dest/stamp"
echo "deps: $(cd "$dest/root/usr/share/java" && ls zookeeper-3*.jar curator-recipes-*.jar | tr '\n' ' ')in $dest"
