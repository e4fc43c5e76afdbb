// Command minimal is the baseline of the hook benchmark (the README's Performance section): a Go program that does the
// least a hook must do, reading its whole stdin and one small file, and prints nothing.
//
// Usage: minimal FILE < event.json
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	if len(os.Args) > 1 {
		if _, err := os.ReadFile(os.Args[1]); err != nil {
			os.Exit(1)
		}
	}
}
