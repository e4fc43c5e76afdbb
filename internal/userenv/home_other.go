//go:build !unix

package userenv

import "os/user"

// userHomeDir is the home directory of the user the process runs as. Outside unix os/user needs
// no C library, so it costs the hook nothing at start-up.
func userHomeDir() (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	return u.HomeDir, nil
}
