package docs

// The packages that the guides' Go blocks import, beyond the standard
// library. The blocks live in markdown, outside any package, so without
// these imports go mod tidy would drop their modules from go.mod and
// their sums from go.sum. backends imports every backend of fence, and so
// every SDK a block may use.
import (
	_ "entgo.io/ent/dialect"
	_ "entgo.io/ent/dialect/sql"
	_ "github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/uptrace/bun"
	_ "github.com/uptrace/bun/dialect/pgdialect"
	_ "gorm.io/driver/postgres"
	_ "gorm.io/gorm"

	_ "github.com/fencekit/fence"
	_ "github.com/fencekit/fence/backends"
	_ "github.com/fencekit/fence/election"
	_ "github.com/fencekit/fence/guard"
	_ "github.com/fencekit/fence/resources/sql"
	_ "github.com/fencekit/fence/schedule"
)
