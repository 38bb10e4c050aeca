# shellcheck shell=bash
# Starts the NATS server the NATS JetStream locker's tests need on loopback
# and exports its URL: one nats-server with JetStream on, its store under
# $FENCE_RUN_DIR, configured as lockers/nats tells users to
# (`sync_interval: always`: every write is on disk before it is
# acknowledged; by default JetStream syncs every two minutes and a crash
# loses acknowledged writes). It exports the server binary too
# (FENCE_NATS_BIN), with which tests start clusters and servers of their
# own. Sourced by scripts/services.sh after scripts/emulators.sh, whose
# helpers (go_tool, emu_start_checked, emu_stop, ...) it uses; `nats_up`
# starts it, `nats_down` stops it.
#
# Installs what is missing: nats-server built with `go install` from the
# module proxy into $FENCE_CACHE_DIR/bin/nats-server-<version>/, outside
# the repo, once per machine (about 80 s on 2 cores).

FENCE_NATS_VERSION=v2.15.3

# nats_build prints the path of the nats-server binary, building it first
# when it is not in the cache.
nats_build() { go_tool nats-server github.com/nats-io/nats-server/v2 "$FENCE_NATS_VERSION"; }

# nats_config DIR writes DIR/nats.conf: JetStream with its store in
# DIR/store, synced on every write.
nats_config() {
	local dir=$1
	mkdir -p "$dir/store"
	cat >"$dir/nats.conf" <<EOF
jetstream {
	store_dir: "$dir/store"
	sync_interval: always
}
EOF
}

# nats_up starts the server on a free client port, with its monitoring
# port (for the health check) on another.
nats_up() {
	local bin dir mon
	svc_run_dir
	bin=$(nats_build) || return 1
	dir=$(emu_dir)/nats
	rm -rf "$dir" && mkdir -p "$dir"
	nats_config "$dir"
	mon=$(free_port)
	emu_start_checked nats "$(free_port)" "http_ok http://127.0.0.1:$mon/healthz?js-enabled-only=true" \
		"$bin" -c "$dir/nats.conf" -a 127.0.0.1 -p %s -m "$mon" -n fence-test || return 1
	svc_export FENCE_NATS_URL="nats://127.0.0.1:$emu_port"
	svc_export FENCE_NATS_SERVER="nats-server $FENCE_NATS_VERSION"
	svc_export FENCE_NATS_BIN="$bin"
	emu_log "nats-server $FENCE_NATS_VERSION (JetStream, sync always) on 127.0.0.1:$emu_port"
}

nats_down() { emu_stop nats; }
