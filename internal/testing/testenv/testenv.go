// Package testenv finds the servers started by scripts/test.sh.
package testenv

import (
	"os"
	"testing"
)

// Strict reports whether the tests run under scripts/test.sh, where a
// missing server is a failure rather than a reason to skip.
func Strict() bool { return os.Getenv("FENCE_TEST_STRICT") != "" }

// Endpoint returns the value of the environment variable that
// scripts/test.sh exports for a server. When it is unset the test fails
// under scripts/test.sh and is skipped otherwise, saying how to run it.
func Endpoint(t testing.TB, envVar, server string) string {
	t.Helper()
	v := os.Getenv(envVar)
	if v != "" {
		return v
	}
	msg := server + " is not available: " + envVar + " is unset; run the tests with scripts/test.sh, which starts it"
	if Strict() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// PostgresURL returns the connection string of the test PostgreSQL server.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_POSTGRES_URL", "PostgreSQL")
}
