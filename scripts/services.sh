# shellcheck shell=bash
# Starts the servers the tests need on loopback and exports their endpoints:
# PostgreSQL here, the storage emulators in scripts/emulators.sh, etcd and
# Redis in scripts/kvstores.sh, MariaDB and ZooKeeper in scripts/sqlzk.sh,
# NATS in scripts/nats.sh, a Kubernetes API server in scripts/kube.sh.
# Sourced by scripts/test.sh, and usable by hand. Installs what is missing.
#
#	source scripts/services.sh
#	services_up     # every server: what scripts/test.sh needs
#	services_down   # stops what was started, puts the shell's variables back
#
# Or only what one package needs, each function installing what it uses:
#
#	postgres_up                  FENCE_POSTGRES_URL
#	azurite_up                   FENCE_AZURITE_*, AZURE_STORAGE_CONNECTION_STRING
#	dynalite_up                  FENCE_DYNAMO_ENDPOINT, AWS_ENDPOINT_URL_DYNAMODB, FENCE_DYNAMO_SERVER, AWS_*
#	fake_gcs_up                  FENCE_GCS_ENDPOINT, STORAGE_EMULATOR_HOST
#	minio_up                     FENCE_S3_ENDPOINT, AWS_ENDPOINT_URL_S3, FENCE_S3_SERVER, AWS_*
#	versitygw_up                 FENCE_VERSITYGW_ENDPOINT, FENCE_VERSITYGW_SERVER, AWS_*
#	ddblocal_up                  FENCE_DDBLOCAL_ENDPOINT, FENCE_DDBLOCAL_SERVER, AWS_*
#	  (= ddblocal_start, which returns at once, then ddblocal_wait)
#	redis_up                     FENCE_REDIS_URL, FENCE_REDIS_MASTERS
#	etcd_up                      FENCE_ETCD_ENDPOINTS
#	mariadb_up                   FENCE_MYSQL_DSN, FENCE_MYSQL_URL
#	zookeeper_up                 FENCE_ZK_SERVERS
#	nats_up                      FENCE_NATS_URL, FENCE_NATS_SERVER, FENCE_NATS_BIN
#	kube_up                      FENCE_KUBECONFIG, FENCE_KUBECONFIG_USER, FENCE_KUBE_SERVER
#	  (kube_build_start, which returns at once, builds kube-apiserver in
#	  the background on a cold machine; kube_up waits for it)
#	emulators_up, kvstores_up, sqlzk_up: the groups of the files above
#	  (emulators_up starts DynamoDB Local without waiting for it)
#
# then `services_down`, which stops whichever of them runs.
#
# Every variable these functions set in the caller's shell goes through
# svc_export or svc_unset, which remember the value the shell had (or that
# it had none); services_down puts each back. The functions themselves and
# the scripts' unexported FENCE_ settings stay defined.

# FENCE_SVC_SAVED maps each variable changed here to `declare -p` of its
# earlier state, or to "unset".
declare -gA FENCE_SVC_SAVED=()

svc_save() { # svc_save NAME: remember NAME's state the first time only
	[[ -v FENCE_SVC_SAVED[$1] ]] && return 0
	if declare -p "$1" >/dev/null 2>&1; then
		FENCE_SVC_SAVED[$1]=$(declare -p "$1")
	else
		FENCE_SVC_SAVED[$1]=unset
	fi
}

# svc_export NAME[=VALUE]...: export, remembering what it replaces.
svc_export() {
	local kv
	for kv in "$@"; do
		svc_save "${kv%%=*}"
		# shellcheck disable=SC2163 # the name (and value) are in $kv
		export "$kv"
	done
}

# svc_unset NAME...: unset, remembering what it removes.
svc_unset() {
	local n
	for n in "$@"; do
		svc_save "$n"
		unset "$n"
	done
}

# svc_restore puts back every variable svc_export and svc_unset changed.
svc_restore() {
	local n saved
	for n in "${!FENCE_SVC_SAVED[@]}"; do
		saved=${FENCE_SVC_SAVED[$n]}
		unset "$n"
		# declare -g: a declare run inside this function would be local.
		[ "$saved" = unset ] || eval "${saved/#declare /declare -g }"
	done
	FENCE_SVC_SAVED=()
}

