package toolcache

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestToolsCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude", "mcp_circuit")
	got, err := LoadTools(dir)
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v; want an empty map", got, err)
	}
	t1 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	t2 := t1.Add(time.Hour)
	a := []Tool{{Name: "read", Description: "read a file", ReadOnly: true}, {Name: "write"}}
	b := []Tool{{Name: "search"}}
	if err := SaveTools(dir, "a", a, t1); err != nil {
		t.Fatal(err)
	}
	if err := SaveTools(dir, "my.dotted server", b, t1); err != nil {
		t.Fatal(err)
	}
	if err := SaveTools(dir, "a", a[:1], t2); err != nil {
		t.Fatal(err)
	}
	got, err = LoadTools(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ServerTools{
		"a":                {Tools: a[:1], ProbedAt: t2.UTC()},
		"my.dotted server": {Tools: b, ProbedAt: t1.UTC()},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, p := range []string{dir, filepath.Join(dir, ToolsFile), filepath.Join(dir, ToolsFile+".lock")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestToolsCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if err := SaveTools(dir, fmt.Sprintf("s%02d", i), []Tool{{Name: "t"}}, time.Unix(0, 0)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := LoadTools(dir)
	if err != nil || len(got) != 16 {
		t.Errorf("got %d servers, %v; want 16: no update may be lost", len(got), err)
	}
}

func TestToolsCacheCorrupt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ToolsFile), []byte("{not json"), 0o600)
	if _, err := LoadTools(dir); err == nil || !strings.Contains(err.Error(), ToolsFile) {
		t.Errorf("corrupt cache: error %v, want one naming the file", err)
	}
	long := strings.Repeat("é", maxDescription)
	if err := SaveTools(dir, "s", []Tool{{Name: "t", Description: long}}, time.Unix(0, 0)); err != nil {
		t.Fatalf("a corrupt cache must be replaced: %v", err)
	}
	got, err := LoadTools(dir)
	if err != nil || len(got["s"].Tools[0].Description) > maxDescription+len("…") {
		t.Errorf("got %v, %v", got, err)
	}
}
