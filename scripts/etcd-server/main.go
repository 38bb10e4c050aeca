// Command etcd-server is etcd's own server command, built from the module
// proxy at the version pinned in go.mod, for the tests of lockers/etcd and
// resources/etcd: scripts/services.sh builds it once per machine into the
// cache (Debian's etcd-server package is 3.4, too old for the v3.7 client).
// It is a module of its own so that the project's module does not depend on
// etcd's server.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
