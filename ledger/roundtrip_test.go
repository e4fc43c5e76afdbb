package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// stringKeys are the keys whose values are strings, with the field each comes from.
var stringKeys = []struct {
	key string
	get func(Entry) string
}{
	{"tool", func(e Entry) string { return e.Tool }},
	{"state", func(e Entry) string { return string(e.State) }},
	{"failure_type", func(e Entry) string { return string(e.FailureType) }},
	{"reset_method", func(e Entry) string { return e.ResetMethod }},
	{"event", func(e Entry) string { return string(e.Event) }},
	{"server", func(e Entry) string { return e.Server }},
	{"cause", func(e Entry) string { return e.Cause }},
	{"error", func(e Entry) string { return e.Error }},
	{"config_fingerprint", func(e Entry) string { return e.Fingerprint }},
	{"fault", func(e Entry) string { return string(e.Fault) }},
	{"call_hash", func(e Entry) string { return e.CallHash }},
	{"held_shape", func(e Entry) string { return e.HeldShape }},
	{"session_id", func(e Entry) string { return e.SessionID }},
	{"tool_use_id", func(e Entry) string { return e.ToolUseID }},
	{"source", func(e Entry) string { return e.Source }},
}

// TestRoundTripProperty encodes random entries full of YAML traps and checks that Parse reads each
// back as it was and that yaml.v3, a general YAML reader, sees a list of the same strings.
func TestRoundTripProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	var file []byte
	var entries []Entry
	for i := 0; i < n; i++ {
		e := randEntry(r)
		enc := Encode(e)
		if !bytes.HasPrefix(enc, []byte("- tool: ")) || enc[len(enc)-1] != '\n' {
			t.Fatalf("entry %d: Encode does not write one item starting with \"- tool: \": %q", i, enc)
		}
		got, problems := Parse(enc, 1, testSlow)
		if len(problems) > 0 || len(got) != 1 {
			t.Fatalf("entry %d: %q: %d entries, problems %v", i, enc, len(got), problems)
		}
		if w := want(e); !sameEntry(got[0], w) {
			t.Fatalf("entry %d: %q\n got %#v\nwant %#v", i, enc, got[0], w)
		}
		file = append(file, enc...)
		entries = append(entries, want(e))
	}

	// The whole file, as the strict reader sees it.
	got, problems := Parse(file, 1, testSlow)
	if len(problems) > 0 || len(got) != n {
		t.Fatalf("file: %d entries, problems %v", len(got), problems)
	}

	// The whole file, as yaml.v3 sees it.
	var items []map[string]any
	if err := yaml.Unmarshal(file, &items); err != nil {
		t.Fatalf("yaml.v3: %v", err)
	}
	if len(items) != n {
		t.Fatalf("yaml.v3 reads %d items, want %d", len(items), n)
	}
	for i, m := range items {
		e := entries[i]
		for _, sk := range stringKeys {
			w := sk.get(e)
			v, ok := m[sk.key]
			if w == "" {
				if ok && v != nil && sk.key != "failure_type" {
					t.Errorf("item %d: %s = %#v, want absent", i, sk.key, v)
				}
				continue
			}
			if s, isStr := v.(string); !isStr || s != w {
				t.Errorf("item %d: yaml.v3 reads %s as %#v (%T), want %q\n%s", i, sk.key, v, v, w, Encode(e))
			}
		}
		if c, ok := m["failure_count"].(int); !ok || c != e.FailureCount {
			t.Errorf("item %d: failure_count = %#v, want %d", i, m["failure_count"], e.FailureCount)
		}
	}
}

// pyLoad is the PyYAML side of TestPyYAML: it prints the number of items and every string key's
// value, as JSON (non-strings as their repr, so a date or a bool cannot pass for a string).
const pyLoad = `
import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1], 'rb'))
keys = sys.argv[2].split(',')
out = {"n": len(d), "items": [{k: (v if v is None or isinstance(v, str) else repr(v)) for k, v in item.items() if k in keys} for item in d]}
sys.stdout.write(json.dumps(out))
`

// TestPyYAML loads 200 random entries with PyYAML (YAML 1.1): the list has the same length and
// every string reads back as the same string.
func TestPyYAML(t *testing.T) {
	t.Parallel()
	py := pythonWithYAML(t)
	r := rand.New(rand.NewPCG(3, 4))
	const n = 200
	var file []byte
	var entries []Entry
	for i := 0; i < n; i++ {
		e := randEntry(r)
		file = AppendEncoded(file, e)
		entries = append(entries, want(e))
	}
	name := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(name, file, 0o600); err != nil {
		t.Fatal(err)
	}
	// The plain command of the brief first: it must print the length.
	out, err := exec.Command(py, "-c", `import yaml,sys; d=yaml.safe_load(open(sys.argv[1], 'rb')); print(len(d))`, name).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != fmt.Sprint(n) {
		t.Fatalf("PyYAML: %v: %s", err, out)
	}
	var keys []string
	for _, sk := range stringKeys {
		keys = append(keys, sk.key)
	}
	out, err = exec.Command(py, "-c", pyLoad, name, strings.Join(keys, ",")).Output()
	if err != nil {
		t.Fatalf("PyYAML: %v", err)
	}
	var res struct {
		N     int                  `json:"n"`
		Items []map[string]*string `json:"items"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("PyYAML output: %v: %s", err, out)
	}
	if res.N != n || len(res.Items) != n {
		t.Fatalf("PyYAML reads %d items, want %d", res.N, n)
	}
	for i, m := range res.Items {
		for _, sk := range stringKeys {
			w := sk.get(entries[i])
			got := ""
			if p := m[sk.key]; p != nil {
				got = *p
			}
			if got != w {
				t.Errorf("item %d: PyYAML reads %s as %q, want %q\n%s", i, sk.key, got, w, Encode(entries[i]))
			}
		}
	}
}

// pythonWithYAML returns python3's path, or skips the test saying what is missing.
func pythonWithYAML(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("skipping: python3 is not on PATH")
	}
	if err := exec.Command(py, "-c", "import yaml").Run(); err != nil {
		t.Skip("skipping: PyYAML is not installed for python3 (pip install pyyaml)")
	}
	return py
}
