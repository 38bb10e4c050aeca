package main

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cutProxy forwards TCP connections to a server until Cut, which closes
// every connection and refuses new ones: a partition between fence and
// its store.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	cut    bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.Cut)
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			return
		}
		go func() { _, _ = io.Copy(s, c); s.Close() }()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
	}
}

func (p *cutProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, conns...)
	return true
}

// Cut closes the listener and every connection.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestLeaseLostToPartition: when the store becomes unreachable, no
// renewal succeeds, and the lease's safety deadline passes, fence stops the
// command and exits 79; the release that cannot reach the store is
// reported, not fatal.
func TestLeaseLostToPartition(t *testing.T) {
	t.Parallel()
	// The proxy stands between fence and the host and port of a
	// PostgreSQL URL; the test does not cover the cloud stores.
	b := backendNamed(t, "postgres")
	store := b.store(t)
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	dir := t.TempDir()
	started, term := filepath.Join(dir, "started"), filepath.Join(dir, "term")
	script := `trap 'touch ` + shellQuote(term) + `; exit 3' TERM; touch ` + shellQuote(started) + `; while :; do sleep 0.02; done`
	// The release comes a safety margin (TTL/10) after the safety
	// deadline, when the command has exited: while the lease has not run
	// out on fence's clock it goes to the store, which cannot be reached;
	// after that the portable locker refuses it without trying. A TTL of
	// 2 s leaves the command 200 ms to exit.
	p := startFence(t, nil, "run", "-v", "--ttl", "2s", "--grace", "30s", "--store", u.String()+"&connect_timeout=1", "cut", "--", "sh", "-c", script)
	waitFor(t, "the command to start", func() bool { return exists(started) })
	proxy.Cut()
	r := p.wait()
	wantCode(t, r, exitLost)
	if !exists(term) {
		t.Error("the command did not get SIGTERM")
	}
	for _, want := range []string{"no renewal succeeded", "could not release"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %v", want, r)
		}
	}
	// Each renewal failure is reported once, not once per retry; the
	// lost lease once.
	if n := strings.Count(r.stderr, `lease on "cut"`); n != 1 {
		t.Errorf("the lost lease is reported %d times, want once: %v", n, r)
	}
	failures := 0
	seen := map[string]bool{}
	for _, line := range strings.Split(r.stderr, "\n") {
		line, _, _ = strings.Cut(line, " (the previous failure was repeated")
		if strings.Contains(line, "renewal of") && strings.Contains(line, "failed") {
			failures++
			if seen[line] {
				t.Errorf("a renewal failure is reported again: %q\n%v", line, r)
			}
			seen[line] = true
		}
	}
	if failures == 0 {
		t.Errorf("-v reports no renewal failure: %v", r)
	}
	// The lease was never released: it runs out on the server.
	waitFor(t, "the unreleased lease to expire", func() bool { return !inspectJSON(t, store, "cut").Held })
}
