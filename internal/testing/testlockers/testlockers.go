// Package testlockers opens real lockers on the test servers for tests
// that run one scenario on every store (guard, election, schedule, the
// fence command). It is a package of its own because the lockers' own
// tests use internal/emulators.
package testlockers

import (
	"crypto/rand"
	"encoding/hex"
)

// UniqueName returns prefix followed by random hex: a table name no other
// test uses.
func UniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
