# shellcheck shell=bash
# Starts the key-value stores the etcd and Redis backends' tests need on
# loopback and exports their endpoints: one etcd member, one Redis server
# and three independent Redis masters for the suites and the shared tables,
# and the paths of the server binaries for the tests that start clusters of
# their own (an etcd cluster whose leader they kill, a Redis primary,
# replica and Sentinels, Redlock masters killed and restarted). Sourced by scripts/services.sh after
# scripts/emulators.sh, whose helpers (emu_start, emu_wait, emu_stop, ...)
# it uses; `kvstores_up` starts them, `kvstores_down` stops them.
#
# Installs what is missing: Redis from Debian's packages (redis-server and
# redis-sentinel, 7.0, BSD-licensed); etcd built from the module in
# scripts/etcd-server (etcd's own server command at the version its go.mod
# pins) into $FENCE_CACHE_DIR/bin/etcd-<version>-<go.sum hash>/, outside
# the repo, once per machine (about 90 s on 2 cores).

FENCE_ETCD_VERSION=v3.7.3 # keep in step with scripts/etcd-server/go.mod

redis_install() {
	command -v redis-server >/dev/null && command -v redis-sentinel >/dev/null && command -v redis-cli >/dev/null && return 0
	emu_log "installing Redis from Debian's packages"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-sentinel >/dev/null || return 1
	# The packages start a system-wide server on port 6379; the tests start
	# their own on free ports and need none.
	service redis-server stop >/dev/null 2>&1 || true
	service redis-sentinel stop >/dev/null 2>&1 || true
	command -v redis-server >/dev/null
}

# etcd_build prints the path of the etcd server binary, building it into
# the cache first when it is not there.
etcd_build() {
	repo_tool etcd "$FENCE_ETCD_VERSION" "$FENCE_REPO_DIR/scripts/etcd-server"
}

redis_ping() { redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG; }

# redis_start NAME starts a Redis server without persistence on a free
# port, into $emu_port.
redis_start() {
	local name=$1 dir
	dir=$(emu_dir)/$name
	mkdir -p "$dir"
	emu_start_checked "$name" "$(free_port)" "redis_ping %s" \
		redis-server --bind 127.0.0.1 --port %s --save '' --appendonly no \
		--dir "$dir" --daemonize no --protected-mode no
}

# redis_up starts the suites' server and three independent masters for the
# Redlock tests that share them (the tests that kill masters start their
# own).
redis_up() {
	local masters=() i
	svc_run_dir
	redis_install || { emu_log "Redis is not installed and could not be"; return 1; }
	redis_start redis || return 1
	svc_export FENCE_REDIS_URL="redis://127.0.0.1:$emu_port/0"
	for i in 1 2 3; do
		redis_start "redis-master$i" || return 1
		masters+=("127.0.0.1:$emu_port")
	done
	svc_export FENCE_REDIS_MASTERS="$(IFS=,; echo "${masters[*]}")"
	svc_export FENCE_REDIS_SERVER="$(command -v redis-server)" FENCE_REDIS_SENTINEL="$(command -v redis-sentinel)"
	emu_log "Redis $(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p') on ${FENCE_REDIS_URL#redis://}, masters $FENCE_REDIS_MASTERS"
}

etcd_up() {
	local bin client peer dir
	svc_run_dir
	bin=$(etcd_build) || return 1
	dir=$(emu_dir)/etcd
	rm -rf "$dir" && mkdir -p "$dir"
	peer=$(free_port)
	emu_start_on_port etcd "$(free_port)" "http://127.0.0.1:%s/health" \
		"$bin" --name fence-test --data-dir "$dir/data" --log-level warn \
		--listen-client-urls http://127.0.0.1:%s --advertise-client-urls http://127.0.0.1:%s \
		--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "fence-test=http://127.0.0.1:$peer" || return 1
	svc_export FENCE_ETCD_ENDPOINTS="127.0.0.1:$emu_port"
	svc_export FENCE_ETCD_SERVER="$bin"
	emu_log "etcd $FENCE_ETCD_VERSION on 127.0.0.1:$emu_port"
}

kvstores_up() { redis_up && etcd_up; }

kvstores_down() {
	local name
	for name in etcd redis redis-master1 redis-master2 redis-master3; do
		emu_stop "$name"
	done
}
