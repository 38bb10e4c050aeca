package testenv

import "testing"

// The servers started by scripts/sqlzk.sh (sourced by scripts/test.sh):
// MariaDB standing in for MySQL, and ZooKeeper. Like Endpoint, each
// function fails the test under scripts/test.sh and skips it otherwise
// when the server is not there.

// MySQLDSN returns the go-sql-driver/mysql data source name of the test
// MariaDB server (10.11), like fence@tcp(127.0.0.1:PORT)/fence: the user
// fence, with no password and every privilege, and the database fence.
// Tests share it: each uses tables or keys of its own.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_MYSQL_DSN", "MariaDB")
}

// MySQLURL returns the same server as a fence store URL,
// mysql://fence@127.0.0.1:PORT/fence, for lockers/mysql and the MySQL
// dialect of resources/sql to add their parameters to.
func MySQLURL(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_MYSQL_URL", "MariaDB")
}

// MariaDBServer returns the path of the mariadbd binary, for tests that
// start a server of their own and restart it.
func MariaDBServer(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_MARIADB_SERVER", "mariadbd")
}

// MariaDBInstallDB returns the path of mariadb-install-db, which
// initialises a data directory for MariaDBServer.
func MariaDBInstallDB(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_MARIADB_INSTALL_DB", "mariadb-install-db")
}

// ZooKeeperServers returns the client address of the test ZooKeeper
// server (3.8, standalone), like 127.0.0.1:PORT. Tests share it: each uses
// paths under a root of its own.
func ZooKeeperServers(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_ZK_SERVERS", "ZooKeeper")
}

// Java returns the path of the java command, for tests that start
// ZooKeeper servers of their own (an ensemble whose leader they kill) or
// a Curator client.
func Java(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_JAVA", "java")
}

// ZooKeeperClasspath returns the Java class path of ZooKeeper's server
// (org.apache.zookeeper.server.quorum.QuorumPeerMain for an ensemble
// member, ZooKeeperServerMain for a standalone server).
func ZooKeeperClasspath(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_ZK_CLASSPATH", "ZooKeeper's class path")
}

// CuratorClasspath returns the Java class path of Apache Curator's
// recipes (5.4) and the ZooKeeper client they use, for the
// interoperability test's Java program.
func CuratorClasspath(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_CURATOR_CLASSPATH", "Curator's class path")
}
