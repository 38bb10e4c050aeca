package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// noTransactions is the gap of the emulator the tests run on: dynalite
// 4.0.0 answers TransactWriteItems (and TransactGetItems) with
// UnknownOperationException. The tests of the transaction skip there;
// they run where FENCE_DYNAMO_ENDPOINT names an endpoint that has
// transactions (they pass on DynamoDB Local 1.25.1).
const noTransactions = "dynalite has no TransactWriteItems (UnknownOperationException): the one-transaction LockAll is not tested on this endpoint (it is on DynamoDB Local)"

var (
	txOnce sync.Once
	txHas  bool
	txErr  error
)

// hasTransactions reports whether the test endpoint knows
// TransactWriteItems, asking it once per test binary with a transaction
// on a table that does not exist.
func hasTransactions(t testing.TB) bool {
	t.Helper()
	client := emulators.DynamoClient(t, nil)
	txOnce.Do(func() {
		_, err := client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
			ConditionCheck: &types.ConditionCheck{
				TableName:                aws.String(uniqueName("fence-no-table-")),
				Key:                      map[string]types.AttributeValue{DefaultKeyAttribute: &types.AttributeValueMemberS{Value: "k"}},
				ConditionExpression:      aws.String("attribute_exists(#k)"),
				ExpressionAttributeNames: map[string]string{"#k": DefaultKeyAttribute},
			},
		}}})
		code, isAPI := errors.AsType[apiError](err)
		switch {
		case isAPI && code.ErrorCode() == "UnknownOperationException":
		case err == nil || isAPI:
			txHas = true
		default:
			txErr = err
		}
	})
	if txErr != nil {
		t.Fatalf("asking the endpoint for TransactWriteItems: %v", txErr)
	}
	return txHas
}

// plainAPI is a client that makes no transactions: a store over it is
// no driver.MultiAcquirer.
type plainAPI struct{ c *dynamodb.Client }

func (p plainAPI) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return p.c.GetItem(ctx, in, optFns...)
}

func (p plainAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return p.c.UpdateItem(ctx, in, optFns...)
}

// suiteAPI returns the client the conformance suite runs on: client, or
// on an endpoint without transactions a plainAPI over it, so that the
// suite runs LockAll one key at a time there, as the Session does after
// the driver's first ErrUnsupported (TestLockAllWithoutTransactions).
func suiteAPI(t *testing.T, client *dynamodb.Client) DynamoDBAPI {
	if hasTransactions(t) {
		return client
	}
	t.Log(noTransactions + "; the suite's LockAll cases run one key at a time")
	return plainAPI{client}
}

// TestLockAllInOneTransaction: on an endpoint with transactions,
// Session.LockAll of N keys is two requests (one BatchGetItem, one
// TransactWriteItems), a busy key is one request and writes nothing, and
// a transaction whose answer was lost is repeated by the SDK with the
// same ClientRequestToken, which DynamoDB applies once.
func TestLockAllInOneTransaction(t *testing.T) {
	t.Parallel()
	if !hasTransactions(t) {
		t.Skip(noTransactions)
	}
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	f := newFaulty(t)
	l := newLocker(t, emulators.DynamoClient(t, f), table, nil)
	check := newLocker(t, plain, table, nil)
	sess := session(t, l.Locker)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	f.lose("", 0)
	hs, err := sess.LockAll(t.Context(), keys, nil)
	if err != nil {
		t.Fatalf("LockAll of 8 keys: %v", err)
	}
	if f.count("BatchGetItem") != 1 || f.count("TransactWriteItems") != 1 || f.total() != 2 {
		t.Errorf("LockAll of 8 keys made %d requests (%d BatchGetItem, %d TransactWriteItems); want 2, one of each", f.total(), f.count("BatchGetItem"), f.count("TransactWriteItems"))
	}
	releaseAll(t, hs)
	busy := acquire(t, check, "e")
	f.lose("", 0)
	before := f.total()
	_, err = sess.LockAll(t.Context(), keys, nil)
	if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Key != "e" || he.Token != busy.Token {
		t.Fatalf("LockAll with %q held: %v; want a *fence.HeldError for it", "e", err)
	}
	if n := f.total() - before; n != 1 || f.count("TransactWriteItems") != 0 {
		t.Errorf("LockAll with a key held made %d requests (%d transactions); want 1 read", n, f.count("TransactWriteItems"))
	}
	if err := check.Release(t.Context(), busy); err != nil {
		t.Fatal(err)
	}
	f.lose("TransactWriteItems", 1)
	hs, err = sess.LockAll(t.Context(), keys, nil)
	if err != nil {
		t.Fatalf("LockAll whose transaction lost its answer: %v", err)
	}
	for _, h := range hs {
		if info := inspect(t, check, h.Key()); !info.Held || info.Token != h.Token() {
			t.Fatalf("after a lost answer %q shows %+v; want held with token %d", h.Key(), info, h.Token())
		}
	}
	releaseAll(t, hs)
}