# The servers' data and logs go under $FENCE_RUN_DIR: a directory made here
# unless the environment names one. services_down removes only a directory
# made here (FENCE_RUN_DIR_MADE, not exported, so a script started from
# this shell does not inherit the right to remove it). Every *_up function
# calls svc_run_dir first, so that one started after services_down gets a
# new directory.
svc_run_dir() {
	if [ -z "${FENCE_RUN_DIR:-}" ]; then
		svc_export FENCE_RUN_DIR="$(mktemp -d /tmp/fence-run.XXXXXX)"
		FENCE_RUN_DIR_MADE=$FENCE_RUN_DIR
	fi
	mkdir -p "$FENCE_RUN_DIR"   # a directory named by the environment may not exist yet
	chmod 755 "$FENCE_RUN_DIR" # the postgres user reaches its data through it
	svc_export FENCE_RUN_DIR
}
svc_run_dir

log() { printf '[services] %s\n' "$*" >&2; }

free_port() {
	python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

as_user() { # run a command as the unprivileged user when we are root
	local user=$1
	shift
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$user" -- "$@"
	else
		"$@"
	fi
}

pg_bindir() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/postgres" ] && { echo "$d"; return 0; }
	done
	return 1
}

postgres_install() {
	pg_bindir >/dev/null && return 0
	log "installing PostgreSQL from Debian's packages"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
	pg_bindir >/dev/null
}

postgres_up() {
	svc_run_dir
	postgres_install || { log "PostgreSQL is not installed and could not be"; return 1; }
	local bin user port dir
	bin=$(pg_bindir)
	user=$(id -un)
	[ "$(id -u)" = 0 ] && user=postgres
	port=$(free_port)
	dir=$FENCE_RUN_DIR/pg
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown "$user" "$dir"
	as_user "$user" "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	# fsync stays on: the lockers' cost is measured with real commits.
	as_user "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null ||
		{ cat "$dir/server.log" >&2; return 1; }
	as_user "$user" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc 'CREATE DATABASE fence' >/dev/null
	svc_export FENCE_PG_BIN="$bin" FENCE_PG_USER="$user" FENCE_PG_DATA="$dir/data" FENCE_PG_PORT="$port"
	svc_export FENCE_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/fence?sslmode=disable"
	log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

postgres_down() {
	[ -n "${FENCE_PG_DATA:-}" ] || return 0
	as_user "$FENCE_PG_USER" "$FENCE_PG_BIN/pg_ctl" -D "$FENCE_PG_DATA" -m immediate stop >/dev/null 2>&1 || true
}

# shellcheck source=scripts/emulators.sh
source "$(dirname "${BASH_SOURCE[0]}")/emulators.sh"
# shellcheck source=scripts/kvstores.sh
source "$(dirname "${BASH_SOURCE[0]}")/kvstores.sh"
# shellcheck source=scripts/sqlzk.sh
source "$(dirname "${BASH_SOURCE[0]}")/sqlzk.sh"
# shellcheck source=scripts/nats.sh
source "$(dirname "${BASH_SOURCE[0]}")/nats.sh"
# shellcheck source=scripts/kube.sh
source "$(dirname "${BASH_SOURCE[0]}")/kube.sh"

# The kube-apiserver build (about 10 minutes cold) starts first, in the
# background, and kube_up waits for it last.
services_up() {
	svc_run_dir && kube_build_start && postgres_up && emulators_up && kvstores_up && sqlzk_up && nats_up && kube_up
}

# emulators_down finds the emulators' process groups under $FENCE_RUN_DIR, so
# it runs before the directory goes. A directory from the environment is
# left in place. Then every variable the scripts changed is put back.
services_down() {
	kube_down
	nats_down
	sqlzk_down
	kvstores_down
	emulators_down
	postgres_down
	if [ -n "${FENCE_RUN_DIR_MADE:-}" ] && [ "$FENCE_RUN_DIR_MADE" = "$FENCE_RUN_DIR" ]; then
		rm -rf "$FENCE_RUN_DIR_MADE"
	fi
	unset FENCE_RUN_DIR_MADE
	svc_restore
}
