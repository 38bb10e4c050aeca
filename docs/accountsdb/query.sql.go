package accountsdb

import (
	"context"
)

const getAccount = `-- name: GetAccount :one
SELECT id, balance FROM accounts WHERE id = $1
`

// GetAccount reads one account.
func (q *Queries) GetAccount(ctx context.Context, id string) (Account, error) {
	row := q.db.QueryRowContext(ctx, getAccount, id)
	var i Account
	err := row.Scan(&i.ID, &i.Balance)
	return i, err
}

const addToBalance = `-- name: AddToBalance :exec
UPDATE accounts SET balance = balance + $2 WHERE id = $1
`

// AddToBalanceParams are the arguments of AddToBalance.
type AddToBalanceParams struct {
	ID      string
	Balance int64
}

// AddToBalance adds arg.Balance to the balance of account arg.ID.
func (q *Queries) AddToBalance(ctx context.Context, arg AddToBalanceParams) error {
	_, err := q.db.ExecContext(ctx, addToBalance, arg.ID, arg.Balance)
	return err
}
