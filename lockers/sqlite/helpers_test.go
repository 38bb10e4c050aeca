package sqlite_test

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

func rowText(owner string, token int64, expires sql.NullInt64) string {
	return fmt.Sprintf("owner=%q token=%d expires=%v", owner, token, expires)
}

func unquote(s string) string { return strings.Trim(s, "'") }

func parse(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

func parseNull(s string) sql.NullInt64 {
	if s == "NULL" {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: parse(s), Valid: true}
}
