package nats

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// What a server without sync_interval: always can break. Such a server
// writes each message to its files at once, where the operating system
// keeps it in its page cache, and syncs the files to disk every two
// minutes. A process crash (SIGKILL) loses nothing: the page cache
// outlives the process, as the first test shows. An operating-system
// crash or a power loss loses whatever was not synced yet, acknowledged
// or not. A test cannot crash the machine; the second test makes the
// loss certain instead, as the Redis failover tests do: it puts back the
// server's files as they were before an acknowledged acquisition (what
// the disk holds when no sync came between that acquisition and a power
// loss), and restarts the server on them. The stream's last sequence goes
// back with them, and the next acquisition gets the same revision, so
// the same token, as the lost one: two holders with one token. A server
// with sync_interval: always syncs the acquisition before it answers, so
// no crash can take its files back behind an acknowledged write.

// TestUnsyncedServerKeepsAWriteAcrossAProcessCrash: SIGKILL alone loses
// no acknowledged acquisition, even without syncs.
func TestUnsyncedServerKeepsAWriteAcrossAProcessCrash(t *testing.T) {
	t.Parallel()
	s := startServer(t, "unsynced-kill", serverConfig{unsynced: true})
	_, js := connect(t, s.url)
	bucket := newBucket(t, js, "unsynced", 1)
	l := newTestLocker(t, js, bucket, nil, nil)
	lease, err := l.Acquire(t.Context(), "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Kill()
	s.restart(t)
	info := inspectAfterRestart(t, s.url, bucket, "k")
	if !info.Held || info.Token != lease.Token || info.Owner != lease.Owner {
		t.Fatalf("after SIGKILL: %+v; want held by %q with token %d", info, lease.Owner, lease.Token)
	}
}

// TestUnsyncedServerReissuesATokenAfterAPowerLoss: an acquisition lost
// with the server's unsynced writes is issued again, token and all.
func TestUnsyncedServerReissuesATokenAfterAPowerLoss(t *testing.T) {
	t.Parallel()
	s := startServer(t, "unsynced-power", serverConfig{unsynced: true})
	_, js := connect(t, s.url)
	bucket := newBucket(t, js, "unsynced", 1)
	l := newTestLocker(t, js, bucket, nil, nil)
	first, err := l.Acquire(t.Context(), "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	// The disk as a sync now would leave it: the files copied while the
	// server is stopped.
	store := filepath.Join(s.dir, "store")
	synced := filepath.Join(t.TempDir(), "synced")
	s.Pause()
	copyDir(t, store, synced)
	s.Resume()
	lost, err := l.Acquire(t.Context(), "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("acknowledged acquisition with token %d; now a power loss before the next sync", lost.Token)
	s.Kill()
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	copyDir(t, synced, store)
	s.restart(t)
	info := inspectAfterRestart(t, s.url, bucket, "k")
	if info.Held {
		t.Fatalf("after the power loss the key is held (%+v): the acquisition survived", info)
	}
	_, js2 := connect(t, s.url)
	other := newTestLocker(t, js2, bucket, nil, nil)
	again, err := other.Acquire(t.Context(), "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Token != lost.Token {
		t.Fatalf("the next acquisition got token %d; the lost one had %d (the demonstration expected the same)", again.Token, lost.Token)
	}
	t.Logf("token %d issued twice: to the lost acquisition and to the next", again.Token)
}

// inspectAfterRestart inspects key with a Locker of a new connection,
// retrying while JetStream recovers.
func inspectAfterRestart(t *testing.T, url, bucket, key string) fence.LockInfo {
	t.Helper()
	_, js := connect(t, url)
	l := newTestLocker(t, js, bucket, nil, nil)
	var info fence.LockInfo
	if err := retry(30*time.Second, func(ctx context.Context) error {
		var err error
		info, err = l.Inspect(ctx, key)
		return err
	}); err != nil {
		t.Fatalf("Inspect after the restart: %v", err)
	}
	return info
}

// copyDir copies directory from to to (which must not exist).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}
