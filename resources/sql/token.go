package sql

import (
	"fmt"
	"math"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// MaxKeyLen is the longest resource key accepted by Fences and Resource,
// in bytes.
const MaxKeyLen = 1024

// MaxToken is the largest token accepted: tokens are stored in signed
// 64-bit (bigint) columns. Lockers count tokens up from 1, so no real
// token comes near it; a larger one gets a *fence.InvalidError.
const MaxToken fence.Token = math.MaxInt64

// validToken checks that token can be stored in a bigint (the native
// calls; the portable layer checks a Resource's tokens).
func validToken(token fence.Token) error {
	if err := driver.ValidateToken(token); err != nil {
		return err
	}
	if token > MaxToken {
		return &fence.InvalidError{Field: "token", Reason: fmt.Sprintf("%d does not fit a bigint column (at most %d)", token, MaxToken)}
	}
	return nil
}

// validWrite checks the key and token of a fenced write of a native call.
func validWrite(key string, token fence.Token) error {
	if err := driver.ValidateKey("key", key, MaxKeyLen); err != nil {
		return err
	}
	return validToken(token)
}

// asInt64 converts a scanned integer column to int64. Any other type,
// NULL included, is not an integer token.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

// describe names a scanned value that is not a valid token.
func describe(v any) string {
	if v == nil {
		return "NULL"
	}
	if n, ok := asInt64(v); ok {
		return fmt.Sprintf("%d", n)
	}
	return fmt.Sprintf("a value of type %T (%v)", v, v)
}

// judge turns the token stored after a conditional write of token into
// the outcome: nil when the write was admitted (stored == token), a
// *fence.StaleTokenError when a higher token is stored, and a
// *fence.CorruptError when the stored value is no valid token, or is lower
// than token although the conditional write refused it.
func judge(key string, token fence.Token, stored any) error {
	h, ok := asInt64(stored)
	switch {
	case !ok:
		return &fence.CorruptError{Key: key, Reason: "stored token is " + describe(stored) + ", not a positive integer"}
	case h <= 0:
		return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("stored token %d is not positive", h)}
	case uint64(h) == uint64(token):
		return nil
	case uint64(h) > uint64(token):
		return &fence.StaleTokenError{Key: key, Token: token, Highest: fence.Token(h)}
	}
	return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("stored token %d is below %d yet refused it", h, token)}
}
