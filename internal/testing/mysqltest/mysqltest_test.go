package mysqltest

import (
	"database/sql"
	"testing"
)

// TestRestartKeepsData writes a row, kills the server, restarts it, and
// reads the row back; then stops and restarts it cleanly.
func TestRestartKeepsData(t *testing.T) {
	s := Start(t)
	db, err := sql.Open("mysql", s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (n INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	s.Kill(t)
	if err := db.Ping(); err == nil {
		t.Fatal("the killed server answers")
	}
	s.Restart(t)
	var n int
	if err := db.QueryRow("SELECT n FROM t").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after a crash: n = %d, %v; want 7", n, err)
	}
	s.Restart(t)
	if err := db.QueryRow("SELECT n FROM t").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after a restart: n = %d, %v; want 7", n, err)
	}
}
