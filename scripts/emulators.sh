# shellcheck shell=bash
# Starts the storage emulators the cloud backends' tests need on loopback and
# exports their endpoints: Azurite (Azure Blob), dynalite (DynamoDB),
# fake-gcs-server (Google Cloud Storage), MinIO (S3), versitygw (a second
# S3 server, on which scripts/test.sh runs the S3 packages again) and
# DynamoDB Local (a second DynamoDB server, with transactions, on which it
# runs the DynamoDB packages again). It
# exports their programs too (FENCE_NODE and FENCE_DYNALITE_JS,
# FENCE_AZURITE_BIN, FENCE_FAKE_GCS_BIN, FENCE_MINIO_BIN,
# FENCE_VERSITYGW_BIN), with which the torture run starts
# instances of its own, their data on disk, and restarts them. Sourced by
# scripts/services.sh after its helpers (free_port) and $FENCE_RUN_DIR are
# defined; `emulators_up` starts them all, `emulators_down` stops them.
#
# Installs what is missing: the npm packages pinned in package-lock.json go
# into the repo's node_modules (npm ci, redone when the lock file changes);
# the Go servers are built with `go install` from the module proxy into
# $FENCE_CACHE_DIR/bin/<name>-<version>/, outside the repo, so the slow MinIO
# build (about 6 minutes on 2 cores) and versitygw's (about 2) happen once
# per machine and version.

FENCE_FAKE_GCS_VERSION=v1.56.1
FENCE_MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c # main of 2026-02-12; MinIO tags no semver releases
FENCE_VERSITYGW_VERSION=v1.8.0
FENCE_CACHE_DIR=${FENCE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fence}
FENCE_EMULATOR_TIMEOUT=${FENCE_EMULATOR_TIMEOUT:-90} # seconds each emulator gets to answer
FENCE_REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The emulator account that Azurite (and Microsoft's older emulator) always
# accepts; its key is published in Azure's documentation and guards nothing.
FENCE_AZURITE_ACCOUNT=devstoreaccount1
FENCE_AZURITE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
# MinIO's root credentials, also handed to the AWS SDK for S3, dynalite
# (which accepts any signature) and DynamoDB Local (which answers
# UnrecognizedClientException to an access key id that is not letters and
# digits only, such as fence-test).
FENCE_S3_ACCESS_KEY=fencetest
FENCE_S3_SECRET_KEY=fence-test-secret

emu_log() { printf '[emulators] %s\n' "$*" >&2; }

emu_go() { # the go command, also where PATH lacks it
	if command -v go >/dev/null; then go "$@"; else /usr/local/go/bin/go "$@"; fi
}

emu_ms() { date +%s%3N; }

# npm_install runs `npm ci` when node_modules is missing or was installed
# from another package-lock.json than the one checked out.
npm_install() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		emu_log "installing Node.js and npm from Debian's packages"
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }; then
			emu_log "Node.js is not installed and could not be"
			return 1
		fi
	fi
	local stamp=$FENCE_REPO_DIR/node_modules/.fence-lock.sha256 want t0
	want=$(sha256sum "$FENCE_REPO_DIR/package-lock.json" | cut -d' ' -f1)
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
	emu_log "installing the npm packages (npm ci)"
	t0=$(emu_ms)
	# --ignore-scripts: the packages run nothing at install time that they
	# need (classic-level ships prebuilt binaries), and npm versions differ
	# on whether such scripts run at all.
	(cd "$FENCE_REPO_DIR" && npm ci --include=dev --ignore-scripts --no-audit --no-fund --loglevel=error) >&2 ||
		{ emu_log "npm ci failed"; return 1; }
	echo "$want" >"$stamp"
	emu_log "npm packages installed in $(($(emu_ms) - t0)) ms"
}

