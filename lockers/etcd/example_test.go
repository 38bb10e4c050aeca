package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/etcd"
)

// Each job takes the key, does its work with the lease's token (pass it to
// a fenced resource), and releases. It needs a cluster, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"etcd-0:2379", "etcd-1:2379", "etcd-2:2379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	locker, err := etcd.New(client, &etcd.Options{Prefix: "app/locks/"})
	if err != nil {
		log.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	var held *fence.HeldError
	if errors.As(err, &held) {
		fmt.Printf("busy: token %d held until %v\n", held.Token, held.ValidUntil)
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

// Importing the package lets fence.OpenLocker open etcd by URL. A session
// on it waits for a busy key on an etcd watch, not by polling, and
// keeps its handles' leases alive together. It needs a cluster, so it
// only compiles here.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "etcd://etcd-0:2379,etcd-1:2379,etcd-2:2379/app/locks/", nil)
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
