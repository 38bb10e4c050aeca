# shellcheck shell=bash
# Starts the Kubernetes API server the tests of lockers/kubernetes need:
# kube-apiserver on an etcd member of its own (not the one the etcd tests
# share), serving HTTPS on a free loopback port, and exports a kubeconfig
# for each of its two users. Sourced by scripts/services.sh after
# scripts/emulators.sh and scripts/kvstores.sh, whose helpers (emu_start,
# emu_wait, emu_stop, etcd_build, ...) it uses; `kube_up` starts it,
# `kube_down` stops it.
#
# The users, from a static token file:
#   fence-admin  group system:masters: may do anything (FENCE_KUBECONFIG)
#   fence-user   no groups: may do nothing until a test grants it rights
#                with an RBAC Role and RoleBinding (FENCE_KUBECONFIG_USER)
# Authorization is Node,RBAC, as on a real cluster. The certificates (a CA,
# the serving certificate for 127.0.0.1 and localhost, the service-account
# signing key pair) are made here with openssl, under $FENCE_RUN_DIR.
#
# There is no controller manager: nothing runs the namespace controller, so
# a deleted namespace stays Terminating with its objects until the server
# stops; there is no garbage collector and no service-account token
# controller either.
#
# Installs what is missing: kube-apiserver is built from the module in
# scripts/kube-apiserver (Kubernetes' own server command at the release its
# go.mod pins) into $FENCE_CACHE_DIR/bin/kube-apiserver-<version>-<hash>/,
# outside the repo, once per machine. A cold build (empty module and build
# caches) took 11 minutes on this 2-core machine shared with other builds
# (8.5 minutes of CPU) and filled 0.5 GB of module cache and 2.8 GB of
# build cache; the binary is 120 MB. So services_up starts the build in the
# background first (kube_build_start) and kube_up waits for it. The etcd
# binary is the one kvstores.sh builds. Started, the server answers /readyz
# in about 3 s.

FENCE_KUBE_VERSION=v1.37.2 # keep in step with scripts/kube-apiserver/go.mod

