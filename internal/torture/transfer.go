package torture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// The transfer workload (Config.Transfer) moves money between accounts
// under multi-key locks. The run's lease keys are account ids; each
// account is a row of an accounts table in the pair's SQL database,
// created with InitialBalance. A worker repeatedly takes two or three
// accounts with fence.Session.LockAll, in a random order (so that
// callers cross orders), reads their balances in one transaction, and
// writes them back in another with a random amount moved from the first
// to the others, recording each leg in a transfers table in the same
// transaction. Fenced, both transactions first check each account's
// fence row with the token of that account's own handle
// (fencesql.Fences.Check per key, in key order): the read claims the
// accounts, so that no older holder's write lands between the read and
// the write, and the write is refused as a whole when a newer holder has
// passed any account's fence; a worker that has not paused runs them
// through fencesql.Fences.RunAll, and one that paused past its leases
// checks the fences itself, as a process frozen after its last look at
// its leases would still send its transaction. The control run does the
// same without the checks. The worker writes absolute balances computed
// from what it read, as a read-modify-write of a row does, so a write
// after a pause past the TTL (the faults of every run: pauses, SIGSTOP,
// kills, network faults, store restarts) overwrites the transfers made
// meanwhile.
//
// The checker (checkTransfers) reads the accounts and the transfers back
// and finds: the total not conserved (KindNotConserved), an account below
// zero (KindNegative), an account whose balance is not its initial one
// plus the legs of the transfers committed (KindLedger: a lost update),
// a transfer acknowledged and not recorded (Verdict.Lost), a transfer
// refused as stale and recorded (KindRejectedPresent) or recorded but
// failed before its COMMIT (KindPhantom). A fenced run must show none; a
// control run must show some.

// Violation kinds of the transfer workload.
const (
	// KindNotConserved: the accounts' total differs from the total they
	// started with. Some account's balance then differs from its
	// transfers too (KindLedger); where each such difference is expected
	// (see Expected), so is this.
	KindNotConserved = "not-conserved"
	// KindNegative: an account's balance is below zero.
	KindNegative = "negative-balance"
	// KindLedger: an account's balance differs from its initial balance
	// plus the legs of the transfers committed: a transfer's effect was
	// overwritten (a lost update), or a write without its transfer landed.
	KindLedger = "ledger-mismatch"
)

// InitialBalance is each account's balance when a transfer run starts.
const InitialBalance = 1000

// ledger is the transfer workload's view of one SQL database: the
// accounts and transfers tables of the run, and the fence table of the
// pair's resource.
type ledger struct {
	db      *sql.DB
	fences  *fencesql.Fences[*sql.Tx]
	dialect fencesql.Dialect
	// accounts and transfers name the run's tables.
	accounts, transfers string
	fenced              bool
}

// openLedger opens the ledger of the pair's SQL resource at rawURL (a
// postgres, sqlite or mysql URL of resources/sql: the faulty one goes
// through the stage's proxy) for the run of stage s, closed when the run
// ends. fenced says whether its transactions check the fence.
func openLedger(ctx context.Context, s *Stage, rawURL string, fenced bool) (*ledger, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var dialect fencesql.Dialect
	switch u.Scheme {
	case "postgres", "postgresql":
		dialect = fencesql.PostgreSQL
	case "sqlite":
		dialect = fencesql.SQLite
	case "mysql":
		dialect = fencesql.MySQL
	default:
		return nil, fmt.Errorf("torture: the transfer workload needs an SQL resource (postgres, sqlite or mysql), not %s://", u.Scheme)
	}
	r, err := forRun(s, fence.OpenResource)(ctx, rawURL, &fence.OpenOptions{HTTPClient: s.CleanHTTPClient()})
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	if dialect == fencesql.PostgreSQL {
		var pool *pgxpool.Pool
		if !r.As(&pool) {
			return nil, fmt.Errorf("torture: the resource at %s gives no pgx pool", u.Redacted())
		}
		db = stdlib.OpenDBFromPool(pool)
		s.Defer(func() { _ = db.Close() }) // before the pool's, deferred earlier
	} else if !r.As(&db) {
		return nil, fmt.Errorf("torture: the resource at %s gives no database", u.Redacted())
	}
	f, err := fencesql.New(db, dialect, &fencesql.Options{FenceTable: u.Query().Get("fence-table")})
	if err != nil {
		return nil, err
	}
	return &ledger{db: db, fences: f, dialect: dialect, accounts: s.ID + "_accounts", transfers: s.ID + "_transfers", fenced: fenced}, nil
}

