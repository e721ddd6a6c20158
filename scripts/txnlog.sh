#!/usr/bin/env bash
# Reads what a chaos run or soak kept (make chaos/soak: a directory of its own under
# build/chaos-keep; -chaos.keep) with ZooKeeper's own tools, and reports the writes the
# servers acknowledged that are missing from each server's surviving history, with the
# faults before them.
#   scripts/txnlog.sh [DIR]     DIR defaults to the newest run under build/chaos-keep
#
# DIR holds server1..3 (each one's data/version-2 with its snapshots and transaction
# logs), acked.tsv (every write the witness saw acknowledged: times, zxid, version,
# data), faults.log (the fault schedule as it happened, with times) and
# zookeeper-version. Each server's logs are dumped with
# org.apache.zookeeper.server.persistence.TxnLogToolkit of the version that wrote them
# into DIR/serverN/txnlog.txt. An acknowledged write is in a server's history when a
# transaction there has its zxid and sets the node to its data.
set -euo pipefail

dir=${1:-$(ls -d build/chaos-keep/*/ 2>/dev/null | sort | tail -1)}
dir=${dir%/}
here=$(cd "$(dirname "$0")/.." && pwd)
[[ -f $dir/acked.tsv && -f $dir/zookeeper-version ]] || { echo "txnlog: $dir holds no kept run (acked.tsv, zookeeper-version)" >&2; exit 2; }
version=$(<"$dir/zookeeper-version")

# The jars of the version that wrote the logs, jute first: forky's and trixie's jars name
# bookworm's zookeeper-jute.jar in their manifests (docs/servers.md).
cp=
for jars in "$here"/build/deps/*/root/usr/share/java /usr/share/java; do
  if [[ -f $jars/zookeeper-jute-$version.jar && -f $jars/zookeeper-$version.jar ]]; then
    cp=$jars/zookeeper-jute-$version.jar:$jars/zookeeper-$version.jar
    break
  fi
done
[[ -n $cp ]] || { echo "txnlog: no jars of ZooKeeper $version (make deps)" >&2; exit 2; }

servers=() logs=() snaps=
for s in "$dir"/server*/; do
  s=${s%/}
  servers+=("$(basename "$s")")
  out=$s/txnlog.txt
  logs+=("$out")
  snaps+=" $(basename "$s"):$(cd "$s/data/version-2" && ls snapshot.* | sed 's/snapshot\.//' | tr '\n' ',')"
  if [[ ! -s $out ]]; then
    # In zxid order: a log file is named after its first zxid, in hexadecimal.
    for f in "$s"/data/version-2/log.*; do
      printf '%d %s\n' "0x${f##*.}" "$f"
    done | sort -n | while read -r _ f; do
      # A server killed while it wrote a transaction leaves it partial at the end of
      # its log; the toolkit prints the whole ones, says so and fails. That is the
      # kill, not a damaged record: go on, and count it.
      if ! java -cp "$cp" org.apache.zookeeper.server.persistence.TxnLogToolkit "$f" 2>"$s/txnlog.err.one"; then
        if [[ $(tail -1 "$s/txnlog.err.one") != "Last transaction was partial." ]]; then
          cat "$s/txnlog.err.one" >&2
          exit 1
        fi
        echo "$f" >>"$s/partial.txt"
      fi
      cat "$s/txnlog.err.one" >>"$s/txnlog.err"
    done >"$out.tmp"
    rm -f "$s/txnlog.err.one"
    mv "$out.tmp" "$out"
  fi
  echo "$(basename "$s"): $(grep -ac ' zxid 0x' "$out") transactions in $(ls "$s"/data/version-2/log.* | wc -l) logs" \
    "(epochs $(grep -ao ' zxid 0x[0-9a-f]*' "$out" | awk '{e[substr($2, 1, length($2)-8)]=1} END {n=0; for (k in e) n++; print n}'))," \
    "snapshots: $(cd "$s/data/version-2" && ls snapshot.* | tr '\n' ' ')" \
    "$([[ -s $s/partial.txt ]] && echo "; $(wc -l <"$s/partial.txt") logs end in a partial transaction (killed while writing)")"
done

# One awk reads every server's history (the zxid and the data of each witness write),
# then the acknowledged writes, then the fault log.
awk -v servers="${servers[*]}" -v snaps="$snaps" -v node="$(awk -F'\t' 'NR==2 {print $3}' "$dir/acked.tsv")" '
  function epoch(z) { return substr(z, 1, length(z) - 8) }
  function num(z,   n, i) { n = 0; z = tolower(z); sub(/^0x/, "", z); for (i = 1; i <= length(z); i++) n = n * 16 + index("0123456789abcdef", substr(z, i, 1)) - 1; return n }
  BEGIN {
    ns = split(servers, name, " ")
    m = split(snaps, s, " ")
    for (i = 1; i <= m; i++) { split(s[i], kv, ":"); snapOf[kv[1]] = kv[2] }
  }
  FNR == 1 { file++ }
  file <= ns {
    if (match($0, / zxid 0x[0-9a-f]+ /)) {
      z = substr($0, RSTART + 6, RLENGTH - 7)
      e = epoch(z)
      if (!((file, e) in last) || length(z) > length(last[file, e]) || z > last[file, e]) last[file, e] = z
      if (index($0, "setData " node ",")) {
        rest = substr($0, index($0, "setData " node ",") + length(node) + 9)
        sub(/,[0-9]+$/, "", rest)
        has[file, z] = rest
      }
    }
    next
  }
  file == ns + 1 {
    if (/^#/) next
    split($0, f, "\t")   # called, acknowledged, node, client, zxid, version, data
    acked++
    gone = ""
    k = 0
    for (i = 1; i <= ns; i++) if (has[i, f[5]] != f[7]) {
      gone = gone " " name[i]; missing[i]++; k++
    }
    if (k == ns) everywhere++
    if (gone != "") {
      if (gone != prevGone || !open) { ep++; first[ep] = $0; who[ep] = gone }
      lastOf[ep] = $0; count[ep]++; open = 1
    } else open = 0
    prevGone = gone
    next
  }
  { faults[++nf] = $0 }
  END {
    printf "acknowledged writes to %s: %d\n", node, acked
    for (i = 1; i <= ns; i++) printf "  missing from %s'"'"'s logs: %d\n", name[i], missing[i] + 0
    printf "  missing from every server'"'"'s logs: %d\n", everywhere + 0
    printf "(a server synced by a snapshot (SNAP) has the writes before it in the snapshot, not in its\n logs: see its snapshots below; a write missing from every server'"'"'s logs is gone)\n"
    for (k = 1; k <= ep; k++) {
      split(first[k], a, "\t"); split(lastOf[k], b, "\t")
      printf "\ngap %d: %d acknowledged writes missing from the logs of%s\n", k, count[k], who[k]
      printf "  first: %s zxid %s version %s (%s), acknowledged at %s\n", a[7], a[5], a[6], a[4], a[2]
      printf "  last:  %s zxid %s version %s (%s), acknowledged at %s\n", b[7], b[5], b[6], b[4], b[2]
      e = epoch(a[5])
      for (i = 1; i <= ns; i++) {
        later = ""
        n = split(snapOf[name[i]], sz, ",")
        for (j = 1; j <= n; j++) if (sz[j] != "" && num(sz[j]) >= num(b[5])) later = later " snapshot." sz[j]
        printf "  %s: epoch %s ends at %s in its logs; snapshots from the last on:%s\n", name[i], e, ((i, e) in last) ? last[i, e] : "(none)", later == "" ? " none" : later
      }
      # The faults of the 30 s before the first and until the last: the times
      # compare as text (one format, one zone).
      from = a[2]; cmd = "date -u -d \"" a[2] " - 30 seconds\" +%Y-%m-%dT%H:%M:%S"; cmd | getline from; close(cmd)
      printf "  faults from 30 s before the first to the last:\n"
      for (j = 1; j <= nf; j++) if (substr(faults[j], 1, 19) >= substr(from, 1, 19) && faults[j] <= b[2]) printf "    %s\n", faults[j]
    }
  }
' "${logs[@]}" "$dir/acked.tsv" "$dir/faults.log"
