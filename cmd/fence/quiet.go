package main

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/fencekit/fence/internal/redisclient"
)

// The command prints its own errors: go-redis's and client-go's
// process-wide loggers, which would write dial failures and cut responses
// on standard error, discard them.
func init() {
	redisclient.Quiet()
	klog.SetLogger(logr.Discard())
}
