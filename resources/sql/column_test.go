package sql_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// accountsTable creates a table of accounts with a fenced column; check
// false leaves out the column's constraints, as a hand-made schema might.
func accountsTable(t *testing.T, b *backend, check bool) string {
	t.Helper()
	name := uniqueName("accounts")
	col := `"fence" bigint` // a schema made by hand, without the constraints
	if check {
		c, err := b.newColumn(name, "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		col = c.Definition()
	}
	b.exec(t, fmt.Sprintf(`CREATE TABLE %q (id bigint PRIMARY KEY, balance bigint NOT NULL, note text, %s)`, name, col))
	b.dropLater(t, name)
	b.exec(t, fmt.Sprintf(`INSERT INTO %q (id, balance, fence) VALUES (1, 0, 0)`, name))
	return name
}

// account reads the balance and fence token of account 1.
func account(t *testing.T, b *backend, table string) (balance, token any) {
	t.Helper()
	b.do(t, func(x txn) (err error) {
		if balance, err = x.scalar(fmt.Sprintf(`SELECT balance FROM %q WHERE id = 1`, table)); err != nil {
			return err
		}
		token, err = x.scalar(fmt.Sprintf(`SELECT fence FROM %q WHERE id = 1`, table))
		return err
	})
	return balance, token
}

func TestColumnUpdate(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		table := accountsTable(t, b, true)
		c, err := b.newColumn(table, "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			key     int64
			token   fence.Token
			want    string // "", "stale" or "notfound"
			balance int64  // after the step
			highest int64
		}{
			{1, 3, "", 10, 3},
			{1, 3, "", 20, 3}, // equal passes
			{1, 2, "stale", 20, 3},
			{1, 4, "", 30, 4},
			{2, 9, "notfound", 30, 4}, // no such row
			{1, 1, "stale", 30, 4},
		}
		for i, s := range steps {
			err := b.inTx(t.Context(), false, func(x txn) error {
				return x.update(c, s.key, s.token, `balance = balance + $1, note = $2`, int64(10), "it's $1; -- not a comment")
			})
			var nf *fence.NotFoundError
			switch s.want {
			case "":
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			case "stale":
				wantStale(t, err, s.token, fence.Token(s.highest))
			case "notfound":
				if !errors.As(err, &nf) {
					t.Fatalf("step %d: err = %v; want a *fence.NotFoundError", i, err)
				}
			}
			if bal, tok := account(t, b, table); bal != s.balance || tok != s.highest {
				t.Fatalf("step %d: balance %v, token %v; want %d, %d", i, bal, tok, s.balance, s.highest)
			}
		}
		// An empty SET clause only advances the token.
		b.do(t, func(x txn) error { return x.update(c, int64(1), 8, "") })
		if bal, tok := account(t, b, table); bal != int64(30) || tok != int64(8) {
			t.Fatalf("after an empty update: balance %v, token %v; want 30, 8", bal, tok)
		}
	})
}

func TestColumnCorruptToken(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		table := accountsTable(t, b, false)
		c, err := b.newColumn(table, "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"NULL", "-5"} {
			b.exec(t, fmt.Sprintf(`UPDATE %q SET fence = %s WHERE id = 1`, table, v))
			err := b.inTx(t.Context(), false, func(x txn) error {
				return x.update(c, int64(1), 7, "balance = 99")
			})
			if !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("fence %s: err = %v; want ErrCorrupt", v, err)
			}
			if bal, _ := account(t, b, table); bal != int64(0) {
				t.Fatalf("fence %s: balance %v after a refused update; want 0", v, bal)
			}
		}
	})
}

func TestColumnConstraintsKeepCorruptionOut(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		table := accountsTable(t, b, true)
		for _, v := range []string{"NULL", "-5"} {
			err := b.inTx(t.Context(), false, func(x txn) error {
				return x.exec(fmt.Sprintf(`UPDATE %q SET fence = %s WHERE id = 1`, table, v))
			})
			if err == nil {
				t.Errorf("setting the fence column to %s succeeded; want a constraint violation", v)
			}
		}
	})
}

