package azblob

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// TestInspectWaitsForTheTokenWrite: while an acquirer holds the blob's
// lease but has not yet written its token, the blob's metadata still
// names the previous holder. Inspect must not show that holder as the
// one holding the key: it reads again until the new token is written,
// and then shows the new owner and token. An acquirer that never writes
// its token leaves Inspect showing the last token written, held, after
// its bounded reads, without error.
func TestInspectWaitsForTheTokenWrite(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, true), nil)
	ctx := t.Context()
	first := mustAcquire(t, l, "k", time.Minute, nil)
	if err := l.Release(ctx, first); err != nil {
		t.Fatal(err)
	}

	// The next acquirer, step by step: the lease, a pause, the token.
	r, err := l.d.read(ctx, "k", "")
	if err != nil {
		t.Fatal(err)
	}
	owner := fence.NewOwnerID()
	token, meta, err := r.next("k", owner, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	id := LeaseID("k", owner, token, time.Minute)
	etag, err := l.d.acquireLease(ctx, "k", id, time.Minute, r.etag)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		time.Sleep(10 * time.Millisecond)
		wrote <- l.d.bump(ctx, "k", owner, id, etag, r.token, token, meta)
	}()
	info, err := l.Inspect(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !info.Held || info.Owner != owner || info.Token != token {
		t.Errorf("Inspect during the token write: %v; want held by the new owner with token %d (the previous token was %d)", info, token, first.Token)
	}

	// An acquirer that stalls: its lease, never its token.
	if err := l.d.releaseLease(ctx, "k", id); err != nil {
		t.Fatal(err)
	}
	if _, err := l.d.acquireLease(ctx, "k", fence.NewOwnerID(), time.Minute, ""); err != nil {
		t.Fatal(err)
	}
	info, err = l.Inspect(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Held || info.Owner != owner || info.Token != token {
		t.Errorf("Inspect with a stalled acquirer: %v; want the last token written, %d, held", info, token)
	}
}
