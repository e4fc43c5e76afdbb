package agent

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkToolInput reads tool_input values of three sizes side by side: skipped (what the
// decoder did before the loop guard), hashed while skipped (hashValue), hashed by hashArgs (what
// every codec does now: one more look at the first byte), the same arguments sent as a string of
// JSON text (Cursor, Copilot: decoded to be hashed up to 64 KiB, streamed beyond), and hashed
// while their values are kept for the classifier (argsInto, on a failure event only). Run:
//
//	go test -run '^$' -bench ToolInput -benchmem ./internal/agent
func BenchmarkToolInput(b *testing.B) {
	for _, size := range []int{100, 10 << 10, 1 << 20} {
		in := []byte(`{"path":"docs/INSTALL.md","content":"` + strings.Repeat("line of text, ", size/14) + `","n":[1,2,3]}`)
		quoted := []byte(quote(string(in)))
		for _, mode := range []string{"skip", "hash", "args", "args-string", "kept"} {
			b.Run(fmt.Sprintf("%s/%dB", mode, len(in)), func(b *testing.B) {
				src := in
				if mode == "args-string" {
					src = quoted
				}
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for b.Loop() {
					d := newDecoder(bytes.NewReader(src))
					var err error
					switch mode {
					case "skip":
						err = d.skip()
					case "hash":
						_, err = d.hashValue()
					case "kept":
						var h, raw string
						err = d.argsInto(&h, &raw, true)
					default:
						_, err = d.hashArgs()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
