// Package pgcreate makes the creation of fence's PostgreSQL tables safe
// for concurrent creators, for the packages that create them:
// lockers/postgres (the lease table) and resources/sql (the fence and
// value tables).
//
// PostgreSQL's CREATE TABLE IF NOT EXISTS checks for the table before it
// inserts the table's catalog rows, so two transactions creating the same
// new table both pass the check, and the second to commit fails with a
// unique violation (SQLSTATE 23505 on pg_type_typname_nsp_index) or
// duplicate_table (42P07). Every replica of a deployment that creates its
// tables at start-up does exactly that. Statement wraps the creation in
// one DO block that first takes a transaction-scoped advisory lock per
// table: creators of one table run one after the other, and each after
// the first finds the table committed and skips it. Being one statement,
// it works on a connection, a pool or inside the caller's transaction
// (where the locks last until that transaction ends).
package pgcreate

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// LockClass is the first key of the two-key advisory locks that
// Statement takes: 0x66656e63, "fenc" in ASCII. The second key is
// TableKey of the table's name.
const LockClass int32 = 0x66656e63

// TableKey is the second key of the advisory lock of the table whose
// quoted name (as it appears in the CREATE statement) is quoted: the
// FNV-1a 32-bit hash of its bytes, read as an int32. Two names that
// collide only make their creators wait for each other.
func TableKey(quoted string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(quoted)) // hash.Hash.Write never fails
	return int32(h.Sum32())
}

// Statement returns one statement that takes the advisory locks
// (LockClass, TableKey(t)) of each table t of tables (quoted names) with
// pg_advisory_xact_lock, in ascending order of keys so that two creators
// of overlapping sets cannot deadlock, then runs stmts, which create those
// tables (CREATE TABLE IF NOT EXISTS, no parameters). The locks are
// released when the statement's transaction ends, after the tables are
// committed.
func Statement(tables []string, stmts ...string) string {
	keys := make([]int32, 0, len(tables))
	for _, t := range tables {
		keys = append(keys, TableKey(t))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var body strings.Builder
	body.WriteString("\nBEGIN\n")
	for _, k := range keys {
		body.WriteString("PERFORM pg_advisory_xact_lock(" + strconv.Itoa(int(LockClass)) + ", " + strconv.Itoa(int(k)) + ");\n")
	}
	for _, s := range stmts {
		body.WriteString(s + ";\n")
	}
	body.WriteString("END\n")
	// A dollar-quote tag that the body does not contain: a quoted table
	// name may hold any character but NUL.
	tag := "$fence$"
	for i := 0; strings.Contains(body.String(), tag); i++ {
		tag = "$fence" + strconv.Itoa(i) + "$"
	}
	return "DO " + tag + body.String() + tag
}
