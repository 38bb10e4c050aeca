#!/usr/bin/env bash
# bench-compare.sh BASE [ROUNDS] [PKG...]: runs the locker benchmarks of
# revision BASE and of the working tree side by side, alternating the two
# test binaries round by round (so both see the same machine load), and
# prints the median ns/op, B/op and allocs/op of each with the ratio
# new/old. Needs the servers of scripts/test.sh (source scripts/services.sh
# and scripts/emulators.sh, or run it under scripts/test.sh's environment).
#
#   scripts/bench-compare.sh main 6 lockers/postgres lockers/memory
set -euo pipefail
base=${1:?usage: bench-compare.sh BASE [ROUNDS] [PKG...]}
rounds=${2:-6}
shift $(( $# >= 2 ? 2 : 1 ))
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(lockers/memory lockers/postgres lockers/dynamo lockers/gcs lockers/azblob)
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add -q --detach "$work/base" "$base"
for p in "${pkgs[@]}"; do
	n=${p//\//_}
	(cd "$work/base" && go test -c -o "$work/old-$n.test" "./$p")
	(cd "$repo" && go test -c -o "$work/new-$n.test" "./$p")
done
for r in $(seq "$rounds"); do
	for p in "${pkgs[@]}"; do
		n=${p//\//_}
		# Alternate which goes first, so neither always runs warm.
		if (( r % 2 )); then order="old new"; else order="new old"; fi
		for side in $order; do
			(cd "$repo/$p" && "$work/$side-$n.test" -test.run '^$' -test.bench . -test.benchmem -test.count 1) |
				awk -v side="$side" -v pkg="$p" '/^Benchmark/ {
					ns = bo = al = "-"
					for (i = 3; i <= NF; i++) {
						if ($i == "ns/op") ns = $(i - 1)
						if ($i == "B/op") bo = $(i - 1)
						if ($i == "allocs/op") al = $(i - 1)
					}
					print pkg, side, $1, ns, bo, al
				}'
		done
	done
done | awk '
	{ k = $1 " " $3; key[k] = 1; n[k, $2]++; ns[k, $2, n[k, $2]] = $4; b[k, $2] = $5; a[k, $2] = $6 }
	function median(k, s,   i, j, t, m, v) {
		m = n[k, s]; for (i = 1; i <= m; i++) v[i] = ns[k, s, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	END {
		printf "%-58s %14s %14s %7s %13s %13s\n", "benchmark", "old ns/op", "new ns/op", "new/old", "old B,allocs", "new B,allocs"
		for (k in key) {
			if (!n[k, "old"] || !n[k, "new"]) { printf "%-58s only on one side\n", k; continue }
			o = median(k, "old"); w = median(k, "new")
			printf "%-58s %14.0f %14.0f %7.3f %13s %13s\n", k, o, w, w / o, b[k, "old"] "," a[k, "old"], b[k, "new"] "," a[k, "new"]
		}
	}' | sort