# go_tool NAME MODULE VERSION prints the path of the binary NAME built from
# MODULE@VERSION, building it into the cache first when it is not there.
go_tool() {
	local name=$1 module=$2 version=$3 dir t0
	dir=$FENCE_CACHE_DIR/bin/$name-$version
	if [ ! -x "$dir/$name" ]; then
		mkdir -p "$FENCE_CACHE_DIR/bin"
		# One build at a time per machine; the binary appears only when whole.
		(
			flock 9
			[ -x "$dir/$name" ] && exit 0
			emu_log "building $module@$version into $dir (once per machine)"
			t0=$(emu_ms)
			rm -rf "$dir.tmp"
			GOBIN=$dir.tmp GOFLAGS=-buildvcs=false emu_go install "$module@$version" >&2 || exit 1
			rm -rf "$dir" && mv "$dir.tmp" "$dir"
			emu_log "built $name in $(($(emu_ms) - t0)) ms"
		) 9>"$FENCE_CACHE_DIR/bin/.$name.lock" || { emu_log "could not build $module@$version"; return 1; }
	fi
	echo "$dir/$name"
}

# repo_tool NAME VERSION SRC [LDFLAGS [HOW_LONG]] prints the path of the
# binary NAME built from the module in the repo folder SRC (a server's own
# command at the release its go.mod pins), building it into the cache
# first when it is not there: $FENCE_CACHE_DIR/bin/NAME-VERSION-<hash>/,
# where the hash covers SRC's go.mod, go.sum and main.go and LDFLAGS, so
# that a change to any of them builds again. HOW_LONG, when given, goes
# into the log line of a build ("about 10 minutes").
repo_tool() {
	local name=$1 version=$2 src=$3 ldflags=${4:-} how=${5:-} sum dir t0
	sum=$({ cat "$src/go.mod" "$src/go.sum" "$src/main.go" && if [ -n "$ldflags" ]; then echo "$ldflags"; fi; } | sha256sum | cut -c1-12)
	dir=$FENCE_CACHE_DIR/bin/$name-$version-$sum
	if [ ! -x "$dir/$name" ]; then
		mkdir -p "$FENCE_CACHE_DIR/bin"
		# One build at a time per machine; the binary appears only when whole.
		(
			flock 9
			[ -x "$dir/$name" ] && exit 0
			emu_log "building $name $version into $dir (once per machine${how:+, $how})"
			t0=$(emu_ms)
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
			(cd "$src" && GOFLAGS="-buildvcs=false -mod=readonly" emu_go build -ldflags "$ldflags" -o "$dir.tmp/$name" .) >&2 || exit 1
			rm -rf "$dir" && mv "$dir.tmp" "$dir"
			emu_log "built $name in $(($(emu_ms) - t0)) ms"
		) 9>"$FENCE_CACHE_DIR/bin/.$name.lock" || { emu_log "could not build $name"; return 1; }
	fi
	echo "$dir/$name"
}

emu_dir() { echo "$FENCE_RUN_DIR/emulators"; }

# emu_start NAME COMMAND... runs COMMAND in a new process group with its
# output in $FENCE_RUN_DIR/emulators/NAME.log and records the group's id.
emu_start() {
	local name=$1 dir
	shift
	dir=$(emu_dir)
	mkdir -p "$dir"
	rm -f "$dir/$name.pgid"
	# The shell that setsid starts leads the new group; it records its pid
	# (the group id) and becomes the emulator, working in $dir so that any
	# file an emulator writes lands there.
	# shellcheck disable=SC2016 # expanded by that shell
	setsid bash -c 'echo $$ >"$0" && cd "${0%/*}" && exec "$@"' "$dir/$name.pgid" "$@" >"$dir/$name.log" 2>&1 </dev/null &
	for _ in $(seq 50); do
		[ -s "$dir/$name.pgid" ] && return 0
		sleep 0.1
	done
	emu_log "$name did not start"
	return 1
}

