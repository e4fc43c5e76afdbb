package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// Environment variables that configure the shared board. They come from the user's environment;
// a project settings file that sets them is refused (see Load).
const (
	EnvURL       = project.BoardURLVar
	EnvNamespace = "MCP_CIRCUIT_SHARED_NAMESPACE"
	EnvTimeout   = "MCP_CIRCUIT_SHARED_TIMEOUT"
	// EnvSecret is the secret the board's users share, which keys the hashes of credentials in
	// the board's key names (Keys); the board's password when unset.
	EnvSecret = "MCP_CIRCUIT_SHARED_SECRET"
)

// DefaultNamespace separates boards that share one Redis when no namespace is configured.
const DefaultNamespace = "default"

// DefaultTimeout bounds one exchange with the board on the hook's path: about one round trip to a
// nearby Redis plus slack. Past it the gate decides from local state.
const DefaultTimeout = 50 * time.Millisecond

// MaxTimeout bounds a configured timeout: the hook answers within 2.5 s whatever the board does.
const MaxTimeout = time.Second

// maxConfigSize bounds the user configuration file read.
const maxConfigSize = 64 << 10

// ErrProjectConfigured is returned when a project settings file (which a cloned repository can
// carry) sets the shared board's variables: such a board could be an attacker's Redis.
var ErrProjectConfigured = errors.New("the shared board is set by a project settings file, which a cloned repository controls")

// Config is where the shared board lives, as the user configured it.
type Config struct {
	// URL is redis://[user:password@]host:port[/db] or rediss://… (TLS), or for a Redis Cluster
	// redis://[user:password@]host:port?addr=host2:port2&addr=host3:port3; it may hold a secret
	// and is printed only through Redacted.
	URL string
	// Namespace separates teams or fleets on one Redis.
	Namespace string
	// Timeout bounds each exchange with the board.
	Timeout time.Duration
	// From says where the configuration came from: the environment variable or the file.
	From string
	// Secret keys the identities' hashes (Keys): shared.secret, else the password of URL; it
	// is never printed.
	Secret string
}

// Keys are the keys of the board's identity hashes.
func (c Config) Keys() Keys { return Keys{Namespace: c.Namespace, Secret: c.Secret} }

// Redacted is the URL without its password (and user name), safe to print.
func (c Config) Redacted() string { return RedactURL(c.URL) }

// RedactURL replaces the user information of a Redis URL by "xxxxx", and query values that can
// hold secrets; a URL that does not parse is shown only by its scheme.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		scheme, _, ok := strings.Cut(raw, "://")
		if !ok {
			return "(unparsable URL)"
		}
		return scheme + "://(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if q := u.Query(); len(q) > 0 {
		for k := range q {
			if k != "addr" { // a Cluster's other nodes: where, not a secret
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// UserFile is the shape of the user configuration file, as Load asks its unmarshal to fill it.
type UserFile struct {
	Shared struct {
		URL       string `yaml:"url"`
		Namespace string `yaml:"namespace"`
		Timeout   string `yaml:"timeout"`
		Secret    string `yaml:"secret"`
	} `yaml:"shared"`
}

// UserConfigPath is the user-scope configuration file (project.BoardConfigPath).
func UserConfigPath(getenv func(string) string) string { return project.BoardConfigPath(getenv) }

// Load returns the shared board's configuration, nil when none is set. The environment wins over
// the user configuration file, which unmarshal reads into a *UserFile (yaml.Unmarshal in the
// full CLI; this package links no YAML library, for the lean hook). projectDir is the project being guarded: its
// .claude/settings.json and settings.local.json may not set the board (Claude Code passes their
// "env" to hooks, and a clone carries them), so when either does, Load returns
// ErrProjectConfigured.
func Load(getenv func(string) string, projectDir string, unmarshal func([]byte, any) error) (*Config, error) {
	// Claude Code hands a settings file's "env" to hooks as environment, so the variables can come
	// from the project only when they are set; without them there is nothing to check (and the
	// hook's hot path reads no settings file).
	if projectDir != "" && (getenv(EnvURL) != "" || getenv(EnvNamespace) != "" || getenv(EnvTimeout) != "" || getenv(EnvMachine) != "" || getenv(EnvSecret) != "") {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			path := filepath.Join(projectDir, ".claude", name)
			if projectSetsBoard(path) {
				return nil, fmt.Errorf("load shared board: %s: %w", path, ErrProjectConfigured)
			}
		}
	}
	cfg := &Config{Namespace: DefaultNamespace, Timeout: DefaultTimeout}
	timeout := ""
	if u := getenv(EnvURL); u != "" {
		cfg.URL, cfg.From = u, EnvURL
		if ns := getenv(EnvNamespace); ns != "" {
			cfg.Namespace = ns
		}
		timeout = getenv(EnvTimeout)
	} else {
		path := UserConfigPath(getenv)
		if path == "" {
			return nil, nil
		}
		data, err := safefile.ReadBounded(path, maxConfigSize)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("load shared board: %w", err)
		}
		var f UserFile
		if err := unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("load shared board: %s: %w", path, err)
		}
		if f.Shared.URL == "" {
			return nil, nil
		}
		cfg.URL, cfg.From = f.Shared.URL, path
		if f.Shared.Namespace != "" {
			cfg.Namespace = f.Shared.Namespace
		}
		timeout = f.Shared.Timeout
		if t := getenv(EnvTimeout); t != "" {
			timeout = t
		}
		cfg.Secret = f.Shared.Secret
	}
	if s := getenv(EnvSecret); s != "" {
		cfg.Secret = s
	}
	if cfg.Secret == "" {
		// The board's password is held by its users only: key names cannot be tested against
		// guesses without it.
		if u, err := url.Parse(cfg.URL); err == nil && u.User != nil {
			cfg.Secret, _ = u.User.Password()
		}
	}
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 || d > MaxTimeout {
			return nil, fmt.Errorf("load shared board: timeout %q (from %s): not a duration between 1ms and %s such as 50ms", timeout, cfg.From, MaxTimeout)
		}
		cfg.Timeout = d
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("load shared board: %w", err)
	}
	return cfg, nil
}

func (c *Config) validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return fmt.Errorf("%s (from %s): not a redis:// or rediss:// URL with a host", c.Redacted(), c.From)
	}
	if strings.ContainsAny(c.Namespace, "{}\r\n") || len(c.Namespace) > 100 {
		return fmt.Errorf("namespace %q (from %s): must be at most 100 characters without braces or line breaks", c.Namespace, c.From)
	}
	return nil
}

// projectSetsBoard reports whether a Claude Code settings file sets one of the board's variables
// in its "env". A file that cannot be read or parsed sets nothing that Claude Code would apply.
func projectSetsBoard(path string) bool {
	data, err := safefile.ReadBounded(path, maxConfigSize)
	if err != nil {
		return false
	}
	var s struct {
		Env map[string]any `json:"env"`
	}
	if json.Unmarshal(data, &s) != nil {
		return false
	}
	for _, k := range []string{EnvURL, EnvNamespace, EnvTimeout, EnvMachine, EnvSecret} {
		if _, ok := s.Env[k]; ok {
			return true
		}
	}
	return false
}

// Redact is text without the board's URL and password (an error of a Redis client can quote them).
func (c Config) Redact(text string) string { return redactText(text, c) }

// redactText removes the URL and its password from a text (an error of the client can quote them).
func redactText(s string, cfg Config) string {
	if cfg.URL == "" {
		return s
	}
	s = strings.ReplaceAll(s, cfg.URL, cfg.Redacted())
	if u, err := url.Parse(cfg.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
}
