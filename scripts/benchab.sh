#!/bin/bash
# benchab.sh OLD NEW PKG BENCH [ROUNDS] [BENCHTIME]
#
# Compares one benchmark at two revisions side by side: builds PKG's test
# binary at OLD and at NEW (git revisions, in temporary worktrees), then
# runs the two alternately ROUNDS times (default 6), so that the machine's
# drift falls on both, and prints each benchmark's median ns/op at each
# revision and the median and range of the per-round ratio NEW/OLD.
# Servers the benchmark needs must be up (source scripts/services.sh &&
# services_up). Example:
#
#   scripts/benchab.sh 06f70cb HEAD ./lockers/memory 'AcquireRelease/(portable|handle)$'
set -euo pipefail
old=$1 new=$2 pkg=$3 bench=$4 rounds=${5:-6} benchtime=${6:-1s}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true; git -C "$root" worktree remove --force "$work/new" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
for v in old new; do
	git -C "$root" worktree add -q --detach "$work/$v" "${!v}"
	(cd "$work/$v" && go test -c -o "$work/$v.test" "$pkg")
done
dir=$root/$pkg
for i in $(seq "$rounds"); do
	for v in old new; do
		echo "== $v $i"
		(cd "$dir" && "$work/$v.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime") | grep '^Benchmark' || true
	done
done | awk '
/^== / { v = $2; r = $3; next }
{ name = $1; sub(/-[0-9]+$/, "", name); for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") t[name, v, r] = $i; names[name] = 1; rs[r] = 1 }
function median(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j+1] = a[j]; a[j+1] = x } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
END {
	for (name in names) {
		n = 0; lo = 1e18; hi = 0; delete o; delete w; delete q
		for (r in rs) if ((name, "old", r) in t && (name, "new", r) in t) {
			n++; o[n] = t[name, "old", r]; w[n] = t[name, "new", r]; q[n] = w[n] / o[n]
			if (q[n] < lo) lo = q[n]; if (q[n] > hi) hi = q[n]
		}
		if (n) printf "%-50s old %10.0f ns/op  new %10.0f ns/op  new/old %.2f [%.2f-%.2f] (%d rounds)\n", name, median(o, n), median(w, n), median(q, n), lo, hi, n
	}
}'
