package postgres

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
)

// floorStatements are the two statements a user writes by hand for a
// lease on keys whose rows exist: a conditional UPDATE that takes a free
// or expired key and returns its new token, and a compare-and-free by
// owner and token. No insert of new keys, no reading of the holder, no
// release notification: the floor of BenchmarkClients.
type floorStatements struct{ acquire, release string }

func newFloor(table string) floorStatements {
	return floorStatements{
		acquire: `UPDATE ` + table + ` SET owner = $2, token = token + 1,
	expires_at = statement_timestamp() + $3::bigint * interval '1 microsecond'
WHERE key = $1 AND (expires_at IS NULL OR expires_at <= statement_timestamp())
RETURNING token`,
		release: `UPDATE ` + table + ` SET expires_at = NULL
WHERE key = $1 AND owner = $2 AND token = $3 AND expires_at > statement_timestamp()`,
	}
}

func (f floorStatements) cycle(ctx context.Context, pool *pgxpool.Pool, key, owner string) error {
	var token int64
	if err := pool.QueryRow(ctx, f.acquire, key, owner, int64(time.Minute/time.Microsecond)).Scan(&token); err != nil {
		return fmt.Errorf("floor acquire %q: %w", key, err)
	}
	tag, err := pool.Exec(ctx, f.release, key, owner, token)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("floor release %q: not held", key)
	}
	return nil
}

// clientsCycles is how many acquire+release cycles each client runs in
// one block of BenchmarkClients: few, so that the sides alternate often.
const clientsCycles = 10

// BenchmarkClients compares, at 1, 8 and 32 concurrent clients, an
// acquire+release through the Locker ("locker") with the two hand-written
// statements of floorStatements ("floor"), on the same pool and table,
// each client on keys of its own. Each iteration runs one short block
// (clientsCycles cycles per client) of each side, in an order that
// alternates between iterations, so that both meet the same load.
//
// ratio is the median over iterations of the Locker's wall time per
// cycle over the floor's, ratio-min and ratio-max its extremes; on a
// shared machine they move with everyone else's load. cpu-ratio is the
// same for the CPU time per cycle of the server's backends of the pool
// (from /proc/PID/schedstat: the server runs on this machine) plus this
// process's: what bounds the rate once the clients keep the CPUs busy,
// and steadier. <side>-ratio and <side>-cpu-ratio compare each side with
// the floor, <side>-server-cpu-us and <side>-client-cpu-us are medians
// per cycle. pool=default is pgxpool's default MaxConns (max(4,
// NumCPU)); pool=clients has one connection per client. Run with
// -benchtime 40x.
func BenchmarkClients(b *testing.B) {
	benchClients(b, []string{"locker", "floor"})
}

// BenchmarkClientsParts is BenchmarkClients with every side, to tell
// where the Locker's cost over the floor goes: its driver alone
// ("store"), its acquire statement ("acq"), its release statement
// ("rel"), and "acq-cte", the acquire statement of one INSERT .. ON
// CONFLICT and UPDATE in CTEs that the driver sent before (kept here as
// a yardstick), with the floor's release.
func BenchmarkClientsParts(b *testing.B) {
	benchClients(b, []string{"locker", "store", "floor", "acq", "rel", "acq-cte"})
}

