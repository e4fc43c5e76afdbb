//go:build linux

package ledger

import "syscall"

func ctimeNS(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
