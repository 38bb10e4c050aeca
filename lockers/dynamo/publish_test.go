package dynamo

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// TestPublishIsNoRenewal: in clock-free mode a Publish writes no new
// version, so a contender that started watching before it takes the key
// over a full lease after its first look, as if the holder had only
// died; in trusted-clock mode the stored expiry stays.
func TestPublishIsNoRenewal(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		t.Run(map[bool]string{false: "ClockFree", true: "TrustedClock"}[trusted], func(t *testing.T) {
			t.Parallel()
			holder, contender, hc, cc := twoLockers(t, trusted, 0)
			lease, err := holder.Acquire(t.Context(), "job", MinTTL, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantHeld(t, contender, "job", "on the first look")
			hc.Advance(MinTTL / 2)
			cc.Advance(MinTTL / 2)
			if err := holder.Publish(t.Context(), lease, "10.0.0.7:8080"); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if info := inspect(t, contender, "job"); !info.Held || info.Value != "10.0.0.7:8080" {
				t.Fatalf("Inspect after Publish = %+v; want held with the value", info)
			}
			cc.Advance(MinTTL/2 + time.Millisecond)
			wantTaken(t, contender, "job", lease.Token+1, "a full lease after the first look, with a Publish between")
			if info := inspect(t, contender, "job"); info.Value != "" {
				t.Fatalf("the new lease shows the old holder's value %q", info.Value)
			}
		})
	}
}

// TestPublishOnItemsOfEarlierReleases: items written before values
// existed (no value attributes) take a Publish as they are; DynamoDB has
// no schema of attributes, so the table needs nothing new (Create adds
// nothing).
func TestPublishOnItemsOfEarlierReleases(t *testing.T) {
	t.Parallel()
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, nil)
	l := newLocker(t, client, table, &Options{TrustedClock: true})
	putItem(t, client, table, goodItem("old"))
	if info := inspect(t, l, "old"); !info.Held || info.Token != 7 || info.Value != "" {
		t.Fatalf("Inspect of an item of an earlier release = %+v; want held, token 7, no value", info)
	}
	lease := fence.Lease{Key: "old", Owner: "o", Token: 7, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
	if err := l.Publish(t.Context(), lease, "v"); err != nil {
		t.Fatalf("Publish on an item of an earlier release: %v", err)
	}
	if info := inspect(t, l, "old"); info.Value != "v" {
		t.Fatalf("Inspect after Publish shows %q; want %q", info.Value, "v")
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create on an existing table: %v", err)
	}
}

