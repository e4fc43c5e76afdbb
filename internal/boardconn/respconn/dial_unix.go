//go:build unix

package respconn

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"
)

// dial connects to addr ("host:port", the host an IP address or a name of /etc/hosts) before
// deadline, trying each of its addresses in turn. The socket is non-blocking and handed to an
// os.File, so that the runtime's poller waits on it with the deadline, as net's would.
func dial(addr string, deadline time.Time) (*node, error) {
	host, port, _ := splitHostPort(addr)
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("dial tcp %s: invalid port", addr)
	}
	ips, err := resolve(host)
	if err != nil {
		return nil, fmt.Errorf("dial tcp %s: %w", addr, err)
	}
	var first error
	for _, ip := range ips {
		f, err := connect(ip, p, deadline)
		if err == nil {
			return &node{addr: addr, f: f, r: bufio.NewReaderSize(f, 16<<10)}, nil
		}
		if first == nil {
			first = fmt.Errorf("dial tcp %s: %w", joinHostPort(ip.String(), port), err)
		}
		if !time.Now().Before(deadline) {
			break
		}
	}
	return nil, first
}

// connect opens a TCP connection to ip:port, waiting at most until deadline.
func connect(ip netip.Addr, port int, deadline time.Time) (*os.File, error) {
	family := syscall.AF_INET
	var sa syscall.Sockaddr
	if ip.Is4() || ip.Is4In6() {
		sa = &syscall.SockaddrInet4{Port: port, Addr: ip.Unmap().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: port, Addr: ip.As16()}
	}
	// Close-on-exec under the fork lock: the hook may start a process meanwhile (a probe, the
	// catch-up), which must not inherit the board's socket.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, syscall.IPPROTO_TCP)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("socket: %w", err)
	}
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	// The file (and the poller's registration) comes before the connect, and the connect is made
	// inside the poller's write wait: an end of the connect signalled before the wait began would
	// otherwise be lost, and the dial would wait for its deadline.
	f := os.NewFile(uintptr(fd), "tcp")
	if err := f.SetWriteDeadline(deadline); err != nil {
		f.Close()
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var soErr error
	started := false
	werr := rc.Write(func(fd uintptr) bool {
		if !started {
			started = true
			err := syscall.Connect(int(fd), sa)
			for err == syscall.EINTR {
				err = syscall.Connect(int(fd), sa)
			}
			if err == syscall.EINPROGRESS {
				return false // wait until the socket is writable
			}
			soErr = err
			return true
		}
		n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		switch {
		case err != nil:
			soErr = err
		case n != 0:
			soErr = syscall.Errno(n)
		default:
			if _, err := syscall.Getpeername(int(fd)); errors.Is(err, syscall.ENOTCONN) {
				return false // woken before the connect ended
			}
		}
		return true
	})
	if werr == nil && soErr != nil {
		werr = fmt.Errorf("connect: %w", soErr)
	}
	if werr != nil {
		f.Close()
		if errors.Is(werr, os.ErrDeadlineExceeded) {
			return nil, errors.New("connect: i/o timeout")
		}
		return nil, werr
	}
	return f, nil
}

// platform is nil: the sockets above work on every unix.
func platform() error { return nil }
