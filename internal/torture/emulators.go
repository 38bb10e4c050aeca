package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Environment variables naming the programs of the storage emulators, as
// scripts/emulators.sh exports them. With them a run starts emulators of
// its own, their data on disk in its directory, and restarting one (a
// crash, or a clean stop where a crash would lose acknowledged writes:
// see azuriteSpec) is one of its disruptions. A backend on an emulator
// whose programs are unset is unavailable.
const (
	// EnvNode is the node binary that runs dynalite.
	EnvNode = "FENCE_NODE"
	// EnvDynaliteJS is scripts/dynalite.js of a checkout whose
	// node_modules holds dynalite (npm ci).
	EnvDynaliteJS = "FENCE_DYNALITE_JS"
	// EnvAzuriteBin is Azurite's blob service, node_modules/.bin/azurite-blob.
	EnvAzuriteBin = "FENCE_AZURITE_BIN"
	// EnvFakeGCSBin is the fake-gcs-server binary.
	EnvFakeGCSBin = "FENCE_FAKE_GCS_BIN"
	// EnvMinIOBin is the minio binary.
	EnvMinIOBin = "FENCE_MINIO_BIN"
)

// envAWSSecret is where the AWS SDK finds the secret key that goes with
// envAWSCredentials; a private MinIO takes the pair as its root user's.
const envAWSSecret = "AWS_SECRET_ACCESS_KEY"

// azuriteAccount is the account Azurite always serves, whose published
// key AZURE_STORAGE_CONNECTION_STRING carries.
const azuriteAccount = "devstoreaccount1"

// emulatorSpec says how to run one kind of emulator.
type emulatorSpec struct {
	name string
	env  []string // the variables it needs, their values passed to command
	// command returns the program and its arguments for a server on
	// port with its data under dir (in dir/data; its log is dir/server.log),
	// which its clients reach on public (port, or a proxy's: see quiesce).
	command func(v []string, port, public int, dir string) (string, []string)
	ready   string // path of a GET that answers once it serves
	anyAns  bool   // any HTTP answer to ready will do, not only 2xx
	base    string // the endpoint's path after http://127.0.0.1:PORT
	// graceful: a restart stops the server with SIGTERM and waits for
	// it to exit, as a crash would lose writes it acknowledged.
	graceful bool
	// quiesce: the clients reach the server through a proxy of the run,
	// and a restart kills it (SIGKILL) only once the proxy has no request
	// in flight, refusing new ones (closing their connections) until the
	// server answers again; a kill during a write would lose data.
	quiesce bool
}

var (
	// dynaliteSpec runs dynalite through scripts/dynalite.js, as
	// scripts/emulators.sh does, with its tables in a LevelDB under dir
	// (--path). LevelDB appends each write to its log before dynalite
	// answers, so a SIGKILL loses none.
	dynaliteSpec = &emulatorSpec{
		name: "dynalite", env: []string{EnvNode, EnvDynaliteJS}, ready: "/",
		command: func(v []string, port, _ int, dir string) (string, []string) {
			repo := filepath.Dir(filepath.Dir(v[1])) // dynalite.js resolves dynalite from REPO/node_modules
			return v[0], []string{v[1], repo, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--path", filepath.Join(dir, "data"),
				"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"}
		},
	}

	// fakeGCSSpec runs fake-gcs-server with its filesystem backend
	// under dir, each object a file written before it answers. Its
	// restarts are quiesced kills: fake-gcs-server 1.56 writes an object
	// as a new file renamed into place and then its metadata (generation
	// included) as an extended attribute of that file, and takes an
	// object without metadata for absent, so a kill between the two
	// loses the object (a conditional create then overwrites it). A
	// SIGTERM is no better: the server exits at once.
	fakeGCSSpec = &emulatorSpec{
		name: "fake-gcs-server", env: []string{EnvFakeGCSBin}, ready: "/_internal/healthcheck", quiesce: true,
		command: func(v []string, port, public int, dir string) (string, []string) {
			addr := "127.0.0.1:" + strconv.Itoa(public) // where objects' and uploads' URLs point
			return v[0], []string{"-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port),
				"-backend", "filesystem", "-filesystem-root", filepath.Join(dir, "data"), "-public-host", addr, "-external-url", "http://" + addr,
				"-log-level", "warn"}
		},
	}

	// minioSpec runs a single-drive MinIO on dir, its root user the AWS
	// SDK's keys from the environment. It serves once its cluster check
	// passes: its readiness check passes earlier, while requests still
	// get 503 XMinioServerNotInitialized.
	minioSpec = &emulatorSpec{
		name: "minio", env: []string{EnvMinIOBin, envAWSCredentials, envAWSSecret}, ready: "/minio/health/cluster",
		command: func(v []string, port, _ int, dir string) (string, []string) {
			return "env", []string{"MINIO_ROOT_USER=" + v[1], "MINIO_ROOT_PASSWORD=" + v[2], "MINIO_BROWSER=off", "MINIO_UPDATE=off",
				"MINIO_SCANNER_SPEED=slowest", // its background scan of a run's few objects is CPU the run's other servers need
				v[0], "server", filepath.Join(dir, "data"), "--address", "127.0.0.1:" + strconv.Itoa(port),
				"--certs-dir", filepath.Join(dir, "certs"), "--quiet"}
		},
	}

	// azuriteSpec runs Azurite's blob service with its files under dir
	// (--location), not in memory. Its restarts are clean stops: Azurite
	// keeps its metadata (containers, blobs, their metadata and leases)
	// in LokiJS databases that it saves to disk every 5 s
	// (autosaveInterval) and when it shuts down, so a SIGKILL loses up to
	// 5 s of writes it acknowledged (a container created just before one
	// is gone after it). Even a clean restart ends every timed lease:
	// the saved expiry time comes back from JSON as a string, which
	// Azurite 3.35's lease state compares with a Date, and the lease
	// counts as expired; Azure keeps leases. So each Azurite restart
	// also frees every lock of lockers/azblob, whose tokens (in blob
	// metadata) go on.
	azuriteSpec = &emulatorSpec{
		name: "azurite", env: []string{EnvAzuriteBin}, ready: "/" + azuriteAccount + "?comp=list", anyAns: true,
		base: "/" + azuriteAccount, graceful: true,
		command: func(v []string, port, _ int, dir string) (string, []string) {
			return v[0], []string{"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port), "--location", filepath.Join(dir, "data"),
				"--skipApiVersionCheck", "--disableTelemetry"}
		},
	}
)