// TestCorruptValues stores value attributes edited by hand. Inspect
// answers with a *fence.CorruptError while the value is the current
// lease's; a broken value of an earlier lease is not read. Acquire,
// Renew and Release do not read values, so they work, and the next
// Publish writes a good value over a broken one.
func TestCorruptValues(t *testing.T) {
	t.Parallel()
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, nil)
	l := newLocker(t, client, table, &Options{TrustedClock: true})
	for _, c := range []struct {
		name    string
		corrupt bool
		edit    func(map[string]types.AttributeValue)
	}{
		{"value is a string", true, func(i map[string]types.AttributeValue) {
			i[attrValueToken] = &types.AttributeValueMemberN{Value: "7"}
			i[attrValue] = &types.AttributeValueMemberS{Value: "x"}
		}},
		{"value is too long", true, func(i map[string]types.AttributeValue) {
			i[attrValueToken] = &types.AttributeValueMemberN{Value: "7"}
			i[attrValue] = &types.AttributeValueMemberB{Value: []byte(strings.Repeat("x", fence.MaxValueLen+1))}
		}},
		{"value missing", true, func(i map[string]types.AttributeValue) {
			i[attrValueToken] = &types.AttributeValueMemberN{Value: "7"}
		}},
		{"value_token is a string", true, func(i map[string]types.AttributeValue) {
			i[attrValueToken] = &types.AttributeValueMemberS{Value: "7"}
			i[attrValue] = &types.AttributeValueMemberB{Value: []byte("x")}
		}},
		{"value_token is negative", true, func(i map[string]types.AttributeValue) {
			i[attrValueToken] = &types.AttributeValueMemberN{Value: "-7"}
			i[attrValue] = &types.AttributeValueMemberB{Value: []byte("x")}
		}},
		{"a broken value of an earlier lease", false, func(i map[string]types.AttributeValue) {
			i[attrValueToken] = &types.AttributeValueMemberN{Value: "6"}
			i[attrValue] = &types.AttributeValueMemberS{Value: "x"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := uniqueName("corrupt-value-")
			item := goodItem(key)
			c.edit(item)
			putItem(t, client, table, item)
			info, err := l.Inspect(t.Context(), key)
			switch {
			case c.corrupt:
				wantCorrupt(t, err, "Inspect", key)
			case err != nil:
				t.Fatalf("Inspect: %v", err)
			case info.Value != "":
				t.Fatalf("Inspect shows the value %q of an earlier lease", info.Value)
			}
			lease := fence.Lease{Key: key, Owner: "o", Token: 7, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
			if lease, err = l.Renew(t.Context(), lease); err != nil {
				t.Fatalf("Renew with a broken value: %v", err)
			}
			if err := l.Publish(t.Context(), lease, "good"); err != nil {
				t.Fatalf("Publish over a broken value: %v", err)
			}
			if info := inspect(t, l, key); info.Value != "good" {
				t.Fatalf("after Publish Inspect shows %q", info.Value)
			}
			if err := l.Release(t.Context(), lease); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}

// TestPublishOnAHangingStore: Publish returns once its ctx is done when
// the store accepts the request and never answers.
func TestPublishOnAHangingStore(t *testing.T) {
	t.Parallel()
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, nil)
	l := newLocker(t, emulators.DynamoClient(t, hang{}), table, nil)
	lease := fence.Lease{Key: "k", Owner: fence.NewOwnerID(), Token: 1, TTL: MinTTL, ValidUntil: time.Now().Add(time.Hour)}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := l.Publish(ctx, lease, "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Publish on a store that never answers returned %v; want an error wrapping context.DeadlineExceeded", err)
	}
}

// hang accepts every request and never answers it, until its context
// ends: a store that stopped answering.
type hang struct{}

func (hang) RoundTrip(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

func inspect(t *testing.T, l *testLocker, key string) fence.LockInfo {
	t.Helper()
	info, err := l.Inspect(t.Context(), key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	return info
}

// FuzzParseValue feeds parseValue arbitrary value attributes: it never
// panics, refuses with a *fence.CorruptError only, and what it accepts
// is the current lease's value, byte for byte.
func FuzzParseValue(f *testing.F) {
	f.Add("7", []byte("10.0.0.7:8080"), uint64(7), false, false)
	f.Add("6", []byte("x"), uint64(7), true, false)
	f.Add("-1", []byte{0, 0xff}, uint64(7), false, true)
	f.Add("18446744073709551615", []byte{}, uint64(18446744073709551615), false, false)
	f.Fuzz(func(t *testing.T, valueToken string, value []byte, token uint64, valueAsString, tokenAsString bool) {
		item := map[string]types.AttributeValue{
			attrValueToken: &types.AttributeValueMemberN{Value: valueToken},
			attrValue:      &types.AttributeValueMemberB{Value: value},
		}
		if valueAsString {
			item[attrValue] = &types.AttributeValueMemberS{Value: string(value)}
		}
		if tokenAsString {
			item[attrValueToken] = &types.AttributeValueMemberS{Value: valueToken}
		}
		got, err := parseValue("k", item, fence.Token(token))
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseValue failed with %v; want a CorruptError that does not match ErrInvalid", err)
			}
			return
		}
		n, perr := strconv.ParseUint(valueToken, 10, 64)
		if got != "" && (got != string(value) || valueAsString || tokenAsString || perr != nil || n != token || len(got) > fence.MaxValueLen) {
			t.Fatalf("parseValue accepted %q (token %q for lease %d, string %v/%v)", got, valueToken, token, valueAsString, tokenAsString)
		}
	})
}
