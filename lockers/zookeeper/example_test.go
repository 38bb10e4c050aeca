package zookeeper_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/zookeeper"
)

// Each job takes the key, does its work with the lease's token (pass it to
// a fenced resource), and releases. It needs an ensemble, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	const sessionTimeout = 10 * time.Second
	conn, _, err := zk.Connect([]string{"zk-0:2181", "zk-1:2181", "zk-2:2181"}, sessionTimeout)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	locker, err := zookeeper.New(conn, &zookeeper.Options{Root: "/app/locks", SessionTimeout: sessionTimeout})
	if err != nil {
		log.Fatal(err)
	}
	// A Curator InterProcessMutex on zookeeper.LockPath("/app/locks", "nightly-report")
	// ("/app/locks/nightly-report") takes the same lock.
	lease, err := locker.Acquire(ctx, "nightly-report", 5*time.Second, nil)
	var held *fence.HeldError
	if errors.As(err, &held) {
		fmt.Printf("busy: held by %s with token %d\n", held.Owner, held.Token)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil {
		log.Fatal(err)
	}
}

// A URL opens the same locker, with a connection of its own that Close
// closes.
func Example_url() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "zk://zk-0:2181,zk-1:2181,zk-2:2181/app/locks?session-timeout=10s", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	s, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	// Lock waits in line, woken by the holder's release (a watch).
	h, err := s.Lock(ctx, "nightly-report", &fence.LockOptions{Wait: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)
	fmt.Println("writing with token", h.Token())
}