func TestColumnRefusesBadInput(t *testing.T) {
	t.Parallel()
	c := offlineColumn(t, fencesql.PostgreSQL, "accounts", "id", "fence")
	for _, tc := range []struct {
		set   string
		nargs int
	}{
		{"a = 1; DELETE FROM accounts", 0},
		{"a = 1 -- comment", 0},
		{"a = 1 /* comment */", 0},
		{"a = 1 WHERE true", 0},
		{"a = b FROM other", 0},
		{"a = 1 RETURNING *", 0},
		{"a = $2", 1},
		{"a = $0", 1},
		{"a = $01", 1},
		{"a = ?", 1},
		{"a = $$x$$", 0},
		{"a = 'open", 0},
		{`a = "open`, 0},
		{"a = (1", 0},
		{"a = 1)", 0},
		{`a = E'\''`, 0},
		{"a = `b`", 0},
		// Assignments to the fence column, in every spelling the
		// databases take for it.
		{"fence = 1", 0},
		{"FENCE = 1", 0},
		{`"fence" = 1`, 0},
		{`"Fence" = 1`, 0},
		{"a = 1, fence = $1", 1},
		{"(a, fence) = (1, 2)", 0},
		{"( a , FENCE ) = (SELECT 1, 2)", 0},
		{"fence[1] = 1", 0},
		{"fence.x = 1", 0},
		{"fence=1", 0},
		// Malformed lists of assignments.
		{"a", 0},
		{"a =", 0},
		{"= 1", 0},
		{"a = 1,", 0},
		{", a = 1", 0},
		{"a = 1,, b = 2", 0},
		{"a == 1", 0},
		{"a 1", 0},
		{"[fence] = 1", 0},
		{"'fence' = 1", 0},
		{"(a, ) = (1, 2)", 0},
		{"() = (1)", 0},
		{"a = ARRAY[1", 0},
		{"a = 1]", 0},
		{"a = (1]", 0},
		{"U&\"fence\" = 1", 0},
	} {
		if _, err := fencesql.UpdateSQL(c, tc.set, tc.nargs); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("UpdateSQL(%q, %d) err = %v; want ErrInvalid", tc.set, tc.nargs, err)
		}
	}
	for _, tc := range []struct {
		set   string
		nargs int
		want  string
	}{
		{"", 0, "UPDATE \"accounts\" SET \"fence\" = $2\nWHERE \"id\" = $1 AND \"fence\" >= 0 AND \"fence\" <= $2"},
		{"a = $1, b = 'x; -- where' || $2, \"where\" = (SELECT max(v) FROM t WHERE k = $1)", 2,
			"UPDATE \"accounts\" SET a = $1, b = 'x; -- where' || $2, \"where\" = (SELECT max(v) FROM t WHERE k = $1)\n, \"fence\" = $4\nWHERE \"id\" = $3 AND \"fence\" >= 0 AND \"fence\" <= $4"},
	} {
		got, err := fencesql.UpdateSQL(c, tc.set, tc.nargs)
		if err != nil || got != tc.want {
			t.Errorf("UpdateSQL(%q, %d) = %q, %v; want %q", tc.set, tc.nargs, got, err, tc.want)
		}
	}
	for _, set := range []string{
		"(a, b) = (1, 2)",
		`tags = ARRAY['x, y', 'z'], "fence_old" = 1, refence = 2, fence_x = 3`,
		"a[1] = 2, b.c = 3",
		"  a = 1 ,\n\tb = 2  ",
		`"fence "" col" = 1`,
	} {
		if _, err := fencesql.UpdateSQL(c, set, 0); err != nil {
			t.Errorf("UpdateSQL(%q) = %v; want it accepted", set, err)
		}
	}
}

// TestColumnUpdateRefusesBadSetClauses runs refused SET clauses against
// the databases: an assignment to the fence column (which SQLite would
// silently drop in favour of the fence's, and PostgreSQL refuse as a
// double assignment) and malformed clauses, caught before anything is
// sent or reported by the database as a syntax error, all get
// fence.ErrInvalid, and the row is left as it was.
func TestColumnUpdateRefusesBadSetClauses(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		table := accountsTable(t, b, true)
		c, err := b.newColumn(table, "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		b.do(t, func(x txn) error { return x.update(c, int64(1), 5, "balance = 10") })
		for _, tc := range []struct {
			set      string
			byServer bool // only the database can tell
		}{
			{"fence = 100", false},
			{"balance = 1, FENCE = 100", false},
			{`"fence" = 100`, false},
			{"(balance, fence) = (1, 100)", false},
			{"[fence] = 100", false},
			{"'fence' = 100", false},
			{"balance", false},
			{"balance =", false},
			{"balance = 1,", false},
			{"balance == 1", false},
			{"balance = 1 +", true},
			{"balance = 1 2", true},
			{"balance = (SELECT)", true},
		} {
			err := b.inTx(t.Context(), false, func(x txn) error { return x.update(c, int64(1), 6, tc.set) })
			var ie *fence.InvalidError
			if !errors.Is(err, fence.ErrInvalid) || !errors.As(err, &ie) || ie.Field != "set clause" {
				t.Errorf("Update(%q) = %v; want a *fence.InvalidError for the set clause", tc.set, err)
			}
			if _, sentErr := updateSQL(c, tc.set, 0); (sentErr == nil) != tc.byServer {
				t.Errorf("UpdateSQL(%q) = %v; want it refused before sending: %v", tc.set, sentErr, !tc.byServer)
			}
			if bal, tok := account(t, b, table); bal != int64(10) || tok != int64(5) {
				t.Errorf("after Update(%q): balance %v, token %v; want 10, 5 (unchanged)", tc.set, bal, tok)
			}
		}
	})
}
