package etcd

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestOpenResource(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := uniquePrefix("url")
	r, err := fence.OpenResource(ctx, "etcd://"+testenv.EtcdEndpoints(t)+"/"+prefix+"?dial-timeout=2s", nil)
	if err != nil {
		t.Fatalf("OpenResource: %v", err)
	}
	defer r.Close()
	if err := r.Put(ctx, "n", 3, []byte("three")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	// The opened resource keeps its records under the URL's prefix.
	resp, err := newClient(t).Get(ctx, prefix+"n")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != encodeRecord(3, false, []byte("three")) {
		t.Fatalf("Get(%q) = %v, %v; want the record of token 3", prefix+"n", resp, err)
	}
	if err := r.Put(ctx, "n", 2, []byte("two")); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("stale Put through the opened resource: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := r.Highest(ctx, "n"); err == nil {
		t.Errorf("Highest after Close succeeded; want an error (Close closes the client the opener made)")
	}
}

func TestOpenResourceErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"etcd://", "want etcd://HOST"},
		{"etcd://app:s3cret@db?min-ttl=2s", "unknown parameter \"min-ttl\""},
		{"etcd://app:s3cret@db?ca=/x", "parameters of etcds://"},
		{"etcds://app:s3cret@db?ca=/nonexistent/ca.pem", "no such file"},
		{"etcd://app:s3cret@db?dial-timeout=soon", "dial-timeout"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := fence.OpenResource(t.Context(), tt.raw, nil)
			if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("OpenResource(%q) = %v; want an invalid-input error saying %q", tt.raw, err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}