emu_alive() { # emu_alive NAME: the emulator's process is still running
	local f
	f=$(emu_dir)/$1.pgid
	[ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# emu_stop NAME kills the emulator's whole process group.
emu_stop() {
	local f pgid
	f=$(emu_dir)/$1.pgid
	[ -s "$f" ] || return 0
	pgid=$(cat "$f")
	kill -TERM -- "-$pgid" 2>/dev/null || { rm -f "$f"; return 0; }
	for _ in $(seq 50); do
		kill -0 -- "-$pgid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pgid" 2>/dev/null || true
	rm -f "$f"
}

# emu_wait NAME CHECK... polls CHECK until it succeeds (0), the emulator
# exits (1) or $FENCE_EMULATOR_TIMEOUT passes (2).
emu_wait() {
	local name=$1 deadline
	shift
	deadline=$((SECONDS + FENCE_EMULATOR_TIMEOUT))
	while [ "$SECONDS" -lt "$deadline" ]; do
		"$@" && return 0
		emu_alive "$name" || return 1
		sleep 0.2
	done
	return 2
}

emu_failed() { # emu_failed NAME WHY: print the log, stop the emulator
	local name=$1
	emu_log "$name $2; its log ($(emu_dir)/$name.log):"
	sed 's/^/    /' "$(emu_dir)/$name.log" >&2
	emu_stop "$name"
	return 1
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; }

# emu_start_checked NAME PORT CHECK COMMAND... starts an emulator with
# every %s in CHECK and COMMAND replaced by PORT, waits until CHECK (a
# command and its arguments, as one string split into words) succeeds and
# leaves the port in $emu_port. When the port was taken between free_port
# and the bind, the emulator exits and is started again on another.
emu_start_checked() {
	local name=$1 port=$2 check=$3 rc
	shift 3
	for _ in 1 2 3; do
		emu_start "$name" "${@//%s/$port}" || return 1
		# (&& ||: scripts/test.sh runs with errexit)
		# shellcheck disable=SC2086 # the check is split into words on purpose
		emu_wait "$name" ${check//%s/$port} && rc=0 || rc=$?
		if [ "$rc" = 0 ]; then
			emu_port=$port
			return 0
		fi
		[ "$rc" = 2 ] && { emu_failed "$name" "did not pass \`${check//%s/$port}\` within ${FENCE_EMULATOR_TIMEOUT}s"; return 1; }
		grep -qiE 'EADDRINUSE|address already in use' "$(emu_dir)/$name.log" || break
		emu_log "$name lost port $port to another process, retrying on another"
		port=$(free_port)
	done
	emu_failed "$name" "exited"
}

# emu_start_on_port NAME PORT URL COMMAND... is emu_start_checked with the
# check that URL (its %s replaced by the port) answers 2xx.
emu_start_on_port() {
	local name=$1 port=$2 url=$3
	shift 3
	emu_start_checked "$name" "$port" "http_ok $url" "$@"
}

azurite_listening() { # the port Azurite logged, into $emu_port
	emu_port=$(sed -n 's|.*successfully listens on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$(emu_dir)/azurite.log")
	[ -n "$emu_port" ]
}

azurite_up() {
	local bin=$FENCE_REPO_DIR/node_modules/.bin/azurite-blob
	svc_run_dir && npm_install || return 1
	# Port 0: Azurite binds a free port itself and logs which.
	emu_start azurite "$bin" --blobHost 127.0.0.1 --blobPort 0 \
		--skipApiVersionCheck --disableTelemetry --inMemoryPersistence --extentMemoryLimit 1024 || return 1
	local rc
	emu_wait azurite azurite_listening && rc=0 || rc=$?
	case $rc in
	0) ;;
	1) emu_failed azurite "exited"; return 1 ;;
	*) emu_failed azurite "did not start listening within ${FENCE_EMULATOR_TIMEOUT}s"; return 1 ;;
	esac
	svc_export FENCE_AZURITE_ACCOUNT FENCE_AZURITE_KEY
	svc_export FENCE_AZURITE_BIN="$bin"
	svc_export FENCE_AZURITE_BLOB_URL="http://127.0.0.1:$emu_port/$FENCE_AZURITE_ACCOUNT"
	svc_export FENCE_AZURITE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$FENCE_AZURITE_ACCOUNT;AccountKey=$FENCE_AZURITE_KEY;BlobEndpoint=$FENCE_AZURITE_BLOB_URL;"
	# The Azure SDK's usual environment, as for AWS and GCS below: an
	# azblob:// URL opened with default settings reaches Azurite.
	svc_export AZURE_STORAGE_CONNECTION_STRING="$FENCE_AZURITE_CONNECTION_STRING"
	emu_log "Azurite $(node -p 'require(process.argv[1]).version' "$FENCE_REPO_DIR/node_modules/azurite/package.json") blob on $FENCE_AZURITE_BLOB_URL"
}

dynalite_up() {
	svc_run_dir && npm_install || return 1
	# Through scripts/dynalite.js, which keeps dynalite serving when a
	# client aborts a request mid-body (dynalite itself would exit).
	emu_start_on_port dynalite "$(free_port)" "http://127.0.0.1:%s/" \
		node "$FENCE_REPO_DIR/scripts/dynalite.js" "$FENCE_REPO_DIR" --host 127.0.0.1 --port %s \
		--createTableMs 0 --deleteTableMs 0 --updateTableMs 0 || return 1
	aws_env
	# `$FENCE_NODE $FENCE_DYNALITE_JS REPO [options]` runs another, REPO
	# being the directory above the script's (its node_modules).
	svc_export FENCE_NODE="$(command -v node)" FENCE_DYNALITE_JS="$FENCE_REPO_DIR/scripts/dynalite.js"
	svc_export FENCE_DYNAMO_ENDPOINT="http://127.0.0.1:$emu_port"
	svc_export AWS_ENDPOINT_URL_DYNAMODB="$FENCE_DYNAMO_ENDPOINT"
	# Which server FENCE_DYNAMO_ENDPOINT is, "name version", as
	# FENCE_S3_SERVER for S3: internal/testing/emulators tells by it which
	# emulator gaps a test may skip on.
	svc_export FENCE_DYNAMO_SERVER="dynalite $(node -p 'require(process.argv[1]).version' "$FENCE_REPO_DIR/node_modules/dynalite/package.json")"
	emu_log "$FENCE_DYNAMO_SERVER on $FENCE_DYNAMO_ENDPOINT"
}

fake_gcs_up() {
	local bin
	svc_run_dir
	bin=$(go_tool fake-gcs-server github.com/fsouza/fake-gcs-server "$FENCE_FAKE_GCS_VERSION") || return 1
	# -public-host must be this address: the Go SDK reads objects with
	# GET /BUCKET/OBJECT, which the server routes by that host; resumable
	# uploads come back to -external-url.
	emu_start_on_port fake-gcs "$(free_port)" "http://127.0.0.1:%s/_internal/healthcheck" \
		"$bin" -scheme http -host 127.0.0.1 -port %s -backend memory \
		-public-host 127.0.0.1:%s -external-url http://127.0.0.1:%s -log-level warn || return 1
	svc_export FENCE_FAKE_GCS_BIN="$bin"
	svc_export FENCE_GCS_ENDPOINT="http://127.0.0.1:$emu_port"
	svc_export STORAGE_EMULATOR_HOST="$FENCE_GCS_ENDPOINT"
	emu_log "fake-gcs-server $FENCE_FAKE_GCS_VERSION on $FENCE_GCS_ENDPOINT"
}

minio_up() {
	local bin dir
	svc_run_dir
	bin=$(go_tool minio github.com/minio/minio "$FENCE_MINIO_VERSION") || return 1
	dir=$(emu_dir)/minio
	mkdir -p "$dir/data" "$dir/certs"
	emu_start_on_port minio "$(free_port)" "http://127.0.0.1:%s/minio/health/ready" \
		env MINIO_ROOT_USER="$FENCE_S3_ACCESS_KEY" MINIO_ROOT_PASSWORD="$FENCE_S3_SECRET_KEY" \
		MINIO_BROWSER=off MINIO_UPDATE=off "$bin" server "$dir/data" --address 127.0.0.1:%s --certs-dir "$dir/certs" --quiet || return 1
	aws_env
	svc_export FENCE_S3_ACCESS_KEY FENCE_S3_SECRET_KEY
	svc_export FENCE_MINIO_BIN="$bin"
	svc_export FENCE_S3_ENDPOINT="http://127.0.0.1:$emu_port"
	svc_export AWS_ENDPOINT_URL_S3="$FENCE_S3_ENDPOINT"
	# Which server FENCE_S3_ENDPOINT is, "name version": the condition
	# probes of internal/testing/emulators name it in their findings.
	svc_export FENCE_S3_SERVER="minio $FENCE_MINIO_VERSION"
	emu_log "MinIO $FENCE_MINIO_VERSION on $FENCE_S3_ENDPOINT"
}

http_answers() { curl -sS -o /dev/null --max-time 2 "$1" 2>/dev/null; } # any HTTP answer, 4xx too

# versitygw_up starts versitygw, an S3 gateway over a directory (its posix
# backend), with the same keys as MinIO. It answers S3's conditional
# requests as S3 documents where MinIO does not (If-Match on DELETE, the
# 2 KB metadata limit), but keeps each object as a file at its key's path,
# so "a" and "a/b" cannot both exist (internal/testing/emulators lists
# both). It does not replace MinIO's endpoint: it exports its own
# (FENCE_VERSITYGW_ENDPOINT, FENCE_VERSITYGW_SERVER), which scripts/test.sh
# puts in FENCE_S3_ENDPOINT and AWS_ENDPOINT_URL_S3 for a second run of
# the S3 packages. --disableotmp: with O_TMPFILE, v1.8.0 refuses to
# overwrite an object whose key is longer than about 225 bytes (409
# ExistingObjectIsDirectory).
versitygw_up() {
	local bin dir
	svc_run_dir
	bin=$(go_tool versitygw github.com/versity/versitygw/cmd/versitygw "$FENCE_VERSITYGW_VERSION") || return 1
	dir=$(emu_dir)/versitygw
	mkdir -p "$dir/data"
	emu_start_checked versitygw "$(free_port)" "http_answers http://127.0.0.1:%s/" \
		"$bin" --access "$FENCE_S3_ACCESS_KEY" --secret "$FENCE_S3_SECRET_KEY" --region us-east-1 \
		--port 127.0.0.1:%s --quiet posix --disableotmp "$dir/data" || return 1
	aws_env
	svc_export FENCE_S3_ACCESS_KEY FENCE_S3_SECRET_KEY
	svc_export FENCE_VERSITYGW_BIN="$bin"
	svc_export FENCE_VERSITYGW_ENDPOINT="http://127.0.0.1:$emu_port"
	svc_export FENCE_VERSITYGW_SERVER="versitygw $FENCE_VERSITYGW_VERSION"
	emu_log "versitygw $FENCE_VERSITYGW_VERSION on $FENCE_VERSITYGW_ENDPOINT"
}

# DynamoDB Local is AWS's own DynamoDB emulator, a Java server. The npm
# package amplify-dynamodb-simulator (pinned in package.json) ships its jar
# in the tarball, so npm ci installs it with the others and nothing is
# downloaded at run time. Unlike dynalite it has transactions
# (TransactWriteItems, TransactGetItems) and returns the item of a failed
# condition (ReturnValuesOnConditionCheckFailure), so the DynamoDB
# packages' tests of those paths run on it. It does not replace dynalite's
# endpoint: it exports its own (FENCE_DDBLOCAL_ENDPOINT,
# FENCE_DDBLOCAL_SERVER), which scripts/test.sh puts in
# FENCE_DYNAMO_ENDPOINT, AWS_ENDPOINT_URL_DYNAMODB and FENCE_DYNAMO_SERVER
# for a second run of the DynamoDB packages.
#
# Its JVM takes seconds to answer, so ddblocal_start starts it and returns
# at once (emulators_up starts it first and goes on with the others), and
# ddblocal_wait waits for it and exports its endpoint, where it is used;
# ddblocal_up does both. It runs in memory (-inMemory) with one database
# for every access key and region (-sharedDb), on a free port. It has no
# option to listen on loopback only: it listens on every interface.
FENCE_DDBLOCAL_DIR=$FENCE_REPO_DIR/node_modules/amplify-dynamodb-simulator/emulator

java_install() { # Debian's Java, when the machine has none
	command -v java >/dev/null && return 0
	emu_log "installing Java from Debian's packages"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends default-jre-headless >/dev/null; } ||
		{ emu_log "Java is not installed and could not be"; return 1; }
}

