package torture

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer is a loopback HTTP server that counts the requests it
// received in full.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n.Add(1)
		_, _ = io.WriteString(w, "applied")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestTransport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		faults   NetFaults
		outage   bool
		cancel   bool // the request's context ends during the delay
		received int64
		wantErr  bool
		counted  string
	}{
		{name: "no fault", received: 1},
		{name: "drop request", faults: NetFaults{DropRequest: 1}, received: 0, wantErr: true, counted: FaultDropRequest},
		{name: "drop response", faults: NetFaults{DropResponse: 1}, received: 1, wantErr: true, counted: FaultDropResponse},
		{name: "delay", faults: NetFaults{Delay: 1, MaxDelay: 20 * time.Millisecond}, received: 1, counted: FaultDelay},
		{name: "delay past the context", faults: NetFaults{Delay: 1, MaxDelay: time.Hour}, cancel: true, received: 0, wantErr: true, counted: FaultDelay},
		{name: "outage", outage: true, received: 0, wantErr: true, counted: FaultOutage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, received := countingServer(t)
			counts := &Counts{}
			tr := NewTransport(nil, tt.faults, counts)
			if tt.outage {
				tr.Outage(time.Hour)
			}
			ctx := t.Context()
			if tt.cancel {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL, strings.NewReader("body"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Do: %v; want error: %v", err, tt.wantErr)
			}
			var ne *net.OpError
			if tt.wantErr && !tt.cancel && !errors.As(err, &ne) {
				t.Errorf("error %v is not a network error", err)
			}
			if got := received.Load(); got != tt.received {
				t.Errorf("server received %d requests; want %d", got, tt.received)
			}
			if tt.counted != "" && counts.Get(tt.counted) != 1 {
				t.Errorf("counts = %v; want one %s", counts.Snapshot(), tt.counted)
			}
			if tt.counted == "" && len(counts.Snapshot()) != 0 {
				t.Errorf("counts = %v; want none", counts.Snapshot())
			}
		})
	}
}

// echoServer is a loopback TCP server that writes back what it reads and
// counts the bytes.
func echoServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 1024)
				for {
					k, err := c.Read(buf)
					n.Add(int64(k))
					if k > 0 {
						_, _ = c.Write(buf[:k])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), &n
}

func TestProxy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		faults  NetFaults
		cutAll  bool
		echoed  bool
		counted string
	}{
		{name: "no fault", echoed: true},
		{name: "delay", faults: NetFaults{Delay: 1, MaxDelay: 10 * time.Millisecond}, echoed: true, counted: FaultDelay},
		{name: "cut", faults: NetFaults{Cut: 1}, counted: FaultCut},
		{name: "cut all", cutAll: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, received := echoServer(t)
			counts := &Counts{}
			p, err := NewProxy(addr, tt.faults, counts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if tt.cutAll {
				for len(p.snapshotConns()) == 0 { // wait for the proxy to register it
					time.Sleep(time.Millisecond)
				}
				p.CutAll()
			}
			_, _ = c.Write([]byte("ping"))
			got, err := io.ReadAll(io.LimitReader(c, 4))
			if tt.echoed && (err != nil || string(got) != "ping") {
				t.Errorf("read %q, %v; want the echo", got, err)
			}
			if !tt.echoed {
				if len(got) != 0 {
					t.Errorf("read %q through a cut connection", got)
				}
				if n := received.Load(); n != 0 {
					t.Errorf("server received %d bytes through a cut connection", n)
				}
			}
			if tt.counted != "" && counts.Get(tt.counted) == 0 {
				t.Errorf("counts = %v; want %s", counts.Snapshot(), tt.counted)
			}
		})
	}
}
