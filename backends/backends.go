// Package backends registers the URL schemes of every locker and resource
// backend of fence when imported for its side effect:
//
//	import _ "github.com/fencekit/fence/backends"
//
//	locker, err := fence.OpenLocker(ctx, os.Getenv("FENCE_STORE"), nil)
//
// The fence command and the torture run import it; a program that uses one
// backend imports that backend's package instead and links no other SDK.
// Every SDK is compiled in: Kubernetes' client-go alone adds about 390
// packages and 30 MB to a binary (the fence command grows from 104 to
// 156 MB with the Kubernetes and NATS lockers).
// A new backend joins the command and the torture run by one import here.
//
// Locker schemes: mem (lockers/memory), postgres and postgresql
// (lockers/postgres), dynamodb (lockers/dynamo), azblob (lockers/azblob),
// gs (lockers/gcs), etcd and etcds (lockers/etcd), kubernetes
// (lockers/kubernetes), redis, rediss and
// redis+sentinel (lockers/redis), redlock (lockers/redlock), mysql
// (lockers/mysql), s3 (lockers/s3), sqlite (lockers/sqlite), zk
// (lockers/zookeeper), nats (lockers/nats). Resource
// schemes: mem (resources/memory), postgres and postgresql
// (resources/sql), sqlite (resources/sql/sqlite), mysql
// (resources/sql/mysql), dynamodb (resources/dynamo), s3 (resources/s3),
// azblob (resources/azblob), gs
// (resources/gcs), etcd and etcds (resources/etcd), redis and rediss
// (resources/redis). driver.LockerSchemes and
// driver.ResourceSchemes list what is registered.
//
// The clients the URL openers make end every call when its context ends,
// and a backend's errors reach the program through the calls that met
// them. The SDKs that log through a logger of their own client (etcd,
// the AWS SDK, the MySQL driver, ZooKeeper) are given one that discards
// everything; Azure's and Cloud Storage's log nothing unless given a
// listener. go-redis and client-go (Kubernetes) each log through one
// logger for the whole process, on standard error unless the program sets
// another (goredis.SetLogger, klog.SetLogger); no fence package changes
// them (the fence command sets loggers that discard everything).
package backends

import (
	_ "github.com/fencekit/fence/lockers/azblob"       // azblob://
	_ "github.com/fencekit/fence/lockers/dynamo"       // dynamodb://
	_ "github.com/fencekit/fence/lockers/etcd"         // etcd://, etcds://
	_ "github.com/fencekit/fence/lockers/gcs"          // gs://
	_ "github.com/fencekit/fence/lockers/kubernetes"   // kubernetes://
	_ "github.com/fencekit/fence/lockers/memory"       // mem://
	_ "github.com/fencekit/fence/lockers/mysql"        // mysql://
	_ "github.com/fencekit/fence/lockers/nats"         // nats://
	_ "github.com/fencekit/fence/lockers/postgres"     // postgres://, postgresql://
	_ "github.com/fencekit/fence/lockers/redis"        // redis://, rediss://, redis+sentinel://
	_ "github.com/fencekit/fence/lockers/redlock"      // redlock://
	_ "github.com/fencekit/fence/lockers/s3"           // s3://
	_ "github.com/fencekit/fence/lockers/sqlite"       // sqlite://
	_ "github.com/fencekit/fence/lockers/zookeeper"    // zk://
	_ "github.com/fencekit/fence/resources/azblob"     // azblob://
	_ "github.com/fencekit/fence/resources/dynamo"     // dynamodb://
	_ "github.com/fencekit/fence/resources/etcd"       // etcd://, etcds://
	_ "github.com/fencekit/fence/resources/gcs"        // gs://
	_ "github.com/fencekit/fence/resources/memory"     // mem://
	_ "github.com/fencekit/fence/resources/redis"      // redis://, rediss://
	_ "github.com/fencekit/fence/resources/s3"         // s3://
	_ "github.com/fencekit/fence/resources/sql"        // postgres://, postgresql://
	_ "github.com/fencekit/fence/resources/sql/mysql"  // mysql://
	_ "github.com/fencekit/fence/resources/sql/sqlite" // sqlite://
)
