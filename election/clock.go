package election

import (
	"reflect"
	"unsafe"

	"github.com/fencekit/fence"
)

// sessionClock returns the clock s times its leases and waits on
// (fence.SessionOptions.Clock, or fence.SystemClock): the candidate waits
// between attempts on it too.
//
// TODO(i23): return s.Clock() once fence.Session has it; until then this
// reads the session's setting.
func sessionClock(s *fence.Session) fence.Clock {
	v := reflect.ValueOf(s).Elem().FieldByName("s").FieldByName("clock")
	return *(*fence.Clock)(unsafe.Pointer(v.UnsafeAddr()))
}
