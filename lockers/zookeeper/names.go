package zookeeper

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// escape returns key as one path component: ASCII letters, digits, '_',
// '-' and '.' (but a leading '.') stay, every other byte is %XX. So a
// component never is "." or "..", never starts with '.' (the root's
// ".last" is no key's) and holds nothing ZooKeeper refuses.
func escape(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.' && i > 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lockMark is what Curator's lock nodes are named by: the sequence number
// follows the last lockMark of a name.
const lockMark = "lock-"

// newNodePrefix returns the name, before ZooKeeper's sequence number, of
// a new lock node: Curator's protected form "_c_" UUID "-lock-", with a
// random (version 4) UUID, which finds the node again after an answer
// lost.
func newNodePrefix() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return "_c_" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + "-" + lockMark
}

// sortKey is what Curator sorts a child of a lock path by: what follows
// the last "lock-" in its name, or the whole name if it has none.
func sortKey(name string) string {
	if i := strings.LastIndex(name, lockMark); i >= 0 {
		return name[i+len(lockMark):]
	}
	return name
}

// sortChildren sorts the children of a lock path in Curator's order: the
// first holds the lock.
func sortChildren(names []string) {
	sort.SliceStable(names, func(i, j int) bool { return sortKey(names[i]) < sortKey(names[j]) })
}

// The data of the nodes this package writes. A lock node holds
// nodeMagic + owner; a last record holds lastMagic + token + " " + owner,
// or lastHereMagic + owner when written in the transaction that created
// the lock node: the token is then the record's mzxid.
const (
	nodeMagic     = "fence/1 owner "
	lastMagic     = "fence/1 last "
	lastHereMagic = "fence/1 last-mzxid "
	magic         = "fence/"
)

func encodeNode(owner string) []byte { return []byte(nodeMagic + owner) }

func encodeLast(owner string, token fence.Token) []byte {
	return []byte(lastMagic + strconv.FormatUint(uint64(token), 10) + " " + owner)
}

// nodeOwner returns the owner a lock node's data names. A node of this
// package names its owner; any other node (a Curator client writes its IP
// address) is described by its data when printable and by its session
// otherwise, so that a holder always has an owner. Data that starts as
// this package's but does not parse is a *fence.CorruptError.
func nodeOwner(key, name string, data []byte, session int64) (string, error) {
	owner, _, err := parseNode(key, name, data, session)
	return owner, err
}

// parseNode returns the owner a lock node's data names (see nodeOwner)
// and the value published with its lease: what follows the owner id and a
// NUL byte (see encodeNodeValue), "" when nothing follows it.
func parseNode(key, name string, data []byte, session int64) (owner, value string, err error) {
	s := string(data)
	if strings.HasPrefix(s, magic) {
		rest, ok := strings.CutPrefix(s, nodeMagic)
		owner, value, _ := strings.Cut(rest, "\x00")
		if !ok || owner == "" || !utf8.ValidString(owner) || len(value) > fence.MaxValueLen {
			return "", "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("lock node %s holds %q, not %q, an owner id and a value of at most %d bytes", name, clip(s), nodeMagic, fence.MaxValueLen)}
		}
		return owner, value, nil
	}
	if printable(s) && s != "" {
		return fmt.Sprintf("zookeeper node %s of session 0x%x, data %q", name, session, s), "", nil
	}
	return fmt.Sprintf("zookeeper node %s of session 0x%x", name, session), "", nil
}

// encodeNodeValue is the data of owner's lock node with value published:
// encodeNode's, then a NUL byte (no owner id holds one) and the value's
// bytes; encodeNode's alone for an empty value.
func encodeNodeValue(owner, value string) []byte {
	if value == "" {
		return encodeNode(owner)
	}
	return []byte(nodeMagic + owner + "\x00" + value)
}

// encodeLastHere is the data of a last record written in the
// transaction that creates the lock node of owner's lease.
func encodeLastHere(owner string) []byte { return []byte(lastHereMagic + owner) }

// decodeLast reads a last record's data; st is its stat.
func decodeLast(key string, data []byte, st *zk.Stat) (owner string, token fence.Token, err error) {
	corrupt := func(why string, err error) (string, fence.Token, error) {
		return "", 0, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("last record %q %s", clip(string(data)), why), Err: err}
	}
	if owner, ok := strings.CutPrefix(string(data), lastHereMagic); ok {
		if owner == "" || !utf8.ValidString(owner) {
			return corrupt("has no owner id", nil)
		}
		if st == nil || st.Mzxid <= 0 {
			return corrupt("has no mzxid", nil)
		}
		return owner, fence.Token(st.Mzxid), nil
	}
	rest, ok := strings.CutPrefix(string(data), lastMagic)
	if !ok {
		return corrupt("does not start with "+strconv.Quote(lastMagic), nil)
	}
	num, owner, ok := strings.Cut(rest, " ")
	if !ok || owner == "" || !utf8.ValidString(owner) {
		return corrupt("has no owner id after its token", nil)
	}
	t, err := strconv.ParseUint(num, 10, 64)
	if err != nil || t == 0 || strconv.FormatUint(t, 10) != num {
		return corrupt("has no valid token", err)
	}
	return owner, fence.Token(t), nil
}

func printable(s string) bool {
	if len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
