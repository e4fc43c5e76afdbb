package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line in-process in dir with a fixed clock and returns stdout and the
// exit code.
func runCLI(t *testing.T, dir string, env map[string]string, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		switch k {
		case "MCP_CIRCUIT_DIR":
			return dir
		case "MCP_CIRCUIT_NOW":
			return "2026-11-29T12:00:00Z"
		case "HOME":
			return filepath.Join(dir, "home")
		}
		return ""
	}
	code := run(append([]string{"mcp-circuit-breaker"}, args...), strings.NewReader(""), &stdout, &stderr, getenv)
	if code != 0 && code != 3 {
		t.Logf("%v: exit %d, stderr: %s", args, code, stderr.String())
	}
	return stdout.String(), code
}

// kind names the JSON types docs/cli.md promises.
type kind int

const (
	kString kind = iota
	kBool
	kNumber
	kArray
	kObject
	kStringOrNull
)

func checkKeys(t *testing.T, what string, m map[string]any, want map[string]kind) {
	t.Helper()
	for k, kd := range want {
		v, ok := m[k]
		if !ok {
			t.Errorf("%s: key %q missing in %v", what, k, m)
			continue
		}
		okType := false
		switch kd {
		case kString:
			_, okType = v.(string)
		case kBool:
			_, okType = v.(bool)
		case kNumber:
			_, okType = v.(float64)
		case kArray:
			_, okType = v.([]any)
		case kObject:
			_, okType = v.(map[string]any)
		case kStringOrNull:
			_, isStr := v.(string)
			okType = isStr || v == nil
		}
		if !okType {
			t.Errorf("%s: key %q = %#v has the wrong JSON type", what, k, v)
		}
	}
}

func decodeObject(t *testing.T, what, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s: output is not a JSON object: %v\n%s", what, err, out)
	}
	return m
}

// TestJSONShapes decodes every --json output and checks the keys and types docs/cli.md promises to
// scripts (more keys may exist; none may be missing or change type).
func TestJSONShapes(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "home"), 0o755)
	runCLI(t, dir, nil, "record", "mcp__gh__issues", "--error", "HTTP 401 Unauthorized")
	runCLI(t, dir, nil, "record", "mcp__fs__read", "--error", "HTTP 429; Retry-After: 30")
	runCLI(t, dir, nil, "record", "mcp__db__q", "--type", "TIMEOUT")

	out, _ := runCLI(t, dir, nil, "classify", "--error", "HTTP 429 Too Many Requests; Retry-After: 30", "--json")
	checkKeys(t, "classify", decodeObject(t, "classify", out), map[string]kind{
		"type": kString, "cause": kString, "transient": kBool, "retry_after": kStringOrNull})

	circuit := map[string]kind{"tool": kString, "server": kString, "state": kString, "failure_type": kStringOrNull,
		"failure_count": kNumber, "tripped_at": kStringOrNull, "open_until": kStringOrNull, "blocked": kNumber}
	out, _ = runCLI(t, dir, nil, "status", "--json")
	m := decodeObject(t, "status", out)
	checkKeys(t, "status", m, map[string]kind{"circuits": kArray, "warnings": kArray})
	cs := m["circuits"].([]any)
	if len(cs) < 3 {
		t.Fatalf("status: want at least 3 circuits, got %d", len(cs))
	}
	for _, c := range cs {
		checkKeys(t, "status circuit", c.(map[string]any), circuit)
	}

	out, code := runCLI(t, dir, nil, "check", "mcp__gh__issues", "--json")
	if code != 3 {
		t.Errorf("check of an OPEN circuit exited %d, want 3", code)
	}
	m = decodeObject(t, "check", out)
	checkKeys(t, "check", m, map[string]kind{"tool": kString, "allowed": kBool, "state": kString, "reason": kString, "open_until": kStringOrNull})
	if m["allowed"] != false {
		t.Errorf("check: allowed = %v, want false", m["allowed"])
	}

	out, _ = runCLI(t, dir, nil, "fallbacks", "mcp__gh__issues", "--json")
	m = decodeObject(t, "fallbacks", out)
	checkKeys(t, "fallbacks", m, map[string]kind{"tool": kString, "failure_type": kString, "options": kArray})
	opts := m["options"].([]any)
	if len(opts) < 3 {
		t.Errorf("fallbacks: %d options, want at least 3", len(opts))
	}
	for _, o := range opts {
		checkKeys(t, "fallbacks option", o.(map[string]any), map[string]kind{"rank": kString, "kind": kString,
			"title": kString, "command": kString, "gap": kString, "when": kString})
	}

	out, _ = runCLI(t, dir, nil, "report", "--format", "json")
	m = decodeObject(t, "report", out)
	checkKeys(t, "report", m, map[string]kind{"circuits": kArray, "recommendations": kArray, "warnings": kArray})
	report := map[string]kind{"reset_at": kStringOrNull, "reset_method": kStringOrNull, "cause": kStringOrNull, "time_open_s": kNumber}
	for k, v := range circuit {
		report[k] = v
	}
	for _, c := range m["circuits"].([]any) {
		checkKeys(t, "report circuit", c.(map[string]any), report)
	}

	// probe --json of a server that is not configured cannot run: exit 1, no output.
	if out, code := runCLI(t, dir, nil, "probe", "--server", "nope", "--json"); code != 1 || out != "" {
		t.Errorf("probe of an unknown server: exit %d, stdout %q; want 1 and nothing", code, out)
	}
}
