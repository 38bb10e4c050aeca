package kubernetes

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/netfault"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url  string
		want urlConfig
	}{
		{"kubernetes://team-a", urlConfig{namespace: "team-a"}},
		{"kubernetes://team-a?kubeconfig=/etc/kube/config&context=prod", urlConfig{namespace: "team-a", kubeconfig: "/etc/kube/config", context: "prod"}},
		{"kubernetes://default/", urlConfig{namespace: "default"}},
		{"kubernetes://ns?server=https%3A%2F%2F127.0.0.1%3A6443", urlConfig{namespace: "ns", server: "https://127.0.0.1:6443"}},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil || got != c.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", c.url, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"kubernetes://",
		"kubernetes://Team",
		"kubernetes://a_b",
		"kubernetes://ns:443",
		"kubernetes://user@ns",
		"kubernetes://ns/path",
		"kubernetes://ns?kubeconfig=",
		"kubernetes://ns?context=a&context=b",
		"kubernetes://ns?namespace=x",
		"kubernetes://ns?server=127.0.0.1:6443",
		"kubernetes://ns?server=ftp%3A%2F%2Fh",
		"kubernetes://ns?server=https%3A%2F%2Fu%3Ap%40h",
	} {
		u, err := url.Parse(bad)
		if err != nil {
			continue
		}
		if _, err := parseURL(u); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%q): %v; want fence.ErrInvalid", bad, err)
		}
	}
}

// TestOpenFromKubeconfig opens a Locker from a kubeconfig file and a
// context in it, and refuses a context the file does not have.
func TestOpenFromKubeconfig(t *testing.T) {
	t.Parallel()
	path := os.Getenv("FENCE_KUBECONFIG")
	if path == "" {
		adminClient(t) // skips, or fails under FENCE_TEST_STRICT
		t.Skip("FENCE_KUBECONFIG is not set")
	}
	ctx := t.Context()
	l, err := fence.OpenLocker(ctx, "kubernetes://default?kubeconfig="+url.QueryEscape(path), nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	if _, err := l.Inspect(ctx, "url-opened"); err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	// server= sends the requests elsewhere, with the same credentials.
	hung := netfault.Hung(t).Addr
	other, err := fence.OpenLocker(ctx, "kubernetes://default?kubeconfig="+url.QueryEscape(path)+"&server="+url.QueryEscape("http://"+hung), nil)
	if err != nil {
		t.Fatalf("OpenLocker with server=: %v", err)
	}
	defer other.Close()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := other.Inspect(short, "url-opened"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), hung) {
		t.Fatalf("Inspect through server=http://%s: %v; want the hung server's timeout", hung, err)
	}
	_, err = fence.OpenLocker(ctx, "kubernetes://default?kubeconfig="+url.QueryEscape(path)+"&context=no-such-context", nil)
	if err == nil {
		t.Fatal("OpenLocker with a context the kubeconfig lacks: no error")
	}
	_, err = fence.OpenLocker(ctx, "kubernetes://default?kubeconfig="+url.QueryEscape(filepath.Join(t.TempDir(), "missing")), nil)
	if err == nil {
		t.Fatal("OpenLocker with a missing kubeconfig: no error")
	}
}
