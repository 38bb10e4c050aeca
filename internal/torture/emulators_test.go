package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestPrivateEmulatorsKeepData starts each private emulator a run starts,
// writes to it through a backend, restarts it as the run's restart
// disruption does (SIGKILL, or SIGTERM for Azurite) right after the
// writes, and reads everything back: values and tokens of a resource, the
// container and the lock blobs of the Azure locker, whose tokens go on
// after it. It logs how long each start and restart took.
func TestPrivateEmulatorsKeepData(t *testing.T) {
	resources := []struct {
		kind ResourceKind
		spec *emulatorSpec
		need func(testing.TB)
	}{
		{DynamoResource, dynaliteSpec, func(t testing.TB) { testenv.DynaliteCommand(t) }},
		{S3Resource, minioSpec, func(t testing.TB) { testenv.MinIOBin(t); testenv.S3Credentials(t) }},
		{GCSResource, fakeGCSSpec, func(t testing.TB) { testenv.FakeGCSBin(t); testenv.GCSEndpoint(t) }},
		{AzblobResource, azuriteSpec, func(t testing.TB) { testenv.AzuriteBin(t); testenv.AzuriteConnectionString(t) }},
	}
	for _, tt := range resources {
		t.Run(tt.spec.name, func(t *testing.T) {
			t.Parallel()
			tt.need(t)
			s, e := privateStage(t, tt.spec, func(ctx context.Context, s *Stage) error {
				_, _, err := tt.kind.URL(ctx, s)
				return err
			})
			_, clean, err := tt.kind.open(t.Context(), s, true)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			const n = 20
			for i := range n {
				if err := clean.Put(t.Context(), fmt.Sprint("k", i), fence.Token(100+i), fmt.Appendf(nil, "v%d", i)); err != nil {
					t.Fatalf("Put: %v", err)
				}
			}
			timeRestart(t, e)
			for i := range n {
				v, tok, err := clean.Get(t.Context(), fmt.Sprint("k", i))
				if err != nil || string(v) != fmt.Sprint("v", i) || tok != fence.Token(100+i) {
					t.Errorf("after the restart, Get(k%d) = %q, %d, %v; want v%d, %d", i, v, tok, err, i, 100+i)
				}
			}
			if err := clean.Put(t.Context(), "k0", 99, []byte("stale")); !errors.Is(err, fence.ErrStaleToken) {
				t.Errorf("after the restart, a Put with a lower token: %v; want ErrStaleToken", err)
			}
		})
	}
	t.Run(azuriteSpec.name, func(t *testing.T) {
		t.Parallel()
		testenv.AzuriteBin(t)
		testenv.AzuriteConnectionString(t)
		s, e := privateStage(t, azuriteSpec, func(ctx context.Context, s *Stage) error {
			_, _, err := AzblobLocker.URL(ctx, s)
			return err
		})
		_, clean, err := AzblobLocker.URL(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		l, err := create(t.Context(), s, clean, AzblobLocker.Remove, fence.OpenLocker)
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		first, err := l.Acquire(t.Context(), "a", AzblobLocker.TTL, nil)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		held, err := l.Acquire(t.Context(), "b", AzblobLocker.TTL, nil)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		if err := l.Release(t.Context(), first); err != nil {
			t.Fatalf("Release: %v", err)
		}
		timeRestart(t, e)
		// Azurite brings timed leases back expired (see azuriteSpec):
		// the held key may be taken again, but with a newer token.
		if b, err := l.Acquire(t.Context(), "b", AzblobLocker.TTL, nil); err == nil {
			t.Logf("after the restart, the held lease on b was gone (Azurite's gap); taken again with token %d", b.Token)
			if b.Token <= held.Token {
				t.Errorf("after the restart, token %d on b; want more than the %d before it", b.Token, held.Token)
			}
		} else if !errors.Is(err, fence.ErrHeld) {
			t.Errorf("after the restart, Acquire of a held key: %v; want ErrHeld or a newer token", err)
		}
		again, err := l.Acquire(t.Context(), "a", AzblobLocker.TTL, nil)
		if err != nil {
			t.Fatalf("after the restart, Acquire of a released key: %v", err)
		}
		if again.Token <= first.Token {
			t.Errorf("after the restart, token %d on a; want more than the %d before it", again.Token, first.Token)
		}
	})
}

// privateStage returns a stage and its emulator of spec, which setUp
// starts (through a store's URLs), and logs how long the start took.
func privateStage(t *testing.T, spec *emulatorSpec, setUp func(ctx context.Context, s *Stage) error) (*Stage, *emulator) {
	t.Helper()
	s, err := newStage(NetFaults{}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	t0 := time.Now()
	if err := setUp(t.Context(), s); err != nil {
		t.Fatalf("start %s: %v", spec.name, err)
	}
	t.Logf("%s started in %v", spec.name, time.Since(t0).Round(time.Millisecond))
	e := s.emus[spec.name]
	if e == nil {
		t.Fatalf("no private %s was started", spec.name)
	}
	t.Cleanup(func() { // before the stage's directory goes
		if t.Failed() {
			log, _ := os.ReadFile(e.logPath())
			t.Logf("%s's log:\n%s", spec.name, log)
		}
	})
	return s, e
}

// timeRestart restarts e as the run's disruption does and logs how long
// it took.
func timeRestart(t *testing.T, e *emulator) {
	t.Helper()
	t0 := time.Now()
	if err := e.restart(t.Context()); err != nil {
		t.Fatalf("restart %s: %v", e.spec.name, err)
	}
	t.Logf("%s restarted in %v", e.spec.name, time.Since(t0).Round(time.Millisecond))
}

// TestPrivateEmulatorsRestartUnderWrites restarts each private emulator
// of a resource three times while a writer puts increasing tokens on one
// name, one write at a time, and then reads the name back: it must hold
// the last write acknowledged, or a later one. The window in which a
// kill loses a fake-gcs-server object (see fakeGCSSpec) is too short for
// it to hit reliably: four runs without the quiet proxy passed; a
// torture run of gcs/gcs found it.
func TestPrivateEmulatorsRestartUnderWrites(t *testing.T) {
	resources := []struct {
		kind ResourceKind
		spec *emulatorSpec
		need func(testing.TB)
	}{
		{DynamoResource, dynaliteSpec, func(t testing.TB) { testenv.DynaliteCommand(t) }},
		{S3Resource, minioSpec, func(t testing.TB) { testenv.MinIOBin(t); testenv.S3Credentials(t) }},
		{GCSResource, fakeGCSSpec, func(t testing.TB) { testenv.FakeGCSBin(t); testenv.GCSEndpoint(t) }},
		{AzblobResource, azuriteSpec, func(t testing.TB) { testenv.AzuriteBin(t); testenv.AzuriteConnectionString(t) }},
	}
	for _, tt := range resources {
		t.Run(tt.spec.name, func(t *testing.T) {
			t.Parallel()
			tt.need(t)
			s, e := privateStage(t, tt.spec, func(ctx context.Context, s *Stage) error {
				_, _, err := tt.kind.URL(ctx, s)
				return err
			})
			_, clean, err := tt.kind.open(t.Context(), s, true)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			ctx, stop := context.WithCancel(t.Context())
			var acked, tried atomic.Uint64
			done := make(chan struct{})
			go func() {
				defer close(done)
				for tok := uint64(1); ctx.Err() == nil; tok++ {
					tried.Store(tok)
					wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					if clean.Put(wctx, "k", fence.Token(tok), fmt.Appendf(nil, "%d", tok)) == nil {
						acked.Store(tok)
					}
					cancel()
				}
			}()
			for range 3 {
				time.Sleep(300 * time.Millisecond)
				timeRestart(t, e)
			}
			time.Sleep(300 * time.Millisecond)
			stop()
			<-done
			v, tok, err := clean.Get(t.Context(), "k")
			if err != nil || uint64(tok) < acked.Load() || string(v) != fmt.Sprint(uint64(tok)) {
				t.Errorf("after the restarts, Get = %q, %d, %v; want the last write acknowledged (token %d) or a later one (of %d tried)", v, tok, err, acked.Load(), tried.Load())
			}
			t.Logf("%d writes tried, the last acknowledged with token %d", tried.Load(), acked.Load())
		})
	}
}
