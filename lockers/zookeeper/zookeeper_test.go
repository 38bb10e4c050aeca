package zookeeper

import (
	"sync"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/zktest"
	"github.com/fencekit/fence/lockers/lockertest"
)

// expireMargin is how long after a lease's TTL its node is surely gone:
// the Locker's timer fires at the TTL and sends the delete.
const expireMargin = 300 * time.Millisecond

// TestConformance runs the suite on the shared test server, each Locker
// with a session of its own (as another process would have); its Restart
// closes every session and opens new ones (the shared server must not be
// restarted).
func TestConformance(t *testing.T) {
	t.Parallel()
	servers := sharedServers(t)
	root := uniqueRoot("conformance")
	var mu sync.Mutex
	var conns []*zk.Conn
	const shortTTL = MinTTL
	h := lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			c := connect(t, servers, testSessionTimeout)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			return newTestLocker(t, c, &Options{Root: root}).Locker
		},
		TTL:       testSessionTimeout * 2 / 3,
		ShortTTL:  shortTTL,
		Expire:    func(*testing.T) { time.Sleep(shortTTL + expireMargin) },
		Pass:      func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen: MaxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Second, MinTTL - time.Millisecond, testSessionTimeout*2/3 + time.Millisecond},
		Now:       time.Now,
		// Restart runs alone, before the cases that call New.
		Restart: func(*testing.T) {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				c.Close()
			}
			conns = nil
		},
	}
	lockertest.Run(t, h)
}

// TestConformanceServerRestart runs the suite on a standalone server of
// its own (ticks of 250 ms: sessions of at most 5 s, so leases of at most
// 3.3 s), whose Restart kills the server with SIGKILL and starts it again
// on its data: the sessions, their nodes and the zxid counter survive in
// its snapshot and log.
func TestConformanceServerRestart(t *testing.T) {
	t.Parallel()
	e := zktest.StartEnsemble(t, 1)
	servers := e.Servers()
	root := uniqueRoot("restart")
	const session = zktest.MaxSessionTimeout
	const shortTTL = MinTTL
	h := lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			return newTestLocker(t, connect(t, servers, session), &Options{Root: root, SessionTimeout: session}).Locker
		},
		TTL:       session * 2 / 3,
		ShortTTL:  shortTTL,
		Expire:    func(*testing.T) { time.Sleep(shortTTL + expireMargin) },
		Pass:      func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen: MaxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Second, MinTTL - time.Millisecond, session*2/3 + time.Millisecond},
		Now:       time.Now,
		Restart: func(t *testing.T) {
			e.Kill(t, 0)
			e.Restart(t, 0)
		},
	}
	lockertest.Run(t, h)
}