// openLedgers creates the ledger of a transfer run in k's SQL database,
// with accounts, and returns it as the workers in this process see it,
// through the stage's faults (fenced or not), and as the checker reads
// it back, without.
func openLedgers(ctx context.Context, s *Stage, k ResourceKind, accounts []string, fenced bool) (work, check *ledger, err error) {
	if _, err := need(k.Env...); err != nil {
		return nil, nil, err
	}
	faulty, clean, err := k.URL(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if check, err = openLedger(ctx, s, clean, true); err != nil {
		return nil, nil, err
	}
	if err := check.create(ctx, accounts); err != nil {
		return nil, nil, err
	}
	if work, err = openLedger(ctx, s, faulty, fenced); err != nil {
		return nil, nil, err
	}
	return work, check, nil
}

// arg returns the placeholder of the i-th argument (from 1).
func (l *ledger) arg(i int) string {
	if l.dialect == fencesql.MySQL {
		return "?"
	}
	return fmt.Sprintf("$%d", i)
}

// create creates the fence table, the run's tables and its accounts.
func (l *ledger) create(ctx context.Context, accounts []string) error {
	if err := l.fences.Create(ctx); err != nil {
		return err
	}
	for _, q := range []string{
		"CREATE TABLE " + l.accounts + " (id VARCHAR(200) PRIMARY KEY, balance BIGINT NOT NULL)",
		"CREATE TABLE " + l.transfers + " (id VARCHAR(200) PRIMARY KEY, xfer VARCHAR(200) NOT NULL, src VARCHAR(200) NOT NULL, dst VARCHAR(200) NOT NULL, " +
			"amount BIGINT NOT NULL, src_token BIGINT NOT NULL, dst_token BIGINT NOT NULL)",
	} {
		if _, err := l.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("torture: create the ledger: %w", err)
		}
	}
	for _, a := range accounts {
		if _, err := l.db.ExecContext(ctx, "INSERT INTO "+l.accounts+" (id, balance) VALUES ("+l.arg(1)+", "+l.arg(2)+")", a, InitialBalance); err != nil {
			return fmt.Errorf("torture: create account %s: %w", a, err)
		}
	}
	return nil
}

// claimed runs fn in a transaction that first checks, when the ledger is
// fenced, the fence row of each account of hs with its handle's token, in
// key order. A conflict runs it again; an error from COMMIT is returned
// as a *commitErr. When careful is set, a fenced ledger runs it through
// fencesql.Fences.RunAll, as an application would, which sends nothing
// once a lease is lost and cancels fn's ctx when one is; otherwise the
// checks are statements of its own, and the transaction is sent whatever
// the leases' state: a writer frozen past its leases does not look.
func (l *ledger) claimed(ctx context.Context, hs []*fence.Handle, careful bool, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if l.fenced && careful {
		return l.fences.RunAll(ctx, hs, fn)
	}
	sorted := slices.Clone(hs)
	slices.SortFunc(sorted, func(a, b *fence.Handle) int { return strings.Compare(a.Key(), b.Key()) })
	var err error
	for attempt := range 20 {
		if attempt > 0 && backoff.Sleep(ctx, time.Duration(attempt)*5*time.Millisecond) != nil {
			return errors.Join(err, ctx.Err())
		}
		err = l.once(ctx, sorted, fn)
		if !fencesql.Retryable(err) {
			return err
		}
	}
	return err
}

func (l *ledger) once(ctx context.Context, sorted []*fence.Handle, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if l.fenced {
		for _, h := range sorted {
			if err := l.fences.Check(ctx, tx, h.Key(), h.Token()); err != nil {
				return err
			}
		}
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return &commitErr{err}
	}
	return nil
}

