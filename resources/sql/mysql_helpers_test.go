package sql_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	fencesql "github.com/fencekit/fence/resources/sql"
)

func init() {
	// The driver logs the connections the lost-answer tests cut.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

// mysqlConfig returns the driver configuration of the test MariaDB
// server.
func mysqlConfig(t testing.TB) *mysql.Config {
	t.Helper()
	cfg, err := mysql.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// openMySQL opens the test MariaDB server through database/sql with at
// most maxConns connections; edit, when not nil, changes the driver's
// configuration first.
func openMySQL(t testing.TB, maxConns int, edit func(*mysql.Config)) *sql.DB {
	t.Helper()
	cfg := mysqlConfig(t)
	if edit != nil {
		edit(cfg)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(maxConns)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// mysqlBackend is sqlBackend for MySQL, whose transactions translate the
// tests' PostgreSQL-flavoured statements (see mysqlize).
func mysqlBackend(db *sql.DB) *backend {
	b := sqlBackend("mysql", fencesql.MySQL, db)
	f, err := fencesql.New(db, fencesql.MySQL, nil)
	if err != nil {
		panic(err)
	}
	b.inTx = func(ctx context.Context, serializable bool, fn func(txn) error) error {
		iso := sql.LevelDefault // InnoDB's default, REPEATABLE READ
		if serializable {
			iso = sql.LevelSerializable
		}
		return fencesql.InTx(ctx, f, iso, func(ctx context.Context, tx *sql.Tx) error {
			return fn(mysqlTxn{stdTxn{ctx, tx}})
		})
	}
	return b
}

// mysqlTxn is a database/sql transaction on MySQL that runs the tests'
// statements through mysqlize.
type mysqlTxn struct{ stdTxn }

func (x mysqlTxn) update(c column, key any, token fence.Token, set string, args ...any) error {
	s, a := mysqlize(set, args)
	return x.stdTxn.update(c, key, token, s, a...)
}

func (x mysqlTxn) exec(query string, args ...any) error {
	q, a := mysqlize(query, args)
	return x.stdTxn.exec(q, a...)
}

func (x mysqlTxn) scalar(query string, args ...any) (any, error) {
	q, a := mysqlize(query, args)
	return x.stdTxn.scalar(q, a...)
}

// mysqlize rewrites a test's statement written for PostgreSQL and SQLite
// into MySQL's: double-quoted names become backquoted ones, $n
// placeholders become ?s (the arguments reordered and repeated to match),
// the column name key (reserved in MySQL) is backquoted, and a text
// primary key becomes a VARBINARY one. Single-quoted text and backquoted
// names are kept.
func mysqlize(query string, args []any) (string, []any) {
	var out strings.Builder
	var outArgs []any
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'':
			j := i + 1
			for j < len(query) && (query[j] != '\'' || j+1 < len(query) && query[j+1] == '\'') {
				if query[j] == '\'' {
					j++
				}
				j++
			}
			out.WriteString(query[i : j+1])
			i = j + 1
		case c == '`':
			j := strings.IndexByte(query[i+1:], '`') // the tests' names hold no backquote
			out.WriteString(query[i : i+j+2])
			i += j + 2
		case c == '"':
			var name strings.Builder
			j := i + 1
			for ; j < len(query); j++ {
				if query[j] == '"' {
					if j+1 < len(query) && query[j+1] == '"' {
						name.WriteByte('"')
						j++
						continue
					}
					break
				}
				name.WriteByte(query[j])
			}
			out.WriteString("`" + strings.ReplaceAll(name.String(), "`", "``") + "`")
			i = j + 1
		case c == '$':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(query[i+1 : j])
			out.WriteByte('?')
			outArgs = append(outArgs, args[n-1])
			i = j
		case isWordByte(c):
			j := i
			for j < len(query) && isWordByte(query[j]) {
				j++
			}
			w := query[i:j]
			switch {
			case w == "key":
				out.WriteString("`key`")
			case strings.EqualFold(w, "text") && strings.HasPrefix(strings.ToUpper(query[j:]), " PRIMARY KEY"):
				out.WriteString("VARBINARY(255)")
			default:
				out.WriteString(w)
			}
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	if !strings.Contains(query, "$") {
		outArgs = args
	}
	return out.String(), outArgs
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lossyMySQLDial returns a go-sql-driver/mysql DialFunc whose connections
// lose the answer to the first COMMIT sent through any of them: the
// server receives and applies it, the connection reads its OK packet,
// calls after and is cut before the client sees the answer.
func lossyMySQLDial(t testing.TB, after func()) func(ctx context.Context, network, addr string) (net.Conn, error) {
	l := &loseOnce{t: t, after: after}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &mysqlCutConn{Conn: c, lose: l}, nil
	}
}

// mysqlCutConn is a connection to MySQL that loses the answer to a COMMIT
// when its loseOnce says so.
type mysqlCutConn struct {
	net.Conn
	lose *loseOnce

	mu      sync.Mutex
	buf     []byte // the start of a client packet not yet complete
	pending bool
}

// commitSent consumes the client's bytes p and reports whether they
// completed a COM_QUERY "COMMIT" packet (a command: sequence number 0).
func (c *mysqlCutConn) commitSent(p []byte) bool {
	c.buf = append(c.buf, p...)
	found := false
	for len(c.buf) >= 4 {
		n := int(c.buf[0]) | int(c.buf[1])<<8 | int(c.buf[2])<<16
		if len(c.buf) < 4+n {
			break
		}
		seq, payload := c.buf[3], c.buf[4:4+n]
		if seq == 0 && n > 1 && payload[0] == 0x03 && strings.EqualFold(strings.TrimSpace(string(payload[1:])), "commit") {
			found = true
		}
		c.buf = append(c.buf[:0], c.buf[4+n:]...)
	}
	return found
}

func (c *mysqlCutConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.commitSent(p) && c.lose.claim() {
		c.pending = true
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *mysqlCutConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	pending := c.pending
	c.pending = false
	c.mu.Unlock()
	if !pending {
		return c.Conn.Read(p)
	}
	// Read the server's answer to the COMMIT, one packet, and keep it
	// from the client.
	head := make([]byte, 4)
	_, err := io.ReadFull(c.Conn, head)
	var body []byte
	if err == nil {
		body = make([]byte, int(binary.LittleEndian.Uint32(append(head[:3:3], 0))))
		_, err = io.ReadFull(c.Conn, body)
	}
	switch {
	case err != nil:
		c.lose.t.Errorf("reading the answer to the COMMIT to lose: %v", err)
	case len(body) == 0 || body[0] != 0x00:
		c.lose.t.Errorf("the server answered the COMMIT to lose with %x; want an OK packet (the write was not applied)", body)
	}
	c.lose.after()
	_ = c.Conn.Close()
	return 0, errAnswerLost
}

// mysqlLostResource returns a Resource on tables tb whose first COMMIT
// loses its answer.
func mysqlLostResource(t *testing.T, tb fencesql.Options, after func()) *fence.Resource {
	t.Helper()
	db := openMySQL(t, 4, func(cfg *mysql.Config) { cfg.DialFunc = lossyMySQLDial(t, after) })
	f, err := fencesql.New(db, fencesql.MySQL, &tb)
	if err != nil {
		t.Fatal(err)
	}
	return f.Resource()
}

// mysqlQuote quotes a name for MySQL.
func mysqlQuote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
