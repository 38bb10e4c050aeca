package azblob

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// LeaseID returns the Azure lease id of the lease that issues token to
// owner on key for ttl: a UUID (version 8, RFC 9562) made of the SHA-256
// hash of those four values. Each acquisition therefore has an id of its
// own, and only the owner that was issued token knows it (owner ids from
// fence.NewOwnerID are unguessable). The owner id is thus as good as the
// lease id: keep it secret (package fence prints it only as
// fence.OwnerFingerprint; see the package doc). It is exported for
// operators who want to act on a lease with Azure's own tools.
func LeaseID(key, owner string, token fence.Token, ttl time.Duration) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{"fence/azblob lease v1", key, owner} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(token))
	h.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(ttl))
	h.Write(n[:])
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x80 // version 8: custom
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