// commitErr is a COMMIT that failed: the transaction may have committed.
type commitErr struct{ err error }

func (e *commitErr) Error() string { return "commit: " + e.err.Error() }
func (e *commitErr) Unwrap() error { return e.err }

// balances reads the balances of keys in tx.
func (l *ledger) balances(ctx context.Context, tx *sql.Tx, keys []string) (map[string]int64, error) {
	q := "SELECT balance FROM " + l.accounts + " WHERE id = " + l.arg(1)
	if l.dialect != fencesql.SQLite {
		q += " FOR UPDATE" // InnoDB's plain SELECT reads the snapshot
	}
	out := map[string]int64{}
	for _, k := range keys {
		var b int64
		if err := tx.QueryRowContext(ctx, q, k).Scan(&b); err != nil {
			return nil, fmt.Errorf("torture: read account %s: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}

// leg is one leg of a transfer: amount moved from src to dst.
type leg struct {
	src, dst           string
	amount             int64
	srcToken, dstToken fence.Token
}

// write sets the balances of bal and records the legs of transfer xfer,
// in tx.
func (l *ledger) write(ctx context.Context, tx *sql.Tx, xfer string, bal map[string]int64, legs []leg) error {
	for _, k := range slices.Sorted(maps.Keys(bal)) {
		if _, err := tx.ExecContext(ctx, "UPDATE "+l.accounts+" SET balance = "+l.arg(1)+" WHERE id = "+l.arg(2), bal[k], k); err != nil {
			return fmt.Errorf("torture: write account %s: %w", k, err)
		}
	}
	for i, g := range legs {
		_, err := tx.ExecContext(ctx, "INSERT INTO "+l.transfers+" (id, xfer, src, dst, amount, src_token, dst_token) VALUES ("+
			l.arg(1)+", "+l.arg(2)+", "+l.arg(3)+", "+l.arg(4)+", "+l.arg(5)+", "+l.arg(6)+", "+l.arg(7)+")",
			fmt.Sprintf("%s/%d", xfer, i), xfer, g.src, g.dst, g.amount, int64(g.srcToken), int64(g.dstToken))
		if err != nil {
			return fmt.Errorf("torture: record transfer %s: %w", xfer, err)
		}
	}
	return nil
}

// newerOn reports whether a transfer with a token above t on key has been
// recorded.
func (l *ledger) newerOn(ctx context.Context, key string, t fence.Token) (bool, error) {
	var n int
	err := l.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+l.transfers+" WHERE (src = "+l.arg(1)+" AND src_token > "+l.arg(2)+") OR (dst = "+l.arg(3)+" AND dst_token > "+l.arg(4)+")",
		key, int64(t), key, int64(t)).Scan(&n)
	return n > 0, err
}

// transferLoop is a worker's loop in the transfer workload: it runs
// until ctx ends.
func (w *worker) transferLoop(ctx context.Context) {
	for ctx.Err() == nil {
		n := 2
		if len(w.keys) > 2 && chance(0.25) {
			n = 3
		}
		keys := slices.Clone(w.keys)
		rand.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:n]
		hs, err := w.sess.LockAll(ctx, keys, &fence.LockOptions{Wait: w.wait})
		if err != nil {
			if !errors.Is(err, fence.ErrHeld) && ctx.Err() == nil {
				_ = backoff.Sleep(ctx, 50*time.Millisecond) // a store error: do not spin
			}
			continue
		}
		for _, h := range hs {
			w.rec.leaseTaken(taken(w.id, h))
		}
		w.proc.holding(keys[0])
		w.transfer(ctx, hs, w.shouldPause())
		w.proc.holding("")
		lost := false
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.OpTimeout)
		for _, h := range hs {
			_ = h.Release(rctx)
			lost = lost || errors.Is(h.Err(), fence.ErrLeaseLost)
		}
		cancel()
		if lost {
			w.rec.leaseLost()
		}
	}
}

// underAll returns a context of ctx cancelled as soon as any of hs is
// lost.
func underAll(ctx context.Context, hs []*fence.Handle) (context.Context, context.CancelFunc) {
	var cancels []context.CancelFunc
	for _, h := range hs {
		var c context.CancelFunc
		ctx, c = h.Context(ctx)
		cancels = append(cancels, c)
	}
	return ctx, func() {
		for _, c := range slices.Backward(cancels) {
			c()
		}
	}
}

// transfer reads the accounts of hs (the first the source), moves a
// random amount from the first to the others and writes them back, with
// each account's own token; when paused, it stops for 1.5 to 2.5 TTLs
// between the read and the write and then writes without looking at its
// leases, as a process frozen after its last check would. Worker 1's
// first pause is the run's guaranteed one: it goes on until a newer
// transfer touched one of its accounts, so that its stale write has
// something to overwrite.
func (w *worker) transfer(ctx context.Context, hs []*fence.Handle, paused bool) {
	guaranteed := paused && w.id == 1 && !w.paused
	lctx, cancel := underAll(ctx, hs)
	defer cancel()
	base := lctx
	if paused {
		base = context.WithoutCancel(lctx)
	}
	keys := make([]string, len(hs))
	tokens := map[string]fence.Token{}
	for i, h := range hs {
		keys[i] = h.Key()
		tokens[h.Key()] = h.Token()
	}
	rctx, rcancel := context.WithTimeout(base, w.cfg.OpTimeout)
	defer rcancel()
	readStart := time.Now()
	var bal map[string]int64
	err := w.ledger.claimed(rctx, hs, !paused, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		bal, err = w.ledger.balances(ctx, tx, keys)
		return err
	})
	if err != nil {
		return
	}
	if paused {
		w.pauseTransfer(hs, guaranteed)
	}
	if !paused && lctx.Err() != nil {
		return // a lease is gone: a careful worker stops here
	}
	src := keys[0]
	if bal[src] <= 0 {
		return
	}
	total := 1 + rand.Int64N(bal[src])
	next := maps.Clone(bal)
	var legs []leg
	left := total
	for i, dst := range keys[1:] {
		amount := left
		if i < len(keys)-2 {
			amount = rand.Int64N(left + 1)
		}
		left -= amount
		next[src] -= amount
		next[dst] += amount
		legs = append(legs, leg{src: src, dst: dst, amount: amount, srcToken: tokens[src], dstToken: tokens[dst]})
	}
	w.seq++
	a := Attempt{Worker: w.id, Seq: w.seq, Key: src, Name: "transfer " + strings.Join(keys, ","), Token: tokens[src], ReadStart: readStart, Paused: paused}
	wctx, wcancel := context.WithTimeout(base, w.cfg.OpTimeout)
	defer wcancel()
	calmly := func(f func()) { f() }
	if guaranteed {
		calmly = w.calmly
	}
	a.Start = time.Now()
	w.rec.begin(a)
	calmly(func() {
		err = w.ledger.claimed(wctx, hs, !paused, func(ctx context.Context, tx *sql.Tx) error { return w.ledger.write(ctx, tx, a.ID(), next, legs) })
	})
	a.End = time.Now()
	a.Outcome = transferOutcome(err)
	if err != nil {
		a.Err = err.Error()
	}
	w.rec.attempt(a)
}

