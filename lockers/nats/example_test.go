package nats_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/nats"
)

// Each job takes the key, does its work with the lease's token (pass it to
// a fenced resource), and releases. It needs a server, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	nc, err := natsgo.Connect("nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	locker, err := nats.New(js, "locks", &nats.Options{Replicas: 3})
	if err != nil {
		log.Fatal(err)
	}
	if err := locker.Create(ctx); err != nil { // the bucket, once
		log.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	if held, ok := errors.AsType[*fence.HeldError](err); ok {
		fmt.Printf("busy: token %d, free for this process at %v\n", held.Token, held.ValidUntil)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}

// Importing the package lets fence.OpenLocker open a bucket by URL. A
// session on it waits for a busy key on a KV watch, not by polling. It
// needs a server, so it only compiles here.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "nats://nats-0:4222,nats-1:4222,nats-2:4222?bucket=locks&creds=/etc/app/nats.creds", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	session, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close(ctx)
	h, err := session.Lock(ctx, "ledger", &fence.LockOptions{Wait: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)
	fmt.Println("token", h.Token())
}
