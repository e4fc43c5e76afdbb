package agent

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkToolInput reads tool_input values of three sizes side by side: skipped (what the
// decoder did before the loop guard) and hashed while skipped (what it does now). Run:
//
//	go test -run '^$' -bench ToolInput -benchmem ./internal/agent
func BenchmarkToolInput(b *testing.B) {
	for _, size := range []int{100, 10 << 10, 1 << 20} {
		in := []byte(`{"path":"docs/INSTALL.md","content":"` + strings.Repeat("line of text, ", size/14) + `","n":[1,2,3]}`)
		for _, mode := range []string{"skip", "hash"} {
			b.Run(fmt.Sprintf("%s/%dB", mode, len(in)), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					d := newDecoder(bytes.NewReader(in))
					var err error
					if mode == "skip" {
						err = d.skip()
					} else {
						_, err = d.hashValue()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
