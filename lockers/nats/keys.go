package nats

import (
	"fmt"
	"strings"
)

// keyName returns the NATS KV key of a lock key: the key's bytes, with
// every byte a KV key cannot hold, or that would end or split a subject
// token badly, written as '_' and two upper-case hex digits. Kept as they
// are: ASCII letters and digits, '-', '/' and '=', and '.' except at the
// start, at the end and right after another '.' (a KV key may not start
// or end with '.' nor hold ".."). '_' itself is escaped, so every '_' of a
// name starts an escape and the mapping is one to one: distinct lock keys
// never share an entry. A key of n bytes gives a name of at most 3n.
func keyName(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '/', c == '=':
			b.WriteByte(c)
		case c == '.' && i > 0 && i < len(key)-1 && key[i-1] != '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	return b.String()
}

// lockKey returns the lock key of a NATS KV key that keyName made, and
// false for a name keyName does not make.
func lockKey(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		var v byte
		for _, h := range name[i+1 : i+3] {
			switch {
			case '0' <= h && h <= '9':
				v = v<<4 | byte(h-'0')
			case 'A' <= h && h <= 'F':
				v = v<<4 | byte(h-'A'+10)
			default:
				return "", false
			}
		}
		b.WriteByte(v)
		i += 2
	}
	key := b.String()
	if keyName(key) != name {
		return "", false
	}
	return key, true
}