// TestLockAllTransactionRaced: a key taken between the read and the
// transaction cancels the whole transaction, and the HeldError names it
// (CancellationReasons).
func TestLockAllTransactionRaced(t *testing.T) {
	t.Parallel()
	if !hasTransactions(t) {
		t.Skip(noTransactions)
	}
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	rival := newLocker(t, plain, table, nil)
	var took fence.Lease
	race := &beforeOp{op: "TransactWriteItems", next: newFaulty(t), do: func() { took = acquire(t, rival, "b") }}
	l := newLocker(t, emulators.DynamoClient(t, race), table, nil)
	m := driver.LockerOf(l.Locker).(driver.MultiAcquirer)
	_, err := m.AcquireAll(t.Context(), []string{"a", "b", "c"}, []string{fence.NewOwnerID(), fence.NewOwnerID(), fence.NewOwnerID()}, time.Minute)
	if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Key != "b" || he.Token != took.Token {
		t.Fatalf("AcquireAll raced on %q: %v; want a *fence.HeldError for it with token %d", "b", err, took.Token)
	}
	for _, k := range []string{"a", "c"} {
		if info := inspect(t, rival, k); info.Token != 0 {
			t.Fatalf("a cancelled transaction left %q with %+v", k, info)
		}
	}
}

// TestLockAllWithoutTransactions: on an endpoint that knows no
// TransactWriteItems, the driver answers errors.ErrUnsupported and the
// Session takes the keys one at a time; the driver asks the endpoint
// once, not at every LockAll, and a set with a busy key is still refused
// after one read, with nothing written.
func TestLockAllWithoutTransactions(t *testing.T) {
	t.Parallel()
	if hasTransactions(t) {
		t.Skip("the endpoint has TransactWriteItems")
	}
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	f := newFaulty(t)
	l := newLocker(t, emulators.DynamoClient(t, f), table, nil)
	sess := session(t, l.Locker)
	for round := range 2 {
		f.lose("", 0)
		hs, err := sess.LockAll(t.Context(), []string{"a", "b", "c"}, nil)
		if err != nil {
			t.Fatalf("LockAll without transactions (round %d): %v", round, err)
		}
		if n, want := f.count("TransactWriteItems"), 1-round; n != want {
			t.Errorf("round %d made %d TransactWriteItems requests; want %d", round, n, want)
		}
		if n := f.count("UpdateItem"); n != 3 {
			t.Errorf("round %d made %d UpdateItem requests; want 3, one per key", round, n)
		}
		releaseAll(t, hs)
	}
	check := newLocker(t, plain, table, nil)
	busy := acquire(t, check, "c")
	f.lose("", 0)
	_, err := sess.LockAll(t.Context(), []string{"a", "b", "c"}, nil)
	if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Key != "c" {
		t.Fatalf("LockAll with %q held: %v; want a *fence.HeldError for it", "c", err)
	}
	if f.count("BatchGetItem") != 1 || f.count("UpdateItem") != 0 || f.count("TransactWriteItems") != 0 || f.count("GetItem") != 0 {
		t.Errorf("LockAll with a key held made %d BatchGetItem, %d GetItem, %d UpdateItem, %d TransactWriteItems requests; want 1 BatchGetItem only",
			f.count("BatchGetItem"), f.count("GetItem"), f.count("UpdateItem"), f.count("TransactWriteItems"))
	}
	if info := inspect(t, check, "a"); info.Token != 2 || info.Held {
		t.Errorf("a refused LockAll left %q with %+v; want free with token 2", "a", info)
	}
	if err := check.Release(t.Context(), busy); err != nil {
		t.Fatal(err)
	}
}

