package azblob

import (
	"regexp"
	"testing"

	"github.com/fencekit/fence"
)

var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestLeaseID(t *testing.T) {
	t.Parallel()
	owner := fence.NewOwnerID()
	base := LeaseID("k", owner, 7, MinTTL)
	if !uuidForm.MatchString(base) {
		t.Fatalf("LeaseID = %q; want a version 8 UUID", base)
	}
	if again := LeaseID("k", owner, 7, MinTTL); again != base {
		t.Fatalf("LeaseID is not a function of its inputs: %q then %q", base, again)
	}
	// Changing any input changes the id; so does moving bytes between
	// the key and the owner.
	others := map[string]string{
		"key":   LeaseID("k2", owner, 7, MinTTL),
		"owner": LeaseID("k", fence.NewOwnerID(), 7, MinTTL),
		"token": LeaseID("k", owner, 8, MinTTL),
		"ttl":   LeaseID("k", owner, 7, MaxTTL),
		"split": LeaseID("k"+owner[:1], owner[1:], 7, MinTTL),
	}
	seen := map[string]string{base: "base"}
	for what, id := range others {
		if prev, dup := seen[id]; dup {
			t.Errorf("LeaseID with another %s equals the one of %s: %q", what, prev, id)
		}
		seen[id] = what
	}
}
