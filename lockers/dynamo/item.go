package dynamo

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// The attributes of a lease item besides the partition key.
const (
	attrOwner   = "owner"      // S: owner id of the last lease
	attrToken   = "token"      // N: the last token issued, only grows
	attrVersion = "version"    // S: random, new on every write
	attrLease   = "lease_ms"   // N: lease duration in milliseconds
	attrExpires = "expires_ms" // N: writer's wall clock + lease, Unix ms
	attrHeld    = "held"       // BOOL: false once released or broken
	// The value published with a lease (Locker.Publish), and the token of
	// the lease it was published with: a value whose token is not the
	// item's token belongs to an earlier lease and is not shown. Both are
	// absent until the first Publish, and removed by a Publish of "".
	attrValue      = "value"       // B: the value's bytes
	attrValueToken = "value_token" // N: the token it was published with
)

var itemAttributes = []string{attrOwner, attrToken, attrVersion, attrLease, attrExpires, attrHeld, attrValue, attrValueToken}

// maxMillis is the largest millisecond count a time.Duration or a
// time.Time in Unix nanoseconds can hold.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// record is a well-formed lease item.
type record struct {
	owner   string
	token   fence.Token
	version string
	lease   time.Duration
	expires time.Time // on the writer's wall clock
	held    bool
}

// parseValue returns the value published with the lease of token in
// item, "" if none. A value published with an earlier lease (another
// value_token) does not count and is not read. A value_token that is not a
// token, or a value of this lease that is missing, not binary or longer
// than fence.MaxValueLen, gets a *fence.CorruptError naming key; the
// next Publish writes both attributes anew. Acquire, Renew and Release do
// not read the value, so a broken one never stops them.
func parseValue(key string, item map[string]types.AttributeValue, token fence.Token) (string, error) {
	p := parser{key: key, item: item}
	if _, ok := item[attrValueToken]; !ok {
		return "", nil
	}
	if fence.Token(p.uint(attrValueToken, math.MaxUint64)) != token || p.err != nil {
		return "", p.err
	}
	v := p.bytes(attrValue, fence.MaxValueLen)
	return v, p.err
}

// parseItem turns a lease item into a record. ok is false when item is
// empty (the key was never acquired). An item that breaks the invariants
// (someone edited it by hand) gets a *fence.CorruptError naming key.
func parseItem(key string, item map[string]types.AttributeValue) (r record, ok bool, err error) {
	if len(item) == 0 {
		return record{}, false, nil
	}
	p := parser{key: key, item: item}
	r.owner = p.str(attrOwner)
	r.token = fence.Token(p.uint(attrToken, math.MaxUint64))
	r.version = p.str(attrVersion)
	r.lease = time.Duration(p.uint(attrLease, uint64(maxMillis))) * time.Millisecond
	r.expires = time.UnixMilli(int64(p.uint(attrExpires, uint64(maxMillis))))
	r.held = p.bool(attrHeld)
	switch {
	case p.err != nil:
		return record{}, false, p.err
	case r.token == 0:
		return record{}, false, &fence.CorruptError{Key: key, Reason: "token is 0"}
	case r.lease <= 0:
		return record{}, false, &fence.CorruptError{Key: key, Reason: "lease_ms is 0"}
	}
	return r, true, nil
}

// parser reads typed attributes of one item and keeps the first error.
type parser struct {
	key  string
	item map[string]types.AttributeValue
	err  error
}

func (p *parser) fail(name, reason string, err error) {
	if p.err == nil {
		p.err = &fence.CorruptError{Key: p.key, Reason: fmt.Sprintf("attribute %s %s", name, reason), Err: err}
	}
}

// attr returns the attribute name, or nil after recording that it is
// missing.
func (p *parser) attr(name string) types.AttributeValue {
	v, ok := p.item[name]
	if !ok || v == nil {
		p.fail(name, "is missing", nil)
		return nil
	}
	return v
}

func (p *parser) str(name string) string {
	switch v := p.attr(name).(type) {
	case nil:
	case *types.AttributeValueMemberS:
		if v.Value == "" {
			p.fail(name, "is empty", nil)
		}
		return v.Value
	default:
		p.fail(name, fmt.Sprintf("is a %s, not a string", typeName(v)), nil)
	}
	return ""
}

func (p *parser) uint(name string, limit uint64) uint64 {
	switch v := p.attr(name).(type) {
	case nil:
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseUint(v.Value, 10, 64)
		if err != nil {
			p.fail(name, fmt.Sprintf("%q is not a whole number from 0 to %d", v.Value, limit), err)
			return 0
		}
		if n > limit {
			p.fail(name, fmt.Sprintf("%d is more than %d", n, limit), nil)
			return 0
		}
		return n
	default:
		p.fail(name, fmt.Sprintf("is a %s, not a number", typeName(v)), nil)
	}
	return 0
}

// bytes reads a binary attribute of at most limit bytes.
func (p *parser) bytes(name string, limit int) string {
	switch v := p.attr(name).(type) {
	case nil:
	case *types.AttributeValueMemberB:
		if len(v.Value) > limit {
			p.fail(name, fmt.Sprintf("has %d bytes, more than %d", len(v.Value), limit), nil)
			return ""
		}
		return string(v.Value)
	default:
		p.fail(name, fmt.Sprintf("is a %s, not binary", typeName(v)), nil)
	}
	return ""
}

func (p *parser) bool(name string) bool {
	switch v := p.attr(name).(type) {
	case nil:
	case *types.AttributeValueMemberBOOL:
		return v.Value
	default:
		p.fail(name, fmt.Sprintf("is a %s, not a boolean", typeName(v)), nil)
	}
	return false
}

// typeName names the DynamoDB type of v for error messages.
func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "string"
	case *types.AttributeValueMemberN:
		return "number"
	case *types.AttributeValueMemberB:
		return "binary"
	case *types.AttributeValueMemberBOOL:
		return "boolean"
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberM:
		return "map"
	case *types.AttributeValueMemberL:
		return "list"
	case *types.AttributeValueMemberSS:
		return "string set"
	case *types.AttributeValueMemberNS:
		return "number set"
	case *types.AttributeValueMemberBS:
		return "binary set"
	}
	return fmt.Sprintf("%T", v)
}