// TestLockAllTooManyKeys: more keys than one transaction holds are
// refused by the driver with errors.ErrUnsupported before any request,
// and the Session takes them one at a time.
func TestLockAllTooManyKeys(t *testing.T) {
	t.Parallel()
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	f := newFaulty(t)
	l := newLocker(t, emulators.DynamoClient(t, f), table, nil)
	m, ok := driver.LockerOf(l.Locker).(driver.MultiAcquirer)
	if !ok {
		t.Fatal("a store over a *dynamodb.Client is no driver.MultiAcquirer")
	}
	keys := make([]string, MaxLockAllKeys+1)
	owners := make([]string, len(keys))
	for i := range keys {
		keys[i], owners[i] = fmt.Sprintf("k%03d", i), fence.NewOwnerID()
	}
	if _, err := m.AcquireAll(t.Context(), keys, owners, time.Minute); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("AcquireAll of %d keys: %v; want an error matching errors.ErrUnsupported", len(keys), err)
	}
	if f.total() != 0 {
		t.Fatalf("a refused AcquireAll made %d requests", f.total())
	}
	hs, err := session(t, l.Locker).LockAll(t.Context(), keys, nil)
	if err != nil {
		t.Fatalf("LockAll of %d keys: %v", len(keys), err)
	}
	releaseAll(t, hs)
}

// TestAcquireAllOnAHangingStore: AcquireAll and Session.LockAll return
// once their ctx is done when the store accepts requests and never
// answers.
func TestAcquireAllOnAHangingStore(t *testing.T) {
	t.Parallel()
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	l := newLocker(t, emulators.DynamoClient(t, hang{}), table, nil)
	m := driver.LockerOf(l.Locker).(driver.MultiAcquirer)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := m.AcquireAll(ctx, []string{"a", "b"}, []string{fence.NewOwnerID(), fence.NewOwnerID()}, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AcquireAll on a store that never answers: %v; want an error wrapping context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	// The Session reads the keys back after an unknown outcome, for up
	// to its CallTimeout past ctx.
	sess, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: time.Minute, CallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close(context.WithoutCancel(t.Context())) }()
	if _, err := sess.LockAll(ctx, []string{"a", "b"}, nil); err == nil {
		t.Fatal("LockAll on a store that never answers succeeded")
	}
}

// TestAcquireAllHangsMidway: the store answers the read and never
// answers the transaction; AcquireAll returns once its ctx is done, with
// its error, and the Session that called it returns too.
func TestAcquireAllHangsMidway(t *testing.T) {
	t.Parallel()
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	mid := &hangOn{op: "TransactWriteItems", next: newFaulty(t)}
	l := newLocker(t, emulators.DynamoClient(t, mid), table, nil)
	m := driver.LockerOf(l.Locker).(driver.MultiAcquirer)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := m.AcquireAll(ctx, []string{"a", "b"}, []string{fence.NewOwnerID(), fence.NewOwnerID()}, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("AcquireAll whose transaction is never answered: %v; want an error wrapping context.DeadlineExceeded", err)
	}
	if mid.hung.Load() != 1 {
		t.Fatalf("%d transactions were sent; want 1, after the read", mid.hung.Load())
	}
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := session(t, l.Locker).LockAll(ctx, []string{"a", "b"}, nil); err == nil {
		t.Fatal("LockAll whose transaction is never answered succeeded")
	}
	check := newLocker(t, plain, table, nil)
	for _, k := range []string{"a", "b"} {
		if info := inspect(t, check, k); info.Held {
			t.Fatalf("a transaction never sent left %q held: %+v", k, info)
		}
	}
}

// hangOn forwards every request but those of op, which it accepts and
// never answers until their context ends.
type hangOn struct {
	op   string
	next http.RoundTripper
	hung atomic.Int64
}

func (h *hangOn) RoundTrip(r *http.Request) (*http.Response, error) {
	if operation(r) == h.op {
		h.hung.Add(1)
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return h.next.RoundTrip(r)
}

// beforeOp runs do once before forwarding the first request of op.
type beforeOp struct {
	op   string
	next http.RoundTripper
	do   func()
	once sync.Once
}

func (b *beforeOp) RoundTrip(r *http.Request) (*http.Response, error) {
	if operation(r) == b.op {
		b.once.Do(b.do)
	}
	return b.next.RoundTrip(r)
}

func session(t *testing.T, l *fence.Locker) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.WithoutCancel(t.Context())) })
	return s
}

func acquire(t *testing.T, l *testLocker, key string) fence.Lease {
	t.Helper()
	lease, err := l.Acquire(t.Context(), key, time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", key, err)
	}
	return lease
}

func releaseAll(t *testing.T, hs []*fence.Handle) {
	t.Helper()
	for _, h := range hs {
		if err := h.Release(t.Context()); err != nil {
			t.Fatalf("Release(%q): %v", h.Key(), err)
		}
	}
}
