package fencedobj

import (
	"crypto/rand"
	"encoding/hex"
)

// WriteIDLen is the length of a write id of NewWriteID: 16 random bytes
// in hex.
const WriteIDLen = 32

// NewWriteID returns a fresh random write id.
func NewWriteID() string {
	var b [WriteIDLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// ValidWriteID reports whether id is a write id as NewWriteID makes them:
// WriteIDLen lower-case hex digits.
func ValidWriteID(id string) bool {
	if len(id) != WriteIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
