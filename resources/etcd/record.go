package etcd

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/fencekit/fence"
)

// A record is the value of one etcd key: recordPrefix, the token of the
// write that stored it in tokenDigits decimal digits (zero-padded, so
// that records compare bytewise as their tokens do), a space, and either
// kindValue followed by the value's bytes, or kindTombstone alone.
const (
	recordPrefix  = "fence1 "
	tokenDigits   = 20 // 2^64-1 has 20 digits
	kindValue     = 'v'
	kindTombstone = 't'
	headerLen     = len(recordPrefix) + tokenDigits + 2
)

// record is a parsed record.
type record struct {
	token     fence.Token
	tombstone bool
	value     []byte // nil for a tombstone
}

// paddedToken returns t in tokenDigits decimal digits.
func paddedToken(t fence.Token) string {
	s := strconv.FormatUint(uint64(t), 10)
	return "00000000000000000000"[len(s):] + s
}

// encodeRecord returns the record of a write with token: value's, or a
// tombstone when tombstone is set.
func encodeRecord(token fence.Token, tombstone bool, value []byte) string {
	var b bytes.Buffer
	b.Grow(headerLen + len(value))
	b.WriteString(recordPrefix)
	b.WriteString(paddedToken(token))
	b.WriteByte(' ')
	if tombstone {
		b.WriteByte(kindTombstone)
	} else {
		b.WriteByte(kindValue)
		b.Write(value)
	}
	return b.String()
}

// Bounds of the Compare that admits a write with token t: the stored
// record must sort after lowestRecord (so that a value of another form,
// or of token 0, is not written over) and before upperBound(t), which
// sorts after every record of a token up to t and before every record of
// a higher one (the byte after the digits of a record is a space, which
// sorts before '!').
const lowestRecord = recordPrefix + "00000000000000000000 ~"

func upperBound(t fence.Token) string { return recordPrefix + paddedToken(t) + "!" }

// parseRecord parses the record stored under name, or returns a
// *fence.CorruptError when it is not one this package writes.
func parseRecord(name string, v []byte) (record, error) {
	corrupt := func(reason string) (record, error) {
		return record{}, &fence.CorruptError{Key: name, Reason: reason}
	}
	if len(v) < headerLen || string(v[:len(recordPrefix)]) != recordPrefix {
		return corrupt(fmt.Sprintf("value %s is not a record: want %q, %d digits, a space and %q or %q", quoteValue(v), recordPrefix, tokenDigits, kindValue, kindTombstone))
	}
	digits := v[len(recordPrefix) : len(recordPrefix)+tokenDigits]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return corrupt(fmt.Sprintf("token %q is not %d decimal digits", digits, tokenDigits))
		}
	}
	n, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return corrupt(fmt.Sprintf("token %q is above 2^64-1", digits))
	}
	if n == 0 {
		return corrupt("token 0 is never written")
	}
	if v[headerLen-2] != ' ' {
		return corrupt("no space after the token")
	}
	switch rest := v[headerLen:]; v[headerLen-1] {
	case kindValue:
		return record{token: fence.Token(n), value: rest}, nil
	case kindTombstone:
		if len(rest) != 0 {
			return corrupt(fmt.Sprintf("a tombstone with %d bytes after it", len(rest)))
		}
		return record{token: fence.Token(n), tombstone: true}, nil
	default:
		return corrupt(fmt.Sprintf("kind %q is neither %q (a value) nor %q (a tombstone)", v[headerLen-1], kindValue, kindTombstone))
	}
}

// quoteValue quotes the start of a stored value for an error message.
func quoteValue(v []byte) string {
	const max = 40
	if len(v) > max {
		return fmt.Sprintf("%q... (%d bytes)", v[:max], len(v))
	}
	return fmt.Sprintf("%q", v)
}
