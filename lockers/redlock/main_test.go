package redlock_test

import (
	"context"
	"os"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain silences go-redis's log (the tests kill masters, and every
// failed dial would be logged) and fails the run when goroutines of the
// package (a notifier's subscriptions, a fan-out) outlive the tests.
func TestMain(m *testing.M) {
	goredis.SetLogger(quiet{})
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence/lockers/redlock"))
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
