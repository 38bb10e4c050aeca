// Package sdklog silences the process-wide loggers of the SDKs the
// backends use: go-redis's and client-go's (klog), which write on
// standard error unless a program sets others. The fence command and the
// torture run report what their clients meet themselves, so they call
// Quiet; no backend package does, since the loggers are the program's.
package sdklog

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/fencekit/fence/internal/redisclient"
)

// Quiet sets go-redis's and klog's loggers to ones that discard
// everything.
func Quiet() {
	redisclient.Quiet()
	klog.SetLogger(logr.Discard())
}
