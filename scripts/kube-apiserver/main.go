// Command kube-apiserver is the Kubernetes API server, built from the module
// proxy at the release pinned in go.mod, for the tests of lockers/kubernetes:
// scripts/kube.sh builds it once per machine into the cache and runs it on
// an etcd of its own. It is a module of its own so that the project's module
// does not depend on the API server.
package main

import (
	"os"

	// The time zone database, for the CronJob API's time zones.
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	// The JSON log format (--logging-format=json).
	_ "k8s.io/component-base/logs/json/register"
	// The Prometheus metrics of client-go and of the build version.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
