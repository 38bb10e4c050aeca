package testlockers_test

import (
	"testing"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// oneOperation names the stores whose driver takes a set of keys in one
// atomic operation (driver.MultiAcquirer) for Session.LockAll. The others
// have no operation that spans several records: the session takes their
// keys one at a time in sorted order, and the README says so.
var oneOperation = map[string]bool{
	"memory":   true,
	"postgres": true, "postgres-sql": true, "mysql": true, "sqlite": true,
	"etcd": true, "redis": true, "zookeeper": true,
	"dynamo-clock-free": true, "dynamo-trusted-clock": true,
}

// TestCapabilities: every locker of this module keeps public values with
// its leases (driver.Publisher, for observable elections) and notifies
// releases and publications (driver.ReleaseNotifier), and the stores
// that can take several keys in one operation do (driver.MultiAcquirer).
func TestCapabilities(t *testing.T) {
	t.Parallel()
	for _, b := range testlockers.Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			d := driver.LockerOf(b.Lockers(t, 1, nil)[0])
			if _, ok := d.(driver.Publisher); !ok {
				t.Errorf("the %s driver keeps no public values (no driver.Publisher)", b.Name)
			}
			if _, ok := d.(driver.ReleaseNotifier); !ok {
				t.Errorf("the %s driver notifies nothing (no driver.ReleaseNotifier)", b.Name)
			}
			if _, ok := d.(driver.MultiAcquirer); ok != oneOperation[b.Name] {
				t.Errorf("the %s driver takes several keys at once: %v; want %v", b.Name, ok, oneOperation[b.Name])
			}
		})
	}
}
