package backends_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/netfault"
)

// childEnv, set, makes the test binary the child of TestClientsLogNothing:
// it holds the addresses of the child's dead server, of one that drops
// every connection, and of three hung ones.
const childEnv = "FENCE_BACKENDS_QUIET_CHILD"

// TestClientsLogNothing: a program that opens every backend by URL, at a
// stopped server, at one that drops every connection and at a hung one,
// and calls it until the calls fail,
// writes nothing on its standard error: the clients fence makes log
// nothing unless given a logger; go-redis's process-wide logger, which is
// the program's, is set to discard as the fence command sets it.
// The child is this test binary run again, with an environment of its
// own (deadEnv, and no AWS credentials: the AWS SDK looks for some at a
// metadata service of the test's, on this machine, which answers 404 as
// one without a session token does, which the SDK warns of).
func TestClientsLogNothing(t *testing.T) {
	t.Parallel()
	dead := netfault.Closed(t)
	addrs := []string{dead, netfault.Dropping(t), netfault.Hung(t).Addr, netfault.Hung(t).Addr, netfault.Hung(t).Addr}
	imds := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(imds.Close)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), childEnv + "=" + strings.Join(addrs, ",")}
	for k, v := range deadEnv(dead) {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	// No credentials of its own: the AWS SDK goes through its chain to
	// the metadata service, as on a machine without any.
	cmd.Env = append(dropEnv(cmd.Env, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_SERVICE_ENDPOINT"),
		"AWS_EC2_METADATA_SERVICE_ENDPOINT="+imds.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "calls failed") {
		t.Fatalf("the child made no calls; stdout:\n%s", stdout.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("the clients wrote on the program's standard error:\n%s", stderr.String())
	}
}

func dropEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// quietChild is the child's main: it opens every scheme at the dead
// address, at the dropping one and at the hung ones, calls each at once, and reports on
// standard output how many calls failed (all should). It writes nothing
// on standard error itself.
func quietChild() int {
	addrs := strings.Split(os.Getenv(childEnv), ",")
	dead, drop, hung := addrs[0], addrs[1], addrs[2:]
	const wait = 2 * time.Second
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed, succeeded := 0, 0
	count := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed++
		} else {
			succeeded++
		}
	}
	for _, at := range [][]string{{dead, dead, dead}, {drop, drop, drop}, hung} {
		for _, s := range lockerSchemes {
			if s.url == nil {
				continue
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				l, err := fence.OpenLocker(ctx, s.url(at), nil)
				if err != nil {
					count(err)
					return
				}
				defer l.Close()
				_, err = l.Acquire(ctx, "quiet", max(driver.InfoOf(l).MinTTL, 2*time.Second), nil)
				count(err)
				ctx2, cancel2 := context.WithTimeout(context.Background(), wait/2)
				defer cancel2()
				_, err = l.Inspect(ctx2, "quiet")
				count(err)
			})
		}
		for _, s := range resourceSchemes {
			if s.url == nil {
				continue
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				r, err := fence.OpenResource(ctx, s.url(at), nil)
				if err != nil {
					count(err)
					return
				}
				defer r.Close()
				count(r.Put(ctx, "quiet", 1, []byte("v")))
			})
		}
	}
	wg.Wait()
	// Background work of the clients (reconnections) gets time to log.
	time.Sleep(500 * time.Millisecond)
	fmt.Printf("%d calls failed, %d succeeded\n", failed, succeeded)
	return 0
}
