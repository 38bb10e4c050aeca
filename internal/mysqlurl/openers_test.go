package mysqlurl_test

import (
	"testing"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/lockers/mysql"       // the mysql:// locker opener
	_ "github.com/fencekit/fence/resources/sql/mysql" // the mysql:// resource opener
)

// TestOpenersAgree checks that fence.OpenLocker and fence.OpenResource
// refuse the same mysql:// URLs with the same error (an opaque mysql:APP
// is fence.OpenLocker's and fence.OpenResource's own, before any opener), and that both open
// the same good URL, which names the parameters of both.
func TestOpenersAgree(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"mysql://app:secretpw@db/app#x", "mysql://app:secretpw@db/app?x=%zz",
		"mysql://app:secretpw@db/app?tls=1&tls=2", "mysql://app:secretpw@db/app?password=secretpw",
		"mysql://app:secretpw@/app", "mysql:///app", "mysql://app:secretpw@db:/app", "mysql://app:secretpw@db:0/app",
		"mysql://a%3Ab:secretpw@db/app", "mysql://app:secretpw@db", "mysql://app:secretpw@db/a/b",
		"mysql://app:secretpw@db/a%60b", "mysql://app:secretpw@db/app?tls=bogus", "mysql://app:secretpw@db/app?timeout=soon",
	} {
		l, lerr := fence.OpenLocker(t.Context(), raw, nil)
		r, rerr := fence.OpenResource(t.Context(), raw, nil)
		if lerr == nil || rerr == nil || lerr.Error() != rerr.Error() {
			t.Errorf("%q: OpenLocker = %v, OpenResource = %v; want the same error", raw, lerr, rerr)
		}
		if l != nil {
			l.Close()
		}
		if r != nil {
			r.Close()
		}
	}
	const good = "mysql://app:secretpw@db:3307/app?timeout=2s&tls=skip-verify"
	l, err := fence.OpenLocker(t.Context(), good, nil)
	if err != nil {
		t.Fatalf("OpenLocker(%q): %v", good, err)
	}
	l.Close()
	r, err := fence.OpenResource(t.Context(), good, nil)
	if err != nil {
		t.Fatalf("OpenResource(%q): %v", good, err)
	}
	r.Close()
}