// emulator is a private emulator of the run, its data in a directory of
// the run, on a port it keeps across restarts.
type emulator struct {
	spec       *emulatorSpec
	prog       string
	args       []string
	dir        string
	port       int         // the clients'
	serverPort int         // the server's: port, or behind gate
	gate       *quietGate  // nil without quiesce
	proc       *serverProc // nil while stopped
}

// emulator returns the endpoint of the run's own emulator of spec
// (http://127.0.0.1:PORT and the spec's base path), starting it at the
// first call and making its restart one of the run's disruptions.
// The emulator goes with the run's directory when the run ends, and its
// stores with it: the kinds on emulators have no Remove.
func (s *Stage) emulator(ctx context.Context, spec *emulatorSpec) (string, error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if e := s.emus[spec.name]; e != nil {
		return e.endpoint(), nil
	}
	v, err := need(spec.env...)
	if err != nil {
		return "", err
	}
	e, err := startEmulator(ctx, spec, v, filepath.Join(s.Dir, spec.name))
	if err != nil {
		return "", err
	}
	s.Defer(e.close)
	s.addDisruptor(spec.name+"-restart", func(ctx context.Context) error {
		s.Counts.Add(FaultRestart)
		return e.restart(ctx)
	})
	if s.emus == nil {
		s.emus = map[string]*emulator{}
	}
	s.emus[spec.name] = e
	return e.endpoint(), nil
}

// emulatorStarts admits two first starts of emulators at a time in the
// process: the runs of torture.RunAll set up at once, and a dozen node and
// MinIO processes loading together on a small machine each took several
// times as long as alone.
var emulatorStarts = make(chan struct{}, 2)

