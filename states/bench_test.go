package states

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// benchLedger writes a ledger of n entries over 50 keys (10 servers × 5 tools), made by the
// states package's decisions, straight to the file with ledger.Encode.
func benchLedger(b *testing.B, n int) (*Store, []string) {
	b.Helper()
	s := NewStore(filepath.Join(b.TempDir(), "mcp_circuit"), 30*time.Second)
	if _, err := s.Ledger.EnsureDir(); err != nil {
		b.Fatal(err)
	}
	var keys []string
	for srv := range 10 {
		for tool := range 5 {
			keys = append(keys, fmt.Sprintf("mcp__srv%d__tool%d", srv, tool))
		}
	}
	r := rand.New(rand.NewPCG(31, 32))
	var board Board
	data := make([]byte, 0, n*330)
	now := t0
	count := 0
	for count < n {
		now = now.Add(time.Duration(r.IntN(5000)) * time.Millisecond)
		call := Call{Tool: keys[r.IntN(len(keys))], Source: ledger.SourceHook}
		var es []ledger.Entry
		switch k := r.IntN(10); {
		case k < 5:
			es = board.Failure(call, results[r.IntN(len(results))], now, nil).Entries
		case k < 7:
			es = board.Gate(call, now, nil, false).Entries
		default:
			es = board.Success(call, now).Entries
		}
		for _, e := range es {
			if count == n {
				break
			}
			board.Apply(e)
			data = ledger.AppendEncoded(data, e)
			count++
		}
	}
	if err := os.WriteFile(s.Ledger.Path(), data, 0o600); err != nil {
		b.Fatal(err)
	}
	return s, keys
}

// BenchmarkCurrentState is "reading the current state of one key": View (the snapshot, and the
// ledger only when it changed) and Board.Get. Its cost must not grow with the ledger (the README's Performance section):
// compare entries=1000 with entries=100000.
func BenchmarkCurrentState(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s, keys := benchLedger(b, n)
			if _, err := s.View(); err != nil { // prime the snapshot
				b.Fatal(err)
			}
			i := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				board, err := s.View()
				if err != nil {
					b.Fatal(err)
				}
				_ = board.Get(keys[i%len(keys)])
				i++
			}
		})
	}
}

// BenchmarkRebuild replays a 100,000-entry ledger from scratch (no snapshot), for reference.
func BenchmarkRebuild(b *testing.B) {
	s, _ := benchLedger(b, 100_000)
	fi, _ := os.Stat(s.Ledger.Path())
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		s.Invalidate()
		if _, err := s.View(); err != nil {
			b.Fatal(err)
		}
	}
}
