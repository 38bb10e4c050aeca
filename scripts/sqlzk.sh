# shellcheck shell=bash
# Starts the servers the MySQL and ZooKeeper backends' tests need on
# loopback and exports their endpoints: one MariaDB server for the lockers/
# mysql suite and the MySQL dialect of resources/sql, and one standalone
# ZooKeeper server for lockers/zookeeper; and the paths of the binaries and
# Java class paths for the tests that start servers of their own (a MariaDB
# restarted mid-run, a ZooKeeper ensemble whose leader they kill, a Java
# Curator client). Sourced by scripts/services.sh after scripts/emulators.sh,
# whose helpers (emu_start, emu_wait, emu_stop, ...) it uses; `sqlzk_up`
# starts them, `sqlzk_down` stops them.
#
# Installs what is missing from Debian's packages: mariadb-server (10.11),
# zookeeper (3.8) and libcurator-recipes-java (Apache Curator 5.4, for the
# interoperability test), all running on the Java already on the machine
# (default-jre-headless is installed when it is not). There is no MySQL
# server package here: MariaDB stands in for MySQL.

sqlzk_install() {
	local want=()
	command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || want+=(mariadb-server)
	[ -f /usr/share/java/zookeeper.jar ] || want+=(zookeeper)
	[ -f /usr/share/java/curator-recipes.jar ] || want+=(libcurator-recipes-java)
	command -v java >/dev/null || want+=(default-jre-headless)
	[ ${#want[@]} = 0 ] && return 0
	emu_log "installing ${want[*]} from Debian's packages"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null || return 1
	# The packages may start system-wide servers; the tests start their
	# own on free ports and need none.
	service mariadb stop >/dev/null 2>&1 || true
	service zookeeper stop >/dev/null 2>&1 || true
	[ -x /usr/sbin/mariadbd ] && [ -f /usr/share/java/zookeeper.jar ] && [ -f /usr/share/java/curator-recipes.jar ]
}

mariadb_ping() { mariadb --no-defaults -S "$1" -uroot -e 'SELECT 1' >/dev/null 2>&1; }

# mariadb_up initialises a data directory, starts a server on a free port
# and a socket in that directory, and creates the user fence (no password,
# from any host) and the database fence.
mariadb_up() {
	local dir sock
	svc_run_dir
	sqlzk_install || { emu_log "MariaDB or ZooKeeper is not installed and could not be"; return 1; }
	dir=$(emu_dir)/mariadb
	rm -rf "$dir" && mkdir -p "$dir"
	sock=$dir/mariadb.sock
	mariadb-install-db --no-defaults --datadir="$dir/data" --user="$(id -un)" \
		--auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 ||
		{ emu_log "mariadb-install-db failed:"; sed 's/^/    /' "$dir/install.log" >&2; return 1; }
	# The socket answers before the TCP port can be lost to a race, so the
	# check asks for the port through the socket.
	emu_start_checked mariadb "$(free_port)" "mariadb_listening $sock %s" \
		/usr/sbin/mariadbd --no-defaults --datadir="$dir/data" --user="$(id -un)" \
		--port=%s --bind-address=127.0.0.1 --socket="$sock" --skip-name-resolve \
		--innodb-buffer-pool-size=64M --max-connections=300 || return 1
	mariadb --no-defaults -S "$sock" -uroot -e \
		"CREATE USER 'fence'@'%'; GRANT ALL ON *.* TO 'fence'@'%'; CREATE DATABASE fence" ||
		{ emu_failed mariadb "refused the set-up statements"; return 1; }
	svc_export FENCE_MYSQL_DSN="fence@tcp(127.0.0.1:$emu_port)/fence"
	svc_export FENCE_MYSQL_URL="mysql://fence@127.0.0.1:$emu_port/fence"
	svc_export FENCE_MARIADB_SERVER=/usr/sbin/mariadbd
	svc_export FENCE_MARIADB_INSTALL_DB="$(command -v mariadb-install-db)"
	emu_log "MariaDB $(mariadb --no-defaults -S "$sock" -uroot -Nse 'SELECT VERSION()') on 127.0.0.1:$emu_port"
}

# mariadb_listening SOCKET PORT: the server answers on SOCKET and listens
# on 127.0.0.1:PORT.
mariadb_listening() {
	mariadb_ping "$1" && [ "$(mariadb --no-defaults -S "$1" -uroot -Nse 'SELECT @@port' 2>/dev/null)" = "$2" ] &&
		(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null
}

# zk_ok PORT: the ZooKeeper server on PORT serves requests (its answer to
# srvr names its mode; ruok answers imok before the server serves).
zk_ok() {
	# shellcheck disable=SC2016 # expanded by that shell
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf srvr >&3 && cat <&3' "$1" 2>/dev/null | grep -q '^Mode: '
}

# The class path of ZooKeeper's server (its jar names its dependencies),
# and of a Curator client.
FENCE_ZK_CLASSPATH=/usr/share/java/zookeeper.jar
FENCE_CURATOR_CLASSPATH=/usr/share/java/curator-recipes.jar:/usr/share/java/curator-framework.jar:/usr/share/java/curator-client.jar:/usr/share/java/guava.jar:/usr/share/java/zookeeper.jar

# zookeeper_up starts a standalone server on a free port. Sessions may
# last from 1 s to 2 minutes (the test URLs ask for up to a minute, so that
# leases of 40 s fit in two thirds of one); the configuration is written
# by the started shell, so that a retry on another port gets its own.
zookeeper_up() {
	local dir
	svc_run_dir
	sqlzk_install || { emu_log "MariaDB or ZooKeeper is not installed and could not be"; return 1; }
	dir=$(emu_dir)/zookeeper
	rm -rf "$dir" && mkdir -p "$dir/data"
	# shellcheck disable=SC2016 # expanded by that shell
	emu_start_checked zookeeper "$(free_port)" "zk_ok %s" \
		bash -c 'for l in tickTime=500 minSessionTimeout=1000 maxSessionTimeout=120000 \
			"dataDir=$1/data" "clientPort=$2" clientPortAddress=127.0.0.1 admin.enableServer=false \
			4lw.commands.whitelist=ruok,srvr,stat,mntr; do echo "$l"; done >"$1/zoo.cfg" &&
			exec java -Xmx256m -cp "$3" org.apache.zookeeper.server.ZooKeeperServerMain "$1/zoo.cfg"' \
		zookeeper "$dir" %s "$FENCE_ZK_CLASSPATH" || return 1
	svc_export FENCE_ZK_SERVERS="127.0.0.1:$emu_port"
	svc_export FENCE_JAVA="$(command -v java)" FENCE_ZK_CLASSPATH FENCE_CURATOR_CLASSPATH
	emu_log "ZooKeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null | sed 's/-.*//') on $FENCE_ZK_SERVERS"
}

sqlzk_up() { mariadb_up && zookeeper_up; }

sqlzk_down() {
	emu_stop mariadb
	emu_stop zookeeper
}
