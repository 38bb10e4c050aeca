package scale

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The wire counter: a TCP proxy, in a child process so that its CPU is
// not the client's, in front of every server the tests reach. It counts
// round trips: on each connection, each time the client sends after the
// server last spoke (or first), one. Pipelined or batched requests sent
// together are one round trip; a request split over several segments is
// still one.

// proxyEnv names the variable that makes the test binary a proxy: the
// comma-separated addresses to proxy.
const proxyEnv = "FENCE_SCALE_PROXY"

// serveProxy listens on a port of its own for each target of targets,
// prints "CONTROL ADDR1 ADDR2 ..." on stdout, and serves GET /turns (the
// round trips so far) on CONTROL, until killed.
func serveProxy(targets string) int {
	var turns atomic.Int64
	addrs := []string{}
	for _, target := range strings.Split(targets, ",") {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		addrs = append(addrs, ln.Addr().String())
		go accept(ln, target, &turns)
	}
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ctl.Addr().String() + " " + strings.Join(addrs, " "))
	mux := http.NewServeMux()
	mux.HandleFunc("/turns", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, turns.Load())
	})
	_ = http.Serve(ctl, mux)
	return 1
}

func accept(ln net.Listener, target string, turns *atomic.Int64) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go pipe(c, target, turns)
	}
}

// pipe copies between client c and a new connection to target, counting
// the client's turns.
func pipe(c net.Conn, target string, turns *atomic.Int64) {
	s, err := net.Dial("tcp", target)
	if err != nil {
		_ = c.Close()
		return
	}
	var serverSpoke atomic.Bool
	serverSpoke.Store(true)
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if serverSpoke.Swap(false) {
					turns.Add(1)
				}
				if _, werr := s.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		closeWrite(s)
	})
	wg.Go(func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				serverSpoke.Store(true)
				if _, werr := c.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		closeWrite(c)
	})
	wg.Wait()
	_ = c.Close()
	_ = s.Close()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// wire is the parent's side of the proxy.
type wire struct {
	cmd     *exec.Cmd
	control string
}

// local matches the address of a test server in an environment
// variable, plain or escaped in a query.
var local = regexp.MustCompile(`127\.0\.0\.1(:|%3A)([0-9]+)`)

// startWire starts the proxy in front of every server named in this
// process's environment and points the environment at it: what the
// tests open from then on goes through it. It returns nil and a reason
// when it cannot.
func startWire() (*wire, error) {
	seen := map[string]bool{}
	var targets []string
	for _, kv := range os.Environ() {
		for _, m := range local.FindAllStringSubmatch(kv, -1) {
			addr := "127.0.0.1:" + m[2]
			if !seen[addr] {
				seen[addr] = true
				targets = append(targets, addr)
			}
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no test server in the environment")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), proxyEnv+"="+strings.Join(targets, ","))
	dieWithParent(cmd)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != len(targets)+1 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("proxy said %q", line)
	}
	via := map[string]string{}
	for i, t := range targets {
		via[t] = f[i+1]
	}
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if !local.MatchString(value) {
			continue
		}
		value = local.ReplaceAllStringFunc(value, func(s string) string {
			m := local.FindStringSubmatch(s)
			p := via["127.0.0.1:"+m[2]]
			if m[1] != ":" {
				return strings.Replace(p, ":", m[1], 1)
			}
			return p
		})
		_ = os.Setenv(name, value)
	}
	return &wire{cmd: cmd, control: f[0]}, nil
}

// turns returns the round trips counted so far.
func (w *wire) turns() (int64, error) {
	resp, err := http.Get("http://" + w.control + "/turns")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}

func (w *wire) stop() {
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}