func benchClients(b *testing.B, sides []string) {
	for _, poolSize := range []string{"default", "clients"} {
		for _, clients := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("pool=%s/clients=%d", poolSize, clients), func(b *testing.B) {
				size := int32(0)
				if poolSize == "clients" {
					size = int32(clients)
				}
				pool := newPoolWith(b, size, func(cfg *pgxpool.Config) {
					if size == 0 {
						cfg.MaxConns = int32(max(4, runtime.NumCPU())) // pgxpool's default
					}
					cfg.MinConns = cfg.MaxConns // the backends stay the same
				})
				l := newTable(b, pool)
				f := newFloor(l.quotedTable())
				ctx := b.Context()
				keys := func(client int, which string) []string {
					ks := make([]string, clientsCycles)
					for i := range ks {
						ks[i] = which + "-" + strconv.Itoa(client) + "-" + strconv.Itoa(i)
					}
					return ks
				}
				// Create every row both sides use.
				for c := range clients {
					for _, which := range sides {
						for _, k := range keys(c, which) {
							lease, err := l.Acquire(ctx, k, time.Minute, nil)
							if err != nil {
								b.Fatal(err)
							}
							if err := l.Release(ctx, lease); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				block := func(side string) time.Duration {
					var wg sync.WaitGroup
					errs := make([]error, clients)
					start := time.Now()
					for c := range clients {
						wg.Go(func() {
							for _, k := range keys(c, side) {
								var err error
								switch side {
								case "locker":
									var lease fence.Lease
									if lease, err = l.Acquire(ctx, k, time.Minute, nil); err == nil {
										err = l.Release(ctx, lease)
									}
								case "store":
									var lease fence.Lease
									if lease, err = l.d.Acquire(ctx, k, "store-owner", time.Minute); err == nil {
										err = l.d.Release(ctx, lease)
									}
								case "acq", "rel", "acq-cte":
									err = f.mixed(ctx, pool, l.d, side, k, "floor-owner")
								default:
									err = f.cycle(ctx, pool, k, "floor-owner")
								}
								if err != nil {
									errs[c] = err
									return
								}
							}
						})
					}
					wg.Wait()
					d := time.Since(start)
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
					return d / time.Duration(clients*clientsCycles)
				}
				// The CPU time of the server's backends of the pool
				// and of this process, per block.
				pids := backendPIDs(b, pool)
				cpu := func() (server, client time.Duration) {
					for _, pid := range pids {
						server += procCPU(b, pid)
					}
					var ru syscall.Rusage
					if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
						b.Fatal(err)
					}
					client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
					return server, client
				}
				per := map[string][]float64{}
				var ratios []float64
				for i := 0; b.Loop(); i++ {
					took := map[string]time.Duration{}
					cpuOf := map[string]time.Duration{}
					for j := range sides {
						side := sides[(i+j)%len(sides)] // rotate the order
						s0, c0 := cpu()
						took[side] = block(side)
						s1, c1 := cpu()
						per[side] = append(per[side], float64(took[side].Microseconds()))
						n := float64(clients * clientsCycles)
						per[side+"-server"] = append(per[side+"-server"], float64((s1-s0).Nanoseconds())/n/1e3)
						per[side+"-client"] = append(per[side+"-client"], float64((c1-c0).Nanoseconds())/n/1e3)
						cpuOf[side] = (s1 - s0) + (c1 - c0)
					}
					ratios = append(ratios, float64(took["locker"])/float64(took["floor"]))
					for _, side := range sides {
						per[side+"-ratio"] = append(per[side+"-ratio"], float64(took[side])/float64(took["floor"]))
						per[side+"-cpu-ratio"] = append(per[side+"-cpu-ratio"], float64(cpuOf[side])/float64(cpuOf["floor"]))
					}
				}
				b.ReportMetric(median(ratios), "ratio")
				b.ReportMetric(minOf(ratios), "ratio-min")
				b.ReportMetric(maxOf(ratios), "ratio-max")
				b.ReportMetric(median(per["locker"]), "locker-us/cycle")
				b.ReportMetric(median(per["floor"]), "floor-us/cycle")
				b.ReportMetric(median(per["locker-cpu-ratio"]), "cpu-ratio")
				b.ReportMetric(minOf(per["locker-cpu-ratio"]), "cpu-ratio-min")
				b.ReportMetric(maxOf(per["locker-cpu-ratio"]), "cpu-ratio-max")
				for _, side := range sides {
					b.ReportMetric(median(per[side+"-ratio"]), side+"-ratio")
					b.ReportMetric(median(per[side+"-cpu-ratio"]), side+"-cpu-ratio")
					b.ReportMetric(median(per[side+"-server"]), side+"-server-cpu-us")
					b.ReportMetric(median(per[side+"-client"]), side+"-client-cpu-us")
				}
			})
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func minOf(xs []float64) float64 { return slices.Min(xs) }
func maxOf(xs []float64) float64 { return slices.Max(xs) }

// backendPIDs returns the server process ids of every connection of
// pool, all opened now.
func backendPIDs(b *testing.B, pool *pgxpool.Pool) []int {
	conns := make([]*pgxpool.Conn, pool.Config().MaxConns)
	pids := make([]int, len(conns))
	for i := range conns {
		c, err := pool.Acquire(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		if err := c.QueryRow(b.Context(), "SELECT pg_backend_pid()").Scan(&pids[i]); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range conns {
		c.Release()
	}
	return pids
}

// procCPU returns the time process pid (a backend of the server, on
// this machine) has spent on a CPU, from /proc/PID/schedstat (in
// nanoseconds, unlike /proc/PID/stat's ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		b.Skipf("the server's processes are not readable here: %v", err)
	}
	ns, err := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return time.Duration(ns)
}

// mixed is a cycle with one of the store's statements and one of the
// floor's: "acq" the store's acquire, "rel" its release.
func (f floorStatements) mixed(ctx context.Context, pool *pgxpool.Pool, d *store, side, key, owner string) error {
	if side == "acq-cte" {
		table := d.table.Sanitize()
		q := `WITH cur AS (
	SELECT key, owner, token, expires_at FROM ` + table + ` WHERE key = $1
), upd AS (
	UPDATE ` + table + ` SET owner = $2, token = token + 1,
		expires_at = statement_timestamp() + $3::bigint * interval '1 microsecond'
	WHERE key = $1 AND owner IS NOT NULL AND token > 0
		AND (expires_at IS NULL OR (isfinite(expires_at) AND expires_at <= statement_timestamp()))
	RETURNING token
), ins AS (
	INSERT INTO ` + table + ` (key, owner, token, expires_at)
	SELECT $1, $2, 1, statement_timestamp() + $3::bigint * interval '1 microsecond'
	WHERE NOT EXISTS (SELECT FROM cur)
	ON CONFLICT (key) DO NOTHING
	RETURNING token
)
SELECT coalesce((SELECT token FROM upd), (SELECT token FROM ins)),
	cur.key IS NOT NULL,
	cur.owner, cur.token, cur.expires_at, statement_timestamp()
FROM (VALUES (1)) AS one (x) LEFT JOIN cur ON true`
		var (
			won     *int64
			present bool
			o       *string
			tok     *int64
			exp     *time.Time
			srvTime time.Time
		)
		if err := pool.QueryRow(ctx, q, key, owner, int64(time.Minute/time.Microsecond)).Scan(&won, &present, &o, &tok, &exp, &srvTime); err != nil {
			return err
		}
		if won == nil {
			return fmt.Errorf("acq-cte %q: held", key)
		}
		_, err := pool.Exec(ctx, f.release, key, owner, *won)
		return err
	}
	if side == "acq" {
		lease, err := d.Acquire(ctx, key, owner, time.Minute)
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, f.release, key, owner, int64(lease.Token))
		return err
	}
	var token int64
	if err := pool.QueryRow(ctx, f.acquire, key, owner, int64(time.Minute/time.Microsecond)).Scan(&token); err != nil {
		return err
	}
	return d.Release(ctx, fence.Lease{Key: key, Owner: owner, Token: fence.Token(token)})
}
