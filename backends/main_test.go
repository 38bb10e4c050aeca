package backends_test

import (
	"net"
	"os"
	"testing"

	"github.com/fencekit/fence/internal/redisclient"
)

// TestMain sets the SDKs' environment of deadEnv for the whole test
// binary, or runs the child of TestClientsLogNothing.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// go-redis's one process-wide logger is the program's to set, as
		// the fence command does; the other clients need nothing.
		redisclient.Quiet()
		os.Exit(quietChild())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	for k, v := range deadEnv(dead) {
		if v == "" {
			_ = os.Unsetenv(k)
		} else {
			_ = os.Setenv(k, v)
		}
	}
	os.Exit(m.Run())
}