# kube_ldflags stamps the release into the binary, as Kubernetes' own build
# does, so that /version and the server's log name it.
kube_ldflags() {
	local v=k8s.io/component-base/version minor
	minor=${FENCE_KUBE_VERSION#v*.}
	minor=${minor%%.*}
	echo "-s -w -X $v.gitVersion=$FENCE_KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
}

# kube_build prints the path of the kube-apiserver binary, building it into
# the cache first when it is not there.
kube_build() {
	repo_tool kube-apiserver "$FENCE_KUBE_VERSION" "$FENCE_REPO_DIR/scripts/kube-apiserver" "$(kube_ldflags)" "about 10 minutes"
}

# kube_build_start runs kube_build in the background (it returns at once
# when the binary is cached), its output in $FENCE_RUN_DIR/emulators/
# kube-build.log; kube_build_wait waits for it and shows that output. Both
# run in the caller's shell, not in a $(...) subshell, which could not wait
# for the job. When the shell exits before kube_build_wait (a server that
# services_up starts after it failed), the build goes on and finishes
# filling the cache.
kube_build_start() {
	svc_run_dir
	[ -n "${kube_build_pid:-}" ] && return 0
	mkdir -p "$(emu_dir)"
	kube_build_log=$(emu_dir)/kube-build.log
	kube_build >/dev/null 2>"$kube_build_log" &
	kube_build_pid=$!
}

kube_build_wait() {
	local pid=${kube_build_pid:-} rc
	[ -n "$pid" ] || return 0
	kube_build_pid=
	wait "$pid" && rc=0 || rc=$?
	cat "$kube_build_log" >&2
	[ "$rc" = 0 ] || { emu_log "the background build of kube-apiserver failed"; return 1; }
}

# kube_certs DIR makes a CA, a serving certificate it signs for 127.0.0.1
# and localhost, and the key pair that signs service-account tokens: P-256
# keys, which take openssl milliseconds where RSA takes a second.
kube_certs() {
	local d=$1 ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
	{
		openssl req -x509 "${ec[@]}" -keyout "$d/ca.key" -out "$d/ca.crt" -days 3650 -subj /CN=fence-test-ca \
			-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign &&
			openssl req "${ec[@]}" -keyout "$d/server.key" -out "$d/server.csr" -subj /CN=kube-apiserver &&
			openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
				-days 3650 -out "$d/server.crt" -extfile <(printf '%s\n' \
				subjectAltName=IP:127.0.0.1,DNS:localhost extendedKeyUsage=serverAuth \
				keyUsage=critical,digitalSignature,keyEncipherment) &&
			openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/sa.key" &&
			openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub"
	} >"$d/openssl.log" 2>&1 || { emu_log "openssl failed:"; sed 's/^/    /' "$d/openssl.log" >&2; return 1; }
}

# kube_kubeconfig FILE SERVER CA USER TOKEN writes a kubeconfig for one user.
kube_kubeconfig() {
	(umask 077 && cat >"$1") <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fence-test
  cluster:
    server: $2
    certificate-authority: $3
users:
- name: $4
  user:
    token: $5
contexts:
- name: fence-test
  context:
    cluster: fence-test
    user: $4
    namespace: default
current-context: fence-test
EOF
}

# kube_ready CA PORT: the server on PORT answers /readyz with 200 (every
# start-up hook done, RBAC's default roles written), verified against CA.
kube_ready() { curl -fsS -o /dev/null --max-time 2 --cacert "$1" "https://127.0.0.1:$2/readyz" 2>/dev/null; }

kube_up() {
	local bin etcd dir peer etcd_url admin user t0 t1 server
	svc_run_dir
	kube_build_wait || return 1
	bin=$(kube_build) || return 1
	etcd=$(etcd_build) || return 1
	dir=$(emu_dir)/kube
	rm -rf "$dir" && mkdir -p "$dir"
	t0=$(emu_ms)
	kube_certs "$dir" || return 1
	admin=$(openssl rand -hex 24) && user=$(openssl rand -hex 24) || return 1
	(umask 077 && printf '%s\n' "$admin,fence-admin,fence-admin,system:masters" "$user,fence-user,fence-user" >"$dir/tokens.csv")
	peer=$(free_port)
	emu_start_on_port kube-etcd "$(free_port)" "http://127.0.0.1:%s/health" \
		"$etcd" --name kube --data-dir "$dir/etcd" --log-level warn \
		--listen-client-urls http://127.0.0.1:%s --advertise-client-urls http://127.0.0.1:%s \
		--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "kube=http://127.0.0.1:$peer" || return 1
	etcd_url=http://127.0.0.1:$emu_port
	t1=$(emu_ms)
	# --endpoint-reconciler-type=none: the default reconciler refuses an
	# advertise address on loopback (the server exits), and no endpoints of
	# the kubernetes service are needed. Priority and fairness stays on, as
	# on a real cluster: turning it off did not start the server faster.
	emu_start_checked kube-apiserver "$(free_port)" "kube_ready $dir/ca.crt %s" \
		"$bin" --etcd-servers="$etcd_url" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=%s \
		--tls-cert-file="$dir/server.crt" --tls-private-key-file="$dir/server.key" --cert-dir="$dir/certs" \
		--token-auth-file="$dir/tokens.csv" --authorization-mode=Node,RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
		--service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none || return 1
	server=https://127.0.0.1:$emu_port
	kube_kubeconfig "$dir/admin.kubeconfig" "$server" "$dir/ca.crt" fence-admin "$admin"
	kube_kubeconfig "$dir/user.kubeconfig" "$server" "$dir/ca.crt" fence-user "$user"
	svc_export FENCE_KUBECONFIG="$dir/admin.kubeconfig" FENCE_KUBECONFIG_USER="$dir/user.kubeconfig"
	# Which server it is, "name version", as FENCE_S3_SERVER for S3.
	svc_export FENCE_KUBE_SERVER="kube-apiserver $FENCE_KUBE_VERSION"
	svc_export FENCE_KUBE_APISERVER_BIN="$bin"
	emu_log "kube-apiserver $FENCE_KUBE_VERSION on $server (etcd $etcd_url): ready in $(($(emu_ms) - t1)) ms, $(($(emu_ms) - t0)) ms with its etcd and certificates"
}

kube_down() {
	emu_stop kube-apiserver
	emu_stop kube-etcd
}