# ddblocal_command prints the command that runs DynamoDB Local, one word a
# line, with %s for the port. A serial collector and a bounded heap: the
# suites' tables are small, and the machine is shared.
ddblocal_command() {
	printf '%s\n' "$(command -v java)" -Xmx512m -XX:+UseSerialGC \
		"-Djava.library.path=$FENCE_DDBLOCAL_DIR/DynamoDBLocal_lib" -jar "$FENCE_DDBLOCAL_DIR/DynamoDBLocal.jar" \
		-inMemory -sharedDb -disableTelemetry -port %s
}

ddblocal_start() {
	svc_run_dir && npm_install && java_install || return 1
	[ -f "$FENCE_DDBLOCAL_DIR/DynamoDBLocal.jar" ] ||
		{ emu_log "DynamoDB Local is not in $FENCE_DDBLOCAL_DIR (npm ci installs it)"; return 1; }
	ddblocal_t0=$(emu_ms)
	ddblocal_launch
}

ddblocal_launch() { # on a free port, into $ddblocal_port
	local cmd
	mapfile -t cmd < <(ddblocal_command)
	ddblocal_port=$(free_port)
	emu_start ddblocal "${cmd[@]//%s/$ddblocal_port}"
}

# ddblocal_ready: DynamoDB Local answers. When its port was taken between
# free_port and the bind, its JVM logs the BindException but keeps running:
# stop it, so that emu_wait returns at once.
ddblocal_ready() {
	http_answers "http://127.0.0.1:$ddblocal_port/" && return 0
	grep -q 'BindException' "$(emu_dir)/ddblocal.log" 2>/dev/null && emu_stop ddblocal
	return 1
}

