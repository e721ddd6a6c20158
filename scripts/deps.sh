#!/usr/bin/env bash
# Installs what the tests need from Debian's packages, and nothing that is already there.
#   scripts/deps.sh zookeeper          ZooKeeper 3.8 (bookworm's, in /usr/share/java)
#   scripts/deps.sh zookeeper curator curator-discovery  plus Apache Curator 5.4 and its discovery (interop
#                                      tests, benchmarks) and a Java compiler
#   scripts/deps.sh kazoo              kazoo 2.8 for Debian's python3 (the partition benchmarks)
#   scripts/deps.sh chromium prometheus  headless Chromium (zkr ui's browser tests), promtool (the rules' tests)
#   scripts/deps.sh kerberos           MIT Kerberos's KDC, admin tools and kinit (zktest's throwaway
#                                      KDC, for the Kerberos servers' tests); no service is started
#   scripts/deps.sh forky              ZooKeeper 3.9.6 and Curator 5.7.1 from Debian forky,
#                                      unpacked (not installed) into build/deps/forky
#   scripts/deps.sh trixie             the same from Debian trixie (ZooKeeper 3.9.3, which loses
#                                      acknowledged writes: docs/servers.md) into build/deps/trixie
set -euo pipefail

# A file each component's package installs: the component is there if it is.
declare -A file=(
  [zookeeper]=/usr/share/java/zookeeper.jar
  [curator]=/usr/share/java/curator-recipes.jar
  [curator-discovery]=/usr/share/java/curator-x-discovery.jar
  [kazoo]=/usr/lib/python3/dist-packages/kazoo/recipe/partitioner.py
  [chromium]=/usr/bin/chromium
  [prometheus]=/usr/bin/promtool
  [kerberos]=/usr/sbin/krb5kdc
)
declare -A pkg=(
  [zookeeper]=zookeeper
  [curator]=libcurator-recipes-java
  [curator-discovery]=libcurator-discovery-java
  [kazoo]=python3-kazoo
  [chromium]=chromium
  [prometheus]=prometheus
  [kerberos]="krb5-kdc krb5-admin-server krb5-user"
)

# The Debian suites whose packages are unpacked, not installed, into build/deps/<suite>:
# ZooKeeper's and Curator's jars, and any library those jars' manifests name that
# bookworm has too old or not at all. For both that is none so far: bookworm's
# commons-cli/io, Jackson 2.14, Jetty 9.4, metrics 3.2.6, Netty 4.1.48, slf4j 1.7.32,
# snappy-java and Guava 31.1 resolve every class, method and field that ZooKeeper
# 3.9.6's and Curator 5.7.1's jars reference outside themselves, checked against their
# class files, but jline's (the manifests name /usr/share/java/jline.jar, which only
# ZooKeeper's own CLI uses, and nothing installs on bookworm either).
zk_packages="libzookeeper-java libcurator-client-java libcurator-framework-java libcurator-recipes-java
  libcurator-discovery-java"
declare -A suite=([forky]=$zk_packages [trixie]=$zk_packages)

missing=()
suites=()
for want in "$@"; do
  if [[ -n "${suite[$want]:-}" ]]; then suites+=("$want"); continue; fi
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

[[ ${#suites[@]} -gt 0 ]] || exit 0

# ZooKeeper 3.9 and Curator 5.7 come from newer Debian suites; this machine is bookworm,
# whose Java runs their jars (Java 8 class files). They are fetched through an apt
# configuration of our own (sources, lists and cache under $work), so /etc/apt and the
# system's packages are left as they are, and unpacked with dpkg -x. Everything appears
# at once: the directory is built beside its final place and renamed, and the stamp is
# written last, so an interrupted run is never taken for a finished one.
root_dir=$(cd "$(dirname "$0")/.." && pwd)
deps_dir=${ZKTEST_DEPS:-$root_dir/build/deps}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# The Debian mirror this machine already uses: the URI that serves its own release's
# main suite, from a deb822 .sources file or a one-line sources.list. DEBIAN_MIRROR
# overrides it.
find_mirror() {
  local mirror=${DEBIAN_MIRROR:-} codename
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
  echo "$mirror"
}

# unpack SUITE fetches the suite's packages and unpacks them into $deps_dir/SUITE. It
# runs in a subshell of its own, so that its clean-up trap is its own.
unpack() (
  local name=$1 dest=$deps_dir/$1 packages mirror work jars
  read -rd '' -a packages <<<"${suite[$name]}" || true
  [[ -f $dest/stamp ]] && exit 0

  fail() { echo "deps: $name: $*" >&2; exit 1; }
  command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
    fail "apt-get and dpkg are needed (a Debian machine) to fetch ${packages[*]}"
  [[ -f $keyring ]] || fail "$keyring is missing (apt-get install debian-archive-keyring)"
  mirror=$(find_mirror)
  [[ -n $mirror ]] || fail "no Debian mirror found in /etc/apt; set DEBIAN_MIRROR=http://<mirror>/debian"

  work=$dest.partial
  rm -rf "$work"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/debs" "$work/root"
  echo "deb [signed-by=$keyring] $mirror $name main" >"$work/apt/sources.list"
  local apt_opts=(-q -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
    -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
  # apt drops root to its _apt user for downloads, which may not enter this directory.
  [[ $(id -u) -ne 0 ]] || apt_opts+=(-o APT::Sandbox::User=root)

  echo "deps: fetching ${packages[*]} from $mirror $name into $dest"
  apt-get "${apt_opts[@]}" --error-on=any update >"$work/apt.log" 2>&1 ||
    fail "apt-get update of $mirror $name failed:$(echo; tail -n5 "$work/apt.log")"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download "${packages[@]/%//$name}") >>"$work/apt.log" 2>&1 ||
    fail "apt-get download failed:$(echo; tail -n5 "$work/apt.log")"
  for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
  jars=$work/root/usr/share/java
  compgen -G "$jars/zookeeper-3.9.*.jar" >/dev/null && compgen -G "$jars/curator-recipes-5.*.jar" >/dev/null ||
    fail "the packages hold no zookeeper-3.9 or curator-recipes jar ($name moved on?)"

  rm -rf "$dest"
  mkdir -p "$dest"
  mv "$work/root" "$dest/root"
  (cd "$work/debs" && ls *.deb) >"$dest/stamp"
  echo "deps: $(cd "$dest/root/usr/share/java" && ls zookeeper-3*.jar curator-recipes-*.jar | tr '\n' ' ')in $dest"
)

for name in "${suites[@]}"; do unpack "$name"; done
