package dynamo

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/testing/emulators"
)

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	client := &dynamodb.Client{}
	cases := []struct {
		name  string
		api   DynamoDBAPI
		table string
		opts  *Options
	}{
		{"nil api", nil, "locks", nil},
		{"short table name", client, "lk", nil},
		{"long table name", client, strings.Repeat("t", 256), nil},
		{"table name with a slash", client, "app/locks", nil},
		{"key attribute that the locker writes", client, "locks", &Options{KeyAttribute: attrToken}},
		{"key attribute too long", client, "locks", &Options{KeyAttribute: strings.Repeat("k", 256)}},
		{"negative skew", client, "locks", &Options{TrustedClock: true, MaxClockSkew: -time.Second}},
		{"skew over the limit", client, "locks", &Options{TrustedClock: true, MaxClockSkew: clockfree.MaxClockSkew + 1}},
		{"skew without a trusted clock", client, "locks", &Options{MaxClockSkew: time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, err := New(c.api, c.table, c.opts)
			if _, ok := errors.AsType[*fence.InvalidError](err); !ok || l != nil {
				t.Fatalf("New = %v, %v; want nil and a *fence.InvalidError", l, err)
			}
		})
	}
	for _, table := range []string{"abc", "A.b-c_9", strings.Repeat("t", 255)} {
		if _, err := New(client, table, nil); err != nil {
			t.Errorf("New(table %q): %v", table, err)
		}
	}
}

// TestCreateTable checks that CreateTable makes a table a Locker works on,
// with a key attribute of the caller's choice, that a second call is
// harmless, and that a table of another key schema is refused.
func TestCreateTable(t *testing.T) {
	t.Parallel()
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, &TableOptions{KeyAttribute: "lock_id"})
	if err := CreateTable(t.Context(), client, table, &TableOptions{KeyAttribute: "lock_id"}); err != nil {
		t.Fatalf("CreateTable of an existing lease table: %v", err)
	}
	desc, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if bm := desc.Table.BillingModeSummary; bm == nil || bm.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v; want PAY_PER_REQUEST", bm)
	}
	l := newLocker(t, client, table, &Options{KeyAttribute: "lock_id"})
	lease, err := l.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire on a table keyed by lock_id: %v", err)
	}
	wantInfo(t, l, fence.LockInfo{Key: "job", Held: true, Owner: lease.Owner, Token: 1})

	err = CreateTable(t.Context(), client, table, nil) // expects the key "key"
	if _, ok := errors.AsType[*fence.InvalidError](err); !ok {
		t.Fatalf("CreateTable of a table keyed by another attribute: %v; want a *fence.InvalidError", err)
	}
	for _, bad := range []struct {
		table string
		opts  *TableOptions
	}{{"x", nil}, {table, &TableOptions{KeyAttribute: attrHeld}}, {table, &TableOptions{Wait: -time.Second}}} {
		err := CreateTable(t.Context(), client, bad.table, bad.opts)
		if _, ok := errors.AsType[*fence.InvalidError](err); !ok {
			t.Errorf("CreateTable(%q, %+v): %v; want a *fence.InvalidError", bad.table, bad.opts, err)
		}
	}
}

// TestMissingTable checks that calls on a table that does not exist fail
// with the SDK's error reachable and matching fence.ErrStoreMissing, not a
// guess, without reading back a write that cannot have been applied; and
// that Locker.Create then creates the table.
func TestMissingTable(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	client := emulators.DynamoClient(t, f)
	table := uniqueName("fence-missing-")
	l := newLocker(t, client, table, nil)
	wantMissing := func(call string, err error) {
		t.Helper()
		if _, ok := errors.AsType[*types.ResourceNotFoundException](err); !ok || !errors.Is(err, fence.ErrStoreMissing) || errors.Is(err, fence.ErrHeld) {
			t.Fatalf("%s on a missing table: %v; want a wrapped ResourceNotFoundException matching ErrStoreMissing", call, err)
		}
	}
	f.lose("", 0) // resets the counts
	_, err := l.Acquire(t.Context(), "job", time.Minute, nil)
	wantMissing("Acquire", err)
	if n := f.count("GetItem"); n != 0 {
		t.Errorf("Acquire on a missing table read the item back %d times; want 0", n)
	}
	_, err = l.Inspect(t.Context(), "job")
	wantMissing("Inspect", err)
	wantMissing("Break", l.Break(t.Context(), "job"))
	lease := fence.Lease{Key: "job", Owner: "o", Token: 1, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
	_, err = l.Renew(t.Context(), lease)
	wantMissing("Renew", err)
	wantMissing("Release", l.Release(t.Context(), lease))
	if n := f.count("GetItem"); n != 1 {
		t.Errorf("%d GetItem requests on a missing table; want 1, Inspect's", n)
	}

	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { deleteTable(t, client, table) })
	lease, err = l.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire after Create: %v", err)
	}
	wantInfo(t, l, fence.LockInfo{Key: "job", Held: true, Owner: lease.Owner, Token: 1})
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create of an existing table: %v", err)
	}
}

// TestCreateUnsupported checks that Locker.Create says so when the client
// given to New cannot create tables.
func TestCreateUnsupported(t *testing.T) {
	t.Parallel()
	l := newLocker(t, itemsOnly{emulators.DynamoClient(t, nil)}, "fence-never-made", nil)
	err := l.Create(t.Context())
	if !errors.Is(err, errors.ErrUnsupported) || !strings.HasPrefix(err.Error(), "fence/dynamo: create: ") {
		t.Fatalf("Create with a client that cannot create tables: %v; want a fence/dynamo error matching ErrUnsupported", err)
	}
}

// itemsOnly narrows a client to DynamoDBAPI.
type itemsOnly struct{ DynamoDBAPI }

// TestKeyBytes checks that the 2048-byte limit counts bytes of UTF-8. The
// Locker checks it itself: dynalite counts UTF-16 code units for string
// keys, so it accepts keys DynamoDB refuses (an emulator gap).
func TestKeyBytes(t *testing.T) {
	t.Parallel()
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, nil)
	l := newLocker(t, client, table, nil)
	key := strings.Repeat("é", MaxKeyLen/2+1) // 2050 bytes, 1025 runes
	_, err := l.Acquire(t.Context(), key, time.Minute, nil)
	if !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Acquire of a %d-byte key: %v; want ErrInvalid", len(key), err)
	}
	_, err = client.PutItem(t.Context(), &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item:      map[string]types.AttributeValue{DefaultKeyAttribute: &types.AttributeValueMemberS{Value: key}},
	})
	if err == nil {
		t.Logf("emulator gap: dynalite stored a %d-byte partition key, which DynamoDB refuses", len(key))
	}
}