// transferOutcome classifies the error of a transfer's write: only an
// error of its COMMIT leaves the outcome unknown (fence.ErrUnknownOutcome
// from RunAll, which settles the others itself); any other rolled the
// transaction back, which the checker verifies (KindPhantom).
func transferOutcome(err error) Outcome {
	var ce *commitErr
	switch {
	case err == nil:
		return Applied
	case errors.Is(err, fence.ErrStaleToken):
		return Stale
	case errors.As(err, &ce), errors.Is(err, fence.ErrUnknownOutcome):
		return Unknown
	}
	return Failed
}

// pauseTransfer stops the worker, and its renewals, for 1.5 to 2.5 TTLs;
// a guaranteed pause then goes on, up to the end of the run, until a
// transfer with a newer token is recorded on one of hs's accounts.
func (w *worker) pauseTransfer(hs []*fence.Handle, guaranteed bool) {
	w.paused = true
	if guaranteed {
		w.pauseBegun.Store(true)
	}
	d := randDuration(w.ttl*3/2, maxPause(w.ttl))
	w.locker.pause(time.Now().Add(d))
	w.stage.Counts.Add(FaultPause)
	time.Sleep(d)
	for guaranteed && time.Now().Before(w.deadline) {
		w.locker.pause(time.Now().Add(200 * time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), w.cfg.OpTimeout)
		newer := false
		for _, h := range hs {
			if ok, err := w.ledger.newerOn(ctx, h.Key(), h.Token()); err == nil && ok {
				newer = true
			}
		}
		cancel()
		if newer {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkTransfers judges a transfer run from the ledger read back through
// l (without faults), against the attempts the workers recorded. The
// verdict's Stored counts the transfers recorded.
func checkTransfers(ctx context.Context, l *ledger, accounts []string, attempts []Attempt) (Verdict, error) {
	var v Verdict
	bal := map[string]int64{}
	rows, err := l.db.QueryContext(ctx, "SELECT id, balance FROM "+l.accounts)
	if err != nil {
		return v, fmt.Errorf("torture: read the accounts back: %w", err)
	}
	for rows.Next() {
		var id string
		var b int64
		if err := rows.Scan(&id, &b); err != nil {
			rows.Close()
			return v, err
		}
		bal[id] = b
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return v, err
	}
	want := map[string]int64{}
	for _, a := range accounts {
		want[a] = InitialBalance
	}
	xfers := map[string]bool{}
	tokens := map[string][]fence.Token{} // by account, of the legs on it
	rows, err = l.db.QueryContext(ctx, "SELECT xfer, src, dst, amount, src_token, dst_token FROM "+l.transfers)
	if err != nil {
		return v, fmt.Errorf("torture: read the transfers back: %w", err)
	}
	for rows.Next() {
		var g leg
		var xfer string
		var st, dt int64
		if err := rows.Scan(&xfer, &g.src, &g.dst, &g.amount, &st, &dt); err != nil {
			rows.Close()
			return v, err
		}
		xfers[xfer] = true
		tokens[g.src] = append(tokens[g.src], fence.Token(st))
		tokens[g.dst] = append(tokens[g.dst], fence.Token(dt))
		want[g.src] -= g.amount
		want[g.dst] += g.amount
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return v, err
	}
	v.Stored = len(xfers)
	var sum int64
	for _, a := range accounts {
		b, ok := bal[a]
		if !ok {
			return v, fmt.Errorf("torture: account %s is missing", a)
		}
		sum += b
		if b < 0 {
			v.Violations = append(v.Violations, Violation{Kind: KindNegative, Name: a, Key: a, Detail: fmt.Sprintf("balance %d", b)})
		}
		if b != want[a] {
			// The tokens of the legs on the account: a mismatch that a
			// reissued one may explain can be expected (see Expected).
			v.Violations = append(v.Violations, Violation{Kind: KindLedger, Name: a, Key: a, Tokens: tokens[a],
				Detail: fmt.Sprintf("balance %d, but its initial %d and the transfers recorded make %d", b, InitialBalance, want[a])})
		}
	}
	if start := int64(len(accounts)) * InitialBalance; sum != start {
		v.Violations = append(v.Violations, Violation{Kind: KindNotConserved, Name: "accounts",
			Detail: fmt.Sprintf("the %d accounts hold %d in all, not the %d they started with", len(accounts), sum, start)})
	}
	for _, a := range attempts {
		switch id := a.ID(); {
		case a.Outcome == Applied && !xfers[id]:
			v.Lost = append(v.Lost, a)
		case a.Outcome == Stale && xfers[id]:
			v.Violations = append(v.Violations, Violation{Kind: KindRejectedPresent, Name: a.Name, Key: a.Key, Detail: fmt.Sprintf("%v is recorded", a)})
		case a.Outcome == Failed && xfers[id]:
			v.Violations = append(v.Violations, Violation{Kind: KindPhantom, Name: a.Name, Detail: fmt.Sprintf("%v, rolled back before its COMMIT, is recorded", a)})
		}
	}
	return v, nil
}
