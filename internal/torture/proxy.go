package torture

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy on loopback that injects faults into the
// connections between a client (PostgreSQL's, here) and its server: it
// holds chunks back before forwarding them and cuts connections in the
// middle, both ways at once, and counts both. Create it with NewProxy and
// point clients at Addr.
type Proxy struct {
	ln       net.Listener
	upstream string
	faults   NetFaults
	counts   *Counts

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewProxy listens on a free loopback port and forwards every connection to
// upstream (host:port), injecting faults and counting them in counts.
func NewProxy(upstream string, faults NetFaults, counts *Counts) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, faults: faults, counts: counts, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

// track registers c, or closes it and returns false once the proxy is
// closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.conns, c)
		_ = c.Close()
	}
	p.mu.Unlock()
}

func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client, server) {
		return
	}
	var once sync.Once
	cut := func() { once.Do(func() { p.untrack(client, server) }) }
	done := make(chan struct{}, 2)
	pump := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if chance(p.faults.Delay) {
					p.counts.Add(FaultDelay)
					time.Sleep(randDuration(p.faults.MaxDelay/10, p.faults.MaxDelay))
				}
				if chance(p.faults.Cut) {
					p.counts.Add(FaultCut)
					cut()
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					cut()
					return
				}
			}
			if err != nil {
				cut()
				return
			}
		}
	}
	go pump(server, client)
	go pump(client, server)
	<-done
	<-done
}

// snapshotConns returns the open connections.
func (p *Proxy) snapshotConns() []net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	return cs
}

// CutAll cuts every open connection, as a restart of the path to the
// server would; the clients reconnect through the proxy.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
}

// Close stops the proxy and cuts its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
