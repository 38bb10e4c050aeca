package kubernetes

import (
	"errors"
	"testing"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fencekit/fence"
)

// FuzzParseLease feeds parseLease and parseValue Leases of any shape:
// each either returns a record that keeps the rules of the package doc
// or a *fence.CorruptError, and never panics.
func FuzzParseLease(f *testing.F) {
	f.Add("key", "12", "owner", int32(15), true, "7", "owner", "7", "dmFsdWU=")
	f.Add("key", "12", "client-go", int32(15), true, "7", "owner", "", "")
	f.Add("Key_1", "1", "", int32(0), false, "", "", "", "")
	f.Add("key", "abc", "x", int32(-1), true, "0", "", "x", "!!")
	f.Add("key", "18446744073709551615", "o", int32(1), true, "18446744073709551616", "o", "1", "")
	f.Fuzz(func(t *testing.T, key, rv, holder string, secs int32, hasSecs bool, token, owner, valueToken, value string) {
		name, hashed := leaseName(key)
		l := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv, Annotations: map[string]string{}}}
		l.Spec.HolderIdentity = &holder
		if hasSecs {
			l.Spec.LeaseDurationSeconds = &secs
		}
		if hashed {
			l.Annotations[annKey] = key
		}
		for k, v := range map[string]string{annToken: token, annOwner: owner, annValueToken: valueToken, annValue: value} {
			if v != "" {
				l.Annotations[k] = v
			}
		}
		r, err := parseLease(key, l)
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("parseLease: %v; want fence.ErrCorrupt", err)
			}
			return
		}
		switch {
		case r.seq == 0 || r.rv != rv:
			t.Fatalf("resourceVersion %q read as %d", rv, r.seq)
		case (r.owner == "") != (r.token == 0):
			t.Fatalf("owner %q with token %d", r.owner, r.token)
		case r.holder != "" && r.lease <= 0:
			t.Fatalf("holder %q without a duration", r.holder)
		case r.token != 0 && r.token.String() != token:
			t.Fatalf("token %q read as %d", token, r.token)
		}
		v, err := parseValue(key, l, r.token)
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("parseValue: %v; want fence.ErrCorrupt", err)
			}
			return
		}
		if len(v) > fence.MaxValueLen {
			t.Fatalf("a value of %d bytes", len(v))
		}
	})
}