ddblocal_wait() {
	local rc version
	[ -n "${ddblocal_port:-}" ] || { emu_log "DynamoDB Local was not started (ddblocal_start)"; return 1; }
	for _ in 1 2 3; do
		emu_wait ddblocal ddblocal_ready && rc=0 || rc=$?
		[ "$rc" = 1 ] && grep -q 'BindException' "$(emu_dir)/ddblocal.log" || break
		emu_log "ddblocal lost port $ddblocal_port to another process, retrying on another"
		ddblocal_launch || return 1
	done
	case $rc in
	0) ;;
	1) emu_failed ddblocal "exited"; return 1 ;;
	*) emu_failed ddblocal "did not answer within ${FENCE_EMULATOR_TIMEOUT}s"; return 1 ;;
	esac
	version=$(sed -n 's/^Version:[[:space:]]*//p' "$(emu_dir)/ddblocal.log")
	aws_env
	svc_export FENCE_DDBLOCAL_ENDPOINT="http://127.0.0.1:$ddblocal_port"
	svc_export FENCE_DDBLOCAL_SERVER="dynamodb-local ${version:-unknown}"
	emu_log "DynamoDB Local ${version:-(version unknown)} on $FENCE_DDBLOCAL_ENDPOINT, $(($(emu_ms) - ddblocal_t0)) ms after its start"
}

