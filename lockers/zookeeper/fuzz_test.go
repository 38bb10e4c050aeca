package zookeeper

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// FuzzParseURL: parsing never panics; an error matches fence.ErrInvalid
// and never shows the password; an accepted URL has servers, a root the
// Locker accepts and a session timeout it accepts.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"zk://a", "zk://u:pw@a:1,b:2/x/y?session-timeout=4s", "zk://a//", "zk://[::1]/x", "zk://a?connect-timeout=1s", "zk://a,,b", "zk:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q): %v does not match fence.ErrInvalid", raw, err)
			}
			if pw, ok := u.User.Password(); ok && len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("parseURL(%q): %q shows the password", raw, err)
			}
			return
		}
		if len(c.servers) == 0 {
			t.Fatalf("parseURL(%q) accepted no servers", raw)
		}
		if err := checkRoot(c.root); err != nil {
			t.Fatalf("parseURL(%q) accepted root %q: %v", raw, c.root, err)
		}
		if c.sessionTimeout*2/3 < MinTTL {
			t.Fatalf("parseURL(%q) accepted session timeout %v", raw, c.sessionTimeout)
		}
	})
}

// FuzzDecodeLast: decoding never panics; a record it accepts is exactly
// the encoding of what it returns (the token of a record written with its
// lock node being the record's mzxid).
func FuzzDecodeLast(f *testing.F) {
	for _, s := range []string{"", lastMagic, string(encodeLast("owner", 7)), lastMagic + "0 x", lastMagic + "07 x", lastMagic + "18446744073709551616 x", lastMagic + "1 \xff", string(encodeLastHere("owner")), lastHereMagic, lastHereMagic + "\xff"} {
		f.Add([]byte(s))
	}
	const mzxid = 42
	f.Fuzz(func(t *testing.T, data []byte) {
		owner, token, err := decodeLast("k", data, &zk.Stat{Mzxid: mzxid})
		if err != nil {
			var ce *fence.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("decodeLast(%q): %v is not a *fence.CorruptError", data, err)
			}
			return
		}
		got := string(encodeLast(owner, token))
		if strings.HasPrefix(string(data), lastHereMagic) {
			if token != mzxid {
				t.Fatalf("decodeLast(%q) = token %d; want the mzxid %d", data, token, mzxid)
			}
			got = string(encodeLastHere(owner))
		}
		if got != string(data) {
			t.Fatalf("decodeLast(%q) = %q, %d, which encodes as %q", data, owner, token, got)
		}
	})
}

// FuzzEscape: every key becomes one path component that ZooKeeper
// accepts, not the root's ".last", and distinct keys stay distinct.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"a", ".", "..", ".last", "a/b", "%2F", "é", "\x00"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := escape(a), escape(b)
		if (a == b) != (ea == eb) {
			t.Fatalf("escape(%q) = %q and escape(%q) = %q", a, ea, b, eb)
		}
		if a == "" {
			return
		}
		if strings.HasPrefix(ea, ".") || strings.Contains(ea, "/") {
			t.Fatalf("escape(%q) = %q", a, ea)
		}
		if err := checkRoot("/r/" + ea); err != nil {
			t.Fatalf("escape(%q) = %q: %v", a, ea, err)
		}
	})
}

// FuzzParseNode: parsing a lock node's data never panics; data of this
// package that it accepts is exactly the encoding of the owner and value
// it returns.
func FuzzParseNode(f *testing.F) {
	for _, s := range []string{"", nodeMagic, string(encodeNode("owner")), string(encodeNodeValue("owner", "v\x00\xff")), nodeMagic + "\x00v", nodeMagic + "\xff", "10.0.0.1", "fence/9 x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		owner, value, err := parseNode("k", "n", data, 5)
		if err != nil {
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Fatalf("parseNode(%q): %v is not a *fence.CorruptError", data, err)
			}
			return
		}
		if owner == "" {
			t.Fatalf("parseNode(%q) gave no owner", data)
		}
		if strings.HasPrefix(string(data), magic) {
			if got := string(encodeNodeValue(owner, value)); got != string(data) && !(value == "" && got+"\x00" == string(data)) {
				t.Fatalf("parseNode(%q) = %q, %q, which encodes as %q", data, owner, value, got)
			}
		} else if value != "" {
			t.Fatalf("parseNode(%q) of another client's node gave value %q", data, value)
		}
	})
}
