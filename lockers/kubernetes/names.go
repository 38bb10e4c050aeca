package kubernetes

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// hashedPrefix starts the Lease name of every key that is not itself a
// Lease name: "fence-sha256-" and 52 letters and digits of the key's
// SHA-256. A key that starts with it is always hashed, so that no key
// is used as a name that another key hashes to.
const hashedPrefix = "fence-sha256-"

// lowerBase32 encodes a hash in lower-case letters and digits 2-7.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// leaseName returns the name of key's Lease, and whether it is hashed:
// key itself when it is a Lease name (a DNS subdomain: at most 253 of
// lower-case letters, digits, '-' and '.', starting and ending with a
// letter or digit, with a letter or digit on either side of each '.')
// that does not start with hashedPrefix; otherwise hashedPrefix followed
// by the key's SHA-256.
func leaseName(key string) (name string, hashed bool) {
	if !strings.HasPrefix(key, hashedPrefix) && len(validation.IsDNS1123Subdomain(key)) == 0 {
		return key, false
	}
	sum := sha256.Sum256([]byte(key))
	return hashedPrefix + lowerBase32.EncodeToString(sum[:]), true
}