ddblocal_up() { ddblocal_start && ddblocal_wait; }

# aws_env points the AWS SDK's default configuration at the emulators'
# credentials and keeps it off the network: no profile files, no instance
# metadata lookups.
aws_env() {
	svc_export AWS_ACCESS_KEY_ID="$FENCE_S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$FENCE_S3_SECRET_KEY"
	svc_export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
	svc_export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
	svc_unset AWS_SESSION_TOKEN AWS_PROFILE
}

emulators_up() {
	declare -F svc_export >/dev/null || { emu_log "source scripts/services.sh first"; return 1; }
	local t0
	t0=$(emu_ms)
	# Everything is installed before anything starts: nothing idles
	# through a cold MinIO build.
	npm_install || return 1
	go_tool fake-gcs-server github.com/fsouza/fake-gcs-server "$FENCE_FAKE_GCS_VERSION" >/dev/null || return 1
	go_tool minio github.com/minio/minio "$FENCE_MINIO_VERSION" >/dev/null || return 1
	go_tool versitygw github.com/versity/versitygw/cmd/versitygw "$FENCE_VERSITYGW_VERSION" >/dev/null || return 1
	# DynamoDB Local first and without waiting: its JVM starts while the
	# others do; scripts/test.sh waits for it (ddblocal_wait) where it uses it.
	ddblocal_start && azurite_up && dynalite_up && fake_gcs_up && minio_up && versitygw_up || return 1
	emu_log "all emulators up in $(($(emu_ms) - t0)) ms (DynamoDB Local still starting)"
}

emulators_down() {
	local name
	for name in ddblocal versitygw minio fake-gcs dynalite azurite; do
		emu_stop "$name"
	done
}
