//go:build unix

package userenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// passwdFile is the local password database; homeOf reads it first.
const passwdFile = "/etc/passwd"

// userHomeDir is the home directory of the user the process runs as, from the password database.
// It does not use os/user: with cgo on, that links the C library and makes the hook a dynamically
// linked binary, whose loading costs more than the rest of a CLOSED call (docs/performance.md). It
// reads /etc/passwd, and for a user kept elsewhere (LDAP, NSS, macOS's directory service) asks the
// system's own tool by absolute path: getent, or id -P on macOS.
func userHomeDir() (string, error) {
	uid := strconv.Itoa(os.Getuid())
	if data, err := os.ReadFile(passwdFile); err == nil {
		if home, ok := passwdHome(data, uid); ok {
			return home, nil
		}
	}
	var tool []string
	switch runtime.GOOS {
	case "darwin":
		tool = []string{"/usr/bin/id", "-P", uid}
	default:
		for _, p := range []string{"/usr/bin/getent", "/bin/getent"} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				tool = []string{p, "passwd", uid}
				break
			}
		}
	}
	if tool == nil {
		return "", fmt.Errorf("look up user %s: not in %s, and no getent", uid, passwdFile)
	}
	out, err := exec.Command(tool[0], tool[1:]...).Output()
	if err != nil {
		return "", fmt.Errorf("look up user %s: %s: %w", uid, tool[0], err)
	}
	if home, ok := passwdHome(out, uid); ok {
		return home, nil
	}
	return "", fmt.Errorf("look up user %s: %w", uid, errNoUser)
}

var errNoUser = errors.New("no such user in the password database")

// passwdHome finds the home directory of uid in data, lines in the password file's format
// ("name:password:uid:gid:gecos:home:shell"; macOS's id -P adds class, change and expire before
// gecos, so the home is always the second field from the end).
func passwdHome(data []byte, uid string) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		f := bytes.Split(line, []byte(":"))
		if len(f) < 7 || string(f[2]) != uid {
			continue
		}
		home := string(f[len(f)-2])
		if home == "" || home[0] != '/' {
			return "", false
		}
		return home, true
	}
	return "", false
}
