package zookeeper

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections to a server until Cut, which closes
// them and refuses new ones until Heal, or Stall, which holds every byte
// on its way until Heal: a network partition between a client and its
// server, seen at once or not.
type proxy struct {
	l      net.Listener
	target string

	mu      sync.Mutex
	cut     bool
	stalled bool
	resumed *sync.Cond // broadcast by Heal
	conns   []net.Conn
}

// startProxy listens on a loopback port for target; it is closed when the
// test ends.
func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target}
	p.resumed = sync.NewCond(&p.mu)
	t.Cleanup(func() { l.Close(); p.Cut(); p.Heal() })
	go p.serve()
	return p
}

// Addr returns the address clients connect to.
func (p *proxy) Addr() string { return p.l.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { p.copy(s, c); s.Close() }()
		go func() { p.copy(c, s); c.Close() }()
	}
}

// copy copies from src to dst, holding what it read while stalled.
func (p *proxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.stalled {
			p.resumed.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Stall holds every byte on its way, keeping the connections open.
func (p *proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Cut closes every forwarded connection and refuses new ones.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Heal forwards new connections again.
func (p *proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.stalled = false, false
	p.resumed.Broadcast()
}