// startEmulator starts an emulator of spec, with the values v of its
// variables, on a free port and its data under dir.
func startEmulator(ctx context.Context, spec *emulatorSpec, v []string, dir string) (*emulator, error) {
	for _, d := range []string{"data", "certs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	e := &emulator{spec: spec, dir: dir, port: port, serverPort: port}
	if spec.quiesce {
		// The gate listens first, so that the server's free port
		// cannot be the gate's.
		if e.gate, err = newQuietGate(); err != nil {
			return nil, err
		}
		e.port = e.gate.port
		if e.serverPort, err = freePort(); err != nil {
			e.gate.close()
			return nil, err
		}
		e.gate.forward(e.serverPort)
	}
	e.prog, e.args = spec.command(v, e.serverPort, e.port, dir)
	select {
	case emulatorStarts <- struct{}{}:
		defer func() { <-emulatorStarts }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := e.start(ctx); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *emulator) endpoint() string {
	return "http://127.0.0.1:" + strconv.Itoa(e.port) + e.spec.base
}

func (e *emulator) logPath() string { return filepath.Join(e.dir, "server.log") }

// emulatorStartTimeout bounds each start, a restart's included.
const emulatorStartTimeout = 60 * time.Second

// start starts the server and returns once it answers.
func (e *emulator) start(ctx context.Context) error {
	proc, err := startServerProc(e.logPath(), e.prog, e.args...)
	if err != nil {
		return err
	}
	e.proc = proc
	hc := &http.Client{Timeout: time.Second}
	defer hc.CloseIdleConnections()
	probeURL := "http://127.0.0.1:" + strconv.Itoa(e.serverPort) + e.spec.ready
	deadline := time.Now().Add(emulatorStartTimeout)
	for {
		err := e.probe(ctx, hc, probeURL)
		if err == nil {
			return nil
		}
		select {
		case <-proc.exited:
			return fmt.Errorf("%w: %s (its log: %s)", errServerExited, e.spec.name, e.logPath())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("torture: %s did not answer within %s (its log: %s): %w", e.spec.name, emulatorStartTimeout, e.logPath(), err)
		}
	}
}

// probe asks url once whether the server serves.
func (e *emulator) probe(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if e.spec.anyAns || resp.StatusCode/100 == 2 {
		return nil
	}
	return fmt.Errorf("torture: %s answered %s", e.spec.name, resp.Status)
}

// restart stops the server, with SIGKILL as a crash would or, for a
// graceful spec, with SIGTERM, and starts it again on the same port and
// directory. Like a MariaDB restart it is not cut short when ctx ends:
// the run reads its resources back from the server afterwards.
func (e *emulator) restart(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	if e.gate != nil {
		defer e.gate.open()
		if err := e.gate.quiet(terminateTimeout); err != nil {
			return err
		}
		e.stop()
	} else if e.spec.graceful {
		if err := e.terminate(); err != nil {
			return err
		}
	} else {
		e.stop()
	}
	err := e.start(ctx)
	for i := 0; err != nil && i < 3 && errors.Is(err, errServerExited); i++ {
		// A port or a lock file can stay taken a moment after an exit.
		time.Sleep(500 * time.Millisecond)
		err = e.start(ctx)
	}
	return err
}

// terminateTimeout is how long a graceful stop may take before it is
// reported as an error (and the server killed).
const terminateTimeout = 20 * time.Second

// terminate stops the server with SIGTERM and waits for it to exit.
func (e *emulator) terminate() error {
	p := e.proc
	e.proc = nil
	if p == nil {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
		// Its children, if any, go with the group.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		return nil
	case <-time.After(terminateTimeout):
		p.kill()
		return fmt.Errorf("torture: %s did not stop within %s of SIGTERM; killed (its log: %s)", e.spec.name, terminateTimeout, e.logPath())
	}
}

// stop kills the server (SIGKILL).
func (e *emulator) stop() {
	e.proc.kill()
	e.proc = nil
}

// close kills the server and closes its proxy, if any.
func (e *emulator) close() {
	e.stop()
	if e.gate != nil {
		e.gate.close()
	}
}

// quietGate is a reverse proxy in front of a server that can refuse new
// requests and wait for those in flight to end.
type quietGate struct {
	ln     net.Listener
	port   int
	srv    *http.Server    // nil until forward
	tr     *http.Transport // to the server
	mu     sync.Mutex
	shut   bool // refusing new requests
	flying int  // requests being forwarded
}

// newQuietGate listens on a free port; it serves once forward names the
// server.
func newQuietGate() (*quietGate, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &quietGate{tr: http.DefaultTransport.(*http.Transport).Clone(), ln: ln, port: ln.Addr().(*net.TCPAddr).Port}
	return g, nil
}

// forward starts forwarding to the server on port target.
func (g *quietGate) forward(target int) {
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(target)})
	rp.Transport = g.tr
	rp.ErrorLog = log.New(io.Discard, "", 0) // a client that gave up is no news
	g.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		if g.shut {
			g.mu.Unlock()
			// As a server that is down: the connection goes.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
					return
				}
			}
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		g.flying++
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.flying--
			g.mu.Unlock()
		}()
		rp.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = g.srv.Serve(g.ln) }()
}

// quiet refuses new requests and waits up to timeout for those in
// flight to end.
func (g *quietGate) quiet(timeout time.Duration) error {
	g.mu.Lock()
	g.shut = true
	g.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		g.mu.Lock()
		n := g.flying
		g.mu.Unlock()
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("torture: %d requests still in flight after %s; not restarted", n, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// open lets requests through again, on new connections to the server.
func (g *quietGate) open() {
	g.tr.CloseIdleConnections()
	g.mu.Lock()
	g.shut = false
	g.mu.Unlock()
}

func (g *quietGate) close() {
	if g.srv != nil {
		_ = g.srv.Close()
	} else {
		_ = g.ln.Close()
	}
}
