package postgres

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// The release notifications: how Release and Break tell waiters, in the
// statement that frees a row, and the names both sides derive from the
// lease table's name. See the package doc, "Release notifications".

// notifySlots is the number of advisory lock slots a listening connection
// holds in shared mode, and over which releases spread their probe.
const notifySlots = 64

// notifyNames are the names of a lease table's notifications.
type notifyNames struct {
	// channel is the NOTIFY channel: "fence_" and the md5 of the quoted
	// table name in hex, 38 bytes of [0-9a-f_], valid as an identifier
	// without quoting and within PostgreSQL's 63 bytes.
	channel string
	// ns is the first key of the advisory locks that say someone
	// listens: the md5's first four bytes as an int32.
	ns int32
}

// notifyNamesOf returns the names for the table whose quoted name is
// quoted (pgx.Identifier.Sanitize).
func notifyNamesOf(quoted string) notifyNames {
	sum := md5.Sum([]byte(quoted))
	return notifyNames{channel: "fence_" + hex.EncodeToString(sum[:]), ns: int32(binary.BigEndian.Uint32(sum[:4]))}
}

// notifyExpr is the expression a freeing statement returns, once per row
// it frees: it notifies the channel with the key's payload ($payload) if
// the exclusive transaction lock of the key's slot ($slot) cannot be
// taken, which means that a listener holds it shared (or that another
// release of the same slot is committing: a spurious notification). With
// nobody listening it takes the lock (until commit) and sends nothing.
func notifyExpr(n notifyNames, payload, slot string) string {
	return `CASE WHEN NOT pg_try_advisory_xact_lock(` + strconv.Itoa(int(n.ns)) + `, ` + slot + `::integer)
	THEN pg_notify('` + n.channel + `', ` + payload + `::text) END`
}

// listenSQL makes a connection a listener: LISTEN first, then the shared
// slot locks, each its own statement, so that LISTEN is active before any
// release can see the locks.
func (n notifyNames) listenSQL() []string {
	return []string{
		`LISTEN ` + pgx.Identifier{n.channel}.Sanitize(),
		`SELECT pg_advisory_lock_shared(` + strconv.Itoa(int(n.ns)) + `, s) FROM generate_series(0, ` + strconv.Itoa(notifySlots-1) + `) AS s`,
	}
}

// keyNotice returns the payload of key's notifications, the md5 of its
// UTF-8 bytes in hex (32 bytes whatever the key's length), and the slot
// its releases probe.
func keyNotice(key string) (payload string, slot int32) {
	sum := md5.Sum([]byte(key))
	return hex.EncodeToString(sum[:]), int32(sum[0] % notifySlots)
}
