package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// repoScripts returns the path of the repository's scripts directory.
func repoScripts(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts")
}

// shellEnv runs script in bash with env as its whole environment (plus
// PATH) and returns what it printed, failing the test when it fails.
func shellEnv(t *testing.T, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = filepath.Dir(repoScripts(t))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	return string(out)
}

// The variables a caller's shell had before sourcing scripts/services.sh
// are the ones it has after services_down: changed ones put back, unset
// ones unset again, exported ones exported, unexported ones not.
func TestServicesDownRestoresTheShell(t *testing.T) {
	t.Parallel()
	env := []string{
		"AWS_CONFIG_FILE=/etc/mine",             // overwritten by aws_env
		"AWS_PROFILE=prod",                      // unset by aws_env
		"STORAGE_EMULATOR_HOST=gcs.example:1",   // overwritten by fake_gcs_up
		"FENCE_EMULATOR_TIMEOUT=90",             // read, never changed
		"AWS_ENDPOINT_URL_S3=https://s3.mine/x", // overwritten by minio_up
	}
	// Exercised without servers: aws_env, and svc_export as the *_up
	// functions call it, on a variable the caller had unexported.
	out := shellEnv(t, env, `set -euo pipefail
MINE=unexported
before=$(export -p; declare -p MINE)
source scripts/services.sh
aws_env
svc_export STORAGE_EMULATOR_HOST=http://127.0.0.1:1 AZURE_STORAGE_CONNECTION_STRING=x MINE=changed
[ "$AWS_CONFIG_FILE" = /dev/null ] && [ -z "${AWS_PROFILE:-}" ] && [ -d "$FENCE_RUN_DIR" ] || { echo "not changed"; exit 1; }
dir=$FENCE_RUN_DIR
services_down
after=$(export -p; declare -p MINE)
[ ! -e "$dir" ] || echo "run directory $dir left behind"
[ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after") || true
`)
	if out != "" {
		t.Fatalf("the shell after services_down differs from before sourcing:\n%s", out)
	}
}

// Every variable the sourced scripts set or remove in the caller's shell
// goes through svc_export or svc_unset, so that services_down puts it
// back: a bare export or unset is one it would leave changed.
func TestServicesScriptsExportThroughSvc(t *testing.T) {
	t.Parallel()
	bare := regexp.MustCompile(`^\s*(export|unset)\s`)
	for _, name := range []string{"services.sh", "emulators.sh", "kvstores.sh", "sqlzk.sh", "nats.sh", "kube.sh"} {
		data, err := os.ReadFile(filepath.Join(repoScripts(t), name))
		if err != nil {
			t.Fatal(err)
		}
		inSvc := false
		for i, line := range strings.Split(string(data), "\n") {
			switch {
			case strings.HasPrefix(line, "svc_") && strings.Contains(line, "() {"):
				inSvc = true // the helpers themselves export and unset
			case line == "}":
				inSvc = false
			case !inSvc && bare.MatchString(line) && !strings.Contains(line, "FENCE_RUN_DIR_MADE"):
				t.Errorf("scripts/%s:%d: %q changes the caller's shell without svc_export/svc_unset", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// A server started alone, by its own documented function, installs what
// it needs, exports its endpoint, and services_down stops it and puts the
// shell back.
func TestServiceStartedAlone(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if Strict() {
			t.Fatal("redis-server is missing under scripts/test.sh")
		}
		t.Skip("redis-server is not installed; scripts/test.sh installs it")
	}
	dir := t.TempDir() // a directory of the test's own: the suite's servers keep theirs
	out := shellEnv(t, []string{"FENCE_RUN_DIR=" + dir}, `set -euo pipefail
before=$(export -p)
source scripts/services.sh
redis_up 2>/dev/null
redis-cli -u "$FENCE_REDIS_URL" ping
pgid=$(cat "$FENCE_RUN_DIR/emulators/redis.pgid")
services_down
kill -0 -- "-$pgid" 2>/dev/null && echo "redis still running"
[ "$before" = "$(export -p)" ] || echo "the shell was not put back"
`)
	if strings.TrimSpace(out) != "PONG" {
		t.Fatalf("want PONG and nothing else, got:\n%s", out)
	}
}
