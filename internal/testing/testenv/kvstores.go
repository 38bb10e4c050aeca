package testenv

import "testing"

// The key-value stores started by scripts/kvstores.sh (sourced by
// scripts/test.sh). Like Endpoint, each function fails the test under
// scripts/test.sh and skips it otherwise when the store is not there.

// RedisURL returns the URL of the test Redis server (7.0, no persistence),
// like redis://127.0.0.1:PORT/0. Tests share it: each uses keys under a
// prefix of its own.
func RedisURL(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_REDIS_URL", "Redis")
}

// RedisServer returns the path of the redis-server binary, for tests that
// start servers of their own (replicas, independent masters) and kill
// them.
func RedisServer(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_REDIS_SERVER", "redis-server")
}

// RedisSentinel returns the path of the redis-sentinel binary.
func RedisSentinel(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_REDIS_SENTINEL", "redis-sentinel")
}

// EtcdEndpoints returns the client endpoint of the test etcd member (a
// one-member cluster), like 127.0.0.1:PORT. Tests share it: each uses keys
// under a prefix of its own.
func EtcdEndpoints(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_ETCD_ENDPOINTS", "etcd")
}

// EtcdServer returns the path of the etcd server binary, for tests that
// start clusters of their own and kill their members.
func EtcdServer(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_ETCD_SERVER", "etcd")
}

// RedisMasters returns the addresses of three independent Redis masters
// (no replication between them, no persistence), comma-separated like
// 127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3: the Redlock tests that share
// servers use them; those that kill masters start their own.
func RedisMasters(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_REDIS_MASTERS", "Redis masters")
}
