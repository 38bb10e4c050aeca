# shellcheck shell=bash
# Starts the servers the tests need on loopback and exports their endpoints:
# PostgreSQL here, the storage emulators in scripts/emulators.sh, etcd and
# Redis in scripts/kvstores.sh, MariaDB and ZooKeeper in scripts/sqlzk.sh.
# Sourced by scripts/test.sh (and usable by hand: `source scripts/services.sh`
# then `services_up`; `services_down` stops them). Installs what is missing.

# The servers' data and logs go under $FENCE_RUN_DIR: a directory made here
# unless the environment names one. services_down removes only a directory
# made here (FENCE_RUN_DIR_MADE, not exported, so a script started from
# this shell does not inherit the right to remove it).
if [ -z "${FENCE_RUN_DIR:-}" ]; then
	FENCE_RUN_DIR=$(mktemp -d /tmp/fence-run.XXXXXX)
	FENCE_RUN_DIR_MADE=$FENCE_RUN_DIR
fi
mkdir -p "$FENCE_RUN_DIR"   # a directory named by the environment may not exist yet
chmod 755 "$FENCE_RUN_DIR" # the postgres user reaches its data through it
export FENCE_RUN_DIR

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
	FENCE_PG_BIN=$bin FENCE_PG_USER=$user FENCE_PG_DATA=$dir/data FENCE_PG_PORT=$port
	export FENCE_PG_BIN FENCE_PG_USER FENCE_PG_DATA FENCE_PG_PORT
	export FENCE_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/fence?sslmode=disable"
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

services_up() { postgres_up && emulators_up && kvstores_up && sqlzk_up; }

# emulators_down finds the emulators' process groups under $FENCE_RUN_DIR, so
# it runs before the directory goes. A directory from the environment is
# left in place.
services_down() {
	sqlzk_down
	kvstores_down
	emulators_down
	postgres_down
	if [ -n "${FENCE_RUN_DIR_MADE:-}" ] && [ "$FENCE_RUN_DIR_MADE" = "$FENCE_RUN_DIR" ]; then
		rm -rf "$FENCE_RUN_DIR_MADE"
	fi
}
