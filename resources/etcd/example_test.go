package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	etcdres "github.com/fencekit/fence/resources/etcd"
)

// A writer holding token 7 stores a value; a stale writer with token 5 is
// refused, with both tokens in the error. It needs a cluster, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"etcd-0:2379", "etcd-1:2379", "etcd-2:2379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	r, err := etcdres.New(client, &etcdres.Options{Prefix: "app/reports/"})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Put(ctx, "daily", 7, []byte("report of token 7")); err != nil {
		log.Fatal(err)
	}
	err = r.Put(ctx, "daily", 5, []byte("stale report"))
	var stale *fence.StaleTokenError
	if errors.As(err, &stale) {
		fmt.Printf("refused token %d: %d seen\n", stale.Token, stale.Highest)
	}
}
