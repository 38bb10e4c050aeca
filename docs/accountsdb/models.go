package accountsdb

// Account is a row of the accounts table.
type Account struct {
	ID      string
	Balance int64
}
